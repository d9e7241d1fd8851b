//! Plain (frame-less) storage: chunks in a `Vec`, counters kept by hand. Every operation checks
//! everything before it touches the state, so a failure changes nothing.

use super::index;
use crate::error::{Error, Result};
use crate::frame::build::next_chunksize;
use crate::frame::chunkinfo::ChunkInfo;
use std::borrow::Cow;

/// Chunks and metadata of a plain super-chunk.
#[derive(Debug, Default)]
pub(super) struct Plain {
    pub chunks: Vec<Vec<u8>>,
    pub nbytes: i64,
    pub cbytes: i64,
    pub chunksize: i32,
    pub vl: bool,
    pub metalayers: Vec<(String, Vec<u8>)>,
    /// Names and compressed contents.
    pub vlmeta: Vec<(String, Vec<u8>)>,
}

impl Plain {
    pub fn new() -> Plain {
        Plain {
            chunksize: -1,
            ..Plain::default()
        }
    }

    /// Checks an incoming chunk; returns its header and the exact chunk bytes.
    fn incoming<'a>(&self, chunk: &'a [u8], replacing_only: bool) -> Result<(ChunkInfo, &'a [u8])> {
        let info = ChunkInfo::parse(chunk)?;
        // A chunk of 0 bytes, or shorter than 32 bytes, is taken, as c-blosc2 takes it (a
        // 16-byte Blosc1 memcpyed chunk, its test_schunk_min_header_chunk). A frame cannot hold
        // one ([`ChunkInfo::frame_storable`]), so serialising such a super-chunk into a frame
        // fails before anything is written ([`SChunk::check_frame_storable`](super::SChunk)).
        if info.cbytes as usize > chunk.len() {
            return Err(Error::InvalidParam);
        }
        if !self.chunks.is_empty() && !replacing_only && info.vl_blocks != self.vl {
            return Err(Error::InvalidParam);
        }
        Ok((info, &chunk[..info.cbytes as usize]))
    }

    pub fn insert(&mut self, i: i64, chunk: &[u8]) -> Result<i64> {
        self.insert_owned(i, Cow::Borrowed(chunk))
    }

    /// [`Plain::insert`] of a chunk that may be handed over (then kept without a copy).
    pub fn insert_owned(&mut self, i: i64, chunk: Cow<'_, [u8]>) -> Result<i64> {
        let at = usize::try_from(i)
            .ok()
            .filter(|&i| i <= self.chunks.len())
            .ok_or(Error::InvalidParam)?;
        let (info, c) = self.incoming(&chunk, false)?;
        let len = c.len();
        let cs = next_chunksize(
            self.chunksize,
            self.chunks.len(),
            self.nbytes,
            at,
            false,
            info.nbytes,
        );
        if self.chunks.is_empty() {
            self.vl = info.vl_blocks;
        }
        self.chunksize = cs;
        let mut c = chunk.into_owned();
        c.truncate(len);
        // A compressor's output buffer has room for the worst case: keep only the chunk (in
        // place, as c-blosc2's realloc does).
        c.shrink_to_fit();
        self.chunks.insert(at, c);
        self.nbytes += i64::from(info.nbytes);
        self.cbytes += len as i64;
        Ok(self.chunks.len() as i64)
    }

    pub fn update(&mut self, i: i64, chunk: &[u8]) -> Result<i64> {
        let at = index(i, self.chunks.len())?;
        let (info, c) = self.incoming(chunk, self.chunks.len() == 1)?;
        let old = ChunkInfo::parse(&self.chunks[at])?;
        let cs = next_chunksize(
            self.chunksize,
            self.chunks.len(),
            self.nbytes,
            at,
            true,
            info.nbytes,
        );
        if self.chunks.len() == 1 {
            self.vl = info.vl_blocks;
        }
        self.chunksize = cs;
        self.nbytes += i64::from(info.nbytes) - i64::from(old.nbytes);
        self.cbytes += c.len() as i64 - self.chunks[at].len() as i64;
        self.chunks[at] = c.to_vec();
        Ok(self.chunks.len() as i64)
    }

    pub fn delete(&mut self, i: i64) -> Result<i64> {
        let at = index(i, self.chunks.len())?;
        let old = ChunkInfo::parse(&self.chunks[at])?;
        let c = self.chunks.remove(at);
        self.nbytes -= i64::from(old.nbytes);
        self.cbytes -= c.len() as i64;
        Ok(self.chunks.len() as i64)
    }

    /// `order` is a checked permutation.
    pub fn reorder(&mut self, order: &[i64]) {
        let n = self.chunks.len();
        let cs = i64::from(self.chunksize);
        if cs > 0 && n > 0 && self.nbytes % cs != 0 && order[n - 1] as usize != n - 1 {
            self.chunksize = 0;
        }
        let mut old: Vec<Option<Vec<u8>>> = self.chunks.drain(..).map(Some).collect();
        self.chunks = order
            .iter()
            .map(|&o| old[o as usize].take().unwrap_or_default())
            .collect();
    }
}
