//! Threads for block-parallel chunk work: how many a compressor or decompressor uses
//! ([`Threads`], the one place that checks and keeps that number) and where they come from.
//!
//! A [`Pool`] owns long-lived worker threads (a rayon thread pool: it lets the workers borrow
//! the caller's buffers for the duration of one call, so blocks are compressed and
//! decompressed in place without copying the chunk). A parallel call of `n` threads runs on the
//! calling thread plus `n - 1` pool workers: the caller works instead of waiting, so a call
//! wakes one thread fewer and `nthreads = 2` costs one extra thread, not two. Pools are shared
//! by every (de)compressor that needs the same number of helpers ([`Pool::shared`], as c-blosc2
//! shares one pool per distinct `nthreads`), held weakly: a pool lives while one of them holds
//! it. Instead of a pool, the work can go to a [`Runner`]: one given to a [`Threads`], else the
//! process-wide one ([`set_global_runner`], what `blosc2_set_threads_callback` installs).
//! Calls run serially, without touching a pool, when a chunk has one block or `nthreads == 1`,
//! so small chunks pay nothing for threading.

#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

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

/// The pools [`Pool::shared`] hands out, by size (weak: a pool lives while someone holds it).
static SHARED: Mutex<Vec<(usize, Weak<Pool>)>> = Mutex::new(Vec::new());

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

    /// The process's pool of `nthreads` workers, started now if nobody holds one.
    pub fn shared(nthreads: usize) -> Result<Arc<Pool>> {
        let mut pools = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        pools.retain(|(_, w)| w.strong_count() > 0);
        let held = pools
            .iter()
            .filter(|(n, _)| *n == nthreads)
            .find_map(|(_, w)| w.upgrade());
        match held {
            Some(p) if p.is_usable() => return Ok(p),
            // Started before a `fork()`: its threads stayed in the parent. Never touched
            // again, not even dropped (that would wait for them).
            Some(stale) => {
                pools.retain(|(_, w)| !std::ptr::eq(w.as_ptr(), Arc::as_ptr(&stale)));
                std::mem::forget(stale);
            }
            None => {}
        }
        let p = Pool::new(nthreads)?;
        pools.push((nthreads, Arc::downgrade(&p)));
        Ok(p)
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

    /// Runs `worker(0)` on the calling thread and `worker(1..n)` on the pool, returning when
    /// all are done. A panic in any of them is re-raised here.
    fn run_with_caller(&self, n: usize, worker: &(dyn Fn(usize) + Sync)) {
        self.inner.in_place_scope(|s| {
            for tid in 1..n {
                s.spawn(move |_| worker(tid));
            }
            worker(0);
        });
    }
}

/// Runs parallel work somewhere else than the core's pools: a user's thread pool (in C,
/// `blosc2_set_threads_callback`).
pub trait Runner: Send + Sync {
    /// Calls `worker(i)` exactly once for every `i` in `0..nworkers`, in any order, possibly
    /// at the same time on several threads, and returns when every call has returned.
    fn run(&self, nworkers: usize, worker: &(dyn Fn(usize) + Sync));
}

/// The runner every [`Threads`] without one of its own uses (`None`: the pools).
static GLOBAL_RUNNER: RwLock<Option<Arc<dyn Runner>>> = RwLock::new(None);

/// Sends the parallel work of every [`Threads`] that has no runner of its own to `runner`
/// (`None`: back to the pools), from the next parallel call on.
pub fn set_global_runner(runner: Option<Arc<dyn Runner>>) {
    *GLOBAL_RUNNER.write().unwrap_or_else(|e| e.into_inner()) = runner;
}

fn global_runner() -> Option<Arc<dyn Runner>> {
    GLOBAL_RUNNER
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// How many threads one compressor or decompressor works with, and where the helpers come
/// from: the number is checked here (at least 1) and kept here only. The helpers (`n - 1`
/// workers of a [`Pool`], or a [`Runner`]) are taken on the first parallel call (as c-blosc2
/// starts a context's threads on first use): a (de)compressor made with `n > 1` that never
/// works on more than one block at once starts no threads, whose stacks and malloc arenas
/// would add to the process's memory.
pub struct Threads {
    n: usize,
    pool: Option<Arc<Pool>>,
    runner: Option<Arc<dyn Runner>>,
}

impl std::fmt::Debug for Threads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Threads").field("n", &self.n).finish()
    }
}

impl Threads {
    /// `nthreads` threads (`InvalidParam` below 1).
    pub fn new(nthreads: i16) -> Result<Threads> {
        Ok(Threads {
            n: Self::check(nthreads)?,
            pool: None,
            runner: None,
        })
    }

    fn check(nthreads: i16) -> Result<usize> {
        usize::try_from(nthreads)
            .ok()
            .filter(|&n| n >= 1)
            .ok_or(Error::InvalidParam)
    }

    /// The number of threads.
    pub fn count(&self) -> usize {
        self.n
    }

    /// Changes the number of threads (`InvalidParam` below 1; the pool held is dropped when it
    /// changes). Returns whether it changed.
    pub fn set_count(&mut self, nthreads: i16) -> Result<bool> {
        let n = Self::check(nthreads)?;
        if n == self.n {
            return Ok(false);
        }
        self.n = n;
        self.pool = None;
        Ok(true)
    }

    /// Uses `pool`'s workers as helpers (shared with others; any size, `InvalidParam` for a
    /// single thread, which never uses one).
    pub fn set_pool(&mut self, pool: Arc<Pool>) -> Result<()> {
        if self.n < 2 {
            return Err(Error::InvalidParam);
        }
        self.pool = Some(pool);
        Ok(())
    }

    /// Runs the parallel work on `runner` instead of a pool (and of the global runner).
    pub fn set_runner(&mut self, runner: Arc<dyn Runner>) {
        self.runner = Some(runner);
    }

    /// Whether the helper threads have been started or set (for tests of when they start).
    pub fn is_started(&self) -> bool {
        self.pool.is_some()
    }

    /// Runs `worker(tid)` once for every `tid` in `0..nworkers.min(n)`, in parallel; each
    /// `tid` is a distinct worker (0 is the calling thread when on a pool).
    pub fn run_workers(&mut self, nworkers: usize, worker: &(dyn Fn(usize) + Sync)) -> Result<()> {
        let n = nworkers.min(self.n);
        if n <= 1 {
            (0..n).for_each(worker);
            return Ok(());
        }
        if let Some(r) = self.runner.clone().or_else(global_runner) {
            r.run(n, worker);
            return Ok(());
        }
        self.helpers()?.run_with_caller(n, worker);
        Ok(())
    }

    /// Runs `job(tid, j)` for every `j` in `0..njobs`, in parallel: each worker `tid` claims the
    /// next job until none are left.
    pub fn for_each(&mut self, njobs: usize, job: &(dyn Fn(usize, usize) + Sync)) -> Result<()> {
        let next = AtomicUsize::new(0);
        let worker = |tid: usize| loop {
            let j = next.fetch_add(1, Ordering::Relaxed);
            if j >= njobs {
                break;
            }
            job(tid, j);
        };
        self.run_workers(njobs, &worker)
    }

    /// The pool of helpers, taken now if there is none yet or the one held was started before
    /// a `fork()` (its threads stayed in the parent: never touched again, not even dropped).
    fn helpers(&mut self) -> Result<&Pool> {
        if let Some(stale) = self.pool.take_if(|p| !p.is_usable()) {
            std::mem::forget(stale);
        }
        if self.pool.is_none() {
            self.pool = Some(Pool::shared(self.n - 1)?);
        }
        Ok(self.pool.as_deref().expect("pool just set"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;
    use std::sync::Mutex;

    #[test]
    fn runs_on_workers_and_borrows_caller_data() {
        let pool = Pool::new(2).unwrap();
        let data: Vec<u64> = (0..1000).collect();
        let mut out = vec![0u64; 1000];
        pool.install(|| {
            out.par_chunks_mut(100)
                .zip(data.par_chunks(100))
                .for_each(|(o, d)| o.iter_mut().zip(d).for_each(|(o, d)| *o = d * 2))
        });
        assert_eq!(out[999], 1998);
        assert_eq!(Pool::new(0).err(), Some(Error::InvalidParam));
    }

    #[test]
    fn pools_are_shared_per_size_while_in_use() {
        let a = Pool::shared(7).unwrap();
        let b = Pool::shared(7).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let c = Pool::shared(9).unwrap();
        assert_eq!(c.nthreads(), 9);
        let weak = Arc::downgrade(&a);
        drop((a, b));
        assert!(weak.upgrade().is_none());
    }

    #[test]
    fn threads_run_every_job_once_on_distinct_workers() {
        assert_eq!(Threads::new(0).err(), Some(Error::InvalidParam));
        for n in [1i16, 2, 3] {
            let mut t = Threads::new(n).unwrap();
            let seen: Vec<Mutex<Vec<usize>>> = (0..n).map(|_| Mutex::new(Vec::new())).collect();
            t.for_each(50, &|tid, j| seen[tid].lock().unwrap().push(j))
                .unwrap();
            let mut all: Vec<usize> = seen
                .iter()
                .flat_map(|s| s.lock().unwrap().clone())
                .collect();
            all.sort();
            assert_eq!(all, (0..50).collect::<Vec<_>>());
            assert_eq!(t.is_started(), n > 1, "{n}");
        }
    }

    #[test]
    fn threads_take_a_shared_pool_on_first_use_and_drop_it_when_the_count_changes() {
        let mut a = Threads::new(3).unwrap();
        let mut b = Threads::new(3).unwrap();
        assert!(!a.is_started());
        a.run_workers(3, &|_| {}).unwrap();
        b.run_workers(3, &|_| {}).unwrap();
        let (pa, pb) = (a.pool.clone().unwrap(), b.pool.clone().unwrap());
        assert!(Arc::ptr_eq(&pa, &pb), "one pool per size");
        assert_eq!(pa.nthreads(), 2, "the caller is the third thread");
        assert!(!a.set_count(3).unwrap());
        assert!(a.set_count(2).unwrap());
        assert!(!a.is_started());
        assert_eq!(a.set_count(-1).err(), Some(Error::InvalidParam));
        assert_eq!(
            Threads::new(1).unwrap().set_pool(pa).err(),
            Some(Error::InvalidParam)
        );
    }

    #[test]
    fn a_runner_of_its_own_takes_the_work() {
        struct Backwards(AtomicUsize);
        impl Runner for Backwards {
            fn run(&self, nworkers: usize, worker: &(dyn Fn(usize) + Sync)) {
                self.0.fetch_add(nworkers, Ordering::Relaxed);
                (0..nworkers).rev().for_each(worker);
            }
        }
        let r = Arc::new(Backwards(AtomicUsize::new(0)));
        let mut t = Threads::new(4).unwrap();
        t.set_runner(r.clone());
        let hits = AtomicUsize::new(0);
        t.for_each(3, &|tid, _| {
            assert!(tid < 3);
            hits.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(hits.into_inner(), 3);
        assert_eq!(r.0.load(Ordering::Relaxed), 3, "no more workers than jobs");
        assert!(!t.is_started(), "no pool");
    }
}
