//! The b2nd array C API (`b2nd_array_t`, `b2nd_context_t` and the `b2nd_*` functions of
//! c-blosc2 3.3's `b2nd.h`) over the safe array core of [`crate::b2nd`].
//!
//! Like c-blosc2's own implementation, an array is a `b2nd_array_t` (libc-`malloc`ed, released
//! with `b2nd_free`) around a `blosc2_schunk*` (`sc`) that the array owns; every chunk goes
//! through the super-chunk's public operations (`blosc2_schunk_decompress_chunk`,
//! `blosc2_compress_ctx` with its `cctx`, `blosc2_schunk_update_chunk`, ...), so locking,
//! counters, user codecs and prefilters behave as for any other super-chunk. The geometry fields
//! of the struct are what every call reads (callers may read them, as python-blosc2 does), and
//! they are rewritten after each shape change together with the `b2nd` metalayer.
//!
//! `b2nd_context_t` is opaque in the public header but has c-blosc2's layout (its tests read
//! `ndim` and `shape` through their private header).
//!
//! Views (`b2nd_squeeze`, `b2nd_squeeze_index`, `b2nd_expand_dims`) are copies, never aliases of
//! the parent's chunks: see [`crate::b2nd`].
//!
//! The header, `include/b2nd.h`, is written by hand (cbindgen skips this module) so that it keeps
//! c-blosc2's anonymous-struct typedef and its documentation order.
#![allow(non_camel_case_types)]

use super::boundary::{guard_i64, guard_int, guard_ptr, malloc_copy, malloc_zeroed};
use super::chunk::{
    blosc2_chunk_repeatval, blosc2_chunk_zeros, blosc2_ctx_get_dparams, blosc2_set_maskout,
};
use super::codec::blosc2_compress_ctx;
use super::meta::{blosc2_meta_add, blosc2_meta_update, blosc2_vlmeta_add, blosc2_vlmeta_get};
use super::schunk::decode_blocks;
use super::schunk::{
    blosc2_schunk_append_file, blosc2_schunk_copy, blosc2_schunk_decompress_chunk,
    blosc2_schunk_delete_chunk, blosc2_schunk_fill_special, blosc2_schunk_free,
    blosc2_schunk_from_buffer, blosc2_schunk_get_chunk, blosc2_schunk_get_cparams,
    blosc2_schunk_get_sparse_buffer, blosc2_schunk_insert_chunk, blosc2_schunk_lock,
    blosc2_schunk_new, blosc2_schunk_open, blosc2_schunk_open_offset, blosc2_schunk_refresh,
    blosc2_schunk_to_buffer, blosc2_schunk_unlock, blosc2_schunk_update_chunk,
};
use super::types::*;
use crate::b2nd::array::{self as core, ChunkStore};
use crate::b2nd::geometry::{c_strides, Geometry};
use crate::b2nd::hyperslab::{chunks_touched, copy_nd};
use crate::b2nd::selection;
use crate::b2nd_meta::{self, MAX_DIM};
use crate::error::{Error, Result};
use std::ffi::{c_char, c_int, c_void, CStr};

/// `B2ND_MAX_METALAYERS`.
pub const B2ND_MAX_METALAYERS: usize = 15;

/// `struct chunk_cache_s`: a one-chunk cache callers may use (b2frame leaves it alone).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct chunk_cache_s {
    /// Cached chunk data.
    pub data: *mut u8,
    /// Chunk number in the cache, -1 when empty.
    pub nchunk: i64,
}

/// `b2nd_array_t`, with c-blosc2 3.3.5's layout.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct b2nd_array_t {
    pub sc: *mut blosc2_schunk,
    pub shape: [i64; 16],
    pub chunkshape: [i32; 16],
    pub extshape: [i64; 16],
    pub blockshape: [i32; 16],
    pub extchunkshape: [i64; 16],
    pub nitems: i64,
    pub chunknitems: i32,
    pub extnitems: i64,
    pub blocknitems: i32,
    pub extchunknitems: i64,
    pub ndim: i8,
    pub chunk_cache: chunk_cache_s,
    pub item_array_strides: [i64; 16],
    pub item_chunk_strides: [i64; 16],
    pub item_extchunk_strides: [i64; 16],
    pub item_block_strides: [i64; 16],
    pub block_chunk_strides: [i64; 16],
    pub chunk_array_strides: [i64; 16],
    pub dtype: *mut c_char,
    pub dtype_format: i8,
    pub last_tick: i64,
}

/// `struct b2nd_context_s` (`b2nd_context_t`), with c-blosc2's layout.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct b2nd_context_s {
    pub ndim: i8,
    pub shape: [i64; 16],
    pub chunkshape: [i32; 16],
    pub blockshape: [i32; 16],
    pub dtype: *mut c_char,
    pub dtype_format: i8,
    pub b2_storage: *mut blosc2_storage,
    pub metalayers: [blosc2_metalayer; 15],
    pub nmetalayers: i32,
}

/// `b2nd_context_t`.
pub type b2nd_context_t = b2nd_context_s;

// ---------------------------------------------------------------------------------------------
// The super-chunk behind an array, through its C API
// ---------------------------------------------------------------------------------------------

/// A negative C return value as an error (unknown codes as `Failure`).
fn code(rc: i64) -> Result<i64> {
    if rc < 0 {
        Err(i32::try_from(rc)
            .ok()
            .and_then(Error::from_code)
            .unwrap_or(Error::Failure))
    } else {
        Ok(rc)
    }
}

/// The array's super-chunk as a [`ChunkStore`].
struct CStore {
    sc: *mut blosc2_schunk,
}

impl CStore {
    fn sc(&self) -> &blosc2_schunk {
        // SAFETY: built only from a live array's non-NULL `sc` (see `store`).
        unsafe { &*self.sc }
    }
}

impl ChunkStore for CStore {
    fn typesize(&self) -> i32 {
        self.sc().typesize
    }
    fn nchunks(&self) -> i64 {
        self.sc().nchunks
    }
    fn read_chunk(&mut self, nchunk: i64, dst: &mut [u8]) -> Result<usize> {
        let len = i32::try_from(dst.len()).map_err(|_| Error::InvalidParam)?;
        // SAFETY: live schunk; `dst` is valid for `len` bytes.
        let rc = unsafe {
            blosc2_schunk_decompress_chunk(self.sc, nchunk, dst.as_mut_ptr() as *mut c_void, len)
        };
        code(rc.into())
            .map(|n| n as usize)
            .map_err(|_| Error::Failure)
    }
    fn nthreads(&self) -> i32 {
        let mut dp = BLOSC2_DPARAMS_DEFAULTS;
        // SAFETY: live schunk; `dctx` is its decompression context (or NULL: an error code);
        // `dp` is a valid out-pointer.
        let rc = unsafe { blosc2_ctx_get_dparams(self.sc().dctx, &mut dp) };
        if rc < 0 {
            1
        } else {
            i32::from(dp.nthreads)
        }
    }
    fn read_blocks(
        &mut self,
        nchunk: i64,
        nblocks: &[i64],
        scratch: &mut [u8],
        f: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<bool> {
        // SAFETY: live schunk.
        unsafe { decode_blocks(self.sc, nchunk, nblocks, scratch, f) }.map_err(|e| match e {
            Error::InvalidParam | Error::ReadBuffer | Error::InvalidHeader => Error::Data,
            e => e,
        })?;
        Ok(true)
    }
    fn read_chunk_blocks(&mut self, nchunk: i64, skip: &[bool], dst: &mut [u8]) -> Result<usize> {
        let n = c_int::try_from(skip.len()).map_err(|_| Error::InvalidParam)?;
        let mut mask = skip.to_vec();
        // SAFETY: live schunk; `dctx` is its decompression context; `mask` holds `n` bools. The
        // mask applies to the next decompression only, which is the one below.
        let rc = unsafe { blosc2_set_maskout((*self.sc).dctx, mask.as_mut_ptr(), n) };
        code(rc.into()).map_err(|_| Error::Failure)?;
        self.read_chunk(nchunk, dst)
    }
    fn write_chunk(&mut self, nchunk: i64, src: &[u8]) -> Result<()> {
        let len = i32::try_from(src.len())
            .ok()
            .filter(|&l| l <= BLOSC2_MAX_BUFFERSIZE)
            .ok_or(Error::MaxBufsizeExceeded)?;
        let mut scratch = core::Scratch::compressed();
        let out = scratch.get(src.len() + BLOSC2_MAX_OVERHEAD as usize);
        // SAFETY: live schunk; `current_nchunk` is read by prefilters, as in c-blosc2.
        let cctx = unsafe {
            (*self.sc).current_nchunk = nchunk;
            (*self.sc).cctx
        };
        // SAFETY: `src` and `out` are valid for the lengths given; `cctx` is the schunk's.
        let n = unsafe {
            blosc2_compress_ctx(
                cctx,
                src.as_ptr() as *const c_void,
                len,
                out.as_mut_ptr() as *mut c_void,
                out.len() as i32,
            )
        };
        if n <= 0 {
            return Err(Error::Failure);
        }
        // SAFETY: live schunk; the chunk is copied (copy=true), `out` stays ours.
        let rc = unsafe { blosc2_schunk_update_chunk(self.sc, nchunk, out.as_mut_ptr(), true) };
        code(rc).map(|_| ()).map_err(|_| Error::Failure)
    }
    fn insert_zero_chunk(&mut self, nchunk: i64, nbytes: i32) -> Result<()> {
        let cp = cparams_of(self.sc)?;
        let mut c = [0u8; BLOSC_EXTENDED_HEADER_LENGTH as usize];
        // SAFETY: `c` is valid for its length.
        let n = unsafe {
            blosc2_chunk_zeros(cp, nbytes, c.as_mut_ptr() as *mut c_void, c.len() as i32)
        };
        code(n.into()).map_err(|_| Error::Failure)?;
        // SAFETY: live schunk; the chunk is copied.
        let rc = unsafe { blosc2_schunk_insert_chunk(self.sc, nchunk, c.as_mut_ptr(), true) };
        code(rc).map(|_| ()).map_err(|_| Error::Failure)
    }
    fn delete_chunk(&mut self, nchunk: i64) -> Result<()> {
        // SAFETY: live schunk.
        let rc = unsafe { blosc2_schunk_delete_chunk(self.sc, nchunk) };
        code(rc).map(|_| ()).map_err(|_| Error::Failure)
    }
}

/// A copy of the super-chunk's cparams.
fn cparams_of(sc: *mut blosc2_schunk) -> Result<blosc2_cparams> {
    let mut p: *mut blosc2_cparams = std::ptr::null_mut();
    // SAFETY: live schunk; `p` is a valid out-pointer.
    code(unsafe { blosc2_schunk_get_cparams(sc, &mut p) }.into())
        .map_err(|_| Error::NullPointer)?;
    // SAFETY: a malloc'ed cparams from the call above, read once and freed.
    let cp = unsafe {
        let v = *p;
        libc::free(p as *mut c_void);
        v
    };
    Ok(cp)
}

/// The metalayer `name` of a super-chunk (from its C mirror, like c-blosc2's header-inline
/// `blosc2_meta_get`).
fn meta_get(sc: *mut blosc2_schunk, name: &str) -> Option<Vec<u8>> {
    // SAFETY: live schunk; its mirrored metalayers are valid C strings and buffers.
    unsafe {
        let s = &*sc;
        for i in 0..usize::from(s.nmetalayers).min(16) {
            let m = s.metalayers[i];
            if m.is_null() || (*m).name.is_null() {
                continue;
            }
            if CStr::from_ptr((*m).name).to_bytes() == name.as_bytes() {
                let len = usize::try_from((*m).content_len).ok()?;
                if len == 0 || (*m).content.is_null() {
                    return Some(Vec::new());
                }
                return Some(std::slice::from_raw_parts((*m).content, len).to_vec());
            }
        }
    }
    None
}

/// Names of the super-chunk's metalayers.
fn meta_names(sc: *mut blosc2_schunk) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    // SAFETY: live schunk; mirrored names are valid C strings.
    unsafe {
        let s = &*sc;
        for i in 0..usize::from(s.nmetalayers).min(16) {
            let m = s.metalayers[i];
            if !m.is_null() && !(*m).name.is_null() {
                v.push(CStr::from_ptr((*m).name).to_bytes().to_vec());
            }
        }
    }
    v
}

/// Copies every vlmetalayer of `from` to `to`.
fn copy_vlmeta(from: *mut blosc2_schunk, to: *mut blosc2_schunk) -> Result<()> {
    let mut names = Vec::new();
    // SAFETY: live schunk; mirrored names are valid C strings.
    unsafe {
        let s = &*from;
        for i in 0..usize::try_from(s.nvlmetalayers)
            .unwrap_or(0)
            .min(s.vlmetalayers.len())
        {
            let m = s.vlmetalayers[i];
            if !m.is_null() && !(*m).name.is_null() {
                names.push(CStr::from_ptr((*m).name).to_owned());
            }
        }
    }
    for n in names {
        let (mut c, mut len): (*mut u8, i32) = (std::ptr::null_mut(), 0);
        // SAFETY: live schunks; out-pointers valid; `c` is malloc'ed by the call and freed.
        unsafe {
            code(blosc2_vlmeta_get(from, n.as_ptr(), &mut c, &mut len).into())?;
            let mut cp = BLOSC2_CPARAMS_DEFAULTS;
            let rc = blosc2_vlmeta_add(to, n.as_ptr(), c, len, &mut cp);
            libc::free(c as *mut c_void);
            code(rc.into())?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The C struct
// ---------------------------------------------------------------------------------------------

/// The array behind a pointer.
///
/// # Safety
/// `p` NULL or a live array.
unsafe fn arr<'a>(p: *const b2nd_array_t) -> Result<&'a mut b2nd_array_t> {
    if p.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: live by contract; b2nd arrays are not shared between threads (as in c-blosc2).
    Ok(unsafe { &mut *(p as *mut b2nd_array_t) })
}

/// The array's super-chunk as a store (`NullPointer` without one).
fn store(a: &b2nd_array_t) -> Result<CStore> {
    if a.sc.is_null() {
        return Err(Error::NullPointer);
    }
    Ok(CStore { sc: a.sc })
}

/// The geometry the struct describes.
fn geometry(a: &b2nd_array_t) -> Result<Geometry> {
    let n = usize::try_from(a.ndim)
        .ok()
        .filter(|&n| n <= MAX_DIM)
        .ok_or(Error::InvalidParam)?;
    Geometry::new(&a.shape[..n], &a.chunkshape[..n], &a.blockshape[..n])
}

/// Writes `g` into the struct (entries past `ndim` are 1, strides past `ndim` 0).
fn set_geometry(a: &mut b2nd_array_t, g: &Geometry) {
    let n = g.ndim();
    a.ndim = n as i8;
    a.nitems = g.nitems();
    a.chunknitems = g.chunknitems();
    a.extnitems = g.extnitems();
    a.blocknitems = g.blocknitems();
    a.extchunknitems = g.extchunknitems();
    let s = g.strides();
    for i in 0..MAX_DIM {
        let inside = i < n;
        a.shape[i] = if inside { g.shape()[i] } else { 1 };
        a.chunkshape[i] = if inside { g.chunkshape()[i] } else { 1 };
        a.blockshape[i] = if inside { g.blockshape()[i] } else { 1 };
        a.extshape[i] = if inside { g.extshape()[i] } else { 1 };
        a.extchunkshape[i] = if inside { g.extchunkshape()[i] } else { 1 };
        let pick = |v: &Vec<i64>| if inside { v[i] } else { 0 };
        a.item_array_strides[i] = pick(&s.item_array);
        a.item_chunk_strides[i] = pick(&s.item_chunk);
        a.item_extchunk_strides[i] = pick(&s.item_extchunk);
        a.item_block_strides[i] = pick(&s.item_block);
        a.block_chunk_strides[i] = pick(&s.block_chunk);
        a.chunk_array_strides[i] = pick(&s.chunk_array);
    }
}

/// The dtype string of the struct.
fn dtype_of(a: &b2nd_array_t) -> Option<Vec<u8>> {
    // SAFETY: NULL or the NUL-terminated string this module malloc'ed.
    (!a.dtype.is_null()).then(|| unsafe { CStr::from_ptr(a.dtype) }.to_bytes().to_vec())
}

/// A malloc'ed NUL-terminated copy of `s`.
fn strdup(s: &[u8]) -> Result<*mut c_char> {
    let mut v = s.to_vec();
    v.push(0);
    let p = malloc_copy(&v) as *mut c_char;
    if p.is_null() {
        return Err(Error::MemoryAlloc);
    }
    Ok(p)
}

/// Stores the struct's geometry in the `b2nd` metalayer (added or updated).
fn publish_meta(a: &mut b2nd_array_t) -> Result<()> {
    if a.sc.is_null() {
        return Ok(());
    }
    let g = geometry(a)?;
    let dt = dtype_of(a);
    let mut m = b2nd_meta::serialize(
        g.shape(),
        g.chunkshape(),
        g.blockshape(),
        dt.as_deref(),
        a.dtype_format,
    )
    .map_err(|_| Error::Failure)?;
    let exists = meta_get(a.sc, "b2nd").is_some();
    // SAFETY: live schunk; name NUL-terminated; content valid for its length (copied).
    let rc = unsafe {
        if exists {
            blosc2_meta_update(a.sc, c"b2nd".as_ptr(), m.as_mut_ptr(), m.len() as i32)
        } else {
            blosc2_meta_add(a.sc, c"b2nd".as_ptr(), m.as_mut_ptr(), m.len() as i32)
        }
    };
    code(rc.into()).map_err(|_| Error::Failure)?;
    // SAFETY: live schunk.
    a.last_tick = unsafe { (*a.sc).change_tick };
    Ok(())
}

/// A new zeroed `malloc`ed struct with an empty chunk cache.
fn alloc_array() -> Result<*mut b2nd_array_t> {
    let p = malloc_zeroed(std::mem::size_of::<b2nd_array_t>()) as *mut b2nd_array_t;
    if p.is_null() {
        return Err(Error::MemoryAlloc);
    }
    // SAFETY: freshly allocated, zeroed (a valid bit pattern for every field) and ours.
    unsafe { (*p).chunk_cache.nchunk = -1 };
    Ok(p)
}

/// Frees a struct built here, with its dtype and (when `with_sc`) its super-chunk.
fn drop_array(p: *mut b2nd_array_t, with_sc: bool) {
    if p.is_null() {
        return;
    }
    // SAFETY: `p` is a live array of ours; each owned pointer is released once.
    unsafe {
        if with_sc && !(*p).sc.is_null() {
            blosc2_schunk_free((*p).sc);
        }
        libc::free((*p).dtype as *mut c_void);
        libc::free(p as *mut c_void);
    }
}

/// Re-reads the geometry when another handle changed the `b2nd` metalayer of a disk frame
/// (c-blosc2's refresh path). Returns whether it re-synced.
fn refresh_if_stale(a: &mut b2nd_array_t) -> Result<bool> {
    if a.sc.is_null() {
        return Ok(false);
    }
    // SAFETY: live schunk.
    let (frame, on_disk) = unsafe {
        let s = &*a.sc;
        let disk = !s.storage.is_null() && !(*s.storage).urlpath.is_null();
        (s.frame, disk)
    };
    if frame.is_null() {
        return Ok(false);
    }
    if on_disk {
        // SAFETY: live schunk.
        code(unsafe { blosc2_schunk_refresh(a.sc) }.into())?;
    }
    // SAFETY: live schunk.
    let tick = unsafe { (*a.sc).change_tick };
    if tick == a.last_tick {
        return Ok(false);
    }
    let Some(m) = meta_get(a.sc, "b2nd").or_else(|| meta_get(a.sc, "caterva")) else {
        return Ok(false);
    };
    let (m, _) = b2nd_meta::deserialize(&m, true)?;
    let n = m.ndim();
    if n != a.ndim as usize
        || m.chunkshape[..] != a.chunkshape[..n]
        || m.blockshape[..] != a.blockshape[..n]
    {
        return Err(Error::Data);
    }
    let g = Geometry::stored(&m.shape, &m.chunkshape, &m.blockshape)?;
    set_geometry(a, &g);
    a.last_tick = tick;
    Ok(true)
}

// ---------------------------------------------------------------------------------------------
// Contexts
// ---------------------------------------------------------------------------------------------

/// The context behind a pointer.
///
/// # Safety
/// `p` NULL or a live context.
unsafe fn ctx_ref<'a>(p: *mut b2nd_context_t) -> Result<&'a mut b2nd_context_t> {
    if p.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: live by contract.
    Ok(unsafe { &mut *p })
}

/// The context's geometry (ndim checked).
fn ctx_geometry(c: &b2nd_context_t) -> Result<Geometry> {
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
    guard_ptr(|| {
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
fn bytes_of<T: Copy>(v: &T) -> &[u8] {
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
    guard_int(|| {
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
    })
}

// ---------------------------------------------------------------------------------------------
// Constructors
// ---------------------------------------------------------------------------------------------

/// A struct for the context's geometry and dtype, without a super-chunk.
fn array_without_schunk(c: &b2nd_context_t) -> Result<*mut b2nd_array_t> {
    let g = ctx_geometry(c)?;
    let p = alloc_array()?;
    // SAFETY: freshly allocated and ours.
    let a = unsafe { &mut *p };
    set_geometry(a, &g);
    if !c.dtype.is_null() {
        // SAFETY: the context's dtype is a C string.
        match strdup(unsafe { CStr::from_ptr(c.dtype) }.to_bytes()) {
            Ok(d) => a.dtype = d,
            Err(e) => {
                drop_array(p, false);
                return Err(e);
            }
        }
    }
    a.dtype_format = c.dtype_format;
    Ok(p)
}

/// A new array for the context, its chunks all `special` (`BLOSC2_SPECIAL_*`).
fn array_new(c: &b2nd_context_t, special: c_int) -> Result<*mut b2nd_array_t> {
    let p = array_without_schunk(c)?;
    let r = (|| {
        // SAFETY: `p` is ours.
        let a = unsafe { &mut *p };
        // SAFETY: the context's storage was copied by `b2nd_create_ctx` (or is NULL).
        let sc = unsafe { blosc2_schunk_new(c.b2_storage) };
        if sc.is_null() {
            return Err(Error::Failure);
        }
        a.sc = sc;
        let g = geometry(a)?;
        // SAFETY: live schunk.
        let ts = unsafe { (*sc).typesize };
        if ts <= 0 {
            return Err(Error::InvalidParam);
        }
        let chunksize =
            i32::try_from(g.chunk_nbytes(ts)?).map_err(|_| Error::MaxBufsizeExceeded)?;
        // SAFETY: live schunk; c-blosc2 sets the chunk size the same way.
        unsafe {
            (*sc).chunksize = chunksize;
            if usize::from((*sc).nmetalayers) >= 16 {
                return Err(Error::Failure);
            }
        }
        publish_meta(a)?;
        let nmeta = usize::try_from(c.nmetalayers)
            .unwrap_or(0)
            .min(B2ND_MAX_METALAYERS);
        for m in &c.metalayers[..nmeta] {
            // SAFETY: the caller's metalayer entries (name C string, content valid).
            let rc = unsafe { blosc2_meta_add(sc, m.name, m.content, m.content_len) };
            code(rc.into()).map_err(|_| Error::Failure)?;
        }
        if g.nitems() != 0 {
            let items = g
                .nchunks()
                .checked_mul(g.extchunknitems())
                .ok_or(Error::InvalidParam)?;
            // SAFETY: live schunk.
            let rc = unsafe { blosc2_schunk_fill_special(sc, items, special, chunksize) };
            code(rc).map_err(|_| Error::Failure)?;
        }
        // SAFETY: live schunk.
        a.last_tick = unsafe { (*sc).change_tick };
        Ok(())
    })();
    match r {
        Ok(()) => Ok(p),
        Err(e) => {
            drop_array(p, true);
            Err(e)
        }
    }
}

/// Runs a constructor storing its result in `*array` (left untouched on failure).
///
/// # Safety
/// `ctx` NULL or live; `array` NULL or writable.
unsafe fn construct(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    f: impl FnOnce(&mut b2nd_context_t) -> Result<*mut b2nd_array_t>,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { ctx_ref(ctx) }?;
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        let p = f(c)?;
        // SAFETY: writable by contract.
        unsafe { *array = p };
        Ok(0)
    })
}

/// An array whose chunks are uninitialised (special chunks).
///
/// # Safety
/// `ctx` live; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_uninit(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { construct(ctx, array, |c| array_new(c, BLOSC2_SPECIAL_UNINIT)) }
}

/// An array of zeros (c-blosc2 fills "empty" arrays with zero chunks too).
///
/// # Safety
/// `ctx` live; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_empty(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { construct(ctx, array, |c| array_new(c, BLOSC2_SPECIAL_ZERO)) }
}

/// An array of zeros.
///
/// # Safety
/// `ctx` live; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_zeros(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { construct(ctx, array, |c| array_new(c, BLOSC2_SPECIAL_ZERO)) }
}

/// An array of NaNs (typesize 4 or 8, else `BLOSC2_ERROR_DATA`).
///
/// # Safety
/// `ctx` live; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_nans(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        construct(ctx, array, |c| {
            let p = array_new(c, BLOSC2_SPECIAL_NAN)?;
            // SAFETY: `p` and its schunk are live.
            let ts = (*(*p).sc).typesize;
            if ts != 4 && ts != 8 {
                drop_array(p, true);
                return Err(Error::Data);
            }
            Ok(p)
        })
    }
}

/// An array whose items are all `fill_value` (typesize bytes).
///
/// # Safety
/// `ctx` live; `array` writable; `fill_value` valid for typesize bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_full(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    fill_value: *const c_void,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        construct(ctx, array, |c| {
            if fill_value.is_null() {
                return Err(Error::NullPointer);
            }
            let p = array_new(c, BLOSC2_SPECIAL_ZERO)?;
            let r = (|| {
                let a = &mut *p;
                let g = geometry(a)?;
                let ts = (*a.sc).typesize;
                let nbytes =
                    i32::try_from(g.chunk_nbytes(ts)?).map_err(|_| Error::MaxBufsizeExceeded)?;
                let cp = cparams_of(a.sc)?;
                let mut chunk = vec![0u8; BLOSC_EXTENDED_HEADER_LENGTH as usize + ts as usize];
                let n = blosc2_chunk_repeatval(
                    cp,
                    nbytes,
                    chunk.as_mut_ptr() as *mut c_void,
                    chunk.len() as i32,
                    fill_value,
                );
                code(n.into()).map_err(|_| Error::Failure)?;
                for i in 0..(*a.sc).nchunks {
                    let rc = blosc2_schunk_update_chunk(a.sc, i, chunk.as_mut_ptr(), true);
                    code(rc).map_err(|_| Error::Failure)?;
                }
                Ok(())
            })();
            if let Err(e) = r {
                drop_array(p, true);
                return Err(e);
            }
            Ok(p)
        })
    }
}

/// Frees an array and its super-chunk.
///
/// # Safety
/// `array` NULL or a live array, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn b2nd_free(array: *mut b2nd_array_t) -> c_int {
    guard_int(|| {
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        drop_array(array, true);
        Ok(0)
    })
}

/// The array described by a super-chunk's `b2nd` (or `caterva`) metalayer.
fn from_schunk(sc: *mut blosc2_schunk) -> Result<*mut b2nd_array_t> {
    if sc.is_null() {
        return Err(Error::NullPointer);
    }
    cparams_of(sc)?;
    let m = meta_get(sc, "b2nd")
        .or_else(|| meta_get(sc, "caterva"))
        .ok_or(Error::MetalayerNotFound)?;
    let (m, _) = b2nd_meta::deserialize(&m, true)?;
    let g = Geometry::stored(&m.shape, &m.chunkshape, &m.blockshape)?;
    let p = alloc_array()?;
    // SAFETY: freshly allocated and ours.
    let a = unsafe { &mut *p };
    set_geometry(a, &g);
    if let Some(d) = &m.dtype {
        match strdup(d) {
            Ok(d) => a.dtype = d,
            Err(e) => {
                drop_array(p, false);
                return Err(e);
            }
        }
    }
    a.dtype_format = m.dtype_format;
    a.sc = sc;
    // SAFETY: live schunk.
    a.last_tick = unsafe { (*sc).change_tick };
    Ok(p)
}

/// Wraps an existing super-chunk (which the array then owns) as an array.
///
/// # Safety
/// `schunk` NULL or live; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_schunk(
    schunk: *mut blosc2_schunk,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard_int(|| {
        if schunk.is_null() || array.is_null() {
            return Err(Error::NullPointer);
        }
        let p = from_schunk(schunk)?;
        // SAFETY: writable by contract.
        unsafe { *array = p };
        Ok(0)
    })
}

/// Serialises the array's super-chunk into a cframe (`blosc2_schunk_to_buffer`).
///
/// # Safety
/// `array` live; out-pointers writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_to_cframe(
    array: *const b2nd_array_t,
    cframe: *mut *mut u8,
    cframe_len: *mut i64,
    needs_free: *mut bool,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if cframe.is_null() || cframe_len.is_null() || needs_free.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: live schunk; out-pointers writable by contract.
        let n = unsafe { blosc2_schunk_to_buffer(a.sc, cframe, needs_free) };
        // SAFETY: writable by contract.
        unsafe { *cframe_len = n };
        if n <= 0 {
            return Err(Error::Failure);
        }
        Ok(0)
    })
}

/// Wraps a freshly opened super-chunk, freeing it if it is not a valid array.
fn adopt(sc: *mut blosc2_schunk, array: *mut *mut b2nd_array_t) -> Result<i32> {
    match from_schunk(sc) {
        Ok(p) => {
            // SAFETY: writable by the callers' contract.
            unsafe { *array = p };
            Ok(0)
        }
        Err(e) => {
            if !sc.is_null() {
                // SAFETY: a live schunk this call created.
                unsafe { blosc2_schunk_free(sc) };
            }
            Err(e)
        }
    }
}

/// An array from a cframe buffer (copied when `copy`; never modified or freed).
///
/// # Safety
/// `cframe` valid for `cframe_len` bytes; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_cframe(
    cframe: *mut u8,
    cframe_len: i64,
    copy: bool,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard_int(|| {
        if cframe.is_null() || array.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: forwarded contract.
        let sc = unsafe { blosc2_schunk_from_buffer(cframe, cframe_len, copy) };
        if sc.is_null() {
            return Err(Error::Failure);
        }
        adopt(sc, array)
    })
}

/// Opens an array stored at `urlpath`.
///
/// # Safety
/// `urlpath` a C string; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_open(urlpath: *const c_char, array: *mut *mut b2nd_array_t) -> c_int {
    guard_int(|| {
        if urlpath.is_null() || array.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: forwarded contract.
        let sc = unsafe { blosc2_schunk_open(urlpath) };
        adopt(sc, array)
    })
}

/// Opens an array stored at byte `offset` of the file `urlpath`.
///
/// # Safety
/// `urlpath` a C string; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_open_offset(
    urlpath: *const c_char,
    array: *mut *mut b2nd_array_t,
    offset: i64,
) -> c_int {
    guard_int(|| {
        if urlpath.is_null() || array.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: forwarded contract.
        let sc = unsafe { blosc2_schunk_open_offset(urlpath, offset) };
        adopt(sc, array)
    })
}

/// Saves a copy of the array at `urlpath` (contiguous as the array's storage is).
///
/// # Safety
/// `array` live; `urlpath` a C string.
#[no_mangle]
pub unsafe extern "C" fn b2nd_save(array: *const b2nd_array_t, urlpath: *mut c_char) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if urlpath.is_null() {
            return Err(Error::NullPointer);
        }
        store(a)?;
        let mut st = BLOSC2_STORAGE_DEFAULTS;
        st.urlpath = urlpath;
        // SAFETY: live schunk with our storage copy.
        st.contiguous = unsafe {
            let s = &*a.sc;
            !s.storage.is_null() && (*s.storage).contiguous
        };
        // SAFETY: live schunk; `st` valid for the call.
        let copy = unsafe { blosc2_schunk_copy(a.sc, &mut st) };
        if copy.is_null() {
            return Err(Error::Failure);
        }
        // SAFETY: the copy is ours.
        code(unsafe { blosc2_schunk_free(copy) }.into())?;
        Ok(0)
    })
}

/// Appends the array's cframe to the file `urlpath`; returns the offset where it starts.
///
/// # Safety
/// `array` live; `urlpath` a C string.
#[no_mangle]
pub unsafe extern "C" fn b2nd_save_append(
    array: *const b2nd_array_t,
    urlpath: *const c_char,
) -> i64 {
    guard_i64(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        store(a)?;
        // SAFETY: forwarded contract.
        code(unsafe { blosc2_schunk_append_file(a.sc, urlpath) })
    })
}

/// A new array for the context holding `buffer` (row-major, `nitems * typesize` bytes).
///
/// # Safety
/// `ctx` live; `array` writable; `buffer` valid for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_cbuffer(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        construct(ctx, array, |c| {
            if buffer.is_null() {
                return Err(Error::NullPointer);
            }
            let p = array_new(c, BLOSC2_SPECIAL_ZERO)?;
            let r = (|| {
                let a = &mut *p;
                let g = geometry(a)?;
                let mut st = store(a)?;
                let need = g.array_nbytes(st.typesize())?;
                if buffersize < need {
                    return Err(Error::InvalidParam);
                }
                if g.nitems() == 0 {
                    return Ok(());
                }
                let src = std::slice::from_raw_parts(buffer as *const u8, buffersize as usize);
                let zero = vec![0i64; g.ndim()];
                core::set_slice(&mut st, &g, &zero, g.shape(), src, g.shape())
            })();
            if let Err(e) = r {
                drop_array(p, true);
                return Err(e);
            }
            Ok(p)
        })
    }
}

/// Copies the whole array into `buffer` (row-major).
///
/// # Safety
/// `array` live; `buffer` valid for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_to_cbuffer(
    array: *const b2nd_array_t,
    buffer: *mut c_void,
    buffersize: i64,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if buffer.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(a)?;
        let g = geometry(a)?;
        let mut st = store(a)?;
        if buffersize < g.array_nbytes(st.typesize())? {
            return Err(Error::InvalidParam);
        }
        if g.nitems() == 0 {
            return Ok(0);
        }
        // SAFETY: `buffersize` bytes by contract (non-negative: checked above).
        let dst = unsafe { std::slice::from_raw_parts_mut(buffer as *mut u8, buffersize as usize) };
        let zero = vec![0i64; g.ndim()];
        core::get_slice(&mut st, &g, &zero, g.shape(), dst, g.shape())?;
        Ok(0)
    })
}

/// Reads `ndim` values (NULL only when `ndim == 0`).
///
/// # Safety
/// `p` NULL or valid for `n` values.
unsafe fn vals<T: Copy>(p: *const T, n: usize) -> Result<Vec<T>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: valid for `n` values by contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }.to_vec())
}

/// Reads the slice `start..stop` into `buffer`, a row-major array of shape `buffershape`.
///
/// # Safety
/// `array` live; `start`/`stop`/`buffershape` valid for ndim values; `buffer` for
/// `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_slice_cbuffer(
    array: *const b2nd_array_t,
    start: *const i64,
    stop: *const i64,
    buffer: *mut c_void,
    buffershape: *const i64,
    buffersize: i64,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if start.is_null() || stop.is_null() || buffershape.is_null() || buffer.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(a)?;
        let g = geometry(a)?;
        let n = g.ndim();
        // SAFETY: ndim values each by contract.
        let (s0, s1, bs) = unsafe { (vals(start, n)?, vals(stop, n)?, vals(buffershape, n)?) };
        let len = usize::try_from(buffersize).map_err(|_| Error::InvalidParam)?;
        // SAFETY: `buffersize` bytes by contract.
        let dst = unsafe { std::slice::from_raw_parts_mut(buffer as *mut u8, len) };
        let mut st = store(a)?;
        core::get_slice(&mut st, &g, &s0, &s1, dst, &bs)?;
        Ok(0)
    })
}

/// Writes `buffer` (row-major, shape `buffershape`) into the slice `start..stop`.
///
/// # Safety
/// `array` live; `start`/`stop`/`buffershape` valid for ndim values; `buffer` for
/// `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_set_slice_cbuffer(
    buffer: *const c_void,
    buffershape: *const i64,
    buffersize: i64,
    start: *const i64,
    stop: *const i64,
    array: *mut b2nd_array_t,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if start.is_null() || stop.is_null() || buffer.is_null() {
            return Err(Error::NullPointer);
        }
        locked(a, |a| {
            refresh_if_stale(a)?;
            let g = geometry(a)?;
            let n = g.ndim();
            // SAFETY: ndim values each by contract.
            let (s0, s1, bs) = unsafe { (vals(start, n)?, vals(stop, n)?, vals(buffershape, n)?) };
            let len = usize::try_from(buffersize).map_err(|_| Error::InvalidParam)?;
            // SAFETY: `buffersize` bytes by contract.
            let src = unsafe { std::slice::from_raw_parts(buffer as *const u8, len) };
            let mut st = store(a)?;
            core::set_slice(&mut st, &g, &s0, &s1, src, &bs)?;
            Ok(0)
        })
    })
}

/// Copies the region of `src` that `map` gives for each chunk of `dst` (whose chunk regions
/// are in `dst`'s coordinates) into `dst`, chunk by chunk. The two regions have the same items
/// in the same row-major order (`map` only adds or drops extents of 1, or shifts).
fn copy_regions(
    src: &b2nd_array_t,
    dst: &b2nd_array_t,
    map: impl Fn(&[i64], &[i64]) -> (Vec<i64>, Vec<i64>),
) -> Result<()> {
    let (gs, gd) = (geometry(src)?, geometry(dst)?);
    let (mut ss, mut sd) = (store(src)?, store(dst)?);
    if gd.nitems() == 0 {
        return Ok(());
    }
    let ts = ss.typesize();
    if ts != sd.typesize() {
        return Err(Error::InvalidParam);
    }
    if gd.ndim() == 0 {
        let (a, b) = map(&[], &[]);
        let mut one = vec![0u8; ts as usize];
        core::get_slice(&mut ss, &gs, &a, &b, &mut one, &vec![1; gs.ndim()])?;
        return core::set_slice(&mut sd, &gd, &[], &[], &one, &[]);
    }
    let zero = vec![0i64; gd.ndim()];
    let mut buf = Vec::new();
    for c in chunks_touched(&gd, &zero, gd.shape())? {
        let (a, b) = map(&c.start, &c.stop);
        let shape_s: Vec<i64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
        let shape_d: Vec<i64> = c.start.iter().zip(&c.stop).map(|(x, y)| y - x).collect();
        let n: i64 = shape_d.iter().product::<i64>() * i64::from(ts);
        buf.resize(n as usize, 0);
        core::get_slice(&mut ss, &gs, &a, &b, &mut buf, &shape_s)?;
        core::set_slice(&mut sd, &gd, &c.start, &c.stop, &buf, &shape_d)?;
    }
    Ok(())
}

/// A new array (per `ctx`: storage, chunk and block shapes) holding `src[start..stop]`;
/// `ctx`'s ndim and shape are overwritten, as in c-blosc2.
///
/// # Safety
/// `ctx` live; `array` writable; `src` live; `start`/`stop` valid for ndim values.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_slice(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    src: *const b2nd_array_t,
    start: *const i64,
    stop: *const i64,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let s = unsafe { arr(src) }?;
        // SAFETY: forwarded contract.
        let c = unsafe { ctx_ref(ctx) }?;
        if start.is_null() || stop.is_null() || array.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(s)?;
        let g = geometry(s)?;
        let n = g.ndim();
        // SAFETY: ndim values each by contract.
        let (s0, s1) = unsafe { (vals(start, n)?, vals(stop, n)?) };
        g.check_slice(&s0, &s1)?;
        c.ndim = n as i8;
        for i in 0..n {
            c.shape[i] = s1[i] - s0[i];
        }
        let p = array_new(c, BLOSC2_SPECIAL_ZERO)?;
        // SAFETY: `p` is ours.
        let r = copy_regions(s, unsafe { &*p }, |a, b| {
            (
                a.iter().zip(&s0).map(|(x, o)| x + o).collect(),
                b.iter().zip(&s0).map(|(x, o)| x + o).collect(),
            )
        });
        if let Err(e) = r {
            drop_array(p, true);
            return Err(e);
        }
        // SAFETY: writable by contract.
        unsafe { *array = p };
        Ok(0)
    })
}

/// The "view" of `src` with geometry `shape`/`chunkshape`/`blockshape` (same items, extents
/// of 1 added or removed): a new in-memory array with copies of the data (see the module docs).
fn view_copy(
    src: &b2nd_array_t,
    shape: &[i64],
    chunkshape: &[i32],
    blockshape: &[i32],
    map: impl Fn(&[i64], &[i64]) -> (Vec<i64>, Vec<i64>),
) -> Result<*mut b2nd_array_t> {
    store(src)?;
    // Only the b2nd metalayer may be present, as in c-blosc2.
    if meta_names(src.sc).iter().any(|n| n != b"b2nd") {
        return Err(Error::InvalidParam);
    }
    // SAFETY: live schunk with our storage copy (params always set).
    let (mut cp, mut dp) = unsafe {
        let s = &*src.sc;
        (*(*s.storage).cparams, *(*s.storage).dparams)
    };
    cp.schunk = std::ptr::null_mut();
    dp.schunk = std::ptr::null_mut();
    let mut st = BLOSC2_STORAGE_DEFAULTS;
    st.cparams = &mut cp;
    st.dparams = &mut dp;
    st.contiguous = false;
    let dt = dtype_of(src);
    let dtc = dt.as_ref().map(|d| strdup(d)).transpose()?;
    // SAFETY: all arrays hold `shape.len()` values; the dtype is NULL or a C string.
    let ctx = unsafe {
        b2nd_create_ctx(
            &st,
            shape.len() as i8,
            shape.as_ptr(),
            chunkshape.as_ptr(),
            blockshape.as_ptr(),
            dtc.unwrap_or(std::ptr::null_mut()),
            src.dtype_format,
            std::ptr::null(),
            0,
        )
    };
    // SAFETY: malloc'ed by `strdup` (or NULL).
    unsafe { libc::free(dtc.unwrap_or(std::ptr::null_mut()) as *mut c_void) };
    if ctx.is_null() {
        return Err(Error::InvalidParam);
    }
    // SAFETY: `ctx` is a live context of ours.
    let r = array_new(unsafe { &*ctx }, BLOSC2_SPECIAL_ZERO);
    // SAFETY: ours, freed once.
    unsafe { b2nd_free_ctx(ctx) };
    let p = r?;
    // SAFETY: `p` is ours.
    let r = copy_regions(src, unsafe { &*p }, map).and_then(|_| {
        // SAFETY: `p` is ours.
        copy_vlmeta(src.sc, unsafe { (*p).sc })
    });
    if let Err(e) = r {
        drop_array(p, true);
        return Err(e);
    }
    Ok(p)
}

/// Removes the dimensions flagged in `index` (each must have extent 1; else
/// `BLOSC2_ERROR_INVALID_INDEX`) into a new array `*view` (a copy, see the module docs).
///
/// # Safety
/// `array` live; `view` writable; `index` valid for ndim values.
#[no_mangle]
pub unsafe extern "C" fn b2nd_squeeze_index(
    array: *mut b2nd_array_t,
    view: *mut *mut b2nd_array_t,
    index: *const bool,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if view.is_null() || index.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(a)?;
        let g = geometry(a)?;
        let n = g.ndim();
        // SAFETY: ndim values by contract.
        let idx = unsafe { vals(index, n) }?;
        let (mut sh, mut cs, mut bs) = (vec![], vec![], vec![]);
        for (i, &squeezed) in idx.iter().enumerate() {
            if squeezed {
                if g.shape()[i] != 1 {
                    return Err(Error::InvalidIndex);
                }
            } else {
                sh.push(g.shape()[i]);
                cs.push(g.chunkshape()[i]);
                bs.push(g.blockshape()[i]);
            }
        }
        let expand = |v: &[i64], fill: i64| -> Vec<i64> {
            let mut it = v.iter();
            (0..n)
                .map(|i| {
                    if idx[i] {
                        fill
                    } else {
                        *it.next().unwrap_or(&0)
                    }
                })
                .collect()
        };
        let p = view_copy(a, &sh, &cs, &bs, |s, e| (expand(s, 0), expand(e, 1)))?;
        // SAFETY: writable by contract.
        unsafe { *view = p };
        Ok(0)
    })
}

/// Removes every dimension of extent 1 ([`b2nd_squeeze_index`]).
///
/// # Safety
/// `array` live; `view` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_squeeze(
    array: *mut b2nd_array_t,
    view: *mut *mut b2nd_array_t,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        let n = usize::try_from(a.ndim).unwrap_or(0).min(MAX_DIM);
        let idx: Vec<bool> = (0..n).map(|i| a.shape[i] == 1).collect();
        // SAFETY: forwarded contract; `idx` holds ndim values.
        Ok(unsafe { b2nd_squeeze_index(array, view, idx.as_ptr()) })
    })
}

/// Inserts extents of 1 where `axis` (of `final_dims` entries) is true, into a new array
/// `*view` (a copy, see the module docs).
///
/// # Safety
/// `array` live; `view` writable; `axis` valid for `final_dims` values.
#[no_mangle]
pub unsafe extern "C" fn b2nd_expand_dims(
    array: *const b2nd_array_t,
    view: *mut *mut b2nd_array_t,
    axis: *const bool,
    final_dims: u8,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if view.is_null() || axis.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(a)?;
        let g = geometry(a)?;
        let fd = usize::from(final_dims);
        if fd > MAX_DIM {
            return Err(Error::InvalidParam);
        }
        // SAFETY: `final_dims` values by contract.
        let ax = unsafe { vals(axis, fd) }?;
        let (mut sh, mut cs, mut bs) = (vec![], vec![], vec![]);
        let mut old = 0;
        for &added in &ax {
            if added {
                sh.push(1);
                cs.push(1);
                bs.push(1);
            } else {
                if old == g.ndim() {
                    return Err(Error::InvalidParam);
                }
                sh.push(g.shape()[old]);
                cs.push(g.chunkshape()[old]);
                bs.push(g.blockshape()[old]);
                old += 1;
            }
        }
        if old != g.ndim() {
            return Err(Error::InvalidParam);
        }
        let drop = |v: &[i64]| -> Vec<i64> {
            v.iter()
                .zip(&ax)
                .filter(|(_, &added)| !added)
                .map(|(x, _)| *x)
                .collect()
        };
        let p = view_copy(a, &sh, &cs, &bs, |s, e| (drop(s), drop(e)))?;
        // SAFETY: writable by contract.
        unsafe { *view = p };
        Ok(0)
    })
}

/// A copy of `src` with `ctx`'s storage, chunk and block shapes (`ctx`'s ndim and shape are
/// overwritten, as in c-blosc2). Same chunk and block shapes: the super-chunk is copied; else
/// the items are re-chunked, and the metalayers and vlmetalayers copied.
///
/// # Safety
/// `ctx` live; `src` live; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_copy(
    ctx: *mut b2nd_context_t,
    src: *const b2nd_array_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let s = unsafe { arr(src) }?;
        // SAFETY: forwarded contract.
        let c = unsafe { ctx_ref(ctx) }?;
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(s)?;
        let p = copy_array(c, s)?;
        // SAFETY: writable by contract.
        unsafe { *array = p };
        Ok(0)
    })
}

fn copy_array(c: &mut b2nd_context_t, s: &b2nd_array_t) -> Result<*mut b2nd_array_t> {
    let g = geometry(s)?;
    store(s)?;
    let n = g.ndim();
    c.ndim = n as i8;
    c.shape[..n].copy_from_slice(g.shape());
    let same = c.chunkshape[..n] == *g.chunkshape() && c.blockshape[..n] == *g.blockshape();
    if same {
        let p = array_without_schunk(c)?;
        // SAFETY: live schunk; the context's storage is NULL or valid.
        let sc = unsafe { blosc2_schunk_copy(s.sc, c.b2_storage) };
        if sc.is_null() {
            drop_array(p, false);
            return Err(Error::Failure);
        }
        // SAFETY: `p` is ours.
        unsafe {
            (*p).sc = sc;
            (*p).last_tick = (*sc).change_tick;
        }
        return Ok(p);
    }
    // Re-chunk: the source's other metalayers go along (their storage must outlive the call,
    // so they are gathered here).
    let mut cc = *c;
    let names = meta_names(s.sc);
    let mut owned: Vec<(std::ffi::CString, Vec<u8>)> = Vec::new();
    for nm in names.iter().filter(|n| n.as_slice() != b"b2nd") {
        let content = meta_get(s.sc, &String::from_utf8_lossy(nm)).unwrap_or_default();
        let name = std::ffi::CString::new(nm.clone()).map_err(|_| Error::InvalidParam)?;
        owned.push((name, content));
    }
    if owned.len() > B2ND_MAX_METALAYERS {
        return Err(Error::InvalidParam);
    }
    for (i, (name, content)) in owned.iter_mut().enumerate() {
        cc.metalayers[i] = blosc2_metalayer {
            name: name.as_ptr() as *mut c_char,
            content: content.as_mut_ptr(),
            content_len: content.len() as i32,
        };
    }
    cc.nmetalayers = owned.len() as i32;
    let p = array_new(&cc, BLOSC2_SPECIAL_ZERO)?;
    // SAFETY: `p` is ours.
    let r = copy_regions(s, unsafe { &*p }, |a, b| (a.to_vec(), b.to_vec()))
        // SAFETY: `p` is ours.
        .and_then(|_| copy_vlmeta(s.sc, unsafe { (*p).sc }));
    if let Err(e) = r {
        drop_array(p, true);
        return Err(e);
    }
    Ok(p)
}

/// Concatenates `src2` after `src1` along `axis`: into a copy of `src1` (per `ctx`) when
/// `copy`, else into `src1` itself (then `*array == src1`).
///
/// # Safety
/// `ctx` live when `copy`; `src1`, `src2` live; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_concatenate(
    ctx: *mut b2nd_context_t,
    src1: *const b2nd_array_t,
    src2: *const b2nd_array_t,
    axis: i8,
    copy: bool,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let (a1, a2) = unsafe { (arr(src1)?, arr(src2)?) };
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(a1)?;
        refresh_if_stale(a2)?;
        let (g1, g2) = (geometry(a1)?, geometry(a2)?);
        let n = g1.ndim();
        let ax = usize::try_from(axis)
            .ok()
            .filter(|&x| x < n)
            .ok_or(Error::InvalidParam)?;
        if store(a1)?.typesize() != store(a2)?.typesize() || g2.ndim() != n || n == 0 {
            return Err(Error::InvalidParam);
        }
        let mut new_shape = g1.shape().to_vec();
        for (i, ns) in new_shape.iter_mut().enumerate() {
            if i == ax {
                *ns = g1.shape()[i]
                    .checked_add(g2.shape()[i])
                    .ok_or(Error::InvalidParam)?;
            } else if g1.shape()[i] != g2.shape()[i] {
                return Err(Error::InvalidParam);
            }
        }
        let dst = if copy {
            // SAFETY: forwarded contract.
            copy_array(unsafe { ctx_ref(ctx) }?, a1)?
        } else {
            src1 as *mut b2nd_array_t
        };
        let r = (|| {
            // SAFETY: `dst` is live (ours or the caller's `src1`).
            let d = unsafe { &mut *dst };
            let gd = geometry(d)?;
            let ng = core::resize(&mut store(d)?, &gd, &new_shape, None)?;
            set_geometry(d, &ng);
            publish_meta(d)?;
            let off = g1.shape()[ax];
            let shift = |v: &[i64]| -> Vec<i64> {
                let mut w = v.to_vec();
                w[ax] += off;
                w
            };
            // Copy src2's items chunk by chunk of src2 into the shifted region.
            let zero = vec![0i64; n];
            let ts = store(a2)?.typesize();
            // Chunks that line up (same chunk and block shapes, src1 ending on a chunk
            // boundary along `axis`) are copied as they are stored: each src2 chunk is one
            // destination chunk with the same items and the same padding.
            let aligned = g2.chunkshape() == ng.chunkshape()
                && g2.blockshape() == ng.blockshape()
                && off % i64::from(ng.chunkshape()[ax]) == 0;
            if aligned {
                for c in chunks_touched(&g2, &zero, g2.shape())? {
                    let target = chunks_touched(&ng, &shift(&c.start), &shift(&c.stop))?;
                    let [t] = target.as_slice() else {
                        return Err(Error::Failure);
                    };
                    copy_stored_chunk(a2.sc, c.nchunk, d.sc, t.nchunk)?;
                }
                return Ok(());
            }
            let mut buf = Vec::new();
            for c in chunks_touched(&g2, &zero, g2.shape())? {
                let shape: Vec<i64> = c.start.iter().zip(&c.stop).map(|(x, y)| y - x).collect();
                buf.resize((shape.iter().product::<i64>() * i64::from(ts)) as usize, 0);
                core::get_slice(&mut store(a2)?, &g2, &c.start, &c.stop, &mut buf, &shape)?;
                core::set_slice(
                    &mut store(d)?,
                    &ng,
                    &shift(&c.start),
                    &shift(&c.stop),
                    &buf,
                    &shape,
                )?;
            }
            Ok(())
        })();
        if let Err(e) = r {
            if copy {
                drop_array(dst, true);
            }
            return Err(e);
        }
        // SAFETY: writable by contract.
        unsafe { *array = dst };
        Ok(0)
    })
}

/// Stores chunk `from` of `src` (its compressed bytes, as stored) as chunk `to` of `dst`.
fn copy_stored_chunk(
    src: *mut blosc2_schunk,
    from: i64,
    dst: *mut blosc2_schunk,
    to: i64,
) -> Result<()> {
    let mut chunk: *mut u8 = std::ptr::null_mut();
    let mut needs_free = false;
    // SAFETY: `src` is a live array's super-chunk; both out-pointers are valid.
    let rc = unsafe { blosc2_schunk_get_chunk(src, from, &mut chunk, &mut needs_free) };
    if rc < 0 || chunk.is_null() {
        return Err(Error::Failure);
    }
    // SAFETY: `dst` is a live array's super-chunk; `chunk` holds a whole chunk (`rc` bytes,
    // checked by the update), copied (copy=true).
    let up = unsafe { blosc2_schunk_update_chunk(dst, to, chunk, true) };
    if needs_free {
        // SAFETY: malloc'ed by `blosc2_schunk_get_chunk`, ours to free.
        unsafe { libc::free(chunk as *mut c_void) };
    }
    code(up).map(|_| ()).map_err(|_| Error::Failure)
}

/// Prints the `b2nd` metalayer to stdout, in c-blosc2's format.
///
/// # Safety
/// `array` live.
#[no_mangle]
pub unsafe extern "C" fn b2nd_print_meta(array: *const b2nd_array_t) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        store(a)?;
        let m = meta_get(a.sc, "b2nd")
            .or_else(|| meta_get(a.sc, "caterva"))
            .ok_or(Error::MetalayerNotFound)?;
        let (m, _) = b2nd_meta::deserialize(&m, true)?;
        let join = |v: Vec<String>| v.join(", ");
        let mut out = format!("b2nd metalayer parameters:\n Ndim:       {}", m.ndim());
        out += &format!(
            "\n shape:      {}",
            join(m.shape.iter().map(|x| x.to_string()).collect())
        );
        out += &format!(
            "\n chunkshape: {}",
            join(m.chunkshape.iter().map(|x| x.to_string()).collect())
        );
        if let Some(d) = &m.dtype {
            out += &format!("\n dtype: {}", String::from_utf8_lossy(d));
        }
        out += &format!(
            "\n blockshape: {}\n",
            join(m.blockshape.iter().map(|x| x.to_string()).collect())
        );
        // Through C stdio, so that the output interleaves with the caller's printf.
        let c = std::ffi::CString::new(out).map_err(|_| Error::Failure)?;
        // SAFETY: "%s" with a valid C string.
        unsafe { libc::printf(c"%s".as_ptr(), c.as_ptr()) };
        Ok(0)
    })
}

/// Runs `f` holding the super-chunk's exclusive `.b2lock` lock (`blosc2_schunk_lock`, a no-op
/// returning 0 without locking), as c-blosc2's `b2nd_set_slice_cbuffer` and `b2nd_resize`
/// bracket themselves: other locking handles and processes see every chunk of the operation,
/// and the new metalayer, change at once. Nested brackets reuse the lock.
fn locked<T>(a: &mut b2nd_array_t, f: impl FnOnce(&mut b2nd_array_t) -> Result<T>) -> Result<T> {
    let sc = a.sc;
    if sc.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: live schunk.
    code(unsafe { blosc2_schunk_lock(sc) }.into())?;
    let r = f(a);
    // SAFETY: live schunk; the lock taken above.
    let u = unsafe { blosc2_schunk_unlock(sc) };
    let v = r?;
    code(u.into())?;
    Ok(v)
}

/// Applies a shape change computed by the core and publishes the new geometry (under the
/// lock, see [`locked`]).
fn reshape(
    a: &mut b2nd_array_t,
    f: impl FnOnce(&mut CStore, &Geometry) -> Result<Geometry>,
) -> Result<i32> {
    locked(a, |a| {
        refresh_if_stale(a)?;
        let g = geometry(a)?;
        let mut st = store(a)?;
        let ng = f(&mut st, &g)?;
        set_geometry(a, &ng);
        publish_meta(a)?;
        Ok(0)
    })
}

/// Resizes the array to `new_shape`; `start` (NULL: the end of each dimension) is where items
/// are added or removed.
///
/// # Safety
/// `array` live; `new_shape` valid for ndim values; `start` NULL or valid for ndim values.
#[no_mangle]
pub unsafe extern "C" fn b2nd_resize(
    array: *mut b2nd_array_t,
    new_shape: *const i64,
    start: *const i64,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if new_shape.is_null() {
            return Err(Error::NullPointer);
        }
        let n = usize::try_from(a.ndim).unwrap_or(0).min(MAX_DIM);
        // SAFETY: ndim values by contract.
        let ns = unsafe { vals(new_shape, n) }?;
        // SAFETY: NULL or ndim values by contract.
        let st = (!start.is_null())
            .then(|| unsafe { vals(start, n) })
            .transpose()?;
        reshape(a, |s, g| core::resize(s, g, &ns, st.as_deref()))
    })
}

/// Re-reads the geometry if another handle changed it; 1 if re-synced, else 0.
///
/// # Safety
/// `array` live.
#[no_mangle]
pub unsafe extern "C" fn b2nd_refresh(array: *mut b2nd_array_t) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        refresh_if_stale(a).map(i32::from)
    })
}

/// Inserts `buffer` along `axis` at `insert_start`.
///
/// # Safety
/// `array` live; `buffer` valid for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_insert(
    array: *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
    axis: i8,
    insert_start: i64,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if buffer.is_null() {
            return Err(Error::NullPointer);
        }
        let len = usize::try_from(buffersize).map_err(|_| Error::InvalidParam)?;
        // SAFETY: `buffersize` bytes by contract.
        let src = unsafe { std::slice::from_raw_parts(buffer as *const u8, len) };
        reshape(a, |s, g| core::insert(s, g, src, axis, insert_start))
    })
}

/// Appends `buffer` along `axis`.
///
/// # Safety
/// `array` live; `buffer` valid for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_append(
    array: *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
    axis: i8,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if buffer.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(a)?;
        let ax = usize::try_from(axis)
            .ok()
            .filter(|&x| x < usize::try_from(a.ndim).unwrap_or(0))
            .ok_or(Error::InvalidParam)?;
        let at = a.shape[ax];
        // SAFETY: forwarded contract.
        Ok(unsafe { b2nd_insert(array, buffer, buffersize, axis, at) })
    })
}

/// Deletes `delete_len` items along `axis` from `delete_start`.
///
/// # Safety
/// `array` live.
#[no_mangle]
pub unsafe extern "C" fn b2nd_delete(
    array: *mut b2nd_array_t,
    axis: i8,
    delete_start: i64,
    delete_len: i64,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        reshape(a, |s, g| core::delete(s, g, axis, delete_start, delete_len))
    })
}

/// Reads the selection lists of an orthogonal selection.
///
/// # Safety
/// `selection` valid for `n` pointers, each valid for `selection_size[i]` values.
unsafe fn selection_lists(
    selection: *mut *mut i64,
    selection_size: *mut i64,
    n: usize,
) -> Result<Vec<Vec<i64>>> {
    if selection.is_null() || selection_size.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: `n` entries each by contract.
    let (ptrs, sizes) = unsafe {
        (
            vals(selection as *const *mut i64, n)?,
            vals(selection_size as *const i64, n)?,
        )
    };
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let len = usize::try_from(sizes[i]).map_err(|_| Error::InvalidParam)?;
        // SAFETY: `selection_size[i]` values by contract.
        out.push(unsafe { vals(ptrs[i] as *const i64, len) }?);
    }
    Ok(out)
}

/// Shared part of the two orthogonal-selection functions.
///
/// # Safety
/// As for [`b2nd_get_orthogonal_selection`].
unsafe fn orthogonal(
    array: *const b2nd_array_t,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *mut c_void,
    buffershape: *mut i64,
    buffersize: i64,
    get: bool,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        if buffer.is_null() || buffershape.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(a)?;
        let g = geometry(a)?;
        let n = g.ndim();
        // SAFETY: forwarded contract.
        let lists = unsafe { selection_lists(selection, selection_size, n) }?;
        // SAFETY: ndim values by contract.
        let bs = unsafe { vals(buffershape as *const i64, n) }?;
        let mut st = store(a)?;
        let mut sel_bytes = i64::from(st.typesize());
        for l in &lists {
            sel_bytes = sel_bytes
                .checked_mul(l.len() as i64)
                .ok_or(Error::InvalidParam)?;
        }
        if sel_bytes < buffersize || buffersize < 0 {
            return Err(Error::InvalidParam);
        }
        // SAFETY: `buffersize` bytes by contract.
        let buf = unsafe { std::slice::from_raw_parts_mut(buffer as *mut u8, buffersize as usize) };
        let refs: Vec<&[i64]> = lists.iter().map(|v| &v[..]).collect();
        selection::orthogonal(&mut st, &g, &refs, buf, &bs, get)?;
        Ok(0)
    })
}

/// Reads the orthogonal selection (one index list per dimension) into `buffer`, a row-major
/// array of shape `buffershape`.
///
/// # Safety
/// `array` live; `selection` ndim pointers to `selection_size[i]` indices; `buffershape` ndim
/// values; `buffer` valid for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_orthogonal_selection(
    array: *const b2nd_array_t,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *mut c_void,
    buffershape: *mut i64,
    buffersize: i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        orthogonal(
            array,
            selection,
            selection_size,
            buffer,
            buffershape,
            buffersize,
            true,
        )
    }
}

/// Writes `buffer` into the orthogonal selection.
///
/// # Safety
/// As for [`b2nd_get_orthogonal_selection`].
#[no_mangle]
pub unsafe extern "C" fn b2nd_set_orthogonal_selection(
    array: *mut b2nd_array_t,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *const c_void,
    buffershape: *mut i64,
    buffersize: i64,
) -> c_int {
    // SAFETY: forwarded contract; the buffer is only read when setting.
    unsafe {
        orthogonal(
            array,
            selection,
            selection_size,
            buffer as *mut c_void,
            buffershape,
            buffersize,
            false,
        )
    }
}

/// Gathers the items at row-major linear indices `coords` into `buffer`.
///
/// # Safety
/// `array` live; `coords` valid for `ncoords` values; `buffer` for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_sparse_cbuffer(
    array: *const b2nd_array_t,
    ncoords: i64,
    coords: *const i64,
    buffer: *mut c_void,
    buffersize: i64,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        refresh_if_stale(a)?;
        let n = usize::try_from(ncoords).map_err(|_| Error::InvalidParam)?;
        if n == 0 {
            return Ok(0);
        }
        if coords.is_null() || buffer.is_null() {
            return Err(Error::NullPointer);
        }
        let st = store(a)?;
        let need = ncoords
            .checked_mul(i64::from(st.typesize()))
            .ok_or(Error::InvalidParam)?;
        if buffersize < need {
            return Err(Error::InvalidParam);
        }
        let g = geometry(a)?;
        // SAFETY: `ncoords` values by contract.
        let cs = unsafe { vals(coords, n) }?;
        let storage = core::sparse_storage_coords(&g, &cs)?;
        code(
            // SAFETY: live schunk; `storage` holds `ncoords` values; `buffer` holds their items.
            unsafe { blosc2_schunk_get_sparse_buffer(a.sc, ncoords, storage.as_ptr(), buffer) }
                .into(),
        )?;
        Ok(0)
    })
}

/// Bytes a row-major array of shape `shape` spans up to the last item of the box at `start`
/// with extents `copy` (all positive).
fn extent(itemsize: usize, shape: &[i64], start: &[i64], copy: &[i64]) -> Result<usize> {
    let st = c_strides(shape);
    let mut last = 0i64;
    for i in 0..shape.len() {
        if start[i] < 0 || shape[i] < 0 {
            return Err(Error::InvalidParam);
        }
        last = st[i]
            .checked_mul(start[i] + copy[i] - 1)
            .and_then(|v| v.checked_add(last))
            .ok_or(Error::InvalidParam)?;
    }
    usize::try_from(last + 1)
        .ok()
        .and_then(|v| v.checked_mul(itemsize))
        .ok_or(Error::InvalidParam)
}

/// Copies the box `src_start..src_stop` of the row-major `src` (shape `src_pad_shape`) to
/// `dst_start` of the row-major `dst` (shape `dst_pad_shape`).
///
/// # Safety
/// Shapes and positions valid for `ndim` values; `src` and `dst` valid for the bytes the box
/// spans in each (as in c-blosc2, the buffers are not bounds-checked against their sizes).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn b2nd_copy_buffer2(
    ndim: i8,
    itemsize: i32,
    src: *const c_void,
    src_pad_shape: *const i64,
    src_start: *const i64,
    src_stop: *const i64,
    dst: *mut c_void,
    dst_pad_shape: *const i64,
    dst_start: *const i64,
) -> c_int {
    guard_int(|| {
        let n = usize::try_from(ndim)
            .ok()
            .filter(|&n| n <= MAX_DIM)
            .ok_or(Error::InvalidParam)?;
        let its = usize::try_from(itemsize).map_err(|_| Error::InvalidParam)?;
        // SAFETY: ndim values each by contract.
        let (sp, s0, s1, dp, d0) = unsafe {
            (
                vals(src_pad_shape, n)?,
                vals(src_start, n)?,
                vals(src_stop, n)?,
                vals(dst_pad_shape, n)?,
                vals(dst_start, n)?,
            )
        };
        let copy: Vec<i64> = s0.iter().zip(&s1).map(|(a, b)| b - a).collect();
        if copy.iter().any(|&c| c < 0) {
            return Err(Error::InvalidParam);
        }
        if copy.contains(&0) {
            return Ok(0);
        }
        if src.is_null() || dst.is_null() {
            return Err(Error::NullPointer);
        }
        let (sl, dl) = (extent(its, &sp, &s0, &copy)?, extent(its, &dp, &d0, &copy)?);
        // SAFETY: by contract both buffers hold the bytes the box spans; they may not overlap
        // (as with c-blosc2's memcpy).
        let (sb, db) = unsafe {
            (
                std::slice::from_raw_parts(src as *const u8, sl),
                std::slice::from_raw_parts_mut(dst as *mut u8, dl),
            )
        };
        copy_nd(its, sb, &sp, &s0, &s1, db, &dp, &d0)?;
        Ok(0)
    })
}

/// [`b2nd_copy_buffer2`] with an 8-bit item size (deprecated in c-blosc2).
///
/// # Safety
/// As for [`b2nd_copy_buffer2`].
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn b2nd_copy_buffer(
    ndim: i8,
    itemsize: u8,
    src: *const c_void,
    src_pad_shape: *const i64,
    src_start: *const i64,
    src_stop: *const i64,
    dst: *mut c_void,
    dst_pad_shape: *const i64,
    dst_start: *const i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        b2nd_copy_buffer2(
            ndim,
            i32::from(itemsize),
            src,
            src_pad_shape,
            src_start,
            src_stop,
            dst,
            dst_pad_shape,
            dst_start,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_cblosc2() {
        assert_eq!(size_of::<b2nd_array_t>(), 1376);
        assert_eq!(offset_of!(b2nd_array_t, ndim), 560);
        assert_eq!(offset_of!(b2nd_array_t, chunk_cache), 568);
        assert_eq!(offset_of!(b2nd_array_t, dtype), 1352);
        assert_eq!(offset_of!(b2nd_array_t, last_tick), 1368);
        assert_eq!(size_of::<b2nd_context_t>(), 656);
        assert_eq!(offset_of!(b2nd_context_t, nmetalayers), 648);
    }
}
