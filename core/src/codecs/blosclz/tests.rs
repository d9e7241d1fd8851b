//! Unit tests: round trips over data kinds, sizes and clevels; hostile decoder input.
use super::{compress, decompress};
use crate::error::Error;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn data(kind: usize, len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut v = vec![0u8; len];
    match kind {
        // random
        0 => v.iter_mut().for_each(|b| *b = rng.next() as u8),
        // constant
        1 => v.iter_mut().for_each(|b| *b = 0xA5),
        // compressible: random bytes interleaved with copies of earlier sequences
        2 => {
            let mut i = 0;
            while i < len {
                if i >= 64 && rng.below(3) != 0 {
                    let dist = 1 + rng.below(i.min(9000) as u64) as usize;
                    let n = (4 + rng.below(40) as usize).min(len - i);
                    for k in 0..n {
                        v[i + k] = v[i + k - dist];
                    }
                    i += n;
                } else {
                    v[i] = rng.next() as u8;
                    i += 1;
                }
            }
        }
        // text-like
        3 => {
            let words: [&[u8]; 7] = [
                b"blosc ",
                b"frame ",
                b"chunk ",
                b"the ",
                b"of ",
                b"lz ",
                b"compressed ",
            ];
            let mut i = 0;
            while i < len {
                let w = words[rng.below(7) as usize];
                let n = w.len().min(len - i);
                v[i..i + n].copy_from_slice(&w[..n]);
                i += n;
            }
        }
        // int32 sequence (long matches at distance 4 with a changing byte)
        4 => v.chunks_mut(4).enumerate().for_each(|(i, c)| {
            let b = (i as u32).to_le_bytes();
            c.copy_from_slice(&b[..c.len()]);
        }),
        // far matches: a random 10000-byte block repeated
        _ => {
            let period = 10000;
            for i in 0..len {
                v[i] = if i < period {
                    rng.next() as u8
                } else {
                    v[i - period]
                };
            }
        }
    }
    v
}

const KINDS: usize = 6;

fn round_trip(clevel: u8, src: &[u8]) -> usize {
    let mut comp = vec![0u8; src.len() + 100];
    let n = compress(clevel, src, &mut comp);
    if n == 0 {
        return 0;
    }
    assert!(n < src.len(), "clevel {clevel}: {n} >= {}", src.len());
    let mut out = vec![0u8; src.len()];
    let m = decompress(&comp[..n], &mut out).unwrap();
    assert_eq!(m, src.len(), "clevel {clevel} len {}", src.len());
    assert!(out == src, "clevel {clevel} len {} mismatch", src.len());
    assert_eq!(
        comp[0] & 0xE0,
        0x20,
        "first instruction is a marked literal run"
    );
    n
}

#[test]
fn round_trips_all_clevels_kinds_sizes() {
    let sizes = [
        0usize, 1, 2, 7, 12, 13, 15, 16, 17, 20, 31, 32, 33, 40, 50, 64, 65, 66, 67, 100, 128, 255,
        256, 1000, 4096, 8191, 8192, 8193, 16384, 30000, 65536, 100_000, 262_144,
    ];
    for clevel in 1..=9u8 {
        for kind in 0..KINDS {
            for &len in &sizes {
                let src = data(kind, len, len as u64 * 31 + kind as u64);
                round_trip(clevel, &src);
            }
        }
    }
}

#[test]
fn compressible_data_compresses_and_random_does_not() {
    for clevel in 1..=9u8 {
        for kind in [1, 3] {
            let src = data(kind, 65536, 7);
            let n = round_trip(clevel, &src);
            assert!(
                n > 0 && n < src.len() / 2,
                "clevel {clevel} kind {kind}: {n}"
            );
        }
        // About a third random bytes: below clevel 1's probing threshold (ratio 2),
        // compressed from clevel 2 on.
        let n = round_trip(clevel, &data(2, 65536, 7));
        assert_eq!(n > 0, clevel >= 2, "clevel {clevel} kind 2: {n}");
        // Repeats 10000 bytes back (far matches) are invisible to the probe windows of clevel
        // 1-2 (4096 and 8192 bytes).
        let n = round_trip(clevel, &data(5, 65536, 7));
        assert_eq!(n > 0, clevel >= 3, "clevel {clevel} kind 5: {n}");
        if n > 0 {
            assert!(n < 65536 / 4, "far matches found: {n}");
        }
        assert_eq!(
            round_trip(clevel, &data(0, 65536, 7)),
            0,
            "random data gives up"
        );
    }
}

#[test]
fn small_inputs_are_never_compressed() {
    for clevel in 1..=9u8 {
        for len in 0..16 {
            let src = vec![0u8; len];
            let mut dst = vec![0u8; 200];
            assert_eq!(compress(clevel, &src, &mut dst), 0);
        }
    }
    // An output buffer below 66 bytes is refused even for very compressible input.
    let src = vec![1u8; 4096];
    assert_eq!(compress(9, &src, &mut [0u8; 65]), 0);
    assert!(compress(9, &src, &mut [0u8; 66]) > 0);
    // clevel 0 means no compression.
    assert_eq!(compress(0, &src, &mut [0u8; 8192]), 0);
}

#[test]
fn output_that_does_not_fit_gives_zero() {
    let src = data(3, 50_000, 3);
    let mut big = vec![0u8; 60_000];
    let n = compress(5, &src, &mut big);
    assert!(n > 100);
    // One byte more than the stream is not always enough (the encoder keeps one spare byte),
    // but the exact size minus one never fits and the exact size plus one always does.
    assert_eq!(compress(5, &src, &mut vec![0u8; n - 1]), 0);
    let mut exact = vec![0u8; n + 1];
    assert_eq!(compress(5, &src, &mut exact), n);
    assert_eq!(&exact[..n], &big[..n]);
}

#[test]
fn known_streams_decode() {
    // literal run of 3 (marker bit set), then a run match (distance 0 = repeat last byte).
    let s = [0x22, b'a', b'b', b'c', (4 << 5), 0, 0x00, b'z'];
    let mut out = [0u8; 10];
    assert_eq!(decompress(&s, &mut out), Ok(10));
    assert_eq!(&out, b"abcccccccz");
    // The same stream into a 9-byte buffer: the trailing literal does not fit.
    assert_eq!(decompress(&s, &mut [0u8; 9]), Err(Error::Data));
    // A near match needs its distance byte and one more byte after it.
    assert_eq!(decompress(&s[..6], &mut out), Err(Error::Data));
    // Far matches: 8224 literal bytes, then a 3-byte match 8192 + 5 bytes back.
    let mut far = Vec::new();
    for r in 0..257u32 {
        far.push(if r == 0 { 0x3F } else { 31 });
        far.extend((0..32).map(|k| (r * 7 + k) as u8));
    }
    far.extend([(1 << 5) | 31, 0xFF, 0, 5]);
    let mut big = vec![0u8; 8230];
    // A far match that ends the input is dropped, not copied (reference quirk).
    assert_eq!(decompress(&far, &mut big), Ok(8224));
    far.extend([0, b'!']);
    assert_eq!(decompress(&far, &mut big), Ok(8228));
    assert_eq!(&big[8224..8227], &big[8224 - 8197..8227 - 8197]);
    assert_eq!(big[8227], b'!');
    // A match reaching before the start of the output is an error.
    assert_eq!(
        decompress(&[0x20, b'a', 0x80, 1, 0], &mut out),
        Err(Error::Data)
    );
    // A far match: escape 0xFF after distance-high 31, then a 16-bit big-endian offset.
    assert_eq!(
        decompress(&[0x20, b'a', 0x3F, 0xFF, 0, 0, 0], &mut out),
        Err(Error::Data)
    );
    // Empty input produces nothing.
    assert_eq!(decompress(&[], &mut out), Ok(0));
}

#[test]
fn hostile_input_never_panics() {
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    let valid = {
        let src = data(2, 5000, 11);
        let mut c = vec![0u8; 6000];
        let n = compress(5, &src, &mut c);
        assert!(n > 0);
        c.truncate(n);
        c
    };
    let mut out = vec![0u8; 5000];
    // Every truncation of a valid stream: an error or a short result, never the full output.
    for cut in 0..valid.len() {
        match decompress(&valid[..cut], &mut out) {
            Ok(m) => assert!(m < 5000),
            Err(e) => assert_eq!(e, Error::Data),
        }
    }
    // Output buffers too small.
    for cap in [0usize, 1, 10, 4999] {
        let mut small = vec![0u8; cap];
        match decompress(&valid, &mut small) {
            Ok(m) => assert!(m <= cap),
            Err(e) => assert_eq!(e, Error::Data),
        }
    }
    // Random bytes and random mutations.
    for i in 0..20_000 {
        let mut s = if i % 2 == 0 {
            let len = rng.below(300) as usize;
            (0..len).map(|_| rng.next() as u8).collect::<Vec<_>>()
        } else {
            let mut s = valid.clone();
            for _ in 0..1 + rng.below(4) {
                let p = rng.below(s.len() as u64) as usize;
                s[p] = rng.next() as u8;
            }
            s
        };
        if i % 3 == 0 {
            s.truncate(rng.below(s.len() as u64 + 1) as usize);
        }
        let cap = rng.below(6000) as usize;
        let mut out = vec![0u8; cap];
        if let Ok(m) = decompress(&s, &mut out) {
            assert!(m <= cap);
        }
    }
}

/// A hand-built stream: 320 literal bytes, one match of `len` bytes `back` bytes back, one
/// more literal (a final match would be dropped). Returns the stream and the expected output,
/// built byte by byte (LZ77 overlap semantics).
fn one_match_stream(back: usize, len: usize) -> (Vec<u8>, Vec<u8>) {
    let mut rng = Rng(0x5EED_0000 + (back * 1000 + len) as u64);
    let mut stream = Vec::new();
    let mut out = Vec::new();
    for run in 0..10 {
        stream.push(if run == 0 { 0x20 | 31 } else { 31 });
        for _ in 0..32 {
            let b = rng.next() as u8;
            stream.push(b);
            out.push(b);
        }
    }
    let d = back - 1;
    let code = if len <= 8 { len - 2 } else { 7 };
    stream.push(((code << 5) | (d >> 8)) as u8);
    if len > 8 {
        let mut rest = len - 9;
        while rest >= 255 {
            stream.push(255);
            rest -= 255;
        }
        stream.push(rest as u8);
    }
    stream.push((d & 255) as u8);
    for _ in 0..len {
        out.push(out[out.len() - back]);
    }
    stream.push(0);
    stream.push(0x77);
    out.push(0x77);
    (stream, out)
}

#[test]
fn matches_of_every_short_period_and_length_decode_exactly() {
    // Periods below, at and above each copy word size (8, 16, 32) and the multi-round case
    // (period >= 128 with a longer match); room exact (no over-writing allowed) and ample.
    for back in (1..=70).chain([127, 128, 129, 200, 255, 256, 300, 320]) {
        for len in (3..=80).chain([200, 263, 264, 520, 700]) {
            let (stream, want) = one_match_stream(back, len);
            for extra in [0, 1, 40, 1000] {
                let mut dst = vec![0xEEu8; want.len() + extra];
                let n = decompress(&stream, &mut dst).unwrap();
                assert_eq!(n, want.len(), "back {back} len {len} extra {extra}");
                assert_eq!(&dst[..n], &want[..], "back {back} len {len} extra {extra}");
            }
        }
    }
}
