//! The memory-mapped backend (I/O id 1, `blosc2_stdio_mmap_*`). Its `params` is a caller-owned
//! `blosc2_stdio_mmap` that doubles as the stream: the first `open` maps the file, later opens
//! of the same path return the same mapping, `close` does nothing and `destroy` syncs, unmaps
//! and closes (and frees the struct when `needs_free`).
//!
//! Modes (from `params->mode`, the `open` mode argument is ignored, as in c-blosc2):
//! `"r"` read-only shared mapping, `"r+"` read-write shared mapping of an existing file,
//! `"w+"` read-write shared mapping of a new (truncated) file, `"c"` copy-on-write private
//! mapping whose writes never reach the file. Writable modes map `initial_mapping_size` bytes
//! up front; growing past the mapping remaps it to twice the file size (`mremap` on Linux).
//! Writes grow the file with `ftruncate` (except in `"c"` mode). The OS calls are in
//! [`super::super::platform`]; on Windows, as in c-blosc2, the file is as large as the mapping
//! while mapped and cut to its logical size by `destroy`, and a `"c"` mapping cannot grow. Only cframes can use it: one params struct
//! maps one file, so sframes (many files) are refused by the path check in `open`.
//!
//! Unlike c-blosc2, a write through a read-only mapping fails (0 items) instead of faulting,
//! and NULL streams are rejected instead of dereferenced.

use super::super::boundary::guard;
use super::super::platform;
use super::super::types::blosc2_stdio_mmap;
use super::stdio::checked_len;
use std::ffi::{c_char, c_int, c_void, CStr};

/// Undoes a half-done open: closes the file and forgets the path copy.
///
/// # Safety
/// `m` valid; its `file`/`urlpath` NULL or owned by it.
unsafe fn abandon(m: &mut blosc2_stdio_mmap) {
    // SAFETY: both are owned by `m` by contract.
    unsafe {
        if !m.file.is_null() {
            libc::fclose(m.file);
        }
        libc::free(m.urlpath as *mut c_void);
    }
    m.file = std::ptr::null_mut();
    m.urlpath = std::ptr::null_mut();
}

/// `void *blosc2_stdio_mmap_open(const char *urlpath, const char *mode, void *params)`: maps
/// `urlpath` as `params->mode` says (first call) or returns the existing mapping of the same
/// path; returns `params` (the stream) or NULL.
///
/// # Safety
/// `urlpath` NULL or a C string; `params` NULL or a valid `blosc2_stdio_mmap` whose `mode` is
/// NULL or a C string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_open(
    urlpath: *const c_char,
    _mode: *const c_char,
    params: *mut c_void,
) -> *mut c_void {
    guard(|| {
        let null = std::ptr::null_mut();
        if urlpath.is_null() || params.is_null() {
            return Ok(null);
        }
        // SAFETY: valid params struct by contract, used exclusively during this call.
        let m = unsafe { &mut *(params as *mut blosc2_stdio_mmap) };
        // SAFETY: C string by contract.
        let path = unsafe { CStr::from_ptr(urlpath) };
        if !m.addr.is_null() {
            if m.urlpath.is_null() {
                return Ok(null);
            }
            // SAFETY: our own malloc'ed copy of the path.
            let mine = unsafe { CStr::from_ptr(m.urlpath) };
            return Ok(if mine == path { params } else { null });
        }
        if m.mode.is_null() {
            return Ok(null);
        }
        // SAFETY: C string by contract.
        let mode = unsafe { CStr::from_ptr(m.mode) }.to_bytes();
        let Some((access, map, memory_only, fmode, use_initial)) = platform::mmap_mode(mode) else {
            return Ok(null);
        };
        m.urlpath = super::super::boundary::malloc_copy(path.to_bytes_with_nul()) as *mut c_char;
        if m.urlpath.is_null() {
            return Ok(null);
        }
        m.access_flags = access;
        m.map_flags = map;
        m.is_memory_only = memory_only;
        // SAFETY: two C strings.
        m.file = unsafe { libc::fopen(urlpath, fmode.as_ptr()) };
        if m.file.is_null() {
            // SAFETY: the path copy is ours.
            unsafe { abandon(m) };
            return Ok(null);
        }
        // SAFETY: `m.file` is a live stream.
        let size = unsafe { platform::stream_size(m.file) }.unwrap_or(-1);
        let Ok(size) = usize::try_from(size) else {
            // SAFETY: file and path copy are ours.
            unsafe { abandon(m) };
            return Ok(null);
        };
        m.file_size = size;
        m.mapping_size = if use_initial {
            m.initial_mapping_size
        } else {
            size
        };
        m.mapping_size = m.mapping_size.max(size).max(1);
        // SAFETY: `m.file` is a live stream and `m` is not mapped yet.
        if !unsafe { platform::mmap_map(m) } {
            // SAFETY: file and path copy are ours.
            unsafe { abandon(m) };
            return Ok(null);
        }
        if std::env::var_os(crate::env::names::INFO).is_some() {
            // c-blosc2's exact line (its `BLOSC_INFO` macro, "an mapping" included), which
            // python-blosc2's tests look for.
            let mut line = b"[INFO] - Opened memory-mapped file ".to_vec();
            line.extend_from_slice(path.to_bytes());
            line.extend_from_slice(b" in mode ");
            line.extend_from_slice(mode);
            line.extend_from_slice(
                format!(" with an mapping size of {} bytes.\n", m.mapping_size).as_bytes(),
            );
            let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), &line);
        }
        // The caller's mode string need not outlive this call.
        m.mode = std::ptr::null();
        Ok(params)
    })
}

/// `int blosc2_stdio_mmap_close(void *stream)`: the mapping stays until `destroy`; returns 0.
#[no_mangle]
pub extern "C" fn blosc2_stdio_mmap_close(_stream: *mut c_void) -> c_int {
    0
}

/// `int64_t blosc2_stdio_mmap_size(void *stream)`: the logical file size (-1 for NULL).
///
/// # Safety
/// `stream` NULL or a valid `blosc2_stdio_mmap`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_size(stream: *mut c_void) -> i64 {
    guard(|| {
        if stream.is_null() {
            return Ok(-1);
        }
        // SAFETY: valid struct by contract.
        let m = unsafe { &*(stream as *const blosc2_stdio_mmap) };
        Ok(i64::try_from(m.file_size).unwrap_or(i64::MAX))
    })
}

/// Makes the file and the mapping cover `new_size` bytes; false on failure, with the stream's
/// logical size as it was (a `"c"` view on Windows cannot grow: its size must not claim bytes
/// the mapping does not hold).
///
/// # Safety
/// `m` a mapped stream.
unsafe fn grow(m: &mut blosc2_stdio_mmap, new_size: usize) -> bool {
    let old_size = m.file_size;
    if old_size < new_size {
        if !m.is_memory_only {
            let Ok(len) = i64::try_from(new_size) else {
                return false;
            };
            // SAFETY: `m` is mapped.
            if !unsafe { platform::mmap_set_file_len(m, len) } {
                return false;
            }
        }
        m.file_size = new_size;
    }
    if m.mapping_size < m.file_size {
        let want = m.file_size.checked_mul(2).unwrap_or(m.file_size);
        // SAFETY: `m` is mapped (the mapping may move; `m.addr` is updated).
        if !unsafe { platform::mmap_grow(m, want) } {
            if m.file_size != old_size && !m.is_memory_only {
                // Best effort: the file back to its length (it held nothing new yet).
                // SAFETY: `m` is still mapped (a failed growth maps the old size again).
                let _ = unsafe { platform::mmap_set_file_len(m, old_size as i64) };
            }
            m.file_size = old_size;
            return false;
        }
    }
    true
}

/// `int64_t blosc2_stdio_mmap_write(const void *ptr, int64_t size, int64_t nitems, int64_t
/// position, void *stream)`: copies into the mapping (growing file and mapping as needed);
/// returns `nitems`, or 0 on bad arguments, overflow, a read-only mapping or a failed growth.
///
/// # Safety
/// `ptr` valid for `size * nitems` bytes; `stream` NULL or a `blosc2_stdio_mmap`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_write(
    ptr: *const c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(|| {
        if stream.is_null() || ptr.is_null() || position < 0 {
            return Ok(0);
        }
        let Some(n) = checked_len(size, nitems) else {
            return Ok(0);
        };
        if n == 0 {
            return Ok(0);
        }
        let Some(end) = position.checked_add(n) else {
            return Ok(0);
        };
        let (Ok(end), Ok(pos), Ok(n)) = (
            usize::try_from(end),
            usize::try_from(position),
            usize::try_from(n),
        ) else {
            return Ok(0);
        };
        // SAFETY: valid struct by contract.
        let m = unsafe { &mut *(stream as *mut blosc2_stdio_mmap) };
        if m.addr.is_null() || !platform::mmap_writable(m) {
            return Ok(0);
        }
        // SAFETY: `m` is mapped.
        if !unsafe { grow(m, end.max(m.file_size)) } {
            return Ok(0);
        }
        // SAFETY: the mapping covers `file_size >= end` bytes and is writable; `ptr` holds `n`
        // bytes by contract; they cannot overlap a mapping the caller does not know about.
        unsafe { std::ptr::copy(ptr as *const u8, (m.addr as *mut u8).add(pos), n) };
        Ok(nitems)
    })
}

/// `int64_t blosc2_stdio_mmap_read(void **ptr, int64_t size, int64_t nitems, int64_t position,
/// void *stream)`: points `*ptr` into the mapping (no copy); returns `nitems`, or 0 with
/// `*ptr = NULL` on bad arguments or a range past the end of the file.
///
/// # Safety
/// `ptr` NULL or valid; `stream` NULL or a `blosc2_stdio_mmap`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_read(
    ptr: *mut *mut c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(|| {
        if ptr.is_null() {
            return Ok(0);
        }
        let fail = || {
            // SAFETY: `ptr` is valid by contract.
            unsafe { *ptr = std::ptr::null_mut() };
            Ok(0)
        };
        if stream.is_null() || position < 0 {
            return fail();
        }
        let Some(end) = checked_len(size, nitems).and_then(|n| position.checked_add(n)) else {
            return fail();
        };
        // SAFETY: valid struct by contract.
        let m = unsafe { &*(stream as *const blosc2_stdio_mmap) };
        let (Ok(end), Ok(pos)) = (usize::try_from(end), usize::try_from(position)) else {
            return fail();
        };
        if end > m.file_size || m.addr.is_null() {
            return fail();
        }
        // SAFETY: `pos <= file_size <= mapping_size`, so the pointer stays inside the mapping.
        unsafe { *ptr = m.addr.add(pos) as *mut c_void };
        Ok(nitems)
    })
}

/// `int blosc2_stdio_mmap_truncate(void *stream, int64_t size)`: sets the logical size and,
/// unless in `"c"` mode, the file's; -1 on a negative size or failure.
///
/// # Safety
/// `stream` NULL or a `blosc2_stdio_mmap`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_truncate(stream: *mut c_void, size: i64) -> c_int {
    guard(|| {
        if stream.is_null() {
            return Ok(-1);
        }
        let Ok(target) = usize::try_from(size) else {
            return Ok(-1);
        };
        // SAFETY: valid struct by contract.
        let m = unsafe { &mut *(stream as *mut blosc2_stdio_mmap) };
        if m.file_size == target {
            return Ok(0);
        }
        m.file_size = target;
        if m.is_memory_only {
            return Ok(0);
        }
        // SAFETY: `m` is mapped (or its file is gone, which the call reports).
        Ok(if unsafe { platform::mmap_set_file_len(m, size) } {
            0
        } else {
            -1
        })
    })
}

/// `int blosc2_stdio_mmap_destroy(void *params)`: syncs writable shared mappings, unmaps,
/// closes the file, frees the path copy (and `params` itself when `needs_free`); 0 or -1.
///
/// # Safety
/// `params` NULL or a `blosc2_stdio_mmap` (not used afterwards when `needs_free`).
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_destroy(params: *mut c_void) -> c_int {
    guard(|| {
        if params.is_null() {
            return Ok(-1);
        }
        // SAFETY: valid struct by contract.
        let m = unsafe { &mut *(params as *mut blosc2_stdio_mmap) };
        let mut err = 0;
        if m.addr.is_null() || m.file.is_null() {
            err = -1;
        } else {
            // SAFETY: our own live mapping; not used as mapped afterwards.
            if !unsafe { platform::mmap_unmap(m) } {
                err = -1;
            }
        }
        // SAFETY: file and path copy are owned by `m`.
        unsafe {
            if !m.file.is_null() && libc::fclose(m.file) < 0 {
                err = -1;
            }
            libc::free(m.urlpath as *mut c_void);
        }
        m.file = std::ptr::null_mut();
        m.addr = std::ptr::null_mut();
        m.urlpath = std::ptr::null_mut();
        if m.needs_free {
            // SAFETY: the caller handed over a malloc'ed struct by setting `needs_free`.
            unsafe { libc::free(params) };
        }
        Ok(err)
    })
}
