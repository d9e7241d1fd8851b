//! Compressing and decompressing through a context: `blosc2_compress_ctx`,
//! `blosc2_decompress_ctx`, `blosc2_getitem(_bytes)_ctx` and the VL-block entry points.
//!
//! Apart from [`super::chunk`], which owns the contexts, because a lazy chunk is decoded
//! through the super-chunk handle its context is bound to, and the handle creates and frees
//! its contexts through `chunk`: `chunk` <- `handle` <- `codec`, without a cycle.

use super::boundary::{guard, malloc_copy};
use super::chunk::{context_cell, context_mut, input, len_of, output};
use super::handle::{read_op, Reader};
use super::types::{blosc2_context, blosc2_schunk};
use crate::chunk::lazy::{self, LazySource};
use crate::chunk::vlchunk_nblocks;
use crate::error::{Error, Result};
use std::ffi::{c_int, c_void};

/// Runs `f` with what `src` must be read through: `None` for ordinary chunks, the frame of the
/// super-chunk the context is bound to for lazy chunks (read under that super-chunk's shared
/// lock). A lazy chunk without a bound super-chunk on storage is `INVALID_PARAM`, as in
/// c-blosc2.
fn with_lazy_source<T>(
    schunk: *mut c_void,
    src: &[u8],
    f: impl FnOnce(Option<&dyn LazySource>) -> Result<T>,
) -> Result<T> {
    if !lazy::needs_source(src) {
        return f(None);
    }
    let sc = schunk as *mut blosc2_schunk;
    if sc.is_null() {
        return Err(Error::InvalidParam);
    }
    let op = |r: &Reader<'_>| {
        let source = r.h.core.lazy_source().ok_or(Error::InvalidParam)?;
        f(Some(source))
    };
    // SAFETY: a context's `schunk` is a live super-chunk (c-blosc2's contract for lazy chunks;
    // the block's tag is checked).
    unsafe { read_op(sc, false, op) }
}

/// Compresses `srcsize` bytes into `dest`; returns the chunk size, 0 if it does not fit, or a
/// negative error.
///
/// # Safety
/// `context` a live compression context; `src`/`dest` valid for their sizes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_compress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let mut c = unsafe { context_mut(context) }?;
        if srcsize < 0 {
            return Err(Error::InvalidParam);
        }
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { (input(src, srcsize)?, output(dest, destsize)?) };
        Ok(c.compress(s, d)? as c_int)
    })
}

/// Decompresses a chunk into `dest`; returns the number of bytes written.
///
/// # Safety
/// `context` a live decompression context; `src`/`dest` valid for their sizes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_decompress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let cell = unsafe { context_cell(context) }?;
        let mut c = cell.lock()?;
        // The mask this thread set for this decompression (`blosc2_set_maskout`).
        c.apply_mask(cell.take_mask())?;
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { (input(src, srcsize)?, output(dest, destsize)?) };
        let n = with_lazy_source(c.schunk(), s, |source| match source {
            None => c.decompress(s, d),
            Some(source) => c.decompress_lazy(s, d, source),
        })?;
        Ok(n as c_int)
    })
}

/// Decodes `nitems` items (in the chunk's typesize) from item `start`.
///
/// # Safety
/// `context` a live context; `src`/`dest` valid for their sizes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_getitem_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let mut c = unsafe { context_mut(context) }?;
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { (input(src, srcsize)?, output(dest, destsize)?) };
        let n = with_lazy_source(c.schunk(), s, |source| {
            let e = c.getitem_engine()?;
            match source {
                None => e.getitem(s, start, nitems, d),
                Some(source) => e.with_source(source).getitem(s, start, nitems, d),
            }
        })?;
        Ok(n as c_int)
    })
}

/// Decodes `nbytes` bytes from byte `start` (both multiples of the chunk's typesize).
///
/// # Safety
/// `context` a live context; `src`/`dest` valid for their sizes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_getitem_bytes_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    start: i32,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let mut c = unsafe { context_mut(context) }?;
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { (input(src, srcsize)?, output(dest, destsize)?) };
        let n = with_lazy_source(c.schunk(), s, |source| {
            let e = c.getitem_engine()?;
            match source {
                None => e.getitem_bytes(s, start, nbytes, d),
                Some(source) => e.with_source(source).getitem_bytes(s, start, nbytes, d),
            }
        })?;
        Ok(n as c_int)
    })
}

/// Compresses `nblocks` buffers as one VL-block chunk.
///
/// # Safety
/// `context` a live compression context; `srcs`/`srcsizes` hold `nblocks` entries, each
/// source valid for its size; `dest` valid for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlcompress_ctx(
    context: *mut blosc2_context,
    srcs: *const *const c_void,
    srcsizes: *const i32,
    nblocks: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let mut c = unsafe { context_mut(context) }?;
        let comp = c.compressor()?;
        if srcs.is_null() || srcsizes.is_null() || nblocks <= 0 {
            return Err(Error::InvalidParam);
        }
        let n = len_of(nblocks);
        // SAFETY: both arrays hold `nblocks` entries by this function's contract.
        let (ptrs, sizes) = unsafe {
            (
                std::slice::from_raw_parts(srcs, n),
                std::slice::from_raw_parts(srcsizes, n),
            )
        };
        let mut blocks = Vec::with_capacity(n);
        for (&p, &len) in ptrs.iter().zip(sizes) {
            if p.is_null() || len <= 0 {
                return Err(Error::InvalidParam);
            }
            // SAFETY: each source is valid for its size by this function's contract.
            blocks.push(unsafe { input(p, len) }?);
        }
        // SAFETY: forwarded contract.
        let d = unsafe { output(dest, destsize) }?;
        Ok(comp.vlcompress(&blocks, d)? as c_int)
    })
}

/// Decompresses every block of a VL-block chunk into `malloc`ed buffers (the caller frees
/// them); returns the number of blocks.
///
/// # Safety
/// `context` a live decompression context; `src` valid for `srcsize`; `dests`/`destsizes`
/// hold `maxblocks` writable entries.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vldecompress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dests: *mut *mut c_void,
    destsizes: *mut i32,
    maxblocks: i32,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let mut c = unsafe { context_mut(context) }?;
        let schunk = c.schunk();
        let d = c.decompressor()?;
        if dests.is_null() || destsizes.is_null() || maxblocks <= 0 {
            return Err(Error::InvalidParam);
        }
        // SAFETY: forwarded contract.
        let s = unsafe { input(src, srcsize) }?;
        let nblocks = vlchunk_nblocks(s)?;
        if nblocks > maxblocks {
            return Err(Error::InvalidParam);
        }
        let blocks = with_lazy_source(schunk, s, |source| match source {
            None => d.vldecompress(s),
            Some(source) => d.with_source(source).vldecompress(s),
        })?;
        let n = blocks.len();
        // SAFETY: both arrays hold `maxblocks >= n` entries by this function's contract.
        let (out, sizes) = unsafe {
            (
                std::slice::from_raw_parts_mut(dests, n),
                std::slice::from_raw_parts_mut(destsizes, n),
            )
        };
        for (i, b) in blocks.iter().enumerate() {
            let p = malloc_copy(b);
            if p.is_null() {
                for q in out.iter_mut().take(i) {
                    // SAFETY: these buffers were malloc'ed just above.
                    unsafe { libc::free(*q) };
                    *q = std::ptr::null_mut();
                }
                return Err(Error::MemoryAlloc);
            }
            out[i] = p as *mut c_void;
            sizes[i] = b.len() as i32;
        }
        Ok(n as c_int)
    })
}

/// The number of blocks of a VL-block chunk.
///
/// # Safety
/// `src` valid for `srcsize` bytes; `nblocks` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlchunk_get_nblocks(
    src: *const c_void,
    srcsize: i32,
    nblocks: *mut i32,
) -> c_int {
    guard(|| {
        if src.is_null() || nblocks.is_null() {
            return Err(Error::InvalidParam);
        }
        // SAFETY: forwarded contract.
        let s = unsafe { input(src, srcsize) }?;
        let n = vlchunk_nblocks(s)?;
        // SAFETY: non-NULL and writable by this function's contract.
        unsafe { *nblocks = n };
        Ok(0)
    })
}

/// `blosc2_vldecompress_block_ctx`, which the super-chunk's `get_vlblock` uses too.
///
/// # Safety
/// As for [`blosc2_vldecompress_block_ctx`].
pub(crate) unsafe fn vldecompress_block_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    nblock: i32,
    dest: *mut *mut u8,
    destsize: *mut i32,
) -> Result<c_int> {
    // SAFETY: forwarded contract.
    let mut c = unsafe { context_mut(context) }?;
    let schunk = c.schunk();
    let d = c.decompressor()?;
    if dest.is_null() || destsize.is_null() {
        return Err(Error::InvalidParam);
    }
    // SAFETY: forwarded contract.
    let s = unsafe { input(src, srcsize) }?;
    let block = with_lazy_source(schunk, s, |source| match source {
        None => d.vldecompress_block(s, nblock),
        Some(source) => d.with_source(source).vldecompress_block(s, nblock),
    })?;
    let p = malloc_copy(&block);
    if p.is_null() {
        return Err(Error::MemoryAlloc);
    }
    // SAFETY: both out-pointers are writable by this function's contract.
    unsafe {
        *dest = p;
        *destsize = block.len() as i32;
    }
    Ok(block.len() as c_int)
}

/// Decompresses block `nblock` of a VL-block chunk into a `malloc`ed buffer; returns its size.
///
/// # Safety
/// `context` a live decompression context; `src` valid for `srcsize`; `dest`/`destsize`
/// writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vldecompress_block_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    nblock: i32,
    dest: *mut *mut u8,
    destsize: *mut i32,
) -> c_int {
    // SAFETY: forwarded contract.
    guard(|| unsafe { vldecompress_block_ctx(context, src, srcsize, nblock, dest, destsize) })
}
