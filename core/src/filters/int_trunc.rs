//! INT_TRUNC (filter id 36): zeroes the low bits of integers, the integer counterpart of
//! TRUNC_PREC. Lossy; decoding copies the block unchanged.
//!
//! The meta byte, read as a signed number, is the number of bits to keep when >= 0, or the
//! number of bits to clear when negative. Elements are little-endian unsigned integers of the
//! chunk's typesize (1, 2, 4 or 8; others are an error). Clearing as many bits as the element
//! has, or more, is an error, as in c-blosc2. Trailing bytes after the last whole element are
//! copied (c-blosc2 leaves them unwritten in its scratch buffer).

#![forbid(unsafe_code)]

use crate::error::{Error, Result};

/// The mask for `bits`-bit elements, or `Failure` when the request clears every bit.
fn mask(bits: u32, prec: i8) -> Result<u64> {
    // c-blosc2 computes the cleared bit count in a `uint8_t`: a precision above the element
    // width wraps around to a large count and fails like any other too-large count.
    let zeroed = if prec >= 0 {
        (bits as u8).wrapping_sub(prec as u8)
    } else {
        (prec as i16).unsigned_abs() as u8
    };
    if u32::from(zeroed) >= bits {
        return Err(Error::Failure);
    }
    Ok(!((1u64 << zeroed) - 1))
}

/// Forward INT_TRUNC of `src` into `dst` (same length).
pub fn encode(typesize: usize, meta: u8, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let n = src.len();
    if dst.len() < n || !matches!(typesize, 1 | 2 | 4 | 8) {
        return Err(Error::Failure);
    }
    let m = mask(typesize as u32 * 8, meta as i8)?.to_le_bytes();
    let whole = n - n % typesize;
    for (s, d) in src[..whole]
        .chunks_exact(typesize)
        .zip(dst[..whole].chunks_exact_mut(typesize))
    {
        for k in 0..typesize {
            d[k] = s[k] & m[k];
        }
    }
    dst[whole..n].copy_from_slice(&src[whole..]);
    Ok(())
}

/// Backward INT_TRUNC: a copy.
pub fn decode(src: &[u8], dst: &mut [u8]) -> Result<()> {
    let n = src.len();
    if dst.len() < n {
        return Err(Error::Failure);
    }
    dst[..n].copy_from_slice(src);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_or_clears_bits() {
        let src = 0xFFFF_FFFFu32.to_le_bytes();
        let mut out = [0u8; 4];
        encode(4, 8, &src, &mut out).unwrap();
        assert_eq!(u32::from_le_bytes(out), 0xFF00_0000);
        encode(4, (-3i8) as u8, &src, &mut out).unwrap();
        assert_eq!(u32::from_le_bytes(out), 0xFFFF_FFF8);
        encode(4, 32, &src, &mut out).unwrap();
        assert_eq!(u32::from_le_bytes(out), 0xFFFF_FFFF);
        let src8 = u64::MAX.to_le_bytes();
        let mut out8 = [0u8; 8];
        encode(8, 1, &src8, &mut out8).unwrap();
        assert_eq!(u64::from_le_bytes(out8), 1 << 63);
        let mut o1 = [0u8; 3];
        encode(1, (-7i8) as u8, &[0xFF, 0x81, 0x7F], &mut o1).unwrap();
        assert_eq!(o1, [0x80, 0x80, 0x00]);
    }

    #[test]
    fn refuses_what_c_blosc2_refuses() {
        let src = [0u8; 8];
        let mut out = [0u8; 8];
        assert_eq!(encode(4, 0, &src, &mut out), Err(Error::Failure));
        assert_eq!(
            encode(4, (-32i8) as u8, &src, &mut out),
            Err(Error::Failure)
        );
        assert_eq!(encode(4, 33, &src, &mut out), Err(Error::Failure));
        assert_eq!(
            encode(2, (-128i8) as u8, &src, &mut out),
            Err(Error::Failure)
        );
        assert_eq!(encode(3, 8, &src, &mut out), Err(Error::Failure));
        assert_eq!(encode(1, 7, &src[..3], &mut out), Ok(()));
    }
}
