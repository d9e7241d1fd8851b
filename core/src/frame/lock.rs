//! Opt-in advisory file locking shared with c-blosc2 3.2+ processes (docs/threading.md#file-locking).
//!
//! The protocol, which every cooperating handle (ours or c-blosc2's) follows:
//! * a sidecar file `<path>.b2lock` (cframe) or `<dir>/.b2lock` (sframe), created on first use
//!   and kept open for the frame's lifetime;
//! * `flock(LOCK_SH)` on it around each read operation, `flock(LOCK_EX)` around each mutation;
//! * a `u64` generation counter (native endianness) at byte offset 8 of the sidecar, incremented
//!   at every exclusive acquisition; a handle whose remembered value differs knows that another
//!   handle mutated the frame (even without a length change) and must re-read it;
//! * locks are re-entrant per handle: nested acquisitions only count depth.
//!
//! The OS locks ([`crate::sys::lock`]) are std's `File::lock` / `lock_shared` / `unlock`, which
//! are `flock(2)` on Unix, and `LockFileEx` on the sidecar's first byte on Windows: the locks
//! c-blosc2 takes on each, so the two libraries exclude each other. (Windows locks are mandatory
//! for their range; the counter at offset 8 lies outside it, as in c-blosc2.) The sidecar is opened with std's defaults
//! (mode 0666 less the umask and close-on-exec on Unix, as c-blosc2's `open(..., 0666)` gives).

use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// Byte offset of the generation counter inside the sidecar.
pub const SEQ_OFFSET: u64 = 8;

/// Name of the sidecar next to a cframe file (appended to its path).
pub const CFRAME_SUFFIX: &str = ".b2lock";

/// Name of the sidecar inside an sframe directory.
pub const SFRAME_NAME: &str = ".b2lock";

/// Whether the `BLOSC_LOCKING` environment variable asks for locking (any value but "" and "0").
pub fn env_requests_locking() -> bool {
    match std::env::var_os("BLOSC_LOCKING") {
        Some(v) => !v.is_empty() && v != "0",
        None => false,
    }
}

/// The sidecar path of the frame at `urlpath` (`sparse`: an sframe directory).
pub fn sidecar_path(urlpath: &Path, sparse: bool) -> PathBuf {
    if sparse {
        urlpath.join(SFRAME_NAME)
    } else {
        let mut s = urlpath.as_os_str().to_owned();
        s.push(CFRAME_SUFFIX);
        PathBuf::from(s)
    }
}

/// What to do with the OS lock on the sidecar.
#[derive(Clone, Copy)]
enum Op {
    Shared,
    Exclusive,
    Unlock,
}

/// The OS lock operation `op` on `file`, retried on `EINTR`.
fn flock(file: &File, op: Op) -> Result<()> {
    loop {
        let r = match op {
            Op::Shared => crate::sys::lock(file, false),
            Op::Exclusive => crate::sys::lock(file, true),
            Op::Unlock => crate::sys::unlock(file),
        };
        match r {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Err(Error::Lock),
        }
    }
}

/// One handle's lock on a frame: the sidecar, the nesting depth and the last generation seen.
#[derive(Debug)]
pub struct FrameLock {
    path: PathBuf,
    file: Option<File>,
    depth: u32,
    exclusive: bool,
    seq: u64,
}

impl FrameLock {
    /// A lock for the frame at `urlpath` (the sidecar is opened on first acquisition).
    pub fn new(urlpath: &Path, sparse: bool) -> FrameLock {
        FrameLock {
            path: sidecar_path(urlpath, sparse),
            file: None,
            depth: 0,
            exclusive: false,
            seq: 0,
        }
    }

    /// The sidecar's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Current nesting depth (0 = not held).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Whether the outermost acquisition was exclusive.
    pub fn is_exclusive(&self) -> bool {
        self.depth > 0 && self.exclusive
    }

    fn sidecar(&mut self) -> Result<&File> {
        if self.file.is_none() {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&self.path)
                .map_err(|_| Error::Lock)?;
            self.file = Some(f);
        }
        self.file.as_ref().ok_or(Error::Lock)
    }

    /// Acquires the lock (shared or exclusive); nested calls only count depth (an exclusive
    /// request nested in a shared hold is an error: upgrading could deadlock). Returns whether
    /// the generation counter moved since this handle last looked, i.e. whether another handle
    /// mutated the frame and the caller must re-read it.
    pub fn acquire(&mut self, exclusive: bool) -> Result<bool> {
        if self.depth > 0 {
            if exclusive && !self.exclusive {
                return Err(Error::Lock);
            }
            self.depth += 1;
            return Ok(false);
        }
        let file = self.sidecar()?;
        let op = if exclusive { Op::Exclusive } else { Op::Shared };
        flock(file, op)?;
        let r = (|| {
            let mut b = [0u8; 8];
            let seq = match crate::sys::read_at(file, &mut b, SEQ_OFFSET) {
                Ok(8) => u64::from_ne_bytes(b),
                Ok(_) => 0,
                Err(_) => return Err(Error::Lock),
            };
            if exclusive {
                let next = seq.wrapping_add(1);
                crate::sys::write_all_at(file, &next.to_ne_bytes(), SEQ_OFFSET)
                    .map_err(|_| Error::Lock)?;
            }
            Ok(seq)
        })();
        let seq = match r {
            Ok(s) => s,
            Err(e) => {
                let _ = flock(file, Op::Unlock);
                return Err(e);
            }
        };
        let moved = seq != self.seq;
        self.seq = if exclusive { seq.wrapping_add(1) } else { seq };
        self.depth = 1;
        self.exclusive = exclusive;
        Ok(moved)
    }

    /// Releases one level; the OS lock is dropped when the depth reaches 0. Releasing a lock
    /// that is not held is a no-op.
    pub fn release(&mut self) -> Result<()> {
        if self.depth == 0 {
            return Ok(());
        }
        self.depth -= 1;
        if self.depth > 0 {
            return Ok(());
        }
        match &self.file {
            Some(f) => flock(f, Op::Unlock),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame path in a fresh directory, removed with everything in it when the returned
    /// guard is dropped.
    fn tmp(name: &str) -> (tempfile::TempDir, PathBuf) {
        let d = crate::test_util::temp_dir(&format!("b2frame-lock-{name}-"));
        let p = d.path().join("f.b2frame");
        (d, p)
    }

    #[test]
    fn exclusive_acquisitions_bump_the_counter_at_offset_8() {
        let (_dir, p) = tmp("seq");
        let mut a = FrameLock::new(&p, false);
        let mut b = FrameLock::new(&p, false);
        assert_eq!(a.path(), sidecar_path(&p, false));
        assert!(
            !a.acquire(true).unwrap(),
            "fresh sidecar reads as generation 0"
        );
        assert!(!a.acquire(true).unwrap(), "nested");
        assert_eq!(a.depth(), 2);
        a.release().unwrap();
        a.release().unwrap();
        let bytes = std::fs::read(a.path()).unwrap();
        assert_eq!(bytes.len(), 16);
        assert_eq!(u64::from_ne_bytes(bytes[8..16].try_into().unwrap()), 1);
        assert!(b.acquire(false).unwrap(), "b has not seen generation 1");
        b.release().unwrap();
        assert!(!b.acquire(false).unwrap());
        b.release().unwrap();
        assert!(!a.acquire(false).unwrap(), "a's own write is not news to a");
        assert_eq!(
            a.acquire(true),
            Err(Error::Lock),
            "no upgrade inside a shared hold"
        );
        a.release().unwrap();
        assert_eq!(a.depth(), 0);
        a.release().unwrap();
        assert_eq!(sidecar_path(Path::new("/d"), true), Path::new("/d/.b2lock"));
    }

    #[test]
    fn exclusive_holders_exclude_each_other_across_threads() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let (_dir, p) = tmp("excl");
        let mut a = FrameLock::new(&p, false);
        a.acquire(true).unwrap();
        let released = Arc::new(AtomicBool::new(false));
        let r2 = released.clone();
        let p2 = p.clone();
        let t = std::thread::spawn(move || {
            let mut b = FrameLock::new(&p2, false);
            let moved = b.acquire(false).unwrap();
            let saw_release = r2.load(Ordering::SeqCst);
            b.release().unwrap();
            (moved, saw_release)
        });
        std::thread::yield_now();
        released.store(true, Ordering::SeqCst);
        a.release().unwrap();
        let (moved, saw_release) = t.join().unwrap();
        assert!(moved);
        assert!(
            saw_release,
            "the reader got the shared lock while the writer held it"
        );
    }
}
