//! The simple global functions of `blosc2.h`: error strings, versions, codec names, default
//! parameters, timestamps, and the path helpers (`blosc2_remove_dir`, `blosc2_remove_urlpath`,
//! `blosc2_rename_urlpath`) that nearly every c-blosc2 disk test uses.
//!
//! Behaviour follows c-blosc2 3.3.5 (checked with ctypes against the reference), except where
//! the reference crashes on bad input (NULL names, unknown codec names): there these functions
//! return an error code instead.

use super::boundary::{guard, malloc_copy};
use super::registry;
use super::types::*;
use crate::error::{Error, Result};
use std::ffi::{c_char, c_int, CStr};
use std::path::Path;

/// NUL-terminated `blosc2_error_string` messages, indexed by `-code - 1`.
fn error_cstr(code: c_int) -> &'static CStr {
    // The static NUL-terminated copies of `Error::message`, built once.
    static TABLE: std::sync::OnceLock<Vec<std::ffi::CString>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        Error::ALL
            .iter()
            .map(|e| std::ffi::CString::new(e.message()).expect("messages have no NUL"))
            .collect()
    });
    match Error::from_code(code) {
        Some(e) => table[(-e.code() - 1) as usize].as_c_str(),
        None => c"Unknown error",
    }
}

/// `const char *blosc2_error_string(int error_code)`: a static message; "Unknown error" for
/// anything that is not a `BLOSC2_ERROR_*` failure code (including 0).
#[no_mangle]
pub extern "C" fn blosc2_error_string(error_code: c_int) -> *const c_char {
    guard(|| Ok(error_cstr(error_code).as_ptr()))
}

/// `const char *blosc2_get_version_string(void)`: the c-blosc2 release b2frame is compatible
/// with ("3.3.5"), since callers compare it with `BLOSC2_VERSION_STRING`.
#[no_mangle]
pub extern "C" fn blosc2_get_version_string() -> *const c_char {
    c"3.3.5".as_ptr()
}

/// `const char *b2frame_version_string(void)`: b2frame's own version.
#[no_mangle]
pub extern "C" fn b2frame_version_string() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// `int b2frame_set_durable(int on)`: switches durable mode on (`on != 0`) or off for the whole
/// process and returns the previous setting (1 or 0). In durable mode every call that changes
/// a frame on disk orders its writes with `fdatasync` barriers, so that a call that returned
/// success survives a power cut and an interrupted one leaves the state before it (see
/// docs/durability.md). The default comes from the environment variable `B2FRAME_DURABLE`
/// (any value but empty and "0" switches it on).
#[no_mangle]
pub extern "C" fn b2frame_set_durable(on: c_int) -> c_int {
    guard(|| Ok(c_int::from(crate::frame::record::set_durable(on != 0))))
}

/// `int b2frame_get_durable(void)`: 1 when durable mode is on, else 0.
#[no_mangle]
pub extern "C" fn b2frame_get_durable() -> c_int {
    guard(|| Ok(c_int::from(crate::frame::record::durable())))
}

/// `const char *blosc2_list_compressors(void)`: the built-in codec names of the codec table,
/// comma-separated.
#[no_mangle]
pub extern "C" fn blosc2_list_compressors() -> *const c_char {
    static LIST: std::sync::OnceLock<std::ffi::CString> = std::sync::OnceLock::new();
    guard(|| {
        Ok(LIST
            .get_or_init(|| {
                std::ffi::CString::new(crate::codecs::list_compressors()).unwrap_or_default()
            })
            .as_ptr())
    })
}

/// The library code, library name and library version behind a codec name, from the codec
/// table. A registered codec reports its `complib`, the name of the (first) codec registered
/// with that complib, and the version "unknown", like c-blosc2.
fn complib_of(name: &[u8]) -> Option<(c_int, String, String)> {
    let code = u8::try_from(registry::compname_bytes_to_compcode(name)).ok()?;
    let info = crate::codecs::table::codec(code)?;
    let lib = match info.origin {
        crate::registry::Origin::Registered => crate::codecs::table::complib_name(info.complib)?,
        _ => info.library.to_string(),
    };
    Some((c_int::from(info.complib), lib, info.library_version()))
}

/// Copies `s` into a malloc'ed NUL-terminated string the caller `free()`s.
fn malloc_cstring(s: &str) -> *mut c_char {
    let mut bytes = Vec::with_capacity(s.len() + 1);
    bytes.extend_from_slice(s.as_bytes());
    bytes.push(0);
    malloc_copy(&bytes).cast()
}

/// Borrows a C string as bytes (no UTF-8 requirement: names and paths are byte strings).
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string valid for `'a`.
unsafe fn cbytes<'a>(p: *const c_char) -> Result<&'a [u8]> {
    if p.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: non-null and NUL-terminated by this function's contract.
    Ok(unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// `int blosc2_get_complib_info(const char *compname, char **complib, char **version)`:
/// returns the library code and sets two malloc'ed strings (library name and version) the
/// caller frees. Unknown names give `BLOSC2_ERROR_NOT_FOUND` with both outputs NULL (the
/// reference crashes there); NULL arguments give `BLOSC2_ERROR_NULL_POINTER`.
///
/// # Safety
/// `compname` must be NULL or a C string; `complib`/`version` NULL or writable pointers.
#[no_mangle]
pub unsafe extern "C" fn blosc2_get_complib_info(
    compname: *const c_char,
    complib: *mut *mut c_char,
    version: *mut *mut c_char,
) -> c_int {
    guard(|| {
        if complib.is_null() || version.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: both checked non-null; the caller passes writable `char *` slots.
        unsafe {
            *complib = std::ptr::null_mut();
            *version = std::ptr::null_mut();
        }
        // SAFETY: compname is NULL or a C string by this function's contract.
        let name = unsafe { cbytes(compname) }?;
        let (code, lib, ver) = complib_of(name).ok_or(Error::NotFound)?;
        let (l, v) = (malloc_cstring(&lib), malloc_cstring(&ver));
        if l.is_null() || v.is_null() {
            // SAFETY: both come from malloc (or are NULL, which free accepts).
            unsafe {
                libc::free(l.cast());
                libc::free(v.cast());
            }
            return Err(Error::MemoryAlloc);
        }
        // SAFETY: checked non-null above.
        unsafe {
            *complib = l;
            *version = v;
        }
        Ok(code)
    })
}

/// `int blosc2_compcode_to_compname(int compcode, const char **compname)`: returns `compcode`
/// and sets the static (or registered) name, or -1 and NULL for an unknown code.
///
/// # Safety
/// `compname` must be NULL or a writable `const char *` slot.
#[no_mangle]
pub unsafe extern "C" fn blosc2_compcode_to_compname(
    compcode: c_int,
    compname: *mut *const c_char,
) -> c_int {
    guard(|| {
        let (code, name) = registry::compcode_to_compname(compcode);
        if !compname.is_null() {
            // SAFETY: non-null writable slot by this function's contract.
            unsafe { *compname = name };
        }
        Ok(code)
    })
}

/// `int blosc2_compname_to_compcode(const char *compname)`: the compcode, or -1 when unknown
/// (also for NULL, where the reference crashes).
///
/// # Safety
/// `compname` must be NULL or a C string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_compname_to_compcode(compname: *const c_char) -> c_int {
    guard(|| {
        // SAFETY: NULL or a C string by this function's contract.
        Ok(match unsafe { cbytes(compname) } {
            Ok(name) => registry::compname_bytes_to_compcode(name),
            Err(_) => -1,
        })
    })
}

/// `blosc2_cparams blosc2_get_blosc2_cparams_defaults(void)`.
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_cparams_defaults() -> blosc2_cparams {
    BLOSC2_CPARAMS_DEFAULTS
}

/// `blosc2_dparams blosc2_get_blosc2_dparams_defaults(void)`.
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_dparams_defaults() -> blosc2_dparams {
    BLOSC2_DPARAMS_DEFAULTS
}

/// `blosc2_storage blosc2_get_blosc2_storage_defaults(void)`.
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_storage_defaults() -> blosc2_storage {
    BLOSC2_STORAGE_DEFAULTS
}

/// `blosc2_io blosc2_get_blosc2_io_defaults(void)` (its `name` is a static string).
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_io_defaults() -> blosc2_io {
    BLOSC2_IO_DEFAULTS
}

/// `blosc2_stdio_mmap blosc2_get_blosc2_stdio_mmap_defaults(void)` (its `mode` is static).
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_stdio_mmap_defaults() -> blosc2_stdio_mmap {
    BLOSC2_STDIO_MMAP_DEFAULTS
}

/// `void blosc_set_timestamp(blosc_timestamp_t *timestamp)`: the monotonic clock.
///
/// # Safety
/// `timestamp` must be NULL (ignored) or point to a writable `blosc_timestamp_t`.
#[no_mangle]
pub unsafe extern "C" fn blosc_set_timestamp(timestamp: *mut blosc_timestamp_t) {
    if timestamp.is_null() {
        return;
    }
    // SAFETY: non-null and writable by this function's contract.
    super::platform::set_timestamp(unsafe { &mut *timestamp });
}

/// `double blosc_elapsed_nsecs(blosc_timestamp_t start, blosc_timestamp_t end)`.
#[no_mangle]
pub extern "C" fn blosc_elapsed_nsecs(
    start_time: blosc_timestamp_t,
    end_time: blosc_timestamp_t,
) -> f64 {
    super::platform::elapsed_nsecs(start_time, end_time)
}

/// `double blosc_elapsed_secs(blosc_timestamp_t start, blosc_timestamp_t end)`.
#[no_mangle]
pub extern "C" fn blosc_elapsed_secs(
    start_time: blosc_timestamp_t,
    end_time: blosc_timestamp_t,
) -> f64 {
    1e-9 * super::platform::elapsed_nsecs(start_time, end_time)
}

/// Removes the files directly inside `dir` and then `dir` itself, like c-blosc2: it does not
/// recurse (a subdirectory makes it fail with `Failure`), a missing or non-directory path is
/// `NotFound`, and a failing final `rmdir` is ignored.
pub fn remove_dir(dir: &Path) -> Result<()> {
    // A path that cannot be listed: NOT_FOUND (`opendir` failed) in c-blosc2 on POSIX,
    // FILE_OPEN (`_findfirst` failed) on Windows.
    let unlistable = if cfg!(windows) {
        Error::FileOpen
    } else {
        Error::NotFound
    };
    let entries = std::fs::read_dir(dir).map_err(|_| unlistable)?;
    for entry in entries {
        let entry = entry.map_err(|_| Error::Failure)?;
        let path = entry.path();
        // Entries that vanished or cannot be stat'ed are skipped, as in the reference.
        if std::fs::metadata(&path).is_ok() {
            std::fs::remove_file(&path).map_err(|_| Error::Failure)?;
        }
    }
    let _ = std::fs::remove_dir(dir);
    Ok(())
}

/// Removes a cframe file (and its `.b2lock` sidecar) or an sframe directory; a missing path is
/// not an error.
pub fn remove_urlpath(path: &Path) -> Result<()> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(_) => return Err(Error::Failure),
    };
    if meta.is_dir() {
        return remove_dir(path);
    }
    std::fs::remove_file(path).map_err(|_| Error::FileRemove)?;
    let mut lock = path.as_os_str().to_owned();
    lock.push(".b2lock");
    // Best effort: the sidecar exists only when locking was used.
    let _ = std::fs::remove_file(lock);
    Ok(())
}

/// Renames `old` to `new` (`rename(2)` semantics); `Failure` when `old` is missing or the
/// rename fails.
pub fn rename_urlpath(old: &Path, new: &Path) -> Result<()> {
    std::fs::metadata(old).map_err(|_| Error::Failure)?;
    std::fs::rename(old, new).map_err(|_| Error::Failure)
}

/// A C path string as a `Path` (any bytes but NUL are valid on POSIX).
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string valid for `'a`.
unsafe fn cpath<'a>(p: *const c_char) -> Result<&'a Path> {
    // SAFETY: forwarded contract.
    let bytes = unsafe { cbytes(p) }?;
    crate::sys::path_from_bytes(bytes).ok_or(Error::InvalidParam)
}

/// `int blosc2_remove_dir(const char *path)`: see [`remove_dir`]; NULL or "" is
/// `BLOSC2_ERROR_INVALID_PARAM`.
///
/// # Safety
/// `path` must be NULL or a C string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_remove_dir(path: *const c_char) -> c_int {
    guard(|| {
        // SAFETY: NULL or a C string by this function's contract.
        let p = unsafe { cpath(path) }.map_err(|_| Error::InvalidParam)?;
        if p.as_os_str().is_empty() {
            return Err(Error::InvalidParam);
        }
        remove_dir(p).map(|()| 0)
    })
}

/// `int blosc2_remove_urlpath(const char *path)`: see [`remove_urlpath`]; NULL is a no-op.
///
/// # Safety
/// `path` must be NULL or a C string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_remove_urlpath(path: *const c_char) -> c_int {
    guard(|| {
        if path.is_null() {
            return Ok(0);
        }
        // SAFETY: non-null C string by this function's contract.
        let p = unsafe { cpath(path) }?;
        remove_urlpath(p).map(|()| 0)
    })
}

/// `int blosc2_rename_urlpath(char *old_urlpath, char *new_path)`: see [`rename_urlpath`];
/// a NULL argument is a no-op returning 0 (as in c-blosc2).
///
/// # Safety
/// Both arguments must be NULL or C strings.
#[no_mangle]
pub unsafe extern "C" fn blosc2_rename_urlpath(
    old_urlpath: *mut c_char,
    new_path: *mut c_char,
) -> c_int {
    guard(|| {
        if old_urlpath.is_null() || new_path.is_null() {
            return Ok(0);
        }
        // SAFETY: both non-null C strings by this function's contract.
        let (old, new) = unsafe { (cpath(old_urlpath)?, cpath(new_path)?) };
        rename_urlpath(old, new).map(|()| 0)
    })
}

/// Largest `ndim` the index helpers accept (`B2ND_MAX_DIM`).
const MAX_DIM: usize = 16;

/// C-order (row-major) multi-index of flat item `i` in an array of `shape`. Zero extents
/// (which would divide by zero in the reference) give index 0 in the affected dimensions.
pub fn unidim_to_multidim(shape: &[i64], i: i64, index: &mut [i64]) {
    let ndim = shape.len();
    if ndim == 0 {
        return;
    }
    let mut strides = [0i64; MAX_DIM];
    strides[ndim - 1] = 1;
    for j in (0..ndim - 1).rev() {
        strides[j] = shape[j + 1].wrapping_mul(strides[j + 1]);
    }
    index[0] = i.checked_div(strides[0]).unwrap_or(0);
    for j in 1..ndim {
        let rem = i.checked_rem(strides[j - 1]).unwrap_or(0);
        index[j] = rem.checked_div(strides[j]).unwrap_or(0);
    }
}

/// `void blosc2_unidim_to_multidim(uint8_t ndim, int64_t *shape, int64_t i, int64_t *index)`.
/// `ndim` > 16 or NULL arrays leave `index` untouched (the reference asserts/crashes).
///
/// # Safety
/// `shape` and `index` must hold `ndim` items (or be NULL).
#[no_mangle]
pub unsafe extern "C" fn blosc2_unidim_to_multidim(
    ndim: u8,
    shape: *mut i64,
    i: i64,
    index: *mut i64,
) {
    guard(|| {
        let n = ndim as usize;
        if n == 0 || n > MAX_DIM || shape.is_null() || index.is_null() {
            return Ok(());
        }
        // SAFETY: both non-null and holding `ndim` items by this function's contract; the
        // shape is copied before the index is written in case the caller aliased them.
        let shape: Vec<i64> = unsafe { std::slice::from_raw_parts(shape, n) }.to_vec();
        // SAFETY: as above.
        let index = unsafe { std::slice::from_raw_parts_mut(index, n) };
        unidim_to_multidim(&shape, i, index);
        Ok(())
    })
}

/// `void blosc2_multidim_to_unidim(const int64_t *index, int8_t ndim, const int64_t *strides,
/// int64_t *i)`: `*i = sum(index[j] * strides[j])` (wrapping on overflow).
///
/// # Safety
/// `index`/`strides` must hold `ndim` items; `i` must be writable (NULL is ignored).
#[no_mangle]
pub unsafe extern "C" fn blosc2_multidim_to_unidim(
    index: *const i64,
    ndim: i8,
    strides: *const i64,
    i: *mut i64,
) {
    guard(|| {
        if i.is_null() {
            return Ok(());
        }
        let n = ndim.max(0) as usize;
        let mut acc = 0i64;
        if n > 0 && !index.is_null() && !strides.is_null() {
            // SAFETY: both non-null and holding `ndim` items by this function's contract.
            let (idx, st) = unsafe {
                (
                    std::slice::from_raw_parts(index, n),
                    std::slice::from_raw_parts(strides, n),
                )
            };
            for (a, b) in idx.iter().zip(st) {
                acc = acc.wrapping_add(a.wrapping_mul(*b));
            }
        }
        // SAFETY: non-null and writable by this function's contract.
        unsafe { *i = acc };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Built-in codecs: (compcode, name).
    const CODECS: [(c_int, &str); 5] = [
        (BLOSC_BLOSCLZ, BLOSC_BLOSCLZ_COMPNAME),
        (BLOSC_LZ4, BLOSC_LZ4_COMPNAME),
        (BLOSC_LZ4HC, BLOSC_LZ4HC_COMPNAME),
        (BLOSC_ZLIB, BLOSC_ZLIB_COMPNAME),
        (BLOSC_ZSTD, BLOSC_ZSTD_COMPNAME),
    ];

    fn s(p: *const c_char) -> String {
        // SAFETY: every function under test returns NULL-free static or malloc'ed C strings.
        unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string()
    }

    #[test]
    fn error_strings() {
        assert_eq!(s(blosc2_error_string(-1)), "Generic failure");
        assert_eq!(s(blosc2_error_string(-37)), "Frame lock failure");
        assert_eq!(s(blosc2_error_string(0)), "Unknown error");
        assert_eq!(s(blosc2_error_string(-38)), "Unknown error");
        assert_eq!(s(blosc2_error_string(i32::MIN)), "Unknown error");
        assert_eq!(s(blosc2_error_string(5)), "Unknown error");
    }

    #[test]
    fn versions_and_names() {
        assert_eq!(s(blosc2_get_version_string()), BLOSC2_VERSION_STRING);
        assert_eq!(s(b2frame_version_string()), env!("CARGO_PKG_VERSION"));
        assert_eq!(s(blosc2_list_compressors()), "blosclz,lz4,lz4hc,zlib,zstd");
        for (code, name) in CODECS {
            let mut p: *const c_char = std::ptr::null();
            // SAFETY: valid out-pointer; the name is a static C string.
            assert_eq!(unsafe { blosc2_compcode_to_compname(code, &mut p) }, code);
            assert_eq!(s(p), name);
            let c = std::ffi::CString::new(name).unwrap();
            // SAFETY: valid C string.
            assert_eq!(unsafe { blosc2_compname_to_compcode(c.as_ptr()) }, code);
        }
        let mut p: *const c_char = c"x".as_ptr();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { blosc2_compcode_to_compname(3, &mut p) }, -1);
        assert!(p.is_null());
        // SAFETY: valid C strings / NULL.
        unsafe {
            assert_eq!(blosc2_compname_to_compcode(c"LZ4".as_ptr()), -1);
            assert_eq!(blosc2_compname_to_compcode(std::ptr::null()), -1);
        }
    }

    #[test]
    fn complib_info() {
        let mut lib: *mut c_char = std::ptr::null_mut();
        let mut ver: *mut c_char = std::ptr::null_mut();
        for (name, code, libname) in [
            (c"blosclz", 0, "BloscLZ"),
            (c"lz4", 1, "LZ4"),
            (c"lz4hc", 1, "LZ4"),
            (c"zlib", 3, "Zlib"),
            (c"zstd", 4, "Zstd"),
        ] {
            // SAFETY: valid name and out-pointers; the results are malloc'ed and freed below.
            unsafe {
                assert_eq!(
                    blosc2_get_complib_info(name.as_ptr(), &mut lib, &mut ver),
                    code
                );
                assert_eq!(s(lib), libname);
                assert!(!s(ver).is_empty());
                libc::free(lib.cast());
                libc::free(ver.cast());
            }
        }
        // SAFETY: valid pointers; unknown names leave NULL outputs.
        unsafe {
            assert_eq!(
                blosc2_get_complib_info(c"foo".as_ptr(), &mut lib, &mut ver),
                -16
            );
            assert!(lib.is_null() && ver.is_null());
            assert_eq!(
                blosc2_get_complib_info(std::ptr::null(), &mut lib, &mut ver),
                -32
            );
        }
        assert_eq!(crate::codecs::zstd::version(), "1.5.7");
        assert_eq!(crate::codecs::lz4::version(), "1.10.0");
    }

    #[test]
    fn timestamps() {
        // SAFETY: a struct of integers (or one integer): all-zero is a valid value.
        let mut a: blosc_timestamp_t = unsafe { std::mem::zeroed() };
        let mut b = a;
        // SAFETY: valid timestamp pointers.
        unsafe {
            blosc_set_timestamp(&mut a);
            std::thread::sleep(std::time::Duration::from_millis(2));
            blosc_set_timestamp(&mut b);
        }
        let d = blosc_elapsed_nsecs(a, b);
        assert!((2e6..10e9).contains(&d), "{d}");
        #[cfg(unix)]
        {
            let x = libc::timespec {
                tv_sec: 10,
                tv_nsec: 900_000_000,
            };
            let y = libc::timespec {
                tv_sec: 12,
                tv_nsec: 100_000_000,
            };
            assert_eq!(blosc_elapsed_nsecs(x, y), 1.2e9);
            assert!((blosc_elapsed_secs(x, y) - 1.2).abs() < 1e-12);
        }
    }

    #[test]
    fn index_conversions() {
        let shape = [3i64, 4, 5];
        let mut idx = [0i64; 3];
        unidim_to_multidim(&shape, 37, &mut idx);
        assert_eq!(idx, [1, 3, 2]);
        let strides = [20i64, 5, 1];
        let mut flat = -1i64;
        // SAFETY: arrays of ndim items and a writable output.
        unsafe { blosc2_multidim_to_unidim(idx.as_ptr(), 3, strides.as_ptr(), &mut flat) };
        assert_eq!(flat, 37);
        // A zero extent must not divide by zero.
        unidim_to_multidim(&[2, 0, 3], 5, &mut idx);
        // SAFETY: ndim > 16 is refused before any pointer is read.
        unsafe { blosc2_unidim_to_multidim(17, std::ptr::null_mut(), 0, std::ptr::null_mut()) };
    }

    /// A fresh directory, removed with everything in it when the guard is dropped.
    fn tmpdir(tag: &str) -> tempfile::TempDir {
        crate::test_util::temp_dir(&format!("b2frame-info-{tag}-"))
    }

    fn c(p: &Path) -> std::ffi::CString {
        std::ffi::CString::new(crate::sys::path_bytes(p).unwrap()).unwrap()
    }

    #[test]
    fn remove_and_rename() {
        let dir = tmpdir("rm");
        let d = dir.path();
        let f = d.join("a.b2frame");
        std::fs::write(&f, b"x").unwrap();
        std::fs::write(d.join("a.b2frame.b2lock"), b"").unwrap();
        // SAFETY: all arguments are valid C strings or NULL.
        unsafe {
            assert_eq!(blosc2_remove_urlpath(c(&f).as_ptr()), 0);
            assert!(!f.exists() && !d.join("a.b2frame.b2lock").exists());
            assert_eq!(blosc2_remove_urlpath(c(&f).as_ptr()), 0, "missing is fine");
            assert_eq!(blosc2_remove_urlpath(std::ptr::null()), 0);

            let g = d.join("g");
            std::fs::write(&g, b"y").unwrap();
            let h = d.join("h");
            let (gc, hc) = (c(&g), c(&h));
            let (gp, hp) = (gc.as_ptr() as *mut c_char, hc.as_ptr() as *mut c_char);
            assert_eq!(blosc2_rename_urlpath(gp, hp), 0);
            assert!(h.exists() && !g.exists());
            assert_eq!(blosc2_rename_urlpath(gp, hp), -1, "old path is gone");
            assert_eq!(blosc2_rename_urlpath(gp, std::ptr::null_mut()), 0);

            // An sframe-like directory: files only.
            let sf = d.join("s.b2frame");
            std::fs::create_dir(&sf).unwrap();
            std::fs::write(sf.join("chunks.b2frame"), b"z").unwrap();
            std::fs::write(sf.join("00000000.chunk"), b"z").unwrap();
            assert_eq!(blosc2_remove_urlpath(c(&sf).as_ptr()), 0);
            assert!(!sf.exists());

            // remove_dir: not recursive; a file or a missing path cannot be listed, which is
            // NOT_FOUND on POSIX and FILE_OPEN on Windows (as in c-blosc2); InvalidParam for
            // NULL/"".
            let unlistable = if cfg!(windows) { -15 } else { -16 };
            let nested = d.join("n");
            std::fs::create_dir_all(nested.join("sub")).unwrap();
            assert_eq!(blosc2_remove_dir(c(&nested).as_ptr()), -1);
            assert_eq!(blosc2_remove_dir(c(&h).as_ptr()), unlistable);
            assert_eq!(
                blosc2_remove_dir(c(&d.join("missing")).as_ptr()),
                unlistable
            );
            assert_eq!(blosc2_remove_dir(std::ptr::null()), -12);
            assert_eq!(blosc2_remove_dir(c"".as_ptr()), -12);
        }
    }
}
