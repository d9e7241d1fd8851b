//! `b2nd_context_t`: `b2nd_create_ctx`, `b2nd_free_ctx` and the geometry a context
//! describes.

use super::*;

/// The context behind a pointer.
///
/// # Safety
/// `p` NULL or a live context.
pub(super) unsafe fn ctx_ref<'a>(p: *mut b2nd_context_t) -> Result<&'a mut b2nd_context_t> {
    if p.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: live by contract.
    Ok(unsafe { &mut *p })
}

/// The context's geometry (ndim checked).
pub(super) fn ctx_geometry(c: &b2nd_context_t) -> Result<Geometry> {
    let n = usize::try_from(c.ndim)
        .ok()
        .filter(|&n| n <= MAX_DIM)
        .ok_or(Error::InvalidParam)?;
    Geometry::new(&c.shape[..n], &c.chunkshape[..n], &c.blockshape[..n])
}

/// Creates a context: the storage and cparams are copied (`cparams.blocksize` set to the
/// block's bytes), `urlpath`, `dparams`, `io` and the metalayers are referenced, as in c-blosc2.
/// A NULL dtype becomes `"|S<typesize>"`. NULL on bad arguments.
///
/// # Safety
/// `b2_storage` NULL or valid; `shape`/`chunkshape`/`blockshape` valid for `ndim` values;
/// `dtype` NULL or a C string; `metalayers` valid for `nmetalayers` entries.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn b2nd_create_ctx(
    b2_storage: *const blosc2_storage,
    ndim: i8,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
    dtype: *const c_char,
    dtype_format: i8,
    metalayers: *const blosc2_metalayer,
    nmetalayers: i32,
) -> *mut b2nd_context_t {
    guard(|| {
        let n = usize::try_from(ndim)
            .ok()
            .filter(|&n| n <= MAX_DIM)
            .ok_or(Error::InvalidParam)?;
        let nmeta = usize::try_from(nmetalayers)
            .ok()
            .filter(|&m| m <= B2ND_MAX_METALAYERS)
            .ok_or(Error::InvalidParam)?;
        if n > 0 && (shape.is_null() || chunkshape.is_null() || blockshape.is_null()) {
            return Err(Error::NullPointer);
        }
        if nmeta > 0 && metalayers.is_null() {
            return Err(Error::NullPointer);
        }
        let mut c = b2nd_context_s {
            ndim,
            shape: [0; 16],
            chunkshape: [0; 16],
            blockshape: [0; 16],
            dtype: std::ptr::null_mut(),
            dtype_format,
            b2_storage: std::ptr::null_mut(),
            metalayers: [blosc2_metalayer {
                name: std::ptr::null_mut(),
                content: std::ptr::null_mut(),
                content_len: 0,
            }; 15],
            nmetalayers,
        };
        if n > 0 {
            // SAFETY: each array holds `ndim` values by contract.
            unsafe {
                c.shape[..n].copy_from_slice(std::slice::from_raw_parts(shape, n));
                c.chunkshape[..n].copy_from_slice(std::slice::from_raw_parts(chunkshape, n));
                c.blockshape[..n].copy_from_slice(std::slice::from_raw_parts(blockshape, n));
            }
        }
        for i in 0..n {
            let (s, ch, b) = (c.shape[i], c.chunkshape[i], c.blockshape[i]);
            if s < 0 || ch < 0 || b < 0 || (b == 0 && ch != 0) {
                return Err(Error::InvalidParam);
            }
        }
        if nmeta > 0 {
            // SAFETY: `nmetalayers` entries by contract.
            c.metalayers[..nmeta]
                .copy_from_slice(unsafe { std::slice::from_raw_parts(metalayers, nmeta) });
        }
        let mut st = if b2_storage.is_null() {
            BLOSC2_STORAGE_DEFAULTS
        } else {
            // SAFETY: NULL or a valid storage by contract.
            unsafe { *b2_storage }
        };
        let mut cp = if st.cparams.is_null() {
            BLOSC2_CPARAMS_DEFAULTS
        } else {
            // SAFETY: the storage's cparams are NULL or valid by contract.
            unsafe { *st.cparams }
        };
        let mut blocknitems = 1i32;
        for &b in &c.blockshape[..n] {
            blocknitems = blocknitems.checked_mul(b).ok_or(Error::InvalidParam)?;
        }
        cp.blocksize = blocknitems
            .checked_mul(cp.typesize)
            .filter(|&b| b >= 0)
            .ok_or(Error::InvalidParam)?;
        let dt = if dtype.is_null() {
            format!("|S{}", cp.typesize).into_bytes()
        } else {
            // SAFETY: a C string by contract.
            unsafe { CStr::from_ptr(dtype) }.to_bytes().to_vec()
        };
        let cpp = malloc_copy(bytes_of(&cp)) as *mut blosc2_cparams;
        if cpp.is_null() {
            return Err(Error::MemoryAlloc);
        }
        st.cparams = cpp;
        let stp = malloc_copy(bytes_of(&st)) as *mut blosc2_storage;
        let dtp = strdup(&dt).unwrap_or(std::ptr::null_mut());
        c.b2_storage = stp;
        c.dtype = dtp;
        let ctx = malloc_copy(bytes_of(&c)) as *mut b2nd_context_t;
        if stp.is_null() || dtp.is_null() || ctx.is_null() {
            // SAFETY: each is NULL or malloc'ed above, released once.
            unsafe {
                libc::free(cpp as *mut c_void);
                libc::free(stp as *mut c_void);
                libc::free(dtp as *mut c_void);
                libc::free(ctx as *mut c_void);
            }
            return Err(Error::MemoryAlloc);
        }
        Ok(ctx)
    })
}

/// The bytes of a plain-old-data value (for `malloc_copy`).
pub(super) fn bytes_of<T: Copy>(v: &T) -> &[u8] {
    // SAFETY: `T` is a `#[repr(C)]` Copy struct; reading its bytes (padding included, which is
    // only copied, never interpreted) is sound for the lifetime of the borrow.
    unsafe { std::slice::from_raw_parts(v as *const T as *const u8, std::mem::size_of::<T>()) }
}

/// Frees a context made by [`b2nd_create_ctx`] (its storage and cparams copies and dtype).
///
/// # Safety
/// `ctx` NULL or a live context of ours, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn b2nd_free_ctx(ctx: *mut b2nd_context_t) -> c_int {
    // SAFETY: forwarded contract.
    guard(|| unsafe { free_ctx(ctx) })
}

/// The body of [`b2nd_free_ctx`] (also the copies of views).
///
/// # Safety
/// As for [`b2nd_free_ctx`].
pub(super) unsafe fn free_ctx(ctx: *mut b2nd_context_t) -> Result<c_int> {
    // SAFETY: forwarded contract.
    let c = unsafe { ctx_ref(ctx) }?;
    // SAFETY: the pointers were malloc'ed by `b2nd_create_ctx`; each is freed once.
    unsafe {
        if !c.b2_storage.is_null() {
            libc::free((*c.b2_storage).cparams as *mut c_void);
            libc::free(c.b2_storage as *mut c_void);
        }
        libc::free(c.dtype as *mut c_void);
        libc::free(ctx as *mut c_void);
    }
    Ok(0)
}
