//! How a super-chunk compresses and decompresses its chunks when the caller brings the engine:
//! a [`ChunkDecoder`] for reads, a [`ChunkCodec`] (a decoder that also compresses) for writes,
//! and [`Engines`], a [`Compressor`] and a [`Decompressor`] without caller hooks. The
//! super-chunk's own reads need none of these: they check a decoder out of its pool
//! ([`super::decoders`]). The C facade implements these traits over its `blosc2_context`s.

use crate::chunk::lazy::LazySource;
use crate::chunk::{no_hooks, CParams, Compressor, DParams, Decompressor, SchunkEnv};
use crate::error::{Error, Result};
use crate::frame::chunkinfo::ChunkInfo;

/// How chunks are decompressed by a caller-supplied engine (the C layer plugs in its contexts,
/// which carry user codecs and postfilters).
pub trait ChunkDecoder {
    /// Decompresses `chunk` into `dst`; returns the bytes written.
    fn decompress(&mut self, chunk: &[u8], dst: &mut [u8]) -> Result<usize>;
    /// Decompresses `chunk` into a new vector of its nbytes. The default zeroes the vector
    /// first; the built-in decoder writes it without ([`Decompressor::decompress_to_vec`]).
    fn decompress_to_vec(&mut self, chunk: &[u8]) -> Result<Vec<u8>> {
        let info = ChunkInfo::parse(chunk)?;
        let n = usize::try_from(info.nbytes).map_err(|_| Error::Data)?;
        let mut v = crate::sys::try_zeroed(n).ok_or(Error::MemoryAlloc)?;
        let got = self.decompress(chunk, &mut v)?;
        v.truncate(got);
        Ok(v)
    }
    /// Called with the chunk number before each chunk of the super-chunk is decompressed (what
    /// c-blosc2 stores in `schunk->current_nchunk` for postfilters).
    fn enter_chunk(&mut self, _nchunk: i64) {}
    /// Decodes `nbytes` bytes from byte `start` of `chunk` into `dst`, decoding only the blocks
    /// that hold them (`blosc2_getitem_bytes_ctx`); returns the bytes written. The default
    /// decodes the whole chunk.
    fn getitem_bytes(
        &mut self,
        chunk: &[u8],
        start: usize,
        nbytes: usize,
        dst: &mut [u8],
    ) -> Result<usize> {
        let info = ChunkInfo::parse(chunk)?;
        let mut all = vec![0u8; usize::try_from(info.nbytes).map_err(|_| Error::Data)?];
        let n = self.decompress(chunk, &mut all)?;
        let part = start
            .checked_add(nbytes)
            .and_then(|e| all[..n].get(start..e))
            .ok_or(Error::InvalidParam)?;
        dst.get_mut(..nbytes)
            .ok_or(Error::WriteBuffer)?
            .copy_from_slice(part);
        Ok(nbytes)
    }

    /// [`ChunkDecoder::decompress`] of a lazy chunk (see
    /// [`SChunk::lazy_chunk`](super::SChunk::lazy_chunk)) whose blocks are read through
    /// `source`. Codecs that cannot read lazy chunks fail (`InvalidParam`).
    fn decompress_lazy(
        &mut self,
        _chunk: &[u8],
        _dst: &mut [u8],
        _source: &dyn LazySource,
    ) -> Result<usize> {
        Err(Error::InvalidParam)
    }
    /// `blosc2_getitem_bytes_ctx` of `dst.len()` bytes from byte `start` of a chunk (lazy or
    /// not) whose blocks are read through `source`: only the blocks holding the bytes are read.
    fn getitem_bytes_lazy(
        &mut self,
        _chunk: &[u8],
        _start: i32,
        _dst: &mut [u8],
        _source: &dyn LazySource,
    ) -> Result<usize> {
        Err(Error::InvalidParam)
    }
}

/// A [`ChunkDecoder`] that also compresses chunks (mutations that recompress: appends, slice
/// updates).
pub trait ChunkCodec: ChunkDecoder {
    /// Compresses `src` into a complete chunk.
    fn compress(&mut self, src: &[u8]) -> Result<Vec<u8>>;
}

impl ChunkDecoder for Decompressor {
    fn decompress(&mut self, chunk: &[u8], dst: &mut [u8]) -> Result<usize> {
        Decompressor::decompress(self, chunk, dst)
    }

    fn decompress_to_vec(&mut self, chunk: &[u8]) -> Result<Vec<u8>> {
        Decompressor::decompress_to_vec(self, chunk)
    }

    fn getitem_bytes(
        &mut self,
        chunk: &[u8],
        start: usize,
        nbytes: usize,
        dst: &mut [u8],
    ) -> Result<usize> {
        let start = i32::try_from(start).map_err(|_| Error::InvalidParam)?;
        let nbytes = i32::try_from(nbytes).map_err(|_| Error::InvalidParam)?;
        Decompressor::getitem_bytes(self, chunk, start, nbytes, dst)
    }

    fn decompress_lazy(
        &mut self,
        chunk: &[u8],
        dst: &mut [u8],
        source: &dyn LazySource,
    ) -> Result<usize> {
        self.with_source(source).decompress(chunk, dst)
    }

    fn getitem_bytes_lazy(
        &mut self,
        chunk: &[u8],
        start: i32,
        dst: &mut [u8],
        source: &dyn LazySource,
    ) -> Result<usize> {
        let n = i32::try_from(dst.len()).map_err(|_| Error::InvalidParam)?;
        self.with_source(source).getitem_bytes(chunk, start, n, dst)
    }
}

/// A [`Compressor`] and a [`Decompressor`] without caller hooks (only the plugin codecs and
/// filters), for callers that hand a super-chunk an engine of their own.
#[derive(Debug)]
pub struct Engines {
    compressor: Compressor,
    decompressor: Decompressor,
}

impl Engines {
    /// Engines for these parameters, outside any super-chunk.
    pub fn new(cparams: &CParams, dparams: &DParams) -> Result<Engines> {
        let mut cp = *cparams;
        cp.nthreads = cp.nthreads.max(1);
        let dp = DParams {
            nthreads: dparams.nthreads.max(1),
        };
        Ok(Engines {
            compressor: Compressor::new(cp, no_hooks())?,
            decompressor: Decompressor::new(dp, no_hooks())?,
        })
    }

    /// Engines for a super-chunk described by `env` (typesize and `b2nd` metalayer, which the
    /// plugin codecs and filters read).
    pub fn with_env(cparams: &CParams, dparams: &DParams, env: SchunkEnv) -> Result<Engines> {
        let mut cp = *cparams;
        cp.nthreads = cp.nthreads.max(1);
        let dp = DParams {
            nthreads: dparams.nthreads.max(1),
        };
        let hooks = crate::chunk::plugins::env_hooks(env);
        Ok(Engines {
            compressor: Compressor::new(cp, hooks.clone())?,
            decompressor: Decompressor::new(dp, hooks)?,
        })
    }
}

impl ChunkCodec for Engines {
    fn compress(&mut self, src: &[u8]) -> Result<Vec<u8>> {
        compress_chunk(&mut self.compressor, src)
    }
}

/// Compresses `src` into a complete chunk with `c` (`WriteBuffer` if it cannot fit, which a
/// chunk with room for its overhead always does).
pub(super) fn compress_chunk(c: &mut Compressor, src: &[u8]) -> Result<Vec<u8>> {
    let room = src.len() + crate::chunk::header::EXTENDED_HEADER_LEN;
    let dst = c.compress_to_vec(src, room)?;
    if dst.is_empty() {
        return Err(Error::WriteBuffer);
    }
    Ok(dst)
}

impl ChunkDecoder for Engines {
    fn decompress(&mut self, chunk: &[u8], dst: &mut [u8]) -> Result<usize> {
        ChunkDecoder::decompress(&mut self.decompressor, chunk, dst)
    }

    fn decompress_to_vec(&mut self, chunk: &[u8]) -> Result<Vec<u8>> {
        self.decompressor.decompress_to_vec(chunk)
    }

    fn getitem_bytes(
        &mut self,
        chunk: &[u8],
        start: usize,
        nbytes: usize,
        dst: &mut [u8],
    ) -> Result<usize> {
        ChunkDecoder::getitem_bytes(&mut self.decompressor, chunk, start, nbytes, dst)
    }

    fn decompress_lazy(
        &mut self,
        chunk: &[u8],
        dst: &mut [u8],
        source: &dyn LazySource,
    ) -> Result<usize> {
        self.decompressor.decompress_lazy(chunk, dst, source)
    }

    fn getitem_bytes_lazy(
        &mut self,
        chunk: &[u8],
        start: i32,
        dst: &mut [u8],
        source: &dyn LazySource,
    ) -> Result<usize> {
        self.decompressor
            .getitem_bytes_lazy(chunk, start, dst, source)
    }
}
