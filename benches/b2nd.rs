//! `b2nd_get_slice_cbuffer`, `b2nd_set_slice_cbuffer`, `b2nd_append`, `b2nd_insert` and
//! `b2nd_delete`: ours (`b2frame::capi`) against
//! c-blosc2 3.3.5 (the pinned wheel's libblosc2.so.9, dlopened) in the same process.
//!
//! Arrays: f64, 256 MiB (`B2_BENCH_MIB`), blosclz/5 + shuffle, holding a smooth ramp:
//! - 2-D `4096 x 8192`, chunks `512 x 1024` (4 MiB), blocks `64 x 128` (64 KiB);
//! - 3-D `256 x 256 x 512`, chunks `64 x 64 x 128` (4 MiB), blocks `16 x 16 x 32` (64 KiB).
//!
//! (the leading extent shrinks with `B2_BENCH_MIB`). Each array is built by the library under
//! test (`b2nd_from_cbuffer`), in memory and in a cframe file (on disk: every chunk read goes to
//! the file, as for an array c-blosc2 opens), with 1 and 2 threads (`nthreads` of the cparams and
//! dparams). Slices, per array:
//! - `small aligned`: one block, on block boundaries;
//! - `small unaligned`: one block's extent shifted by half a block (2^ndim blocks touched);
//! - `large aligned`: 8 whole chunks (32 MiB);
//! - `large unaligned`: ~30 MiB starting inside a chunk and a block, touching 15 or 18 chunks.
//!
//! Then, per array, shape changes along axis 0 (a second table): `b2nd_append` of one chunk's
//! extent of rows ("append aligned": whole new chunks) and of 100 (2-D) or 10 (3-D) rows
//! ("append unaligned": the last chunk stays partial and the next append updates it); on disk
//! also `b2nd_insert` of one chunk's extent at the third chunk row followed by `b2nd_delete`
//! of the same rows ("insert+delete"; c-blosc2 inserts and deletes only whole chunks inside
//! an array). Each row then checks the rows each library appended (or kept).
//!
//! `set` writes new values (what `get` read plus 0.5) and the old ones alternately, so that
//! every call changes the chunks it touches (and their compressed sizes, usually). Timing: the
//! calling thread's CPU time with 1 thread (robust to the other processes of a shared machine;
//! system time of file reads counts), the wall clock with 2; the two libraries alternated in
//! batches of at least `B2_BENCH_BATCH` seconds (default 0.3), best of `B2_BENCH_ROUNDS`
//! (default 3) batches each. Reported: MB/s of slice bytes
//! (10^6 bytes) and ours/theirs. Before timing, each row checks that both libraries read the
//! same bytes.
//!
//! `cargo bench --bench b2nd`. Env: `B2_BENCH_MIB`, `B2_BENCH_ROUNDS`, `B2_BENCH_BATCH`,
//! `B2_BENCH_ONLY` (a substring of the row names to keep, e.g. `3-D disk`), `B2_BENCH_GET_ONLY=1`
//! (time only the reads: for profiling).

#![allow(clippy::missing_transmute_annotations)]

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/mod.rs"]
mod timing;

use b2frame::capi::b2nd_array::*;
use b2frame::capi::types::*;
use std::ffi::{c_char, c_int, c_void, CString};
use timing::{best_secs_pair, env_or, load_average, thread_cpu_secs, wall_secs};

type Arr = *mut b2nd_array_t;
type Ctx = *mut b2nd_context_t;

#[derive(Clone, Copy)]
struct Api {
    create_ctx: unsafe extern "C" fn(
        *const blosc2_storage,
        i8,
        *const i64,
        *const i32,
        *const i32,
        *const c_char,
        i8,
        *const blosc2_metalayer,
        i32,
    ) -> Ctx,
    free_ctx: unsafe extern "C" fn(Ctx) -> c_int,
    from_cbuffer: unsafe extern "C" fn(Ctx, *mut Arr, *const c_void, i64) -> c_int,
    free: unsafe extern "C" fn(Arr) -> c_int,
    get: unsafe extern "C" fn(
        *const b2nd_array_t,
        *const i64,
        *const i64,
        *mut c_void,
        *const i64,
        i64,
    ) -> c_int,
    set: unsafe extern "C" fn(*const c_void, *const i64, i64, *const i64, *const i64, Arr) -> c_int,
    append: unsafe extern "C" fn(Arr, *const c_void, i64, i8) -> c_int,
    insert: unsafe extern "C" fn(Arr, *const c_void, i64, i8, i64) -> c_int,
    delete: unsafe extern "C" fn(Arr, i8, i64, i64) -> c_int,
}

fn ours() -> Api {
    b2frame::capi::globals::blosc2_init();
    Api {
        create_ctx: b2nd_create_ctx,
        free_ctx: b2nd_free_ctx,
        from_cbuffer: b2nd_from_cbuffer,
        free: b2nd_free,
        get: b2nd_get_slice_cbuffer,
        set: b2nd_set_slice_cbuffer,
        append: b2nd_append,
        insert: b2nd_insert,
        delete: b2nd_delete,
    }
}

fn theirs() -> Api {
    let r = common::reference::reference();
    // SAFETY: each symbol has the C signature b2nd.h 3.3.5 declares for it.
    unsafe {
        let init: unsafe extern "C" fn() = std::mem::transmute(r.sym("blosc2_init"));
        init();
        Api {
            create_ctx: std::mem::transmute(r.sym("b2nd_create_ctx")),
            free_ctx: std::mem::transmute(r.sym("b2nd_free_ctx")),
            from_cbuffer: std::mem::transmute(r.sym("b2nd_from_cbuffer")),
            free: std::mem::transmute(r.sym("b2nd_free")),
            get: std::mem::transmute(r.sym("b2nd_get_slice_cbuffer")),
            set: std::mem::transmute(r.sym("b2nd_set_slice_cbuffer")),
            append: std::mem::transmute(r.sym("b2nd_append")),
            insert: std::mem::transmute(r.sym("b2nd_insert")),
            delete: std::mem::transmute(r.sym("b2nd_delete")),
        }
    }
}

/// An array geometry.
struct Shape {
    name: &'static str,
    shape: Vec<i64>,
    chunks: Vec<i32>,
    blocks: Vec<i32>,
}

/// A slice box.
struct Slice {
    name: &'static str,
    start: Vec<i64>,
    stop: Vec<i64>,
}

impl Slice {
    fn shape(&self) -> Vec<i64> {
        self.start
            .iter()
            .zip(&self.stop)
            .map(|(a, b)| b - a)
            .collect()
    }
    fn nbytes(&self) -> usize {
        self.shape().iter().product::<i64>() as usize * 8
    }
}

fn slices(s: &Shape) -> Vec<Slice> {
    let c: Vec<i64> = s.chunks.iter().map(|&x| i64::from(x)).collect();
    let b: Vec<i64> = s.blocks.iter().map(|&x| i64::from(x)).collect();
    let n = c.len();
    // One block inside chunk (1, 1, ..), a few blocks in.
    let small: Vec<i64> = (0..n).map(|i| c[i] + b[i] * (1 + i as i64 % 2)).collect();
    let half: Vec<i64> = (0..n).map(|i| small[i] + b[i] / 2).collect();
    // 8 whole chunks: 2 along each of the last three (2-D: 4 x 2) dimensions.
    let mut many = vec![2i64; n];
    if n == 2 {
        many[0] = 4;
    }
    let la: Vec<i64> = c.clone();
    let la_stop: Vec<i64> = (0..n)
        .map(|i| (c[i] + many[i] * c[i]).min(s.shape[i]))
        .collect();
    // ~30 MiB from inside chunk (1, 1, ..), not on a block boundary.
    let lu: Vec<i64> = (0..n).map(|i| c[i] + b[i] * 2 + 3 + i as i64).collect();
    let ext: Vec<i64> = if n == 2 {
        vec![2000, 2000]
    } else {
        vec![120, 130, 250]
    };
    let lu_stop: Vec<i64> = (0..n).map(|i| (lu[i] + ext[i]).min(s.shape[i])).collect();
    let bstop: Vec<i64> = (0..n).map(|i| small[i] + b[i]).collect();
    let hstop: Vec<i64> = (0..n).map(|i| half[i] + b[i]).collect();
    vec![
        Slice {
            name: "small aligned",
            start: small,
            stop: bstop,
        },
        Slice {
            name: "small unaligned",
            start: half,
            stop: hstop,
        },
        Slice {
            name: "large aligned",
            start: la,
            stop: la_stop,
        },
        Slice {
            name: "large unaligned",
            start: lu,
            stop: lu_stop,
        },
    ]
}

/// Builds the array with `api` (file `path` when on disk).
fn build(api: &Api, s: &Shape, data: &[u8], nthreads: i16, path: Option<&CString>) -> Arr {
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 8;
    cp.nthreads = nthreads;
    let mut dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.nthreads = nthreads;
    let storage = blosc2_storage {
        contiguous: true,
        urlpath: path.map_or(std::ptr::null_mut(), |p| p.as_ptr() as *mut c_char),
        cparams: &mut cp,
        dparams: &mut dp,
        io: std::ptr::null_mut(),
    };
    let dtype = CString::new("<f8").unwrap();
    // SAFETY: valid shapes for ndim values; the storage lives through the calls.
    unsafe {
        let ctx = (api.create_ctx)(
            &storage,
            s.shape.len() as i8,
            s.shape.as_ptr(),
            s.chunks.as_ptr(),
            s.blocks.as_ptr(),
            dtype.as_ptr(),
            0,
            std::ptr::null(),
            0,
        );
        assert!(!ctx.is_null());
        let mut a: Arr = std::ptr::null_mut();
        let rc = (api.from_cbuffer)(ctx, &mut a, data.as_ptr() as _, data.len() as i64);
        assert_eq!(rc, 0, "from_cbuffer");
        (api.free_ctx)(ctx);
        a
    }
}

fn get(api: &Api, a: Arr, sl: &Slice, buf: &mut [u8]) {
    let shape = sl.shape();
    // SAFETY: `buf` holds the slice; start/stop/shape have ndim values.
    let rc = unsafe {
        (api.get)(
            a,
            sl.start.as_ptr(),
            sl.stop.as_ptr(),
            buf.as_mut_ptr() as _,
            shape.as_ptr(),
            buf.len() as i64,
        )
    };
    assert_eq!(rc, 0, "get_slice_cbuffer");
}

fn set(api: &Api, a: Arr, sl: &Slice, buf: &[u8]) {
    let shape = sl.shape();
    // SAFETY: `buf` holds the slice; start/stop/shape have ndim values.
    let rc = unsafe {
        (api.set)(
            buf.as_ptr() as _,
            shape.as_ptr(),
            buf.len() as i64,
            sl.start.as_ptr(),
            sl.stop.as_ptr(),
            a,
        )
    };
    assert_eq!(rc, 0, "set_slice_cbuffer");
}

/// Appends `rows` leading-axis rows of `data` (the array's first rows) to `a` along axis 0.
fn append(api: &Api, a: Arr, data: &[u8], row_bytes: usize, rows: i64) {
    let n = row_bytes * rows as usize;
    // SAFETY: `data` holds at least `n` bytes: `rows` rows of the array's other extents.
    let rc = unsafe { (api.append)(a, data.as_ptr() as _, n as i64, 0) };
    assert_eq!(rc, 0, "b2nd_append");
}

/// Inserts `rows` rows of `data` at leading-axis row `at`, then deletes them again.
fn insert_delete(api: &Api, a: Arr, data: &[u8], row_bytes: usize, rows: i64, at: i64) {
    let n = row_bytes * rows as usize;
    // SAFETY: `data` holds at least `n` bytes; `at` lies inside the array.
    unsafe {
        assert_eq!(
            (api.insert)(a, data.as_ptr() as _, n as i64, 0, at),
            0,
            "b2nd_insert"
        );
        assert_eq!((api.delete)(a, 0, at, rows), 0, "b2nd_delete");
    }
}

/// Reads the leading-axis rows `[from, to)` of `a` (whose shape is `shape`).
fn rows(api: &Api, a: Arr, shape: &[i64], from: i64, to: i64) -> Vec<u8> {
    let mut start = vec![0i64; shape.len()];
    start[0] = from;
    let mut stop = shape.to_vec();
    stop[0] = to;
    let sl = Slice {
        name: "",
        start,
        stop,
    };
    let mut b = vec![0u8; sl.nbytes()];
    get(api, a, &sl, &mut b);
    b
}

fn main() {
    let mib: i64 = env_or("B2_BENCH_MIB", 256);
    let rounds: usize = env_or("B2_BENCH_ROUNDS", 3);
    let batch: f64 = env_or("B2_BENCH_BATCH", 0.3);
    let only: String = env_or("B2_BENCH_ONLY", String::new());
    let skip_set = env_or("B2_BENCH_GET_ONLY", 0) != 0;
    let items = mib * (1 << 20) / 8;
    let shapes = [
        Shape {
            name: "2-D",
            shape: vec![items / 8192, 8192],
            chunks: vec![512, 1024],
            blocks: vec![64, 128],
        },
        Shape {
            name: "3-D",
            shape: vec![items / (256 * 512), 256, 512],
            chunks: vec![64, 64, 128],
            blocks: vec![16, 16, 32],
        },
    ];
    let (a_ours, a_theirs) = (ours(), theirs());
    let dir = std::env::temp_dir().join(format!("b2nd-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    println!(
        "b2nd slices, f64 arrays of {mib} MiB; best of {rounds} alternating batches of >= {batch} s \
         (1 thread: thread CPU time, 2 threads: wall clock); load average at start {}",
        load_average()
    );
    println!(
        "| array | storage | threads | slice | MiB | get ours MB/s | get c-blosc2 MB/s | get ratio | \
         set ours MB/s | set c-blosc2 MB/s | set ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut op_rows: Vec<String> = Vec::new();
    for s in &shapes {
        let n: i64 = s.shape.iter().product();
        let data: Vec<u8> = (0..n)
            .flat_map(|i| ((i % 100_000) as f64 * 0.25 + (i / 7919) as f64).to_ne_bytes())
            .collect();
        for disk in [false, true] {
            for nthreads in [1i16, 2] {
                let storage = if disk { "disk" } else { "memory" };
                let prefix = format!("{} {} {}", s.name, storage, nthreads);
                let names = ["append aligned", "append unaligned", "insert+delete"];
                if !only.is_empty()
                    && !slices(s)
                        .iter()
                        .map(|sl| sl.name)
                        .chain(names)
                        .any(|n| format!("{prefix} {n}").contains(&only))
                {
                    continue;
                }
                let p_ours = CString::new(dir.join("ours.b2nd").to_str().unwrap()).unwrap();
                let p_theirs = CString::new(dir.join("theirs.b2nd").to_str().unwrap()).unwrap();
                let _ = std::fs::remove_file(dir.join("ours.b2nd"));
                let _ = std::fs::remove_file(dir.join("theirs.b2nd"));
                // One thread: the calling thread's CPU time (robust to the other processes of a
                // shared machine); two: wall clock (the second thread's work counts).
                let clock: fn() -> f64 = if nthreads == 1 {
                    thread_cpu_secs
                } else {
                    wall_secs
                };
                let ao = build(&a_ours, s, &data, nthreads, disk.then_some(&p_ours));
                let at_ = build(&a_theirs, s, &data, nthreads, disk.then_some(&p_theirs));
                for sl in slices(s) {
                    if !only.is_empty() && !format!("{prefix} {}", sl.name).contains(&only) {
                        continue;
                    }
                    let nb = sl.nbytes();
                    let mut bo = vec![0u8; nb];
                    let mut bt = vec![0u8; nb];
                    get(&a_ours, ao, &sl, &mut bo);
                    get(&a_theirs, at_, &sl, &mut bt);
                    assert!(
                        bo == bt,
                        "{prefix} {}: the libraries read different bytes",
                        sl.name
                    );
                    let (go, gt) = best_secs_pair(
                        clock,
                        rounds,
                        batch,
                        || get(&a_ours, ao, &sl, &mut bo),
                        || get(&a_theirs, at_, &sl, &mut bt),
                    );
                    // New values (what was read, plus 0.5) and the old ones, alternately.
                    let bn: Vec<u8> = bo
                        .chunks(8)
                        .flat_map(|x| {
                            (f64::from_ne_bytes(x.try_into().unwrap()) + 0.5).to_ne_bytes()
                        })
                        .collect();
                    let (mut ko, mut kt) = (0u64, 0u64);
                    let (so, stt) = if skip_set {
                        (f64::NAN, f64::NAN)
                    } else {
                        best_secs_pair(
                            clock,
                            rounds,
                            batch,
                            || {
                                ko += 1;
                                set(&a_ours, ao, &sl, if ko % 2 == 1 { &bn } else { &bo })
                            },
                            || {
                                kt += 1;
                                set(&a_theirs, at_, &sl, if kt % 2 == 1 { &bn } else { &bt })
                            },
                        )
                    };
                    // Back to the old values on both sides.
                    if ko % 2 == 1 {
                        set(&a_ours, ao, &sl, &bo);
                    }
                    if kt % 2 == 1 {
                        set(&a_theirs, at_, &sl, &bt);
                    }
                    let mbs = |t: f64| nb as f64 / t / 1e6;
                    println!(
                        "| {} | {} | {} | {} | {:.3} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.2} |",
                        s.name,
                        storage,
                        nthreads,
                        sl.name,
                        nb as f64 / (1 << 20) as f64,
                        mbs(go),
                        mbs(gt),
                        gt / go,
                        mbs(so),
                        mbs(stt),
                        stt / so,
                    );
                }
                // Shape changes along axis 0, with data rows of the array: one chunk's extent
                // ("aligned": whole new chunks), 100 (2-D) or 10 (3-D) rows ("unaligned": the
                // last chunk is partial and the next append updates it), and on disk an insert
                // of one chunk's extent at the third chunk row followed by its delete.
                let row_bytes: usize = s.shape[1..].iter().product::<i64>() as usize * 8;
                let unaligned = if s.shape.len() == 2 { 100 } else { 10 };
                let mut ops: Vec<(&str, i64)> = vec![
                    ("append aligned", i64::from(s.chunks[0])),
                    ("append unaligned", unaligned),
                ];
                if disk {
                    ops.push(("insert+delete", i64::from(s.chunks[0])));
                }
                for (op, rows) in ops {
                    if !only.is_empty() && !format!("{prefix} {op}").contains(&only) {
                        continue;
                    }
                    // c-blosc2 inserts and deletes only whole chunks inside an array.
                    let c0 = i64::from(s.chunks[0]);
                    let at = (2 * c0).min((s.shape[0] / c0 - 1).max(0) * c0);
                    // SAFETY: live arrays.
                    let before = unsafe { [(*ao).shape[0], (*at_).shape[0]] };
                    let (to, tt) = best_secs_pair(
                        clock,
                        rounds,
                        batch,
                        || match op {
                            "insert+delete" => {
                                insert_delete(&a_ours, ao, &data, row_bytes, rows, at)
                            }
                            _ => append(&a_ours, ao, &data, row_bytes, rows),
                        },
                        || match op {
                            "insert+delete" => {
                                insert_delete(&a_theirs, at_, &data, row_bytes, rows, at)
                            }
                            _ => append(&a_theirs, at_, &data, row_bytes, rows),
                        },
                    );
                    // Both arrays end with the rows appended last, or (insert+delete) hold
                    // their original rows.
                    let nd = s.shape.len();
                    for (k, (api, a)) in [(&a_ours, ao), (&a_theirs, at_)].into_iter().enumerate() {
                        // SAFETY: a live array; `shape` has ndim values.
                        let sh = unsafe { (*a).shape };
                        let (from, want) = match op {
                            "insert+delete" => {
                                assert_eq!(sh[0], before[k], "{prefix} {op}: shape");
                                (
                                    at,
                                    &data[at as usize * row_bytes..][..rows as usize * row_bytes],
                                )
                            }
                            _ => (sh[0] - rows, &data[..rows as usize * row_bytes]),
                        };
                        let got = self::rows(api, a, &sh[..nd], from, from + rows);
                        assert!(got == want, "{prefix} {op}: wrong rows");
                    }
                    let mb = (rows as usize * row_bytes) as f64;
                    op_rows.push(format!(
                        "| {} | {} | {} | {} | {:.3} | {:.0} | {:.0} | {:.2} |",
                        s.name,
                        storage,
                        nthreads,
                        op,
                        mb / (1 << 20) as f64,
                        mb / to / 1e6,
                        mb / tt / 1e6,
                        tt / to,
                    ));
                }
                // SAFETY: arrays built above, freed once.
                unsafe {
                    (a_ours.free)(ao);
                    (a_theirs.free)(at_);
                }
            }
        }
    }
    println!();
    println!(
        "b2nd shape changes along axis 0 (b2nd_append; on disk b2nd_insert inside the array then \
         b2nd_delete of the same rows), MB/s of the rows' bytes"
    );
    println!("| array | storage | threads | op | MiB | ours MB/s | c-blosc2 MB/s | ratio |");
    println!("|---|---|---|---|---|---|---|---|");
    for r in &op_rows {
        println!("{r}");
    }
    println!("load average at end {}", load_average());
    let _ = std::fs::remove_dir_all(&dir);
}
