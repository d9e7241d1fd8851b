//! Differential codec tests against the real c-blosc2 (3.3.5): streams the reference writes decode
//! with our codecs, and streams we write decode with the reference, with and without
//! dictionaries.
//!
//! The reference is driven through single-block, single-stream chunks (typesize 1, no filters,
//! NEVER_SPLIT, blocksize = nbytes), whose layout is fixed by the chunk format:
//! `header(32) | int32 bstarts[1] | [int32 dict_size | dict] | int32 csize | stream`.
use crate::common;

use b2frame::capi::types::BLOSC2_CPARAMS_DEFAULTS;
use b2frame::codecs::{self, dict, CodecState, LZ4, LZ4HC, ZLIB, ZSTD};
use common::data_kind;
use common::reference::{ref_compress, ref_decompress};

const CODECS: [u8; 4] = [LZ4, LZ4HC, ZLIB, ZSTD];
const NEVER_SPLIT: i32 = 2;
const USEDICT: u8 = 0x01;

fn rd32(b: &[u8], at: usize) -> usize {
    i32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

/// The one stream of a reference chunk, and its dictionary if it has one. `None` when the
/// reference did not use the codec for it (memcpyed chunk, raw stream or run).
fn ref_stream(
    code: u8,
    clevel: u8,
    use_dict: bool,
    src: &[u8],
) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = code;
    cp.clevel = clevel;
    cp.typesize = 1;
    cp.filters = [0; 6];
    cp.splitmode = NEVER_SPLIT;
    cp.blocksize = src.len() as i32;
    cp.use_dict = use_dict as i32;
    let chunk = ref_compress(cp, src);
    assert_eq!(chunk[22], code, "compcode byte");
    assert_eq!(rd32(&chunk, 8), src.len(), "blocksize = nbytes");
    if chunk[2] & 0x02 != 0 {
        return None; // memcpyed
    }
    assert_eq!(
        chunk[2] >> 5,
        codecs::format_of(code).unwrap(),
        "format bits"
    );
    let mut at = 32 + 4;
    let mut d = None;
    if chunk[31] & USEDICT != 0 {
        let dsize = rd32(&chunk, at);
        d = Some(chunk[at + 4..at + 4 + dsize].to_vec());
        at += 4 + dsize;
    }
    assert_eq!(rd32(&chunk, 32), at, "bstarts[0]");
    let csize = i32::from_le_bytes(chunk[at..at + 4].try_into().unwrap());
    if csize <= 0 || csize as usize == src.len() {
        return None;
    }
    let stream = chunk[at + 4..at + 4 + csize as usize].to_vec();
    assert_eq!(at + 4 + csize as usize, chunk.len(), "cbytes");
    Some((stream, d))
}

/// A one-block chunk around our stream (and dictionary), as the chunk format lays it out.
fn our_chunk(code: u8, nbytes: usize, stream: &[u8], dict: Option<&[u8]>) -> Vec<u8> {
    let dict_len = dict.map_or(0, |d| 4 + d.len());
    let cbytes = 32 + 4 + dict_len + 4 + stream.len();
    let mut c = vec![0u8; 32];
    c[0] = 5; // version
    c[1] = 1; // versionlz
    c[2] = 0x05 | 0x10 | (codecs::format_of(code).unwrap() << 5);
    c[3] = 1; // typesize
    c[4..8].copy_from_slice(&(nbytes as i32).to_le_bytes());
    c[8..12].copy_from_slice(&(nbytes as i32).to_le_bytes());
    c[12..16].copy_from_slice(&(cbytes as i32).to_le_bytes());
    c[22] = code;
    c.extend_from_slice(&((32 + 4 + dict_len) as i32).to_le_bytes());
    if let Some(d) = dict {
        c[31] = USEDICT;
        c.extend_from_slice(&(d.len() as i32).to_le_bytes());
        c.extend_from_slice(d);
    }
    c.extend_from_slice(&(stream.len() as i32).to_le_bytes());
    c.extend_from_slice(stream);
    assert_eq!(c.len(), cbytes);
    c
}

const KINDS: [&str; 4] = ["text", "small_int", "seq_i32", "f64_series"];
const SIZES: [usize; 5] = [64, 1000, 4097, 65_536, 300_000];

/// Runs `case(code, clevel, what, src)` over every codec, clevel 1..=9, size and data kind, the
/// data seeded with `clevel * seed_step + size index`; `what` names the case. Returns how many
/// cases `case` checked (it returns false for one it skipped).
fn each_case(seed_step: u64, mut case: impl FnMut(u8, u8, &str, &[u8]) -> bool) -> usize {
    let mut checked = 0;
    for code in CODECS {
        for clevel in 1..=9u8 {
            for (i, &len) in SIZES.iter().enumerate() {
                if code == ZSTD && clevel == 9 && len > 70_000 {
                    continue; // level 22 on big blocks is slow; smaller sizes cover it
                }
                for kind in KINDS {
                    let src = data_kind(kind, len, (clevel as u64) * seed_step + i as u64);
                    let what = format!("codec {code} clevel {clevel} {kind} {len}");
                    if case(code, clevel, &what, &src) {
                        checked += 1;
                    }
                }
            }
        }
    }
    checked
}

/// Our stream of `src` (empty when the codec did not make one: memcpy or raw fallback).
fn our_stream(
    st: &mut CodecState,
    code: u8,
    clevel: u8,
    src: &[u8],
    dict: Option<&dict::CompressDict>,
) -> Vec<u8> {
    let mut dst = vec![0u8; src.len()];
    let n = codecs::compress(st, code, clevel, src, &mut dst, dict).unwrap();
    dst.truncate(n);
    dst
}

#[test]
fn reference_streams_decode_with_ours() {
    let mut st = CodecState::new();
    let checked = each_case(31, |code, clevel, what, src| {
        let Some((stream, _)) = ref_stream(code, clevel, false, src) else {
            return false;
        };
        let mut out = vec![0u8; src.len()];
        assert_eq!(
            codecs::decompress(&mut st, code, &stream, &mut out, None),
            Ok(src.len()),
            "{what}"
        );
        assert!(out == src, "{what}");
        true
    });
    // Most cases must really exercise a codec stream (not memcpy/raw fallbacks).
    assert!(checked > 400, "only {checked} reference streams checked");
}

#[test]
fn our_streams_decode_with_reference() {
    let mut st = CodecState::new();
    let checked = each_case(17, |code, clevel, what, src| {
        let stream = our_stream(&mut st, code, clevel, src, None);
        if stream.is_empty() {
            return false;
        }
        let chunk = our_chunk(code, src.len(), &stream, None);
        let out = ref_decompress(&chunk, src.len(), 1).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(out == src, "{what}");
        true
    });
    assert!(checked > 400, "only {checked} of our streams checked");
}

#[test]
fn lz4_compresses_like_the_reference() {
    // Same library, same parameters: LZ4 (acceleration 10 - clevel) and LZ4HC (level clevel)
    // give byte-identical streams, which pins the clevel mapping.
    let mut st = CodecState::new();
    for code in [LZ4, LZ4HC] {
        for clevel in 1..=9u8 {
            let src = data_kind("text", 20_000, clevel as u64);
            let (theirs, _) = ref_stream(code, clevel, false, &src).unwrap();
            let ours = our_stream(&mut st, code, clevel, &src, None);
            assert_eq!(ours, theirs, "codec {code} clevel {clevel}");
        }
    }
}

#[test]
fn zstd_level_mapping_matches_reference() {
    // zstd is deterministic for a given level and version; equal output sizes for every clevel
    // pin `2*clevel-1` / maxCLevel (both sides are zstd 1.5.x).
    let mut st = CodecState::new();
    for clevel in 1..=9u8 {
        let src = data_kind("small_int", 30_000, 3);
        let (theirs, _) = ref_stream(ZSTD, clevel, false, &src).unwrap();
        let n = our_stream(&mut st, ZSTD, clevel, &src, None).len();
        assert_eq!(n, theirs.len(), "zstd clevel {clevel}");
    }
}

#[test]
fn zlib_level_mapping_decodes_both_ways_with_similar_ratio() {
    // Different deflate engines (zlib-rs vs the reference's zlib-ng) need not emit the same
    // bytes; their ratios at equal level must be close.
    let mut st = CodecState::new();
    for clevel in 1..=9u8 {
        let src = data_kind("text", 50_000, 9);
        let (theirs, _) = ref_stream(ZLIB, clevel, false, &src).unwrap();
        let n = our_stream(&mut st, ZLIB, clevel, &src, None).len();
        let (a, b) = (n as f64, theirs.len() as f64);
        assert!(
            (a / b - 1.0).abs() < 0.15,
            "zlib clevel {clevel}: ours {n}, theirs {b}"
        );
    }
}

fn records(n: usize) -> Vec<u8> {
    let mut rng = common::Rng::new(5);
    let mut v = Vec::new();
    for i in 0..n {
        let r = format!(
            "{{\"id\":{i},\"station\":\"st-{}\",\"temp\":{}.{}}}\n",
            rng.below(30),
            rng.below(40),
            rng.below(10)
        );
        v.extend_from_slice(r.as_bytes());
    }
    v
}

#[test]
fn reference_dict_streams_decode_with_ours() {
    let mut st = CodecState::new();
    let src = records(20_000);
    let src = &src[..256 * 1024];
    for code in [LZ4, LZ4HC, ZSTD] {
        for clevel in [1u8, 5, 9] {
            let (stream, d) = ref_stream(code, clevel, true, src).expect("codec stream");
            let d = d.unwrap_or_else(|| panic!("codec {code}: reference wrote no dict"));
            let dd = dict::DecompressDict::new(code, &d).unwrap();
            let mut out = vec![0u8; src.len()];
            assert_eq!(
                codecs::decompress(&mut st, code, &stream, &mut out, Some(&dd)),
                Ok(src.len()),
                "codec {code} clevel {clevel}"
            );
            assert!(out == src);
        }
    }
}

#[test]
fn our_dict_streams_decode_with_reference() {
    let mut st = CodecState::new();
    let data = records(20_000);
    let samples = &data[..64 * 1024];
    let sizes = vec![2048; 32];
    let src = &data[100_000..200_000];
    for code in [LZ4, LZ4HC, ZSTD] {
        let d = dict::train(code, samples, &sizes, 8 * 1024).unwrap();
        for clevel in [1u8, 5, 9] {
            let cd = dict::CompressDict::new(code, clevel, &d).unwrap();
            let stream = our_stream(&mut st, code, clevel, src, Some(&cd));
            assert!(!stream.is_empty());
            let chunk = our_chunk(code, src.len(), &stream, Some(&d));
            let out = ref_decompress(&chunk, src.len(), 1)
                .unwrap_or_else(|e| panic!("codec {code} clevel {clevel}: {e}"));
            assert!(out == src, "codec {code} clevel {clevel}");
        }
    }
}
