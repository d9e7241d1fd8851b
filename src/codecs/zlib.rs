//! zlib-wrapped deflate (chunk format code 3), with zlib-rs.
//!
//! c-blosc2 writes each stream with `compress2(level = clevel)` (zlib header, 32 KiB window,
//! default memLevel and strategy) and reads it with `uncompress` into a buffer of exactly the
//! expected size. zlib-rs's safe one-shot API does precisely that (`compress_slice` /
//! `decompress_slice` are its `compress2` / `uncompress`), is pure Rust (no `unsafe` here) and
//! runs at zlib-ng speed, which is what c-blosc2 bundles; see BENCHMARKS.md for the comparison.

use crate::error::{Error, Result};
use zlib_rs::{DeflateConfig, InflateConfig, ReturnCode};

/// Deflate at level `clevel` (clamped to 1..=9) with the zlib wrapper; returns 0 when it does
/// not fit in `dst`.
pub fn compress(clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    if src.is_empty() || dst.is_empty() {
        return 0;
    }
    let config = DeflateConfig::new(i32::from(clevel.clamp(1, 9)));
    let (out, rc) = zlib_rs::compress_slice(dst, src, config);
    if rc == ReturnCode::Ok {
        out.len()
    } else {
        0
    }
}

/// Inflates a zlib stream into `dst`; returns the bytes produced. A stream that is corrupt,
/// truncated, fails its Adler-32 check or would produce more than `dst.len()` bytes is an error.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let (out, rc) = zlib_rs::decompress_slice(dst, src, InflateConfig::default());
    if rc != ReturnCode::Ok {
        return Err(Error::Data);
    }
    Ok(out.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_exact_size() {
        let src: Vec<u8> = (0..10_000u32).map(|i| (i % 13) as u8).collect();
        for clevel in 1..=9u8 {
            let mut c = vec![0u8; src.len()];
            let n = compress(clevel, &src, &mut c);
            assert!(n > 2 && n < src.len());
            assert_eq!(c[0] & 0x0F, 8, "zlib header: deflate method");
            let mut out = vec![0u8; src.len()];
            assert_eq!(decompress(&c[..n], &mut out), Ok(src.len()));
            assert_eq!(out, src);
            let mut short = vec![0u8; src.len() - 1];
            assert_eq!(decompress(&c[..n], &mut short), Err(Error::Data));
        }
    }

    #[test]
    fn does_not_fit_is_zero() {
        let src: Vec<u8> = (0..1000u32).map(|i| (i * 7919 % 251) as u8).collect();
        assert_eq!(compress(5, &src, &mut [0u8; 10]), 0);
        assert_eq!(compress(5, &src, &mut []), 0);
    }
}
