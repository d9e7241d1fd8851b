//! Scratch directories for integration tests.
//!
//! Each test gets a fresh directory of its own under `std::env::temp_dir()` (so `TMPDIR`
//! decides where): tests of one binary run in parallel threads, so a directory shared by the
//! process could not be removed by any one of them. The directory is removed when its guard is
//! dropped, i.e. when the test that created it passes. A test that fails (its thread panics)
//! keeps its directory on purpose, for diagnosis, and prints where it is.

use std::ops::Deref;
use std::path::Path;

/// A scratch directory, removed on drop unless the dropping thread is panicking.
pub struct Scratch(Option<tempfile::TempDir>);

/// A new empty directory named `<prefix><random>` in the temporary directory.
pub fn dir(prefix: &str) -> Scratch {
    let d = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .unwrap_or_else(|e| panic!("creating a scratch directory {prefix}*: {e}"));
    Scratch(Some(d))
}

impl Scratch {
    pub fn path(&self) -> &Path {
        self.0.as_ref().expect("live scratch directory").path()
    }
}

impl Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.path()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(d) = self.0.take() {
            if std::thread::panicking() {
                // A failed test: keep its files for diagnosis.
                eprintln!(
                    "scratch directory of a failed test kept: {}",
                    d.keep().display()
                );
            }
            // Otherwise `d` is dropped here, which removes the directory and everything in it.
        }
    }
}
