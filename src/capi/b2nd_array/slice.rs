//! Whole arrays and hyperslabs to and from C buffers (`b2nd_from_cbuffer`,
//! `b2nd_to_cbuffer`, `b2nd_get_slice_cbuffer`, `b2nd_set_slice_cbuffer`) and hyperslabs into
//! new arrays (`b2nd_get_slice`).

use super::*;

/// A new array for the context holding `buffer` (row-major, `nitems * typesize` bytes).
///
/// # Safety
/// `ctx` live; `array` writable; `buffer` valid for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_cbuffer(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        construct(ctx, array, |c| {
            if buffer.is_null() {
                return Err(Error::NullPointer);
            }
            let p = array_new(c, BLOSC2_SPECIAL_ZERO)?;
            let r = (|| {
                let a = &mut *p;
                let g = geometry(a)?;
                let mut st = store(a)?;
                let need = g.array_nbytes(st.typesize())?;
                if buffersize < need {
                    return Err(Error::InvalidParam);
                }
                if g.nitems() == 0 {
                    return Ok(());
                }
                let src = std::slice::from_raw_parts(buffer as *const u8, buffersize as usize);
                let zero = vec![0i64; g.ndim()];
                core::set_slice(&mut st, &g, &zero, g.shape(), src, g.shape())
            })();
            if let Err(e) = r {
                drop_array(p, true);
                return Err(e);
            }
            Ok(p)
        })
    }
}

/// Copies the whole array into `buffer` (row-major).
///
/// # Safety
/// `array` live; `buffer` valid for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_to_cbuffer(
    array: *const b2nd_array_t,
    buffer: *mut c_void,
    buffersize: i64,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if buffer.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(a)?;
        let g = geometry(a)?;
        let st = store(a)?;
        if buffersize < g.array_nbytes(st.typesize())? {
            return Err(Error::InvalidParam);
        }
        if g.nitems() == 0 {
            return Ok(0);
        }
        // SAFETY: `buffersize` bytes by contract (non-negative: checked above).
        let dst = unsafe { std::slice::from_raw_parts_mut(buffer as *mut u8, buffersize as usize) };
        let zero = vec![0i64; g.ndim()];
        core::get_slice(&st, &g, &zero, g.shape(), dst, g.shape())?;
        Ok(0)
    })
}

/// Reads `ndim` values (NULL only when `ndim == 0`).
///
/// # Safety
/// `p` NULL or valid for `n` values.
pub(super) unsafe fn vals<T: Copy>(p: *const T, n: usize) -> Result<Vec<T>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: valid for `n` values by contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }.to_vec())
}

/// Reads the slice `start..stop` into `buffer`, a row-major array of shape `buffershape`.
///
/// # Safety
/// `array` live; `start`/`stop`/`buffershape` valid for ndim values; `buffer` for
/// `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_slice_cbuffer(
    array: *const b2nd_array_t,
    start: *const i64,
    stop: *const i64,
    buffer: *mut c_void,
    buffershape: *const i64,
    buffersize: i64,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if start.is_null() || stop.is_null() || buffershape.is_null() || buffer.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(a)?;
        let g = geometry(a)?;
        let n = g.ndim();
        // SAFETY: ndim values each by contract.
        let (s0, s1, bs) = unsafe { (vals(start, n)?, vals(stop, n)?, vals(buffershape, n)?) };
        let len = usize::try_from(buffersize).map_err(|_| Error::InvalidParam)?;
        // SAFETY: `buffersize` bytes by contract.
        let dst = unsafe { std::slice::from_raw_parts_mut(buffer as *mut u8, len) };
        let st = store(a)?;
        core::get_slice(&st, &g, &s0, &s1, dst, &bs)?;
        Ok(0)
    })
}

/// Writes `buffer` (row-major, shape `buffershape`) into the slice `start..stop`.
///
/// # Safety
/// `array` live; `start`/`stop`/`buffershape` valid for ndim values; `buffer` for
/// `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_set_slice_cbuffer(
    buffer: *const c_void,
    buffershape: *const i64,
    buffersize: i64,
    start: *const i64,
    stop: *const i64,
    array: *mut b2nd_array_t,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if start.is_null() || stop.is_null() || buffer.is_null() {
            return Err(Error::NullPointer);
        }
        locked(a, |a| {
            refresh_if_stale(a)?;
            let g = geometry(a)?;
            let n = g.ndim();
            // SAFETY: ndim values each by contract.
            let (s0, s1, bs) = unsafe { (vals(start, n)?, vals(stop, n)?, vals(buffershape, n)?) };
            let len = usize::try_from(buffersize).map_err(|_| Error::InvalidParam)?;
            // SAFETY: `buffersize` bytes by contract.
            let src = unsafe { std::slice::from_raw_parts(buffer as *const u8, len) };
            let mut st = store(a)?;
            core::set_slice(&mut st, &g, &s0, &s1, src, &bs)?;
            Ok(0)
        })
    })
}

/// Copies the region of `src` that `map` gives for each chunk of `dst` (whose chunk regions
/// are in `dst`'s coordinates) into `dst`, chunk by chunk. The two regions have the same items
/// in the same row-major order (`map` only adds or drops extents of 1, or shifts).
pub(super) fn copy_regions(
    src: &b2nd_array_t,
    dst: &b2nd_array_t,
    map: impl Fn(&[i64], &[i64]) -> (Vec<i64>, Vec<i64>),
) -> Result<()> {
    let (gs, gd) = (geometry(src)?, geometry(dst)?);
    let (ss, mut sd) = (store(src)?, store(dst)?);
    if gd.nitems() == 0 {
        return Ok(());
    }
    let ts = ss.typesize();
    if ts != sd.typesize() {
        return Err(Error::InvalidParam);
    }
    if gd.ndim() == 0 {
        let (a, b) = map(&[], &[]);
        let mut one = vec![0u8; ts as usize];
        core::get_slice(&ss, &gs, &a, &b, &mut one, &vec![1; gs.ndim()])?;
        return core::set_slice(&mut sd, &gd, &[], &[], &one, &[]);
    }
    let zero = vec![0i64; gd.ndim()];
    let mut buf = Vec::new();
    for c in chunks_touched(&gd, &zero, gd.shape())? {
        let (a, b) = map(&c.start, &c.stop);
        let shape_s: Vec<i64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
        let shape_d: Vec<i64> = c.start.iter().zip(&c.stop).map(|(x, y)| y - x).collect();
        let n: i64 = shape_d.iter().product::<i64>() * i64::from(ts);
        buf.resize(n as usize, 0);
        core::get_slice(&ss, &gs, &a, &b, &mut buf, &shape_s)?;
        core::set_slice(&mut sd, &gd, &c.start, &c.stop, &buf, &shape_d)?;
    }
    Ok(())
}

/// A new array (per `ctx`: storage, chunk and block shapes) holding `src[start..stop]`;
/// `ctx`'s ndim and shape are overwritten, as in c-blosc2.
///
/// # Safety
/// `ctx` live; `array` writable; `src` live; `start`/`stop` valid for ndim values.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_slice(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    src: *const b2nd_array_t,
    start: *const i64,
    stop: *const i64,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let s = unsafe { arr(src) }?;
        // SAFETY: forwarded contract.
        let c = unsafe { ctx_ref(ctx) }?;
        if start.is_null() || stop.is_null() || array.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(s)?;
        let g = geometry(s)?;
        let n = g.ndim();
        // SAFETY: ndim values each by contract.
        let (s0, s1) = unsafe { (vals(start, n)?, vals(stop, n)?) };
        g.check_slice(&s0, &s1)?;
        c.ndim = n as i8;
        for i in 0..n {
            c.shape[i] = s1[i] - s0[i];
        }
        let p = array_new(c, BLOSC2_SPECIAL_ZERO)?;
        // SAFETY: `p` is ours.
        let r = copy_regions(s, unsafe { &*p }, |a, b| {
            (
                a.iter().zip(&s0).map(|(x, o)| x + o).collect(),
                b.iter().zip(&s0).map(|(x, o)| x + o).collect(),
            )
        });
        if let Err(e) = r {
            drop_array(p, true);
            return Err(e);
        }
        // SAFETY: writable by contract.
        unsafe { *array = p };
        Ok(0)
    })
}
