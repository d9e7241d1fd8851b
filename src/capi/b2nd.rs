//! `b2nd_serialize_meta` / `b2nd_deserialize_meta`: the b2nd metalayer codec of
//! [`crate::b2nd_meta`] behind c-blosc2's signatures. Output buffers (`*smeta`, `*dtype`) are
//! libc-malloc'ed for the caller to `free()`.

use super::boundary::{guard, malloc_copy, slice};
use crate::b2nd_meta::{self, MAX_DIM};
use crate::error::{Error, Result};
use std::ffi::{c_char, c_int, CStr};

/// Reads `ndim` elements at `p` (NULL only allowed when `ndim == 0`).
///
/// # Safety
/// `p` must be NULL or point to `ndim` readable elements.
unsafe fn dims<T: Copy>(p: *const T, ndim: usize) -> Result<Vec<T>> {
    if ndim == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: non-NULL and valid for `ndim` elements by this function's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, ndim) }.to_vec())
}

/// Encodes the b2nd metalayer into a new malloc'ed buffer stored in `*smeta`; returns its size.
/// A NULL `dtype` is written as `"|u1"`.
///
/// # Safety
/// `shape`, `chunkshape`, `blockshape` must hold `ndim` elements; `dtype` NULL or a
/// NUL-terminated string; `smeta` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn b2nd_serialize_meta(
    ndim: i8,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
    dtype: *const c_char,
    dtype_format: i8,
    smeta: *mut *mut u8,
) -> c_int {
    guard(|| {
        if smeta.is_null() {
            return Err(Error::NullPointer);
        }
        let n = usize::try_from(ndim)
            .ok()
            .filter(|&n| n <= MAX_DIM)
            .ok_or(Error::InvalidParam)?;
        // SAFETY: each array holds `ndim` elements by this function's contract.
        let (s, c, b) = unsafe { (dims(shape, n)?, dims(chunkshape, n)?, dims(blockshape, n)?) };
        let dt = if dtype.is_null() {
            None
        } else {
            // SAFETY: non-NULL and NUL-terminated by this function's contract.
            Some(unsafe { CStr::from_ptr(dtype) }.to_bytes())
        };
        let bytes = b2nd_meta::serialize(&s, &c, &b, dt, dtype_format)?;
        let len = c_int::try_from(bytes.len()).map_err(|_| Error::TwoGbLimit)?;
        let p = malloc_copy(&bytes);
        if p.is_null() {
            return Err(Error::MemoryAlloc);
        }
        // SAFETY: `smeta` is non-NULL and writable by this function's contract.
        unsafe { *smeta = p };
        Ok(len)
    })
}

/// Decodes a b2nd metalayer; returns the number of bytes consumed. `*dtype` (when both
/// `dtype` and `dtype_format` are given and the metalayer has a dtype) is a malloc'ed
/// NUL-terminated string the caller frees.
///
/// # Safety
/// `smeta` must hold `smeta_len` bytes; `ndim` writable; `shape`, `chunkshape`, `blockshape`
/// writable for `B2ND_MAX_DIM` elements; `dtype` and `dtype_format` NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn b2nd_deserialize_meta(
    smeta: *const u8,
    smeta_len: i32,
    ndim: *mut i8,
    shape: *mut i64,
    chunkshape: *mut i32,
    blockshape: *mut i32,
    dtype: *mut *mut c_char,
    dtype_format: *mut i8,
) -> c_int {
    guard(|| {
        if smeta.is_null()
            || ndim.is_null()
            || shape.is_null()
            || chunkshape.is_null()
            || blockshape.is_null()
        {
            return Err(Error::NullPointer);
        }
        // SAFETY: each output pointer is NULL or writable by this function's contract.
        unsafe {
            if !dtype.is_null() {
                *dtype = std::ptr::null_mut();
            }
            if !dtype_format.is_null() {
                *dtype_format = 0;
            }
        }
        if smeta_len <= 0 {
            return Err(Error::Failure);
        }
        // SAFETY: `smeta` holds `smeta_len` bytes by this function's contract.
        let buf = unsafe { slice(smeta, smeta_len as usize) }?;
        if buf.len() > 2 {
            // Like the reference, ndim is reported even when it is then rejected.
            // SAFETY: `ndim` is non-NULL and writable.
            unsafe { *ndim = buf[2] as i8 };
        }
        let want_dtype = !dtype.is_null() && !dtype_format.is_null();
        let (m, consumed) = b2nd_meta::deserialize(buf, want_dtype)?;
        let n = m.ndim();
        // SAFETY: the three arrays are writable for B2ND_MAX_DIM >= n elements, `ndim` writable.
        unsafe {
            *ndim = n as i8;
            std::ptr::copy_nonoverlapping(m.shape.as_ptr(), shape, n);
            std::ptr::copy_nonoverlapping(m.chunkshape.as_ptr(), chunkshape, n);
            std::ptr::copy_nonoverlapping(m.blockshape.as_ptr(), blockshape, n);
        }
        if want_dtype {
            if let Some(dt) = &m.dtype {
                let mut z = dt.clone();
                z.push(0);
                let p = malloc_copy(&z);
                if p.is_null() {
                    return Err(Error::MemoryAlloc);
                }
                // SAFETY: both pointers are non-NULL and writable.
                unsafe {
                    *dtype = p as *mut c_char;
                    *dtype_format = m.dtype_format;
                }
            }
        }
        Ok(consumed as c_int)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialize_then_deserialize_through_the_c_signatures() {
        let shape = [400i64, 3];
        let chunks = [110i32, 3];
        let blocks = [57i32, 3];
        let mut out: *mut u8 = std::ptr::null_mut();
        // SAFETY: arrays hold 2 elements, the dtype is NUL-terminated, `out` is writable.
        let n = unsafe {
            b2nd_serialize_meta(
                2,
                shape.as_ptr(),
                chunks.as_ptr(),
                blocks.as_ptr(),
                c"<f8".as_ptr(),
                0,
                &mut out,
            )
        };
        assert_eq!(n, 53);
        let (mut nd, mut sh, mut ch, mut bl) = (0i8, [0i64; 16], [0i32; 16], [0i32; 16]);
        let (mut dt, mut fmt): (*mut c_char, i8) = (std::ptr::null_mut(), 5);
        // SAFETY: `out` holds 53 bytes; outputs are writable and large enough.
        let r = unsafe {
            b2nd_deserialize_meta(
                out,
                n,
                &mut nd,
                sh.as_mut_ptr(),
                ch.as_mut_ptr(),
                bl.as_mut_ptr(),
                &mut dt,
                &mut fmt,
            )
        };
        assert_eq!((r, nd, fmt), (53, 2, 0));
        assert_eq!(
            (&sh[..2], &ch[..2], &bl[..2]),
            (&[400, 3][..], &[110, 3][..], &[57, 3][..])
        );
        // SAFETY: `dt` is a NUL-terminated malloc'ed string; both buffers are freed once.
        unsafe {
            assert_eq!(CStr::from_ptr(dt).to_bytes(), b"<f8");
            libc::free(dt as *mut libc::c_void);
            // Truncated input fails with BLOSC2_ERROR_FAILURE.
            let r = b2nd_deserialize_meta(
                out,
                20,
                &mut nd,
                sh.as_mut_ptr(),
                ch.as_mut_ptr(),
                bl.as_mut_ptr(),
                &mut dt,
                &mut fmt,
            );
            assert_eq!(r, -1);
            assert!(dt.is_null());
            libc::free(out as *mut libc::c_void);
        }
        // NULL output pointer and out-of-range ndim.
        // SAFETY: NULL arguments are rejected before any access.
        unsafe {
            assert_eq!(
                b2nd_serialize_meta(
                    0,
                    std::ptr::null(),
                    std::ptr::null(),
                    std::ptr::null(),
                    std::ptr::null(),
                    0,
                    std::ptr::null_mut()
                ),
                -32
            );
            assert_eq!(
                b2nd_serialize_meta(
                    17,
                    shape.as_ptr(),
                    chunks.as_ptr(),
                    blocks.as_ptr(),
                    std::ptr::null(),
                    0,
                    &mut out
                ),
                -12
            );
        }
    }
}
