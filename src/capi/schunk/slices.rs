//! Item slices of the super-chunk C API: `get/set_slice_buffer`, `get_sparse_buffer`,
//! `blosc2_get_slice_nchunks`, and the offsets index (`blosc2_frame_get_offsets`).

use super::*;
use crate::capi::boundary::malloc_copy;

// ---------------------------------------------------------------------------------------------
// Slices
// ---------------------------------------------------------------------------------------------

/// Byte length of an item range (checked).
fn range_bytes(h: &Handle, start: i64, stop: i64) -> Result<usize> {
    let ts = i64::from(h.core.cparams().typesize);
    let n = stop
        .checked_sub(start)
        .filter(|&n| n >= 0)
        .and_then(|n| n.checked_mul(ts))
        .ok_or(Error::InvalidParam)?;
    usize::try_from(n).map_err(|_| Error::InvalidParam)
}

/// Decompresses items `start..stop` into `buffer`.
///
/// # Safety
/// `schunk` live; `buffer` valid for `(stop - start) * typesize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_slice_buffer(
    schunk: *mut blosc2_schunk,
    start: i64,
    stop: i64,
    buffer: *mut c_void,
) -> c_int {
    guard(|| {
        let op = |r: &Reader<'_>| {
            let n = range_bytes(r.h, start, stop)?;
            // SAFETY: forwarded contract.
            let d = unsafe { crate::capi::boundary::slice_mut(buffer as *mut u8, n) }?;
            r.decode(None, |codec, _| {
                r.h.core.get_slice_with(codec, start, stop, d)
            })?;
            Ok(0)
        };
        // SAFETY: forwarded contract.
        unsafe { read_op(schunk, true, op) }
    })
}

/// Overwrites items `start..stop` from `buffer` (touched chunks are recompressed).
///
/// # Safety
/// `schunk` live; `buffer` valid for `(stop - start) * typesize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_set_slice_buffer(
    schunk: *mut blosc2_schunk,
    start: i64,
    stop: i64,
    buffer: *mut c_void,
) -> c_int {
    guard(|| {
        // Chunk by chunk, like c-blosc2: decode it (shared lock), patch, compress it holding
        // only the mutation mutex (callbacks may read this super-chunk), commit it (exclusive
        // lock). Chunks already updated stay so if a later one fails.
        // SAFETY: forwarded contract.
        let w = unsafe { writer(schunk) }?;
        let plan = |r: &Reader<'_>| {
            let n = range_bytes(r.h, start, stop)?;
            Ok((n, r.h.core.set_slice_spans(start, stop, n)?))
        };
        // SAFETY: forwarded contract.
        let (n, spans) = unsafe { read_op(schunk, true, plan) }?;
        // SAFETY: forwarded contract.
        let s = unsafe { crate::capi::boundary::slice(buffer as *const u8, n) }?;
        for (k, off, len, at) in spans {
            let old = |r: &Reader<'_>| {
                let nb = r.h.core.checked_span_nbytes(k, off, len)?;
                let mut buf = crate::sys::try_zeroed(nb).ok_or(Error::MemoryAlloc)?;
                if !(off == 0 && len == nb) {
                    r.decode(Some(k), |codec, scratch| {
                        r.h.core.decompress_chunk_in(codec, k, &mut buf, scratch)
                    })?;
                }
                Ok(buf)
            };
            // SAFETY: forwarded contract.
            let mut buf = unsafe { read_op(schunk, false, old) }?;
            buf.get_mut(off..off + len)
                .ok_or(Error::InvalidParam)?
                .copy_from_slice(&s[at..at + len]);
            let c = w.compress(k, &buf)?;
            let mut x = w.exclusive();
            let (sc, h) = x.parts();
            bracket(sc, h, true, |sc, h| {
                let r = h.core.update_chunk(k, &c);
                sync_counters(sc, h, true);
                r
            })?;
        }
        Ok(0)
    })
}

/// Gathers the items at `coords` into `buffer`.
///
/// # Safety
/// `schunk` live; `coords` valid for `ncoords` values; `buffer` for `ncoords * typesize`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_sparse_buffer(
    schunk: *mut blosc2_schunk,
    ncoords: i64,
    coords: *const i64,
    buffer: *mut c_void,
) -> c_int {
    // SAFETY: forwarded contract.
    guard(|| unsafe { sparse_buffer(schunk, ncoords, coords, buffer) })
}

/// The body of [`blosc2_schunk_get_sparse_buffer`] (also `b2nd_get_sparse_cbuffer`).
///
/// # Safety
/// As for [`blosc2_schunk_get_sparse_buffer`].
pub(crate) unsafe fn sparse_buffer(
    schunk: *mut blosc2_schunk,
    ncoords: i64,
    coords: *const i64,
    buffer: *mut c_void,
) -> Result<c_int> {
    let op = |r: &Reader<'_>| {
        let n = usize::try_from(ncoords).map_err(|_| Error::InvalidParam)?;
        if n > 0 && coords.is_null() {
            return Err(Error::NullPointer);
        }
        let cs: &[i64] = if n == 0 {
            &[]
        } else {
            // SAFETY: `ncoords` values by contract.
            unsafe { std::slice::from_raw_parts(coords, n) }
        };
        let bytes = n
            .checked_mul(r.h.core.cparams().typesize as usize)
            .ok_or(Error::InvalidParam)?;
        // SAFETY: forwarded contract.
        let d = unsafe { crate::capi::boundary::slice_mut(buffer as *mut u8, bytes) }?;
        r.decode(None, |codec, _| r.h.core.get_sparse_with(codec, cs, d))?;
        Ok(0)
    };
    // SAFETY: forwarded contract.
    unsafe { read_op(schunk, false, op) }
}

/// The chunks a slice touches (`start`/`stop` have one entry per dimension of the `b2nd`
/// metalayer, or one); `*chunks_idx` is `malloc`ed. Returns how many.
///
/// # Safety
/// `schunk` live; `start`/`stop` valid for ndim values; `chunks_idx` valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_get_slice_nchunks(
    schunk: *mut blosc2_schunk,
    start: *mut i64,
    stop: *mut i64,
    chunks_idx: *mut *mut i64,
) -> i64 {
    guard(|| {
        let op = |r: &Reader<'_>| {
            if start.is_null() || stop.is_null() || chunks_idx.is_null() {
                return Err(Error::NullPointer);
            }
            let ndim =
                r.h.core
                    .metalayers()
                    .iter()
                    .find(|(n, _)| n == "b2nd" || n == "caterva")
                    .map(|(_, c)| crate::b2nd_meta::deserialize(c, false).map(|(m, _)| m.ndim()))
                    .transpose()?
                    .unwrap_or(1);
            // SAFETY: `ndim` values each by contract.
            let (s, e) = unsafe {
                (
                    std::slice::from_raw_parts(start, ndim),
                    std::slice::from_raw_parts(stop, ndim),
                )
            };
            let idx = r.h.core.slice_nchunks(s, e)?;
            let bytes: Vec<u8> = idx.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let p = malloc_copy(&bytes) as *mut i64;
            if p.is_null() {
                return Err(Error::MemoryAlloc);
            }
            // SAFETY: valid out-pointer by contract.
            unsafe { *chunks_idx = p };
            Ok(idx.len() as i64)
        };
        // SAFETY: forwarded contract.
        unsafe { read_op(schunk, false, op) }
    })
}
