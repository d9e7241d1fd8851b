//! The simple global functions of src/capi/info.rs against the reference c-blosc2 3.3.5: same
//! results for the same inputs. Known, deliberate differences are excluded and named:
//! plugin codecs 32..=40 (registered by the reference's blosc2_init, not shipped by b2frame),
//! the zlib library version (zlib-ng vs zlib-rs), and inputs that crash the reference.

use crate::common;

use b2frame::capi::info;
use b2frame::capi::types::*;
use std::ffi::{c_char, c_int, CStr, CString};
use std::path::Path;

fn sym<T: Copy>(name: &str) -> T {
    let p = common::reference::reference().sym(name);
    assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<*mut u8>());
    // SAFETY: T is the function-pointer type of `name` as declared by blosc2.h 3.3.5.
    unsafe { std::mem::transmute_copy(&p) }
}

fn text(p: *const c_char) -> Option<String> {
    // SAFETY: the functions under test return NULL or NUL-terminated strings.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

#[test]
fn error_strings_match() {
    let r: extern "C" fn(c_int) -> *const c_char = sym("blosc2_error_string");
    for code in (-45..=3).chain([i32::MIN, i32::MAX, -1000]) {
        assert_eq!(
            text(info::blosc2_error_string(code)),
            text(r(code)),
            "code {code}"
        );
    }
}

#[test]
fn versions_and_compressor_list_match() {
    let v: extern "C" fn() -> *const c_char = sym("blosc2_get_version_string");
    let l: extern "C" fn() -> *const c_char = sym("blosc2_list_compressors");
    assert_eq!(text(info::blosc2_get_version_string()), text(v()));
    assert_eq!(text(info::blosc2_list_compressors()), text(l()));
}

#[test]
fn codec_names_match() {
    let c2n: unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int =
        sym("blosc2_compcode_to_compname");
    let n2c: unsafe extern "C" fn(*const c_char) -> c_int = sym("blosc2_compname_to_compcode");
    for code in (-3..=300).filter(|c| !(32..=40).contains(c)) {
        let (mut a, mut b): (*const c_char, *const c_char) = (c"x".as_ptr(), c"x".as_ptr());
        // SAFETY: valid out-pointers.
        let (ra, rb) = unsafe {
            (
                info::blosc2_compcode_to_compname(code, &mut a),
                c2n(code, &mut b),
            )
        };
        assert_eq!((ra, text(a)), (rb, text(b)), "compcode {code}");
    }
    for name in [
        "blosclz", "lz4", "lz4hc", "zlib", "zstd", "BloscLZ", "LZ4", "", "zstd ", "foo",
    ] {
        let c = CString::new(name).unwrap();
        // SAFETY: valid C strings.
        let (a, b) = unsafe {
            (
                info::blosc2_compname_to_compcode(c.as_ptr()),
                n2c(c.as_ptr()),
            )
        };
        assert_eq!(a, b, "compname {name:?}");
    }
}

#[test]
fn complib_info_matches_for_builtin_codecs() {
    let f: unsafe extern "C" fn(*const c_char, *mut *mut c_char, *mut *mut c_char) -> c_int =
        sym("blosc2_get_complib_info");
    for name in [c"blosclz", c"lz4", c"lz4hc", c"zlib", c"zstd"] {
        let mut out = [[std::ptr::null_mut::<c_char>(); 2]; 2];
        // SAFETY: valid name and out-pointers; every returned string is malloc'ed and freed.
        let (ra, rb) = unsafe {
            let [a, b] = &mut out;
            let ra = info::blosc2_get_complib_info(name.as_ptr(), &mut a[0], &mut a[1]);
            let rb = f(name.as_ptr(), &mut b[0], &mut b[1]);
            (ra, rb)
        };
        assert_eq!(ra, rb, "{name:?}");
        assert_eq!(text(out[0][0]), text(out[1][0]), "library name of {name:?}");
        if name != c"zlib" {
            assert_eq!(
                text(out[0][1]),
                text(out[1][1]),
                "library version of {name:?}"
            );
        }
        for (ours, theirs) in out[0].iter().zip(&out[1]) {
            // SAFETY: malloc'ed by the functions under test (the contract being checked), each
            // freed by its own C runtime.
            unsafe {
                libc::free(ours.cast());
                common::reference::free_ref(theirs.cast());
            }
        }
    }
}

#[test]
fn default_getters_match() {
    let cp: extern "C" fn() -> blosc2_cparams = sym("blosc2_get_blosc2_cparams_defaults");
    let dp: extern "C" fn() -> blosc2_dparams = sym("blosc2_get_blosc2_dparams_defaults");
    let st: extern "C" fn() -> blosc2_storage = sym("blosc2_get_blosc2_storage_defaults");
    let io: extern "C" fn() -> blosc2_io = sym("blosc2_get_blosc2_io_defaults");
    let mm: extern "C" fn() -> blosc2_stdio_mmap = sym("blosc2_get_blosc2_stdio_mmap_defaults");
    // Debug prints every field; pointers are compared by NULL-ness or by their strings.
    let strip = |s: String| s.replace("0x0", "NULL");
    assert_eq!(
        strip(format!("{:?}", info::blosc2_get_blosc2_cparams_defaults())),
        strip(format!("{:?}", cp()))
    );
    assert_eq!(
        strip(format!("{:?}", info::blosc2_get_blosc2_dparams_defaults())),
        strip(format!("{:?}", dp()))
    );
    assert_eq!(
        strip(format!("{:?}", info::blosc2_get_blosc2_storage_defaults())),
        strip(format!("{:?}", st()))
    );
    let (a, b) = (info::blosc2_get_blosc2_io_defaults(), io());
    assert_eq!(
        (a.id, text(a.name), a.params.is_null()),
        (b.id, text(b.name), b.params.is_null())
    );
    let (mut a, mut b) = (info::blosc2_get_blosc2_stdio_mmap_defaults(), mm());
    assert_eq!(text(a.mode), text(b.mode));
    (a.mode, b.mode) = (std::ptr::null(), std::ptr::null());
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

#[test]
fn elapsed_time_matches() {
    let ns: extern "C" fn(blosc_timestamp_t, blosc_timestamp_t) -> f64 = sym("blosc_elapsed_nsecs");
    let s: extern "C" fn(blosc_timestamp_t, blosc_timestamp_t) -> f64 = sym("blosc_elapsed_secs");
    #[cfg(unix)]
    let t = |sec, nsec| libc::timespec {
        tv_sec: sec,
        tv_nsec: nsec,
    };
    // Windows: performance counter ticks (LARGE_INTEGER).
    #[cfg(windows)]
    let t = |sec: i64, nsec: i64| sec * 1_000_000_000 + nsec;
    let pairs = [
        (t(0, 0), t(0, 0)),
        (t(10, 900_000_000), t(12, 100_000_000)),
        (t(12, 100_000_000), t(10, 900_000_000)),
        (t(1_700_000_000, 1), t(1_700_000_123, 999_999_999)),
    ];
    for (a, b) in pairs {
        assert_eq!(info::blosc_elapsed_nsecs(a, b), ns(a, b));
        assert_eq!(info::blosc_elapsed_secs(a, b), s(a, b));
    }
}

#[test]
fn index_conversions_match() {
    let u2m: unsafe extern "C" fn(u8, *mut i64, i64, *mut i64) = sym("blosc2_unidim_to_multidim");
    let m2u: unsafe extern "C" fn(*const i64, i8, *const i64, *mut i64) =
        sym("blosc2_multidim_to_unidim");
    let mut rng = common::Rng::new(7);
    for _ in 0..500 {
        let ndim = 1 + (rng.next_u64() % 8) as usize;
        let mut shape: Vec<i64> = (0..ndim).map(|_| 1 + (rng.next_u64() % 9) as i64).collect();
        let total: i64 = shape.iter().product();
        let i = (rng.next_u64() % total as u64) as i64;
        let (mut a, mut b) = (vec![-1i64; ndim], vec![-1i64; ndim]);
        // SAFETY: arrays of ndim items.
        unsafe {
            info::blosc2_unidim_to_multidim(ndim as u8, shape.as_mut_ptr(), i, a.as_mut_ptr());
            u2m(ndim as u8, shape.as_mut_ptr(), i, b.as_mut_ptr());
        }
        assert_eq!(a, b, "shape {shape:?} i {i}");
        let strides: Vec<i64> = (0..ndim).map(|_| (rng.next_u64() % 1000) as i64).collect();
        let (mut x, mut y) = (0i64, 0i64);
        // SAFETY: arrays of ndim items and writable outputs.
        unsafe {
            info::blosc2_multidim_to_unidim(a.as_ptr(), ndim as i8, strides.as_ptr(), &mut x);
            m2u(a.as_ptr(), ndim as i8, strides.as_ptr(), &mut y);
        }
        assert_eq!(x, y);
    }
}

type PathFn = unsafe extern "C" fn(*const c_char) -> c_int;
type RenameFn = unsafe extern "C" fn(*mut c_char, *mut c_char) -> c_int;
/// A named file-system scenario builder.
type Builder<'a> = (&'a str, &'a dyn Fn(&Path));

/// Builds the same file-system scenario in `dir`, runs `op` on it and returns (rc, listing).
fn scenario(
    dir: &Path,
    build: &dyn Fn(&Path),
    op: &dyn Fn(&Path) -> c_int,
) -> (c_int, Vec<String>) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    build(dir);
    let rc = op(dir);
    let mut listing: Vec<String> = walk(dir);
    listing.sort();
    (rc, listing)
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        out.push(p.file_name().unwrap().to_string_lossy().into_owned());
        if p.is_dir() {
            out.extend(
                walk(&p)
                    .into_iter()
                    .map(|s| format!("{}/{s}", e.file_name().to_string_lossy())),
            );
        }
    }
    out
}

fn cs(p: &Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

#[test]
fn path_helpers_match() {
    let ref_rm: PathFn = sym("blosc2_remove_urlpath");
    let ref_rmdir: PathFn = sym("blosc2_remove_dir");
    let ref_mv: RenameFn = sym("blosc2_rename_urlpath");
    // Removed when the test passes (see `common::scratch`).
    let base = common::scratch::dir("b2frame-info-ref-");
    let builders: [Builder; 4] = [
        ("cframe with lock", &|d: &Path| {
            std::fs::write(d.join("a.b2frame"), b"x").unwrap();
            std::fs::write(d.join("a.b2frame.b2lock"), b"").unwrap();
        }),
        ("sframe", &|d: &Path| {
            std::fs::create_dir(d.join("a.b2frame")).unwrap();
            std::fs::write(d.join("a.b2frame/chunks.b2frame"), b"x").unwrap();
            std::fs::write(d.join("a.b2frame/00000000.chunk"), b"x").unwrap();
        }),
        ("nested", &|d: &Path| {
            std::fs::create_dir_all(d.join("a.b2frame/sub")).unwrap();
            std::fs::write(d.join("a.b2frame/f"), b"x").unwrap();
        }),
        ("missing", &|_: &Path| {}),
    ];
    for (what, build) in builders {
        for (opname, ours, theirs) in [
            (
                "remove_urlpath",
                info::blosc2_remove_urlpath as PathFn,
                ref_rm,
            ),
            ("remove_dir", info::blosc2_remove_dir as PathFn, ref_rmdir),
        ] {
            // SAFETY: valid C path strings.
            let a = scenario(&base.join("ours"), build, &|d| unsafe {
                ours(cs(&d.join("a.b2frame")).as_ptr())
            });
            // SAFETY: as above.
            let b = scenario(&base.join("ref"), build, &|d| unsafe {
                theirs(cs(&d.join("a.b2frame")).as_ptr())
            });
            assert_eq!(a, b, "{opname} on {what}");
        }
        let mv = |f: RenameFn| {
            move |d: &Path| {
                let (x, y) = (cs(&d.join("a.b2frame")), cs(&d.join("b.b2frame")));
                // SAFETY: valid C path strings; rename does not write through them.
                unsafe { f(x.as_ptr() as *mut c_char, y.as_ptr() as *mut c_char) }
            }
        };
        let a = scenario(&base.join("ours"), build, &mv(info::blosc2_rename_urlpath));
        let b = scenario(&base.join("ref"), build, &mv(ref_mv));
        assert_eq!(a, b, "rename_urlpath on {what}");
    }
    // SAFETY: NULL is accepted by both (a no-op for remove_urlpath, INVALID_PARAM for remove_dir).
    unsafe {
        assert_eq!(
            info::blosc2_remove_urlpath(std::ptr::null()),
            ref_rm(std::ptr::null())
        );
        assert_eq!(
            info::blosc2_remove_dir(std::ptr::null()),
            ref_rmdir(std::ptr::null())
        );
        assert_eq!(
            info::blosc2_remove_dir(c"".as_ptr()),
            ref_rmdir(c"".as_ptr())
        );
    }
}
