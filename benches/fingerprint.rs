//! What frame fingerprints (docs/format/fingerprint.md) cost: the same work through our C API
//! with fingerprints on and off (`b2frame_set_fingerprint`), and c-blosc2 3.3.5 (libblosc2.so.9
//! of the pinned wheel, dlopened; it writes none) for scale, in one run:
//!
//! - `append_chunk`: a new frame (cframe file, in-memory cframe, sframe directory), N appends of
//!   the same pre-compressed chunks (frame bookkeeping, CRC and I/O only), then free;
//! - `append_buffer`: the same with compression (what applications do);
//! - `to_file`: `blosc2_schunk_to_file` of an in-memory super-chunk of 64 MiB (input) into a new
//!   cframe file.
//!
//! Every side runs the whole operation once per round, sides alternating (on, off, reference,
//! on, ...) so that all see the same load; the best round counts, on the calling thread's CPU
//! time and on wall-clock time. `cargo bench --bench fingerprint`. Env: `B2_BENCH_ROUNDS`
//! (default 7), `B2_BENCH_FILTER` (rows whose label contains it), `B2_BENCH_SIDES` (the sides
//! that run and their order in a round, a comma-separated subset of `on,off,ref`, default
//! `on,off,ref`; one side alone is for profiling it, e.g. under `valgrind --tool=callgrind`; the
//! columns of a side left out read `-`).

#![allow(clippy::missing_transmute_annotations)]

#[path = "../tests/common/mod.rs"]
mod common;
#[macro_use]
#[path = "common/api.rs"]
mod api;
#[path = "common/mod.rs"]
mod timing;

use b2frame::capi::fingerprint::b2frame_set_fingerprint;
use b2frame::capi::schunk::*;
use b2frame::capi::types::*;
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};
use timing::{env_or, load_average, thread_cpu_secs, wall_secs};

type Sc = *mut blosc2_schunk;

c_api! {
    struct Api {
        new: blosc2_schunk_new as unsafe extern "C" fn(*mut blosc2_storage) -> Sc,
        free: blosc2_schunk_free as unsafe extern "C" fn(Sc) -> c_int,
        append_buffer: blosc2_schunk_append_buffer
            as unsafe extern "C" fn(Sc, *const c_void, i32) -> i64,
        append_chunk: blosc2_schunk_append_chunk as unsafe extern "C" fn(Sc, *mut u8, bool) -> i64,
        to_file: blosc2_schunk_to_file as unsafe extern "C" fn(Sc, *const c_char) -> i64,
    }
}

fn cparams() -> blosc2_cparams {
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = BLOSC_BLOSCLZ as u8;
    cp.clevel = 5;
    cp.typesize = 4;
    cp.nthreads = 1;
    cp.filters = [0, 0, 0, 0, 0, BLOSC_SHUFFLE as u8];
    cp
}

fn remove(p: &Path) {
    let _ = std::fs::remove_file(p);
    let _ = std::fs::remove_dir_all(p);
}

/// Where a new super-chunk lives.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    File,
    Memory,
    Sparse,
}

fn create(api: &Api, path: Option<&CString>, kind: Kind) -> Sc {
    let mut cp = cparams();
    let mut dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.nthreads = 1;
    let mut st = blosc2_storage {
        contiguous: kind != Kind::Sparse,
        urlpath: path.map_or(std::ptr::null_mut(), |p| p.as_ptr() as *mut c_char),
        cparams: &mut cp,
        dparams: &mut dp,
        ..BLOSC2_STORAGE_DEFAULTS
    };
    // SAFETY: storage and the structs it points to outlive the call (the library copies them).
    let sc = unsafe { (api.new)(&mut st) };
    assert!(!sc.is_null(), "blosc2_schunk_new failed");
    sc
}

/// Best (CPU, wall) seconds of each side over `rounds` alternating rounds. Runs the sides named in `order` (indexes into `sides`), in that order, every round; the
/// sides not named read 0.
fn race(rounds: usize, order: &[usize], sides: &mut [&mut dyn FnMut()]) -> Vec<(f64, f64)> {
    let mut best = vec![(0.0, 0.0); sides.len()];
    for &k in order {
        best[k] = (f64::MAX, f64::MAX);
    }
    for _ in 0..rounds {
        for &k in order {
            let f = &mut sides[k];
            let (c0, w0) = (thread_cpu_secs(), wall_secs());
            f();
            let (c, w) = (thread_cpu_secs() - c0, wall_secs() - w0);
            best[k] = (best[k].0.min(c), best[k].1.min(w));
        }
    }
    best
}

fn main() {
    let rounds: usize = env_or("B2_BENCH_ROUNDS", 7);
    let filter: String = env_or("B2_BENCH_FILTER", String::new());
    let sides: String = env_or("B2_BENCH_SIDES", "on,off,ref".to_string());
    let mut order: Vec<usize> = Vec::new();
    for w in sides.split(',') {
        let k = ["on", "off", "ref"].iter().position(|s| *s == w.trim());
        let k = k.unwrap_or_else(|| panic!("B2_BENCH_SIDES: unknown side {w:?}"));
        if !order.contains(&k) {
            order.push(k);
        }
    }
    let dir: PathBuf =
        std::env::temp_dir().join(format!("b2f-bench-fingerprint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (o, r) = (Api::ours(), Api::theirs());
    let src = common::data_kind("small_int", 64 << 20, 42);
    println!("load average at start: {}", load_average());
    println!();
    println!(
        "| row | on CPU | off CPU | on/off CPU | on wall | off wall | on/off wall | c-blosc2 CPU | c-blosc2 wall |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let row = |label: &str, per: &dyn Fn(f64) -> String, run: &dyn Fn(Api)| {
        if !label.contains(&filter) {
            return;
        }
        let mut on = || {
            b2frame_set_fingerprint(1);
            run(o)
        };
        let mut off = || {
            b2frame_set_fingerprint(0);
            run(o)
        };
        let mut reference = || run(r);
        let t = race(rounds, &order, &mut [&mut on, &mut off, &mut reference]);
        b2frame_set_fingerprint(1);
        let per = |s: f64| if s > 0.0 { per(s) } else { "-".to_string() };
        let ratio = |a: f64, b: f64| {
            if a > 0.0 && b > 0.0 {
                format!("{:.3}", a / b)
            } else {
                "-".to_string()
            }
        };
        println!(
            "| {label} | {} | {} | {} | {} | {} | {} | {} | {} |",
            per(t[0].0),
            per(t[1].0),
            ratio(t[0].0, t[1].0),
            per(t[0].1),
            per(t[1].1),
            ratio(t[0].1, t[1].1),
            per(t[2].0),
            per(t[2].1),
        );
    };
    for (kind, name, chunk, n) in [
        (Kind::File, "cframe file", 4usize << 10, 10_000usize),
        (Kind::File, "cframe file", 1 << 20, 64),
        (Kind::Memory, "in-memory cframe", 4 << 10, 10_000),
        (Kind::Memory, "in-memory cframe", 1 << 20, 64),
        (Kind::Sparse, "sframe", 4 << 10, 1_000),
    ] {
        let cp = cparams();
        let per_src = src.len() / chunk;
        let pre: Vec<Vec<u8>> = (0..per_src.min(n))
            .map(|i| common::reference::ref_compress(cp, &src[i * chunk..(i + 1) * chunk]))
            .collect();
        let path = dir.join("append");
        let cpath = CString::new(path.to_str().unwrap()).unwrap();
        for how in ["append_chunk", "append_buffer"] {
            let label = format!("{how} | {name} | {}K x {n}", chunk >> 10);
            let run = |api: Api| {
                remove(&path);
                let sc = create(&api, (kind != Kind::Memory).then_some(&cpath), kind);
                for i in 0..n {
                    let k = i % per_src;
                    // SAFETY: live super-chunk; buffers valid for their lengths (copied).
                    let got = unsafe {
                        if how == "append_chunk" {
                            let p = &pre[i % pre.len()];
                            (api.append_chunk)(sc, p.as_ptr() as *mut u8, true)
                        } else {
                            let s = &src[k * chunk..(k + 1) * chunk];
                            (api.append_buffer)(sc, s.as_ptr() as *const c_void, s.len() as i32)
                        }
                    };
                    assert_eq!(got, i as i64 + 1, "{how}");
                }
                // SAFETY: live super-chunk, freed once.
                unsafe { (api.free)(sc) };
            };
            row(&label, &|s| format!("{:.0} /s", n as f64 / s), &run);
        }
        remove(&path);
    }
    // to_file of an in-memory super-chunk of 64 MiB (1 MiB chunks).
    let label = "to_file | in-memory schunk, 64 x 1 MiB -> cframe file";
    if !label.contains(&filter) {
        return finish(&dir);
    }
    let out = dir.join("out.b2frame");
    let cout = CString::new(out.to_str().unwrap()).unwrap();
    let scs: Vec<(Api, Sc)> = [o, r]
        .into_iter()
        .map(|api| {
            let sc = create(&api, None, Kind::Memory);
            for k in 0..64 {
                let s = &src[k << 20..(k + 1) << 20];
                // SAFETY: live super-chunk; `s` valid for its length.
                let n =
                    unsafe { (api.append_buffer)(sc, s.as_ptr() as *const c_void, s.len() as i32) };
                assert_eq!(n, k as i64 + 1);
            }
            (api, sc)
        })
        .collect();
    let run = |api: Api| {
        let sc = scs
            .iter()
            .find(|(a, _)| a.new as usize == api.new as usize)
            .unwrap()
            .1;
        remove(&out);
        // SAFETY: live super-chunk; valid path.
        let n = unsafe { (api.to_file)(sc, cout.as_ptr()) };
        assert!(n > 0, "to_file");
    };
    row(label, &|s| format!("{:.0} MB/s", 64.0 * 1.048576 / s), &run);
    for (api, sc) in scs {
        // SAFETY: live super-chunk, freed once.
        unsafe { (api.free)(sc) };
    }
    finish(&dir);
}

fn finish(dir: &Path) {
    println!();
    println!("load average at end: {}", load_average());
    println!("on/off = time with fingerprints / time without (< 1.05: within the 5% goal)");
    let _ = std::fs::remove_dir_all(dir);
}
