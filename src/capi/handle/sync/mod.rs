//! Per-handle synchronisation: any number of threads may use one `blosc2_schunk*` at once
//! (c-blosc2 cannot, its issue #147).
//!
//! Every super-chunk block owns a [`HandleSync`]:
//! - a mutation `Mutex` ([`Writer`]): every mutation holds it from start to end, so mutations
//!   run one at a time and own the schunk's `cctx`. It records its holder's thread.
//! - an `RwLock` over the Rust state and the C struct. A mutation takes it exclusively
//!   ([`exclusive`]) only to change the state: an append or a slice update first compresses
//!   its chunk holding the mutation mutex alone ([`Writer::compress`]), then commits it under
//!   the exclusive lock. Reads take it shared ([`read_op`]) and run in parallel; handles whose
//!   frame goes through user I/O callbacks or the `.b2lock` file lock read under the exclusive
//!   lock. Chunk reads are positioned (`pread`, per-access streams for sframes) and never move
//!   shared state. The C struct's counters, mirrors and `data` are only written under the
//!   exclusive lock.
//! - a `Mutex` over the schunk's own `dctx` ([`dctx`]; and `current_nchunk`, which its
//!   postfilter reads, and a buffer that chunks read from files land in, reused across reads).
//!   A reader that finds it taken decodes with a spare context built from the same parameters
//!   instead of waiting, unless the `dctx` has a postfilter (whose `nchunk` must be right): then
//!   it waits. While a mutation compresses, `current_nchunk` is pinned to the chunk being
//!   written (its prefilter reads it): readers leave it alone until the compression ends, so a
//!   postfilter decoding at that moment in another thread sees the pinned number.
//! - which super-chunks a thread holds shared is recorded per thread ([`held`]), so a read
//!   nested in a callback of a read is recognised.
//! - a stale disk frame (another handle changed it) is noticed under the shared lock and
//!   re-read under the exclusive one, like every other change to the handle.
//!
//! Re-entrancy (callbacks calling into the super-chunk they run for):
//! - prefilters and user codecs/filters of an append or slice update run while only the
//!   mutation mutex is held: they may read the same super-chunk (`vlmeta_get`, `meta_*`,
//!   `get_chunk`, `decompress_chunk` of other chunks, `get_cparams`, ...) from the calling
//!   thread and from block-parallel worker threads (readers need only the shared lock, which
//!   nothing holds while a chunk is compressed), as c-blosc2 allows. A mutation from such a
//!   callback fails with `BLOSC2_ERROR_FAILURE` on the calling thread; from a worker thread it
//!   would wait for the outer mutation forever: do not.
//! - callbacks of reads (postfilters, codecs while decoding) run under the shared lock: nested
//!   reads on the same thread reuse it (they never queue behind a waiting writer); a mutation,
//!   or a read needing the `dctx` this thread is using, fails with `BLOSC2_ERROR_FAILURE`. From
//!   worker threads, reads work unless a writer is queued at that moment (then they wait for a
//!   reader that waits for them): nested reads from decoding workers are at the caller's risk.
//! - callbacks under the exclusive lock (user I/O during a commit or a serialised read) get
//!   `BLOSC2_ERROR_FAILURE` for any call on the same super-chunk from the same thread.

use super::{blosc2_schunk, ChunkCodec, CtxCodec, Handle, SchunkBlock, TAG};
use crate::capi::types::{blosc2_context, blosc2_storage};
use crate::error::{Error, Result};
use std::ptr::{addr_of, addr_of_mut};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError};

mod dctx;
mod held;

use dctx::{DctxState, Spares};
use held::{held_here, thread_token, token_of, HELD};

/// Locks a mutex, ignoring poisoning (a panic inside an operation is caught at the C boundary
/// and leaves the state as consistent as the failed operation left it).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The synchronisation state of one super-chunk (see the module docs).
pub(crate) struct HandleSync {
    /// Serialises mutations (and the use of the schunk's `cctx`).
    mutation: Mutex<()>,
    /// [`thread_token`] of the mutation mutex's holder, 0 when none.
    mutator: AtomicUsize,
    rw: RwLock<()>,
    /// [`thread_token`] of the exclusive holder, 0 when none.
    writer: AtomicUsize,
    /// `current_nchunk` belongs to a compressing mutation (readers must not write it).
    pinned: AtomicBool,
    /// Guards the `dctx` (and what its user keeps between reads).
    dctx: Mutex<DctxState>,
    /// [`thread_token`] of the thread using the shared `dctx`, 0 when none.
    dctx_owner: AtomicUsize,
    spares: Mutex<Spares>,
}

impl HandleSync {
    pub(crate) fn new() -> HandleSync {
        HandleSync {
            mutation: Mutex::new(()),
            mutator: AtomicUsize::new(0),
            rw: RwLock::new(()),
            writer: AtomicUsize::new(0),
            pinned: AtomicBool::new(false),
            dctx: Mutex::new(DctxState::default()),
            dctx_owner: AtomicUsize::new(0),
            spares: Mutex::new(Spares::new()),
        }
    }
}

/// The parts of a validated block, read without forming a reference to the whole block
/// (another thread may hold the C struct mutably under the exclusive lock).
#[derive(Clone, Copy)]
pub(crate) struct Block<'a> {
    p: *mut blosc2_schunk,
    h: *mut Handle,
    sync: &'a HandleSync,
}

/// Validates `p` as a block of ours.
///
/// # Safety
/// `p` NULL or a live pointer returned by this module.
pub(crate) unsafe fn block<'a>(p: *mut blosc2_schunk) -> Result<Block<'a>> {
    if p.is_null() {
        return Err(Error::NullPointer);
    }
    let b = p as *mut SchunkBlock;
    // SAFETY: by the contract the block is live; the fields after the C struct are written
    // only by `alloc_block` (before sharing) and `blosc2_schunk_free` (after the last user),
    // so plain reads of them do not race.
    let (tag, h, sync) = unsafe {
        (
            addr_of!((*b).tag).read(),
            addr_of!((*b).handle).read(),
            addr_of!((*b).sync).read(),
        )
    };
    if tag != TAG || h.is_null() || sync.is_null() {
        return Err(Error::InvalidParam);
    }
    Ok(Block {
        p,
        h,
        // SAFETY: `sync` was boxed by `alloc_block` and lives as long as the block.
        sync: unsafe { &*sync },
    })
}

impl<'a> Block<'a> {
    /// The boxed handle (for callers that own the block exclusively by contract).
    pub(crate) fn handle_ptr(&self) -> *mut Handle {
        self.h
    }

    /// Fails instead of deadlocking when this thread already holds the exclusive lock (a
    /// callback calling back into the super-chunk).
    fn check_reentry(&self) -> Result<()> {
        if self.sync.writer.load(Ordering::Relaxed) == thread_token() {
            return Err(Error::Failure);
        }
        Ok(())
    }

    /// The exclusive lock alone (serialised reads, stale-frame re-syncs); mutations take
    /// [`Block::writer`] first.
    fn exclusive_rw(self) -> Result<Exclusive<'a>> {
        self.check_reentry()?;
        if held_here(self.sync) {
            return Err(Error::Failure);
        }
        let g = self.sync.rw.write().unwrap_or_else(|e| e.into_inner());
        self.sync.writer.store(thread_token(), Ordering::Relaxed);
        Ok(Exclusive {
            b: self,
            _g: g,
            _w: None,
        })
    }

    /// Starts a mutation: takes the mutation mutex. Fails instead of deadlocking when this
    /// thread is inside a mutation or a read of this super-chunk already (a callback).
    pub(crate) fn writer(self) -> Result<Writer<'a>> {
        self.check_reentry()?;
        if self.sync.mutator.load(Ordering::Relaxed) == thread_token() || held_here(self.sync) {
            return Err(Error::Failure);
        }
        let g = lock(&self.sync.mutation);
        self.sync.mutator.store(thread_token(), Ordering::Relaxed);
        Ok(Writer { b: self, _g: g })
    }

    /// The shared lock; a read nested in a read of this thread (a callback) reuses the outer
    /// one instead of queueing behind a waiting writer.
    pub(crate) fn shared(self) -> Result<Shared<'a>> {
        let a = self.sync as *const HandleSync as usize;
        HELD.with(|held| {
            let me = token_of(held);
            // A callback under this thread's exclusive lock would deadlock.
            if self.sync.writer.load(Ordering::Relaxed) == me {
                return Err(Error::Failure);
            }
            let nested = held.contains(a);
            let g = (!nested).then(|| self.sync.rw.read().unwrap_or_else(|e| e.into_inner()));
            held.push(a);
            Ok(Shared { b: self, me, _g: g })
        })
    }
}

/// A mutation in progress: holds the mutation mutex (see the module docs).
pub(crate) struct Writer<'a> {
    b: Block<'a>,
    _g: MutexGuard<'a, ()>,
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        self.b.sync.mutator.store(0, Ordering::Relaxed);
    }
}

/// Unpins `current_nchunk` when a compression ends (even by panic).
struct Pin<'a>(&'a HandleSync);

impl Drop for Pin<'_> {
    fn drop(&mut self) {
        self.0.pinned.store(false, Ordering::Release);
    }
}

impl<'a> Writer<'a> {
    /// The exclusive lock, to commit (the mutation mutex stays held).
    pub(crate) fn exclusive(&self) -> Exclusive<'_> {
        let g = self.b.sync.rw.write().unwrap_or_else(|e| e.into_inner());
        self.b.sync.writer.store(thread_token(), Ordering::Relaxed);
        Exclusive {
            b: self.b,
            _g: g,
            _w: None,
        }
    }

    /// Compresses `src` with the schunk's `cctx` as chunk `nchunk` (`current_nchunk`, which
    /// its prefilter reads, stays `nchunk` meanwhile), holding no lock but the mutation
    /// mutex: callbacks may read this super-chunk.
    pub(crate) fn compress(&self, nchunk: i64, src: &[u8]) -> Result<Vec<u8>> {
        let sync = self.b.sync;
        let pin = {
            // Readers write `current_nchunk` only under the `dctx` mutex, after checking
            // `pinned`: set both under it.
            let _d = lock(&sync.dctx);
            // SAFETY: a field of the live C struct; the other writers hold the `dctx` mutex
            // (which we hold) or the exclusive lock (excluded: mutations are ours).
            unsafe { addr_of_mut!((*self.b.p).current_nchunk).write(nchunk) };
            sync.pinned.store(true, Ordering::Release);
            Pin(sync)
        };
        // SAFETY: a field of the live C struct, never written by us after creation.
        let cctx = unsafe { addr_of!((*self.b.p).cctx).read() };
        // SAFETY: the schunk's live context (or one the caller put there).
        let r = unsafe { CtxCodec::compressing(cctx) }.and_then(|mut c| c.compress(src));
        drop(pin);
        r
    }
}

/// The super-chunk held exclusively: the only accessor until dropped.
pub(crate) struct Exclusive<'a> {
    b: Block<'a>,
    _g: RwLockWriteGuard<'a, ()>,
    /// The mutation this lock belongs to, when [`exclusive`] started it (dropped after `_g`).
    _w: Option<Writer<'a>>,
}

impl Exclusive<'_> {
    /// The C struct and the Rust state, both mutable.
    pub(crate) fn parts(&mut self) -> (&mut blosc2_schunk, &mut Handle) {
        // SAFETY: the write lock excludes every other API user of this block, and the two
        // pointers are disjoint (the C struct inside the block, the boxed handle).
        unsafe { (&mut *self.b.p, &mut *self.b.h) }
    }

    pub(crate) fn sync(&self) -> &HandleSync {
        self.b.sync
    }
}

impl Drop for Exclusive<'_> {
    fn drop(&mut self) {
        self.b.sync.writer.store(0, Ordering::Relaxed);
    }
}

/// The super-chunk held shared: the Rust state is read-only, the C struct is not borrowed.
pub(crate) struct Shared<'a> {
    b: Block<'a>,
    /// [`thread_token`] of the holder.
    me: usize,
    /// None when nested in a read of this thread, which holds the lock.
    _g: Option<RwLockReadGuard<'a, ()>>,
}

impl Drop for Shared<'_> {
    fn drop(&mut self) {
        let a = self.b.sync as *const HandleSync as usize;
        HELD.with(|h| h.remove(a));
    }
}

impl Shared<'_> {
    /// Whether this read is nested in another read of this thread (which holds the lock).
    fn nested(&self) -> bool {
        self._g.is_none()
    }

    pub(crate) fn handle(&self) -> &Handle {
        // SAFETY: the read lock excludes writers; readers only take `&Handle`.
        unsafe { &*self.b.h }
    }

    /// A read view of the held super-chunk.
    pub(crate) fn reader(&self) -> Reader<'_> {
        Reader {
            p: self.b.p,
            h: self.handle(),
            sync: self.b.sync,
            me: self.me,
        }
    }
}

/// What a read operation sees: the Rust state shared, the C struct only through raw field
/// reads (other readers may be writing `current_nchunk` under the `dctx` mutex).
pub(crate) struct Reader<'a> {
    p: *mut blosc2_schunk,
    pub(crate) h: &'a Handle,
    sync: &'a HandleSync,
    /// [`thread_token`] of the reading thread; 0 when not looked up yet ([`read_op_plain`]).
    me: usize,
}

impl Reader<'_> {
    /// `schunk->storage` (set at creation, never changed).
    pub(crate) fn storage(&self) -> *mut blosc2_storage {
        // SAFETY: a field of the live C struct; only written at creation.
        unsafe { addr_of!((*self.p).storage).read() }
    }

    /// `schunk->cctx` (which the C caller may have replaced between calls).
    pub(crate) fn cctx(&self) -> *mut blosc2_context {
        // SAFETY: a field of the live C struct; we never write it after creation.
        unsafe { addr_of!((*self.p).cctx).read() }
    }

    /// `schunk->dctx` (which the C caller may have replaced between calls).
    fn dctx(&self) -> *mut blosc2_context {
        // SAFETY: a field of the live C struct; we never write it after creation.
        unsafe { addr_of!((*self.p).dctx).read() }
    }

    /// `schunk->vlmetalayers[..nvlmetalayers]` names (the mirrors change only under the
    /// exclusive lock).
    pub(crate) fn vlmeta_names(&self) -> Vec<*mut std::ffi::c_char> {
        // SAFETY: fields of the live C struct, written only under the exclusive lock.
        unsafe {
            let n = usize::try_from(addr_of!((*self.p).nvlmetalayers).read()).unwrap_or(0);
            let arr = addr_of!((*self.p).vlmetalayers);
            (0..n.min((*arr).len()))
                .map(|i| (*(*arr)[i]).name)
                .collect()
        }
    }
}

/// Whether a handle's reads must be serialised: frames reached through I/O callbacks (which
/// need not be thread-safe) and handles using the `.b2lock` file lock (whose state is
/// per-handle and mutable).
fn serial_reads(h: &Handle) -> bool {
    h.callbacks || h.lock.is_some()
}

/// Runs a read-only operation on `p` under the shared lock, in parallel with other readers.
/// With `revalidate`, a cframe file replaced on disk is reopened first; a frame another handle
/// changed is re-read (both under the exclusive lock). Handles whose reads must be serialised
/// run `op` under the exclusive lock, inside the file-locking bracket.
///
/// # Safety
/// `p` NULL or live.
pub(crate) unsafe fn read_op<T>(
    p: *mut blosc2_schunk,
    revalidate: bool,
    op: impl FnOnce(&Reader<'_>) -> Result<T>,
) -> Result<T> {
    // SAFETY: forwarded contract.
    let b = unsafe { block(p) }?;
    let mut g = b.shared()?;
    if serial_reads(g.handle()) {
        if g.nested() {
            // The outer read of this thread holds the shared lock we would wait for.
            return Err(Error::Failure);
        }
        drop(g);
        let mut x = b.exclusive_rw()?;
        let sync = x.sync() as *const HandleSync;
        let (sc, h) = x.parts();
        if revalidate {
            super::revalidate(sc, h)?;
        }
        return super::bracket(sc, h, false, |sc, h| {
            op(&Reader {
                p: sc,
                h,
                me: thread_token(),
                // SAFETY: the block's sync outlives the guard we hold.
                sync: unsafe { &*sync },
            })
        });
    }
    let h = g.handle();
    // A nested read sees what the outer read of this thread sees.
    if !g.nested() && ((revalidate && h.core.is_replaced()) || h.core.frame_is_stale()) {
        drop(g);
        {
            let mut x = b.exclusive_rw()?;
            let (sc, h) = x.parts();
            if revalidate {
                super::revalidate(sc, h)?;
            }
            let _ = super::resync(sc, h, false);
        }
        g = b.shared()?;
    }
    op(&g.reader())
}

/// [`read_op`] for an `op` that runs no user code (no callback can re-enter the super-chunk
/// while it runs), such as handing out a stored chunk. When the shared lock is free to take
/// (no writer holds it or waits for it), it is taken without the thread-local hold record:
/// nothing nested below could look for it, and a successful `try_read` already proves this
/// thread is not the exclusive holder. Every other case (a writer around, serialised reads, a
/// stale or replaced frame) goes through [`read_op`].
///
/// # Safety
/// `p` NULL or live.
pub(crate) unsafe fn read_op_plain<T>(
    p: *mut blosc2_schunk,
    revalidate: bool,
    op: impl FnOnce(&Reader<'_>) -> Result<T>,
) -> Result<T> {
    // SAFETY: forwarded contract.
    let b = unsafe { block(p) }?;
    let g = match b.sync.rw.try_read() {
        Ok(g) => g,
        Err(TryLockError::Poisoned(e)) => e.into_inner(),
        // SAFETY: forwarded contract.
        Err(TryLockError::WouldBlock) => return unsafe { read_op(p, revalidate, op) },
    };
    // SAFETY: the read lock excludes writers; readers only take `&Handle`.
    let h = unsafe { &*b.h };
    if serial_reads(h) || (revalidate && h.core.is_replaced()) || h.core.frame_is_stale() {
        drop(g);
        // SAFETY: forwarded contract.
        return unsafe { read_op(p, revalidate, op) };
    }
    let r = op(&Reader {
        p,
        h,
        sync: b.sync,
        me: 0,
    });
    drop(g);
    r
}

/// Runs a mutation (or an operation serialised for another reason) under the exclusive lock.
///
/// # Safety
/// `p` NULL or live.
pub(crate) unsafe fn exclusive<'a>(p: *mut blosc2_schunk) -> Result<Exclusive<'a>> {
    // SAFETY: forwarded contract.
    let b = unsafe { block(p) }?;
    let w = b.writer()?;
    let g = b.sync.rw.write().unwrap_or_else(|e| e.into_inner());
    b.sync.writer.store(thread_token(), Ordering::Relaxed);
    Ok(Exclusive {
        b,
        _g: g,
        _w: Some(w),
    })
}

/// Starts a mutation that compresses before it commits ([`Writer`]).
///
/// # Safety
/// `p` NULL or live.
pub(crate) unsafe fn writer<'a>(p: *mut blosc2_schunk) -> Result<Writer<'a>> {
    // SAFETY: forwarded contract.
    unsafe { block(p) }?.writer()
}
