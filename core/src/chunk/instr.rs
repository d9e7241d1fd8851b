//! Instrumented-codec chunks (`blosc2_cparams.instr_codec`, `BLOSC2_INSTR_CODEC`).
//!
//! c-blosc2 uses these to measure a codec rather than to store data: every stream of every
//! block goes through the prefilter, the filter pipeline and the codec as usual, but what lands
//! in the chunk is one 16-byte `blosc2_instr` record per stream (little-endian `f32` cratio,
//! `f32` cspeed, `f32` filter_speed, 4 flag bytes), stored like an incompressible stream
//! (csize 16, then the record). The header then describes the records, not the data: nbytes =
//! nstreams * 16, blocksize = 16 (blocks not split) or 16 * typesize (split), so a reader
//! decodes them as plain raw streams; blosc2_flags bit 7 tells it to skip the filter pipeline.
//!
//! Record fields (c-blosc2 3.3.5): cratio = neblock / (compressed size + 4) (the compressed
//! size is neblock when the codec gave up); run streams get `flags[0] = 1` and cratio =
//! neblock / 4 (zero run) or neblock / 5 (other byte); cspeed = neblock / codec seconds;
//! filter_speed = neblock / seconds spent in the prefilter and filter pipeline for the block.
//! Speeds vary between runs by nature; everything else is fixed by the input.
//!
//! Where we follow c-blosc2 3.3.5 byte for byte in structure (tests/chunk/reference_instr.rs):
//! * a prefilter runs per block before the pipeline (its failure is `FilterPipeline`);
//! * with `output_is_disposable` every stream is a zero run without a record, so the chunk is
//!   a 32-byte zero special chunk (flags 0x90) whose nbytes/blocksize still count records;
//! * `use_dict`: the dictionary is trained on the filtered blocks as for regular chunks and
//!   stored after the bstarts (size, bytes), the records measure the codec with it; the small
//!   input fallback (no dictionary) is the same as for regular chunks.
//!
//! Where we do not (reference bugs, docs/divergences.md#10-instrumented-codec-chunks-stay-decodable):
//! * clevel 0, inputs under 32 bytes, and chunks whose records do not fit `dst`: c-blosc2
//!   writes a memcpyed chunk of the raw input but still rewrites the header's nbytes/blocksize
//!   to the record counts and sets the instr flag, a chunk it then refuses to decode (-3). We
//!   write the plain memcpyed chunk (same size, flags byte and body; nbytes, blocksize and
//!   blosc2_flags of a regular memcpyed chunk), which decodes to the input.
//! * `use_dict`: c-blosc2's training pass writes each record's csize 4 bytes before the
//!   sample, the first one over header bytes 28..31 (`filters_meta[4] = 16`, flags2 = 0,
//!   blosc2_flags = 0: the instr and dictionary flags are lost, so its readers unshuffle the
//!   records), and trains the dictionary on records instead of data. We keep the header and
//!   train on the data; the layout (bstarts, dict size, dict, 20-byte streams) is the same.
//! * VL-block chunks (`blosc2_vlcompress_ctx`): c-blosc2 stores each record behind a csize of
//!   the block's data size, which it cannot decode; ours stay regular VL-block chunks (this
//!   module is not called for them).

use super::blocksize::{blocks_of, Blocks};
use super::header::{
    self, blosc2_flags, filters_to_flags, flags, ChunkHeader, SpecialKind, EXTENDED_HEADER_LEN,
    MAX_BUFFERSIZE, MAX_DICT_SIZE, MAX_TYPESIZE, MIN_BUFFERSIZE, MIN_USEFUL_DICT,
};
use super::pipeline::Pipeline;
use super::{CParams, Hooks, PrefilterArgs};
use crate::codecs::{self, dict, CodecState};
use crate::error::{Error, Result};
use std::time::Instant;

/// Size of one `blosc2_instr` record.
pub const RECORD_LEN: usize = 16;

/// One `blosc2_instr` record.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Record {
    /// neblock / (stored bytes + 4).
    pub cratio: f32,
    /// Bytes per second through the codec.
    pub cspeed: f32,
    /// Bytes per second through the prefilter and filter pipeline.
    pub filter_speed: f32,
    /// `flags[0] == 1`: the stream is a run.
    pub flags: [u8; 4],
}

impl Record {
    /// The 16 bytes of the record as c-blosc2 lays them out (little-endian hosts).
    pub fn to_bytes(&self) -> [u8; RECORD_LEN] {
        let mut b = [0u8; RECORD_LEN];
        b[0..4].copy_from_slice(&self.cratio.to_le_bytes());
        b[4..8].copy_from_slice(&self.cspeed.to_le_bytes());
        b[8..12].copy_from_slice(&self.filter_speed.to_le_bytes());
        b[12..16].copy_from_slice(&self.flags);
        b
    }

    /// Parses one record (`b` holds at least 16 bytes).
    pub fn from_bytes(b: &[u8]) -> Option<Record> {
        let f = |i: usize| -> Option<f32> {
            Some(f32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?))
        };
        Some(Record {
            cratio: f(0)?,
            cspeed: f(4)?,
            filter_speed: f(8)?,
            flags: b.get(12..16)?.try_into().ok()?,
        })
    }
}

/// All bytes equal (a run stream).
fn is_run(data: &[u8]) -> bool {
    data.first().is_some_and(|&f| data.iter().all(|&b| b == f))
}

fn per_sec(bytes: usize, secs: f64) -> f32 {
    (bytes as f64 / secs) as f32
}

/// The chunk's geometry and the per-call state shared by the passes.
struct Job<'a> {
    cp: &'a CParams,
    hooks: &'a dyn Hooks,
    src: &'a [u8],
    pipeline: Pipeline<'a>,
    /// Header typesize (1 when the real one exceeds 255).
    ts: usize,
    blocksize: usize,
    nblocks: usize,
    leftover: usize,
    dont_split: bool,
    /// Prefilter output (the block, zero-padded as c-blosc2 does).
    pre: Vec<u8>,
    buf1: Vec<u8>,
    buf2: Vec<u8>,
}

impl Job<'_> {
    /// (offset, bytes, is the leftover block) of block `j`.
    fn block(&self, j: usize) -> (usize, usize, bool) {
        let off = j * self.blocksize;
        let is_left = j + 1 == self.nblocks && self.leftover > 0;
        (
            off,
            if is_left {
                self.leftover
            } else {
                self.blocksize
            },
            is_left,
        )
    }

    /// Runs the prefilter (if any) over block `j` into `pre`; false when there is none. With
    /// a disposable output a failing prefilter is ignored, as c-blosc2 does.
    fn prefilter(&mut self, j: usize) -> Result<bool> {
        if !self.hooks.has_prefilter() {
            return Ok(false);
        }
        let (off, len, _) = self.block(j);
        let ots = match self.hooks.prefilter_output_typesize() {
            t if t > 0 => t as usize,
            _ => self.ts,
        };
        let out_size = len / self.ts * ots;
        self.pre.clear();
        self.pre.resize(len.max(out_size), 0);
        let mut args = PrefilterArgs {
            input: &self.src[off..off + len],
            output: &mut self.pre[..out_size],
            output_typesize: ots as i32,
            output_offset: off as i32,
            nblock: j as i32,
            tid: 0,
        };
        if self.hooks.prefilter(&mut args).is_err() && !self.hooks.prefilter_output_is_disposable()
        {
            return Err(Error::FilterPipeline);
        }
        Ok(true)
    }

    /// Block `j` as the codec sees it: after the prefilter and the filter pipeline.
    fn filtered(&mut self, j: usize) -> Result<&[u8]> {
        let (off, len, _) = self.block(j);
        let staged: &[u8] = if self.prefilter(j)? {
            &self.pre[..len]
        } else {
            &self.src[off..off + len]
        };
        if !self.pipeline.forward_active() {
            return Ok(staged);
        }
        // DELTA: block 0 against itself, the others against the chunk's original bytes.
        let dref = if j == 0 { None } else { Some((off, self.src)) };
        if self.buf1.len() < len {
            self.buf1.resize(len, 0);
            self.buf2.resize(len, 0);
        }
        self.pipeline
            .forward(staged, dref, &mut self.buf1[..len], &mut self.buf2[..len])
    }
}

/// Writes an instrumented chunk of `src` into `dst`; returns its size, `Ok(Some(0))` when not
/// even a memcpyed chunk fits. `Ok(None)`: clevel 0 or fewer than 32 bytes, where nothing is
/// measured; the caller then writes the regular (memcpyed) chunk, see the module docs.
pub fn compress(
    cp: &CParams,
    hooks: &dyn Hooks,
    src: &[u8],
    dst: &mut [u8],
) -> Result<Option<usize>> {
    let nbytes = src.len();
    if nbytes > MAX_BUFFERSIZE as usize || dst.len() < EXTENDED_HEADER_LEN {
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
    let (format, versionlz) = match cp.compcode {
        c @ (codecs::BLOSCLZ | codecs::LZ4 | codecs::LZ4HC | codecs::ZLIB | codecs::ZSTD) => {
            (codecs::format_of(c).unwrap_or(0), 1)
        }
        c @ 32..=255 => (
            codecs::format::UDCODEC,
            hooks.codec_version(c).ok_or(Error::CodecSupport)?,
        ),
        _ => return Err(Error::CodecSupport),
    };
    if cp.clevel == 0 || (nbytes as i32) < MIN_BUFFERSIZE {
        return Ok(None);
    }
    let destsize = dst.len().min(i32::MAX as usize);
    let Blocks {
        typesize: ts,
        blocksize,
        nblocks,
        leftover,
        dont_split,
    } = blocks_of(cp, nbytes);
    let mut job = Job {
        cp,
        hooks,
        src,
        pipeline: Pipeline {
            filters: cp.filters,
            meta: cp.filters_meta,
            typesize: ts,
            version: header::version::STABLE,
            hooks,
        },
        ts,
        blocksize,
        nblocks,
        leftover,
        dont_split,
        pre: Vec::new(),
        buf1: Vec::new(),
        buf2: Vec::new(),
    };
    let mut hflags = flags::EXTENDED | filters_to_flags(&cp.filters) | (format << 5);
    if dont_split {
        hflags |= flags::DONT_SPLIT;
    }
    let mut h = ChunkHeader {
        version: header::version::STABLE,
        versionlz,
        flags: hflags,
        typesize: ts as u8,
        nbytes: nbytes as i32,
        blocksize: blocksize as i32,
        cbytes: 0,
        filters: cp.filters,
        udcompcode: cp.compcode,
        compcode_meta: cp.compcode_meta,
        filters_meta: cp.filters_meta,
        flags2: 0,
        blosc2_flags: 0,
    };
    let bstarts_end = EXTENDED_HEADER_LEN + 4 * job.nblocks;
    let trained = if cp.use_dict {
        train_dict(&mut job)?
    } else {
        None
    };
    let start = bstarts_end + trained.as_ref().map_or(0, |(_, b)| 4 + b.len());
    let written = if start <= destsize {
        records(
            &mut job,
            trained.as_ref().map(|(d, _)| d),
            dst,
            start,
            destsize,
        )?
    } else {
        None
    };
    let Some((cbytes, nstreams, all_zero)) = written else {
        return memcpyed(&mut job, h, dst).map(Some);
    };
    if let Some((_, bytes)) = &trained {
        dst[bstarts_end..bstarts_end + 4].copy_from_slice(&(bytes.len() as i32).to_le_bytes());
        dst[bstarts_end + 4..start].copy_from_slice(bytes);
        h.blosc2_flags |= blosc2_flags::USEDICT;
    }
    h.blosc2_flags |= blosc2_flags::INSTR_CODEC;
    h.nbytes = (nstreams * RECORD_LEN) as i32;
    h.blocksize = (if dont_split { 1 } else { ts } * RECORD_LEN) as i32;
    h.cbytes = cbytes as i32;
    if all_zero && trained.is_none() {
        // Every stream was a (disposable) zero run: the whole chunk is zeros.
        h.blosc2_flags |= (SpecialKind::Zero as u8) << 4;
        h.cbytes = EXTENDED_HEADER_LEN as i32;
    }
    h.write(dst);
    Ok(Some(h.cbytes as usize))
}

/// Dictionary for `use_dict`, trained like a regular chunk's: samples are the filtered
/// blocks, `max(nstreams, 8)` of `nbytes / that / 16` bytes each, at most `nbytes / 20` bytes of
/// dictionary. `None`: the input is too small or training failed (no dictionary then).
fn train_dict(job: &mut Job<'_>) -> Result<Option<(dict::CompressDict, Vec<u8>)>> {
    let nbytes = job.src.len();
    let nstreams = job.nblocks * if job.dont_split { 1 } else { job.ts };
    let nsamples = nstreams.max(8);
    let sample_size = nbytes / nsamples / 16;
    let maxsize = (MAX_DICT_SIZE as usize).min(nbytes / 20);
    if sample_size == 0 || maxsize < MIN_USEFUL_DICT as usize {
        return Ok(None);
    }
    let mut samples = Vec::with_capacity(nbytes);
    for j in 0..job.nblocks {
        samples.extend_from_slice(job.filtered(j)?);
    }
    let sizes = vec![sample_size; nsamples];
    let cc = job.cp.compcode;
    let Some(bytes) = dict::train(cc, &samples, &sizes, maxsize) else {
        return Ok(None);
    };
    Ok(dict::CompressDict::new(cc, job.cp.clevel, &bytes)
        .ok()
        .map(|d| (d, bytes)))
}

/// Measures every stream and writes its record from `start` (bstarts at byte 32). Returns
/// (chunk size, number of streams, every stream was a zero run), `None` when it does not fit.
fn records(
    job: &mut Job<'_>,
    dict: Option<&dict::CompressDict>,
    dst: &mut [u8],
    start: usize,
    destsize: usize,
) -> Result<Option<(usize, usize, bool)>> {
    let (cp, hooks, src) = (job.cp, job.hooks, job.src);
    let disposable = hooks.prefilter_output_is_disposable();
    let mut state = CodecState::new();
    let mut scratch = vec![0u8; job.blocksize];
    let mut pos = start;
    let (mut nstreams_total, mut all_zero) = (0usize, true);
    for j in 0..job.nblocks {
        let (_, len, is_left) = job.block(j);
        let at = EXTENDED_HEADER_LEN + 4 * j;
        dst[at..at + 4].copy_from_slice(&(pos as i32).to_le_bytes());
        let nstreams = if !job.dont_split && !is_left {
            job.ts
        } else {
            1
        };
        let neblock = len / nstreams;
        let t0 = Instant::now();
        let filtered = job.filtered(j)?;
        let filter_secs = t0.elapsed().as_secs_f64();
        for s in 0..nstreams {
            nstreams_total += 1;
            if disposable {
                // c-blosc2 stores a zero run (csize 0) and no record; without a dictionary
                // the chunk ends up as the 32-byte zero special chunk anyway.
                if pos + 4 <= destsize {
                    dst[pos..pos + 4].fill(0);
                }
                pos += 4;
                continue;
            }
            all_zero = false;
            let data = &filtered[s * neblock..(s + 1) * neblock];
            let t1 = Instant::now();
            let mut rec = Record::default();
            if is_run(data) {
                let ssize = if data[0] == 0 { 4.0 } else { 5.0 };
                rec.cratio = neblock as f32 / ssize;
                rec.flags[0] = 1;
            } else {
                let out = &mut scratch[..neblock];
                let c = match cp.compcode {
                    cc @ (codecs::BLOSCLZ
                    | codecs::LZ4
                    | codecs::LZ4HC
                    | codecs::ZLIB
                    | codecs::ZSTD) => {
                        codecs::compress(&mut state, cc, cp.clevel, data, out, dict)?
                    }
                    cc => match hooks.encode(cc, cp.compcode_meta, data, out, src) {
                        None => return Err(Error::CodecSupport),
                        Some(r) => {
                            let n = r?;
                            if n > neblock {
                                return Err(Error::WriteBuffer);
                            }
                            n
                        }
                    },
                };
                let stored = if c == 0 { neblock } else { c };
                rec.cratio = neblock as f32 / (stored + 4) as f32;
            }
            rec.cspeed = per_sec(neblock, t1.elapsed().as_secs_f64());
            rec.filter_speed = per_sec(neblock, filter_secs);
            if pos + 4 + RECORD_LEN > destsize {
                return Ok(None);
            }
            dst[pos..pos + 4].copy_from_slice(&(RECORD_LEN as i32).to_le_bytes());
            dst[pos + 4..pos + 4 + RECORD_LEN].copy_from_slice(&rec.to_bytes());
            pos += 4 + RECORD_LEN;
        }
    }
    if pos > destsize && (!all_zero || dict.is_some()) {
        return Ok(None);
    }
    Ok(Some((pos, nstreams_total, all_zero)))
}

/// The fallback when the records do not fit: a plain memcpyed chunk (the prefilter's output
/// when there is one) with the header flags computed so far, or 0 when that does not fit
/// either.
fn memcpyed(job: &mut Job<'_>, mut h: ChunkHeader, dst: &mut [u8]) -> Result<usize> {
    let nbytes = job.src.len();
    let hlen = EXTENDED_HEADER_LEN;
    if nbytes + hlen > dst.len().min(i32::MAX as usize) {
        return Ok(0);
    }
    // Only the prefilter runs for a memcpyed chunk, not the filters.
    for j in 0..job.nblocks {
        let (off, len, _) = job.block(j);
        let from: &[u8] = if job.prefilter(j)? {
            &job.pre[..len]
        } else {
            &job.src[off..off + len]
        };
        dst[hlen + off..hlen + off + len].copy_from_slice(from);
    }
    h.flags |= flags::MEMCPYED;
    h.cbytes = (nbytes + hlen) as i32;
    h.write(dst);
    Ok(nbytes + hlen)
}
