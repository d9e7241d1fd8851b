//! Process-wide state the C API defines and the functions that read and set it: whether the
//! library is initialised, the global thread count, the Blosc1 settings (set through
//! [`super::blosc1`]) and the global API's engines. The threads callback is handed to the core
//! ([`crate::pool::set_global_runner`]), whose pools every context shares.
//!
//! c-blosc2 keeps a handful of globals for its Blosc1-style API (`blosc2_compress`,
//! `blosc1_*`): the thread count, the compressor, a forced blocksize, the split mode, the DELTA
//! switch, the threads callback and whether the library is initialised. They all live in the one
//! `GLOBALS` mutex below (the threads callback in the core's runner slot); the registered
//! codecs/filters/tuners live in the core's table ([`crate::registry`]). Nothing else in the
//! crate holds mutable global state.
//!
//! Semantics follow the reference: `blosc2_init` is idempotent, `blosc2_destroy` ends the
//! initialised period (a second destroy is a no-op), and the next init starts a new one, in which
//! the registries hold nothing; the Blosc1 settings (nthreads, compressor, ...) survive a
//! destroy/init cycle. Every entry point that needs an initialised library initialises it on
//! demand.
//!
//! This module is the bottom of the C facade's process state: it names no other facade module
//! but the panic guard and the C types. An init that starts a new period tells the core's table
//! to forget what was registered in the last one.

use super::boundary::guard;
use super::types::blosc_threads_callback;
use crate::chunk::{Compressor, Decompressor};
use crate::error::{Error, Result};
use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, MutexGuard};

/// A user threads callback and its data pointer, as registered.
#[derive(Clone, Copy)]
pub(crate) struct ThreadsCallback {
    /// The callback (never `None` inside a stored `ThreadsCallback`).
    pub func: unsafe extern "C" fn(
        *mut c_void,
        Option<unsafe extern "C" fn(*mut c_void)>,
        c_int,
        usize,
        *mut c_void,
    ),
    /// The opaque pointer handed back to the callback.
    pub data: *mut c_void,
}

// SAFETY: the callback is a plain function pointer and `data` an opaque token that c-blosc2's
// contract lets any thread pass back to the callback; we never dereference it.
unsafe impl Send for ThreadsCallback {}
// SAFETY: as above; c-blosc2 calls the callback from whichever thread compresses.
unsafe impl Sync for ThreadsCallback {}

/// The Blosc1-style settings and library state.
pub(crate) struct Globals {
    /// Between `blosc2_init` and `blosc2_destroy`.
    pub initialized: bool,
    /// `blosc2_set_nthreads` (default 1).
    pub nthreads: i16,
    /// Blosc1 compcode (`blosc1_set_compressor`); -1 after an unknown name, as in the reference,
    /// which makes later global compressions fail with `CODEC_SUPPORT`.
    pub compressor: i32,
    /// `blosc1_set_blocksize` (0 = automatic).
    pub force_blocksize: i32,
    /// `blosc1_set_splitmode` (default `BLOSC_FORWARD_COMPAT_SPLIT`).
    pub splitmode: i32,
    /// `blosc2_set_delta`.
    pub delta: i32,
}

static GLOBALS: Mutex<Globals> = Mutex::new(Globals {
    initialized: false,
    nthreads: 1,
    compressor: 0,
    force_blocksize: 0,
    splitmode: 4,
    delta: 0,
});

/// The compressor and decompressor behind the global API (`blosc2_compress`, ...), kept
/// between calls so that their scratch buffers and worker threads are reused, like c-blosc2's
/// global context. Calls through the global API are serialised by this lock, as in c-blosc2.
#[derive(Default)]
pub(crate) struct Engines {
    pub compressor: Option<Compressor>,
    pub decompressor: Option<Decompressor>,
}

static ENGINES: Mutex<Engines> = Mutex::new(Engines {
    compressor: None,
    decompressor: None,
});

/// Locks the global-API engines.
pub(crate) fn engines() -> MutexGuard<'static, Engines> {
    ENGINES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Drops the global-API engines and their worker threads.
fn release_engines() {
    let mut e = engines();
    e.compressor = None;
    e.decompressor = None;
}

/// Locks the globals (a poisoned lock is still usable: the state is plain data).
pub(crate) fn lock() -> MutexGuard<'static, Globals> {
    GLOBALS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Initialises the library if needed (what every reference entry point does on first use),
/// starting a new initialised period.
pub(crate) fn ensure_init() {
    let mut g = lock();
    if !g.initialized {
        g.initialized = true;
        // A new period: what the program registered in the last one is forgotten.
        crate::registry::forget_registered();
        crate::dynamic::forget();
    }
}

/// Whether `blosc2_init` has run and `blosc2_destroy` has not (the I/O registry needs it).
pub(crate) fn is_initialized() -> bool {
    lock().initialized
}

/// The current global thread count.
pub(crate) fn nthreads() -> i16 {
    ensure_init();
    lock().nthreads
}

/// A snapshot of the Blosc1 settings the global compressor uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Blosc1Settings {
    pub nthreads: i16,
    pub compressor: i32,
    pub force_blocksize: i32,
    pub splitmode: i32,
    pub delta: i32,
}

/// Reads the Blosc1 settings (initialising the library if needed).
pub(crate) fn blosc1_settings() -> Blosc1Settings {
    ensure_init();
    let g = lock();
    Blosc1Settings {
        nthreads: g.nthreads,
        compressor: g.compressor,
        force_blocksize: g.force_blocksize,
        splitmode: g.splitmode,
        delta: g.delta,
    }
}

/// `blosc2_set_nthreads` semantics: returns the previous value; a new value <= 0 is rejected
/// with `INVALID_PARAM` and the old one kept.
pub(crate) fn set_nthreads(n: i16) -> Result<i16> {
    ensure_init();
    let mut g = lock();
    let prev = g.nthreads;
    if n != prev {
        if n <= 0 {
            return Err(Error::InvalidParam);
        }
        g.nthreads = n;
    }
    Ok(prev)
}

/// Initialises the library: idempotent; when (re)starting, the user registries start empty.
#[no_mangle]
pub extern "C" fn blosc2_init() {
    guard(|| {
        ensure_init();
        Ok(())
    })
}

/// Ends the initialised period (no-op when not initialised). The Blosc1 settings survive;
/// the registries are cleared by the next init.
#[no_mangle]
pub extern "C" fn blosc2_destroy() {
    guard(|| {
        let was = std::mem::replace(&mut lock().initialized, false);
        if was {
            release_engines();
        }
        Ok(())
    })
}

/// Releases cached thread resources. `BLOSC2_ERROR_FAILURE` when not initialised, else 0.
#[no_mangle]
pub extern "C" fn blosc2_free_resources() -> c_int {
    guard(|| {
        if !is_initialized() {
            return Err(Error::Failure);
        }
        release_engines();
        Ok(0)
    })
}

/// The global thread count used by the Blosc1-style API (default 1).
#[no_mangle]
pub extern "C" fn blosc2_get_nthreads() -> i16 {
    guard(|| Ok(nthreads()))
}

/// Sets the global thread count; returns the previous one, or `BLOSC2_ERROR_INVALID_PARAM`
/// for a value <= 0.
#[no_mangle]
pub extern "C" fn blosc2_set_nthreads(nthreads: i16) -> i16 {
    guard(|| set_nthreads(nthreads))
}

/// Hands the per-block jobs of multi-threaded (de)compressions to `callback` instead of the
/// library's own workers. NULL restores the built-in workers.
#[no_mangle]
pub extern "C" fn blosc2_set_threads_callback(
    callback: blosc_threads_callback,
    callback_data: *mut c_void,
) {
    guard(|| {
        crate::pool::set_global_runner(callback.map(|func| {
            Arc::new(ThreadsCallback {
                func,
                data: callback_data,
            }) as Arc<dyn crate::pool::Runner>
        }));
        Ok(())
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::capi::blosc1::{blosc1_get_blocksize, blosc1_set_blocksize};

    /// Serialises the unit tests that touch the process-wide state.
    pub(crate) static TEST_LOCK: Mutex<()> = Mutex::new(());

    #[test]
    fn set_nthreads_returns_previous_and_rejects_non_positive() {
        let _t = TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let start = blosc2_get_nthreads();
        assert_eq!(blosc2_set_nthreads(3), start);
        assert_eq!(blosc2_set_nthreads(0), -12);
        assert_eq!(blosc2_get_nthreads(), 3);
        assert_eq!(blosc2_set_nthreads(start), 3);
    }

    #[test]
    fn settings_survive_destroy_but_init_flag_does_not() {
        let _t = TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        blosc2_init();
        blosc2_init();
        assert_eq!(blosc2_free_resources(), 0);
        blosc1_set_blocksize(4096);
        blosc2_destroy();
        assert_eq!(blosc2_free_resources(), -1);
        blosc2_destroy();
        assert_eq!(blosc1_get_blocksize(), 4096);
        assert!(is_initialized());
        blosc1_set_blocksize(0);
    }
}
