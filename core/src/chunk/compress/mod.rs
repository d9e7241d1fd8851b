//! The chunk writer.
//!
//! Per block: prefilter (if any) → filter pipeline → split into `typesize` streams (split
//! rule, not for the leftover block) → each stream stored as a zero run (csize 0), a byte run
//! (csize = −value, then token byte 1), codec output, or raw (csize = neblock). Blocks are
//! encoded independently (on worker threads when there are several) into per-block buffers and
//! then laid out in block order, checking at each stream whether it still fits the way
//! c-blosc2's serial writer does; when something does not fit the chunk falls back to memcpy
//! (`cbytes = nbytes + 32`), and when even that does not fit the result is 0.

use super::blocksize::{blocks_of, Blocks};
use super::copy::{copy_bytes, copy_parallel, PARALLEL_COPY_MIN};
use super::header::{
    self, blosc2_flags, filters_to_flags, flags, ChunkHeader, SpecialKind, EXTENDED_HEADER_LEN,
    MAX_BUFFERSIZE, MAX_DICT_SIZE, MAX_HEADER_TYPESIZE, MAX_TYPESIZE, MIN_BUFFERSIZE,
    MIN_USEFUL_DICT,
};
use super::par::{lock, states};
use super::pipeline::Pipeline;
use super::{CParams, Hooks, PrefilterArgs};
use crate::codecs::{self, dict, CodecState};
use crate::error::{Error, Result};
use crate::pool::{Pool, Runner, Threads};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

mod block;
mod blockwise;
mod layout;
mod room;

pub use blockwise::LoneBlock;

use block::*;
use room::Room;

/// Writes chunks. Owns its codec states, scratch buffers and its [`Threads`]; reusable for any
/// number of chunks. Not shareable between threads at the same time
/// (`&mut self`), but two compressors never interfere.
pub struct Compressor {
    cp: CParams,
    hooks: Arc<dyn Hooks>,
    /// The same hooks, typed: the built-in plugins follow the typesize of `cp`.
    plugins: Arc<super::plugins::Plugins>,
    /// The thread count (the one `cp.nthreads` asked for) and the helpers.
    threads: Threads,
    /// One state per thread, indexed by the worker id of each job.
    workers: Vec<Mutex<Worker>>,
    /// Per-block outputs of the dictionary training pass.
    outs: Vec<Mutex<BlockOut>>,
    /// Buffers of [`Order`] kept for the next parallel call: blocks encoded but not placed
    /// (empty between calls), free buffers, block starts.
    pending: Vec<(usize, BlockOut)>,
    spares: Vec<BlockOut>,
    starts: Vec<usize>,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor")
            .field("cparams", &self.cp)
            .finish()
    }
}

/// Grows `v` (zeroing the new bytes) to at least `n` bytes.
pub(super) fn grow(v: &mut Vec<u8>, n: usize) {
    if v.len() < n {
        v.resize(n, 0);
    }
}

impl Compressor {
    /// A compressor for `cparams`. Parameters are checked at each call (as c-blosc2 does),
    /// except `nthreads`, which must be ≥ 1 (`InvalidParam`).
    pub fn new(cparams: CParams, hooks: Arc<dyn Hooks>) -> Result<Compressor> {
        let threads = Threads::new(cparams.nthreads)?;
        let plugins = super::plugins::Plugins::new(hooks, cparams.typesize);
        Ok(Compressor {
            cp: cparams,
            hooks: plugins.clone(),
            plugins,
            workers: states(threads.count()),
            threads,
            outs: Vec::new(),
            pending: Vec::new(),
            spares: Vec::new(),
            starts: Vec::new(),
        })
    }

    /// The hooks chunks are compressed with: the caller's, with the plugin codecs and filters
    /// c-blosc2 registers by default (NDLZ, ZFP, NDCELL, ...) in front.
    pub fn hooks(&self) -> &dyn Hooks {
        &*self.hooks
    }

    /// The parameters in use.
    pub fn cparams(&self) -> &CParams {
        &self.cp
    }

    /// Replaces the parameters (a different `nthreads` drops the current pool).
    pub fn set_cparams(&mut self, cparams: CParams) -> Result<()> {
        if self.threads.set_count(cparams.nthreads)? {
            self.workers = states(self.threads.count());
        }
        self.plugins.set_typesize(cparams.typesize);
        self.cp = cparams;
        Ok(())
    }

    /// Uses `pool`'s workers as helper threads (shared with other contexts; see
    /// [`Threads::set_pool`]).
    pub fn set_pool(&mut self, pool: Arc<Pool>) -> Result<()> {
        self.threads.set_pool(pool)
    }

    /// Runs parallel encoding on `runner` (see [`Threads::set_runner`]).
    pub fn set_runner(&mut self, runner: Arc<dyn Runner>) {
        self.threads.set_runner(runner);
    }

    /// Whether worker threads have been started or set (for tests of when they start).
    pub fn pool_started(&self) -> bool {
        self.threads.is_started()
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
        self.compress_impl(src, Room::Slice(dst), true)
    }

    /// [`Compressor::compress`] into a new vector with room for `destsize` bytes: the chunk
    /// (empty when it does not fit), the same bytes as `compress` into a `destsize` buffer.
    /// The room (the vector's capacity; none for an empty result) is not zeroed in a pass of
    /// its own: one thread writes it only as far as the chunk reaches, block-parallel writers
    /// get it from `calloc` (fresh pages, touched only where written, as c-blosc2's `malloc`ed
    /// chunk). Give the spare room back with `shrink_to_fit` (in place).
    pub fn compress_to_vec(&mut self, src: &[u8], destsize: usize) -> Result<Vec<u8>> {
        let room = destsize.min(i32::MAX as usize);
        self.check_params(src.len(), room)?;
        let mut v = Vec::new();
        let n = self.compress_impl(src, Room::Vec { v: &mut v, room }, true)?;
        v.truncate(n);
        Ok(v)
    }

    /// Like [`Compressor::compress`] but writes a 16-byte Blosc1-style header (c-blosc2's
    /// `BLOSC_BLOSC1_COMPAT` mode): the pipeline is only described by the flag bits, no runs,
    /// no dictionary, memcpyed chunks are `nbytes + 16` bytes.
    pub fn compress_blosc1(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        self.compress_impl(src, Room::Slice(dst), false)
    }

    fn compress_impl(&mut self, src: &[u8], mut dst: Room<'_>, extended: bool) -> Result<usize> {
        let dst_size = dst.len();
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
        self.check_params(src.len(), dst_size)?;
        let (format, versionlz) = self.codec_ids()?;
        let destsize = dst_size.min(i32::MAX as usize);
        let nbytes = src.len();
        let b = blocks_of(&cp, nbytes);
        let Blocks {
            typesize,
            blocksize,
            nblocks,
            dont_split,
            ..
        } = b;
        let header_blocksize = if nbytes == 0 && cp.blocksize > 0 {
            cp.blocksize
        } else {
            blocksize as i32
        };
        let bstarts_end = hlen + 4 * nblocks;
        let mut memcpyed =
            cp.clevel == 0 || (nbytes as i32) < MIN_BUFFERSIZE || bstarts_end > destsize;
        let mut hflags = if extended { flags::EXTENDED } else { 0 };
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
            let mut plan = Plan::new(
                &cp,
                &*hooks,
                Input::Flat(src),
                b,
                header::version::STABLE,
                hlen,
            );
            let mut done = None;
            if cp.use_dict {
                let nstreams = nblocks * if dont_split { 1 } else { typesize };
                dict_store = self.build_dict(&mut plan, nbytes, nstreams, None)?;
                if let Some((d, bytes)) = &dict_store {
                    let start = bstarts_end + 4 + bytes.len();
                    if start <= destsize {
                        plan.dict = Some(d);
                        done = self.run_blocks(&plan, &mut dst, start, destsize)?;
                        plan.dict = None;
                        if let Some((n, _)) = done {
                            let dst = dst.upto(start);
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
                done = self.run_blocks(&plan, &mut dst, bstarts_end, destsize)?;
            }
            match done {
                Some((n, all_zero)) => {
                    if all_zero && extended {
                        h.blosc2_flags |= (SpecialKind::Zero as u8) << 4;
                        h.cbytes = EXTENDED_HEADER_LEN as i32;
                    } else {
                        h.cbytes = n as i32;
                    }
                    h.write(dst.upto(hlen));
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
        if self.hooks.has_prefilter() {
            let dst = dst.upto(hlen + nbytes);
            self.prefilter_memcpy(src, &mut dst[hlen..], blocksize, typesize)?;
        } else if let Some(v) = dst.vec_from(hlen) {
            // Into a vector: the body written once, into its capacity (not zeroed first).
            crate::sys::fill_spare(v, nbytes, |out| {
                self.copy_body(src, out, nblocks).map(|()| nbytes)
            })
            .ok_or(Error::MemoryAlloc)??;
        } else {
            let dst = dst.upto(hlen + nbytes);
            self.copy_body(src, crate::sys::Out::init(&mut dst[hlen..]), nblocks)?;
        }
        h.write(dst.upto(hlen));
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
}

impl Compressor {
    /// Copies `src` into a memcpyed chunk's body, on the workers when it is large and has
    /// several blocks.
    fn copy_body(
        &mut self,
        src: &[u8],
        mut body: crate::sys::Out<'_>,
        nblocks: usize,
    ) -> Result<()> {
        if nblocks < 2 || src.len() < PARALLEL_COPY_MIN {
            body.copy_from(src);
            return Ok(());
        }
        copy_parallel(&mut self.threads, body, src)
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
        let vl = Blocks {
            typesize,
            blocksize: max_bs,
            nblocks,
            leftover: 0,
            dont_split: true,
        };
        let mut plan = Plan::new(
            &cp,
            &*hooks,
            Input::Vl(srcs),
            vl,
            header::version::VL_BLOCKS,
            EXTENDED_HEADER_LEN,
        );
        if cp.use_dict && cp.clevel > 0 {
            let sizes: Vec<usize> = srcs.iter().map(|s| s.len()).collect();
            dict_store = self.build_dict(&mut plan, total, nblocks, Some(sizes))?;
            if let Some((d, bytes)) = &dict_store {
                let start = bstarts_end + 4 + bytes.len();
                if start > destsize {
                    return Ok(0);
                }
                plan.dict = Some(d);
                let done = self.run_blocks(&plan, &mut Room::Slice(dst), start, destsize)?;
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
        match self.run_blocks(&plan, &mut Room::Slice(dst), bstarts_end, destsize)? {
            Some((n, _)) => {
                h.cbytes = n as i32;
                h.write(dst);
                Ok(n)
            }
            None => Ok(0),
        }
    }
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
    use super::*;
    use crate::chunk::no_hooks;

    /// `compress_to_vec` writes the bytes `compress` writes into a buffer of the same room
    /// (or the same error), without outgrowing that room, serially and on workers, with and
    /// without a dictionary, for chunks that compress, are memcpyed, are all zeros or do not
    /// fit.
    #[test]
    fn compress_to_vec_writes_what_compress_writes() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut cases = 0;
        for (compcode, clevel, use_dict, nthreads, filters) in [
            (codecs::BLOSCLZ, 5u8, false, 1i16, [0, 0, 0, 0, 0, 1u8]),
            (codecs::BLOSCLZ, 1, false, 2, [0, 0, 0, 0, 0, 1]),
            (codecs::LZ4, 9, false, 1, [0, 0, 0, 0, 0, 2]),
            (codecs::ZSTD, 3, true, 1, [0, 0, 0, 0, 0, 1]),
            (codecs::BLOSCLZ, 0, false, 1, [0; 6]),
        ] {
            let cp = CParams {
                compcode,
                clevel,
                use_dict,
                nthreads,
                filters,
                typesize: 4,
                blocksize: 16384,
                ..CParams::default()
            };
            let mut c = Compressor::new(cp, no_hooks()).unwrap();
            for shape in 0..4 {
                let nbytes = 200_000;
                let src: Vec<u8> = match shape {
                    0 => (0..nbytes / 4)
                        .flat_map(|_| ((rnd() % 1000) as u32).to_le_bytes())
                        .collect(),
                    1 => vec![0; nbytes],
                    2 => (0..nbytes).map(|_| rnd() as u8).collect(),
                    _ => (0..nbytes)
                        .map(|i| if i % 7000 < 3500 { 0 } else { rnd() as u8 })
                        .collect(),
                };
                for room in [nbytes + 32, nbytes + 100, nbytes / 2, 40_000, 100, 31] {
                    let mut want = vec![0u8; room];
                    let want = c.compress(&src, &mut want).map(|n| {
                        want.truncate(n);
                        want
                    });
                    let got = c.compress_to_vec(&src, room);
                    if let Some(v) = got.as_ref().ok().filter(|v| !v.is_empty()) {
                        assert_eq!(v.capacity(), room, "{compcode} {shape} {room}");
                    }
                    assert_eq!(got, want, "{compcode} {nthreads} {shape} {room}");
                    cases += 1;
                }
            }
        }
        assert_eq!(cases, 120);
    }
}
