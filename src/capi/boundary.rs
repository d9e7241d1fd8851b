//! The FFI boundary: the one place where C calls enter the safe core.
//!
//! Conventions (also in docs/c-api/boundary.md):
//! * Every `extern "C"` function body runs inside one of the `guard_*` helpers, which catch any
//!   panic so that it never unwinds into C: a panic becomes `BLOSC2_ERROR_FAILURE`, NULL or a
//!   no-op, like any other error.
//! * Errors from the core ([`Error`]) become their negative `BLOSC2_ERROR_*` code.
//! * Buffers handed to callers who will `free()` them are allocated with libc `malloc`
//!   ([`malloc_copy`], [`malloc_zeroed`]), never by Rust's allocator.
//! * Raw pointers are turned into references/slices only here (see [`slice`](fn@slice), [`slice_mut`],
//!   [`cstr`]), after a NULL check.

use crate::error::{Error, Result};
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`, mapping `Err(e)` to `e.code()` and a panic to `BLOSC2_ERROR_FAILURE`.
pub fn guard_int<F: FnOnce() -> Result<i32>>(f: F) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => e.code(),
        Err(_) => Error::Failure.code(),
    }
}

/// Like [`guard_int`] for functions returning `int64_t`.
pub fn guard_i64<F: FnOnce() -> Result<i64>>(f: F) -> i64 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => e.code() as i64,
        Err(_) => Error::Failure.code() as i64,
    }
}

/// Runs `f` for a function returning a pointer: errors and panics become NULL.
pub fn guard_ptr<T, F: FnOnce() -> Result<*mut T>>(f: F) -> *mut T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(p)) => p,
        _ => std::ptr::null_mut(),
    }
}

/// Runs `f` for a function returning a value of a plain type: a panic yields `fallback`.
pub fn guard_or<T, F: FnOnce() -> T>(fallback: T, f: F) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// Runs `f` for a `void` function; a panic is swallowed.
pub fn guard_void<F: FnOnce()>(f: F) {
    let _ = catch_unwind(AssertUnwindSafe(f));
}

/// Fails with `NullPointer` when `p` is NULL.
pub fn non_null<T>(p: *const T) -> Result<*const T> {
    if p.is_null() {
        Err(Error::NullPointer)
    } else {
        Ok(p)
    }
}

/// Borrows `len` bytes at `p` (NULL is accepted only for `len == 0`).
///
/// # Safety
/// `p` must point to `len` readable bytes that stay valid and unaliased by writers for `'a`.
pub unsafe fn slice<'a>(p: *const u8, len: usize) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: non-null and, by this function's contract, valid for `len` bytes for 'a.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// Mutably borrows `len` bytes at `p` (NULL is accepted only for `len == 0`).
///
/// # Safety
/// `p` must point to `len` writable bytes, not otherwise accessed during `'a`.
pub unsafe fn slice_mut<'a>(p: *mut u8, len: usize) -> Result<&'a mut [u8]> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: non-null and, by this function's contract, valid and exclusive for `len` bytes.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

/// Reads a NUL-terminated C string as UTF-8 (lossy conversions are rejected as `InvalidParam`).
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string valid for `'a`.
pub unsafe fn cstr<'a>(p: *const c_char) -> Result<&'a str> {
    if p.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: non-null and NUL-terminated by this function's contract.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map_err(|_| Error::InvalidParam)
}

/// Copies `data` into a fresh libc `malloc` buffer the caller releases with `free()`.
/// Returns NULL only if allocation fails (a zero-length copy still gets a 1-byte allocation).
pub fn malloc_copy(data: &[u8]) -> *mut u8 {
    // SAFETY: malloc with a non-zero size; the result is checked before writing.
    let p = unsafe { libc::malloc(data.len().max(1)) } as *mut u8;
    if !p.is_null() {
        // SAFETY: `p` has room for `data.len()` bytes and cannot overlap `data`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
    }
    p
}

/// A zero-filled libc `calloc` buffer of `len` bytes (at least 1), for the caller to `free()`.
pub fn malloc_zeroed(len: usize) -> *mut u8 {
    // SAFETY: calloc with non-zero arguments; NULL is passed on to the caller.
    unsafe { libc::calloc(len.max(1), 1) as *mut u8 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_failure_codes() {
        assert_eq!(guard_int(|| panic!("boom")), -1);
        assert_eq!(guard_i64(|| panic!("boom")), -1);
        assert!(guard_ptr::<u8, _>(|| panic!("boom")).is_null());
        assert_eq!(guard_or(7, || -> i32 { panic!("boom") }), 7);
    }

    #[test]
    fn errors_become_their_codes() {
        assert_eq!(guard_int(|| Err(Error::InvalidParam)), -12);
        assert_eq!(guard_int(|| Ok(5)), 5);
    }

    #[test]
    fn null_slices_are_rejected_unless_empty() {
        // SAFETY: NULL with length 0 is the documented empty case; NULL with length 1 must fail.
        unsafe {
            assert!(slice(std::ptr::null(), 0).unwrap().is_empty());
            assert_eq!(slice(std::ptr::null(), 1), Err(Error::NullPointer));
        }
    }

    #[test]
    fn malloc_copy_copies() {
        let p = malloc_copy(b"abc");
        assert!(!p.is_null());
        // SAFETY: p holds 3 bytes written by malloc_copy; freed right after.
        unsafe {
            assert_eq!(std::slice::from_raw_parts(p, 3), b"abc");
            libc::free(p as *mut libc::c_void);
        }
    }
}
