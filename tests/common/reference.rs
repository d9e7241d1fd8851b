//! The real c-blosc2 (libblosc2.so.9 from the pinned python-blosc2 wheel), loaded with dlopen for
//! differential tests. Its location comes from `B2FRAME_REF_LIB`, else from the project's `.venv`
//! made by `scripts/setup-env.sh`. When it cannot be found the tests fail loudly: a differential
//! test that silently skips proves nothing.

#![allow(clippy::missing_transmute_annotations)]

use b2frame::capi::types::{blosc2_cparams, blosc2_dparams};
use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::OnceLock;

type Ctx = *mut c_void;

/// Function pointers into the reference library.
pub struct Reference {
    pub create_cctx: unsafe extern "C" fn(blosc2_cparams) -> Ctx,
    pub create_dctx: unsafe extern "C" fn(blosc2_dparams) -> Ctx,
    pub free_ctx: unsafe extern "C" fn(Ctx),
    pub compress_ctx: unsafe extern "C" fn(Ctx, *const c_void, i32, *mut c_void, i32) -> i32,
    pub decompress_ctx: unsafe extern "C" fn(Ctx, *const c_void, i32, *mut c_void, i32) -> i32,
    pub getitem_ctx:
        unsafe extern "C" fn(Ctx, *const c_void, i32, i32, i32, *mut c_void, i32) -> i32,
    pub shuffle: unsafe extern "C" fn(i32, i32, *const c_void, *mut c_void) -> i32,
    pub unshuffle: unsafe extern "C" fn(i32, i32, *const c_void, *mut c_void) -> i32,
    pub bitshuffle: unsafe extern "C" fn(i32, i32, *const c_void, *mut c_void) -> i32,
    pub bitunshuffle: unsafe extern "C" fn(i32, i32, *const c_void, *mut c_void) -> i32,
    /// The dlopen handle, for looking up further symbols with [`Reference::sym`].
    pub handle: usize,
}

// SAFETY: the struct holds plain function pointers and a dlopen handle, both valid process-wide.
unsafe impl Send for Reference {}
// SAFETY: as above; the reference functions used take their state through explicit contexts.
unsafe impl Sync for Reference {}

/// Path of the reference `libblosc2.so.9`.
pub fn reference_path() -> PathBuf {
    if let Ok(p) = std::env::var("B2FRAME_REF_LIB") {
        return PathBuf::from(p);
    }
    let root = super::project_root();
    let lib = root.join(".venv/lib");
    if let Ok(entries) = std::fs::read_dir(&lib) {
        for e in entries.flatten() {
            let cand = e.path().join("site-packages/blosc2/lib/libblosc2.so.9");
            if cand.exists() {
                return cand;
            }
        }
    }
    panic!(
        "REFERENCE c-blosc2 NOT FOUND: run scripts/setup-env.sh (installs the pinned python-blosc2 \
         wheel into .venv) or set B2FRAME_REF_LIB=/path/to/libblosc2.so.9. Differential tests \
         cannot run without it."
    )
}

impl Reference {
    /// Looks up a symbol of the reference library.
    pub fn sym(&self, name: &str) -> *mut c_void {
        let p = dl::sym(self.handle as *mut c_void, name);
        assert!(!p.is_null(), "reference library lacks symbol {name}");
        p
    }
}

/// The process-wide reference library (loaded once, never unloaded).
pub fn reference() -> &'static Reference {
    static REF: OnceLock<Reference> = OnceLock::new();
    REF.get_or_init(|| {
        let path = reference_path();
        let h = dl::open(&path);
        assert!(!h.is_null(), "loading {} failed", path.display());
        let get = |name: &str| -> *mut c_void {
            let p = dl::sym(h, name);
            assert!(!p.is_null(), "reference library lacks {name}");
            p
        };
        // SAFETY: each symbol has exactly the C signature declared by blosc2.h 3.3.5.
        unsafe {
            let init: unsafe extern "C" fn() = std::mem::transmute(get("blosc2_init"));
            init();
            Reference {
                create_cctx: std::mem::transmute(get("blosc2_create_cctx")),
                create_dctx: std::mem::transmute(get("blosc2_create_dctx")),
                free_ctx: std::mem::transmute(get("blosc2_free_ctx")),
                compress_ctx: std::mem::transmute(get("blosc2_compress_ctx")),
                decompress_ctx: std::mem::transmute(get("blosc2_decompress_ctx")),
                getitem_ctx: std::mem::transmute(get("blosc2_getitem_ctx")),
                shuffle: std::mem::transmute(get("blosc2_shuffle")),
                unshuffle: std::mem::transmute(get("blosc2_unshuffle")),
                bitshuffle: std::mem::transmute(get("blosc2_bitshuffle")),
                bitunshuffle: std::mem::transmute(get("blosc2_bitunshuffle")),
                handle: h as usize,
            }
        }
    })
}

/// Compresses `src` with the reference and the given cparams; returns the chunk.
pub fn ref_compress(cparams: blosc2_cparams, src: &[u8]) -> Vec<u8> {
    let r = reference();
    let mut dst = vec![0u8; src.len() + 32];
    // SAFETY: buffers sized as declared; the context is freed before returning.
    unsafe {
        let ctx = (r.create_cctx)(cparams);
        assert!(!ctx.is_null(), "reference create_cctx failed");
        let n = (r.compress_ctx)(
            ctx,
            src.as_ptr() as *const c_void,
            src.len() as i32,
            dst.as_mut_ptr() as *mut c_void,
            dst.len() as i32,
        );
        (r.free_ctx)(ctx);
        assert!(n > 0, "reference compress failed: {n}");
        dst.truncate(n as usize);
    }
    dst
}

/// Decompresses a chunk with the reference; returns the bytes or the reference's error code.
pub fn ref_decompress(chunk: &[u8], nbytes: usize, nthreads: i16) -> Result<Vec<u8>, i32> {
    let r = reference();
    let mut dst = vec![0u8; nbytes];
    let mut dparams = b2frame::capi::types::BLOSC2_DPARAMS_DEFAULTS;
    dparams.nthreads = nthreads;
    // SAFETY: buffers sized as declared; the context is freed before returning.
    unsafe {
        let ctx = (r.create_dctx)(dparams);
        let n = (r.decompress_ctx)(
            ctx,
            chunk.as_ptr() as *const c_void,
            chunk.len() as i32,
            dst.as_mut_ptr() as *mut c_void,
            dst.len() as i32,
        );
        (r.free_ctx)(ctx);
        if n < 0 {
            return Err(n);
        }
        dst.truncate(n as usize);
    }
    Ok(dst)
}

/// `malloc` of the reference library's C runtime: for buffers whose ownership passes to it
/// (it frees them with that runtime's `free`; on Windows the wheel's DLL uses the UCRT).
pub fn malloc_ref(size: usize) -> *mut c_void {
    #[cfg(unix)]
    // SAFETY: plain allocation (one C runtime on Unix).
    unsafe {
        libc::malloc(size)
    }
    #[cfg(windows)]
    {
        static MALLOC: OnceLock<usize> = OnceLock::new();
        let f = *MALLOC.get_or_init(|| {
            let h = dl::open(std::path::Path::new("ucrtbase.dll"));
            assert!(!h.is_null(), "ucrtbase.dll not found");
            dl::sym(h, "malloc") as usize
        });
        // SAFETY: ucrtbase's `void *malloc(size_t)`.
        unsafe {
            let malloc: unsafe extern "C" fn(usize) -> *mut c_void = std::mem::transmute(f);
            malloc(size)
        }
    }
}

/// `malloc` of b2frame's C runtime (the one the test binary links).
pub fn malloc_ours(size: usize) -> *mut c_void {
    // SAFETY: plain allocation.
    unsafe { libc::malloc(size) }
}

/// Frees memory the reference library allocated (its C runtime's `free`: on Windows the wheel's
/// DLL uses the UCRT, another heap than the test's msvcrt).
///
/// # Safety
/// `p` NULL or allocated by the reference library's `malloc`.
pub unsafe fn free_ref(p: *mut c_void) {
    #[cfg(unix)]
    // SAFETY: forwarded contract (one C runtime on Unix).
    unsafe {
        libc::free(p)
    };
    #[cfg(windows)]
    {
        static FREE: OnceLock<usize> = OnceLock::new();
        let f = *FREE.get_or_init(|| {
            let h = dl::open(std::path::Path::new("ucrtbase.dll"));
            assert!(!h.is_null(), "ucrtbase.dll not found");
            dl::sym(h, "free") as usize
        });
        // SAFETY: ucrtbase's `free`, the one the reference DLL's `malloc` pairs with.
        unsafe {
            let free: unsafe extern "C" fn(*mut c_void) = std::mem::transmute(f);
            free(p)
        }
    }
}

/// Frees memory b2frame allocated (the C runtime the test binary links, as b2frame's).
///
/// # Safety
/// `p` NULL or allocated by b2frame's `malloc`.
pub unsafe fn free_ours(p: *mut c_void) {
    // SAFETY: forwarded contract.
    unsafe { libc::free(p) }
}

/// Sets (`Some`) or removes (`None`) an environment variable for this process and for the
/// reference library's `getenv`: on Windows the wheel's DLL reads the UCRT's own copy of the
/// environment, which `std::env::set_var` (SetEnvironmentVariableW) does not update.
pub fn set_env_for_reference(name: &str, value: Option<&str>) {
    // The tests that use this do so before and after their reference calls, on one thread.
    match value {
        Some(v) => std::env::set_var(name, v),
        None => std::env::remove_var(name),
    }
    #[cfg(windows)]
    {
        let h = dl::open(std::path::Path::new("ucrtbase.dll"));
        assert!(!h.is_null(), "ucrtbase.dll not found");
        let f = dl::sym(h, "_putenv_s");
        let (n, v) = (
            std::ffi::CString::new(name).unwrap(),
            std::ffi::CString::new(value.unwrap_or("")).unwrap(),
        );
        // SAFETY: ucrtbase's `errno_t _putenv_s(const char *, const char *)` with two C strings
        // (an empty value removes the variable).
        let rc = unsafe {
            let putenv: unsafe extern "C" fn(
                *const std::ffi::c_char,
                *const std::ffi::c_char,
            ) -> i32 = std::mem::transmute(f);
            putenv(n.as_ptr(), v.as_ptr())
        };
        assert_eq!(rc, 0, "_putenv_s({name})");
    }
}

/// Loading a shared library and looking up symbols (dlopen/dlsym, LoadLibrary/GetProcAddress).
mod dl {
    use std::ffi::{c_void, CString};
    use std::path::Path;

    #[cfg(unix)]
    pub fn open(path: &Path) -> *mut c_void {
        let c = CString::new(path.to_str().unwrap()).unwrap();
        // RTLD_DEEPBIND: the reference resolves its own (and its bundled codecs') symbols first,
        // so nothing of b2frame linked into the test binary can be mixed into it.
        // SAFETY: dlopen of a regular shared library path.
        unsafe {
            libc::dlopen(
                c.as_ptr(),
                libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND,
            )
        }
    }

    #[cfg(unix)]
    pub fn sym(h: *mut c_void, name: &str) -> *mut c_void {
        let n = CString::new(name).unwrap();
        // SAFETY: h is a live handle; n is NUL-terminated.
        unsafe { libc::dlsym(h, n.as_ptr()) }
    }

    // A DLL's imports are bound to the DLL it names, so the reference cannot pick up b2frame's
    // symbols on Windows (what RTLD_DEEPBIND ensures on Linux).
    #[cfg(windows)]
    pub fn open(path: &Path) -> *mut c_void {
        let c = CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: LoadLibraryA of a NUL-terminated path.
        unsafe { windows_sys::Win32::System::LibraryLoader::LoadLibraryA(c.as_ptr().cast()) }
    }

    #[cfg(windows)]
    pub fn sym(h: *mut c_void, name: &str) -> *mut c_void {
        let n = CString::new(name).unwrap();
        // SAFETY: h is a live module handle; n is NUL-terminated.
        match unsafe {
            windows_sys::Win32::System::LibraryLoader::GetProcAddress(h, n.as_ptr().cast())
        } {
            Some(f) => f as *mut c_void,
            None => std::ptr::null_mut(),
        }
    }
}
