//! Making and opening super-chunks: `blosc2_schunk_new` for every storage and backend, and
//! `blosc2_schunk_open`, `open_offset`, `open_udio`, `open_offset_udio`.

use super::*;
use crate::capi::boundary::cstr;
use crate::capi::chunk::core_cparams;
use crate::capi::globals;
use crate::capi::io::{destroy, new_core_udio, resolve, Backend};
use crate::frame::lock::{self, FrameLock};
use crate::frame::Frame;
use std::ffi::CStr;
use std::path::PathBuf;

/// `file:///` prefixes are stripped like c-blosc2 does (all 8 bytes).
pub(crate) fn strip_url(s: &str) -> &str {
    s.strip_prefix("file:///").unwrap_or(s)
}

fn io_or_default(io: *const blosc2_io) -> blosc2_io {
    if io.is_null() {
        BLOSC2_IO_DEFAULTS
    } else {
        // SAFETY: a non-NULL io is a valid struct by the C contract.
        unsafe { *io }
    }
}

/// Creates a super-chunk for a C storage description (`template`: parameters when the storage
/// has none).
///
/// # Safety
/// `storage` NULL or a valid struct whose pointers are NULL or valid.
pub(crate) unsafe fn new_from_storage(
    storage: *const blosc2_storage,
    default_cparams: blosc2_cparams,
    default_dparams: blosc2_dparams,
    build: impl FnOnce(NewStorage<'_>, crate::chunk::CParams, DParams) -> Result<SChunk>,
) -> Result<*mut blosc2_schunk> {
    let st = if storage.is_null() {
        BLOSC2_STORAGE_DEFAULTS
    } else {
        // SAFETY: valid by contract.
        unsafe { *storage }
    };
    let cparams = if st.cparams.is_null() {
        default_cparams
    } else {
        // SAFETY: valid by contract.
        unsafe { *st.cparams }
    };
    let dparams = if st.dparams.is_null() {
        default_dparams
    } else {
        // SAFETY: valid by contract.
        unsafe { *st.dparams }
    };
    let url = if st.urlpath.is_null() {
        None
    } else {
        // SAFETY: NUL-terminated by contract.
        let s = unsafe { cstr(st.urlpath) }?;
        let s = strip_url(s);
        let s = s.strip_suffix(['/', '\\']).unwrap_or(s);
        if s.is_empty() {
            return Err(Error::InvalidParam);
        }
        Some(s.to_string())
    };
    let path = url.as_deref().map(Path::new);
    let target = match (st.contiguous, path) {
        (false, None) => NewStorage::Plain,
        (true, None) => NewStorage::Memory,
        (true, Some(p)) => NewStorage::File(p),
        (false, Some(p)) => NewStorage::Sparse(p),
    };
    let core_cp = core_cparams(&cparams);
    let core_dp = DParams {
        nthreads: dparams.nthreads.max(1),
    };
    if cparams.typesize <= 0 {
        return Err(Error::InvalidParam);
    }
    let core = build(target, core_cp, core_dp)?;
    let sp = alloc_block(
        core,
        url.as_deref().map(str::as_bytes),
        cparams,
        dparams,
        io_or_default(st.io),
    );
    if sp.is_err() {
        if let Some(p) = path {
            let _ = std::fs::remove_file(p);
            let _ = std::fs::remove_dir_all(p);
        }
    }
    sp
}

/// `blosc2_schunk_new` for every backend: the native constructors for the filesystem backend
/// (plus the `.b2lock` lock when requested), [`new_core_udio`] for cframe files of any other.
///
/// # Safety
/// `storage` NULL or a valid struct whose pointers are NULL or valid.
pub(crate) unsafe fn schunk_new(storage: *mut blosc2_storage) -> Result<*mut blosc2_schunk> {
    let io = if storage.is_null() {
        std::ptr::null()
    } else {
        // SAFETY: valid by contract.
        unsafe { (*storage).io as *const blosc2_io }
    };
    let (c, d) = (BLOSC2_CPARAMS_DEFAULTS, BLOSC2_DPARAMS_DEFAULTS);
    // SAFETY: forwarded contract.
    match unsafe { resolve(io) }? {
        Backend::Native { locking } => {
            // SAFETY: forwarded contract.
            let p = unsafe { new_from_storage(storage, c, d, SChunk::new) }?;
            if locking {
                // SAFETY: `p` was just created.
                if let Err(e) = unsafe { enable_locking(p) } {
                    // SAFETY: `p` is ours and unused elsewhere.
                    let _ = unsafe { free_block(p) };
                    return Err(e);
                }
            }
            Ok(p)
        }
        Backend::Callbacks(cb) => {
            let build = |t: NewStorage<'_>, c, d| match t {
                NewStorage::File(p) => new_core_udio(cb, p, true, c, d),
                NewStorage::Sparse(p) => new_core_udio(cb, p, false, c, d),
                _ => SChunk::new(t, c, d),
            };
            // SAFETY: forwarded contract.
            unsafe { new_from_storage(storage, c, d, build) }
        }
    }
}

/// The path a C urlpath names (`file:///` stripped, like c-blosc2).
fn url_path(s: &str) -> PathBuf {
    PathBuf::from(s.strip_prefix("file:///").unwrap_or(s))
}

/// Opens the frame at `urlpath` + `offset` through `udio`.
///
/// # Safety
/// `urlpath` NULL or a C string; `udio` NULL or valid.
unsafe fn open_udio_at(
    urlpath: *const c_char,
    offset: i64,
    udio: *const blosc2_io,
) -> Result<*mut blosc2_schunk> {
    // SAFETY: forwarded contract.
    let s = unsafe { cstr(urlpath) }?;
    let io = if udio.is_null() {
        BLOSC2_IO_DEFAULTS
    } else {
        // SAFETY: valid by contract.
        unsafe { *udio }
    };
    // SAFETY: forwarded contract.
    match unsafe { resolve(&io) }? {
        // SAFETY: forwarded contract.
        Backend::Native { locking } => unsafe { open_native(urlpath, offset, io, locking) },
        Backend::Callbacks(cb) => {
            let path = url_path(s);
            let off = u64::try_from(offset).map_err(|_| Error::InvalidParam)?;
            // Like c-blosc2, a directory is an sframe (its files read through the backend).
            let (frame, loc) = if path.is_dir() {
                if off != 0 {
                    return Err(Error::InvalidParam);
                }
                let frame = Frame::open_sframe_udio(cb, &path)?;
                (frame, Location::Sparse(path))
            } else {
                let frame = Frame::open_udio(cb, &path, off)?;
                (frame, Location::File { path, offset: off })
            };
            let core = SChunk::from_frame(frame, loc, globals::nthreads());
            // SAFETY: NUL-terminated by contract.
            let verbatim = unsafe { CStr::from_ptr(urlpath) }.to_bytes();
            super::wrap_opened(core, Some(verbatim), io)
        }
    }
}

/// Opens a frame with the native filesystem backend. With `locking`, the frame is read under
/// the shared lock (so a concurrent locked writer cannot tear what we read) and the handle keeps
/// the lock, remembering the generation it read.
///
/// # Safety
/// `urlpath` a C string.
unsafe fn open_native(
    urlpath: *const c_char,
    offset: i64,
    io: blosc2_io,
    locking: bool,
) -> Result<*mut blosc2_schunk> {
    // SAFETY: forwarded contract.
    let s = unsafe { cstr(urlpath) }?;
    let off = u64::try_from(offset).map_err(|_| Error::InvalidParam)?;
    let path = url_path(s);
    let mut lk = None;
    if locking {
        // Like c-blosc2, a missing frame fails before any sidecar is created.
        if !path.exists() {
            return Err(Error::FileOpen);
        }
        let mut l = FrameLock::new(&path, path.is_dir());
        l.acquire(false)?;
        lk = Some(l);
    }
    let core = SChunk::open_offset(&path, off, globals::nthreads());
    if let Some(l) = lk.as_mut() {
        l.release()?;
    }
    // SAFETY: NUL-terminated by contract.
    let verbatim = unsafe { CStr::from_ptr(urlpath) }.to_bytes();
    let p = super::wrap_opened(core?, Some(verbatim), io)?;
    if let Some(l) = lk {
        // SAFETY: `p` was just created and is not shared yet.
        unsafe { parts(p) }?.1.lock = Some(l);
    }
    Ok(p)
}

/// `blosc2_schunk_open` / `open_offset`: the default backend, locking as `BLOSC_LOCKING` says.
///
/// # Safety
/// `urlpath` a C string.
pub(crate) unsafe fn open_default(
    urlpath: *const c_char,
    offset: i64,
) -> Result<*mut blosc2_schunk> {
    // SAFETY: forwarded contract.
    unsafe {
        open_native(
            urlpath,
            offset,
            BLOSC2_IO_DEFAULTS,
            lock::env_requests_locking(),
        )
    }
}

/// Shared failure path of the udio openers: c-blosc2 destroys the backend params.
///
/// # Safety
/// As [`open_udio_at`].
unsafe fn open_udio_or_destroy(
    urlpath: *const c_char,
    offset: i64,
    udio: *const blosc2_io,
) -> *mut blosc2_schunk {
    guard(|| {
        if urlpath.is_null() {
            return Ok(std::ptr::null_mut());
        }
        // SAFETY: forwarded contract.
        let r = unsafe { open_udio_at(urlpath, offset, udio) };
        if r.is_err() {
            // SAFETY: forwarded contract.
            unsafe { destroy(udio) };
        }
        r
    })
}

/// `blosc2_schunk *blosc2_schunk_open_udio(const char *urlpath, const blosc2_io *udio)`.
///
/// # Safety
/// `urlpath` NULL or a C string; `udio` NULL or valid (its params must outlive the schunk).
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open_udio(
    urlpath: *const c_char,
    udio: *const blosc2_io,
) -> *mut blosc2_schunk {
    // SAFETY: forwarded contract.
    unsafe { open_udio_or_destroy(urlpath, 0, udio) }
}

/// `blosc2_schunk *blosc2_schunk_open_offset_udio(const char *urlpath, int64_t offset,
/// const blosc2_io *udio)`.
///
/// # Safety
/// As [`blosc2_schunk_open_udio`].
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open_offset_udio(
    urlpath: *const c_char,
    offset: i64,
    udio: *const blosc2_io,
) -> *mut blosc2_schunk {
    // SAFETY: forwarded contract.
    unsafe { open_udio_or_destroy(urlpath, offset, udio) }
}

/// Opens a frame at `urlpath` + `offset` (directories are sframes).
///
/// # Safety
/// `urlpath` a NUL-terminated string.
unsafe fn open_at(urlpath: *const c_char, offset: i64) -> Result<*mut blosc2_schunk> {
    // SAFETY: forwarded contract (the I/O module handles BLOSC_LOCKING).
    unsafe { open_default(urlpath, offset) }
}

/// Opens a cframe file or sframe directory.
///
/// # Safety
/// `urlpath` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open(urlpath: *const c_char) -> *mut blosc2_schunk {
    // SAFETY: forwarded contract.
    guard(|| unsafe { open_at(urlpath, 0) })
}

/// Opens the cframe starting at byte `offset` of `urlpath`.
///
/// # Safety
/// `urlpath` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open_offset(
    urlpath: *const c_char,
    offset: i64,
) -> *mut blosc2_schunk {
    // SAFETY: forwarded contract.
    guard(|| unsafe { open_at(urlpath, offset) })
}
