//! zlib-wrapped deflate (chunk format code 3): zlib-rs writes, libdeflate reads.
//!
//! c-blosc2 writes each stream with `compress2(level = clevel)` (zlib header, 32 KiB window,
//! default memLevel and strategy) and reads it with `uncompress` into a buffer of exactly the
//! expected size.
//!
//! Writing: zlib-rs's safe streaming API with `compress2`'s parameters (same algorithm per
//! level as zlib-ng, so ratios match c-blosc2's), one compressor per worker ([`ZlibState`])
//! reset between blocks: the one-shot `compress_slice` allocates and zeroes a fresh state for
//! every block (~450 KiB: window, `prev`, `head`). A reset stream writes byte-identical output
//! to a fresh one (the reset clears the hash heads; stale `prev` links and window bytes are
//! never reached), which the tests below check.
//!
//! Reading: libdeflate (through libdeflater's safe API, so no `unsafe` here). A Blosc2 block is
//! always decoded whole, from all of its input into an output of known size, which is exactly
//! the case libdeflate is built for: no sliding window, no streaming state to save between
//! calls. Its decoder runs 1.2-1.4x faster than zlib-ng's `uncompress` on the streams c-blosc2
//! writes (BENCHMARKS.md), where zlib-rs's inflate only matched it. It validates everything
//! (Huffman tables, distances, Adler-32) and never reads or writes outside the given slices.

#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use libdeflater::Decompressor;
use zlib_rs::{Deflate, DeflateFlush, Status};

/// zlib's default (and maximal) window: 32 KiB, as `compress2` uses.
const WINDOW_BITS: u8 = 15;

/// Reusable zlib codec state of one worker, created on first use.
#[derive(Default)]
pub struct ZlibState {
    /// The compressor and the level it was created for (the level picks deflate's
    /// algorithm and tables, so a different clevel gets a fresh compressor).
    deflate: Option<(u8, Deflate)>,
    /// libdeflate's decompressor (its Huffman decode tables, ~10 KiB), reused as is.
    inflate: Option<Decompressor>,
}

/// Deflate at level `clevel` (clamped to 1..=9) with the zlib wrapper; returns 0 when it does
/// not fit in `dst`.
pub fn compress(state: &mut ZlibState, clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    if src.is_empty() || dst.is_empty() {
        return 0;
    }
    let level = clevel.clamp(1, 9);
    let deflate = match &mut state.deflate {
        Some((l, d)) if *l == level => {
            d.reset();
            d
        }
        slot => {
            let fresh = Deflate::new(i32::from(level), true, WINDOW_BITS);
            &mut slot.insert((level, fresh)).1
        }
    };
    match deflate.compress(src, dst, DeflateFlush::Finish) {
        // All input consumed and the stream finished inside `dst`.
        Ok(Status::StreamEnd) => deflate.total_out() as usize,
        // `dst` filled up first (or the stream is unusable): the caller stores the block raw.
        _ => 0,
    }
}

/// Inflates a zlib stream into `dst`; returns the bytes produced. A stream that is corrupt,
/// truncated, fails its Adler-32 check or would produce more than `dst.len()` bytes is an error.
/// Bytes after the end of the stream are ignored, as `uncompress` does.
pub fn decompress(state: &mut ZlibState, src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let inflate = state.inflate.get_or_insert_with(Decompressor::new);
    inflate.zlib_decompress(src, dst).map_err(|_| Error::Data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zlib_rs::{DeflateConfig, InflateConfig, ReturnCode};

    /// zlib-rs's one-shot `compress2` equivalent: the stream a fresh state writes.
    fn one_shot(clevel: u8, src: &[u8]) -> Vec<u8> {
        let mut out = vec![0u8; zlib_rs::compress_bound(src.len())];
        let config = DeflateConfig::new(i32::from(clevel));
        let (c, rc) = zlib_rs::compress_slice(&mut out, src, config);
        assert_eq!(rc, ReturnCode::Ok);
        c.to_vec()
    }

    fn data(seed: u32, len: usize) -> Vec<u8> {
        (0..len as u32)
            .map(|i| ((i % 13) * seed + (i * 7919 % 251) * (i % 3)) as u8)
            .collect()
    }

    #[test]
    fn round_trip_and_exact_size() {
        let src: Vec<u8> = (0..10_000u32).map(|i| (i % 13) as u8).collect();
        let mut st = ZlibState::default();
        for clevel in 1..=9u8 {
            let mut c = vec![0u8; src.len()];
            let n = compress(&mut st, clevel, &src, &mut c);
            assert!(n > 2 && n < src.len());
            assert_eq!(c[0] & 0x0F, 8, "zlib header: deflate method");
            let mut out = vec![0u8; src.len()];
            assert_eq!(decompress(&mut st, &c[..n], &mut out), Ok(src.len()));
            assert_eq!(out, src);
            let mut short = vec![0u8; src.len() - 1];
            assert_eq!(decompress(&mut st, &c[..n], &mut short), Err(Error::Data));
            let mut long = vec![0u8; src.len() + 1];
            assert_eq!(decompress(&mut st, &c[..n], &mut long), Ok(src.len()));
            assert_eq!(decompress(&mut st, &c[..n - 1], &mut out), Err(Error::Data));
        }
    }

    /// A reused (reset) compressor writes exactly the stream a fresh one writes, whatever it
    /// compressed before (other data, other levels, a stream that did not fit), and a reused
    /// decompressor reads it after failed and successful blocks alike.
    #[test]
    fn reused_state_matches_fresh_one_shot() {
        let mut st = ZlibState::default();
        let mut compared = 0;
        let blocks = [
            data(3, 70_000),
            data(5, 1000),
            data(11, 40_000),
            data(3, 70_000),
        ];
        for (i, src) in blocks.iter().enumerate() {
            for clevel in [5u8, 5, 1, 9, 5] {
                let want = one_shot(clevel, src);
                let mut c = vec![0u8; src.len()];
                let n = compress(&mut st, clevel, src, &mut c);
                if want.len() > src.len() {
                    assert_eq!(n, 0, "block {i} clevel {clevel}: does not fit");
                    continue;
                }
                assert_eq!(&c[..n], &want[..], "block {i} clevel {clevel}");
                compared += 1;
                // A stream that does not fit leaves the state reusable.
                assert_eq!(compress(&mut st, clevel, src, &mut c[..n / 2]), 0);
                // So does a corrupt stream on the decoding side.
                let mut bad = want.clone();
                bad[n / 2] ^= 0x55;
                let mut out = vec![0u8; src.len()];
                assert_eq!(decompress(&mut st, &bad, &mut out), Err(Error::Data));
                assert_eq!(decompress(&mut st, &want, &mut out), Ok(src.len()));
                assert_eq!(&out, src);
            }
        }
        assert!(compared >= 15, "only {compared} streams compared");
    }

    #[test]
    fn decodes_what_one_shot_decodes() {
        let src = data(7, 50_000);
        let c = one_shot(6, &src);
        let mut a = vec![0u8; src.len()];
        let mut b = vec![0u8; src.len()];
        let (_, rc) = zlib_rs::decompress_slice(&mut a, &c, InflateConfig::default());
        assert_eq!(rc, ReturnCode::Ok);
        let mut st = ZlibState::default();
        assert_eq!(decompress(&mut st, &c, &mut b), Ok(src.len()));
        assert_eq!(a, b);
        // A bad Adler-32 trailer is an error, as for `uncompress`.
        let mut bad = c.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(decompress(&mut st, &bad, &mut b), Err(Error::Data));
        // Trailing bytes after the stream end are ignored, as `uncompress` does.
        let mut trailing = c.clone();
        trailing.extend_from_slice(&[1, 2, 3]);
        assert_eq!(decompress(&mut st, &trailing, &mut b), Ok(src.len()));
        // Garbage and empty input are errors.
        assert_eq!(decompress(&mut st, &[], &mut b), Err(Error::Data));
        assert_eq!(
            decompress(&mut st, &[0x78, 0x9c, 0xff], &mut b),
            Err(Error::Data)
        );
    }

    #[test]
    fn does_not_fit_is_zero() {
        let src: Vec<u8> = (0..1000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let mut st = ZlibState::default();
        assert_eq!(compress(&mut st, 5, &src, &mut [0u8; 10]), 0);
        assert_eq!(compress(&mut st, 5, &src, &mut []), 0);
    }
}
