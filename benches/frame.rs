//! Frames through the C API, ours (`b2frame::capi::schunk::blosc2_schunk_*`) against c-blosc2
//! 3.3.5 (libblosc2.so.9 of the pinned wheel, dlopened), in one run:
//!
//! - `open`: `blosc2_schunk_open` + `blosc2_schunk_free` of a cframe file / sframe directory
//!   with 1000 and 10000 chunks, written by the reference (both open the same bytes) and by us;
//! - `read`: `blosc2_schunk_decompress_chunk` of random chunk indices on an open frame (cframe
//!   file, sframe directory, in-memory cframe from `blosc2_schunk_from_buffer`), frames written
//!   by the reference, 64 KiB and 1 MiB chunks, blosclz/5 and lz4/5 with shuffle;
//! - `get_chunk`: `blosc2_schunk_get_chunk` of the same random indices (blosclz/5, 64 KiB): the
//!   stored chunk, a pointer into an in-memory frame or a malloc'ed copy (freed) from a file;
//! - `append`: a new cframe file / sframe directory, many small `blosc2_schunk_append_buffer`
//!   (compress + write) or `blosc2_schunk_append_chunk` (same pre-compressed chunks: frame
//!   bookkeeping and I/O only), then `blosc2_schunk_free`, timed as a whole;
//! - whole-frame operations on 64 MiB of data (small_int and random, 4 MiB chunks; small_int,
//!   64 KiB chunks), the source frame written by the reference and opened by each side as an
//!   in-memory cframe (`from_buffer`), a plain super-chunk (a `blosc2_schunk_copy` of it), a
//!   cframe file and an sframe directory: `to_file` (a new file), `append_file` (to a new
//!   file), `to_buffer` (+ free), `blosc2_schunk_copy` from each of those storages to each,
//!   destination removed before every call (+ free), and `from_buffer(copy = true)` (+ free).
//!
//! `cargo bench --bench frame` (release). Env: `B2_BENCH_ROUNDS` (best-of rounds for open and
//! read, default 7), `B2_BENCH_BATCH` (seconds per open/read batch, default 0.05),
//! `B2_BENCH_APPEND_ROUNDS` (default 3), `B2_BENCH_APPENDS` (appends per cframe run, default
//! 10000), `B2_BENCH_SFRAME_APPENDS` (per sframe run, default 1000: every sframe append creates a
//! file and rewrites the index file, milliseconds each), `B2_BENCH_FILTER` (only rows whose label
//! contains it). Every call of both libraries runs on
//! the calling thread (nthreads 1).
//!
//! Each row is timed in alternating batches (ours, reference, ours, ...; both see the same
//! load) and the best batch counts, on two clocks at once: the calling thread's CPU time (user
//! and system, so syscalls count; not inflated by other processes) and wall-clock time (which
//! also sees page-cache writeback and waiting for a core). All frames live in a temporary
//! directory under `std::env::temp_dir()`, removed at the end.
//!
//! Instruction counts: `B2_BENCH_PROFILE=<iters>` skips timing and runs each selected row's
//! operation `iters` times per side inside `profile_ours` / `profile_ref`, e.g.
//! `valgrind --tool=callgrind --toggle-collect='*profile_ours*' target/release/deps/frame-*`.

#![allow(clippy::missing_transmute_annotations)]

#[path = "../tests/common/mod.rs"]
mod common;
#[macro_use]
#[path = "common/api.rs"]
mod api;
#[path = "common/mod.rs"]
mod timing;

use b2frame::capi::schunk::*;
use b2frame::capi::types::*;
use std::ffi::{c_char, c_int, c_void, CString};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use timing::{env_or, load_average, thread_cpu_secs, wall_secs};

type Sc = *mut blosc2_schunk;

c_api! {
    /// The super-chunk entry points both libraries share (same C signatures).
    struct Api {
        new: blosc2_schunk_new as unsafe extern "C" fn(*mut blosc2_storage) -> Sc,
        open: blosc2_schunk_open as unsafe extern "C" fn(*const c_char) -> Sc,
        from_buffer: blosc2_schunk_from_buffer as unsafe extern "C" fn(*mut u8, i64, bool) -> Sc,
        free: blosc2_schunk_free as unsafe extern "C" fn(Sc) -> c_int,
        append_buffer: blosc2_schunk_append_buffer
            as unsafe extern "C" fn(Sc, *const c_void, i32) -> i64,
        append_chunk: blosc2_schunk_append_chunk as unsafe extern "C" fn(Sc, *mut u8, bool) -> i64,
        decompress_chunk: blosc2_schunk_decompress_chunk
            as unsafe extern "C" fn(Sc, i64, *mut c_void, i32) -> c_int,
        get_chunk: blosc2_schunk_get_chunk
            as unsafe extern "C" fn(Sc, i64, *mut *mut u8, *mut bool) -> c_int,
        to_buffer: blosc2_schunk_to_buffer
            as unsafe extern "C" fn(Sc, *mut *mut u8, *mut bool) -> i64,
        to_file: blosc2_schunk_to_file as unsafe extern "C" fn(Sc, *const c_char) -> i64,
        append_file: blosc2_schunk_append_file as unsafe extern "C" fn(Sc, *const c_char) -> i64,
        copy: blosc2_schunk_copy as unsafe extern "C" fn(Sc, *mut blosc2_storage) -> Sc,
    }
}

/// Compression parameters of every frame here: typesize 4, shuffle, 1 thread.
fn cparams(compcode: u8, clevel: u8) -> blosc2_cparams {
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = compcode;
    cp.clevel = clevel;
    cp.typesize = 4;
    cp.nthreads = 1;
    cp.filters = [0, 0, 0, 0, 0, BLOSC_SHUFFLE as u8];
    cp
}

fn cpath(p: &Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

fn remove(p: &Path) {
    let _ = std::fs::remove_file(p);
    let _ = std::fs::remove_dir_all(p);
}

/// A new super-chunk of `api` at `path` (cframe file when `contiguous`, else sframe dir).
fn create(api: &Api, path: &CString, contiguous: bool, cp: &blosc2_cparams) -> Sc {
    let mut cp = *cp;
    let mut dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.nthreads = 1;
    let mut st = blosc2_storage {
        contiguous,
        urlpath: path.as_ptr() as *mut c_char,
        cparams: &mut cp,
        dparams: &mut dp,
        ..BLOSC2_STORAGE_DEFAULTS
    };
    // SAFETY: storage and the structs it points to outlive the call (the library copies them).
    let sc = unsafe { (api.new)(&mut st) };
    assert!(!sc.is_null(), "blosc2_schunk_new failed");
    sc
}

/// Writes a frame with `api`: `nchunks` chunks of `chunk` bytes cut cyclically from `src`.
fn write_frame(
    api: &Api,
    path: &Path,
    contiguous: bool,
    cp: &blosc2_cparams,
    src: &[u8],
    chunk: usize,
    nchunks: usize,
) {
    remove(path);
    let sc = create(api, &cpath(path), contiguous, cp);
    for i in 0..nchunks {
        let s = piece(src, chunk, i);
        // SAFETY: live super-chunk; `s` valid for its length.
        let n = unsafe { (api.append_buffer)(sc, s.as_ptr() as *const c_void, s.len() as i32) };
        assert_eq!(n, i as i64 + 1, "append_buffer");
    }
    // SAFETY: live super-chunk, freed once.
    unsafe { (api.free)(sc) };
}

/// Chunk `i` of `chunk` bytes, cut cyclically from `src` (whose length is a multiple).
fn piece(src: &[u8], chunk: usize, i: usize) -> &[u8] {
    let per = src.len() / chunk;
    let k = i % per;
    &src[k * chunk..(k + 1) * chunk]
}

/// Best seconds per call, (cpu ours, cpu ref, wall ours, wall ref), over `rounds` alternating
/// batches; a batch calls its side until `batch` wall seconds have passed (at least once).
fn race(rounds: usize, batch: f64, mut a: impl FnMut(), mut b: impl FnMut()) -> [f64; 4] {
    let run = |f: &mut dyn FnMut()| {
        let mut iters = 0u64;
        let (c0, w0) = (thread_cpu_secs(), wall_secs());
        loop {
            f();
            iters += 1;
            if wall_secs() - w0 >= batch {
                break;
            }
        }
        let n = iters as f64;
        ((thread_cpu_secs() - c0) / n, (wall_secs() - w0) / n)
    };
    let mut best = [f64::MAX; 4];
    for _ in 0..rounds {
        let (c, w) = run(&mut a);
        best[0] = best[0].min(c);
        best[2] = best[2].min(w);
        let (c, w) = run(&mut b);
        best[1] = best[1].min(c);
        best[3] = best[3].min(w);
    }
    best
}

#[inline(never)]
fn profile_ours(iters: usize, f: &mut dyn FnMut()) {
    for _ in 0..iters {
        f();
    }
}

#[inline(never)]
fn profile_ref(iters: usize, f: &mut dyn FnMut()) {
    for _ in 0..iters {
        f();
    }
}

/// Shared settings and the table being printed.
struct Bench {
    rounds: usize,
    batch: f64,
    append_rounds: usize,
    filter: String,
    profile: usize,
    below: Vec<String>,
}

impl Bench {
    fn wants(&self, row: &str) -> bool {
        row.contains(&self.filter)
    }

    /// Times (or profiles) one row and prints it. `to_metric` turns seconds per call into the
    /// printed figure; `speed` turns (ours, reference) seconds into the printed ratio.
    fn row(
        &mut self,
        row: &str,
        append: bool,
        to_metric: impl Fn(f64) -> String,
        speed: impl Fn(f64, f64) -> f64,
        mut a: impl FnMut(),
        mut b: impl FnMut(),
    ) {
        if self.profile > 0 {
            profile_ours(self.profile, &mut a);
            profile_ref(self.profile, &mut b);
            println!("profiled {row}");
            return;
        }
        let t = if append {
            race(self.append_rounds, 0.0, a, b)
        } else {
            a();
            b();
            race(self.rounds, self.batch, a, b)
        };
        let (xc, xw) = (speed(t[0], t[1]), speed(t[2], t[3]));
        if xc < 1.0 {
            self.below
                .push(format!("{row}: CPU x{xc:.2}, wall x{xw:.2}"));
        }
        println!(
            "| {row} | {} | {} | {xc:.2} | {} | {} | {xw:.2} |",
            to_metric(t[0]),
            to_metric(t[1]),
            to_metric(t[2]),
            to_metric(t[3]),
        );
    }
}

/// Reference time over our time: > 1 means ours is faster.
fn speedup(ours: f64, theirs: f64) -> f64 {
    theirs / ours
}

fn open_rows(b: &mut Bench, dir: &Path, src: &[u8], o: &Api, r: &Api) {
    let cp = cparams(BLOSC_BLOSCLZ as u8, 5);
    for nchunks in [1000usize, 10000] {
        for (sname, contiguous) in [("cframe", true), ("sframe", false)] {
            for (wname, writer) in [("ref-written", r), ("ours-written", o)] {
                let row = format!("open+free | {sname} | 4K x {nchunks} | {wname}");
                if !b.wants(&row) {
                    continue;
                }
                let path = dir.join(format!("open-{sname}-{nchunks}-{wname}"));
                write_frame(writer, &path, contiguous, &cp, src, 4 << 10, nchunks);
                let c = cpath(&path);
                let open_free = |api: Api| {
                    let c = c.clone();
                    move || {
                        // SAFETY: NUL-terminated path; the handle is freed right away.
                        unsafe {
                            let sc = (api.open)(c.as_ptr());
                            assert!(!sc.is_null(), "open failed");
                            assert_eq!((*sc).nchunks, nchunks as i64);
                            (api.free)(black_box(sc));
                        }
                    }
                };
                b.row(
                    &row,
                    false,
                    |s| format!("{:.1} µs", s * 1e6),
                    speedup,
                    open_free(*o),
                    open_free(*r),
                );
                remove(&path);
            }
        }
    }
}

/// An open super-chunk of `api` reading the reference-written frame at `path`.
fn open_for_read(api: &Api, storage: &str, path: &Path, bytes: &[u8]) -> Sc {
    // SAFETY: valid path / buffer (copied by the library since `copy` is true).
    let sc = unsafe {
        if storage == "memory" {
            let mut buf = bytes.to_vec();
            (api.from_buffer)(buf.as_mut_ptr(), buf.len() as i64, true)
        } else {
            (api.open)(cpath(path).as_ptr())
        }
    };
    assert!(!sc.is_null(), "open for read failed");
    sc
}

fn read_rows(b: &mut Bench, dir: &Path, src: &[u8], o: &Api, r: &Api) {
    let total = src.len();
    for (cname, compcode) in [
        ("blosclz/5", BLOSC_BLOSCLZ as u8),
        ("lz4/5", BLOSC_LZ4 as u8),
    ] {
        for chunk in [64usize << 10, 1 << 20] {
            let nchunks = total / chunk;
            let size_s = if chunk < 1 << 20 {
                format!("{}K", chunk >> 10)
            } else {
                format!("{}M", chunk >> 20)
            };
            for storage in ["cframe", "sframe", "memory"] {
                let row = format!("read {cname} shuf | {storage} | {size_s} x {nchunks} | random");
                // get_chunk (the stored chunk, no decoding) for one codec and size.
                let get_row = (compcode == BLOSC_BLOSCLZ as u8 && chunk == 64 << 10).then(|| {
                    format!("get_chunk {cname} shuf | {storage} | {size_s} x {nchunks} | random")
                });
                let get_row = get_row.filter(|g| b.wants(g));
                if !b.wants(&row) && get_row.is_none() {
                    continue;
                }
                let path = dir.join(format!("read-{storage}"));
                let cp = cparams(compcode, 5);
                write_frame(r, &path, storage != "sframe", &cp, src, chunk, nchunks);
                let bytes = if storage == "memory" {
                    std::fs::read(&path).unwrap()
                } else {
                    Vec::new()
                };
                let (so, sr) = (
                    open_for_read(o, storage, &path, &bytes),
                    open_for_read(r, storage, &path, &bytes),
                );
                let mut rng = common::Rng::new(7);
                let idx: Vec<i64> = (0..4096)
                    .map(|_| rng.below(nchunks as u64) as i64)
                    .collect();
                let reader = |api: Api, sc: Sc| {
                    let mut out = vec![0u8; chunk];
                    let mut k = 0usize;
                    let idx = idx.clone();
                    move || {
                        let i = idx[k % idx.len()];
                        k += 1;
                        // SAFETY: live super-chunk; `out` holds `chunk` bytes.
                        let n = unsafe {
                            (api.decompress_chunk)(
                                sc,
                                i,
                                out.as_mut_ptr() as *mut c_void,
                                chunk as i32,
                            )
                        };
                        assert_eq!(n as usize, chunk, "decompress_chunk");
                        black_box(&out);
                    }
                };
                // Both decode what was written, once.
                for (api, sc) in [(o, so), (r, sr)] {
                    let mut out = vec![0u8; chunk];
                    // SAFETY: as above.
                    let n = unsafe {
                        (api.decompress_chunk)(sc, 3, out.as_mut_ptr() as *mut c_void, chunk as i32)
                    };
                    assert_eq!(n as usize, chunk);
                    assert!(out == piece(src, chunk, 3), "{row}: wrong bytes");
                }
                if b.wants(&row) {
                    b.row(
                        &row,
                        false,
                        |s| format!("{:.1} µs ({:.2} GB/s)", s * 1e6, chunk as f64 / s / 1e9),
                        speedup,
                        reader(*o, so),
                        reader(*r, sr),
                    );
                }
                let getter = |api: Api, sc: Sc| {
                    let mut k = 0usize;
                    let idx = idx.clone();
                    move || {
                        let i = idx[k % idx.len()];
                        k += 1;
                        let (mut c, mut needs_free) = (std::ptr::null_mut(), false);
                        // SAFETY: live super-chunk; valid out-pointers; a copy handed out is
                        // malloc'ed by the library and freed here.
                        unsafe {
                            let n = (api.get_chunk)(sc, i, &mut c, &mut needs_free);
                            assert!(n > 0 && !c.is_null(), "get_chunk");
                            black_box(*c);
                            if needs_free {
                                libc::free(c as *mut c_void);
                            }
                        }
                    }
                };
                if let Some(get_row) = get_row {
                    b.row(
                        &get_row,
                        false,
                        |s| format!("{:.2} µs", s * 1e6),
                        speedup,
                        getter(*o, so),
                        getter(*r, sr),
                    );
                }
                // SAFETY: live super-chunks, freed once.
                unsafe {
                    (o.free)(so);
                    (r.free)(sr);
                }
                remove(&path);
            }
        }
    }
}

fn append_rows(b: &mut Bench, dir: &Path, src: &[u8], o: &Api, r: &Api, counts: [usize; 2]) {
    let cp = cparams(BLOSC_BLOSCLZ as u8, 5);
    for chunk in [4usize << 10, 64 << 10] {
        // The same pre-compressed chunks (by the reference) for append_chunk.
        let per = src.len() / chunk;
        let mut pre: Vec<Vec<u8>> = Vec::new();
        for (kind, contiguous, appends) in
            [("cframe", true, counts[0]), ("sframe", false, counts[1])]
        {
            for how in ["append_buffer", "append_chunk"] {
                let row = format!(
                    "{how} blosclz/5 shuf | {kind} | {}K x {appends} | new+appends+free",
                    chunk >> 10
                );
                if !b.wants(&row) {
                    continue;
                }
                if how == "append_chunk" && pre.is_empty() {
                    pre = (0..per.min(counts[0].max(counts[1])))
                        .map(|i| common::reference::ref_compress(cp, piece(src, chunk, i)))
                        .collect();
                }
                let path = dir.join(format!("append-{kind}"));
                let c = cpath(&path);
                let run = |api: Api| {
                    let (c, path, pre) = (c.clone(), path.clone(), &pre);
                    move || {
                        remove(&path);
                        let sc = create(&api, &c, contiguous, &cp);
                        for i in 0..appends {
                            // SAFETY: live super-chunk; buffers valid for their lengths (the
                            // chunk is copied by the library since `copy` is true).
                            let n = unsafe {
                                if how == "append_buffer" {
                                    let s = piece(src, chunk, i);
                                    (api.append_buffer)(
                                        sc,
                                        s.as_ptr() as *const c_void,
                                        s.len() as i32,
                                    )
                                } else {
                                    let p = &pre[i % pre.len()];
                                    (api.append_chunk)(sc, p.as_ptr() as *mut u8, true)
                                }
                            };
                            assert_eq!(n, i as i64 + 1, "{how}");
                        }
                        // SAFETY: live super-chunk, freed once.
                        unsafe { (api.free)(sc) };
                    }
                };
                b.row(
                    &row,
                    true,
                    |s| format!("{:.0} /s", appends as f64 / s),
                    speedup,
                    run(*o),
                    run(*r),
                );
                remove(&path);
            }
        }
    }
}

/// A storage description for `kind` ("memory", "plain", "cframe", "sframe") at `path`.
fn storage(
    kind: &str,
    path: &CString,
    cp: &mut blosc2_cparams,
    dp: &mut blosc2_dparams,
) -> blosc2_storage {
    let on_disk = kind == "cframe" || kind == "sframe";
    blosc2_storage {
        contiguous: kind == "memory" || kind == "cframe",
        urlpath: if on_disk {
            path.as_ptr() as *mut c_char
        } else {
            std::ptr::null_mut()
        },
        cparams: cp,
        dparams: dp,
        ..BLOSC2_STORAGE_DEFAULTS
    }
}

/// A super-chunk of `api` of kind `kind` holding the frame `bytes` (a reference-written cframe
/// at `file`; `sdir` is the same frame as a reference-written sframe).
fn open_source(
    api: &Api,
    kind: &str,
    file: &Path,
    sdir: &Path,
    bytes: &[u8],
    cp: &blosc2_cparams,
) -> Sc {
    // SAFETY: valid paths and buffers; `from_buffer` copies; the temporary in-memory
    // super-chunk of the plain copy is freed once.
    let sc = unsafe {
        match kind {
            "cframe" => (api.open)(cpath(file).as_ptr()),
            "sframe" => (api.open)(cpath(sdir).as_ptr()),
            _ => {
                let mut buf = bytes.to_vec();
                let m = (api.from_buffer)(buf.as_mut_ptr(), buf.len() as i64, true);
                assert!(!m.is_null(), "from_buffer");
                if kind == "memory" {
                    m
                } else {
                    let (mut c, mut d) = (*cp, BLOSC2_DPARAMS_DEFAULTS);
                    d.nthreads = 1;
                    let none = CString::new("").unwrap();
                    let mut st = storage("plain", &none, &mut c, &mut d);
                    let p = (api.copy)(m, &mut st);
                    (api.free)(m);
                    p
                }
            }
        }
    };
    assert!(!sc.is_null(), "open source {kind}");
    sc
}

/// Whole-frame operations: `to_file`, `to_buffer`, `append_file` (into a new file), `copy`
/// between every pair of storages, `from_buffer(copy = true)`; the source frame written by
/// the reference (same bytes on both sides), 64 MiB of data.
fn whole_rows(b: &mut Bench, dir: &Path, o: &Api, r: &Api) {
    let kinds = ["memory", "plain", "cframe", "sframe"];
    for (dname, chunk) in [
        ("small_int", 4usize << 20),
        ("random", 4 << 20),
        ("small_int", 64 << 10),
    ] {
        let src = common::data_kind(dname, 64 << 20, 42);
        let nchunks = src.len() / chunk;
        let size_s = if chunk < 1 << 20 {
            format!("{}K", chunk >> 10)
        } else {
            format!("{}M", chunk >> 20)
        };
        let desc = format!("{dname} {size_s} x {nchunks}");
        let mut labels = vec![format!(
            "from_buffer(copy) blosclz/5 shuf | {desc} | memory"
        )];
        for s in kinds {
            for op in ["to_file", "append_file", "to_buffer"] {
                labels.push(format!("{op} blosclz/5 shuf | {desc} | from {s}"));
            }
            for d in kinds {
                labels.push(format!("copy blosclz/5 shuf | {desc} | {s} -> {d}"));
            }
        }
        if !labels.iter().any(|l| b.wants(l)) {
            continue;
        }
        let cp = cparams(BLOSC_BLOSCLZ as u8, 5);
        let file = dir.join("whole-src.b2frame");
        let sdir = dir.join("whole-src.sframe");
        write_frame(r, &file, true, &cp, &src, chunk, nchunks);
        write_frame(r, &sdir, false, &cp, &src, chunk, nchunks);
        let bytes = std::fs::read(&file).unwrap();
        let out = dir.join("whole-out");
        let cout = cpath(&out);
        for skind in kinds {
            let (so, sr) = (
                open_source(o, skind, &file, &sdir, &bytes, &cp),
                open_source(r, skind, &file, &sdir, &bytes, &cp),
            );
            let ms = |s: f64| format!("{:.1} ms", s * 1e3);
            let row = format!("to_file blosclz/5 shuf | {desc} | from {skind}");
            if b.wants(&row) {
                let f = |api: Api, sc: Sc| {
                    let (out, cout) = (out.clone(), cout.clone());
                    move || {
                        remove(&out);
                        // SAFETY: live super-chunk, NUL-terminated path.
                        let n = unsafe { (api.to_file)(sc, cout.as_ptr()) };
                        assert!(n > 0, "to_file {n}");
                    }
                };
                b.row(&row, false, ms, speedup, f(*o, so), f(*r, sr));
            }
            let row = format!("append_file blosclz/5 shuf | {desc} | from {skind}");
            if b.wants(&row) {
                let f = |api: Api, sc: Sc| {
                    let (out, cout) = (out.clone(), cout.clone());
                    move || {
                        remove(&out);
                        // SAFETY: live super-chunk, NUL-terminated path.
                        let n = unsafe { (api.append_file)(sc, cout.as_ptr()) };
                        assert!(n >= 0, "append_file {n}");
                    }
                };
                b.row(&row, false, ms, speedup, f(*o, so), f(*r, sr));
            }
            let row = format!("to_buffer blosclz/5 shuf | {desc} | from {skind}");
            if b.wants(&row) {
                let f = |api: Api, sc: Sc| {
                    move || {
                        let (mut p, mut needs_free) = (std::ptr::null_mut(), false);
                        // SAFETY: live super-chunk, valid out-pointers; a malloc'ed buffer is
                        // freed here.
                        unsafe {
                            let n = (api.to_buffer)(sc, &mut p, &mut needs_free);
                            assert!(n > 0 && !p.is_null(), "to_buffer {n}");
                            black_box(*p);
                            if needs_free {
                                libc::free(p as *mut c_void);
                            }
                        }
                    }
                };
                b.row(&row, false, ms, speedup, f(*o, so), f(*r, sr));
            }
            for dkind in kinds {
                let row = format!("copy blosclz/5 shuf | {desc} | {skind} -> {dkind}");
                if !b.wants(&row) {
                    continue;
                }
                let f = |api: Api, sc: Sc| {
                    let (out, cout) = (out.clone(), cout.clone());
                    move || {
                        remove(&out);
                        let (mut c, mut d) = (cp, BLOSC2_DPARAMS_DEFAULTS);
                        d.nthreads = 1;
                        let mut st = storage(dkind, &cout, &mut c, &mut d);
                        // SAFETY: live super-chunk; the storage and what it points to outlive
                        // the call; the copy is freed once.
                        unsafe {
                            let n = (api.copy)(sc, &mut st);
                            assert!(!n.is_null(), "copy");
                            assert_eq!((*n).nchunks, nchunks as i64);
                            (api.free)(n);
                        }
                    }
                };
                b.row(&row, false, ms, speedup, f(*o, so), f(*r, sr));
            }
            // SAFETY: live super-chunks, freed once.
            unsafe {
                (o.free)(so);
                (r.free)(sr);
            }
        }
        let row = format!("from_buffer(copy) blosclz/5 shuf | {desc} | memory");
        if b.wants(&row) {
            let f = |api: Api| {
                let mut buf = bytes.clone();
                move || {
                    // SAFETY: valid buffer (copied by the library); freed once.
                    unsafe {
                        let sc = (api.from_buffer)(buf.as_mut_ptr(), buf.len() as i64, true);
                        assert!(!sc.is_null(), "from_buffer");
                        (api.free)(black_box(sc));
                    }
                }
            };
            b.row(
                &row,
                false,
                |s| format!("{:.2} ms", s * 1e3),
                speedup,
                f(*o),
                f(*r),
            );
        }
        remove(&out);
        remove(&file);
        remove(&sdir);
    }
}

fn main() {
    let mut b = Bench {
        rounds: env_or("B2_BENCH_ROUNDS", 7),
        batch: env_or("B2_BENCH_BATCH", 0.05),
        append_rounds: env_or("B2_BENCH_APPEND_ROUNDS", 3),
        filter: env_or("B2_BENCH_FILTER", String::new()),
        profile: env_or("B2_BENCH_PROFILE", 0),
        below: Vec::new(),
    };
    let appends: [usize; 2] = [
        env_or("B2_BENCH_APPENDS", 10000),
        env_or("B2_BENCH_SFRAME_APPENDS", 1000),
    ];
    let dir: PathBuf = std::env::temp_dir().join(format!("b2f-bench-frame-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (o, r) = (Api::ours(), Api::theirs());
    // Compressible input (ratio ~4 with shuffle): small integers, typesize 4; 64 MiB.
    let src = common::data_kind("small_int", 64 << 20, 42);
    println!("load average at start: {}", load_average());
    println!();
    println!("| row | ours CPU | ref CPU | x CPU | ours wall | ref wall | x wall |");
    println!("|---|---|---|---|---|---|---|");
    open_rows(&mut b, &dir, &src, &o, &r);
    read_rows(&mut b, &dir, &src, &o, &r);
    append_rows(&mut b, &dir, &src, &o, &r, appends);
    whole_rows(&mut b, &dir, &o, &r);
    println!();
    println!("load average at end: {}", load_average());
    println!("x = reference time / our time (> 1: ours faster)");
    println!("rows where ours is slower on CPU time ({}):", b.below.len());
    for s in &b.below {
        println!("  {s}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
