//! `blosc2_schunk_copy` into a storage whose `io` names a non-default backend (the mmap backend
//! or one registered with `blosc2_register_io_cb`).
//!
//! c-blosc2 builds such a copy with `blosc2_schunk_new(storage)` plus appends, so the
//! destination's index, chunk and frame files are created and written only through the
//! backend's callbacks. The native copy writes with std I/O, which a backend that keeps its
//! files elsewhere (in memory, remotely) would never see; this module routes it instead:
//! * a cframe file: the compact cframe the native copy would write (same bytes), created with
//!   `"wb"` and written through the backend, then reopened through it;
//! * an sframe directory: created like `blosc2_schunk_new` does for that backend, then filled
//!   with metalayers, chunks and vlmetalayers as the native copy fills a native one.
//!
//! In-memory and plain destinations, and the filesystem backend, keep the native copy.
//! [`save_through_backend`] is the same routing for `to_file`/`append_file` of an in-memory
//! frame whose storage names a backend.

use super::{new_core_udio, resolve, Backend, CallbackIo};
use crate::capi::types::blosc2_storage;
use crate::chunk::{CParams, DParams};
use crate::error::{Error, Result};
use crate::frame::udio::UserIo;
use crate::frame::Frame;
use crate::schunk::{Location, NewStorage, SChunk};
use std::path::Path;
use std::sync::Arc;

/// The core of a copy of `src` at `target` with `cparams`/`dparams`, its files written through
/// the backend `storage->io` names (`PluginIo` for an unknown id, as `blosc2_schunk_new`).
///
/// # Safety
/// `storage` NULL or a valid struct whose `io` is NULL or valid.
pub(crate) unsafe fn copy_to(
    src: &SChunk,
    storage: *const blosc2_storage,
    target: NewStorage<'_>,
    cparams: CParams,
    dparams: DParams,
) -> Result<SChunk> {
    let io = if storage.is_null() {
        std::ptr::null()
    } else {
        // SAFETY: valid by contract.
        unsafe { (*storage).io as *const _ }
    };
    // SAFETY: forwarded contract.
    let backend = unsafe { resolve(io) }?;
    match (backend, target) {
        (Backend::Callbacks(cb), NewStorage::File(path)) => {
            copy_cframe(src, cb, path, cparams, dparams)
        }
        (Backend::Callbacks(cb), NewStorage::Sparse(dir)) => {
            copy_sframe(src, cb, dir, cparams, dparams)
        }
        _ => src.copy_to(target, Some(cparams), Some(dparams)),
    }
}

/// `blosc2_schunk_to_file` (`append == false`, returns the length) and
/// `blosc2_schunk_append_file` (returns the offset) of an in-memory frame (`contiguous`, no
/// urlpath) whose storage names a non-default backend: c-blosc2 saves such a frame through that
/// backend (`"wb"`; `"rb+"` at `size()`, creating the file with `"ab"` first when `"rb+"`
/// fails). Every other super-chunk is saved as a fresh copy with the default backend, i.e. the
/// filesystem: then this returns `None` and the native path applies.
///
/// # Safety
/// `storage` NULL or a valid struct whose `io` is NULL or valid.
pub unsafe fn save_through_backend(
    storage: *const blosc2_storage,
    core: &SChunk,
    path: &Path,
    append: bool,
) -> Result<Option<i64>> {
    if storage.is_null() {
        return Ok(None);
    }
    // SAFETY: valid by contract.
    let st = unsafe { *storage };
    if !st.contiguous || !st.urlpath.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded contract.
    let Backend::Callbacks(io) = (unsafe { resolve(st.io) })? else {
        return Ok(None);
    };
    let bytes = core.to_cframe()?;
    let io: &dyn UserIo = &*io;
    if !append {
        let mut s = io.open(path, "wb")?;
        s.write_all_at(0, &bytes)?;
        return Ok(Some(bytes.len() as i64));
    }
    let mut s = match io.open(path, "rb+") {
        Ok(s) => s,
        Err(_) => {
            drop(io.open(path, "ab")?);
            io.open(path, "rb+")?
        }
    };
    let at = s.size()?;
    s.write_all_at(at, &bytes)?;
    i64::try_from(at).map(Some).map_err(|_| Error::FileWrite)
}

/// A cframe copy written through `io`: the bytes of the native copy, in one `"wb"` stream.
fn copy_cframe(
    src: &SChunk,
    io: Arc<CallbackIo>,
    path: &Path,
    cparams: CParams,
    dparams: DParams,
) -> Result<SChunk> {
    if path.exists() {
        return Err(Error::FileOpen);
    }
    let mem = src.copy_to(NewStorage::Memory, Some(cparams), Some(dparams))?;
    let bytes = mem.frame().ok_or(Error::SchunkCopy)?.to_cframe()?;
    drop(mem);
    let frame = Frame::create_udio_from_cframe(io, path, &bytes)?;
    let loc = Location::File {
        path: path.to_path_buf(),
        offset: 0,
    };
    Ok(SChunk::from_frame(frame, loc, dparams.nthreads))
}

/// An sframe copy whose index and chunk files are written through `io`.
fn copy_sframe(
    src: &SChunk,
    io: Arc<CallbackIo>,
    dir: &Path,
    cparams: CParams,
    dparams: DParams,
) -> Result<SChunk> {
    src.check_frame_storable()?;
    let mut out = new_core_udio(io, dir, false, cparams, dparams)?;
    src.fill_copy(&mut out)?;
    Ok(out)
}
