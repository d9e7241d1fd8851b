//! Frames written and mutated by b2frame are read by the real c-blosc2 (dlopen'ed, see
//! tests/common/reference.rs): same chunk count, same chunk bytes (including the 32-byte chunks
//! it synthesises for special offsets), same decompressed data, same metalayers and
//! vlmetalayers; in memory (`blosc2_schunk_from_buffer`), as a file and as an sframe directory
//! (`blosc2_schunk_open`).

use crate::common;

use b2frame::capi::types::{blosc2_metalayer, blosc2_schunk};
use b2frame::chunk::{self, CParams, DParams};
use b2frame::frame::chunkinfo::special;
use b2frame::frame::{meta, Frame, Target};
use common::{data_kind, Rng};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;

type FromBuffer = unsafe extern "C" fn(*mut u8, i64, bool) -> *mut blosc2_schunk;
type Open = unsafe extern "C" fn(*const c_char) -> *mut blosc2_schunk;
type GetChunk = unsafe extern "C" fn(*mut blosc2_schunk, i64, *mut *mut u8, *mut bool) -> c_int;
type DecompressChunk = unsafe extern "C" fn(*mut blosc2_schunk, i64, *mut c_void, i32) -> c_int;
type VlmetaGet =
    unsafe extern "C" fn(*mut blosc2_schunk, *const c_char, *mut *mut u8, *mut i32) -> c_int;
type Free = unsafe extern "C" fn(*mut blosc2_schunk) -> c_int;

pub(crate) struct Api {
    pub from_buffer: FromBuffer,
    pub open: Open,
    pub get_chunk: GetChunk,
    pub decompress_chunk: DecompressChunk,
    pub vlmeta_get: VlmetaGet,
    pub free: Free,
}

pub(crate) fn api() -> Api {
    let r = common::reference::reference();
    // SAFETY: each symbol has exactly the C signature declared by blosc2.h 3.3.5.
    unsafe {
        Api {
            from_buffer: std::mem::transmute::<*mut c_void, FromBuffer>(
                r.sym("blosc2_schunk_from_buffer"),
            ),
            open: std::mem::transmute::<*mut c_void, Open>(r.sym("blosc2_schunk_open")),
            get_chunk: std::mem::transmute::<*mut c_void, GetChunk>(
                r.sym("blosc2_schunk_get_chunk"),
            ),
            decompress_chunk: std::mem::transmute::<*mut c_void, DecompressChunk>(
                r.sym("blosc2_schunk_decompress_chunk"),
            ),
            vlmeta_get: std::mem::transmute::<*mut c_void, VlmetaGet>(r.sym("blosc2_vlmeta_get")),
            free: std::mem::transmute::<*mut c_void, Free>(r.sym("blosc2_schunk_free")),
        }
    }
}

/// Compares everything the reference reads from `s` with our frame `f`. `lazy` is set for
/// on-disk frames, whose decompression goes through c-blosc2's lazy-chunk path (which refuses
/// stored special chunks, docs/format/offsets.md#special-offsets).
pub(crate) fn check_against_reference(
    api: &Api,
    s: *mut blosc2_schunk,
    f: &Frame,
    what: &str,
    lazy: bool,
) {
    assert!(!s.is_null(), "{what}: reference could not open our frame");
    // SAFETY: `s` is a live schunk from the reference; every out-pointer is valid, and every
    // buffer the reference hands out is freed as its API says.
    unsafe {
        let sc = &*s;
        assert_eq!(sc.nchunks, f.nchunks(), "{what}: nchunks");
        assert_eq!(sc.nbytes, f.header().nbytes, "{what}: nbytes");
        assert_eq!(sc.chunksize, f.header().chunksize, "{what}: chunksize");
        for i in 0..f.nchunks() {
            let ours = f.chunk(i).unwrap();
            let mut p: *mut u8 = std::ptr::null_mut();
            let mut needs_free = false;
            let n = (api.get_chunk)(s, i, &mut p, &mut needs_free);
            assert!(n > 0, "{what}: get_chunk({i}) = {n}");
            let theirs = std::slice::from_raw_parts(p, n as usize).to_vec();
            if needs_free {
                common::reference::free_ref(p as *mut c_void);
            }
            assert_eq!(&ours[..], &theirs[..], "{what}: chunk {i}");
            let info = f.chunk_info(i).unwrap();
            if lazy && info.special != special::NONE && info.special != special::VALUE {
                continue;
            }
            let mut buf = vec![0u8; info.nbytes as usize];
            let n = (api.decompress_chunk)(s, i, buf.as_mut_ptr() as *mut c_void, info.nbytes);
            assert_eq!(n, info.nbytes, "{what}: decompress_chunk({i})");
            if info.special != special::UNINIT {
                assert_eq!(
                    f.decompress_chunk(i).unwrap(),
                    buf,
                    "{what}: data of chunk {i}"
                );
            }
        }
        assert_eq!(
            sc.nmetalayers as usize,
            f.metalayers().len(),
            "{what}: nmetalayers"
        );
        for (k, (name, content)) in f.metalayers().iter().enumerate() {
            let m: &blosc2_metalayer = &*sc.metalayers[k];
            assert_eq!(CStr::from_ptr(m.name).to_str().unwrap(), name, "{what}");
            let c = std::slice::from_raw_parts(m.content, m.content_len as usize);
            assert_eq!(c, &content[..], "{what}: metalayer {name}");
        }
        assert_eq!(sc.nvlmetalayers as usize, f.vlmetalayers().len(), "{what}");
        for (name, _) in f.vlmetalayers() {
            let cname = CString::new(name.as_str()).unwrap();
            let mut p: *mut u8 = std::ptr::null_mut();
            let mut len = 0i32;
            let rc = (api.vlmeta_get)(s, cname.as_ptr(), &mut p, &mut len);
            assert!(rc >= 0, "{what}: vlmeta_get({name}) = {rc}");
            let theirs = std::slice::from_raw_parts(p, len as usize).to_vec();
            common::reference::free_ref(p as *mut c_void);
            assert_eq!(
                f.vlmetalayer(name).unwrap(),
                theirs,
                "{what}: vlmeta {name}"
            );
        }
        (api.free)(s);
    }
}

fn cparams(rng: &mut Rng) -> CParams {
    let (compcode, filters) = match rng.below(5) {
        0 => (0, [0, 0, 0, 0, 0, 1]),
        1 => (1, [0, 0, 0, 0, 0, 2]),
        2 => (2, [0, 0, 0, 0, 0, 1]),
        3 => (4, [0, 0, 0, 0, 0, 0]),
        _ => (5, [0, 0, 0, 0, 1, 0]),
    };
    CParams {
        compcode,
        clevel: 1 + rng.below(9) as u8,
        typesize: [1, 2, 4, 8][rng.below(4) as usize],
        filters,
        ..CParams::default()
    }
}

/// A chunk of `n` bytes: mostly compressible data, sometimes all zeros (a special chunk).
fn make_chunk(cp: &CParams, rng: &mut Rng, n: usize) -> Vec<u8> {
    let kind = ["small_int", "f64_series", "text", "random", "zeros"][rng.below(5) as usize];
    chunk::compress_vec(cp, &data_kind(kind, n, rng.next_u64())).unwrap()
}

/// A seeded sequence of mutations on a new frame at `target`.
fn build(seed: u64, target: Target<'_>) -> Frame {
    let mut rng = Rng::new(seed);
    let cp = cparams(&mut rng);
    let mut f = Frame::create(target, &cp, &DParams::default()).unwrap();
    if rng.below(2) == 0 {
        f.add_metalayer("b2nd", &[0x97, 0, 1, 0x91, 0xd3, 0, 0, 0, 0, 0, 0, 0, 9])
            .unwrap();
        f.add_metalayer("other", b"content").unwrap();
    }
    let vl = meta::encode_vlmeta(b"\xa4note", None).unwrap();
    f.add_vlmetalayer_raw("note", &vl).unwrap();
    let size = 1000 * cp.typesize as usize;
    let variable = seed.is_multiple_of(3);
    for _ in 0..3 + rng.below(12) {
        let n = if variable {
            size / (1 + rng.below(3) as usize)
        } else {
            size
        };
        let c = make_chunk(&cp, &mut rng, n);
        f.append_chunk(&c).unwrap();
    }
    for _ in 0..6 {
        let nch = f.nchunks();
        let i = rng.below(nch as u64) as i64;
        let n = if variable {
            size / (1 + rng.below(4) as usize)
        } else {
            size
        };
        match rng.below(5) {
            0 => {
                let c = make_chunk(&cp, &mut rng, n);
                f.insert_chunk(i, &c).unwrap();
            }
            1 | 2 => {
                let c = make_chunk(&cp, &mut rng, n);
                f.update_chunk(i, &c).unwrap();
            }
            3 if nch > 1 => {
                f.delete_chunk(i).unwrap();
            }
            _ => {
                let mut order: Vec<i64> = (0..nch).collect();
                order.reverse();
                f.reorder(&order).unwrap();
            }
        }
    }
    let big = meta::encode_vlmeta(&data_kind("text", 3000, seed), None).unwrap();
    f.add_vlmetalayer_raw("big", &big).unwrap();
    if rng.below(2) == 0 {
        f.delete_vlmetalayer("note").unwrap();
    }
    f
}

#[test]
fn reference_reads_our_frames_in_memory() {
    let api = api();
    for seed in 0..40 {
        let f = build(seed, Target::Memory);
        let mut buf = f.to_cframe().unwrap();
        // SAFETY: `buf` stays alive and unmodified while the reference copies it.
        let s = unsafe { (api.from_buffer)(buf.as_mut_ptr(), buf.len() as i64, true) };
        check_against_reference(&api, s, &f, &format!("memory seed {seed}"), false);
    }
}

#[test]
fn reference_reads_our_frames_on_disk() {
    let api = api();
    // Removed when the test passes (see `common::scratch`).
    let dir = common::scratch::dir("b2frame-refreads-");
    for seed in 0..20 {
        let file = dir.join(format!("f{seed}.b2frame"));
        let sdir = dir.join(format!("s{seed}.b2frame"));
        let f = build(seed, Target::File(&file));
        let s = build(seed, Target::Sparse(&sdir));
        for (p, fr, what) in [(&file, &f, "file"), (&sdir, &s, "sframe")] {
            let c = CString::new(p.to_str().unwrap()).unwrap();
            // SAFETY: a NUL-terminated path.
            let sc = unsafe { (api.open)(c.as_ptr()) };
            check_against_reference(&api, sc, fr, &format!("{what} seed {seed}"), true);
        }
        // Reopening our own files gives the same frames.
        let g = Frame::open(Path::new(&file)).unwrap();
        assert_eq!(g.to_cframe().unwrap(), f.to_cframe().unwrap());
        let t = Frame::open(Path::new(&sdir)).unwrap();
        for i in 0..s.nchunks() {
            assert_eq!(t.chunk(i).unwrap(), s.chunk(i).unwrap());
        }
    }
}

/// The cframe a plain super-chunk of 1-byte items serialises to, holding NaN chunks of 8- and
/// 4-byte items (which no NaN index entry can hold: it reads back with the frame's typesize),
/// in memory and as a file: the reference reads every chunk as we do, each as its own bytes.
#[test]
fn reference_reads_serialised_nan_chunks_of_other_items() {
    use b2frame::schunk::{NewStorage, SChunk};
    let api = api();
    let dir = common::scratch::dir("b2frame-refnan-");
    let cp1 = CParams {
        typesize: 1,
        ..CParams::default()
    };
    let nan = |typesize: i32| {
        let mut buf = [0u8; 64];
        let n = chunk::special::nans(&CParams { typesize, ..cp1 }, 4000, &mut buf).unwrap();
        buf[..n].to_vec()
    };
    let raw: Vec<u8> = (0..4000u32).map(|i| (i % 251) as u8).collect();
    let mut sc = SChunk::new(NewStorage::Plain, cp1, DParams::default()).unwrap();
    sc.append_buffer(&raw).unwrap();
    sc.append_chunk(&nan(8)).unwrap();
    sc.insert_chunk(1, &nan(4)).unwrap();
    let want = [
        raw.clone(),
        [0, 0, 0xc0, 0x7f].repeat(1000),
        [0, 0, 0, 0, 0, 0, 0xf8, 0x7f].repeat(500),
    ];
    let mut buf = sc.to_cframe().unwrap();
    let f = Frame::from_bytes(&buf).unwrap();
    for (i, w) in want.iter().enumerate() {
        assert!(f.decompress_chunk(i as i64).unwrap() == *w, "chunk {i}");
    }
    // SAFETY: `buf` stays alive and unmodified while the reference copies it.
    let s = unsafe { (api.from_buffer)(buf.as_mut_ptr(), buf.len() as i64, true) };
    check_against_reference(&api, s, &f, "to_cframe", false);
    let file = dir.join("nan.b2frame");
    sc.to_file(&file).unwrap();
    let c = CString::new(file.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    let s = unsafe { (api.open)(c.as_ptr()) };
    check_against_reference(&api, s, &Frame::open(&file).unwrap(), "to_file", true);
}

pub(crate) type AppendChunk = unsafe extern "C" fn(*mut blosc2_schunk, *mut u8, bool) -> i64;
pub(crate) type PosChunk = unsafe extern "C" fn(*mut blosc2_schunk, i64, *mut u8, bool) -> i64;
pub(crate) type DeleteChunk = unsafe extern "C" fn(*mut blosc2_schunk, i64) -> i64;
type Reorder = unsafe extern "C" fn(*mut blosc2_schunk, *mut i64) -> c_int;
type VlmetaSet =
    unsafe extern "C" fn(*mut blosc2_schunk, *const c_char, *mut u8, i32, *mut c_void) -> c_int;
type VlmetaDelete = unsafe extern "C" fn(*mut blosc2_schunk, *const c_char) -> c_int;

/// The same mutations applied by c-blosc2 to a copy of a file frame we wrote, and by us to the
/// original: after every step both files must be byte-identical (chunk payload placement,
/// compaction on update, dead space on delete, index compression, header and trailer).
#[test]
fn reference_and_we_mutate_our_files_identically() {
    let api = api();
    let r = common::reference::reference();
    // SAFETY: each symbol has exactly the C signature declared by blosc2.h 3.3.5.
    let (append, insert, update, delete, reorder, vl_add, vl_update, vl_delete) = unsafe {
        (
            std::mem::transmute::<*mut c_void, AppendChunk>(r.sym("blosc2_schunk_append_chunk")),
            std::mem::transmute::<*mut c_void, PosChunk>(r.sym("blosc2_schunk_insert_chunk")),
            std::mem::transmute::<*mut c_void, PosChunk>(r.sym("blosc2_schunk_update_chunk")),
            std::mem::transmute::<*mut c_void, DeleteChunk>(r.sym("blosc2_schunk_delete_chunk")),
            std::mem::transmute::<*mut c_void, Reorder>(r.sym("blosc2_schunk_reorder_offsets")),
            std::mem::transmute::<*mut c_void, VlmetaSet>(r.sym("blosc2_vlmeta_add")),
            std::mem::transmute::<*mut c_void, VlmetaSet>(r.sym("blosc2_vlmeta_update")),
            std::mem::transmute::<*mut c_void, VlmetaDelete>(r.sym("blosc2_vlmeta_delete")),
        )
    };
    // Removed when the test passes (see `common::scratch`).
    let dir = common::scratch::dir("b2frame-refmut-");
    let mut steps = 0;
    for seed in 100..130 {
        let ours_path = dir.join(format!("ours{seed}.b2frame"));
        let theirs_path = dir.join(format!("theirs{seed}.b2frame"));
        drop(build(seed, Target::File(&ours_path)));
        std::fs::copy(&ours_path, &theirs_path).unwrap();
        let mut f = Frame::open(&ours_path).unwrap();
        let c = CString::new(theirs_path.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        let s = unsafe { (api.open)(c.as_ptr()) };
        assert!(!s.is_null());
        let mut rng = Rng::new(seed * 7);
        let cp = CParams {
            typesize: f.header().typesize,
            compcode: f.header().compcode,
            clevel: f.header().clevel,
            filters: f.header().filters,
            ..CParams::default()
        };
        let variable = f.header().chunksize == 0;
        let size = f.header().chunksize.max(1000) as usize;
        for step in 0..12 {
            let nch = f.nchunks();
            let i = rng.below(nch as u64) as i64;
            let n = if variable {
                size / (1 + rng.below(3) as usize)
            } else {
                size
            };
            let kind = if variable {
                "small_int"
            } else {
                ["small_int", "zeros"][rng.below(2) as usize]
            };
            let mut chunk = chunk::compress_vec(&cp, &data_kind(kind, n, rng.next_u64())).unwrap();
            let what = format!("seed {seed} step {step}");
            // SAFETY: live schunk; `chunk` outlives the calls (copy = true); the order array
            // holds nchunks entries; names are NUL-terminated.
            unsafe {
                match rng.below(7) {
                    0 => {
                        assert!(append(s, chunk.as_mut_ptr(), true) >= 0, "{what}");
                        f.append_chunk(&chunk).unwrap();
                    }
                    1 => {
                        assert!(insert(s, i, chunk.as_mut_ptr(), true) >= 0, "{what}");
                        f.insert_chunk(i, &chunk).unwrap();
                    }
                    2 | 3 => {
                        assert!(update(s, i, chunk.as_mut_ptr(), true) >= 0, "{what}");
                        f.update_chunk(i, &chunk).unwrap();
                    }
                    4 if nch > 1 => {
                        assert!(delete(s, i) >= 0, "{what}");
                        f.delete_chunk(i).unwrap();
                    }
                    5 => {
                        let mut order: Vec<i64> = (0..nch).collect();
                        order.rotate_left(i as usize);
                        assert!(reorder(s, order.as_mut_ptr()) >= 0, "{what}");
                        f.reorder(&order).unwrap();
                    }
                    _ => {
                        let name = CString::new(format!("v{}", rng.below(3))).unwrap();
                        let mut content = data_kind("text", 10 + rng.below(200) as usize, seed);
                        let stored = meta::encode_vlmeta(&content, None).unwrap();
                        let exists = f.vlmetalayer_raw(name.to_str().unwrap()).is_some();
                        if exists && rng.below(2) == 0 {
                            assert!(vl_delete(s, name.as_ptr()) >= 0, "{what}");
                            f.delete_vlmetalayer(name.to_str().unwrap()).unwrap();
                        } else if exists {
                            let p = content.as_mut_ptr();
                            let len = content.len() as i32;
                            let rc = vl_update(s, name.as_ptr(), p, len, std::ptr::null_mut());
                            assert!(rc >= 0, "{what}");
                            f.update_vlmetalayer_raw(name.to_str().unwrap(), &stored)
                                .unwrap();
                        } else {
                            let p = content.as_mut_ptr();
                            let len = content.len() as i32;
                            let rc = vl_add(s, name.as_ptr(), p, len, std::ptr::null_mut());
                            assert!(rc >= 0, "{what}");
                            f.add_vlmetalayer_raw(name.to_str().unwrap(), &stored)
                                .unwrap();
                        }
                    }
                }
            }
            let a = common::without_fingerprint(&std::fs::read(&ours_path).unwrap());
            let b = std::fs::read(&theirs_path).unwrap();
            assert!(
                a == b,
                "{what}: files differ (ours {} bytes, theirs {})",
                a.len(),
                b.len()
            );
            steps += 1;
        }
        // SAFETY: live schunk, freed once.
        unsafe { (api.free)(s) };
    }
    assert_eq!(steps, 30 * 12);
}
