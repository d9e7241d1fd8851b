//! Decoding one block: each stream (zero run, byte run, codec output or raw) into a worker's
//! scratch, then the reverse filter pipeline and the postfilter into the destination.

use super::*;

/// Per-worker codec state and scratch.
#[derive(Default)]
pub(super) struct Worker {
    pub(super) codec: CodecState,
    pub(super) tmp: Vec<u8>,
    /// What the stream slots of `tmp` hold when they are known to be one repeated byte.
    pub(super) fills: StreamFills,
    pub(super) block: Vec<u8>,
    /// A lazy chunk's block, as read from storage.
    pub(super) raw: Vec<u8>,
}

/// Stream slots of a worker's `tmp` known to hold one repeated byte (a zero or run-length
/// stream decoded there, nothing written there since). The unshuffle only reads `tmp`, so when
/// the next block has the same kind of stream in the same slot (the high bytes of small
/// integers: zero in every block) the fill is already done. Keyed by the slot's address and
/// size; anything else that writes to `tmp` calls [`StreamFills::forget`].
#[derive(Default)]
pub(super) struct StreamFills {
    /// Address of slot 0 (`tmp` reallocated = everything forgotten).
    pub(super) base: usize,
    pub(super) neblock: usize,
    pub(super) byte: Vec<Option<u8>>,
}

impl StreamFills {
    pub(super) fn forget(&mut self) {
        self.byte.clear();
    }

    /// Prepares for `nstreams` slots of `neblock` bytes from `base`.
    pub(super) fn start(&mut self, base: usize, neblock: usize, nstreams: usize) {
        if base != self.base || neblock != self.neblock {
            self.byte.clear();
            self.base = base;
            self.neblock = neblock;
        }
        if self.byte.len() < nstreams {
            self.byte.resize(nstreams, None);
        }
    }
}

/// Alignment of the scratch blocks: a cache line, so the codecs' and the unshuffle kernels'
/// 32-byte vector loads and stores never straddle two lines (a `Vec<u8>` from malloc is only
/// 16-byte aligned, and large ones sit at 16 mod 4096).
pub(super) const SCRATCH_ALIGN: usize = 64;

/// `n` bytes of `buf`, starting at a [`SCRATCH_ALIGN`]-aligned address; the contents are
/// whatever the last use left. `n` comes from a chunk's header, which may claim a block of
/// gigabytes that its streams never fill: a buffer too small is replaced by a fresh zeroed one
/// ([`crate::sys::try_zeroed`]: its pages cost memory only once written, and an allocation
/// the system refuses is `MemoryAlloc`, not an abort).
pub(super) fn scratch(buf: &mut Vec<u8>, n: usize) -> Result<&mut [u8]> {
    if buf.len() < n + SCRATCH_ALIGN {
        *buf = Vec::new();
        *buf = crate::sys::try_zeroed(n + SCRATCH_ALIGN).ok_or(Error::MemoryAlloc)?;
    }
    let off = buf.as_ptr().align_offset(SCRATCH_ALIGN);
    let off = if off < SCRATCH_ALIGN { off } else { 0 };
    Ok(&mut buf[off..off + n])
}

/// Decodes one stream with the chunk's codec into exactly `dst.len()` bytes.
pub(super) fn decode_codec(
    lay: &Layout<'_>,
    state: &mut CodecState,
    src: &[u8],
    dst: &mut [u8],
) -> Result<()> {
    let format = lay.h.compformat();
    if format == codecs::format::UDCODEC {
        return match lay
            .hooks
            .decode(lay.h.udcompcode, lay.h.compcode_meta, src, dst, lay.src)
        {
            None => Err(Error::CodecSupport),
            Some(Ok(n)) if n == dst.len() => Ok(()),
            Some(Ok(_)) => Err(Error::Data),
            Some(Err(e)) => Err(e),
        };
    }
    let cc = codecs::decoder_for_format(format).ok_or(Error::CodecSupport)?;
    match codecs::decompress(state, cc, src, dst, lay.dict.as_ref()) {
        Ok(_) => Ok(()),
        Err(Error::CodecSupport) => Err(Error::CodecSupport),
        Err(_) => Err(Error::Data),
    }
}

/// Decodes the streams of regular block `j` into `dst` (the block's size). `fills`: given when
/// `dst` is the worker's `tmp` (fills already in place are skipped), else `None`.
pub(super) fn decode_streams(
    lay: &Layout<'_>,
    state: &mut CodecState,
    j: usize,
    dst: &mut [u8],
    mut fills: Option<&mut StreamFills>,
    raw: &mut Vec<u8>,
) -> Result<()> {
    let mut src = lay.src;
    let mut bstart = lay.bstart(j);
    if let Some(lz) = &lay.lazy {
        // The block's bytes come from storage; its streams are then read from offset 0.
        let n = lz.read_block(lay.src, lay.h.cbytes, j, bstart, raw)?;
        src = &raw[..n];
        bstart = 0;
    } else if bstart <= 0 || bstart >= src.len() as i64 {
        return Err(Error::Data);
    }
    let bstart = bstart as usize;
    let bsize = dst.len();
    if let Some(vl) = &lay.vl {
        let span = vl.spans[j];
        if span <= 4 || bstart > src.len() - span {
            return Err(Error::Data);
        }
        let p = &src[bstart..bstart + span];
        if rd_i32(p, 0) as i64 != bsize as i64 {
            return Err(Error::Data);
        }
        let payload = &p[4..];
        if let Some(f) = fills {
            f.forget();
        }
        if payload.len() == bsize {
            copy_bytes(dst, payload);
            return Ok(());
        }
        return decode_codec(lay, state, payload, dst);
    }
    let (_, _, is_left) = lay.block(j);
    let ts = lay.h.typesize as usize;
    let nstreams = if !lay.h.dont_split() && !is_left {
        ts
    } else {
        1
    };
    let neblock = bsize / nstreams;
    if neblock == 0 {
        return Err(Error::WriteBuffer);
    }
    if neblock * nstreams != bsize {
        // Only c-blosc2's header/effective blocksize bug produces this; the tail of such a
        // block was never stored where this block says it is.
        return Err(Error::Data);
    }
    if let Some(f) = fills.as_deref_mut() {
        f.start(dst.as_ptr() as usize, neblock, nstreams);
    }
    let mut p = &src[bstart..];
    for (k, d) in dst.chunks_exact_mut(neblock).enumerate() {
        // The byte slot `k` will hold when it is one repeated byte.
        let mut fill = None;
        if p.len() < 4 {
            return Err(Error::ReadBuffer);
        }
        let csize = rd_i32(p, 0);
        p = &p[4..];
        if csize > 0 && p.len() < csize as usize {
            return Err(Error::ReadBuffer);
        }
        if csize == 0 {
            fill = Some(0);
        } else if csize < 0 {
            let Some((&token, rest)) = p.split_first() else {
                return Err(Error::ReadBuffer);
            };
            p = rest;
            if token & 1 == 0 || csize < -255 {
                return Err(Error::RunLength);
            }
            fill = Some((-csize) as u8);
        }
        let known = fills.as_deref_mut().map(|f| &mut f.byte[k]);
        if let Some(b) = fill {
            match known {
                Some(slot) if *slot == Some(b) => {}
                Some(slot) => {
                    d.fill(b);
                    *slot = Some(b);
                }
                None => d.fill(b),
            }
            continue;
        }
        if let Some(slot) = known {
            // Forgotten before the write: a failed decode may leave anything there.
            *slot = None;
        }
        let c = csize as usize;
        if c == neblock {
            // A raw stream, copied into place as c-blosc2 does: unshuffling it from the chunk
            // through a small stage instead was measured 1.2x slower with the chunk in cache
            // and 1.6x slower from memory (4 MiB chunks of f64, 8 rows read side by side in
            // short pieces). Its place in the chunk relative to the scratch slot is arbitrary,
            // and glibc's memcpy crawls when the destination starts just after the source
            // modulo 4096 (see `copy_bytes`).
            copy_bytes(d, &p[..c]);
        } else {
            decode_codec(lay, state, &p[..c], d)?;
        }
        p = &p[c..];
    }
    Ok(())
}

/// Decodes block `j` into `out` (its size). `dref`: decoded block 0 for DELTA (None for block
/// 0 itself and VL blocks). `post`: run the postfilter (if any) into `out`.
pub(super) fn decode_block(
    lay: &Layout<'_>,
    w: &mut Worker,
    j: usize,
    out: &mut [u8],
    dref: Option<&[u8]>,
    tid: usize,
    post: bool,
) -> Result<()> {
    decode_block_out(lay, w, j, &mut Out::init(out), dref, tid, post)
}

/// [`decode_block`] into an [`Out`] piece. The two writers that fill a whole block write a new
/// piece as it is (a memcpyed block's copy, a single byte unshuffle: the common case); every
/// other one gets it as bytes, zeroed first when new.
pub(super) fn decode_block_out(
    lay: &Layout<'_>,
    w: &mut Worker,
    j: usize,
    out: &mut Out<'_>,
    dref: Option<&[u8]>,
    tid: usize,
    post: bool,
) -> Result<()> {
    let bsize = out.len();
    let post = post && lay.hooks.has_postfilter();
    let Worker {
        codec,
        tmp,
        fills,
        block,
        raw,
    } = w;
    if !post {
        return decode_into(lay, codec, tmp, fills, raw, j, out, dref);
    }
    // Decoded into scratch, then the postfilter writes `out`.
    let mut decoded = Out::init(scratch(block, bsize)?);
    decode_into(lay, codec, tmp, fills, raw, j, &mut decoded, dref)?;
    drop(decoded);
    {
        let (offset, _, _) = lay.block(j);
        let mut args = PostfilterArgs {
            input: scratch(block, bsize)?,
            output: out.bytes(),
            size: bsize as i32,
            typesize: lay.h.typesize as i32,
            offset: offset as i32,
            nblock: j as i32,
            tid: tid as i32,
        };
        lay.hooks
            .postfilter(&mut args)
            .map_err(|_| Error::Postfilter)?;
    }
    Ok(())
}

/// The decoding part of [`decode_block_out`] (everything but the postfilter), into `target`.
#[allow(clippy::too_many_arguments)]
fn decode_into(
    lay: &Layout<'_>,
    codec: &mut CodecState,
    tmp: &mut Vec<u8>,
    fills: &mut StreamFills,
    raw: &mut Vec<u8>,
    j: usize,
    target: &mut Out<'_>,
    dref: Option<&[u8]>,
) -> Result<()> {
    let bsize = target.len();
    if lay.special != SpecialKind::None {
        special::fill(lay.special, lay.src, &lay.h, target.bytes())?;
    } else if lay.memcpyed {
        let from = lay.hlen + j * lay.blocksize;
        match &lay.lazy {
            Some(lz) => {
                let cs = lz.trailer.csize(lay.src, j) as i64;
                if cs <= 0 || cs > lz.max_csize || (from + bsize) as i64 > lay.h.cbytes as i64 {
                    return Err(Error::InvalidHeader);
                }
                lz.read(from as u64, target.bytes())?;
            }
            None => {
                let s = lay.src.get(from..from + bsize).ok_or(Error::ReadBuffer)?;
                target.copy_from(s);
            }
        }
    } else if let Some(u) = lay.pipeline.single_unshuffle() {
        // Streams into scratch, then one unshuffle into place (no copy back).
        let t = scratch(tmp, bsize)?;
        decode_streams(lay, codec, j, t, Some(fills), raw)?;
        lay.pipeline.unshuffle_out(u, t, target);
    } else {
        let target = target.bytes();
        decode_streams(lay, codec, j, target, None, raw)?;
        if lay.pipeline.backward_active() {
            fills.forget();
            let (offset, _, _) = lay.block(j);
            lay.pipeline
                .backward(target, scratch(tmp, bsize)?, dref.map(|d| (offset, d)))?;
        }
    }
    Ok(())
}

/// The first worker's state, for work on the calling thread: `&mut` access to the workers
/// needs no locking.
pub(super) fn own_worker(workers: &mut [Mutex<Worker>]) -> &mut Worker {
    workers[0].get_mut().unwrap_or_else(|e| e.into_inner())
}
