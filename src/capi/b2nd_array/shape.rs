//! Shape changes, each under the super-chunk's lock (`b2nd_resize`, `b2nd_insert`,
//! `b2nd_append`, `b2nd_delete`), and `b2nd_refresh`, which re-reads a shape another handle
//! changed.

use super::*;

/// Runs `f` holding the super-chunk's exclusive `.b2lock` lock (`blosc2_schunk_lock`, a no-op
/// returning 0 without locking), as c-blosc2's `b2nd_set_slice_cbuffer` and `b2nd_resize`
/// bracket themselves: other locking handles and processes see every chunk of the operation,
/// and the new metalayer, change at once. Nested brackets reuse the lock.
pub(super) fn locked<T>(
    a: &mut b2nd_array_t,
    f: impl FnOnce(&mut b2nd_array_t) -> Result<T>,
) -> Result<T> {
    let sc = a.sc;
    if sc.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: live schunk.
    unsafe { schunk_lock(sc) }?;
    let r = f(a);
    // SAFETY: live schunk; the lock taken above.
    let u = unsafe { schunk_unlock(sc) };
    let v = r?;
    u?;
    Ok(v)
}

/// Applies a shape change computed by the core and publishes the new geometry (under the
/// lock, see [`locked`]).
pub(super) fn reshape(
    a: &mut b2nd_array_t,
    f: impl FnOnce(&mut CStore, &Geometry) -> Result<Geometry>,
) -> Result<i32> {
    shares::reshaping(a, a.sc)?;
    locked(a, |a| {
        refresh_if_stale(a)?;
        let g = geometry(a)?;
        let mut st = store(a)?;
        let ng = f(&mut st, &g)?;
        set_geometry(a, &ng);
        publish_meta(a)?;
        Ok(0)
    })
}

/// Resizes the array to `new_shape`; `start` (NULL: the end of each dimension) is where items
/// are added or removed.
///
/// # Safety
/// `array` live; `new_shape` valid for ndim values; `start` NULL or valid for ndim values.
#[no_mangle]
pub unsafe extern "C" fn b2nd_resize(
    array: *mut b2nd_array_t,
    new_shape: *const i64,
    start: *const i64,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if new_shape.is_null() {
            return Err(Error::NullPointer);
        }
        let n = usize::try_from(a.ndim).unwrap_or(0).min(MAX_DIM);
        // SAFETY: ndim values by contract.
        let ns = unsafe { vals(new_shape, n) }?;
        // SAFETY: NULL or ndim values by contract.
        let st = (!start.is_null())
            .then(|| unsafe { vals(start, n) })
            .transpose()?;
        reshape(a, |s, g| core::resize(s, g, &ns, st.as_deref()))
    })
}

/// Re-reads the geometry if another handle changed it; 1 if re-synced, else 0.
///
/// # Safety
/// `array` live.
#[no_mangle]
pub unsafe extern "C" fn b2nd_refresh(array: *mut b2nd_array_t) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        refresh_if_stale(a).map(i32::from)
    })
}

/// Inserts `buffer` along `axis` at `insert_start`.
///
/// # Safety
/// `array` live; `buffer` valid for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_insert(
    array: *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
    axis: i8,
    insert_start: i64,
) -> c_int {
    // SAFETY: forwarded contract.
    guard(|| unsafe { insert(array, buffer, buffersize, axis, insert_start) })
}

/// The body of [`b2nd_insert`] (also [`b2nd_append`]).
///
/// # Safety
/// As for [`b2nd_insert`].
unsafe fn insert(
    array: *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
    axis: i8,
    insert_start: i64,
) -> Result<c_int> {
    // SAFETY: forwarded contract.
    let a = unsafe { arr(array) }?;
    if buffer.is_null() {
        return Err(Error::NullPointer);
    }
    let len = usize::try_from(buffersize).map_err(|_| Error::InvalidParam)?;
    // SAFETY: `buffersize` bytes by contract.
    let src = unsafe { std::slice::from_raw_parts(buffer as *const u8, len) };
    reshape(a, |s, g| core::insert(s, g, src, axis, insert_start))
}

/// Appends `buffer` along `axis`.
///
/// # Safety
/// `array` live; `buffer` valid for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_append(
    array: *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
    axis: i8,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if buffer.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(a)?;
        let ax = usize::try_from(axis)
            .ok()
            .filter(|&x| x < usize::try_from(a.ndim).unwrap_or(0))
            .ok_or(Error::InvalidParam)?;
        let at = a.shape[ax];
        // SAFETY: forwarded contract.
        unsafe { insert(array, buffer, buffersize, axis, at) }
    })
}

/// Deletes `delete_len` items along `axis` from `delete_start`.
///
/// # Safety
/// `array` live.
#[no_mangle]
pub unsafe extern "C" fn b2nd_delete(
    array: *mut b2nd_array_t,
    axis: i8,
    delete_start: i64,
    delete_len: i64,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        reshape(a, |s, g| core::delete(s, g, axis, delete_start, delete_len))
    })
}
