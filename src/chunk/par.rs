//! How the blocks of one chunk are spread over threads: a user threads callback (installed
//! through [`Hooks::run_parallel`]) if there is one, else the (de)compressor's own persistent
//! [`Pool`]. Jobs pick a free per-worker state (codec contexts, scratch) with [`acquire`].

use super::Hooks;
use crate::error::Result;
use crate::pool::Pool;
use rayon::prelude::*;
use std::sync::{Arc, Mutex, MutexGuard};

/// Locks `m`, ignoring poisoning (a panicking job already failed its own call).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A per-worker state for the calling thread, and its index (the `tid` reported to
/// pre/postfilters): the pool worker's own slot when running on the pool, else the first free
/// one.
pub(crate) fn acquire<T>(workers: &[Mutex<T>]) -> (usize, MutexGuard<'_, T>) {
    let n = workers.len();
    if let Some(i) = Pool::current_worker() {
        if i < n {
            return (i, lock(&workers[i]));
        }
    }
    for (i, w) in workers.iter().enumerate() {
        if let Ok(g) = w.try_lock() {
            return (i, g);
        }
    }
    (0, lock(&workers[0]))
}

/// Runs `job(0..njobs)` in parallel, creating the pool (of `nthreads`) on first use.
pub(crate) fn run_jobs(
    hooks: &dyn Hooks,
    pool: &mut Option<Arc<Pool>>,
    nthreads: usize,
    njobs: usize,
    job: &(dyn Fn(usize) + Sync),
) -> Result<()> {
    if hooks.run_parallel(njobs, job) {
        return Ok(());
    }
    if let Some(stale) = pool.take_if(|p| !p.is_usable()) {
        // Forked child: the pool's threads stayed in the parent; never touch it again.
        std::mem::forget(stale);
    }
    if pool.is_none() {
        *pool = Some(Pool::new(nthreads)?);
    }
    let p = pool.as_ref().expect("pool just created");
    p.install(|| (0..njobs).into_par_iter().for_each(job));
    Ok(())
}

/// `dst.copy_from_slice(src)`, cut into 2 KiB pieces when `dst` starts 1 to 63 bytes after
/// `src` modulo 4096. For those distances glibc's memcpy (`rep movsb` from 4 KiB on, on this
/// AMD EPYC with FSRM) moves about 3.5 GB/s instead of 50+ (measured: 128 KiB, distances 1-15
/// all 3.2-3.5 GB/s, 16 and above 42-57 GB/s); pieces below its `rep movsb` threshold take the
/// vector loop at full speed. The chunk writer hits such distances by construction: a raw
/// stream `4 * (s + 1)` bytes into a block buffer, copied from stream `s` of a filter buffer
/// with the same page offset.
pub(crate) fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    const PIECE: usize = 2048;
    let dist = (dst.as_ptr() as usize).wrapping_sub(src.as_ptr() as usize) % 4096;
    if src.len() <= PIECE || dist == 0 || dist >= 64 {
        dst.copy_from_slice(src);
        return;
    }
    assert_eq!(dst.len(), src.len(), "copy_bytes: lengths differ");
    for (d, s) in dst.chunks_mut(PIECE).zip(src.chunks(PIECE)) {
        d.copy_from_slice(s);
    }
}

#[cfg(test)]
mod tests {
    use super::copy_bytes;

    #[test]
    fn copy_bytes_copies_at_every_distance() {
        let src: Vec<u8> = (0..20_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut buf = vec![0u8; 30_000];
        for shift in [0usize, 1, 4, 15, 16, 63, 64, 100] {
            for len in [0usize, 1, 2048, 2049, 4096, 10_001] {
                buf.fill(0);
                copy_bytes(&mut buf[shift..shift + len], &src[..len]);
                assert_eq!(buf[shift..shift + len], src[..len], "{shift} {len}");
                assert!(buf[..shift].iter().all(|&b| b == 0));
                assert!(buf[shift + len..].iter().all(|&b| b == 0));
            }
        }
        // Overlap-free but close in memory: dst 4 bytes after src within one buffer.
        let mut one: Vec<u8> = (0..9000u32).map(|i| i as u8).collect();
        let (a, b) = one.split_at_mut(4500);
        copy_bytes(&mut b[4..4004], &a[500..4500]);
        assert!(b[4..4004]
            .iter()
            .enumerate()
            .all(|(i, &v)| v == (500 + i) as u8));
    }
}
