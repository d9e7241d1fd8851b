//! Instrumented-codec chunks (`blosc2_cparams.instr_codec`, `BLOSC2_INSTR_CODEC`).
//!
//! c-blosc2 uses these to measure a codec rather than to store data: every stream of every
//! block is filtered and compressed as usual, but what lands in the chunk is one 16-byte
//! `blosc2_instr` record per stream (little-endian `f32` cratio, `f32` cspeed, `f32`
//! filter_speed, 4 flag bytes), stored like an incompressible stream (csize 16, then the
//! record). The header then describes the records, not the data: nbytes = nstreams * 16,
//! blocksize = 16 (blocks not split) or 16 * typesize (split), so a reader decodes them as
//! plain raw streams; blosc2_flags bit 7 tells it to skip the filter pipeline.
//!
//! Record fields (c-blosc2 3.3.5): cratio = neblock / (compressed size + 4) (the compressed
//! size is neblock when the codec gave up); run streams get flags[0] = 1 and cratio =
//! neblock / 4 (zero run) or neblock / 5 (other byte); cspeed = neblock / codec seconds;
//! filter_speed = neblock / seconds spent in the filter pipeline for the block. Speeds vary
//! between runs by nature.

use super::blocksize::{compute_blocksize, split_block};
use super::header::{
    self, blosc2_flags, filters_to_flags, flags, ChunkHeader, EXTENDED_HEADER_LEN, MAX_BUFFERSIZE,
    MAX_HEADER_TYPESIZE, MAX_TYPESIZE, MIN_BUFFERSIZE,
};
use super::pipeline::Pipeline;
use super::{CParams, Hooks};
use crate::codecs::{self, CodecState};
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
    /// Bytes per second through the filter pipeline.
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

/// Writes an instrumented chunk of `src` into `dst`; returns its size, `Ok(Some(0))` when it
/// does not fit. `Ok(None)`: c-blosc2 would store this input memcpyed (clevel 0 or fewer than
/// 32 bytes), where it records nothing; the caller then writes a regular chunk.
/// Prefilters are not supported here (`InvalidParam`); dictionaries are not trained.
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
    if cp.typesize <= 0 || cp.typesize > MAX_TYPESIZE || cp.blocksize < 0 {
        return Err(Error::InvalidParam);
    }
    if hooks.has_prefilter() {
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
    let ts = if cp.typesize > MAX_HEADER_TYPESIZE {
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
    let dont_split = !split_block(
        cp.splitmode,
        cp.compcode,
        cp.clevel,
        &cp.filters,
        ts as i32,
        blocksize as i32,
    ) || blocksize % ts != 0;
    let pipeline = Pipeline {
        filters: cp.filters,
        meta: cp.filters_meta,
        typesize: ts,
        version: header::version::STABLE,
        hooks,
    };
    let hlen = EXTENDED_HEADER_LEN;
    let bstarts_end = hlen + 4 * nblocks;
    if bstarts_end > destsize {
        return Ok(Some(0));
    }
    let mut state = CodecState::new();
    let (mut buf1, mut buf2) = (vec![0u8; blocksize], vec![0u8; blocksize]);
    let mut scratch = vec![0u8; blocksize];
    let mut pos = bstarts_end;
    let mut nstreams_total = 0usize;
    for j in 0..nblocks {
        let off = j * blocksize;
        let is_left = j + 1 == nblocks && leftover > 0;
        let input = &src[off..off + if is_left { leftover } else { blocksize }];
        dst[hlen + 4 * j..hlen + 4 * j + 4].copy_from_slice(&(pos as i32).to_le_bytes());
        let t0 = Instant::now();
        let filtered: &[u8] = if pipeline.forward_active() {
            let dref = if j == 0 { None } else { Some((off, src)) };
            let n = input.len();
            pipeline.forward(input, dref, &mut buf1[..n], &mut buf2[..n])?
        } else {
            input
        };
        let filter_secs = t0.elapsed().as_secs_f64();
        let nstreams = if !dont_split && !is_left { ts } else { 1 };
        let neblock = input.len() / nstreams;
        for s in 0..nstreams {
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
                        codecs::compress(&mut state, cc, cp.clevel, data, out, None)?
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
                return Ok(Some(0));
            }
            dst[pos..pos + 4].copy_from_slice(&(RECORD_LEN as i32).to_le_bytes());
            dst[pos + 4..pos + 4 + RECORD_LEN].copy_from_slice(&rec.to_bytes());
            pos += 4 + RECORD_LEN;
            nstreams_total += 1;
        }
    }
    let mut hflags = flags::EXTENDED | filters_to_flags(&cp.filters) | (format << 5);
    if dont_split {
        hflags |= flags::DONT_SPLIT;
    }
    let h = ChunkHeader {
        version: header::version::STABLE,
        versionlz,
        flags: hflags,
        typesize: ts as u8,
        nbytes: (nstreams_total * RECORD_LEN) as i32,
        blocksize: (if dont_split {
            RECORD_LEN
        } else {
            RECORD_LEN * ts
        }) as i32,
        cbytes: pos as i32,
        filters: cp.filters,
        udcompcode: cp.compcode,
        compcode_meta: cp.compcode_meta,
        filters_meta: cp.filters_meta,
        flags2: 0,
        blosc2_flags: blosc2_flags::INSTR_CODEC,
    };
    h.write(dst);
    Ok(Some(pos))
}
