//! What the C backends need from the C runtime and the OS that differs between Unix and Windows:
//! 64-bit `FILE*` seeks, the std `File` behind a `FILE*`, memory mappings and the timer.
//! Callers (`io::stdio`, `io::mmap`, `info`) have one code path over these functions; each
//! platform file implements them with its own calls.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

use std::fs::File;
use std::mem::ManuallyDrop;

/// The open file behind a live `FILE*` as a std `File` that is never closed by Rust (the
/// `FILE*` keeps owning it), or None if the stream has no descriptor.
///
/// # Safety
/// `file` must be a live `FILE*` that outlives the returned value.
pub unsafe fn file_behind(file: *mut libc::FILE) -> Option<ManuallyDrop<File>> {
    // SAFETY: forwarded contract.
    unsafe { file_from_stream(file) }
}

/// The size of the file behind `file` by seeking to its end (the stream position is restored),
/// as c-blosc2's `ftell`-based size: it also counts bytes still in the stream's buffer. None on
/// failure.
///
/// # Safety
/// `file` must be a live `FILE*`.
pub unsafe fn stream_size(file: *mut libc::FILE) -> Option<i64> {
    // SAFETY: live stream by contract; the position is restored before returning.
    unsafe {
        let cur = tell64(file);
        if cur < 0 {
            return None;
        }
        if seek64(file, 0, libc::SEEK_END) != 0 {
            seek64(file, cur, libc::SEEK_SET);
            return None;
        }
        let size = tell64(file);
        if seek64(file, cur, libc::SEEK_SET) != 0 || size < 0 {
            return None;
        }
        Some(size)
    }
}
