//! The chunk reader: whole chunks, item ranges (getitem), single blocks and VL blocks.
//!
//! Reads every chunk c-blosc2 writes: 16-byte Blosc1 headers (versions 1-4, legacy filter
//! flags), 32-byte headers (versions 5 and 6), bstarts in any order, dictionaries, the four
//! stream encodings, memcpyed and special chunks, VL blocks. [`prepare`] validates the header and
//! the offsets tables once (with c-blosc2's error codes); the block decoder then checks every
//! stream size against the bytes that are really there.

use super::copy::{copy_bytes, copy_parallel, PARALLEL_COPY_MIN};
use super::header::{rd_i32, ChunkHeader, SpecialKind, MAX_DICT_SIZE};
use super::lazy::{LazySource, Trailer};
use super::par::{lock, states};
use super::pipeline::Pipeline;
use super::{special, DParams, Hooks, PostfilterArgs};
use crate::codecs::{self, dict::DecompressDict, CodecState};
use crate::error::{Error, Result};
use crate::pool::{Pool, Runner, Threads};
use crate::sys::Out;
use std::sync::{Arc, Mutex};

mod block;
mod layout;
mod lazy;

use block::*;
use layout::*;
pub use lazy::LazyDecoder;
use lazy::{lazy_vl_block, materialise, zeroed};

/// A block to decode in parallel: index, destination, outcome.
type BlockJob<'d> = (usize, Out<'d>, Option<Result<()>>);
/// An empty list with `v`'s allocation, for elements of another lifetime (same layout, so the
/// standard library collects in place): per-call job lists of borrowed pieces then allocate
/// only when they outgrow every earlier one.
pub(super) fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter()
        .map(|_| unreachable!("the list is empty"))
        .collect()
}

/// A VL block decoded in parallel: its buffer and outcome.
type VlJob = (Vec<u8>, Option<Result<()>>);

/// `blosc2_vlchunk_get_nblocks`: number of blocks of a VL-block chunk (`InvalidParam` for
/// other chunks).
pub fn vlchunk_nblocks(src: &[u8]) -> Result<i32> {
    let h = ChunkHeader::read(src, true)?;
    if !h.is_vl() {
        return Err(Error::InvalidParam);
    }
    Ok(h.blocksize)
}

/// Decodes every (unmasked) block of `lay` into `dst` (nbytes long). `dref_buf`: where block 0
/// is decoded when DELTA needs it as the reference; `jobs_buf`: the parallel job list's kept
/// allocation. A new `dst` (see [`Out`]) is written block by block, never zeroed as a whole
/// first; masked blocks of a new `dst` are zeroed.
#[allow(clippy::too_many_arguments)]
fn decode_all(
    threads: &mut Threads,
    workers: &mut [Mutex<Worker>],
    dref_buf: &mut Vec<u8>,
    jobs_buf: &mut Vec<Mutex<BlockJob<'static>>>,
    lay: &Layout<'_>,
    mut dst: Out<'_>,
    mask: Option<&[bool]>,
) -> Result<()> {
    let masked = |j: usize| mask.is_some_and(|m| m[j]);
    let post = lay.hooks.has_postfilter();
    if lay.memcpyed && lay.special == SpecialKind::None && mask.is_none() && !post {
        // One copy for the whole chunk (one piece per thread when large): per-block jobs would
        // only add thread hand-offs.
        if let Some(lz) = &lay.lazy {
            return lz.read(lay.hlen as u64, dst.bytes());
        }
        let s = lay
            .src
            .get(lay.hlen..lay.hlen + dst.len())
            .ok_or(Error::ReadBuffer)?;
        if lay.nblocks < 2 || dst.len() < PARALLEL_COPY_MIN {
            dst.copy_from(s);
            return Ok(());
        }
        return copy_parallel(threads, dst, s);
    }
    let mut first = 0;
    if lay.needs_dref() {
        let (_, bs0, _) = lay.block(0);
        dref_buf.clear();
        dref_buf.resize(bs0, 0);
        decode_block(lay, own_worker(workers), 0, dref_buf, None, 0, false)?;
        let (mut head, rest) = dst.split_at(bs0);
        dst = rest;
        if !masked(0) {
            if post {
                let mut args = PostfilterArgs {
                    input: dref_buf,
                    output: head.bytes(),
                    size: bs0 as i32,
                    typesize: lay.h.typesize as i32,
                    offset: 0,
                    nblock: 0,
                    tid: 0,
                };
                lay.hooks
                    .postfilter(&mut args)
                    .map_err(|_| Error::Postfilter)?;
            } else {
                head.copy_from(dref_buf);
            }
        }
        first = 1;
    }
    let dref: Option<&[u8]> = if first == 1 { Some(dref_buf) } else { None };
    let todo = (first..lay.nblocks).filter(|&j| !masked(j)).count();
    // `dst` starts at block `first`.
    if threads.count() > 1 && todo > 1 {
        // Split the destination into per-block pieces, one job each.
        let mut jobs: Vec<Mutex<BlockJob<'_>>> = recycle(std::mem::take(jobs_buf));
        jobs.reserve(todo);
        let mut rest = dst;
        for j in first..lay.nblocks {
            let (_, size, _) = lay.block(j);
            let (piece, tail) = rest.split_at(size);
            rest = tail;
            if !masked(j) {
                jobs.push(Mutex::new((j, piece, None)));
            }
        }
        let workers = &*workers;
        let job = |tid: usize, i: usize| {
            let mut w = lock(&workers[tid]);
            let mut g = lock(&jobs[i]);
            let (j, piece, res) = &mut *g;
            *res = Some(decode_block_out(lay, &mut w, *j, piece, dref, tid, true));
        };
        threads.for_each(todo, &job)?;
        let mut res = Ok(());
        for m in jobs.drain(..) {
            let (_, _, r) = m.into_inner().unwrap_or_else(|e| e.into_inner());
            if res.is_ok() {
                res = r.unwrap_or(Err(Error::Failure));
            }
        }
        *jobs_buf = recycle(jobs);
        res?;
    } else {
        // On the calling thread, block after block (no job list, no locks).
        let w = own_worker(workers);
        let mut rest = dst;
        for j in first..lay.nblocks {
            let (off, size, _) = lay.block(j);
            debug_assert_eq!(off + rest.len(), lay.h.nbytes.max(0) as usize);
            let (mut piece, tail) = rest.split_at(size);
            rest = tail;
            if !masked(j) {
                decode_block_out(lay, w, j, &mut piece, dref, 0, true)?;
            }
        }
    }
    Ok(())
}

/// Reads chunks. Owns codec states, scratch and its [`Threads`].
pub struct Decompressor {
    hooks: Arc<dyn Hooks>,
    threads: Threads,
    /// One state per thread, indexed by the worker id of each job.
    workers: Vec<Mutex<Worker>>,
    maskout: Option<Vec<bool>>,
    dref: Vec<u8>,
    /// The allocation of the last parallel job list (empty), reused by the next.
    jobs: Vec<Mutex<BlockJob<'static>>>,
    scratch: Vec<u8>,
}

impl std::fmt::Debug for Decompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decompressor")
            .field("dparams", &self.dparams())
            .finish()
    }
}

impl Decompressor {
    /// A decompressor; `nthreads` must be ≥ 1 (`InvalidParam`).
    pub fn new(dparams: DParams, hooks: Arc<dyn Hooks>) -> Result<Decompressor> {
        let threads = Threads::new(dparams.nthreads)?;
        Ok(Decompressor {
            hooks: super::plugins::Plugins::new(hooks, 1),
            workers: states(threads.count()),
            threads,
            maskout: None,
            dref: Vec::new(),
            jobs: Vec::new(),
            scratch: Vec::new(),
        })
    }

    /// The parameters in use.
    pub fn dparams(&self) -> DParams {
        DParams {
            nthreads: self.threads.count() as i16,
        }
    }

    /// Replaces the parameters (a different `nthreads` drops the current pool).
    pub fn set_dparams(&mut self, dparams: DParams) -> Result<()> {
        if self.threads.set_count(dparams.nthreads)? {
            self.workers = states(self.threads.count());
        }
        Ok(())
    }

    /// Uses `pool`'s workers as helper threads (shared with other contexts; see
    /// [`Threads::set_pool`]).
    pub fn set_pool(&mut self, pool: Arc<Pool>) -> Result<()> {
        self.threads.set_pool(pool)
    }

    /// Runs parallel decoding on `runner` (see [`Threads::set_runner`]).
    pub fn set_runner(&mut self, runner: Arc<dyn Runner>) {
        self.threads.set_runner(runner);
    }

    /// Whether worker threads have been started or set (for tests of when they start).
    pub fn pool_started(&self) -> bool {
        self.threads.is_started()
    }

    /// `blosc2_set_maskout`: blocks whose entry is `true` are skipped (their part of the
    /// destination is left as it is) by the next [`Decompressor::decompress`] only. The mask
    /// length must equal the chunk's number of blocks (else that call fails with `Data`).
    pub fn set_maskout(&mut self, mask: &[bool]) {
        self.maskout = Some(mask.to_vec());
    }

    /// Decodes a whole chunk into `dst`; returns nbytes. `dst` must hold nbytes
    /// (`WriteBuffer`).
    pub fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        self.decompress_from(src, Out::init(dst), None)
    }

    /// Decodes a whole chunk into a new vector of its nbytes. The vector is written block by
    /// block as it is decoded, not zeroed first (see [`Out`]), except for special chunks, whose
    /// vector comes zeroed from the allocator (a zero chunk then touches no memory).
    pub fn decompress_to_vec(&mut self, src: &[u8]) -> Result<Vec<u8>> {
        let h = ChunkHeader::read(src, true)?;
        // nbytes is the chunk's claim, bounded by what the allocator gives.
        let nbytes = h.nbytes.max(0) as usize;
        if h.special_code() != 0 {
            let mut v = crate::sys::try_zeroed(nbytes).ok_or(Error::MemoryAlloc)?;
            let n = self.decompress(src, &mut v)?;
            v.truncate(n);
            return Ok(v);
        }
        crate::sys::fill_new(nbytes, |out| self.decompress_from(src, out, None))
            .ok_or(Error::MemoryAlloc)?
    }

    /// Reads lazy chunks (from `blosc2_schunk_get_lazychunk`) through `source`, the frame they
    /// came from; other chunks decode as without it.
    pub fn with_source<'s>(&'s mut self, source: &'s dyn LazySource) -> LazyDecoder<'s> {
        LazyDecoder { d: self, source }
    }

    fn decompress_from(
        &mut self,
        src: &[u8],
        dst: Out<'_>,
        source: Option<&dyn LazySource>,
    ) -> Result<usize> {
        if let Some(source) = source {
            if self.maskout.is_none() && super::lazy::needs_source(src) {
                // Every block is needed: one read of the whole stored chunk.
                let whole = materialise(src, source)?;
                return self.decompress_from(&whole, dst, None);
            }
        }
        let mask = self.maskout.take();
        // Field borrows, not an `Arc` clone of the hooks: no atomic traffic per chunk.
        let Decompressor {
            hooks,
            threads,
            workers,
            dref,
            jobs,
            ..
        } = self;
        let prepared = prepare(
            src,
            &**hooks,
            Some(dst.len()),
            mask.as_ref().map(|m| m.len()),
            source,
        );
        // Borrowed in place, not moved out of the `Result`: the layout is a few hundred bytes
        // and this is the per-chunk fixed cost of small chunks (`prepare(..)?` then
        // `as_ref()` still copies part of it: 154 vs 141 stores per call, callgrind).
        let lay = match &prepared {
            Ok(Some(lay)) => lay,
            Ok(None) => return Ok(0),
            Err(e) => return Err(*e),
        };
        // A negative nbytes (forged) means no blocks: c-blosc2 then reports 0 bytes.
        let nbytes = lay.h.nbytes.max(0) as usize;
        if nbytes > dst.len() {
            return Err(Error::WriteBuffer);
        }
        let (dst, _) = dst.split_at(nbytes);
        decode_all(threads, workers, dref, jobs, lay, dst, mask.as_deref())?;
        Ok(nbytes)
    }

    /// `blosc2_getitem_ctx`: decodes items `start..start+nitems` (in units of the chunk's
    /// header typesize) into `dst`, decoding only the blocks that hold them; returns the
    /// number of bytes written.
    pub fn getitem(
        &mut self,
        src: &[u8],
        start: i32,
        nitems: i32,
        dst: &mut [u8],
    ) -> Result<usize> {
        self.getitem_from(src, start, nitems, dst, None)
    }

    fn getitem_from(
        &mut self,
        src: &[u8],
        start: i32,
        nitems: i32,
        dst: &mut [u8],
        source: Option<&dyn LazySource>,
    ) -> Result<usize> {
        let h = ChunkHeader::read(src, true)?;
        if h.is_vl() {
            return Err(Error::InvalidParam);
        }
        self.getitem_with_header(&h, src, start, nitems, dst, source)
    }

    /// `blosc2_getitem_bytes_ctx`: like [`Decompressor::getitem`] with a byte range; `start`
    /// and `nbytes` must be multiples of the chunk's header typesize.
    pub fn getitem_bytes(
        &mut self,
        src: &[u8],
        start: i32,
        nbytes: i32,
        dst: &mut [u8],
    ) -> Result<usize> {
        self.getitem_bytes_from(src, start, nbytes, dst, None)
    }

    fn getitem_bytes_from(
        &mut self,
        src: &[u8],
        start: i32,
        nbytes: i32,
        dst: &mut [u8],
        source: Option<&dyn LazySource>,
    ) -> Result<usize> {
        let h = ChunkHeader::read(src, true)?;
        if h.is_vl() {
            return Err(Error::InvalidParam);
        }
        if start < 0 || nbytes < 0 {
            return Err(Error::InvalidParam);
        }
        let ts = h.typesize as i32;
        if start % ts != 0 || nbytes % ts != 0 {
            return Err(Error::InvalidParam);
        }
        self.getitem_with_header(&h, src, start / ts, nbytes / ts, dst, source)
    }

    fn getitem_with_header(
        &mut self,
        h: &ChunkHeader,
        src: &[u8],
        start: i32,
        nitems: i32,
        dst: &mut [u8],
        source: Option<&dyn LazySource>,
    ) -> Result<usize> {
        let lazy = h.is_lazy() && h.special_code() == 0;
        if lazy && source.is_none() {
            return Err(Error::InvalidParam);
        }
        if !lazy && h.cbytes as i64 > src.len() as i64 {
            return Err(Error::InvalidHeader);
        }
        if nitems == 0 {
            return Ok(0);
        }
        if nitems < 0 {
            return Err(Error::InvalidParam);
        }
        let ts = h.typesize as i64;
        let nb = nitems as i64 * ts;
        if nb > i32::MAX as i64 || nb > dst.len() as i64 {
            return Err(Error::WriteBuffer);
        }
        let start_b = start as i64 * ts;
        if start < 0 || start_b > h.nbytes as i64 {
            return Err(Error::InvalidParam);
        }
        let stop = start as i64 + nitems as i64;
        let stop_b = stop * ts;
        if stop > i32::MAX as i64 || stop_b > h.nbytes as i64 {
            return Err(Error::InvalidParam);
        }
        let (start_b, stop_b, nb) = (start_b as usize, stop_b as usize, nb as usize);
        let hlen = h.header_len();
        let code = h.special_code();
        let memcpyed = h.is_memcpyed();
        if code == 0 && !memcpyed && src.len() < hlen + 4 * h.nblocks().max(0) as usize {
            return Err(Error::ReadBuffer);
        }
        let out = &mut dst[..nb];
        if (code != 0 || memcpyed) && !self.hooks.has_postfilter() {
            match SpecialKind::from_code(code) {
                None => return Err(Error::SchunkSpecial),
                Some(SpecialKind::None) => {
                    let from = hlen + start_b;
                    match source.filter(|_| lazy) {
                        Some(source) => {
                            // In the stored chunk (memcpyed: nbytes + header long, checked
                            // against the header above and by the source).
                            if h.cbytes as i64 != h.nbytes as i64 + hlen as i64 {
                                return Err(Error::Data);
                            }
                            let t = Trailer::locate(src, h.nblocks().max(0) as usize)?;
                            source.read_lazy(t.nchunk, t.offset, from as u64, out)?;
                        }
                        None => {
                            let s = src.get(from..from + nb).ok_or(Error::ReadBuffer)?;
                            copy_bytes(out, s);
                        }
                    }
                }
                Some(kind) => special::fill(kind, src, h, out)?,
            }
            return Ok(nb);
        }
        // Field borrows (no `Arc` clone of the hooks), the layout borrowed in place and scratch
        // blocks reused without zeroing: getitem of a few items is all fixed cost.
        let Decompressor {
            hooks,
            workers,
            dref: dref_buf,
            scratch: block_buf,
            ..
        } = self;
        let prepared = prepare(src, &**hooks, None, None, source);
        let lay = match &prepared {
            Ok(Some(lay)) => lay,
            Ok(None) => return Err(Error::Data),
            Err(e) => return Err(*e),
        };
        let bs = lay.blocksize;
        let first = start_b / bs;
        let last = (stop_b - 1) / bs;
        let mut w = lock(&workers[0]);
        let has_dref = lay.needs_dref() && last > 0;
        let mut dref_block: &[u8] = &[];
        if has_dref {
            let (_, bs0, _) = lay.block(0);
            let d = scratch(dref_buf, bs0)?;
            decode_block(lay, &mut w, 0, d, None, 0, false)?;
            dref_block = d;
        }
        let mut written = 0;
        for j in first..=last {
            let (off, size, _) = lay.block(j);
            let dref = (has_dref && j > 0).then_some(dref_block);
            let a = start_b.max(off) - off;
            let b = stop_b.min(off + size) - off;
            if a == 0 && b == size {
                // A whole block is wanted: decoded in place, not through the scratch block
                // (a copy of the block saved; b2nd reads whole blocks).
                decode_block(
                    lay,
                    &mut w,
                    j,
                    &mut out[written..written + size],
                    dref,
                    0,
                    true,
                )?;
            } else {
                let block = scratch(block_buf, size)?;
                decode_block(lay, &mut w, j, block, dref, 0, true)?;
                copy_bytes(&mut out[written..written + (b - a)], &block[a..b]);
            }
            written += b - a;
        }
        if written != nb {
            return Err(Error::Data);
        }
        Ok(nb)
    }

    /// `blosc2_decompress_block_ctx`: decodes block `nblock` of a regular chunk into `dst`;
    /// returns the block size.
    pub fn decompress_block(&mut self, src: &[u8], nblock: i32, dst: &mut [u8]) -> Result<usize> {
        self.decompress_block_from(src, nblock, dst, None)
    }

    fn decompress_block_from(
        &mut self,
        src: &[u8],
        nblock: i32,
        dst: &mut [u8],
        source: Option<&dyn LazySource>,
    ) -> Result<usize> {
        let h = ChunkHeader::read(src, true)?;
        if h.is_vl() {
            return Err(Error::InvalidParam);
        }
        let hooks = self.hooks.clone();
        let Some(lay) = prepare(src, &*hooks, None, None, source)? else {
            return Err(Error::InvalidParam);
        };
        if nblock < 0 || nblock as usize >= lay.nblocks {
            return Err(Error::InvalidParam);
        }
        let j = nblock as usize;
        let (_, size, _) = lay.block(j);
        if dst.len() < size {
            return Err(Error::WriteBuffer);
        }
        let mut w = lock(&self.workers[0]);
        let dref = if lay.needs_dref() && j > 0 {
            let (_, bs0, _) = lay.block(0);
            let d = scratch(&mut self.dref, bs0)?;
            decode_block(&lay, &mut w, 0, d, None, 0, false)?;
            Some(&*d)
        } else {
            None
        };
        decode_block(&lay, &mut w, j, &mut dst[..size], dref, 0, true)?;
        Ok(size)
    }

    /// `blosc2_vldecompress_ctx`: decodes every block of a VL-block chunk into its own buffer.
    pub fn vldecompress(&mut self, src: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.vldecompress_from(src, None)
    }

    fn vldecompress_from(
        &mut self,
        src: &[u8],
        source: Option<&dyn LazySource>,
    ) -> Result<Vec<Vec<u8>>> {
        let h = ChunkHeader::read(src, true)?;
        if !h.is_vl() {
            return Err(Error::InvalidParam);
        }
        if let Some(source) = source.filter(|_| super::lazy::needs_source(src)) {
            return self.vldecompress_from(&materialise(src, source)?, None);
        }
        let hooks = self.hooks.clone();
        let Some(lay) = prepare(src, &*hooks, None, None, None)? else {
            return Ok(Vec::new());
        };
        let vl = lay.vl.as_ref().ok_or(Error::Data)?;
        let n = vl.nbytes.len();
        if self.threads.count() > 1 && n > 1 {
            let workers = &self.workers;
            let jobs: Vec<Mutex<VlJob>> = vl
                .nbytes
                .iter()
                .map(|&b| Ok(Mutex::new((zeroed(b)?, None))))
                .collect::<Result<_>>()?;
            let lay_ref = &lay;
            let job = |tid: usize, j: usize| {
                let mut w = lock(&workers[tid]);
                let mut g = lock(&jobs[j]);
                let (o, res) = &mut *g;
                *res = Some(decode_block(lay_ref, &mut w, j, o, None, tid, true));
            };
            self.threads.for_each(n, &job)?;
            let mut outs = Vec::with_capacity(n);
            for m in jobs {
                let (o, r) = m.into_inner().unwrap_or_else(|e| e.into_inner());
                r.unwrap_or(Err(Error::Failure))?;
                outs.push(o);
            }
            Ok(outs)
        } else {
            let mut outs: Vec<Vec<u8>> = vl
                .nbytes
                .iter()
                .map(|&b| zeroed(b))
                .collect::<Result<_>>()?;
            let mut w = lock(&self.workers[0]);
            for (j, o) in outs.iter_mut().enumerate() {
                decode_block(&lay, &mut w, j, o, None, 0, true)?;
            }
            Ok(outs)
        }
    }

    /// `blosc2_vldecompress_block_ctx`: decodes block `nblock` of a VL-block chunk.
    pub fn vldecompress_block(&mut self, src: &[u8], nblock: i32) -> Result<Vec<u8>> {
        self.vldecompress_block_from(src, nblock, None)
    }

    fn vldecompress_block_from(
        &mut self,
        src: &[u8],
        nblock: i32,
        source: Option<&dyn LazySource>,
    ) -> Result<Vec<u8>> {
        let h = ChunkHeader::read(src, true)?;
        if !h.is_vl() {
            return Err(Error::InvalidParam);
        }
        if h.is_lazy() && h.special_code() == 0 {
            let source = source.ok_or(Error::InvalidParam)?;
            let one = lazy_vl_block(&h, src, nblock, source)?;
            return self.vldecompress_block_from(&one, 0, None);
        }
        let hooks = self.hooks.clone();
        let Some(lay) = prepare(src, &*hooks, None, None, None)? else {
            return Err(Error::InvalidParam);
        };
        if nblock < 0 || nblock as usize >= lay.nblocks {
            return Err(Error::InvalidParam);
        }
        let j = nblock as usize;
        let (_, size, _) = lay.block(j);
        let mut out = zeroed(size)?;
        let mut w = lock(&self.workers[0]);
        decode_block(&lay, &mut w, j, &mut out, None, 0, true)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
