//! Item slices across chunks: `get_slice_buffer`, `set_slice_buffer`, `get_sparse_buffer` and
//! the chunk list of a slice (`blosc2_get_slice_nchunks`). Items are `typesize` bytes; chunk
//! boundaries come from the chunksize when it is fixed, else from each chunk's nbytes.

use super::codec::compress_chunk;
use super::{ChunkCodec, ChunkDecoder, SChunk};
use crate::b2nd_meta;
use crate::chunk::{Compressor, Decompressor};
use crate::error::{Error, Result};

/// Chunk indices holding items `start..stop` of a 1-D super-chunk with `chunk_items` items per
/// chunk.
#[doc(hidden)]
pub fn slice_nchunks_1d(start: i64, stop: i64, chunk_items: i64) -> Result<Vec<i64>> {
    if start < 0 || stop < start || chunk_items <= 0 {
        return Err(Error::InvalidParam);
    }
    let first = start / chunk_items;
    let mut last = stop / chunk_items;
    if stop % chunk_items != 0 {
        last += 1;
    }
    Ok((first..last).collect())
}

impl SChunk {
    /// Byte ranges `(chunk, start in chunk, len, dst offset)` covering bytes `from..to`.
    fn chunk_spans(&self, from: i64, to: i64) -> Result<Vec<(i64, usize, usize, usize)>> {
        let c = self.counters();
        let mut spans = Vec::new();
        let mut pos = from;
        if c.chunksize > 0 {
            let cs = i64::from(c.chunksize);
            while pos < to {
                let k = pos / cs;
                let off = pos - k * cs;
                let len = (cs - off).min(to - pos);
                spans.push((k, off as usize, len as usize, (pos - from) as usize));
                pos += len;
            }
            return Ok(spans);
        }
        let mut chunk_start = 0i64;
        for k in 0..c.nchunks {
            if pos >= to {
                break;
            }
            let nb = i64::from(self.chunk_nbytes(k)?);
            let end = chunk_start + nb;
            if pos < end {
                let off = pos - chunk_start;
                let len = (end - pos).min(to - pos);
                spans.push((k, off as usize, len as usize, (pos - from) as usize));
                pos += len;
            }
            chunk_start = end;
        }
        if pos < to {
            return Err(Error::InvalidParam);
        }
        Ok(spans)
    }

    /// Checks an item range and returns it in bytes.
    fn byte_range(&self, start: i64, stop: i64) -> Result<(i64, i64)> {
        let ts = i64::from(self.cparams.typesize);
        let nitems = self.counters().nbytes / ts;
        if start < 0 || stop < start || stop > nitems {
            return Err(Error::InvalidParam);
        }
        Ok((start * ts, stop * ts))
    }

    /// Decompresses items `start..stop` into `dst` (at least `(stop - start) * typesize`).
    #[doc(hidden)]
    pub fn get_slice_with(
        &self,
        codec: &mut dyn ChunkDecoder,
        start: i64,
        stop: i64,
        dst: &mut [u8],
    ) -> Result<()> {
        let (from, to) = self.byte_range(start, stop)?;
        if dst.len() < (to - from) as usize {
            return Err(Error::WriteBuffer);
        }
        // One buffer for the decoded partial chunks, one for the chunks read from files.
        let (mut tmp, mut read) = (Vec::new(), Vec::new());
        for (k, off, len, at) in self.chunk_spans(from, to)? {
            let nb = self.checked_span_nbytes(k, off, len)?;
            if off == 0 && len == nb {
                self.decompress_chunk_in(codec, k, &mut dst[at..at + len], &mut read)?;
            } else if let (Some(source), Some(lazy)) = (self.lazy_source(), self.lazy_chunk(k)?) {
                // Part of a chunk on storage: like c-blosc2, a getitem of the bytes on its lazy
                // chunk, which reads only the blocks holding them.
                let start = i32::try_from(off).map_err(|_| Error::InvalidParam)?;
                codec.enter_chunk(k);
                if codec.getitem_bytes_lazy(&lazy, start, &mut dst[at..at + len], source)? != len {
                    return Err(Error::Failure);
                }
            } else {
                if tmp.len() < nb {
                    tmp = crate::sys::try_zeroed(nb).ok_or(Error::MemoryAlloc)?;
                }
                self.decompress_chunk_in(codec, k, &mut tmp[..nb], &mut read)?;
                dst[at..at + len].copy_from_slice(&tmp[off..off + len]);
            }
        }
        Ok(())
    }

    /// Chunk `k`'s nbytes, which must hold the span `off..off + len` the slice layout gives it
    /// and, in a frame of fixed chunksize, be at most that chunksize: a hostile frame's chunk
    /// may claim anything (`Data`), and its claim sizes the buffers that decode it.
    #[doc(hidden)]
    pub fn checked_span_nbytes(&self, k: i64, off: usize, len: usize) -> Result<usize> {
        let nb = self.chunk_nbytes(k)?.max(0) as usize;
        let cs = self.counters().chunksize;
        if off + len > nb || (cs > 0 && nb > cs as usize) {
            return Err(Error::Data);
        }
        Ok(nb)
    }

    /// [`SChunk::get_slice_with`] with a decoder of the super-chunk's own.
    ///
    /// ```
    /// # use blosc2_frame::{CParams, DParams};
    /// # use blosc2_frame::{SChunk, Storage};
    /// let cparams = CParams::default().typesize(1);
    /// let mut sc = SChunk::create(Storage::memory_frame(), &cparams)?;
    /// sc.append_buffer(&[1u8; 100])?;
    /// sc.append_buffer(&[2u8; 100])?;
    /// let mut out = [0u8; 20];
    /// sc.get_slice(90, 110, &mut out)?;
    /// assert_eq!(out[..10], [1; 10]);
    /// assert_eq!(out[10..], [2; 10]);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn get_slice(&self, start: i64, stop: i64, dst: &mut [u8]) -> Result<()> {
        self.decoders.with(
            &self.dparams,
            || self.plugin_env(),
            |p| self.get_slice_with(&mut p.decoder, start, stop, dst),
        )
    }

    /// [`SChunk::get_sparse_with`] with a decoder of the super-chunk's own.
    pub fn get_sparse(&self, coords: &[i64], dst: &mut [u8]) -> Result<()> {
        self.decoders.with(
            &self.dparams,
            || self.plugin_env(),
            |p| self.get_sparse_with(&mut p.decoder, coords, dst),
        )
    }

    /// Overwrites items `start..stop` with `src`: every touched chunk is decompressed, patched,
    /// recompressed with `codec` and updated. (Chunks already updated stay so if a later one
    /// fails.)
    #[doc(hidden)]
    pub fn set_slice_with(
        &mut self,
        codec: &mut dyn ChunkCodec,
        start: i64,
        stop: i64,
        src: &[u8],
    ) -> Result<()> {
        for (k, off, len, at) in self.set_slice_spans(start, stop, src.len())? {
            let nb = self.checked_span_nbytes(k, off, len)?;
            let mut buf = crate::sys::try_zeroed(nb).ok_or(Error::MemoryAlloc)?;
            if !(off == 0 && len == nb) {
                self.decompress_chunk_with(codec, k, &mut buf)?;
            }
            buf[off..off + len].copy_from_slice(&src[at..at + len]);
            let c = codec.compress(&buf)?;
            self.update_chunk(k, &c)?;
        }
        Ok(())
    }

    /// What [`SChunk::set_slice_with`] rewrites for items `start..stop` from a source of
    /// `src_len` bytes: `(chunk, start in chunk, len, source offset)` per touched chunk (for
    /// callers that decode, compress and commit each chunk in separate steps).
    #[doc(hidden)]
    pub fn set_slice_spans(
        &self,
        start: i64,
        stop: i64,
        src_len: usize,
    ) -> Result<Vec<(i64, usize, usize, usize)>> {
        let (from, to) = self.byte_range(start, stop)?;
        if src_len < (to - from) as usize {
            return Err(Error::ReadBuffer);
        }
        self.chunk_spans(from, to)
    }

    /// [`SChunk::set_slice_with`] with the super-chunk's own compressor and decoders.
    pub fn set_slice(&mut self, start: i64, stop: i64, src: &[u8]) -> Result<()> {
        let mut p = self.decoders.take(&self.dparams, || self.plugin_env())?;
        let r = self.with_encoder(|s, c| {
            let mut own = Own {
                c,
                d: &mut p.decoder,
            };
            s.set_slice_with(&mut own, start, stop, src)
        });
        self.decoders.give_back(p);
        r
    }

    /// Gathers the items at `coords` into `dst`, in order. Needs a fixed chunksize and regular
    /// (non-VL) chunks.
    #[doc(hidden)]
    pub fn get_sparse_with(
        &self,
        codec: &mut dyn ChunkDecoder,
        coords: &[i64],
        dst: &mut [u8],
    ) -> Result<()> {
        let c = self.counters();
        if c.chunksize <= 0 || c.vl_blocks {
            return Err(Error::InvalidParam);
        }
        let ts = self.cparams.typesize as usize;
        if dst.len() < coords.len() * ts {
            return Err(Error::WriteBuffer);
        }
        let nitems = c.nbytes / ts as i64;
        let cs = i64::from(c.chunksize);
        let mut cached: Option<(i64, Vec<u8>)> = None;
        let mut read = Vec::new();
        for (j, &item) in coords.iter().enumerate() {
            if item < 0 || item >= nitems {
                return Err(Error::InvalidParam);
            }
            let byte = item * ts as i64;
            let k = byte / cs;
            if cached.as_ref().map(|(ck, _)| *ck) != Some(k) {
                let nb = self.chunk_nbytes(k)?.max(0);
                if nb > c.chunksize {
                    return Err(Error::Data);
                }
                let mut buf = crate::sys::try_zeroed(nb as usize).ok_or(Error::MemoryAlloc)?;
                self.decompress_chunk_in(codec, k, &mut buf, &mut read)?;
                cached = Some((k, buf));
            }
            let (_, buf) = cached.as_ref().ok_or(Error::Failure)?;
            let off = (byte - k * cs) as usize;
            // A hostile frame can hold a chunk shorter than the frame's chunksize before its
            // last one: the item is then not in it.
            let item = buf.get(off..off + ts).ok_or(Error::Data)?;
            dst[j * ts..(j + 1) * ts].copy_from_slice(item);
        }
        Ok(())
    }

    /// Chunks touched by the slice `start..stop` (one entry per dimension): for a b2nd array the
    /// chunk grid of its metalayer (row-major chunk numbers), else 1-D item ranges.
    #[doc(hidden)]
    pub fn slice_nchunks(&self, start: &[i64], stop: &[i64]) -> Result<Vec<i64>> {
        let meta = self
            .metalayers()
            .iter()
            .find(|(n, _)| n == "b2nd" || n == "caterva");
        let Some((_, content)) = meta else {
            let c = self.counters();
            let ts = i64::from(self.cparams.typesize);
            let (s, e) = (
                *start.first().ok_or(Error::InvalidParam)?,
                *stop.first().ok_or(Error::InvalidParam)?,
            );
            if c.nchunks == 0 {
                // Nothing stored: c-blosc2 answers 0 chunks whatever the range.
                return if s < 0 || e < s {
                    Err(Error::InvalidParam)
                } else {
                    Ok(Vec::new())
                };
            }
            return slice_nchunks_1d(s, e, i64::from(c.chunksize) / ts);
        };
        let (m, _) = b2nd_meta::deserialize(content, false)?;
        let nd = m.ndim();
        if start.len() < nd || stop.len() < nd {
            return Err(Error::InvalidParam);
        }
        let mut ranges = Vec::with_capacity(nd);
        let mut grid = Vec::with_capacity(nd);
        for d in 0..nd {
            let cs = i64::from(m.chunkshape[d]);
            let (s, e) = (start[d], stop[d]);
            if cs <= 0 || s < 0 || e < s || e > m.shape[d] {
                return Err(Error::InvalidParam);
            }
            grid.push((m.shape[d] + cs - 1) / cs);
            // c-blosc2's rule: chunks start / cs up to ceil(stop / cs), so an empty range that
            // does not start on a chunk boundary still names that chunk.
            ranges.push((s / cs, (e + cs - 1) / cs));
        }
        let mut out = Vec::new();
        if ranges.iter().any(|(a, b)| a >= b) {
            return Ok(out);
        }
        let mut idx: Vec<i64> = ranges.iter().map(|r| r.0).collect();
        loop {
            let mut lin = 0i64;
            for d in 0..nd {
                lin = lin * grid[d] + idx[d];
            }
            out.push(lin);
            let mut d = nd;
            loop {
                if d == 0 {
                    return Ok(out);
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < ranges[d].1 {
                    break;
                }
                idx[d] = ranges[d].0;
            }
        }
    }
}

/// The super-chunk's own compressor and one of its decoders, as one [`ChunkCodec`].
struct Own<'a> {
    c: &'a mut Compressor,
    d: &'a mut Decompressor,
}

impl ChunkDecoder for Own<'_> {
    fn decompress(&mut self, chunk: &[u8], dst: &mut [u8]) -> Result<usize> {
        ChunkDecoder::decompress(self.d, chunk, dst)
    }
}

impl ChunkCodec for Own<'_> {
    fn compress(&mut self, src: &[u8]) -> Result<Vec<u8>> {
        compress_chunk(self.c, src)
    }
}
