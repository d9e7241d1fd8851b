//! The rank-changing views `b2nd_squeeze_index`, `b2nd_squeeze` and `b2nd_expand_dims`: new
//! arrays over their parent's super-chunk (see `shares`), and the copies of a view that
//! `b2nd_to_cframe`, `b2nd_save` and `b2nd_save_append` serialise (an array of the view's own
//! shape, as c-blosc2's view has its own metalayer).

use super::*;

/// The view of `src` with geometry `shape`/`chunkshape`/`blockshape` (same items, extents of
/// 1 added or removed): a new struct whose `sc` is `src`'s. Like c-blosc2, a view reads the
/// chunks with its own geometry, so the chunks must pad the same way (else reads fail).
pub(super) fn view_share(
    src: *const b2nd_array_t,
    shape: &[i64],
    chunkshape: &[i32],
    blockshape: &[i32],
) -> Result<*mut b2nd_array_t> {
    // SAFETY: live by the callers' contract.
    let s = unsafe { &*src };
    store(s)?;
    // Only the b2nd metalayer may be present, as in c-blosc2.
    if meta_names(s.sc).iter().any(|n| n != b"b2nd") {
        return Err(Error::InvalidParam);
    }
    let g = Geometry::new(shape, chunkshape, blockshape)?;
    let p = alloc_array()?;
    // SAFETY: freshly allocated and ours.
    let a = unsafe { &mut *p };
    set_geometry(a, &g);
    if let Some(d) = dtype_of(s) {
        match strdup(&d) {
            Ok(d) => a.dtype = d,
            Err(e) => {
                drop_array(p, false);
                return Err(e);
            }
        }
    }
    a.dtype_format = s.dtype_format;
    a.sc = s.sc;
    a.last_tick = s.last_tick;
    shares::add_view(p, s.sc);
    Ok(p)
}

/// Runs `f` on an array holding exactly `a`: `a` itself, or for a view a plain copy of it
/// (its own geometry and metalayer, the shared items), freed afterwards.
pub(super) fn with_own<T>(
    a: &b2nd_array_t,
    f: impl FnOnce(&b2nd_array_t) -> Result<T>,
) -> Result<T> {
    if !shares::is_view(a) {
        return f(a);
    }
    // SAFETY: live schunk with our storage copy (params always set).
    let (mut cp, mut dp) = unsafe {
        let s = &*a.sc;
        (*(*s.storage).cparams, *(*s.storage).dparams)
    };
    cp.schunk = std::ptr::null_mut();
    dp.schunk = std::ptr::null_mut();
    let mut st = BLOSC2_STORAGE_DEFAULTS;
    st.cparams = &mut cp;
    st.dparams = &mut dp;
    st.contiguous = false;
    let g = geometry(a)?;
    let dtc = dtype_of(a).as_ref().map(|d| strdup(d)).transpose()?;
    // SAFETY: all arrays hold `ndim` values; the dtype is NULL or a C string.
    let ctx = unsafe {
        b2nd_create_ctx(
            &st,
            g.ndim() as i8,
            g.shape().as_ptr(),
            g.chunkshape().as_ptr(),
            g.blockshape().as_ptr(),
            dtc.unwrap_or(std::ptr::null_mut()),
            a.dtype_format,
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
    let r = copy_array(unsafe { &mut *ctx }, a);
    // SAFETY: ours, freed once.
    let _ = unsafe { free_ctx(ctx) };
    let p = r?;
    // SAFETY: `p` is ours, freed once below.
    let r = f(unsafe { &*p });
    drop_array(p, true);
    r
}

/// Removes the dimensions flagged in `index` (each must have extent 1; else
/// `BLOSC2_ERROR_INVALID_INDEX`) into a new array `*view` sharing `array`'s data.
///
/// # Safety
/// `array` live; `view` writable; `index` valid for ndim values.
#[no_mangle]
pub unsafe extern "C" fn b2nd_squeeze_index(
    array: *mut b2nd_array_t,
    view: *mut *mut b2nd_array_t,
    index: *const bool,
) -> c_int {
    // SAFETY: forwarded contract.
    guard(|| unsafe { squeeze_index(array, view, index) })
}

/// The body of [`b2nd_squeeze_index`] (also [`b2nd_squeeze`]).
///
/// # Safety
/// As for [`b2nd_squeeze_index`].
unsafe fn squeeze_index(
    array: *mut b2nd_array_t,
    view: *mut *mut b2nd_array_t,
    index: *const bool,
) -> Result<c_int> {
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
    let p = view_share(a, &sh, &cs, &bs)?;
    // SAFETY: writable by contract.
    unsafe { *view = p };
    Ok(0)
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
    guard(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        let n = usize::try_from(a.ndim).unwrap_or(0).min(MAX_DIM);
        let idx: Vec<bool> = (0..n).map(|i| a.shape[i] == 1).collect();
        // SAFETY: forwarded contract; `idx` holds ndim values.
        unsafe { squeeze_index(array, view, idx.as_ptr()) }
    })
}

/// Inserts extents of 1 where `axis` (of `final_dims` entries) is true, into a new array
/// `*view` sharing `array`'s data.
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
    guard(|| {
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
        let p = view_share(a, &sh, &cs, &bs)?;
        // SAFETY: writable by contract.
        unsafe { *view = p };
        Ok(0)
    })
}
