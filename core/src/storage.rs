//! Where a super-chunk or a b2nd array lives: [`Storage`], c-blosc2's `blosc2_storage` as a Rust
//! value (its `contiguous` flag and `urlpath`, without the parameter pointers, which Rust passes
//! as [`CParams`](crate::CParams) and [`DParams`](crate::DParams)).

#![forbid(unsafe_code)]

use crate::schunk::NewStorage;
use std::path::{Path, PathBuf};

/// Where a new super-chunk or array is stored.
///
/// | constructor | `contiguous` | `urlpath` | what it is |
/// |---|---|---|---|
/// | [`Storage::memory`] (the default) | no | none | chunks in memory, no frame |
/// | [`Storage::memory_frame`] | yes | none | one in-memory cframe |
/// | [`Storage::file`] | yes | a file | a cframe file |
/// | [`Storage::sframe`] | no | a directory | an sframe: an index file and one file per chunk |
///
/// Creating at a path that exists fails ([`Error::FileOpen`](crate::Error::FileOpen)), as in
/// c-blosc2: nothing already stored is overwritten.
///
/// ```
/// use blosc2_frame::Storage;
/// use std::path::Path;
///
/// assert_eq!(Storage::default(), Storage::memory());
/// let s = Storage::sframe("data.b2frame.d");
/// assert!(!s.contiguous());
/// assert_eq!(s.urlpath(), Some(Path::new("data.b2frame.d")));
/// assert!(Storage::file("data.b2frame").contiguous());
/// assert_eq!(Storage::memory_frame().urlpath(), None);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Storage {
    contiguous: bool,
    urlpath: Option<PathBuf>,
}

impl Storage {
    /// Chunks held in memory one by one, no frame (c-blosc2's `BLOSC2_STORAGE_DEFAULTS`).
    pub fn memory() -> Storage {
        Storage::default()
    }

    /// One contiguous frame (a cframe) in memory; [`SChunk::to_cframe`](crate::SChunk::to_cframe)
    /// gives its bytes.
    pub fn memory_frame() -> Storage {
        Storage {
            contiguous: true,
            urlpath: None,
        }
    }

    /// A contiguous frame (cframe) in the file `path`.
    pub fn file(path: impl AsRef<Path>) -> Storage {
        Storage {
            contiguous: true,
            urlpath: Some(path.as_ref().to_path_buf()),
        }
    }

    /// A sparse frame (sframe) in the directory `dir`: chunks are files of their own, so
    /// appending never rewrites the others.
    pub fn sframe(dir: impl AsRef<Path>) -> Storage {
        Storage {
            contiguous: false,
            urlpath: Some(dir.as_ref().to_path_buf()),
        }
    }

    /// Whether the storage is one contiguous frame (in memory or in a file).
    pub fn contiguous(&self) -> bool {
        self.contiguous
    }

    /// The file or directory, for storage on disk.
    pub fn urlpath(&self) -> Option<&Path> {
        self.urlpath.as_deref()
    }

    /// The super-chunk layer's view of this storage.
    #[doc(hidden)]
    pub fn as_new(&self) -> NewStorage<'_> {
        match (self.contiguous, self.urlpath.as_deref()) {
            (false, None) => NewStorage::Plain,
            (true, None) => NewStorage::Memory,
            (true, Some(p)) => NewStorage::File(p),
            (false, Some(p)) => NewStorage::Sparse(p),
        }
    }
}

impl From<NewStorage<'_>> for Storage {
    fn from(s: NewStorage<'_>) -> Storage {
        match s {
            NewStorage::Plain => Storage::memory(),
            NewStorage::Memory => Storage::memory_frame(),
            NewStorage::File(p) => Storage::file(p),
            NewStorage::Sparse(p) => Storage::sframe(p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_schunk_layer() {
        let p = Path::new("x");
        for s in [
            NewStorage::Plain,
            NewStorage::Memory,
            NewStorage::File(p),
            NewStorage::Sparse(p),
        ] {
            let st = Storage::from(s);
            assert_eq!(format!("{:?}", st.as_new()), format!("{s:?}"));
        }
    }
}
