//! The mirrors of the C struct: its counters, `data`, `frame`, and the `metalayers[]` /
//! `vlmetalayers[]` arrays, rebuilt from the safe core after every change.
//!
//! The header-inline `blosc2_meta_exists/get` read `schunk->nmetalayers` and
//! `schunk->metalayers[i]->{name,content,content_len}` directly, so after every metalayer
//! operation the mirrors are rebuilt from the safe core: `calloc`ed `blosc2_metalayer` structs
//! with `malloc`ed names and contents (uncompressed for metalayers; for vlmetalayers the
//! compressed chunk, as c-blosc2 keeps it).

use super::Handle;
use crate::capi::boundary::malloc_copy;
use crate::capi::types::*;
use std::borrow::Cow;
use std::ffi::{c_char, c_void};

/// Mirrors counters, `data` and `frame` from the core.
pub(crate) fn sync_counters(sc: &mut blosc2_schunk, h: &mut Handle, full_data: bool) {
    let c = h.core.counters();
    // Only the fields that changed are written: threads reading the array meanwhile (the b2nd
    // functions look at `frame`, `nchunks` and the metalayers without the lock) must not race
    // with a rewrite of a value that stays the same.
    set(&mut sc.nchunks, c.nchunks);
    set(&mut sc.nbytes, c.nbytes);
    set(&mut sc.cbytes, c.cbytes);
    set(&mut sc.chunksize, c.chunksize);
    set(&mut sc.flags2, u8::from(c.vl_blocks));
    let frame = if h.core.frame().is_some() {
        h as *mut Handle as *mut blosc2_frame
    } else {
        std::ptr::null_mut()
    };
    set(&mut sc.frame, frame);
    sync_data(sc, h, full_data);
}

/// Writes `v` into the mirrored field `f` unless it already holds it.
fn set<T: PartialEq>(f: &mut T, v: T) {
    if *f != v {
        *f = v;
    }
}

/// `schunk->data`: pointers to the chunks of a plain schunk (valid until the next mutation),
/// grown by 4096 bytes like c-blosc2. Appends only write the new slot.
fn sync_data(sc: &mut blosc2_schunk, h: &mut Handle, full: bool) {
    if h.core.frame().is_some() {
        return;
    }
    let n = h.core.nchunks() as usize;
    if n > h.data_cap || sc.data.is_null() {
        let bytes = (n * 8).div_ceil(4096).max(1) * 4096;
        // SAFETY: realloc of our own malloc'ed array (or NULL).
        let p = unsafe { libc::realloc(sc.data as *mut c_void, bytes) } as *mut *mut u8;
        if p.is_null() {
            return;
        }
        sc.data = p;
        sc.data_len = bytes;
        h.data_cap = bytes / 8;
    }
    let from = if full { 0 } else { n.saturating_sub(1) };
    for i in from..n {
        let ptr = match h.core.chunk(i as i64) {
            Ok(Cow::Borrowed(b)) => b.as_ptr() as *mut u8,
            _ => std::ptr::null_mut(),
        };
        // SAFETY: `i < n <= data_cap` slots are allocated.
        unsafe { *sc.data.add(i) = ptr };
    }
}

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
