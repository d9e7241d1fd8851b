//! The schunk's own decompression context shared by readers: [`DctxState`] (the read buffer
//! kept with the `dctx`), the spare contexts readers use when the `dctx` is busy ([`Spares`]),
//! and the [`Reader`] methods that claim one or the other to decode.

use super::{lock, thread_token, HandleSync, Reader};
use crate::capi::chunk::{context_cell, context_mut, ctx_dparams, free_ctx, new_dctx};
use crate::capi::handle::{ChunkCodec, CtxCodec};
use crate::capi::types::{blosc2_context, blosc2_dparams, BLOSC2_DPARAMS_DEFAULTS};
use crate::error::{Error, Result};
use std::ptr::addr_of_mut;
use std::sync::atomic::Ordering;
use std::sync::{MutexGuard, TryLockError};

/// Decompression contexts made from the schunk's `dctx` parameters, for readers that find the
/// `dctx` busy.
pub(super) struct Spares {
    /// The parameters to build spares from: a snapshot of the `dctx` (by address) taken by the
    /// last thread that used it; `None` when it has a postfilter (spares would lose its
    /// `nchunk`) or could not be read.
    template: Option<(usize, blosc2_dparams)>,
    /// Bumped whenever `template` changes; spares made under another generation are freed.
    generation: u64,
    idle: Vec<(u64, *mut blosc2_context)>,
}

// SAFETY: the contexts are owned by this list (created with `new_dctx`, used by one
// thread at a time after being popped); the template's pointers are only compared and copied.
unsafe impl Send for Spares {}

impl Spares {
    pub(super) fn new() -> Spares {
        Spares {
            template: None,
            generation: 0,
            idle: Vec::new(),
        }
    }
}

impl Drop for Spares {
    fn drop(&mut self) {
        for (_, c) in self.idle.drain(..) {
            // SAFETY: each idle context is ours and no longer used.
            unsafe { free_ctx(c) };
        }
    }
}

/// What identifies the parameters spares are built from: the `dctx`'s address, its
/// `nthreads` and `schunk`, and whether it has a postfilter.
type DctxKey = (usize, i16, usize, bool);

/// What the user of the schunk's `dctx` keeps between reads, under the `dctx` mutex.
#[derive(Default)]
pub(super) struct DctxState {
    /// Chunks read from files land here (see [`Reader::decode`]).
    buf: Vec<u8>,
    /// The key of the `dctx` the spare template was last taken from: an unchanged `dctx`
    /// skips the spares lock.
    noted: Option<DctxKey>,
}

/// The largest read buffer a handle keeps between reads (bigger chunks get a buffer per read).
const KEEP_BUFFER: usize = 8 << 20;

impl DctxState {
    /// Drops a read buffer too large to keep.
    fn trim(&mut self) {
        if self.buf.capacity() > KEEP_BUFFER {
            self.buf = Vec::new();
        }
    }
}

impl HandleSync {
    /// Records what spares for `dctx` are built from (called by the `dctx`'s user, or before
    /// the schunk is shared). `noted` is the key recorded last (kept under the `dctx` mutex,
    /// like every call of this): when it matches, the template is current already.
    pub(crate) fn note_dctx(&self, dctx: *mut blosc2_context, noted: &mut Option<DctxKey>) {
        // SAFETY: the caller holds the `dctx` mutex (or the schunk is not shared yet), so
        // nobody else uses the context.
        let got = unsafe { ctx_dparams(dctx) };
        let ok = got.is_ok();
        let dp = got.unwrap_or(BLOSC2_DPARAMS_DEFAULTS);
        let key = (
            dctx as usize,
            dp.nthreads,
            dp.schunk as usize,
            dp.postfilter.is_some(),
        );
        if ok && *noted == Some(key) {
            return;
        }
        let template = (ok && dp.postfilter.is_none()).then_some((dctx as usize, dp));
        let mut s = lock(&self.spares);
        let same = match (&s.template, &template) {
            (None, None) => true,
            (Some((a, x)), Some((b, y))) => {
                a == b && x.nthreads == y.nthreads && x.schunk == y.schunk
            }
            _ => false,
        };
        if !same {
            s.template = template;
            s.generation += 1;
            for (_, c) in s.idle.drain(..) {
                // SAFETY: idle spares are ours and unused.
                unsafe { free_ctx(c) };
            }
        }
        *noted = ok.then_some(key);
    }

    /// A spare context for `dctx` (reused or new) and its generation; None when spares are not
    /// allowed for it.
    fn take_spare(&self, dctx: *mut blosc2_context) -> Option<(u64, *mut blosc2_context)> {
        let mut s = lock(&self.spares);
        let (addr, dp) = s.template?;
        if addr != dctx as usize {
            return None;
        }
        if let Some(c) = s.idle.pop() {
            return Some(c);
        }
        new_dctx(&dp).ok().map(|c| (s.generation, c))
    }

    fn give_back(&self, (generation, c): (u64, *mut blosc2_context)) {
        let mut s = lock(&self.spares);
        if generation == s.generation {
            s.idle.push((generation, c));
        } else {
            drop(s);
            // SAFETY: a spare of an outdated generation, ours and no longer used.
            unsafe { free_ctx(c) };
        }
    }
}

/// Clears the `dctx` owner when the decode ends (even by panic).
struct DctxUse<'a> {
    sync: &'a HandleSync,
    g: MutexGuard<'a, DctxState>,
}

impl Drop for DctxUse<'_> {
    fn drop(&mut self) {
        self.sync.dctx_owner.store(0, Ordering::Relaxed);
    }
}

impl Reader<'_> {
    /// Takes the schunk's `dctx` if it is free (or, with `wait`, when it becomes free);
    /// None when busy or used below us on this thread.
    fn claim_dctx(&self, wait: bool) -> Result<Option<DctxUse<'_>>> {
        let me = match self.me {
            0 => thread_token(),
            me => me,
        };
        if self.sync.dctx_owner.load(Ordering::Relaxed) == me {
            return if wait { Err(Error::Failure) } else { Ok(None) };
        }
        let g = match self.sync.dctx.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) if wait => lock(&self.sync.dctx),
            Err(TryLockError::WouldBlock) => return Ok(None),
        };
        self.sync.dctx_owner.store(me, Ordering::Relaxed);
        Ok(Some(DctxUse { sync: self.sync, g }))
    }

    /// Runs `f` on a read buffer for chunk `nchunk`, setting `current_nchunk` (what c-blosc2
    /// does on every chunk access) when this thread can take the `dctx` mutex right away: it is
    /// the value the `dctx`'s postfilter reads, so only the `dctx`'s user may write it, and the
    /// buffer is then the one kept with the `dctx` (see [`Reader::decode`]). Under contention
    /// (or when this thread is decoding with the `dctx` below us) `current_nchunk` stays at
    /// the other user's chunk and `f` gets a fresh buffer.
    ///
    /// `f` must run no user code (it cannot re-enter): the mutex is taken without recording
    /// this thread as the `dctx`'s user, which only re-entrant claims would look at.
    pub(crate) fn with_buffer<T>(&self, nchunk: i64, f: impl FnOnce(&mut Vec<u8>) -> T) -> T {
        let mut g = match self.sync.dctx.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return f(&mut Vec::new()),
        };
        if !self.sync.pinned.load(Ordering::Acquire) {
            // SAFETY: we hold the `dctx` mutex, the only writer of this field besides the
            // exclusive lock's holder (which cannot coexist with our shared lock).
            unsafe { addr_of_mut!((*self.p).current_nchunk).write(nchunk) };
        }
        let r = f(&mut g.buf);
        g.trim();
        r
    }

    /// Runs `f` with the schunk's `dctx` itself, waiting for it (for operations spares cannot
    /// do, such as VL-block access through the C context API).
    pub(crate) fn with_dctx<T>(
        &self,
        f: impl FnOnce(*mut blosc2_context) -> Result<T>,
    ) -> Result<T> {
        let mut u = self.claim_dctx(true)?.ok_or(Error::Failure)?;
        let dctx = self.dctx();
        self.sync.note_dctx(dctx, &mut u.g.noted);
        f(dctx)
    }

    /// Runs `f` with a decoder: the schunk's `dctx` when free (setting `current_nchunk` to
    /// `nchunk` if given, as c-blosc2 does), else a spare built from the same parameters, else
    /// (postfilter) the `dctx` after waiting for it. `f` also gets a buffer for chunks read
    /// from files: the one kept with the `dctx` (so sequential reads of one handle allocate
    /// and zero-fill it only when a chunk is larger than any before), a fresh one with spares.
    pub(crate) fn decode<T>(
        &self,
        nchunk: Option<i64>,
        f: impl FnOnce(&mut dyn ChunkCodec, &mut Vec<u8>) -> Result<T>,
    ) -> Result<T> {
        self.decode_masked(nchunk, None, f)
    }

    /// [`Reader::decode`] whose first decompression skips the blocks `mask` marks (`true`):
    /// the mask belongs to this call, whichever context decodes it. Without one, the mask this
    /// thread set on the `dctx` with `blosc2_set_maskout` is used, as c-blosc2 uses its
    /// context's.
    pub(crate) fn decode_masked<T>(
        &self,
        nchunk: Option<i64>,
        mask: Option<Vec<bool>>,
        f: impl FnOnce(&mut dyn ChunkCodec, &mut Vec<u8>) -> Result<T>,
    ) -> Result<T> {
        let dctx = self.dctx();
        // SAFETY: the schunk's live context (or one the caller put there).
        let cell = unsafe { context_cell(dctx) }?;
        // The `dctx` when both our claim and the context itself are free: a C caller may be
        // using the context directly (`blosc2_decompress_ctx(schunk->dctx, ...)`).
        let free = match self.claim_dctx(false)? {
            Some(u) => cell.try_lock().map(|g| (u, g)),
            None => None,
        };
        let (mut u, g) = match free {
            Some(x) => x,
            None => match self.sync.take_spare(dctx) {
                Some(spare) => {
                    // SAFETY: a spare context of ours, live until given back.
                    let r = unsafe { context_mut(spare.1) }.and_then(|ctx| {
                        let mut codec = CtxCodec {
                            ctx,
                            mask_from: Some(cell),
                            mask,
                            nchunk_slot: std::ptr::null_mut(),
                        };
                        f(&mut codec, &mut Vec::new())
                    });
                    self.sync.give_back(spare);
                    return r;
                }
                None => {
                    let u = self.claim_dctx(true)?.ok_or(Error::Failure)?;
                    let g = cell.lock()?;
                    (u, g)
                }
            },
        };
        let pinned = self.sync.pinned.load(Ordering::Acquire);
        if let Some(n) = nchunk.filter(|_| !pinned) {
            // SAFETY: as in `with_buffer`: we hold the `dctx` mutex.
            unsafe { addr_of_mut!((*self.p).current_nchunk).write(n) };
        }
        self.sync.note_dctx(dctx, &mut u.g.noted);
        let mut codec = CtxCodec {
            ctx: g,
            mask_from: Some(cell),
            mask,
            // Chunk-by-chunk reads (slices) set it per chunk, as c-blosc2's do.
            nchunk_slot: if pinned {
                std::ptr::null_mut()
            } else {
                // SAFETY: a field of the live C struct (no reference is made).
                unsafe { addr_of_mut!((*self.p).current_nchunk) }
            },
        };
        let r = f(&mut codec, &mut u.g.buf);
        drop(codec);
        u.g.trim();
        drop(u);
        r
    }
}
