//! Helpers shared by the unit tests (integration tests have `tests/common`).

#![forbid(unsafe_code)]

/// A fresh directory under the system temp dir whose name starts with `prefix`, removed with
/// everything in it when the guard is dropped (unit tests run in parallel, so each gets its
/// own).
pub(crate) fn temp_dir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("temp dir")
}
