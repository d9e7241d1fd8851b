//! Lazy chunks: what `blosc2_schunk_get_lazychunk` hands out for a frame on storage (a file,
//! a frame at an offset, an sframe, a user I/O backend), in c-blosc2 3.3.5's layout:
//!
//! ```text
//! header (32 bytes, blosc2_flags bit 3 set) | bstarts int32[nblocks]
//!   | int32 nchunk | int64 offset | int32 csize[nblocks]          (all little-endian)
//! ```
//!
//! `nchunk`/`offset` name the stored chunk: for a cframe the chunk's index and its position
//! in the frame (header length + data offset), for an sframe the chunk file's id twice.
//! `csize[j]` is block `j`'s compressed span (bstarts sorted, the last one ending at cbytes);
//! memcpyed chunks have no block-start table (those four bytes per block are zero here) and
//! their csizes are the block sizes. Special chunks are never lazy.
//!
//! A lazy chunk is decoded against a [`LazySource`] (the frame it came from), which reads the
//! dictionary and each needed block from storage. Everything in a lazy chunk is the caller's
//! buffer, so nothing in it is trusted: the trailer must fit in the buffer, every block
//! csize must be positive and at most what a block can take, every block must lie inside the
//! chunk's cbytes, and the source bounds every read by the stored chunk (the frame's data
//! section or the chunk file), so a forged trailer reads other bytes of the same frame at
//! worst, never outside it.

#![forbid(unsafe_code)]

use super::header::{blosc2_flags, rd_i32, ChunkHeader, EXTENDED_HEADER_LEN};
use crate::error::{Error, Result};

/// Where a lazy chunk's blocks are read from.
pub trait LazySource: Sync {
    /// Reads `dst.len()` bytes at byte `pos` of the stored chunk that a lazy trailer names
    /// (`nchunk` and `offset` as the trailer holds them).
    fn read_lazy(&self, nchunk: i32, offset: i64, pos: u64, dst: &mut [u8]) -> Result<()>;
}

/// The trailer of a lazy chunk, located and bounded.
#[derive(Clone, Copy, Debug)]
pub struct Trailer {
    /// Trailer `nchunk` field.
    pub nchunk: i32,
    /// Trailer `offset` field.
    pub offset: i64,
    /// Where `csize[0]` sits in the lazy chunk.
    pub csizes_at: usize,
    /// Number of blocks.
    pub nblocks: usize,
}

impl Trailer {
    /// Locates the trailer of a lazy chunk with `nblocks` blocks in `src` (`ReadBuffer` when
    /// it does not fit, as c-blosc2 reports it).
    pub fn locate(src: &[u8], nblocks: usize) -> Result<Trailer> {
        let at = nblocks
            .checked_mul(4)
            .and_then(|b| b.checked_add(EXTENDED_HEADER_LEN))
            .ok_or(Error::ReadBuffer)?;
        let end = nblocks
            .checked_mul(4)
            .and_then(|b| b.checked_add(at + 12))
            .ok_or(Error::ReadBuffer)?;
        if src.len() < end {
            return Err(Error::ReadBuffer);
        }
        let mut off = [0u8; 8];
        off.copy_from_slice(&src[at + 4..at + 12]);
        Ok(Trailer {
            nchunk: rd_i32(src, at),
            offset: i64::from_le_bytes(off),
            csizes_at: at + 12,
            nblocks,
        })
    }

    /// `csize[j]` as stored (unchecked).
    pub fn csize(&self, src: &[u8], j: usize) -> i32 {
        rd_i32(src, self.csizes_at + 4 * j)
    }
}

/// Builds a lazy chunk from the first bytes of a stored chunk: `head` holds its 32-byte header
/// and (unless memcpyed) its block-start table. `nchunk`/`offset`: the trailer fields.
/// Checks what c-blosc2 checks (`InvalidHeader`): a positive number of blocks, block starts
/// inside the chunk; block csizes come out of the sorted block starts.
pub fn build(head: &[u8], nchunk: i32, offset: i64) -> Result<Vec<u8>> {
    let h = ChunkHeader::read(head, true)?;
    let nblocks = lazy_nblocks(&h)?;
    let memcpyed = h.is_memcpyed();
    let table = if memcpyed { 0 } else { 4 * nblocks };
    if head.len() < EXTENDED_HEADER_LEN + table {
        return Err(Error::ReadBuffer);
    }
    let mut out = Vec::with_capacity(EXTENDED_HEADER_LEN + 8 * nblocks + 12);
    out.extend_from_slice(&head[..EXTENDED_HEADER_LEN + table]);
    out.resize(EXTENDED_HEADER_LEN + 4 * nblocks, 0);
    out[31] |= blosc2_flags::LAZY;
    out.extend_from_slice(&nchunk.to_le_bytes());
    out.extend_from_slice(&offset.to_le_bytes());
    let cbytes = i64::from(h.cbytes);
    let mut csizes = vec![0i32; nblocks];
    if memcpyed {
        let bs = h.blocksize;
        csizes.fill(bs);
        let left = (h.nbytes as i64 % bs as i64) as i32;
        if left > 0 {
            csizes[nblocks - 1] = left;
        }
    } else {
        let mut order: Vec<(i32, usize)> = (0..nblocks)
            .map(|j| (rd_i32(head, EXTENDED_HEADER_LEN + 4 * j), j))
            .collect();
        order.sort_unstable();
        for k in 0..nblocks {
            let (start, j) = order[k];
            let next = order.get(k + 1).map_or(cbytes, |&(s, _)| i64::from(s));
            // c-blosc2 stores the difference as an int32 whatever it is; the decoder checks it.
            csizes[j] = (next - i64::from(start)) as i32;
        }
    }
    for c in csizes {
        out.extend_from_slice(&c.to_le_bytes());
    }
    Ok(out)
}

/// The number of blocks of a chunk about to be made lazy, with c-blosc2's checks (positive
/// nbytes / cbytes ≥ 32 / positive blocksize; the block-start table inside the chunk).
pub fn lazy_nblocks(h: &ChunkHeader) -> Result<usize> {
    if !h.is_extended() || h.nbytes < 0 || h.cbytes < EXTENDED_HEADER_LEN as i32 || h.blocksize <= 0
    {
        return Err(Error::InvalidHeader);
    }
    let n = if h.is_vl() {
        h.blocksize as i64
    } else {
        (h.nbytes as i64 + h.blocksize as i64 - 1) / h.blocksize as i64
    };
    if n <= 0 || n > i32::MAX as i64 {
        return Err(Error::InvalidHeader);
    }
    if !h.is_memcpyed() && n * 4 > h.cbytes as i64 - EXTENDED_HEADER_LEN as i64 {
        return Err(Error::InvalidHeader);
    }
    // A memcpyed chunk holds its bytes after the header (what its decoder requires too): with
    // the caller's check that cbytes fits in storage, the lazy chunk's 8 bytes per block stay
    // within 8 times what storage holds.
    if h.is_memcpyed() && h.cbytes as i64 != h.nbytes as i64 + EXTENDED_HEADER_LEN as i64 {
        return Err(Error::InvalidHeader);
    }
    Ok(n as usize)
}

/// Whether `src` starts with a lazy chunk that must be read through a [`LazySource`] (special
/// chunks with the lazy bit are decoded as they are, as c-blosc2 does).
pub fn needs_source(src: &[u8]) -> bool {
    src.len() >= EXTENDED_HEADER_LEN
        && ChunkHeader::read(src, true).is_ok_and(|h| h.is_lazy() && h.special_code() == 0)
}
