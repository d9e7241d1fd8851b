//! Sparse frames: a directory holding `chunks.b2frame` (a frame header with `frame_type = 1`,
//! the offsets index whose entries are chunk-file ids, and the trailer) plus one `%08X.chunk`
//! file per stored chunk (docs/format/sframe.md#directory).
//!
//! With a user I/O backend, c-blosc2 opens the index file and every chunk file through the
//! backend's callbacks; the directory itself (creation, and removal of chunk files) stays on the
//! filesystem. [`SparseDir`] carries that choice.

use super::chunkinfo::{ChunkInfo, EXTENDED_HEADER_LEN, MIN_HEADER_LEN};
use super::header::FrameType;
use super::io::Store;
use super::record;
use super::udio::{UdioStore, UserIo};
use super::{cframe, Backing, Frame};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Name of the index file inside the directory.
pub const INDEX_FILE: &str = "chunks.b2frame";

/// An sframe directory and how its files are reached: the filesystem, or a user backend.
#[derive(Clone, Debug)]
pub struct SparseDir {
    dir: PathBuf,
    /// `dir/chunks.b2frame`, built once (every read checks the index for staleness).
    index: PathBuf,
    io: Option<Arc<dyn UserIo>>,
    /// The spare index file of this handle (and its clones): after an exchange, the previous
    /// index under a temporary name, which the next commit overwrites and exchanges again, so
    /// that a commit creates and removes no file (see [`Spare`]).
    spare: Arc<Spare>,
}

/// A temporary index file kept between commits: `chunks.b2frame.b2tmp-PID-N` holding the
/// index that the last exchange replaced, which no index or reader of a committed state uses.
/// Creating a new temporary file and removing the old index on every commit made every
/// sframe append allocate an inode and free one: ext4 skips inodes freed in the last seconds
/// when it allocates one (`recently_deleted`), scanning past all of them, so the cost of an
/// append grew with the appends of the last seconds (from 3600 to 1800 appends/s over 20,000
/// appends, below c-blosc2's in-place rewrite past that). Removed when the last clone of the
/// handle is dropped; a crash leaves it behind, as it could leave any temporary file.
#[derive(Debug, Default)]
struct Spare(Mutex<Option<(PathBuf, u32)>>);

impl Drop for Spare {
    fn drop(&mut self) {
        let slot = self.0.get_mut().unwrap_or_else(|e| e.into_inner());
        // A forked child's copy is the parent's file: only the process that made it removes it.
        if let Some((path, pid)) = slot.take() {
            if pid == std::process::id() {
                record::remove(&path);
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

impl SparseDir {
    /// The directory `dir`, its files reached through `io` (the filesystem when `None`).
    pub fn new(dir: &Path, io: Option<Arc<dyn UserIo>>) -> SparseDir {
        SparseDir {
            dir: dir.to_path_buf(),
            index: join_slash(dir, INDEX_FILE),
            io,
            spare: Arc::default(),
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The index file as a store (positions from its first byte).
    pub fn index_store(&self) -> Result<Store> {
        let path = &self.index;
        match &self.io {
            None => {
                let file = std::fs::File::open(path).map_err(|_| Error::FileOpen)?;
                Store::file(file, 0)
            }
            Some(io) => {
                // Fail here, like the filesystem case, when the index is missing.
                drop(io.open(path, "rb")?);
                Ok(Store::User(UdioStore::new(io.clone(), path, 0)))
            }
        }
    }

    /// Replaces the index file with `header | index | trailer`. On the filesystem the new
    /// index is written to a temporary file in the directory and exchanged with the old one
    /// (`renameat2(RENAME_EXCHANGE)`), or renamed over it where the system cannot exchange, so
    /// that a crash leaves the old index or the new one, never a mix (docs/durability.md). After
    /// an exchange the old index, now under the temporary name, is kept as the handle's spare
    /// (`Spare`): the next commit overwrites it (one write from byte 0, then a truncation when
    /// it was longer) instead of creating a file. In durable mode the file and the directory are
    /// synced before the exchange (making the new chunk files' names durable too) and the
    /// directory after it. A user backend has no rename: it gets c-blosc2's calls, `"rb+"` (or
    /// `"wb"` to create), an overwrite from byte 0 and a truncation.
    pub fn write_index_file(&self, bytes: &[u8]) -> Result<()> {
        let path = &self.index;
        match &self.io {
            None => {
                use std::io::Write;
                // Held across the whole replacement: clones of this handle share the spare.
                let mut spare = self.spare.0.lock().unwrap_or_else(|e| e.into_inner());
                let pid = std::process::id();
                let reused = spare
                    .take()
                    .filter(|(_, p)| *p == pid)
                    .and_then(|(tmp, _)| {
                        let f = std::fs::OpenOptions::new().write(true).open(&tmp).ok()?;
                        let len = f.metadata().ok()?.len();
                        Some((tmp, f, len))
                    });
                let tmp = match &reused {
                    Some((tmp, _, _)) => tmp.clone(),
                    None => record::temp_name(path),
                };
                let r = (|| -> Result<bool> {
                    let file = record::FileRef::Path(tmp.clone());
                    let f = match reused {
                        Some((_, mut f, len)) => {
                            record::write(&file, 0, bytes);
                            f.write_all(bytes).map_err(|_| Error::FileWrite)?;
                            if len > bytes.len() as u64 {
                                record::truncate(&file, bytes.len() as u64);
                                f.set_len(bytes.len() as u64)
                                    .map_err(|_| Error::FileWrite)?;
                            }
                            f
                        }
                        None => {
                            let mut f = std::fs::OpenOptions::new()
                                .write(true)
                                .create_new(true)
                                .open(&tmp)
                                .map_err(|_| Error::FileOpen)?;
                            record::create(&tmp);
                            record::write(&file, 0, bytes);
                            f.write_all(bytes).map_err(|_| Error::FileWrite)?;
                            f
                        }
                    };
                    if record::durable() {
                        record::sync(&file);
                        f.sync_data().map_err(|_| Error::FileWrite)?;
                        record::sync_dir_now(&self.dir).map_err(|_| Error::FileWrite)?;
                    }
                    drop(f);
                    // Exchanged with the index; the old index stays under the temporary name
                    // as the next spare. (Replacing a file by rename makes ext4 write the new
                    // one out at once: about 10x the cost of the whole exchange.)
                    if crate::sys::exchange(&tmp, path).map_err(|_| Error::FileWrite)? {
                        record::exchange(&tmp, path);
                        record::sync_dir_now(&self.dir).map_err(|_| Error::FileWrite)?;
                        Ok(true)
                    } else {
                        // No exchange here (or no index yet): renamed over it.
                        record::rename_now(&tmp, path).map_err(|_| Error::FileWrite)?;
                        Ok(false)
                    }
                })();
                match r {
                    Ok(true) => {
                        *spare = Some((tmp, pid));
                        Ok(())
                    }
                    Ok(false) => Ok(()),
                    Err(e) => {
                        let _ = std::fs::remove_file(&tmp);
                        Err(e)
                    }
                }
            }
            Some(io) => {
                let mut s = match io.open(path, "rb+") {
                    Ok(s) => s,
                    Err(_) => io.open(path, "wb")?,
                };
                s.write_all_at(0, bytes)?;
                s.truncate(bytes.len() as u64)
            }
        }
    }

    /// The first `N` bytes of the index file (the fixed header, for the stale-frame check):
    /// one open, one positioned read, one close.
    pub fn index_head<const N: usize>(&self) -> Result<[u8; N]> {
        let mut head = [0u8; N];
        match &self.io {
            None => {
                let f = std::fs::File::open(&self.index).map_err(|_| Error::FileOpen)?;
                crate::sys::read_exact_at(&f, &mut head, 0).map_err(|_| Error::ReadBuffer)?;
            }
            Some(_) => {
                let got = self.index_store()?.read_at(0, N as u64)?;
                head.copy_from_slice(&got);
            }
        }
        Ok(head)
    }

    /// Reads chunk file `id`, checking its cbytes against the file.
    pub fn read_chunk(&self, id: u64) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        let n = self.fetch_chunk(id, &mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }

    /// [`SparseDir::read_chunk`] into a reusable buffer (see [`super::io::sized`]); returns the
    /// chunk's length (its first bytes in `buf`). The file is sized (`fstat`) before anything
    /// is allocated and read with one positioned read.
    pub fn fetch_chunk(&self, id: u64, buf: &mut Vec<u8>) -> Result<usize> {
        let path = chunk_path(&self.dir, id)?;
        let size = match &self.io {
            None => {
                let f = std::fs::File::open(path).map_err(|_| Error::FileOpen)?;
                let size = f.metadata().map_err(|_| Error::FileRead)?.len();
                check_chunk_file_size(size)?;
                crate::sys::read_exact_at(&f, super::io::sized(buf, size as usize), 0)
                    .map_err(|_| Error::ReadBuffer)?;
                size as usize
            }
            Some(io) => {
                let mut s = io.open(&path, "rb")?;
                let size = s.size()?;
                check_chunk_file_size(size)?;
                s.read_exact_at(0, super::io::sized(buf, size as usize))?;
                size as usize
            }
        };
        let info = ChunkInfo::parse(&buf[..size])?;
        if info.cbytes as usize > size {
            return Err(Error::ReadBuffer);
        }
        Ok(info.cbytes as usize)
    }

    /// Header fields of chunk file `id`, checked like [`SparseDir::fetch_chunk`] checks them,
    /// reading only the chunk's header (at most 32 bytes).
    pub fn read_chunk_info(&self, id: u64) -> Result<ChunkInfo> {
        let path = chunk_path(&self.dir, id)?;
        let mut head = [0u8; EXTENDED_HEADER_LEN];
        let (size, n) = match &self.io {
            None => {
                let f = std::fs::File::open(path).map_err(|_| Error::FileOpen)?;
                let size = f.metadata().map_err(|_| Error::FileRead)?.len();
                check_chunk_file_size(size)?;
                let n = size.min(head.len() as u64) as usize;
                crate::sys::read_exact_at(&f, &mut head[..n], 0).map_err(|_| Error::ReadBuffer)?;
                (size, n)
            }
            Some(io) => {
                let mut s = io.open(&path, "rb")?;
                let size = s.size()?;
                check_chunk_file_size(size)?;
                let n = size.min(head.len() as u64) as usize;
                s.read_exact_at(0, &mut head[..n])?;
                (size, n)
            }
        };
        let info = ChunkInfo::parse(&head[..n])?;
        if info.cbytes as u64 > size {
            return Err(Error::ReadBuffer);
        }
        Ok(info)
    }

    /// Bytes `pos..end` of chunk file `id` into `dst` (`FileOpen` when there is no such file,
    /// `ReadBuffer` when it is shorter): the block reads of lazy chunks.
    pub fn read_chunk_range(&self, id: u64, pos: u64, end: u64, dst: &mut [u8]) -> Result<()> {
        let path = chunk_path(&self.dir, id)?;
        match &self.io {
            None => {
                let f = std::fs::File::open(path).map_err(|_| Error::FileOpen)?;
                let size = f.metadata().map_err(|_| Error::FileRead)?.len();
                if end > size {
                    return Err(Error::ReadBuffer);
                }
                crate::sys::read_exact_at(&f, dst, pos).map_err(|_| Error::FileRead)
            }
            Some(io) => {
                let mut s = io.open(&path, "rb")?;
                if end > s.size()? {
                    return Err(Error::ReadBuffer);
                }
                s.read_exact_at(pos, dst)
            }
        }
    }

    /// The size of chunk file `id` (`FileOpen` when there is no such file).
    pub fn chunk_file_len(&self, id: u64) -> Result<u64> {
        let path = chunk_path(&self.dir, id)?;
        match &self.io {
            None => Ok(std::fs::metadata(path).map_err(|_| Error::FileOpen)?.len()),
            Some(io) => io.open(&path, "rb")?.size(),
        }
    }

    /// Writes (creating or replacing) chunk file `id`.
    pub fn write_chunk(&self, id: u64, chunk: &[u8]) -> Result<()> {
        self.write_file(&chunk_path(&self.dir, id)?, chunk)
    }

    /// The raw bytes of chunk file `id`, or `None` when it does not exist (the undo copy a
    /// mutation keeps before overwriting it).
    pub fn read_chunk_file(&self, id: u64) -> Result<Option<Vec<u8>>> {
        let path = chunk_path(&self.dir, id)?;
        match &self.io {
            None => match std::fs::read(&path) {
                Ok(bytes) => Ok(Some(bytes)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(_) => Err(Error::FileRead),
            },
            Some(io) => {
                // A backend reports a missing file only as a failed open.
                let Ok(mut s) = io.open(&path, "rb") else {
                    return Ok(None);
                };
                // Some backends (c-blosc2's own test_udio one) never fail an open: a stream
                // they cannot size holds no file either.
                let Ok(size) = s.size() else {
                    return Ok(None);
                };
                let size = usize::try_from(size).map_err(|_| Error::FileRead)?;
                let mut buf = vec![0u8; size];
                s.read_exact_at(0, &mut buf)?;
                Ok(Some(buf))
            }
        }
    }

    /// Removes chunk file `id` (always a filesystem operation, as in c-blosc2).
    pub fn remove_chunk(&self, id: u64) -> Result<()> {
        let path = chunk_path(&self.dir, id)?;
        record::remove(&path);
        std::fs::remove_file(path).map_err(|_| Error::FileRemove)
    }

    fn write_file(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        match &self.io {
            None => {
                // A chunk file gets a new id (never one the committed index uses), so a crash
                // leaves at worst an unreferenced file; synced in durable mode before the index
                // that names it is published.
                use std::io::Write;
                let mut f = std::fs::File::create(path).map_err(|_| Error::FileWrite)?;
                record::create(path);
                let file = record::FileRef::Path(path.to_path_buf());
                record::write(&file, 0, bytes);
                f.write_all(bytes).map_err(|_| Error::FileWrite)?;
                if record::durable() {
                    record::sync(&file);
                    f.sync_data().map_err(|_| Error::FileWrite)?;
                }
                Ok(())
            }
            Some(io) => {
                let mut s = io.open(path, "wb")?;
                if !bytes.is_empty() {
                    s.write_all_at(0, bytes)?;
                }
                // A backend's "wb" need not empty an existing file: cut it to what was written.
                s.truncate(bytes.len() as u64)
            }
        }
    }
}

/// A chunk file must hold at least a chunk header, and no more than a chunk can be (its
/// `cbytes` is an `i32`); what it reads is bounded by the file itself. The index's `cbytes`
/// does not bound it (c-blosc2 does not check it either): a hostile index may claim less than
/// its chunk files hold, mutations carry that difference along, and a delete then left a chunk
/// that read before unreadable.
fn check_chunk_file_size(size: u64) -> Result<()> {
    if size < MIN_HEADER_LEN as u64 || size > i32::MAX as u64 {
        return Err(Error::ReadBuffer);
    }
    Ok(())
}

/// `dir/name` with a `/` as c-blosc2 writes it on every platform (`Path::join` would put a `\`
/// on Windows, which user I/O backends keyed by path strings would see as another name).
pub fn join_slash(dir: &Path, name: &str) -> PathBuf {
    let dir = dir.as_os_str();
    let mut p = std::ffi::OsString::with_capacity(dir.len() + 1 + name.len());
    p.push(dir);
    // `Path::join` adds no separator after a trailing one.
    if dir.as_encoded_bytes().last().is_some_and(|&b| b != b'/') {
        p.push("/");
    }
    p.push(name);
    PathBuf::from(p)
}

/// Path of the file holding chunk `id` (8 uppercase hex digits), built in one allocation.
pub fn chunk_path(dir: &Path, id: u64) -> Result<PathBuf> {
    if id > u64::from(u32::MAX) {
        return Err(Error::InvalidIndex);
    }
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut name = *b"/00000000.chunk";
    for k in 0..8 {
        name[8 - k] = HEX[((id >> (4 * k)) & 0xF) as usize];
    }
    let dir = dir.as_os_str();
    let mut p = std::ffi::OsString::with_capacity(dir.len() + name.len());
    p.push(dir);
    // `Path::join` adds no separator after a trailing one.
    let skip = usize::from(dir.as_encoded_bytes().last().is_none_or(|&b| b == b'/'));
    p.push(std::str::from_utf8(&name[skip..]).map_err(|_| Error::InvalidIndex)?);
    Ok(PathBuf::from(p))
}

/// Opens the sframe in `dir` through the filesystem (reads only its index file).
pub fn open(dir: &Path) -> Result<Frame> {
    open_dir(SparseDir::new(dir, None))
}

/// Opens the sframe `dir` describes (reads only its index file).
pub fn open_dir(dir: SparseDir) -> Result<Frame> {
    let store = dir.index_store()?;
    let (header, locs, vlmeta) = cframe::read_frame(&store, FrameType::Sparse)?;
    Frame {
        header,
        locs,
        vlmeta,
        backing: Backing::Sparse(dir),
        fp: super::fingerprint::Tracker::default(),
        carry: Box::default(),
    }
    .check_on_open()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_paths_are_joined_hex_names() {
        for dir in ["d", "a/b", "a/b/", "/", ""] {
            for id in [0u64, 9, 0xAB, 0x1234_5678, u64::from(u32::MAX)] {
                let want = Path::new(dir).join(format!("{id:08X}.chunk"));
                assert_eq!(chunk_path(Path::new(dir), id).unwrap(), want, "{dir} {id}");
            }
        }
        assert_eq!(
            chunk_path(Path::new("d"), 1 << 32),
            Err(Error::InvalidIndex)
        );
    }
}
