//! Slice reads and writes ([`get_slice`], [`set_slice`]) over a [`ChunkStore`], with the
//! checks that come first, the reusable chunk buffers ([`Scratch`]) and the storage
//! coordinates of sparse items ([`sparse_storage_coords`]).

#![forbid(unsafe_code)]

use super::*;
use crate::b2nd_meta::MAX_DIM;

/// Reads a whole chunk, which must hold exactly a padded chunk of the geometry.
pub(super) fn read_full(store: &dyn ChunkStore, nchunk: i64, dst: &mut [u8]) -> Result<()> {
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
pub fn box_shape(start: &[i64], stop: &[i64]) -> Vec<i64> {
    start.iter().zip(stop).map(|(a, b)| b - a).collect()
}

/// Checks a caller's buffer for the slice `start..stop`: `buffershape` at least the slice in
/// every dimension and `buffer` at least the slice's bytes (c-blosc2's checks).
pub(crate) fn check_buffer(
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
pub(super) fn whole_chunk_in_c_order(
    g: &Geometry,
    c: &ChunkPart,
    start: &[i64],
    stop: &[i64],
) -> bool {
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
    store: &dyn ChunkStore,
    g: &Geometry,
    start: &[i64],
    stop: &[i64],
    buffer: &mut [u8],
    buffershape: &[i64],
) -> Result<()> {
    let ts = store.typesize();
    let tsu = usize::try_from(ts).map_err(|_| Error::InvalidParam)?;
    if g.ndim() == 0 {
        buffer.fill(0);
        let mut one = vec![0u8; g.chunk_nbytes(ts)?];
        read_full(store, 0, &mut one)?;
        buffer
            .get_mut(..tsu)
            .ok_or(Error::InvalidParam)?
            .copy_from_slice(&one);
        return Ok(());
    }
    if let Err(e) = check_buffer(g, ts, start, stop, buffershape, buffer.len()) {
        buffer.fill(0);
        return Err(e);
    }
    let Some(stop) = g.clip(start, stop) else {
        buffer.fill(0);
        return Ok(());
    };
    let stop = &stop[..];
    let slice_shape = box_shape(start, stop);
    // The slice fills the buffer's first bytes when it spans the buffer's inner extents: only
    // the rest needs zeroing (the result is that of zeroing all first, as c-blosc2 does).
    if buffershape[1..] == slice_shape[1..] {
        let n = slice_shape.iter().product::<i64>() as usize * tsu;
        buffer[n..].fill(0);
    } else {
        buffer.fill(0);
    }
    let n = g.ndim();
    let chunk_bytes = g.chunk_nbytes(ts)?;
    let block_bytes = g.block_nbytes(ts)?;
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
                &rel_box(&b.sel_start, &b.start)[..n],
                &rel_box(&b.sel_stop, &b.start)[..n],
                buffer,
                buffershape,
                &rel_box(&b.sel_start, start)[..n],
            )
        };
        // One thread, or a few blocks: decode each block alone into a block-sized buffer that
        // stays in cache for the copy out (no chunk-sized buffer written and read back, even
        // for a chunk the slice covers). Many blocks with threads: decode the chunk with the
        // others masked out, in parallel.
        if nthreads <= 1 || blocks.len() * 4 <= nblocks {
            if one.len() != block_bytes {
                one = vec![0u8; block_bytes];
            }
            let ids: Vec<i64> = blocks.iter().map(|b| b.nblock).collect();
            let done =
                store.read_blocks(c.nchunk, chunk_bytes, &ids, &mut one, &mut |i, block| {
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

/// Whether every byte of chunk `c`'s buffer is an item of the array: the chunk lies inside the
/// shape and the blocks divide the chunk shape (no padding anywhere).
fn chunk_without_padding(g: &Geometry, c: &ChunkPart) -> bool {
    (0..g.ndim()).all(|i| {
        let (cs, bs) = (g.chunkshape()[i], g.blockshape()[i]);
        bs > 0 && cs % bs == 0 && c.stop[i] - c.start[i] == i64::from(cs)
    })
}

/// `v - o`, item by item, without allocating (`v` has at most `MAX_DIM` items).
fn rel_box(v: &[i64], o: &[i64]) -> [i64; MAX_DIM] {
    let mut r = [0i64; MAX_DIM];
    for (r, (a, b)) in r.iter_mut().zip(v.iter().zip(o)) {
        *r = a - b;
    }
    r
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
pub(super) const SCRATCH_KEEP: usize = 64 << 20;

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
    let n = g.ndim();
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
            // A chunk without padding (inside the shape, blocks dividing it) is overwritten
            // whole below; only padding must be zeros.
            if !chunk_without_padding(g, &c) {
                data.fill(0);
            }
        } else {
            read_full(store, c.nchunk, data)?;
        }
        for b in blocks_touched(g, &c, start, stop) {
            let off = b.nblock as usize * block_bytes;
            copy_nd(
                tsu,
                buffer,
                buffershape,
                &rel_box(&b.sel_start, start)[..n],
                &rel_box(&b.sel_stop, start)[..n],
                &mut data[off..off + block_bytes],
                &bs,
                &rel_box(&b.sel_start, &b.start)[..n],
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
