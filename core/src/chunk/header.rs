//! The chunk header: 16 bytes (Blosc1, versions 1-4) or 32 bytes (extended, Blosc2).
//!
//! Layout (all integers little-endian):
//!
//! | byte | field |
//! |---|---|
//! | 0 | version (2 Blosc1, 3/4 Blosc2 betas, 5 stable, 6 VL blocks) |
//! | 1 | versionlz (codec format version) |
//! | 2 | flags: bit0 shuffle, bit1 memcpyed, bit2 bitshuffle, bit3 delta, bit4 dont_split, bits5-7 codec format |
//! | 3 | typesize (1 when the real one is > 255) |
//! | 4-7 | nbytes |
//! | 8-11 | blocksize (number of blocks for VL-block chunks) |
//! | 12-15 | cbytes (whole chunk, header included) |
//! | 16-21 | filters (extended only) |
//! | 22 | udcompcode (the Blosc2 compcode) |
//! | 23 | compcode_meta |
//! | 24-29 | filters_meta |
//! | 30 | flags2: bit0 VL blocks |
//! | 31 | blosc2_flags: bit0 dict, bit1 big-endian writer, bit3 lazy, bits4-6 special kind, bit7 instrumented |
//!
//! A header is *extended* iff flags bits 0 and 2 are both set; then the pipeline is bytes 16-29
//! and bits 0/2 no longer mean shuffle/bitshuffle. [`ChunkHeader::read`] applies exactly the
//! rejection rules c-blosc2 applies when it reads a header, with the same error codes, so every
//! field of a parsed header can be trusted by the code below it.

use crate::error::{Error, Result};
use crate::filters;

/// `BLOSC_MIN_HEADER_LENGTH`.
pub const MIN_HEADER_LEN: usize = 16;
/// `BLOSC_EXTENDED_HEADER_LENGTH` (also `BLOSC2_MAX_OVERHEAD`).
pub const EXTENDED_HEADER_LEN: usize = 32;
/// `BLOSC2_MAXBLOCKSIZE`.
pub const MAX_BLOCKSIZE: i32 = 536_866_816;
/// `BLOSC2_MAXTYPESIZE`.
pub const MAX_TYPESIZE: i32 = 536_866_816;
/// `BLOSC_MAX_TYPESIZE`: larger typesizes are stored as 1.
pub const MAX_HEADER_TYPESIZE: i32 = 255;
/// `BLOSC2_MAX_BUFFERSIZE`.
pub const MAX_BUFFERSIZE: i32 = i32::MAX - 32;
/// `BLOSC_MIN_BUFFERSIZE`: smaller inputs are always stored memcpyed.
pub const MIN_BUFFERSIZE: i32 = 32;
/// `BLOSC2_MAXDICTSIZE`.
pub const MAX_DICT_SIZE: i32 = 32 * 1024;
/// `BLOSC2_MINUSEFULDICT`.
pub const MIN_USEFUL_DICT: i32 = 256;

/// Chunk format versions (header byte 0).
pub mod version {
    /// `BLOSC1_VERSION_FORMAT_PRE1`.
    pub const BLOSC1_PRE1: u8 = 1;
    /// `BLOSC1_VERSION_FORMAT`.
    pub const BLOSC1: u8 = 2;
    /// `BLOSC2_VERSION_FORMAT_ALPHA`.
    pub const ALPHA: u8 = 3;
    /// `BLOSC2_VERSION_FORMAT_BETA1`.
    pub const BETA1: u8 = 4;
    /// `BLOSC2_VERSION_FORMAT_STABLE`: what regular and special chunks are written with.
    pub const STABLE: u8 = 5;
    /// `BLOSC2_VERSION_FORMAT_VL_BLOCKS`: VL-block chunks.
    pub const VL_BLOCKS: u8 = 6;
    /// `BLOSC2_VERSION_FORMAT`: the newest version this library reads fully.
    pub const CURRENT: u8 = 6;
}

/// Bits of header byte 2.
pub mod flags {
    /// `BLOSC_DOSHUFFLE`.
    pub const DOSHUFFLE: u8 = 0x01;
    /// `BLOSC_MEMCPYED`.
    pub const MEMCPYED: u8 = 0x02;
    /// `BLOSC_DOBITSHUFFLE`.
    pub const DOBITSHUFFLE: u8 = 0x04;
    /// `BLOSC_DODELTA`.
    pub const DODELTA: u8 = 0x08;
    /// Streams of a block are not split by byte significance.
    pub const DONT_SPLIT: u8 = 0x10;
    /// Both bits set mark a 32-byte extended header.
    pub const EXTENDED: u8 = DOSHUFFLE | DOBITSHUFFLE;
}

/// Bits of header byte 31 (`blosc2_flags`) and byte 30 (`flags2`).
pub mod blosc2_flags {
    /// `BLOSC2_USEDICT`.
    pub const USEDICT: u8 = 0x01;
    /// `BLOSC2_BIGENDIAN`.
    pub const BIGENDIAN: u8 = 0x02;
    /// Runtime-only lazy chunk (bstarts + trailer, data left in the frame file).
    pub const LAZY: u8 = 0x08;
    /// `BLOSC2_INSTR_CODEC`.
    pub const INSTR_CODEC: u8 = 0x80;
    /// `BLOSC2_VL_BLOCKS` (in `flags2`).
    pub const VL_BLOCKS: u8 = 0x01;
}

/// Special-value kinds (bits 4-6 of `blosc2_flags`, `BLOSC2_SPECIAL_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecialKind {
    /// A regular chunk.
    None = 0,
    /// All bytes zero.
    Zero = 1,
    /// All items NaN (float32 or float64).
    Nan = 2,
    /// One value (stored after the header) repeated.
    Value = 3,
    /// Contents undefined: decoding leaves the destination untouched.
    Uninit = 4,
}

impl SpecialKind {
    /// The kind for a 3-bit code (`None` for codes 5..7, which c-blosc2 rejects).
    pub fn from_code(code: u8) -> Option<SpecialKind> {
        match code {
            0 => Some(SpecialKind::None),
            1 => Some(SpecialKind::Zero),
            2 => Some(SpecialKind::Nan),
            3 => Some(SpecialKind::Value),
            4 => Some(SpecialKind::Uninit),
            _ => None,
        }
    }
}

/// A validated chunk header. Fields are the header bytes, except `blocksize`, which is already
/// clamped to `nbytes` for non-VL chunks (as c-blosc2 does when reading), and the pipeline
/// fields, which for a 16-byte header hold the legacy mapping of the flag bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ChunkHeader {
    /// Format version (byte 0).
    pub version: u8,
    /// Codec format version (byte 1).
    pub versionlz: u8,
    /// Flags (byte 2).
    pub flags: u8,
    /// Typesize as stored (1..=255).
    pub typesize: u8,
    /// Uncompressed size.
    pub nbytes: i32,
    /// Block size (number of blocks for VL-block chunks), clamped to `nbytes`.
    pub blocksize: i32,
    /// Whole chunk size including the header.
    pub cbytes: i32,
    /// Filter pipeline (6 slots).
    pub filters: [u8; 6],
    /// Blosc2 compcode (byte 22).
    pub udcompcode: u8,
    /// Codec meta (byte 23).
    pub compcode_meta: u8,
    /// Filter meta bytes.
    pub filters_meta: [u8; 6],
    /// Byte 30.
    pub flags2: u8,
    /// Byte 31.
    pub blosc2_flags: u8,
}

/// The little-endian i32 at `at` (panics when `b` is too short: callers check lengths first).
pub(super) fn rd_i32(b: &[u8], at: usize) -> i32 {
    // One bounds check for the four bytes, not one per byte: this runs per stream.
    i32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

impl ChunkHeader {
    /// Reads and validates a header like c-blosc2's `read_chunk_header`: `extended` says whether
    /// the 32-byte part may be read (false for the `cbuffer_*` inspectors, which only look at 16
    /// bytes). `src.len()` is the source size the checks use.
    ///
    /// Always inlined: returned through memory, the header cost small chunks a store and reload
    /// of every field on each decode (a 256-byte memcpyed chunk: 536 -> 470 instructions, and
    /// 6.4-6.5 -> 7.2-8.6 GB/s in the `B2_BENCH_SIZES=256` chunk bench).
    #[inline(always)]
    pub fn read(src: &[u8], extended: bool) -> Result<ChunkHeader> {
        if src.len() < MIN_HEADER_LEN {
            return Err(Error::ReadBuffer);
        }
        let mut h = ChunkHeader {
            version: src[0],
            versionlz: src[1],
            flags: src[2],
            typesize: src[3],
            nbytes: rd_i32(src, 4),
            blocksize: rd_i32(src, 8),
            cbytes: rd_i32(src, 12),
            ..Default::default()
        };
        if h.cbytes < MIN_HEADER_LEN as i32
            || h.blocksize <= 0
            || h.blocksize > MAX_BLOCKSIZE
            || h.typesize == 0
        {
            return Err(Error::InvalidHeader);
        }
        if extended && h.flags & flags::EXTENDED == flags::EXTENDED {
            if h.cbytes < EXTENDED_HEADER_LEN as i32 {
                return Err(Error::InvalidHeader);
            }
            if src.len() < EXTENDED_HEADER_LEN {
                return Err(Error::ReadBuffer);
            }
            h.filters.copy_from_slice(&src[16..22]);
            h.udcompcode = src[22];
            h.compcode_meta = src[23];
            h.filters_meta.copy_from_slice(&src[24..30]);
            h.flags2 = src[30];
            h.blosc2_flags = src[31];
            let special = (h.blosc2_flags >> 4) & 7;
            if h.flags2 & blosc2_flags::VL_BLOCKS != 0 && special != 0 {
                return Err(Error::InvalidHeader);
            }
            if special == SpecialKind::Value as u8 {
                let width = h.cbytes - EXTENDED_HEADER_LEN as i32;
                if width <= 0 || width > MAX_TYPESIZE || width > h.nbytes || h.nbytes % width != 0 {
                    return Err(Error::InvalidHeader);
                }
            } else if special != 0
                && special != SpecialKind::Zero as u8
                && h.nbytes % h.typesize as i32 != 0
            {
                return Err(Error::InvalidHeader);
            }
            if h.version == version::ALPHA {
                h.filters[5] = 0;
                h.filters_meta[5] = 0;
            }
        } else {
            h.filters = legacy_filters(h.flags);
        }
        if h.version > version::CURRENT && h.flags2 & !blosc2_flags::VL_BLOCKS != 0 {
            return Err(Error::VersionSupport);
        }
        if h.flags2 & blosc2_flags::VL_BLOCKS != 0 && h.flags & flags::MEMCPYED != 0 {
            return Err(Error::InvalidHeader);
        }
        if h.flags2 & blosc2_flags::VL_BLOCKS == 0 && h.nbytes > 0 && h.blocksize > h.nbytes {
            h.blocksize = h.nbytes;
        }
        Ok(h)
    }

    /// Reads a header for decoding `src` (the whole chunk): [`ChunkHeader::read`] with the
    /// extended part, plus c-blosc2's check that a (non-lazy) chunk is not longer than `src`.
    pub fn parse(src: &[u8]) -> Result<ChunkHeader> {
        let h = Self::read(src, true)?;
        if !h.is_lazy() && h.cbytes as i64 > src.len() as i64 {
            return Err(Error::InvalidHeader);
        }
        Ok(h)
    }

    /// Writes the header into `dst[..header_len()]` (32 bytes when extended, else 16).
    pub fn write(&self, dst: &mut [u8]) {
        dst[0] = self.version;
        dst[1] = self.versionlz;
        dst[2] = self.flags;
        dst[3] = self.typesize;
        dst[4..8].copy_from_slice(&self.nbytes.to_le_bytes());
        dst[8..12].copy_from_slice(&self.blocksize.to_le_bytes());
        dst[12..16].copy_from_slice(&self.cbytes.to_le_bytes());
        if self.is_extended() {
            dst[16..22].copy_from_slice(&self.filters);
            dst[22] = self.udcompcode;
            dst[23] = self.compcode_meta;
            dst[24..30].copy_from_slice(&self.filters_meta);
            dst[30] = self.flags2;
            dst[31] = self.blosc2_flags;
        }
    }

    /// The header as 32 bytes (the last 16 are zero for a Blosc1 header).
    pub fn to_bytes(&self) -> [u8; 32] {
        let mut b = [0u8; 32];
        self.write(&mut b);
        b
    }

    /// Whether this is a 32-byte extended (Blosc2) header.
    pub fn is_extended(&self) -> bool {
        self.flags & flags::EXTENDED == flags::EXTENDED
    }

    /// 32 or 16.
    pub fn header_len(&self) -> usize {
        if self.is_extended() {
            EXTENDED_HEADER_LEN
        } else {
            MIN_HEADER_LEN
        }
    }

    /// Data stored raw after the header (no bstarts).
    pub fn is_memcpyed(&self) -> bool {
        self.flags & flags::MEMCPYED != 0
    }

    /// Blocks are stored as one stream each.
    pub fn dont_split(&self) -> bool {
        self.flags & flags::DONT_SPLIT != 0
    }

    /// Codec format code (flags bits 5-7).
    pub fn compformat(&self) -> u8 {
        self.flags >> 5
    }

    /// The compcode whose decoder reads the streams: the format's built-in codec, or the
    /// `udcompcode` byte for format 6 (user/registered codecs).
    pub fn compcode(&self) -> u8 {
        let f = self.compformat();
        if f == crate::codecs::format::UDCODEC {
            self.udcompcode
        } else {
            f
        }
    }

    /// Special kind code (0..=7; 5..=7 are invalid).
    pub fn special_code(&self) -> u8 {
        if self.is_extended() {
            (self.blosc2_flags >> 4) & 7
        } else {
            0
        }
    }

    /// Special kind, `None` when the code is invalid (5..=7).
    pub fn special(&self) -> Option<SpecialKind> {
        SpecialKind::from_code(self.special_code())
    }

    /// VL-block chunk (version 6 layout).
    pub fn is_vl(&self) -> bool {
        self.flags2 & blosc2_flags::VL_BLOCKS != 0
    }

    /// Has an embedded dictionary after bstarts.
    pub fn uses_dict(&self) -> bool {
        self.is_extended() && self.blosc2_flags & blosc2_flags::USEDICT != 0
    }

    /// Runtime-only lazy chunk.
    pub fn is_lazy(&self) -> bool {
        self.is_extended() && self.blosc2_flags & blosc2_flags::LAZY != 0
    }

    /// Instrumented-codec chunk (streams hold `blosc2_instr` records).
    pub fn is_instr(&self) -> bool {
        self.is_extended() && self.blosc2_flags & blosc2_flags::INSTR_CODEC != 0
    }

    /// Number of blocks (`blocksize` field for VL chunks).
    pub fn nblocks(&self) -> i32 {
        if self.is_vl() {
            self.blocksize
        } else {
            let n = self.nbytes / self.blocksize;
            if self.nbytes % self.blocksize > 0 {
                n + 1
            } else {
                n
            }
        }
    }

    /// Size of the last, shorter block (0 when all blocks are full).
    pub fn leftover(&self) -> i32 {
        if self.is_vl() {
            0
        } else {
            self.nbytes % self.blocksize
        }
    }
}

/// The pipeline a 16-byte header's flags stand for: shuffle or bitshuffle in slot 5, delta in
/// slot 4 (`flags_to_filters`).
pub fn legacy_filters(flags: u8) -> [u8; 6] {
    let mut f = [0u8; 6];
    if flags & flags::DOSHUFFLE != 0 {
        f[5] = filters::SHUFFLE;
    }
    if flags & flags::DOBITSHUFFLE != 0 {
        f[5] = filters::BITSHUFFLE;
    }
    if flags & flags::DODELTA != 0 {
        f[4] = filters::DELTA;
    }
    f
}

/// The shuffle/bitshuffle/delta flag bits a pipeline implies (`filters_to_flags`).
pub fn filters_to_flags(filters: &[u8; 6]) -> u8 {
    let mut fl = 0;
    for &f in filters {
        match f {
            filters::SHUFFLE => fl |= flags::DOSHUFFLE,
            filters::BITSHUFFLE => fl |= flags::DOBITSHUFFLE,
            filters::DELTA => fl |= flags::DODELTA,
            _ => {}
        }
    }
    fl
}

/// `blosc2_cbuffer_sizes`: (nbytes, cbytes, blocksize) from the first 16 bytes of a chunk
/// (blocksize clamped to nbytes). On error c-blosc2 reports zeros; the C layer does that.
pub fn cbuffer_sizes(src: &[u8]) -> Result<(i32, i32, i32)> {
    let h = ChunkHeader::read(&src[..src.len().min(MIN_HEADER_LEN)], false)?;
    Ok((h.nbytes, h.cbytes, h.blocksize))
}

/// `blosc1_cbuffer_validate`: the uncompressed size of a chunk that must be exactly
/// `cbytes` long.
pub fn cbuffer_validate(src: &[u8], cbytes: usize) -> Result<i32> {
    if cbytes < MIN_HEADER_LEN {
        return Err(Error::WriteBuffer);
    }
    let (nbytes, hcbytes, _) = cbuffer_sizes(src)?;
    if hcbytes as i64 != cbytes as i64 {
        return Err(Error::InvalidHeader);
    }
    if nbytes > MAX_BUFFERSIZE {
        return Err(Error::MemoryAlloc);
    }
    Ok(nbytes)
}

/// `blosc1_cbuffer_metainfo`: (typesize, flags) of a chunk.
pub fn cbuffer_metainfo(src: &[u8]) -> Result<(u8, u8)> {
    let h = ChunkHeader::read(&src[..src.len().min(MIN_HEADER_LEN)], false)?;
    Ok((h.typesize, h.flags))
}

/// `blosc2_cbuffer_versions`: (version, versionlz) of a chunk.
pub fn cbuffer_versions(src: &[u8]) -> Result<(u8, u8)> {
    let h = ChunkHeader::read(&src[..src.len().min(MIN_HEADER_LEN)], false)?;
    Ok((h.version, h.versionlz))
}

/// `blosc2_cbuffer_complib`: the codec library name of a chunk's format code ("BloscLZ",
/// "LZ4", "Zlib", "Zstd"; `None` for other codes, or an unreadable header).
pub fn cbuffer_complib(src: &[u8]) -> Option<&'static str> {
    let h = ChunkHeader::read(&src[..src.len().min(MIN_HEADER_LEN)], false).ok()?;
    complib_name(h.compformat())
}

/// Library name of a codec format code (`clibcode_to_clibname`).
pub fn complib_name(format: u8) -> Option<&'static str> {
    crate::codecs::table::format_library(format)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> ChunkHeader {
        ChunkHeader {
            version: 5,
            versionlz: 1,
            flags: 0x05,
            typesize: 4,
            nbytes: 1000,
            blocksize: 1000,
            cbytes: 100,
            filters: [0, 0, 0, 0, 0, 1],
            ..Default::default()
        }
    }

    #[test]
    fn write_then_read_round_trips() {
        let h = base();
        let mut b = h.to_bytes().to_vec();
        b.resize(100, 0);
        assert_eq!(ChunkHeader::parse(&b).unwrap(), h);
    }

    #[test]
    fn rejects_like_the_reference() {
        let mut b = base().to_bytes().to_vec();
        b.resize(100, 0);
        assert_eq!(ChunkHeader::read(&b[..15], true), Err(Error::ReadBuffer));
        let mut c = b.clone();
        c[8..12].copy_from_slice(&0i32.to_le_bytes());
        assert_eq!(ChunkHeader::read(&c, true), Err(Error::InvalidHeader));
        let mut c = b.clone();
        c[3] = 0;
        assert_eq!(ChunkHeader::read(&c, true), Err(Error::InvalidHeader));
        let mut c = b.clone();
        c[12..16].copy_from_slice(&20i32.to_le_bytes());
        assert_eq!(ChunkHeader::read(&c, true), Err(Error::InvalidHeader));
        assert_eq!(ChunkHeader::read(&b[..20], true), Err(Error::ReadBuffer));
        // cbytes larger than the source
        assert_eq!(ChunkHeader::parse(&b[..50]), Err(Error::InvalidHeader));
        // VL + memcpyed
        let mut c = b.clone();
        c[2] |= flags::MEMCPYED;
        c[30] = 1;
        assert_eq!(ChunkHeader::read(&c, true), Err(Error::InvalidHeader));
        // future version with unknown flags2 bits
        let mut c = b.clone();
        c[0] = 7;
        c[30] = 2;
        assert_eq!(ChunkHeader::read(&c, true), Err(Error::VersionSupport));
        c[30] = 0;
        assert!(ChunkHeader::read(&c, true).is_ok());
    }

    #[test]
    fn blocksize_clamped_and_legacy_filters() {
        let mut b = [0u8; 16];
        b[0] = 2;
        b[2] = flags::DOSHUFFLE | flags::DODELTA;
        b[3] = 4;
        b[4..8].copy_from_slice(&100i32.to_le_bytes());
        b[8..12].copy_from_slice(&4096i32.to_le_bytes());
        b[12..16].copy_from_slice(&16i32.to_le_bytes());
        let h = ChunkHeader::read(&b, true).unwrap();
        assert_eq!(h.blocksize, 100);
        assert_eq!(h.filters, [0, 0, 0, 0, 3, 1]);
        assert_eq!(h.header_len(), 16);
        assert_eq!(cbuffer_sizes(&b).unwrap(), (100, 16, 100));
    }
}
