//! Sparse frames: a directory holding `chunks.b2frame` (a frame header with `frame_type = 1`,
//! the offsets index whose entries are chunk-file ids, and the trailer) plus one `%08X.chunk`
//! file per stored chunk (cblosc2-notes §2.14).

use super::chunkinfo::{ChunkInfo, MIN_HEADER_LEN};
use super::header::{FrameHeader, FrameType};
use super::io::Store;
use super::{cframe, Backing, Frame};
use crate::error::{Error, Result};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Name of the index file inside the directory.
pub const INDEX_FILE: &str = "chunks.b2frame";

/// Path of the file holding chunk `id` (8 uppercase hex digits).
pub fn chunk_path(dir: &Path, id: u64) -> Result<PathBuf> {
    if id > u64::from(u32::MAX) {
        return Err(Error::InvalidIndex);
    }
    Ok(dir.join(format!("{id:08X}.chunk")))
}

/// Opens the sframe in `dir` (reads only its index file).
pub fn open(dir: &Path) -> Result<Frame> {
    let file = std::fs::File::open(dir.join(INDEX_FILE)).map_err(|_| Error::FileOpen)?;
    let store = Store::File { file, base: 0 };
    let (header, locs, vlmeta) = cframe::read_frame(&store, FrameType::Sparse)?;
    Ok(Frame {
        header,
        locs,
        vlmeta,
        backing: Backing::Sparse(dir.to_path_buf()),
    })
}

/// Reads chunk file `id`, checking its cbytes against the file and the frame's cbytes.
pub fn read_chunk(dir: &Path, header: &FrameHeader, id: u64) -> Result<Vec<u8>> {
    let path = chunk_path(dir, id)?;
    let mut f = std::fs::File::open(path).map_err(|_| Error::FileOpen)?;
    let size = f.metadata().map_err(|_| Error::FileRead)?.len();
    if size < MIN_HEADER_LEN as u64 || size > header.cbytes as u64 {
        return Err(Error::ReadBuffer);
    }
    let mut buf = Vec::with_capacity(size as usize);
    f.read_to_end(&mut buf).map_err(|_| Error::FileRead)?;
    let info = ChunkInfo::parse(&buf)?;
    if info.cbytes as usize > buf.len() {
        return Err(Error::ReadBuffer);
    }
    buf.truncate(info.cbytes as usize);
    Ok(buf)
}

/// Writes the index file `header | index | trailer`, replacing the previous one.
pub fn write_index_file(dir: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(dir.join(INDEX_FILE), bytes).map_err(|_| Error::FileWrite)
}
