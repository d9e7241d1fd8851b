//! `blosc2_schunk_get_chunk` sets `schunk->current_nchunk` (as c-blosc2 does on every chunk
//! access) when the schunk's `dctx` is free, and leaves it alone when the calling thread is
//! decoding with that `dctx` below (a postfilter calling back into its own super-chunk): the
//! postfilter's chunk number must not change under it. In-memory chunks are handed out as
//! they are stored (no copy), file ones as a copy; both must be the chunk appended.

use b2frame::capi::globals::blosc2_init;
use b2frame::capi::schunk::*;
use b2frame::capi::types::*;
use std::ffi::{c_int, c_void, CString};
use std::sync::atomic::{AtomicI64, AtomicPtr, AtomicUsize, Ordering};

use crate::common;

const ITEMS: usize = 8 * 1024;
const CHUNK_BYTES: usize = ITEMS * 4;
const NCHUNKS: usize = 5;

extern "C" {
    #[link_name = "free"]
    fn libc_free(p: *mut c_void);
}

fn chunk_data(i: usize) -> Vec<u8> {
    (0..ITEMS)
        .flat_map(|j| ((j * 31 + i * 7) as i32 % 1000).to_le_bytes())
        .collect()
}

/// What the postfilter sees and checks.
struct Probe {
    sc: AtomicPtr<blosc2_schunk>,
    calls: AtomicUsize,
    /// Nested `get_chunk` calls that failed or changed `current_nchunk`.
    bad: AtomicUsize,
    /// cbytes of the chunk the nested `get_chunk` returned last.
    nested_cbytes: AtomicI64,
}

/// Copies the block, after a nested `get_chunk` of another chunk of the same super-chunk;
/// `current_nchunk` must still be this decode's chunk afterwards.
unsafe extern "C" fn nested_get(p: *mut blosc2_postfilter_params) -> c_int {
    // SAFETY: the library passes a valid parameter block; `user_data` is our `Probe`, `sc`
    // the live super-chunk this decode runs for.
    unsafe {
        let p = &mut *p;
        let probe = &*(p.user_data as *const Probe);
        probe.calls.fetch_add(1, Ordering::Relaxed);
        let sc = probe.sc.load(Ordering::Acquire);
        let other = (p.nchunk + 1) % NCHUNKS as i64;
        let (mut c, mut nf) = (std::ptr::null_mut(), false);
        let rc = blosc2_schunk_get_chunk(sc, other, &mut c, &mut nf);
        if rc <= 0 || c.is_null() || (*sc).current_nchunk != p.nchunk {
            probe.bad.fetch_add(1, Ordering::Relaxed);
        }
        probe.nested_cbytes.store(i64::from(rc), Ordering::Relaxed);
        if nf {
            libc_free(c as *mut c_void);
        }
        std::ptr::copy_nonoverlapping(p.input, p.output, p.size as usize);
    }
    0
}

fn run(contiguous: bool, file: bool) {
    blosc2_init();
    // Removed when the case passes (see `common::scratch`).
    let dir = common::scratch::dir(&format!("b2frame-get-chunk-nchunk-{contiguous}-{file}-"));
    let path = dir.join("f.b2frame");
    let url = CString::new(path.to_str().unwrap()).unwrap();
    let probe = Box::new(Probe {
        sc: AtomicPtr::new(std::ptr::null_mut()),
        calls: AtomicUsize::new(0),
        bad: AtomicUsize::new(0),
        nested_cbytes: AtomicI64::new(0),
    });
    let mut post = blosc2_postfilter_params {
        user_data: &*probe as *const Probe as *mut c_void,
        ..Default::default()
    };
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.nthreads = 1;
    let mut dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.nthreads = 1;
    dp.postfilter = Some(nested_get);
    dp.postparams = &mut post;
    let mut st = common::storage(contiguous, file.then_some(url.as_c_str()), &mut cp, &mut dp);
    // SAFETY: a valid storage description whose pointers outlive the call.
    let sc = unsafe { blosc2_schunk_new(&mut st) };
    assert!(!sc.is_null());
    let mut cbytes = Vec::new();
    for i in 0..NCHUNKS {
        let d = chunk_data(i);
        // SAFETY: live schunk, `d` readable for its length.
        let n =
            unsafe { blosc2_schunk_append_buffer(sc, d.as_ptr() as *const c_void, d.len() as i32) };
        assert_eq!(n, i as i64 + 1);
    }
    let tag = format!("contiguous={contiguous} file={file}");
    for i in (0..NCHUNKS).rev() {
        let (mut c, mut nf) = (std::ptr::null_mut(), false);
        // SAFETY: live schunk, valid out-pointers.
        let rc = unsafe { blosc2_schunk_get_chunk(sc, i as i64, &mut c, &mut nf) };
        assert!(rc > 0 && !c.is_null(), "{tag}: chunk {i}: {rc}");
        // SAFETY: the C struct is not used by another thread.
        assert_eq!(unsafe { (*sc).current_nchunk }, i as i64, "{tag}");
        assert_eq!(
            nf, file,
            "{tag}: in-memory chunks are lent, file ones copied"
        );
        let mut out = vec![0u8; CHUNK_BYTES];
        // SAFETY: `c` holds the chunk (`rc` bytes); `out` has room for its nbytes.
        let n = unsafe {
            let n = b2frame::capi::blosc1::blosc2_decompress(
                c as *const c_void,
                rc,
                out.as_mut_ptr() as *mut c_void,
                CHUNK_BYTES as i32,
            );
            if nf {
                libc_free(c as *mut c_void);
            }
            n
        };
        assert_eq!(n, CHUNK_BYTES as i32, "{tag}");
        assert!(out == chunk_data(i), "{tag}: chunk {i}");
        cbytes.push(rc);
    }
    cbytes.reverse();
    probe.sc.store(sc, Ordering::Release);
    for i in 0..NCHUNKS {
        // SAFETY: live schunk.
        let (rc, out) = unsafe { common::decompress_chunk(sc, i, CHUNK_BYTES) };
        assert_eq!(rc, CHUNK_BYTES as c_int, "{tag}: chunk {i}");
        assert!(out == chunk_data(i), "{tag}: chunk {i}");
        assert_eq!(
            probe.nested_cbytes.load(Ordering::Relaxed),
            i64::from(cbytes[(i + 1) % NCHUNKS]),
            "{tag}: nested get_chunk of chunk {}",
            (i + 1) % NCHUNKS
        );
    }
    assert!(probe.calls.load(Ordering::Relaxed) >= NCHUNKS, "{tag}");
    assert_eq!(probe.bad.load(Ordering::Relaxed), 0, "{tag}");
    // SAFETY: no one uses it any more.
    unsafe { blosc2_schunk_free(sc) };
}

#[test]
fn get_chunk_sets_current_nchunk_unless_a_postfilter_below_owns_it() {
    run(false, false);
    run(true, false);
    run(true, true);
    run(false, true);
}
