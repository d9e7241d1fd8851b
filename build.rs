//! Build script: gives the shared library its versioned SONAME and, on x86_64 Linux, the
//! order of its hot functions (link/hot-text.ld) and a static copy of libgcc's unwinder.
//!
//! Soname policy (docs/c-api.md, "Versioning"): `libb2frame.so.<MAJOR>` where MAJOR is bumped on any
//! ABI break of b2frame's own API; the c-blosc2-compatible ABI it mirrors is c-blosc2 3.x
//! (`libblosc2.so.9`). Cargo itself writes `libb2frame.so`; CMake's install step adds the
//! `libb2frame.so.1 -> libb2frame.so.1.x.y` chain.

/// The soname major: bump only with an ABI break.
const SONAME_MAJOR: &str = "1";

fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" || target_os == "android" || target_os.ends_with("bsd") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libb2frame.so.{SONAME_MAJOR}");
    }
    hot_text(&target_os);
    static_libgcc(&target_os);
    println!("cargo:rerun-if-changed=build.rs");
}

/// Links libgcc's unwinder (libgcc_eh.a) into the shared library, so that it no longer needs
/// libgcc_s.so.1: loading that library cost a process about 80 KiB of resident memory
/// (BENCHMARKS.md, "Peak memory without libgcc_s"). Rust unwinding only runs inside our library
/// (every exported function catches panics, src/capi/boundary.rs), so a private copy of the
/// unwinder is enough; its symbols stay local (rustc's version script exports only our API).
/// The archive goes in whole: rustc names `-lgcc_s` before our link arguments, and with
/// `--as-needed` the linker then drops libgcc_s because every symbol it would give is defined.
/// Only on x86_64 Linux with glibc (where it was checked: `readelf -d` lists no libgcc_s, a
/// panic is still caught); B2FRAME_NO_STATIC_LIBGCC=1 turns it off. Built with a libgcc for
/// glibc 2.35+, the unwinder calls `_dl_find_object` (GLIBC_2.35): the library then needs the
/// glibc its build host has, as it already does for other symbols (GLIBC_2.34 here).
fn static_libgcc(target_os: &str) {
    println!("cargo:rerun-if-env-changed=B2FRAME_NO_STATIC_LIBGCC");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if target_os != "linux" || arch != "x86_64" || env != "gnu" {
        return;
    }
    if std::env::var_os("B2FRAME_NO_STATIC_LIBGCC").is_some_and(|v| v != "0") {
        return;
    }
    // The archive the C compiler (rustc's linker driver) would use; absent: keep libgcc_s.
    let cc = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".to_string());
    let Ok(out) = std::process::Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
    else {
        return;
    };
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || !std::path::Path::new(&path).is_absolute() || path.contains(',') {
        return;
    }
    if std::path::Path::new(&path).is_file() {
        println!("cargo:rustc-cdylib-link-arg=-Wl,--push-state,--whole-archive,{path},--pop-state");
    }
}

/// Has the linker gather the functions that frame operations run (link/hot-text.ld, written by
/// scripts/hot-text.sh) into one output section (and the instances of generic functions that
/// do not run into another, before it). A process maps a shared library's code in
/// 64 KiB windows around each first call, so with those functions spread over the 2.5 MB of
/// code, opening one frame touched 21 windows (1.3 MB of resident code, more than c-blosc2's
/// whole footprint difference); gathered, it touches a few (BENCHMARKS.md, "Peak memory: code
/// pages"). The script only adds output sections (`INSERT AFTER .text`), which GNU ld and
/// LLD (the default linker of Rust on x86_64 Linux) both understand; other linkers (gold, mold)
/// do not, and B2FRAME_NO_HOT_TEXT=1 turns it off.
fn hot_text(target_os: &str) {
    println!("cargo:rerun-if-env-changed=B2FRAME_NO_HOT_TEXT");
    println!("cargo:rerun-if-changed=link/hot-text.ld");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if target_os != "linux" || arch != "x86_64" || env != "gnu" {
        return;
    }
    if std::env::var_os("B2FRAME_NO_HOT_TEXT").is_some_and(|v| v != "0") {
        return;
    }
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if flags.contains("fuse-ld=gold") || flags.contains("fuse-ld=mold") {
        return;
    }
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let script = std::path::Path::new(&dir).join("link").join("hot-text.ld");
    let Some(path) = script.to_str() else { return };
    // `-Wl,` splits at commas.
    if script.is_file() && !path.contains(',') {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-T,{path}");
    }
}
