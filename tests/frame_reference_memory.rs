//! Heap held while working on frames that claim millions of special chunks: a `fill_special`
//! frame (ours or c-blosc2's, a few hundred bytes claiming 100 million chunks) opens, reads
//! chunks and takes an append without expanding its offsets to 8 bytes per chunk (800 MB).
//!
//! A binary of its own: it installs a counting global allocator (every Rust allocation of
//! the process, b2frame's included), and its tests run one at a time.

#![allow(clippy::missing_transmute_annotations)]

mod common;

use b2frame::capi::schunk::*;
use b2frame::capi::types::*;
use common::reference::reference;
use std::ffi::{c_char, c_int, c_void, CString};

#[path = "common/counting.rs"]
mod counting;
use counting::{peak_of, Counting, ONE_AT_A_TIME};

#[global_allocator]
static ALLOC: Counting = Counting;

/// Chunks the large frames claim: 100 million chunks of one 8-byte item, an index of 800 MB.
const NCHUNKS: i64 = 100_000_000;
/// What working on such a frame may hold: the index as stored after an append (4 MB: one
/// encoded block per 2048 entries, the blocks of the run sharing one encoding) and the kept
/// block list. Measured: 6.4 MB for open + reads + append of a cframe file, 10.3 MB with an
/// update and a delete, 19 MB for an in-memory frame (whose own bytes grow by the index, and
/// the vector holding them doubles); an expanded index would be 800 MB.
const BOUND: usize = 24 << 20;
/// A frame whose appended index is also reopened and read by c-blosc2 (which decodes the
/// whole index at open), small enough for an emulated run: 2 million chunks (16 MB of entries
/// expanded), and its bound.
const SMALL: (i64, usize) = (2_000_000, 2 << 20);

type Sc = *mut blosc2_schunk;

/// A cframe file at `path` holding `NCHUNKS` special chunks (`special`: 1 zeros, 2 NaN) of
/// one float64 each, made by `new`/`fill_special`/`free` of one library.
fn fill(path: &str, special: c_int, lib: (Fns, FillFn), n: i64) {
    let (f, fill_special) = lib;
    let url = CString::new(path).unwrap();
    let _ = std::fs::remove_file(path);
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 8;
    let mut st = blosc2_storage {
        contiguous: true,
        urlpath: url.as_ptr() as *mut c_char,
        cparams: &mut cp,
        ..BLOSC2_STORAGE_DEFAULTS
    };
    // SAFETY: C calls with valid arguments on a super-chunk made and freed here.
    unsafe {
        let sc = (f.new)(&mut st);
        assert!(!sc.is_null());
        assert_eq!(fill_special(sc, n, special, 8), n);
        assert_eq!((*sc).nchunks, n);
        (f.free)(sc);
    }
    let len = std::fs::metadata(path).unwrap().len();
    assert!(len < 1000, "a fill_special frame of {len} bytes");
}

type FillFn = unsafe extern "C" fn(Sc, i64, c_int, i32) -> i64;

#[derive(Clone, Copy)]
struct Fns {
    new: unsafe extern "C" fn(*mut blosc2_storage) -> Sc,
    open: unsafe extern "C" fn(*const c_char) -> Sc,
    free: unsafe extern "C" fn(Sc) -> c_int,
    append_buffer: unsafe extern "C" fn(Sc, *const c_void, i32) -> i64,
    decompress_chunk: unsafe extern "C" fn(Sc, i64, *mut c_void, i32) -> c_int,
}

fn ours() -> (Fns, FillFn) {
    (
        Fns {
            new: blosc2_schunk_new,
            open: blosc2_schunk_open,
            free: blosc2_schunk_free,
            append_buffer: blosc2_schunk_append_buffer,
            decompress_chunk: blosc2_schunk_decompress_chunk,
        },
        blosc2_schunk_fill_special,
    )
}

fn theirs() -> (Fns, FillFn) {
    let r = reference();
    // SAFETY: each symbol has the C signature blosc2.h 3.3.5 declares for it.
    unsafe {
        (
            Fns {
                new: std::mem::transmute(r.sym("blosc2_schunk_new")),
                open: std::mem::transmute(r.sym("blosc2_schunk_open")),
                free: std::mem::transmute(r.sym("blosc2_schunk_free")),
                append_buffer: std::mem::transmute(r.sym("blosc2_schunk_append_buffer")),
                decompress_chunk: std::mem::transmute(r.sym("blosc2_schunk_decompress_chunk")),
            },
            std::mem::transmute(r.sym("blosc2_schunk_fill_special")),
        )
    }
}

/// Chunk `i` of `sc` as one float64.
fn read(f: &Fns, sc: Sc, i: i64) -> f64 {
    let mut out = [0u8; 8];
    // SAFETY: `sc` is live; `out` holds the chunk's 8 bytes.
    let n = unsafe { (f.decompress_chunk)(sc, i, out.as_mut_ptr() as *mut c_void, 8) };
    assert_eq!(n, 8, "chunk {i}");
    f64::from_le_bytes(out)
}

/// Opens the frame at `path` (of `n` chunks) with our library, reads chunks from the start,
/// middle and end, appends one chunk, updates one in the middle of the run, deletes one near
/// its start and frees it: the heap this holds stays under `bound`. With `reopen`, the edited
/// frame (a compressed index now) is opened again, with the same bound, and c-blosc2 reads it.
fn open_read_append(path: &str, special: c_int, n: i64, bound: usize, reopen: bool) {
    let url = CString::new(path).unwrap();
    let (o, _) = ours();
    let expect = |v: f64| if special == 2 { v.is_nan() } else { v == 0.0 };
    let ((), peak) = peak_of(|| {
        // SAFETY: C calls on a super-chunk opened and freed here.
        unsafe {
            let sc = (o.open)(url.as_ptr());
            assert!(!sc.is_null(), "open {path}");
            assert_eq!((*sc).nchunks, n);
            for i in [0, 1, n / 2, n - 1] {
                assert!(expect(read(&o, sc, i)), "chunk {i}");
            }
            let v = 2.5f64.to_le_bytes();
            assert_eq!((o.append_buffer)(sc, v.as_ptr() as *const c_void, 8), n + 1);
            assert_eq!(read(&o, sc, n), 2.5);
            assert!(expect(read(&o, sc, n - 1)));
            // The appended chunk again, in the middle of the run; then chunk 3 goes.
            let mut chunk: *mut u8 = std::ptr::null_mut();
            let mut needs_free = false;
            assert!(blosc2_schunk_get_chunk(sc, n, &mut chunk, &mut needs_free) > 0);
            assert_eq!(blosc2_schunk_update_chunk(sc, n / 2, chunk, true), n + 1);
            if needs_free {
                common::reference::free_ours(chunk as *mut c_void);
            }
            assert_eq!(blosc2_schunk_delete_chunk(sc, 3), n);
            check_edited(&o, sc, n, expect);
            (o.free)(sc);
        }
    });
    assert!(peak < bound, "{path}: {peak} bytes of heap at peak");
    if !reopen {
        return;
    }
    // Reopened (now a compressed index): its uniform blocks become a run.
    let ((), peak) = peak_of(|| {
        // SAFETY: as above.
        unsafe {
            let sc = (o.open)(url.as_ptr());
            assert!(!sc.is_null(), "reopen {path}");
            check_edited(&o, sc, n, expect);
            (o.free)(sc);
        }
    });
    assert!(
        peak < bound,
        "{path} reopened: {peak} bytes of heap at peak"
    );
    // c-blosc2 reads what we wrote (it decodes only the index blocks it needs).
    let (r, _) = theirs();
    // SAFETY: as above, with the reference's functions.
    unsafe {
        let sc = (r.open)(url.as_ptr());
        assert!(!sc.is_null());
        check_edited(&r, sc, n, expect);
        (r.free)(sc);
    }
}

/// The frame of `n` special chunks after `open_read_append`'s edits: chunk `n / 2 - 1` (the
/// updated one) and the last hold 2.5, the rest the special value.
fn check_edited(f: &Fns, sc: Sc, n: i64, expect: impl Fn(f64) -> bool) {
    // SAFETY: `sc` is live.
    assert_eq!(unsafe { (*sc).nchunks }, n);
    assert_eq!(read(f, sc, n / 2 - 1), 2.5);
    assert_eq!(read(f, sc, n - 1), 2.5);
    for i in [0, 2, 3, n / 2 - 2, n / 2, n - 2] {
        assert!(expect(read(f, sc, i)), "chunk {i}");
    }
}

/// A frame of 100 million special chunks made by our `fill_special` costs kilobytes to make,
/// open, read and append to, not the 800 MB of its expanded index.
#[test]
fn our_fill_special_frame_of_100m_chunks_stays_small() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::scratch::dir("b2f-memory-");
    let path = dir.join("ours.b2frame");
    let path = path.to_str().unwrap();
    // A few kilobytes (the crash-safe commit's relocated copy of the intermediate state keeps
    // its 40-byte index instead of encoding the run again: that took 6.4 MB).
    let ((), peak) = peak_of(|| fill(path, 1, ours(), NCHUNKS));
    assert!(peak < 1 << 20, "fill_special: {peak} bytes of heap at peak");
    // The same bytes as an in-memory frame (`from_buffer` without a copy: with one, c-blosc2
    // and b2frame make a plain super-chunk holding every chunk), read and appended to.
    let mut bytes = std::fs::read(path).unwrap();
    let (o, _) = ours();
    let ((), peak) = peak_of(|| {
        // SAFETY: C calls on a super-chunk made from `bytes` (lent: they outlive it) and freed
        // here.
        unsafe {
            let sc = blosc2_schunk_from_buffer(bytes.as_mut_ptr(), bytes.len() as i64, false);
            assert!(!sc.is_null());
            assert_eq!(read(&o, sc, NCHUNKS / 2), 0.0);
            let v = 2.5f64.to_le_bytes();
            let n = (o.append_buffer)(sc, v.as_ptr() as *const c_void, 8);
            assert_eq!(n, NCHUNKS + 1);
            assert_eq!(read(&o, sc, NCHUNKS), 2.5);
            (o.free)(sc);
        }
    });
    assert!(peak < BOUND, "from_buffer: {peak} bytes of heap at peak");
    open_read_append(path, 1, NCHUNKS, BOUND, false);
    fill(path, 1, ours(), SMALL.0);
    open_read_append(path, 1, SMALL.0, SMALL.1, true);
}

/// The same for the frame c-blosc2 3.3.5's `fill_special` writes (NaN chunks).
#[test]
fn c_blosc2_fill_special_frame_of_100m_chunks_stays_small() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::scratch::dir("b2f-memory-");
    let path = dir.join("theirs.b2frame");
    let path = path.to_str().unwrap();
    fill(path, 2, theirs(), NCHUNKS);
    open_read_append(path, 2, NCHUNKS, BOUND, false);
    fill(path, 2, theirs(), SMALL.0);
    open_read_append(path, 2, SMALL.0, SMALL.1, true);
}
