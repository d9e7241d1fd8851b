//! Metalayer and vlmetalayer C API, and the `schunk->metalayers[]` / `vlmetalayers[]` mirrors.
//!
//! The header-inline `blosc2_meta_exists/get` read `schunk->nmetalayers` and
//! `schunk->metalayers[i]->{name,content,content_len}` directly, so after every metalayer
//! operation the mirrors are rebuilt from the safe core: `calloc`ed `blosc2_metalayer` structs
//! with `malloc`ed names and contents (uncompressed for metalayers; for vlmetalayers the
//! compressed chunk, as c-blosc2 keeps it). `change_tick` counts metadata changes.

use super::boundary::{cstr, guard_int, malloc_copy};
use super::chunk::core_cparams;
use super::schunk::{exclusive, read_op, sync_counters, Handle, Reader};
use super::types::*;
use crate::error::{Error, Result};
use std::ffi::{c_char, c_int, c_void};

/// Frees one mirrored metalayer.
///
/// # Safety
/// `m` NULL or from `mirror`.
unsafe fn free_one(m: *mut blosc2_metalayer) {
    if m.is_null() {
        return;
    }
    // SAFETY: name/content/struct were malloc'ed by `mirror`.
    unsafe {
        libc::free((*m).name as *mut c_void);
        libc::free((*m).content as *mut c_void);
        libc::free(m as *mut c_void);
    }
}

/// A `calloc`ed metalayer with copies of `name` (NUL-terminated) and `content`.
fn mirror(name: &str, content: &[u8]) -> *mut blosc2_metalayer {
    // SAFETY: calloc of one struct; checked before use.
    let m = unsafe { libc::calloc(1, std::mem::size_of::<blosc2_metalayer>()) }
        as *mut blosc2_metalayer;
    if m.is_null() {
        return m;
    }
    let mut n = name.as_bytes().to_vec();
    n.push(0);
    // SAFETY: `m` is a zeroed, live struct.
    unsafe {
        (*m).name = malloc_copy(&n) as *mut c_char;
        (*m).content = malloc_copy(content);
        (*m).content_len = content.len() as i32;
    }
    m
}

/// Frees the first `used` mirrors of `slots` (a `metalayers[]` or `vlmetalayers[]` array) and
/// clears their pointers.
///
/// # Safety
/// Those slots are NULL or were built by `mirror`.
unsafe fn free_slots(slots: &mut [*mut blosc2_metalayer], used: usize) {
    let n = used.min(slots.len());
    for slot in &mut slots[..n] {
        // SAFETY: built by `mirror` (this function's contract).
        unsafe { free_one(*slot) };
        *slot = std::ptr::null_mut();
    }
}

/// Frees the `used` old mirrors of `slots` and mirrors `list` into them (as many as fit);
/// returns how many were mirrored.
///
/// # Safety
/// As for [`free_slots`].
unsafe fn refill_slots(
    slots: &mut [*mut blosc2_metalayer],
    used: usize,
    list: &[(String, Vec<u8>)],
) -> usize {
    // SAFETY: forwarded contract.
    unsafe { free_slots(slots, used) };
    let n = list.len().min(slots.len());
    for (slot, (name, content)) in slots.iter_mut().zip(list.iter().take(n)) {
        *slot = mirror(name, content);
    }
    n
}

/// Frees both mirrors.
///
/// # Safety
/// `sc` is a struct whose mirrors were built by this module.
pub(crate) unsafe fn free_mirrors(sc: &mut blosc2_schunk) {
    // SAFETY: built by `mirror` (this function's contract).
    unsafe { free_slots(&mut sc.metalayers, usize::from(sc.nmetalayers)) };
    sc.nmetalayers = 0;
    let nvl = usize::try_from(sc.nvlmetalayers).unwrap_or(0);
    // SAFETY: as above.
    unsafe { free_slots(&mut sc.vlmetalayers, nvl) };
    sc.nvlmetalayers = 0;
}

/// Rebuilds `metalayers[]` / `nmetalayers` from the core.
pub(crate) fn sync_meta(sc: &mut blosc2_schunk, h: &Handle) {
    let used = usize::from(sc.nmetalayers);
    // SAFETY: the mirrors of a struct this module maintains were built by `mirror`.
    let n = unsafe { refill_slots(&mut sc.metalayers, used, h.core.metalayers()) };
    sc.nmetalayers = n as u16;
}

/// Rebuilds `vlmetalayers[]` / `nvlmetalayers` from the core.
pub(crate) fn sync_vlmeta(sc: &mut blosc2_schunk, h: &Handle) {
    let used = usize::try_from(sc.nvlmetalayers).unwrap_or(0);
    // SAFETY: as in `sync_meta`.
    let n = unsafe { refill_slots(&mut sc.vlmetalayers, used, h.core.vlmetalayers()) };
    sc.nvlmetalayers = n as i16;
}

/// Borrows `content_len` bytes of metadata content (NULL allowed when empty).
///
/// # Safety
/// `content` valid for `content_len` bytes.
unsafe fn content_arg<'a>(content: *const u8, content_len: i32) -> Result<&'a [u8]> {
    let n = usize::try_from(content_len).map_err(|_| Error::InvalidParam)?;
    // SAFETY: forwarded contract.
    unsafe { super::boundary::slice(content, n) }
}

/// Runs a metadata operation and re-mirrors.
///
/// # Safety
/// `schunk` NULL or live; `name` NULL or NUL-terminated.
unsafe fn meta_op(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    vl: bool,
    op: impl FnOnce(&mut Handle, &str) -> Result<usize>,
) -> Result<c_int> {
    // SAFETY: forwarded contract.
    let mut x = unsafe { exclusive(schunk) }?;
    let (sc, h) = x.parts();
    super::io::bracket(sc, h, true, |sc, h| {
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
    guard_int(|| {
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
    guard_int(|| {
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
    guard_int(|| {
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
    guard_int(|| {
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
    guard_int(|| {
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
