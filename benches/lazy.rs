//! One item from each chunk of an on-disk cframe, the way python-blosc2 reads items: for every
//! chunk `blosc2_schunk_get_lazychunk`, then `blosc2_getitem_ctx` with the super-chunk's `dctx`
//! for one item, then free. Ours (`b2frame::capi`) against c-blosc2 3.3.5 (the pinned wheel's
//! libblosc2.so.9, dlopened), on the same file, written by c-blosc2: 100 chunks of 16 MiB
//! (typesize 4, blosclz/5 + shuffle, data that compresses to about a third).
//!
//! Reported per library: wall-clock time of the whole pass (best of `B2_BENCH_ROUNDS`, default
//! 3; the file is in the page cache after the first pass of either library) and the bytes the
//! pass read from the file (`rchar` of /proc/self/io: what the read system calls returned,
//! page cache or not). Both libraries return a lazy chunk (header, block offsets, a small
//! trailer) and read only the block holding the item.
//!
//! `cargo bench --bench lazy`. Env: `B2_BENCH_CHUNKS` (default 100), `B2_BENCH_CHUNK_MIB`
//! (default 16), `B2_BENCH_ROUNDS`. The frame lives in a temporary directory, removed at the end.

#![allow(clippy::missing_transmute_annotations)]

#[path = "../tests/common/mod.rs"]
mod common;
#[macro_use]
#[path = "common/api.rs"]
mod api;
#[path = "common/mod.rs"]
mod timing;

use b2frame::capi::codec::blosc2_getitem_ctx;
use b2frame::capi::schunk::*;
use b2frame::capi::types::*;
use std::ffi::{c_char, c_int, c_void, CString};
use timing::{env_or, load_average, wall_secs};

type Sc = *mut blosc2_schunk;
type Ctx = *mut blosc2_context;

c_api! {
    struct Api {
        new: blosc2_schunk_new as unsafe extern "C" fn(*mut blosc2_storage) -> Sc,
        open: blosc2_schunk_open as unsafe extern "C" fn(*const c_char) -> Sc,
        free: blosc2_schunk_free as unsafe extern "C" fn(Sc) -> c_int,
        append_buffer: blosc2_schunk_append_buffer
            as unsafe extern "C" fn(Sc, *const c_void, i32) -> i64,
        get_lazychunk: blosc2_schunk_get_lazychunk
            as unsafe extern "C" fn(Sc, i64, *mut *mut u8, *mut bool) -> c_int,
        getitem_ctx: blosc2_getitem_ctx
            as unsafe extern "C" fn(
                Ctx,
                *const c_void,
                i32,
                c_int,
                c_int,
                *mut c_void,
                i32,
            ) -> c_int,
    }
}

/// `rchar` of this process: bytes returned by read system calls so far.
fn rchar() -> u64 {
    let s = std::fs::read_to_string("/proc/self/io").expect("/proc/self/io");
    s.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|v| v.trim().parse().ok())
        .expect("rchar in /proc/self/io")
}

/// One pass: an item from the middle of every chunk. Returns (seconds, bytes read, checksum).
fn pass(api: &Api, path: &CString, nchunks: i64, items: i32) -> (f64, u64, u64) {
    let r0 = rchar();
    let t0 = wall_secs();
    let mut sum = 0u64;
    // SAFETY: C calls on a live super-chunk; out-pointers valid; a lazy chunk is freed when
    // the library says so.
    unsafe {
        let sc = (api.open)(path.as_ptr());
        assert!(!sc.is_null(), "open");
        for i in 0..nchunks {
            let (mut c, mut nf) = (std::ptr::null_mut(), false);
            let n = (api.get_lazychunk)(sc, i, &mut c, &mut nf);
            assert!(n > 0, "get_lazychunk {i}: {n}");
            let mut item = [0u8; 4];
            let at = items / 2 + i as i32;
            let got = (api.getitem_ctx)(
                (*sc).dctx,
                c as *const c_void,
                n,
                at,
                1,
                item.as_mut_ptr() as *mut c_void,
                4,
            );
            assert_eq!(got, 4, "getitem chunk {i}");
            assert_eq!(u32::from_le_bytes(item), value(i, at as u32), "chunk {i}");
            sum += u64::from(u32::from_le_bytes(item));
            if nf {
                libc::free(c as *mut c_void);
            }
        }
        (api.free)(sc);
    }
    (wall_secs() - t0, rchar() - r0, sum)
}

/// Item `j` of chunk `i`: a slow ramp with a pseudo-random low byte.
fn value(i: i64, j: u32) -> u32 {
    let x = (j ^ (i as u32).wrapping_mul(0x9E37_79B9)).wrapping_mul(0x85EB_CA6B);
    ((j / 64) << 8) | (x >> 24)
}

fn main() {
    let nchunks: i64 = env_or("B2_BENCH_CHUNKS", 100);
    let mib: usize = env_or("B2_BENCH_CHUNK_MIB", 16);
    let rounds: usize = env_or("B2_BENCH_ROUNDS", 3);
    let items = (mib << 20) / 4;
    let dir = tempfile::Builder::new()
        .prefix("b2f-bench-lazy-")
        .tempdir()
        .unwrap();
    let path = CString::new(dir.path().join("big.b2frame").to_str().unwrap()).unwrap();
    let (o, t) = (Api::ours(), Api::theirs());
    // Written by c-blosc2, so that both read the same bytes.
    // SAFETY: C calls with valid arguments; the super-chunk is freed before the reads.
    unsafe {
        let mut cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.typesize = 4;
        cp.clevel = 5;
        cp.nthreads = 2;
        let mut dp = BLOSC2_DPARAMS_DEFAULTS;
        let mut st = common::storage(true, Some(&path), &mut cp, &mut dp);
        let sc = (t.new)(&mut st);
        assert!(!sc.is_null());
        let mut buf = vec![0u8; items * 4];
        for i in 0..nchunks {
            for (j, c) in buf.chunks_exact_mut(4).enumerate() {
                c.copy_from_slice(&value(i, j as u32).to_le_bytes());
            }
            let n = (t.append_buffer)(sc, buf.as_ptr() as *const c_void, buf.len() as i32);
            assert_eq!(n, i + 1);
        }
        (t.free)(sc);
    }
    let size = std::fs::metadata(dir.path().join("big.b2frame"))
        .unwrap()
        .len();
    println!(
        "lazy getitem: one item from each of {nchunks} chunks of {mib} MiB, cframe file of {:.1} MiB (load {})",
        size as f64 / (1 << 20) as f64,
        load_average()
    );
    let mut best = [(f64::MAX, 0u64), (f64::MAX, 0u64)];
    let mut sums = [0u64; 2];
    for _ in 0..rounds {
        for (k, api) in [&o, &t].iter().enumerate() {
            let (secs, bytes, sum) = pass(api, &path, nchunks, items as i32);
            sums[k] = sum;
            if secs < best[k].0 {
                best[k] = (secs, bytes);
            }
        }
    }
    assert_eq!(sums[0], sums[1], "both libraries read the same items");
    // A markdown table: scripts/bench-tables.py copies it into BENCHMARKS.md as it is.
    println!();
    println!("| library | pass ms | bytes read | MiB read |");
    println!("|---|---|---|---|");
    for (name, (secs, bytes)) in ["b2frame", "c-blosc2"].iter().zip(best) {
        println!(
            "| {name} | {:.1} | {bytes} | {:.1} |",
            secs * 1e3,
            bytes as f64 / (1 << 20) as f64
        );
    }
}
