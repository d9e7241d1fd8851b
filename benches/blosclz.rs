//! BloscLZ throughput: ours vs c-blosc2 3.3.5's (through a single-block, unsplit, unfiltered
//! chunk with typesize 1, which adds only the chunk header and a run check to the codec).
//!
//! `cargo bench --bench blosclz` (release build). Prints GB/s of uncompressed bytes (per thread
//! CPU time) and compression ratios. "ref" columns are the reference. When the codec gives up
//! (ratio 1.00), the reference's time includes copying the block into the chunk, ours does not.
#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/mod.rs"]
mod timing;

use b2frame::capi::types::{BLOSC2_CPARAMS_DEFAULTS, BLOSC2_DPARAMS_DEFAULTS, BLOSC_NEVER_SPLIT};
use b2frame::codecs::blosclz;
use std::ffi::c_void;
use std::hint::black_box;

/// Best throughput (GB/s of `bytes`, thread CPU time) of `a` and of `b`, best of 9 alternating
/// batches of 0.04 s (so that both see the same machine load).
fn measure_pair(bytes: usize, a: impl FnMut(), b: impl FnMut()) -> (f64, f64) {
    timing::measure_pair(bytes, true, 9, 0.04, a, b)
}

fn data(kind: &str, len: usize) -> Vec<u8> {
    let mut rng = common::Rng::new(42);
    match kind {
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
        "sparse" => (0..len)
            .map(|_| {
                if rng.below(10) == 0 {
                    rng.next_u64() as u8
                } else {
                    7
                }
            })
            .collect(),
        other => common::data_kind(other, len, 42),
    }
}

fn main() {
    let r = common::reference::reference();
    // A markdown table: scripts/bench-tables.py copies it into BENCHMARKS.md as it is.
    println!(
        "| data | block | clevel | ours ratio | ref ratio | ours C GB/s | ref C GB/s | C x \
         | ours D GB/s | ref D GB/s | D x |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    // (comp, decomp) speed ratios ours/reference where the codec compressed.
    let mut coded: Vec<(f64, f64)> = Vec::new();
    for &len in &[64 << 10, 4 << 20] {
        for kind in [
            "text",
            "mixed",
            "small_int",
            "sparse",
            "f64_series",
            "random",
        ] {
            let src = data(kind, len);
            for clevel in [1u8, 5, 9] {
                let mut comp = vec![0u8; len];
                let n = blosclz::compress(clevel, &src, &mut comp);
                let mut out = vec![0u8; len];
                let mut ref_out = vec![0u8; len];
                if n > 0 {
                    assert_eq!(blosclz::decompress(&comp[..n], &mut out), Ok(len));
                    assert!(out == src);
                }
                // The reference, one context each way, reused.
                let mut cp = BLOSC2_CPARAMS_DEFAULTS;
                cp.compcode = 0;
                cp.clevel = clevel;
                cp.typesize = 1;
                cp.filters = [0; 6];
                cp.splitmode = BLOSC_NEVER_SPLIT;
                cp.blocksize = len as i32;
                let mut chunk = vec![0u8; len + 32];
                let mut scratch = vec![0u8; len];
                // SAFETY: the contexts live until the end of this block; buffers are sized as
                // declared.
                let (c_ours, c_ref, d_ours, d_ref, ref_n, ref_memcpyed) = unsafe {
                    let cctx = (r.create_cctx)(cp);
                    let dctx = (r.create_dctx)(BLOSC2_DPARAMS_DEFAULTS);
                    let csize = (r.compress_ctx)(
                        cctx,
                        src.as_ptr() as *const c_void,
                        len as i32,
                        chunk.as_mut_ptr() as *mut c_void,
                        chunk.len() as i32,
                    );
                    assert!(csize > 0);
                    let (c_ours, c_ref) = measure_pair(
                        len,
                        || {
                            black_box(blosclz::compress(clevel, black_box(&src), &mut scratch));
                        },
                        || {
                            (r.compress_ctx)(
                                cctx,
                                src.as_ptr() as *const c_void,
                                len as i32,
                                chunk.as_mut_ptr() as *mut c_void,
                                chunk.len() as i32,
                            );
                        },
                    );
                    let memcpyed = chunk[2] & 2 != 0;
                    let (d_ours, d_ref) = if n > 0 && !memcpyed {
                        measure_pair(
                            len,
                            || {
                                black_box(blosclz::decompress(black_box(&comp[..n]), &mut out))
                                    .unwrap();
                            },
                            || {
                                let m = (r.decompress_ctx)(
                                    dctx,
                                    chunk.as_ptr() as *const c_void,
                                    csize,
                                    ref_out.as_mut_ptr() as *mut c_void,
                                    len as i32,
                                );
                                assert_eq!(m, len as i32);
                            },
                        )
                    } else {
                        (f64::NAN, f64::NAN)
                    };
                    (r.free_ctx)(cctx);
                    (r.free_ctx)(dctx);
                    let ref_n = (csize as usize).saturating_sub(40);
                    (c_ours, c_ref, d_ours, d_ref, ref_n, memcpyed)
                };
                if n > 0 {
                    coded.push((c_ours / c_ref, d_ours / d_ref));
                }
                let ratio = |n: usize| {
                    if n == 0 || n >= len {
                        1.0
                    } else {
                        len as f64 / n as f64
                    }
                };
                let ref_ratio = if ref_memcpyed { 1.0 } else { ratio(ref_n) };
                println!(
                    "| {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
                    kind,
                    if len < 1 << 20 { format!("{}K", len >> 10) } else { format!("{}M", len >> 20) },
                    clevel,
                    ratio(n),
                    ref_ratio,
                    c_ours,
                    c_ref,
                    c_ours / c_ref,
                    d_ours,
                    d_ref,
                    d_ours / d_ref
                );
            }
        }
    }
    let geo = |f: fn(&(f64, f64)) -> f64| {
        (coded.iter().map(|c| f(c).ln()).sum::<f64>() / coded.len() as f64).exp()
    };
    println!();
    println!(
        "geometric mean over {} coded cases, ours/reference: compress {:.3}, decompress {:.3}",
        coded.len(),
        geo(|c| c.0),
        geo(|c| c.1)
    );
}
