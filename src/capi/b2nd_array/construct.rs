//! New arrays from a context (`b2nd_uninit`, `b2nd_empty`, `b2nd_zeros`, `b2nd_nans`,
//! `b2nd_full`) and their release (`b2nd_free`).

use super::*;

/// A struct for the context's geometry and dtype, without a super-chunk.
pub(super) fn array_without_schunk(c: &b2nd_context_t) -> Result<*mut b2nd_array_t> {
    let g = ctx_geometry(c)?;
    let p = alloc_array()?;
    // SAFETY: freshly allocated and ours.
    let a = unsafe { &mut *p };
    set_geometry(a, &g);
    if !c.dtype.is_null() {
        // SAFETY: the context's dtype is a C string.
        match strdup(unsafe { CStr::from_ptr(c.dtype) }.to_bytes()) {
            Ok(d) => a.dtype = d,
            Err(e) => {
                drop_array(p, false);
                return Err(e);
            }
        }
    }
    a.dtype_format = c.dtype_format;
    Ok(p)
}

/// A new array for the context, its chunks all `special` (`BLOSC2_SPECIAL_*`).
pub(super) fn array_new(c: &b2nd_context_t, special: c_int) -> Result<*mut b2nd_array_t> {
    let p = array_without_schunk(c)?;
    let r = (|| {
        // SAFETY: `p` is ours.
        let a = unsafe { &mut *p };
        // SAFETY: the context's storage was copied by `b2nd_create_ctx` (or is NULL).
        let sc = unsafe { schunk_new(c.b2_storage) }.map_err(|_| Error::Failure)?;
        a.sc = sc;
        let g = geometry(a)?;
        // SAFETY: live schunk.
        let ts = unsafe { (*sc).typesize };
        if ts <= 0 {
            return Err(Error::InvalidParam);
        }
        let chunksize =
            i32::try_from(g.chunk_nbytes(ts)?).map_err(|_| Error::MaxBufsizeExceeded)?;
        // SAFETY: live schunk; c-blosc2 sets the chunk size the same way.
        unsafe {
            (*sc).chunksize = chunksize;
            if usize::from((*sc).nmetalayers) >= 16 {
                return Err(Error::Failure);
            }
        }
        publish_meta(a)?;
        let nmeta = usize::try_from(c.nmetalayers)
            .unwrap_or(0)
            .min(B2ND_MAX_METALAYERS);
        for m in &c.metalayers[..nmeta] {
            // SAFETY: the caller's metalayer entries (name C string, content valid).
            let rc = unsafe {
                content_arg(m.content, m.content_len)
                    .and_then(|c| meta_op(sc, m.name, false, |h, n| h.core.add_metalayer(n, c)))
            };
            rc.map_err(|_| Error::Failure)?;
        }
        if g.nitems() != 0 {
            let items = g
                .nchunks()
                .checked_mul(g.extchunknitems())
                .ok_or(Error::InvalidParam)?;
            // SAFETY: live schunk.
            let rc = unsafe { fill_special(sc, items, special, chunksize) };
            rc.map_err(|_| Error::Failure)?;
        }
        // SAFETY: live schunk.
        a.last_tick = unsafe { (*sc).change_tick };
        Ok(())
    })();
    match r {
        Ok(()) => Ok(p),
        Err(e) => {
            drop_array(p, true);
            Err(e)
        }
    }
}

/// Runs a constructor storing its result in `*array` (left untouched on failure).
///
/// # Safety
/// `ctx` NULL or live; `array` NULL or writable.
pub(super) unsafe fn construct(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    f: impl FnOnce(&mut b2nd_context_t) -> Result<*mut b2nd_array_t>,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { ctx_ref(ctx) }?;
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        let p = f(c)?;
        // SAFETY: writable by contract.
        unsafe { *array = p };
        Ok(0)
    })
}

/// An array whose chunks are uninitialised (special chunks).
///
/// # Safety
/// `ctx` live; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_uninit(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { construct(ctx, array, |c| array_new(c, BLOSC2_SPECIAL_UNINIT)) }
}

/// An array of zeros (c-blosc2 fills "empty" arrays with zero chunks too).
///
/// # Safety
/// `ctx` live; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_empty(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { construct(ctx, array, |c| array_new(c, BLOSC2_SPECIAL_ZERO)) }
}

/// An array of zeros.
///
/// # Safety
/// `ctx` live; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_zeros(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { construct(ctx, array, |c| array_new(c, BLOSC2_SPECIAL_ZERO)) }
}

/// An array of NaNs (typesize 4 or 8, else `BLOSC2_ERROR_DATA`).
///
/// # Safety
/// `ctx` live; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_nans(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        construct(ctx, array, |c| {
            let p = array_new(c, BLOSC2_SPECIAL_NAN)?;
            // SAFETY: `p` and its schunk are live.
            let ts = (*(*p).sc).typesize;
            if ts != 4 && ts != 8 {
                drop_array(p, true);
                return Err(Error::Data);
            }
            Ok(p)
        })
    }
}

/// An array whose items are all `fill_value` (typesize bytes).
///
/// # Safety
/// `ctx` live; `array` writable; `fill_value` valid for typesize bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_full(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    fill_value: *const c_void,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        construct(ctx, array, |c| {
            if fill_value.is_null() {
                return Err(Error::NullPointer);
            }
            let p = array_new(c, BLOSC2_SPECIAL_ZERO)?;
            let r = (|| {
                let a = &mut *p;
                let g = geometry(a)?;
                let ts = (*a.sc).typesize;
                let nbytes =
                    i32::try_from(g.chunk_nbytes(ts)?).map_err(|_| Error::MaxBufsizeExceeded)?;
                let cp = cparams_of(a.sc)?;
                let mut chunk = vec![0u8; BLOSC_EXTENDED_HEADER_LENGTH as usize + ts as usize];
                let (d, len) = (chunk.as_mut_ptr() as *mut c_void, chunk.len() as i32);
                let n = special_chunk(&cp, nbytes, d, len, SpecialCtor::Value(fill_value));
                let c = &chunk[..n.map_err(|_| Error::Failure)?];
                for i in 0..(*a.sc).nchunks {
                    let rc = mutate(a.sc, true, |s| s.update_chunk(i, c));
                    rc.map_err(|_| Error::Failure)?;
                }
                Ok(())
            })();
            if let Err(e) = r {
                drop_array(p, true);
                return Err(e);
            }
            Ok(p)
        })
    }
}

/// Frees an array and its super-chunk.
///
/// # Safety
/// `array` NULL or a live array, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn b2nd_free(array: *mut b2nd_array_t) -> c_int {
    guard(|| {
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        drop_array(array, true);
        Ok(0)
    })
}
