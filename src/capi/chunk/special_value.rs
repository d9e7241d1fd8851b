//! Special-value chunks: `blosc2_chunk_zeros`, `_nans`, `_uninit`, `_repeatval`.

use super::*;

/// Which special chunk to build.
#[derive(Clone, Copy)]
pub(crate) enum SpecialCtor {
    Zeros,
    Nans,
    Uninit,
    Value(*const c_void),
}

/// Shared body of the `blosc2_chunk_*` constructors. Like c-blosc2 they go through a
/// compression context, so the environment overrides and filter checks apply (b2nd's
/// zero and fill chunks too).
///
/// # Safety
/// `dest` valid for `destsize` bytes; a `Value` pointer valid for `cparams.typesize` bytes.
pub(crate) unsafe fn special_chunk(
    cparams: &blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
    which: SpecialCtor,
) -> Result<usize> {
    let extra = match which {
        SpecialCtor::Value(_) => i64::from(cparams.typesize),
        _ => 0,
    };
    if i64::from(destsize) < EXTENDED_HEADER_LEN as i64 + extra {
        return Err(Error::Data);
    }
    if cparams.typesize <= 0 {
        return Err(Error::InvalidParam);
    }
    if nbytes > 0 && nbytes % cparams.typesize != 0 {
        return Err(Error::Data);
    }
    let ctx = create_cctx(cparams, env::from_process).ok_or(Error::NullPointer)?;
    let cp = core_cparams(&ctx.cparams);
    // SAFETY: forwarded contract.
    let d = unsafe { output(dest, destsize) }?;
    match which {
        SpecialCtor::Zeros => special::zeros(&cp, nbytes, d),
        SpecialCtor::Nans => special::nans(&cp, nbytes, d),
        SpecialCtor::Uninit => special::uninit(&cp, nbytes, d),
        SpecialCtor::Value(v) => {
            // SAFETY: the value holds `typesize` bytes by the C contract.
            let value = unsafe { slice(v as *const u8, len_of(cp.typesize)) }?;
            special::repeatval(&cp, nbytes, d, value)
        }
    }
}

/// [`special_chunk`] as the `blosc2_chunk_*` entry points return it (size or error code).
///
/// # Safety
/// As for [`special_chunk`].
unsafe fn special_chunk_c(
    cparams: &blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
    which: SpecialCtor,
) -> c_int {
    // SAFETY: forwarded contract.
    guard(|| Ok(unsafe { special_chunk(cparams, nbytes, dest, destsize, which) }? as c_int))
}

/// Writes a 32-byte chunk standing for `nbytes` zero bytes.
///
/// # Safety
/// `dest` valid for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_zeros(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { special_chunk_c(&cparams, nbytes, dest, destsize, SpecialCtor::Zeros) }
}

/// Writes a 32-byte chunk standing for NaNs (float32 for typesize 4, float64 for 8).
///
/// # Safety
/// `dest` valid for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_nans(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { special_chunk_c(&cparams, nbytes, dest, destsize, SpecialCtor::Nans) }
}

/// Writes a 32-byte chunk whose contents are undefined.
///
/// # Safety
/// `dest` valid for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_uninit(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { special_chunk_c(&cparams, nbytes, dest, destsize, SpecialCtor::Uninit) }
}

/// Writes a (32 + typesize)-byte chunk standing for `repeatval` repeated.
///
/// # Safety
/// `dest` valid for `destsize` bytes; `repeatval` for `cparams.typesize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_repeatval(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
    repeatval: *const c_void,
) -> c_int {
    let which = SpecialCtor::Value(repeatval);
    // SAFETY: forwarded contract.
    unsafe { special_chunk_c(&cparams, nbytes, dest, destsize, which) }
}
