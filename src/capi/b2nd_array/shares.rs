//! Super-chunks shared by an array and its views. As in c-blosc2 (`view_new`), a view made by
//! `b2nd_squeeze_index`, `b2nd_squeeze` or `b2nd_expand_dims` reads and writes its parent's
//! chunks: its `sc` is the parent's super-chunk. Unlike c-blosc2, the super-chunk is counted:
//! `b2nd_free` of an array or a view frees it only when no other array uses it, so freeing the
//! parent before its views leaves them readable (c-blosc2 reads freed memory then).
//!
//! A shape change of the parent makes its views stale (their geometry no longer matches the
//! chunks): every call on a stale view fails with `BLOSC2_ERROR_INVALID_PARAM`. Views cannot
//! change shape themselves. An array with no view pays one atomic load per call.

use super::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

#[derive(Default)]
struct Shares {
    /// Per shared super-chunk: the arrays using it and its shape generation.
    schunks: BTreeMap<usize, (usize, u64)>,
    /// Per view: its super-chunk and the generation its geometry belongs to.
    views: BTreeMap<usize, (usize, u64)>,
}

static SHARES: Mutex<Shares> = Mutex::new(Shares {
    schunks: BTreeMap::new(),
    views: BTreeMap::new(),
});
/// Number of shared super-chunks (0: nothing to look up).
static SHARED: AtomicUsize = AtomicUsize::new(0);

fn shares() -> MutexGuard<'static, Shares> {
    SHARES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records `view`, a new array over the super-chunk `sc` of another array.
pub(super) fn add_view(view: *const b2nd_array_t, sc: *mut blosc2_schunk) {
    let mut s = shares();
    let e = s.schunks.entry(sc as usize).or_insert_with(|| {
        SHARED.fetch_add(1, Ordering::AcqRel);
        (1, 0)
    });
    e.0 += 1;
    let gen = e.1;
    s.views.insert(view as usize, (sc as usize, gen));
}

/// Forgets `array` (being freed); returns whether its super-chunk is to be freed with it.
pub(super) fn release(array: *const b2nd_array_t, sc: *mut blosc2_schunk) -> bool {
    if SHARED.load(Ordering::Acquire) == 0 {
        return true;
    }
    let mut s = shares();
    s.views.remove(&(array as usize));
    let Some(e) = s.schunks.get_mut(&(sc as usize)) else {
        return true;
    };
    e.0 -= 1;
    if e.0 > 0 {
        return false;
    }
    s.schunks.remove(&(sc as usize));
    SHARED.fetch_sub(1, Ordering::AcqRel);
    true
}

/// Whether `array` is a view.
pub(super) fn is_view(array: *const b2nd_array_t) -> bool {
    SHARED.load(Ordering::Acquire) != 0 && shares().views.contains_key(&(array as usize))
}

/// `InvalidParam` for a view whose parent changed shape since the view was made.
pub(super) fn check_current(array: *const b2nd_array_t) -> Result<()> {
    if SHARED.load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    let s = shares();
    match s.views.get(&(array as usize)) {
        Some(&(sc, gen)) if s.schunks.get(&sc).map(|e| e.1) != Some(gen) => {
            Err(Error::InvalidParam)
        }
        _ => Ok(()),
    }
}

/// Before a shape change of `array`: `InvalidParam` for a view; else its views go stale.
pub(super) fn reshaping(array: *const b2nd_array_t, sc: *mut blosc2_schunk) -> Result<()> {
    if SHARED.load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    let mut s = shares();
    if s.views.contains_key(&(array as usize)) {
        return Err(Error::InvalidParam);
    }
    if let Some(e) = s.schunks.get_mut(&(sc as usize)) {
        e.1 += 1;
    }
    Ok(())
}
