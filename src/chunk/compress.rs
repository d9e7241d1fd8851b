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
use std::sync::{Arc, Mutex};

/// Per-worker state: codec contexts and scratch buffers, reused across blocks and calls.
#[derive(Default)]
struct Worker {
    codec: CodecState,
    buf1: Vec<u8>,
    buf2: Vec<u8>,
    pre: Vec<u8>,
}

/// Below this many encoded bytes, blocks encoded in parallel are copied into the chunk by the
/// caller: another round trip through the pool would cost more than the copy.
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
}

impl BlockOut {
    fn encoded(&self) -> &[u8] {
        &self.bytes[..self.len]
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
    outs: Vec<Mutex<BlockOut>>,
    /// Sizes of the blocks [`Compressor::layout_parallel`] places (kept for the allocation).
    lens: Vec<usize>,
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

/// Where each block of `lens` starts when they are laid out one after another from `start`.
fn pos(start: usize, lens: &[usize]) -> impl Iterator<Item = usize> + '_ {
    lens.iter().scan(start, |at, &len| {
        let here = *at;
        *at += len;
        Some(here)
    })
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
            lens: Vec::new(),
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
            body.copy_from_slice(src);
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
            out.copy_from_slice(&staged[..out.len()]);
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
            let r = encode_block_out(plan, &mut w, j, tid, &mut o, None).map(|_| ());
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
        let mut nt = start;
        let mut all_zero = plan.dict.is_none() && !plan.is_vl();
        if self.outs.is_empty() {
            self.outs.push(Mutex::new(BlockOut::default()));
        }
        let parallel = self.cp.nthreads > 1 && plan.nblocks > 1;
        if parallel {
            self.encode_blocks(plan)?;
            if let Some(done) = self.layout_parallel(plan, dst, start, destsize)? {
                return Ok(Some(done));
            }
        }
        let mut w = lock(&self.workers[0]);
        for j in 0..plan.nblocks {
            let mut o = lock(&self.outs[if parallel { j } else { 0 }]);
            if parallel {
                o.result.take().unwrap_or(Err(Error::Failure))?;
            } else if !plan.training {
                // Serial: encode straight into the chunk, as c-blosc2's serial writer does.
                // With room for the worst case no stream can fail a fit check; otherwise each
                // stream gets only the room left, which is what `place` + `Fit::Redo` would
                // end up with (same bytes, one copy fewer).
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
                } = &mut *o;
                let out = &mut dst[nt..destsize];
                let Some(len) = encode_block(plan, &mut w, j, 0, out, streams, neblock, limit)?
                else {
                    return Ok(None);
                };
                dst[bpos..bpos + 4].copy_from_slice(&(nt as i32).to_le_bytes());
                nt += len;
                all_zero &= o.streams.iter().all(|s| *s == Stream::Zero);
                continue;
            } else {
                encode_block_out(plan, &mut w, j, 0, &mut o, None)?;
            }
            match place(plan, &o, j, dst, &mut nt, destsize, &mut all_zero, false) {
                Fit::Yes => {}
                Fit::No => return Ok(None),
                Fit::Redo => {
                    if !encode_block_out(plan, &mut w, j, 0, &mut o, Some((nt, destsize)))? {
                        return Ok(None);
                    }
                    if place(plan, &o, j, dst, &mut nt, destsize, &mut all_zero, true) != Fit::Yes {
                        return Ok(None);
                    }
                }
            }
        }
        Ok(Some((nt, all_zero)))
    }

    /// Lays out blocks encoded in parallel with the copies on the pool too, when every block
    /// passes the serial fit checks where it lands (the usual case); `None` otherwise (nothing
    /// written: the caller then places the blocks one by one, re-encoding where needed).
    fn layout_parallel(
        &mut self,
        plan: &Plan<'_>,
        dst: &mut [u8],
        start: usize,
        destsize: usize,
    ) -> Result<Option<(usize, bool)>> {
        let n = plan.nblocks;
        let mut all_zero = plan.dict.is_none() && !plan.is_vl();
        let mut nt = start;
        let mut lens = std::mem::take(&mut self.lens);
        lens.clear();
        for o in &self.outs[..n] {
            let o = lock(o);
            match o.result {
                Some(Ok(())) => {}
                Some(Err(e)) => return Err(e),
                None => return Err(Error::Failure),
            }
            let (fit, zero) = check_fit(&o, nt, destsize, false);
            if fit != Fit::Yes {
                return Ok(None);
            }
            all_zero &= zero;
            lens.push(o.len);
            nt += o.len;
        }
        let mut at = start;
        for (j, len) in lens.iter().enumerate() {
            let bpos = plan.hlen + 4 * j;
            dst[bpos..bpos + 4].copy_from_slice(&(at as i32).to_le_bytes());
            at += len;
        }
        if nt - start < PARALLEL_COPY_MIN {
            for (o, (len, at)) in self.outs[..n]
                .iter()
                .zip(lens.iter().zip(pos(start, &lens)))
            {
                dst[at..at + len].copy_from_slice(lock(o).encoded());
            }
            self.lens = lens;
            return Ok(Some((nt, all_zero)));
        }
        let mut pieces: Vec<Mutex<&mut [u8]>> = recycle(std::mem::take(&mut self.pieces));
        pieces.reserve(n);
        let mut rest = &mut dst[start..nt];
        for &len in &lens {
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut(len);
            pieces.push(Mutex::new(piece));
            rest = tail;
        }
        self.lens = lens;
        let outs = &self.outs[..n];
        let job = |j: usize| {
            let o = lock(&outs[j]);
            lock(&pieces[j]).copy_from_slice(o.encoded());
        };
        let r = run_jobs(
            plan.hooks,
            &mut self.pool,
            self.cp.nthreads as usize,
            n,
            &job,
        );
        self.pieces = recycle(pieces);
        r?;
        Ok(Some((nt, all_zero)))
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
fn encode_block_out(
    plan: &Plan<'_>,
    w: &mut Worker,
    j: usize,
    tid: usize,
    out: &mut BlockOut,
    limit: Option<(usize, usize)>,
) -> Result<bool> {
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
        ..
    } = out;
    *len = 0;
    match encode_block(plan, w, j, tid, bytes, streams, neblock, limit)? {
        Some(n) => {
            *len = n;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// [`encode_block_out`] into `out` (at least [`block_bound`] bytes, or the block size when
/// training); returns the bytes written, `None` when the block does not fit `limit`.
#[allow(clippy::too_many_arguments)]
fn encode_block(
    plan: &Plan<'_>,
    w: &mut Worker,
    j: usize,
    tid: usize,
    out: &mut [u8],
    streams: &mut Vec<Stream>,
    neblock_out: &mut usize,
    limit: Option<(usize, usize)>,
) -> Result<Option<usize>> {
    let (input, offset, is_left) = plan.block(j);
    let bsize = input.len();
    let ts = plan.typesize;
    streams.clear();
    let Worker {
        codec,
        buf1,
        buf2,
        pre,
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
        out[..filtered.len()].copy_from_slice(filtered);
        return Ok(Some(filtered.len()));
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
            out[body..body + neblock].copy_from_slice(data);
            p = body + neblock;
            streams.push(Stream::Raw);
        } else {
            p = body + c;
            streams.push(Stream::Codec(c));
        }
    }
    Ok(Some(p))
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

/// Copies block `j`'s encoded streams to `dst` at `*nt`, applying c-blosc2's serial
/// fit checks stream by stream ([`check_fit`]).
#[allow(clippy::too_many_arguments)]
fn place(
    plan: &Plan<'_>,
    o: &BlockOut,
    j: usize,
    dst: &mut [u8],
    nt: &mut usize,
    destsize: usize,
    all_zero: &mut bool,
    exact: bool,
) -> Fit {
    let (fit, zero) = check_fit(o, *nt, destsize, exact);
    if fit != Fit::Yes {
        return fit;
    }
    let bpos = plan.hlen + 4 * j;
    let len = o.len;
    dst[bpos..bpos + 4].copy_from_slice(&(*nt as i32).to_le_bytes());
    dst[*nt..*nt + len].copy_from_slice(o.encoded());
    *nt += len;
    *all_zero &= zero;
    Fit::Yes
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
