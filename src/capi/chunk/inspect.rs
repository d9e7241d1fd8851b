//! Compressed-buffer inspection: the `cbuffer_*` functions, which read the first 16 bytes only.

use super::*;

/// The first 16 bytes of a chunk.
///
/// # Safety
/// `p` must be NULL or point to at least 16 readable bytes.
unsafe fn head16<'a>(p: *const c_void) -> Result<&'a [u8]> {
    // SAFETY: forwarded contract.
    unsafe { slice(p as *const u8, MIN_HEADER_LEN) }
}

/// Writes `v` through `p` when `p` is not NULL.
///
/// # Safety
/// `p` must be NULL or writable.
unsafe fn put<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-NULL and writable by this function's contract.
        unsafe { *p = v };
    }
}

/// nbytes, cbytes and blocksize of a chunk (any out-pointer may be NULL); on error they are
/// set to 0 and the error code is returned.
///
/// # Safety
/// `cbuffer` must hold a 16-byte header; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_cbuffer_sizes(
    cbuffer: *const c_void,
    nbytes: *mut i32,
    cbytes: *mut i32,
    blocksize: *mut i32,
) -> c_int {
    let (rc, (nb, cb, bs)) = match caught(|| {
        // SAFETY: forwarded contract.
        header::cbuffer_sizes(unsafe { head16(cbuffer) }?)
    }) {
        Ok(v) => (0, v),
        Err(e) => (e.code(), (0, 0, 0)),
    };
    // SAFETY: forwarded contract.
    unsafe {
        put(nbytes, nb);
        put(cbytes, cb);
        put(blocksize, bs);
    }
    rc
}

/// Blosc1 variant of [`blosc2_cbuffer_sizes`] with `size_t` outputs.
///
/// # Safety
/// As for [`blosc2_cbuffer_sizes`].
#[no_mangle]
pub unsafe extern "C" fn blosc1_cbuffer_sizes(
    cbuffer: *const c_void,
    nbytes: *mut usize,
    cbytes: *mut usize,
    blocksize: *mut usize,
) {
    // SAFETY: forwarded contract.
    let sizes = caught(|| header::cbuffer_sizes(unsafe { head16(cbuffer) }?));
    let (nb, cb, bs) = sizes.unwrap_or((0, 0, 0));
    // SAFETY: forwarded contract.
    unsafe {
        put(nbytes, nb as usize);
        put(cbytes, cb as usize);
        put(blocksize, bs as usize);
    }
}

/// Checks that `cbuffer` is a chunk of exactly `cbytes` bytes; stores its nbytes (0 on error).
///
/// # Safety
/// `cbuffer` must hold `cbytes` bytes (at least 16 when `cbytes >= 16`); `nbytes` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn blosc1_cbuffer_validate(
    cbuffer: *const c_void,
    cbytes: usize,
    nbytes: *mut usize,
) -> c_int {
    let r = caught(|| {
        if cbytes < MIN_HEADER_LEN {
            return Err(Error::WriteBuffer);
        }
        // SAFETY: forwarded contract.
        header::cbuffer_validate(unsafe { head16(cbuffer) }?, cbytes)
    });
    let (rc, nb) = match r {
        Ok(n) => (0, n as usize),
        Err(e) => (e.code(), 0),
    };
    // SAFETY: forwarded contract.
    unsafe { put(nbytes, nb) };
    rc
}

/// typesize and flags of a chunk (0 and 0 when the header is invalid).
///
/// # Safety
/// `cbuffer` must hold a 16-byte header; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc1_cbuffer_metainfo(
    cbuffer: *const c_void,
    typesize: *mut usize,
    flags: *mut c_int,
) {
    let (ts, fl) = caught(|| {
        // SAFETY: forwarded contract.
        header::cbuffer_metainfo(unsafe { head16(cbuffer) }?)
    })
    .unwrap_or((0, 0));
    // SAFETY: forwarded contract.
    unsafe {
        put(typesize, usize::from(ts));
        put(flags, c_int::from(fl));
    }
}

/// Format version and codec version of a chunk (0 and 0 when the header is invalid).
///
/// # Safety
/// `cbuffer` must hold a 16-byte header; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_cbuffer_versions(
    cbuffer: *const c_void,
    version: *mut c_int,
    versionlz: *mut c_int,
) {
    let (v, vlz) = caught(|| {
        // SAFETY: forwarded contract.
        header::cbuffer_versions(unsafe { head16(cbuffer) }?)
    })
    .unwrap_or((0, 0));
    // SAFETY: forwarded contract.
    unsafe {
        put(version, c_int::from(v));
        put(versionlz, c_int::from(vlz));
    }
}

/// The codec library name of a chunk ("BloscLZ", "LZ4", "Zlib", "Zstd", or a registered
/// codec's name), NULL when the header is invalid.
///
/// # Safety
/// `cbuffer` must hold a 16-byte header.
#[no_mangle]
pub unsafe extern "C" fn blosc2_cbuffer_complib(cbuffer: *const c_void) -> *const c_char {
    guard(|| {
        // SAFETY: forwarded contract.
        let head = unsafe { head16(cbuffer) }?;
        Ok(registry::complib_name(
            ChunkHeader::read(head, false)?.compformat(),
        ))
    })
}
