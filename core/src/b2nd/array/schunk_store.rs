//! [`SChunkStore`]: a safe super-chunk as a [`ChunkStore`], compressing with its own
//! parameters.

#![forbid(unsafe_code)]

use super::*;

/// A safe super-chunk as a [`ChunkStore`], compressing with its own parameters.
pub struct SChunkStore<'a> {
    sc: &'a mut SChunk,
    codec: Engines,
}

impl<'a> SChunkStore<'a> {
    /// Wraps `sc`.
    pub fn new(sc: &'a mut SChunk) -> Result<SChunkStore<'a>> {
        let codec = Engines::new(sc.cparams(), &DParams { nthreads: 1 })?;
        Ok(SChunkStore { sc, codec })
    }
}

impl ChunkStore for SChunkStore<'_> {
    fn typesize(&self) -> i32 {
        self.sc.cparams().typesize
    }
    fn nchunks(&self) -> i64 {
        self.sc.nchunks()
    }
    fn read_chunk(&mut self, nchunk: i64, dst: &mut [u8]) -> Result<usize> {
        self.sc.decompress_chunk_with(&mut self.codec, nchunk, dst)
    }
    fn read_blocks(
        &mut self,
        nchunk: i64,
        chunk_bytes: usize,
        nblocks: &[i64],
        scratch: &mut [u8],
        f: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<bool> {
        let n = scratch.len();
        let mut buf = Vec::new();
        self.sc
            .decode_blocks_in(
                &mut self.codec,
                nchunk,
                chunk_bytes,
                nblocks,
                n,
                scratch,
                &mut buf,
                f,
            )
            .map_err(|e| match e {
                Error::InvalidParam | Error::ReadBuffer | Error::InvalidHeader => Error::Data,
                e => e,
            })?;
        Ok(true)
    }
    fn write_chunk(&mut self, nchunk: i64, src: &[u8]) -> Result<()> {
        let c = self.codec.compress(src)?;
        self.sc.update_chunk(nchunk, &c).map(|_| ())
    }
    fn insert_zero_chunk(&mut self, nchunk: i64, nbytes: i32) -> Result<()> {
        let mut c = vec![0u8; crate::chunk::header::EXTENDED_HEADER_LEN];
        let n = special::zeros(self.sc.cparams(), nbytes, &mut c)?;
        self.sc.insert_chunk(nchunk, &c[..n]).map(|_| ())
    }
    fn delete_chunk(&mut self, nchunk: i64) -> Result<()> {
        self.sc.delete_chunk(nchunk).map(|_| ())
    }
}
