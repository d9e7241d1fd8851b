//! Orthogonal (outer-index) selections (`b2nd_get_orthogonal_selection`,
//! `b2nd_set_orthogonal_selection`) and gathers at linear indices
//! (`b2nd_get_sparse_cbuffer`).

use super::*;

/// Reads the selection lists of an orthogonal selection.
///
/// # Safety
/// `selection` valid for `n` pointers, each valid for `selection_size[i]` values.
pub(super) unsafe fn selection_lists(
    selection: *mut *mut i64,
    selection_size: *mut i64,
    n: usize,
) -> Result<Vec<Vec<i64>>> {
    if selection.is_null() || selection_size.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: `n` entries each by contract.
    let (ptrs, sizes) = unsafe {
        (
            vals(selection as *const *mut i64, n)?,
            vals(selection_size as *const i64, n)?,
        )
    };
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let len = usize::try_from(sizes[i]).map_err(|_| Error::InvalidParam)?;
        // SAFETY: `selection_size[i]` values by contract.
        out.push(unsafe { vals(ptrs[i] as *const i64, len) }?);
    }
    Ok(out)
}

/// Shared part of the two orthogonal-selection functions.
///
/// # Safety
/// As for [`b2nd_get_orthogonal_selection`].
pub(super) unsafe fn orthogonal(
    array: *const b2nd_array_t,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *mut c_void,
    buffershape: *mut i64,
    buffersize: i64,
    get: bool,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if buffer.is_null() || buffershape.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(a)?;
        let g = geometry(a)?;
        let n = g.ndim();
        // SAFETY: forwarded contract.
        let lists = unsafe { selection_lists(selection, selection_size, n) }?;
        // SAFETY: ndim values by contract.
        let bs = unsafe { vals(buffershape as *const i64, n) }?;
        let mut st = store(a)?;
        let mut sel_bytes = i64::from(st.typesize());
        for l in &lists {
            sel_bytes = sel_bytes
                .checked_mul(l.len() as i64)
                .ok_or(Error::InvalidParam)?;
        }
        if sel_bytes < buffersize || buffersize < 0 {
            return Err(Error::InvalidParam);
        }
        // SAFETY: `buffersize` bytes by contract.
        let buf = unsafe { std::slice::from_raw_parts_mut(buffer as *mut u8, buffersize as usize) };
        let refs: Vec<&[i64]> = lists.iter().map(|v| &v[..]).collect();
        if get {
            selection::get_orthogonal(&st, &g, &refs, buf, &bs)?;
        } else {
            selection::set_orthogonal(&mut st, &g, &refs, buf, &bs)?;
        }
        Ok(0)
    })
}

/// Reads the orthogonal selection (one index list per dimension) into `buffer`, a row-major
/// array of shape `buffershape`.
///
/// # Safety
/// `array` live; `selection` ndim pointers to `selection_size[i]` indices; `buffershape` ndim
/// values; `buffer` valid for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_orthogonal_selection(
    array: *const b2nd_array_t,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *mut c_void,
    buffershape: *mut i64,
    buffersize: i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        orthogonal(
            array,
            selection,
            selection_size,
            buffer,
            buffershape,
            buffersize,
            true,
        )
    }
}

/// Writes `buffer` into the orthogonal selection.
///
/// # Safety
/// As for [`b2nd_get_orthogonal_selection`].
#[no_mangle]
pub unsafe extern "C" fn b2nd_set_orthogonal_selection(
    array: *mut b2nd_array_t,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *const c_void,
    buffershape: *mut i64,
    buffersize: i64,
) -> c_int {
    // SAFETY: forwarded contract; the buffer is only read when setting.
    unsafe {
        orthogonal(
            array,
            selection,
            selection_size,
            buffer as *mut c_void,
            buffershape,
            buffersize,
            false,
        )
    }
}

/// Gathers the items at row-major linear indices `coords` into `buffer`.
///
/// # Safety
/// `array` live; `coords` valid for `ncoords` values; `buffer` for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_sparse_cbuffer(
    array: *const b2nd_array_t,
    ncoords: i64,
    coords: *const i64,
    buffer: *mut c_void,
    buffersize: i64,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        refresh_if_stale(a)?;
        let n = usize::try_from(ncoords).map_err(|_| Error::InvalidParam)?;
        if n == 0 {
            return Ok(0);
        }
        if coords.is_null() || buffer.is_null() {
            return Err(Error::NullPointer);
        }
        let st = store(a)?;
        let need = ncoords
            .checked_mul(i64::from(st.typesize()))
            .ok_or(Error::InvalidParam)?;
        if buffersize < need {
            return Err(Error::InvalidParam);
        }
        let g = geometry(a)?;
        // SAFETY: `ncoords` values by contract.
        let cs = unsafe { vals(coords, n) }?;
        let storage = core::sparse_storage_coords(&g, &cs)?;
        // SAFETY: live schunk; `storage` holds `ncoords` values; `buffer` holds their items.
        unsafe { sparse_buffer(a.sc, ncoords, storage.as_ptr(), buffer) }
    })
}
