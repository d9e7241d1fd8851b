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

pub fn write_at(file: &File, buf: &[u8], pos: u64) -> io::Result<usize> {
    file.write_at(buf, pos)
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
