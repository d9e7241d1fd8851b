//! The filesystem backend (I/O id 0, `blosc2_stdio_*`): streams are `malloc`ed
//! `blosc2_stdio_file { FILE *file; }` handles over `fopen`ed files.
//!
//! Transfers are positional (`pread`/`pwrite` on the descriptor behind the `FILE*`, `ReadFile`/
//! `WriteFile` at an offset on Windows), so they
//! neither use nor move the stream position and bypass stdio buffering, as in c-blosc2 3.3.
//! Argument checks follow c-blosc2's `test_stdio_validation.c`: `open` returns NULL, `read`/
//! `write` return 0 items and `truncate`/`size`/`close` return -1 on NULL or negative arguments
//! and on `size * nitems` overflow; a failed `read` never touches `*ptr`.

use super::super::boundary::guard;
use super::super::platform;
use super::super::types::blosc2_stdio_file;
use std::ffi::{c_char, c_int, c_void};

/// Largest transfer handed to one `pread`/`pwrite` call (short transfers are looped anyway).
const MAX_PIECE: usize = 1 << 30;

/// `size * nitems` for non-negative arguments, or None on a negative value or an overflow.
pub(super) fn checked_len(size: i64, nitems: i64) -> Option<i64> {
    if size < 0 || nitems < 0 {
        return None;
    }
    size.checked_mul(nitems)
}

/// Positional transfer of `len` bytes at `pos` through the file behind `file`; returns the
/// bytes transferred (short on EOF or error).
///
/// # Safety
/// `file` must be a live `FILE*`; `buf` valid for `len` bytes (writable when `write` is false).
unsafe fn pio(file: *mut libc::FILE, buf: *mut u8, len: usize, pos: i64, write: bool) -> usize {
    // SAFETY: `file` is a live stream by contract and outlives `f`.
    let Some(f) = (unsafe { platform::file_behind(file) }) else {
        return 0;
    };
    let mut done = 0usize;
    while done < len {
        let Some(at) = pos
            .checked_add(done as i64)
            .and_then(|a| u64::try_from(a).ok())
        else {
            break;
        };
        let n = (len - done).min(MAX_PIECE);
        let r = if write {
            // SAFETY: `buf + done .. + n` lies inside the caller's buffer.
            let src = unsafe { std::slice::from_raw_parts(buf.add(done), n) };
            crate::sys::write_at(&f, src, at)
        } else {
            // SAFETY: as above, and writable by contract.
            let dst = unsafe { std::slice::from_raw_parts_mut(buf.add(done), n) };
            crate::sys::read_at(&f, dst, at)
        };
        match r {
            Ok(0) => break,
            Ok(k) => done += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    done
}

/// The `FILE*` of a stream handle, or None when the handle or its file is NULL.
///
/// # Safety
/// `stream` NULL or a valid `blosc2_stdio_file`.
unsafe fn file_of(stream: *mut c_void) -> Option<*mut libc::FILE> {
    if stream.is_null() {
        return None;
    }
    // SAFETY: non-NULL handle by contract.
    let f = unsafe { (*(stream as *mut blosc2_stdio_file)).file };
    (!f.is_null()).then_some(f)
}

/// The argument checks `write` and `read` share: the stream's `FILE*` and `size * nitems` in
/// bytes, or None (0 items) for a NULL stream or `ptr`, a negative argument or an overflow.
///
/// # Safety
/// `stream` NULL or a valid handle.
unsafe fn transfer_args(
    ptr_is_null: bool,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> Option<(*mut libc::FILE, usize)> {
    // SAFETY: forwarded contract.
    let file = unsafe { file_of(stream) }?;
    let n = checked_len(size, nitems)?;
    if ptr_is_null || position < 0 {
        return None;
    }
    Some((file, usize::try_from(n).ok()?))
}

/// The complete `size`-byte items in `done` bytes.
fn complete_items(done: usize, size: i64) -> i64 {
    if size > 0 {
        done as i64 / size
    } else {
        0
    }
}

/// `void *blosc2_stdio_open(const char *urlpath, const char *mode, void *params)`: `fopen`s
/// the file and returns a `malloc`ed `blosc2_stdio_file`, or NULL. `params` is ignored.
///
/// # Safety
/// `urlpath` and `mode` NULL or C strings.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_open(
    urlpath: *const c_char,
    mode: *const c_char,
    _params: *mut c_void,
) -> *mut c_void {
    guard(|| {
        if urlpath.is_null() || mode.is_null() {
            return Ok(std::ptr::null_mut());
        }
        // SAFETY: two C strings by contract.
        let file = unsafe { libc::fopen(urlpath, mode) };
        if file.is_null() {
            return Ok(std::ptr::null_mut());
        }
        // SAFETY: plain allocation, checked below.
        let h = unsafe { libc::malloc(std::mem::size_of::<blosc2_stdio_file>()) }
            as *mut blosc2_stdio_file;
        if h.is_null() {
            // SAFETY: `file` was opened above and is not used afterwards.
            unsafe { libc::fclose(file) };
            return Ok(std::ptr::null_mut());
        }
        // SAFETY: `h` is a fresh allocation of the right size.
        unsafe { h.write(blosc2_stdio_file { file }) };
        Ok(h as *mut c_void)
    })
}

/// `int blosc2_stdio_close(void *stream)`: `fclose`s the file and frees the handle; -1 for a
/// NULL handle or file.
///
/// # Safety
/// `stream` NULL or a handle from [`blosc2_stdio_open`] (not used afterwards).
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_close(stream: *mut c_void) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let Some(file) = (unsafe { file_of(stream) }) else {
            return Ok(-1);
        };
        // SAFETY: the file and the malloc'ed handle are owned by this call from here on.
        let rc = unsafe { libc::fclose(file) };
        // SAFETY: as above.
        unsafe { libc::free(stream) };
        Ok(rc)
    })
}

/// `int64_t blosc2_stdio_size(void *stream)`: the file size, leaving the stream position
/// unchanged; -1 on error.
///
/// # Safety
/// `stream` NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_size(stream: *mut c_void) -> i64 {
    guard(|| {
        // SAFETY: forwarded contract.
        let Some(file) = (unsafe { file_of(stream) }) else {
            return Ok(-1);
        };
        // SAFETY: `file` is a live stream.
        Ok(unsafe { platform::stream_size(file) }.unwrap_or(-1))
    })
}

/// `int64_t blosc2_stdio_write(const void *ptr, int64_t size, int64_t nitems, int64_t position,
/// void *stream)`: writes at `position`; returns the complete items written (0 on bad
/// arguments).
///
/// # Safety
/// `ptr` valid for `size * nitems` bytes; `stream` NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_write(
    ptr: *const c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(|| {
        // SAFETY: forwarded contract.
        let Some((file, n)) =
            (unsafe { transfer_args(ptr.is_null(), size, nitems, position, stream) })
        else {
            return Ok(0);
        };
        // SAFETY: `ptr` holds `n` bytes by contract; pio only reads them when writing.
        let done = unsafe { pio(file, ptr as *mut u8, n, position, true) };
        Ok(complete_items(done, size))
    })
}

/// `int64_t blosc2_stdio_read(void **ptr, int64_t size, int64_t nitems, int64_t position,
/// void *stream)`: reads into the caller's buffer `*ptr`; returns the complete items read.
///
/// # Safety
/// `ptr` NULL or valid, `*ptr` valid for `size * nitems` bytes; `stream` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_read(
    ptr: *mut *mut c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(|| {
        // SAFETY: forwarded contract.
        let Some((file, n)) =
            (unsafe { transfer_args(ptr.is_null(), size, nitems, position, stream) })
        else {
            return Ok(0);
        };
        // SAFETY: `ptr` is non-NULL and valid by contract.
        let buf = unsafe { *ptr } as *mut u8;
        if n > 0 && buf.is_null() {
            return Ok(0);
        }
        // SAFETY: `buf` holds `n` writable bytes by contract.
        let done = unsafe { pio(file, buf, n, position, false) };
        Ok(complete_items(done, size))
    })
}

/// `int blosc2_stdio_truncate(void *stream, int64_t size)`: sets the file's length (`ftruncate`;
/// `SetFileInformationByHandle` on Windows); -1 on bad
/// arguments or failure.
///
/// # Safety
/// `stream` NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_truncate(stream: *mut c_void, size: i64) -> c_int {
    guard(|| {
        if size < 0 {
            return Ok(-1);
        }
        // SAFETY: forwarded contract.
        let Some(file) = (unsafe { file_of(stream) }) else {
            return Ok(-1);
        };
        // SAFETY: live stream, outliving `f`.
        let Some(f) = (unsafe { platform::file_behind(file) }) else {
            return Ok(-1);
        };
        Ok(if f.set_len(size as u64).is_ok() {
            0
        } else {
            -1
        })
    })
}

/// `int blosc2_stdio_destroy(void *params)`: nothing to release; returns 0.
#[no_mangle]
pub extern "C" fn blosc2_stdio_destroy(_params: *mut c_void) -> c_int {
    0
}
