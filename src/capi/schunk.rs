//! The super-chunk C API (`blosc2_schunk_*`, `blosc2_frame_get_offsets`,
//! `blosc2_get_slice_nchunks`) over the safe [`SChunk`].
//!
//! A `blosc2_schunk*` points to a libc-`calloc`ed `SchunkBlock`: the C struct first (so the
//! pointer is the struct callers read), then a tag and the pointer to the Rust `Handle` (the
//! safe super-chunk plus the C-side mirrors it owns). After every call the public fields
//! (counters, `data`, `frame`, `metalayers`, `vlmetalayers`, `change_tick`) are re-mirrored from
//! the core, so they are always true. `frame` is an opaque non-NULL token iff the super-chunk is
//! frame-backed; nothing dereferences it. `cctx`/`dctx` are real contexts bound to the schunk;
//! chunk compression and decompression go through them (user codecs, filters, postfilters).
//!
//! Ownership as in c-blosc2: `copy=false` chunks are taken over and `free()`d once stored (on
//! failure the caller keeps them); returned buffers with `needs_free` are `malloc`ed;
//! `from_buffer(copy=false)` never frees nor modifies the caller's buffer (the schunk works on a
//! copy). `get_lazychunk` returns a complete normal chunk, whose size is what callers pass to
//! `blosc2_decompress_ctx`.
//!
//! Threads: one super-chunk may be used from any number of threads at once (`sync`): reads
//! run in parallel under a shared lock, mutations one at a time (compressing outside the
//! exclusive lock, so their callbacks may read the super-chunk) and commit under an exclusive
//! one; the C struct's fields change only under the exclusive lock. Borrowed chunks (`needs_free == false`) and the
//! `data` pointers stay valid only until the next mutation, as in c-blosc2: threads that mutate
//! while others read should have readers copy (decompress_chunk, get_slice_buffer) or take
//! chunks from disk-backed storage, which are always copies.

use super::boundary::{
    cstr, guard_i64, guard_int, guard_ptr, guard_void, malloc_copy, malloc_zeroed,
};
use super::chunk::{blosc2_vldecompress_block_ctx, context_mut, core_cparams};
use super::globals::blosc2_get_nthreads;
use super::meta::{free_mirrors, sync_meta, sync_vlmeta};
use super::types::*;
use crate::chunk::DParams;
use crate::error::{Error, Result};
use crate::frame::cframe::Fetched;
use crate::frame::chunkinfo::ChunkInfo;
use crate::schunk::{ChunkCodec, Location, NewStorage, SChunk};
use std::borrow::Cow;
use std::ffi::{c_char, c_int, c_void};
use std::path::Path;

/// Tag after the C struct, to catch pointers that are not ours.
const TAG: u64 = 0x6232_6672_5343_484b;

mod sync;

pub(crate) use sync::{exclusive, read_op, read_op_plain, Reader};

/// What a `blosc2_schunk*` points to.
#[repr(C)]
pub(crate) struct SchunkBlock {
    c: blosc2_schunk,
    tag: u64,
    handle: *mut Handle,
    /// The per-handle locks ([`sync`]), boxed like the handle.
    sync: *const sync::HandleSync,
}

/// The Rust side of a C super-chunk.
pub(crate) struct Handle {
    pub(crate) core: SChunk,
    /// Length of the `data` array mirror (pointers).
    data_cap: usize,
    /// The `.b2lock` lock when file locking is enabled (see [`super::io`]).
    pub(crate) lock: Option<crate::frame::lock::FrameLock>,
    /// Whether the storage names a non-default I/O backend, whose callbacks need not be
    /// thread-safe: reads are then serialised.
    callbacks: bool,
}

/// Borrows the C struct and the handle behind a `blosc2_schunk*` without locking: only for a
/// super-chunk that is not shared yet (just created). Everything else goes through
/// [`exclusive`] or [`read_op`].
///
/// # Safety
/// `p` must be NULL or a live pointer returned by this module that no other thread can use.
pub(crate) unsafe fn parts<'a>(
    p: *mut blosc2_schunk,
) -> Result<(&'a mut blosc2_schunk, &'a mut Handle)> {
    // SAFETY: forwarded contract.
    let b = unsafe { sync::block(p) }?;
    // SAFETY: by the contract nobody else uses the block; the handle was boxed by
    // `alloc_block` and is only freed with the block.
    Ok(unsafe { (&mut *p, &mut *b.handle_ptr()) })
}

/// Chunk compression/decompression through the schunk's C contexts.
pub(crate) struct CtxCodec {
    cctx: *mut blosc2_context,
    dctx: *mut blosc2_context,
}

impl ChunkCodec for CtxCodec {
    fn compress(&mut self, src: &[u8]) -> Result<Vec<u8>> {
        // SAFETY: `cctx` is the schunk's live context (or one the caller put there).
        let ctx = unsafe { context_mut(self.cctx) }?;
        if src.len() > (i32::MAX as usize) - BLOSC2_MAX_OVERHEAD as usize {
            return Err(Error::MaxBufsizeExceeded);
        }
        let mut dst = vec![0u8; src.len() + BLOSC2_MAX_OVERHEAD as usize];
        let n = ctx.compress(src, &mut dst)?;
        if n == 0 {
            return Err(Error::WriteBuffer);
        }
        dst.truncate(n);
        Ok(dst)
    }

    fn decompress(&mut self, chunk: &[u8], dst: &mut [u8]) -> Result<usize> {
        // SAFETY: `dctx` is the schunk's live context (or one the caller put there).
        let ctx = unsafe { context_mut(self.dctx) }?;
        ctx.decompress(chunk, dst)
    }
}

// ---------------------------------------------------------------------------------------------
// Building and mirroring the C struct
// ---------------------------------------------------------------------------------------------

/// A NUL-terminated malloc'ed copy of `s` (NULL for `None`).
fn malloc_cstr(s: Option<&[u8]>) -> *mut c_char {
    match s {
        None => std::ptr::null_mut(),
        Some(b) => {
            let mut v = b.to_vec();
            v.push(0);
            malloc_copy(&v) as *mut c_char
        }
    }
}

/// `malloc`ed copy of one value.
fn malloc_value<T: Copy>(v: T) -> *mut T {
    // SAFETY: malloc of the value's size; checked before writing.
    let p = unsafe { libc::malloc(std::mem::size_of::<T>().max(1)) } as *mut T;
    if !p.is_null() {
        // SAFETY: `p` has room for one `T`.
        unsafe { p.write(v) };
    }
    p
}

/// Frees what `storage_copy` allocated.
///
/// # Safety
/// `s` NULL or from `storage_copy`.
unsafe fn free_storage(s: *mut blosc2_storage) {
    if s.is_null() {
        return;
    }
    // SAFETY: every pointer inside came from malloc in `storage_copy`.
    unsafe {
        libc::free((*s).urlpath as *mut c_void);
        libc::free((*s).cparams as *mut c_void);
        libc::free((*s).dparams as *mut c_void);
        libc::free((*s).io as *mut c_void);
        libc::free(s as *mut c_void);
    }
}

/// The schunk's own copy of its storage description.
fn storage_copy(
    contiguous: bool,
    urlpath: Option<&[u8]>,
    cparams: blosc2_cparams,
    dparams: blosc2_dparams,
    io: blosc2_io,
) -> Result<*mut blosc2_storage> {
    let s = blosc2_storage {
        contiguous,
        urlpath: malloc_cstr(urlpath),
        cparams: malloc_value(cparams),
        dparams: malloc_value(dparams),
        io: malloc_value(io),
    };
    let p = malloc_value(s);
    if p.is_null() || s.cparams.is_null() || s.dparams.is_null() || s.io.is_null() {
        // SAFETY: partial allocations are freed once.
        unsafe {
            if p.is_null() {
                libc::free(s.urlpath as *mut c_void);
                libc::free(s.cparams as *mut c_void);
                libc::free(s.dparams as *mut c_void);
                libc::free(s.io as *mut c_void);
            } else {
                free_storage(p);
            }
        }
        return Err(Error::MemoryAlloc);
    }
    Ok(p)
}

/// Mirrors counters, `data` and `frame` from the core.
pub(crate) fn sync_counters(sc: &mut blosc2_schunk, h: &mut Handle, full_data: bool) {
    let c = h.core.counters();
    sc.nchunks = c.nchunks;
    sc.nbytes = c.nbytes;
    sc.cbytes = c.cbytes;
    sc.chunksize = c.chunksize;
    sc.flags2 = u8::from(c.vl_blocks);
    sc.frame = if h.core.frame().is_some() {
        h as *mut Handle as *mut blosc2_frame
    } else {
        std::ptr::null_mut()
    };
    sync_data(sc, h, full_data);
}

/// `schunk->data`: pointers to the chunks of a plain schunk (valid until the next mutation),
/// grown by 4096 bytes like c-blosc2. Appends only write the new slot.
fn sync_data(sc: &mut blosc2_schunk, h: &mut Handle, full: bool) {
    if h.core.frame().is_some() {
        return;
    }
    let n = h.core.nchunks() as usize;
    if n > h.data_cap || sc.data.is_null() {
        let bytes = (n * 8).div_ceil(4096).max(1) * 4096;
        // SAFETY: realloc of our own malloc'ed array (or NULL).
        let p = unsafe { libc::realloc(sc.data as *mut c_void, bytes) } as *mut *mut u8;
        if p.is_null() {
            return;
        }
        sc.data = p;
        sc.data_len = bytes;
        h.data_cap = bytes / 8;
    }
    let from = if full { 0 } else { n.saturating_sub(1) };
    for i in from..n {
        let ptr = match h.core.chunk(i as i64) {
            Ok(Cow::Borrowed(b)) => b.as_ptr() as *mut u8,
            _ => std::ptr::null_mut(),
        };
        // SAFETY: `i < n <= data_cap` slots are allocated.
        unsafe { *sc.data.add(i) = ptr };
    }
}

/// Allocates the block for `core`, with its storage copy and contexts, and mirrors everything.
fn alloc_block(
    core: SChunk,
    urlpath: Option<&[u8]>,
    base_cparams: blosc2_cparams,
    base_dparams: blosc2_dparams,
    io: blosc2_io,
) -> Result<*mut blosc2_schunk> {
    // SAFETY: calloc of the block size; checked below.
    let b = unsafe { libc::calloc(1, std::mem::size_of::<SchunkBlock>()) } as *mut SchunkBlock;
    if b.is_null() {
        return Err(Error::MemoryAlloc);
    }
    let sp = b as *mut blosc2_schunk;
    let cp = core.cparams();
    let mut cparams = base_cparams;
    cparams.compcode = cp.compcode;
    cparams.compcode_meta = cp.compcode_meta;
    cparams.clevel = cp.clevel;
    cparams.use_dict = c_int::from(cp.use_dict);
    cparams.typesize = cp.typesize;
    cparams.blocksize = cp.blocksize;
    cparams.splitmode = cp.splitmode;
    cparams.filters = cp.filters;
    cparams.filters_meta = cp.filters_meta;
    cparams.schunk = sp as *mut c_void;
    let mut dparams = base_dparams;
    dparams.schunk = sp as *mut c_void;
    dparams.typesize = cp.typesize;
    let contiguous = !matches!(core.location(), Location::Plain | Location::Sparse(_));
    let storage = match storage_copy(contiguous, urlpath, cparams, dparams, io) {
        Ok(s) => s,
        Err(e) => {
            // SAFETY: the block was calloc'ed above and holds nothing yet.
            unsafe { libc::free(b as *mut c_void) };
            return Err(e);
        }
    };
    let cctx = super::chunk::blosc2_create_cctx(cparams);
    let dctx = super::chunk::blosc2_create_dctx(dparams);
    if cctx.is_null() || dctx.is_null() {
        // SAFETY: freeing what was just created.
        unsafe {
            super::chunk::blosc2_free_ctx(cctx);
            super::chunk::blosc2_free_ctx(dctx);
            free_storage(storage);
            libc::free(b as *mut c_void);
        }
        return Err(Error::InvalidParam);
    }
    let handle = Box::into_raw(Box::new(Handle {
        core,
        data_cap: 0,
        lock: None,
        callbacks: i32::from(io.id) != BLOSC2_IO_FILESYSTEM,
    }));
    let hsync = sync::HandleSync::new();
    hsync.note_dctx(dctx, &mut None);
    let hsync = Box::into_raw(Box::new(hsync));
    // SAFETY: `b` is a zeroed, live block; all-zero is a valid bit pattern for every field
    // (pointers NULL, counters 0), and we initialise the rest here.
    unsafe {
        (*b).tag = TAG;
        (*b).handle = handle;
        (*b).sync = hsync;
        let sc = &mut (*b).c;
        sc.version = 0;
        sc.compcode = cparams.compcode;
        sc.compcode_meta = cparams.compcode_meta;
        sc.clevel = cparams.clevel;
        sc.splitmode = cparams.splitmode.clamp(0, 255) as u8;
        sc.typesize = cparams.typesize;
        sc.blocksize = cparams.blocksize;
        sc.use_dict = u8::from(cparams.use_dict != 0);
        sc.filters = cparams.filters;
        sc.filters_meta = cparams.filters_meta;
        sc.current_nchunk = -1;
        sc.storage = storage;
        sc.cctx = cctx;
        sc.dctx = dctx;
        sc.tuner_id = cparams.tuner_id;
        sc.tuner_params = cparams.tuner_params;
        let h = &mut *handle;
        sync_counters(sc, h, true);
        sync_meta(sc, h);
        sync_vlmeta(sc, h);
    }
    Ok(sp)
}

/// `file:///` prefixes are stripped like c-blosc2 does (all 8 bytes).
fn strip_url(s: &str) -> &str {
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

/// Wraps an opened/decoded core; `urlpath` is kept verbatim.
pub(crate) fn wrap_opened(
    core: SChunk,
    urlpath: Option<&[u8]>,
    io: blosc2_io,
) -> Result<*mut blosc2_schunk> {
    let nthreads = core.cparams().nthreads;
    let cparams = blosc2_cparams {
        nthreads,
        ..BLOSC2_CPARAMS_DEFAULTS
    };
    let dparams = blosc2_dparams {
        nthreads,
        ..BLOSC2_DPARAMS_DEFAULTS
    };
    alloc_block(core, urlpath, cparams, dparams, io)
}

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
    guard_ptr(|| {
        // SAFETY: forwarded contract (the I/O module dispatches on `storage->io`).
        unsafe { super::io::schunk_new(storage) }
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
    guard_ptr(|| {
        // SAFETY: forwarded contract.
        let mut x = unsafe { exclusive(schunk) }?;
        let (sc, h) = x.parts();
        super::io::bracket(sc, h, false, |sc, h| {
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
    })
}

/// A super-chunk from an in-memory cframe of exactly `len` bytes. `copy=true`: a plain
/// super-chunk with copied chunks; `copy=false`: backed by an in-memory frame (a private copy;
/// the caller's buffer is neither freed nor modified).
///
/// # Safety
/// `cframe` valid for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_from_buffer(
    cframe: *mut u8,
    len: i64,
    copy: bool,
) -> *mut blosc2_schunk {
    guard_ptr(|| {
        let n = usize::try_from(len).map_err(|_| Error::InvalidParam)?;
        // SAFETY: forwarded contract.
        let buf = unsafe { super::boundary::slice(cframe, n) }?;
        let (_, frame_len) = crate::frame::header::peek_lengths(buf)?;
        if frame_len != n as u64 {
            return Err(Error::InvalidHeader);
        }
        let core = SChunk::from_cframe(buf, copy, blosc2_get_nthreads())?;
        wrap_opened(core, None, BLOSC2_IO_DEFAULTS)
    })
}

/// No-op: a super-chunk never frees a buffer it did not allocate.
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_avoid_cframe_free(schunk: *mut blosc2_schunk, avoid: bool) {
    guard_void(|| {
        // SAFETY: forwarded contract (only validated).
        let _ = (unsafe { sync::block(schunk) }, avoid);
    })
}

/// Opens a frame at `urlpath` + `offset` (directories are sframes).
///
/// # Safety
/// `urlpath` a NUL-terminated string.
unsafe fn open_at(urlpath: *const c_char, offset: i64) -> Result<*mut blosc2_schunk> {
    // SAFETY: forwarded contract (the I/O module handles BLOSC_LOCKING).
    unsafe { super::io::open_default(urlpath, offset) }
}

/// Opens a cframe file or sframe directory.
///
/// # Safety
/// `urlpath` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open(urlpath: *const c_char) -> *mut blosc2_schunk {
    // SAFETY: forwarded contract.
    guard_ptr(|| unsafe { open_at(urlpath, 0) })
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
    guard_ptr(|| unsafe { open_at(urlpath, offset) })
}

/// Serialises the super-chunk as a compact cframe in a new `malloc`ed buffer
/// (`*needs_free = true`); returns its length.
///
/// # Safety
/// `schunk` live; `cframe`/`needs_free` valid pointers.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_to_buffer(
    schunk: *mut blosc2_schunk,
    cframe: *mut *mut u8,
    needs_free: *mut bool,
) -> i64 {
    guard_i64(|| {
        let op = |r: &Reader<'_>| {
            if cframe.is_null() || needs_free.is_null() {
                return Err(Error::NullPointer);
            }
            // The frame is written straight into the buffer handed out (calloc: fresh pages
            // of a large buffer come zeroed from the kernel, no extra pass over them).
            let mut p: *mut u8 = std::ptr::null_mut();
            let written = r.h.core.to_cframe_in(|len| {
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
    })
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
    guard_i64(|| {
        let op = |r: &Reader<'_>| {
            // SAFETY: forwarded contract.
            let s = unsafe { cstr(urlpath) }?;
            let path = Path::new(strip_url(s));
            // SAFETY: the schunk's storage copy is ours and complete (user backends: io/copy.rs).
            let udio = unsafe {
                super::io::copy::save_through_backend(r.storage(), &r.h.core, path, false)
            }?;
            udio.map_or_else(|| r.h.core.to_file(path), Ok)
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
    guard_i64(|| {
        let op = |r: &Reader<'_>| {
            // SAFETY: forwarded contract.
            let s = unsafe { cstr(urlpath) }?;
            let path = Path::new(strip_url(s));
            // SAFETY: the schunk's storage copy is ours and complete (user backends: io/copy.rs).
            let udio = unsafe {
                super::io::copy::save_through_backend(r.storage(), &r.h.core, path, true)
            }?;
            udio.map_or_else(|| r.h.core.append_file(path), Ok)
        };
        // SAFETY: forwarded contract.
        unsafe { read_op(schunk, false, op) }
    })
}

/// Frees the super-chunk and everything it owns (NULL is ignored). Returns 0.
///
/// # Safety
/// `schunk` NULL or live; not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_free(schunk: *mut blosc2_schunk) -> c_int {
    guard_int(|| {
        if schunk.is_null() {
            return Ok(0);
        }
        // Wait for operations still in flight on other threads (using the schunk while it is
        // freed is the caller's error; this only keeps their end from touching freed memory).
        // SAFETY: forwarded contract.
        drop(unsafe { exclusive(schunk) }?);
        // SAFETY: forwarded contract: no other user is left.
        let (sc, h) = unsafe { parts(schunk) }?;
        // SAFETY: the block is live and ours alone now.
        let hsync = unsafe { (*(schunk as *mut SchunkBlock)).sync };
        // SAFETY: everything below was allocated by `alloc_block` / the mirrors.
        unsafe {
            free_mirrors(sc);
            super::chunk::blosc2_free_ctx(sc.cctx);
            super::chunk::blosc2_free_ctx(sc.dctx);
            super::io::destroy((*sc.storage).io);
            free_storage(sc.storage);
            libc::free(sc.data as *mut c_void);
            libc::free(sc.blockshape as *mut c_void);
            drop(Box::from_raw(h as *mut Handle));
            drop(Box::from_raw(hsync as *mut sync::HandleSync));
            (*(schunk as *mut SchunkBlock)).tag = 0;
            libc::free(schunk as *mut c_void);
        }
        Ok(0)
    })
}

/// Frame length (frame-backed) or `cbytes + 8 * nchunks`.
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_frame_len(schunk: *mut blosc2_schunk) -> i64 {
    guard_i64(|| {
        // SAFETY: forwarded contract.
        let b = unsafe { sync::block(schunk) }?;
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
    guard_int(|| {
        // SAFETY: forwarded contract.
        let g = unsafe { sync::block(schunk) }?.shared()?;
        if out.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: our storage copy is complete, never changes, and its params pointers are set.
        let mut v = unsafe { *pick(&*g.reader().storage()) };
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
    guard_int(|| unsafe { super::io::schunk_refresh(schunk) })
}

/// Holds the exclusive `.b2lock` lock across operations until the matching unlock (a no-op
/// returning 0 without locking; see [`super::io`]).
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_lock(schunk: *mut blosc2_schunk) -> c_int {
    // SAFETY: forwarded contract.
    guard_int(|| unsafe { super::io::schunk_lock(schunk) })
}

/// See [`blosc2_schunk_lock`].
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_unlock(schunk: *mut blosc2_schunk) -> c_int {
    // SAFETY: forwarded contract.
    guard_int(|| unsafe { super::io::schunk_unlock(schunk) })
}

// ---------------------------------------------------------------------------------------------
// Chunk operations
// ---------------------------------------------------------------------------------------------

/// Borrows a whole chunk from a C pointer (header first, then `cbytes`).
///
/// # Safety
/// `chunk` NULL or a complete chunk.
unsafe fn chunk_arg<'a>(chunk: *const u8) -> Result<&'a [u8]> {
    // SAFETY: forwarded contract.
    unsafe { super::chunk::whole_chunk(chunk as *const c_void) }
}

/// Runs a mutation taking a chunk; frees it on success when `copy` is false.
///
/// # Safety
/// `schunk` live; `chunk` NULL or a complete (malloc'ed when `!copy`) chunk.
unsafe fn with_chunk(
    schunk: *mut blosc2_schunk,
    chunk: *mut u8,
    copy: bool,
    full_sync: bool,
    op: impl FnOnce(&mut SChunk, &[u8]) -> Result<i64>,
) -> Result<i64> {
    // SAFETY: forwarded contract.
    let mut x = unsafe { exclusive(schunk) }?;
    let (sc, h) = x.parts();
    super::io::bracket(sc, h, true, |sc, h| {
        // SAFETY: forwarded contract.
        let c = unsafe { chunk_arg(chunk) }?;
        adopt_chunksize(sc, h)?;
        let n = op(&mut h.core, c)?;
        if !copy {
            // SAFETY: ownership was transferred to us; the chunk has been copied.
            unsafe { libc::free(chunk as *mut c_void) };
        }
        sync_counters(sc, h, full_sync);
        Ok(n)
    })
}

/// A chunksize the caller wrote into `schunk->chunksize` before the first chunk (python-blosc2
/// and c-blosc2's tests do) becomes the super-chunk's.
fn adopt_chunksize(sc: &blosc2_schunk, h: &mut Handle) -> Result<()> {
    if h.core.nchunks() == 0 && sc.chunksize != h.core.counters().chunksize {
        h.core.set_chunksize(sc.chunksize)?;
    }
    Ok(())
}

/// Appends a chunk; returns the new nchunks.
///
/// # Safety
/// `schunk` live; `chunk` NULL or a complete chunk, `malloc`ed when `copy` is false (it is then
/// owned, and freed, by the super-chunk on success).
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_append_chunk(
    schunk: *mut blosc2_schunk,
    chunk: *mut u8,
    copy: bool,
) -> i64 {
    // SAFETY: forwarded contract.
    guard_i64(|| unsafe { with_chunk(schunk, chunk, copy, false, |s, c| s.append_chunk(c)) })
}

/// Inserts a chunk at `nchunk` (`0..=nchunks`); returns the new nchunks.
///
/// # Safety
/// `schunk` live; `chunk` NULL or a complete chunk, `malloc`ed when `copy` is false (it is then
/// owned, and freed, by the super-chunk on success).
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_insert_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut u8,
    copy: bool,
) -> i64 {
    guard_i64(|| {
        // SAFETY: forwarded contract.
        unsafe { with_chunk(schunk, chunk, copy, true, |s, c| s.insert_chunk(nchunk, c)) }
    })
}

/// Replaces chunk `nchunk`; returns nchunks.
///
/// # Safety
/// `schunk` live; `chunk` NULL or a complete chunk, `malloc`ed when `copy` is false (it is then
/// owned, and freed, by the super-chunk on success).
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_update_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut u8,
    copy: bool,
) -> i64 {
    guard_i64(|| {
        // SAFETY: forwarded contract.
        unsafe { with_chunk(schunk, chunk, copy, true, |s, c| s.update_chunk(nchunk, c)) }
    })
}

/// Deletes chunk `nchunk`; returns the new nchunks.
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_delete_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
) -> i64 {
    guard_i64(|| {
        // SAFETY: forwarded contract.
        let mut x = unsafe { exclusive(schunk) }?;
        let (sc, h) = x.parts();
        super::io::bracket(sc, h, true, |sc, h| {
            let n = h.core.delete_chunk(nchunk)?;
            sync_counters(sc, h, true);
            Ok(n)
        })
    })
}

/// Compresses `nbytes` of `src` with `schunk->cctx` and appends the chunk.
///
/// # Safety
/// `schunk` live; `src` valid for `nbytes`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_append_buffer(
    schunk: *mut blosc2_schunk,
    src: *const c_void,
    nbytes: i32,
) -> i64 {
    guard_i64(|| {
        // Compress first, holding only the mutation mutex (the codec and prefilter may read
        // this super-chunk, see [`sync`]), then commit under the exclusive lock.
        // SAFETY: forwarded contract.
        let w = unsafe { sync::writer(schunk) }?;
        if nbytes < 0 {
            return Err(Error::InvalidParam);
        }
        // SAFETY: forwarded contract.
        let s = unsafe { super::chunk::input(src, nbytes) }?;
        // SAFETY: forwarded contract.
        let nchunk = unsafe { read_op(schunk, false, |r| Ok(r.h.core.nchunks())) }?;
        let c = w.compress(nchunk, s)?;
        let mut x = w.exclusive();
        let (sc, h) = x.parts();
        super::io::bracket(sc, h, true, |sc, h| {
            adopt_chunksize(sc, h)?;
            let n = h.core.append_chunk(&c)?;
            sync_counters(sc, h, false);
            Ok(n)
        })
    })
}

/// Decompresses chunk `nchunk` into `dest` (`nbytes` bytes) with `schunk->dctx`; returns the
/// decompressed size.
///
/// # Safety
/// `schunk` live; `dest` valid for `nbytes`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_decompress_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    dest: *mut c_void,
    nbytes: i32,
) -> c_int {
    guard_int(|| {
        let op = |r: &Reader<'_>| {
            if nchunk < 0 || nchunk >= r.h.core.nchunks() {
                return Err(Error::InvalidParam);
            }
            // SAFETY: forwarded contract.
            let d = unsafe { super::chunk::output(dest, nbytes) }?;
            r.decode(Some(nchunk), |codec, buf| {
                Ok(r.h.core.decompress_chunk_in(codec, nchunk, d, buf)? as c_int)
            })
        };
        // SAFETY: forwarded contract.
        unsafe { read_op(schunk, true, op) }
    })
}

/// Follows a cframe file replaced on disk under an open super-chunk (re-mirrors everything).
fn revalidate(sc: &mut blosc2_schunk, h: &mut Handle) -> Result<()> {
    if h.core.reopen_if_replaced()? {
        sync_counters(sc, h, true);
        sync_meta(sc, h);
        sync_vlmeta(sc, h);
        sc.change_tick += 1;
    }
    Ok(())
}

/// What c-blosc2's lazy-chunk builder checks before it trusts a stored chunk: a valid header
/// and, for chunks with block streams, the block-start table inside the chunk.
fn check_lazy(c: &[u8]) -> Result<()> {
    let h = crate::chunk::header::ChunkHeader::parse(c)?;
    if h.special().is_none() && !h.is_memcpyed() {
        let table = i64::from(h.nblocks()) * 4 + h.header_len() as i64;
        if h.nblocks() < 0 || table > i64::from(h.cbytes) {
            return Err(Error::Data);
        }
    }
    Ok(())
}

/// Hands out chunk `nchunk`: a pointer into in-memory storage (`needs_free=false`, valid until
/// the next mutation) or a `malloc`ed copy (`needs_free=true`). Returns its size.
///
/// # Safety
/// `schunk` live; `chunk`/`needs_free` valid.
unsafe fn hand_out(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut *mut u8,
    needs_free: *mut bool,
    lazy: bool,
) -> Result<i32> {
    let op = |r: &Reader<'_>| {
        if chunk.is_null() || needs_free.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: valid out-pointers by contract.
        unsafe {
            *chunk = std::ptr::null_mut();
            *needs_free = false;
        }
        let (p, free, len) = r.with_buffer(nchunk, |buf| {
            // Lent chunks (in memory) are handed out as they are, read ones as a copy.
            let (c, lent) = match r.h.core.fetch_chunk(nchunk, buf)? {
                Fetched::Lent(c) => (c, true),
                Fetched::Read(n) => (&buf[..n], false),
            };
            let len = ChunkInfo::parse(c)?.cbytes;
            if lazy {
                check_lazy(c)?;
            }
            Ok::<_, Error>(match lent {
                true => (c.as_ptr() as *mut u8, false, len),
                false => (malloc_copy(c), true, len),
            })
        })?;
        if p.is_null() {
            return Err(Error::MemoryAlloc);
        }
        // SAFETY: valid out-pointers by contract.
        unsafe {
            *chunk = p;
            *needs_free = free;
        }
        Ok(len)
    };
    // SAFETY: forwarded contract (`op` runs no user code).
    unsafe { read_op_plain(schunk, true, op) }
}

/// Chunk `nchunk` as stored; returns its cbytes.
///
/// # Safety
/// `schunk` live; `chunk` and `needs_free` valid pointers to write the result to.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut *mut u8,
    needs_free: *mut bool,
) -> c_int {
    // SAFETY: forwarded contract.
    guard_int(|| unsafe { hand_out(schunk, nchunk, chunk, needs_free, false) })
}

/// Like [`blosc2_schunk_get_chunk`]: this implementation's "lazy" chunk is the whole chunk.
///
/// # Safety
/// `schunk` live; `chunk` and `needs_free` valid pointers to write the result to.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_lazychunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut *mut u8,
    needs_free: *mut bool,
) -> c_int {
    // SAFETY: forwarded contract.
    guard_int(|| unsafe { hand_out(schunk, nchunk, chunk, needs_free, true) })
}

/// Block `nblock` of VL-block chunk `nchunk`, in a new `malloc`ed buffer; returns its size.
///
/// # Safety
/// `schunk` live; `dest`/`destsize` valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_vlblock(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    nblock: i32,
    dest: *mut *mut u8,
    destsize: *mut i32,
) -> c_int {
    guard_int(|| {
        let op = |r: &Reader<'_>| {
            if dest.is_null() || destsize.is_null() {
                return Err(Error::NullPointer);
            }
            let c = r.h.core.chunk(nchunk)?;
            let len = i32::try_from(c.len()).map_err(|_| Error::Data)?;
            r.with_dctx(|dctx| {
                // SAFETY: `c` is a complete chunk of `len` bytes; out-pointers valid by
                // contract; we hold the schunk's `dctx`.
                let n = unsafe {
                    blosc2_vldecompress_block_ctx(
                        dctx,
                        c.as_ptr() as *const c_void,
                        len,
                        nblock,
                        dest,
                        destsize,
                    )
                };
                if n < 0 {
                    return Err(Error::from_code(n).unwrap_or(Error::Failure));
                }
                Ok(n)
            })
        };
        // SAFETY: forwarded contract.
        unsafe { read_op(schunk, false, op) }
    })
}

/// Reorders chunks: new chunk `i` is old chunk `offsets_order[i]` (`nchunks` entries).
///
/// # Safety
/// `schunk` live; `offsets_order` valid for `nchunks` values.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_reorder_offsets(
    schunk: *mut blosc2_schunk,
    offsets_order: *mut i64,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let mut x = unsafe { exclusive(schunk) }?;
        let (sc, h) = x.parts();
        super::io::bracket(sc, h, true, |sc, h| {
            let n = h.core.nchunks() as usize;
            if offsets_order.is_null() {
                return Err(Error::NullPointer);
            }
            // SAFETY: `nchunks` values by contract.
            let order = unsafe { std::slice::from_raw_parts(offsets_order, n) }.to_vec();
            h.core.reorder(&order)?;
            sync_counters(sc, h, true);
            Ok(0)
        })
    })
}

/// Fills an empty super-chunk with special chunks (ZERO, NAN, UNINIT); returns nchunks.
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_fill_special(
    schunk: *mut blosc2_schunk,
    nitems: i64,
    special_value: c_int,
    chunksize: i32,
) -> i64 {
    guard_i64(|| {
        // SAFETY: forwarded contract.
        let mut x = unsafe { exclusive(schunk) }?;
        let (sc, h) = x.parts();
        super::io::bracket(sc, h, true, |sc, h| {
            let r = h.core.fill_special(nitems, special_value, chunksize);
            // A frame takes the blocksize of its special chunks, as c-blosc2's does.
            sc.blocksize = h.core.cparams().blocksize;
            sync_counters(sc, h, true);
            r
        })
    })
}

/// The raw offsets index of a frame-backed super-chunk (`malloc`ed, `nchunks` values); NULL
/// for plain super-chunks.
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_frame_get_offsets(schunk: *mut blosc2_schunk) -> *mut i64 {
    guard_ptr(|| {
        let op = |r: &Reader<'_>| {
            let offs = r.h.core.frame_offsets().ok_or(Error::FrameType)?;
            let bytes: Vec<u8> = offs.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let p = malloc_copy(&bytes) as *mut i64;
            if p.is_null() {
                return Err(Error::MemoryAlloc);
            }
            Ok(p)
        };
        // SAFETY: forwarded contract.
        unsafe { read_op(schunk, false, op) }
    })
}

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
    guard_int(|| {
        let op = |r: &Reader<'_>| {
            let n = range_bytes(r.h, start, stop)?;
            // SAFETY: forwarded contract.
            let d = unsafe { super::boundary::slice_mut(buffer as *mut u8, n) }?;
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
    guard_int(|| {
        // Chunk by chunk, like c-blosc2: decode it (shared lock), patch, compress it holding
        // only the mutation mutex (callbacks may read this super-chunk), commit it (exclusive
        // lock). Chunks already updated stay so if a later one fails.
        // SAFETY: forwarded contract.
        let w = unsafe { sync::writer(schunk) }?;
        let plan = |r: &Reader<'_>| {
            let n = range_bytes(r.h, start, stop)?;
            Ok((n, r.h.core.set_slice_spans(start, stop, n)?))
        };
        // SAFETY: forwarded contract.
        let (n, spans) = unsafe { read_op(schunk, true, plan) }?;
        // SAFETY: forwarded contract.
        let s = unsafe { super::boundary::slice(buffer as *const u8, n) }?;
        for (k, off, len, at) in spans {
            let old = |r: &Reader<'_>| {
                let nb = r.h.core.chunk_nbytes(k)? as usize;
                let mut buf = vec![0u8; nb];
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
            super::io::bracket(sc, h, true, |sc, h| {
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
    guard_int(|| {
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
            let d = unsafe { super::boundary::slice_mut(buffer as *mut u8, bytes) }?;
            r.decode(None, |codec, _| r.h.core.get_sparse_with(codec, cs, d))?;
            Ok(0)
        };
        // SAFETY: forwarded contract.
        unsafe { read_op(schunk, false, op) }
    })
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
    guard_i64(|| {
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
