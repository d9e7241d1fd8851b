//! Shuffle/bitshuffle throughput: b2frame vs the reference c-blosc2 (`blosc2_shuffle`, ...) vs
//! `memcpy` of the same size, on the same buffers in one run.
//!
//! Run: `cargo bench --bench filters` (the reference library is found like in the tests:
//! `B2FRAME_REF_LIB` or the project's `.venv`). `B2FRAME_SIMD` selects our level as usual.
//! Each figure is the best of many short batches timed with the thread's CPU clock, so time the
//! thread spends descheduled on a busy machine does not count (GB/s = 1e9 input bytes per
//! second). `B2_BENCH_SIZES` (comma-separated buffer sizes in bytes) replaces the default
//! 64 KiB and 4 MiB, e.g. `524288` for the block size c-blosc2 picks for 4 MiB chunks.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/mod.rs"]
mod timing;

use b2frame::filters;
use std::ffi::c_void;
use std::hint::black_box;
use std::time::Duration;

type CFn = unsafe extern "C" fn(i32, i32, *const c_void, *mut c_void) -> i32;
type OurFn = fn(usize, &[u8], &mut [u8]);

/// Best time of one call of `f`, over `reps` batches of about `batch` each.
fn best_time(mut f: impl FnMut(), batch: Duration, reps: usize) -> f64 {
    // Calibrate the batch length.
    let mut iters = 1u64;
    loop {
        let t = timing::thread_cpu_secs();
        for _ in 0..iters {
            f();
        }
        if timing::thread_cpu_secs() - t >= batch.as_secs_f64() / 4.0 || iters > 1 << 24 {
            break;
        }
        iters *= 2;
    }
    let iters = iters * 4;
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = timing::thread_cpu_secs();
        for _ in 0..iters {
            f();
        }
        best = best.min((timing::thread_cpu_secs() - t) / iters as f64);
    }
    best
}

fn main() {
    let r = common::reference::reference();
    let ops: [(&str, OurFn, CFn); 4] = [
        ("shuffle", filters::shuffle, r.shuffle),
        ("unshuffle", filters::unshuffle, r.unshuffle),
        ("bitshuffle", filters::bitshuffle, r.bitshuffle),
        ("bitunshuffle", filters::bitunshuffle, r.bitunshuffle),
    ];
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    println!(
        "b2frame filters benchmark, SIMD level: {}",
        filters::simd_level()
    );
    println!(
        "| size | typesize | op | ours GB/s | reference GB/s | memcpy GB/s | ours/reference | ours/memcpy |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut worst = f64::INFINITY;
    let sizes: Vec<usize> = std::env::var("B2_BENCH_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![64 << 10, 4 << 20]);
    for size in sizes {
        let mut src = vec![0u8; size];
        common::Rng::new(size as u64).fill(&mut src);
        let mut dst = vec![0u8; size];
        let (batch, reps) = if size <= 64 << 10 {
            (Duration::from_millis(2), 25)
        } else {
            (Duration::from_millis(8), 10)
        };
        for ts in [2usize, 4, 8, 16] {
            for (name, ours, theirs) in ops {
                if filter.as_deref().is_some_and(|f| !name.contains(f)) {
                    continue;
                }
                let (mut t_ours, mut t_ref, mut t_cpy) =
                    (f64::INFINITY, f64::INFINITY, f64::INFINITY);
                // Alternate the three so that machine noise hits them alike.
                for _ in 0..3 {
                    t_ours = t_ours.min(best_time(
                        || ours(ts, black_box(&src), black_box(&mut dst)),
                        batch,
                        reps,
                    ));
                    t_ref = t_ref.min(best_time(
                        || {
                            // SAFETY: both buffers hold `size` bytes; typesize is valid.
                            let rc = unsafe {
                                theirs(
                                    ts as i32,
                                    size as i32,
                                    black_box(src.as_ptr()) as *const c_void,
                                    black_box(dst.as_mut_ptr()) as *mut c_void,
                                )
                            };
                            assert_eq!(rc, size as i32);
                        },
                        batch,
                        reps,
                    ));
                    t_cpy = t_cpy.min(best_time(
                        || black_box(&mut dst).copy_from_slice(black_box(&src)),
                        batch,
                        reps,
                    ));
                }
                let gb = |t: f64| size as f64 / t / 1e9;
                let label = if size < 1 << 20 {
                    format!("{} KiB", size >> 10)
                } else {
                    format!("{} MiB", size >> 20)
                };
                worst = worst.min(t_ref / t_ours);
                println!(
                    "| {label} | {ts} | {name} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2} |",
                    gb(t_ours),
                    gb(t_ref),
                    gb(t_cpy),
                    t_ref / t_ours,
                    t_cpy / t_ours
                );
            }
        }
    }
    println!("lowest ours/reference ratio: {worst:.2}");
}
