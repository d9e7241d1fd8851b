//! Copies between plain row-major C buffers, without an array (`b2nd_copy_buffer2`,
//! `b2nd_copy_buffer`).

use super::*;

/// Bytes a row-major array of shape `shape` spans up to the last item of the box at `start`
/// with extents `copy` (all positive).
pub(super) fn extent(itemsize: usize, shape: &[i64], start: &[i64], copy: &[i64]) -> Result<usize> {
    let st = c_strides(shape);
    let mut last = 0i64;
    for i in 0..shape.len() {
        if start[i] < 0 || shape[i] < 0 {
            return Err(Error::InvalidParam);
        }
        last = st[i]
            .checked_mul(start[i] + copy[i] - 1)
            .and_then(|v| v.checked_add(last))
            .ok_or(Error::InvalidParam)?;
    }
    usize::try_from(last + 1)
        .ok()
        .and_then(|v| v.checked_mul(itemsize))
        .ok_or(Error::InvalidParam)
}

/// Copies the box `src_start..src_stop` of the row-major `src` (shape `src_pad_shape`) to
/// `dst_start` of the row-major `dst` (shape `dst_pad_shape`).
///
/// # Safety
/// Shapes and positions valid for `ndim` values; `src` and `dst` valid for the bytes the box
/// spans in each (as in c-blosc2, the buffers are not bounds-checked against their sizes).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn b2nd_copy_buffer2(
    ndim: i8,
    itemsize: i32,
    src: *const c_void,
    src_pad_shape: *const i64,
    src_start: *const i64,
    src_stop: *const i64,
    dst: *mut c_void,
    dst_pad_shape: *const i64,
    dst_start: *const i64,
) -> c_int {
    guard(|| {
        let n = usize::try_from(ndim)
            .ok()
            .filter(|&n| n <= MAX_DIM)
            .ok_or(Error::InvalidParam)?;
        let its = usize::try_from(itemsize).map_err(|_| Error::InvalidParam)?;
        // SAFETY: ndim values each by contract.
        let (sp, s0, s1, dp, d0) = unsafe {
            (
                vals(src_pad_shape, n)?,
                vals(src_start, n)?,
                vals(src_stop, n)?,
                vals(dst_pad_shape, n)?,
                vals(dst_start, n)?,
            )
        };
        let copy: Vec<i64> = s0.iter().zip(&s1).map(|(a, b)| b - a).collect();
        if copy.iter().any(|&c| c < 0) {
            return Err(Error::InvalidParam);
        }
        if copy.contains(&0) {
            return Ok(0);
        }
        if src.is_null() || dst.is_null() {
            return Err(Error::NullPointer);
        }
        let (sl, dl) = (extent(its, &sp, &s0, &copy)?, extent(its, &dp, &d0, &copy)?);
        // SAFETY: by contract both buffers hold the bytes the box spans; they may not overlap
        // (as with c-blosc2's memcpy).
        let (sb, db) = unsafe {
            (
                std::slice::from_raw_parts(src as *const u8, sl),
                std::slice::from_raw_parts_mut(dst as *mut u8, dl),
            )
        };
        copy_nd(its, sb, &sp, &s0, &s1, db, &dp, &d0)?;
        Ok(0)
    })
}

/// [`b2nd_copy_buffer2`] with an 8-bit item size (deprecated in c-blosc2).
///
/// # Safety
/// As for [`b2nd_copy_buffer2`].
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn b2nd_copy_buffer(
    ndim: i8,
    itemsize: u8,
    src: *const c_void,
    src_pad_shape: *const i64,
    src_start: *const i64,
    src_stop: *const i64,
    dst: *mut c_void,
    dst_pad_shape: *const i64,
    dst_start: *const i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        b2nd_copy_buffer2(
            ndim,
            i32::from(itemsize),
            src,
            src_pad_shape,
            src_start,
            src_stop,
            dst,
            dst_pad_shape,
            dst_start,
        )
    }
}
