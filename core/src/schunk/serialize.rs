//! Copies and serialisation, as c-blosc2 3.3.5 does them. An in-memory frame serialises as its
//! own bytes. Every other super-chunk is serialised as a copy into a fresh in-memory frame
//! (c-blosc2's `blosc2_schunk_copy`): one pass over a header template (the parameters of the
//! source's compression context, the thread fields c-blosc2 gives such a copy, and the source's
//! chunksize as the starting chunksize), its metalayers, its chunks in logical order (no dead
//! space) and its vlmetalayers.

use super::build::{stream_cframe, CframePlan, HeaderTemplate};
use super::{Body, ChunkCodec, ChunkDecoder, Engines, Location, NewStorage, SChunk};
use crate::chunk::{CParams, DParams, SchunkEnv};
use crate::error::{Error, Result};
use crate::frame::cframe::Fetched;
use crate::frame::chunkinfo::ChunkInfo;
use crate::frame::record::WriteSeek;
use crate::frame::Frame;
use std::borrow::Cow;
use std::io::{BufWriter, Seek, SeekFrom, Write};
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
    /// The decompressed chunk, reused from chunk to chunk.
    scratch: Vec<u8>,
}

impl Recoder {
    fn new(from: &CParams, to: &CParams, env: &SchunkEnv) -> Result<Recoder> {
        let serial = |c: &CParams| CParams { nthreads: 1, ..*c };
        let one = DParams { nthreads: 1 };
        Ok(Recoder {
            raw: compatible(from, to),
            src: Engines::with_env(&serial(from), &one, env.clone())?,
            dst: Engines::with_env(&serial(to), &one, env.clone())?,
            scratch: Vec::new(),
        })
    }

    fn recode<'a>(&mut self, c: Cow<'a, [u8]>) -> Result<Cow<'a, [u8]>> {
        let info = ChunkInfo::parse(&c)?;
        if self.raw || info.special != 0 || info.vl_blocks {
            return Ok(c);
        }
        let nbytes = info.nbytes as usize;
        if self.scratch.len() < nbytes {
            self.scratch.resize(nbytes, 0);
        }
        let n = self.src.decompress(&c, &mut self.scratch[..nbytes])?;
        // Not held while the chunk is recompressed (streamed copies hold one chunk at a time).
        drop(c);
        Ok(Cow::Owned(self.dst.compress(&self.scratch[..n])?))
    }
}

impl SChunk {
    /// Fails (`InvalidParam`) when a chunk cannot go into a frame
    /// ([`ChunkInfo::frame_storable`]: 0 bytes, or shorter than a 32-byte header): only a
    /// plain super-chunk takes one (as c-blosc2 does; c-blosc2 then writes a frame it cannot
    /// reopen). Every serialisation into a frame checks this first, so nothing is written and
    /// the super-chunk keeps its chunks.
    #[doc(hidden)]
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
    /// Contiguous frames are planned from the chunk headers and streamed into place
    /// (`CframePlan`).
    #[doc(hidden)]
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
                // Chunks made with other parameters are recompressed (streamed, one chunk in
                // memory at a time); else stored unchanged.
                let recode = !compatible(&self.cparams, &cp);
                // c-blosc2's copy: its header threads come from the copy's contexts (a
                // zeroed cparams and the default dparams when none are given).
                let tpl = HeaderTemplate {
                    cparams: cp,
                    threads: (
                        cparams.map_or(0, |c| c.nthreads),
                        dparams.map_or(1, |d| d.nthreads),
                    ),
                    chunksize: self.counters().chunksize,
                };
                let (frame, location) = match storage {
                    NewStorage::File(p) => {
                        if p.exists() {
                            return Err(Error::FileOpen);
                        }
                        // Complete or absent after a crash (docs/durability.md).
                        if recode {
                            self.publish_stream(p, true, |w| {
                                self.stream_recoded(&tpl, &cp, w).map(drop)
                            })?;
                        } else {
                            let plan = self.cframe_plan(&tpl)?;
                            self.publish(&plan, p, true)?;
                        }
                        let f = Frame::open_file_at(p, 0).inspect_err(|_| {
                            let _ = std::fs::remove_file(p);
                        })?;
                        let loc = Location::File {
                            path: p.to_path_buf(),
                            offset: 0,
                        };
                        (f, loc)
                    }
                    _ if recode => {
                        let mut out = std::io::Cursor::new(Vec::new());
                        self.stream_recoded(&tpl, &cp, &mut out)?;
                        (Frame::from_vec(out.into_inner())?, Location::Memory)
                    }
                    _ => {
                        let plan = self.cframe_plan(&tpl)?;
                        // Zeroed pages of a large allocation come untouched from the kernel.
                        let mut bytes = vec![0u8; vec_len(&plan)?];
                        self.emit_cframe_into(&plan, &mut bytes)?;
                        (Frame::from_vec(bytes)?, Location::Memory)
                    }
                };
                let mut out = SChunk::from_frame(frame, location, dp.nthreads);
                out.cparams = cp;
                out.dparams = dp;
                Ok(out)
            }
            NewStorage::Sparse(p) if !p.exists() => {
                // Built in a temporary directory renamed into place: a crash leaves no
                // directory or the complete copy (docs/durability.md, "Whole-file calls").
                crate::frame::record::publish_dir(
                    p,
                    |tmp| {
                        self.copy_filled(NewStorage::Sparse(tmp), cp, dp, true)
                            .map(drop)
                    },
                    |_| Error::FileWrite,
                )?;
                let mut out = SChunk::open_offset(p, 0, dp.nthreads)?;
                out.cparams = cp;
                out.dparams = dp;
                Ok(out)
            }
            _ => self.copy_filled(storage, cp, dp, false),
        }
    }

    /// A copy made as c-blosc2 makes it: a new super-chunk at `storage`, filled; with `batch`
    /// (a new sframe in a temporary directory) its chunks are appended in one transaction, the
    /// index written once (a crash leaves no copy anyway, see [`SChunk::copy_to`]).
    fn copy_filled(
        &self,
        storage: NewStorage<'_>,
        cp: CParams,
        dp: DParams,
        batch: bool,
    ) -> Result<SChunk> {
        let mut out = SChunk::new(storage, cp, dp)?;
        // c-blosc2 presets the source's chunksize on the copy.
        let r = out
            .set_chunksize(self.counters().chunksize)
            .and_then(|_| self.fill_copy_with(&mut out, batch));
        if let Err(e) = r {
            out.remove_files();
            return Err(e);
        }
        Ok(out)
    }

    /// Writes the compact cframe of a copy of this super-chunk with header `tpl` whose chunks
    /// are recompressed for `cp` (special and VL-block chunks stored unchanged) to `out`,
    /// chunk by chunk: one source and one recompressed chunk in memory at a time, the header
    /// written last ([`super::build::stream_cframe`]; special chunks that stay chunks are
    /// stored as they are, as c-blosc2's copies store them). The bytes are those of a frame
    /// planned from all the recompressed chunks at once. Returns the frame's length.
    fn stream_recoded(
        &self,
        tpl: &HeaderTemplate,
        cp: &CParams,
        out: &mut dyn WriteSeek,
    ) -> Result<u64> {
        let expected = (0..self.nchunks())
            .map(|i| self.stored_chunk_info(i))
            .collect::<Result<Vec<_>>>()?;
        let mut recoder = Recoder::new(&self.cparams, cp, &self.plugin_env())?;
        let header = tpl.header(self.metalayers());
        stream_cframe(
            header,
            &expected,
            self.vlmetalayers(),
            false,
            out,
            |i, buf| {
                // The previous chunk is not held while this one is made.
                drop(std::mem::take(buf));
                match recoder.recode(self.chunk(i as i64)?)? {
                    Cow::Owned(v) => *buf = v,
                    Cow::Borrowed(b) => {
                        buf.clear();
                        buf.extend_from_slice(b);
                    }
                }
                Ok(Fetched::Read(buf.len()))
            },
        )
    }

    /// Header fields of chunk `i` as stored, reading no more of it than needed.
    fn stored_chunk_info(&self, i: i64) -> Result<ChunkInfo> {
        match &self.body {
            Body::Plain(_) => {
                let c = self.chunk(i)?;
                let info = ChunkInfo::parse(&c)?;
                if info.cbytes as usize > c.len() {
                    return Err(Error::InvalidParam);
                }
                Ok(info)
            }
            Body::Frame(f) => f.chunk_info(i).map_err(|e| self.frame_err(e)),
        }
    }

    /// The layout of the compact cframe of this super-chunk's own chunks with header `tpl`.
    fn cframe_plan(&self, tpl: &HeaderTemplate) -> Result<CframePlan> {
        let infos = (0..self.nchunks())
            .map(|i| self.stored_chunk_info(i))
            .collect::<Result<Vec<_>>>()?;
        CframePlan::new(tpl, self.metalayers(), &infos, self.vlmetalayers())
    }

    /// Writes the frame `plan` describes to `out`, chunk by chunk (one chunk in memory at a
    /// time when the source is a file).
    fn emit_cframe(&self, plan: &CframePlan, out: &mut dyn Write) -> Result<()> {
        plan.emit(out, |i, buf| self.fetch_chunk(i as i64, buf))
    }

    /// [`SChunk::emit_cframe`] into `dst` (exactly the plan's length): chunks of a frame in a
    /// file are read straight into their place.
    fn emit_cframe_into(&self, plan: &CframePlan, dst: &mut [u8]) -> Result<()> {
        plan.emit_into(
            dst,
            |i, slot| match &self.body {
                Body::Frame(f) => f
                    .read_stored_into(i as i64, slot)
                    .map_err(|e| self.frame_err(e)),
                _ => Ok(false),
            },
            |i, buf| self.fetch_chunk(i as i64, buf),
        )
    }

    /// Fills the empty `out` with this super-chunk's metalayers, chunks and vlmetalayers (also
    /// used by the C library's copies into user I/O backends).
    #[doc(hidden)]
    pub fn fill_copy(&self, out: &mut SChunk) -> Result<()> {
        self.fill_copy_with(out, false)
    }

    /// [`SChunk::fill_copy`]; with `batch`, a frame's chunks are appended in one transaction
    /// ([`Frame::append_chunks`]).
    fn fill_copy_with(&self, out: &mut SChunk, batch: bool) -> Result<()> {
        if out.frame().is_some() {
            self.check_frame_storable()?;
        }
        for (name, content) in self.metalayers() {
            out.add_metalayer(name, content)?;
        }
        let mut recoder = Recoder::new(&self.cparams, &out.cparams, &self.plugin_env())?;
        let mut first = 0;
        if let (true, Body::Frame(f)) = (batch, &mut out.body) {
            f.append_chunks(self.nchunks(), |i| recoder.recode(self.chunk(i)?))
                .map_err(super::index_err)?;
            first = self.nchunks();
        }
        for i in first..self.nchunks() {
            let c = recoder.recode(self.chunk(i)?)?;
            match &mut out.body {
                // A chunk read from a file is handed over, not copied again.
                Body::Plain(p) => {
                    let n = p.chunks.len() as i64;
                    p.insert_owned(n, c)?;
                }
                Body::Frame(_) => {
                    out.append_chunk(&c)?;
                }
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

    /// The super-chunk as a cframe: [`SChunk::to_cframe_as`] with this super-chunk's own
    /// parameters in the header template.
    pub fn to_cframe(&self) -> Result<Vec<u8>> {
        self.to_cframe_as(&self.copy_template(self.cparams))
    }

    /// What c-blosc2 writes into the header of a copy of this super-chunk whose compression
    /// context has the parameters `ctx` (blocksize included): `nthreads` 0 for compression (a
    /// zeroed `blosc2_cparams`), 1 for decompression (the default dparams), and this
    /// super-chunk's chunksize to start from.
    #[doc(hidden)]
    pub fn copy_template(&self, ctx: CParams) -> HeaderTemplate {
        HeaderTemplate {
            cparams: ctx,
            threads: (0, 1),
            chunksize: self.counters().chunksize,
        }
    }

    /// An in-memory frame's own bytes (what c-blosc2's `to_buffer` returns for one),
    /// borrowed: the callers write or copy them once.
    fn own_bytes(&self) -> Option<Result<Cow<'_, [u8]>>> {
        match (&self.location, self.frame()) {
            (Location::Memory, Some(f)) => Some(f.cframe_bytes()),
            _ => None,
        }
    }

    /// The super-chunk as a cframe, as c-blosc2's `to_buffer` returns it: an in-memory frame's
    /// own bytes; anything else built in one pass as a copy into memory with header `tpl`
    /// (chunks stored unchanged).
    #[doc(hidden)]
    pub fn to_cframe_as(&self, tpl: &HeaderTemplate) -> Result<Vec<u8>> {
        if let Some(b) = self.own_bytes() {
            return b.map(Cow::into_owned);
        }
        self.check_frame_storable()?;
        let plan = self.cframe_plan(tpl)?;
        let mut out = vec![0u8; vec_len(&plan)?];
        self.emit_cframe_into(&plan, &mut out)?;
        Ok(out)
    }

    /// [`SChunk::to_cframe_as`] written into the buffer `alloc(len)` returns (`len`: the
    /// frame's length, returned too): one copy of the chunk data, straight into the
    /// caller's buffer.
    #[doc(hidden)]
    pub fn to_cframe_in<'b>(
        &self,
        tpl: &HeaderTemplate,
        alloc: impl FnOnce(usize) -> Result<&'b mut [u8]>,
    ) -> Result<usize> {
        if let Some(b) = self.own_bytes() {
            let b = b?;
            let dst = alloc(b.len())?;
            if dst.len() != b.len() {
                return Err(Error::Failure);
            }
            dst.copy_from_slice(&b);
            return Ok(b.len());
        }
        self.check_frame_storable()?;
        let plan = self.cframe_plan(tpl)?;
        let len = vec_len(&plan)?;
        let dst = alloc(len)?;
        self.emit_cframe_into(&plan, dst)?;
        Ok(len)
    }

    /// Writes the cframe of [`SChunk::to_cframe`] to `path` (created or replaced); returns
    /// its length.
    pub fn to_file(&self, path: &Path) -> Result<i64> {
        self.to_file_as(path, &self.copy_template(self.cparams))
    }

    /// Writes the cframe of [`SChunk::to_cframe_as`] to `path` (created or replaced);
    /// returns its length. The frame is streamed (only one chunk is held in memory at a time)
    /// into a temporary file next to `path`, renamed over it once complete: a crash leaves the
    /// old file (or none) or the whole new one (docs/durability.md).
    #[doc(hidden)]
    pub fn to_file_as(&self, path: &Path, tpl: &HeaderTemplate) -> Result<i64> {
        if let Some(b) = self.own_bytes() {
            let b = b?;
            crate::frame::record::publish_file(path, &b, false).map_err(|_| Error::FileWrite)?;
            return i64::try_from(b.len()).map_err(|_| Error::FileWrite);
        }
        self.check_frame_storable()?;
        let plan = self.cframe_plan(tpl)?;
        self.publish(&plan, path, false)?;
        i64::try_from(plan.len()).map_err(|_| Error::FileWrite)
    }

    /// Streams the frame of `plan` into a temporary file next to `path` (synced in durable
    /// mode) and renames it there; with `exclusive`, fails if `path` exists.
    fn publish(&self, plan: &CframePlan, path: &Path, exclusive: bool) -> Result<()> {
        self.publish_stream(path, exclusive, |w| self.emit_cframe(plan, w))
    }

    /// Writes a temporary file next to `path` with `fill` (which may seek back in it; synced
    /// in durable mode) and renames it there; with `exclusive`, fails if `path` exists.
    fn publish_stream(
        &self,
        path: &Path,
        exclusive: bool,
        fill: impl FnOnce(&mut dyn WriteSeek) -> Result<()>,
    ) -> Result<()> {
        if exclusive && path.exists() {
            return Err(Error::FileOpen);
        }
        let mut failed = None;
        let mut started = false;
        let r = crate::frame::record::publish_seekable(path, exclusive, false, |w| {
            started = true;
            fill(w).map_err(|e| {
                failed = Some(e);
                std::io::Error::other("frame emission failed")
            })
        });
        r.map_err(|_| match failed {
            Some(e) => e,
            None if !started => Error::FileOpen,
            None => Error::FileWrite,
        })
    }

    /// Appends the cframe of [`SChunk::to_cframe`] at the end of `path` (created if missing);
    /// returns the offset where it starts.
    pub fn append_file(&self, path: &Path) -> Result<i64> {
        self.append_file_as(path, &self.copy_template(self.cparams))
    }

    /// Appends the cframe of [`SChunk::to_cframe_as`] at the end of `path` (created if
    /// missing); returns the offset where it starts. Streamed like [`SChunk::to_file_as`]; a
    /// failed write truncates the file back to its old length.
    ///
    /// The header's `header_len` field (bytes 11..15) is written last, after the rest of the
    /// frame (and a barrier in durable mode): until then the bytes at the returned offset are
    /// not a frame for either library, whatever part of the rest reached the file
    /// (docs/durability.md, "Whole-file calls").
    #[doc(hidden)]
    pub fn append_file_as(&self, path: &Path, tpl: &HeaderTemplate) -> Result<i64> {
        use crate::frame::record::{self, FileRef, Recorded};
        let own = self.own_bytes().transpose()?;
        let plan = match own {
            Some(_) => None,
            None => {
                self.check_frame_storable()?;
                Some(self.cframe_plan(tpl)?)
            }
        };
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(path)
            .map_err(|_| Error::FileOpen)?;
        let at = f.seek(SeekFrom::End(0)).map_err(|_| Error::FileWrite)?;
        let keep = f.try_clone().map_err(|_| Error::FileWrite)?;
        let file = FileRef::Path(path.to_path_buf());
        let mut w = BufWriter::with_capacity(
            WRITE_BUFFER,
            HoldBack::new(Recorded::new(f, file.clone(), at)),
        );
        let r = match (&own, &plan) {
            (Some(b), _) => w.write_all(b).map_err(|_| Error::FileWrite),
            (None, Some(plan)) => self.emit_cframe(plan, &mut w),
            (None, None) => Err(Error::Failure),
        };
        r.and_then(|()| {
            w.flush().map_err(|_| Error::FileWrite)?;
            let held = w.get_ref().held;
            let barrier = || -> Result<()> {
                if record::durable() {
                    record::sync(&file);
                    keep.sync_data().map_err(|_| Error::FileWrite)?;
                }
                Ok(())
            };
            barrier()?;
            let pos = at + HoldBack::<()>::FROM;
            record::write(&file, pos, &held);
            crate::sys::write_all_at(&keep, &held, pos).map_err(|_| Error::FileWrite)?;
            barrier()
        })
        .inspect_err(|_| {
            let _ = keep.set_len(at);
        })?;
        i64::try_from(at).map_err(|_| Error::FileWrite)
    }
}

/// A writer that passes a frame on with its `header_len` field (bytes 11..15 from the start
/// of the stream) zeroed, keeping the real bytes in `held` (see [`SChunk::append_file_as`]).
struct HoldBack<W> {
    inner: W,
    pos: u64,
    held: [u8; 4],
}

impl<W> HoldBack<W> {
    /// Where the held-back bytes start.
    const FROM: u64 = 11;

    fn new(inner: W) -> Self {
        HoldBack {
            inner,
            pos: 0,
            held: [0; 4],
        }
    }
}

impl<W: Write> Write for HoldBack<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let from = Self::FROM;
        let to = from + 4;
        let end = self.pos + buf.len() as u64;
        let n = if self.pos < to && end > from {
            let mut copy = buf.to_vec();
            for (i, b) in copy.iter_mut().enumerate() {
                let p = self.pos + i as u64;
                if (from..to).contains(&p) {
                    self.held[(p - from) as usize] = *b;
                    *b = 0;
                }
            }
            self.inner.write(&copy)?
        } else {
            self.inner.write(buf)?
        };
        self.pos += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Bytes buffered between the chunks of a frame and its file (chunks at least this long are
/// written straight through).
const WRITE_BUFFER: usize = 1 << 20;

/// The frame length of `plan` as an in-memory buffer length.
fn vec_len(plan: &CframePlan) -> Result<usize> {
    usize::try_from(plan.len()).map_err(|_| Error::MemoryAlloc)
}
