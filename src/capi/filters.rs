//! `blosc2_shuffle`, `blosc2_unshuffle`, `blosc2_bitshuffle`, `blosc2_bitunshuffle`: the filter
//! primitives of c-blosc2's public API, with its argument checks and return values.
//!
//! Checked against c-blosc2 3.3.5 with small experiments:
//! * shuffle, unshuffle, bitshuffle: `typesize` outside 1..=256 or `blocksize < 0` →
//!   `BLOSC2_ERROR_INVALID_PARAM`; otherwise they return `blocksize`. (The reference's
//!   bitshuffle divides by `typesize` before checking it and dies of SIGFPE on 0; we return the
//!   error.)
//! * bitunshuffle checks nothing in the reference: any `typesize > 0` works (257 and up too,
//!   same bytes as ours), `blocksize < 0` returns -1 (`BLOSC2_ERROR_FAILURE`), and `typesize <= 0`
//!   crashes it; we return `BLOSC2_ERROR_INVALID_PARAM` for that.
//! * NULL `src`/`dest` with `blocksize > 0` crash the reference; we return
//!   `BLOSC2_ERROR_NULL_POINTER`. Overlapping `src`/`dest` are handled through a copy.

use super::boundary::{guard, slice, slice_mut};
use crate::error::{Error, Result};
use crate::filters;
use std::ffi::c_void;

type Transform = fn(usize, &[u8], &mut [u8]);

/// Runs `f(typesize, src, dest)` over `blocksize` bytes of raw C buffers.
///
/// # Safety
/// `src` must be readable and `dest` writable for `blocksize` bytes (or NULL).
unsafe fn run(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
    f: Transform,
) -> Result<i32> {
    let len = blocksize as usize;
    if len == 0 {
        return Ok(0);
    }
    let (s, d) = (src as *const u8, dest as *mut u8);
    if s.is_null() || d.is_null() {
        return Err(Error::NullPointer);
    }
    let overlap = (s as usize) < (d as usize).wrapping_add(len)
        && (d as usize) < (s as usize).wrapping_add(len);
    if overlap {
        // SAFETY: by the caller's contract `src` is readable for `len` bytes; the copy ends the
        // borrow before `dest` is borrowed mutably.
        let copy = unsafe { slice(s, len)? }.to_vec();
        // SAFETY: by the caller's contract `dest` is writable for `len` bytes; no other live
        // reference to it exists (the source was copied).
        let out = unsafe { slice_mut(d, len)? };
        f(typesize as usize, &copy, out);
    } else {
        // SAFETY: by the caller's contract both ranges are valid for `len` bytes, and they do
        // not overlap (checked above).
        let (input, out) = unsafe { (slice(s, len)?, slice_mut(d, len)?) };
        f(typesize as usize, input, out);
    }
    Ok(blocksize)
}

/// The reference's check for shuffle, unshuffle and bitshuffle.
fn check(typesize: i32, blocksize: i32) -> Result<()> {
    if !(1..=256).contains(&typesize) || blocksize < 0 {
        return Err(Error::InvalidParam);
    }
    Ok(())
}

/// The body of shuffle, unshuffle and bitshuffle: [`check`], then [`run`] with `f`.
///
/// # Safety
/// As for [`run`].
unsafe fn checked_run(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
    f: Transform,
) -> i32 {
    guard(|| {
        check(typesize, blocksize)?;
        // SAFETY: forwarded caller contract.
        unsafe { run(typesize, blocksize, src, dest, f) }
    })
}

/// Byte-shuffles `blocksize` bytes of `src` into `dest`; returns `blocksize` or a negative code.
///
/// # Safety
/// `src` readable and `dest` writable for `blocksize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_shuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    // SAFETY: forwarded caller contract.
    unsafe { checked_run(typesize, blocksize, src, dest, filters::shuffle) }
}

/// Inverse of [`blosc2_shuffle`].
///
/// # Safety
/// As [`blosc2_shuffle`].
#[no_mangle]
pub unsafe extern "C" fn blosc2_unshuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    // SAFETY: forwarded caller contract.
    unsafe { checked_run(typesize, blocksize, src, dest, filters::unshuffle) }
}

/// Bit-shuffles `blocksize` bytes of `src` into `dest`; returns `blocksize` or a negative code.
///
/// # Safety
/// As [`blosc2_shuffle`].
#[no_mangle]
pub unsafe extern "C" fn blosc2_bitshuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    // SAFETY: forwarded caller contract.
    unsafe { checked_run(typesize, blocksize, src, dest, filters::bitshuffle) }
}

/// Inverse of [`blosc2_bitshuffle`] (current format); see the module notes for its checks.
///
/// # Safety
/// As [`blosc2_shuffle`].
#[no_mangle]
pub unsafe extern "C" fn blosc2_bitunshuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    guard(|| {
        if typesize < 1 {
            return Err(Error::InvalidParam);
        }
        if blocksize < 0 {
            return Err(Error::Failure);
        }
        // SAFETY: forwarded caller contract.
        unsafe { run(typesize, blocksize, src, dest, filters::bitunshuffle) }
    })
}
