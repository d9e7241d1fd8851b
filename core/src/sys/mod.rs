//! The few file operations std does not offer the same way on every platform: positional reads
//! and writes, a file's identity (to tell whether a path now names another file) and paths
//! given as C bytes. One function each, with a Unix and a Windows implementation; everything
//! else (opening, sizes, truncation, `.b2lock` locking) uses std's portable calls directly.
//! And one allocator call std offers only infallibly: zeroed buffers sized by input
//! ([`try_zeroed`]), and output a decoder writes without zeroing it first ([`Out`]).

use std::fs::File;
use std::io;

mod alloc;
pub use alloc::try_zeroed;
mod out;
pub use out::{fill_new, fill_spare, Out};

pub mod dl;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as imp;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as imp;

/// What identifies a file while it exists: `(st_dev, st_ino)` on Unix, `(volume serial number,
/// file index)` on Windows. Two paths (or a path and an open handle) with the same identity
/// name the same file.
pub type FileId = (u64, u64);

/// Reads up to `buf.len()` bytes at byte `pos` of `file` without using its cursor (on Windows
/// the cursor moves; nothing here relies on it); returns how many (0 at the end of the file).
pub fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    imp::read_at(file, buf, pos)
}

/// Swaps the files named `a` and `b` atomically (`renameat2(RENAME_EXCHANGE)` on Linux).
/// `Ok(false)` when it cannot here (another platform, a file system without it, or either
/// name missing): the caller falls back to a plain rename.
pub fn exchange(a: &std::path::Path, b: &std::path::Path) -> io::Result<bool> {
    imp::exchange(a, b)
}

/// How long [`rename_replacing`] keeps retrying on Windows while another handle blocks the
/// replacement (far above the time c-blosc2 holds an index file open: one read).
pub const REPLACE_RETRY: std::time::Duration = std::time::Duration::from_secs(5);

/// Renames `from` over `to`, replacing `to` atomically when it exists (std's `rename`: on
/// Windows `FileRenameInfoEx` with POSIX semantics where the system offers them, else
/// `MoveFileExW`-like replacement). On Unix one `rename`. On Windows a file that another handle
/// holds open without `FILE_SHARE_DELETE` cannot be replaced until that handle is closed
/// (`ERROR_ACCESS_DENIED`, or `ERROR_SHARING_VIOLATION`): c-blosc2 opens files with `fopen`,
/// which does not share deletion, for the length of one read of an sframe's index, and wine
/// (8) refuses the replacement while any handle is open. There the rename is retried, with
/// sleeps of 0.5 to 20 ms, until it succeeds or [`REPLACE_RETRY`] has passed; then its error
/// is returned and `to` is untouched. See docs/durability.md#windows.
pub fn rename_replacing(from: &std::path::Path, to: &std::path::Path) -> io::Result<()> {
    imp::rename_replacing(from, to)
}

/// Writes up to `buf.len()` bytes at byte `pos` of `file`; returns how many.
pub fn write_at(file: &File, buf: &[u8], pos: u64) -> io::Result<usize> {
    imp::write_at(file, buf, pos)
}

/// Fills `buf` from byte `pos` of `file`; `UnexpectedEof` if the file ends first.
pub fn read_exact_at(file: &File, mut buf: &mut [u8], mut pos: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, pos) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                pos += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes all of `buf` at byte `pos` of `file` (growing it as needed).
pub fn write_all_at(file: &File, mut buf: &[u8], mut pos: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match write_at(file, buf, pos) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                buf = &buf[n..];
                pos += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Makes the names created, renamed or removed in the directory `dir` durable: `fsync` of the
/// directory on Unix. Windows has no directory fsync (NTFS journals its name operations, and
/// std cannot open a directory as a file): there the directory is only checked to exist.
pub fn sync_dir(dir: &std::path::Path) -> io::Result<()> {
    imp::sync_dir(dir)
}

/// The identity of an open file.
pub fn file_id(file: &File) -> io::Result<FileId> {
    imp::file_id(file)
}

/// The identity of the file `path` names now.
pub fn path_file_id(path: &std::path::Path) -> io::Result<FileId> {
    imp::path_file_id(path)
}

/// Takes the advisory lock of `file` (shared or exclusive), blocking until it is granted: std's
/// `File::lock`/`lock_shared` (`flock`) on Unix; on Windows `LockFileEx` on the first byte, the
/// range c-blosc2 locks there (std's whole-file range would overlap it too, but its unlock
/// needs a second `UnlockFile` whose "not locked" answer wine reports as a lock violation).
pub fn lock(file: &File, exclusive: bool) -> io::Result<()> {
    imp::lock(file, exclusive)
}

/// Releases the lock [`lock`] took.
pub fn unlock(file: &File) -> io::Result<()> {
    imp::unlock(file)
}

/// A path given as C bytes (no NUL). On Unix any bytes; on Windows they must be UTF-8 (the
/// Windows API takes UTF-16 names; ANSI code pages other than UTF-8 are not supported).
pub fn path_from_bytes(bytes: &[u8]) -> Option<&std::path::Path> {
    imp::path_from_bytes(bytes)
}

/// The bytes of a path for C (no NUL), or None if it has none on this platform (Windows: a
/// name that is not valid Unicode).
pub fn path_bytes(path: &std::path::Path) -> Option<&[u8]> {
    imp::path_bytes(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positional_io_and_identity() {
        let d = crate::test_util::temp_dir("b2frame-sys-");
        let p = d.path().join("f");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&p)
            .unwrap();
        write_all_at(&f, b"world", 6).unwrap();
        write_all_at(&f, b"hello ", 0).unwrap();
        let mut b = [0u8; 11];
        read_exact_at(&f, &mut b, 0).unwrap();
        assert_eq!(&b, b"hello world");
        let mut b = [0u8; 6];
        assert_eq!(
            read_exact_at(&f, &mut b, 6).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        assert_eq!(read_at(&f, &mut b, 11).unwrap(), 0);
        let id = file_id(&f).unwrap();
        assert_eq!(path_file_id(&p).unwrap(), id);
        // Another file at the same path is another identity.
        let q = d.path().join("g");
        std::fs::write(&q, b"x").unwrap();
        assert_ne!(path_file_id(&q).unwrap(), id);
        drop(f);
        std::fs::rename(&q, &p).unwrap();
        assert_ne!(path_file_id(&p).unwrap(), id);
    }

    /// A file held open without `FILE_SHARE_DELETE` (as c-blosc2's `fopen` holds it) blocks a
    /// rename over it on Windows; `rename_replacing` waits for the handle to close.
    #[cfg(windows)]
    #[test]
    fn a_rename_over_a_file_waits_for_a_handle_that_does_not_share_deletion() {
        use std::os::windows::fs::OpenOptionsExt;
        let d = crate::test_util::temp_dir("b2f-sys-replace-");
        let (from, to) = (d.path().join("new"), d.path().join("index"));
        std::fs::write(&from, b"new").unwrap();
        std::fs::write(&to, b"old").unwrap();
        // FILE_SHARE_READ | FILE_SHARE_WRITE: no FILE_SHARE_DELETE.
        let held = std::fs::OpenOptions::new()
            .read(true)
            .share_mode(1 | 2)
            .open(&to)
            .unwrap();
        assert!(
            std::fs::rename(&from, &to).is_err(),
            "the handle blocks a plain rename"
        );
        let closer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            drop(held);
        });
        rename_replacing(&from, &to).unwrap();
        closer.join().unwrap();
        assert_eq!(std::fs::read(&to).unwrap(), b"new");
        assert!(!from.exists());
    }

    #[test]
    fn paths_round_trip_through_bytes() {
        let p = path_from_bytes("dir/é.b2frame".as_bytes()).unwrap();
        assert_eq!(path_bytes(p).unwrap(), "dir/é.b2frame".as_bytes());
    }
}
