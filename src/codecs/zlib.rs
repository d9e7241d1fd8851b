//! zlib-wrapped deflate (chunk format code 3), with zlib-rs.
//!
//! c-blosc2 writes each stream with `compress2(level = clevel)` (zlib header, 32 KiB window,
//! default memLevel and strategy) and reads it with `uncompress` into a buffer of exactly the
//! expected size. We do the same with zlib-rs's safe streaming API (pure Rust, no `unsafe`
//! here), but keep one compressor and one decompressor per worker ([`ZlibState`]) and only
//! reset them between blocks: the one-shot `compress_slice`/`decompress_slice` allocate and
//! zero a fresh state for every block (~450 KiB for deflate: window, `prev`, `head`), which
//! c-blosc2's zlib-ng pays too but we need not. A reset stream produces byte-identical output
//! to a fresh one (deflate's reset clears the hash heads; stale `prev` links and window bytes
//! are never reached), which the tests below check.

use crate::error::{Error, Result};
use zlib_rs::{Deflate, DeflateFlush, Inflate, InflateFlush, Status};

/// zlib's default (and maximal) window: 32 KiB, as `compress2`/`uncompress` use.
const WINDOW_BITS: u8 = 15;

/// Reusable zlib-rs streams of one worker, created on first use, reset per block.
#[derive(Default)]
pub struct ZlibState {
    /// The compressor and the level it was created for (the level picks deflate's
    /// algorithm and tables, so a different clevel gets a fresh compressor).
    deflate: Option<(u8, Deflate)>,
    inflate: Option<Inflate>,
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
pub fn decompress(state: &mut ZlibState, src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let inflate = match &mut state.inflate {
        Some(i) => {
            i.reset(true);
            i
        }
        slot => slot.insert(Inflate::new(true, WINDOW_BITS)),
    };
    // One call with all input and all output: it ends the stream (and checks its Adler-32), or
    // it stops short because the input is truncated or `dst` is too small, both errors here.
    match inflate.decompress(src, dst, InflateFlush::Finish) {
        Ok(Status::StreamEnd) => Ok(inflate.total_out() as usize),
        _ => Err(Error::Data),
    }
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
