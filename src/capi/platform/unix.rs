//! Unix: `fseeko`/`ftello`, the descriptor behind a `FILE*`, `mmap` and `CLOCK_MONOTONIC`.

use super::super::types::{blosc2_stdio_mmap, blosc_timestamp_t};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::fs::File;
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;

/// `fseeko`.
///
/// # Safety
/// `file` must be a live `FILE*`.
pub unsafe fn seek64(file: *mut libc::FILE, off: i64, whence: c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { libc::fseeko(file, off, whence) }
}

/// `ftello`.
///
/// # Safety
/// `file` must be a live `FILE*`.
pub unsafe fn tell64(file: *mut libc::FILE) -> i64 {
    // SAFETY: forwarded contract.
    unsafe { libc::ftello(file) }
}

/// See [`super::file_behind`].
///
/// # Safety
/// As there.
pub(super) unsafe fn file_from_stream(file: *mut libc::FILE) -> Option<ManuallyDrop<File>> {
    // SAFETY: live stream by contract.
    let fd = unsafe { libc::fileno(file) };
    // SAFETY: an open descriptor owned by the stream; ManuallyDrop never closes it.
    (fd >= 0).then(|| ManuallyDrop::new(unsafe { File::from_raw_fd(fd) }))
}

/// The mapping a mode of the mmap backend asks for: `(access_flags, map_flags, memory only,
/// fopen mode, whether the initial mapping size applies)`, with c-blosc2's POSIX values
/// (`PROT_*`, `MAP_*`).
pub fn mmap_mode(mode: &[u8]) -> Option<(i64, i64, bool, &'static CStr, bool)> {
    let r = i64::from(libc::PROT_READ);
    let rw = i64::from(libc::PROT_READ | libc::PROT_WRITE);
    let (shared, private) = (i64::from(libc::MAP_SHARED), i64::from(libc::MAP_PRIVATE));
    Some(match mode {
        b"r" => (r, shared, false, c"rb", false),
        b"r+" => (rw, shared, false, c"rb+", true),
        b"w+" => (rw, shared, false, c"wb+", true),
        b"c" => (rw, private, true, c"rb", true),
        _ => return None,
    })
}

/// Whether the mapping may be written.
pub fn mmap_writable(m: &blosc2_stdio_mmap) -> bool {
    m.access_flags & i64::from(libc::PROT_WRITE) != 0
}

/// Maps `m.mapping_size` bytes of `m.file` (its `fd` is set first); false on failure.
///
/// # Safety
/// `m.file` a live stream; `m` not mapped.
pub unsafe fn mmap_map(m: &mut blosc2_stdio_mmap) -> bool {
    // SAFETY: live stream.
    m.fd = unsafe { libc::fileno(m.file) };
    // SAFETY: a fresh mapping chosen by the kernel over an open descriptor.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            m.mapping_size,
            m.access_flags as c_int,
            m.map_flags as c_int,
            m.fd,
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return false;
    }
    m.addr = addr as *mut c_char;
    true
}

/// Sets the file's length (the mapping's logical size stays the caller's business).
///
/// # Safety
/// `m` a mapped stream.
pub unsafe fn mmap_set_file_len(m: &mut blosc2_stdio_mmap, len: i64) -> bool {
    // SAFETY: integer arguments on our own descriptor.
    unsafe { libc::ftruncate(m.fd, len) == 0 }
}

/// Grows the mapping to `want` bytes (it may move; `m.addr` and `m.mapping_size` are updated).
/// Linux keeps private (copy-on-write) pages with `mremap`; elsewhere a private mapping cannot
/// grow, as in c-blosc2, and a shared one is mapped anew.
///
/// # Safety
/// `m` a mapped stream.
pub unsafe fn mmap_grow(m: &mut blosc2_stdio_mmap, want: usize) -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: remaps our own mapping.
    let addr = unsafe {
        libc::mremap(
            m.addr as *mut c_void,
            m.mapping_size,
            want,
            libc::MREMAP_MAYMOVE,
        )
    };
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let addr = {
        if m.is_memory_only {
            return false;
        }
        // SAFETY: a fresh shared mapping of our own descriptor; the old one is released only
        // once the new one exists (both show the same file pages).
        unsafe {
            let a = libc::mmap(
                std::ptr::null_mut(),
                want,
                m.access_flags as c_int,
                m.map_flags as c_int,
                m.fd,
                0,
            );
            if a != libc::MAP_FAILED {
                libc::munmap(m.addr as *mut c_void, m.mapping_size);
            }
            a
        }
    };
    if addr == libc::MAP_FAILED {
        return false;
    }
    m.addr = addr as *mut c_char;
    m.mapping_size = want;
    true
}

/// Syncs a writable file-backed mapping and unmaps it; false if either failed.
///
/// # Safety
/// `m` a mapped stream; not used as mapped afterwards.
pub unsafe fn mmap_unmap(m: &mut blosc2_stdio_mmap) -> bool {
    let mut ok = true;
    // SAFETY: our own live mapping of `mapping_size >= file_size` bytes.
    unsafe {
        if mmap_writable(m)
            && !m.is_memory_only
            && libc::msync(m.addr as *mut c_void, m.file_size, libc::MS_SYNC) < 0
        {
            ok = false;
        }
        if libc::munmap(m.addr as *mut c_void, m.mapping_size) < 0 {
            ok = false;
        }
    }
    ok
}

/// Reads the monotonic clock into `t`.
pub fn set_timestamp(t: &mut blosc_timestamp_t) {
    // SAFETY: `t` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, t) };
}

/// Nanoseconds from `start` to `end`.
pub fn elapsed_nsecs(start: blosc_timestamp_t, end: blosc_timestamp_t) -> f64 {
    1e9 * (end.tv_sec.wrapping_sub(start.tv_sec)) as f64
        + (end.tv_nsec.wrapping_sub(start.tv_nsec)) as f64
}
