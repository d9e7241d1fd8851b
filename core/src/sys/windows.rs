//! Windows: positional transfers through std's `seek_read`/`seek_write` (`ReadFile`/`WriteFile`
//! with an offset), identity from `GetFileInformationByHandle`, paths are UTF-8.

use std::fs::File;
use std::io;
use std::os::windows::fs::FileExt;
use std::os::windows::io::AsRawHandle;
use std::path::Path;
use windows_sys::Win32::Storage::FileSystem::{
    GetFileInformationByHandle, LockFileEx, UnlockFileEx, BY_HANDLE_FILE_INFORMATION,
    LOCKFILE_EXCLUSIVE_LOCK,
};
use windows_sys::Win32::System::IO::OVERLAPPED;

pub fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    match file.seek_read(buf, pos) {
        // Reading at or past the end fails with ERROR_HANDLE_EOF (38) instead of returning 0.
        Err(e) if e.raw_os_error() == Some(38) => Ok(0),
        r => r,
    }
}

pub fn exchange(_a: &std::path::Path, _b: &std::path::Path) -> io::Result<bool> {
    Ok(false)
}

pub fn rename_replacing(from: &Path, to: &Path) -> io::Result<()> {
    // ERROR_ACCESS_DENIED, ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION: another handle on
    // `to` (or `from`) blocks the rename for now.
    let blocked = |e: &io::Error| matches!(e.raw_os_error(), Some(5 | 32 | 33));
    let deadline = std::time::Instant::now() + super::REPLACE_RETRY;
    let mut pause = std::time::Duration::from_micros(500);
    loop {
        match std::fs::rename(from, to) {
            Err(e) if blocked(&e) && std::time::Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(20));
            }
            r => return r,
        }
    }
}

pub fn write_at(file: &File, buf: &[u8], pos: u64) -> io::Result<usize> {
    file.seek_write(buf, pos)
}

pub fn file_id(file: &File) -> io::Result<super::FileId> {
    // SAFETY: BY_HANDLE_FILE_INFORMATION is plain integers (all-zero is valid).
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: a live handle owned by `file`; `info` is a valid out-pointer.
    let ok = unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut info) };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((
        u64::from(info.dwVolumeSerialNumber),
        (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow),
    ))
}

pub fn sync_dir(dir: &Path) -> io::Result<()> {
    if std::fs::metadata(dir)?.is_dir() {
        Ok(())
    } else {
        Err(io::Error::from(io::ErrorKind::NotADirectory))
    }
}

pub fn path_file_id(path: &Path) -> io::Result<super::FileId> {
    // std opens with FILE_SHARE_READ | WRITE | DELETE: this never blocks other users.
    file_id(&File::open(path)?)
}

pub fn lock(file: &File, exclusive: bool) -> io::Result<()> {
    let flags = if exclusive {
        LOCKFILE_EXCLUSIVE_LOCK
    } else {
        0
    };
    // SAFETY: OVERLAPPED is plain data; all-zero means offset 0 and no event.
    let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
    // SAFETY: a live synchronous handle (the call returns once the lock is held) and a valid
    // OVERLAPPED for the range [0, 1).
    if unsafe { LockFileEx(file.as_raw_handle(), flags, 0, 1, 0, &mut ov) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub fn unlock(file: &File) -> io::Result<()> {
    // SAFETY: as in `lock`.
    let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
    // SAFETY: the range `lock` took, on the same live handle.
    if unsafe { UnlockFileEx(file.as_raw_handle(), 0, 1, 0, &mut ov) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub fn path_from_bytes(bytes: &[u8]) -> Option<&Path> {
    std::str::from_utf8(bytes).ok().map(Path::new)
}

pub fn path_bytes(path: &Path) -> Option<&[u8]> {
    path.to_str().map(str::as_bytes)
}
