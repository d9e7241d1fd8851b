//! Readers during appends (promise 4 of issue 18, docs/durability.md "Readers"): a writer
//! process appends chunks to a frame (a cframe file and an sframe) through libb2frame, while
//! this process reads it through two handles opened before the appends start, one of
//! libb2frame and one of the real c-blosc2 3.3.5, both following the growth with
//! `blosc2_schunk_refresh` (c-blosc2's growth-SWMR model), with and without the `.b2lock`
//! locking protocol. A read must only ever show a committed state:
//!
//! * `nchunks` never goes back, and lies between the appends acknowledged before the read and
//!   those acknowledged after it plus one (the append in flight may have committed before its
//!   acknowledgement was written): never a half state;
//! * `nbytes` is `nchunks` whole chunks;
//! * the last chunk and one other chunk seen decode to exactly what the writer appended.
//!
//! With locking every refresh and read must succeed. Without it a read may fail transiently
//! (c-blosc2 documents this for its own readers: the file is cut after a commit); a read that
//! succeeds must still show a committed state. Every wait (the writer's start, its wait for
//! the readers, its end) is bounded: a hang fails the test.

#![allow(clippy::missing_transmute_annotations)]

use crate::common;

use b2frame::capi::globals::blosc2_init;
use b2frame::capi::schunk as ours;
use b2frame::capi::types::*;
use common::reference::reference;
use std::ffi::{c_char, c_int, c_void, CString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

type Sc = *mut blosc2_schunk;

/// The bound on every wait: far above what a run takes, even under qemu-user.
const LIMIT: Duration = Duration::from_secs(60);

/// Items (int32) per chunk.
const ITEMS: usize = 1000;

/// Appends the writer makes after the first chunk.
const APPENDS: u32 = 150;

/// The content of chunk `i`: compressible for even `i`, not for odd ones.
fn data(i: u32) -> Vec<u8> {
    let mut x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (0..ITEMS as u32)
        .flat_map(|k| {
            let v = if i.is_multiple_of(2) {
                i.wrapping_mul(7919) ^ (k / 16)
            } else {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u32
            };
            v.to_le_bytes()
        })
        .collect()
}

fn cstring(p: &Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

/// The functions a reader calls, from one library.
#[derive(Clone, Copy)]
struct Api {
    name: &'static str,
    open_udio: unsafe extern "C" fn(*const c_char, *const blosc2_io) -> Sc,
    free: unsafe extern "C" fn(Sc) -> c_int,
    refresh: unsafe extern "C" fn(Sc) -> c_int,
    decompress_chunk: unsafe extern "C" fn(Sc, i64, *mut c_void, i32) -> c_int,
}

fn ours_api() -> Api {
    Api {
        name: "libb2frame",
        open_udio: ours::blosc2_schunk_open_udio,
        free: ours::blosc2_schunk_free,
        refresh: ours::blosc2_schunk_refresh,
        decompress_chunk: ours::blosc2_schunk_decompress_chunk,
    }
}

fn reference_api() -> Api {
    let l = reference();
    // SAFETY: each symbol has exactly this C signature in c-blosc2 3.3.5's blosc2.h.
    unsafe {
        Api {
            name: "c-blosc2",
            open_udio: std::mem::transmute(l.sym("blosc2_schunk_open_udio")),
            free: std::mem::transmute(l.sym("blosc2_schunk_free")),
            refresh: std::mem::transmute(l.sym("blosc2_schunk_refresh")),
            decompress_chunk: std::mem::transmute(l.sym("blosc2_schunk_decompress_chunk")),
        }
    }
}

/// Runs `f` with the filesystem backend, `.b2lock` locking on or off.
fn with_io<R>(locking: bool, f: impl FnOnce(*const blosc2_io) -> R) -> R {
    let mut params = blosc2_stdio_params { locking };
    let io = blosc2_io {
        id: BLOSC2_IO_FILESYSTEM as u8,
        name: c"filesystem".as_ptr(),
        params: &mut params as *mut _ as *mut c_void,
    };
    f(&io)
}

/// Creates the frame at `path` (an sframe when `sparse`) with chunk 0, through libb2frame.
fn create(path: &Path, sparse: bool, locking: bool) {
    let url = cstring(path);
    let mut cp = blosc2_cparams {
        typesize: 4,
        ..BLOSC2_CPARAMS_DEFAULTS
    };
    with_io(locking, |io| {
        let mut st = blosc2_storage {
            contiguous: !sparse,
            urlpath: url.as_ptr() as *mut c_char,
            cparams: &mut cp,
            dparams: std::ptr::null_mut(),
            io: io as *mut blosc2_io,
        };
        let d = data(0);
        // SAFETY: valid storage (its strings and params outlive the call); `d` holds
        // `d.len()` bytes; the schunk is freed here.
        unsafe {
            let sc = ours::blosc2_schunk_new(&mut st);
            assert!(!sc.is_null(), "schunk_new({})", path.display());
            assert_eq!(
                ours::blosc2_schunk_append_buffer(sc, d.as_ptr() as *const c_void, d.len() as i32),
                1
            );
            assert_eq!(ours::blosc2_schunk_free(sc), 0);
        }
    });
}

/// The writer process: opens the frame, waits (bounded) for the readers' go file, then appends
/// chunks 1..=APPENDS, appending one byte to the acknowledgement file after each append
/// returns. After each acknowledgement it waits (bounded) until the readers have completed two
/// more rounds (the readers' file grows by one byte per round): the second of them ran wholly
/// in the acknowledged state, so the readers see every state, whatever the scheduling, and their
/// other rounds overlap the commits.
#[test]
#[ignore = "the writer process of the readers test (started by it)"]
fn readers_writer_child() {
    let Ok(path) = std::env::var("B2F_READERS_PATH") else {
        return;
    };
    let path = PathBuf::from(path);
    let locking = std::env::var("B2F_READERS_LOCKING").is_ok();
    let go = PathBuf::from(std::env::var("B2F_READERS_GO").unwrap());
    let rounds = PathBuf::from(std::env::var("B2F_READERS_ROUNDS").unwrap());
    let rounds_done = || std::fs::metadata(&rounds).map_or(0, |m| m.len());
    let mut ack = std::fs::OpenOptions::new()
        .append(true)
        .open(std::env::var("B2F_READERS_ACK").unwrap())
        .unwrap();
    blosc2_init();
    let url = cstring(&path);
    let deadline = Instant::now() + LIMIT;
    while !go.exists() {
        assert!(Instant::now() < deadline, "the readers never said go");
        std::thread::sleep(Duration::from_millis(1));
    }
    with_io(locking, |io| {
        // SAFETY: a valid path and backend; the schunk is freed at the end; each buffer holds
        // the bytes passed.
        unsafe {
            let sc = ours::blosc2_schunk_open_udio(url.as_ptr(), io);
            assert!(!sc.is_null());
            for i in 1..=APPENDS {
                let d = data(i);
                let n = ours::blosc2_schunk_append_buffer(
                    sc,
                    d.as_ptr() as *const c_void,
                    d.len() as i32,
                );
                assert_eq!(n, i as i64 + 1);
                let r0 = rounds_done();
                ack.write_all(b".").unwrap();
                while rounds_done() < r0 + 2 {
                    assert!(Instant::now() < deadline, "the readers stopped reading");
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
            assert_eq!(ours::blosc2_schunk_free(sc), 0);
        }
    });
}

/// One reader handle and what it has seen.
struct Reader {
    api: Api,
    sc: Sc,
    last: i64,
    reads: u64,
    states: u64,
    transient: u64,
}

impl Reader {
    /// One read: refresh, then `nchunks` and two chunks; `acked` counts the acknowledged
    /// appends. Returns the problems found (a state that was never committed).
    fn read(&mut self, locking: bool, acked: &dyn Fn() -> i64, pick: u64) -> Result<(), String> {
        let name = self.api.name;
        let before = acked();
        // SAFETY: a live schunk of this library, used by this thread only.
        let rc = unsafe { (self.api.refresh)(self.sc) };
        if rc < 0 {
            if locking {
                return Err(format!("{name}: refresh failed with {rc} under locking"));
            }
            self.transient += 1;
            return Ok(());
        }
        // SAFETY: as above; the fields are read between calls on this thread.
        let (n, nbytes) = unsafe { ((*self.sc).nchunks, (*self.sc).nbytes) };
        let after = acked();
        self.reads += 1;
        if n != self.last {
            self.states += 1;
        }
        if n < self.last {
            return Err(format!(
                "{name}: nchunks went back from {} to {n}",
                self.last
            ));
        }
        if n < 1 + before || n > 1 + after + 1 {
            return Err(format!(
                "{name}: nchunks {n} with {before}..{after} appends acknowledged around the read"
            ));
        }
        if nbytes != n * (ITEMS as i64 * 4) {
            return Err(format!("{name}: nbytes {nbytes} for {n} chunks"));
        }
        self.last = n;
        for i in [n - 1, (pick % n as u64) as i64] {
            let mut out = vec![0u8; ITEMS * 4];
            // SAFETY: as above; `out` holds the size passed.
            let got = unsafe {
                (self.api.decompress_chunk)(
                    self.sc,
                    i,
                    out.as_mut_ptr() as *mut c_void,
                    out.len() as i32,
                )
            };
            if got < 0 && !locking {
                self.transient += 1;
                continue;
            }
            if got != out.len() as i32 {
                return Err(format!("{name}: chunk {i} of {n}: decompress gave {got}"));
            }
            if out != data(i as u32) {
                return Err(format!("{name}: chunk {i} of {n} has other bytes"));
            }
        }
        Ok(())
    }
}

fn run(sparse: bool, locking: bool) {
    blosc2_init();
    let what = format!(
        "{} {} locking",
        if sparse { "sframe" } else { "cframe" },
        if locking { "with" } else { "without" }
    );
    let dir = common::scratch::dir("b2f-readers-");
    let path = dir.join("f.b2frame");
    let ack = dir.join("ack");
    let go = dir.join("go");
    let rounds = dir.join("rounds");
    std::fs::write(&ack, b"").unwrap();
    let mut rounds_file = std::fs::File::create(&rounds).unwrap();
    create(&path, sparse, locking);

    // The backend (and its parameters) outlive both handles: a handle may keep pointers to it.
    let mut params = Box::new(blosc2_stdio_params { locking });
    let io = Box::new(blosc2_io {
        id: BLOSC2_IO_FILESYSTEM as u8,
        name: c"filesystem".as_ptr(),
        params: &mut *params as *mut _ as *mut c_void,
    });
    let url = cstring(&path);
    let mut readers: Vec<Reader> = [ours_api(), reference_api()]
        .into_iter()
        .map(|api| {
            // SAFETY: a valid path and backend, alive until the handles are freed below.
            let sc = unsafe { (api.open_udio)(url.as_ptr(), &*io) };
            assert!(!sc.is_null(), "{}: open {what}", api.name);
            Reader {
                api,
                sc,
                last: 1,
                reads: 0,
                states: 0,
                transient: 0,
            }
        })
        .collect();

    let exe = std::env::current_exe().unwrap();
    let writer = common::test_name(module_path!(), "readers_writer_child");
    let mut cmd = common::target_command(&exe);
    // --nocapture: the harness would print a failing writer's panic to its stdout (discarded).
    cmd.args([
        "--ignored",
        "--exact",
        writer.as_str(),
        "--test-threads=1",
        "--nocapture",
    ])
    .env("B2F_READERS_PATH", &path)
    .env("B2F_READERS_ACK", &ack)
    .env("B2F_READERS_GO", &go)
    .env("B2F_READERS_ROUNDS", &rounds)
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(std::fs::File::create(dir.join("writer.err")).unwrap());
    if locking {
        cmd.env("B2F_READERS_LOCKING", "1");
    }
    let mut child = common::spawn_within(cmd, LIMIT);
    std::fs::write(&go, b"").unwrap();

    let acked = || std::fs::metadata(&ack).unwrap().len() as i64;
    let deadline = Instant::now() + LIMIT;
    let mut rng = common::Rng::new(0x5EAD ^ sparse as u64 ^ (locking as u64) << 1);
    let mut failures = Vec::new();
    let mut status = None;
    // Read while the writer runs; once it has exited, until both handles show the final state
    // (a read without locking may fail transiently).
    let mut after_exit = 0;
    loop {
        for r in readers.iter_mut() {
            if let Err(e) = r.read(locking, &acked, rng.next_u64()) {
                failures.push(e);
            }
        }
        rounds_file.write_all(b".").unwrap();
        if failures.len() > 10 {
            break;
        }
        if status.is_some() {
            after_exit += 1;
            let final_state = readers.iter().all(|r| r.last == 1 + APPENDS as i64);
            if final_state || after_exit >= 100 {
                break;
            }
            continue;
        }
        status = child.try_wait().unwrap();
        if status.is_none() && Instant::now() >= deadline {
            common::kill_within(&mut child, LIMIT);
            panic!("{what}: the writer did not finish within {LIMIT:?}");
        }
    }
    let status = match status {
        Some(s) => s,
        None => common::kill_within(&mut child, LIMIT),
    };
    let err = std::fs::read_to_string(dir.join("writer.err")).unwrap_or_default();
    for r in &readers {
        eprintln!(
            "{what}: {} {} reads, {} distinct states, {} transient failures",
            r.api.name, r.reads, r.states, r.transient
        );
        // SAFETY: live schunks, freed once.
        assert_eq!(unsafe { (r.api.free)(r.sc) }, 0);
    }
    drop((io, params));
    assert!(
        status.success(),
        "{what}: the writer failed ({status:?}): {err}"
    );
    assert_eq!(acked(), APPENDS as i64, "{what}: writer acknowledgements");
    assert!(failures.is_empty(), "{what}:\n{}", failures.join("\n"));
    // The final read saw the final state, and, with locking (no read fails), every state was
    // seen (the writer waited for a whole round of reads in each).
    for r in &readers {
        assert_eq!(
            r.last,
            1 + APPENDS as i64,
            "{what}: {} final nchunks",
            r.api.name
        );
        if locking {
            assert_eq!(
                r.states, APPENDS as u64,
                "{what}: {} states seen",
                r.api.name
            );
        }
    }
}

#[test]
fn readers_see_only_committed_cframe_appends_with_locking() {
    run(false, true);
}

#[test]
fn readers_see_only_committed_cframe_appends_without_locking() {
    run(false, false);
}

#[test]
fn readers_see_only_committed_sframe_appends_with_locking() {
    run(true, true);
}

#[test]
fn readers_see_only_committed_sframe_appends_without_locking() {
    run(true, false);
}
