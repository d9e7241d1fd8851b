//! The `b2nd` (formerly `caterva`) metalayer: array shape, chunk and block shapes and dtype,
//! msgpack-encoded (docs/format/metalayers.md#b2nd):
//! `0x97 | version 0 | ndim | 0x90+ndim {0xD3 i64}* | 0x90+ndim {0xD2 i32}* (chunkshape) |
//! 0x90+ndim {0xD2 i32}* (blockshape) | dtype_format | 0xDB i32 len dtype`.
//!
//! The reader follows c-blosc2's inline deserializer: it does not check the array markers or
//! the version byte, bounds-checks every read, and accepts a missing dtype (old caterva
//! metalayers).

#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use crate::msgpack::{self, Reader};

/// Most dimensions (`B2ND_MAX_DIM`).
pub const MAX_DIM: usize = 16;
/// `B2ND_METALAYER_VERSION`.
pub const METALAYER_VERSION: u8 = 0;
/// dtype written when none is given (`B2ND_DEFAULT_DTYPE`).
pub const DEFAULT_DTYPE: &[u8] = b"|u1";

/// The decoded metalayer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct B2ndMeta {
    /// Array shape (`ndim` entries).
    pub shape: Vec<i64>,
    /// Chunk shape.
    pub chunkshape: Vec<i32>,
    /// Block shape.
    pub blockshape: Vec<i32>,
    /// dtype format (0 = NumPy).
    pub dtype_format: i8,
    /// dtype string bytes; `None` when the metalayer has no dtype entry.
    pub dtype: Option<Vec<u8>>,
}

impl B2ndMeta {
    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
}

/// Encodes the metalayer; a missing dtype is written as `"|u1"`. `ndim` must be 0..=16 with
/// equally long shapes, and `dtype_format` non-negative (the reference fails with -1).
pub fn serialize(
    shape: &[i64],
    chunkshape: &[i32],
    blockshape: &[i32],
    dtype: Option<&[u8]>,
    dtype_format: i8,
) -> Result<Vec<u8>> {
    let ndim = shape.len();
    if ndim > MAX_DIM || chunkshape.len() != ndim || blockshape.len() != ndim {
        return Err(Error::InvalidParam);
    }
    if dtype_format < 0 {
        return Err(Error::Failure);
    }
    let dtype = dtype.unwrap_or(DEFAULT_DTYPE);
    let mut out = Vec::with_capacity(3 + 3 + ndim * 19 + 6 + dtype.len());
    msgpack::write_fixarray(&mut out, 7);
    out.push(METALAYER_VERSION);
    out.push(ndim as u8);
    // `0x90 + ndim` even for ndim 16 (0xA0), exactly as c-blosc2 writes it; readers skip it.
    out.push(msgpack::marker::FIXARRAY + ndim as u8);
    for &s in shape {
        msgpack::write_int64(&mut out, s);
    }
    for dims in [chunkshape, blockshape] {
        out.push(msgpack::marker::FIXARRAY + ndim as u8);
        for &d in dims {
            msgpack::write_int32(&mut out, d);
        }
    }
    out.push(dtype_format as u8);
    msgpack::write_str32(&mut out, dtype).map_err(|_| Error::Failure)?;
    Ok(out)
}

/// Decodes the metalayer; returns it and the number of bytes consumed. With
/// `with_dtype == false` reading stops after the block shape (like the C function called with
/// NULL dtype pointers). Malformed input is `Error::Failure`, as in c-blosc2.
pub fn deserialize(buf: &[u8], with_dtype: bool) -> Result<(B2ndMeta, usize)> {
    let f = |_| Error::Failure;
    if buf.is_empty() {
        return Err(Error::Failure);
    }
    let mut r = Reader::new(buf);
    r.skip(2).map_err(f)?; // array marker and version, unchecked
    let ndim = r.u8().map_err(f)? as i8;
    if !(0..=MAX_DIM as i8).contains(&ndim) {
        return Err(Error::Failure);
    }
    let ndim = ndim as usize;
    let mut shape = Vec::with_capacity(ndim);
    r.skip(1).map_err(f)?;
    for _ in 0..ndim {
        r.skip(1).map_err(f)?;
        shape.push(r.be_i64().map_err(f)?);
    }
    let dims32 = |r: &mut Reader| -> Result<Vec<i32>> {
        let mut v = Vec::with_capacity(ndim);
        r.skip(1).map_err(f)?;
        for _ in 0..ndim {
            r.skip(1).map_err(f)?;
            v.push(r.be_i32().map_err(f)?);
        }
        Ok(v)
    };
    let chunkshape = dims32(&mut r)?;
    let blockshape = dims32(&mut r)?;
    let mut m = B2ndMeta {
        shape,
        chunkshape,
        blockshape,
        dtype_format: 0,
        dtype: None,
    };
    if with_dtype && r.remaining() > 0 {
        if r.remaining() < 6 {
            return Err(Error::Failure);
        }
        m.dtype_format = r.u8().map_err(f)? as i8;
        m.dtype = Some(r.str32().map_err(f)?.to_vec());
    }
    Ok((m, r.pos()))
}

/// `buf` (a stored metalayer) with its shape replaced by `shape` (as many dimensions), every
/// other byte kept: the metalayer of an array whose chunk grid changed, of the same length
/// (frames holding chunks keep a metalayer's length).
pub fn with_shape(buf: &[u8], shape: &[i64]) -> Result<Vec<u8>> {
    let (m, _) = deserialize(buf, false)?;
    if m.ndim() != shape.len() {
        return Err(Error::InvalidParam);
    }
    let mut out = buf.to_vec();
    for (d, &s) in shape.iter().enumerate() {
        // marker, version, ndim, array marker; then per dimension an int64 marker and the value
        let at = 4 + 9 * d + 1;
        out[at..at + 8].copy_from_slice(&s.to_be_bytes());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn exact_bytes_match_reference() {
        // Outputs of c-blosc2 3.3.5's b2nd_serialize_meta.
        let s = serialize(&[400, 3], &[110, 3], &[57, 3], Some(b"<f8"), 0).unwrap();
        assert_eq!(
            hex(&s),
            "97000292d30000000000000190d3000000000000000392d20000006ed20000000392d200000039\
             d20000000300db000000033c6638"
        );
        assert_eq!(s.len(), 53);
        let s0 = serialize(&[], &[], &[], Some(b"<f8"), 0).unwrap();
        assert_eq!(hex(&s0), "97000090909000db000000033c6638");
        let d = serialize(&[10], &[5], &[2], None, 0).unwrap();
        assert_eq!(
            hex(&d),
            "97000191d3000000000000000a91d20000000591d20000000200db000000037c7531"
        );
        let e = serialize(&[10], &[5], &[2], Some(b""), 3).unwrap();
        assert_eq!(
            hex(&e),
            "97000191d3000000000000000a91d20000000591d20000000203db00000000"
        );
        assert_eq!(
            serialize(&[10], &[5], &[2], Some(b"<i4"), -1),
            Err(Error::Failure)
        );
        assert_eq!(
            serialize(&[1; 17], &[1; 17], &[1; 17], None, 0),
            Err(Error::InvalidParam)
        );
    }

    #[test]
    fn round_trip_and_consumed() {
        let s = serialize(&[400, 3], &[110, 3], &[57, 3], Some(b"<f8"), 0).unwrap();
        let (m, n) = deserialize(&s, true).unwrap();
        assert_eq!(n, 53);
        assert_eq!(m.shape, vec![400, 3]);
        assert_eq!(m.chunkshape, vec![110, 3]);
        assert_eq!(m.blockshape, vec![57, 3]);
        assert_eq!(m.dtype.as_deref(), Some(&b"<f8"[..]));
        let (m2, n2) = deserialize(&s, false).unwrap();
        assert_eq!((m2.dtype, n2), (None, 53 - 9));
        // Old caterva metalayer without dtype.
        let (m3, n3) = deserialize(&s[..44], true).unwrap();
        assert_eq!((m3.dtype, m3.dtype_format, n3), (None, 0, 44));
    }

    #[test]
    fn hostile_metalayers_fail() {
        let s = serialize(&[400, 3], &[110, 3], &[57, 3], Some(b"<f8"), 0).unwrap();
        for cut in 0..s.len() {
            let r = deserialize(&s[..cut], true);
            if cut != 44 {
                assert_eq!(r.map(|_| ()), Err(Error::Failure), "cut {cut}");
            }
        }
        let mut b = s.clone();
        b[2] = 17;
        assert_eq!(deserialize(&b, true).map(|_| ()), Err(Error::Failure));
        b[2] = 0xff;
        assert_eq!(deserialize(&b, true).map(|_| ()), Err(Error::Failure));
        let mut b = s.clone();
        b[45] = 0xd9;
        assert_eq!(deserialize(&b, true).map(|_| ()), Err(Error::Failure));
        let mut b = s.clone();
        b[46..50].copy_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(deserialize(&b, true).map(|_| ()), Err(Error::Failure));
        b[46..50].copy_from_slice(&i32::MAX.to_be_bytes());
        assert_eq!(deserialize(&b, true).map(|_| ()), Err(Error::Failure));
    }

    #[test]
    fn with_shape_replaces_only_the_shape() {
        let a = serialize(&[40, 30], &[10, 10], &[5, 5], Some(b"<i4"), 0).unwrap();
        let b = serialize(&[25, 14], &[10, 10], &[5, 5], Some(b"<i4"), 0).unwrap();
        assert_eq!(with_shape(&a, &[25, 14]).unwrap(), b);
        assert_eq!(with_shape(&a, &[25]), Err(Error::InvalidParam));
    }
}
