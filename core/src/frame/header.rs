//! The frame header: 87 fixed bytes (a msgpack fixarray(14)) followed by the metalayers section.
//!
//! Every number is validated here, once, with 64-bit checked arithmetic; the typed
//! [`FrameHeader`] that comes out is what the rest of the frame layer trusts. Byte positions are
//! those of docs/format/cframe.md#header.

use crate::error::{Error, Result};
use crate::msgpack::{self, marker, Reader};

/// Size of the fixed part of the header (`FRAME_HEADER_MINLEN`).
pub const HEADER_MINLEN: usize = 87;
/// Size of the trailer read window (`FRAME_TRAILER_MINLEN`).
pub const TRAILER_MINLEN: usize = 25;
/// The 8 magic bytes at offset 2.
pub const MAGIC: &[u8; 8] = b"b2frame\0";
/// Highest frame format version this reader understands (VL blocks).
pub const MAX_VERSION: u8 = 3;
/// Version written for fixed-chunksize frames (readable by 2.x).
pub const VERSION_RC1: u8 = 2;
/// Most metalayers a header may hold (`BLOSC2_MAX_METALAYERS`).
pub const MAX_METALAYERS: usize = 16;
/// Longest metalayer name (a msgpack fixstr).
pub const MAX_NAME_LEN: usize = 31;
/// Most chunks a frame can index (the offsets index is a single chunk of int64s).
pub const MAX_NCHUNKS: i64 = (i32::MAX / 8) as i64;
/// Number of filter slots.
pub const NFILTERS: usize = 6;

/// `frame_type` values (byte 26, low nibble).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameType {
    /// Everything in one buffer or file (cframe).
    Contiguous,
    /// A directory with an index file and one file per chunk (sframe).
    Sparse,
}

/// A parsed frame header. Lengths are kept as read (after validation) so that a header can be
/// rewritten byte for byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// Bytes of header including metalayers; recomputed by [`FrameHeader::to_bytes`].
    pub header_len: u32,
    /// Total frame bytes: header + data + offsets index + trailer.
    pub frame_len: u64,
    /// Format version nibble (2 fixed chunksize, 3 variable / VL blocks).
    pub version: u8,
    /// Bit 6: chunks have different sizes (`chunksize == 0`).
    pub variable_chunks: bool,
    /// Bit 7: every chunk is a VL-block chunk.
    pub vl_blocks: bool,
    /// Byte 26 low nibble.
    pub frame_type: FrameType,
    /// Byte 26 high nibble (user frame types; preserved).
    pub user_type: u8,
    /// Blosc2 compcode of the default cparams (the udcodec byte when the nibble says 6).
    pub compcode: u8,
    /// Default clevel.
    pub clevel: u8,
    /// `BLOSC_ALWAYS_SPLIT` (1) ..= `BLOSC_FORWARD_COMPAT_SPLIT` (4).
    pub splitmode: u8,
    /// Uncompressed bytes of all chunks.
    pub nbytes: i64,
    /// Size of the chunk data section (cframe) / of all chunk files (sframe).
    pub cbytes: i64,
    /// Real typesize (> 0; may exceed 255).
    pub typesize: i32,
    /// Requested blocksize (0 = automatic).
    pub blocksize: i32,
    /// Common chunk nbytes; 0 variable; -1 no chunk was ever added.
    pub chunksize: i32,
    /// Informational compression threads.
    pub nthreads_comp: i16,
    /// Informational decompression threads.
    pub nthreads_decomp: i16,
    /// Whether the trailer holds vlmetalayers.
    pub has_vlmeta: bool,
    /// Default filter pipeline.
    pub filters: [u8; NFILTERS],
    /// Default filter metas.
    pub filters_meta: [u8; NFILTERS],
    /// Byte 77 (the compcode, always written).
    pub udcodec: u8,
    /// Byte 78.
    pub compcode_meta: u8,
    /// Byte 85 bit 0.
    pub use_dict: bool,
    /// Fixed-size metalayers, in header order.
    pub metalayers: Vec<(String, Vec<u8>)>,
}

/// `header_len` and `frame_len` from the first 87 bytes, checked against each other.
pub fn peek_lengths(fixed: &[u8]) -> Result<(u32, u64)> {
    if fixed.len() < HEADER_MINLEN {
        return Err(Error::ReadBuffer);
    }
    if fixed[2..10] != MAGIC[..] {
        return Err(Error::InvalidHeader);
    }
    let mut r = Reader::at(fixed, 10)?;
    let header_len = r.int32().map_err(|_| Error::InvalidHeader)?;
    let frame_len = r.uint64().map_err(|_| Error::InvalidHeader)?;
    if header_len < HEADER_MINLEN as i32 || header_len as u64 > frame_len {
        return Err(Error::InvalidHeader);
    }
    Ok((header_len as u32, frame_len))
}

impl FrameHeader {
    /// A header for a brand-new, empty frame (what `frame_new` + `frame_update_header` write).
    #[allow(clippy::too_many_arguments)]
    pub fn new_empty(
        frame_type: FrameType,
        compcode: u8,
        clevel: u8,
        splitmode: u8,
        typesize: i32,
        blocksize: i32,
        filters: [u8; NFILTERS],
        filters_meta: [u8; NFILTERS],
        compcode_meta: u8,
        use_dict: bool,
        nthreads: (i16, i16),
    ) -> FrameHeader {
        let mut h = FrameHeader {
            header_len: 0,
            frame_len: 0,
            version: VERSION_RC1,
            variable_chunks: false,
            vl_blocks: false,
            frame_type,
            user_type: 0,
            compcode,
            clevel,
            splitmode,
            nbytes: 0,
            cbytes: 0,
            typesize,
            blocksize,
            chunksize: -1,
            nthreads_comp: nthreads.0,
            nthreads_decomp: nthreads.1,
            has_vlmeta: false,
            filters,
            filters_meta,
            udcodec: compcode,
            compcode_meta,
            use_dict,
            metalayers: Vec::new(),
        };
        h.header_len = h.encoded_len() as u32;
        h
    }

    /// Parses a complete header. `buf` must hold at least `header_len` bytes (more is fine).
    pub fn parse(buf: &[u8]) -> Result<FrameHeader> {
        let (header_len, frame_len) = peek_lengths(buf)?;
        let hl = header_len as usize;
        if buf.len() < hl {
            return Err(Error::ReadBuffer);
        }
        let hbuf = &buf[..hl];
        let flags = hbuf[25];
        let version = flags & 0x0F;
        if version > MAX_VERSION {
            return Err(Error::VersionSupport);
        }
        let frame_type = match hbuf[26] & 0x0F {
            0 => FrameType::Contiguous,
            1 => FrameType::Sparse,
            _ => return Err(Error::FrameType),
        };
        let codec_flags = hbuf[27];
        let udcodec = hbuf[77];
        let compcode = match codec_flags & 0x0F {
            6 => udcodec,
            c => c,
        };
        let mut r = Reader::at(hbuf, 29)?;
        let nbytes = r.int64().map_err(|_| Error::InvalidHeader)?;
        let cbytes = r.int64().map_err(|_| Error::InvalidHeader)?;
        let typesize = r.int32().map_err(|_| Error::InvalidHeader)?;
        let blocksize = r.int32().map_err(|_| Error::InvalidHeader)?;
        let chunksize = r.int32().map_err(|_| Error::InvalidHeader)?;
        let nthreads_comp = r.int16().map_err(|_| Error::InvalidHeader)?;
        let nthreads_decomp = r.int16().map_err(|_| Error::InvalidHeader)?;
        if nbytes < 0 || cbytes < 0 || typesize <= 0 {
            return Err(Error::InvalidHeader);
        }
        // c-blosc2 writes the blocksize a caller put into `blosc2_schunk` as it is, negative
        // ones included, and reopens such a frame (its appends to it then fail): it is read here
        // as an automatic blocksize (docs/divergences.md#16-caller-written-values-a-frame-header-cannot-hold-are-not-written).
        let blocksize = blocksize.max(0);
        let has_vlmeta = hbuf[68] == marker::TRUE;
        if hbuf[69] != marker::FIXEXT16 || hbuf[70] as usize > NFILTERS {
            return Err(Error::InvalidHeader);
        }
        let mut filters = [0u8; NFILTERS];
        filters.copy_from_slice(&hbuf[71..77]);
        let mut filters_meta = [0u8; NFILTERS];
        filters_meta.copy_from_slice(&hbuf[79..85]);
        let mut h = FrameHeader {
            header_len,
            frame_len,
            version,
            variable_chunks: flags & 0x40 != 0,
            vl_blocks: flags & 0x80 != 0,
            frame_type,
            user_type: hbuf[26] >> 4,
            compcode,
            clevel: codec_flags >> 4,
            splitmode: (hbuf[28] & 0x03) + 1,
            nbytes,
            cbytes,
            typesize,
            blocksize,
            chunksize,
            nthreads_comp,
            nthreads_decomp,
            has_vlmeta,
            filters,
            filters_meta,
            udcodec,
            compcode_meta: hbuf[78],
            use_dict: hbuf[85] & 1 != 0,
            metalayers: Vec::new(),
        };
        h.metalayers = parse_metalayers(hbuf)?;
        // Validates the chunk-count rules now so that later code can rely on them.
        h.fixed_nchunks()?;
        Ok(h)
    }

    /// The number of chunks when the header alone determines it: `Some(n)` for empty and
    /// fixed-chunksize frames, `None` for variable-chunksize frames (count = index entries).
    pub fn fixed_nchunks(&self) -> Result<Option<i64>> {
        if self.nbytes == 0 {
            return Ok(Some(0));
        }
        match self.chunksize {
            c if c > 0 => {
                let c = c as i64;
                let n = self.nbytes / c + i64::from(self.nbytes % c != 0);
                if n > MAX_NCHUNKS {
                    return Err(Error::InvalidHeader);
                }
                Ok(Some(n))
            }
            0 => Ok(None),
            _ => Err(Error::InvalidHeader),
        }
    }

    /// Byte length of the encoded header (fixed part + metalayers section).
    pub fn encoded_len(&self) -> usize {
        let map: usize = self.metalayers.iter().map(|(n, _)| 1 + n.len() + 5).sum();
        let contents: usize = self.metalayers.iter().map(|(_, c)| 5 + c.len()).sum();
        HEADER_MINLEN + 1 + 3 + 3 + map + 3 + contents
    }

    /// The general flags byte (byte 25).
    pub fn general_flags(&self) -> u8 {
        (self.version & 0x0F)
            | 0x10
            | if self.variable_chunks { 0x40 } else { 0 }
            | if self.vl_blocks { 0x80 } else { 0 }
    }

    /// Checks what [`FrameHeader::to_bytes`] needs: names ≤ 31 bytes, ≤ 16 metalayers, sizes
    /// that fit the int32 fields.
    pub fn check_encodable(&self) -> Result<()> {
        if self.metalayers.len() > MAX_METALAYERS {
            return Err(Error::InvalidParam);
        }
        if self
            .metalayers
            .iter()
            .any(|(n, _)| n.is_empty() || n.len() > MAX_NAME_LEN)
        {
            return Err(Error::InvalidParam);
        }
        if self.encoded_len() > i32::MAX as usize {
            return Err(Error::TwoGbLimit);
        }
        Ok(())
    }

    /// Serialises the header. `header_len` is recomputed from the metalayers (and stored back);
    /// `frame_len` is written as it stands.
    pub fn to_bytes(&mut self) -> Result<Vec<u8>> {
        self.check_encodable()?;
        let total = self.encoded_len();
        self.header_len = total as u32;
        let mut out = Vec::with_capacity(total);
        msgpack::write_fixarray(&mut out, 14);
        msgpack::write_fixstr(&mut out, &MAGIC[..]);
        msgpack::write_int32(&mut out, self.header_len as i32);
        msgpack::write_uint64(&mut out, self.frame_len);
        out.push(marker::FIXSTR | 4);
        out.push(self.general_flags());
        let ft = match self.frame_type {
            FrameType::Contiguous => 0,
            FrameType::Sparse => 1,
        };
        out.push(ft | (self.user_type << 4));
        let nibble = if self.compcode >= 6 { 6 } else { self.compcode };
        out.push(nibble | (self.clevel << 4));
        out.push(self.splitmode.wrapping_sub(1) & 0x03);
        msgpack::write_int64(&mut out, self.nbytes);
        msgpack::write_int64(&mut out, self.cbytes);
        msgpack::write_int32(&mut out, self.typesize);
        msgpack::write_int32(&mut out, self.blocksize);
        msgpack::write_int32(&mut out, self.chunksize);
        msgpack::write_int16(&mut out, self.nthreads_comp);
        msgpack::write_int16(&mut out, self.nthreads_decomp);
        msgpack::write_bool(&mut out, self.has_vlmeta);
        out.push(marker::FIXEXT16);
        out.push(NFILTERS as u8);
        out.extend_from_slice(&self.filters);
        out.push(self.compcode);
        out.push(self.compcode_meta);
        out.extend_from_slice(&self.filters_meta);
        out.push(u8::from(self.use_dict));
        out.push(0);
        debug_assert_eq!(out.len(), HEADER_MINLEN);
        // Metalayers: fixarray(3) | uint16 idx_size | map16 name -> absolute offset | array16 of
        // bin32 contents.
        msgpack::write_fixarray(&mut out, 3);
        let map_len: usize = self.metalayers.iter().map(|(n, _)| 1 + n.len() + 5).sum();
        let idx_size = (1 + 3 + 3 + map_len) as u16;
        msgpack::write_uint16(&mut out, idx_size);
        msgpack::write_map16(&mut out, self.metalayers.len() as u16);
        let mut content_pos = HEADER_MINLEN + idx_size as usize + 3;
        for (name, content) in &self.metalayers {
            msgpack::write_fixstr(&mut out, name.as_bytes());
            msgpack::write_int32(&mut out, content_pos as i32);
            content_pos += 5 + content.len();
        }
        msgpack::write_array16(&mut out, self.metalayers.len() as u16);
        for (_, content) in &self.metalayers {
            msgpack::write_bin32(&mut out, content)?;
        }
        debug_assert_eq!(out.len(), total);
        Ok(out)
    }
}

/// Reads the metalayers section of a header buffer that is exactly `header_len` bytes long.
fn parse_metalayers(hbuf: &[u8]) -> Result<Vec<(String, Vec<u8>)>> {
    // A header without a metalayers section (never written by c-blosc2) has no metalayers.
    if hbuf.len() < HEADER_MINLEN + 7 {
        return Ok(Vec::new());
    }
    let mut r = Reader::at(hbuf, HEADER_MINLEN + 4)?;
    let n = r.map16().map_err(|_| Error::InvalidHeader)? as usize;
    if n > MAX_METALAYERS {
        return Err(Error::InvalidHeader);
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.fixstr().map_err(|_| Error::InvalidHeader)?;
        let offset = r.int32().map_err(|_| Error::InvalidHeader)?;
        let offset = usize::try_from(offset).map_err(|_| Error::InvalidHeader)?;
        // offset + 5 + len <= header_len, checked inside the reader without overflow.
        let mut c = Reader::at(hbuf, offset).map_err(|_| Error::InvalidHeader)?;
        let content = c.bin32().map_err(|_| Error::InvalidHeader)?;
        out.push((String::from_utf8_lossy(name).into_owned(), content.to_vec()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 97-byte header c-blosc2 3.3.5 writes for an empty frame (LZ4 clevel 5, typesize 8,
    /// shuffle in slot 0, nthreads 1/2), from a hexdump of its output.
    pub(crate) const EMPTY_HEADER: [u8; 97] = [
        0x9e, 0xa8, 0x62, 0x32, 0x66, 0x72, 0x61, 0x6d, 0x65, 0x00, 0xd2, 0x00, 0x00, 0x00, 0x61,
        0xcf, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x84, 0xa4, 0x12, 0x00, 0x51, 0x02, 0xd3,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xd3, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0xd2, 0x00, 0x00, 0x00, 0x08, 0xd2, 0x00, 0x00, 0x00, 0x00, 0xd2, 0xff, 0xff,
        0xff, 0xff, 0xd1, 0x00, 0x01, 0xd1, 0x00, 0x02, 0xc2, 0xd8, 0x06, 0x01, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x93, 0xcd, 0x00,
        0x07, 0xde, 0x00, 0x00, 0xdc, 0x00, 0x00,
    ];

    fn empty() -> FrameHeader {
        let mut h = FrameHeader::new_empty(
            FrameType::Contiguous,
            1,
            5,
            3,
            8,
            0,
            [1, 0, 0, 0, 0, 0],
            [0; 6],
            0,
            false,
            (1, 2),
        );
        h.frame_len = 132;
        h
    }

    #[test]
    fn empty_header_bytes_are_exact() {
        let mut h = empty();
        assert_eq!(h.to_bytes().unwrap(), EMPTY_HEADER);
        assert_eq!(h.header_len, 97);
        let p = FrameHeader::parse(&EMPTY_HEADER).unwrap();
        assert_eq!(p, h);
        assert_eq!(p.fixed_nchunks().unwrap(), Some(0));
    }

    #[test]
    fn metalayers_round_trip_with_absolute_offsets() {
        let mut h = empty();
        h.metalayers = vec![("ab".into(), vec![1, 2, 3]), ("caterva".into(), vec![])];
        h.frame_len = 1000;
        let bytes = h.to_bytes().unwrap();
        // 87 + 1 + 3 + 3 + (1+2+5) + (1+7+5) + 3 + (5+3) + 5
        assert_eq!(bytes.len(), 131);
        assert_eq!(h.header_len, 131);
        // idx_size counts from the 0x93 byte to the end of the name map.
        assert_eq!(&bytes[88..91], &[0xcd, 0x00, 7 + 8 + 13]);
        // The first content offset points at its bin32 marker.
        let off = i32::from_be_bytes(bytes[98..102].try_into().unwrap()) as usize;
        assert_eq!(bytes[off], 0xc6);
        let p = FrameHeader::parse(&bytes).unwrap();
        assert_eq!(p.metalayers, h.metalayers);
        // A single 2-char name with 3 bytes of content gives header_len 113 (docs/format/metalayers.md#in-the-frame-header).
        h.metalayers.truncate(1);
        assert_eq!(h.to_bytes().unwrap().len(), 113);
    }

    #[test]
    fn hostile_headers_are_rejected() {
        let good = EMPTY_HEADER.to_vec();
        let mut bad = good.clone();
        bad[3] ^= 1;
        assert_eq!(FrameHeader::parse(&bad), Err(Error::InvalidHeader));
        assert_eq!(FrameHeader::parse(&good[..86]), Err(Error::ReadBuffer));
        // header_len < 87, > frame_len, > buffer.
        for hl in [0i32, 86, -1] {
            let mut b = good.clone();
            b[11..15].copy_from_slice(&hl.to_be_bytes());
            assert_eq!(FrameHeader::parse(&b), Err(Error::InvalidHeader));
        }
        let mut b = good.clone();
        b[11..15].copy_from_slice(&200i32.to_be_bytes());
        assert_eq!(FrameHeader::parse(&b), Err(Error::InvalidHeader)); // > frame_len 132
        b[16..24].copy_from_slice(&1000u64.to_be_bytes());
        assert_eq!(FrameHeader::parse(&b), Err(Error::ReadBuffer));
        // version 4
        let mut b = good.clone();
        b[25] = 0x14;
        assert_eq!(FrameHeader::parse(&b), Err(Error::VersionSupport));
        // nfilters 7
        let mut b = good.clone();
        b[70] = 7;
        assert_eq!(FrameHeader::parse(&b), Err(Error::InvalidHeader));
        // typesize 0, negative cbytes
        let mut b = good.clone();
        b[51] = 0;
        assert_eq!(FrameHeader::parse(&b), Err(Error::InvalidHeader));
        let mut b = good.clone();
        b[39] = 0xff;
        assert_eq!(FrameHeader::parse(&b), Err(Error::InvalidHeader));
        // 17 metalayers
        let mut b = good.clone();
        b[93] = 17;
        assert_eq!(FrameHeader::parse(&b), Err(Error::InvalidHeader));
        // chunksize -1 with data
        let mut b = good.clone();
        b[37] = 10;
        assert_eq!(FrameHeader::parse(&b), Err(Error::InvalidHeader));
    }

    #[test]
    fn metalayer_lengths_and_offsets_are_bounded() {
        let mut h = empty();
        h.metalayers = vec![("m".into(), vec![9; 4])];
        h.frame_len = 500;
        let good = h.to_bytes().unwrap();
        let off_pos = 87 + 1 + 3 + 3 + 2 + 1;
        let content_pos = i32::from_be_bytes(good[off_pos..off_pos + 4].try_into().unwrap());
        for (field, v) in [
            (off_pos, i32::MAX),
            (off_pos, -1),
            (off_pos, good.len() as i32 - 4),
            (content_pos as usize + 1, i32::MAX),
            (content_pos as usize + 1, 1 << 28),
            (content_pos as usize + 1, -5),
            (content_pos as usize + 1, 5),
        ] {
            let mut b = good.clone();
            b[field..field + 4].copy_from_slice(&v.to_be_bytes());
            assert!(FrameHeader::parse(&b).is_err(), "field {field} = {v}");
        }
        let mut b = good.clone();
        b[content_pos as usize] = 0xc4;
        assert_eq!(FrameHeader::parse(&b), Err(Error::InvalidHeader));
        assert_eq!(FrameHeader::parse(&good).unwrap().metalayers, h.metalayers);
    }

    #[test]
    fn nchunks_rules() {
        let mut h = empty();
        h.nbytes = 2500;
        h.chunksize = 1000;
        assert_eq!(h.fixed_nchunks().unwrap(), Some(3));
        h.chunksize = 0;
        assert_eq!(h.fixed_nchunks().unwrap(), None);
        h.chunksize = -1;
        assert_eq!(h.fixed_nchunks(), Err(Error::InvalidHeader));
        h.chunksize = 1;
        h.nbytes = i64::MAX;
        assert_eq!(h.fixed_nchunks(), Err(Error::InvalidHeader));
    }
}
