//! Lazy chunks of frames on storage (see [`crate::chunk::lazy`]): building them from a stored
//! chunk's header and block-start table, and reading the blocks they name, bounded by the
//! stored chunk's place (the data section of a cframe, the chunk file of an sframe).

#![forbid(unsafe_code)]

use super::io::Store;
use super::sframe::SparseDir;
use super::{Backing, Frame};
use crate::chunk::header::{ChunkHeader, SpecialKind, EXTENDED_HEADER_LEN};
use crate::chunk::lazy::{self, LazySource};
use crate::error::{Error, Result};

impl Frame {
    /// Whether chunks come from storage (files, user I/O) rather than memory: the frames whose
    /// [`Frame::lazy_chunk`] is lazy.
    pub fn reads_from_storage(&self) -> bool {
        !matches!(self.backing, Backing::Contiguous(Store::Memory(_)))
    }

    /// Chunk `i` as `blosc2_schunk_get_lazychunk` returns it for a frame on storage: its header
    /// and block-start table, flagged lazy, with c-blosc2's trailer (nchunk, offset, block
    /// csizes); only those bytes are read. `None` when c-blosc2 returns no lazy chunk: the frame
    /// is in memory, or chunk `i` is a special offset or a stored SPECIAL_VALUE chunk (then
    /// [`Frame::fetch`] gives the chunk). Other stored special chunks fail with
    /// `InvalidHeader`, as in c-blosc2.
    pub fn lazy_chunk(&self, i: i64) -> Result<Option<Vec<u8>>> {
        if !self.reads_from_storage() {
            return Ok(None);
        }
        let Some(at) = self.loc(i)?.stored() else {
            return Ok(None);
        };
        let (nchunk, offset) = match &self.backing {
            Backing::Sparse(_) => {
                let id = i32::try_from(at).map_err(|_| Error::InvalidHeader)?;
                (id, at as i64)
            }
            Backing::Contiguous(_) => (
                i32::try_from(i).map_err(|_| Error::InvalidParam)?,
                i64::from(self.header.header_len) + at as i64,
            ),
        };
        let mut head = [0u8; EXTENDED_HEADER_LEN];
        self.read_lazy(nchunk, offset, 0, &mut head)?;
        let h = ChunkHeader::read(&head, true)?;
        if !h.is_extended() {
            return Err(Error::InvalidHeader);
        }
        // The lazy chunk's size follows from the header's claims (8 bytes per block), so the
        // claims must be what storage holds: the whole chunk fits in its place, and a memcpyed
        // chunk holds its nbytes. A 32-byte chunk file claiming 2 GiB in 16-byte blocks would
        // otherwise make a 1 GiB lazy chunk.
        if h.cbytes.max(0) as u64 > self.stored_len(nchunk, offset)? {
            return Err(Error::ReadBuffer);
        }
        match h.special() {
            Some(SpecialKind::None) => {}
            Some(SpecialKind::Value) => return Ok(None),
            _ => return Err(Error::InvalidHeader),
        }
        let nblocks = lazy::lazy_nblocks(&h)?;
        if h.is_memcpyed() {
            return lazy::build(&head, nchunk, offset).map(Some);
        }
        let mut table = vec![0u8; EXTENDED_HEADER_LEN + 4 * nblocks];
        self.read_lazy(nchunk, offset, 0, &mut table)?;
        lazy::build(&table, nchunk, offset).map(Some)
    }
}

impl Frame {
    /// How many bytes the stored chunk that a lazy trailer names can hold: the rest of the data
    /// section from `offset` (cframes), or the size of chunk file `nchunk` (sframes).
    fn stored_len(&self, nchunk: i32, offset: i64) -> Result<u64> {
        match &self.backing {
            Backing::Contiguous(_) => {
                let hl = u64::from(self.header.header_len);
                let data_end = hl + self.header.cbytes.max(0) as u64;
                let start = u64::try_from(offset).map_err(|_| Error::InvalidHeader)?;
                if start < hl || start > data_end {
                    return Err(Error::ReadBuffer);
                }
                Ok(data_end - start)
            }
            Backing::Sparse(dir) => {
                let id = u64::try_from(nchunk).map_err(|_| Error::InvalidHeader)?;
                dir.chunk_file_len(id)
            }
        }
    }
}

impl LazySource for Frame {
    /// cframes: `offset` is the chunk's position in the frame, which must lie in the data
    /// section with the whole read; sframes: `nchunk` names the chunk file, which must hold
    /// the whole read.
    fn read_lazy(&self, nchunk: i32, offset: i64, pos: u64, dst: &mut [u8]) -> Result<()> {
        let len = dst.len() as u64;
        match &self.backing {
            Backing::Contiguous(store) => {
                let hl = u64::from(self.header.header_len);
                let start = u64::try_from(offset).map_err(|_| Error::InvalidHeader)?;
                let data_end = hl + self.header.cbytes.max(0) as u64;
                let from = start.checked_add(pos).ok_or(Error::InvalidHeader)?;
                let end = from.checked_add(len).ok_or(Error::InvalidHeader)?;
                if start < hl || end > data_end {
                    return Err(Error::ReadBuffer);
                }
                store.read_into(from, dst)
            }
            Backing::Sparse(dir) => {
                let id = u64::try_from(nchunk).map_err(|_| Error::InvalidHeader)?;
                read_chunk_file_range(dir, id, pos, dst)
            }
        }
    }
}

/// Reads `dst.len()` bytes at `pos` of chunk file `id`, which must hold them.
fn read_chunk_file_range(dir: &SparseDir, id: u64, pos: u64, dst: &mut [u8]) -> Result<()> {
    let end = pos.checked_add(dst.len() as u64).ok_or(Error::ReadBuffer)?;
    dir.read_chunk_range(id, pos, end, dst)
}
