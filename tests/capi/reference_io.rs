//! I/O backends and file locking against the real c-blosc2 3.3.5 (loaded with dlopen):
//! * a cframe written through our mmap backend is byte-identical to the one c-blosc2 writes
//!   through its mmap backend from the same chunks, and c-blosc2 opens and decodes it;
//! * the `.b2lock` protocol interoperates: a c-blosc2 handle holding `blosc2_schunk_lock`
//!   keeps our reader out until it unlocks (and vice versa), and mutations made by c-blosc2
//!   under the lock (growth, and same-length updates seen only through the generation counter)
//!   are picked up by our locked handle.
//!
//! Ordering is checked with flags set right before the unlock, never with timings.

#![allow(clippy::missing_transmute_annotations)]

use crate::common;

use b2frame::capi::globals::blosc2_init;
use b2frame::capi::schunk as ours;
use b2frame::capi::types::*;
use common::reference::{ref_compress, reference};
use common::scratch::Scratch;
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

type Sc = *mut blosc2_schunk;

/// The reference's super-chunk functions used here.
struct Ref {
    new: unsafe extern "C" fn(*mut blosc2_storage) -> Sc,
    open: unsafe extern "C" fn(*const c_char) -> Sc,
    open_udio: unsafe extern "C" fn(*const c_char, *const blosc2_io) -> Sc,
    free: unsafe extern "C" fn(Sc) -> c_int,
    append_chunk: unsafe extern "C" fn(Sc, *mut u8, bool) -> i64,
    update_chunk: unsafe extern "C" fn(Sc, i64, *mut u8, bool) -> i64,
    decompress_chunk: unsafe extern "C" fn(Sc, i64, *mut c_void, i32) -> c_int,
    lock: unsafe extern "C" fn(Sc) -> c_int,
    unlock: unsafe extern "C" fn(Sc) -> c_int,
}

fn r() -> Ref {
    let l = reference();
    // SAFETY: each symbol has exactly this C signature in c-blosc2 3.3.5's blosc2.h.
    unsafe {
        Ref {
            new: std::mem::transmute(l.sym("blosc2_schunk_new")),
            open: std::mem::transmute(l.sym("blosc2_schunk_open")),
            open_udio: std::mem::transmute(l.sym("blosc2_schunk_open_udio")),
            free: std::mem::transmute(l.sym("blosc2_schunk_free")),
            append_chunk: std::mem::transmute(l.sym("blosc2_schunk_append_chunk")),
            update_chunk: std::mem::transmute(l.sym("blosc2_schunk_update_chunk")),
            decompress_chunk: std::mem::transmute(l.sym("blosc2_schunk_decompress_chunk")),
            lock: std::mem::transmute(l.sym("blosc2_schunk_lock")),
            unlock: std::mem::transmute(l.sym("blosc2_schunk_unlock")),
        }
    }
}

/// A fresh path `name` in a directory of its own (tests run in parallel), removed when the
/// returned guard is dropped after the test passes (see `common::scratch`).
fn scratch(name: &str) -> (Scratch, PathBuf) {
    let d = common::scratch::dir(&format!("b2frame-io-ref-{name}-"));
    let p = d.join(name);
    (d, p)
}

fn cstring(p: &std::path::Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

const ITEMS: usize = 3000;

fn data(tag: u32) -> Vec<u8> {
    (0..ITEMS as u32)
        .flat_map(|i| (tag.wrapping_mul(7919) ^ i).to_le_bytes())
        .collect()
}

fn cparams4(clevel: u8) -> blosc2_cparams {
    blosc2_cparams {
        typesize: 4,
        clevel,
        ..BLOSC2_CPARAMS_DEFAULTS
    }
}

/// Chunks compressed by the reference, so both libraries store identical chunk bytes.
fn chunks(n: u32, clevel: u8) -> Vec<Vec<u8>> {
    (0..n)
        .map(|t| ref_compress(cparams4(clevel), &data(t)))
        .collect()
}

fn decompress(
    f: unsafe extern "C" fn(Sc, i64, *mut c_void, i32) -> c_int,
    sc: Sc,
    i: i64,
) -> Vec<u8> {
    let mut out = vec![0u8; ITEMS * 4];
    // SAFETY: live schunk; `out` holds the declared size.
    let n = unsafe { f(sc, i, out.as_mut_ptr() as *mut c_void, out.len() as i32) };
    assert_eq!(n, (ITEMS * 4) as i32, "decompress chunk {i}");
    out
}

fn our_decompress(sc: Sc, i: i64) -> Vec<u8> {
    decompress(ours::blosc2_schunk_decompress_chunk, sc, i)
}

/// Writes `chunks` into a new cframe at `path` through `new`/`append` with `io`.
///
/// # Safety
/// `io` NULL or valid for the library behind `new`.
unsafe fn write_frame(
    new: unsafe extern "C" fn(*mut blosc2_storage) -> Sc,
    append: unsafe extern "C" fn(Sc, *mut u8, bool) -> i64,
    free: unsafe extern "C" fn(Sc) -> c_int,
    path: &std::path::Path,
    io: *mut blosc2_io,
    chunks: &[Vec<u8>],
) {
    let url = cstring(path);
    let mut cp = cparams4(5);
    let mut st = blosc2_storage {
        contiguous: true,
        urlpath: url.as_ptr() as *mut c_char,
        cparams: &mut cp,
        dparams: std::ptr::null_mut(),
        io,
    };
    // SAFETY: valid storage; the chunks are copied (copy = true).
    unsafe {
        let sc = new(&mut st);
        assert!(!sc.is_null(), "schunk_new({})", path.display());
        for (i, c) in chunks.iter().enumerate() {
            let mut c = c.clone();
            assert_eq!(append(sc, c.as_mut_ptr(), true), i as i64 + 1);
        }
        assert_eq!(free(sc), 0);
    }
}

#[test]
fn mmap_frames_are_byte_identical_to_the_reference_and_open_there() {
    blosc2_init();
    let rf = r();
    let cs = chunks(6, 5);
    let (_mine_dir, mine) = scratch("ours_mmap.b2frame");
    let (_theirs_dir, theirs) = scratch("ref_mmap.b2frame");
    let mode = CString::new("w+").unwrap();
    let name = CString::new("filesystem_mmap").unwrap();
    for initial in [1usize, 1 << 30] {
        let _ = std::fs::remove_file(&mine);
        let _ = std::fs::remove_file(&theirs);
        let mut p_ours = BLOSC2_STDIO_MMAP_DEFAULTS;
        p_ours.mode = mode.as_ptr();
        p_ours.initial_mapping_size = initial;
        let mut p_ref = p_ours;
        let mut io_ours = blosc2_io {
            id: BLOSC2_IO_FILESYSTEM_MMAP as u8,
            name: name.as_ptr(),
            params: &mut p_ours as *mut _ as *mut c_void,
        };
        let mut io_ref = blosc2_io {
            params: &mut p_ref as *mut _ as *mut c_void,
            ..io_ours
        };
        // SAFETY: both io structs and their params outlive the schunks (freed inside).
        unsafe {
            write_frame(
                ours::blosc2_schunk_new,
                ours::blosc2_schunk_append_chunk,
                ours::blosc2_schunk_free,
                &mine,
                &mut io_ours,
                &cs,
            );
            write_frame(rf.new, rf.append_chunk, rf.free, &theirs, &mut io_ref, &cs);
        }
        let a = common::without_fingerprint(&std::fs::read(&mine).unwrap());
        let b = std::fs::read(&theirs).unwrap();
        assert_eq!(a.len(), b.len(), "initial mapping {initial}");
        assert!(a == b, "frames differ (initial mapping {initial})");

        // c-blosc2 reads our mmap-written frame.
        let url = cstring(&mine);
        // SAFETY: a valid path; the schunk is freed below.
        unsafe {
            let sc = (rf.open)(url.as_ptr());
            assert!(!sc.is_null());
            assert_eq!((*sc).nchunks, cs.len() as i64);
            for t in 0..cs.len() {
                assert_eq!(
                    decompress(rf.decompress_chunk, sc, t as i64),
                    data(t as u32)
                );
            }
            (rf.free)(sc);
        }
    }
}

/// Runs `read` on another thread while `hold` is locked by `lock`/`unlock`; returns whether
/// the read completed only after the unlock started.
fn blocked_until_unlock(
    lock: impl FnOnce(),
    unlock: impl FnOnce(),
    read: impl FnOnce() + Send + 'static,
) -> bool {
    lock();
    let unlocked = Arc::new(AtomicBool::new(false));
    let u2 = unlocked.clone();
    let t = std::thread::spawn(move || {
        read();
        u2.load(Ordering::SeqCst)
    });
    for _ in 0..1000 {
        std::thread::yield_now();
    }
    unlocked.store(true, Ordering::SeqCst);
    unlock();
    t.join().unwrap()
}

struct SendSc(Sc);
// SAFETY: each schunk is used by one thread at a time (the test hands it over).
unsafe impl Send for SendSc {}

#[test]
fn the_b2lock_protocol_interoperates_with_the_reference() {
    blosc2_init();
    let rf = r();
    let (_dir, path) = scratch("lock_interop.b2frame");
    let url = cstring(&path);
    let cs = chunks(3, 0); // memcpyed: every chunk has the same size
    let mut params = blosc2_stdio_params { locking: true };
    let mut io = blosc2_io {
        id: BLOSC2_IO_FILESYSTEM as u8,
        name: c"filesystem".as_ptr(),
        params: &mut params as *mut _ as *mut c_void,
    };
    // SAFETY: io/params outlive every schunk below; all schunks are freed at the end.
    unsafe {
        write_frame(
            ours::blosc2_schunk_new,
            ours::blosc2_schunk_append_chunk,
            ours::blosc2_schunk_free,
            &path,
            &mut io,
            &cs[..2],
        );
        let theirs = (rf.open_udio)(url.as_ptr(), &io);
        assert!(!theirs.is_null());
        let mine = b2frame::capi::schunk::blosc2_schunk_open_udio(url.as_ptr(), &io);
        assert!(!mine.is_null());
        assert_eq!((*mine).nchunks, 2);

        // c-blosc2 holds the lock: our reader waits for its unlock.
        let m = SendSc(mine);
        let th = SendSc(theirs);
        let ok = blocked_until_unlock(
            || assert_eq!((rf.lock)(th.0), 0),
            || assert_eq!((rf.unlock)(th.0), 0),
            move || {
                let m = m;
                assert_eq!(our_decompress(m.0, 0), data(0));
            },
        );
        assert!(ok, "our reader got in while c-blosc2 held the lock");

        // We hold the lock: c-blosc2's reader waits for ours.
        let m = SendSc(mine);
        let th = SendSc(theirs);
        let dec = rf.decompress_chunk;
        let ok = blocked_until_unlock(
            || assert_eq!(ours::blosc2_schunk_lock(m.0), 0),
            || assert_eq!(ours::blosc2_schunk_unlock(m.0), 0),
            move || {
                let th = th;
                assert_eq!(decompress(dec, th.0, 1), data(1));
            },
        );
        assert!(ok, "c-blosc2's reader got in while we held the lock");

        // Growth made by c-blosc2 is seen by our handle, with change_tick moving.
        let tick = (*mine).change_tick;
        let mut c = cs[2].clone();
        assert_eq!((rf.append_chunk)(theirs, c.as_mut_ptr(), true), 3);
        assert_eq!(our_decompress(mine, 2), data(2));
        assert_eq!((*mine).nchunks, 3);
        assert!((*mine).change_tick > tick);

        // A same-length update by c-blosc2 is seen through the generation counter.
        let len = std::fs::metadata(&path).unwrap().len();
        let mut upd = ref_compress(cparams4(0), &data(77));
        assert_eq!(upd.len(), cs[0].len());
        let tick = (*mine).change_tick;
        assert_eq!((rf.update_chunk)(theirs, 0, upd.as_mut_ptr(), true), 3);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
        assert_eq!(our_decompress(mine, 0), data(77));
        assert!((*mine).change_tick > tick);

        // And the other way round: our mutation is seen by c-blosc2.
        let mut upd = ref_compress(cparams4(0), &data(78));
        assert_eq!(
            ours::blosc2_schunk_update_chunk(mine, 1, upd.as_mut_ptr(), true),
            3
        );
        assert_eq!(decompress(rf.decompress_chunk, theirs, 1), data(78));

        assert_eq!((rf.free)(theirs), 0);
        assert_eq!(ours::blosc2_schunk_free(mine), 0);
    }
    let mut side = path.clone().into_os_string();
    side.push(".b2lock");
    assert!(std::path::Path::new(&side).exists());
}
