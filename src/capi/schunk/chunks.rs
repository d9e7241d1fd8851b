//! Chunk operations of the super-chunk C API: append, insert, update, delete, get, decompress,
//! reorder and fill.

use super::*;
use crate::capi::boundary::malloc_copy;
use crate::capi::codec::vldecompress_block_ctx;

// ---------------------------------------------------------------------------------------------
// Chunk operations
// ---------------------------------------------------------------------------------------------

/// Borrows a whole chunk from a C pointer (header first, then `cbytes`).
///
/// # Safety
/// `chunk` NULL or a complete chunk.
unsafe fn chunk_arg<'a>(chunk: *const u8) -> Result<&'a [u8]> {
    // SAFETY: forwarded contract.
    unsafe { crate::capi::chunk::whole_chunk(chunk as *const c_void) }
}

/// Runs a chunk mutation of the core under the exclusive lock and re-mirrors the counters:
/// the body of the chunk entry points, also b2nd's chunk writes.
///
/// # Safety
/// `schunk` NULL or live.
pub(crate) unsafe fn mutate(
    schunk: *mut blosc2_schunk,
    full_sync: bool,
    op: impl FnOnce(&mut SChunk) -> Result<i64>,
) -> Result<i64> {
    // SAFETY: forwarded contract.
    let mut x = unsafe { exclusive(schunk) }?;
    let (sc, h) = x.parts();
    bracket(sc, h, true, |sc, h| {
        let n = op(&mut h.core)?;
        sync_counters(sc, h, full_sync);
        Ok(n)
    })
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
    let op = |s: &mut SChunk| {
        // SAFETY: forwarded contract.
        let n = op(s, unsafe { chunk_arg(chunk) }?)?;
        if !copy {
            // SAFETY: ownership was transferred to us; the chunk has been copied.
            unsafe { libc::free(chunk as *mut c_void) };
        }
        Ok(n)
    };
    // SAFETY: forwarded contract.
    unsafe { mutate(schunk, full_sync, op) }
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
    guard(|| unsafe { with_chunk(schunk, chunk, copy, false, |s, c| s.append_chunk(c)) })
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
    guard(|| {
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
    guard(|| {
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
    // SAFETY: forwarded contract.
    guard(|| unsafe { mutate(schunk, true, |s| s.delete_chunk(nchunk)) })
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
    guard(|| {
        // Compress first, holding only the mutation mutex (the codec and prefilter may read
        // this super-chunk, see [`sync`]), then commit under the exclusive lock.
        // SAFETY: forwarded contract.
        let w = unsafe { writer(schunk) }?;
        if nbytes < 0 {
            return Err(Error::InvalidParam);
        }
        // SAFETY: forwarded contract.
        let s = unsafe { crate::capi::chunk::input(src, nbytes) }?;
        // SAFETY: forwarded contract.
        let nchunk = unsafe { read_op(schunk, false, |r| Ok(r.h.core.nchunks())) }?;
        let c = w.compress(nchunk, s)?;
        let mut x = w.exclusive();
        let (sc, h) = x.parts();
        bracket(sc, h, true, |sc, h| {
            let n = h.core.append_chunk_vec(c)?;
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
    guard(|| {
        let op = |r: &Reader<'_>| {
            if nchunk < 0 || nchunk >= r.h.core.nchunks() {
                return Err(Error::InvalidParam);
            }
            // SAFETY: forwarded contract.
            let d = unsafe { crate::capi::chunk::output(dest, nbytes) }?;
            r.decode(Some(nchunk), |codec, buf| {
                Ok(r.h.core.decompress_chunk_in(codec, nchunk, d, buf)? as c_int)
            })
        };
        // SAFETY: forwarded contract.
        unsafe { read_op(schunk, true, op) }
    })
}

/// Chunk `nchunk` decompressed into `dst` skipping the blocks a `mask` marks (`true`): what
/// `blosc2_set_maskout` on `schunk->dctx` followed by `blosc2_schunk_decompress_chunk` does,
/// with the mask belonging to this call alone, so threads reading one super-chunk never see
/// each other's masks (the b2nd chunk and slice reads).
///
/// # Safety
/// `schunk` NULL or live.
pub(crate) unsafe fn decompress_chunk_masked(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    mask: Option<Vec<bool>>,
    dst: &mut [u8],
) -> Result<usize> {
    let op = |r: &Reader<'_>| {
        if nchunk < 0 || nchunk >= r.h.core.nchunks() {
            return Err(Error::InvalidParam);
        }
        r.decode_masked(Some(nchunk), mask, |codec, buf| {
            r.h.core.decompress_chunk_in(codec, nchunk, dst, buf)
        })
    };
    // SAFETY: forwarded contract.
    unsafe { read_op(schunk, true, op) }
}

/// Decodes the blocks `nblocks` of chunk `nchunk` (of `chunk_bytes` uncompressed bytes, else
/// `Data`) one at a time into `scratch` (one block's bytes), calling `f(k, block)` after block
/// `nblocks[k]`, with the super-chunk's `dctx` (the
/// b2nd slice reads; see [`SChunk::decode_blocks_in`]).
///
/// # Safety
/// `schunk` NULL or live.
pub(crate) unsafe fn decode_blocks(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk_bytes: usize,
    nblocks: &[i64],
    scratch: &mut [u8],
    f: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
) -> Result<()> {
    let op = |r: &Reader<'_>| {
        if nchunk < 0 || nchunk >= r.h.core.nchunks() {
            return Err(Error::InvalidParam);
        }
        let n = scratch.len();
        r.decode(Some(nchunk), |codec, buf| {
            r.h.core
                .decode_blocks_in(codec, nchunk, chunk_bytes, nblocks, n, scratch, buf, f)
        })
    };
    // SAFETY: forwarded contract.
    unsafe { read_op(schunk, true, op) }
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
            if lazy {
                // A frame on storage: c-blosc2's lazy chunk (header, block starts, trailer),
                // the blocks left in storage.
                if let Some(v) = r.h.core.lazy_chunk(nchunk)? {
                    let len = i32::try_from(v.len()).map_err(|_| Error::InvalidHeader)?;
                    return Ok::<_, Error>((malloc_copy(&v), true, len));
                }
            }
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
    guard(|| unsafe { hand_out(schunk, nchunk, chunk, needs_free, false) })
}

/// Like [`blosc2_schunk_get_chunk`], but for a frame on storage (file, frame at an offset,
/// sframe, user I/O) c-blosc2's lazy chunk: the header (flagged lazy) and block starts read
/// from storage, followed by the chunk's number, its position and each block's compressed
/// size. `blosc2_decompress_ctx`/`blosc2_getitem_ctx` with a context bound to this super-chunk
/// read the blocks they need from storage. In-memory frames return the chunk itself.
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
    guard(|| unsafe { hand_out(schunk, nchunk, chunk, needs_free, true) })
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
    guard(|| {
        let op = |r: &Reader<'_>| {
            if dest.is_null() || destsize.is_null() {
                return Err(Error::NullPointer);
            }
            let c = r.h.core.chunk(nchunk)?;
            let len = i32::try_from(c.len()).map_err(|_| Error::Data)?;
            r.with_dctx(|dctx| {
                // SAFETY: `c` is a complete chunk of `len` bytes; out-pointers valid by
                // contract; we hold the schunk's `dctx`.
                unsafe {
                    vldecompress_block_ctx(
                        dctx,
                        c.as_ptr() as *const c_void,
                        len,
                        nblock,
                        dest,
                        destsize,
                    )
                }
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
    guard(|| {
        // SAFETY: forwarded contract.
        let mut x = unsafe { exclusive(schunk) }?;
        let (sc, h) = x.parts();
        bracket(sc, h, true, |sc, h| {
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
    // SAFETY: forwarded contract.
    guard(|| unsafe { fill_special(schunk, nitems, special_value, chunksize) })
}

/// The body of [`blosc2_schunk_fill_special`] (also b2nd's new arrays).
///
/// # Safety
/// `schunk` NULL or live.
pub(crate) unsafe fn fill_special(
    schunk: *mut blosc2_schunk,
    nitems: i64,
    special_value: c_int,
    chunksize: i32,
) -> Result<i64> {
    // SAFETY: forwarded contract.
    let mut x = unsafe { exclusive(schunk) }?;
    let (sc, h) = x.parts();
    bracket(sc, h, true, |sc, h| {
        let r = h.core.fill_special(nitems, special_value, chunksize);
        // A frame takes the blocksize of its special chunks, as c-blosc2's does.
        sc.blocksize = h.core.cparams().blocksize;
        sync_counters(sc, h, true);
        r
    })
}

/// The raw offsets index of a frame-backed super-chunk (`malloc`ed, `nchunks` values); NULL
/// for plain super-chunks.
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_frame_get_offsets(schunk: *mut blosc2_schunk) -> *mut i64 {
    guard(|| {
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
