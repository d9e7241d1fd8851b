//! Special chunks as frames synthesise them on read ([`synthesise_special`], with c-blosc2's
//! blocksize) and their regular equivalents for frames with variable chunk sizes
//! ([`regular_equivalent`]).

#![forbid(unsafe_code)]

use super::*;

/// Whether a frame of `frame_typesize` may keep an incoming special chunk of `kind`, whose
/// items are `chunk_typesize` bytes, as an index entry (with a fixed chunksize). An entry reads
/// back with the frame's typesize, as in c-blosc2; that changes nothing for zeros and
/// uninitialised chunks, but NaN bytes depend on it: a NaN chunk of other items would read back
/// as other bytes, or (frame typesizes other than 4 and 8) not at all. Such a chunk is stored as
/// its regular equivalent in its own typesize instead ([`equivalent_typesize`]). A NaN chunk
/// whose own typesize is neither 4 nor 8 does not decode by itself; it keeps c-blosc2's entry.
pub fn keeps_as_entry(kind: SpecialKind, frame_typesize: i32, chunk_typesize: u8) -> bool {
    kind != SpecialKind::Nan
        || frame_typesize == i32::from(chunk_typesize)
        || !matches!(chunk_typesize, 4 | 8)
}

/// The typesize of the regular equivalent of an incoming special chunk (see
/// [`keeps_as_entry`]): the frame's, unless the chunk's bytes depend on its own.
pub fn equivalent_typesize(kind: SpecialKind, frame_typesize: i32, chunk_typesize: u8) -> i32 {
    if keeps_as_entry(kind, frame_typesize, chunk_typesize) {
        frame_typesize
    } else {
        i32::from(chunk_typesize)
    }
}

/// The blocksize c-blosc2 writes into a synthesised special chunk: its automatic blocksize for
/// `BLOSC2_CPARAMS_DEFAULTS` (BloscLZ, clevel 5, shuffle) with the frame's typesize, or the
/// frame's requested blocksize (docs/format/chunk.md#blocksize, verified against 3.3.5 output).
pub fn special_blocksize(typesize: i32, nbytes: i32, requested: i32) -> i32 {
    let ts = typesize.max(1) as i64;
    let nb = nbytes as i64;
    if nb < ts {
        return 1;
    }
    let mut bs = if requested > 0 {
        requested as i64
    } else {
        // BloscLZ + shuffle + clevel 5 splits when typesize <= 16 and there are >= 32 elements.
        let split = ts <= 16 && nb / ts >= 32;
        if split {
            (64 * 1024 * ts).clamp(32 * 1024, 4 * 1024 * 1024)
        } else if nb >= 32 * 1024 {
            128 * 1024
        } else {
            nb
        }
    };
    bs = bs.min(nb);
    if bs > ts {
        bs -= bs % ts;
    }
    bs as i32
}

/// A regular (non-special) chunk with the same contents as a ZERO/UNINIT/NaN special chunk of
/// `nbytes`, for frames with variable chunk sizes: there a special offset cannot be sized on
/// read (c-blosc2 3.3.5 fails on it), and a *stored* special chunk makes c-blosc2's lazy-chunk
/// path fail (it refuses to even open a file frame whose chunk 0 is one).
///
/// Zeros (and uninit, whose contents are undefined) become blocks whose single stream has
/// `csize == 0` ("all zero"), 8 bytes per block; NaNs (typesize 4 or 8, as the special chunk
/// requires) become byte-shuffled blocks whose split streams are zero streams or one-byte runs
/// (18 or 34 bytes per block), not a memcpyed chunk of nbytes.
pub fn regular_equivalent(kind: SpecialKind, typesize: i32, nbytes: i32) -> Result<Vec<u8>> {
    if nbytes <= 0 {
        return Err(Error::InvalidParam);
    }
    let ts_byte = if (1..=255).contains(&typesize) {
        typesize as u8
    } else {
        1
    };
    let header = |flags: u8, blocksize: i32, cbytes: i32| {
        let mut c = vec![0u8; EXTENDED_HEADER_LEN];
        c[..4].copy_from_slice(&[5, 1, flags, ts_byte]);
        c[4..8].copy_from_slice(&nbytes.to_le_bytes());
        c[8..12].copy_from_slice(&blocksize.to_le_bytes());
        c[12..16].copy_from_slice(&cbytes.to_le_bytes());
        c
    };
    match kind {
        SpecialKind::Zeros | SpecialKind::Uninit => {
            // Blocks from the typesize the header states: a frame typesize no chunk can have
            // (> 255, e.g. a hostile frame) must not shrink them to 1 byte (8 bytes each).
            let bs = special_blocksize(i32::from(ts_byte), nbytes, 0).max(1);
            let nblocks = (nbytes as i64 + bs as i64 - 1) / bs as i64;
            let cbytes = EXTENDED_HEADER_LEN as i64 + 8 * nblocks;
            let cbytes = i32::try_from(cbytes).map_err(|_| Error::TwoGbLimit)?;
            // Extended header, never split: one stream per block.
            let mut c = header(0x15, bs, cbytes);
            let streams = EXTENDED_HEADER_LEN as i64 + 4 * nblocks;
            for j in 0..nblocks {
                c.extend_from_slice(&((streams + 4 * j) as i32).to_le_bytes());
            }
            c.resize(cbytes as usize, 0);
            Ok(c)
        }
        SpecialKind::Nan => {
            let pattern: &[u8] = match typesize {
                4 => &[0x00, 0x00, 0xc0, 0x7f],
                8 => &[0, 0, 0, 0, 0, 0, 0xf8, 0x7f],
                _ => return Err(Error::Data),
            };
            if !(nbytes as usize).is_multiple_of(pattern.len()) {
                return Err(Error::Data);
            }
            // Byte-shuffled, every byte plane of a NaN block is one repeated byte: each full
            // block is `typesize` split streams, each a zero stream or a one-byte run, so the
            // chunk stays small whatever nbytes says (a 32-byte NaN chunk may claim 2 GiB).
            // The leftover block is never split: one raw stream of its shuffled bytes.
            let ts = pattern.len();
            let bs = special_blocksize(typesize, nbytes, 0).max(1) as usize;
            let nbytes_u = nbytes as usize;
            let (nfull, left) = (nbytes_u / bs, nbytes_u % bs);
            let nblocks = nfull + usize::from(left > 0);
            // Per byte plane: a zero stream (csize 0), or a run (csize -byte, token 1).
            let mut full_block = Vec::new();
            for &b in pattern {
                full_block.extend_from_slice(&(-i32::from(b)).to_le_bytes());
                if b != 0 {
                    full_block.push(1);
                }
            }
            let streams = EXTENDED_HEADER_LEN + 4 * nblocks;
            let len = streams + nfull * full_block.len() + if left > 0 { 4 + left } else { 0 };
            let cbytes = i32::try_from(len).map_err(|_| Error::TwoGbLimit)?;
            // Extended header with splitting allowed, SHUFFLE in the last of the six filter
            // slots (header bytes 16..22).
            let mut c = header(0x05, bs as i32, cbytes);
            c[21] = crate::filters::SHUFFLE;
            for j in 0..nblocks {
                let at = streams + j * full_block.len();
                c.extend_from_slice(&(at as i32).to_le_bytes());
            }
            for _ in 0..nfull {
                c.extend_from_slice(&full_block);
            }
            if left > 0 {
                c.extend_from_slice(&(left as i32).to_le_bytes());
                for &b in pattern {
                    c.extend(std::iter::repeat_n(b, left / ts));
                }
            }
            debug_assert_eq!(c.len(), len);
            Ok(c)
        }
    }
}

/// A 32-byte special chunk as c-blosc2 synthesises it for a special offset.
pub fn synthesise_special(
    kind: SpecialKind,
    typesize: i32,
    nbytes: i32,
    blocksize: i32,
) -> Vec<u8> {
    let mut c = vec![0u8; EXTENDED_HEADER_LEN];
    c[0] = 5;
    c[1] = 1;
    c[2] = 0x05;
    c[3] = if (1..=255).contains(&typesize) {
        typesize as u8
    } else {
        1
    };
    c[4..8].copy_from_slice(&nbytes.to_le_bytes());
    c[8..12].copy_from_slice(&special_blocksize(typesize, nbytes, blocksize).to_le_bytes());
    c[12..16].copy_from_slice(&(EXTENDED_HEADER_LEN as i32).to_le_bytes());
    c[31] = kind.special_id() << 4;
    c
}
