//! Copies and serialisation. Every serialised cframe is built the same way, whatever the source
//! storage: one pass over the super-chunk's parameters (thread fields 0, as c-blosc2's copies
//! write them), its metalayers, its chunks in logical order (no dead space) and its
//! vlmetalayers. So `to_cframe` is deterministic: a plain super-chunk and the same data
//! reopened from a file give the same bytes (cblosc2-notes §2.13).

use super::{build, ChunkCodec, Engines, Location, NewStorage, SChunk};
use crate::chunk::{CParams, DParams};
use crate::error::{Error, Result};
use crate::frame::chunkinfo::ChunkInfo;
use crate::frame::Frame;
use std::borrow::Cow;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

/// Whether chunks made with `a` can be stored unchanged under `b` (everything but threads).
fn compatible(a: &CParams, b: &CParams) -> bool {
    let mut a = *a;
    a.nthreads = b.nthreads;
    a == *b
}

/// Turns source chunks into chunks for the destination parameters: unchanged when compatible
/// (and always for special and VL-block chunks), else decompressed and recompressed. The
/// engines are serial: a copy must not start thread pools of its own.
struct Recoder {
    raw: bool,
    src: Engines,
    dst: Engines,
}

impl Recoder {
    fn new(from: &CParams, to: &CParams) -> Result<Recoder> {
        let serial = |c: &CParams| CParams { nthreads: 1, ..*c };
        let one = DParams { nthreads: 1 };
        Ok(Recoder {
            raw: compatible(from, to),
            src: Engines::new(&serial(from), &one)?,
            dst: Engines::new(&serial(to), &one)?,
        })
    }

    fn recode<'a>(&mut self, c: Cow<'a, [u8]>) -> Result<Cow<'a, [u8]>> {
        let info = ChunkInfo::parse(&c)?;
        if self.raw || info.special != 0 || info.vl_blocks {
            return Ok(c);
        }
        let mut buf = vec![0u8; info.nbytes as usize];
        let n = self.src.decompress(&c, &mut buf)?;
        buf.truncate(n);
        Ok(Cow::Owned(self.dst.compress(&buf)?))
    }
}

impl SChunk {
    /// Fails (`InvalidParam`) when a chunk cannot go into a frame
    /// ([`ChunkInfo::frame_storable`]: 0 bytes, or shorter than a 32-byte header): only a
    /// plain super-chunk takes one (as c-blosc2 does; c-blosc2 then writes a frame it cannot
    /// reopen). Every serialisation into a frame checks this first, so nothing is written and
    /// the super-chunk keeps its chunks.
    pub fn check_frame_storable(&self) -> Result<()> {
        if self.frame().is_some() {
            return Ok(());
        }
        for i in 0..self.nchunks() {
            if !ChunkInfo::parse(&self.chunk(i)?)?.frame_storable() {
                return Err(Error::InvalidParam);
            }
        }
        Ok(())
    }

    /// A copy of this super-chunk at `storage`, with `cparams`/`dparams` (default: this one's).
    /// Metalayers first, then chunks (stored unchanged when the parameters are compatible, for
    /// special and VL-block chunks; else decompressed and recompressed), then vlmetalayers.
    /// Contiguous frames are built in one pass (`build::build_cframe`).
    pub fn copy_to(
        &self,
        storage: NewStorage<'_>,
        cparams: Option<CParams>,
        dparams: Option<DParams>,
    ) -> Result<SChunk> {
        let cp = cparams.unwrap_or(self.cparams);
        let dp = dparams.unwrap_or(self.dparams);
        if !matches!(storage, NewStorage::Plain) {
            self.check_frame_storable()?;
        }
        match storage {
            NewStorage::Memory | NewStorage::File(_) => {
                if cp.typesize <= 0 {
                    return Err(Error::InvalidParam);
                }
                let chunks = self.chunks_for(&cp)?;
                let bytes =
                    build::build_cframe(&cp, self.metalayers(), &chunks, self.vlmetalayers())?;
                let (frame, location) = match storage {
                    NewStorage::File(p) => {
                        if p.exists() {
                            return Err(Error::FileOpen);
                        }
                        // Complete or absent after a crash (docs/durability.md).
                        crate::frame::record::publish_file(p, &bytes, true)
                            .map_err(|_| Error::FileWrite)?;
                        let f = Frame::open_file_at(p, 0).inspect_err(|_| {
                            let _ = std::fs::remove_file(p);
                        })?;
                        let loc = Location::File {
                            path: p.to_path_buf(),
                            offset: 0,
                        };
                        (f, loc)
                    }
                    _ => (Frame::from_vec(bytes)?, Location::Memory),
                };
                let mut out = SChunk::from_frame(frame, location, dp.nthreads);
                out.cparams = cp;
                out.dparams = dp;
                Ok(out)
            }
            _ => {
                let mut out = SChunk::new(storage, cp, dp)?;
                let r = self.fill_copy(&mut out);
                if let Err(e) = r {
                    out.remove_files();
                    return Err(e);
                }
                Ok(out)
            }
        }
    }

    /// The chunks of this super-chunk as a copy with `cp` stores them.
    fn chunks_for(&self, cp: &CParams) -> Result<Vec<Cow<'_, [u8]>>> {
        let mut recoder = Recoder::new(&self.cparams, cp)?;
        (0..self.nchunks())
            .map(|i| recoder.recode(self.chunk(i)?))
            .collect()
    }

    /// Fills the empty `out` with this super-chunk's metalayers, chunks and vlmetalayers (also
    /// used by copies into user I/O backends, src/capi/io/copy.rs).
    pub(crate) fn fill_copy(&self, out: &mut SChunk) -> Result<()> {
        if out.frame().is_some() {
            self.check_frame_storable()?;
        }
        for (name, content) in self.metalayers() {
            out.add_metalayer(name, content)?;
        }
        let mut recoder = Recoder::new(&self.cparams, &out.cparams)?;
        for i in 0..self.nchunks() {
            let c = recoder.recode(self.chunk(i)?)?;
            out.append_chunk(&c)?;
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
        self.check_frame_storable()?;
        let cp = self.cparams;
        let chunks = self.chunks_for(&cp)?;
        build::build_cframe(&cp, self.metalayers(), &chunks, self.vlmetalayers())
    }

    /// Writes the cframe of [`SChunk::to_cframe`] to `path` (created or replaced; a crash
    /// leaves the old file or the complete new one); returns its length.
    pub fn to_file(&self, path: &Path) -> Result<i64> {
        let bytes = self.to_cframe()?;
        crate::frame::record::publish_file(path, &bytes, false).map_err(|_| Error::FileWrite)?;
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
        // A crash leaves the earlier content intact and, at `at`, the whole frame or bytes
        // that do not open as one (the call did not return the offset).
        f.write_all(&bytes).map_err(|_| Error::FileWrite)?;
        if crate::frame::record::durable() {
            f.sync_data().map_err(|_| Error::FileWrite)?;
        }
        i64::try_from(at).map_err(|_| Error::FileWrite)
    }
}
