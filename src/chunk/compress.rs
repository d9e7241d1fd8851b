//! The chunk writer.
//!
//! Per block: prefilter (if any) → filter pipeline → split into `typesize` streams (split
//! rule, not for the leftover block) → each stream stored as a zero run (csize 0), a byte run
//! (csize = −value, then token byte 1), codec output, or raw (csize = neblock). Blocks are
//! encoded independently (on worker threads when there are several) into per-block buffers and
//! then laid out in block order, checking at each stream whether it still fits the way
//! c-blosc2's serial writer does; when something does not fit the chunk falls back to memcpy
//! (`cbytes = nbytes + 32`), and when even that does not fit the result is 0.

use super::blocksize::{compute_blocksize, split_block};
use super::copy::copy_bytes;
use super::decompress::recycle;
use super::header::{
    self, blosc2_flags, filters_to_flags, flags, ChunkHeader, SpecialKind, EXTENDED_HEADER_LEN,
    MAX_BUFFERSIZE, MAX_DICT_SIZE, MAX_HEADER_TYPESIZE, MAX_TYPESIZE, MIN_BUFFERSIZE,
    MIN_USEFUL_DICT,
};
use super::par::{acquire, lock, run_jobs};
use super::pipeline::Pipeline;
use super::{CParams, Hooks, PrefilterArgs};
use crate::codecs::{self, dict, CodecState};
use crate::error::{Error, Result};
use crate::pool::Pool;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// Per-worker state: codec contexts and scratch buffers, reused across blocks and calls.
#[derive(Default)]
struct Worker {
    codec: CodecState,
    buf1: Vec<u8>,
    buf2: Vec<u8>,
    pre: Vec<u8>,
    /// The block this worker encodes (stays in its cache until copied into the chunk).
    out: BlockOut,
}

/// From this many bytes on, a memcpyed chunk of several blocks is copied by the workers when
/// `nthreads > 1` (below, handing the copy over costs more than it saves). One-block chunks
/// are copied by the caller, as c-blosc2 does: its workers would have to be woken for it
/// (lz4 random 256 KiB, one block: 48-67 µs a call through the workers, 25 µs without).
const PARALLEL_COPY_MIN: usize = 256 << 10;

/// How one stream of a block was stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stream {
    /// csize 0: all zero bytes.
    Zero,
    /// csize −value + token byte.
    Run,
    /// Codec output of this many bytes.
    Codec(usize),
    /// Stored raw (neblock bytes).
    Raw,
}

/// One encoded block: its streams' bytes (csize fields included) in `bytes[..len]` and their
/// kinds. `bytes` only grows (never re-zeroed), and codecs write straight into it.
#[derive(Default)]
struct BlockOut {
    bytes: Vec<u8>,
    len: usize,
    streams: Vec<Stream>,
    neblock: usize,
    result: Option<Result<()>>,
    /// The raw streams' bytes are not in `bytes` yet: they are still in the filtered block
    /// the encoder returned (see [`BlockOut::copy_to`], [`BlockOut::fill_raw`]).
    raw_deferred: bool,
}

impl BlockOut {
    fn encoded(&self) -> &[u8] {
        debug_assert!(!self.raw_deferred);
        &self.bytes[..self.len]
    }

    /// (offset in the block, stream index) of each raw stream's bytes.
    fn raw_spans(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let mut p = 0;
        self.streams
            .iter()
            .enumerate()
            .filter_map(move |(s, kind)| {
                p += 4;
                let at = p;
                p += match *kind {
                    Stream::Zero => 0,
                    Stream::Run => 1,
                    Stream::Codec(c) => c,
                    Stream::Raw => self.neblock,
                };
                (*kind == Stream::Raw).then_some((at, s))
            })
    }

    /// Copies the block into `piece` (its place in the chunk), raw streams straight from
    /// `filtered` when they were deferred: incompressible data is copied once, not twice.
    fn copy_to(&self, piece: &mut [u8], filtered: &[u8]) {
        if !self.raw_deferred {
            copy_bytes(piece, self.encoded());
            return;
        }
        let ne = self.neblock;
        let mut from = 0;
        for (at, s) in self.raw_spans() {
            copy_bytes(&mut piece[from..at], &self.bytes[from..at]);
            copy_bytes(&mut piece[at..at + ne], &filtered[s * ne..(s + 1) * ne]);
            from = at + ne;
        }
        copy_bytes(&mut piece[from..self.len], &self.bytes[from..self.len]);
    }

    /// Copies deferred raw streams from `filtered` into `bytes`, for a block that waits for
    /// an earlier one while its worker goes on (and reuses its filter buffers).
    fn fill_raw(&mut self, filtered: &[u8]) {
        if !self.raw_deferred {
            return;
        }
        let ne = self.neblock;
        let mut bytes = std::mem::take(&mut self.bytes);
        for (at, s) in self.raw_spans() {
            copy_bytes(&mut bytes[at..at + ne], &filtered[s * ne..(s + 1) * ne]);
        }
        self.bytes = bytes;
        self.raw_deferred = false;
    }
}

/// Most bytes block `j` of `plan` can take when encoded without a room limit: each stream is
/// at most its csize field, a run token and `neblock` raw bytes.
fn block_bound(plan: &Plan<'_>, j: usize) -> usize {
    let (input, _, is_left) = plan.block(j);
    let nstreams = if !plan.dont_split && !is_left {
        plan.typesize
    } else {
        1
    };
    input.len() + 5 * nstreams
}

/// Where the blocks of a call come from.
#[derive(Clone, Copy)]
enum Input<'a> {
    /// One buffer cut into `blocksize` blocks.
    Flat(&'a [u8]),
    /// One block per buffer (VL-block chunk).
    Vl(&'a [&'a [u8]]),
}

/// Everything the block encoder needs, fixed for one chunk.
struct Plan<'a> {
    input: Input<'a>,
    blocksize: usize,
    nblocks: usize,
    leftover: usize,
    typesize: usize,
    dont_split: bool,
    compcode: u8,
    compcode_meta: u8,
    clevel: u8,
    pipeline: Pipeline<'a>,
    dict: Option<&'a dict::CompressDict>,
    /// Dictionary training pass: emit the filtered block only.
    training: bool,
    /// Header length (32, or 16 for Blosc1-compatible chunks); bstarts follow it.
    hlen: usize,
    hooks: &'a dyn Hooks,
}

impl<'a> Plan<'a> {
    fn is_vl(&self) -> bool {
        matches!(self.input, Input::Vl(_))
    }

    /// Runs (and the disposable-output shortcut) exist only in extended, non-VL chunks.
    fn runs(&self) -> bool {
        self.hlen == EXTENDED_HEADER_LEN && !self.is_vl()
    }

    /// (bytes, byte offset in the chunk, is the leftover block) of block `j`.
    fn block(&self, j: usize) -> (&'a [u8], usize, bool) {
        match self.input {
            Input::Flat(src) => {
                let off = j * self.blocksize;
                let last = j + 1 == self.nblocks && self.leftover > 0;
                let len = if last { self.leftover } else { self.blocksize };
                (&src[off..off + len], off, last)
            }
            Input::Vl(srcs) => (srcs[j], 0, false),
        }
    }

    fn chunk_src(&self) -> &'a [u8] {
        match self.input {
            Input::Flat(src) => src,
            Input::Vl(_) => &[],
        }
    }
}

/// Writes chunks. Owns its codec states, scratch buffers and (when `nthreads > 1`) its worker
/// pool; reusable for any number of chunks. Not shareable between threads at the same time
/// (`&mut self`), but two compressors never interfere.
pub struct Compressor {
    cp: CParams,
    hooks: Arc<dyn Hooks>,
    pool: Option<Arc<Pool>>,
    workers: Vec<Mutex<Worker>>,
    /// Per-block outputs of the dictionary training pass.
    outs: Vec<Mutex<BlockOut>>,
    /// Buffers of [`Order`] kept for the next parallel call: blocks encoded but not placed
    /// (empty between calls), free buffers, block starts.
    pending: Vec<(usize, BlockOut)>,
    spares: Vec<BlockOut>,
    starts: Vec<usize>,
    /// The allocation of the last parallel copy list (empty), reused by the next.
    pieces: Vec<Mutex<&'static mut [u8]>>,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor")
            .field("cparams", &self.cp)
            .finish()
    }
}

fn grow(v: &mut Vec<u8>, n: usize) {
    if v.len() < n {
        v.resize(n, 0);
    }
}

impl Compressor {
    /// A compressor for `cparams`. Parameters are checked at each call (as c-blosc2 does),
    /// except `nthreads`, which must be ≥ 1 (`InvalidParam`).
    pub fn new(cparams: CParams, hooks: Arc<dyn Hooks>) -> Result<Compressor> {
        if cparams.nthreads < 1 {
            return Err(Error::InvalidParam);
        }
        let n = cparams.nthreads as usize;
        Ok(Compressor {
            cp: cparams,
            hooks,
            pool: None,
            workers: (0..n).map(|_| Mutex::new(Worker::default())).collect(),
            outs: Vec::new(),
            pending: Vec::new(),
            spares: Vec::new(),
            starts: Vec::new(),
            pieces: Vec::new(),
        })
    }

    /// The parameters in use.
    pub fn cparams(&self) -> &CParams {
        &self.cp
    }

    /// Replaces the parameters (a different `nthreads` drops the current pool).
    pub fn set_cparams(&mut self, cparams: CParams) -> Result<()> {
        if cparams.nthreads < 1 {
            return Err(Error::InvalidParam);
        }
        if cparams.nthreads != self.cp.nthreads {
            self.pool = None;
            let n = cparams.nthreads as usize;
            self.workers = (0..n).map(|_| Mutex::new(Worker::default())).collect();
        }
        self.cp = cparams;
        Ok(())
    }

    /// Uses `pool` (shared with other contexts) for parallel work; its size must equal
    /// `nthreads`.
    pub fn set_pool(&mut self, pool: Arc<Pool>) -> Result<()> {
        if pool.nthreads() != self.cp.nthreads as usize {
            return Err(Error::InvalidParam);
        }
        self.pool = Some(pool);
        Ok(())
    }

    /// Checks shared by every entry point (c-blosc2's `initialize_context_compression`).
    fn check_params(&self, nbytes: usize, destsize: usize) -> Result<()> {
        let cp = &self.cp;
        if nbytes > MAX_BUFFERSIZE as usize {
            return Err(Error::MaxBufsizeExceeded);
        }
        if destsize < EXTENDED_HEADER_LEN {
            return Err(Error::MaxBufsizeExceeded);
        }
        if cp.clevel > 9 {
            return Err(Error::CodecParam);
        }
        if cp.use_dict && !matches!(cp.compcode, codecs::ZSTD | codecs::LZ4 | codecs::LZ4HC) {
            return Err(Error::CodecParam);
        }
        if cp.typesize <= 0 || cp.typesize > MAX_TYPESIZE || cp.blocksize < 0 {
            return Err(Error::InvalidParam);
        }
        Ok(())
    }

    /// The codec format (flags bits 5-7) and versionlz of the configured codec.
    fn codec_ids(&self) -> Result<(u8, u8)> {
        let cc = self.cp.compcode;
        match cc {
            codecs::BLOSCLZ | codecs::LZ4 | codecs::LZ4HC | codecs::ZLIB | codecs::ZSTD => {
                Ok((codecs::format_of(cc).unwrap_or(0), 1))
            }
            32..=255 => match self.hooks.codec_version(cc) {
                Some(v) => Ok((codecs::format::UDCODEC, v)),
                None => Err(Error::CodecSupport),
            },
            _ => Err(Error::CodecSupport),
        }
    }

    /// Compresses `src` into `dst` as one chunk; returns its size, or 0 if it does not fit.
    pub fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        self.compress_impl(src, dst, true)
    }

    /// Like [`Compressor::compress`] but writes a 16-byte Blosc1-style header (c-blosc2's
    /// `BLOSC_BLOSC1_COMPAT` mode): the pipeline is only described by the flag bits, no runs,
    /// no dictionary, memcpyed chunks are `nbytes + 16` bytes.
    pub fn compress_blosc1(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        self.compress_impl(src, dst, false)
    }

    fn compress_impl(&mut self, src: &[u8], dst: &mut [u8], extended: bool) -> Result<usize> {
        let mut cp = self.cp;
        // A 16-byte header describes a pipeline only through its flag bits; one it cannot
        // describe gets the 32-byte header instead, so the chunk always decodes to its input.
        let blosc1_filters = blosc1_pipeline(&cp.filters, &cp.filters_meta);
        let extended = extended || blosc1_filters.is_none();
        let hlen = if extended {
            EXTENDED_HEADER_LEN
        } else {
            cp.use_dict = false;
            cp.filters = blosc1_filters.unwrap_or(cp.filters);
            header::MIN_HEADER_LEN
        };
        self.check_params(src.len(), dst.len())?;
        let (format, versionlz) = self.codec_ids()?;
        let destsize = dst.len().min(i32::MAX as usize);
        let nbytes = src.len();
        let typesize = if cp.typesize > MAX_HEADER_TYPESIZE {
            1
        } else {
            cp.typesize as usize
        };
        let blocksize = compute_blocksize(
            cp.compcode,
            cp.clevel,
            cp.typesize,
            cp.splitmode,
            &cp.filters,
            nbytes as i32,
            cp.blocksize,
        ) as usize;
        let nblocks = nbytes.div_ceil(blocksize);
        let leftover = nbytes % blocksize;
        let header_blocksize = if nbytes == 0 && cp.blocksize > 0 {
            cp.blocksize
        } else {
            blocksize as i32
        };
        let bstarts_end = hlen + 4 * nblocks;
        let mut memcpyed =
            cp.clevel == 0 || (nbytes as i32) < MIN_BUFFERSIZE || bstarts_end > destsize;
        let mut hflags = if extended { flags::EXTENDED } else { 0 };
        // A split block must hold whole items (else its streams would be empty or miss
        // bytes): only degenerate requested sizes hit the second condition.
        let dont_split = !split_block(
            cp.splitmode,
            cp.compcode,
            cp.clevel,
            &cp.filters,
            typesize as i32,
            blocksize as i32,
        ) || !blocksize.is_multiple_of(typesize);
        if !memcpyed {
            hflags |= filters_to_flags(&cp.filters);
            if dont_split {
                hflags |= flags::DONT_SPLIT;
            }
            hflags |= format << 5;
        }
        let mut h = ChunkHeader {
            version: header::version::STABLE,
            versionlz,
            flags: hflags,
            typesize: typesize as u8,
            nbytes: nbytes as i32,
            blocksize: header_blocksize,
            cbytes: 0,
            filters: cp.filters,
            udcompcode: cp.compcode,
            compcode_meta: cp.compcode_meta,
            filters_meta: cp.filters_meta,
            flags2: 0,
            blosc2_flags: 0,
        };

        if !memcpyed {
            let hooks = self.hooks.clone();
            let dict_store: Option<(dict::CompressDict, Vec<u8>)>;
            let mut plan = Plan {
                input: Input::Flat(src),
                blocksize,
                nblocks,
                leftover,
                typesize,
                dont_split,
                compcode: cp.compcode,
                compcode_meta: cp.compcode_meta,
                clevel: cp.clevel,
                pipeline: Pipeline {
                    filters: cp.filters,
                    meta: cp.filters_meta,
                    typesize,
                    version: header::version::STABLE,
                    hooks: &*hooks,
                },
                dict: None,
                training: false,
                hlen,
                hooks: &*hooks,
            };
            let mut done = None;
            if cp.use_dict {
                let nstreams = nblocks * if dont_split { 1 } else { typesize };
                dict_store = self.build_dict(&mut plan, nbytes, nstreams, None)?;
                if let Some((d, bytes)) = &dict_store {
                    let start = bstarts_end + 4 + bytes.len();
                    if start <= destsize {
                        plan.dict = Some(d);
                        done = self.run_blocks(&plan, dst, start, destsize)?;
                        plan.dict = None;
                        if let Some((n, _)) = done {
                            dst[bstarts_end..bstarts_end + 4]
                                .copy_from_slice(&(bytes.len() as i32).to_le_bytes());
                            dst[bstarts_end + 4..start].copy_from_slice(bytes);
                            h.blosc2_flags |= blosc2_flags::USEDICT;
                            done = Some((n, false));
                        }
                    }
                    if done.is_none() {
                        memcpyed = true;
                    }
                }
            }
            if done.is_none() && !memcpyed {
                plan.dict = None;
                done = self.run_blocks(&plan, dst, bstarts_end, destsize)?;
            }
            match done {
                Some((n, all_zero)) => {
                    if all_zero && extended {
                        h.blosc2_flags |= (SpecialKind::Zero as u8) << 4;
                        h.cbytes = EXTENDED_HEADER_LEN as i32;
                    } else {
                        h.cbytes = n as i32;
                    }
                    h.write(dst);
                    return Ok(h.cbytes as usize);
                }
                None => memcpyed = true,
            }
        }
        debug_assert!(memcpyed);
        if nbytes + hlen > destsize {
            return Ok(0);
        }
        h.flags |= flags::MEMCPYED;
        h.blosc2_flags &= !blosc2_flags::USEDICT;
        h.cbytes = (nbytes + hlen) as i32;
        let body = &mut dst[hlen..hlen + nbytes];
        if self.hooks.has_prefilter() {
            self.prefilter_memcpy(src, body, blocksize, typesize)?;
        } else {
            self.copy_body(src, body, nblocks)?;
        }
        h.write(dst);
        Ok(h.cbytes as usize)
    }

    /// Memcpyed chunk with a prefilter: each block is the prefilter's output.
    fn prefilter_memcpy(
        &mut self,
        src: &[u8],
        body: &mut [u8],
        bs: usize,
        ts: usize,
    ) -> Result<()> {
        let hooks = self.hooks.clone();
        let mut w = lock(&self.workers[0]);
        for (j, (out, inp)) in body.chunks_mut(bs).zip(src.chunks(bs)).enumerate() {
            let staged = run_prefilter(&*hooks, &mut w.pre, inp, j * bs, j, ts, 0)?;
            copy_bytes(out, &staged[..out.len()]);
        }
        Ok(())
    }

    /// Dictionary training: the filtered blocks are the samples; returns the dictionary (and
    /// its bytes) for the second pass, or `None` to write the chunk without one (c-blosc2's
    /// fallbacks). Flat chunks use `nstreams` (≥ 8) samples of `nbytes / nstreams / 16` bytes;
    /// VL chunks (`vl_sizes`) one sample per block.
    fn build_dict(
        &mut self,
        plan: &mut Plan<'_>,
        nbytes: usize,
        nstreams: usize,
        vl_sizes: Option<Vec<usize>>,
    ) -> Result<Option<(dict::CompressDict, Vec<u8>)>> {
        let maxsize = (MAX_DICT_SIZE as usize).min(nbytes / 20);
        let sizes = match vl_sizes {
            Some(s) => {
                if s.len() < 8 || nbytes / s.len() / 16 == 0 {
                    return Ok(None);
                }
                s
            }
            None => {
                let nsamples = nstreams.max(8);
                let sample_size = nbytes / nsamples / 16;
                if sample_size == 0 {
                    return Ok(None);
                }
                vec![sample_size; nsamples]
            }
        };
        if maxsize < MIN_USEFUL_DICT as usize {
            return Ok(None);
        }
        plan.training = true;
        let samples = self.encode_all(plan);
        plan.training = false;
        let samples = samples?;
        let Some(bytes) = dict::train(plan.compcode, &samples, &sizes, maxsize) else {
            return Ok(None);
        };
        match dict::CompressDict::new(plan.compcode, plan.clevel, &bytes) {
            Ok(d) => Ok(Some((d, bytes))),
            Err(_) => Ok(None),
        }
    }

    /// Encodes every block of `plan` into `self.outs` (in parallel when worthwhile).
    fn encode_blocks(&mut self, plan: &Plan<'_>) -> Result<()> {
        let n = plan.nblocks;
        while self.outs.len() < n {
            self.outs.push(Mutex::new(BlockOut::default()));
        }
        let workers = &self.workers;
        let outs = &self.outs[..n];
        let job = |j: usize| {
            let (tid, mut w) = acquire(workers);
            let mut o = lock(&outs[j]);
            let r = encode_block_out(plan, &mut w, j, tid, &mut o, None, false).map(|_| ());
            o.result = Some(r);
        };
        if self.cp.nthreads > 1 && n > 1 {
            run_jobs(
                plan.hooks,
                &mut self.pool,
                self.cp.nthreads as usize,
                n,
                &job,
            )?;
        } else {
            (0..n).for_each(job);
        }
        Ok(())
    }

    /// Training pass: the filtered blocks, concatenated in block order.
    fn encode_all(&mut self, plan: &Plan<'_>) -> Result<Vec<u8>> {
        self.encode_blocks(plan)?;
        let mut v = Vec::new();
        for o in &self.outs[..plan.nblocks] {
            let mut o = lock(o);
            o.result.take().unwrap_or(Err(Error::Failure))?;
            v.extend_from_slice(o.encoded());
        }
        Ok(v)
    }

    /// Encodes all blocks and lays them out from `start` (bstarts at byte 32). `None` when
    /// the chunk does not fit in `destsize`; else (cbytes, every stream was a zero run).
    fn run_blocks(
        &mut self,
        plan: &Plan<'_>,
        dst: &mut [u8],
        start: usize,
        destsize: usize,
    ) -> Result<Option<(usize, bool)>> {
        debug_assert!(!plan.training);
        let mut nt = start;
        let mut all_zero = plan.dict.is_none() && !plan.is_vl();
        let mut first = 0;
        if self.cp.nthreads > 1 && plan.nblocks > 1 {
            match self.run_parallel(plan, dst, start, destsize)? {
                Placed::All(n, zero) => return Ok(Some((n, zero))),
                Placed::NoFit => return Ok(None),
                Placed::Upto(next, at, zero) => (first, nt, all_zero) = (next, at, zero),
            }
        }
        // Serial (or the tail of a parallel run from a block that needs a room limit): encode
        // straight into the chunk, as c-blosc2's serial writer does. With room for the worst
        // case no stream can fail a fit check; otherwise each stream gets only the room left,
        // which is what `check_fit` + `Fit::Redo` would end up with (same bytes, one copy
        // fewer).
        let mut w = lock(&self.workers[0]);
        let w = &mut *w;
        let mut o = std::mem::take(&mut w.out);
        let r = (|| {
            for j in first..plan.nblocks {
                let bpos = plan.hlen + 4 * j;
                let limit = if nt.saturating_add(block_bound(plan, j)) <= destsize {
                    None
                } else if nt < destsize {
                    Some((nt, destsize))
                } else {
                    return Ok(None);
                };
                let BlockOut {
                    streams, neblock, ..
                } = &mut o;
                let out = &mut dst[nt..destsize];
                let r = encode_block(plan, w, j, 0, out, streams, neblock, limit, false)?;
                let Some((len, _)) = r else {
                    return Ok(None);
                };
                dst[bpos..bpos + 4].copy_from_slice(&(nt as i32).to_le_bytes());
                nt += len;
                all_zero &= o.streams.iter().all(|s| *s == Stream::Zero);
            }
            Ok(Some((nt, all_zero)))
        })();
        w.out = o;
        r
    }

    /// Encodes and places the blocks on the workers (see [`Order`]): each worker claims the
    /// next block, encodes it into its own buffer and, when every earlier block is placed,
    /// copies it into the chunk, then places any later blocks already waiting; otherwise it
    /// leaves its buffer waiting and takes a free one. Placement stops at the first block that
    /// fails (its error), does not fit, or needs a room-limited encode (`Placed::Upto`, for
    /// the serial writer to go on from there), exactly where the serial writer would.
    fn run_parallel(
        &mut self,
        plan: &Plan<'_>,
        dst: &mut [u8],
        start: usize,
        destsize: usize,
    ) -> Result<Placed> {
        let n = plan.nblocks;
        let nthreads = self.cp.nthreads as usize;
        let (head, tail) = dst.split_at_mut(start);
        let mut starts = std::mem::take(&mut self.starts);
        starts.clear();
        let order = Mutex::new(Order {
            next: 0,
            nt: start,
            rest: &mut tail[..destsize - start],
            pending: std::mem::take(&mut self.pending),
            spares: std::mem::take(&mut self.spares),
            starts,
            all_zero: plan.dict.is_none() && !plan.is_vl(),
            stop: None,
        });
        let claim = AtomicUsize::new(0);
        let stopped = AtomicBool::new(false);
        let workers = &self.workers;
        // One job per block, as the threads callback is told, but a job claims blocks until
        // none are left: the first job on each thread does the work, the rest find none.
        let job = |_: usize| {
            if claim.load(Relaxed) >= n || stopped.load(Relaxed) {
                return;
            }
            let (tid, mut w) = acquire(workers);
            let w = &mut *w;
            let mut mine = std::mem::take(&mut w.out);
            while !stopped.load(Relaxed) {
                let j = claim.fetch_add(1, Relaxed);
                if j >= n {
                    break;
                }
                let (r, filtered) = match encode_block_out(plan, w, j, tid, &mut mine, None, true) {
                    Ok(f) => (Ok(()), f.unwrap_or_default()),
                    Err(e) => (Err(e), &[][..]),
                };
                mine.result = Some(r);
                let mut st = lock(&order);
                if j != st.next && mine.raw_deferred {
                    drop(st);
                    mine.fill_raw(filtered);
                    st = lock(&order);
                }
                if j != st.next {
                    // An earlier block is still being encoded: leave this one to whoever
                    // places that block, and go on with a free buffer.
                    let spare = st.spares.pop().unwrap_or_default();
                    st.pending.push((j, std::mem::replace(&mut mine, spare)));
                    continue;
                }
                let piece = st.reserve(&mine, destsize);
                drop(st);
                let Some(piece) = piece else {
                    stopped.store(true, Relaxed);
                    break;
                };
                mine.copy_to(piece, filtered);
                if !place_waiting(&order, destsize) {
                    stopped.store(true, Relaxed);
                }
            }
            w.out = mine;
        };
        let r = run_jobs(plan.hooks, &mut self.pool, nthreads, n, &job);
        let st = order.into_inner().unwrap_or_else(|e| e.into_inner());
        for (j, &at) in st.starts.iter().enumerate() {
            let bpos = plan.hlen + 4 * j;
            head[bpos..bpos + 4].copy_from_slice(&(at as i32).to_le_bytes());
        }
        let placed = match st.stop {
            None if st.next == n => Ok(Placed::All(st.nt, st.all_zero)),
            None => Err(Error::Failure),
            Some(Stop::Failed(e)) => Err(e),
            Some(Stop::NoFit) => Ok(Placed::NoFit),
            Some(Stop::Redo) => Ok(Placed::Upto(st.next, st.nt, st.all_zero)),
        };
        let Order {
            mut pending,
            mut spares,
            starts,
            ..
        } = st;
        spares.extend(pending.drain(..).map(|(_, o)| o));
        (self.pending, self.spares, self.starts) = (pending, spares, starts);
        r?;
        placed
    }

    /// Copies `src` into a memcpyed chunk's body, on the workers when it is large and has
    /// several blocks.
    fn copy_body(&mut self, src: &[u8], body: &mut [u8], nblocks: usize) -> Result<()> {
        let nthreads = self.cp.nthreads as usize;
        if nthreads < 2 || nblocks < 2 || src.len() < PARALLEL_COPY_MIN {
            copy_bytes(body, src);
            return Ok(());
        }
        let step = src.len().div_ceil(nthreads);
        let mut pieces: Vec<Mutex<&mut [u8]>> = recycle(std::mem::take(&mut self.pieces));
        pieces.extend(body.chunks_mut(step).map(Mutex::new));
        let job = |k: usize| {
            let from = &src[k * step..];
            let mut to = lock(&pieces[k]);
            let len = to.len();
            copy_bytes(&mut to, &from[..len]);
        };
        let r = run_jobs(&*self.hooks, &mut self.pool, nthreads, pieces.len(), &job);
        self.pieces = recycle(pieces);
        r
    }

    /// Compresses one block per source into a VL-block chunk (version 6, never memcpyed,
    /// never split, no runs); returns its size, or 0 if it does not fit.
    pub fn vlcompress(&mut self, srcs: &[&[u8]], dst: &mut [u8]) -> Result<usize> {
        let cp = self.cp;
        if srcs.is_empty() || srcs.iter().any(|s| s.is_empty()) {
            return Err(Error::InvalidParam);
        }
        let mut total = 0usize;
        for s in srcs {
            total += s.len();
            if total > MAX_BUFFERSIZE as usize {
                return Err(Error::MaxBufsizeExceeded);
            }
        }
        if srcs.len() > i32::MAX as usize / 4 {
            return Err(Error::InvalidParam);
        }
        self.check_params(total, dst.len())?;
        let (format, versionlz) = self.codec_ids()?;
        let destsize = dst.len().min(i32::MAX as usize);
        let typesize = if cp.typesize > MAX_HEADER_TYPESIZE {
            1
        } else {
            cp.typesize as usize
        };
        let nblocks = srcs.len();
        let max_bs = srcs.iter().map(|s| s.len()).max().unwrap_or(0);
        let bstarts_end = EXTENDED_HEADER_LEN + 4 * nblocks;
        if bstarts_end > destsize {
            return Ok(0);
        }
        let mut h = ChunkHeader {
            version: header::version::VL_BLOCKS,
            versionlz,
            flags: flags::EXTENDED
                | filters_to_flags(&cp.filters)
                | flags::DONT_SPLIT
                | (format << 5),
            typesize: typesize as u8,
            nbytes: total as i32,
            blocksize: nblocks as i32,
            cbytes: 0,
            filters: cp.filters,
            udcompcode: cp.compcode,
            compcode_meta: cp.compcode_meta,
            filters_meta: cp.filters_meta,
            flags2: blosc2_flags::VL_BLOCKS,
            blosc2_flags: 0,
        };
        let hooks = self.hooks.clone();
        let dict_store: Option<(dict::CompressDict, Vec<u8>)>;
        let mut plan = Plan {
            input: Input::Vl(srcs),
            blocksize: max_bs,
            nblocks,
            leftover: 0,
            typesize,
            dont_split: true,
            compcode: cp.compcode,
            compcode_meta: cp.compcode_meta,
            clevel: cp.clevel,
            pipeline: Pipeline {
                filters: cp.filters,
                meta: cp.filters_meta,
                typesize,
                version: header::version::VL_BLOCKS,
                hooks: &*hooks,
            },
            dict: None,
            training: false,
            hlen: EXTENDED_HEADER_LEN,
            hooks: &*hooks,
        };
        if cp.use_dict && cp.clevel > 0 {
            let sizes: Vec<usize> = srcs.iter().map(|s| s.len()).collect();
            dict_store = self.build_dict(&mut plan, total, nblocks, Some(sizes))?;
            if let Some((d, bytes)) = &dict_store {
                let start = bstarts_end + 4 + bytes.len();
                if start > destsize {
                    return Ok(0);
                }
                plan.dict = Some(d);
                let done = self.run_blocks(&plan, dst, start, destsize)?;
                let Some((n, _)) = done else {
                    return Ok(0);
                };
                dst[bstarts_end..bstarts_end + 4]
                    .copy_from_slice(&(bytes.len() as i32).to_le_bytes());
                dst[bstarts_end + 4..start].copy_from_slice(bytes);
                h.blosc2_flags |= blosc2_flags::USEDICT;
                h.cbytes = n as i32;
                h.write(dst);
                return Ok(n);
            }
        }
        match self.run_blocks(&plan, dst, bstarts_end, destsize)? {
            Some((n, _)) => {
                h.cbytes = n as i32;
                h.write(dst);
                Ok(n)
            }
            None => Ok(0),
        }
    }
}

/// Runs the prefilter on one block into `pre` (zeroed first); returns the block-sized view.
fn run_prefilter<'p>(
    hooks: &dyn Hooks,
    pre: &'p mut Vec<u8>,
    input: &[u8],
    offset: usize,
    nblock: usize,
    typesize: usize,
    tid: usize,
) -> Result<&'p [u8]> {
    let bsize = input.len();
    let ots = match hooks.prefilter_output_typesize() {
        t if t > 0 => t as usize,
        _ => typesize,
    };
    let out_size = bsize / typesize.max(1) * ots;
    let n = bsize.max(out_size);
    pre.clear();
    pre.resize(n, 0);
    let mut args = PrefilterArgs {
        input,
        output: &mut pre[..out_size],
        output_typesize: ots as i32,
        output_offset: offset as i32,
        nblock: nblock as i32,
        tid: tid as i32,
    };
    if hooks.prefilter(&mut args).is_err() && !hooks.prefilter_output_is_disposable() {
        return Err(Error::FilterPipeline);
    }
    Ok(&pre[..bsize])
}

/// Encodes block `j` of `plan` into `out` (streams with their csize fields).
///
/// `limit = Some((start, destsize))` reproduces c-blosc2's serial writer exactly for a block
/// that lands at `start` near the end of the output: each codec call gets only the room left
/// (some codecs give up with less room even when their output would fit), and the result is
/// `Ok(false)` as soon as the block does not fit. Without a limit every stream may use
/// `neblock` bytes (blocks are then independent of their position, hence parallel).
///
/// On success returns the filtered block; with `defer_raw` the raw streams are left out of
/// `out` (only their room is kept) for [`BlockOut::copy_to`] / [`BlockOut::fill_raw`] to copy
/// from it.
fn encode_block_out<'s>(
    plan: &Plan<'s>,
    w: &'s mut Worker,
    j: usize,
    tid: usize,
    out: &mut BlockOut,
    limit: Option<(usize, usize)>,
    defer_raw: bool,
) -> Result<Option<&'s [u8]>> {
    let need = if plan.training {
        plan.block(j).0.len()
    } else {
        block_bound(plan, j)
    };
    grow(&mut out.bytes, need);
    let BlockOut {
        bytes,
        len,
        streams,
        neblock,
        raw_deferred,
        ..
    } = out;
    *len = 0;
    *raw_deferred = false;
    let r = encode_block(plan, w, j, tid, bytes, streams, neblock, limit, defer_raw)?;
    Ok(r.map(|(n, filtered)| {
        *len = n;
        *raw_deferred = defer_raw && streams.contains(&Stream::Raw);
        filtered
    }))
}

/// [`encode_block_out`] into `out` (at least [`block_bound`] bytes, or the block size when
/// training); returns the bytes written and the filtered block, `None` when the block does not
/// fit `limit`.
#[allow(clippy::too_many_arguments)]
fn encode_block<'s>(
    plan: &Plan<'s>,
    w: &'s mut Worker,
    j: usize,
    tid: usize,
    out: &mut [u8],
    streams: &mut Vec<Stream>,
    neblock_out: &mut usize,
    limit: Option<(usize, usize)>,
    defer_raw: bool,
) -> Result<Option<(usize, &'s [u8])>> {
    let (input, offset, is_left) = plan.block(j);
    let bsize = input.len();
    let ts = plan.typesize;
    streams.clear();
    let Worker {
        codec,
        buf1,
        buf2,
        pre,
        ..
    } = w;
    let staged: &[u8] = if plan.hooks.has_prefilter() {
        run_prefilter(plan.hooks, pre, input, offset, j, ts, tid)?
    } else {
        input
    };
    let filtered: &[u8] = if plan.pipeline.forward_active() {
        grow(buf1, bsize);
        grow(buf2, bsize);
        let dref = if plan.is_vl() || j == 0 {
            None
        } else {
            Some((offset, plan.chunk_src()))
        };
        plan.pipeline.forward(staged, dref, buf1, buf2)?
    } else {
        staged
    };
    if plan.training {
        copy_bytes(&mut out[..filtered.len()], filtered);
        return Ok(Some((filtered.len(), filtered)));
    }
    let (mut n, destsize) = limit.unwrap_or((0, usize::MAX));
    let vl = plan.is_vl();
    let nstreams = if !plan.dont_split && !is_left { ts } else { 1 };
    let neblock = bsize / nstreams;
    *neblock_out = neblock;
    let disposable = plan.hooks.prefilter_output_is_disposable();
    // Write position in `out`.
    let mut p = 0usize;
    for s in 0..nstreams {
        let data = &filtered[s * neblock..(s + 1) * neblock];
        n += 4;
        if plan.runs() && disposable {
            out[p..p + 4].copy_from_slice(&0i32.to_le_bytes());
            p += 4;
            streams.push(Stream::Zero);
            continue;
        }
        if plan.runs() && is_run(data) {
            let v = data[0];
            if n > destsize {
                return Ok(None);
            }
            out[p..p + 4].copy_from_slice(&(-(v as i32)).to_le_bytes());
            p += 4;
            if v == 0 {
                streams.push(Stream::Zero);
            } else {
                n += 1;
                if n > destsize {
                    return Ok(None);
                }
                out[p] = 1;
                p += 1;
                streams.push(Stream::Run);
            }
            continue;
        }
        let mut maxout = neblock;
        if n.saturating_add(maxout) > destsize {
            if destsize <= n {
                return Ok(None);
            }
            maxout = destsize - n;
        }
        let body = p + 4;
        let c = if plan.clevel == 0 {
            0
        } else {
            compress_stream(plan, codec, data, &mut out[body..body + maxout])?
        };
        if c == 0 && n + neblock > destsize {
            return Ok(None);
        }
        n += if c == 0 { neblock } else { c };
        let csize = if c == 0 || vl { neblock } else { c };
        out[p..body].copy_from_slice(&(csize as i32).to_le_bytes());
        if c == 0 {
            if !defer_raw {
                copy_bytes(&mut out[body..body + neblock], data);
            }
            p = body + neblock;
            streams.push(Stream::Raw);
        } else {
            p = body + c;
            streams.push(Stream::Codec(c));
        }
    }
    Ok(Some((p, filtered)))
}

/// All bytes equal (c-blosc2's `get_run`; any length ≥ 1). Checks 32 bytes per step (most
/// streams tested are long zero runs, e.g. the high bytes of small integers).
fn is_run(data: &[u8]) -> bool {
    let Some(&first) = data.first() else {
        return false;
    };
    let word = u64::from_ne_bytes([first; 8]);
    let lane = |c: &[u8; 8]| u64::from_ne_bytes(*c) ^ word;
    let mut wide = data.chunks_exact(32);
    for c in &mut wide {
        let (a, rest) = c.split_first_chunk::<8>().unwrap();
        let (b, rest) = rest.split_first_chunk::<8>().unwrap();
        let (d, e) = rest.split_first_chunk::<8>().unwrap();
        let e: &[u8; 8] = e.try_into().unwrap();
        if lane(a) | lane(b) | lane(d) | lane(e) != 0 {
            return false;
        }
    }
    let mut narrow = wide.remainder().chunks_exact(8);
    for c in &mut narrow {
        if lane(c.try_into().unwrap()) != 0 {
            return false;
        }
    }
    narrow.remainder().iter().all(|&b| b == first)
}

/// One stream through the codec; 0 = store raw.
fn compress_stream(
    plan: &Plan<'_>,
    state: &mut CodecState,
    data: &[u8],
    dst: &mut [u8],
) -> Result<usize> {
    let cc = plan.compcode;
    let n = match cc {
        codecs::BLOSCLZ | codecs::LZ4 | codecs::LZ4HC | codecs::ZLIB | codecs::ZSTD => {
            codecs::compress(state, cc, plan.clevel, data, dst, plan.dict)?
        }
        _ => match plan
            .hooks
            .encode(cc, plan.compcode_meta, data, dst, plan.chunk_src())
        {
            None => return Err(Error::CodecSupport),
            Some(r) => {
                let n = r?;
                if n > dst.len() {
                    return Err(Error::WriteBuffer);
                }
                n
            }
        },
    };
    Ok(if n >= data.len() { 0 } else { n })
}

/// How far [`Compressor::run_parallel`] got.
enum Placed {
    /// Every block: (cbytes, every stream was a zero run).
    All(usize, bool),
    /// The chunk does not fit.
    NoFit,
    /// Blocks before `.0` are placed, up to byte `.1` (`.2`: all their streams were zero
    /// runs); block `.0` needs a room-limited encode.
    Upto(usize, usize, bool),
}

/// Why in-order placement stopped before the last block.
enum Stop {
    /// Block `next` does not fit: neither does the chunk.
    NoFit,
    /// Block `next` needs a room-limited encode ([`Fit::Redo`]).
    Redo,
    /// Encoding block `next` failed.
    Failed(Error),
}

/// What the workers of one [`Compressor::run_parallel`] share, behind one mutex held only to
/// claim output, never while encoding or copying. Blocks are placed strictly in index order,
/// so every block lands where the serial writer would put it.
struct Order<'d> {
    /// First block not placed yet.
    next: usize,
    /// Where it goes.
    nt: usize,
    /// The chunk from `nt` up to `destsize`, not handed out yet.
    rest: &'d mut [u8],
    /// Blocks encoded while an earlier one was not placed yet, with their index.
    pending: Vec<(usize, BlockOut)>,
    /// Free buffers for workers that left theirs in `pending`.
    spares: Vec<BlockOut>,
    /// Start of each placed block (bstarts).
    starts: Vec<usize>,
    all_zero: bool,
    stop: Option<Stop>,
}

impl<'d> Order<'d> {
    /// Claims the output for block `next`, encoded in `o`, if it passes c-blosc2's serial fit
    /// checks where it lands; else records why not (for good: nothing is placed after that).
    fn reserve(&mut self, o: &BlockOut, destsize: usize) -> Option<&'d mut [u8]> {
        if self.stop.is_some() {
            return None;
        }
        let stop = match o.result {
            Some(Ok(())) => match check_fit(o, self.nt, destsize, false) {
                (Fit::Yes, zero) => {
                    self.all_zero &= zero;
                    self.starts.push(self.nt);
                    let (piece, rest) = std::mem::take(&mut self.rest).split_at_mut(o.len);
                    self.rest = rest;
                    self.nt += o.len;
                    self.next += 1;
                    return Some(piece);
                }
                (Fit::No, _) => Stop::NoFit,
                (Fit::Redo, _) => Stop::Redo,
            },
            Some(Err(e)) => Stop::Failed(e),
            None => Stop::Failed(Error::Failure),
        };
        self.stop = Some(stop);
        None
    }
}

/// Places the blocks left waiting in `order` that have become next in line, one by one (each
/// copied outside the lock, so other workers keep claiming blocks meanwhile); false when
/// placement stopped.
fn place_waiting(order: &Mutex<Order<'_>>, destsize: usize) -> bool {
    let mut done: Option<BlockOut> = None;
    loop {
        let mut st = lock(order);
        if let Some(o) = done.take() {
            st.spares.push(o);
        }
        if st.stop.is_some() {
            return false;
        }
        let next = st.next;
        let Some(i) = st.pending.iter().position(|&(k, _)| k == next) else {
            return true;
        };
        let (_, o) = st.pending.swap_remove(i);
        let piece = st.reserve(&o, destsize);
        drop(st);
        if let Some(piece) = piece {
            copy_bytes(piece, o.encoded());
        }
        done = Some(o);
    }
}

/// Outcome of laying out one block.
#[derive(PartialEq, Eq)]
enum Fit {
    /// Copied.
    Yes,
    /// The chunk does not fit.
    No,
    /// A codec stream would get less room than `neblock` here: encode the block again with
    /// that limit (see [`encode_block`]) and retry.
    Redo,
}

/// c-blosc2's serial fit checks for block `o` landing at `nt`, stream by stream; on
/// [`Fit::Yes`] also whether every stream is a zero run.
/// `exact`: the block was encoded for this position (no [`Fit::Redo`]).
fn check_fit(o: &BlockOut, nt: usize, destsize: usize, exact: bool) -> (Fit, bool) {
    let neblock = o.neblock;
    let mut n = nt;
    let mut zero = true;
    for s in &o.streams {
        n += 4;
        match *s {
            Stream::Zero => {
                if n > destsize {
                    return (Fit::No, false);
                }
            }
            Stream::Run => {
                zero = false;
                n += 1;
                if n > destsize {
                    return (Fit::No, false);
                }
            }
            Stream::Raw => {
                zero = false;
                if n + neblock > destsize {
                    return (Fit::No, false);
                }
                n += neblock;
            }
            Stream::Codec(c) => {
                zero = false;
                if n + neblock > destsize {
                    if destsize <= n || c > destsize - n {
                        return (Fit::No, false);
                    }
                    if !exact {
                        return (Fit::Redo, false);
                    }
                }
                n += c;
            }
        }
    }
    debug_assert_eq!(n - nt, o.len);
    (Fit::Yes, zero)
}

/// The pipeline a 16-byte (Blosc1) header can express, in the slots its reader assumes: at most
/// one DELTA (slot 4) followed by at most one SHUFFLE or BITSHUFFLE (slot 5), with no filter
/// meta. `None` when `filters` needs the extended header.
fn blosc1_pipeline(filters: &[u8; 6], meta: &[u8; 6]) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut seen_delta = false;
    let mut seen_shuffle = false;
    for (&f, &m) in filters.iter().zip(meta) {
        match f {
            crate::filters::NOFILTER => continue,
            crate::filters::DELTA if !seen_delta && !seen_shuffle && m == 0 => {
                seen_delta = true;
                out[4] = f;
            }
            crate::filters::SHUFFLE | crate::filters::BITSHUFFLE if !seen_shuffle && m == 0 => {
                seen_shuffle = true;
                out[5] = f;
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::is_run;

    #[test]
    fn is_run_checks_every_byte() {
        assert!(!is_run(&[]));
        for len in 1..=100usize {
            let v = vec![7u8; len];
            assert!(is_run(&v), "{len}");
            // One odd byte anywhere (a lone byte is always a run).
            for at in (0..len).filter(|_| len > 1) {
                let mut w = v.clone();
                w[at] = 8;
                assert!(!is_run(&w), "{len} {at}");
            }
        }
    }
}
