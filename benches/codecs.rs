//! Codec throughput: our codec call vs the reference c-blosc2 compressing/decompressing the same
//! data as a single-block, single-stream chunk (typesize 1, no filters, NEVER_SPLIT,
//! blocksize = nbytes, 1 thread), which is one call into its bundled codec plus a 40-byte
//! header/bstarts/csize wrapper. Prints a markdown table (GB/s of uncompressed bytes, ratio).
//!
//! Run: `cargo bench --bench codecs`. Env: `B2_BENCH_ROUNDS` (best-of rounds, default 5),
//! `B2_BENCH_BATCH` (seconds per timed batch, default 0.05), `B2_BENCH_FILTER` (only rows whose
//! label, e.g. `zlib/5 64 KiB small_int`, contains it).
//!
//! The machine this runs on is shared, so ours and the reference are timed in alternating
//! batches (both see the same load) on the calling thread's CPU clock (both run on the caller),
//! and the best batch counts.
//!
//! Instruction counts (load-independent): `B2_BENCH_PROFILE=<iters>` skips timing and runs each
//! selected row's compress and decompress `iters` times on each side, inside `profile_ours` /
//! `profile_ref`, e.g. `valgrind --tool=callgrind --toggle-collect='*profile_ours*'
//! target/release/deps/codecs-*` (then `*profile_ref*`).
#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/mod.rs"]
mod timing;

use b2frame::capi::types::{BLOSC2_CPARAMS_DEFAULTS, BLOSC2_DPARAMS_DEFAULTS};
use b2frame::codecs::{self, CodecState, LZ4, LZ4HC, ZLIB, ZSTD};
use std::ffi::c_void;
use std::hint::black_box;
use timing::{env_or, load_average, measure_pair};

struct RefCodec {
    cctx: *mut c_void,
    dctx: *mut c_void,
}

impl RefCodec {
    fn new(code: u8, clevel: u8, len: usize) -> Self {
        let r = common::reference::reference();
        let mut cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.compcode = code;
        cp.clevel = clevel;
        cp.typesize = 1;
        cp.filters = [0; 6];
        cp.splitmode = 2; // BLOSC_NEVER_SPLIT
        cp.blocksize = len as i32;
        cp.nthreads = 1;
        let mut dp = BLOSC2_DPARAMS_DEFAULTS;
        dp.nthreads = 1;
        // SAFETY: plain constructors of the reference library; checked for NULL.
        let (cctx, dctx) = unsafe { ((r.create_cctx)(cp), (r.create_dctx)(dp)) };
        assert!(!cctx.is_null() && !dctx.is_null());
        RefCodec { cctx, dctx }
    }

    fn compress(&self, src: &[u8], dst: &mut [u8]) -> usize {
        let r = common::reference::reference();
        // SAFETY: live context; buffers with their exact lengths.
        let n = unsafe {
            (r.compress_ctx)(
                self.cctx,
                src.as_ptr() as *const c_void,
                src.len() as i32,
                dst.as_mut_ptr() as *mut c_void,
                dst.len() as i32,
            )
        };
        assert!(n > 0, "reference compress: {n}");
        n as usize
    }

    fn decompress(&self, chunk: &[u8], dst: &mut [u8]) -> usize {
        let r = common::reference::reference();
        // SAFETY: live context; buffers with their exact lengths.
        let n = unsafe {
            (r.decompress_ctx)(
                self.dctx,
                chunk.as_ptr() as *const c_void,
                chunk.len() as i32,
                dst.as_mut_ptr() as *mut c_void,
                dst.len() as i32,
            )
        };
        assert_eq!(n as usize, dst.len(), "reference decompress");
        n as usize
    }
}

impl Drop for RefCodec {
    fn drop(&mut self) {
        let r = common::reference::reference();
        // SAFETY: contexts created by the reference, freed once.
        unsafe {
            (r.free_ctx)(self.cctx);
            (r.free_ctx)(self.dctx);
        }
    }
}

/// `iters` calls of `f`; a named frame for callgrind's `--toggle-collect`.
#[inline(never)]
fn profile_ours(iters: usize, f: &mut dyn FnMut()) {
    // Distinct bodies, so the two are never merged into one symbol.
    black_box("ours");
    (0..iters).for_each(|_| f());
}

/// As [`profile_ours`], for the reference side.
#[inline(never)]
fn profile_ref(iters: usize, f: &mut dyn FnMut()) {
    black_box("ref");
    (0..iters).for_each(|_| f());
}

fn main() {
    let rounds: usize = env_or("B2_BENCH_ROUNDS", 5);
    let batch: f64 = env_or("B2_BENCH_BATCH", 0.05);
    let filter: String = env_or("B2_BENCH_FILTER", String::new());
    let profile: usize = env_or("B2_BENCH_PROFILE", 0);
    let configs = [
        ("LZ4", LZ4, 5u8),
        ("LZ4HC", LZ4HC, 5),
        ("zlib", ZLIB, 5),
        ("zstd", ZSTD, 1),
        ("zstd", ZSTD, 5),
    ];
    let kinds = ["text", "small_int", "f64_series"];
    let sizes = [64 * 1024usize, 1 << 20];
    println!("load average at start: {}", load_average());
    println!("| codec/clevel | block | data | ours C GB/s | ref C GB/s | C ours/ref | ours D GB/s | ref D GB/s | D ours/ref | ours ratio | ref ratio |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut st = CodecState::new();
    for (name, code, clevel) in configs {
        for len in sizes {
            for kind in kinds {
                let label = format!("{name}/{clevel} {} KiB {kind}", len / 1024);
                if !label.contains(&filter) {
                    continue;
                }
                let src = common::data_kind(kind, len, 42);
                // Ours: the codec call the chunk writer makes (maxout = neblock).
                let mut comp = vec![0u8; len];
                let n = codecs::compress(&mut st, code, clevel, &src, &mut comp, None).unwrap();
                let mut out = vec![0u8; len];
                if n > 0 {
                    codecs::decompress(&mut st, code, &comp[..n], &mut out, None).unwrap();
                    assert!(out == src);
                }
                // Reference: one-block chunk.
                let rc = RefCodec::new(code, clevel, len);
                let mut chunk = vec![0u8; len + 64];
                let m = rc.compress(&src, &mut chunk);
                let mut ref_out = vec![0u8; len];
                rc.decompress(&chunk[..m], &mut ref_out);
                assert!(ref_out == src);
                let mut comp_scratch = vec![0u8; len];
                let mut chunk_scratch = vec![0u8; len + 64];
                let mut ours_c = || {
                    black_box(
                        codecs::compress(
                            &mut st,
                            code,
                            clevel,
                            black_box(&src),
                            &mut comp_scratch,
                            None,
                        )
                        .unwrap(),
                    );
                };
                let mut ref_c = || {
                    black_box(rc.compress(black_box(&src), &mut chunk_scratch));
                };
                let (oc, rcs) = if profile > 0 {
                    profile_ours(profile, &mut ours_c);
                    profile_ref(profile, &mut ref_c);
                    (0.0, 0.0)
                } else {
                    measure_pair(len, true, rounds, batch, ours_c, ref_c)
                };
                let chunk = &chunk[..m];
                let mut ref_d = || {
                    black_box(rc.decompress(black_box(chunk), &mut ref_out));
                };
                let (od, rd) = if n > 0 {
                    let mut ours_d = || {
                        black_box(
                            codecs::decompress(
                                &mut st,
                                code,
                                black_box(&comp[..n]),
                                &mut out,
                                None,
                            )
                            .unwrap(),
                        );
                    };
                    if profile > 0 {
                        profile_ours(profile, &mut ours_d);
                        profile_ref(profile, &mut ref_d);
                        (0.0, 0.0)
                    } else {
                        measure_pair(len, true, rounds, batch, ours_d, ref_d)
                    }
                } else {
                    // Stored raw: nothing of ours to decode; the reference still memcpys.
                    if profile > 0 {
                        profile_ref(profile, &mut ref_d);
                        (0.0, 0.0)
                    } else {
                        let rd = measure_pair(len, true, rounds, batch, || {}, ref_d).1;
                        (f64::NAN, rd)
                    }
                };
                if profile > 0 {
                    println!("profiled {label}");
                    continue;
                }
                let ours_size = if n == 0 { len } else { n };
                println!(
                    "| {name}/{clevel} | {} KiB | {kind} | {oc:.3} | {rcs:.3} | {:.2} | {od:.3} | {rd:.3} | {:.2} | {:.2} | {:.2} |",
                    len / 1024,
                    oc / rcs,
                    od / rd,
                    len as f64 / ours_size as f64,
                    len as f64 / m as f64,
                );
            }
        }
    }
    println!("load average at end: {}", load_average());
}
