//! The rank-changing "views" `b2nd_squeeze_index`, `b2nd_squeeze` and `b2nd_expand_dims`:
//! copies, never aliases of the parent's chunks (see [`crate::b2nd`]).

use super::*;

/// The "view" of `src` with geometry `shape`/`chunkshape`/`blockshape` (same items, extents
/// of 1 added or removed): a new in-memory array with copies of the data (see the module docs).
pub(super) fn view_copy(
    src: &b2nd_array_t,
    shape: &[i64],
    chunkshape: &[i32],
    blockshape: &[i32],
    map: impl Fn(&[i64], &[i64]) -> (Vec<i64>, Vec<i64>),
) -> Result<*mut b2nd_array_t> {
    store(src)?;
    // Only the b2nd metalayer may be present, as in c-blosc2.
    if meta_names(src.sc).iter().any(|n| n != b"b2nd") {
        return Err(Error::InvalidParam);
    }
    // SAFETY: live schunk with our storage copy (params always set).
    let (mut cp, mut dp) = unsafe {
        let s = &*src.sc;
        (*(*s.storage).cparams, *(*s.storage).dparams)
    };
    cp.schunk = std::ptr::null_mut();
    dp.schunk = std::ptr::null_mut();
    let mut st = BLOSC2_STORAGE_DEFAULTS;
    st.cparams = &mut cp;
    st.dparams = &mut dp;
    st.contiguous = false;
    let dt = dtype_of(src);
    let dtc = dt.as_ref().map(|d| strdup(d)).transpose()?;
    // SAFETY: all arrays hold `shape.len()` values; the dtype is NULL or a C string.
    let ctx = unsafe {
        b2nd_create_ctx(
            &st,
            shape.len() as i8,
            shape.as_ptr(),
            chunkshape.as_ptr(),
            blockshape.as_ptr(),
            dtc.unwrap_or(std::ptr::null_mut()),
            src.dtype_format,
            std::ptr::null(),
            0,
        )
    };
    // SAFETY: malloc'ed by `strdup` (or NULL).
    unsafe { libc::free(dtc.unwrap_or(std::ptr::null_mut()) as *mut c_void) };
    if ctx.is_null() {
        return Err(Error::InvalidParam);
    }
    // SAFETY: `ctx` is a live context of ours.
    let r = array_new(unsafe { &*ctx }, BLOSC2_SPECIAL_ZERO);
    // SAFETY: ours, freed once.
    unsafe { b2nd_free_ctx(ctx) };
    let p = r?;
    // SAFETY: `p` is ours.
    let r = copy_regions(src, unsafe { &*p }, map).and_then(|_| {
        // SAFETY: `p` is ours.
        copy_vlmeta(src.sc, unsafe { (*p).sc })
    });
    if let Err(e) = r {
        drop_array(p, true);
        return Err(e);
    }
    Ok(p)
}

/// Removes the dimensions flagged in `index` (each must have extent 1; else
/// `BLOSC2_ERROR_INVALID_INDEX`) into a new array `*view` (a copy, see the module docs).
///
/// # Safety
/// `array` live; `view` writable; `index` valid for ndim values.
#[no_mangle]
pub unsafe extern "C" fn b2nd_squeeze_index(
    array: *mut b2nd_array_t,
    view: *mut *mut b2nd_array_t,
    index: *const bool,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if view.is_null() || index.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(a)?;
        let g = geometry(a)?;
        let n = g.ndim();
        // SAFETY: ndim values by contract.
        let idx = unsafe { vals(index, n) }?;
        let (mut sh, mut cs, mut bs) = (vec![], vec![], vec![]);
        for (i, &squeezed) in idx.iter().enumerate() {
            if squeezed {
                if g.shape()[i] != 1 {
                    return Err(Error::InvalidIndex);
                }
            } else {
                sh.push(g.shape()[i]);
                cs.push(g.chunkshape()[i]);
                bs.push(g.blockshape()[i]);
            }
        }
        let expand = |v: &[i64], fill: i64| -> Vec<i64> {
            let mut it = v.iter();
            (0..n)
                .map(|i| {
                    if idx[i] {
                        fill
                    } else {
                        *it.next().unwrap_or(&0)
                    }
                })
                .collect()
        };
        let p = view_copy(a, &sh, &cs, &bs, |s, e| (expand(s, 0), expand(e, 1)))?;
        // SAFETY: writable by contract.
        unsafe { *view = p };
        Ok(0)
    })
}

/// Removes every dimension of extent 1 ([`b2nd_squeeze_index`]).
///
/// # Safety
/// `array` live; `view` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_squeeze(
    array: *mut b2nd_array_t,
    view: *mut *mut b2nd_array_t,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        let n = usize::try_from(a.ndim).unwrap_or(0).min(MAX_DIM);
        let idx: Vec<bool> = (0..n).map(|i| a.shape[i] == 1).collect();
        // SAFETY: forwarded contract; `idx` holds ndim values.
        Ok(unsafe { b2nd_squeeze_index(array, view, idx.as_ptr()) })
    })
}

/// Inserts extents of 1 where `axis` (of `final_dims` entries) is true, into a new array
/// `*view` (a copy, see the module docs).
///
/// # Safety
/// `array` live; `view` writable; `axis` valid for `final_dims` values.
#[no_mangle]
pub unsafe extern "C" fn b2nd_expand_dims(
    array: *const b2nd_array_t,
    view: *mut *mut b2nd_array_t,
    axis: *const bool,
    final_dims: u8,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if view.is_null() || axis.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(a)?;
        let g = geometry(a)?;
        let fd = usize::from(final_dims);
        if fd > MAX_DIM {
            return Err(Error::InvalidParam);
        }
        // SAFETY: `final_dims` values by contract.
        let ax = unsafe { vals(axis, fd) }?;
        let (mut sh, mut cs, mut bs) = (vec![], vec![], vec![]);
        let mut old = 0;
        for &added in &ax {
            if added {
                sh.push(1);
                cs.push(1);
                bs.push(1);
            } else {
                if old == g.ndim() {
                    return Err(Error::InvalidParam);
                }
                sh.push(g.shape()[old]);
                cs.push(g.chunkshape()[old]);
                bs.push(g.blockshape()[old]);
                old += 1;
            }
        }
        if old != g.ndim() {
            return Err(Error::InvalidParam);
        }
        let drop = |v: &[i64]| -> Vec<i64> {
            v.iter()
                .zip(&ax)
                .filter(|(_, &added)| !added)
                .map(|(x, _)| *x)
                .collect()
        };
        let p = view_copy(a, &sh, &cs, &bs, |s, e| (drop(s), drop(e)))?;
        // SAFETY: writable by contract.
        unsafe { *view = p };
        Ok(0)
    })
}
