//! The 6-slot filter pipeline: forward/backward round trips over several blocks for every
//! combination used in practice, exact bytes where the format fixes them, and error cases.

use crate::common;

use b2frame::filters::{
    self, backward, delta, forward, BlockInfo, UserFilters, BITSHUFFLE, DELTA, SHUFFLE, TRUNC_PREC,
};
use b2frame::{Error, Result};
use common::data_kind;

fn info<'a>(
    typesize: usize,
    filters: [u8; 6],
    meta: [u8; 6],
    offset: usize,
    dref: &'a [u8],
) -> BlockInfo<'a> {
    BlockInfo {
        typesize,
        filters,
        filters_meta: meta,
        offset,
        dref,
        legacy_bitshuffle: false,
    }
}

/// Splits `chunk` into blocks, runs forward on each (as the chunk writer does), then backward
/// (block 0 first, its decoded bytes as the delta reference for the others) and returns the
/// filtered blocks and the decoded chunk.
fn round_trip(
    chunk: &[u8],
    blocksize: usize,
    typesize: usize,
    filters: [u8; 6],
    meta: [u8; 6],
    user: Option<&dyn UserFilters>,
) -> (Vec<Vec<u8>>, Vec<u8>) {
    let mut filtered = Vec::new();
    let (mut b1, mut b2) = (vec![0u8; blocksize], vec![0u8; blocksize]);
    for (j, block) in chunk.chunks(blocksize).enumerate() {
        let i = info(typesize, filters, meta, j * blocksize, chunk);
        let out = forward(&i, block, &mut b1, &mut b2, user).unwrap();
        filtered.push(out.to_vec());
    }
    let mut decoded = vec![0u8; chunk.len()];
    let mut tmp = vec![0u8; blocksize];
    let mut block0 = Vec::new();
    for (j, f) in filtered.iter().enumerate() {
        let mut buf = f.clone();
        let i = info(typesize, filters, meta, j * blocksize, &block0);
        backward(&i, &mut buf, &mut tmp, user).unwrap();
        if j == 0 {
            block0 = buf.clone();
        }
        decoded[j * blocksize..j * blocksize + buf.len()].copy_from_slice(&buf);
    }
    (filtered, decoded)
}

const COMBOS: [([u8; 6], [u8; 6]); 9] = [
    ([0, 0, 0, 0, 0, SHUFFLE], [0; 6]),
    ([0, 0, 0, 0, 0, BITSHUFFLE], [0; 6]),
    ([0, 0, 0, 0, DELTA, SHUFFLE], [0; 6]),
    ([0, 0, 0, 0, DELTA, BITSHUFFLE], [0; 6]),
    ([0, 0, 0, 0, SHUFFLE, DELTA], [0; 6]),
    ([0, 0, 0, 0, BITSHUFFLE, SHUFFLE], [0; 6]),
    ([0, 0, 0, 0, 0, SHUFFLE], [0, 0, 0, 0, 0, 2]), // shuffle by 2-byte groups
    ([DELTA, 0, SHUFFLE, 0, 0, 0], [0, 0, 4, 0, 0, 0]),
    ([0; 6], [0; 6]),
];

#[test]
fn lossless_combinations_round_trip() {
    for typesize in [1usize, 2, 3, 4, 8, 12, 16] {
        for (nbytes, blocksize) in [
            (40_000usize, 8192usize),
            (4099, 1024),
            (7, 16),
            (100_003, 32768),
        ] {
            for kind in ["random", "seq_i32", "f64_series"] {
                let chunk = data_kind(kind, nbytes, typesize as u64);
                for (f, m) in COMBOS {
                    let (filtered, decoded) = round_trip(&chunk, blocksize, typesize, f, m, None);
                    assert!(
                        decoded == chunk,
                        "{kind} ts {typesize} n {nbytes} {f:?} {m:?}"
                    );
                    if f == [0; 6] {
                        assert_eq!(filtered.concat(), chunk);
                    }
                }
            }
        }
    }
}

#[test]
fn forward_output_is_the_plain_filter_output() {
    let chunk = data_kind("seq_i32", 4096 + 3, 1);
    let (mut b1, mut b2) = (vec![0u8; 4099], vec![0u8; 4099]);
    let mut want = vec![0u8; 4099];
    let i = info(4, [0, 0, 0, 0, 0, SHUFFLE], [0; 6], 0, &[]);
    let got = forward(&i, &chunk, &mut b1, &mut b2, None)
        .unwrap()
        .to_vec();
    filters::shuffle(4, &chunk, &mut want);
    assert_eq!(got, want);
    let i = info(4, [0, 0, 0, 0, 0, SHUFFLE], [0, 0, 0, 0, 0, 2], 0, &[]);
    let got = forward(&i, &chunk, &mut b1, &mut b2, None)
        .unwrap()
        .to_vec();
    filters::shuffle(2, &chunk, &mut want);
    assert_eq!(got, want, "filters_meta is the element size");
    let i = info(4, [0, BITSHUFFLE, 0, 0, 0, 0], [0; 6], 0, &[]);
    let got = forward(&i, &chunk, &mut b1, &mut b2, None)
        .unwrap()
        .to_vec();
    filters::bitshuffle(4, &chunk, &mut want);
    assert_eq!(got, want);
    // No filter: the source itself comes back.
    let i = info(4, [0; 6], [0; 6], 0, &[]);
    let got = forward(&i, &chunk, &mut b1, &mut b2, None).unwrap();
    assert_eq!(got.as_ptr(), chunk.as_ptr());
}

#[test]
fn delta_uses_the_unfiltered_chunk_as_reference() {
    // DELTA after SHUFFLE: block 1 is XORed with the *original* chunk start, not with block 0's
    // shuffled bytes (c-blosc2 behaviour).
    let chunk = data_kind("random", 64, 5);
    let (mut b1, mut b2) = (vec![0u8; 32], vec![0u8; 32]);
    let i = info(4, [0, 0, 0, 0, SHUFFLE, DELTA], [0; 6], 32, &chunk);
    let got = forward(&i, &chunk[32..], &mut b1, &mut b2, None)
        .unwrap()
        .to_vec();
    let mut sh = vec![0u8; 32];
    filters::shuffle(4, &chunk[32..], &mut sh);
    let want: Vec<u8> = sh.iter().zip(&chunk[..32]).map(|(a, b)| a ^ b).collect();
    assert_eq!(got, want);
    // And block 0 XORs its own previous element (of the shuffled data).
    let i = info(4, [0, 0, 0, 0, SHUFFLE, DELTA], [0; 6], 0, &chunk);
    let got = forward(&i, &chunk[..32], &mut b1, &mut b2, None)
        .unwrap()
        .to_vec();
    filters::shuffle(4, &chunk[..32], &mut sh);
    let mut want = sh.clone();
    for p in 4..32 {
        want[p] = sh[p] ^ sh[p - 4];
    }
    assert_eq!(got, want);
}

#[test]
fn delta_trailing_bytes_are_copied() {
    // 4099 bytes, typesize 4: the last 3 bytes are no whole element and stay as they are.
    let chunk = data_kind("random", 4099, 9);
    let mut out = vec![0u8; 4099];
    delta::encode(4, 0, &[], &chunk, &mut out).unwrap();
    assert_eq!(out[4096..], chunk[4096..]);
    assert_eq!(out[..4], chunk[..4]);
    let mut back = out.clone();
    delta::decode(4, 0, &[], &mut back).unwrap();
    assert_eq!(back, chunk);
}

#[test]
fn trunc_prec_is_applied_forward_and_skipped_backward() {
    let chunk = data_kind("f64_series", 8 * 512 + 5, 2);
    let (mut b1, mut b2) = (vec![0u8; chunk.len()], vec![0u8; chunk.len()]);
    let f = [0, 0, 0, 0, TRUNC_PREC, SHUFFLE];
    let m = [0, 0, 0, 0, 20, 0];
    let i = info(8, f, m, 0, &[]);
    let filtered = forward(&i, &chunk, &mut b1, &mut b2, None)
        .unwrap()
        .to_vec();
    let mut buf = filtered.clone();
    let mut tmp = vec![0u8; chunk.len()];
    backward(&i, &mut buf, &mut tmp, None).unwrap();
    let mut want = vec![0u8; chunk.len()];
    filters::trunc_prec::encode(8, 20, &chunk, &mut want).unwrap();
    assert_eq!(buf, want);
    assert_ne!(buf, chunk);
    for (a, b) in buf.chunks_exact(8).zip(chunk.chunks_exact(8)) {
        let a = f64::from_le_bytes(a.try_into().unwrap());
        let b = f64::from_le_bytes(b.try_into().unwrap());
        assert!((a - b).abs() <= b.abs() * 2f64.powi(-20));
        assert_eq!(a.to_bits() & ((1 << 32) - 1), 0);
    }
    // Negative precision on float32, and invalid settings.
    let i = info(
        4,
        [TRUNC_PREC, 0, 0, 0, 0, 0],
        [(-8i8) as u8, 0, 0, 0, 0, 0],
        0,
        &[],
    );
    let got = forward(&i, &chunk[..16], &mut b1, &mut b2, None)
        .unwrap()
        .to_vec();
    for (g, c) in got.chunks_exact(4).zip(chunk[..16].chunks_exact(4)) {
        let c = u32::from_le_bytes(c.try_into().unwrap());
        assert_eq!(u32::from_le_bytes(g.try_into().unwrap()), c & !0xFF);
    }
    for (ts, p) in [(2usize, 5i8), (4, 24), (8, 0), (8, -52)] {
        let i = info(
            ts,
            [TRUNC_PREC, 0, 0, 0, 0, 0],
            [p as u8, 0, 0, 0, 0, 0],
            0,
            &[],
        );
        let r = forward(&i, &chunk[..16], &mut b1, &mut b2, None);
        assert_eq!(r.err(), Some(Error::FilterPipeline), "ts {ts} p {p}");
    }
}

/// A user filter: adds `meta` to every byte (id 200) — invertible and easy to check.
struct AddMeta;

impl UserFilters for AddMeta {
    fn forward(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Result<()> {
        if id != 200 {
            return Err(Error::Failure);
        }
        for (d, s) in dst.iter_mut().zip(src) {
            *d = s.wrapping_add(meta);
        }
        Ok(())
    }
    fn backward(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Result<()> {
        if id != 200 {
            return Err(Error::Failure);
        }
        for (d, s) in dst.iter_mut().zip(src) {
            *d = s.wrapping_sub(meta);
        }
        Ok(())
    }
}

#[test]
fn user_filters_go_through_the_hook() {
    let chunk = data_kind("seq_i32", 10_000, 3);
    let f = [0, 0, 0, 200, DELTA, SHUFFLE];
    let m = [0, 0, 0, 7, 0, 0];
    let (filtered, decoded) = round_trip(&chunk, 4096, 4, f, m, Some(&AddMeta));
    assert_eq!(decoded, chunk);
    assert_ne!(filtered[0], chunk[..4096]);
    let (mut b1, mut b2) = (vec![0u8; 64], vec![0u8; 64]);
    let i = info(4, [200, 0, 0, 0, 0, 0], [7, 0, 0, 0, 0, 0], 0, &[]);
    let got = forward(&i, &chunk[..64], &mut b1, &mut b2, Some(&AddMeta)).unwrap();
    assert_eq!(got[0], chunk[0].wrapping_add(7));
}

#[test]
fn unknown_filters_are_pipeline_errors() {
    let chunk = data_kind("random", 256, 1);
    let (mut b1, mut b2) = (vec![0u8; 256], vec![0u8; 256]);
    let mut tmp = vec![0u8; 256];
    for (id, user) in [
        (5u8, Some(&AddMeta as &dyn UserFilters)),
        (31, Some(&AddMeta)),
        (32, None),
        (201, Some(&AddMeta)),
        (255, None),
    ] {
        let i = info(4, [0, 0, id, 0, 0, SHUFFLE], [0; 6], 0, &[]);
        let r = forward(&i, &chunk, &mut b1, &mut b2, user);
        assert_eq!(r.err(), Some(Error::FilterPipeline), "forward id {id}");
        let mut buf = chunk.clone();
        let r = backward(&i, &mut buf, &mut tmp, user);
        // A user filter that fails when decoding reports its own error (c-blosc2 returns the
        // filter's return code); reserved and missing ids are pipeline errors.
        let want = if id == 201 {
            Error::Failure
        } else {
            Error::FilterPipeline
        };
        assert_eq!(r, Err(want), "backward id {id}");
    }
    // Scratch buffers too small, delta reference too short.
    let i = info(4, [0, 0, 0, 0, 0, SHUFFLE], [0; 6], 0, &[]);
    assert_eq!(
        forward(&i, &chunk, &mut b1[..10], &mut b2, None).err(),
        Some(Error::FilterPipeline)
    );
    let i = info(4, [0, 0, 0, 0, 0, DELTA], [0; 6], 256, &chunk[..16]);
    assert_eq!(
        forward(&i, &chunk, &mut b1, &mut b2, None).err(),
        Some(Error::FilterPipeline)
    );
}

#[test]
fn legacy_chunks_use_the_version_2_bitunshuffle() {
    // 13 elements of 4 bytes (not a multiple of 8): a version-2 block holds the raw bytes.
    let chunk = data_kind("random", 52, 4);
    let mut i = info(4, [0, 0, 0, 0, 0, BITSHUFFLE], [0; 6], 0, &[]);
    i.legacy_bitshuffle = true;
    let mut buf = chunk.clone();
    let mut tmp = vec![0u8; 52];
    backward(&i, &mut buf, &mut tmp, None).unwrap();
    assert_eq!(buf, chunk);
    i.legacy_bitshuffle = false;
    backward(&i, &mut buf, &mut tmp, None).unwrap();
    assert_ne!(buf, chunk);
}
