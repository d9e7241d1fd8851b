//! How the blocks of one chunk are spread over threads: a user threads callback (installed
//! through [`Hooks::run_parallel`]) if there is one, else the (de)compressor's own persistent
//! [`Pool`]. Jobs pick a free per-worker state (codec contexts, scratch) with [`acquire`].

use super::Hooks;
use crate::error::Result;
use crate::pool::{Pool, PoolSlot};
use rayon::prelude::*;
use std::sync::{Mutex, MutexGuard};

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
    pool: &mut PoolSlot,
    nthreads: usize,
    njobs: usize,
    job: &(dyn Fn(usize) + Sync),
) -> Result<()> {
    if hooks.run_parallel(njobs, job) {
        return Ok(());
    }
    pool.get(nthreads)?
        .install(|| (0..njobs).into_par_iter().for_each(job));
    Ok(())
}
