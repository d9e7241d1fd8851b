//! Shared libraries loaded at run time (the dynamically loaded plugins, see
//! [`crate::dynamic`]): `dlopen`, `dlsym` and the plugins' `info` tables, on Unix. Everything
//! here hands out addresses as opaque [`Symbol`]s; only the C facade turns one into a function
//! it calls.

use std::ffi::{c_char, c_void, CStr, CString};
use std::path::Path;
use std::ptr::NonNull;

/// An address found in a loaded library (a function or a data object).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbol(NonNull<c_void>);

// SAFETY: an address in a library that stays loaded for the rest of the process (loaded
// libraries are never unloaded once a symbol was handed out): any thread may use it.
unsafe impl Send for Symbol {}
// SAFETY: as above; a `Symbol` is only an address.
unsafe impl Sync for Symbol {}

impl Symbol {
    /// The address.
    pub fn addr(self) -> *mut c_void {
        self.0.as_ptr()
    }
}

/// A library opened with `dlopen`, closed on drop unless [`Library::keep`] is called.
#[derive(Debug)]
pub struct Library {
    handle: NonNull<c_void>,
    keep: bool,
}

/// The last `dlerror` message (or a fallback).
#[cfg(unix)]
fn last_error() -> String {
    // SAFETY: dlerror takes no arguments; it returns NULL or a NUL-terminated string valid
    // until the next dl* call on this thread, copied at once.
    let p = unsafe { libc::dlerror() };
    if p.is_null() {
        "unknown dlopen error".to_string()
    } else {
        // SAFETY: non-NULL and NUL-terminated (dlerror's contract).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

impl Library {
    /// Opens `path` (a file name without a slash is looked up on the system's library search
    /// path). `RTLD_LAZY | RTLD_LOCAL`, like c-blosc2, plus `RTLD_DEEPBIND` on glibc: a plugin
    /// binds its own symbols before those of libraries loaded earlier, so two plugins that
    /// bundle different builds of the same C++ library (OpenHTJ2K in `blosc2_htj2k` and in
    /// `blosc2_openhtj2k`) do not run each other's code.
    #[cfg(unix)]
    pub fn open(path: &Path) -> Result<Library, String> {
        use std::os::unix::ffi::OsStrExt;
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| "a path with a NUL byte".to_string())?;
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        let flags = libc::RTLD_LAZY | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND;
        #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
        let flags = libc::RTLD_LAZY | libc::RTLD_LOCAL;
        // SAFETY: a NUL-terminated path and valid flags. Loading runs the library's
        // initialisers: the plugin is trusted code, as in c-blosc2.
        let h = unsafe { libc::dlopen(c.as_ptr(), flags) };
        NonNull::new(h)
            .map(|handle| Library {
                handle,
                keep: false,
            })
            .ok_or_else(last_error)
    }

    /// Not on this platform.
    #[cfg(not(unix))]
    pub fn open(path: &Path) -> Result<Library, String> {
        Err(format!(
            "{}: loading plugins is not supported on this platform",
            path.display()
        ))
    }

    /// The address of `name`, `None` when the library does not define it.
    #[cfg(unix)]
    pub fn symbol(&self, name: &CStr) -> Option<Symbol> {
        // SAFETY: a live handle from dlopen and a NUL-terminated name.
        let p = unsafe { libc::dlsym(self.handle.as_ptr(), name.as_ptr()) };
        NonNull::new(p).map(Symbol)
    }

    /// Not on this platform.
    #[cfg(not(unix))]
    pub fn symbol(&self, _name: &CStr) -> Option<Symbol> {
        None
    }

    /// Reads a plugin's `info` table: `n` consecutive `char *` naming the plugin's functions
    /// (c-blosc2's `codec_info`, `filter_info`, `tuner_info`), and looks each name up.
    /// `None` when `info` is missing, a name pointer is NULL or a function is not defined.
    pub fn info_functions(&self, n: usize) -> Option<Vec<(String, Symbol)>> {
        let info = self.symbol(c"info")?;
        let table = info.addr() as *const *const c_char;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            // SAFETY: the plugin contract (c-blosc2's `*_info` structs): `info` is a struct
            // of `n` `char *` fields, each NULL or a NUL-terminated string in the library,
            // which stays loaded while we read it.
            let name = unsafe {
                let p = *table.add(i);
                if p.is_null() {
                    return None;
                }
                CStr::from_ptr(p)
            };
            let f = self.symbol(name)?;
            out.push((name.to_string_lossy().into_owned(), f));
        }
        Some(out)
    }

    /// Keeps the library loaded for the rest of the process (its symbols are in use).
    pub fn keep(mut self) {
        self.keep = true;
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        #[cfg(unix)]
        if !self.keep {
            // SAFETY: a handle from dlopen, closed once; no symbol of it was handed out
            // (`keep` was not called).
            unsafe { libc::dlclose(self.handle.as_ptr()) };
        }
    }
}
