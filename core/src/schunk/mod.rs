//! The super-chunk: an ordered list of chunks with common compression parameters, stored either
//! plainly in memory (a `Vec` of chunks) or in a [`Frame`] (in-memory cframe, cframe file,
//! sframe directory). This layer is storage-agnostic: every operation works the same on all four
//! kinds, and the counters c-blosc2 callers read (`nchunks`, `nbytes`, `cbytes`, `chunksize`)
//! come from one place ([`SChunk::counters`]).
//!
//! Semantics follow c-blosc2 3.3 (docs/mutation.md) except where the reference has
//! bugs (docs/divergences.md): the metalayer count is checked, a failed metalayer add changes nothing,
//! and every failed operation leaves the super-chunk as it was (the frame layer rolls its
//! in-memory state back; plain storage checks everything before mutating).
//!
//! Reads take `&self` and [`SChunk`] is `Send + Sync`: any number of threads may read one
//! super-chunk at once ([`SChunk::decompress_chunk`], [`SChunk::decompress_chunk_masked_into`],
//! [`SChunk::getitem`], [`SChunk::decode_blocks`], [`SChunk::get_slice`], chunks, lazy chunks,
//! metalayers). Each read checks a decoder out of the super-chunk's pool for the call, so no
//! decoder, block mask or read buffer is shared between two callers. Mutations take
//! `&mut self` and compress with the super-chunk's own compressor. Callers that bring their own
//! engine pass a [`ChunkDecoder`] or [`ChunkCodec`] to the `_with`/`_in` forms (the C facade
//! passes its `cctx`/`dctx`, which carry user codecs and pre/postfilters).

#![forbid(unsafe_code)]

pub(crate) use crate::frame::build;
mod api;
mod codec;
mod decoders;
mod meta;
mod plain;
mod read;
mod refresh;
mod serialize;
mod slice;

use crate::chunk::{CParams, Compressor, DParams, SchunkEnv};
use crate::error::{Error, Result};
use crate::frame::chunkinfo::ChunkInfo;
use crate::frame::header::{FrameHeader, FrameType};
use crate::frame::offsets::{ChunkLoc, Loc, SpecialKind};
use crate::frame::{Frame, Target};
use plain::Plain;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub use api::Chunks;
pub use build::HeaderTemplate;
pub use codec::{ChunkCodec, ChunkDecoder, Engines};
use decoders::Decoders;
pub use slice::slice_nchunks_1d;

/// Special values `fill_special` accepts (`BLOSC2_SPECIAL_*`).
pub mod special {
    /// All zeros.
    pub const ZERO: i32 = 1;
    /// All NaN.
    pub const NAN: i32 = 2;
    /// Uninitialised.
    pub const UNINIT: i32 = 4;
}

/// Where a super-chunk lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// Chunks in memory, no frame (`schunk->frame == NULL`).
    Plain,
    /// An in-memory cframe.
    Memory,
    /// A cframe at byte `offset` of the file `path`.
    File {
        /// The file.
        path: PathBuf,
        /// Where the frame starts inside it.
        offset: u64,
    },
    /// An sframe directory.
    Sparse(PathBuf),
}

/// Where a new super-chunk is created.
#[derive(Clone, Copy, Debug)]
pub enum NewStorage<'a> {
    /// Plain in-memory chunks.
    Plain,
    /// An in-memory cframe.
    Memory,
    /// A new cframe file (fails if `path` exists, like c-blosc2).
    File(&'a Path),
    /// A new sframe directory (fails if `path` exists, like c-blosc2).
    Sparse(&'a Path),
}

/// The counters c-blosc2 keeps in `blosc2_schunk`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counters {
    /// Number of chunks.
    pub nchunks: i64,
    /// Uncompressed bytes.
    pub nbytes: i64,
    /// Compressed bytes (plain: sum of chunk sizes; frame: the data section, dead space
    /// included, special offsets excluded).
    pub cbytes: i64,
    /// Common chunk nbytes; 0 variable; -1 before the first chunk.
    pub chunksize: i32,
    /// Whether the chunks are VL-block chunks (`flags2` bit 0).
    pub vl_blocks: bool,
}

#[derive(Debug)]
enum Body {
    Plain(Plain),
    Frame(Frame),
}

/// A super-chunk (see the module docs).
#[derive(Debug)]
pub struct SChunk {
    cparams: CParams,
    dparams: DParams,
    location: Location,
    body: Body,
    /// The compressor of [`SChunk::append_buffer`] and [`SChunk::set_slice`] (built at the
    /// first use).
    encoder: Option<Compressor>,
    /// The decoders reads check out ([`decoders`]).
    decoders: Decoders,
}

// Reads take `&self` from any number of threads (see [`decoders`]).
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<SChunk>();
};

/// Whether the position `i` is in `0..n` (as an index). Like c-blosc2, a bad chunk index is
/// `InvalidParam` on every storage.
fn index(i: i64, n: usize) -> Result<usize> {
    usize::try_from(i)
        .ok()
        .filter(|&i| i < n)
        .ok_or(Error::InvalidParam)
}

/// The frame layer's index errors, as c-blosc2 reports them.
fn index_err(e: Error) -> Error {
    if e == Error::InvalidIndex {
        Error::InvalidParam
    } else {
        e
    }
}

/// Core cparams described by a frame header.
#[doc(hidden)]
pub fn cparams_of_header(h: &FrameHeader, nthreads: i16) -> CParams {
    CParams {
        compcode: h.compcode,
        compcode_meta: h.compcode_meta,
        clevel: h.clevel,
        use_dict: h.use_dict,
        typesize: h.typesize,
        nthreads,
        blocksize: h.blocksize,
        splitmode: i32::from(h.splitmode),
        filters: h.filters,
        filters_meta: h.filters_meta,
    }
}

/// Fills the empty plain `p` with the `n` chunks `chunk(i)` of a frame whose header is `h`
/// (each copied and checked: complete chunks whose nbytes add up to the header's).
fn fill_plain<'a>(
    p: &mut Plain,
    h: &FrameHeader,
    n: i64,
    mut chunk: impl FnMut(i64) -> Result<Cow<'a, [u8]>>,
) -> Result<()> {
    let mut acc = 0i64;
    p.chunks.reserve(n as usize);
    for i in 0..n {
        let c = chunk(i)?.into_owned();
        let info = ChunkInfo::parse(&c)?;
        if info.cbytes as usize != c.len() {
            return Err(Error::Data);
        }
        acc += i64::from(info.nbytes);
        p.cbytes += c.len() as i64;
        p.vl = info.vl_blocks;
        p.chunks.push(c);
    }
    if acc != h.nbytes {
        return Err(Error::Data);
    }
    p.nbytes = acc;
    p.chunksize = h.chunksize;
    Ok(())
}

fn frame_exists_error(path: &Path) -> Result<()> {
    if path.exists() {
        Err(Error::FileOpen)
    } else {
        Ok(())
    }
}

impl SChunk {
    /// A new, empty super-chunk at `storage`.
    #[doc(hidden)]
    pub fn new(storage: NewStorage<'_>, cparams: CParams, dparams: DParams) -> Result<SChunk> {
        if cparams.typesize <= 0 {
            return Err(Error::InvalidParam);
        }
        let (location, body) = match storage {
            NewStorage::Plain => (Location::Plain, Body::Plain(Plain::new())),
            NewStorage::Memory => (
                Location::Memory,
                Body::Frame(Frame::create(Target::Memory, &cparams, &dparams)?),
            ),
            NewStorage::File(p) => {
                frame_exists_error(p)?;
                (
                    Location::File {
                        path: p.to_path_buf(),
                        offset: 0,
                    },
                    Body::Frame(Frame::create(Target::File(p), &cparams, &dparams)?),
                )
            }
            NewStorage::Sparse(p) => {
                frame_exists_error(p)?;
                (
                    Location::Sparse(p.to_path_buf()),
                    Body::Frame(Frame::create(Target::Sparse(p), &cparams, &dparams)?),
                )
            }
        };
        Ok(SChunk {
            cparams,
            dparams,
            location,
            body,
            encoder: None,
            decoders: Decoders::default(),
        })
    }

    /// Wraps an open frame; compression parameters come from its header, thread counts from
    /// `nthreads` (c-blosc2 uses the global thread count, not the header's).
    #[doc(hidden)]
    pub fn from_frame(frame: Frame, location: Location, nthreads: i16) -> SChunk {
        let cparams = cparams_of_header(frame.header(), nthreads);
        SChunk {
            cparams,
            dparams: DParams { nthreads },
            location,
            body: Body::Frame(frame),
            encoder: None,
            decoders: Decoders::default(),
        }
    }

    /// Opens the cframe at byte `offset` of `path` (or an sframe directory, offset 0).
    #[doc(hidden)]
    pub fn open_offset(path: &Path, offset: u64, nthreads: i16) -> Result<SChunk> {
        if path.is_dir() {
            if offset != 0 {
                return Err(Error::InvalidParam);
            }
            let f = Frame::open_sframe(path)?;
            return Ok(SChunk::from_frame(
                f,
                Location::Sparse(path.to_path_buf()),
                nthreads,
            ));
        }
        let f = Frame::open_file_at(path, offset)?;
        let loc = Location::File {
            path: path.to_path_buf(),
            offset,
        };
        Ok(SChunk::from_frame(f, loc, nthreads))
    }

    /// An in-memory frame read in place from a lent buffer (c-blosc2's
    /// `blosc2_schunk_from_buffer(copy=false)`): nothing is copied until the first change,
    /// which copies the frame (the lender's bytes are never written).
    #[doc(hidden)]
    pub fn from_lent_cframe(buf: crate::frame::io::LentBytes, nthreads: i16) -> Result<SChunk> {
        let frame = Frame::from_lent(buf)?;
        Ok(SChunk::from_frame(frame, Location::Memory, nthreads))
    }

    /// A super-chunk from cframe bytes. `copy == false`: backed by an in-memory cframe (a copy
    /// of `buf`: the caller's buffer is never modified nor freed); `copy == true`: a plain
    /// super-chunk whose chunks are copied out of the frame (and re-validated).
    #[doc(hidden)]
    pub fn from_cframe(buf: &[u8], copy: bool, nthreads: i16) -> Result<SChunk> {
        if !copy {
            let frame = Frame::from_bytes(buf)?;
            return Ok(SChunk::from_frame(frame, Location::Memory, nthreads));
        }
        // Validated and read where it lies: each chunk is copied once, the frame never.
        let (len, _) = crate::frame::cframe::frame_extent(buf)?;
        let buf = &buf[..len];
        let (h, locs, vlmeta) = crate::frame::cframe::read_frame(buf, FrameType::Contiguous)?;
        crate::frame::fingerprint::check_bytes_on_open(buf, &h)?;
        let n = locs.len() as i64;
        let chunk = |i: i64| -> Result<Cow<'_, [u8]>> {
            use crate::frame::cframe;
            match locs.get(i as usize).ok_or(Error::InvalidIndex)?.get() {
                Loc::Stored(at) => cframe::lend_chunk(buf, &h, at).map(Cow::Borrowed),
                Loc::Special(kind) => Ok(Cow::Owned(crate::frame::offsets::synthesise_special(
                    kind,
                    h.typesize,
                    cframe::special_nbytes(&h, n, i)?,
                    h.blocksize,
                ))),
            }
        };
        let mut p = Plain::new();
        p.metalayers = h.metalayers.clone();
        p.vlmeta = vlmeta;
        fill_plain(&mut p, &h, n, chunk)?;
        Ok(SChunk {
            cparams: cparams_of_header(&h, nthreads),
            dparams: DParams { nthreads },
            location: Location::Plain,
            body: Body::Plain(p),
            encoder: None,
            decoders: Decoders::default(),
        })
    }

    /// Compression parameters (typesize, blocksize... as `blosc2_schunk` reports them).
    pub fn cparams(&self) -> &CParams {
        &self.cparams
    }

    /// Decompression parameters.
    pub fn dparams(&self) -> &DParams {
        &self.dparams
    }

    /// Where the super-chunk lives.
    #[doc(hidden)]
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The backing frame, if any.
    #[doc(hidden)]
    pub fn frame(&self) -> Option<&Frame> {
        match &self.body {
            Body::Frame(f) => Some(f),
            Body::Plain(_) => None,
        }
    }

    /// Current counters.
    pub fn counters(&self) -> Counters {
        match &self.body {
            Body::Plain(p) => Counters {
                nchunks: p.chunks.len() as i64,
                nbytes: p.nbytes,
                cbytes: p.cbytes,
                chunksize: p.chunksize,
                vl_blocks: p.vl,
            },
            Body::Frame(f) => {
                let h = f.header();
                Counters {
                    nchunks: f.nchunks(),
                    nbytes: h.nbytes,
                    cbytes: h.cbytes,
                    chunksize: h.chunksize,
                    vl_blocks: h.vl_blocks,
                }
            }
        }
    }

    /// Number of chunks.
    pub fn nchunks(&self) -> i64 {
        self.counters().nchunks
    }

    /// Frame length (frame-backed), or the size a frame of these chunks would roughly have
    /// (`cbytes + 8 * nchunks`, as c-blosc2 estimates it for plain super-chunks).
    #[doc(hidden)]
    pub fn frame_len(&self) -> i64 {
        match &self.body {
            Body::Frame(f) => f.header().frame_len as i64,
            Body::Plain(p) => p.cbytes + 8 * p.chunks.len() as i64,
        }
    }

    /// The raw offsets index of a frame (special values included); `None` for plain storage.
    #[doc(hidden)]
    pub fn frame_offsets(&self) -> Option<Vec<i64>> {
        self.frame()
            .map(|f| f.locs().iter().map(ChunkLoc::to_entry).collect())
    }

    /// What the plugin codecs and filters see of this super-chunk: its typesize and its
    /// `b2nd` metalayer.
    #[doc(hidden)]
    pub fn plugin_env(&self) -> SchunkEnv {
        SchunkEnv {
            typesize: Some(self.cparams.typesize),
            b2nd: self
                .metalayers()
                .iter()
                .find(|(n, _)| n == "b2nd")
                .map(|(_, c)| c.clone()),
        }
    }

    /// Runs `f` with the super-chunk's own compressor (built at the first use; mutations
    /// only, so no lock is needed).
    fn with_encoder<T>(
        &mut self,
        f: impl FnOnce(&mut SChunk, &mut Compressor) -> Result<T>,
    ) -> Result<T> {
        let mut c = match self.encoder.take() {
            Some(c) => c,
            None => {
                let mut cp = self.cparams;
                cp.nthreads = cp.nthreads.max(1);
                Compressor::new(cp, crate::chunk::plugins::env_hooks(self.plugin_env()))?
            }
        };
        let r = f(self, &mut c);
        self.encoder = Some(c);
        r
    }

    /// Forgets the compressor and the decoders (the parameters or the metalayers the plugin
    /// codecs read changed).
    fn reset_engines(&mut self) {
        self.encoder = None;
        self.decoders.reset();
    }

    // ----------------------------------------------------------------------------------------
    // Chunk operations
    // ----------------------------------------------------------------------------------------

    /// Compresses `src` with `codec` and appends it. Returns the new nchunks.
    #[doc(hidden)]
    pub fn append_buffer_with(&mut self, codec: &mut dyn ChunkCodec, src: &[u8]) -> Result<i64> {
        let c = codec.compress(src)?;
        self.append_chunk_vec(c)
    }

    /// [`SChunk::append_buffer_with`] with the super-chunk's own compressor.
    #[doc(hidden)]
    pub fn append_buffer(&mut self, src: &[u8]) -> Result<i64> {
        self.with_encoder(|s, c| {
            let chunk = codec::compress_chunk(c, src)?;
            s.append_chunk_vec(chunk)
        })
    }

    /// Presets the chunksize of an empty super-chunk (c-blosc2 callers may write
    /// `schunk->chunksize` before the first append; python-blosc2 does).
    #[doc(hidden)]
    pub fn set_chunksize(&mut self, chunksize: i32) -> Result<()> {
        if self.nchunks() != 0 || chunksize < -1 {
            return Err(Error::InvalidParam);
        }
        match &mut self.body {
            Body::Plain(p) => {
                p.chunksize = chunksize;
                Ok(())
            }
            Body::Frame(f) => f.set_chunksize(chunksize),
        }
    }

    /// Takes the parameters a C caller wrote into its `blosc2_schunk` (c-blosc2 keeps them in
    /// the struct and writes them into every frame header from then on): the compression
    /// parameters (`nthreads` aside), the header's thread counts and, while there is no chunk,
    /// the chunksize. A frame's header changes in memory; its next change writes it.
    #[doc(hidden)]
    pub fn adopt_params(&mut self, c: &CParams, threads: (i16, i16), chunksize: i32) {
        let nthreads = self.cparams.nthreads;
        let c = CParams { nthreads, ..*c };
        if c.typesize > 0 && c != self.cparams {
            self.cparams = c;
            self.reset_engines();
        }
        let empty = self.nchunks() == 0;
        match &mut self.body {
            Body::Plain(p) => {
                if empty && chunksize >= -1 {
                    p.chunksize = chunksize;
                }
            }
            Body::Frame(f) => f.set_header_params(&c, threads, chunksize),
        }
    }

    /// Appends a complete chunk (copied). Returns the new nchunks.
    pub fn append_chunk(&mut self, chunk: &[u8]) -> Result<i64> {
        let n = self.nchunks();
        self.insert_chunk(n, chunk)
    }

    /// [`SChunk::append_chunk`] of a chunk handed over: kept as it is in memory (its spare
    /// room given back), not copied.
    pub fn append_chunk_vec(&mut self, chunk: Vec<u8>) -> Result<i64> {
        let n = self.nchunks();
        match &mut self.body {
            Body::Plain(p) => p.insert_owned(n, std::borrow::Cow::Owned(chunk)),
            Body::Frame(f) => f.insert_chunk(n, &chunk).map_err(index_err),
        }
    }

    /// Inserts a chunk before position `i` (`0..=nchunks`). Returns the new nchunks.
    pub fn insert_chunk(&mut self, i: i64, chunk: &[u8]) -> Result<i64> {
        match &mut self.body {
            Body::Plain(p) => p.insert(i, chunk),
            Body::Frame(f) => f.insert_chunk(i, chunk).map_err(index_err),
        }
    }

    /// Replaces chunk `i`. Returns nchunks.
    pub fn update_chunk(&mut self, i: i64, chunk: &[u8]) -> Result<i64> {
        match &mut self.body {
            Body::Plain(p) => p.update(i, chunk),
            Body::Frame(f) => f.update_chunk(i, chunk).map_err(index_err),
        }
    }

    /// Deletes chunk `i`. Returns the new nchunks.
    pub fn delete_chunk(&mut self, i: i64) -> Result<i64> {
        match &mut self.body {
            Body::Plain(p) => p.delete(i),
            Body::Frame(f) => f.delete_chunk(i).map_err(index_err),
        }
    }

    /// Reorders chunks: new chunk `k` is old chunk `order[k]` (a permutation, else `Data`).
    #[doc(hidden)]
    pub fn reorder(&mut self, order: &[i64]) -> Result<()> {
        let n = self.nchunks() as usize;
        if order.len() != n {
            return Err(Error::Data);
        }
        let mut seen = vec![false; n];
        for &o in order {
            let o = index(o, n).map_err(|_| Error::Data)?;
            if std::mem::replace(&mut seen[o], true) {
                return Err(Error::Data);
            }
        }
        match &mut self.body {
            Body::Plain(p) => {
                p.reorder(order);
                Ok(())
            }
            Body::Frame(f) => f.reorder(order),
        }
    }

    /// Fills an empty super-chunk with `nitems` items of a special value (ZERO, NAN, UNINIT)
    /// in chunks of `chunksize` bytes (the last one shorter). Returns nchunks.
    ///
    /// As c-blosc2 3.3.5 does (checked against it): `nitems == 0` returns 0 before any other
    /// check; a negative `nitems` or a `chunksize <= 0` is `InvalidParam`; a non-empty
    /// super-chunk is `FrameSpecial` (-28); another special value or a `chunksize` that is not a
    /// whole number of items is `FrameSpecial` on frames and `SchunkSpecial` (-29) on plain
    /// super-chunks. A frame takes `chunksize` as its chunksize (even when the one chunk is
    /// shorter) and the blocksize of a special chunk of `chunksize` bytes as its blocksize, and
    /// stores its index as one SPECIAL_VALUE chunk; a plain super-chunk appends the special
    /// chunks one by one.
    #[doc(hidden)]
    pub fn fill_special(&mut self, nitems: i64, special: i32, chunksize: i32) -> Result<i64> {
        if nitems == 0 {
            return Ok(0);
        }
        if nitems < 0 || chunksize <= 0 {
            return Err(Error::InvalidParam);
        }
        let refused = match self.body {
            Body::Frame(_) => Error::FrameSpecial,
            Body::Plain(_) => Error::SchunkSpecial,
        };
        if self.nchunks() != 0 || self.counters().nbytes != 0 {
            return Err(Error::FrameSpecial);
        }
        let ts = self.cparams.typesize;
        if chunksize % ts != 0 {
            return Err(refused);
        }
        type Ctor = fn(&CParams, i32, &mut [u8]) -> Result<usize>;
        let (ctor, kind): (Ctor, _) = match special {
            special::ZERO => (crate::chunk::special::zeros, SpecialKind::Zeros),
            special::NAN => (crate::chunk::special::nans, SpecialKind::Nan),
            special::UNINIT => (crate::chunk::special::uninit, SpecialKind::Uninit),
            _ => return Err(refused),
        };
        let total = nitems
            .checked_mul(i64::from(ts))
            .ok_or(Error::InvalidParam)?;
        let cs = i64::from(chunksize);
        let nchunks = (total + cs - 1) / cs;
        if nchunks > crate::frame::header::MAX_NCHUNKS {
            return Err(Error::InvalidParam);
        }
        let mut cp = self.cparams;
        cp.use_dict = false;
        let mut full = [0u8; 32];
        ctor(&cp, chunksize, &mut full)?;
        match &mut self.body {
            Body::Frame(f) => {
                // The frame takes the blocksize of a special chunk of `chunksize` bytes.
                let blocksize = crate::chunk::header::cbuffer_sizes(&full)?.2;
                let n = f
                    .fill_special(kind, nchunks, total, chunksize, blocksize)
                    .map_err(index_err)?;
                self.cparams.blocksize = blocksize;
                Ok(n)
            }
            Body::Plain(_) => {
                let rest = (total % cs) as i32;
                let mut last = [0u8; 32];
                if rest != 0 {
                    ctor(&cp, rest, &mut last)?;
                }
                let r = (|| {
                    for k in 0..nchunks {
                        let c = if k == nchunks - 1 && rest != 0 {
                            &last
                        } else {
                            &full
                        };
                        self.append_chunk(c)?;
                    }
                    Ok(self.nchunks())
                })();
                if r.is_err() {
                    // Leave the super-chunk empty again.
                    while self.nchunks() > 0 {
                        let n = self.nchunks();
                        if self.delete_chunk(n - 1).is_err() {
                            break;
                        }
                    }
                }
                r
            }
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod read_tests;
