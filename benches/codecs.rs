//! Codec throughput: our codec call vs the reference c-blosc2 compressing/decompressing the same
//! data as a single-block, single-stream chunk (typesize 1, no filters, NEVER_SPLIT,
//! blocksize = nbytes, 1 thread), which is one call into its bundled codec plus a 40-byte
//! header/bstarts/csize wrapper. Prints a markdown table (GB/s of uncompressed bytes, ratio).
//!
//! Run: `cargo bench --bench codecs` (env `B2_BENCH_SECS` = seconds per measurement, default 0.3).
#[path = "../tests/common/mod.rs"]
mod common;

use b2frame::capi::types::{BLOSC2_CPARAMS_DEFAULTS, BLOSC2_DPARAMS_DEFAULTS};
use b2frame::codecs::{self, CodecState, LZ4, LZ4HC, ZLIB, ZSTD};
use std::ffi::c_void;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Best time per call of `f` over three batches of at least `budget / 3` each.
fn time_per_call(budget: Duration, mut f: impl FnMut()) -> f64 {
    f();
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        let mut n = 0u32;
        while start.elapsed() < budget / 3 || n == 0 {
            f();
            n += 1;
        }
        best = best.min(start.elapsed().as_secs_f64() / n as f64);
    }
    best
}

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

fn main() {
    let secs: f64 = std::env::var("B2_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.3);
    let budget = Duration::from_secs_f64(secs);
    let configs = [
        ("LZ4", LZ4, 5u8),
        ("LZ4HC", LZ4HC, 5),
        ("zlib", ZLIB, 5),
        ("zstd", ZSTD, 1),
        ("zstd", ZSTD, 5),
    ];
    let kinds = ["text", "small_int", "f64_series"];
    let sizes = [64 * 1024usize, 1 << 20];
    println!("| codec/clevel | block | data | ours C GB/s | ref C GB/s | ours D GB/s | ref D GB/s | ours ratio | ref ratio |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut st = CodecState::new();
    for (name, code, clevel) in configs {
        for len in sizes {
            for kind in kinds {
                let src = common::data_kind(kind, len, 42);
                // Ours: the codec call the chunk writer makes (maxout = neblock).
                let mut comp = vec![0u8; len];
                let n = codecs::compress(&mut st, code, clevel, &src, &mut comp, None).unwrap();
                let ours_c = time_per_call(budget, || {
                    black_box(
                        codecs::compress(&mut st, code, clevel, black_box(&src), &mut comp, None)
                            .unwrap(),
                    );
                });
                let mut out = vec![0u8; len];
                let ours_d = if n > 0 {
                    codecs::decompress(&mut st, code, &comp[..n], &mut out, None).unwrap();
                    assert!(out == src);
                    time_per_call(budget, || {
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
                    })
                } else {
                    f64::NAN // stored raw: nothing to decode
                };
                // Reference: one-block chunk.
                let rc = RefCodec::new(code, clevel, len);
                let mut chunk = vec![0u8; len + 64];
                let m = rc.compress(&src, &mut chunk);
                let ref_c = time_per_call(budget, || {
                    black_box(rc.compress(black_box(&src), &mut chunk));
                });
                let chunk = &chunk[..m];
                rc.decompress(chunk, &mut out);
                assert!(out == src);
                let ref_d = time_per_call(budget, || {
                    black_box(rc.decompress(black_box(chunk), &mut out));
                });
                let gbs = |t: f64| len as f64 / t / 1e9;
                let ours_size = if n == 0 { len } else { n };
                println!(
                    "| {name}/{clevel} | {} KiB | {kind} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
                    len / 1024,
                    gbs(ours_c),
                    gbs(ref_c),
                    gbs(ours_d),
                    gbs(ref_d),
                    len as f64 / ours_size as f64,
                    len as f64 / m as f64,
                );
            }
        }
    }
}
