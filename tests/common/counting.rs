//! A counting global allocator for the test binaries that bound the heap (each declares
//! `#[global_allocator] static ALLOC: Counting = Counting;` and includes this file with
//! `#[path]`): every Rust allocation of the process, b2frame's included, is counted, with its
//! peak. What is counted is what was asked of the allocator, touched or not.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The system allocator, counting the bytes in use and their peak.
pub struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let now = IN_USE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call forwards to the system allocator with the caller's arguments; the
// counters are only statistics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // Both blocks may exist during the move: count the new one before the old goes.
            grew(new_size);
            IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

/// Tests of this binary run one at a time (the counters are process-wide).
pub static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The largest heap `f` holds above what was in use when it started.
pub fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = IN_USE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let t = std::time::Instant::now();
    let v = f();
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    eprintln!("peak {peak} bytes, {:?}", t.elapsed());
    (v, peak)
}
