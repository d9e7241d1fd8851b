//! Encoding one block: the prefilter, the filter pipeline, the split into streams and each
//! stream's encoding (zero run, byte run, codec output or raw), into a worker's [`BlockOut`].

use super::*;

/// Per-worker state: codec contexts and scratch buffers, reused across blocks and calls.
#[derive(Default)]
pub(super) struct Worker {
    pub(super) codec: CodecState,
    pub(super) buf1: Vec<u8>,
    pub(super) buf2: Vec<u8>,
    pub(super) pre: Vec<u8>,
    /// The block this worker encodes (stays in its cache until copied into the chunk).
    pub(super) out: BlockOut,
}

/// How one stream of a block was stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stream {
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
pub(super) struct BlockOut {
    pub(super) bytes: Vec<u8>,
    pub(super) len: usize,
    pub(super) streams: Vec<Stream>,
    pub(super) neblock: usize,
    pub(super) result: Option<Result<()>>,
    /// The raw streams' bytes are not in `bytes` yet: they are still in the filtered block
    /// the encoder returned (see [`BlockOut::copy_to`], [`BlockOut::fill_raw`]).
    pub(super) raw_deferred: bool,
}

impl BlockOut {
    pub(super) fn encoded(&self) -> &[u8] {
        debug_assert!(!self.raw_deferred);
        &self.bytes[..self.len]
    }

    /// (offset in the block, stream index) of each raw stream's bytes.
    pub(super) fn raw_spans(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
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
    pub(super) fn copy_to(&self, piece: &mut [u8], filtered: &[u8]) {
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
    pub(super) fn fill_raw(&mut self, filtered: &[u8]) {
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
pub(super) fn block_bound(plan: &Plan<'_>, j: usize) -> usize {
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
pub(super) enum Input<'a> {
    /// One buffer cut into `blocksize` blocks.
    Flat(&'a [u8]),
    /// One block per buffer (VL-block chunk).
    Vl(&'a [&'a [u8]]),
}

/// Everything the block encoder needs, fixed for one chunk.
pub(super) struct Plan<'a> {
    pub(super) input: Input<'a>,
    pub(super) blocksize: usize,
    pub(super) nblocks: usize,
    pub(super) leftover: usize,
    pub(super) typesize: usize,
    pub(super) dont_split: bool,
    pub(super) compcode: u8,
    pub(super) compcode_meta: u8,
    pub(super) clevel: u8,
    pub(super) pipeline: Pipeline<'a>,
    pub(super) dict: Option<&'a dict::CompressDict>,
    /// Dictionary training pass: emit the filtered block only.
    pub(super) training: bool,
    /// Header length (32, or 16 for Blosc1-compatible chunks); bstarts follow it.
    pub(super) hlen: usize,
    pub(super) hooks: &'a dyn Hooks,
}

impl<'a> Plan<'a> {
    /// A plan for `input` cut as `b`, with `cp`'s codec and filters (a header of `version`,
    /// `hlen` bytes long), no dictionary, not a training pass.
    pub(super) fn new(
        cp: &CParams,
        hooks: &'a dyn Hooks,
        input: Input<'a>,
        b: Blocks,
        version: u8,
        hlen: usize,
    ) -> Plan<'a> {
        Plan {
            input,
            blocksize: b.blocksize,
            nblocks: b.nblocks,
            leftover: b.leftover,
            typesize: b.typesize,
            dont_split: b.dont_split,
            compcode: cp.compcode,
            compcode_meta: cp.compcode_meta,
            clevel: cp.clevel,
            pipeline: Pipeline {
                filters: cp.filters,
                meta: cp.filters_meta,
                typesize: b.typesize,
                version,
                hooks,
            },
            dict: None,
            training: false,
            hlen,
            hooks,
        }
    }

    pub(super) fn is_vl(&self) -> bool {
        matches!(self.input, Input::Vl(_))
    }

    /// Runs (and the disposable-output shortcut) exist only in extended, non-VL chunks.
    pub(super) fn runs(&self) -> bool {
        self.hlen == EXTENDED_HEADER_LEN && !self.is_vl()
    }

    /// (bytes, byte offset in the chunk, is the leftover block) of block `j`.
    pub(super) fn block(&self, j: usize) -> (&'a [u8], usize, bool) {
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

    pub(super) fn chunk_src(&self) -> &'a [u8] {
        match self.input {
            Input::Flat(src) => src,
            Input::Vl(_) => &[],
        }
    }
}

/// Runs the prefilter on one block into `pre` (zeroed first); returns the block-sized view.
pub(super) fn run_prefilter<'p>(
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
pub(super) fn encode_block_out<'s>(
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
pub(super) fn encode_block<'s>(
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
pub(super) fn is_run(data: &[u8]) -> bool {
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
pub(super) fn compress_stream(
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
