//! The storage operations frame code issues, as seen by a crash: a recording layer and the
//! durability switch (see docs/durability.md).
//!
//! Every write, truncation, sync, rename and removal that the frame code makes on a file goes
//! through the functions of this module first ([`write()`], [`truncate`], [`sync`], ...). When a
//! thread has turned recording on ([`start`]), each of them is appended to that thread's log,
//! in issue order, with the bytes written; [`stop`] hands the log back. The crash tests replay
//! prefixes, torn writes and (in durable mode) reorderings of such logs to build every state a
//! crash can leave. Recording costs one thread-local check per operation when it is off.
//!
//! Durable mode ([`durable`], switched by the `B2FRAME_DURABLE` environment variable or
//! [`set_durable`]) makes the frame code put `fdatasync` barriers between the steps of a commit
//! (and sync directories after creating or renaming files), so that a power cut leaves one of
//! the states a process kill can leave.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};

/// The environment variable that switches durable mode on (any value but "" and "0").
pub const DURABLE_ENV: &str = "B2FRAME_DURABLE";

/// A file an operation acts on: an open handle's `(st_dev, st_ino)`, or a path (files the
/// frame code opens by name, such as sframe chunk files).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileRef {
    /// `(st_dev, st_ino)` of an open handle.
    Inode(u64, u64),
    /// A file reached by its path.
    Path(PathBuf),
}

/// One storage operation, as issued.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// `data` written at absolute file position `pos` (the file grows if needed).
    Write {
        /// The file.
        file: FileRef,
        /// Absolute position in the file.
        pos: u64,
        /// The bytes written.
        data: Vec<u8>,
    },
    /// The file cut (or extended with zeros) to `len` bytes.
    Truncate {
        /// The file.
        file: FileRef,
        /// The new length.
        len: u64,
    },
    /// A file created empty (or emptied) by name.
    Create {
        /// Its path.
        path: PathBuf,
    },
    /// `fdatasync`/`fsync` of a file: everything issued on it before has reached the disk.
    Sync {
        /// The file.
        file: FileRef,
    },
    /// `fsync` of a directory: the names created, renamed or removed in it before are durable.
    SyncDir {
        /// The directory.
        dir: PathBuf,
    },
    /// `rename(from, to)`, atomically replacing `to`.
    Rename {
        /// The old name.
        from: PathBuf,
        /// The new name.
        to: PathBuf,
    },
    /// `unlink(path)` (or `rmdir`).
    Remove {
        /// The removed name.
        path: PathBuf,
    },
    /// `renameat2(a, b, RENAME_EXCHANGE)`: the two names swap their files atomically.
    Exchange {
        /// One name.
        a: PathBuf,
        /// The other.
        b: PathBuf,
    },
    /// A directory created empty by name (an sframe's, or the temporary one of a new sframe).
    CreateDir {
        /// Its path.
        path: PathBuf,
    },
}

thread_local! {
    static LOG: RefCell<Option<Vec<Event>>> = const { RefCell::new(None) };
}

/// Starts recording this thread's storage operations (discarding an unfinished log).
pub fn start() {
    LOG.with(|l| *l.borrow_mut() = Some(Vec::new()));
}

/// Stops recording and returns what was recorded since [`start`] (empty if it was not on).
pub fn stop() -> Vec<Event> {
    LOG.with(|l| l.borrow_mut().take()).unwrap_or_default()
}

fn log(make: impl FnOnce() -> Event) {
    LOG.with(|l| {
        if let Some(v) = l.borrow_mut().as_mut() {
            v.push(make());
        }
    });
}

/// Records a write of `data` at absolute position `pos` of `file`.
pub fn write(file: &FileRef, pos: u64, data: &[u8]) {
    log(|| Event::Write {
        file: file.clone(),
        pos,
        data: data.to_vec(),
    });
}

/// Records a truncation of `file` to `len` bytes.
pub fn truncate(file: &FileRef, len: u64) {
    log(|| Event::Truncate {
        file: file.clone(),
        len,
    });
}

/// Records the creation (or emptying) of the file `path`.
pub fn create(path: &Path) {
    log(|| Event::Create {
        path: path.to_path_buf(),
    });
}

/// Records the creation of the directory `path`.
pub fn create_dir(path: &Path) {
    log(|| Event::CreateDir {
        path: path.to_path_buf(),
    });
}

/// Records a sync of `file`.
pub fn sync(file: &FileRef) {
    log(|| Event::Sync { file: file.clone() });
}

/// Records a sync of the directory `dir`.
pub fn sync_dir(dir: &Path) {
    log(|| Event::SyncDir {
        dir: dir.to_path_buf(),
    });
}

/// Records `rename(from, to)`.
pub fn rename(from: &Path, to: &Path) {
    log(|| Event::Rename {
        from: from.to_path_buf(),
        to: to.to_path_buf(),
    });
}

/// Records the exchange of the files named `a` and `b`.
pub fn exchange(a: &Path, b: &Path) {
    log(|| Event::Exchange {
        a: a.to_path_buf(),
        b: b.to_path_buf(),
    });
}

/// Records `unlink(path)`.
pub fn remove(path: &Path) {
    log(|| Event::Remove {
        path: path.to_path_buf(),
    });
}

/// 0: not decided yet (read the environment), 1: off, 2: on.
static DURABLE: AtomicU8 = AtomicU8::new(0);

/// Whether durable mode is on: [`set_durable`]'s last value, else `B2FRAME_DURABLE` (any value
/// but "" and "0"), read once.
pub fn durable() -> bool {
    match DURABLE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let on =
                crate::env::from_process(DURABLE_ENV).is_some_and(|v| !v.is_empty() && v != "0");
            // A concurrent set_durable wins over the environment.
            let _ = DURABLE.compare_exchange(
                0,
                if on { 2 } else { 1 },
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            DURABLE.load(Ordering::Relaxed) == 2
        }
    }
}

/// Switches durable mode on or off for the whole process; returns the previous setting.
pub fn set_durable(on: bool) -> bool {
    let was = durable();
    DURABLE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
    was
}

/// Syncs the directory `dir` (durable mode only): makes file creations, renames and removals
/// in it durable. Errors are reported (a sync that failed promises nothing).
pub fn sync_dir_now(dir: &Path) -> std::io::Result<()> {
    if !durable() {
        return Ok(());
    }
    sync_dir(dir);
    crate::sys::sync_dir(dir)
}

/// A temporary name next to `path` for a file that will be renamed over it.
pub fn temp_name(path: &Path) -> PathBuf {
    use std::sync::atomic::AtomicU64;
    static N: AtomicU64 = AtomicU64::new(0);
    let mut name = path.as_os_str().to_owned();
    name.push(".b2tmp-");
    name.push(decimal(u64::from(std::process::id())));
    name.push("-");
    name.push(decimal(N.fetch_add(1, Ordering::Relaxed)));
    PathBuf::from(name)
}

/// `v` in decimal, written without `core::fmt`: its digit table is the only data of the
/// library a whole-file write of an in-memory frame would otherwise read from its 64 KiB
/// window (each window of the mapping read costs the whole window in resident memory).
fn decimal(mut v: u64) -> String {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let mut s = String::with_capacity(digits.len() - i);
    for &d in &digits[i..] {
        s.push(char::from(d));
    }
    s
}

/// The directory holding `path` (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Renames `from` over `to` (atomic replacement), recorded; in durable mode `from` was synced
/// by the caller and the directory is synced after. On Windows the rename waits (bounded) for
/// readers that hold `to` open without sharing deletion (`crate::sys::rename_replacing`).
pub fn rename_now(from: &Path, to: &Path) -> std::io::Result<()> {
    rename(from, to);
    crate::sys::rename_replacing(from, to)?;
    sync_dir_now(&parent_dir(to))
}

/// Writes `bytes` as the whole content of `path` so that a crash leaves either the old file
/// (or none) or the complete new one: a temporary file next to it, synced in durable mode,
/// renamed over it. With `exclusive`, fails if `path` exists.
pub fn publish_file(path: &Path, bytes: &[u8], exclusive: bool) -> std::io::Result<()> {
    publish_with(path, exclusive, false, |w| w.write_all(bytes))
}

/// A writer that records every write it passes on, at consecutive positions of `file` from
/// `pos` (wrap it in a `BufWriter` to record buffer-sized writes).
pub struct Recorded<W> {
    inner: W,
    file: FileRef,
    pos: u64,
}

impl<W: std::io::Write> Recorded<W> {
    /// `inner`, whose next byte lands at position `pos` of `file`.
    pub fn new(inner: W, file: FileRef, pos: u64) -> Self {
        Recorded { inner, file, pos }
    }

    /// The wrapped writer.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: std::io::Write> std::io::Write for Recorded<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        write(&self.file, self.pos, &buf[..n]);
        self.pos += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<W: std::io::Write + std::io::Seek> std::io::Seek for Recorded<W> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let at = self.inner.seek(to)?;
        self.pos = at;
        Ok(at)
    }
}

/// A writer that can also seek: a temporary file being filled by [`publish_seekable`] (a
/// streamed cframe whose header is written last, over a placeholder).
pub trait WriteSeek: std::io::Write + std::io::Seek {}

impl<T: std::io::Write + std::io::Seek + ?Sized> WriteSeek for T {}

/// Writes the whole content of `path` with `fill` so that a crash leaves either the old file
/// (or none) or the complete new one: `fill` writes a temporary file next to `path` (through a
/// recorded 1 MiB buffer), which is synced (in durable mode, or always with `sync`) and renamed
/// over `path`, and the directory is synced in durable mode. With `exclusive`, fails if `path`
/// exists. The temporary file is removed when anything fails.
pub fn publish_with(
    path: &Path,
    exclusive: bool,
    sync: bool,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    publish_seekable(path, exclusive, sync, |w| fill(w))
}

/// [`publish_with`] whose `fill` may also seek in the temporary file (every write is recorded
/// at the position it lands on).
pub fn publish_seekable(
    path: &Path,
    exclusive: bool,
    sync: bool,
    fill: impl FnOnce(&mut dyn WriteSeek) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::io::Write;
    if exclusive && path.exists() {
        return Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists));
    }
    let tmp = temp_name(path);
    let r = (|| {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        create(&tmp);
        let file = FileRef::Path(tmp.clone());
        let mut w = std::io::BufWriter::with_capacity(1 << 20, Recorded::new(f, file.clone(), 0));
        fill(&mut w)?;
        w.flush()?;
        let f = w.into_inner().map_err(|e| e.into_error())?.into_inner();
        if sync || durable() {
            self::sync(&file);
            f.sync_data()?;
        }
        rename_now(&tmp, path)
    })();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

/// Builds a new directory at `dst` (absent, or an empty directory) so that a crash leaves it
/// absent (or empty) or complete: `build` fills a temporary directory next to it, which is
/// synced in durable mode (the files in it are synced by whoever wrote them) and renamed to
/// `dst`; the parent directory is synced after it in durable mode. The temporary directory is
/// removed when anything fails.
pub fn publish_dir<E>(
    dst: &Path,
    build: impl FnOnce(&Path) -> Result<(), E>,
    io_err: impl Fn(std::io::Error) -> E,
) -> Result<(), E> {
    let tmp = temp_name(dst);
    let r = build(&tmp).and_then(|()| {
        sync_dir_now(&tmp).map_err(&io_err)?;
        rename_now(&tmp, dst).map_err(&io_err)
    });
    if r.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_path_b2tmp_pid_counter() {
        for v in [0, 7, 10, 99, 1234567890, u64::MAX] {
            assert_eq!(decimal(v), v.to_string());
        }
        let a = temp_name(Path::new("dir/f.b2frame"));
        let b = temp_name(Path::new("dir/f.b2frame"));
        let prefix = format!("dir/f.b2frame.b2tmp-{}-", std::process::id());
        let n = |p: &Path| -> u64 {
            let s = p.to_str().unwrap();
            assert!(s.starts_with(&prefix), "{s}");
            s[prefix.len()..].parse().unwrap()
        };
        assert!(n(&b) > n(&a));
    }

    #[test]
    fn records_only_while_started() {
        let f = FileRef::Path(PathBuf::from("x"));
        write(&f, 0, b"a");
        start();
        write(&f, 3, b"bc");
        truncate(&f, 4);
        let got = stop();
        assert_eq!(
            got,
            vec![
                Event::Write {
                    file: f.clone(),
                    pos: 3,
                    data: b"bc".to_vec()
                },
                Event::Truncate { file: f, len: 4 }
            ]
        );
        assert!(stop().is_empty());
    }
}
