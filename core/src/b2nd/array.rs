//! Slice reads and writes and shape changes of an array over a [`ChunkStore`] (the
//! super-chunk holding its chunks). The functions take the array's [`Geometry`] and return
//! the new one when the shape changes; storing the `b2nd` metalayer is the caller's part.
//!
//! Semantics follow c-blosc2 3.3's `b2nd.c`, with the slices checked first: a slice outside
//! the array, a buffer too small for the box it is said to hold, or a stored chunk whose size
//! disagrees with the geometry are errors, never out-of-bounds accesses.

use super::geometry::{c_strides, unravel, Geometry};
use super::hyperslab::{
    blocks_touched, chunk_covered, chunks_touched, copy_nd, BlockPart, ChunkPart,
};
use crate::chunk::{special, DParams};
use crate::error::{Error, Result};
use crate::schunk::{ChunkCodec, Engines, SChunk};

/// The chunks of an array: a super-chunk seen through compression.
pub trait ChunkStore {
    /// Bytes per item.
    fn typesize(&self) -> i32;
    /// Number of chunks.
    fn nchunks(&self) -> i64;
    /// Decompresses chunk `nchunk` into `dst`; returns its uncompressed size.
    fn read_chunk(&mut self, nchunk: i64, dst: &mut [u8]) -> Result<usize>;
    /// Decompresses only the blocks of chunk `nchunk` whose `skip` entry is false into their
    /// places in `dst` (the others are left undefined); returns the chunk's size. The default
    /// decompresses everything.
    fn read_chunk_blocks(&mut self, nchunk: i64, skip: &[bool], dst: &mut [u8]) -> Result<usize> {
        let _ = skip;
        self.read_chunk(nchunk, dst)
    }
    /// Decompression threads (1 by default). With more, a slice that touches many blocks of a
    /// chunk decodes them together ([`ChunkStore::read_chunk_blocks`], in parallel) rather
    /// than one at a time.
    fn nthreads(&self) -> i32 {
        1
    }
    /// Decodes the blocks `nblocks` of chunk `nchunk` one at a time into `scratch` (one
    /// block's bytes), calling `f(i, scratch)` after block `nblocks[i]`. Returns `false`, having
    /// decoded nothing, when the store cannot decode single blocks (the default); the caller
    /// then decodes the chunk.
    fn read_blocks(
        &mut self,
        nchunk: i64,
        nblocks: &[i64],
        scratch: &mut [u8],
        f: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<bool> {
        let _ = (nchunk, nblocks, scratch, f);
        Ok(false)
    }
    /// Compresses `src` and stores it as chunk `nchunk` (replacing it).
    fn write_chunk(&mut self, nchunk: i64, src: &[u8]) -> Result<()>;
    /// Inserts at `nchunk` a chunk of `nbytes` zero bytes (a special chunk).
    fn insert_zero_chunk(&mut self, nchunk: i64, nbytes: i32) -> Result<()>;
    /// Deletes chunk `nchunk`.
    fn delete_chunk(&mut self, nchunk: i64) -> Result<()>;
}

/// Reads a whole chunk, which must hold exactly a padded chunk of the geometry.
fn read_full(store: &mut dyn ChunkStore, nchunk: i64, dst: &mut [u8]) -> Result<()> {
    if nchunk < 0 || nchunk >= store.nchunks() {
        return Err(Error::Data);
    }
    let n = store.read_chunk(nchunk, dst)?;
    if n != dst.len() {
        return Err(Error::Data);
    }
    Ok(())
}

/// The box shape `stop - start`.
fn box_shape(start: &[i64], stop: &[i64]) -> Vec<i64> {
    start.iter().zip(stop).map(|(a, b)| b - a).collect()
}

/// Checks a caller's buffer for the slice `start..stop`: `buffershape` at least the slice in
/// every dimension and `buffer` at least the slice's bytes (c-blosc2's checks).
fn check_buffer(
    g: &Geometry,
    ts: i32,
    start: &[i64],
    stop: &[i64],
    buffershape: &[i64],
    buflen: usize,
) -> Result<()> {
    g.check_slice(start, stop)?;
    if buffershape.len() != g.ndim() {
        return Err(Error::InvalidParam);
    }
    let mut bytes = i64::from(ts);
    for i in 0..g.ndim() {
        let n = stop[i] - start[i];
        if n > buffershape[i] {
            return Err(Error::InvalidParam);
        }
        bytes = bytes.checked_mul(n).ok_or(Error::InvalidParam)?;
    }
    if (buflen as u64) < bytes as u64 {
        return Err(Error::InvalidParam);
    }
    Ok(())
}

/// Whether the slice is exactly chunk `c` and the chunk's blocks lie in C order, so that the
/// chunk's bytes are the slice's bytes (c-blosc2's fast path).
fn whole_chunk_in_c_order(g: &Geometry, c: &ChunkPart, start: &[i64], stop: &[i64]) -> bool {
    let n = g.ndim();
    let mut k = 0;
    for i in 0..n {
        let (cs, bs) = (g.chunkshape()[i], g.blockshape()[i]);
        if start[i] != c.start[i] || stop[i] - start[i] != i64::from(cs) || cs % bs != 0 {
            return false;
        }
        // Blocks are C-ordered slabs when leading block extents are 1, then one divides the
        // chunk, then the rest span the chunk.
        if i > k && cs != bs {
            return false;
        }
        if i == k && bs == 1 {
            k += 1;
        }
    }
    true
}

/// Reads the slice `start..stop` into `buffer`, a row-major array of shape `buffershape`
/// (the slice goes to its origin). Like c-blosc2, the whole of `buffer` is zeroed first, and
/// the part of the slice past the shape stays zero.
pub fn get_slice(
    store: &mut dyn ChunkStore,
    g: &Geometry,
    start: &[i64],
    stop: &[i64],
    buffer: &mut [u8],
    buffershape: &[i64],
) -> Result<()> {
    let ts = store.typesize();
    let tsu = usize::try_from(ts).map_err(|_| Error::InvalidParam)?;
    buffer.fill(0);
    if g.ndim() == 0 {
        let mut one = vec![0u8; g.chunk_nbytes(ts)?];
        read_full(store, 0, &mut one)?;
        buffer
            .get_mut(..tsu)
            .ok_or(Error::InvalidParam)?
            .copy_from_slice(&one);
        return Ok(());
    }
    check_buffer(g, ts, start, stop, buffershape, buffer.len())?;
    let Some(stop) = g.clip(start, stop) else {
        return Ok(());
    };
    let stop = &stop[..];
    let chunk_bytes = g.chunk_nbytes(ts)?;
    let block_bytes = g.block_nbytes(ts)?;
    let slice_shape = box_shape(start, stop);
    let bs: Vec<i64> = g.blockshape().iter().map(|&x| i64::from(x)).collect();
    let nblocks = g.nblocks() as usize;
    let nthreads = store.nthreads();
    let mut data = Scratch::chunk();
    let mut one = Vec::new();
    for c in chunks_touched(g, start, stop)? {
        if whole_chunk_in_c_order(g, &c, start, stop) && buffershape[1..] == slice_shape[1..] {
            return read_full(store, c.nchunk, &mut buffer[..chunk_bytes]);
        }
        if c.nchunk >= store.nchunks() {
            return Err(Error::Data);
        }
        let blocks = blocks_touched(g, &c, start, stop);
        // Copies the part of block `b` (its bytes in `block`) that the slice holds.
        let copy_out = |b: &BlockPart, block: &[u8], buffer: &mut [u8]| {
            copy_nd(
                tsu,
                block,
                &bs,
                &rel(&b.sel_start, &b.start),
                &rel(&b.sel_stop, &b.start),
                buffer,
                buffershape,
                &rel(&b.sel_start, start),
            )
        };
        // A few blocks: decode each alone (no chunk-sized buffer). Many blocks with threads:
        // decode the chunk with the others masked out, in parallel.
        if blocks.len() < nblocks && (nthreads <= 1 || blocks.len() * 4 <= nblocks) {
            if one.len() != block_bytes {
                one = vec![0u8; block_bytes];
            }
            let ids: Vec<i64> = blocks.iter().map(|b| b.nblock).collect();
            let done = store.read_blocks(c.nchunk, &ids, &mut one, &mut |i, block| {
                copy_out(&blocks[i], block, buffer)
            })?;
            if done {
                continue;
            }
        }
        let data = data.get(chunk_bytes);
        if blocks.len() < nblocks {
            // Decode only the blocks the slice touches (c-blosc2's maskout path).
            let mut skip = vec![true; nblocks];
            for b in &blocks {
                skip[b.nblock as usize] = false;
            }
            if store.read_chunk_blocks(c.nchunk, &skip, data)? != chunk_bytes {
                return Err(Error::Data);
            }
        } else {
            read_full(store, c.nchunk, data)?;
        }
        for b in &blocks {
            let off = b.nblock as usize * block_bytes;
            copy_out(b, &data[off..off + block_bytes], buffer)?;
        }
    }
    Ok(())
}

/// `v - o`, item by item.
fn rel(v: &[i64], o: &[i64]) -> Vec<i64> {
    v.iter().zip(o).map(|(a, b)| a - b).collect()
}

/// A work buffer (a decoded chunk, a compressed chunk), reused by later calls on the same
/// thread so that each call does not allocate and zero one (c-blosc2 `malloc`s them
/// uninitialised; every byte read from one has been written by the same call first). Taken
/// out of its slot while in use, so a nested call (from a codec callback) gets its own.
pub struct Scratch {
    slot: usize,
    buf: Option<Vec<u8>>,
}

thread_local! {
    static SCRATCH: [std::cell::Cell<Vec<u8>>; 2] =
        const { [std::cell::Cell::new(Vec::new()), std::cell::Cell::new(Vec::new())] };
}

/// Buffers above this size are not kept for the next call.
const SCRATCH_KEEP: usize = 64 << 20;

impl Scratch {
    /// The buffer for decoded chunks.
    pub fn chunk() -> Scratch {
        Scratch { slot: 0, buf: None }
    }

    /// The buffer for compressed chunks.
    pub fn compressed() -> Scratch {
        Scratch { slot: 1, buf: None }
    }

    /// The buffer, `len` bytes (zeroed only where it grows).
    pub fn get(&mut self, len: usize) -> &mut [u8] {
        let slot = self.slot;
        let v = self
            .buf
            .get_or_insert_with(|| SCRATCH.with(|s| s[slot].take()));
        if v.len() < len {
            v.resize(len, 0);
        }
        &mut v[..len]
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(v) = self.buf.take() {
            if v.capacity() <= SCRATCH_KEEP {
                let slot = self.slot;
                let _ = SCRATCH.try_with(|s| {
                    let old = s[slot].take();
                    s[slot].set(if old.capacity() > v.capacity() {
                        old
                    } else {
                        v
                    });
                });
            }
        }
    }
}

/// Writes `buffer` (a row-major array of shape `buffershape`, read from its origin) into the
/// slice `start..stop` (the part past the shape is ignored). Chunks the slice covers whole are rebuilt from zeros (their padding
/// written as zeros), the others decompressed and patched; each is recompressed and stored.
pub fn set_slice(
    store: &mut dyn ChunkStore,
    g: &Geometry,
    start: &[i64],
    stop: &[i64],
    buffer: &[u8],
    buffershape: &[i64],
) -> Result<()> {
    let ts = store.typesize();
    let tsu = usize::try_from(ts).map_err(|_| Error::InvalidParam)?;
    if g.ndim() == 0 {
        let one = buffer.get(..tsu).ok_or(Error::InvalidParam)?;
        if store.nchunks() < 1 {
            return Err(Error::Data);
        }
        return store.write_chunk(0, one);
    }
    check_buffer(g, ts, start, stop, buffershape, buffer.len())?;
    let Some(stop) = g.clip(start, stop) else {
        return Ok(());
    };
    let stop = &stop[..];
    let chunk_bytes = g.chunk_nbytes(ts)?;
    let block_bytes = g.block_nbytes(ts)?;
    let bs: Vec<i64> = g.blockshape().iter().map(|&x| i64::from(x)).collect();
    let slice_shape = box_shape(start, stop);
    let mut scratch = Scratch::chunk();
    for c in chunks_touched(g, start, stop)? {
        if c.nchunk >= store.nchunks() {
            return Err(Error::Data);
        }
        if whole_chunk_in_c_order(g, &c, start, stop) && buffershape[1..] == slice_shape[1..] {
            store.write_chunk(
                c.nchunk,
                buffer.get(..chunk_bytes).ok_or(Error::InvalidParam)?,
            )?;
            continue;
        }
        let data = scratch.get(chunk_bytes);
        if chunk_covered(&c, start, stop) {
            data.fill(0);
        } else {
            read_full(store, c.nchunk, data)?;
        }
        for b in blocks_touched(g, &c, start, stop) {
            let off = b.nblock as usize * block_bytes;
            copy_nd(
                tsu,
                buffer,
                buffershape,
                &rel(&b.sel_start, start),
                &rel(&b.sel_stop, start),
                &mut data[off..off + block_bytes],
                &bs,
                &rel(&b.sel_start, &b.start),
            )?;
        }
        store.write_chunk(c.nchunk, data)?;
    }
    Ok(())
}

/// The storage positions (item index inside the super-chunk's concatenated chunks) of the
/// array items at the row-major linear indices `coords` (`b2nd_get_sparse_cbuffer`).
pub fn sparse_storage_coords(g: &Geometry, coords: &[i64]) -> Result<Vec<i64>> {
    if g.ndim() == 0 {
        return Err(Error::InvalidParam);
    }
    let n = g.ndim();
    let cstr = c_strides(&g.chunks_in_array());
    let bstr = c_strides(&g.blocks_in_chunk());
    let istr = c_strides(
        &g.blockshape()
            .iter()
            .map(|&x| i64::from(x))
            .collect::<Vec<_>>(),
    );
    let mut idx = vec![0i64; n];
    coords
        .iter()
        .map(|&k| {
            if k < 0 || k >= g.nitems() {
                return Err(Error::InvalidParam);
            }
            unravel(k, g.shape(), &mut idx);
            let (mut nchunk, mut nblock, mut item) = (0i64, 0i64, 0i64);
            for i in 0..n {
                let (c, b) = (i64::from(g.chunkshape()[i]), i64::from(g.blockshape()[i]));
                let inchunk = idx[i] % c;
                nchunk += idx[i] / c * cstr[i];
                nblock += inchunk / b * bstr[i];
                item += inchunk % b * istr[i];
            }
            Ok(nchunk * g.extchunknitems() + nblock * i64::from(g.blocknitems()) + item)
        })
        .collect()
}

/// The new geometry after `shrink`/`extend` (`start` as in [`resize`]).
fn shrink(
    store: &mut dyn ChunkStore,
    g: &Geometry,
    new: &[i64],
    start: Option<&[i64]>,
) -> Result<Geometry> {
    if new == g.shape() {
        return Ok(g.clone());
    }
    let ng = g.with_shape(new)?;
    let old_cia = g.chunks_in_array();
    let start = start.unwrap_or(new);
    let mut idx = vec![0i64; g.ndim()];
    for i in (0..store.nchunks()).rev() {
        unravel(i, &old_cia, &mut idx);
        let gone = (0..g.ndim()).any(|j| {
            let pos = i64::from(g.chunkshape()[j]) * idx[j];
            start[j] <= pos && pos < start[j] + g.shape()[j] - new[j]
        });
        if gone {
            store.delete_chunk(i)?;
        }
    }
    Ok(ng)
}

fn extend(
    store: &mut dyn ChunkStore,
    g: &Geometry,
    new: &[i64],
    start: Option<&[i64]>,
) -> Result<Geometry> {
    if new == g.shape() {
        return Ok(g.clone());
    }
    if g.shape().contains(&i64::MAX) {
        return Err(Error::InvalidParam);
    }
    let ng = g.with_shape(new)?;
    let nchunks = if ng.chunknitems() == 0 {
        0
    } else {
        ng.extnitems() / i64::from(ng.chunknitems())
    };
    if nchunks != store.nchunks() {
        let chunk_bytes = i32::try_from(ng.chunk_nbytes(store.typesize())?)
            .map_err(|_| Error::MaxBufsizeExceeded)?;
        let start = start.unwrap_or(g.shape());
        let cia = ng.chunks_in_array();
        let mut idx = vec![0i64; g.ndim()];
        for i in 0..nchunks {
            unravel(i, &cia, &mut idx);
            let added = (0..g.ndim()).any(|j| {
                let pos = i64::from(g.chunkshape()[j]) * idx[j];
                start[j] <= pos && pos < start[j] + new[j] - g.shape()[j]
            });
            if added {
                store.insert_zero_chunk(i, chunk_bytes)?;
            }
        }
    }
    Ok(ng)
}

/// Resizes the array to `new_shape`, adding zero chunks and deleting chunks as c-blosc2's
/// `b2nd_resize` does: `start` (default: the end of each dimension) is where items are added
/// or removed; away from the end it must be a multiple of the chunk shape, as must the change.
/// Returns the new geometry.
pub fn resize(
    store: &mut dyn ChunkStore,
    g: &Geometry,
    new_shape: &[i64],
    start: Option<&[i64]>,
) -> Result<Geometry> {
    let n = g.ndim();
    if new_shape.len() != n || start.is_some_and(|s| s.len() != n) {
        return Err(Error::InvalidParam);
    }
    if new_shape.iter().any(|&s| s < 0) {
        return Err(Error::InvalidParam);
    }
    if let Some(st) = start {
        for i in 0..n {
            let (old, new, s) = (g.shape()[i], new_shape[i], st[i]);
            if s < 0 || s > old {
                return Err(Error::InvalidParam);
            }
            let c = i64::from(g.chunkshape()[i]);
            let away_from_end = (new > old && s != old) || (new < old && s + old - new != old);
            if away_from_end && (c == 0 || s % c != 0 || (new - old) % c != 0) {
                return Err(Error::InvalidParam);
            }
        }
    }
    // Validate the final geometry before touching any chunk.
    g.with_shape(new_shape)?;
    let shrunk: Vec<i64> = (0..n).map(|i| new_shape[i].min(g.shape()[i])).collect();
    let g1 = shrink(store, g, &shrunk, start)?;
    extend(store, &g1, new_shape, start)
}

/// The shape and box of inserting `nbytes` of items along `axis` at `at`: the new shape, the
/// buffer's shape and the slice the buffer is written to.
#[allow(clippy::type_complexity)]
pub fn insert_plan(
    g: &Geometry,
    typesize: i32,
    nbytes: i64,
    axis: i8,
    at: i64,
) -> Result<(Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>)> {
    let n = g.ndim();
    let axis = usize::try_from(axis)
        .ok()
        .filter(|&a| a < n)
        .ok_or(Error::InvalidParam)?;
    let mut slab = i64::from(typesize);
    for i in (0..n).filter(|&i| i != axis) {
        slab = slab.checked_mul(g.shape()[i]).ok_or(Error::InvalidParam)?;
    }
    if slab <= 0 || nbytes < 0 || nbytes % slab != 0 {
        return Err(Error::InvalidParam);
    }
    let added = nbytes / slab;
    if at < 0 || at > g.shape()[axis] {
        return Err(Error::InvalidParam);
    }
    let mut new_shape = g.shape().to_vec();
    new_shape[axis] = new_shape[axis]
        .checked_add(added)
        .ok_or(Error::InvalidParam)?;
    let mut bufshape = g.shape().to_vec();
    bufshape[axis] = added;
    let mut start = vec![0i64; n];
    start[axis] = at;
    let mut stop = new_shape.clone();
    stop[axis] = at + added;
    Ok((new_shape, bufshape, start, stop))
}

/// Inserts `buffer` (items with the array's shape except `added` along `axis`) at `at` along
/// `axis` (`b2nd_insert`). Returns the new geometry.
pub fn insert(
    store: &mut dyn ChunkStore,
    g: &Geometry,
    buffer: &[u8],
    axis: i8,
    at: i64,
) -> Result<Geometry> {
    let (new_shape, bufshape, start, stop) =
        insert_plan(g, store.typesize(), buffer.len() as i64, axis, at)?;
    let ng = if at == g.shape()[axis as usize] {
        resize(store, g, &new_shape, None)?
    } else {
        resize(store, g, &new_shape, Some(&start))?
    };
    set_slice(store, &ng, &start, &stop, buffer, &bufshape)?;
    Ok(ng)
}

/// Deletes `len` items along `axis` from `at` (`b2nd_delete`). Returns the new geometry.
pub fn delete(
    store: &mut dyn ChunkStore,
    g: &Geometry,
    axis: i8,
    at: i64,
    len: i64,
) -> Result<Geometry> {
    let n = g.ndim();
    let a = usize::try_from(axis)
        .ok()
        .filter(|&a| a < n)
        .ok_or(Error::InvalidParam)?;
    if len < 0 || at < 0 || at.checked_add(len).is_none_or(|e| e > g.shape()[a]) {
        return Err(Error::InvalidParam);
    }
    let mut new_shape = g.shape().to_vec();
    new_shape[a] -= len;
    let mut start = vec![0i64; n];
    start[a] = at;
    if at == g.shape()[a] - len {
        resize(store, g, &new_shape, None)
    } else {
        resize(store, g, &new_shape, Some(&start))
    }
}

/// A safe super-chunk as a [`ChunkStore`], compressing with its own parameters.
pub struct SChunkStore<'a> {
    sc: &'a mut SChunk,
    codec: Engines,
}

impl<'a> SChunkStore<'a> {
    /// Wraps `sc`.
    pub fn new(sc: &'a mut SChunk) -> Result<SChunkStore<'a>> {
        let codec = Engines::new(sc.cparams(), &DParams { nthreads: 1 })?;
        Ok(SChunkStore { sc, codec })
    }
}

impl ChunkStore for SChunkStore<'_> {
    fn typesize(&self) -> i32 {
        self.sc.cparams().typesize
    }
    fn nchunks(&self) -> i64 {
        self.sc.nchunks()
    }
    fn read_chunk(&mut self, nchunk: i64, dst: &mut [u8]) -> Result<usize> {
        self.sc.decompress_chunk_with(&mut self.codec, nchunk, dst)
    }
    fn read_blocks(
        &mut self,
        nchunk: i64,
        nblocks: &[i64],
        scratch: &mut [u8],
        f: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<bool> {
        let n = scratch.len();
        let mut buf = Vec::new();
        self.sc
            .decode_blocks_in(&mut self.codec, nchunk, nblocks, n, scratch, &mut buf, f)?;
        Ok(true)
    }
    fn write_chunk(&mut self, nchunk: i64, src: &[u8]) -> Result<()> {
        let c = self.codec.compress(src)?;
        self.sc.update_chunk(nchunk, &c).map(|_| ())
    }
    fn insert_zero_chunk(&mut self, nchunk: i64, nbytes: i32) -> Result<()> {
        let mut c = vec![0u8; crate::chunk::header::EXTENDED_HEADER_LEN];
        let n = special::zeros(self.sc.cparams(), nbytes, &mut c)?;
        self.sc.insert_chunk(nchunk, &c[..n]).map(|_| ())
    }
    fn delete_chunk(&mut self, nchunk: i64) -> Result<()> {
        self.sc.delete_chunk(nchunk).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::CParams;
    use crate::schunk::NewStorage;

    /// A new in-memory array of `g` filled with zero chunks.
    fn new_sc(g: &Geometry, ts: i32) -> SChunk {
        let cp = CParams {
            typesize: ts,
            blocksize: g.block_nbytes(ts).unwrap() as i32,
            ..CParams::default()
        };
        let mut sc = SChunk::new(NewStorage::Memory, cp, DParams { nthreads: 1 }).unwrap();
        let mut st = SChunkStore::new(&mut sc).unwrap();
        for i in 0..g.nchunks() {
            st.insert_zero_chunk(i, g.chunk_nbytes(ts).unwrap() as i32)
                .unwrap();
        }
        sc
    }

    /// Row-major u32 items `0..n` (each the item's own linear index).
    fn iota(n: i64) -> Vec<u8> {
        (0..n as u32).flat_map(|x| x.to_ne_bytes()).collect()
    }

    fn items(b: &[u8]) -> Vec<u32> {
        b.chunks(4)
            .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn slices_round_trip_in_every_rank() {
        let cases: &[(&[i64], &[i32], &[i32])] = &[
            (&[10], &[4], &[3]),
            (&[10, 7], &[4, 7], &[3, 2]),
            (&[6, 6], &[3, 3], &[3, 3]),
            (&[5, 4, 3], &[2, 4, 2], &[1, 3, 2]),
            (
                &[3, 2, 3, 2, 3, 2, 3, 2],
                &[2, 2, 2, 1, 2, 2, 2, 2],
                &[1, 2, 1, 1, 2, 1, 2, 1],
            ),
        ];
        for (shape, cs, bs) in cases {
            let g = Geometry::new(shape, cs, bs).unwrap();
            let mut sc = new_sc(&g, 4);
            let mut st = SChunkStore::new(&mut sc).unwrap();
            let zero = vec![0i64; g.ndim()];
            let all = iota(g.nitems());
            set_slice(&mut st, &g, &zero, shape, &all, shape).unwrap();
            let mut back = vec![0u8; all.len()];
            get_slice(&mut st, &g, &zero, shape, &mut back, shape).unwrap();
            assert_eq!(back, all, "{shape:?}");
            // An inner box: each item must be its linear index in the array.
            let start: Vec<i64> = shape.iter().map(|&s| s / 3).collect();
            let stop: Vec<i64> = shape.iter().map(|&s| s - s / 4).collect();
            let bshape = box_shape(&start, &stop);
            let nb: i64 = bshape.iter().product();
            let mut part = vec![0u8; nb as usize * 4];
            get_slice(&mut st, &g, &start, &stop, &mut part, &bshape).unwrap();
            let astr = c_strides(shape);
            let want: Vec<u32> = (0..nb)
                .map(|k| {
                    let c = super::super::hyperslab::coords_of(k, &bshape);
                    (0..c.len())
                        .map(|i| (c[i] + start[i]) * astr[i])
                        .sum::<i64>() as u32
                })
                .collect();
            assert_eq!(items(&part), want, "{shape:?}");
            // Overwrite the box with its complement and read everything back.
            let inv: Vec<u8> = want.iter().flat_map(|x| (!x).to_ne_bytes()).collect();
            set_slice(&mut st, &g, &start, &stop, &inv, &bshape).unwrap();
            get_slice(&mut st, &g, &zero, shape, &mut back, shape).unwrap();
            let got = items(&back);
            for (k, v) in got.iter().enumerate() {
                let c = super::super::hyperslab::coords_of(k as i64, shape);
                let inside = (0..c.len()).all(|i| start[i] <= c[i] && c[i] < stop[i]);
                assert_eq!(*v, if inside { !(k as u32) } else { k as u32 });
            }
        }
    }

    #[test]
    fn bad_slices_and_stored_chunk_mismatch_are_errors() {
        let g = Geometry::new(&[10, 10], &[5, 5], &[5, 5]).unwrap();
        let mut sc = new_sc(&g, 4);
        let mut st = SChunkStore::new(&mut sc).unwrap();
        let mut buf = vec![0u8; 400];
        let bad = Err(Error::InvalidParam);
        assert_eq!(
            get_slice(&mut st, &g, &[0, 0], &[11, 10], &mut buf, &[11, 10]),
            bad
        );
        assert_eq!(
            get_slice(&mut st, &g, &[-1, 0], &[3, 10], &mut buf, &[10, 10]),
            bad
        );
        assert_eq!(
            get_slice(&mut st, &g, &[0, 0], &[10, 10], &mut buf[..399], &[10, 10]),
            bad
        );
        assert_eq!(
            get_slice(&mut st, &g, &[0, 0], &[10, 10], &mut buf, &[9, 10]),
            bad
        );
        assert_eq!(
            set_slice(&mut st, &g, &[0, 0], &[10, 10], &buf[..10], &[10, 10]),
            bad
        );
        // The same chunks read with a geometry whose chunks are bigger.
        let g2 = Geometry::new(&[10, 10], &[5, 10], &[5, 10]).unwrap();
        assert_eq!(
            get_slice(&mut st, &g2, &[0, 0], &[10, 10], &mut buf, &[10, 10]),
            Err(Error::Data)
        );
    }

    #[test]
    fn resize_insert_delete_keep_items_in_place() {
        let g = Geometry::new(&[4, 6], &[2, 3], &[1, 3]).unwrap();
        let mut sc = new_sc(&g, 4);
        let mut st = SChunkStore::new(&mut sc).unwrap();
        set_slice(&mut st, &g, &[0, 0], &[4, 6], &iota(24), &[4, 6]).unwrap();
        // Insert two rows at row 2 (chunk-aligned), then delete them again.
        let rows: Vec<u8> = (100..112u32).flat_map(|x| x.to_ne_bytes()).collect();
        let g2 = insert(&mut st, &g, &rows, 0, 2).unwrap();
        assert_eq!(g2.shape(), &[6, 6]);
        assert_eq!(st.nchunks(), 6);
        let mut b = vec![0u8; 144];
        get_slice(&mut st, &g2, &[0, 0], &[6, 6], &mut b, &[6, 6]).unwrap();
        let v = items(&b);
        assert_eq!(&v[..12], &(0..12).collect::<Vec<u32>>()[..]);
        assert_eq!(&v[12..24], &(100..112).collect::<Vec<u32>>()[..]);
        assert_eq!(&v[24..], &(12..24).collect::<Vec<u32>>()[..]);
        let g3 = delete(&mut st, &g2, 0, 2, 2).unwrap();
        let mut b = vec![0u8; 96];
        get_slice(&mut st, &g3, &[0, 0], &[4, 6], &mut b, &[4, 6]).unwrap();
        assert_eq!(items(&b), (0..24).collect::<Vec<u32>>());
        // Growing at the end adds zeros; unaligned starts are refused and change nothing.
        let g4 = resize(&mut st, &g3, &[5, 7], None).unwrap();
        assert_eq!(st.nchunks(), 9);
        let mut b = vec![0u8; 140];
        get_slice(&mut st, &g4, &[0, 0], &[5, 7], &mut b, &[5, 7]).unwrap();
        assert_eq!(items(&b)[6], 0);
        assert_eq!(items(&b)[7], 6);
        assert_eq!(
            resize(&mut st, &g4, &[6, 7], Some(&[1, 0])).unwrap_err(),
            Error::InvalidParam
        );
        assert_eq!(st.nchunks(), 9);
        assert_eq!(
            insert(&mut st, &g4, &rows[..5], 0, 0).unwrap_err(),
            Error::InvalidParam
        );
        assert_eq!(
            delete(&mut st, &g4, 2, 0, 1).unwrap_err(),
            Error::InvalidParam
        );
        assert_eq!(
            delete(&mut st, &g4, 0, 4, 2).unwrap_err(),
            Error::InvalidParam
        );
    }

    #[test]
    fn sparse_coords_follow_the_chunk_and_block_layout() {
        let g = Geometry::new(&[10, 7], &[4, 7], &[3, 2]).unwrap();
        // Item (5, 3): chunk 1, in-chunk (1, 3) -> block (0, 1) = 1, in-block (1, 1) -> 3.
        assert_eq!(
            sparse_storage_coords(&g, &[5 * 7 + 3]).unwrap(),
            vec![48 + 6 + 3]
        );
        assert_eq!(sparse_storage_coords(&g, &[70]), Err(Error::InvalidParam));
    }
}
