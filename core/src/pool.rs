//! Persistent worker threads for block-parallel chunk work.
//!
//! A [`Pool`] owns `nthreads` long-lived threads (a rayon thread pool: it lets the workers borrow
//! the caller's buffers safely for the duration of one call, so blocks are compressed and
//! decompressed in place without copying the chunk). Nothing here is global: each compressor
//! or decompressor owns or shares (through `Arc`) its pool, so two contexts used from two
//! threads never interfere. Callers run serially, without touching a pool, when a chunk has one
//! block or `nthreads == 1`, so small chunks pay nothing for threading.

#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use std::sync::Arc;

/// A fixed set of persistent worker threads.
pub struct Pool {
    inner: rayon::ThreadPool,
    nthreads: usize,
    /// Process that started the workers: after `fork()` a child has none of them.
    pid: u32,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("nthreads", &self.nthreads)
            .finish()
    }
}

impl Pool {
    /// Starts `nthreads` (≥ 1) workers. Thread creation failure is `ThreadCreate`.
    pub fn new(nthreads: usize) -> Result<Arc<Pool>> {
        if nthreads == 0 {
            return Err(Error::InvalidParam);
        }
        let inner = rayon::ThreadPoolBuilder::new()
            .num_threads(nthreads)
            .thread_name(|i| format!("b2frame-worker-{i}"))
            .build()
            .map_err(|_| Error::ThreadCreate)?;
        Ok(Arc::new(Pool {
            inner,
            nthreads,
            pid: std::process::id(),
        }))
    }

    /// Number of workers.
    pub fn nthreads(&self) -> usize {
        self.nthreads
    }

    /// Whether the workers exist in this process (false in the child of a `fork()` made after
    /// the pool started, where using it would wait forever).
    pub fn is_usable(&self) -> bool {
        self.pid == std::process::id()
    }

    /// Runs `f` inside the pool; parallel iterators used within it run on the pool's workers.
    /// Blocks the caller until `f` returns. A panic in a worker is re-raised here.
    pub fn install<R: Send, F: FnOnce() -> R + Send>(&self, f: F) -> R {
        self.inner.install(f)
    }

    /// Index (0..nthreads) of the pool worker running the caller, if any.
    pub fn current_worker() -> Option<usize> {
        rayon::current_thread_index()
    }
}

/// Where a (de)compressor takes its pool from on its first parallel call: a function giving a
/// pool of `n` workers shared with others (the C layer's per-size registry), in place of a pool
/// of its own.
pub type PoolSource = fn(usize) -> Result<Arc<Pool>>;

/// A (de)compressor's pool, started only when a call first runs blocks in parallel (as
/// c-blosc2 starts a context's threads on first use): a context that is made with
/// `nthreads > 1` but never decodes or encodes more than one block in parallel starts no
/// threads, whose stacks and malloc arenas would add to the process's memory.
#[derive(Default)]
pub struct PoolSlot {
    pool: Option<Arc<Pool>>,
    source: Option<PoolSource>,
}

impl PoolSlot {
    /// Uses `pool` from now on (its size is checked by the caller).
    pub fn set(&mut self, pool: Arc<Pool>) {
        self.pool = Some(pool);
    }

    /// Takes the pool from `source` when it is first needed (and after [`PoolSlot::reset`]).
    pub fn set_source(&mut self, source: PoolSource) {
        self.source = Some(source);
    }

    /// Forgets the pool (the thread count changed); the next parallel call gets a new one.
    pub fn reset(&mut self) {
        self.pool = None;
    }

    /// Whether a pool has been started or set.
    pub fn is_started(&self) -> bool {
        self.pool.is_some()
    }

    /// The pool of `nthreads` workers, started (or taken from the source) now if there is
    /// none yet, or if the one held was started before a `fork()` (its threads stayed in the
    /// parent: it is never touched again, not even dropped).
    pub fn get(&mut self, nthreads: usize) -> Result<&Pool> {
        if let Some(stale) = self.pool.take_if(|p| !p.is_usable()) {
            std::mem::forget(stale);
        }
        if self.pool.is_none() {
            let shared = match self.source {
                Some(source) => Some(source(nthreads)?),
                None => None,
            };
            let pool = match shared {
                Some(p) if p.is_usable() && p.nthreads() == nthreads => p,
                Some(stale) => {
                    std::mem::forget(stale);
                    Pool::new(nthreads)?
                }
                None => Pool::new(nthreads)?,
            };
            self.pool = Some(pool);
        }
        Ok(self.pool.as_deref().expect("pool just set"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn runs_on_workers_and_borrows_caller_data() {
        let pool = Pool::new(2).unwrap();
        let data: Vec<u64> = (0..1000).collect();
        let mut out = vec![0u64; 1000];
        pool.install(|| {
            out.par_chunks_mut(100)
                .zip(data.par_chunks(100))
                .for_each(|(o, d)| {
                    assert!(Pool::current_worker().unwrap() < 2);
                    o.iter_mut().zip(d).for_each(|(o, d)| *o = d * 2);
                })
        });
        assert_eq!(out[999], 1998);
        assert_eq!(Pool::new(0).err(), Some(Error::InvalidParam));
    }

    #[test]
    fn a_slot_starts_its_pool_on_first_use_from_its_source() {
        fn source(n: usize) -> Result<Arc<Pool>> {
            // A source with a pool of another size: the slot starts one of its own instead.
            Pool::new(if n == 3 { 1 } else { n })
        }
        let mut slot = PoolSlot::default();
        slot.set_source(source);
        assert!(!slot.is_started());
        assert_eq!(slot.get(2).unwrap().nthreads(), 2);
        assert!(slot.is_started());
        slot.reset();
        assert!(!slot.is_started());
        assert_eq!(slot.get(3).unwrap().nthreads(), 3);
        let mut own = PoolSlot::default();
        assert_eq!(own.get(2).unwrap().nthreads(), 2);
    }
}
