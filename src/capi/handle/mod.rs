//! The super-chunk handle: what a `blosc2_schunk*` points to, and the one module that builds,
//! mirrors, locks and frees it.
//!
//! A `blosc2_schunk*` points to a libc-`calloc`ed [`SchunkBlock`]: the C struct first (so the
//! pointer is the struct callers read), then a tag and the pointers to the Rust [`Handle`] (the
//! safe super-chunk plus the C-side mirrors it owns) and to its locks ([`sync`]). Every C entry
//! point reaches the handle through [`exclusive`], [`read_op`] or [`writer`], runs inside
//! [`bracket`] (the `.b2lock` file lock and the stale-frame re-read) and leaves the public fields
//! re-mirrored ([`mirror`]); the fields callers may write into the struct are taken over
//! first ([`fields`]). The C API modules above ([`super::schunk`], [`super::meta`],
//! [`super::b2nd`]) only call into this one; it calls none of them.

use super::boundary::malloc_copy;
use super::chunk::{context_mut, free_ctx, new_cctx, new_dctx, ContextCell, CtxGuard};
use super::types::*;
use crate::error::{Error, Result};
use crate::schunk::{ChunkCodec, ChunkDecoder, Location, SChunk};
use std::ffi::{c_char, c_int, c_void};

mod bracket;
mod fields;
mod mirror;
mod sync;

pub(crate) use bracket::{
    bracket, enable_locking, resync, revalidate, schunk_lock, schunk_refresh, schunk_unlock,
};
pub(crate) use fields::{adopt, copy_template};
pub(crate) use mirror::{free_mirrors, sync_counters, sync_meta, sync_vlmeta};
pub(crate) use sync::{block, exclusive, read_op, read_op_plain, writer, Reader};

/// Tag after the C struct, to catch pointers that are not ours.
const TAG: u64 = 0x6232_6672_5343_484b;

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

/// Chunk compression/decompression through one of the schunk's C contexts, held for this
/// codec's life (so no other caller uses it meanwhile; see [`ContextCell`]).
pub(crate) struct CtxCodec<'a> {
    ctx: CtxGuard<'a>,
    /// The schunk's `dctx`, whose mask for this thread (`blosc2_set_maskout`) the next
    /// decompression uses, whichever context decodes it.
    mask_from: Option<&'a ContextCell>,
    /// A block mask for the next decompression, given by the caller (it wins over `mask_from`).
    mask: Option<Vec<bool>>,
    /// `&schunk->current_nchunk` when this decode may set it (it holds the schunk's `dctx`,
    /// and no mutation pinned the field), else NULL.
    nchunk_slot: *mut i64,
}

impl<'a> CtxCodec<'a> {
    /// A codec for compressing with `cctx` (waiting while another thread uses it).
    ///
    /// # Safety
    /// `cctx` NULL or a live context.
    pub(crate) unsafe fn compressing(cctx: *mut blosc2_context) -> Result<CtxCodec<'a>> {
        Ok(CtxCodec {
            // SAFETY: forwarded contract.
            ctx: unsafe { context_mut(cctx) }?,
            mask_from: None,
            mask: None,
            nchunk_slot: std::ptr::null_mut(),
        })
    }

    /// The mask for the decompression about to run, applied to the context.
    fn apply_mask(&mut self) -> Result<()> {
        let m = self
            .mask
            .take()
            .or_else(|| self.mask_from.and_then(ContextCell::take_mask));
        self.ctx.apply_mask(m)
    }
}

impl ChunkDecoder for CtxCodec<'_> {
    fn decompress(&mut self, chunk: &[u8], dst: &mut [u8]) -> Result<usize> {
        self.apply_mask()?;
        self.ctx.decompress(chunk, dst)
    }

    fn getitem_bytes(
        &mut self,
        chunk: &[u8],
        start: usize,
        nbytes: usize,
        dst: &mut [u8],
    ) -> Result<usize> {
        let start = i32::try_from(start).map_err(|_| Error::InvalidParam)?;
        let nbytes = i32::try_from(nbytes).map_err(|_| Error::InvalidParam)?;
        self.ctx
            .getitem_engine()?
            .getitem_bytes(chunk, start, nbytes, dst)
    }

    fn decompress_lazy(
        &mut self,
        chunk: &[u8],
        dst: &mut [u8],
        source: &dyn crate::chunk::lazy::LazySource,
    ) -> Result<usize> {
        self.apply_mask()?;
        self.ctx.decompress_lazy(chunk, dst, source)
    }

    fn getitem_bytes_lazy(
        &mut self,
        chunk: &[u8],
        start: i32,
        dst: &mut [u8],
        source: &dyn crate::chunk::lazy::LazySource,
    ) -> Result<usize> {
        self.ctx.getitem_bytes_lazy(chunk, start, dst, source)
    }

    fn enter_chunk(&mut self, nchunk: i64) {
        if !self.nchunk_slot.is_null() {
            // SAFETY: a field of the live C struct, written by readers only while they hold
            // the `dctx` mutex, which this decode holds (see `sync::Reader::decode`).
            unsafe { self.nchunk_slot.write(nchunk) };
        }
    }
}

impl ChunkCodec for CtxCodec<'_> {
    fn compress(&mut self, src: &[u8]) -> Result<Vec<u8>> {
        if src.len() > (i32::MAX as usize) - BLOSC2_MAX_OVERHEAD as usize {
            return Err(Error::MaxBufsizeExceeded);
        }
        let dst = self
            .ctx
            .compress_to_vec(src, src.len() + BLOSC2_MAX_OVERHEAD as usize)?;
        if dst.is_empty() {
            return Err(Error::WriteBuffer);
        }
        Ok(dst)
    }
}

// ---------------------------------------------------------------------------------------------
// Building and freeing the block
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
pub(crate) fn malloc_value<T: Copy>(v: T) -> *mut T {
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
pub(crate) unsafe fn free_storage(s: *mut blosc2_storage) {
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

/// Allocates the block for `core`, with its storage copy and contexts, and mirrors everything.
pub(crate) fn alloc_block(
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
    let cctx = new_cctx(&cparams).unwrap_or(std::ptr::null_mut());
    let dctx = new_dctx(&dparams).unwrap_or(std::ptr::null_mut());
    if cctx.is_null() || dctx.is_null() {
        // SAFETY: freeing what was just created.
        unsafe {
            free_ctx(cctx);
            free_ctx(dctx);
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

/// Frees the super-chunk and everything it owns (NULL is ignored): `blosc2_schunk_free`.
///
/// # Safety
/// `schunk` NULL or live; not used afterwards.
pub(crate) unsafe fn free_block(schunk: *mut blosc2_schunk) -> Result<c_int> {
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
        free_ctx(sc.cctx);
        free_ctx(sc.dctx);
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
}
