//! Shared helpers for integration tests.
#![allow(dead_code)]

pub mod crash;
pub mod reference;
pub mod scratch;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A `Command` that starts `program`, an executable built for the target, the way cargo starts
/// test binaries: through the runner in `CARGO_TARGET_<TRIPLE>_RUNNER` when that is set (tests
/// cross-run under qemu-user or wine; scripts/cross-aarch64.sh sets it), directly otherwise.
pub fn target_command(program: impl AsRef<OsStr>) -> Command {
    match target_runner() {
        Some(runner) => {
            let mut words = runner.iter();
            let mut c = Command::new(words.next().unwrap());
            c.args(words).arg(program);
            c
        }
        None => Command::new(program),
    }
}

/// Starts `cmd`, failing the test when the start does not return within `limit`. The start
/// runs on its own thread: `spawn` waits until the child has called `exec`, and a child stuck
/// before it (a forked emulator process that never gets there) would block the test forever.
pub fn spawn_within(mut cmd: Command, limit: Duration) -> Child {
    let what = format!("{:?}", cmd.get_program());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(cmd.spawn());
    });
    match rx.recv_timeout(limit) {
        Ok(child) => child.unwrap_or_else(|e| panic!("cannot start {what}: {e}")),
        Err(_) => panic!("{what} did not start within {limit:?}"),
    }
}

/// Waits for `child` to exit; when it has not within `limit`, kills it and fails the test.
pub fn wait_within(child: &mut Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.try_wait();
            panic!(
                "process {} did not exit within {limit:?}: killed",
                child.id()
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Kills `child` (SIGKILL) and reaps it, failing the test if it is still there after `limit`.
pub fn kill_within(child: &mut Child, limit: Duration) -> ExitStatus {
    let _ = child.kill();
    wait_within(child, limit)
}

/// `cmd.output()` with a deadline: the child's stdout and stderr, and its status, or a failed
/// test (the child killed) when it has not exited within `limit`.
pub fn output_within(mut cmd: Command, limit: Duration) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = spawn_within(cmd, limit);
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut all = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut all);
            }
            let _ = tx.send(all);
        });
        rx
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let status = wait_within(&mut child, limit);
    // The pipes close when the child exits (unless a process it started holds them).
    let collect = |rx: mpsc::Receiver<Vec<u8>>| {
        rx.recv_timeout(Duration::from_secs(10))
            .expect("the child's output did not end after it exited")
    };
    Output {
        status,
        stdout: collect(out),
        stderr: collect(err),
    }
}

/// The target triple this test was built for (from its cfg; the triples b2frame is tested on
/// and their usual neighbours).
pub fn target_triple() -> String {
    let vendor = if cfg!(windows) {
        "pc"
    } else if cfg!(target_vendor = "apple") {
        "apple"
    } else {
        "unknown"
    };
    let os = if cfg!(target_os = "macos") {
        "darwin"
    } else {
        std::env::consts::OS
    };
    let env = if cfg!(target_env = "gnu") {
        "-gnu"
    } else if cfg!(target_env = "msvc") {
        "-msvc"
    } else if cfg!(target_env = "musl") {
        "-musl"
    } else {
        ""
    };
    format!("{}-{vendor}-{os}{env}", std::env::consts::ARCH)
}

/// The words of the runner for processes a test starts: `B2FRAME_CHILD_RUNNER` when set, else
/// `CARGO_TARGET_<TRIPLE>_RUNNER` for the triple this test was built for, if set.
///
/// The first exists because cargo's runner may wrap the emulator in a time bound
/// (scripts/cross-aarch64.sh runs each test binary through scripts/stall-runner.sh, which puts
/// `timeout` around qemu): a test that kills its child must kill the emulator itself, not a
/// `timeout` process that would leave the emulated child running.
pub fn target_runner() -> Option<Vec<String>> {
    // Under wine the test is itself a Windows process, which starts Windows programs directly
    // (and cannot start the Unix `wine` binary).
    if cfg!(windows) {
        return None;
    }
    let triple = target_triple().to_uppercase().replace(['-', '.'], "_");
    let words: Vec<String> = std::env::var("B2FRAME_CHILD_RUNNER")
        .or_else(|_| std::env::var(format!("CARGO_TARGET_{triple}_RUNNER")))
        .ok()?
        .split_whitespace()
        .map(str::to_string)
        .collect();
    (!words.is_empty()).then_some(words)
}

/// The C compiler for the target: `B2FRAME_TARGET_CC` (a test-only setting:
/// scripts/cross-windows.sh points it at a Windows stand-in that runs the Linux cross compiler
/// from inside wine), else `CC_<triple>` (the cc crate's name for it), else `CC`, else `cc`.
pub fn target_cc() -> String {
    let triple = target_triple().replace('-', "_");
    std::env::var("B2FRAME_TARGET_CC")
        .or_else(|_| std::env::var(format!("CC_{triple}")))
        .or_else(|_| std::env::var("CC"))
        .unwrap_or_else(|_| "cc".into())
}

/// The Python with python-blosc2 that interop tests run: `$B2FRAME_PYTHON`, else the project's
/// `.venv`; a missing one fails the test loudly (interop tests never silently skip).
pub fn python() -> PathBuf {
    if let Ok(p) = std::env::var("B2FRAME_PYTHON") {
        return PathBuf::from(p);
    }
    let p = project_root().join(".venv/bin/python");
    assert!(
        p.exists(),
        "python-blosc2 reference missing: {} (run scripts/setup-env.sh or set B2FRAME_PYTHON)",
        p.display()
    );
    p
}

/// `frame` (a whole frame, or an sframe index file) with its fingerprint type and slot zeroed:
/// b2frame fills them (docs/format/fingerprint.md), c-blosc2 writes zeros; every other byte is
/// the same, which is what byte-compatibility tests compare.
pub fn without_fingerprint(frame: &[u8]) -> Vec<u8> {
    let mut v = frame.to_vec();
    let n = v.len();
    if n >= 18 && v[n - 18] == 0xd8 {
        v[n - 17..].fill(0);
    }
    v
}

/// The project's top directory, where `.venv` lives: the directory of the package these helpers
/// are compiled into, or the workspace root above it (`cli/tests` includes them too).
pub fn project_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let top = here.ancestors().find(|p| p.join("Cargo.lock").exists());
    top.unwrap_or(here).to_path_buf()
}

/// A small deterministic PRNG (xorshift64*), so test data is reproducible without extra crates.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    pub fn fill(&mut self, buf: &mut [u8]) {
        for b in buf.iter_mut() {
            *b = self.next_u64() as u8;
        }
    }
}

/// Test data kinds shared by codec, filter and chunk tests.
pub fn data_kind(kind: &str, len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut v = vec![0u8; len];
    match kind {
        "random" => rng.fill(&mut v),
        "zeros" => {}
        "constant" => v.iter_mut().for_each(|b| *b = 0x5A),
        "seq_i32" => {
            for (i, c) in v.chunks_mut(4).enumerate() {
                let b = (i as u32).to_le_bytes();
                c.copy_from_slice(&b[..c.len()]);
            }
        }
        "small_int" => {
            for c in v.chunks_mut(4) {
                let b = (rng.below(100) as u32).to_le_bytes();
                c.copy_from_slice(&b[..c.len()]);
            }
        }
        "f64_series" => {
            for (i, c) in v.chunks_mut(8).enumerate() {
                let x = (i as f64 * 0.001).sin() * 1000.0;
                let b = x.to_le_bytes();
                c.copy_from_slice(&b[..c.len()]);
            }
        }
        "text" => {
            let words = [
                &b"blosc "[..],
                b"frame ",
                b"chunk ",
                b"the ",
                b"of ",
                b"compressed ",
            ];
            let mut i = 0;
            while i < len {
                let w = words[rng.below(words.len() as u64) as usize];
                let n = w.len().min(len - i);
                v[i..i + n].copy_from_slice(&w[..n]);
                i += n;
            }
        }
        other => panic!("unknown data kind {other}"),
    }
    v
}

/// The C API's storage description: `url` None keeps the super-chunk in memory. The pointers
/// must outlive the `blosc2_schunk_new` call the storage is passed to.
pub fn storage(
    contiguous: bool,
    url: Option<&std::ffi::CStr>,
    cparams: *mut b2frame::capi::types::blosc2_cparams,
    dparams: *mut b2frame::capi::types::blosc2_dparams,
) -> b2frame::capi::types::blosc2_storage {
    b2frame::capi::types::blosc2_storage {
        contiguous,
        urlpath: url.map_or(std::ptr::null_mut(), |u| u.as_ptr() as *mut _),
        cparams,
        dparams,
        io: std::ptr::null_mut(),
    }
}

/// `blosc2_schunk_decompress_chunk` of chunk `i` into a new buffer of `len` bytes; returns the
/// call's result and the buffer.
///
/// # Safety
/// `sc` must be a live super-chunk.
pub unsafe fn decompress_chunk(
    sc: *mut b2frame::capi::types::blosc2_schunk,
    i: usize,
    len: usize,
) -> (std::ffi::c_int, Vec<u8>) {
    let mut out = vec![0u8; len];
    // SAFETY: live schunk by contract; `out` holds `len` bytes.
    let rc = unsafe {
        b2frame::capi::schunk::blosc2_schunk_decompress_chunk(
            sc,
            i as i64,
            out.as_mut_ptr() as *mut std::ffi::c_void,
            len as i32,
        )
    };
    (rc, out)
}

/// The name libtest gives the test function `name` of the module whose `module_path!()` is
/// `module`: the module path without the binary's crate name (`reference::simd_override_child`
/// in tests/filters/, the bare name in a one-file binary). For tests that start their own binary
/// again with `--exact`, whichever binary their file is grouped into.
pub fn test_name(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_, path)) => format!("{path}::{name}"),
        None => name.to_string(),
    }
}
