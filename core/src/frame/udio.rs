//! User-defined I/O: a contiguous frame whose bytes are reached only through an I/O backend
//! (c-blosc2's `blosc2_io_cb`: open/close/size/write/read/truncate), such as the mmap backend or
//! a backend registered by the caller.
//!
//! The backend is a safe trait here; the C facade implements it by calling the C callbacks.
//! Like c-blosc2 with a non-default backend, every storage access opens the path (`"rb"` to
//! read, `"rb+"` to write, `"wb"` to create), does its positional transfer and closes the
//! stream again: backends may rely on that one-handle-per-access contract (the mmap backend
//! makes `open` a cheap lookup of its existing mapping).

use crate::error::{Error, Result};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An open stream of a [`UserIo`] backend; dropping it closes it.
pub trait UserStream {
    /// Size of the whole underlying file.
    fn size(&mut self) -> Result<u64>;
    /// Fills `buf` with the bytes at `pos` (all of them, or an error).
    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> Result<()>;
    /// Writes all of `data` at `pos`, growing the file if needed.
    fn write_all_at(&mut self, pos: u64, data: &[u8]) -> Result<()>;
    /// Cuts (or extends) the file to `len` bytes.
    fn truncate(&mut self, len: u64) -> Result<()>;
}

/// An I/O backend: opens streams on paths.
pub trait UserIo: Send + Sync + fmt::Debug {
    /// Opens `path` with a C stdio mode (`"rb"`, `"rb+"`, `"wb"`).
    fn open(&self, path: &Path, mode: &str) -> Result<Box<dyn UserStream + '_>>;
}

/// The bytes of a cframe stored at `base` inside `path`, reached through a [`UserIo`].
#[derive(Clone, Debug)]
pub struct UdioStore {
    io: Arc<dyn UserIo>,
    path: PathBuf,
    base: u64,
}

impl UdioStore {
    /// A store over an existing file (nothing is opened yet).
    pub fn new(io: Arc<dyn UserIo>, path: &Path, base: u64) -> UdioStore {
        UdioStore {
            io,
            path: path.to_path_buf(),
            base,
        }
    }

    /// Creates (or truncates) `path` through the backend (`"wb"`), for a frame at byte 0.
    pub fn create(io: Arc<dyn UserIo>, path: &Path) -> Result<UdioStore> {
        drop(io.open(path, "wb")?);
        Ok(UdioStore::new(io, path, 0))
    }

    /// The file this store reads.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the frame starts inside the file.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Bytes available from the frame start (file size minus base).
    pub fn available(&self) -> Result<u64> {
        let size = self.io.open(&self.path, "rb")?.size()?;
        Ok(size.saturating_sub(self.base))
    }

    /// Reads `len` bytes at frame position `pos`; fails unless they are all available.
    pub fn read_at(&self, pos: u64, len: u64) -> Result<Vec<u8>> {
        let end = pos.checked_add(len).ok_or(Error::ReadBuffer)?;
        let at = self.base.checked_add(pos).ok_or(Error::ReadBuffer)?;
        let mut s = self.io.open(&self.path, "rb")?;
        let size = s.size()?.saturating_sub(self.base);
        if end > size {
            return Err(Error::ReadBuffer);
        }
        let mut buf = vec![0u8; usize::try_from(len).map_err(|_| Error::ReadBuffer)?];
        s.read_exact_at(at, &mut buf)?;
        Ok(buf)
    }

    /// Writes `data` at frame position `pos`.
    pub fn write_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let at = self.base.checked_add(pos).ok_or(Error::FileWrite)?;
        self.io.open(&self.path, "rb+")?.write_all_at(at, data)
    }

    /// Cuts the file at frame position `len`.
    pub fn truncate(&mut self, len: u64) -> Result<()> {
        let at = self.base.checked_add(len).ok_or(Error::FileTruncate)?;
        self.io.open(&self.path, "rb+")?.truncate(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::{CParams, DParams};
    use crate::frame::Frame;
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// An in-memory "filesystem" backend that counts calls.
    #[derive(Debug, Default)]
    struct MemIo {
        files: Mutex<HashMap<PathBuf, Vec<u8>>>,
        opens: Mutex<Vec<String>>,
        /// Writes ending past this length fail (a backend that cannot grow the file, like a
        /// copy-on-write mapping on Windows).
        write_limit: Mutex<Option<usize>>,
    }

    struct MemStream<'a> {
        io: &'a MemIo,
        path: PathBuf,
    }

    impl UserIo for MemIo {
        fn open(&self, path: &Path, mode: &str) -> Result<Box<dyn UserStream + '_>> {
            self.opens.lock().unwrap().push(mode.to_string());
            let mut files = self.files.lock().unwrap();
            match mode {
                "wb" => {
                    files.insert(path.to_path_buf(), Vec::new());
                }
                _ if !files.contains_key(path) => return Err(Error::FileOpen),
                _ => {}
            }
            Ok(Box::new(MemStream {
                io: self,
                path: path.to_path_buf(),
            }))
        }
    }

    impl UserStream for MemStream<'_> {
        fn size(&mut self) -> Result<u64> {
            Ok(self.io.files.lock().unwrap()[&self.path].len() as u64)
        }
        fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> Result<()> {
            let files = self.io.files.lock().unwrap();
            let f = &files[&self.path];
            let src = f
                .get(pos as usize..pos as usize + buf.len())
                .ok_or(Error::FileRead)?;
            buf.copy_from_slice(src);
            Ok(())
        }
        fn write_all_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
            let mut files = self.io.files.lock().unwrap();
            let f = files.get_mut(&self.path).unwrap();
            let end = pos as usize + data.len();
            if self.io.write_limit.lock().unwrap().is_some_and(|l| end > l) {
                return Err(Error::FileWrite);
            }
            if f.len() < end {
                f.resize(end, 0);
            }
            f[pos as usize..end].copy_from_slice(data);
            Ok(())
        }
        fn truncate(&mut self, len: u64) -> Result<()> {
            let mut files = self.io.files.lock().unwrap();
            files.get_mut(&self.path).unwrap().resize(len as usize, 0);
            Ok(())
        }
    }

    fn params() -> (CParams, DParams) {
        let c = CParams {
            typesize: 4,
            ..CParams::default()
        };
        (c, DParams::default())
    }

    #[test]
    fn frames_through_a_user_backend_match_memory_frames() {
        let io = Arc::new(MemIo::default());
        let (c, d) = params();
        let p = Path::new("/virtual/a.b2frame");
        let mut f = Frame::new_udio(io.clone(), p, &c, &d).unwrap();
        let mut m = Frame::new_memory(&c, &d).unwrap();
        let data: Vec<u8> = (0..4000u32).flat_map(|v| v.to_le_bytes()).collect();
        let chunk = crate::chunk::compress_vec(&c, &data).unwrap();
        for _ in 0..3 {
            f.insert_chunk(f.nchunks(), &chunk).unwrap();
            m.insert_chunk(m.nchunks(), &chunk).unwrap();
        }
        f.delete_chunk(1).unwrap();
        m.delete_chunk(1).unwrap();
        let bytes = io.files.lock().unwrap()[p].clone();
        // Crash-consistent (staged) commits are fingerprinted like in-memory ones: the same
        // bytes, slot included.
        use crate::frame::fingerprint::Verdict;
        assert_eq!(f.verify_fingerprint().unwrap(), Verdict::Match);
        assert_eq!(m.verify_fingerprint().unwrap(), Verdict::Match);
        assert_eq!(bytes, m.to_cframe().unwrap());
        assert!(io.opens.lock().unwrap().iter().any(|m| m == "wb"));

        let g = Frame::open_udio(io.clone(), p, 0).unwrap();
        assert_eq!(g.nchunks(), 2);
        assert_eq!(g.decompress_chunk(1).unwrap(), data);
        assert_eq!(
            Frame::open_udio(io, Path::new("/virtual/missing"), 0).unwrap_err(),
            Error::FileOpen
        );
    }

    #[test]
    fn a_refused_write_leaves_the_file_and_the_frame_as_they_were() {
        let io = Arc::new(MemIo::default());
        let (c, d) = params();
        let p = Path::new("/virtual/full.b2frame");
        let mut f = Frame::new_udio(io.clone(), p, &c, &d).unwrap();
        let data: Vec<u8> = (0..4000u32).flat_map(|v| v.to_le_bytes()).collect();
        let chunk = crate::chunk::compress_vec(&c, &data).unwrap();
        for _ in 0..3 {
            f.insert_chunk(f.nchunks(), &chunk).unwrap();
        }
        let before = io.files.lock().unwrap()[p].clone();
        // The backend cannot grow the file: the append's commit fails on its first write past
        // the end, and the rollback must not touch the committed frame.
        *io.write_limit.lock().unwrap() = Some(before.len());
        assert_eq!(
            f.insert_chunk(f.nchunks(), &chunk).unwrap_err(),
            Error::FileWrite
        );
        assert_eq!(io.files.lock().unwrap()[p], before);
        assert_eq!(f.nchunks(), 3);
        assert_eq!(f.decompress_chunk(2).unwrap(), data);
        let g = Frame::open_udio(io.clone(), p, 0).unwrap();
        assert_eq!(g.nchunks(), 3);
        // Once writes succeed again the same append goes through.
        *io.write_limit.lock().unwrap() = None;
        assert_eq!(f.insert_chunk(f.nchunks(), &chunk).unwrap(), 4);
        assert_eq!(f.decompress_chunk(3).unwrap(), data);
    }

    #[test]
    fn sframe_files_go_through_the_backend_and_reopen() {
        let io = Arc::new(MemIo::default());
        let (c, d) = params();
        // Removed with everything in it when `scratch` is dropped.
        let scratch = crate::test_util::temp_dir("b2f-udio-sframe-");
        let dir = scratch.path().join("s.b2frame");
        let mut f = Frame::new_sframe_udio(io.clone(), &dir, &c, &d).unwrap();
        let mut m = Frame::new_sframe(&dir.join("native"), &c, &d).unwrap();
        let data: Vec<u8> = (0..4000u32).flat_map(|v| v.to_le_bytes()).collect();
        let chunk = crate::chunk::compress_vec(&c, &data).unwrap();
        for _ in 0..3 {
            f.insert_chunk(f.nchunks(), &chunk).unwrap();
            m.insert_chunk(m.nchunks(), &chunk).unwrap();
        }
        // The directory is real; its index and chunk files live only in the backend.
        assert!(dir.is_dir());
        assert!(!dir.join(super::super::sframe::INDEX_FILE).exists());
        {
            let files = io.files.lock().unwrap();
            assert_eq!(files.len(), 4);
            assert_eq!(files[&dir.join("00000002.chunk")], chunk);
            let native = std::fs::read(dir.join("native/chunks.b2frame")).unwrap();
            assert_eq!(files[&dir.join("chunks.b2frame")], native);
        }
        let g = Frame::open_sframe_udio(io.clone(), &dir).unwrap();
        assert_eq!(g.nchunks(), 3);
        assert_eq!(g.decompress_chunk(2).unwrap(), data);
        assert_eq!(g.to_cframe().unwrap(), m.to_cframe().unwrap());
        assert_eq!(
            Frame::open_sframe_udio(io, &dir.join("missing")).unwrap_err(),
            Error::FileOpen
        );
    }

    #[test]
    fn reader_notices_growth_through_another_handle() {
        let io = Arc::new(MemIo::default());
        let (c, d) = params();
        let p = Path::new("/virtual/g.b2frame");
        let mut w = Frame::new_udio(io.clone(), p, &c, &d).unwrap();
        let mut r = Frame::open_udio(io.clone(), p, 0).unwrap();
        assert!(!r.refresh_if_stale(false).unwrap());
        let chunk = crate::chunk::compress_vec(&c, &[7u8; 400]).unwrap();
        w.insert_chunk(0, &chunk).unwrap();
        assert_eq!(r.nchunks(), 0);
        assert!(r.refresh_if_stale(false).unwrap());
        assert_eq!(r.nchunks(), 1);
        assert!(!r.refresh_if_stale(false).unwrap());
        assert!(r.refresh_if_stale(true).unwrap());
    }
}
