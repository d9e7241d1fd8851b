//! The bracket every super-chunk operation runs in: the `.b2lock` file lock when locking is
//! enabled, and the re-read of a disk frame that another handle (or process) changed.

use super::{exclusive, parts, sync_counters, sync_meta, sync_vlmeta, Handle};
use crate::capi::types::blosc2_schunk;
use crate::error::Result;
use crate::frame::lock::FrameLock;
use crate::schunk::Location;
use std::ffi::c_int;

/// Gives a disk-backed super-chunk its `.b2lock` lock (no-op for in-memory ones).
///
/// # Safety
/// `p` a live super-chunk.
pub(crate) unsafe fn enable_locking(p: *mut blosc2_schunk) -> Result<()> {
    // SAFETY: forwarded contract.
    let (_, h) = unsafe { parts(p) }?;
    let (path, sparse) = match h.core.location() {
        Location::File { path, .. } => (path.clone(), false),
        Location::Sparse(dir) => (dir.clone(), true),
        _ => return Ok(()),
    };
    h.lock = Some(FrameLock::new(&path, sparse));
    Ok(())
}

/// Re-reads a disk frame that another handle changed (`force`: the lock generation moved,
/// else only when the stored `frame_len` differs) and re-mirrors the C struct, bumping
/// `change_tick`. Returns whether it re-read.
pub(crate) fn resync(sc: &mut blosc2_schunk, h: &mut Handle, force: bool) -> Result<bool> {
    if !h.core.refresh_frame(force)? {
        return Ok(false);
    }
    sync_counters(sc, h, true);
    sync_meta(sc, h);
    sync_vlmeta(sc, h);
    sc.change_tick += 1;
    Ok(true)
}

/// Runs one super-chunk operation the way c-blosc2 brackets frame accesses: under the handle's
/// lock (shared for reads, exclusive for mutations) when locking is enabled, after re-syncing
/// a disk frame that another handle changed (docs/threading.md#stale-frames: stored `frame_len` differs, or the lock
/// generation moved). Lock failures are `BLOSC2_ERROR_LOCK`; a failed re-sync keeps the old
/// view (c-blosc2 tolerates torn reads the same way).
pub(crate) fn bracket<T>(
    sc: &mut blosc2_schunk,
    h: &mut Handle,
    exclusive: bool,
    op: impl FnOnce(&mut blosc2_schunk, &mut Handle) -> Result<T>,
) -> Result<T> {
    let moved = match h.lock.as_mut() {
        Some(l) => l.acquire(exclusive)?,
        None => false,
    };
    let _ = resync(sc, h, moved);
    if exclusive {
        // A change: c-blosc2 writes the struct's fields into the frame header it rewrites.
        super::adopt(sc, h);
    }
    let r = op(sc, h);
    if let Some(l) = h.lock.as_mut() {
        let released = l.release();
        if r.is_ok() {
            released?;
        }
    }
    r
}

/// `int blosc2_schunk_lock(blosc2_schunk *schunk)`: takes the exclusive lock until the matching
/// unlock (nested operations reuse it); 0, or a no-op 0 without locking.
///
/// # Safety
/// `schunk` NULL or live.
pub(crate) unsafe fn schunk_lock(schunk: *mut blosc2_schunk) -> Result<c_int> {
    // SAFETY: forwarded contract.
    let mut x = unsafe { exclusive(schunk) }?;
    let (sc, h) = x.parts();
    let Some(l) = h.lock.as_mut() else {
        return Ok(0);
    };
    let moved = l.acquire(true)?;
    let _ = resync(sc, h, moved);
    Ok(0)
}

/// `int blosc2_schunk_unlock(blosc2_schunk *schunk)`: releases one [`schunk_lock`].
///
/// # Safety
/// `schunk` NULL or live.
pub(crate) unsafe fn schunk_unlock(schunk: *mut blosc2_schunk) -> Result<c_int> {
    // SAFETY: forwarded contract.
    let mut x = unsafe { exclusive(schunk) }?;
    let (_, h) = x.parts();
    match h.lock.as_mut() {
        Some(l) => l.release().map(|()| 0),
        None => Ok(0),
    }
}

/// `int blosc2_schunk_refresh(blosc2_schunk *schunk)`: re-syncs a disk frame another handle
/// changed (under the shared lock when locking); 1 if re-read, 0 if current or not on disk.
///
/// # Safety
/// `schunk` NULL or live.
pub(crate) unsafe fn schunk_refresh(schunk: *mut blosc2_schunk) -> Result<c_int> {
    // SAFETY: forwarded contract.
    let mut x = unsafe { exclusive(schunk) }?;
    let (sc, h) = x.parts();
    let moved = match h.lock.as_mut() {
        Some(l) => l.acquire(false)?,
        None => false,
    };
    let r = resync(sc, h, moved);
    if let Some(l) = h.lock.as_mut() {
        l.release()?;
    }
    r.map(c_int::from)
}

/// Follows a cframe file replaced on disk under an open super-chunk (re-mirrors everything).
pub(crate) fn revalidate(sc: &mut blosc2_schunk, h: &mut Handle) -> Result<()> {
    if h.core.reopen_if_replaced()? {
        sync_counters(sc, h, true);
        sync_meta(sc, h);
        sync_vlmeta(sc, h);
        sc.change_tick += 1;
    }
    Ok(())
}
