//! Parallel chunk writing (nthreads > 1): blocks are encoded on the workers and placed in block
//! order as they finish. Whatever the output room, the outcome (compressed, memcpyed, 0 = does
//! not fit, or an error) and every byte must be those of the one-thread writer, including when
//! placement stops in the middle of the chunk and the same compressor is used again.
use crate::common;

use b2frame::chunk::header::{flags, ChunkHeader};
use b2frame::chunk::{no_hooks, CParams, Compressor, DParams, Decompressor, Hooks, PrefilterArgs};
use b2frame::pool::Runner;
use b2frame::{Error, Result};
use common::data_kind;
use std::sync::Arc;

fn cp(compcode: u8, clevel: u8, typesize: i32, blocksize: i32, nthreads: i16) -> CParams {
    CParams {
        compcode,
        clevel,
        typesize,
        blocksize,
        nthreads,
        filters: [0, 0, 0, 0, 0, 1],
        ..Default::default()
    }
}

/// Blocks of different kinds one after another: compressible, incompressible, zero runs.
fn mixed(len: usize, seed: u64) -> Vec<u8> {
    let kinds = [
        "f64_series",
        "random",
        "zeros",
        "text",
        "small_int",
        "random",
    ];
    let mut v = Vec::with_capacity(len);
    let mut k = 0;
    while v.len() < len {
        let n = (3000 + 1777 * k).min(len - v.len());
        v.extend(data_kind(kinds[k % kinds.len()], n, seed + k as u64));
        k += 1;
    }
    v
}

/// (return value or error, the first `n` output bytes) of compressing into `dsize` bytes.
fn run(c: &mut Compressor, data: &[u8], dsize: usize) -> (Result<usize>, Vec<u8>) {
    let mut dst = vec![0xA5u8; dsize];
    let r = c.compress(data, &mut dst);
    dst.truncate(*r.as_ref().unwrap_or(&0));
    (r, dst)
}

/// Output sizes from well below the compressed size up to past `nbytes + 32`.
fn sizes(full: usize, nbytes: usize) -> Vec<usize> {
    let mut s: Vec<usize> = (32..full).step_by(97).collect();
    s.extend(full.saturating_sub(300)..full + 8);
    s.extend(nbytes + 24..nbytes + 40);
    s.retain(|&d| d >= 32);
    s
}

#[test]
fn any_output_room_gives_the_serial_outcome_and_bytes() {
    let mut checked = 0;
    for &(codec, clevel, ts, bs, kind) in &[
        (0u8, 5u8, 4i32, 4096i32, "mixed"),
        (1, 5, 8, 8192, "mixed"),
        (5, 1, 4, 4096, "mixed"),
        (1, 5, 4, 4096, "random"),
        (5, 3, 8, 2048, "f64_series"),
        (4, 5, 2, 4096, "text"),
    ] {
        let data = match kind {
            "mixed" => mixed(60_001, 3),
            k => data_kind(k, 50_000, 4),
        };
        let mut one = Compressor::new(cp(codec, clevel, ts, bs, 1), no_hooks()).unwrap();
        let full = run(&mut one, &data, data.len() + 64).0.unwrap();
        // One compressor per thread count, reused across all sizes (state left by a stopped
        // run must not leak into the next call).
        let mut many: Vec<Compressor> = [2i16, 3]
            .iter()
            .map(|&nt| Compressor::new(cp(codec, clevel, ts, bs, nt), no_hooks()).unwrap())
            .collect();
        for dsize in sizes(full, data.len()) {
            let want = run(&mut one, &data, dsize);
            for c in &mut many {
                let got = run(c, &data, dsize);
                assert_eq!(got.0, want.0, "codec {codec} {kind} destsize {dsize}");
                assert!(got.1 == want.1, "codec {codec} {kind} destsize {dsize}");
            }
            checked += 1;
        }
        // After all those partial runs, a roomy call still gives the full chunk.
        for c in &mut many {
            assert_eq!(run(c, &data, data.len() + 64).0, Ok(full));
        }
    }
    assert!(checked > 1000, "{checked}");
}

#[test]
fn vl_chunks_any_output_room() {
    let blocks: Vec<Vec<u8>> = (0..12)
        .map(|i| {
            data_kind(
                ["text", "random", "small_int"][i % 3],
                900 + 613 * i,
                i as u64,
            )
        })
        .collect();
    let refs: Vec<&[u8]> = blocks.iter().map(|b| &b[..]).collect();
    let mut one = Compressor::new(cp(5, 5, 4, 0, 1), no_hooks()).unwrap();
    let mut three = Compressor::new(cp(5, 5, 4, 0, 3), no_hooks()).unwrap();
    let vl = |c: &mut Compressor, dsize: usize| {
        let mut dst = vec![0u8; dsize];
        let r = c.vlcompress(&refs, &mut dst);
        dst.truncate(*r.as_ref().unwrap_or(&0));
        (r, dst)
    };
    let full = vl(&mut one, 100_000).0.unwrap();
    assert!(full > 0);
    for dsize in (80..full + 8).step_by(7) {
        let want = vl(&mut one, dsize);
        let got = vl(&mut three, dsize);
        assert_eq!(got.0, want.0, "destsize {dsize}");
        assert!(got.1 == want.1, "destsize {dsize}");
    }
}

/// Large incompressible chunks fall back to memcpy, copied by the workers: same bytes.
#[test]
fn memcpyed_fallback_is_the_same_for_any_nthreads() {
    for len in [300_000usize, 1 << 20, (1 << 20) + 13] {
        let data = data_kind("random", len, 9);
        let mut outs = Vec::new();
        for nt in [1i16, 2, 3] {
            let mut c = Compressor::new(cp(1, 5, 4, 0, nt), no_hooks()).unwrap();
            for _ in 0..2 {
                let (r, out) = run(&mut c, &data, len + 32);
                assert_eq!(r, Ok(len + 32), "nthreads {nt}");
                outs.push(out);
            }
        }
        assert!(outs.iter().all(|o| *o == outs[0]));
        let h = ChunkHeader::parse(&outs[0]).unwrap();
        assert_ne!(h.flags & flags::MEMCPYED, 0);
        assert!(outs[0][32..] == data[..]);
        let mut d = Decompressor::new(DParams { nthreads: 2 }, no_hooks()).unwrap();
        let mut back = vec![0u8; len];
        assert_eq!(d.decompress(&outs[0], &mut back), Ok(len));
        assert!(back == data);
    }
}

/// A user codec that fails on blocks starting with 0xEE and otherwise keeps the first 3/4 of
/// each stream (so every block "compresses" to a known size).
struct Failing;

/// A threads callback that runs the workers one after another on the caller, last one first.
struct SerialRunner;

impl Runner for SerialRunner {
    fn run(&self, nworkers: usize, worker: &(dyn Fn(usize) + Sync)) {
        (0..nworkers).rev().for_each(worker);
    }
}

impl Hooks for Failing {
    fn codec_version(&self, compcode: u8) -> Option<u8> {
        (compcode == 201).then_some(1)
    }
    fn encode(
        &self,
        compcode: u8,
        _meta: u8,
        src: &[u8],
        dst: &mut [u8],
        _chunk: &[u8],
    ) -> Option<Result<usize>> {
        if compcode != 201 {
            return None;
        }
        if src.first() == Some(&0xEE) {
            return Some(Err(Error::Data));
        }
        let n = src.len() * 3 / 4;
        if n > dst.len() {
            return Some(Ok(0));
        }
        dst[..n].copy_from_slice(&src[..n]);
        Some(Ok(n))
    }
}

#[test]
fn a_failing_block_fails_the_chunk_only_where_the_serial_writer_reaches_it() {
    let bs = 4096usize;
    let nblocks = 16;
    for bad in [0usize, 1, 7, 15] {
        let mut data = data_kind("text", bs * nblocks, bad as u64);
        data[bad * bs] = 0xEE;
        let params = |nt| CParams {
            compcode: 201,
            clevel: 5,
            typesize: 1,
            blocksize: bs as i32,
            nthreads: nt,
            filters: [0; 6],
            ..Default::default()
        };
        // Room for about half the blocks: past it the chunk does not fit, so a failing block
        // beyond that point is never reported.
        let half = 32 + 4 * nblocks + (bs * 3 / 4 + 4) * nblocks / 2;
        for dsize in [data.len() + 32, half, data.len() / 8] {
            let mut one = Compressor::new(params(1), Arc::new(Failing)).unwrap();
            let want = run(&mut one, &data, dsize);
            if dsize == data.len() + 32 {
                assert_eq!(want.0, Err(Error::Data), "bad block {bad}");
            }
            for serial_runner in [false, true] {
                for nt in [2i16, 4] {
                    let mut c = Compressor::new(params(nt), Arc::new(Failing)).unwrap();
                    if serial_runner {
                        c.set_runner(Arc::new(SerialRunner));
                    }
                    for _ in 0..2 {
                        let got = run(&mut c, &data, dsize);
                        assert_eq!(got.0, want.0, "bad {bad} destsize {dsize} nt {nt}");
                        assert!(got.1 == want.1, "bad {bad} destsize {dsize} nt {nt}");
                    }
                }
            }
        }
    }
}

#[test]
fn dictionaries_and_blosc1_headers_match_one_thread() {
    let data = mixed(200_000, 8);
    for (codec, dict, blosc1) in [(5u8, true, false), (1, true, false), (0, false, true)] {
        let mut p = cp(codec, 5, 4, 16_384, 1);
        p.use_dict = dict;
        let mut chunks = Vec::new();
        for nt in [1i16, 2] {
            let mut c = Compressor::new(CParams { nthreads: nt, ..p }, no_hooks()).unwrap();
            let mut dst = vec![0u8; data.len() + 32];
            let n = if blosc1 {
                c.compress_blosc1(&data, &mut dst).unwrap()
            } else {
                c.compress(&data, &mut dst).unwrap()
            };
            dst.truncate(n);
            chunks.push(dst);
        }
        assert!(chunks[0] == chunks[1], "codec {codec} dict {dict}");
        let mut d = Decompressor::new(DParams { nthreads: 2 }, no_hooks()).unwrap();
        let mut back = vec![0u8; data.len()];
        assert_eq!(d.decompress(&chunks[1], &mut back), Ok(data.len()));
        assert!(back == data);
    }
}

/// An identity prefilter that stalls block 0, so the other workers encode every later block
/// before block 0 is placed: they all wait, incompressible streams included, and are placed
/// by the worker that finishes block 0.
struct SlowFirstBlock;

impl Hooks for SlowFirstBlock {
    fn has_prefilter(&self) -> bool {
        true
    }
    fn prefilter(&self, a: &mut PrefilterArgs<'_>) -> Result<()> {
        if a.nblock == 0 {
            std::thread::sleep(std::time::Duration::from_millis(30));
        }
        a.output.copy_from_slice(a.input);
        Ok(())
    }
}

#[test]
fn blocks_finished_before_an_earlier_one_are_placed_in_order() {
    let data = mixed(16 * 8192 + 100, 5);
    for (codec, filters) in [
        (1u8, [0, 0, 0, 0, 0, 1]),
        (0, [0; 6]),
        (5, [0, 0, 0, 0, 0, 2]),
    ] {
        let p = CParams {
            filters,
            ..cp(codec, 5, 4, 8192, 1)
        };
        let mut one = Compressor::new(p, Arc::new(SlowFirstBlock)).unwrap();
        let want = run(&mut one, &data, data.len() + 64);
        assert!(want.0.unwrap() < data.len(), "codec {codec}: compressed");
        let mut two =
            Compressor::new(CParams { nthreads: 2, ..p }, Arc::new(SlowFirstBlock)).unwrap();
        for _ in 0..2 {
            let got = run(&mut two, &data, data.len() + 64);
            assert_eq!(got.0, want.0, "codec {codec}");
            assert!(got.1 == want.1, "codec {codec}");
        }
    }
}
