//! Build script: gives the shared library its versioned SONAME.
//!
//! Soname policy (see README "Versioning"): `libb2frame.so.<MAJOR>` where MAJOR is bumped on any
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
    println!("cargo:rerun-if-changed=build.rs");
}
