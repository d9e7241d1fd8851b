//! Copies and serialisation. Every serialised cframe is built the same way, whatever the source
//! storage: a fresh in-memory frame with the super-chunk's parameters (thread fields 0, as
//! c-blosc2's copies write them), its metalayers, its chunks in logical order (no dead space),
//! then its vlmetalayers. So `to_cframe` is deterministic: a plain super-chunk and the same data
//! reopened from a file give the same bytes (cblosc2-notes §2.13).

use super::{Body, ChunkCodec, Engines, Location, NewStorage, SChunk};
use crate::chunk::{CParams, DParams};
use crate::error::{Error, Result};
use crate::frame::chunkinfo::ChunkInfo;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

/// Whether chunks made with `a` can be stored unchanged under `b` (everything but threads).
fn compatible(a: &CParams, b: &CParams) -> bool {
    let mut a = *a;
    a.nthreads = b.nthreads;
    a == *b
}

impl SChunk {
    /// A copy of this super-chunk at `storage`, with `cparams`/`dparams` (default: this one's).
    /// Metalayers first, then chunks (stored unchanged when the parameters are compatible, for
    /// special and VL-block chunks; else decompressed and recompressed), then vlmetalayers.
    pub fn copy_to(
        &self,
        storage: NewStorage<'_>,
        cparams: Option<CParams>,
        dparams: Option<DParams>,
    ) -> Result<SChunk> {
        let cp = cparams.unwrap_or(self.cparams);
        let dp = dparams.unwrap_or(self.dparams);
        let mut out = SChunk::new(storage, cp, dp)?;
        let r = self.fill_copy(&mut out);
        if let Err(e) = r {
            out.remove_files();
            return Err(e);
        }
        Ok(out)
    }

    fn fill_copy(&self, out: &mut SChunk) -> Result<()> {
        for (name, content) in self.metalayers() {
            out.add_metalayer(name, content)?;
        }
        let raw = compatible(&self.cparams, &out.cparams);
        // Serial engines: a copy must not start thread pools of its own.
        let serial = |c: &CParams| CParams { nthreads: 1, ..*c };
        let one = DParams { nthreads: 1 };
        let mut src_engines = Engines::new(&serial(&self.cparams), &one)?;
        let mut dst_engines = Engines::new(&serial(&out.cparams), &one)?;
        for i in 0..self.nchunks() {
            let c = self.chunk(i)?;
            let info = ChunkInfo::parse(&c)?;
            if raw || info.special != 0 || info.vl_blocks {
                out.append_chunk(&c)?;
            } else {
                let mut buf = vec![0u8; info.nbytes as usize];
                let n = src_engines.decompress(&c, &mut buf)?;
                buf.truncate(n);
                let nc = dst_engines.compress(&buf)?;
                out.append_chunk(&nc)?;
            }
        }
        for (name, stored) in self.vlmetalayers() {
            out.vlmeta_add_raw(name, stored)?;
        }
        Ok(())
    }

    /// Removes the files of a half-built copy.
    fn remove_files(&self) {
        match &self.location {
            Location::File { path, .. } => {
                let _ = std::fs::remove_file(path);
            }
            Location::Sparse(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            _ => {}
        }
    }

    /// The super-chunk as a compact, deterministic cframe.
    pub fn to_cframe(&self) -> Result<Vec<u8>> {
        let mut cp = self.cparams;
        cp.nthreads = 0;
        let dp = DParams { nthreads: 0 };
        let copy = self.copy_to(NewStorage::Memory, Some(cp), Some(dp))?;
        match &copy.body {
            Body::Frame(f) => f.to_cframe(),
            Body::Plain(_) => Err(Error::Failure),
        }
    }

    /// Writes the cframe of [`SChunk::to_cframe`] to `path` (created or truncated); returns
    /// its length.
    pub fn to_file(&self, path: &Path) -> Result<i64> {
        let bytes = self.to_cframe()?;
        std::fs::write(path, &bytes).map_err(|_| Error::FileWrite)?;
        Ok(bytes.len() as i64)
    }

    /// Appends the cframe of [`SChunk::to_cframe`] at the end of `path` (created if missing);
    /// returns the offset where it starts.
    pub fn append_file(&self, path: &Path) -> Result<i64> {
        let bytes = self.to_cframe()?;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|_| Error::FileOpen)?;
        let at = f.seek(SeekFrom::End(0)).map_err(|_| Error::FileWrite)?;
        f.write_all(&bytes).map_err(|_| Error::FileWrite)?;
        i64::try_from(at).map_err(|_| Error::FileWrite)
    }
}
