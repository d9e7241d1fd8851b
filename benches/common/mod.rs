//! Timing helpers shared by the benches that race ours against c-blosc2 in one run
//! (`#[path = "common/mod.rs"] mod timing;`). The machine is shared, so both sides are timed in
//! alternating batches (both see the same load) and the best batch counts.
#![allow(dead_code)]

use std::time::Instant;

/// CPU time of the calling thread (user + system), in seconds.
pub fn thread_cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer for clock_gettime.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Monotonic wall-clock seconds since the first call on this thread.
pub fn wall_secs() -> f64 {
    thread_local!(static T0: Instant = Instant::now());
    T0.with(|t| t.elapsed().as_secs_f64())
}

/// Calls per clock read: enough calls of `f` that one group takes at least ~100 us of `clock`.
/// Reading the clock once per call is not an option: the thread CPU clock is a system call
/// here (~650 ns per read on this VM, `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` in a C loop),
/// which would add that much to every call of both sides and pull every ratio towards 1.
/// The largest of three calibrations: one preemption during a calibration would otherwise
/// stop it at a group of a single call.
fn group_size(clock: fn() -> f64, f: &mut dyn FnMut()) -> u64 {
    let once = |f: &mut dyn FnMut()| {
        let mut reps = 1u64;
        loop {
            let t = clock();
            for _ in 0..reps {
                f();
            }
            if clock() - t >= 100e-6 || reps >= 1 << 20 {
                return reps;
            }
            reps *= 2;
        }
    };
    (0..3).map(|_| once(f)).max().unwrap_or(1)
}

/// Best seconds per call of `a` and of `b` over `rounds` alternating batches, each batch
/// calling its side (in groups of calls between clock reads, see [`group_size`]) until at
/// least `batch` seconds of `clock` have passed.
pub fn best_secs_pair(
    clock: fn() -> f64,
    rounds: usize,
    batch: f64,
    mut a: impl FnMut(),
    mut b: impl FnMut(),
) -> (f64, f64) {
    let run = |f: &mut dyn FnMut(), reps: u64| {
        let mut iters = 0u64;
        let t = clock();
        let mut el = 0.0;
        while el < batch {
            for _ in 0..reps {
                f();
            }
            iters += reps;
            el = clock() - t;
        }
        el / iters as f64
    };
    let reps_a = group_size(clock, &mut a);
    let reps_b = group_size(clock, &mut b);
    let (mut best_a, mut best_b) = (f64::MAX, f64::MAX);
    for _ in 0..rounds {
        best_a = best_a.min(run(&mut a, reps_a));
        best_b = best_b.min(run(&mut b, reps_b));
    }
    (best_a, best_b)
}

/// Best GB/s of `a` and of `b` (each call handles `bytes` bytes) over `rounds` alternating
/// batches of at least `batch` seconds, on the thread CPU clock or the wall clock.
pub fn measure_pair(
    bytes: usize,
    cpu_clock: bool,
    rounds: usize,
    batch: f64,
    a: impl FnMut(),
    b: impl FnMut(),
) -> (f64, f64) {
    let clock = if cpu_clock {
        thread_cpu_secs
    } else {
        wall_secs
    };
    let (ta, tb) = best_secs_pair(clock, rounds, batch, a, b);
    (bytes as f64 / ta / 1e9, bytes as f64 / tb / 1e9)
}

/// An environment knob, or `default` when unset or unparsable.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The 1-minute load average (first field of /proc/loadavg), as text.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

/// A zeroed `len`-byte buffer that starts `offset` bytes after a 4 KiB boundary. The benches give
/// our side and the reference's side buffers at the same offsets, so that neither library's copies
/// get a luckier source/destination distance than the other's: where the heap happens to put
/// plain `Vec`s moves glibc's `memcpy` (and so both libraries) by up to ~20% between processes.
pub struct Placed {
    buf: Vec<u8>,
    start: usize,
    len: usize,
}

impl Placed {
    pub fn new(len: usize, offset: usize) -> Placed {
        let buf = vec![0u8; len + 8192];
        let start = (offset % 4096).wrapping_sub(buf.as_ptr() as usize) % 4096;
        Placed { buf, start, len }
    }
}

impl std::ops::Deref for Placed {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf[self.start..self.start + self.len]
    }
}

impl std::ops::DerefMut for Placed {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..self.start + self.len]
    }
}
