//! Chunk throughput: our [`Compressor`]/[`Decompressor`] vs c-blosc2 3.3.5's `blosc2_compress_ctx`
//! / `blosc2_decompress_ctx` on the same buffers, in one run. Every chunk is a full chunk (header,
//! bstarts, filter pipeline, split streams), both sides with the same parameters.
//!
//! `cargo bench --bench chunk` (release). Env: `B2_BENCH_ROUNDS` (best-of rounds, default 7),
//! `B2_BENCH_BATCH` (seconds per timed batch, default 0.03), `B2_BENCH_FILTER` (only rows
//! whose label contains it), `B2_BENCH_SIZES` (comma-separated chunk sizes in bytes instead of
//! 64 KiB, 1 MiB and 4 MiB; e.g. `256,4096` shows the fixed cost per chunk),
//! `B2_BENCH_CHUNK_AT` / `B2_BENCH_OUT_AT` (offset after a 4 KiB boundary of the chunk and
//! decompression buffers, default 0 and 0; both sides always get the same offsets),
//! `B2_BENCH_GETITEM` (set: the decompress columns time `getitem` of 8 items in the middle),
//! `B2_BENCH_SWAP` (set: each side gets the buffers the other side would have had, to tell a
//! placement effect from a code one).
//!
//! Instruction counts (load-independent): `B2_BENCH_PROFILE=<iters>` skips timing and runs
//! each selected row's compress and decompress `iters` times on each side, inside
//! `profile_ours` / `profile_ref`, e.g. `valgrind --tool=callgrind
//! --toggle-collect='*profile_ours*' target/release/deps/chunk-*` (then `*profile_ref*`);
//! `B2_BENCH_PROFILE_ONLY=c` or `=d` runs only compression or decompression (for `perf record`,
//! which cannot toggle).
//!
//! The machine this was written on is shared, so: ours and the reference are timed in
//! alternating batches (both see the same load) and the best batch counts. With one thread the
//! time is the calling thread's CPU time (both libraries run a 1-thread chunk on the caller);
//! with two threads it is wall-clock time, which load inflates.
#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/mod.rs"]
mod timing;

use b2frame::capi::types::{BLOSC2_CPARAMS_DEFAULTS, BLOSC2_DPARAMS_DEFAULTS};
use b2frame::chunk::{no_hooks, CParams, Compressor, DParams, Decompressor};
use std::ffi::c_void;
use std::hint::black_box;
use timing::{env_or, measure_pair, Placed};

struct Ref {
    cctx: *mut c_void,
    dctx: *mut c_void,
}

impl Ref {
    fn new(cp: &CParams) -> Ref {
        let r = common::reference::reference();
        let mut c = BLOSC2_CPARAMS_DEFAULTS;
        c.compcode = cp.compcode;
        c.clevel = cp.clevel;
        c.typesize = cp.typesize;
        c.nthreads = cp.nthreads;
        c.filters = cp.filters;
        c.filters_meta = cp.filters_meta;
        c.splitmode = cp.splitmode;
        let mut d = BLOSC2_DPARAMS_DEFAULTS;
        d.nthreads = cp.nthreads;
        // SAFETY: plain constructors of the reference library; checked for NULL.
        let (cctx, dctx) = unsafe { ((r.create_cctx)(c), (r.create_dctx)(d)) };
        assert!(!cctx.is_null() && !dctx.is_null());
        Ref { cctx, dctx }
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

    fn decompress(&self, chunk: &[u8], dst: &mut [u8]) {
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
    }

    fn getitem(&self, chunk: &[u8], start: i32, nitems: i32, dst: &mut [u8]) {
        let r = common::reference::reference();
        // SAFETY: live context; `chunk` and `dst` with their exact lengths.
        let n = unsafe {
            (r.getitem_ctx)(
                self.dctx,
                chunk.as_ptr() as *const c_void,
                chunk.len() as i32,
                start,
                nitems,
                dst.as_mut_ptr() as *mut c_void,
                dst.len() as i32,
            )
        };
        assert!(n > 0, "reference getitem");
    }
}

impl Drop for Ref {
    fn drop(&mut self) {
        let r = common::reference::reference();
        // SAFETY: contexts created by the reference, freed once.
        unsafe {
            (r.free_ctx)(self.cctx);
            (r.free_ctx)(self.dctx);
        }
    }
}

#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn profile_ours(
    iters: usize,
    c: &mut Compressor,
    d: &mut Decompressor,
    src: &[u8],
    chunk: &mut [u8],
    n: usize,
    out: &mut [u8],
    (cs, ds): (bool, bool),
) {
    for _ in 0..iters * cs as usize {
        black_box(c.compress(black_box(src), chunk).unwrap());
    }
    for _ in 0..iters * ds as usize {
        black_box(d.decompress(black_box(&chunk[..n]), out).unwrap());
    }
}

#[inline(never)]
fn profile_ref(
    iters: usize,
    rf: &Ref,
    src: &[u8],
    chunk: &mut [u8],
    rn: usize,
    out: &mut [u8],
    (cs, ds): (bool, bool),
) {
    for _ in 0..iters * cs as usize {
        black_box(rf.compress(black_box(src), chunk));
    }
    for _ in 0..iters * ds as usize {
        rf.decompress(black_box(&chunk[..rn]), out);
    }
}

fn main() {
    let rounds: usize = env_or("B2_BENCH_ROUNDS", 7);
    let batch: f64 = env_or("B2_BENCH_BATCH", 0.03);
    let filter: String = env_or("B2_BENCH_FILTER", String::new());
    let profile: usize = env_or("B2_BENCH_PROFILE", 0);
    let chunk_at: usize = env_or("B2_BENCH_CHUNK_AT", 0);
    let out_at: usize = env_or("B2_BENCH_OUT_AT", 0);
    let swap = std::env::var_os("B2_BENCH_SWAP").is_some();
    let only: String = env_or("B2_BENCH_PROFILE_ONLY", String::new());
    let getitem = std::env::var_os("B2_BENCH_GETITEM").is_some();
    // (label, compcode, clevel, filter in slot 5: 1 shuffle, 2 bitshuffle)
    let configs = [
        ("blosclz/5 shuf", 0u8, 5u8, 1u8),
        ("lz4/5 shuf", 1, 5, 1),
        ("zstd/1 shuf", 5, 1, 1),
        ("zstd/5 shuf", 5, 5, 1),
        ("zstd/1 bitshuf", 5, 1, 2),
    ];
    // (data kind, typesize)
    let kinds = [("f64_series", 8), ("small_int", 4), ("random", 4)];
    let sizes: Vec<usize> = std::env::var("B2_BENCH_SIZES")
        .map(|s| {
            s.split(',')
                .map(|x| x.trim().parse().expect("B2_BENCH_SIZES: sizes in bytes"))
                .collect()
        })
        .unwrap_or_else(|_| vec![64 << 10, 1 << 20, 4 << 20]);
    println!("| codec/filter | data | chunk | thr | ours C GB/s | ref C GB/s | C x | ours D GB/s | ref D GB/s | D x | ours ratio | ref ratio |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let (mut worst_c, mut worst_d) = (f64::MAX, f64::MAX);
    let mut below = Vec::new();
    for (label, compcode, clevel, filt) in configs {
        for (kind, typesize) in kinds {
            for &size in &sizes {
                let src = common::data_kind(kind, size, 42);
                for nthreads in [1i16, 2] {
                    let size_s = if size < 1 << 10 {
                        format!("{size}B")
                    } else if size < 1 << 20 {
                        format!("{}K", size >> 10)
                    } else {
                        format!("{}M", size >> 20)
                    };
                    let row = format!("{label} | {kind} | {size_s} | {nthreads}");
                    if !row.contains(&filter) {
                        continue;
                    }
                    let cp = CParams {
                        compcode,
                        clevel,
                        typesize,
                        nthreads,
                        filters: [0, 0, 0, 0, 0, filt],
                        ..Default::default()
                    };
                    let mut c = Compressor::new(cp, no_hooks()).unwrap();
                    let mut d = Decompressor::new(DParams { nthreads }, no_hooks()).unwrap();
                    let rf = Ref::new(&cp);
                    // Both sides' buffers at the same page offsets (see `timing::Placed`).
                    // `B2_BENCH_SWAP`: each side gets the buffers the other would have had, to
                    // tell a placement effect (it follows the buffers) from a code one.
                    let (a, b) = (
                        Placed::new(size + 32, chunk_at),
                        Placed::new(size + 32, chunk_at),
                    );
                    let (mut chunk, mut ref_chunk) = if swap { (b, a) } else { (a, b) };
                    let n = c.compress(&src, &mut chunk).unwrap();
                    assert!(n > 0);
                    let rn = rf.compress(&src, &mut ref_chunk);
                    let (a, b) = (Placed::new(size, out_at), Placed::new(size, out_at));
                    let (mut out, mut ref_out) = if swap { (b, a) } else { (a, b) };
                    d.decompress(&chunk[..n], &mut out).unwrap();
                    assert!(*out == *src, "round trip {row}");
                    rf.decompress(&ref_chunk[..rn], &mut ref_out);
                    assert!(*ref_out == *src);
                    if profile > 0 {
                        let sides = (only != "d", only != "c");
                        profile_ours(
                            profile, &mut c, &mut d, &src, &mut chunk, n, &mut out, sides,
                        );
                        profile_ref(profile, &rf, &src, &mut ref_chunk, rn, &mut ref_out, sides);
                        println!("profiled {row}");
                        continue;
                    }
                    let cpu = nthreads == 1;
                    let (oc, rc) = measure_pair(
                        size,
                        cpu,
                        rounds,
                        batch,
                        || {
                            black_box(c.compress(black_box(&src), &mut chunk).unwrap());
                        },
                        || {
                            black_box(rf.compress(black_box(&src), &mut ref_chunk));
                        },
                    );
                    // The decompress columns time getitem of 8 items in the middle of the chunk
                    // instead when `B2_BENCH_GETITEM` is set (GB/s then relative to the chunk size:
                    // compare ratios, not absolute speeds).
                    let mid = (size / typesize as usize / 2) as i32;
                    let (od, rd) = if getitem {
                        measure_pair(
                            size,
                            cpu,
                            rounds,
                            batch,
                            || {
                                let k = d.getitem(black_box(&chunk[..n]), mid, 8, &mut out);
                                black_box(k.unwrap());
                            },
                            || rf.getitem(black_box(&ref_chunk[..rn]), mid, 8, &mut ref_out),
                        )
                    } else {
                        measure_pair(
                            size,
                            cpu,
                            rounds,
                            batch,
                            || {
                                black_box(d.decompress(black_box(&chunk[..n]), &mut out).unwrap());
                            },
                            || rf.decompress(black_box(&ref_chunk[..rn]), &mut ref_out),
                        )
                    };
                    let (xc, xd) = (oc / rc, od / rd);
                    worst_c = worst_c.min(xc);
                    worst_d = worst_d.min(xd);
                    if xc < 1.0 || xd < 1.0 {
                        below.push(format!("{row}: C x{xc:.2} D x{xd:.2}"));
                    }
                    println!(
                        "| {row} | {oc:.2} | {rc:.2} | {xc:.2} | {od:.2} | {rd:.2} | {xd:.2} | {:.2} | {:.2} |",
                        size as f64 / n as f64,
                        size as f64 / rn as f64,
                    );
                }
            }
        }
    }
    if profile > 0 {
        return;
    }
    println!("\nworst ours/ref: compress {worst_c:.2}, decompress {worst_d:.2}");
    println!("rows below 1.0 ({}):", below.len());
    for b in below {
        println!("  {b}");
    }
}
