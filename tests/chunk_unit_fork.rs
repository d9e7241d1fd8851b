//! A compressor whose worker pool was started before `fork()` still works in the child (the
//! pool's threads did not come along: the child starts its own instead of waiting forever).
//! Its own test binary, so that nothing else runs while the process forks. POSIX only (Windows
//! has no fork).
#![cfg(unix)]
mod common;

use b2frame::chunk::{no_hooks, CParams, Compressor, DParams, Decompressor};
use common::data_kind;

#[test]
fn pools_survive_fork() {
    let data = data_kind("f64_series", 400_000, 2);
    let cp = CParams {
        nthreads: 2,
        blocksize: 32 * 1024,
        ..Default::default()
    };
    let mut c = Compressor::new(cp, no_hooks()).unwrap();
    let mut d = Decompressor::new(DParams { nthreads: 2 }, no_hooks()).unwrap();
    let mut chunk = vec![0u8; data.len() + 32];
    let n = c.compress(&data, &mut chunk).unwrap();
    let mut out = vec![0u8; data.len()];
    d.decompress(&chunk[..n], &mut out).unwrap();
    // SAFETY: fork in a test binary whose only other threads are this test's idle pool
    // workers; the child only runs our own code and leaves with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let mut again = vec![0u8; data.len() + 32];
        let ok = c
            .compress(&data, &mut again)
            .map(|m| again[..m] == chunk[..n])
            == Ok(true)
            && d.decompress(&chunk[..n], &mut out) == Ok(data.len())
            && out == data;
        // SAFETY: terminate the child without running the parent's destructors or harness.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: waiting for the child we just forked.
    let r = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(r, pid);
    assert!(libc::WIFEXITED(status), "child did not exit normally");
    assert_eq!(libc::WEXITSTATUS(status), 0, "child failed");
}
