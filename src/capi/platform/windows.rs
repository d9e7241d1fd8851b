//! Windows: `_fseeki64`/`_ftelli64`, the handle behind a `FILE*`, file mappings
//! (`CreateFileMappingW`/`MapViewOfFile`) and `QueryPerformanceCounter`, with the values and
//! the behaviour c-blosc2 has there: a writable mapping makes the file as large as the
//! mapping while it is open, and the file is cut to its logical size when the mapping is
//! destroyed (Windows cannot change the length of a file with a mapped view).

use super::super::types::{blosc2_stdio_mmap, blosc_timestamp_t};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::fs::File;
use std::mem::ManuallyDrop;
use std::os::windows::io::FromRawHandle;
use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Memory::{
    CreateFileMappingW, FlushViewOfFile, MapViewOfFile, UnmapViewOfFile, FILE_MAP_COPY,
    FILE_MAP_READ, FILE_MAP_WRITE, MEMORY_MAPPED_VIEW_ADDRESS, PAGE_READONLY, PAGE_READWRITE,
    PAGE_WRITECOPY,
};
use windows_sys::Win32::System::Performance::{QueryPerformanceCounter, QueryPerformanceFrequency};

extern "C" {
    fn _fseeki64(file: *mut libc::FILE, off: i64, whence: c_int) -> c_int;
    fn _ftelli64(file: *mut libc::FILE) -> i64;
}

/// `_fseeki64`.
///
/// # Safety
/// `file` must be a live `FILE*`.
pub unsafe fn seek64(file: *mut libc::FILE, off: i64, whence: c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { _fseeki64(file, off, whence) }
}

/// `_ftelli64`.
///
/// # Safety
/// `file` must be a live `FILE*`.
pub unsafe fn tell64(file: *mut libc::FILE) -> i64 {
    // SAFETY: forwarded contract.
    unsafe { _ftelli64(file) }
}

/// The OS handle behind a live stream, or None.
///
/// # Safety
/// `file` must be a live `FILE*`.
unsafe fn handle_of(file: *mut libc::FILE) -> Option<*mut c_void> {
    // SAFETY: live stream by contract.
    let fd = unsafe { libc::fileno(file) };
    if fd < 0 {
        return None;
    }
    // SAFETY: an open CRT descriptor.
    let h = unsafe { libc::get_osfhandle(fd) };
    (h != -1 && h != 0).then_some(h as *mut c_void)
}

/// See [`super::file_behind`].
///
/// # Safety
/// As there.
pub(super) unsafe fn file_from_stream(file: *mut libc::FILE) -> Option<ManuallyDrop<File>> {
    // SAFETY: forwarded contract; the handle is owned by the stream and ManuallyDrop never
    // closes it.
    unsafe { handle_of(file).map(|h| ManuallyDrop::new(File::from_raw_handle(h))) }
}

/// As on Unix, with c-blosc2's Windows values (`PAGE_*` protections, `FILE_MAP_*` accesses);
/// the `"c"` mode maps the file's size (a copy-on-write view cannot grow there).
pub fn mmap_mode(mode: &[u8]) -> Option<(i64, i64, bool, &'static CStr, bool)> {
    let (r, rw, cow) = (
        i64::from(PAGE_READONLY),
        i64::from(PAGE_READWRITE),
        i64::from(PAGE_WRITECOPY),
    );
    Some(match mode {
        b"r" => (r, i64::from(FILE_MAP_READ), false, c"rb", false),
        b"r+" => (rw, i64::from(FILE_MAP_WRITE), false, c"rb+", true),
        b"w+" => (rw, i64::from(FILE_MAP_WRITE), false, c"wb+", true),
        b"c" => (cow, i64::from(FILE_MAP_COPY), true, c"rb", false),
        _ => return None,
    })
}

/// Whether the mapping may be written (read-write or copy-on-write).
pub fn mmap_writable(m: &blosc2_stdio_mmap) -> bool {
    m.access_flags == i64::from(PAGE_READWRITE) || m.access_flags == i64::from(PAGE_WRITECOPY)
}

/// Maps `m.mapping_size` bytes of `m.file` (sets `fd`, `mmap_handle` and `addr`); a writable
/// mapping grows the file to that size. False on failure.
///
/// # Safety
/// `m.file` a live stream; `m` not mapped.
pub unsafe fn mmap_map(m: &mut blosc2_stdio_mmap) -> bool {
    // SAFETY: live stream.
    m.fd = unsafe { libc::fileno(m.file) };
    // SAFETY: live stream.
    let Some(file) = (unsafe { handle_of(m.file) }) else {
        return false;
    };
    let size = m.mapping_size as u64;
    // SAFETY: a new mapping object over our own file handle; no name, default security.
    let h = unsafe {
        CreateFileMappingW(
            file,
            std::ptr::null(),
            m.access_flags as u32,
            (size >> 32) as u32,
            size as u32,
            std::ptr::null(),
        )
    };
    if h.is_null() {
        return false;
    }
    // SAFETY: a view of the whole mapping object just created.
    let view = unsafe { MapViewOfFile(h, m.map_flags as u32, 0, 0, m.mapping_size) };
    if view.Value.is_null() {
        // SAFETY: our own mapping handle.
        unsafe { CloseHandle(h) };
        return false;
    }
    m.mmap_handle = h;
    m.addr = view.Value as *mut c_char;
    true
}

/// Windows cannot change the length of a mapped file: the logical size is applied when the
/// mapping is destroyed ([`mmap_unmap`]).
///
/// # Safety
/// `m` a mapped stream.
pub unsafe fn mmap_set_file_len(_m: &mut blosc2_stdio_mmap, _len: i64) -> bool {
    true
}

/// Releases the view and the mapping object.
///
/// # Safety
/// `m` mapped.
unsafe fn release(m: &mut blosc2_stdio_mmap) -> bool {
    // SAFETY: our own view and mapping handle.
    let ok = unsafe {
        let a = UnmapViewOfFile(MEMORY_MAPPED_VIEW_ADDRESS {
            Value: m.addr as *mut c_void,
        }) != 0;
        let b = CloseHandle(m.mmap_handle) != 0;
        a && b
    };
    m.addr = std::ptr::null_mut();
    m.mmap_handle = INVALID_HANDLE_VALUE;
    ok
}

/// Grows the mapping to `want` bytes by mapping the file anew (the file grows with it); a
/// copy-on-write view cannot grow (its private pages would be lost), as in c-blosc2.
///
/// # Safety
/// `m` a mapped stream.
pub unsafe fn mmap_grow(m: &mut blosc2_stdio_mmap, want: usize) -> bool {
    if m.is_memory_only {
        return false;
    }
    // SAFETY: `m` is mapped; it is mapped again right after.
    if !unsafe { release(m) } {
        return false;
    }
    let old = m.mapping_size;
    m.mapping_size = want;
    // SAFETY: `m.file` is live and `m` is no longer mapped.
    if unsafe { mmap_map(m) } {
        return true;
    }
    // Map the old size again so the stream stays usable.
    m.mapping_size = old;
    // SAFETY: as above.
    unsafe { mmap_map(m) };
    false
}

/// Flushes a writable file-backed view, unmaps it, closes the mapping object and cuts the
/// file to its logical size (keeping whatever another writer added past the mapping, as
/// c-blosc2 does); false if any step failed.
///
/// # Safety
/// `m` a mapped stream; not used as mapped afterwards.
pub unsafe fn mmap_unmap(m: &mut blosc2_stdio_mmap) -> bool {
    let mut ok = true;
    let file_backed_rw = m.access_flags == i64::from(PAGE_READWRITE);
    if file_backed_rw {
        // SAFETY: our own live view of at least `file_size` bytes.
        ok &= unsafe { FlushViewOfFile(m.addr as *const c_void, m.file_size) } != 0;
    }
    // SAFETY: `m` is mapped.
    ok &= unsafe { release(m) };
    if file_backed_rw {
        // SAFETY: live stream, outliving this borrow.
        match unsafe { file_from_stream(m.file) } {
            Some(f) => {
                let disk = f.metadata().map(|d| d.len()).unwrap_or(0);
                let extra = disk.saturating_sub(m.mapping_size as u64);
                ok &= f.set_len(m.file_size as u64 + extra).is_ok();
                ok &= f.sync_all().is_ok();
            }
            None => ok = false,
        }
    }
    ok
}

/// Reads the performance counter into `t`.
pub fn set_timestamp(t: &mut blosc_timestamp_t) {
    // SAFETY: `t` is a valid, writable 64-bit integer (LARGE_INTEGER's layout).
    unsafe { QueryPerformanceCounter(t) };
}

/// Nanoseconds from `start` to `end` (performance counter ticks over its frequency).
pub fn elapsed_nsecs(start: blosc_timestamp_t, end: blosc_timestamp_t) -> f64 {
    let mut freq = 0i64;
    // SAFETY: a valid out-pointer; the call cannot fail on Windows XP and later.
    unsafe { QueryPerformanceFrequency(&mut freq) };
    end.wrapping_sub(start) as f64 * 1e9 / freq.max(1) as f64
}
