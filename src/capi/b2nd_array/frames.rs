//! Arrays and their frames: an array over an existing super-chunk (`b2nd_from_schunk`), a
//! contiguous frame in memory (`b2nd_to_cframe`, `b2nd_from_cframe`) or a frame file
//! (`b2nd_open`, `b2nd_open_offset`, `b2nd_save`, `b2nd_save_append`).

use super::*;

/// The array described by a super-chunk's `b2nd` (or `caterva`) metalayer.
pub(super) fn from_schunk(sc: *mut blosc2_schunk) -> Result<*mut b2nd_array_t> {
    if sc.is_null() {
        return Err(Error::NullPointer);
    }
    cparams_of(sc)?;
    let m = meta_get(sc, "b2nd")
        .or_else(|| meta_get(sc, "caterva"))
        .ok_or(Error::MetalayerNotFound)?;
    let (m, _) = b2nd_meta::deserialize(&m, true)?;
    let g = Geometry::stored(&m.shape, &m.chunkshape, &m.blockshape)?;
    let p = alloc_array()?;
    // SAFETY: freshly allocated and ours.
    let a = unsafe { &mut *p };
    set_geometry(a, &g);
    if let Some(d) = &m.dtype {
        match strdup(d) {
            Ok(d) => a.dtype = d,
            Err(e) => {
                drop_array(p, false);
                return Err(e);
            }
        }
    }
    a.dtype_format = m.dtype_format;
    a.sc = sc;
    // SAFETY: live schunk.
    a.last_tick = unsafe { (*sc).change_tick };
    Ok(p)
}

/// Wraps an existing super-chunk (which the array then owns) as an array.
///
/// # Safety
/// `schunk` NULL or live; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_schunk(
    schunk: *mut blosc2_schunk,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard(|| {
        if schunk.is_null() || array.is_null() {
            return Err(Error::NullPointer);
        }
        let p = from_schunk(schunk)?;
        // SAFETY: writable by contract.
        unsafe { *array = p };
        Ok(0)
    })
}

/// Serialises the array's super-chunk into a cframe (`blosc2_schunk_to_buffer`).
///
/// # Safety
/// `array` live; out-pointers writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_to_cframe(
    array: *const b2nd_array_t,
    cframe: *mut *mut u8,
    cframe_len: *mut i64,
    needs_free: *mut bool,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if cframe.is_null() || cframe_len.is_null() || needs_free.is_null() {
            return Err(Error::NullPointer);
        }
        // A view is serialised as an array of its own (shape and metalayer).
        let n = with_own(a, |a| {
            // SAFETY: live schunk; out-pointers writable by contract. The copy `with_own` may
            // make is a plain super-chunk, whose buffer is a new allocation (not freed with it).
            // The length, or the error's code, is what `cframe_len` receives.
            Ok(unsafe { schunk_to_buffer(a.sc, cframe, needs_free) }
                .unwrap_or_else(|e| i64::from(e.code())))
        })?;
        // SAFETY: writable by contract.
        unsafe { *cframe_len = n };
        if n <= 0 {
            return Err(Error::Failure);
        }
        Ok(0)
    })
}

/// Wraps a freshly opened super-chunk, freeing it if it is not a valid array.
pub(super) fn adopt(sc: *mut blosc2_schunk, array: *mut *mut b2nd_array_t) -> Result<i32> {
    match from_schunk(sc) {
        Ok(p) => {
            // SAFETY: writable by the callers' contract.
            unsafe { *array = p };
            Ok(0)
        }
        Err(e) => {
            if !sc.is_null() {
                // SAFETY: a live schunk this call created.
                let _ = unsafe { free_block(sc) };
            }
            Err(e)
        }
    }
}

/// An array from a cframe buffer (copied when `copy`; never modified or freed).
///
/// # Safety
/// `cframe` valid for `cframe_len` bytes; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_cframe(
    cframe: *mut u8,
    cframe_len: i64,
    copy: bool,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard(|| {
        if cframe.is_null() || array.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: forwarded contract.
        let sc = unsafe { schunk_from_buffer(cframe, cframe_len, copy) };
        adopt(sc.map_err(|_| Error::Failure)?, array)
    })
}

/// Opens an array stored at `urlpath`.
///
/// # Safety
/// `urlpath` a C string; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_open(urlpath: *const c_char, array: *mut *mut b2nd_array_t) -> c_int {
    guard(|| {
        if urlpath.is_null() || array.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: forwarded contract.
        let sc = unsafe { open_default(urlpath, 0) };
        // A failed open is NULL to `b2nd_from_schunk`, as in c-blosc2.
        adopt(sc.map_err(|_| Error::NullPointer)?, array)
    })
}

/// Opens an array stored at byte `offset` of the file `urlpath`.
///
/// # Safety
/// `urlpath` a C string; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_open_offset(
    urlpath: *const c_char,
    array: *mut *mut b2nd_array_t,
    offset: i64,
) -> c_int {
    guard(|| {
        if urlpath.is_null() || array.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: forwarded contract.
        let sc = unsafe { open_default(urlpath, offset) };
        // A failed open is NULL to `b2nd_from_schunk`, as in c-blosc2.
        adopt(sc.map_err(|_| Error::NullPointer)?, array)
    })
}

/// Saves a copy of the array at `urlpath` (contiguous as the array's storage is).
///
/// # Safety
/// `array` live; `urlpath` a C string.
#[no_mangle]
pub unsafe extern "C" fn b2nd_save(array: *const b2nd_array_t, urlpath: *mut c_char) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if urlpath.is_null() {
            return Err(Error::NullPointer);
        }
        store(a)?;
        with_own(a, |a| save(a, urlpath))
    })
}

/// [`b2nd_save`] of an array that is not a view.
fn save(a: &b2nd_array_t, urlpath: *mut c_char) -> Result<c_int> {
    {
        let mut st = BLOSC2_STORAGE_DEFAULTS;
        st.urlpath = urlpath;
        // SAFETY: live schunk with our storage copy.
        st.contiguous = unsafe {
            let s = &*a.sc;
            !s.storage.is_null() && (*s.storage).contiguous
        };
        // SAFETY: live schunk; `st` valid for the call.
        let copy = unsafe { schunk_copy(a.sc, &st) }.map_err(|_| Error::Failure)?;
        // SAFETY: the copy is ours.
        unsafe { free_block(copy) }
    }
}

/// Appends the array's cframe to the file `urlpath`; returns the offset where it starts.
///
/// # Safety
/// `array` live; `urlpath` a C string.
#[no_mangle]
pub unsafe extern "C" fn b2nd_save_append(
    array: *const b2nd_array_t,
    urlpath: *const c_char,
) -> i64 {
    guard(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        store(a)?;
        with_own(a, |a| {
            // SAFETY: live schunk; `urlpath` a C string by contract.
            unsafe { schunk_append_file(a.sc, urlpath) }
        })
    })
}
