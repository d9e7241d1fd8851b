//! I/O backends: the registry (`blosc2_register_io_cb`, `blosc2_get_io_cb`), the two built-in
//! backends ([`stdio`]: id 0 filesystem, [`mmap`]: id 1), and the bridge that lets the frame
//! layer do all its I/O through a backend's C callbacks (`CallbackIo`, implementing
//! [`UserIo`]). Super-chunks are made and opened over these backends in
//! [`super::schunk`]; their file locking lives with the handle (`capi::handle`).
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

use super::boundary::guard;
use super::globals;
use super::types::{
    blosc2_io, blosc2_io_cb, blosc2_stdio_params, BLOSC2_IO_DEFAULTS, BLOSC2_IO_FILESYSTEM,
    BLOSC2_IO_FILESYSTEM_MMAP, BLOSC2_IO_REGISTERED,
};
use crate::error::{Error, Result};
use crate::frame::lock;
use crate::frame::udio::{UserIo, UserStream};
use crate::frame::Frame;
use crate::schunk::{Location, SChunk};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;
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
    guard(|| {
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
    guard(|| Ok(get_io_cb(id).unwrap_or(std::ptr::null_mut())))
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
