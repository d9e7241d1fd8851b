//! Reading a super-chunk: chunks as stored, lazy chunks, whole and masked decompression, item
//! ranges and single blocks. Every read takes `&self`, so any number of threads may read one
//! [`SChunk`] at once (it is `Send + Sync`): the reads without a decoder argument check one
//! out of the super-chunk's pool ([`super::decoders`]) for the call; the `_with`/`_in` forms
//! take the caller's [`ChunkDecoder`] (the C facade's contexts, with their user codecs and
//! postfilters) and read buffer.

use super::decoders::Pooled;
use super::{index, index_err, Body, ChunkDecoder, Location, SChunk};
use crate::chunk::lazy::LazySource;
use crate::error::{Error, Result};
use crate::frame::cframe::Fetched;
use crate::frame::chunkinfo::ChunkInfo;
use std::borrow::Cow;
use std::ops::Range;

impl SChunk {
    /// Runs `f` with a decoder of the super-chunk's own and its read buffer.
    fn with_decoder<T>(&self, f: impl FnOnce(&mut Pooled) -> Result<T>) -> Result<T> {
        self.decoders.with(&self.dparams, || self.plugin_env(), f)
    }

    /// Chunk `i` decompressed into a new vector.
    ///
    /// ```
    /// use blosc2_frame::{CParams, DParams};
    /// use blosc2_frame::{SChunk, Storage};
    ///
    /// let cparams = CParams::default().typesize(4);
    /// let mut sc = SChunk::create(Storage::memory_frame(), &cparams)?;
    /// let data: Vec<u8> = (0..4000u32).flat_map(|v| v.to_le_bytes()).collect();
    /// sc.append_buffer(&data)?;
    /// assert_eq!(sc.decompress_chunk(0)?, data);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn decompress_chunk(&self, i: i64) -> Result<Vec<u8>> {
        self.with_decoder(|p| {
            let c = self.chunk_in(i, &mut p.buf)?;
            p.decoder.enter_chunk(i);
            p.decoder.decompress_to_vec(c)
        })
    }

    /// Decompresses chunk `i` into `dst`; returns its nbytes. A `dst` shorter than the chunk's
    /// nbytes is `InvalidParam` (plain) / `WriteBuffer` (frame), as in c-blosc2.
    ///
    /// ```
    /// # use blosc2_frame::{CParams, DParams};
    /// # use blosc2_frame::{SChunk, Storage};
    /// let mut sc = SChunk::create(Storage::memory(), &CParams::default())?;
    /// sc.append_buffer(&[7u8; 1000])?;
    /// let mut out = [0u8; 1000];
    /// assert_eq!(sc.decompress_chunk_into(0, &mut out)?, 1000);
    /// assert!(out.iter().all(|&b| b == 7));
    /// assert!(sc.decompress_chunk_into(0, &mut out[..10]).is_err());
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn decompress_chunk_into(&self, i: i64, dst: &mut [u8]) -> Result<usize> {
        self.with_decoder(|p| self.decompress_chunk_in(&mut p.decoder, i, dst, &mut p.buf))
    }

    /// [`SChunk::decompress_chunk_into`] skipping the blocks `mask` marks (`true`): their part of
    /// `dst` is left as it is. The mask belongs to this call alone (`blosc2_set_maskout` and a
    /// decompression, without a context shared between callers); its length must be the
    /// chunk's number of blocks (else `Data`).
    ///
    /// ```
    /// # use blosc2_frame::{CParams, DParams};
    /// # use blosc2_frame::{SChunk, Storage};
    /// let cparams = CParams { blocksize: 256, ..CParams::default() };
    /// let mut sc = SChunk::create(Storage::memory_frame(), &cparams)?;
    /// sc.append_buffer(&[1u8; 1024])?; // 4 blocks of 256 bytes
    /// let mut out = [0u8; 1024];
    /// sc.decompress_chunk_masked_into(0, &[false, true, true, false], &mut out)?;
    /// assert!(out[..256].iter().all(|&b| b == 1));
    /// assert!(out[256..768].iter().all(|&b| b == 0));
    /// assert!(out[768..].iter().all(|&b| b == 1));
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    #[doc(hidden)]
    pub fn decompress_chunk_masked_into(
        &self,
        i: i64,
        mask: &[bool],
        dst: &mut [u8],
    ) -> Result<usize> {
        let mut p = self.decoders.take(&self.dparams, || self.plugin_env())?;
        p.decoder.set_maskout(mask);
        let r = self.decompress_chunk_in(&mut p.decoder, i, dst, &mut p.buf);
        // A failure before the decode leaves the mask on the decoder: drop it then.
        if r.is_ok() {
            self.decoders.give_back(p);
        }
        r
    }

    /// Items `items` (in units of the super-chunk's typesize) of chunk `i`, decoding only the
    /// blocks that hold them (`blosc2_getitem_ctx`); on storage only those blocks are read.
    ///
    /// ```
    /// # use blosc2_frame::{CParams, DParams};
    /// # use blosc2_frame::{SChunk, Storage};
    /// let cparams = CParams::default().typesize(4);
    /// let mut sc = SChunk::create(Storage::memory(), &cparams)?;
    /// let data: Vec<u8> = (0..1000u32).flat_map(|v| v.to_le_bytes()).collect();
    /// sc.append_buffer(&data)?;
    /// assert_eq!(sc.getitem(0, 10..12)?, [10, 0, 0, 0, 11, 0, 0, 0]);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn getitem(&self, i: i64, items: Range<usize>) -> Result<Vec<u8>> {
        let ts = usize::try_from(self.cparams.typesize).map_err(|_| Error::InvalidParam)?;
        let (start, end) = (items.start.checked_mul(ts), items.end.checked_mul(ts));
        let (start, end) = start.zip(end).ok_or(Error::InvalidParam)?;
        let mut v = vec![0u8; end.checked_sub(start).ok_or(Error::InvalidParam)?];
        let n = self.getitem_bytes_into(i, start, &mut v)?;
        v.truncate(n);
        Ok(v)
    }

    /// Decodes `dst.len()` bytes from byte `start` of chunk `i` into `dst`
    /// (`blosc2_getitem_bytes_ctx`; both multiples of the chunk's typesize); returns the bytes
    /// written.
    #[doc(hidden)]
    pub fn getitem_bytes_into(&self, i: i64, start: usize, dst: &mut [u8]) -> Result<usize> {
        self.with_decoder(|p| self.getitem_bytes_in(&mut p.decoder, i, start, dst, &mut p.buf))
    }

    /// [`SChunk::getitem_bytes_into`] with the caller's decoder (`buf` as in
    /// [`SChunk::chunk_in`]).
    #[doc(hidden)]
    pub fn getitem_bytes_in(
        &self,
        codec: &mut dyn ChunkDecoder,
        i: i64,
        start: usize,
        dst: &mut [u8],
        buf: &mut Vec<u8>,
    ) -> Result<usize> {
        if let (Some(source), Some(lazy)) = (self.lazy_source(), self.lazy_chunk(i)?) {
            let start = i32::try_from(start).map_err(|_| Error::InvalidParam)?;
            codec.enter_chunk(i);
            return codec.getitem_bytes_lazy(&lazy, start, dst, source);
        }
        let c = self.chunk_in(i, buf)?;
        codec.enter_chunk(i);
        let n = dst.len();
        codec.getitem_bytes(c, start, n, dst)
    }

    /// Decodes the blocks `nblocks` of chunk `i` (`chunk_bytes` long when decompressed, else
    /// `Data`) one at a time into `scratch` (one block's bytes), calling `f(k, block)` after
    /// block `nblocks[k]`: only those blocks are decoded, and on storage only they are read.
    /// The b2nd slice reads.
    ///
    /// ```
    /// # use blosc2_frame::{CParams, DParams};
    /// # use blosc2_frame::{SChunk, Storage};
    /// let cparams = CParams { blocksize: 256, ..CParams::default() };
    /// let mut sc = SChunk::create(Storage::memory_frame(), &cparams)?;
    /// let data: Vec<u8> = (0..1024).map(|i| (i / 256) as u8).collect();
    /// sc.append_buffer(&data)?;
    /// let mut seen = Vec::new();
    /// let mut scratch = [0u8; 256];
    /// sc.decode_blocks(0, 1024, &[3, 1], &mut scratch, &mut |k, block| {
    ///     seen.push((k, block[0]));
    ///     Ok(())
    /// })?;
    /// assert_eq!(seen, [(0, 3), (1, 1)]);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    #[doc(hidden)]
    pub fn decode_blocks(
        &self,
        i: i64,
        chunk_bytes: usize,
        nblocks: &[i64],
        scratch: &mut [u8],
        f: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let n = scratch.len();
        self.with_decoder(|p| {
            self.decode_blocks_in(
                &mut p.decoder,
                i,
                chunk_bytes,
                nblocks,
                n,
                scratch,
                &mut p.buf,
                f,
            )
        })
    }

    /// Chunk `i` as stored (complete chunk; special offsets synthesised as 32-byte chunks).
    /// In-memory storage lends its bytes.
    pub fn chunk(&self, i: i64) -> Result<Cow<'_, [u8]>> {
        match &self.body {
            Body::Plain(p) => Ok(Cow::Borrowed(&p.chunks[index(i, p.chunks.len())?][..])),
            Body::Frame(f) => f.chunk(i).map_err(|e| self.frame_err(e)),
        }
    }

    /// [`SChunk::chunk`] read into `buf` (reused across reads, see
    /// [`crate::frame::io::sized`]) unless the storage lends it.
    #[doc(hidden)]
    pub fn chunk_in<'a>(&'a self, i: i64, buf: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        match self.fetch_chunk(i, buf)? {
            Fetched::Lent(s) => Ok(s),
            Fetched::Read(n) => Ok(&buf[..n]),
        }
    }

    /// [`SChunk::chunk_in`], telling whether the storage lent the chunk (in memory, valid
    /// until the next mutation) or it was read (or synthesised) into `buf`.
    #[doc(hidden)]
    pub fn fetch_chunk<'a>(&'a self, i: i64, buf: &mut Vec<u8>) -> Result<Fetched<'a>> {
        match &self.body {
            Body::Plain(p) => Ok(Fetched::Lent(&p.chunks[index(i, p.chunks.len())?][..])),
            Body::Frame(f) => f.fetch(i, buf).map_err(|e| self.frame_err(e)),
        }
    }

    /// A frame read error as the super-chunk reports it.
    pub(super) fn frame_err(&self, e: Error) -> Error {
        match (e, &self.location) {
            // A chunk file shorter than its header says is a failed read.
            (Error::ReadBuffer, Location::Sparse(_)) => Error::FileRead,
            (e, _) => index_err(e),
        }
    }

    /// Chunk `i` as a lazy chunk (header, block starts and c-blosc2's lazy trailer; see
    /// [`crate::chunk::lazy`]) when the super-chunk is a frame on storage, reading only those
    /// bytes; decode it with a decoder given [`SChunk::lazy_source`] (e.g.
    /// [`crate::chunk::Decompressor::with_source`]): `getitem`, `decompress_block` and masked
    /// decompression then read only the blocks they need. `None` where c-blosc2 returns no lazy
    /// chunk (in memory, special chunks): use [`SChunk::fetch_chunk`].
    #[doc(hidden)]
    pub fn lazy_chunk(&self, i: i64) -> Result<Option<Vec<u8>>> {
        match &self.body {
            Body::Plain(p) => index(i, p.chunks.len()).map(|_| None),
            Body::Frame(f) => f.lazy_chunk(i).map_err(|e| self.frame_err(e)),
        }
    }

    /// What lazy chunks of this super-chunk are read through (its frame on storage).
    #[doc(hidden)]
    pub fn lazy_source(&self) -> Option<&dyn LazySource> {
        match &self.body {
            Body::Frame(f) if f.reads_from_storage() => Some(f),
            _ => None,
        }
    }

    /// Uncompressed size of chunk `i`.
    pub fn chunk_nbytes(&self, i: i64) -> Result<i32> {
        match &self.body {
            Body::Plain(p) => Ok(ChunkInfo::parse(&p.chunks[index(i, p.chunks.len())?])?.nbytes),
            Body::Frame(f) => Ok(f.chunk_info(i).map_err(index_err)?.nbytes),
        }
    }

    /// Decompresses chunk `i` into `dst` with `codec`; returns its nbytes. A too small `dst`
    /// is `InvalidParam` (plain) / `WriteBuffer` (frame), as in c-blosc2.
    #[doc(hidden)]
    pub fn decompress_chunk_with(
        &self,
        codec: &mut dyn ChunkDecoder,
        i: i64,
        dst: &mut [u8],
    ) -> Result<usize> {
        self.decompress_chunk_in(codec, i, dst, &mut Vec::new())
    }

    /// [`SChunk::decompress_chunk_with`] reading the chunk into `buf` (reused across reads,
    /// see [`crate::frame::io::sized`]) when the storage does not lend it.
    #[doc(hidden)]
    pub fn decompress_chunk_in(
        &self,
        codec: &mut dyn ChunkDecoder,
        i: i64,
        dst: &mut [u8],
        buf: &mut Vec<u8>,
    ) -> Result<usize> {
        let c = self.chunk_in(i, buf)?;
        let info = ChunkInfo::parse(c)?;
        if info.nbytes as usize > dst.len() {
            return Err(match self.body {
                Body::Plain(_) => Error::InvalidParam,
                Body::Frame(_) => Error::WriteBuffer,
            });
        }
        codec.enter_chunk(i);
        codec.decompress(c, dst)
    }

    /// Decodes the blocks `nblocks` (each `block_bytes` long) of chunk `i` (`chunk_bytes` when
    /// decompressed, else `Data`) one at a time into
    /// `scratch` (at least `block_bytes`), calling `f(k, block)` after block `nblocks[k]`; only
    /// those blocks are decoded (`buf` as in [`SChunk::chunk_in`]). The b2nd slice reads.
    #[allow(clippy::too_many_arguments)]
    #[doc(hidden)]
    pub fn decode_blocks_in(
        &self,
        codec: &mut dyn ChunkDecoder,
        i: i64,
        chunk_bytes: usize,
        nblocks: &[i64],
        block_bytes: usize,
        scratch: &mut [u8],
        buf: &mut Vec<u8>,
        f: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let scratch = scratch.get_mut(..block_bytes).ok_or(Error::InvalidParam)?;
        // A chunk whose size is not the one the caller expects is `Data`, as when it is
        // decompressed whole into a buffer of that size.
        // (The header's nbytes field, bytes 4..8; a lazy chunk starts with the header too.)
        let check = |c: &[u8]| match c.get(4..8) {
            Some(b)
                if i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64 == chunk_bytes as i64 =>
            {
                Ok(())
            }
            _ => Err(Error::Data),
        };
        let start_of = |nb: i64| {
            usize::try_from(nb)
                .ok()
                .and_then(|b| b.checked_mul(block_bytes))
                .ok_or(Error::InvalidParam)
        };
        // On storage, like c-blosc2: the lazy chunk (header and block offsets), and only the
        // blocks wanted read from the file.
        if let (Some(source), Some(lazy)) = (self.lazy_source(), self.lazy_chunk(i)?) {
            check(&lazy)?;
            codec.enter_chunk(i);
            for (k, &nb) in nblocks.iter().enumerate() {
                let start = i32::try_from(start_of(nb)?).map_err(|_| Error::InvalidParam)?;
                if codec.getitem_bytes_lazy(&lazy, start, scratch, source)? != block_bytes {
                    return Err(Error::Data);
                }
                f(k, scratch)?;
            }
            return Ok(());
        }
        let c = self.chunk_in(i, buf)?;
        check(c)?;
        codec.enter_chunk(i);
        for (k, &nb) in nblocks.iter().enumerate() {
            if codec.getitem_bytes(c, start_of(nb)?, block_bytes, scratch)? != block_bytes {
                return Err(Error::Data);
            }
            f(k, scratch)?;
        }
        Ok(())
    }
}
