//! Contexts and the chunk-level C API: `blosc2_create_cctx/dctx`, the `cbuffer_*` inspectors
//! and the special-value chunk constructors. (Compressing through a context,
//! `blosc2_*_ctx`, lives in [`super::codec`]; the global Blosc1-style API in
//! [`super::blosc1`].)
//!
//! A `blosc2_context*` is a boxed [`ContextCell`] around a `Context`: the safe [`Compressor`] or [`Decompressor`], the
//! parameters as the caller sees them through `blosc2_ctx_get_cparams/dparams` (after the
//! `BLOSC_*` environment overrides c-blosc2 applies at creation), and `CHooks`, the bridge
//! that lets the chunk engine call user codecs, user filters and the pre/postfilter callbacks.
//!
//! Deliberate differences from the reference, all where it would crash or write garbage: NULL
//! pointers give `BLOSC2_ERROR_NULL_POINTER` (or NULL), a zero typesize gives
//! `INVALID_PARAM`, a negative source size is `INVALID_PARAM` (c-blosc2 writes a chunk with
//! nbytes -1) and a negative destination size counts as 0.

use super::boundary::{caught, guard, slice, slice_mut};
use super::globals::ThreadsCallback;
use super::registry;
use super::types::*;
use crate::chunk::header::{self, ChunkHeader, EXTENDED_HEADER_LEN, MIN_HEADER_LEN};
use crate::chunk::lazy::LazySource;
use crate::chunk::{
    special, CParams, Compressor, DParams, Decompressor, Hooks, PostfilterArgs, PrefilterArgs,
};
use crate::env;
use crate::error::{Error, Result};
use std::cell::UnsafeCell;
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

mod context;
mod hooks;
mod inspect;
mod special_value;

pub use context::*;
pub(crate) use hooks::*;
pub use inspect::*;
pub use special_value::*;

// ---------------------------------------------------------------------------------------------
// Buffers from C arguments
// ---------------------------------------------------------------------------------------------

/// `len` as a buffer length: c-blosc2 sizes are `int32_t`; negative ones count as empty.
pub(crate) fn len_of(len: i32) -> usize {
    usize::try_from(len).unwrap_or(0)
}

/// Borrows a C input buffer of `len` bytes (negative = 0).
///
/// # Safety
/// `p` must be valid for `len` readable bytes (or NULL / `len <= 0`).
pub(crate) unsafe fn input<'a>(p: *const c_void, len: i32) -> Result<&'a [u8]> {
    // SAFETY: forwarded contract.
    unsafe { slice(p as *const u8, len_of(len)) }
}

/// Borrows a C output buffer of `len` bytes (negative = 0).
///
/// # Safety
/// `p` must be valid for `len` writable bytes (or NULL / `len <= 0`).
pub(crate) unsafe fn output<'a>(p: *mut c_void, len: i32) -> Result<&'a mut [u8]> {
    // SAFETY: forwarded contract.
    unsafe { slice_mut(p as *mut u8, len_of(len)) }
}

/// Borrows a whole chunk whose length the caller did not give (Blosc1 API): the header is read
/// first (16 bytes, then 32 if extended) and the chunk is `cbytes` long.
///
/// # Safety
/// `p` must point to a complete chunk.
pub(crate) unsafe fn whole_chunk<'a>(p: *const c_void) -> Result<&'a [u8]> {
    // SAFETY: a chunk has at least a 16-byte header by this function's contract.
    let head = unsafe { slice(p as *const u8, MIN_HEADER_LEN) }?;
    let mut need = MIN_HEADER_LEN;
    if head[2] & header::flags::EXTENDED == header::flags::EXTENDED {
        need = EXTENDED_HEADER_LEN;
    }
    let cbytes = i32::from_le_bytes([head[12], head[13], head[14], head[15]]);
    let len = len_of(cbytes).max(need);
    // SAFETY: the chunk is `cbytes` long by this function's contract (the header says so).
    unsafe { slice(p as *const u8, len) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn cctx_applies_the_environment() {
        let e = env(&[
            ("BLOSC_CLEVEL", "9"),
            ("BLOSC_COMPRESSOR", "zstd"),
            ("BLOSC_TYPESIZE", "2"),
            ("BLOSC_SHUFFLE", "BITSHUFFLE"),
            ("BLOSC_DELTA", "1"),
            ("BLOSC_BLOCKSIZE", "4096"),
            ("BLOSC_NTHREADS", "2"),
            ("BLOSC_SPLITMODE", "NEVER"),
        ]);
        let c = create_cctx(&BLOSC2_CPARAMS_DEFAULTS, e).unwrap();
        assert_eq!(c.cparams.clevel, 9);
        assert_eq!(c.cparams.compcode, 5);
        assert_eq!(c.cparams.typesize, 2);
        assert_eq!(c.cparams.filters, [0, 0, 0, 0, 3, 2]);
        assert_eq!(c.cparams.blocksize, 4096);
        assert_eq!(c.cparams.nthreads, 2);
        assert_eq!(c.cparams.splitmode, 2);
        assert!(c.deferred.is_none());
        // Unrecognised values are ignored; SHUFFLE needs a typesize > 1.
        let e = env(&[("BLOSC_SHUFFLE", "x"), ("BLOSC_CLEVEL", "-3")]);
        let c = create_cctx(&BLOSC2_CPARAMS_DEFAULTS, e).unwrap();
        assert_eq!(c.cparams.clevel, 5);
        assert_eq!(c.cparams.filters, [0, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn cctx_refusals_and_deferred_errors() {
        let mut cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.filters[0] = 7;
        assert!(create_cctx(&cp, env(&[])).is_none());
        cp.filters[0] = 140;
        assert!(create_cctx(&cp, env(&[])).is_none());
        cp.filters[0] = 35;
        assert!(create_cctx(&cp, env(&[])).is_some());
        let mut c = create_cctx(
            &BLOSC2_CPARAMS_DEFAULTS,
            env(&[("BLOSC_COMPRESSOR", "nope")]),
        )
        .unwrap();
        let mut dst = [0u8; 200];
        assert_eq!(c.compress(&[1u8; 100], &mut dst), Err(Error::CodecSupport));
        // A thread count <= 0 runs serially, as in c-blosc2.
        let mut cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.nthreads = 0;
        let mut c = create_cctx(&cp, env(&[])).unwrap();
        assert_eq!(c.cparams.nthreads, 0);
        let n = c.compress(&[1u8; 100], &mut dst).unwrap();
        let mut d = create_dctx(
            &blosc2_dparams {
                nthreads: -1,
                ..BLOSC2_DPARAMS_DEFAULTS
            },
            env(&[]),
        )
        .unwrap();
        let mut out = [0u8; 100];
        assert_eq!(d.decompress(&dst[..n], &mut out), Ok(100));
        assert_eq!(out, [1u8; 100]);
        // The compressor refuses decompression and vice versa.
        assert_eq!(c.decompress(&dst[..n], &mut out), Err(Error::InvalidParam));
        assert_eq!(d.compress(&out, &mut dst), Err(Error::InvalidParam));
    }

    static CALLS: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn serial(
        data: *mut c_void,
        dojob: Option<unsafe extern "C" fn(*mut c_void)>,
        numjobs: c_int,
        elsize: usize,
        jobdata: *mut c_void,
    ) {
        assert_eq!(data as usize, 0x1234);
        CALLS.fetch_add(1, Ordering::SeqCst);
        for i in 0..numjobs as usize {
            // SAFETY: the job records are `elsize` bytes apart, as the contract says.
            unsafe { dojob.unwrap()((jobdata as *mut u8).add(i * elsize) as *mut c_void) };
        }
    }

    #[test]
    fn threads_callback_runs_every_job_once() {
        let cb = ThreadsCallback {
            func: serial,
            data: 0x1234 as *mut c_void,
        };
        let hits: Vec<AtomicUsize> = (0..7).map(|_| AtomicUsize::new(0)).collect();
        crate::pool::Runner::run(&cb, 7, &|i| {
            hits[i].fetch_add(1, Ordering::SeqCst);
        });
        assert!(hits.iter().all(|h| h.load(Ordering::SeqCst) == 1));
        assert_eq!(CALLS.load(Ordering::SeqCst), 1);
    }
}
