//! Unix: `pread`/`pwrite` through std's `FileExt`, identity from `stat`, paths are bytes.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

pub fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    file.read_at(buf, pos)
}

pub fn rename_replacing(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::rename(from, to)
}

pub fn write_at(file: &File, buf: &[u8], pos: u64) -> io::Result<usize> {
    file.write_at(buf, pos)
}

#[cfg(target_os = "linux")]
pub fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    use std::ffi::CString;
    let (Ok(ca), Ok(cb)) = (
        CString::new(a.as_os_str().as_bytes()),
        CString::new(b.as_os_str().as_bytes()),
    ) else {
        return Ok(false);
    };
    // SAFETY: two NUL-terminated paths that outlive the call; AT_FDCWD resolves them from the
    // working directory as `rename` does; renameat2 only reads them.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOENT | libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP | libc::EXDEV) => {
            Ok(false)
        }
        _ => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
pub fn exchange(_a: &Path, _b: &Path) -> io::Result<bool> {
    Ok(false)
}

pub fn file_id(file: &File) -> io::Result<super::FileId> {
    let m = file.metadata()?;
    Ok((m.dev(), m.ino()))
}

pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

pub fn path_file_id(path: &Path) -> io::Result<super::FileId> {
    let m = std::fs::metadata(path)?;
    Ok((m.dev(), m.ino()))
}

pub fn lock(file: &File, exclusive: bool) -> io::Result<()> {
    if exclusive {
        file.lock()
    } else {
        file.lock_shared()
    }
}

pub fn unlock(file: &File) -> io::Result<()> {
    file.unlock()
}

pub fn path_from_bytes(bytes: &[u8]) -> Option<&Path> {
    Some(Path::new(OsStr::from_bytes(bytes)))
}

pub fn path_bytes(path: &Path) -> Option<&[u8]> {
    Some(path.as_os_str().as_bytes())
}
