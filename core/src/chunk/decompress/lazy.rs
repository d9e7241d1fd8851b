//! Lazy chunks (a header and a block-offsets trailer standing for a chunk stored in a frame):
//! [`LazyDecoder`] and the reads that fetch the stored bytes through the chunk's frame.

use super::super::header::{blosc2_flags, rd_i32, ChunkHeader, MAX_DICT_SIZE};
use super::super::lazy::{LazySource, Trailer};
use super::Decompressor;
use crate::error::{Error, Result};

/// A [`Decompressor`] that reads lazy chunks through their frame (see
/// [`Decompressor::with_source`]). Other chunks decode as with the decompressor itself.
pub struct LazyDecoder<'s> {
    pub(super) d: &'s mut Decompressor,
    pub(super) source: &'s dyn LazySource,
}

impl LazyDecoder<'_> {
    /// [`Decompressor::decompress`]; a lazy chunk without a block mask is read in one piece.
    pub fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        self.d
            .decompress_from(src, crate::sys::Out::init(dst), Some(self.source))
    }

    /// [`Decompressor::getitem`], reading only the blocks that hold the items.
    pub fn getitem(
        &mut self,
        src: &[u8],
        start: i32,
        nitems: i32,
        dst: &mut [u8],
    ) -> Result<usize> {
        self.d
            .getitem_from(src, start, nitems, dst, Some(self.source))
    }

    /// [`Decompressor::getitem_bytes`], reading only the blocks that hold the bytes.
    pub fn getitem_bytes(
        &mut self,
        src: &[u8],
        start: i32,
        nbytes: i32,
        dst: &mut [u8],
    ) -> Result<usize> {
        self.d
            .getitem_bytes_from(src, start, nbytes, dst, Some(self.source))
    }

    /// [`Decompressor::decompress_block`], reading only block `nblock` (and block 0 when DELTA
    /// needs it).
    pub fn decompress_block(&mut self, src: &[u8], nblock: i32, dst: &mut [u8]) -> Result<usize> {
        self.d
            .decompress_block_from(src, nblock, dst, Some(self.source))
    }

    /// [`Decompressor::vldecompress`].
    pub fn vldecompress(&mut self, src: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.d.vldecompress_from(src, Some(self.source))
    }

    /// [`Decompressor::vldecompress_block`], reading only block `nblock`.
    pub fn vldecompress_block(&mut self, src: &[u8], nblock: i32) -> Result<Vec<u8>> {
        self.d
            .vldecompress_block_from(src, nblock, Some(self.source))
    }
}

/// A buffer of `n` zero bytes, or `MemoryAlloc` (sizes come from chunk headers, see
/// [`crate::sys::try_zeroed`]).
pub(super) fn zeroed(n: usize) -> Result<Vec<u8>> {
    crate::sys::try_zeroed(n).ok_or(Error::MemoryAlloc)
}

/// The first piece [`read_growing`] allocates; each later piece is as large as what was
/// read before it.
pub(super) const FIRST_PIECE: usize = 1 << 20;

/// Reads bytes `pos + done .. pos + n` of the stored chunk (`nchunk`, `offset` as a lazy
/// trailer names it) into `buf[done..n]`, growing `buf` as needed.
///
/// Sizes here come from a lazy chunk's header and trailer, which a hostile frame controls:
/// a chunk can claim gigabytes its storage does not hold. The buffer therefore grows in
/// pieces that double, each read from storage before the buffer grows again, so it stays
/// within twice what storage really holds (plus [`FIRST_PIECE`]) before the read fails.
/// Whatever `buf` already holds room for is read in one piece.
pub(super) fn read_growing(
    source: &dyn LazySource,
    nchunk: i32,
    offset: i64,
    pos: u64,
    buf: &mut Vec<u8>,
    mut done: usize,
    n: usize,
) -> Result<()> {
    while done < n {
        if buf.len() <= done {
            let piece = (n - done).min(done.max(FIRST_PIECE));
            buf.truncate(done);
            buf.try_reserve_exact(piece)
                .map_err(|_| Error::MemoryAlloc)?;
            buf.resize(done + piece, 0);
        }
        let upto = n.min(buf.len());
        source.read_lazy(nchunk, offset, pos + done as u64, &mut buf[done..upto])?;
        done = upto;
    }
    Ok(())
}

/// The stored chunk a lazy chunk stands for, read whole through `source`; its header must be
/// the lazy chunk's (lazy bit aside). The header's `cbytes` is not trusted for the
/// allocation ([`read_growing`]).
pub(super) fn materialise(src: &[u8], source: &dyn LazySource) -> Result<Vec<u8>> {
    let h = ChunkHeader::read(src, true)?;
    let t = Trailer::locate(src, h.nblocks().max(0) as usize)?;
    let total = h.cbytes.max(0) as usize;
    if total < 32 {
        return Err(Error::InvalidHeader);
    }
    let mut head = [0u8; 32];
    head.copy_from_slice(&src[..32]);
    head[31] &= !blosc2_flags::LAZY;
    let mut whole = zeroed(32)?;
    source.read_lazy(t.nchunk, t.offset, 0, &mut whole)?;
    if whole[..] != head {
        return Err(Error::InvalidHeader);
    }
    read_growing(source, t.nchunk, t.offset, 0, &mut whole, 32, total)?;
    Ok(whole)
}

/// Block `nblock` of a lazy VL-block chunk as a complete one-block VL chunk (header, one
/// block start, the dictionary if any, the block's span read from storage), for the ordinary
/// decoder to check and decode. The trailer's csize must hold more than the block's size
/// field and lie inside the chunk (`InvalidHeader`, as c-blosc2 reports it).
pub(super) fn lazy_vl_block(
    h: &ChunkHeader,
    src: &[u8],
    nblock: i32,
    source: &dyn LazySource,
) -> Result<Vec<u8>> {
    let nblocks = h.nblocks().max(0) as usize;
    let t = Trailer::locate(src, nblocks)?;
    if nblock < 0 || nblock as usize >= nblocks {
        return Err(Error::InvalidParam);
    }
    let j = nblock as usize;
    let cbytes = i64::from(h.cbytes);
    let table_end = 32 + 4 * nblocks as i64;
    let cs = t.csize(src, j) as i64;
    if cs <= 4 || cs > cbytes {
        return Err(Error::InvalidHeader);
    }
    let mut dict = Vec::new();
    if h.uses_dict() {
        let mut n = [0u8; 4];
        if table_end + 4 > cbytes {
            return Err(Error::InvalidHeader);
        }
        source.read_lazy(t.nchunk, t.offset, table_end as u64, &mut n)?;
        let dsize = i32::from_le_bytes(n);
        if dsize <= 0 || dsize > MAX_DICT_SIZE || table_end + 4 + dsize as i64 > cbytes {
            return Err(Error::CodecDict);
        }
        let len = 4 + dsize as usize;
        read_growing(
            source,
            t.nchunk,
            t.offset,
            table_end as u64,
            &mut dict,
            0,
            len,
        )?;
    }
    let bstart = rd_i32(src, 32 + 4 * j) as i64;
    if bstart < table_end + dict.len() as i64 || bstart + cs > cbytes {
        return Err(Error::InvalidHeader);
    }
    let mut span = Vec::new();
    read_growing(
        source,
        t.nchunk,
        t.offset,
        bstart as u64,
        &mut span,
        0,
        cs as usize,
    )?;
    let nb = rd_i32(&span, 0);
    if nb <= 0 || nb > h.nbytes {
        return Err(Error::InvalidHeader);
    }
    let start = 36 + dict.len();
    let total = start + span.len();
    let total32 = i32::try_from(total).map_err(|_| Error::InvalidHeader)?;
    let mut one = Vec::with_capacity(total);
    one.extend_from_slice(&src[..32]);
    one[31] &= !blosc2_flags::LAZY;
    one[4..8].copy_from_slice(&nb.to_le_bytes());
    one[8..12].copy_from_slice(&1i32.to_le_bytes());
    one[12..16].copy_from_slice(&total32.to_le_bytes());
    one.extend_from_slice(&(start as i32).to_le_bytes());
    one.extend_from_slice(&dict);
    one.extend_from_slice(&span);
    Ok(one)
}
