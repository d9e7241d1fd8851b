//! The frame trailer: vlmetalayers (each a complete compressed chunk), the trailer length and an
//! (always empty) fingerprint slot (docs/format/trailer.md#layout).
//!
//! Layout: `0x94 | version 1 | 0x93 | 0xCD idx_size | 0xDE nvl {fixstr name, 0xD2 offset}* |
//! 0xDC nvl {0xC6 len bytes}* | 0xCE trailer_len | 0xD8 0x00 <16 zero bytes>`. Content offsets
//! are relative to the start of the trailer; `trailer_len` sits 22 bytes before the frame end.

use super::header::{HEADER_MINLEN, MAX_NAME_LEN, TRAILER_MINLEN};
use crate::error::{Error, Result};
use crate::msgpack::{self, marker, Reader};

/// Trailer format version written (`FRAME_TRAILER_VERSION`).
pub const TRAILER_VERSION: u8 = 1;
/// Most vlmetalayers a trailer may declare on read (`BLOSC2_MAX_VLMETALAYERS`).
pub const MAX_VLMETALAYERS_READ: usize = 8 * 1024;
/// Most vlmetalayers c-blosc2 lets a frame gain (`blosc2_vlmeta_add` fails with -1 beyond);
/// enforced when adding. The trailer writer itself accepts what the reader accepts.
pub const MAX_VLMETALAYERS_WRITE: usize = 16;
/// Bytes from `trailer_len`'s marker to the frame end: `0xCE` + u32 + fixext16 (18).
const TAIL_LEN: usize = 23;

/// The `trailer_len` stored 22 bytes before the frame end, validated against `frame_len`.
/// `window` is the last [`TRAILER_MINLEN`] bytes of the frame.
pub fn trailer_len_from_window(window: &[u8], frame_len: u64) -> Result<u32> {
    if window.len() < TRAILER_MINLEN {
        return Err(Error::ReadBuffer);
    }
    let w = &window[window.len() - TAIL_LEN..];
    let mut r = Reader::new(w);
    let len = r.uint32().map_err(|_| Error::InvalidHeader)?;
    if (len as usize) < TRAILER_MINLEN
        || len > i32::MAX as u32
        || u64::from(len) > frame_len.saturating_sub(HEADER_MINLEN as u64)
    {
        return Err(Error::InvalidHeader);
    }
    Ok(len)
}

/// Parses the vlmetalayers of a trailer. `trailer` is the whole trailer (`trailer_len` bytes);
/// contents are returned as stored (compressed chunks).
pub fn parse(trailer: &[u8]) -> Result<Vec<(String, Vec<u8>)>> {
    let bad = |_| Error::InvalidHeader;
    let mut r = Reader::at(trailer, 3).map_err(bad)?;
    let _idx_size = r.uint16().map_err(bad)?;
    let n = r.map16().map_err(bad)? as usize;
    if n > MAX_VLMETALAYERS_READ {
        return Err(Error::InvalidHeader);
    }
    let mut out = Vec::with_capacity(n.min(64));
    for _ in 0..n {
        let name = r.fixstr().map_err(bad)?;
        let offset = r.int32().map_err(bad)?;
        let offset = usize::try_from(offset).map_err(|_| Error::InvalidHeader)?;
        let mut c = Reader::at(trailer, offset).map_err(bad)?;
        let content = c.bin32().map_err(bad)?;
        out.push((String::from_utf8_lossy(name).into_owned(), content.to_vec()));
    }
    Ok(out)
}

/// Serialises a trailer for `vlmeta` (name, compressed content).
pub fn to_bytes(vlmeta: &[(String, Vec<u8>)]) -> Result<Vec<u8>> {
    if vlmeta.len() > MAX_VLMETALAYERS_READ {
        return Err(Error::Failure);
    }
    if vlmeta
        .iter()
        .any(|(n, _)| n.is_empty() || n.len() > MAX_NAME_LEN)
    {
        return Err(Error::InvalidParam);
    }
    let map_len: usize = vlmeta.iter().map(|(n, _)| 1 + n.len() + 5).sum();
    let contents_len: usize = vlmeta.iter().map(|(_, c)| 5 + c.len()).sum();
    let total = 3 + 3 + 3 + map_len + 3 + contents_len + TAIL_LEN;
    let total32 = u32::try_from(total)
        .ok()
        .filter(|&t| t <= i32::MAX as u32)
        .ok_or(Error::TwoGbLimit)?;
    let mut out = Vec::with_capacity(total);
    msgpack::write_fixarray(&mut out, 4);
    out.push(TRAILER_VERSION);
    msgpack::write_fixarray(&mut out, 3);
    // idx_size counts from the 0xCD byte to the end of the name map.
    msgpack::write_uint16(&mut out, (3 + 3 + map_len) as u16);
    msgpack::write_map16(&mut out, vlmeta.len() as u16);
    let mut pos = 3 + 3 + 3 + map_len + 3;
    for (name, content) in vlmeta {
        msgpack::write_fixstr(&mut out, name.as_bytes());
        msgpack::write_int32(&mut out, pos as i32);
        pos += 5 + content.len();
    }
    msgpack::write_array16(&mut out, vlmeta.len() as u16);
    for (_, content) in vlmeta {
        msgpack::write_bin32(&mut out, content)?;
    }
    msgpack::write_uint32(&mut out, total32);
    out.push(marker::FIXEXT16);
    out.push(0);
    out.extend_from_slice(&[0u8; 16]);
    debug_assert_eq!(out.len(), total);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 35-byte empty trailer c-blosc2 3.3.5 writes.
    pub(crate) const EMPTY_TRAILER: [u8; 35] = [
        0x94, 0x01, 0x93, 0xcd, 0x00, 0x06, 0xde, 0x00, 0x00, 0xdc, 0x00, 0x00, 0xce, 0x00, 0x00,
        0x00, 0x23, 0xd8, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];

    #[test]
    fn empty_trailer_is_exact() {
        assert_eq!(to_bytes(&[]).unwrap(), EMPTY_TRAILER);
        assert_eq!(
            trailer_len_from_window(&EMPTY_TRAILER[10..], 132).unwrap(),
            35
        );
        assert!(parse(&EMPTY_TRAILER).unwrap().is_empty());
    }

    #[test]
    fn vlmeta_round_trip() {
        let v = vec![
            ("units".to_string(), vec![5, 1, 7, 1, 9, 0, 0, 0]),
            ("x".to_string(), vec![]),
        ];
        let t = to_bytes(&v).unwrap();
        assert_eq!(parse(&t).unwrap(), v);
        let n = t.len() as u32;
        assert_eq!(&t[t.len() - 22..t.len() - 18], &n.to_be_bytes());
        // The first content offset is relative to the trailer start.
        let off = i32::from_be_bytes(t[16..20].try_into().unwrap()) as usize;
        assert_eq!(t[off], 0xc6);
    }

    #[test]
    fn hostile_trailers_are_rejected() {
        let v = vec![("units".to_string(), vec![1, 2, 3])];
        let t = to_bytes(&v).unwrap();
        let tl = t.len();
        // trailer_len: too small, too large for the frame, > INT32_MAX, bad marker.
        for (len, frame_len) in [
            (24u32, 1000u64),
            (tl as u32, tl as u64),
            (u32::MAX, u64::MAX),
        ] {
            let mut b = t.clone();
            b[tl - 22..tl - 18].copy_from_slice(&len.to_be_bytes());
            assert!(trailer_len_from_window(&b[tl - 25..], frame_len).is_err());
        }
        let mut b = t.clone();
        b[tl - 23] = 0xcf;
        assert!(trailer_len_from_window(&b[tl - 25..], 1000).is_err());
        assert!(trailer_len_from_window(&t[..10], 1000).is_err());
        // nvlmetalayers 0xFFFF and 8193 (decoded unsigned).
        for n in [0xFFFFu16, 8193] {
            let mut b = t.clone();
            b[7..9].copy_from_slice(&n.to_be_bytes());
            assert_eq!(parse(&b), Err(Error::InvalidHeader));
        }
        // content offset and length past the end.
        let off_pos = 9 + 1 + 5 + 1;
        for v in [i32::MAX, -1, tl as i32] {
            let mut b = t.clone();
            b[off_pos..off_pos + 4].copy_from_slice(&v.to_be_bytes());
            assert!(parse(&b).is_err());
        }
        let content = i32::from_be_bytes(t[off_pos..off_pos + 4].try_into().unwrap()) as usize;
        for v in [i32::MAX, -1, 1 << 28] {
            let mut b = t.clone();
            b[content + 1..content + 5].copy_from_slice(&v.to_be_bytes());
            assert!(parse(&b).is_err());
        }
        for cut in 0..tl {
            let _ = parse(&t[..cut]);
        }
    }

    #[test]
    fn writer_limits() {
        let many: Vec<_> = (0..8193).map(|i| (format!("m{i}"), vec![])).collect();
        assert_eq!(to_bytes(&many), Err(Error::Failure));
        assert_eq!(parse(&to_bytes(&many[..17]).unwrap()).unwrap().len(), 17);
        assert_eq!(
            to_bytes(&[("x".repeat(32), vec![])]),
            Err(Error::InvalidParam)
        );
    }
}
