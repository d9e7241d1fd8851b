//! The chunk reader: whole chunks, item ranges (getitem), single blocks and VL blocks.
//!
//! Reads every chunk c-blosc2 writes: 16-byte Blosc1 headers (versions 1-4, legacy filter
//! flags), 32-byte headers (versions 5 and 6), bstarts in any order, dictionaries, the four
//! stream encodings, memcpyed and special chunks, VL blocks. [`prepare`] validates the header and
//! the offsets tables once (with c-blosc2's error codes); the block decoder then checks every
//! stream size against the bytes that are really there.

use super::copy::copy_bytes;
use super::header::{blosc2_flags, rd_i32, ChunkHeader, SpecialKind, MAX_DICT_SIZE};
use super::lazy::{LazySource, Trailer};
use super::par::{acquire, lock, run_jobs};
use super::pipeline::Pipeline;
use super::{special, DParams, Hooks, PostfilterArgs};
use crate::codecs::{self, dict::DecompressDict, CodecState};
use crate::error::{Error, Result};
use crate::pool::Pool;
use std::sync::{Arc, Mutex};

mod block;
mod layout;

use block::*;
use layout::*;

/// A block to decode in parallel: index, destination, outcome.
type BlockJob<'d> = (usize, &'d mut [u8], Option<Result<()>>);
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
/// allocation.
#[allow(clippy::too_many_arguments)]
fn decode_all(
    dp: &DParams,
    pool: &mut Option<Arc<Pool>>,
    workers: &mut [Mutex<Worker>],
    dref_buf: &mut Vec<u8>,
    jobs_buf: &mut Vec<Mutex<BlockJob<'static>>>,
    lay: &Layout<'_>,
    dst: &mut [u8],
    mask: Option<&[bool]>,
) -> Result<()> {
    let masked = |j: usize| mask.is_some_and(|m| m[j]);
    let post = lay.hooks.has_postfilter();
    if lay.memcpyed && lay.special == SpecialKind::None && mask.is_none() && !post {
        // One copy for the whole chunk: per-block jobs would only add thread hand-offs.
        if let Some(lz) = &lay.lazy {
            return lz.read(lay.hlen as u64, dst);
        }
        let s = lay
            .src
            .get(lay.hlen..lay.hlen + dst.len())
            .ok_or(Error::ReadBuffer)?;
        copy_bytes(dst, s);
        return Ok(());
    }
    let mut first = 0;
    if lay.needs_dref() {
        let (_, bs0, _) = lay.block(0);
        dref_buf.clear();
        dref_buf.resize(bs0, 0);
        decode_block(lay, own_worker(workers), 0, dref_buf, None, 0, false)?;
        if !masked(0) {
            if post {
                let mut args = PostfilterArgs {
                    input: dref_buf,
                    output: &mut dst[..bs0],
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
                copy_bytes(&mut dst[..bs0], dref_buf);
            }
        }
        first = 1;
    }
    let dref: Option<&[u8]> = if first == 1 { Some(dref_buf) } else { None };
    let todo = (first..lay.nblocks).filter(|&j| !masked(j)).count();
    if dp.nthreads > 1 && todo > 1 {
        // Split the destination into per-block pieces, one job each.
        let mut jobs: Vec<Mutex<BlockJob<'_>>> = recycle(std::mem::take(jobs_buf));
        jobs.reserve(todo);
        let mut rest = dst;
        for j in 0..lay.nblocks {
            let (_, size, _) = lay.block(j);
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut(size);
            rest = tail;
            if j >= first && !masked(j) {
                jobs.push(Mutex::new((j, piece, None)));
            }
        }
        let workers = &*workers;
        let job = |i: usize| {
            let (tid, mut w) = acquire(workers);
            let mut g = lock(&jobs[i]);
            let (j, piece, res) = &mut *g;
            *res = Some(decode_block(lay, &mut w, *j, piece, dref, tid, true));
        };
        run_jobs(lay.hooks, pool, dp.nthreads as usize, todo, &job)?;
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
        for j in 0..lay.nblocks {
            let (off, size, _) = lay.block(j);
            debug_assert_eq!(off + rest.len(), lay.h.nbytes.max(0) as usize);
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut(size);
            rest = tail;
            if j >= first && !masked(j) {
                decode_block(lay, w, j, piece, dref, 0, true)?;
            }
        }
    }
    Ok(())
}

/// Reads chunks. Owns codec states, scratch and (when `nthreads > 1`) a worker pool.
pub struct Decompressor {
    dp: DParams,
    hooks: Arc<dyn Hooks>,
    pool: Option<Arc<Pool>>,
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
            .field("dparams", &self.dp)
            .finish()
    }
}

impl Decompressor {
    /// A decompressor; `nthreads` must be ≥ 1 (`InvalidParam`).
    pub fn new(dparams: DParams, hooks: Arc<dyn Hooks>) -> Result<Decompressor> {
        if dparams.nthreads < 1 {
            return Err(Error::InvalidParam);
        }
        let n = dparams.nthreads as usize;
        Ok(Decompressor {
            dp: dparams,
            hooks: super::plugins::Plugins::new(hooks, 1),
            pool: None,
            workers: (0..n).map(|_| Mutex::new(Worker::default())).collect(),
            maskout: None,
            dref: Vec::new(),
            jobs: Vec::new(),
            scratch: Vec::new(),
        })
    }

    /// The parameters in use.
    pub fn dparams(&self) -> &DParams {
        &self.dp
    }

    /// Replaces the parameters (a different `nthreads` drops the current pool).
    pub fn set_dparams(&mut self, dparams: DParams) -> Result<()> {
        if dparams.nthreads < 1 {
            return Err(Error::InvalidParam);
        }
        if dparams.nthreads != self.dp.nthreads {
            self.pool = None;
            let n = dparams.nthreads as usize;
            self.workers = (0..n).map(|_| Mutex::new(Worker::default())).collect();
        }
        self.dp = dparams;
        Ok(())
    }

    /// Uses `pool` (shared with other contexts); its size must equal `nthreads`.
    pub fn set_pool(&mut self, pool: Arc<Pool>) -> Result<()> {
        if pool.nthreads() != self.dp.nthreads as usize {
            return Err(Error::InvalidParam);
        }
        self.pool = Some(pool);
        Ok(())
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
        self.decompress_from(src, dst, None)
    }

    /// Reads lazy chunks (from `blosc2_schunk_get_lazychunk`) through `source`, the frame they
    /// came from; other chunks decode as without it.
    pub fn with_source<'s>(&'s mut self, source: &'s dyn LazySource) -> LazyDecoder<'s> {
        LazyDecoder { d: self, source }
    }

    fn decompress_from(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
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
            dp,
            hooks,
            pool,
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
        decode_all(
            dp,
            pool,
            workers,
            dref,
            jobs,
            lay,
            &mut dst[..nbytes],
            mask.as_deref(),
        )?;
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
            let d = scratch(dref_buf, bs0);
            decode_block(lay, &mut w, 0, d, None, 0, false)?;
            dref_block = d;
        }
        let mut written = 0;
        for j in first..=last {
            let (off, size, _) = lay.block(j);
            let block = scratch(block_buf, size);
            let dref = (has_dref && j > 0).then_some(dref_block);
            decode_block(lay, &mut w, j, block, dref, 0, true)?;
            let a = start_b.max(off) - off;
            let b = stop_b.min(off + size) - off;
            copy_bytes(&mut out[written..written + (b - a)], &block[a..b]);
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
            self.dref.clear();
            self.dref.resize(bs0, 0);
            decode_block(&lay, &mut w, 0, &mut self.dref, None, 0, false)?;
            Some(&self.dref[..])
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
        if self.dp.nthreads > 1 && n > 1 {
            let workers = &self.workers;
            let jobs: Vec<Mutex<VlJob>> = vl
                .nbytes
                .iter()
                .map(|&b| Mutex::new((vec![0u8; b], None)))
                .collect();
            let lay_ref = &lay;
            let job = |j: usize| {
                let (tid, mut w) = acquire(workers);
                let mut g = lock(&jobs[j]);
                let (o, res) = &mut *g;
                *res = Some(decode_block(lay_ref, &mut w, j, o, None, tid, true));
            };
            run_jobs(
                lay.hooks,
                &mut self.pool,
                self.dp.nthreads as usize,
                n,
                &job,
            )?;
            let mut outs = Vec::with_capacity(n);
            for m in jobs {
                let (o, r) = m.into_inner().unwrap_or_else(|e| e.into_inner());
                r.unwrap_or(Err(Error::Failure))?;
                outs.push(o);
            }
            Ok(outs)
        } else {
            let mut outs: Vec<Vec<u8>> = vl.nbytes.iter().map(|&b| vec![0u8; b]).collect();
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
        let mut out = vec![0u8; size];
        let mut w = lock(&self.workers[0]);
        decode_block(&lay, &mut w, j, &mut out, None, 0, true)?;
        Ok(out)
    }
}

/// A [`Decompressor`] that reads lazy chunks through their frame (see
/// [`Decompressor::with_source`]). Other chunks decode as with the decompressor itself.
pub struct LazyDecoder<'s> {
    d: &'s mut Decompressor,
    source: &'s dyn LazySource,
}

impl LazyDecoder<'_> {
    /// [`Decompressor::decompress`]; a lazy chunk without a block mask is read in one piece.
    pub fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        self.d.decompress_from(src, dst, Some(self.source))
    }

    /// [`Decompressor::getitem`], reading only the blocks that hold the items.
    pub fn getitem(
        &mut self,
        src: &[u8],
        start: i32,
        nitems: i32,
        dst: &mut [u8],
    ) -> Result<usize> {
        self.d
            .getitem_from(src, start, nitems, dst, Some(self.source))
    }

    /// [`Decompressor::getitem_bytes`], reading only the blocks that hold the bytes.
    pub fn getitem_bytes(
        &mut self,
        src: &[u8],
        start: i32,
        nbytes: i32,
        dst: &mut [u8],
    ) -> Result<usize> {
        self.d
            .getitem_bytes_from(src, start, nbytes, dst, Some(self.source))
    }

    /// [`Decompressor::decompress_block`], reading only block `nblock` (and block 0 when DELTA
    /// needs it).
    pub fn decompress_block(&mut self, src: &[u8], nblock: i32, dst: &mut [u8]) -> Result<usize> {
        self.d
            .decompress_block_from(src, nblock, dst, Some(self.source))
    }

    /// [`Decompressor::vldecompress`].
    pub fn vldecompress(&mut self, src: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.d.vldecompress_from(src, Some(self.source))
    }

    /// [`Decompressor::vldecompress_block`], reading only block `nblock`.
    pub fn vldecompress_block(&mut self, src: &[u8], nblock: i32) -> Result<Vec<u8>> {
        self.d
            .vldecompress_block_from(src, nblock, Some(self.source))
    }
}

/// A buffer of `n` zero bytes, or `MemoryAlloc` (sizes come from caller buffers).
fn zeroed(n: usize) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::MemoryAlloc)?;
    v.resize(n, 0);
    Ok(v)
}

/// The stored chunk a lazy chunk stands for, read whole through `source`; its header must be
/// the lazy chunk's (lazy bit aside).
fn materialise(src: &[u8], source: &dyn LazySource) -> Result<Vec<u8>> {
    let h = ChunkHeader::read(src, true)?;
    let t = Trailer::locate(src, h.nblocks().max(0) as usize)?;
    let mut whole = zeroed(h.cbytes.max(0) as usize)?;
    source.read_lazy(t.nchunk, t.offset, 0, &mut whole)?;
    let mut head = [0u8; 32];
    head.copy_from_slice(&src[..32]);
    head[31] &= !blosc2_flags::LAZY;
    if whole.len() < 32 || whole[..32] != head {
        return Err(Error::InvalidHeader);
    }
    Ok(whole)
}

/// Block `nblock` of a lazy VL-block chunk as a complete one-block VL chunk (header, one
/// block start, the dictionary if any, the block's span read from storage), for the ordinary
/// decoder to check and decode. The trailer's csize must hold more than the block's size
/// field and lie inside the chunk (`InvalidHeader`, as c-blosc2 reports it).
fn lazy_vl_block(
    h: &ChunkHeader,
    src: &[u8],
    nblock: i32,
    source: &dyn LazySource,
) -> Result<Vec<u8>> {
    let nblocks = h.nblocks().max(0) as usize;
    let t = Trailer::locate(src, nblocks)?;
    if nblock < 0 || nblock as usize >= nblocks {
        return Err(Error::InvalidParam);
    }
    let j = nblock as usize;
    let cbytes = i64::from(h.cbytes);
    let table_end = 32 + 4 * nblocks as i64;
    let cs = t.csize(src, j) as i64;
    if cs <= 4 || cs > cbytes {
        return Err(Error::InvalidHeader);
    }
    let mut dict = Vec::new();
    if h.uses_dict() {
        let mut n = [0u8; 4];
        if table_end + 4 > cbytes {
            return Err(Error::InvalidHeader);
        }
        source.read_lazy(t.nchunk, t.offset, table_end as u64, &mut n)?;
        let dsize = i32::from_le_bytes(n);
        if dsize <= 0 || dsize > MAX_DICT_SIZE || table_end + 4 + dsize as i64 > cbytes {
            return Err(Error::CodecDict);
        }
        dict = zeroed(4 + dsize as usize)?;
        source.read_lazy(t.nchunk, t.offset, table_end as u64, &mut dict)?;
    }
    let bstart = rd_i32(src, 32 + 4 * j) as i64;
    if bstart < table_end + dict.len() as i64 || bstart + cs > cbytes {
        return Err(Error::InvalidHeader);
    }
    let mut span = zeroed(cs as usize)?;
    source.read_lazy(t.nchunk, t.offset, bstart as u64, &mut span)?;
    let nb = rd_i32(&span, 0);
    if nb <= 0 || nb > h.nbytes {
        return Err(Error::InvalidHeader);
    }
    let start = 36 + dict.len();
    let total = start + span.len();
    let total32 = i32::try_from(total).map_err(|_| Error::InvalidHeader)?;
    let mut one = Vec::with_capacity(total);
    one.extend_from_slice(&src[..32]);
    one[31] &= !blosc2_flags::LAZY;
    one[4..8].copy_from_slice(&nb.to_le_bytes());
    one[8..12].copy_from_slice(&1i32.to_le_bytes());
    one[12..16].copy_from_slice(&total32.to_le_bytes());
    one.extend_from_slice(&(start as i32).to_le_bytes());
    one.extend_from_slice(&dict);
    one.extend_from_slice(&span);
    Ok(one)
}

#[cfg(test)]
mod tests {
    use super::super::{no_hooks, CParams, Compressor, DParams};
    use super::{rd_i32, Decompressor};

    /// What one byte lane of the u32 test elements holds.
    #[derive(Clone, Copy)]
    enum Lane {
        Zero,
        Byte(u8),
        Noise,
        /// Noise in 0..4 (compressible: LZ4 streams, not raw ones).
        Small,
    }

    fn data(lanes: [Lane; 4], len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                match lanes[i % 4] {
                    Lane::Zero => 0,
                    Lane::Byte(b) => b,
                    Lane::Noise => x as u8,
                    Lane::Small => x as u8 & 3,
                }
            })
            .collect()
    }

    fn chunk(src: &[u8], compcode: u8) -> Vec<u8> {
        let cp = CParams {
            compcode,
            clevel: 5,
            typesize: 4,
            blocksize: 16 << 10,
            filters: [0, 0, 0, 0, 0, 1],
            ..Default::default()
        };
        let mut out = vec![0u8; src.len() + 64];
        let n = Compressor::new(cp, no_hooks())
            .unwrap()
            .compress(src, &mut out)
            .unwrap();
        out.truncate(n);
        out
    }

    /// Streams stored as a zero (csize 0) or run-length (csize < 0) fill, over all blocks.
    fn fill_streams(c: &[u8]) -> usize {
        let nbytes = rd_i32(c, 4) as usize;
        let bs = rd_i32(c, 8) as usize;
        let (memcpyed, dont_split) = (c[2] & 0x02 != 0, c[2] & 0x10 != 0);
        let mut n = 0;
        for j in (0..nbytes.div_ceil(bs)).filter(|_| !memcpyed) {
            let size = bs.min(nbytes - j * bs);
            let nstreams = if size == bs && !dont_split { 4 } else { 1 };
            let mut p = rd_i32(c, 32 + 4 * j) as usize;
            for _ in 0..nstreams {
                let cs = rd_i32(c, p);
                p += 4 + if cs > 0 {
                    cs as usize
                } else {
                    (cs < 0) as usize
                };
                n += (cs <= 0) as usize;
            }
        }
        n
    }

    #[test]
    fn fill_streams_left_in_scratch_are_reused_only_when_still_valid() {
        use Lane::*;
        let kinds = [
            [Noise, Zero, Zero, Zero],
            [Noise, Byte(7), Noise, Zero],
            [Noise, Byte(9), Zero, Byte(7)],
            [Noise, Noise, Noise, Noise],
            [Zero, Byte(7), Byte(7), Noise],
        ];
        // Whole blocks only, and a leftover block (one stream, at slot 0).
        for len in [64 << 10, (64 << 10) + 36] {
            for compcode in [0u8, 1, 5] {
                let srcs: Vec<Vec<u8>> = (0..kinds.len())
                    .map(|i| data(kinds[i], len, 11 + i as u64))
                    .collect();
                let chunks: Vec<Vec<u8>> = srcs.iter().map(|s| chunk(s, compcode)).collect();
                for (i, c) in chunks.iter().enumerate() {
                    // The fills this test is about are really in the chunks.
                    assert_eq!(fill_streams(c) > 0, i != 3, "chunk {i} codec {compcode}");
                }
                for nthreads in [1i16, 2] {
                    let mut d = Decompressor::new(DParams { nthreads }, no_hooks()).unwrap();
                    let mut out = vec![0u8; len];
                    for &i in &[0usize, 1, 0, 2, 1, 3, 0, 2, 2, 4, 0, 4, 1] {
                        out.fill(0xEE);
                        assert_eq!(d.decompress(&chunks[i], &mut out).unwrap(), len);
                        assert!(out == srcs[i], "chunk {i} codec {compcode} thr {nthreads}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_damaged_stream_over_a_cached_fill_is_not_trusted_afterwards() {
        use Lane::*;
        let len = 64 << 10;
        let a = data([Noise, Zero, Zero, Zero], len, 1);
        let b = data([Small, Small, Small, Small], len, 2);
        let (ca, cb) = (chunk(&a, 1), chunk(&b, 1));
        let mut d = Decompressor::new(DParams { nthreads: 1 }, no_hooks()).unwrap();
        let mut out = vec![0u8; len];
        d.decompress(&ca, &mut out).unwrap();
        assert!(out == a);
        // `b` is stored as streams (not one memcpyed chunk), none of them a fill.
        assert!(fill_streams(&ca) > 0 && fill_streams(&cb) == 0 && cb[2] & 0x02 == 0);
        // Garbage in the payload of block 0's stream 1 (headers intact): the decode fails or
        // writes junk into the slot where `a`'s zero fill was.
        let p = rd_i32(&cb, 32) as usize;
        let at = p + 8 + rd_i32(&cb, p) as usize;
        let cs1 = rd_i32(&cb, at - 4) as usize;
        for step in [3usize, 7, 13, 101] {
            let mut bad = cb.clone();
            for k in (at + cs1 / 4..at + cs1).step_by(step) {
                bad[k] ^= 0x5A;
            }
            let _ = d.decompress(&bad, &mut out);
            d.decompress(&ca, &mut out).unwrap();
            assert!(out == a, "step {step}");
        }
    }

    #[test]
    fn raw_copies_are_exact_wherever_the_chunk_and_destination_sit() {
        use Lane::*;
        // Raw streams (noise lanes) next to LZ4 ones, and a memcpyed chunk (all noise), read
        // from every offset 0..80 of one buffer: the copies meet every distance modulo 4096
        // (`copy_bytes` cuts those at 1..63 into pieces), whole chunks, getitem ranges.
        let len = (64 << 10) + 36;
        for (lanes, memcpyed) in [([Noise, Small, Noise, Zero], false), ([Noise; 4], true)] {
            let src = data(lanes, len, 5);
            let c = chunk(&src, 1);
            assert_eq!(c[2] & 0x02 != 0, memcpyed);
            if !memcpyed {
                // Block 0 (16 KiB, 4 streams of 4 KiB) holds raw streams.
                let mut p = rd_i32(&c, 32) as usize;
                let mut raw = 0;
                for _ in 0..4 {
                    let cs = rd_i32(&c, p);
                    raw += (cs == 4096) as usize;
                    p += 4 + cs.max(0) as usize + (cs < 0) as usize;
                }
                assert_eq!(raw, 2);
            }
            let mut d = Decompressor::new(DParams { nthreads: 1 }, no_hooks()).unwrap();
            let mut buf = vec![0u8; c.len() + 80];
            let mut out = vec![0u8; len + 80];
            for shift in 0..80 {
                buf[shift..shift + c.len()].copy_from_slice(&c);
                out.fill(0xEE);
                let n = d
                    .decompress(&buf[shift..shift + c.len()], &mut out[79 - shift..][..len])
                    .unwrap();
                assert_eq!(n, len);
                assert!(out[79 - shift..][..len] == src[..], "shift {shift}");
                let (start, nitems) = (shift as i32 * 97, 5000);
                let at = start as usize * 4;
                let got = d
                    .getitem(
                        &buf[shift..shift + c.len()],
                        start,
                        nitems,
                        &mut out[shift..],
                    )
                    .unwrap();
                assert_eq!(got, 20000);
                assert!(
                    out[shift..shift + got] == src[at..at + got],
                    "getitem {shift}"
                );
            }
        }
    }
}
