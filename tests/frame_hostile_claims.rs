//! Chunks whose headers claim more than their storage holds: nothing sized by the claim is
//! allocated before the claim is checked against what storage holds, and a chunk whose output
//! is legitimately huge (a 1 GiB SPECIAL_VALUE chunk) still decompresses when asked for.
//!
//! The claims are those of the hostile-frame probe's forged mutants (scripts/hostile-probe.sh):
//! nbytes just under 2 GiB in blocks of 1 to 4096 bytes, memcpyed (cbytes = nbytes + 32) or
//! not, over a stored chunk of a cframe file, or as a chunk file of an sframe cut to its 32-byte
//! header. c-blosc2 3.3.5 allocates about 1 GiB for the lazy chunk of such a chunk file (the
//! probe's `--compare` run measures it); libb2frame refuses it holding a few KiB.
//!
//! A binary of its own: it installs a counting global allocator, and its tests run one at a time.

mod common;

#[path = "common/counting.rs"]
mod counting;
use counting::{peak_of, Counting, ONE_AT_A_TIME};

#[global_allocator]
static ALLOC: Counting = Counting;

use b2frame::capi::chunk::*;
use b2frame::capi::codec::*;
use b2frame::capi::schunk::*;
use b2frame::capi::types::*;
use std::ffi::{c_void, CString};

type Sc = *mut blosc2_schunk;

const CHUNK_ITEMS: usize = 10_000;
const NCHUNKS: usize = 4;
/// What reading a chunk with forged claims may hold beyond its 40 KB destination.
const BOUND: usize = 256 << 10;

fn item(i: usize) -> i32 {
    (i as i32).wrapping_mul(2_654_435_761u32 as i32) >> 7
}

/// A super-chunk of `NCHUNKS` chunks of int32 items at `url` (contiguous or not).
fn write_frame(url: &CString, contiguous: bool) {
    b2frame::capi::globals::blosc2_init();
    let _ = std::fs::remove_file(url.to_str().unwrap());
    let _ = std::fs::remove_dir_all(url.to_str().unwrap());
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.blocksize = 8192;
    let mut dp = BLOSC2_DPARAMS_DEFAULTS;
    let mut st = common::storage(contiguous, Some(url), &mut cp, &mut dp);
    // SAFETY: C calls on a super-chunk made and freed here, with buffers of the sizes passed.
    unsafe {
        let sc = blosc2_schunk_new(&mut st);
        assert!(!sc.is_null());
        for k in 0..NCHUNKS {
            let data: Vec<i32> = (0..CHUNK_ITEMS)
                .map(|i| item(k * CHUNK_ITEMS + i))
                .collect();
            let n = blosc2_schunk_append_buffer(
                sc,
                data.as_ptr() as *const c_void,
                (data.len() * 4) as i32,
            );
            assert_eq!(n, k as i64 + 1);
        }
        blosc2_schunk_free(sc);
    }
}

/// Writes the forged claims over the 32-byte chunk header at `at` of `bytes`.
fn forge(bytes: &mut Vec<u8>, at: usize, blocksize: i32, memcpyed: bool, cut: bool) {
    let h = &mut bytes[at..at + 32];
    h[4..8].copy_from_slice(&0x7fff_ffdfi32.to_le_bytes());
    h[8..12].copy_from_slice(&blocksize.to_le_bytes());
    let cbytes: i32 = if memcpyed { 0x7fff_ffff } else { 0x7fff_ff00 };
    h[12..16].copy_from_slice(&cbytes.to_le_bytes());
    if memcpyed {
        h[2] |= 0x02;
    } else {
        h[2] &= !0x02;
    }
    if cut {
        bytes.truncate(at + 32);
    }
}

/// Where chunk `i` of the cframe `frame` starts (its bytes, as an in-memory super-chunk
/// without a copy lends them).
fn chunk_offset(frame: &mut [u8], i: i64) -> usize {
    // SAFETY: the super-chunk borrows `frame` and is freed before it; get_chunk's pointer
    // points into it (needs_free is false for such frames).
    unsafe {
        let sc = blosc2_schunk_from_buffer(frame.as_mut_ptr(), frame.len() as i64, false);
        assert!(!sc.is_null());
        let mut c: *mut u8 = std::ptr::null_mut();
        let mut nf = false;
        assert!(blosc2_schunk_get_chunk(sc, i, &mut c, &mut nf) > 0);
        assert!(!nf);
        let at = c.offset_from(frame.as_ptr()) as usize;
        blosc2_schunk_free(sc);
        at
    }
}

/// Reads every chunk of the frame at `url`: chunk `bad` (forged) must fail every read
/// holding at most `BOUND`; the others decode to their items, through their lazy chunks too.
fn check_reads(url: &CString, bad: i64, what: &str) {
    // SAFETY: C calls on a super-chunk opened and freed here, with buffers of the sizes passed.
    unsafe {
        let sc: Sc = blosc2_schunk_open(url.as_ptr());
        assert!(!sc.is_null(), "{what}: the frame opens");
        let mut out = vec![0i32; CHUNK_ITEMS];
        let outp = out.as_mut_ptr() as *mut c_void;
        let size = (CHUNK_ITEMS * 4) as i32;
        for k in 0..NCHUNKS as i64 {
            let ((lazy_rc, dec_rc, get_rc), peak) = peak_of(|| {
                let mut lz: *mut u8 = std::ptr::null_mut();
                let mut nf = false;
                let lrc = blosc2_schunk_get_lazychunk(sc, k, &mut lz, &mut nf);
                let (mut drc, mut grc, mut first) = (i32::MIN, i32::MIN, 0);
                if lrc > 0 {
                    drc = blosc2_decompress_ctx((*sc).dctx, lz as *const c_void, lrc, outp, size);
                    grc = blosc2_getitem_ctx(
                        (*sc).dctx,
                        lz as *const c_void,
                        lrc,
                        17,
                        100,
                        outp,
                        size,
                    );
                    first = *(outp as *const i32);
                }
                if nf {
                    libc::free(lz as *mut c_void);
                }
                (lrc, drc, (grc, first))
            });
            let (rc, peak2) = peak_of(|| blosc2_schunk_decompress_chunk(sc, k, outp, size));
            if k == bad {
                assert!(
                    lazy_rc < 0,
                    "{what}: the forged chunk's lazy chunk is refused ({lazy_rc})"
                );
                assert!(
                    rc < 0,
                    "{what}: the forged chunk does not decompress ({rc})"
                );
                assert!(peak < BOUND, "{what}: its lazy chunk held {peak} bytes");
                assert!(
                    peak2 < BOUND,
                    "{what}: its decompression held {peak2} bytes"
                );
            } else {
                assert!(lazy_rc > 0, "{what}: chunk {k}'s lazy chunk");
                assert_eq!(
                    get_rc,
                    (400, item(k as usize * CHUNK_ITEMS + 17)),
                    "{what}: getitem on chunk {k}'s lazy chunk"
                );
                assert_eq!(dec_rc, size, "{what}: chunk {k}'s lazy chunk decodes");
                assert_eq!(rc, size, "{what}: chunk {k} decodes");
                let want: Vec<i32> = (0..CHUNK_ITEMS)
                    .map(|i| item(k as usize * CHUNK_ITEMS + i))
                    .collect();
                assert_eq!(out, want, "{what}: chunk {k}");
            }
        }
        blosc2_schunk_free(sc);
    }
}

/// Holds this binary to 4 GiB of address space (its largest test needs 1 GiB and a little), so
/// that a regression fails the allocation (an abort) instead of exhausting the machine: the
/// forged claims made the code before the bound allocate up to 16 GiB.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    let lim = libc::rlimit {
        rlim_cur: 4 << 30,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: setrlimit with a valid struct; lowering the soft limit is always allowed.
    unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) };
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// The forged variants: (blocksize, memcpyed).
const VARIANTS: [(i32, bool); 4] = [(1, true), (16, true), (4096, true), (16, false)];

#[test]
fn forged_sframe_chunk_files_make_no_large_lazy_chunk() {
    let _one = one_at_a_time();
    let dir = common::scratch::dir("b2f-hostile-claims-s-");
    let path = dir.join("s.b2frame");
    let url = CString::new(path.to_str().unwrap()).unwrap();
    for (bs, memcpyed) in VARIANTS {
        for cut in [true, false] {
            write_frame(&url, false);
            let file = path.join("00000001.chunk");
            let mut bytes = std::fs::read(&file).unwrap();
            forge(&mut bytes, 0, bs, memcpyed, cut);
            std::fs::write(&file, &bytes).unwrap();
            let what = format!("sframe, blocksize {bs}, memcpyed {memcpyed}, cut {cut}");
            check_reads(&url, 1, &what);
        }
    }
}

#[test]
fn forged_cframe_chunks_make_no_large_lazy_chunk() {
    let _one = one_at_a_time();
    let dir = common::scratch::dir("b2f-hostile-claims-c-");
    let path = dir.join("c.b2frame");
    let url = CString::new(path.to_str().unwrap()).unwrap();
    for (bs, memcpyed) in VARIANTS {
        for bad in [1, NCHUNKS as i64 - 1] {
            write_frame(&url, true);
            let mut bytes = std::fs::read(&path).unwrap();
            let at = chunk_offset(&mut bytes, bad);
            forge(&mut bytes, at, bs, memcpyed, false);
            std::fs::write(&path, &bytes).unwrap();
            let what = format!("cframe, chunk {bad}, blocksize {bs}, memcpyed {memcpyed}");
            check_reads(&url, bad, &what);
        }
    }
}

/// A SPECIAL_VALUE chunk of 1 GiB (40 bytes stored) decompresses into a 1 GiB destination in
/// memory, from a cframe file and from an sframe, holding nothing beyond the destination.
#[test]
fn a_special_value_chunk_of_1_gib_decompresses() {
    let _one = one_at_a_time();
    b2frame::capi::globals::blosc2_init();
    const GIB: usize = 1 << 30;
    let dir = common::scratch::dir("b2f-hostile-claims-v-");
    let value = 0x0123_4567_89ab_cdefu64.to_le_bytes();
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 8;
    let mut chunk = vec![0u8; 40];
    // SAFETY: `chunk` holds 40 bytes, `value` 8 (the typesize).
    let n = unsafe {
        blosc2_chunk_repeatval(
            cp,
            GIB as i32,
            chunk.as_mut_ptr() as *mut c_void,
            40,
            value.as_ptr() as *const c_void,
        )
    };
    assert_eq!(n, 40);
    let mut out = vec![0u8; GIB];
    for (name, contiguous, url) in [
        ("memory", false, None),
        ("cframe", true, Some(dir.join("v.b2frame"))),
        ("sframe", false, Some(dir.join("v.b2sframe"))),
    ] {
        let url = url.map(|p: std::path::PathBuf| CString::new(p.to_str().unwrap()).unwrap());
        let mut dp = BLOSC2_DPARAMS_DEFAULTS;
        let mut st = common::storage(contiguous, url.as_deref(), &mut cp, &mut dp);
        out.fill(0);
        // SAFETY: C calls on a super-chunk made and freed here, with buffers of the sizes passed.
        unsafe {
            let mut sc = blosc2_schunk_new(&mut st);
            assert!(!sc.is_null());
            assert_eq!(blosc2_schunk_append_chunk(sc, chunk.as_mut_ptr(), true), 1);
            if let Some(u) = &url {
                blosc2_schunk_free(sc);
                sc = blosc2_schunk_open(u.as_ptr());
                assert!(!sc.is_null());
            }
            let (rc, peak) = peak_of(|| {
                blosc2_schunk_decompress_chunk(sc, 0, out.as_mut_ptr() as *mut c_void, GIB as i32)
            });
            assert_eq!(rc, GIB as i32, "{name}");
            assert!(
                peak < BOUND,
                "{name}: held {peak} bytes beside the destination"
            );
            for at in [0, 8, GIB / 2, GIB - 8] {
                assert_eq!(out[at..at + 8], value, "{name}: item at byte {at}");
            }
            // The last items through the chunk get_lazychunk hands out (SPECIAL_VALUE chunks
            // are handed out whole, as c-blosc2 does).
            let mut lz: *mut u8 = std::ptr::null_mut();
            let mut nf = false;
            let lrc = blosc2_schunk_get_lazychunk(sc, 0, &mut lz, &mut nf);
            assert_eq!(lrc, 40, "{name}");
            let mut last = [0u8; 16];
            let g = blosc2_getitem_ctx(
                (*sc).dctx,
                lz as *const c_void,
                lrc,
                (GIB / 8 - 2) as i32,
                2,
                last.as_mut_ptr() as *mut c_void,
                16,
            );
            assert_eq!(g, 16, "{name}");
            assert_eq!(last[8..], value, "{name}");
            if nf {
                libc::free(lz as *mut c_void);
            }
            blosc2_schunk_free(sc);
        }
    }
}

/// A frame of fixed chunksize whose middle chunk claims fewer bytes than the chunksize (a
/// SPECIAL_VALUE chunk whose nbytes field was changed to 16, which decodes): a slice across it
/// is `BLOSC2_ERROR_DATA` (it panicked, out of the decoded buffer's bounds).
#[test]
fn a_slice_across_a_chunk_shorter_than_the_chunksize_is_an_error() {
    let _one = one_at_a_time();
    b2frame::capi::globals::blosc2_init();
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    let mut dp = BLOSC2_DPARAMS_DEFAULTS;
    let mut st = common::storage(true, None, &mut cp, &mut dp);
    let value = 7i32.to_le_bytes();
    // SAFETY: C calls on super-chunks made and freed here, with buffers of the sizes passed.
    unsafe {
        let sc = blosc2_schunk_new(&mut st);
        let data: Vec<i32> = (0..CHUNK_ITEMS as i32).collect();
        let mut special = vec![0u8; 36];
        assert_eq!(
            blosc2_chunk_repeatval(
                cp,
                (CHUNK_ITEMS * 4) as i32,
                special.as_mut_ptr() as *mut c_void,
                36,
                value.as_ptr() as *const c_void
            ),
            36
        );
        let bytes = (CHUNK_ITEMS * 4) as i32;
        assert_eq!(
            blosc2_schunk_append_buffer(sc, data.as_ptr() as *const c_void, bytes),
            1
        );
        assert_eq!(
            blosc2_schunk_append_chunk(sc, special.as_mut_ptr(), true),
            2
        );
        assert_eq!(
            blosc2_schunk_append_buffer(sc, data.as_ptr() as *const c_void, bytes),
            3
        );
        let mut cf: *mut u8 = std::ptr::null_mut();
        let mut nf = false;
        let len = blosc2_schunk_to_buffer(sc, &mut cf, &mut nf);
        assert!(len > 0);
        let mut frame = std::slice::from_raw_parts(cf, len as usize).to_vec();
        if nf {
            libc::free(cf as *mut c_void);
        }
        blosc2_schunk_free(sc);
        let at = chunk_offset(&mut frame, 1);
        frame[at + 4..at + 8].copy_from_slice(&16i32.to_le_bytes());
        let sc = blosc2_schunk_from_buffer(frame.as_mut_ptr(), frame.len() as i64, false);
        assert!(!sc.is_null());
        let mut out = vec![0i32; 2 * CHUNK_ITEMS];
        let start = CHUNK_ITEMS as i64 - 10;
        let rc =
            blosc2_schunk_get_slice_buffer(sc, start, start + 20, out.as_mut_ptr() as *mut c_void);
        assert_eq!(rc, BLOSC2_ERROR_DATA);
        // The chunks around it still read.
        let rc = blosc2_schunk_get_slice_buffer(sc, 5, 10, out.as_mut_ptr() as *mut c_void);
        assert_eq!((rc, &out[..5]), (0, &[5, 6, 7, 8, 9][..]));
        blosc2_schunk_free(sc);
    }
}
