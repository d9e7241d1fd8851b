//! Codec contract tests through the public dispatch (`codecs::compress` / `codecs::decompress`):
//! round trips at every clevel and many sizes, the `Ok(0)` "stored raw" contract, decoders that
//! fail cleanly on bad input, and dictionaries.
use crate::common;

use b2frame::codecs::{self, dict, CodecState, LZ4, LZ4HC, ZLIB, ZSTD};
use b2frame::Error;
use common::{data_kind, Rng};

const CODECS: [u8; 4] = [LZ4, LZ4HC, ZLIB, ZSTD];
const SIZES: [usize; 16] = [
    1, 2, 3, 7, 15, 16, 31, 32, 64, 100, 255, 1000, 4097, 32_768, 65_536, 100_003,
];

/// Compresses with room for the worst case (so compressible data must compress).
fn compress_roomy(st: &mut CodecState, code: u8, clevel: u8, src: &[u8]) -> Option<Vec<u8>> {
    let mut dst = vec![0u8; src.len() + src.len() / 2 + 128];
    let n = codecs::compress(st, code, clevel, src, &mut dst, None).unwrap();
    assert!(n < src.len(), "codec {code} returned {n} >= {}", src.len());
    (n > 0).then(|| {
        dst.truncate(n);
        dst
    })
}

fn check_round_trip(st: &mut CodecState, code: u8, clevel: u8, src: &[u8], must_compress: bool) {
    match compress_roomy(st, code, clevel, src) {
        Some(c) => {
            let mut out = vec![0u8; src.len()];
            assert_eq!(
                codecs::decompress(st, code, &c, &mut out, None),
                Ok(src.len()),
                "codec {code} clevel {clevel} len {}",
                src.len()
            );
            assert!(out == src, "codec {code} clevel {clevel} len {}", src.len());
        }
        None => assert!(
            !must_compress,
            "codec {code} clevel {clevel} failed on compressible len {}",
            src.len()
        ),
    }
}

#[test]
fn round_trips_every_clevel_and_size() {
    let mut st = CodecState::new();
    for code in CODECS {
        for clevel in 1..=9u8 {
            for (i, &len) in SIZES.iter().enumerate() {
                let seed = (code as u64) << 32 | (clevel as u64) << 16 | i as u64;
                // Zstd's level 22 is slow at the largest sizes; every other case runs.
                if code == ZSTD && clevel == 9 && len > 40_000 {
                    continue;
                }
                check_round_trip(
                    &mut st,
                    code,
                    clevel,
                    &data_kind("random", len, seed),
                    false,
                );
                check_round_trip(&mut st, code, clevel, &data_kind("text", len, seed), false);
                // Constant data of 64 bytes or more always shrinks, with every codec.
                check_round_trip(
                    &mut st,
                    code,
                    clevel,
                    &data_kind("constant", len, seed),
                    len >= 64,
                );
                check_round_trip(
                    &mut st,
                    code,
                    clevel,
                    &data_kind("seq_i32", len, seed),
                    false,
                );
            }
        }
    }
}

#[test]
fn one_mebibyte_blocks_round_trip() {
    let mut st = CodecState::new();
    for code in CODECS {
        for kind in ["small_int", "text", "random"] {
            let src = data_kind(kind, 1 << 20, 7);
            check_round_trip(&mut st, code, 5, &src, kind != "random");
        }
    }
}

#[test]
fn does_not_fit_is_ok_zero() {
    let mut st = CodecState::new();
    for code in CODECS {
        for clevel in [1u8, 5, 9] {
            // Random data with maxout = neblock, as the chunk writer asks: never a gain.
            let src = data_kind("random", 5000, clevel as u64);
            let mut dst = vec![0u8; src.len()];
            assert_eq!(
                codecs::compress(&mut st, code, clevel, &src, &mut dst, None),
                Ok(0)
            );
            // Compressible data into a far too small buffer.
            let src = data_kind("text", 5000, 3);
            for cap in [0usize, 1, 5, 40] {
                let mut dst = vec![0u8; cap];
                assert_eq!(
                    codecs::compress(&mut st, code, clevel, &src, &mut dst, None),
                    Ok(0),
                    "codec {code} cap {cap}"
                );
            }
        }
    }
}

#[test]
fn unknown_compcode_is_codec_support() {
    let mut st = CodecState::new();
    let mut dst = [0u8; 64];
    assert_eq!(
        codecs::compress(&mut st, 3, 5, &[1, 2, 3], &mut dst, None),
        Err(Error::CodecSupport)
    );
    assert_eq!(
        codecs::decompress(&mut st, 6, &[1, 2, 3], &mut dst, None),
        Err(Error::CodecSupport)
    );
}

/// A decode of damaged input must be an error or exactly the expected size; never a panic.
fn decode_is_clean(st: &mut CodecState, code: u8, src: &[u8], len: usize) -> bool {
    let mut out = vec![0u8; len];
    match codecs::decompress(st, code, src, &mut out, None) {
        Ok(n) => {
            assert_eq!(n, len);
            true
        }
        Err(e) => {
            assert_eq!(e, Error::Data);
            false
        }
    }
}

#[test]
fn wrong_expected_size_is_an_error() {
    let mut st = CodecState::new();
    for code in CODECS {
        let src = data_kind("text", 20_000, 11);
        let c = compress_roomy(&mut st, code, 5, &src).unwrap();
        for len in [0usize, 1, src.len() - 1, src.len() + 1, 2 * src.len()] {
            let mut out = vec![0u8; len];
            assert_eq!(
                codecs::decompress(&mut st, code, &c, &mut out, None),
                Err(Error::Data),
                "codec {code} expected {len}"
            );
        }
    }
}

#[test]
fn truncated_input_is_an_error() {
    let mut st = CodecState::new();
    for code in CODECS {
        let src = data_kind("text", 3000, 5);
        let c = compress_roomy(&mut st, code, 5, &src).unwrap();
        for cut in 0..c.len() {
            // A truncated stream never yields the full, correct output... except that LZ4's
            // last literal run may be cut, which LZ4 detects; all four must report Data.
            let mut out = vec![0u8; src.len()];
            assert_eq!(
                codecs::decompress(&mut st, code, &c[..cut], &mut out, None),
                Err(Error::Data),
                "codec {code} cut {cut}/{}",
                c.len()
            );
        }
    }
}

#[test]
fn corrupted_and_random_input_never_panics() {
    let mut st = CodecState::new();
    let mut rng = Rng::new(99);
    for code in CODECS {
        let src = data_kind("text", 8000, 21);
        let c = compress_roomy(&mut st, code, 5, &src).unwrap();
        let mut detected = 0;
        for _ in 0..2000 {
            let mut bad = c.clone();
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(bad.len() as u64) as usize;
                bad[i] ^= 1 + rng.below(255) as u8;
            }
            if !decode_is_clean(&mut st, code, &bad, src.len()) {
                detected += 1;
            }
        }
        // zlib (Adler-32) and zstd (structure) catch nearly all of these; LZ4 has no checksum
        // but most flips break its token structure or the exact output length.
        assert!(
            detected > 500,
            "codec {code}: only {detected} corruptions detected"
        );
        for len in [0usize, 1, 10, 100, 5000] {
            for _ in 0..200 {
                let mut junk = vec![0u8; 1 + rng.below(300) as usize];
                rng.fill(&mut junk);
                decode_is_clean(&mut st, code, &junk, len);
            }
        }
    }
}

fn records(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut v = Vec::new();
    for i in 0..n {
        let rec = format!(
            "{{\"id\":{},\"name\":\"sensor-{}\",\"unit\":\"kelvin\",\"value\":{}.{}}}\n",
            i,
            rng.below(40),
            rng.below(500),
            rng.below(100)
        );
        v.extend_from_slice(rec.as_bytes());
    }
    v
}

#[test]
fn dictionaries_round_trip_and_help_small_blocks() {
    let data = records(4000, 1);
    let block = 1024;
    let samples = &data[..64 * block];
    let sizes = vec![block; 64];
    for code in [LZ4, LZ4HC, ZSTD] {
        let d = dict::train(code, samples, &sizes, 16 * 1024).expect("training");
        assert!(
            d.len() >= 256 && d.len() <= 16 * 1024,
            "dict size {}",
            d.len()
        );
        if code != ZSTD {
            assert_eq!(
                d,
                &samples[..16 * 1024],
                "LZ4 dicts are the leading sample bytes"
            );
        }
        let cd = dict::CompressDict::new(code, 5, &d).unwrap();
        let dd = dict::DecompressDict::new(code, &d).unwrap();
        let mut st = CodecState::new();
        let (mut with, mut without) = (0usize, 0usize);
        for (k, blk) in data[64 * block..].chunks(block).enumerate() {
            for clevel in [1u8, 5, 9] {
                let mut c = vec![0u8; blk.len()];
                let n = codecs::compress(&mut st, code, clevel, blk, &mut c, Some(&cd)).unwrap();
                assert!(n > 0, "codec {code} block {k}");
                let mut out = vec![0u8; blk.len()];
                assert_eq!(
                    codecs::decompress(&mut st, code, &c[..n], &mut out, Some(&dd)),
                    Ok(blk.len())
                );
                assert!(out == blk);
                let mut c2 = vec![0u8; blk.len()];
                let m = codecs::compress(&mut st, code, clevel, blk, &mut c2, None).unwrap();
                if clevel == 5 {
                    with += n;
                    without += if m == 0 { blk.len() } else { m };
                }
            }
        }
        assert!(
            with * 10 < without * 9,
            "codec {code}: dict did not help ({with} vs {without})"
        );
    }
}

#[test]
fn dict_streams_need_their_dictionary() {
    let data = records(2000, 2);
    let sizes = vec![1000; 60];
    for code in [LZ4, ZSTD] {
        let d = dict::train(code, &data[..60_000], &sizes, 8192).unwrap();
        let cd = dict::CompressDict::new(code, 5, &d).unwrap();
        let mut st = CodecState::new();
        let blk = &data[70_000..71_000];
        let mut c = vec![0u8; blk.len()];
        let n = codecs::compress(&mut st, code, 5, blk, &mut c, Some(&cd)).unwrap();
        assert!(n > 0);
        // Without the dictionary the stream cannot be rebuilt correctly.
        let mut out = vec![0u8; blk.len()];
        let r = codecs::decompress(&mut st, code, &c[..n], &mut out, None);
        assert!(
            r.is_err() || out != blk,
            "codec {code} decoded without its dict"
        );
    }
}

#[test]
fn zstd_training_fails_cleanly_on_useless_samples() {
    let text = data_kind("text", 4096, 1);
    // Fewer than 5 samples: zstd refuses to train; no dictionary, no panic.
    assert_eq!(dict::train(ZSTD, &text, &[1024; 4], 1024), None);
    // A maximum size below 256 bytes is never worth a dictionary.
    assert_eq!(dict::train(ZSTD, &text, &[512; 8], 255), None);
    // Enough samples give a dictionary within the size limit.
    let d = dict::train(ZSTD, &text, &[512; 8], 1024).unwrap();
    assert!(d.len() <= 1024);
}

#[test]
fn codec_state_is_send() {
    fn is_send<T: Send>() {}
    is_send::<CodecState>();
}
