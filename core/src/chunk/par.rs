//! What the chunk reader and writer share for block-parallel work: per-worker states are
//! `Mutex`es indexed by the worker id [`crate::pool::Threads`] hands each job (so no two
//! concurrent jobs ever wait for the same one), locked with [`lock`].

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, ignoring poisoning (a panicking job already failed its own call).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `n` fresh per-worker states.
pub(crate) fn states<T: Default>(n: usize) -> Vec<Mutex<T>> {
    (0..n).map(|_| Mutex::new(T::default())).collect()
}
