//! Validating a chunk before any block is decoded: the header, the block-start table, the
//! dictionary and the VL-block sizes, with c-blosc2's error codes, into a [`Layout`].

use super::*;

/// Per-block sizes of a VL-block chunk.
pub(super) struct VlInfo {
    /// Uncompressed size of each block.
    pub(super) nbytes: Vec<usize>,
    /// Offset of each block in the flat output.
    pub(super) offsets: Vec<usize>,
    /// Compressed span of each block (4-byte size + stream).
    pub(super) spans: Vec<usize>,
}

/// Where the blocks of a lazy chunk are read from, and the bounds every read must keep.
pub(super) struct LazyRef<'a> {
    pub(super) source: &'a dyn LazySource,
    pub(super) trailer: Trailer,
    /// The most a block's csize may be (c-blosc2's bound: blocksize + 4 bytes per stream).
    pub(super) max_csize: i64,
    /// End of the block-start table (and dictionary): no block starts before it.
    pub(super) data_start: i64,
}

impl LazyRef<'_> {
    /// Reads the compressed bytes of block `j` (starting at `bstart`) into `buf`; returns
    /// their number.
    pub(super) fn read_block(
        &self,
        src: &[u8],
        cbytes: i32,
        j: usize,
        bstart: i64,
        buf: &mut Vec<u8>,
    ) -> Result<usize> {
        let cs = self.trailer.csize(src, j) as i64;
        if cs <= 0 || cs > self.max_csize {
            return Err(Error::InvalidHeader);
        }
        if bstart < self.data_start || bstart + cs > i64::from(cbytes) {
            return Err(Error::InvalidHeader);
        }
        let n = cs as usize;
        let t = &self.trailer;
        super::lazy::read_growing(self.source, t.nchunk, t.offset, bstart as u64, buf, 0, n)?;
        Ok(n)
    }

    pub(super) fn read(&self, pos: u64, dst: &mut [u8]) -> Result<()> {
        self.source
            .read_lazy(self.trailer.nchunk, self.trailer.offset, pos, dst)
    }
}

/// A validated chunk, ready for block decoding.
pub(super) struct Layout<'a> {
    /// The chunk (and whatever follows it in the caller's buffer: reads are bounded by the
    /// source size, as in c-blosc2).
    pub(super) src: &'a [u8],
    pub(super) h: ChunkHeader,
    pub(super) hlen: usize,
    pub(super) nblocks: usize,
    pub(super) blocksize: usize,
    pub(super) leftover: usize,
    pub(super) special: SpecialKind,
    pub(super) memcpyed: bool,
    pub(super) dict: Option<DecompressDict>,
    /// Boxed: VL-block chunks are rare, and a smaller layout is cheaper to build per chunk.
    pub(super) vl: Option<Box<VlInfo>>,
    pub(super) pipeline: Pipeline<'a>,
    pub(super) hooks: &'a dyn Hooks,
    /// Set for lazy chunks: their blocks (and dictionary) are read from here.
    pub(super) lazy: Option<LazyRef<'a>>,
}

impl Layout<'_> {
    /// (offset in the output, size, is the leftover block) of block `j`.
    pub(super) fn block(&self, j: usize) -> (usize, usize, bool) {
        if let Some(vl) = &self.vl {
            return (vl.offsets[j], vl.nbytes[j], false);
        }
        let last = j + 1 == self.nblocks && self.leftover > 0;
        let size = if last { self.leftover } else { self.blocksize };
        (j * self.blocksize, size, last)
    }

    pub(super) fn bstart(&self, j: usize) -> i64 {
        rd_i32(self.src, self.hlen + 4 * j) as i64
    }

    /// Block 0 must be decoded before the others (DELTA references it).
    pub(super) fn needs_dref(&self) -> bool {
        self.vl.is_none()
            && self.special == SpecialKind::None
            && !self.memcpyed
            && self.nblocks > 1
            && self.pipeline.has_delta()
    }
}

/// Validates `src` for decoding (c-blosc2's `initialize_context_decompression`, same checks
/// and codes). `dst_len`: the destination size to check nbytes against; `mask_len`: the
/// length of a block mask. `Ok(None)`: a header-only empty chunk (decodes to 0 bytes).
#[inline(always)]
pub(super) fn prepare<'a>(
    src: &'a [u8],
    hooks: &'a dyn Hooks,
    dst_len: Option<usize>,
    mask_len: Option<usize>,
    source: Option<&'a dyn LazySource>,
) -> Result<Option<Layout<'a>>> {
    let h = ChunkHeader::read(src, true)?;
    if let Some(d) = dst_len {
        if h.nbytes as i64 > d as i64 {
            return Err(Error::WriteBuffer);
        }
    }
    let lazy = h.is_lazy();
    if !lazy && h.cbytes as i64 > src.len() as i64 {
        return Err(Error::InvalidHeader);
    }
    // Like c-blosc2, bound every read by the source size the caller gave (not by cbytes).
    let nblocks = h.nblocks().max(0) as usize;
    if let Some(m) = mask_len {
        if m != nblocks {
            return Err(Error::Data);
        }
    }
    let special = h.special().ok_or(Error::Data)?;
    let memcpyed = h.is_memcpyed();
    let hlen = h.header_len();
    if memcpyed && h.cbytes as i64 != h.nbytes as i64 + hlen as i64 {
        return Err(Error::Data);
    }
    let pipeline = Pipeline {
        // Instrumented chunks hold records, not filtered data (see `super::instr`).
        filters: if h.is_instr() { [0; 6] } else { h.filters },
        meta: h.filters_meta,
        typesize: h.typesize as usize,
        version: h.version,
        hooks,
    };
    if h.nbytes == 0 && h.cbytes as usize == hlen && special == SpecialKind::None {
        return Ok(None);
    }
    let regular = special == SpecialKind::None && !memcpyed;
    let bstarts_end = if regular {
        hlen.checked_add(nblocks.checked_mul(4).ok_or(Error::InvalidHeader)?)
            .filter(|&e| e <= i32::MAX as usize)
            .ok_or(Error::InvalidHeader)?
    } else {
        hlen
    };
    if src.len() < bstarts_end {
        return Err(Error::ReadBuffer);
    }
    let mut lazy_ref = None;
    if lazy && special == SpecialKind::None {
        // Lazy chunks are read through the frame they came from (c-blosc2 needs the owning
        // super-chunk, and fails the same way without it).
        let source = source.ok_or(Error::InvalidParam)?;
        if h.is_vl() {
            // Callers read lazy VL-block chunks whole (`materialise`) or block by block.
            return Err(Error::InvalidParam);
        }
        let trailer = Trailer::locate(src, nblocks)?;
        let streams = if h.dont_split() { 1 } else { h.typesize as i64 };
        lazy_ref = Some(LazyRef {
            source,
            trailer,
            max_csize: h.blocksize as i64 + 4 * streams.max(1),
            data_start: bstarts_end as i64,
        });
    }
    let mut dict = None;
    // c-blosc2 reads a flagged dictionary whatever the chunk kind; we skip it in memcpyed chunks
    // only (c-blosc2's own dict writer leaves the flag set when it falls back to memcpy, which
    // its reader then rejects: tolerate those chunks).
    if h.uses_dict() && !memcpyed {
        if lazy && lazy_ref.is_none() && source.is_none() {
            // c-blosc2 reads the dictionary of any chunk flagged lazy (special ones included)
            // through the owning super-chunk, and fails without one.
            return Err(Error::InvalidParam);
        }
        let mut lazy_bytes = Vec::new();
        let rest = match &mut lazy_ref {
            None => &src[bstarts_end..],
            Some(lz) => {
                // The dictionary follows the block-start table in the stored chunk.
                let cbytes = h.cbytes as i64;
                if (bstarts_end as i64) + 4 > cbytes {
                    return Err(Error::InvalidHeader);
                }
                let mut n = [0u8; 4];
                lz.read(bstarts_end as u64, &mut n)?;
                let dsize = i32::from_le_bytes(n);
                if dsize <= 0 || dsize > MAX_DICT_SIZE {
                    return Err(Error::CodecDict);
                }
                if bstarts_end as i64 + 4 + dsize as i64 > cbytes {
                    return Err(Error::InvalidHeader);
                }
                lazy_bytes.resize(4 + dsize as usize, 0);
                lz.read(bstarts_end as u64, &mut lazy_bytes)?;
                lz.data_start += 4 + dsize as i64;
                &lazy_bytes[..]
            }
        };
        if rest.len() < 4 {
            return Err(Error::ReadBuffer);
        }
        let dsize = rd_i32(rest, 0);
        if dsize <= 0 || dsize > MAX_DICT_SIZE {
            return Err(Error::CodecDict);
        }
        if rest.len() - 4 < dsize as usize {
            return Err(Error::ReadBuffer);
        }
        let bytes = &rest[4..4 + dsize as usize];
        if let Some(cc @ (codecs::LZ4 | codecs::ZSTD)) = codecs::decoder_for_format(h.compformat())
        {
            dict = Some(DecompressDict::new(cc, bytes).map_err(|_| Error::CodecDict)?);
        }
    }
    let mut vl = None;
    if h.is_vl() && regular {
        let cbytes = h.cbytes as i64;
        let mut info = VlInfo {
            nbytes: Vec::with_capacity(nblocks),
            offsets: Vec::with_capacity(nblocks),
            spans: Vec::with_capacity(nblocks),
        };
        let mut total: i64 = 0;
        let mut prev: i64 = 0;
        let mut max_bs = 0usize;
        for i in 0..nblocks {
            let bstart = rd_i32(src, hlen + 4 * i) as i64;
            let next = if i + 1 < nblocks {
                rd_i32(src, hlen + 4 * (i + 1)) as i64
            } else {
                cbytes
            };
            if bstart < bstarts_end as i64
                || bstart <= prev
                || next <= bstart
                || next > cbytes
                || bstart > src.len() as i64 - 4
            {
                return Err(Error::InvalidHeader);
            }
            let nb = rd_i32(src, bstart as usize);
            if nb <= 0 {
                return Err(Error::InvalidHeader);
            }
            info.offsets.push(total as usize);
            total += nb as i64;
            if total > h.nbytes as i64 {
                return Err(Error::InvalidHeader);
            }
            info.nbytes.push(nb as usize);
            info.spans.push((next - bstart) as usize);
            max_bs = max_bs.max(nb as usize);
            prev = bstart;
        }
        if total != h.nbytes as i64 {
            return Err(Error::InvalidHeader);
        }
        vl = Some(Box::new(info));
    }
    let blocksize = if h.is_vl() { 0 } else { h.blocksize as usize };
    Ok(Some(Layout {
        src,
        h,
        hlen,
        nblocks,
        blocksize,
        leftover: h.leftover().max(0) as usize,
        special,
        memcpyed,
        dict,
        lazy: lazy_ref,
        vl,
        pipeline,
        hooks,
    }))
}
