//! The few chunk-header fields the frame layer needs (sizes, special type, VL flag), read with
//! bounds checks and nothing else. Decoding chunk payloads is `crate::chunk`'s job.

use crate::error::{Error, Result};

/// Blosc1/minimal chunk header size.
pub const MIN_HEADER_LEN: usize = 16;
/// Extended (Blosc2) chunk header size.
pub const EXTENDED_HEADER_LEN: usize = 32;

/// Special-value kinds (chunk byte 31, bits 4-6).
pub mod special {
    /// Not special.
    pub const NONE: u8 = 0;
    /// All zeros.
    pub const ZERO: u8 = 1;
    /// All NaN (float32/float64).
    pub const NAN: u8 = 2;
    /// A repeated value stored after the header.
    pub const VALUE: u8 = 3;
    /// Uninitialised contents.
    pub const UNINIT: u8 = 4;
}

/// Header fields of one stored chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkInfo {
    /// Uncompressed size.
    pub nbytes: i32,
    /// Total chunk size including its header.
    pub cbytes: i32,
    /// Header typesize byte.
    pub typesize: u8,
    /// Special type (see [`special`]); 0 for Blosc1 chunks.
    pub special: u8,
    /// Whether this is a VL-block chunk (flags2 bit 0).
    pub vl_blocks: bool,
}

impl ChunkInfo {
    /// Reads the header at the start of `chunk` (`chunk` may be longer than the chunk itself).
    pub fn parse(chunk: &[u8]) -> Result<ChunkInfo> {
        if chunk.len() < MIN_HEADER_LEN {
            return Err(Error::ReadBuffer);
        }
        let le =
            |p: usize| i32::from_le_bytes([chunk[p], chunk[p + 1], chunk[p + 2], chunk[p + 3]]);
        let nbytes = le(4);
        let cbytes = le(12);
        let extended = chunk[2] & 0x05 == 0x05;
        let min = if extended {
            EXTENDED_HEADER_LEN
        } else {
            MIN_HEADER_LEN
        };
        if nbytes < 0 || (cbytes as i64) < min as i64 {
            return Err(Error::InvalidHeader);
        }
        let (special, vl_blocks) = if extended {
            if chunk.len() < EXTENDED_HEADER_LEN {
                return Err(Error::ReadBuffer);
            }
            let vl = chunk[30] & 1 != 0;
            // A VL-block chunk's blocksize field counts its blocks, each with a 4-byte bstart
            // after the header: a count that cannot fit in cbytes is a corrupt chunk (c-blosc2
            // rejects it when it reads the chunk from a frame, lazily or not).
            let nblocks = i64::from(le(8));
            if vl && (nblocks < 0 || EXTENDED_HEADER_LEN as i64 + 4 * nblocks > i64::from(cbytes)) {
                return Err(Error::InvalidHeader);
            }
            ((chunk[31] >> 4) & 0x07, vl)
        } else {
            (special::NONE, false)
        };
        Ok(ChunkInfo {
            nbytes,
            cbytes,
            typesize: chunk[3],
            special,
            vl_blocks,
        })
    }

    /// Whether a frame can hold this chunk: it has bytes (c-blosc2 derives a frame's nchunks
    /// from nbytes) and it is at least a 32-byte header long, because readers (c-blosc2's too)
    /// require every stored offset to leave room for one. Short Blosc1 chunks (16-byte header)
    /// fail the second rule. Plain super-chunks take such chunks, as c-blosc2's do; saving one
    /// into a frame then fails up front.
    pub fn frame_storable(&self) -> bool {
        self.nbytes != 0 && self.cbytes as usize >= EXTENDED_HEADER_LEN
    }

    /// Whether a frame stores this chunk as a special offset instead of a payload.
    pub fn is_offset_special(&self) -> bool {
        matches!(self.special, special::ZERO | special::NAN | special::UNINIT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sizes_and_special_type() {
        let mut c = [0u8; 32];
        c[0] = 5;
        c[2] = 0x05;
        c[4..8].copy_from_slice(&1000i32.to_le_bytes());
        c[12..16].copy_from_slice(&32i32.to_le_bytes());
        c[31] = 0x10;
        let i = ChunkInfo::parse(&c).unwrap();
        assert_eq!((i.nbytes, i.cbytes, i.special), (1000, 32, special::ZERO));
        assert!(i.is_offset_special());
        assert_eq!(ChunkInfo::parse(&c[..31]), Err(Error::ReadBuffer));
        c[12..16].copy_from_slice(&31i32.to_le_bytes());
        assert_eq!(ChunkInfo::parse(&c), Err(Error::InvalidHeader));
        // A Blosc1 16-byte chunk: no extended fields are read.
        let mut b = [0u8; 16];
        b[0] = 2;
        b[12] = 16;
        assert_eq!(ChunkInfo::parse(&b).unwrap().special, special::NONE);
    }

    #[test]
    fn vl_block_count_must_fit_in_the_chunk() {
        let mut c = [0u8; 48];
        c[0] = 6;
        c[2] = 0x05;
        c[4..8].copy_from_slice(&100i32.to_le_bytes());
        c[12..16].copy_from_slice(&48i32.to_le_bytes());
        c[30] = 1; // VL blocks
        c[8..12].copy_from_slice(&4i32.to_le_bytes()); // 32 + 4*4 == 48: fits
        assert!(ChunkInfo::parse(&c).unwrap().vl_blocks);
        c[8..12].copy_from_slice(&5i32.to_le_bytes());
        assert_eq!(ChunkInfo::parse(&c), Err(Error::InvalidHeader));
        c[8..12].copy_from_slice(&u32::MAX.to_le_bytes()); // what a corrupted file may say
        assert_eq!(ChunkInfo::parse(&c), Err(Error::InvalidHeader));
        c[30] = 0; // the same field in a regular chunk is a blocksize: not checked here
        assert!(ChunkInfo::parse(&c).is_ok());
    }
}
