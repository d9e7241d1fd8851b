//! Metalayer and vlmetalayer C API. The `schunk->metalayers[]` / `vlmetalayers[]` mirrors are
//! rebuilt by `capi::handle` after every operation.
//!
//! The header-inline `blosc2_meta_exists/get` read `schunk->nmetalayers` and
//! `schunk->metalayers[i]->{name,content,content_len}` directly, so after every metalayer
//! operation the mirrors are rebuilt from the safe core: `calloc`ed `blosc2_metalayer` structs
//! with `malloc`ed names and contents (uncompressed for metalayers; for vlmetalayers the
//! compressed chunk, as c-blosc2 keeps it). `change_tick` counts metadata changes.

use super::boundary::{cstr, guard, malloc_copy};
use super::chunk::core_cparams;
use super::handle::{
    bracket, exclusive, read_op, sync_counters, sync_meta, sync_vlmeta, Handle, Reader,
};
use super::types::*;
use crate::error::{Error, Result};
use std::ffi::{c_char, c_int};

/// Borrows `content_len` bytes of metadata content (NULL allowed when empty; also b2nd's
/// context metalayers).
///
/// # Safety
/// `content` valid for `content_len` bytes.
pub(crate) unsafe fn content_arg<'a>(content: *const u8, content_len: i32) -> Result<&'a [u8]> {
    let n = usize::try_from(content_len).map_err(|_| Error::InvalidParam)?;
    // SAFETY: forwarded contract.
    unsafe { super::boundary::slice(content, n) }
}

/// Runs a metadata operation and re-mirrors (the body of every change entry point, also b2nd's
/// metalayer writes).
///
/// # Safety
/// `schunk` NULL or live; `name` NULL or NUL-terminated.
pub(crate) unsafe fn meta_op(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    vl: bool,
    op: impl FnOnce(&mut Handle, &str) -> Result<usize>,
) -> Result<c_int> {
    // SAFETY: forwarded contract.
    let mut x = unsafe { exclusive(schunk) }?;
    let (sc, h) = x.parts();
    bracket(sc, h, true, |sc, h| {
        // SAFETY: forwarded contract.
        let name = unsafe { cstr(name) }?;
        let r = op(h, name)?;
        if vl {
            sync_vlmeta(sc, h);
        } else {
            sync_meta(sc, h);
        }
        sync_counters(sc, h, false);
        sc.change_tick += 1;
        Ok(r as c_int)
    })
}

/// The body of the add/update entry points: borrows `content`, then runs `op` on it through
/// [`meta_op`].
///
/// # Safety
/// As for [`meta_op`]; `content` valid for `content_len` bytes.
unsafe fn content_op(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *const u8,
    content_len: i32,
    vl: bool,
    op: impl FnOnce(&mut Handle, &str, &[u8]) -> Result<usize>,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { content_arg(content, content_len) }?;
        // SAFETY: forwarded contract.
        unsafe { meta_op(schunk, name, vl, |h, n| op(h, n, c)) }
    })
}

/// Adds a metalayer (frames: only while they hold no data); returns its index.
///
/// # Safety
/// `schunk` live; `name` NUL-terminated; `content` valid for `content_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_meta_add(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        content_op(schunk, name, content, content_len, false, |h, n, c| {
            h.core.add_metalayer(n, c)
        })
    }
}

/// Updates a metalayer with content no longer than the stored one; returns its index.
///
/// # Safety
/// As for [`blosc2_meta_add`].
#[no_mangle]
pub unsafe extern "C" fn blosc2_meta_update(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        content_op(schunk, name, content, content_len, false, |h, n, c| {
            h.core.update_metalayer(n, c)
        })
    }
}

/// Index of vlmetalayer `name`, or `BLOSC2_ERROR_NOT_FOUND`.
///
/// # Safety
/// `schunk` NULL or live; `name` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_exists(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
) -> c_int {
    guard(|| {
        let op = |r: &Reader<'_>| {
            // SAFETY: forwarded contract.
            let name = unsafe { cstr(name) }?;
            Ok(r.h.core.vlmeta_index(name)? as c_int)
        };
        // SAFETY: forwarded contract.
        unsafe { read_op(schunk, false, op) }
    })
}

/// Core cparams for a vlmetalayer (NULL: `BLOSC2_CPARAMS_DEFAULTS`).
///
/// # Safety
/// `cparams` NULL or valid.
unsafe fn vl_cparams(cparams: *const blosc2_cparams) -> Option<crate::chunk::CParams> {
    if cparams.is_null() {
        None
    } else {
        // SAFETY: valid by contract.
        Some(core_cparams(unsafe { &*cparams }))
    }
}

/// Adds a vlmetalayer (compressed with `cparams`); returns its index.
///
/// # Safety
/// `schunk` live; `name` NUL-terminated; `content` valid; `cparams` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_add(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
    cparams: *mut blosc2_cparams,
) -> c_int {
    // SAFETY: forwarded contract.
    let cp = unsafe { vl_cparams(cparams) };
    // SAFETY: forwarded contract.
    unsafe {
        content_op(schunk, name, content, content_len, true, |h, n, c| {
            h.core.vlmeta_add(n, c, cp.as_ref())
        })
    }
}

/// Replaces a vlmetalayer's content; returns its index.
///
/// # Safety
/// As for [`blosc2_vlmeta_add`].
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_update(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
    cparams: *mut blosc2_cparams,
) -> c_int {
    // SAFETY: forwarded contract.
    let cp = unsafe { vl_cparams(cparams) };
    // SAFETY: forwarded contract.
    unsafe {
        content_op(schunk, name, content, content_len, true, |h, n, c| {
            h.core.vlmeta_update(n, c, cp.as_ref())
        })
    }
}

/// Decompressed content of a vlmetalayer in a new `malloc`ed buffer; returns its index.
///
/// # Safety
/// `schunk` live; `name` NUL-terminated; `content`/`content_len` valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_get(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut *mut u8,
    content_len: *mut i32,
) -> c_int {
    guard(|| {
        let op = |r: &Reader<'_>| {
            // SAFETY: forwarded contract.
            let name = unsafe { cstr(name) }?;
            if content.is_null() || content_len.is_null() {
                return Err(Error::NullPointer);
            }
            let i = r.h.core.vlmeta_index(name)?;
            let v = r.h.core.vlmeta_get(name)?;
            let len = i32::try_from(v.len()).map_err(|_| Error::Data)?;
            let p = malloc_copy(&v);
            if p.is_null() {
                return Err(Error::MemoryAlloc);
            }
            // SAFETY: valid out-pointers by contract.
            unsafe {
                *content = p;
                *content_len = len;
            }
            Ok(i as c_int)
        };
        // SAFETY: forwarded contract.
        unsafe { read_op(schunk, false, op) }
    })
}

/// Deletes a vlmetalayer; returns how many remain.
///
/// # Safety
/// `schunk` live; `name` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_delete(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        unsafe { meta_op(schunk, name, true, |h, n| h.core.vlmeta_delete(n)) }
    })
}

/// Fills `names` with pointers to the schunk's own vlmetalayer names (valid until the next
/// vlmetalayer change; not to be freed); returns how many.
///
/// # Safety
/// `schunk` live; `names` valid for `nvlmetalayers` pointers.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_get_names(
    schunk: *mut blosc2_schunk,
    names: *mut *mut c_char,
) -> c_int {
    guard(|| {
        let op = |r: &Reader<'_>| {
            let list = r.vlmeta_names();
            if !list.is_empty() && names.is_null() {
                return Err(Error::NullPointer);
            }
            for (i, p) in list.iter().enumerate() {
                // SAFETY: `names` has room for `nvlmetalayers` pointers by contract.
                unsafe { *names.add(i) = *p };
            }
            Ok(list.len() as c_int)
        };
        // SAFETY: forwarded contract.
        unsafe { read_op(schunk, false, op) }
    })
}
