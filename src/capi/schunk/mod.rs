//! The super-chunk C API (`blosc2_schunk_*`, `blosc2_frame_get_offsets`,
//! `blosc2_get_slice_nchunks`) over the safe [`SChunk`].
//!
//! A `blosc2_schunk*` points to a libc-`calloc`ed `SchunkBlock`: the C struct first (so the
//! pointer is the struct callers read), then a tag and the pointer to the Rust `Handle` (the
//! safe super-chunk plus the C-side mirrors it owns). After every call the public fields
//! (counters, `data`, `frame`, `metalayers`, `vlmetalayers`, `change_tick`) are re-mirrored from
//! the core, so they are always true. The fields callers may write (compression parameters,
//! `chunksize` of an empty super-chunk, `cctx`/`dctx`) are taken before every change, as
//! c-blosc2 does (see `src/capi/fields.rs`). `frame` is an opaque non-NULL token iff the
//! super-chunk is frame-backed; nothing dereferences it. `cctx`/`dctx` are real contexts bound to the schunk;
//! chunk compression and decompression go through them (user codecs, filters, postfilters).
//!
//! Ownership as in c-blosc2: `copy=false` chunks are taken over and `free()`d once stored (on
//! failure the caller keeps them); returned buffers with `needs_free` are `malloc`ed;
//! `from_buffer(copy=false)` never frees nor modifies the caller's buffer (the schunk works on a
//! copy). `get_lazychunk` of a frame on storage returns c-blosc2's lazy chunk (header, block
//! starts and a trailer; `blosc2_decompress_ctx`/`blosc2_getitem_ctx` with a context bound to the
//! super-chunk read the needed blocks from storage), else the chunk itself.
//!
//! Threads: one super-chunk may be used from any number of threads at once (`sync`): reads
//! run in parallel under a shared lock, mutations one at a time (compressing outside the
//! exclusive lock, so their callbacks may read the super-chunk) and commit under an exclusive
//! one; the C struct's fields change only under the exclusive lock. Borrowed chunks (`needs_free == false`) and the
//! `data` pointers stay valid only until the next mutation, as in c-blosc2: threads that mutate
//! while others read should have readers copy (decompress_chunk, get_slice_buffer) or take
//! chunks from disk-backed storage, which are always copies.

use super::boundary::{cstr, guard, malloc_zeroed};
use super::globals::nthreads;
use super::handle::*;
use super::types::*;
use crate::chunk::DParams;
use crate::error::{Error, Result};
use crate::frame::cframe::Fetched;
use crate::frame::chunkinfo::ChunkInfo;
use crate::schunk::{Location, NewStorage, SChunk};
use std::ffi::{c_char, c_int, c_void};
use std::path::Path;

mod chunks;
mod open;
mod slices;

pub use chunks::*;
pub(crate) use chunks::{decode_blocks, decompress_chunk_masked, fill_special, mutate};
pub use open::*;
pub use slices::*;

// ---------------------------------------------------------------------------------------------
// Lifecycle
// ---------------------------------------------------------------------------------------------

/// Creates an empty super-chunk: plain (`contiguous=false`, no urlpath), in-memory cframe,
/// cframe file or sframe directory. Fails (NULL) if `urlpath` already exists.
///
/// # Safety
/// `storage` NULL or a valid struct.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_new(storage: *mut blosc2_storage) -> *mut blosc2_schunk {
    guard(|| {
        // SAFETY: forwarded contract (the I/O module dispatches on `storage->io`).
        unsafe { schunk_new(storage) }
    })
}

/// Copies a super-chunk to `storage` (its cparams/dparams default to the source's).
///
/// # Safety
/// `schunk` a live super-chunk; `storage` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_copy(
    schunk: *mut blosc2_schunk,
    storage: *mut blosc2_storage,
) -> *mut blosc2_schunk {
    // SAFETY: forwarded contract.
    guard(|| unsafe { schunk_copy(schunk, storage) })
}

/// The body of [`blosc2_schunk_copy`] (also b2nd's copies and saves).
///
/// # Safety
/// `schunk` NULL or live; `storage` NULL or valid.
pub(crate) unsafe fn schunk_copy(
    schunk: *mut blosc2_schunk,
    storage: *const blosc2_storage,
) -> Result<*mut blosc2_schunk> {
    // SAFETY: forwarded contract.
    let mut x = unsafe { exclusive(schunk) }?;
    let (sc, h) = x.parts();
    bracket(sc, h, false, |sc, h| {
        // SAFETY: the schunk's storage copy is ours and complete.
        let (cp, dp) = unsafe { (*(*sc.storage).cparams, *(*sc.storage).dparams) };
        let src = &h.core;
        // SAFETY: forwarded contract.
        unsafe {
            new_from_storage(storage, cp, dp, |t, c, d| {
                super::io::copy::copy_to(src, storage, t, c, d).map_err(|e| match e {
                    Error::FileOpen => e,
                    _ => Error::SchunkCopy,
                })
            })
        }
    })
}

/// A super-chunk from an in-memory cframe of exactly `len` bytes. `copy=true`: a plain
/// super-chunk with copied chunks; `copy=false`: an in-memory frame read in place from the
/// caller's buffer, as c-blosc2 does (the first change works on a private copy; the caller's
/// buffer is neither freed nor modified).
///
/// # Safety
/// `cframe` valid for `len` bytes; with `copy=false`, until the super-chunk is freed (as
/// c-blosc2 requires).
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_from_buffer(
    cframe: *mut u8,
    len: i64,
    copy: bool,
) -> *mut blosc2_schunk {
    // SAFETY: forwarded contract.
    guard(|| unsafe { schunk_from_buffer(cframe, len, copy) })
}

/// The body of [`blosc2_schunk_from_buffer`] (also `b2nd_from_cframe`).
///
/// # Safety
/// As for [`blosc2_schunk_from_buffer`].
pub(crate) unsafe fn schunk_from_buffer(
    cframe: *mut u8,
    len: i64,
    copy: bool,
) -> Result<*mut blosc2_schunk> {
    let n = usize::try_from(len).map_err(|_| Error::InvalidParam)?;
    // SAFETY: forwarded contract. Without `copy` it is c-blosc2's: the super-chunk is
    // backed by the caller's buffer, which the caller keeps alive and unchanged until
    // `blosc2_schunk_free` (c-blosc2 reads it in place too, and never frees it); the frame
    // only reads it, and its first change copies it.
    let buf: &'static [u8] = unsafe { super::boundary::slice(cframe, n) }?;
    let (_, frame_len) = crate::frame::header::peek_lengths(buf)?;
    if frame_len != n as u64 {
        return Err(Error::InvalidHeader);
    }
    let core = if copy {
        SChunk::from_cframe(buf, true, nthreads())?
    } else {
        SChunk::from_lent_cframe(std::sync::Arc::new(buf), nthreads())?
    };
    wrap_opened(core, None, BLOSC2_IO_DEFAULTS)
}

/// No-op: a super-chunk never frees a buffer it did not allocate.
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_avoid_cframe_free(schunk: *mut blosc2_schunk, avoid: bool) {
    guard(|| {
        // SAFETY: forwarded contract (only validated).
        let _ = (unsafe { block(schunk) }, avoid);
        Ok(())
    })
}

/// Serialises the super-chunk as a cframe in a new `malloc`ed buffer (`*needs_free = true`);
/// returns its length. The bytes are c-blosc2's: an in-memory frame's own, else those of
/// c-blosc2's copy into memory (see `SChunk::to_cframe_as`).
///
/// # Safety
/// `schunk` live; `cframe`/`needs_free` valid pointers.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_to_buffer(
    schunk: *mut blosc2_schunk,
    cframe: *mut *mut u8,
    needs_free: *mut bool,
) -> i64 {
    // SAFETY: forwarded contract.
    guard(|| unsafe { schunk_to_buffer(schunk, cframe, needs_free) })
}

/// The body of [`blosc2_schunk_to_buffer`] (also `b2nd_to_cframe`).
///
/// # Safety
/// As for [`blosc2_schunk_to_buffer`].
pub(crate) unsafe fn schunk_to_buffer(
    schunk: *mut blosc2_schunk,
    cframe: *mut *mut u8,
    needs_free: *mut bool,
) -> Result<i64> {
    let op = |r: &Reader<'_>| {
        if cframe.is_null() || needs_free.is_null() {
            return Err(Error::NullPointer);
        }
        // The frame is written straight into the buffer handed out (calloc: fresh pages
        // of a large buffer come zeroed from the kernel, no extra pass over them).
        let mut p: *mut u8 = std::ptr::null_mut();
        let tpl = copy_template(r.cctx(), r.h);
        let written = r.h.core.to_cframe_in(&tpl, |len| {
            p = malloc_zeroed(len);
            if p.is_null() {
                return Err(Error::MemoryAlloc);
            }
            // SAFETY: `p` holds `len` initialised (zeroed) bytes, owned here until handed
            // out or freed below.
            Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
        });
        let len = match written {
            Ok(len) => len,
            Err(e) => {
                // SAFETY: NULL or the buffer allocated above, not handed out.
                unsafe { libc::free(p as *mut c_void) };
                return Err(e);
            }
        };
        // SAFETY: valid out-pointers by contract.
        unsafe {
            *cframe = p;
            *needs_free = true;
        }
        Ok(len as i64)
    };
    // SAFETY: forwarded contract.
    unsafe { read_op(schunk, false, op) }
}

/// Writes the super-chunk as a cframe file; returns its length.
///
/// # Safety
/// `schunk` live; `urlpath` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_to_file(
    schunk: *mut blosc2_schunk,
    urlpath: *const c_char,
) -> i64 {
    guard(|| {
        let op = |r: &Reader<'_>| {
            // SAFETY: forwarded contract.
            let s = unsafe { cstr(urlpath) }?;
            let path = Path::new(strip_url(s));
            // SAFETY: the schunk's storage copy is ours and complete (user backends: io/copy.rs).
            let udio = unsafe {
                super::io::copy::save_through_backend(r.storage(), &r.h.core, path, false)
            }?;
            udio.map_or_else(
                || r.h.core.to_file_as(path, &copy_template(r.cctx(), r.h)),
                Ok,
            )
        };
        // SAFETY: forwarded contract.
        unsafe { read_op(schunk, false, op) }
    })
}

/// Appends the super-chunk as a cframe at the end of `urlpath`; returns where it starts.
///
/// # Safety
/// `schunk` live; `urlpath` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_append_file(
    schunk: *mut blosc2_schunk,
    urlpath: *const c_char,
) -> i64 {
    // SAFETY: forwarded contract.
    guard(|| unsafe { schunk_append_file(schunk, urlpath) })
}

/// The body of [`blosc2_schunk_append_file`] (also `b2nd_save_append`).
///
/// # Safety
/// As for [`blosc2_schunk_append_file`].
pub(crate) unsafe fn schunk_append_file(
    schunk: *mut blosc2_schunk,
    urlpath: *const c_char,
) -> Result<i64> {
    let op = |r: &Reader<'_>| {
        // SAFETY: forwarded contract.
        let s = unsafe { cstr(urlpath) }?;
        let path = Path::new(strip_url(s));
        // SAFETY: the schunk's storage copy is ours and complete (user backends: io/copy.rs).
        let udio =
            unsafe { super::io::copy::save_through_backend(r.storage(), &r.h.core, path, true) }?;
        udio.map_or_else(
            || {
                let tpl = copy_template(r.cctx(), r.h);
                r.h.core.append_file_as(path, &tpl)
            },
            Ok,
        )
    };
    // SAFETY: forwarded contract.
    unsafe { read_op(schunk, false, op) }
}

/// Frees the super-chunk and everything it owns (NULL is ignored). Returns 0.
///
/// # Safety
/// `schunk` NULL or live; not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_free(schunk: *mut blosc2_schunk) -> c_int {
    // SAFETY: forwarded contract.
    guard(|| unsafe { free_block(schunk) })
}

/// Frame length (frame-backed) or `cbytes + 8 * nchunks`.
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_frame_len(schunk: *mut blosc2_schunk) -> i64 {
    guard(|| {
        // SAFETY: forwarded contract.
        let b = unsafe { block(schunk) }?;
        Ok(b.shared()?.handle().core.frame_len())
    })
}

/// Copies the params `pick` selects from the schunk's storage into a `malloc`ed value, points its
/// `schunk` field at the schunk and stores it in `*out`, for the caller to `free()`.
///
/// # Safety
/// `schunk` live; `out` NULL or valid.
unsafe fn params_copy<T: Copy>(
    schunk: *mut blosc2_schunk,
    out: *mut *mut T,
    pick: impl FnOnce(&blosc2_storage) -> *mut T,
    set_schunk: impl FnOnce(&mut T),
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let mut v = unsafe { stored_params(schunk, pick) }?;
        if out.is_null() {
            return Err(Error::NullPointer);
        }
        set_schunk(&mut v);
        let p = malloc_value(v);
        if p.is_null() {
            return Err(Error::MemoryAlloc);
        }
        // SAFETY: valid out-pointer by contract.
        unsafe { *out = p };
        Ok(0)
    })
}

/// The params `pick` selects from the schunk's storage copy (also b2nd's `cparams_of`).
///
/// # Safety
/// `schunk` NULL or live.
pub(crate) unsafe fn stored_params<T: Copy>(
    schunk: *mut blosc2_schunk,
    pick: impl FnOnce(&blosc2_storage) -> *mut T,
) -> Result<T> {
    // SAFETY: forwarded contract.
    let g = unsafe { block(schunk) }?.shared()?;
    // SAFETY: our storage copy is complete, never changes, and its params pointers are set.
    Ok(unsafe { *pick(&*g.reader().storage()) })
}

/// A `malloc`ed copy of the schunk's cparams (`schunk` field set), for the caller to `free()`.
///
/// # Safety
/// `schunk` live; `cparams` valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_cparams(
    schunk: *mut blosc2_schunk,
    cparams: *mut *mut blosc2_cparams,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        params_copy(
            schunk,
            cparams,
            |st| st.cparams,
            |cp| cp.schunk = schunk as *mut c_void,
        )
    }
}

/// A `malloc`ed copy of the schunk's dparams (`schunk` field set), for the caller to `free()`.
///
/// # Safety
/// `schunk` live; `dparams` valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_dparams(
    schunk: *mut blosc2_schunk,
    dparams: *mut *mut blosc2_dparams,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        params_copy(
            schunk,
            dparams,
            |st| st.dparams,
            |dp| dp.schunk = schunk as *mut c_void,
        )
    }
}

/// Re-reads a disk frame that changed on disk; 1 if re-synced, 0 if current or not on disk.
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_refresh(schunk: *mut blosc2_schunk) -> c_int {
    // SAFETY: forwarded contract.
    guard(|| unsafe { schunk_refresh(schunk) })
}

/// Holds the exclusive `.b2lock` lock across operations until the matching unlock (a no-op
/// returning 0 without locking; see [`super::io`]).
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_lock(schunk: *mut blosc2_schunk) -> c_int {
    // SAFETY: forwarded contract.
    guard(|| unsafe { schunk_lock(schunk) })
}

/// See [`blosc2_schunk_lock`].
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_unlock(schunk: *mut blosc2_schunk) -> c_int {
    // SAFETY: forwarded contract.
    guard(|| unsafe { schunk_unlock(schunk) })
}
