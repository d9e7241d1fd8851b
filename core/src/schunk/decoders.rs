//! The super-chunk's own decompression state: a pool of [`Decompressor`]s, each with the
//! buffer that chunks read from storage land in, checked out for one read and given back
//! after it.
//!
//! This is what lets [`SChunk`](super::SChunk) reads take `&self` from any number of threads:
//! no decoder, block mask or read buffer is ever used by two callers at once (a decoder's
//! block mask and scratch buffers are per call; two threads sharing one corrupt each other's
//! output). A read that finds the pool empty builds a decoder; at most [`KEEP_IDLE`] idle ones
//! are kept. Everything a decoder depends on (the parameters, the typesize and the `b2nd`
//! metalayer the plugin codecs read) changes only under `&mut SChunk`, which empties the pool
//! ([`Decoders::reset`]): no read can be running then.

use crate::chunk::{DParams, Decompressor, Hooks, SchunkEnv};
use crate::error::Result;
use std::sync::{Arc, Mutex, MutexGuard};

/// How many idle decoders a super-chunk keeps (more readers than this at once build and drop
/// decoders of their own).
const KEEP_IDLE: usize = 16;

/// The largest read buffer a pooled decoder keeps between reads (bigger chunks get a buffer
/// per read).
const KEEP_BUFFER: usize = 8 << 20;

/// One checked-out decoder and its read buffer.
#[derive(Debug)]
pub(super) struct Pooled {
    pub(super) decoder: Decompressor,
    /// Chunks read from storage land here ([`crate::frame::io::sized`] reuses it).
    pub(super) buf: Vec<u8>,
    /// The pool's generation it was built in ([`Decoders::reset`] moves it on).
    generation: u64,
}

/// The pool (see the module docs).
#[derive(Default)]
pub(super) struct Decoders {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The plugin hooks every decoder of this super-chunk shares (built at the first read).
    hooks: Option<Arc<dyn Hooks>>,
    idle: Vec<Pooled>,
    generation: u64,
}

impl std::fmt::Debug for Decoders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoders")
            .field("idle", &self.lock().idle.len())
            .finish()
    }
}

impl Decoders {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic inside a read drops its decoder rather than giving it back: the pool itself
        // is always consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets every decoder (the parameters or the metalayers they read changed); one
    /// checked out now is dropped when given back.
    pub(super) fn reset(&mut self) {
        let s = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        let generation = s.generation + 1;
        *s = State {
            generation,
            ..State::default()
        };
    }

    /// Runs `f` with a decoder of its own ([`Decoders::take`], given back after).
    pub(super) fn with<T>(
        &self,
        dparams: &DParams,
        env: impl FnOnce() -> SchunkEnv,
        f: impl FnOnce(&mut Pooled) -> Result<T>,
    ) -> Result<T> {
        let mut p = self.take(dparams, env)?;
        let r = f(&mut p);
        self.give_back(p);
        r
    }

    /// A decoder for the caller alone: an idle one, or a new one for `dparams` whose plugins
    /// see `env()`. Give it back with [`Decoders::give_back`] (or drop it).
    pub(super) fn take(
        &self,
        dparams: &DParams,
        env: impl FnOnce() -> SchunkEnv,
    ) -> Result<Pooled> {
        let idle = {
            let mut s = self.lock();
            let generation = s.generation;
            let p = s.idle.pop();
            p.ok_or_else(|| {
                let hooks = s
                    .hooks
                    .get_or_insert_with(|| crate::chunk::plugins::env_hooks(env()))
                    .clone();
                (hooks, generation)
            })
        };
        match idle {
            Ok(p) => Ok(p),
            Err((hooks, generation)) => {
                let dp = DParams {
                    nthreads: dparams.nthreads.max(1),
                };
                Ok(Pooled {
                    decoder: Decompressor::new(dp, hooks)?,
                    buf: Vec::new(),
                    generation,
                })
            }
        }
    }

    /// Returns a decoder [`Decoders::take`] gave (kept if the pool has room and nothing it
    /// depends on changed meanwhile).
    pub(super) fn give_back(&self, mut p: Pooled) {
        if p.buf.capacity() > KEEP_BUFFER {
            p.buf = Vec::new();
        }
        let mut s = self.lock();
        if s.idle.len() < KEEP_IDLE && p.generation == s.generation {
            s.idle.push(p);
        }
    }
}
