//! Frames another handle changed: re-reading a stale frame ([`SChunk::refresh_frame`],
//! [`SChunk::refresh`]) and reopening a cframe file replaced on disk
//! ([`SChunk::reopen_if_replaced`]).

use super::{Body, Location, SChunk};
use crate::error::{Error, Result};
use crate::frame::Frame;
use std::path::Path;

impl SChunk {
    /// Re-reads the backing frame through its own storage (file, user I/O backend, sframe
    /// index) when the stored `frame_len` differs from the cached one, or always when `force`
    /// (the lock generation moved). Returns whether it re-read; plain and in-memory super-chunks
    /// never need to.
    #[doc(hidden)]
    pub fn refresh_frame(&mut self, force: bool) -> Result<bool> {
        match &mut self.body {
            Body::Frame(f) => f.refresh_if_stale(force),
            Body::Plain(_) => Ok(false),
        }
    }

    /// Whether [`SChunk::refresh_frame`] (without `force`) would re-read: the frame's storage
    /// records another `frame_len`. Takes `&self`, so readers sharing the super-chunk can check
    /// before deciding to take it exclusively for the re-read.
    #[doc(hidden)]
    pub fn frame_is_stale(&self) -> bool {
        match &self.body {
            Body::Frame(f) => f.is_stale(),
            Body::Plain(_) => false,
        }
    }

    /// Re-reads the frame from disk when its length on disk differs from the cached one
    /// (another writer grew or shrank it). Returns whether anything was re-read.
    pub fn refresh(&mut self) -> Result<bool> {
        let cached = match &self.body {
            Body::Frame(f) => f.header().frame_len,
            Body::Plain(_) => return Ok(false),
        };
        let (path, offset) = match &self.location {
            Location::File { path, offset } => (path.clone(), *offset),
            Location::Sparse(dir) => (dir.join("chunks.b2frame"), 0),
            _ => return Ok(false),
        };
        let on_disk = disk_frame_len(&path, offset)?;
        if on_disk == cached {
            return Ok(false);
        }
        let f = match &self.location {
            Location::Sparse(dir) => Frame::open_sframe(dir)?,
            _ => Frame::open_file_at(&path, offset)?,
        };
        self.body = Body::Frame(f);
        Ok(true)
    }
}

impl SChunk {
    /// Reopens a cframe file that was replaced on disk (another file renamed over its path)
    /// since it was opened, as c-blosc2 revalidates its cached read handle. Returns whether it
    /// reopened.
    #[doc(hidden)]
    pub fn reopen_if_replaced(&mut self) -> Result<bool> {
        if !self.is_replaced() {
            return Ok(false);
        }
        let Location::File { path, offset } = &self.location else {
            return Ok(false);
        };
        let f = Frame::open_file_at(path, *offset)?;
        self.body = Body::Frame(f);
        Ok(true)
    }

    /// Whether [`SChunk::reopen_if_replaced`] would reopen: the cframe file's path now names
    /// another file than the one the handle reads. `&self`, for readers sharing the super-chunk.
    #[doc(hidden)]
    pub fn is_replaced(&self) -> bool {
        let Location::File { path, .. } = &self.location else {
            return false;
        };
        let Body::Frame(f) = &self.body else {
            return false;
        };
        let crate::frame::Backing::Contiguous(store) = f.backing() else {
            return false;
        };
        // The open file's identity was taken when it was opened: one `stat` of the path.
        let (Some(open), Ok(now)) = (store.file_ident(), crate::sys::path_file_id(path)) else {
            return false;
        };
        open != now
    }
}

/// The `frame_len` field of the frame header at `offset` in `path`.
fn disk_frame_len(path: &Path, offset: u64) -> Result<u64> {
    let file = std::fs::File::open(path).map_err(|_| Error::FileOpen)?;
    let mut fixed = [0u8; crate::frame::header::HEADER_MINLEN];
    crate::sys::read_exact_at(&file, &mut fixed, offset).map_err(|_| Error::FileRead)?;
    Ok(crate::frame::header::peek_lengths(&fixed)?.1)
}
