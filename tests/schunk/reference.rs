//! Super-chunk interop with the real c-blosc2 3.3.5 (dlopened): frames our C API writes
//! (cframe file, sframe directory, to_buffer bytes), after appends, inserts, updates, deletes,
//! metalayers and vlmetalayers, open in the reference with the same chunks and metadata; and
//! frames the reference writes open in ours (and stay readable by the reference after we mutate
//! them). Plus the safe layer's determinism across storages.

#![allow(clippy::missing_transmute_annotations)]

use crate::common;

use b2frame::capi::meta::*;
use b2frame::capi::schunk::*;
use b2frame::capi::types::*;
use common::reference::reference;
use common::scratch::Scratch;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::PathBuf;

type Sc = *mut blosc2_schunk;

/// Function table shared by both implementations (ours is the same signatures).
struct Api {
    new: unsafe extern "C" fn(*mut blosc2_storage) -> Sc,
    open: unsafe extern "C" fn(*const c_char) -> Sc,
    from_buffer: unsafe extern "C" fn(*mut u8, i64, bool) -> Sc,
    to_buffer: unsafe extern "C" fn(Sc, *mut *mut u8, *mut bool) -> i64,
    free: unsafe extern "C" fn(Sc) -> c_int,
    append_buffer: unsafe extern "C" fn(Sc, *const c_void, i32) -> i64,
    insert_chunk: unsafe extern "C" fn(Sc, i64, *mut u8, bool) -> i64,
    update_chunk: unsafe extern "C" fn(Sc, i64, *mut u8, bool) -> i64,
    delete_chunk: unsafe extern "C" fn(Sc, i64) -> i64,
    decompress_chunk: unsafe extern "C" fn(Sc, i64, *mut c_void, i32) -> c_int,
    get_chunk: unsafe extern "C" fn(Sc, i64, *mut *mut u8, *mut bool) -> c_int,
    meta_add: unsafe extern "C" fn(Sc, *const c_char, *mut u8, i32) -> c_int,
    vlmeta_add: unsafe extern "C" fn(Sc, *const c_char, *mut u8, i32, *mut blosc2_cparams) -> c_int,
    vlmeta_get: unsafe extern "C" fn(Sc, *const c_char, *mut *mut u8, *mut i32) -> c_int,
    fill_special: unsafe extern "C" fn(Sc, i64, c_int, i32) -> i64,
    /// Frees what this library allocated (on Windows the reference's C runtime is another).
    free_mem: unsafe fn(*mut c_void),
}

fn ours() -> Api {
    Api {
        new: blosc2_schunk_new,
        open: blosc2_schunk_open,
        from_buffer: blosc2_schunk_from_buffer,
        to_buffer: blosc2_schunk_to_buffer,
        free: blosc2_schunk_free,
        append_buffer: blosc2_schunk_append_buffer,
        insert_chunk: blosc2_schunk_insert_chunk,
        update_chunk: blosc2_schunk_update_chunk,
        delete_chunk: blosc2_schunk_delete_chunk,
        decompress_chunk: blosc2_schunk_decompress_chunk,
        get_chunk: blosc2_schunk_get_chunk,
        meta_add: blosc2_meta_add,
        vlmeta_add: blosc2_vlmeta_add,
        vlmeta_get: blosc2_vlmeta_get,
        fill_special: blosc2_schunk_fill_special,
        free_mem: common::reference::free_ours,
    }
}

/// The reference's functions, dlopened.
fn theirs() -> Api {
    let r = reference();
    // SAFETY: each symbol has the C signature blosc2.h 3.3.5 declares for it.
    unsafe {
        Api {
            new: std::mem::transmute(r.sym("blosc2_schunk_new")),
            open: std::mem::transmute(r.sym("blosc2_schunk_open")),
            from_buffer: std::mem::transmute(r.sym("blosc2_schunk_from_buffer")),
            to_buffer: std::mem::transmute(r.sym("blosc2_schunk_to_buffer")),
            free: std::mem::transmute(r.sym("blosc2_schunk_free")),
            append_buffer: std::mem::transmute(r.sym("blosc2_schunk_append_buffer")),
            insert_chunk: std::mem::transmute(r.sym("blosc2_schunk_insert_chunk")),
            update_chunk: std::mem::transmute(r.sym("blosc2_schunk_update_chunk")),
            delete_chunk: std::mem::transmute(r.sym("blosc2_schunk_delete_chunk")),
            decompress_chunk: std::mem::transmute(r.sym("blosc2_schunk_decompress_chunk")),
            get_chunk: std::mem::transmute(r.sym("blosc2_schunk_get_chunk")),
            meta_add: std::mem::transmute(r.sym("blosc2_meta_add")),
            vlmeta_add: std::mem::transmute(r.sym("blosc2_vlmeta_add")),
            vlmeta_get: std::mem::transmute(r.sym("blosc2_vlmeta_get")),
            fill_special: std::mem::transmute(r.sym("blosc2_schunk_fill_special")),
            free_mem: common::reference::free_ref,
        }
    }
}

const ITEMS: usize = 6000;

fn data(seed: u32, items: usize) -> Vec<u8> {
    if seed == 0 {
        return vec![0u8; items * 4];
    }
    (0..items as u32)
        .flat_map(|i| (seed * 100_000 + i / 3).to_le_bytes())
        .collect()
}

/// A path `name` in a fresh directory, which is removed when the returned guard is dropped
/// after the test passes (see `common::scratch`).
fn scratch(name: &str) -> (Scratch, PathBuf) {
    let d = common::scratch::dir("b2f-schunk-interop-");
    let p = d.join(name);
    (d, p)
}

/// Builds a super-chunk with `api` at `path` (contiguous or sparse) through a fixed sequence
/// of operations; returns the expected chunk contents.
fn build(api: &Api, path: Option<&CString>, contiguous: bool) -> (Sc, Vec<Vec<u8>>) {
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.compcode = BLOSC_ZSTD as u8;
    cp.clevel = 3;
    let mut st = blosc2_storage {
        contiguous,
        urlpath: path.map_or(std::ptr::null_mut(), |p| p.as_ptr() as *mut c_char),
        cparams: &mut cp,
        ..BLOSC2_STORAGE_DEFAULTS
    };
    let mut model = Vec::new();
    // SAFETY: C calls with valid arguments; the data buffers outlive each call.
    unsafe {
        let sc = (api.new)(&mut st);
        assert!(!sc.is_null());
        let mut meta = *b"\x01\x02\x03\x04\x05";
        assert_eq!(
            (api.meta_add)(sc, c"layout".as_ptr(), meta.as_mut_ptr(), 5),
            0
        );
        for seed in [1u32, 2, 0, 3, 4] {
            let d = data(seed, ITEMS);
            let n = (api.append_buffer)(sc, d.as_ptr() as *const c_void, d.len() as i32);
            assert!(n > 0);
            model.push(d);
        }
        // insert a copy of chunk 1 at 0; update 2 with chunk 4's bytes; delete 3
        let mut c: *mut u8 = std::ptr::null_mut();
        let mut nf = false;
        let cb = (api.get_chunk)(sc, 1, &mut c, &mut nf);
        assert!(cb > 0);
        let chunk1 = std::slice::from_raw_parts(c, cb as usize).to_vec();
        if nf {
            (api.free_mem)(c as *mut c_void);
        }
        let mut tmp = chunk1.clone();
        assert_eq!((api.insert_chunk)(sc, 0, tmp.as_mut_ptr(), true), 6);
        model.insert(0, model[1].clone());
        let cb = (api.get_chunk)(sc, 5, &mut c, &mut nf);
        let mut chunk4 = std::slice::from_raw_parts(c, cb as usize).to_vec();
        if nf {
            (api.free_mem)(c as *mut c_void);
        }
        assert_eq!((api.update_chunk)(sc, 2, chunk4.as_mut_ptr(), true), 6);
        model[2] = model[5].clone();
        assert_eq!((api.delete_chunk)(sc, 3), 5);
        model.remove(3);
        let mut vl = b"{\"author\": \"schunk\"}".to_vec();
        assert_eq!(
            (api.vlmeta_add)(
                sc,
                c"attrs".as_ptr(),
                vl.as_mut_ptr(),
                vl.len() as i32,
                std::ptr::null_mut()
            ),
            0
        );
        (sc, model)
    }
}

/// Checks a super-chunk opened by `api` against the model and the metadata of [`build`].
fn check(api: &Api, sc: Sc, model: &[Vec<u8>]) {
    assert!(!sc.is_null());
    // SAFETY: `sc` is a live super-chunk of `api`'s library; fields read per the shared ABI.
    unsafe {
        assert_eq!((*sc).nchunks, model.len() as i64);
        assert_eq!(
            (*sc).nbytes,
            model.iter().map(|m| m.len() as i64).sum::<i64>()
        );
        assert_eq!((*sc).typesize, 4);
        assert_eq!((*sc).compcode, BLOSC_ZSTD as u8);
        for (i, m) in model.iter().enumerate() {
            let mut out = vec![0u8; m.len()];
            let n = (api.decompress_chunk)(
                sc,
                i as i64,
                out.as_mut_ptr() as *mut c_void,
                out.len() as i32,
            );
            assert_eq!(n, m.len() as i32, "chunk {i}");
            assert!(out == *m, "chunk {i} differs");
        }
        assert_eq!((*sc).nmetalayers, 1);
        let ml = &*(*sc).metalayers[0];
        assert_eq!(CStr::from_ptr(ml.name).to_bytes(), b"layout");
        assert_eq!(
            std::slice::from_raw_parts(ml.content, ml.content_len as usize),
            b"\x01\x02\x03\x04\x05"
        );
        assert_eq!((*sc).nvlmetalayers, 1);
        let mut c: *mut u8 = std::ptr::null_mut();
        let mut len = 0i32;
        assert_eq!((api.vlmeta_get)(sc, c"attrs".as_ptr(), &mut c, &mut len), 0);
        assert_eq!(
            std::slice::from_raw_parts(c, len as usize),
            b"{\"author\": \"schunk\"}"
        );
        (api.free_mem)(c as *mut c_void);
    }
}

#[test]
fn frames_we_write_open_in_the_reference() {
    let (o, r) = (ours(), theirs());
    for contiguous in [true, false] {
        let (_dir, p) = scratch(if contiguous {
            "ours.b2frame"
        } else {
            "ours-dir.b2frame"
        });
        let cp = CString::new(p.to_str().unwrap()).unwrap();
        let (sc, model) = build(&o, Some(&cp), contiguous);
        check(&o, sc, &model);
        // SAFETY: C calls on live handles.
        unsafe {
            // Our to_buffer bytes open in the reference too (copy and no-copy).
            let mut buf: *mut u8 = std::ptr::null_mut();
            let mut nf = false;
            let len = blosc2_schunk_to_buffer(sc, &mut buf, &mut nf);
            assert!(len > 0 && nf);
            for copy in [true, false] {
                let x = (r.from_buffer)(buf, len, copy);
                check(&r, x, &model);
                (r.free)(x);
            }
            libc::free(buf as *mut c_void);
            (o.free)(sc);
            let x = (r.open)(cp.as_ptr());
            check(&r, x, &model);
            (r.free)(x);
        }
    }
}

#[test]
fn frames_the_reference_writes_open_in_ours() {
    let (o, r) = (ours(), theirs());
    for contiguous in [true, false] {
        let (_dir, p) = scratch(if contiguous {
            "ref.b2frame"
        } else {
            "ref-dir.b2frame"
        });
        let cp = CString::new(p.to_str().unwrap()).unwrap();
        let (sc, mut model) = build(&r, Some(&cp), contiguous);
        // SAFETY: C calls on live handles.
        unsafe {
            let mut buf: *mut u8 = std::ptr::null_mut();
            let mut nf = false;
            let len = (r.to_buffer)(sc, &mut buf, &mut nf);
            assert!(len > 0);
            for copy in [true, false] {
                let x = blosc2_schunk_from_buffer(buf, len, copy);
                check(&o, x, &model);
                (o.free)(x);
            }
            if nf {
                (r.free_mem)(buf as *mut c_void);
            }
            (r.free)(sc);
            // Ours opens it, appends, and the reference still reads everything.
            let x = (o.open)(cp.as_ptr());
            check(&o, x, &model);
            let d = data(7, ITEMS / 2);
            assert_eq!(
                (o.append_buffer)(x, d.as_ptr() as *const c_void, d.len() as i32),
                6
            );
            model.push(d);
            (o.free)(x);
            let y = (r.open)(cp.as_ptr());
            check(&r, y, &model);
            (r.free)(y);
        }
    }
}

#[test]
fn to_buffer_is_identical_for_plain_and_reopened_file() {
    let o = ours();
    let (_dir, p) = scratch("det.b2frame");
    let cp = CString::new(p.to_str().unwrap()).unwrap();
    let (plain, _) = build(&o, None, false);
    // SAFETY: C calls on live handles.
    unsafe {
        let mut a: *mut u8 = std::ptr::null_mut();
        let mut nf = false;
        let la = blosc2_schunk_to_buffer(plain, &mut a, &mut nf);
        assert!(la > 0);
        assert_eq!(blosc2_schunk_to_file(plain, cp.as_ptr()), la);
        let f = blosc2_schunk_open(cp.as_ptr());
        assert!(!f.is_null());
        let mut b: *mut u8 = std::ptr::null_mut();
        let lb = blosc2_schunk_to_buffer(f, &mut b, &mut nf);
        assert_eq!(la, lb);
        assert!(
            std::slice::from_raw_parts(a, la as usize)
                == std::slice::from_raw_parts(b, lb as usize)
        );
        libc::free(a as *mut c_void);
        libc::free(b as *mut c_void);
        blosc2_schunk_free(f);
        blosc2_schunk_free(plain);
    }
}

type SliceNchunks = unsafe extern "C" fn(Sc, *mut i64, *mut i64, *mut *mut i64) -> i64;

/// Chunk lists of slices, 1-D and through a `b2nd` metalayer, agree with the reference.
#[test]
fn slice_nchunks_agrees_with_the_reference() {
    let (o, r) = (ours(), theirs());
    // SAFETY: the symbol has this C signature in blosc2.h 3.3.5.
    let ref_slice: SliceNchunks =
        unsafe { std::mem::transmute(reference().sym("blosc2_get_slice_nchunks")) };
    let meta = b2frame::b2nd_meta::serialize(&[10, 11], &[4, 5], &[2, 5], None, 0).unwrap();
    let slices: &[([i64; 2], [i64; 2])] = &[
        ([0, 0], [10, 11]),
        ([3, 0], [9, 6]),
        ([4, 5], [8, 10]),
        ([9, 10], [10, 11]),
        ([2, 2], [2, 7]),
        ([0, 4], [1, 6]),
    ];
    for b2nd in [false, true] {
        let mut lists = Vec::new();
        for (api, f) in [
            (&o, blosc2_get_slice_nchunks as SliceNchunks),
            (&r, ref_slice),
        ] {
            let mut cp = BLOSC2_CPARAMS_DEFAULTS;
            cp.typesize = 1;
            let mut st = blosc2_storage {
                cparams: &mut cp,
                ..BLOSC2_STORAGE_DEFAULTS
            };
            // SAFETY: C calls with valid arguments on live handles.
            unsafe {
                let sc = (api.new)(&mut st);
                assert!(!sc.is_null());
                if b2nd {
                    let mut m = meta.clone();
                    assert_eq!(
                        (api.meta_add)(sc, c"b2nd".as_ptr(), m.as_mut_ptr(), m.len() as i32),
                        0
                    );
                }
                // 3 x 3 chunks of 4 x 5 items, as the b2nd metalayer describes.
                let chunk = [7u8; 20];
                for _ in 0..9 {
                    assert!((api.append_buffer)(sc, chunk.as_ptr() as *const c_void, 20) > 0);
                }
                let mut got = Vec::new();
                for (s, e) in slices {
                    let (mut s, mut e) = (*s, *e);
                    if !b2nd {
                        // 1-D: items of the flat 180-byte super-chunk.
                        s = [s[0] * 11 + s[1], 0];
                        e = [e[0] * 11 + e[1], 0];
                    }
                    let mut idx: *mut i64 = std::ptr::null_mut();
                    let n = f(sc, s.as_mut_ptr(), e.as_mut_ptr(), &mut idx);
                    let v = if n > 0 {
                        std::slice::from_raw_parts(idx, n as usize).to_vec()
                    } else {
                        Vec::new()
                    };
                    if !idx.is_null() {
                        (api.free_mem)(idx as *mut c_void);
                    }
                    got.push((n, v));
                }
                (api.free)(sc);
                lists.push(got);
            }
        }
        assert_eq!(lists[0], lists[1], "b2nd = {b2nd}");
    }
}

/// One `fill_special` call on a fresh super-chunk (mode 0 plain, 1 in-memory cframe, 2 cframe
/// file, 3 sframe): the return code, the counters and blocksize the `blosc2_schunk` struct
/// shows, and the bytes stored on disk (the cframe file, the sframe's index file).
fn fill_once(api: &Api, mode: u8, path: &std::path::Path, case: FillCase) -> (Vec<i64>, Vec<u8>) {
    let (nitems, ts, cs, special, bs, codec, clevel, filter, nonempty) = case;
    let url = CString::new(path.to_str().unwrap()).unwrap();
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_dir_all(path);
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = ts;
    cp.blocksize = bs;
    cp.compcode = codec;
    cp.clevel = clevel;
    cp.filters[5] = filter;
    let mut st = blosc2_storage {
        contiguous: mode == 1 || mode == 2,
        urlpath: if mode >= 2 {
            url.as_ptr() as *mut c_char
        } else {
            std::ptr::null_mut()
        },
        cparams: &mut cp,
        ..BLOSC2_STORAGE_DEFAULTS
    };
    // SAFETY: C calls with valid arguments on a super-chunk made here and freed at the end.
    unsafe {
        let sc = (api.new)(&mut st);
        assert!(!sc.is_null());
        if nonempty {
            let d = data(1, 100);
            assert_eq!((api.append_buffer)(sc, d.as_ptr() as *const c_void, 400), 1);
        }
        let rc = (api.fill_special)(sc, nitems, special, cs);
        let c = &*sc;
        let fields = vec![
            rc,
            c.nchunks,
            c.nbytes,
            c.cbytes,
            i64::from(c.chunksize),
            i64::from(c.blocksize),
        ];
        (api.free)(sc);
        let bytes = match mode {
            2 => common::without_fingerprint(&std::fs::read(path).unwrap_or_default()),
            3 => common::without_fingerprint(
                &std::fs::read(path.join("chunks.b2frame")).unwrap_or_default(),
            ),
            _ => Vec::new(),
        };
        (fields, bytes)
    }
}

/// nitems, typesize, chunksize, special value, requested blocksize, codec, clevel, filter in
/// slot 5, whether a chunk is appended first.
type FillCase = (i64, i32, i32, c_int, i32, u8, u8, u8, bool);

/// `fill_special` agrees with c-blosc2 3.3.5 on every storage: return codes (0 for no items
/// before any check, -12 for bad sizes, -28 on frames and for non-empty super-chunks, -29 on
/// plain ones), the counters, the blocksize a frame takes from its special chunks, the
/// chunksize (the requested one on frames, even for one short chunk), and the frame bytes,
/// index included (one 40-byte SPECIAL_VALUE chunk, so a frame of a million chunks stays
/// under 400 bytes).
#[test]
fn fill_special_matches_the_reference() {
    let (o, r) = (ours(), theirs());
    let (_dir, p) = scratch("fill");
    let cases: Vec<FillCase> = vec![
        (1000, 4, 400, 1, 0, 0, 5, 1, false),
        (1003, 4, 400, 2, 0, 0, 5, 1, false),
        (1003, 4, 400, 4, 0, 0, 5, 1, false),
        (1000, 4, 400, 3, 0, 0, 5, 1, false),
        (1000, 4, 400, 7, 0, 0, 5, 1, false),
        (1000, 4, 401, 1, 0, 0, 5, 1, false),
        (0, 4, 401, 7, 0, 0, 5, 1, false),
        (-1, 4, 400, 1, 0, 0, 5, 1, false),
        (1000, 4, 0, 1, 0, 0, 5, 1, false),
        (100, 4, 400, 1, 0, 0, 5, 1, true),
        (1_000_000, 4, 1 << 20, 1, 256, 0, 5, 1, false),
        (1_000_000, 4, 1 << 20, 1, 0, BLOSC_ZSTD as u8, 9, 1, false),
        (1_000_000, 4, 1 << 20, 2, 0, BLOSC_LZ4 as u8, 1, 0, false),
        (1_000_000, 4, 1 << 20, 4, 0, 0, 5, 2, false),
        (250_000, 32, 8_000_000, 1, 0, 0, 5, 1, false),
        (5, 4, 40, 1, 0, 0, 5, 1, false),
        (1 << 20, 1, 1024, 1, 0, 0, 5, 1, false),
    ];
    for mode in 0..4u8 {
        for &case in &cases {
            let (of, ob) = fill_once(&o, mode, &p, case);
            let (rf, rb) = fill_once(&r, mode, &p, case);
            assert_eq!(
                of, rf,
                "mode {mode}, case {case:?}: rc, counters, blocksize"
            );
            assert!(ob == rb, "mode {mode}, case {case:?}: stored bytes differ");
            if mode >= 2 && of[0] > 0 {
                assert!(
                    ob.len() < 400,
                    "mode {mode}, case {case:?}: {} bytes",
                    ob.len()
                );
            }
        }
    }
}
