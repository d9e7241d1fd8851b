//! Chunks assembled from blocks encoded one at a time, for a caller that keeps the encoded
//! blocks of a chunk and changes only a few of them between two writes (a frame's offsets
//! index: an append changes only its last block).
//!
//! A block encoded alone, with room for its worst case, is the block the chunk writer lays out
//! whenever the chunk still has that room where the block lands (c-blosc2's serial writer then
//! gives every stream `neblock` bytes, and its parallel writer places it unchanged). So a chunk
//! whose every block lands with that room is the concatenation of its lone blocks behind the
//! header and the block starts; [`Compressor::assemble_blocks`] builds exactly that and leaves
//! every other case (a block near the end of a tight destination, a memcpyed or all-zero chunk)
//! to [`Compressor::compress`]. Only pipelines whose blocks do not depend on anything but their
//! own bytes qualify: no prefilter, no dictionary, no delta filter, built-in codecs.

use super::*;

/// One block encoded alone: its streams, csize fields included, as they land in the chunk.
#[derive(Clone, Debug, Default)]
pub struct LoneBlock {
    bytes: Vec<u8>,
    /// Input bytes of the block.
    len_in: usize,
    /// The chunk blocksize it was encoded for.
    blocksize: usize,
    /// Every stream is a zero run.
    zero: bool,
    /// The most bytes the block could have taken ([`block_bound`]): the room it needs.
    bound: usize,
}

impl LoneBlock {
    /// The encoded bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl Compressor {
    /// Whether the parameters allow blocks to be encoded alone (see the module doc).
    fn blockwise_ok(&self) -> bool {
        let cp = &self.cp;
        cp.clevel > 0
            && !cp.use_dict
            && !self.hooks.has_prefilter()
            && !cp.filters.contains(&crate::filters::DELTA)
            && matches!(
                cp.compcode,
                codecs::BLOSCLZ | codecs::LZ4 | codecs::LZ4HC | codecs::ZLIB | codecs::ZSTD
            )
            && cp.typesize > 0
            && cp.typesize <= MAX_HEADER_TYPESIZE
    }

    /// Encodes `block`, block `j` of a chunk of `nbytes` input bytes, alone; `None` when the
    /// parameters do not allow it or `block` is not that block's size.
    pub fn encode_lone_block(
        &mut self,
        nbytes: usize,
        j: usize,
        block: &[u8],
    ) -> Result<Option<LoneBlock>> {
        if !self.blockwise_ok() || nbytes == 0 || nbytes > MAX_BUFFERSIZE as usize {
            return Ok(None);
        }
        let b = blocks_of(&self.cp, nbytes);
        let is_left = j + 1 == b.nblocks && b.leftover > 0;
        let want = if is_left { b.leftover } else { b.blocksize };
        if j >= b.nblocks || block.len() != want {
            return Ok(None);
        }
        let hooks = self.hooks.clone();
        let lone = Blocks {
            nblocks: 1,
            leftover: if is_left { b.leftover } else { 0 },
            ..b
        };
        let plan = Plan::new(
            &self.cp,
            &*hooks,
            Input::Flat(block),
            lone,
            header::version::STABLE,
            EXTENDED_HEADER_LEN,
        );
        let bound = block_bound(&plan, 0);
        let mut bytes = vec![0u8; bound];
        let mut streams = Vec::new();
        let mut neblock = 0;
        let mut w = lock(&self.workers[0]);
        let r = encode_block(
            &plan,
            &mut w,
            0,
            0,
            &mut bytes,
            &mut streams,
            &mut neblock,
            None,
            false,
        )?;
        let Some((n, _)) = r else {
            return Ok(None);
        };
        bytes.truncate(n);
        Ok(Some(LoneBlock {
            bytes,
            len_in: block.len(),
            blocksize: b.blocksize,
            zero: streams.iter().all(|s| *s == Stream::Zero),
            bound,
        }))
    }

    /// The chunk [`Compressor::compress`] writes for an input of `nbytes` into a destination of
    /// `destsize` bytes, built from the input's blocks encoded alone (in order); `None` when
    /// that chunk is not their plain concatenation (the caller then compresses the input).
    /// The chunk is built in `out` (emptied first: a buffer to reuse, or a new one).
    pub fn assemble_blocks(
        &mut self,
        nbytes: usize,
        blocks: &[&LoneBlock],
        destsize: usize,
        out: Vec<u8>,
    ) -> Result<Option<Vec<u8>>> {
        self.check_params(nbytes, destsize)?;
        if !self.blockwise_ok() || nbytes < MIN_BUFFERSIZE as usize {
            return Ok(None);
        }
        let (format, versionlz) = self.codec_ids()?;
        let destsize = destsize.min(i32::MAX as usize);
        let Blocks {
            typesize,
            blocksize,
            nblocks,
            leftover,
            dont_split,
        } = blocks_of(&self.cp, nbytes);
        if blocks.len() != nblocks {
            return Ok(None);
        }
        let bstarts_end = EXTENDED_HEADER_LEN + 4 * nblocks;
        if bstarts_end > destsize {
            return Ok(None);
        }
        let mut nt = bstarts_end;
        let mut all_zero = true;
        for (j, b) in blocks.iter().enumerate() {
            let want = if j + 1 == nblocks && leftover > 0 {
                leftover
            } else {
                blocksize
            };
            if b.blocksize != blocksize || b.len_in != want {
                return Ok(None);
            }
            if nt.saturating_add(b.bound) > destsize {
                return Ok(None);
            }
            nt += b.bytes.len();
            all_zero &= b.zero;
        }
        if all_zero {
            return Ok(None);
        }
        let cp = &self.cp;
        let mut flags = flags::EXTENDED | filters_to_flags(&cp.filters) | (format << 5);
        if dont_split {
            flags |= flags::DONT_SPLIT;
        }
        let h = ChunkHeader {
            version: header::version::STABLE,
            versionlz,
            flags,
            typesize: typesize as u8,
            nbytes: nbytes as i32,
            blocksize: blocksize as i32,
            cbytes: nt as i32,
            filters: cp.filters,
            udcompcode: cp.compcode,
            compcode_meta: cp.compcode_meta,
            filters_meta: cp.filters_meta,
            flags2: 0,
            blosc2_flags: 0,
        };
        let mut out = out;
        out.clear();
        out.reserve(nt);
        out.resize(bstarts_end, 0);
        h.write(&mut out);
        let mut at = bstarts_end;
        for (j, b) in blocks.iter().enumerate() {
            let bpos = EXTENDED_HEADER_LEN + 4 * j;
            out[bpos..bpos + 4].copy_from_slice(&(at as i32).to_le_bytes());
            at += b.bytes.len();
        }
        for b in blocks {
            out.extend_from_slice(&b.bytes);
        }
        debug_assert_eq!(out.len(), nt);
        Ok(Some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::no_hooks;

    /// Assembled chunks are byte for byte what `compress` writes, or `None`.
    #[test]
    fn assembled_chunks_equal_compressed_ones() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut assembled = 0;
        let mut declined = 0;
        for (compcode, clevel, typesize, filters, splitmode, blocksize) in [
            (
                codecs::BLOSCLZ,
                5u8,
                8i32,
                [0, 0, 0, 0, 0, 1u8],
                2i32,
                16384i32,
            ),
            (codecs::BLOSCLZ, 5, 8, [0, 0, 0, 0, 0, 1], 1, 16384),
            (codecs::LZ4, 9, 4, [0, 0, 0, 0, 0, 2], 3, 8192),
            (codecs::ZSTD, 1, 8, [0, 0, 0, 0, 0, 1], 4, 0),
            (codecs::BLOSCLZ, 1, 2, [0; 6], 2, 4096),
        ] {
            let cp = CParams {
                compcode,
                clevel,
                typesize,
                filters,
                splitmode,
                blocksize,
                nthreads: 1,
                ..CParams::default()
            };
            let mut c = Compressor::new(cp, no_hooks()).unwrap();
            for shape in 0..5 {
                for nbytes in [40usize, 16384, 16392, 40000, 100_000, 262_144] {
                    let nbytes = nbytes / 8 * 8;
                    let src: Vec<u8> = match shape {
                        // Growing offsets (an index), all zeros, random, a constant, mixed.
                        0 => (0..nbytes / 8)
                            .flat_map(|i| (i as u64 * 4037).to_le_bytes())
                            .collect(),
                        1 => vec![0; nbytes],
                        2 => (0..nbytes).map(|_| rnd() as u8).collect(),
                        3 => vec![0x81; nbytes],
                        _ => (0..nbytes)
                            .map(|i| if i % 7000 < 3500 { 0 } else { rnd() as u8 })
                            .collect(),
                    };
                    let bs = blocks_of(&c.cp, nbytes).blocksize;
                    let blocks: Vec<LoneBlock> = src
                        .chunks(bs)
                        .enumerate()
                        .map(|(j, b)| c.encode_lone_block(nbytes, j, b).unwrap().unwrap())
                        .collect();
                    let refs: Vec<&LoneBlock> = blocks.iter().collect();
                    for room in [0usize, 8, 64, 100_000] {
                        let dest = nbytes + 32 + room;
                        let mut want = vec![0u8; dest];
                        let n = c.compress(&src, &mut want).unwrap();
                        want.truncate(n);
                        match c.assemble_blocks(nbytes, &refs, dest, Vec::new()).unwrap() {
                            Some(got) => {
                                assert_eq!(got, want, "{compcode} {shape} {nbytes} {room}");
                                assembled += 1;
                            }
                            None => declined += 1,
                        }
                    }
                }
            }
        }
        assert!(assembled > 100 && declined > 10, "{assembled} {declined}");
    }

    #[test]
    fn lone_blocks_refuse_what_they_cannot_reproduce() {
        let cp = CParams {
            typesize: 8,
            filters: [0, 0, 0, 0, 0, crate::filters::DELTA],
            ..CParams::default()
        };
        let mut c = Compressor::new(cp, no_hooks()).unwrap();
        assert!(c.encode_lone_block(8192, 0, &[0; 8192]).unwrap().is_none());
        let mut c = Compressor::new(CParams::default(), no_hooks()).unwrap();
        // Wrong block size for block 0 of 8192 bytes.
        assert!(c.encode_lone_block(8192, 0, &[1; 100]).unwrap().is_none());
        assert!(c.encode_lone_block(8192, 5, &[1; 8192]).unwrap().is_none());
    }
}
