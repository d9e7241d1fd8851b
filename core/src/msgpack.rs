//! The small msgpack subset Blosc2 frames use (big-endian, fixed-width markers).
//!
//! Frames are not general msgpack documents: every field sits behind a known marker with a fixed
//! width (`0xD2` int32, `0xCF` uint64, `0xC6` bin32, ...). The [`Reader`] therefore offers typed,
//! bounds-checked reads at a cursor instead of a generic decoder; truncation is
//! [`Error::ReadBuffer`] and an unexpected marker is [`Error::Data`]. The writer functions append
//! the same encodings to a `Vec<u8>`.

#![forbid(unsafe_code)]

use crate::error::{Error, Result};

/// msgpack markers used by frames, trailers and the b2nd metalayer.
pub mod marker {
    /// `false`.
    pub const FALSE: u8 = 0xC2;
    /// `true`.
    pub const TRUE: u8 = 0xC3;
    /// bin32: int32 length + bytes.
    pub const BIN32: u8 = 0xC6;
    /// uint16.
    pub const UINT16: u8 = 0xCD;
    /// uint32.
    pub const UINT32: u8 = 0xCE;
    /// uint64.
    pub const UINT64: u8 = 0xCF;
    /// int16.
    pub const INT16: u8 = 0xD1;
    /// int32.
    pub const INT32: u8 = 0xD2;
    /// int64.
    pub const INT64: u8 = 0xD3;
    /// fixext16: type byte + 16 bytes.
    pub const FIXEXT16: u8 = 0xD8;
    /// str32: int32 length + bytes.
    pub const STR32: u8 = 0xDB;
    /// array16: uint16 count.
    pub const ARRAY16: u8 = 0xDC;
    /// map16: uint16 count.
    pub const MAP16: u8 = 0xDE;
    /// fixarray base (`0x90 | n`, n < 16).
    pub const FIXARRAY: u8 = 0x90;
    /// fixstr base (`0xA0 | n`, n < 32).
    pub const FIXSTR: u8 = 0xA0;
}

/// A bounds-checked cursor over a byte slice.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// A reader at `pos` inside `buf` (fails if `pos` is past the end).
    pub fn at(buf: &'a [u8], pos: usize) -> Result<Self> {
        if pos > buf.len() {
            return Err(Error::ReadBuffer);
        }
        Ok(Reader { buf, pos })
    }

    /// Current position.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes left after the cursor.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Takes the next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(Error::ReadBuffer);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }

    /// Skips `n` bytes.
    pub fn skip(&mut self, n: usize) -> Result<()> {
        self.bytes(n).map(|_| ())
    }

    /// One raw byte.
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    /// Consumes one byte that must equal `m`.
    pub fn expect(&mut self, m: u8) -> Result<()> {
        if self.u8()? != m {
            return Err(Error::Data);
        }
        Ok(())
    }

    /// Raw big-endian u16 (no marker).
    pub fn be_u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    /// Raw big-endian u32 (no marker).
    pub fn be_u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// Raw big-endian i32 (no marker).
    pub fn be_i32(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    /// Raw big-endian i64 (no marker).
    pub fn be_i64(&mut self) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// Raw big-endian u64 (no marker).
    pub fn be_u64(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    /// `0xD1` int16.
    pub fn int16(&mut self) -> Result<i16> {
        self.expect(marker::INT16)?;
        Ok(i16::from_be_bytes(self.array()?))
    }

    /// `0xD2` int32.
    pub fn int32(&mut self) -> Result<i32> {
        self.expect(marker::INT32)?;
        self.be_i32()
    }

    /// `0xD3` int64.
    pub fn int64(&mut self) -> Result<i64> {
        self.expect(marker::INT64)?;
        self.be_i64()
    }

    /// `0xCD` uint16.
    pub fn uint16(&mut self) -> Result<u16> {
        self.expect(marker::UINT16)?;
        self.be_u16()
    }

    /// `0xCE` uint32.
    pub fn uint32(&mut self) -> Result<u32> {
        self.expect(marker::UINT32)?;
        self.be_u32()
    }

    /// `0xCF` uint64.
    pub fn uint64(&mut self) -> Result<u64> {
        self.expect(marker::UINT64)?;
        self.be_u64()
    }

    /// `0xDE` map16 header: the entry count.
    pub fn map16(&mut self) -> Result<u16> {
        self.expect(marker::MAP16)?;
        self.be_u16()
    }

    /// `0xDC` array16 header: the element count.
    pub fn array16(&mut self) -> Result<u16> {
        self.expect(marker::ARRAY16)?;
        self.be_u16()
    }

    /// A fixstr (`0xA0..=0xBF`): its bytes.
    pub fn fixstr(&mut self) -> Result<&'a [u8]> {
        let m = self.u8()?;
        if m & 0xE0 != marker::FIXSTR {
            return Err(Error::Data);
        }
        self.bytes((m & 0x1F) as usize)
    }

    /// A fixarray header (`0x90..=0x9F`): its length.
    pub fn fixarray(&mut self) -> Result<u8> {
        let m = self.u8()?;
        if m & 0xF0 != marker::FIXARRAY {
            return Err(Error::Data);
        }
        Ok(m & 0x0F)
    }

    /// `0xC6` bin32: its content (a negative length is [`Error::Data`]).
    pub fn bin32(&mut self) -> Result<&'a [u8]> {
        self.expect(marker::BIN32)?;
        let len = self.be_i32()?;
        let len = usize::try_from(len).map_err(|_| Error::Data)?;
        self.bytes(len)
    }

    /// `0xDB` str32: its content.
    pub fn str32(&mut self) -> Result<&'a [u8]> {
        self.expect(marker::STR32)?;
        let len = self.be_i32()?;
        let len = usize::try_from(len).map_err(|_| Error::Data)?;
        self.bytes(len)
    }
}

/// Appends a fixarray header (`n < 16`).
pub fn write_fixarray(out: &mut Vec<u8>, n: u8) {
    debug_assert!(n < 16);
    out.push(marker::FIXARRAY | (n & 0x0F));
}

/// Appends a fixstr; `s` must be shorter than 32 bytes (callers validate names).
pub fn write_fixstr(out: &mut Vec<u8>, s: &[u8]) {
    debug_assert!(s.len() < 32);
    out.push(marker::FIXSTR | (s.len() as u8 & 0x1F));
    out.extend_from_slice(&s[..s.len().min(31)]);
}

/// Appends `0xD1` int16.
pub fn write_int16(out: &mut Vec<u8>, v: i16) {
    out.push(marker::INT16);
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends `0xD2` int32.
pub fn write_int32(out: &mut Vec<u8>, v: i32) {
    out.push(marker::INT32);
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends `0xD3` int64.
pub fn write_int64(out: &mut Vec<u8>, v: i64) {
    out.push(marker::INT64);
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends `0xCD` uint16.
pub fn write_uint16(out: &mut Vec<u8>, v: u16) {
    out.push(marker::UINT16);
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends `0xCE` uint32.
pub fn write_uint32(out: &mut Vec<u8>, v: u32) {
    out.push(marker::UINT32);
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends `0xCF` uint64.
pub fn write_uint64(out: &mut Vec<u8>, v: u64) {
    out.push(marker::UINT64);
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends `0xDE` map16 with `n` entries (entries follow).
pub fn write_map16(out: &mut Vec<u8>, n: u16) {
    out.push(marker::MAP16);
    out.extend_from_slice(&n.to_be_bytes());
}

/// Appends `0xDC` array16 with `n` elements (elements follow).
pub fn write_array16(out: &mut Vec<u8>, n: u16) {
    out.push(marker::ARRAY16);
    out.extend_from_slice(&n.to_be_bytes());
}

/// Appends `0xC6` bin32; fails if the content does not fit an int32 length.
pub fn write_bin32(out: &mut Vec<u8>, content: &[u8]) -> Result<()> {
    let len = i32::try_from(content.len()).map_err(|_| Error::TwoGbLimit)?;
    out.push(marker::BIN32);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(content);
    Ok(())
}

/// Appends `0xDB` str32; fails if the content does not fit an int32 length.
pub fn write_str32(out: &mut Vec<u8>, content: &[u8]) -> Result<()> {
    let len = i32::try_from(content.len()).map_err(|_| Error::TwoGbLimit)?;
    out.push(marker::STR32);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(content);
    Ok(())
}

/// Appends msgpack `true`/`false`.
pub fn write_bool(out: &mut Vec<u8>, v: bool) {
    out.push(if v { marker::TRUE } else { marker::FALSE });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_reads_round_trip_writes() {
        let mut out = Vec::new();
        write_int16(&mut out, -2);
        write_int32(&mut out, 0x0102_0304);
        write_int64(&mut out, -5);
        write_uint16(&mut out, 7);
        write_uint32(&mut out, 35);
        write_uint64(&mut out, 132);
        write_fixstr(&mut out, b"b2nd");
        write_bin32(&mut out, b"xyz").unwrap();
        write_str32(&mut out, b"<f8").unwrap();
        write_map16(&mut out, 3);
        write_array16(&mut out, 4);
        write_fixarray(&mut out, 7);
        write_bool(&mut out, true);
        assert_eq!(&out[..3], &[0xD1, 0xFF, 0xFE]);
        assert_eq!(&out[3..8], &[0xD2, 1, 2, 3, 4]);
        let mut r = Reader::new(&out);
        assert_eq!(r.int16().unwrap(), -2);
        assert_eq!(r.int32().unwrap(), 0x0102_0304);
        assert_eq!(r.int64().unwrap(), -5);
        assert_eq!(r.uint16().unwrap(), 7);
        assert_eq!(r.uint32().unwrap(), 35);
        assert_eq!(r.uint64().unwrap(), 132);
        assert_eq!(r.fixstr().unwrap(), b"b2nd");
        assert_eq!(r.bin32().unwrap(), b"xyz");
        assert_eq!(r.str32().unwrap(), b"<f8");
        assert_eq!(r.map16().unwrap(), 3);
        assert_eq!(r.array16().unwrap(), 4);
        assert_eq!(r.fixarray().unwrap(), 7);
        assert_eq!(r.u8().unwrap(), marker::TRUE);
        assert_eq!(r.remaining(), 0);
        assert_eq!(r.u8(), Err(Error::ReadBuffer));
    }

    #[test]
    fn wrong_markers_and_truncation_are_errors() {
        assert_eq!(Reader::new(&[0xD3, 0, 0, 0, 0]).int32(), Err(Error::Data));
        assert_eq!(
            Reader::new(&[0xD2, 0, 0, 0]).int32(),
            Err(Error::ReadBuffer)
        );
        assert_eq!(
            Reader::new(&[0xC6, 0xFF, 0xFF, 0xFF, 0xFF]).bin32(),
            Err(Error::Data)
        );
        assert_eq!(
            Reader::new(&[0xC6, 0x7F, 0xFF, 0xFF, 0xFF, 1]).bin32(),
            Err(Error::ReadBuffer)
        );
        assert_eq!(Reader::new(&[0xA5, b'a']).fixstr(), Err(Error::ReadBuffer));
        assert_eq!(Reader::new(&[0xC0]).fixstr(), Err(Error::Data));
        assert!(Reader::at(&[1, 2], 3).is_err());
        assert_eq!(Reader::at(&[1, 2], 2).unwrap().remaining(), 0);
    }
}
