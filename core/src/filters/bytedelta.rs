//! BYTEDELTA (filter id 35) and its first, buggy release BYTEDELTA_BUGGY (id 34): byte-wise
//! delta coding of the `typesize` byte streams that a preceding SHUFFLE leaves in a block.
//!
//! A block of `n` bytes holds `typesize` streams of `n / typesize` bytes each, one after the
//! other; the trailing `n % typesize` bytes belong to no stream and pass through unchanged.
//! Each stream is coded as the difference (wrapping) of every byte with the byte before it, the
//! first byte against 0.
//!
//! The buggy variant is what c-blosc2's SIMD code path wrote before it was fixed: the stream is
//! processed 16 bytes at a time and the scalar tail (the last `len % 16` bytes of a stream of
//! at least 16 bytes) starts again from 0 instead of continuing from the previous byte. Frames
//! written with id 34 need exactly that rule to decode. (c-blosc2's buggy variant leaves the
//! trailing `n % typesize` bytes of its output unwritten; we copy them, as the fixed one does.)
//!
//! The element size is the filter's meta byte, or the super-chunk's typesize when the meta is
//! 0; without a super-chunk a meta of 0 is an error (`Failure`), as in c-blosc2.

#![forbid(unsafe_code)]

use crate::error::{Error, Result};

/// Where the delta chain restarts from 0 in a stream of `len` bytes (`len` = no restart).
fn restart_at(len: usize, buggy: bool) -> usize {
    if buggy && len >= 16 {
        len - len % 16
    } else {
        len
    }
}

/// The element size the filter works with: `meta`, else the super-chunk typesize.
pub fn element_size(meta: u8, schunk_typesize: Option<i32>) -> Result<usize> {
    if meta != 0 {
        return Ok(usize::from(meta));
    }
    match schunk_typesize {
        Some(t) if t > 0 => Ok(t as usize),
        _ => Err(Error::Failure),
    }
}

/// Forward BYTEDELTA over `src` into `dst` (same length) with element size `typesize`.
pub fn encode(typesize: usize, buggy: bool, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let n = src.len();
    if typesize == 0 || dst.len() < n {
        return Err(Error::Failure);
    }
    let slen = n / typesize;
    let restart = restart_at(slen, buggy);
    for (s, d) in src[..slen * typesize]
        .chunks_exact(slen.max(1))
        .zip(dst[..slen * typesize].chunks_exact_mut(slen.max(1)))
    {
        let mut prev = 0u8;
        for (i, (&v, o)) in s.iter().zip(d.iter_mut()).enumerate() {
            if i == restart {
                prev = 0;
            }
            *o = v.wrapping_sub(prev);
            prev = v;
        }
    }
    dst[slen * typesize..n].copy_from_slice(&src[slen * typesize..]);
    Ok(())
}

/// Backward BYTEDELTA over `src` into `dst` (same length) with element size `typesize`.
pub fn decode(typesize: usize, buggy: bool, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let n = src.len();
    if typesize == 0 || dst.len() < n {
        return Err(Error::Failure);
    }
    let slen = n / typesize;
    let restart = restart_at(slen, buggy);
    for (s, d) in src[..slen * typesize]
        .chunks_exact(slen.max(1))
        .zip(dst[..slen * typesize].chunks_exact_mut(slen.max(1)))
    {
        let mut acc = 0u8;
        for (i, (&v, o)) in s.iter().zip(d.iter_mut()).enumerate() {
            if i == restart {
                acc = 0;
            }
            acc = acc.wrapping_add(v);
            *o = acc;
        }
    }
    dst[slen * typesize..n].copy_from_slice(&src[slen * typesize..]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + i / 3) as u8).collect()
    }

    #[test]
    fn roundtrip_both_variants() {
        for buggy in [false, true] {
            for ts in [1usize, 2, 4, 8, 16, 255] {
                for n in [0usize, 1, 15, 16, 17, 31, 64, 100, 1000, 4099] {
                    let src = data(n);
                    let mut enc = vec![0u8; n];
                    let mut dec = vec![0u8; n];
                    encode(ts, buggy, &src, &mut enc).unwrap();
                    decode(ts, buggy, &enc, &mut dec).unwrap();
                    assert_eq!(dec, src, "ts {ts} n {n} buggy {buggy}");
                }
            }
        }
    }

    #[test]
    fn fixed_is_a_plain_delta_per_stream_and_buggy_restarts() {
        // typesize 1: one stream of 20 bytes, all equal to 5.
        let src = [5u8; 20];
        let mut out = [0u8; 20];
        encode(1, false, &src, &mut out).unwrap();
        assert_eq!(out[0], 5);
        assert!(out[1..].iter().all(|&b| b == 0));
        encode(1, true, &src, &mut out).unwrap();
        // The tail of 4 bytes restarts from 0 at byte 16.
        assert_eq!(out[16], 5);
        assert!(out[17..].iter().all(|&b| b == 0));
        // Trailing bytes past the last full element are copied.
        let src = [1u8, 2, 3, 4, 5];
        let mut out = [0u8; 5];
        encode(2, false, &src, &mut out).unwrap();
        assert_eq!(out, [1, 1, 3, 1, 5]);
    }

    #[test]
    fn meta_zero_needs_a_schunk() {
        assert_eq!(element_size(0, None), Err(Error::Failure));
        assert_eq!(element_size(0, Some(4)), Ok(4));
        assert_eq!(element_size(2, Some(4)), Ok(2));
        assert_eq!(element_size(0, Some(0)), Err(Error::Failure));
    }
}
