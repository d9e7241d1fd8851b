//! Byte storage under a contiguous frame: an owned memory buffer, or one file handle used with
//! positioned reads/writes at a base offset (a frame may start inside a larger file).
//!
//! Positions are frame-relative; the file variant adds its base offset. Every read is checked
//! against a known length before any allocation, so hostile lengths cannot trigger huge
//! allocations. For files that length is cached (kept current by our own writes) and re-read
//! from the file only when a read reaches past it, so an ordinary read costs one `pread` and no
//! `fstat`; growth by other handles is picked up by that re-read, shrinking shows up as a short
//! read (an error, never an oversized buffer).

use super::record::{self, FileRef};
use super::udio::UdioStore;
use crate::error::{Error, Result};
use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};

/// The first `len` bytes of a reusable read buffer. The buffer only ever grows (zero-filling
/// just the growth), so a buffer reused for reads of similar sizes is neither reallocated nor
/// cleared again: the read overwrites what it needs.
pub fn sized(buf: &mut Vec<u8>, len: usize) -> &mut [u8] {
    if buf.capacity() == 0 {
        // A fresh zeroed allocation (calloc: a large one gets zero pages from the kernel
        // instead of a pass of writes over it).
        *buf = vec![0u8; len];
    } else if buf.len() < len {
        buf.resize(len, 0);
    }
    &mut buf[..len]
}

/// Bytes someone else owns, lent to a frame for its life (c-blosc2's
/// `blosc2_schunk_from_buffer(copy=false)`: the caller keeps its buffer alive).
pub type LentBytes = std::sync::Arc<dyn AsRef<[u8]> + Send + Sync>;

/// An in-memory frame's bytes: owned, or the first `len` bytes of a lent buffer, read in
/// place and copied into an owned buffer by the first write (the lender's bytes are never
/// written).
pub enum MemBuf {
    /// Owned bytes (their length is the frame length).
    Owned(Vec<u8>),
    /// The first `len` bytes of a lent buffer.
    Lent(LentBytes, usize),
}

impl MemBuf {
    /// Lends the first `len` bytes of `buf` (`InvalidParam` if it is shorter).
    pub fn lent(buf: LentBytes, len: usize) -> Result<MemBuf> {
        if (*buf).as_ref().len() < len {
            return Err(Error::InvalidParam);
        }
        Ok(MemBuf::Lent(buf, len))
    }

    /// The bytes, owned, copying lent ones first.
    pub fn to_mut(&mut self) -> &mut Vec<u8> {
        if let MemBuf::Lent(b, len) = self {
            *self = MemBuf::Owned((**b).as_ref()[..*len].to_vec());
        }
        match self {
            MemBuf::Owned(v) => v,
            MemBuf::Lent(..) => unreachable!("made owned above"),
        }
    }

    /// Whether the bytes are still the lender's.
    pub fn is_lent(&self) -> bool {
        matches!(self, MemBuf::Lent(..))
    }
}

impl std::ops::Deref for MemBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            MemBuf::Owned(v) => v,
            MemBuf::Lent(b, len) => &(**b).as_ref()[..*len],
        }
    }
}

impl From<Vec<u8>> for MemBuf {
    fn from(v: Vec<u8>) -> MemBuf {
        MemBuf::Owned(v)
    }
}

impl std::fmt::Debug for MemBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.is_lent() { "Lent" } else { "Owned" };
        write!(f, "{kind}({} bytes)", self.len())
    }
}

/// Where a contiguous frame's bytes live.
#[derive(Debug)]
pub enum Store {
    /// An in-memory frame (its length is the frame length).
    Memory(MemBuf),
    /// A file; the frame starts at `base`.
    File {
        /// The single handle used for all I/O.
        file: File,
        /// Offset of the frame inside the file.
        base: u64,
        /// The file size last seen (by `fstat` or our own writes); an upper bound for reads
        /// that skip the `fstat`. Atomic because concurrent readers share `&Store`.
        size: AtomicU64,
        /// The open file's identity ([`crate::sys::FileId`]), fixed for the handle's life:
        /// comparing it with the path's tells whether the path was replaced.
        ident: crate::sys::FileId,
    },
    /// A file reached through a user-defined I/O backend ([`super::udio`]).
    User(UdioStore),
}

impl Store {
    /// A frame starting at `base` inside `file` (its size read once here).
    pub fn file(file: File, base: u64) -> Result<Store> {
        let m = file.metadata().map_err(|_| Error::FileRead)?;
        let ident = crate::sys::file_id(&file).map_err(|_| Error::FileRead)?;
        Ok(Store::File {
            file,
            base,
            size: AtomicU64::new(m.len()),
            ident,
        })
    }

    /// The open file's identity (None unless a plain file store).
    pub fn file_ident(&self) -> Option<crate::sys::FileId> {
        match self {
            Store::File { ident, .. } => Some(*ident),
            Store::Memory(_) | Store::User(_) => None,
        }
    }

    /// Bytes available from the frame start (buffer length, or file size minus base; the file
    /// size is re-read, and cached for [`Store::read_at`]).
    pub fn available(&self) -> Result<u64> {
        match self {
            Store::Memory(v) => Ok(v.len() as u64),
            Store::File {
                file, base, size, ..
            } => {
                let now = file.metadata().map_err(|_| Error::FileRead)?.len();
                size.store(now, Ordering::Relaxed);
                Ok(now.saturating_sub(*base))
            }
            Store::User(u) => u.available(),
        }
    }

    /// Whether the frame's first `end` bytes exist: checked against the cached file size first,
    /// and only past it by re-reading the size.
    pub fn holds(&self, end: u64) -> Result<bool> {
        if let Store::File { base, size, .. } = self {
            if base
                .checked_add(end)
                .is_some_and(|e| e <= size.load(Ordering::Relaxed))
            {
                return Ok(true);
            }
        }
        Ok(end <= self.available()?)
    }

    /// Reads `len` bytes at frame position `pos`; fails unless they are all available.
    pub fn read_at(&self, pos: u64, len: u64) -> Result<Vec<u8>> {
        let end = pos.checked_add(len).ok_or(Error::ReadBuffer)?;
        match self {
            Store::Memory(v) => {
                if end > v.len() as u64 {
                    return Err(Error::ReadBuffer);
                }
                Ok(v[pos as usize..end as usize].to_vec())
            }
            Store::File { .. } => {
                if !self.holds(end)? {
                    return Err(Error::ReadBuffer);
                }
                let mut buf = vec![0u8; usize::try_from(len).map_err(|_| Error::ReadBuffer)?];
                self.read_into(pos, &mut buf)?;
                Ok(buf)
            }
            Store::User(u) => {
                if end > u.available()? {
                    return Err(Error::ReadBuffer);
                }
                u.read_at(pos, len)
            }
        }
    }

    /// Fills `dst` from frame position `pos` (one `pread` for files); fails unless all of it
    /// is available. For callers that reuse a buffer instead of allocating one per read.
    pub fn read_into(&self, pos: u64, dst: &mut [u8]) -> Result<()> {
        let end = pos.checked_add(dst.len() as u64).ok_or(Error::ReadBuffer)?;
        match self {
            Store::File { file, base, .. } => {
                let at = base.checked_add(pos).ok_or(Error::ReadBuffer)?;
                if !self.holds(end)? {
                    return Err(Error::ReadBuffer);
                }
                if crate::sys::read_exact_at(file, dst, at).is_err() {
                    // Shrunk by another handle since the size was cached?
                    return Err(if end > self.available()? {
                        Error::ReadBuffer
                    } else {
                        Error::FileRead
                    });
                }
                Ok(())
            }
            Store::Memory(v) => {
                let src = usize::try_from(end)
                    .ok()
                    .and_then(|e| v.get(pos as usize..e))
                    .ok_or(Error::ReadBuffer)?;
                dst.copy_from_slice(src);
                Ok(())
            }
            Store::User(_) => {
                let got = self.read_at(pos, dst.len() as u64)?;
                dst.copy_from_slice(&got);
                Ok(())
            }
        }
    }

    /// Borrows bytes of an in-memory frame (None for files).
    pub fn slice(&self, pos: u64, len: u64) -> Option<&[u8]> {
        match self {
            Store::Memory(v) => {
                let end = pos.checked_add(len)?;
                v.get(pos as usize..usize::try_from(end).ok()?)
            }
            Store::File { .. } | Store::User(_) => None,
        }
    }

    /// Writes `data` at frame position `pos`, growing the frame if needed.
    pub fn write_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        match self {
            Store::Memory(v) => {
                let v = v.to_mut();
                let pos = usize::try_from(pos).map_err(|_| Error::WriteBuffer)?;
                let end = pos.checked_add(data.len()).ok_or(Error::WriteBuffer)?;
                if (pos..=end).contains(&v.len()) {
                    // Past the end (an append; an in-memory cframe's index and trailer follow
                    // its data, so a chunk append rewrites them): no zero fill to overwrite.
                    v.truncate(pos);
                    v.extend_from_slice(data);
                    return Ok(());
                }
                if v.len() < end {
                    v.resize(end, 0);
                }
                v[pos..end].copy_from_slice(data);
                Ok(())
            }
            Store::File {
                file,
                base,
                size,
                ident,
            } => {
                let at = base.checked_add(pos).ok_or(Error::FileWrite)?;
                let end = at.checked_add(data.len() as u64).ok_or(Error::FileWrite)?;
                record::write(&FileRef::Inode(ident.0, ident.1), at, data);
                let r = crate::sys::write_all_at(file, data, at).map_err(|_| Error::FileWrite);
                // Even a failed write may have extended the file; the cache is only an upper
                // bound for allocation sizes if it stays at or below the real size, so on
                // failure re-read it.
                if r.is_ok() {
                    size.fetch_max(end, Ordering::Relaxed);
                } else {
                    let _ = self.available();
                }
                r
            }
            Store::User(u) => u.write_at(pos, data),
        }
    }

    /// [`Store::write_at`], returning `crc` (a CRC-32 as `crc32fast` reports it) extended
    /// with `data`: an append to an in-memory frame hashes the bytes as it copies them
    /// ([`crate::crc::extend_vec`]); other writes hash them after writing.
    pub fn write_at_crc(&mut self, pos: u64, data: &[u8], crc: u32) -> Result<u32> {
        if let Store::Memory(v) = self {
            let v = v.to_mut();
            let pos = usize::try_from(pos).map_err(|_| Error::WriteBuffer)?;
            let end = pos.checked_add(data.len()).ok_or(Error::WriteBuffer)?;
            if (pos..=end).contains(&v.len()) {
                v.truncate(pos);
                return Ok(crate::crc::extend_vec(v, data, crc));
            }
            if end <= v.len() {
                return Ok(crate::crc::copy(&mut v[pos..end], data, crc));
            }
        }
        self.write_at(pos, data)?;
        let mut h = crc32fast::Hasher::new_with_initial(crc);
        h.update(data);
        Ok(h.finalize())
    }

    /// Cuts the frame (and, for files, the file) at frame position `len`.
    pub fn truncate(&mut self, len: u64) -> Result<()> {
        match self {
            Store::Memory(v) => {
                let len = usize::try_from(len).map_err(|_| Error::FileTruncate)?;
                if len < v.len() {
                    v.to_mut().truncate(len);
                }
                Ok(())
            }
            Store::File {
                file,
                base,
                size,
                ident,
            } => {
                let at = base.checked_add(len).ok_or(Error::FileTruncate)?;
                record::truncate(&FileRef::Inode(ident.0, ident.1), at);
                let r = file.set_len(at).map_err(|_| Error::FileTruncate);
                match r {
                    Ok(()) => size.store(at, Ordering::Relaxed),
                    Err(_) => {
                        let _ = self.available();
                    }
                }
                r
            }
            Store::User(u) => u.truncate(len),
        }
    }

    /// Moves `len` bytes from `from` to `to` inside the frame (overlap allowed).
    pub fn move_within(&mut self, from: u64, to: u64, len: u64) -> Result<()> {
        if len == 0 || from == to {
            return Ok(());
        }
        match self {
            Store::Memory(v) => {
                let v = v.to_mut();
                let (f, t, l) = (from as usize, to as usize, len as usize);
                let end = t.checked_add(l).ok_or(Error::WriteBuffer)?;
                if f.checked_add(l).is_none_or(|e| e > v.len()) {
                    return Err(Error::ReadBuffer);
                }
                if v.len() < end {
                    v.resize(end, 0);
                }
                v.copy_within(f..f + l, t);
                Ok(())
            }
            Store::File { .. } | Store::User(_) => {
                // Bounded-size pieces, ordered so that overlapping moves are safe.
                const PIECE: u64 = 1 << 20;
                let mut done = 0u64;
                while done < len {
                    let n = PIECE.min(len - done);
                    let off = if to > from { len - done - n } else { done };
                    let buf = self.read_at(from + off, n)?;
                    self.write_at(to + off, &buf)?;
                    done += n;
                }
                Ok(())
            }
        }
    }

    /// Flushes file contents to the disk (`fdatasync`; no-op in memory and for user backends,
    /// which have no sync callback).
    pub fn sync(&self) -> Result<()> {
        match self {
            Store::Memory(_) | Store::User(_) => Ok(()),
            Store::File { file, ident, .. } => {
                record::sync(&FileRef::Inode(ident.0, ident.1));
                file.sync_data().map_err(|_| Error::FileWrite)
            }
        }
    }

    /// A write barrier between two steps of a commit: [`Store::sync`] in durable mode
    /// ([`record::durable`]), nothing otherwise (the page cache keeps the issue order for
    /// every reader, and a killed process loses nothing it wrote).
    pub fn barrier(&self) -> Result<()> {
        if record::durable() {
            self.sync()
        } else {
            Ok(())
        }
    }

    /// Whether crashes matter for this store (a file, directly or through a user backend).
    pub fn persistent(&self) -> bool {
        !matches!(self, Store::Memory(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_reads_are_bounded_and_moves_overlap() {
        let mut s = Store::Memory(MemBuf::Owned((0u8..10).collect()));
        assert_eq!(s.read_at(8, 2).unwrap(), vec![8, 9]);
        assert_eq!(s.read_at(8, 3), Err(Error::ReadBuffer));
        assert_eq!(s.read_at(u64::MAX, 2), Err(Error::ReadBuffer));
        s.move_within(2, 4, 6).unwrap();
        assert_eq!(
            s.read_at(0, 10).unwrap(),
            vec![0, 1, 2, 3, 2, 3, 4, 5, 6, 7]
        );
        s.write_at(12, &[1]).unwrap();
        assert_eq!(s.available().unwrap(), 13);
        s.truncate(3).unwrap();
        assert_eq!(s.available().unwrap(), 3);
    }

    #[test]
    fn file_store_uses_base_offset() {
        // Removed with everything in it when `dir` is dropped.
        let dir = crate::test_util::temp_dir("b2frame-io-");
        let p = dir.path().join("f.bin");
        std::fs::write(&p, b"prefix0123456789").unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        let mut s = Store::file(file, 6).unwrap();
        assert_eq!(s.available().unwrap(), 10);
        assert_eq!(s.read_at(0, 3).unwrap(), b"012");
        s.move_within(0, 2, 8).unwrap();
        assert_eq!(s.read_at(0, 10).unwrap(), b"0101234567");
        s.move_within(2, 0, 8).unwrap();
        assert_eq!(s.read_at(0, 8).unwrap(), b"01234567");
        s.truncate(4).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"prefix0123");
    }
}
