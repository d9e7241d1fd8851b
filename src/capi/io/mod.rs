//! I/O backends: the registry (`blosc2_register_io_cb`, `blosc2_get_io_cb`), the two built-in
//! backends ([`stdio`]: id 0 filesystem, [`mmap`]: id 1), the bridge that lets the frame layer
//! do all its I/O through a backend's C callbacks (`CallbackIo`, implementing
//! [`UserIo`]), the `blosc2_schunk_open_udio` / `open_offset_udio` entry points, and the
//! per-handle file locking and stale-handle re-sync that every super-chunk operation goes
//! through (`bracket`).
//!
//! Registry semantics (c-blosc2 3.3): user ids must be >= 160 (`BLOSC2_IO_REGISTERED`, else
//! `BLOSC2_ERROR_PLUGIN_IO`); the struct is copied; registering an id again under the same name
//! succeeds and changes nothing, under another name fails. Registrations survive
//! `blosc2_destroy`. `blosc2_get_io_cb` returns NULL while the library is not initialised and for
//! unknown ids; the built-ins are entered on first request, so they are always found after
//! `blosc2_init`.

pub mod copy;
pub mod mmap;
pub mod stdio;

use super::boundary::{cstr, guard_int, guard_ptr};
use super::globals;
use super::schunk::{exclusive, new_from_storage, parts, sync_counters, Handle};
use super::types::{
    blosc2_io, blosc2_io_cb, blosc2_schunk, blosc2_stdio_params, blosc2_storage,
    BLOSC2_CPARAMS_DEFAULTS, BLOSC2_DPARAMS_DEFAULTS, BLOSC2_IO_DEFAULTS, BLOSC2_IO_FILESYSTEM,
    BLOSC2_IO_FILESYSTEM_MMAP, BLOSC2_IO_REGISTERED,
};
use crate::error::{Error, Result};
use crate::frame::lock::{self, FrameLock};
use crate::frame::udio::{UserIo, UserStream};
use crate::frame::Frame;
use crate::schunk::{Location, NewStorage, SChunk};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Entries the registry holds at most (the reference's `UINT8_MAX`).
const CAPACITY: usize = 255;

/// A registered backend: the copied struct (boxed, so the pointer `blosc2_get_io_cb` hands out
/// stays put) and an owned copy of its name for comparisons.
struct Entry {
    cb: Box<blosc2_io_cb>,
    name: Option<CString>,
}

// SAFETY: entries hold C function pointers and a name pointer that the C contract makes valid
// process-wide; they are only read under the registry lock or handed back to C.
unsafe impl Send for Entry {}

static IOS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn ios() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    IOS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The built-in filesystem backend.
fn stdio_cb() -> blosc2_io_cb {
    blosc2_io_cb {
        id: BLOSC2_IO_FILESYSTEM as u8,
        name: c"filesystem".as_ptr() as *mut c_char,
        is_allocation_necessary: true,
        open: Some(stdio::blosc2_stdio_open),
        close: Some(stdio::blosc2_stdio_close),
        size: Some(stdio::blosc2_stdio_size),
        write: Some(stdio::blosc2_stdio_write),
        read: Some(stdio::blosc2_stdio_read),
        truncate: Some(stdio::blosc2_stdio_truncate),
        destroy: Some(stdio::blosc2_stdio_destroy),
    }
}

/// The built-in mmap backend.
fn mmap_cb() -> blosc2_io_cb {
    blosc2_io_cb {
        id: BLOSC2_IO_FILESYSTEM_MMAP as u8,
        name: c"filesystem_mmap".as_ptr() as *mut c_char,
        is_allocation_necessary: false,
        open: Some(mmap::blosc2_stdio_mmap_open),
        close: Some(mmap::blosc2_stdio_mmap_close),
        size: Some(mmap::blosc2_stdio_mmap_size),
        write: Some(mmap::blosc2_stdio_mmap_write),
        read: Some(mmap::blosc2_stdio_mmap_read),
        truncate: Some(mmap::blosc2_stdio_mmap_truncate),
        destroy: Some(mmap::blosc2_stdio_mmap_destroy),
    }
}

/// Adds `cb` unless its id is taken (same name: success, other name: `PluginIo`).
fn insert(table: &mut Vec<Entry>, cb: blosc2_io_cb) -> Result<usize> {
    let name = if cb.name.is_null() {
        None
    } else {
        // SAFETY: a non-NULL name is a C string by the registration contract.
        Some(unsafe { CStr::from_ptr(cb.name) }.to_owned())
    };
    if let Some(i) = table.iter().position(|e| e.cb.id == cb.id) {
        return if table[i].name == name {
            Ok(i)
        } else {
            Err(Error::PluginIo)
        };
    }
    if table.len() >= CAPACITY {
        return Err(Error::PluginIo);
    }
    table.push(Entry {
        cb: Box::new(cb),
        name,
    });
    Ok(table.len() - 1)
}

/// The registered backend `id` (a copy), entering the built-ins on demand; None when the
/// library is not initialised or the id is unknown.
pub(crate) fn lookup(id: u8) -> Option<blosc2_io_cb> {
    let p = get_io_cb(id)?;
    // SAFETY: entries are boxed and never removed, so the pointer stays valid.
    Some(unsafe { *p })
}

fn get_io_cb(id: u8) -> Option<*mut blosc2_io_cb> {
    if !globals::is_initialized() {
        return None;
    }
    let mut t = ios();
    let i = match t.iter().position(|e| e.cb.id == id) {
        Some(i) => i,
        None if i32::from(id) == BLOSC2_IO_FILESYSTEM => insert(&mut t, stdio_cb()).ok()?,
        None if i32::from(id) == BLOSC2_IO_FILESYSTEM_MMAP => insert(&mut t, mmap_cb()).ok()?,
        None => return None,
    };
    Some(&mut *t[i].cb as *mut blosc2_io_cb)
}

/// `int blosc2_register_io_cb(const blosc2_io_cb *io)`: see the module docs.
///
/// # Safety
/// `io` NULL or a valid struct whose `name` is NULL or a C string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_register_io_cb(io: *const blosc2_io_cb) -> c_int {
    guard_int(|| {
        if io.is_null() {
            return Err(Error::InvalidParam);
        }
        // SAFETY: valid struct by contract.
        let cb = unsafe { *io };
        if i32::from(cb.id) < BLOSC2_IO_REGISTERED {
            return Err(Error::PluginIo);
        }
        insert(&mut ios(), cb).map(|_| 0)
    })
}

/// `blosc2_io_cb *blosc2_get_io_cb(uint8_t id)`: the registered backend (library-owned), or NULL.
#[no_mangle]
pub extern "C" fn blosc2_get_io_cb(id: u8) -> *mut blosc2_io_cb {
    guard_ptr(|| Ok(get_io_cb(id).unwrap_or(std::ptr::null_mut())))
}

// ---------------------------------------------------------------------------------------------
// The bridge: frame I/O through C callbacks
// ---------------------------------------------------------------------------------------------

/// A backend's callbacks and the `params` pointer of the `blosc2_io` that selected it.
#[derive(Debug)]
pub(crate) struct CallbackIo {
    cb: blosc2_io_cb,
    params: *mut c_void,
}

// SAFETY: the callbacks and params are C-owned; c-blosc2's contract is that a super-chunk (and
// hence its backend) is not used concurrently, and our frame only calls them from the thread
// running the current super-chunk operation.
unsafe impl Send for CallbackIo {}
// SAFETY: as above.
unsafe impl Sync for CallbackIo {}

/// An open stream of a [`CallbackIo`]; closed on drop.
struct CbStream<'a> {
    io: &'a CallbackIo,
    stream: *mut c_void,
}

impl UserIo for CallbackIo {
    fn open(&self, path: &Path, mode: &str) -> Result<Box<dyn UserStream + '_>> {
        let open = self.cb.open.ok_or(Error::PluginIo)?;
        let bytes = crate::sys::path_bytes(path).ok_or(Error::InvalidParam)?;
        let p = CString::new(bytes).map_err(|_| Error::InvalidParam)?;
        let m = CString::new(mode).map_err(|_| Error::InvalidParam)?;
        // SAFETY: two C strings and the params pointer the caller registered for this backend.
        let stream = unsafe { open(p.as_ptr(), m.as_ptr(), self.params) };
        if stream.is_null() {
            return Err(Error::FileOpen);
        }
        Ok(Box::new(CbStream { io: self, stream }))
    }
}

impl UserStream for CbStream<'_> {
    fn size(&mut self) -> Result<u64> {
        let f = self.io.cb.size.ok_or(Error::PluginIo)?;
        // SAFETY: a stream returned by this backend's open, not yet closed.
        let n = unsafe { f(self.stream) };
        u64::try_from(n).map_err(|_| Error::FileRead)
    }

    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let f = self.io.cb.read.ok_or(Error::PluginIo)?;
        let pos = i64::try_from(pos).map_err(|_| Error::FileRead)?;
        let len = i64::try_from(buf.len()).map_err(|_| Error::FileRead)?;
        let copy = !self.io.cb.is_allocation_necessary;
        let mut p: *mut c_void = if copy {
            std::ptr::null_mut()
        } else {
            buf.as_mut_ptr() as *mut c_void
        };
        // SAFETY: `p` is our buffer of `len` bytes (allocation-necessary backends fill it) or
        // an out-pointer the backend points at its own memory; the stream is open.
        let n = unsafe { f(&mut p, 1, len, pos, self.stream) };
        if n != len {
            return Err(Error::FileRead);
        }
        if copy {
            if p.is_null() {
                return Err(Error::FileRead);
            }
            // SAFETY: the backend vouches for `len` readable bytes at `p` until the next call.
            let src = unsafe { std::slice::from_raw_parts(p as *const u8, buf.len()) };
            buf.copy_from_slice(src);
        }
        Ok(())
    }

    fn write_all_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        let f = self.io.cb.write.ok_or(Error::PluginIo)?;
        let pos = i64::try_from(pos).map_err(|_| Error::FileWrite)?;
        let len = i64::try_from(data.len()).map_err(|_| Error::FileWrite)?;
        // SAFETY: `data` holds `len` bytes; the stream is open.
        let n = unsafe { f(data.as_ptr() as *const c_void, 1, len, pos, self.stream) };
        if n != len {
            return Err(Error::FileWrite);
        }
        Ok(())
    }

    fn truncate(&mut self, len: u64) -> Result<()> {
        let f = self.io.cb.truncate.ok_or(Error::PluginIo)?;
        let len = i64::try_from(len).map_err(|_| Error::FileTruncate)?;
        // SAFETY: the stream is open.
        if unsafe { f(self.stream, len) } != 0 {
            return Err(Error::FileTruncate);
        }
        Ok(())
    }
}

impl Drop for CbStream<'_> {
    fn drop(&mut self) {
        if let Some(f) = self.io.cb.close {
            // SAFETY: closes the stream opened by this backend, exactly once.
            unsafe { f(self.stream) };
        }
    }
}

/// How a `blosc2_io` says a frame's bytes are reached.
pub(crate) enum Backend {
    /// The filesystem backend (id 0), implemented natively; `locking` as requested by
    /// `blosc2_stdio_params.locking` or `BLOSC_LOCKING`.
    Native {
        /// Whether every operation takes the `.b2lock` sidecar lock.
        locking: bool,
    },
    /// Any other registered backend (mmap or a user's), through its callbacks.
    Callbacks(Arc<CallbackIo>),
}

/// Resolves `io` (NULL = `BLOSC2_IO_DEFAULTS`) to a backend; `PluginIo` for unknown ids.
///
/// # Safety
/// `io` NULL or a valid struct; for id 0 its `params` NULL or a `blosc2_stdio_params`.
pub(crate) unsafe fn resolve(io: *const blosc2_io) -> Result<Backend> {
    let io = if io.is_null() {
        BLOSC2_IO_DEFAULTS
    } else {
        // SAFETY: valid by contract.
        unsafe { *io }
    };
    if i32::from(io.id) == BLOSC2_IO_FILESYSTEM {
        let asked = !io.params.is_null()
            // SAFETY: id 0 params are a blosc2_stdio_params by contract.
            && unsafe { (*(io.params as *const blosc2_stdio_params)).locking };
        return Ok(Backend::Native {
            locking: asked || lock::env_requests_locking(),
        });
    }
    let cb = lookup(io.id).ok_or(Error::PluginIo)?;
    Ok(Backend::Callbacks(Arc::new(CallbackIo {
        cb,
        params: io.params,
    })))
}

/// Calls the backend's `destroy(io->params)` (what `blosc2_schunk_free` and a failed
/// `open_udio` do); returns its result, 0 when there is nothing to call.
///
/// # Safety
/// `io` NULL or a valid struct whose params the backend may release.
pub(crate) unsafe fn destroy(io: *const blosc2_io) -> c_int {
    if io.is_null() {
        return 0;
    }
    // SAFETY: valid by contract.
    let io = unsafe { *io };
    match lookup(io.id).and_then(|cb| cb.destroy) {
        // SAFETY: the backend's own release function on the params it was given.
        Some(f) => unsafe { f(io.params) },
        None => 0,
    }
}

/// Creates the core of a new super-chunk whose storage names a non-default backend: a cframe
/// file, or an sframe directory (created on the filesystem) whose index and chunk files are
/// written through the callbacks, as c-blosc2 does.
pub(crate) fn new_core_udio(
    io: Arc<CallbackIo>,
    path: &Path,
    contiguous: bool,
    cparams: crate::chunk::CParams,
    dparams: crate::chunk::DParams,
) -> Result<SChunk> {
    // The mmap backend maps one file per frame: it cannot hold an sframe directory.
    if !contiguous && i32::from(io.cb.id) == BLOSC2_IO_FILESYSTEM_MMAP {
        return Err(Error::PluginIo);
    }
    if path.exists() {
        return Err(Error::FileOpen);
    }
    let (frame, loc) = if contiguous {
        let frame = Frame::new_udio(io, path, &cparams, &dparams)?;
        let loc = Location::File {
            path: path.to_path_buf(),
            offset: 0,
        };
        (frame, loc)
    } else {
        let frame = Frame::new_sframe_udio(io, path, &cparams, &dparams)?;
        (frame, Location::Sparse(path.to_path_buf()))
    };
    Ok(SChunk::from_frame(frame, loc, cparams.nthreads))
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
                    unsafe { super::schunk::blosc2_schunk_free(p) };
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
            super::schunk::wrap_opened(core, Some(verbatim), io)
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
    let p = super::schunk::wrap_opened(core?, Some(verbatim), io)?;
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
    guard_ptr(|| {
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

// ---------------------------------------------------------------------------------------------
// Locking and stale-handle re-sync
// ---------------------------------------------------------------------------------------------

/// Gives a disk-backed super-chunk its `.b2lock` lock (no-op for in-memory ones).
///
/// # Safety
/// `p` a live super-chunk.
pub(crate) unsafe fn enable_locking(p: *mut blosc2_schunk) -> Result<()> {
    // SAFETY: forwarded contract.
    let (_, h) = unsafe { parts(p) }?;
    let (path, sparse) = match h.core.location() {
        Location::File { path, .. } => (path.clone(), false),
        Location::Sparse(dir) => (dir.clone(), true),
        _ => return Ok(()),
    };
    h.lock = Some(FrameLock::new(&path, sparse));
    Ok(())
}

/// Re-reads a disk frame that another handle changed (`force`: the lock generation moved,
/// else only when the stored `frame_len` differs) and re-mirrors the C struct, bumping
/// `change_tick`. Returns whether it re-read.
pub(crate) fn resync(sc: &mut blosc2_schunk, h: &mut Handle, force: bool) -> Result<bool> {
    if !h.core.refresh_frame(force)? {
        return Ok(false);
    }
    sync_counters(sc, h, true);
    super::meta::sync_meta(sc, h);
    super::meta::sync_vlmeta(sc, h);
    sc.change_tick += 1;
    Ok(true)
}

/// Runs one super-chunk operation the way c-blosc2 brackets frame accesses: under the handle's
/// lock (shared for reads, exclusive for mutations) when locking is enabled, after re-syncing
/// a disk frame that another handle changed (§5.2: stored `frame_len` differs, or the lock
/// generation moved). Lock failures are `BLOSC2_ERROR_LOCK`; a failed re-sync keeps the old
/// view (c-blosc2 tolerates torn reads the same way).
pub(crate) fn bracket<T>(
    sc: &mut blosc2_schunk,
    h: &mut Handle,
    exclusive: bool,
    op: impl FnOnce(&mut blosc2_schunk, &mut Handle) -> Result<T>,
) -> Result<T> {
    let moved = match h.lock.as_mut() {
        Some(l) => l.acquire(exclusive)?,
        None => false,
    };
    let _ = resync(sc, h, moved);
    let r = op(sc, h);
    if let Some(l) = h.lock.as_mut() {
        let released = l.release();
        if r.is_ok() {
            released?;
        }
    }
    r
}

/// `int blosc2_schunk_lock(blosc2_schunk *schunk)`: takes the exclusive lock until the matching
/// unlock (nested operations reuse it); 0, or a no-op 0 without locking.
///
/// # Safety
/// `schunk` NULL or live.
pub(crate) unsafe fn schunk_lock(schunk: *mut blosc2_schunk) -> Result<c_int> {
    // SAFETY: forwarded contract.
    let mut x = unsafe { exclusive(schunk) }?;
    let (sc, h) = x.parts();
    let Some(l) = h.lock.as_mut() else {
        return Ok(0);
    };
    let moved = l.acquire(true)?;
    let _ = resync(sc, h, moved);
    Ok(0)
}

/// `int blosc2_schunk_unlock(blosc2_schunk *schunk)`: releases one [`schunk_lock`].
///
/// # Safety
/// `schunk` NULL or live.
pub(crate) unsafe fn schunk_unlock(schunk: *mut blosc2_schunk) -> Result<c_int> {
    // SAFETY: forwarded contract.
    let mut x = unsafe { exclusive(schunk) }?;
    let (_, h) = x.parts();
    match h.lock.as_mut() {
        Some(l) => l.release().map(|()| 0),
        None => Ok(0),
    }
}

/// `int blosc2_schunk_refresh(blosc2_schunk *schunk)`: re-syncs a disk frame another handle
/// changed (under the shared lock when locking); 1 if re-read, 0 if current or not on disk.
///
/// # Safety
/// `schunk` NULL or live.
pub(crate) unsafe fn schunk_refresh(schunk: *mut blosc2_schunk) -> Result<c_int> {
    // SAFETY: forwarded contract.
    let mut x = unsafe { exclusive(schunk) }?;
    let (sc, h) = x.parts();
    let moved = match h.lock.as_mut() {
        Some(l) => l.acquire(false)?,
        None => false,
    };
    let r = resync(sc, h, moved);
    if let Some(l) = h.lock.as_mut() {
        l.release()?;
    }
    r.map(c_int::from)
}
