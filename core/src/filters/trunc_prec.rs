//! Precision truncation (`BLOSC_TRUNC_PREC`) for float32/float64: lossy, encode only.
//!
//! The filter meta byte is a signed precision `p`: `p >= 0` keeps `p` mantissa bits, `p < 0`
//! drops `-p` bits. Limits (c-blosc2): `|p|` at most 23 (float32) or 52 (float64), and fewer than
//! 23/52 bits may be zeroed, so NaN/Inf stay NaN/Inf. Other typesizes are an error.
//!
//! Bytes after the last whole element (only a short last block has them): the reference leaves
//! them unwritten, so they hold what its reused filter buffer held there, the previous block's
//! filtered bytes. When every element of the block truncates to zero they are zeroed too: then
//! c-blosc2, whose earlier blocks of the chunk were zero there as well, sees a zero run and stores
//! an all-zero chunk as a ZERO special chunk, and so do we. Otherwise they are copied verbatim
//! (the reference's bytes there are not defined).

#![forbid(unsafe_code)]

use crate::error::{Error, Result};

/// Zeroes the low mantissa bits of each float of `src` into `dst`.
///
/// Fails with `FilterPipeline` for a typesize other than 4 or 8, a precision out of range, or
/// `src`/`dst` of different lengths.
pub fn encode(typesize: usize, prec_bits: i8, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let mantissa: i32 = match typesize {
        4 => 23,
        8 => 52,
        _ => return Err(Error::FilterPipeline),
    };
    let p = i32::from(prec_bits);
    if p.abs() > mantissa || src.len() != dst.len() {
        return Err(Error::FilterPipeline);
    }
    let zeroed = if p >= 0 { mantissa - p } else { -p };
    if zeroed >= mantissa {
        return Err(Error::FilterPipeline);
    }
    let mask: u64 = !((1u64 << zeroed) - 1);
    let body = src.len() / typesize * typesize;
    for (d, s) in dst[..body]
        .chunks_exact_mut(typesize)
        .zip(src[..body].chunks_exact(typesize))
    {
        if typesize == 4 {
            let v = u32::from_le_bytes([s[0], s[1], s[2], s[3]]) & mask as u32;
            d.copy_from_slice(&v.to_le_bytes());
        } else {
            let mut w = [0u8; 8];
            w.copy_from_slice(s);
            d.copy_from_slice(&(u64::from_le_bytes(w) & mask).to_le_bytes());
        }
    }
    if body < src.len() && dst[..body].iter().all(|&b| b == 0) {
        dst[body..].fill(0);
    } else {
        dst[body..].copy_from_slice(&src[body..]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_requested_bits() {
        let x = f32::from_bits(0x3FFF_FFFF);
        let src = x.to_le_bytes();
        let mut out = [0u8; 4];
        encode(4, 10, &src, &mut out).unwrap();
        assert_eq!(u32::from_le_bytes(out), 0x3FFF_E000);
        encode(4, -3, &src, &mut out).unwrap();
        assert_eq!(u32::from_le_bytes(out), 0x3FFF_FFF8);
    }

    #[test]
    fn trailing_bytes_follow_the_elements() {
        // Elements that truncate to zero (denormals): the trailing byte is zeroed with them.
        let src = [5, 0, 0, 0, 7, 0, 0, 0, 9];
        let mut out = [0xAAu8; 9];
        encode(4, 10, &src, &mut out).unwrap();
        assert_eq!(out, [0; 9]);
        // An element that keeps a bit: the trailing byte is copied verbatim.
        let src = [0, 0, 0x80, 0x3F, 7, 0, 0, 0, 9];
        encode(4, 10, &src, &mut out).unwrap();
        assert_eq!(out, [0, 0, 0x80, 0x3F, 0, 0, 0, 0, 9]);
    }

    #[test]
    fn rejects_what_the_reference_rejects() {
        let src = [0u8; 8];
        let mut out = [0u8; 8];
        assert!(encode(2, 3, &src, &mut out).is_err());
        assert!(encode(4, 24, &src, &mut out).is_err());
        assert!(encode(4, -23, &src, &mut out).is_err());
        assert!(encode(4, 0, &src, &mut out).is_err()); // would zero all 23 bits
        assert!(encode(8, 53, &src, &mut out).is_err());
        assert!(encode(8, -52, &src, &mut out).is_err());
        assert!(encode(4, -22, &src, &mut out).is_ok());
        assert!(encode(8, 1, &src, &mut out).is_ok());
    }
}
