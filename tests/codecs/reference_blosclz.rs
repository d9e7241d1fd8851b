//! BloscLZ against c-blosc2 3.3.5: compressed sizes on a fixed seeded data set, and each side
//! decoding the other's streams.
//!
//! The reference's raw BloscLZ stream comes from a single-block, unsplit, unfiltered chunk
//! (typesize 1, blocksize = nbytes): `header(32) | bstarts[0] | csize | stream`. Run `cargo test
//! --test codecs reference_blosclz:: -- --nocapture` to see the comparison table.
use crate::common;

use b2frame::capi::types::{blosc2_cparams, BLOSC2_CPARAMS_DEFAULTS, BLOSC_NEVER_SPLIT};
use b2frame::codecs::blosclz;
use common::reference::{ref_compress, ref_decompress};
use common::Rng;

/// What the reference did with one block.
enum RefBlock {
    /// A BloscLZ stream.
    Stream(Vec<u8>),
    /// Stored raw (the codec gave up, or the whole chunk was memcpyed).
    Raw,
    /// Encoded without the codec (a byte run or a special chunk): nothing to compare.
    NotCoded,
}

fn cparams(clevel: u8) -> blosc2_cparams {
    let mut c = BLOSC2_CPARAMS_DEFAULTS;
    c.compcode = 0;
    c.clevel = clevel;
    c.typesize = 1;
    c.filters = [0; 6];
    c.splitmode = BLOSC_NEVER_SPLIT;
    c.nthreads = 1;
    c
}

fn i32_at(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn ref_block(data: &[u8], clevel: u8) -> RefBlock {
    let mut cp = cparams(clevel);
    cp.blocksize = data.len() as i32;
    let chunk = ref_compress(cp, data);
    assert_eq!(i32_at(&chunk, 4) as usize, data.len());
    if chunk[2] & 0x2 != 0 {
        return RefBlock::Raw;
    }
    if chunk[31] & 0x70 != 0 {
        return RefBlock::NotCoded;
    }
    assert_eq!(chunk[2] & 0x10, 0x10, "dont_split set");
    let bstart = i32_at(&chunk, 32) as usize;
    let csize = i32_at(&chunk, bstart);
    if csize <= 0 {
        RefBlock::NotCoded
    } else if csize as usize == data.len() {
        RefBlock::Raw
    } else {
        let s = bstart + 4;
        RefBlock::Stream(chunk[s..s + csize as usize].to_vec())
    }
}

/// A single-block chunk around one of our streams (docs/format/chunk.md#header and
/// docs/format/chunk.md#body), for the reference's decoder.
fn wrap_stream(stream: &[u8], nbytes: usize) -> Vec<u8> {
    let cbytes = 32 + 4 + 4 + stream.len();
    let mut c = vec![0u8; 32];
    c[0] = 5; // format version
    c[1] = 1; // BloscLZ format version
    c[2] = 0x05 | 0x10; // extended header, dont_split, codec format 0 (BloscLZ)
    c[3] = 1; // typesize
    c[4..8].copy_from_slice(&(nbytes as i32).to_le_bytes());
    c[8..12].copy_from_slice(&(nbytes as i32).to_le_bytes());
    c[12..16].copy_from_slice(&(cbytes as i32).to_le_bytes());
    c.extend_from_slice(&36i32.to_le_bytes()); // bstarts[0]: the block right after it
    c.extend_from_slice(&(stream.len() as i32).to_le_bytes());
    c.extend_from_slice(stream);
    c
}

/// Our stream with the reference's output budget: `ref_compress` gives the chunk nbytes + 32
/// bytes, so the codec may use nbytes - 8 (header 32, bstarts 4, csize 4).
fn our_stream(data: &[u8], clevel: u8) -> Option<Vec<u8>> {
    let mut dst = vec![0u8; data.len().saturating_sub(8)];
    let n = blosclz::compress(clevel, data, &mut dst);
    (n > 0).then(|| dst[..n].to_vec())
}

/// The data set: shared kinds plus some that exercise BloscLZ specifically.
fn dataset(kind: &str, len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    match kind {
        // Mostly one byte value with random noise: long runs broken often.
        "sparse" => (0..len)
            .map(|_| {
                if rng.below(10) == 0 {
                    rng.next_u64() as u8
                } else {
                    7
                }
            })
            .collect(),
        // A random block repeated every 10000 bytes (far matches), with rare mutations.
        "far" => {
            let mut v = vec![0u8; len];
            for i in 0..len {
                v[i] = if i < 10_000 || rng.below(500) == 0 {
                    rng.next_u64() as u8
                } else {
                    v[i - 10_000]
                };
            }
            v
        }
        // Random bytes interleaved with copies of earlier sequences at near distances.
        "mixed" => {
            let mut v = vec![0u8; len];
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
                    v[i] = rng.next_u64() as u8;
                    i += 1;
                }
            }
            v
        }
        // Byte-shuffled numeric series, as BloscLZ sees them behind the shuffle filter.
        "shuf_i32" => shuffle(&common::data_kind("seq_i32", len, seed), 4),
        "shuf_f64" => shuffle(&common::data_kind("f64_series", len, seed), 8),
        other => common::data_kind(other, len, seed),
    }
}

/// Byte shuffle (all first bytes of the elements, then all second bytes, ...); a tail shorter
/// than one element stays in place.
fn shuffle(v: &[u8], typesize: usize) -> Vec<u8> {
    let n = v.len() / typesize;
    let mut out = v.to_vec();
    for i in 0..n {
        for b in 0..typesize {
            out[b * n + i] = v[i * typesize + b];
        }
    }
    out
}

const KINDS: [&str; 11] = [
    "random",
    "constant",
    "seq_i32",
    "small_int",
    "f64_series",
    "text",
    "sparse",
    "far",
    "mixed",
    "shuf_i32",
    "shuf_f64",
];
const SIZES: [usize; 6] = [40, 300, 4096, 65536, 262_144, 1 << 20];

#[test]
fn sizes_and_cross_decoding_match_the_reference() {
    println!(
        "{:<11} {:>8} | {:>12} {:>12} {:>7} | {:>5} {:>5} {:>5}",
        "kind", "size", "ref bytes", "our bytes", "diff%", "coded", "same", "raw"
    );
    let (mut tot_ref, mut tot_ours, mut cases, mut coded_cases, mut identical) =
        (0u64, 0u64, 0, 0, 0);
    // Totals over the cases both sides coded (raw cases are equal by construction).
    let (mut coded_ref, mut coded_ours) = (0u64, 0u64);
    for (k, kind) in KINDS.iter().enumerate() {
        for (s, &len) in SIZES.iter().enumerate() {
            let data = dataset(kind, len, 1000 + (k * 10 + s) as u64);
            let (mut row_ref, mut row_ours, mut row_coded, mut row_same, mut row_raw) =
                (0u64, 0u64, 0, 0, 0);
            for clevel in 1..=9u8 {
                let ours = our_stream(&data, clevel);
                let reference = match ref_block(&data, clevel) {
                    RefBlock::NotCoded => continue,
                    RefBlock::Raw => None,
                    RefBlock::Stream(s) => Some(s),
                };
                cases += 1;
                // The give-up decision (entropy probing, size limits) is deterministic and
                // reproduced: both sides must agree on it.
                assert_eq!(
                    ours.is_some(),
                    reference.is_some(),
                    "{kind} {len} clevel {clevel}: ours {:?} vs reference {:?} bytes",
                    ours.as_ref().map(Vec::len),
                    reference.as_ref().map(Vec::len)
                );
                let (Some(o), Some(r)) = (ours, reference) else {
                    row_raw += 1;
                    row_ref += len as u64;
                    row_ours += len as u64;
                    continue;
                };
                row_coded += 1;
                coded_ref += r.len() as u64;
                coded_ours += o.len() as u64;
                row_ref += r.len() as u64;
                row_ours += o.len() as u64;
                if o == r {
                    row_same += 1;
                }
                // Per case: same parse rules, so only tie-breaking could differ; allow 5% + 16.
                let slack = r.len() / 20 + 16;
                assert!(
                    o.len().abs_diff(r.len()) <= slack,
                    "{kind} {len} clevel {clevel}: ours {} vs reference {}",
                    o.len(),
                    r.len()
                );
                // Our decoder on the reference's stream.
                let mut out = vec![0u8; len];
                assert_eq!(blosclz::decompress(&r, &mut out), Ok(len));
                assert!(
                    out == data,
                    "{kind} {len} clevel {clevel}: decoding reference"
                );
                // The reference's decoder on ours.
                let back = ref_decompress(&wrap_stream(&o, len), len, 1)
                    .unwrap_or_else(|e| panic!("{kind} {len} clevel {clevel}: reference {e}"));
                assert!(
                    back == data,
                    "{kind} {len} clevel {clevel}: reference decoding ours"
                );
            }
            println!(
                "{:<11} {:>8} | {:>12} {:>12} {:>+7.3} | {:>5} {:>5} {:>5}",
                kind,
                len,
                row_ref,
                row_ours,
                pct(row_ours, row_ref),
                row_coded,
                row_same,
                row_raw
            );
            tot_ref += row_ref;
            tot_ours += row_ours;
            coded_cases += row_coded;
            identical += row_same;
        }
    }
    println!(
        "TOTAL over {cases} cases ({coded_cases} coded, {identical} byte-identical streams): \
         reference {tot_ref} bytes, ours {tot_ours} bytes, {:+.3}%",
        pct(tot_ours, tot_ref)
    );
    println!(
        "coded cases only: reference {coded_ref} bytes, ours {coded_ours} bytes, {:+.3}%",
        pct(coded_ours, coded_ref)
    );
    assert!(coded_cases > 150, "the data set must exercise the codec");
    assert!(
        tot_ours.abs_diff(tot_ref) * 50 <= tot_ref,
        "total size off by more than 2%"
    );
    assert!(
        coded_ours.abs_diff(coded_ref) * 50 <= coded_ref,
        "total coded size off by more than 2%"
    );
}

fn pct(ours: u64, reference: u64) -> f64 {
    (ours as f64 - reference as f64) * 100.0 / reference.max(1) as f64
}

#[test]
fn reference_decodes_streams_at_the_exact_output_budget() {
    // Streams made with exactly as much output room as they need (plus the one spare byte the
    // encoder keeps) decode identically in the reference.
    for (k, kind) in ["text", "mixed", "far", "sparse"].iter().enumerate() {
        let data = dataset(kind, 100_000, 77 + k as u64);
        for clevel in [1u8, 5, 9] {
            let Some(full) = our_stream(&data, clevel) else {
                continue;
            };
            let mut tight = vec![0u8; full.len() + 1];
            assert_eq!(blosclz::compress(clevel, &data, &mut tight), full.len());
            let back = ref_decompress(
                &wrap_stream(&tight[..full.len()], data.len()),
                data.len(),
                1,
            )
            .unwrap();
            assert!(back == data);
        }
    }
}

#[test]
fn decoder_accepts_exactly_what_the_reference_accepts() {
    // Mutated and truncated valid streams: the reference decodes the block (exactly nbytes)
    // iff we produce exactly nbytes, and then to the same bytes.
    let mut rng = Rng::new(99);
    let (mut agree_ok, mut agree_err) = (0, 0);
    for (k, kind) in ["text", "mixed", "far", "sparse", "shuf_i32"]
        .iter()
        .enumerate()
    {
        let len = [3000, 20_000, 70_000][k % 3];
        let data = dataset(kind, len, 500 + k as u64);
        let Some(valid) = our_stream(&data, 9) else {
            panic!("{kind} must compress");
        };
        for i in 0..400 {
            let mut s = valid.clone();
            for _ in 0..1 + rng.below(3) {
                let p = rng.below(s.len() as u64) as usize;
                s[p] = if i % 2 == 0 {
                    rng.next_u64() as u8
                } else {
                    s[p] ^ (1 << rng.below(8))
                };
            }
            if i % 5 == 0 {
                s.truncate(1 + rng.below(s.len() as u64) as usize);
            }
            let mut out = vec![0u8; len];
            let ours = blosclz::decompress(&s, &mut out);
            let reference = ref_decompress(&wrap_stream(&s, len), len, 1);
            match reference {
                Ok(r) => {
                    assert_eq!(ours, Ok(len), "{kind} case {i}: the reference accepts");
                    assert!(r == out, "{kind} case {i}: same bytes");
                    agree_ok += 1;
                }
                Err(_) => {
                    assert_ne!(ours, Ok(len), "{kind} case {i}: the reference rejects");
                    agree_err += 1;
                }
            }
        }
    }
    println!("mutated streams: {agree_ok} accepted by both, {agree_err} rejected by both");
    assert!(agree_ok > 0 && agree_err > 0);
}
