//! The FFI boundary: the one place where C calls enter the safe core.
//!
//! Conventions (also in docs/c-api/boundary.md):
//! * Every `extern "C"` function body runs inside [`guard`] (or [`caught`]), which catches any
//!   panic so that it never unwinds into C: a panic is `Error::Failure`, and an error becomes
//!   what the function's return type says ([`CReturn`]): a negative `BLOSC2_ERROR_*` code,
//!   NULL or nothing.
//! * Errors from the core ([`Error`]) become their negative `BLOSC2_ERROR_*` code.
//! * Buffers handed to callers who will `free()` them are allocated with libc `malloc`
//!   ([`malloc_copy`], [`malloc_zeroed`]), never by Rust's allocator.
//! * Raw pointers are turned into references/slices only here (see [`slice`](fn@slice), [`slice_mut`],
//!   [`cstr`]), after a NULL check.

use crate::error::{Error, Result};
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What an `extern "C"` function returns when its body fails, derived from its return type:
/// the error's negative `BLOSC2_ERROR_*` code for an integer, NULL for a pointer, nothing for
/// `void`. One scheme for every entry point: a panic is [`Error::Failure`].
pub trait CReturn {
    /// The value returned for `e`.
    fn from_error(e: Error) -> Self;
}

impl CReturn for i32 {
    fn from_error(e: Error) -> i32 {
        e.code()
    }
}

impl CReturn for i64 {
    fn from_error(e: Error) -> i64 {
        i64::from(e.code())
    }
}

impl CReturn for i16 {
    /// Every `BLOSC2_ERROR_*` code fits in an `int16_t` (they run from -1 to -37).
    fn from_error(e: Error) -> i16 {
        e.code() as i16
    }
}

impl<T> CReturn for *mut T {
    fn from_error(_: Error) -> *mut T {
        std::ptr::null_mut()
    }
}

impl<T> CReturn for *const T {
    fn from_error(_: Error) -> *const T {
        std::ptr::null()
    }
}

impl CReturn for () {
    fn from_error(_: Error) {}
}

/// Runs the body of an `extern "C"` function: `Ok(v)` is returned as it is, an error or a
/// panic (which never unwinds into C) as [`CReturn::from_error`].
pub fn guard<R: CReturn>(f: impl FnOnce() -> Result<R>) -> R {
    caught(f).unwrap_or_else(R::from_error)
}

/// Runs `f` with a panic turned into `Err(Error::Failure)`: [`guard`]'s scheme for the entry
/// points that report their outcome through out-pointers after the body.
pub fn caught<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(Err(Error::Failure))
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
        assert_eq!(guard::<i32>(|| panic!("boom")), -1);
        assert_eq!(guard::<i64>(|| panic!("boom")), -1);
        assert_eq!(guard::<i16>(|| panic!("boom")), -1);
        assert!(guard::<*mut u8>(|| panic!("boom")).is_null());
        assert!(guard::<*const u8>(|| panic!("boom")).is_null());
        guard::<()>(|| panic!("boom"));
        assert_eq!(caught::<u8>(|| panic!("boom")), Err(Error::Failure));
    }

    #[test]
    fn errors_become_their_codes() {
        assert_eq!(guard::<i32>(|| Err(Error::InvalidParam)), -12);
        assert_eq!(guard::<i64>(|| Err(Error::InvalidParam)), -12);
        assert_eq!(guard::<i16>(|| Err(Error::NullPointer)), -32);
        assert_eq!(guard(|| Ok(5i32)), 5);
        assert!(guard::<*mut u8>(|| Err(Error::MemoryAlloc)).is_null());
        assert_eq!(caught(|| Err::<u8, _>(Error::Data)), Err(Error::Data));
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
