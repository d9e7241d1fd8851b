//! Undo log for frame mutations (issue 5: a failed mutation leaves the frame as it was).
//!
//! Every write a mutation makes to the backing goes through an [`Undo`], which first keeps a
//! copy of whatever that write destroys: for a cframe, the bytes it overwrites or cuts inside
//! the store as it was when the transaction began (bytes past that length need no copy, the
//! rollback cuts them off); for an sframe, the previous content (or absence) of each chunk file
//! and of the index file it rewrites. Chunk-file removals are deferred until the commit has
//! succeeded, so nothing irreversible happens before it. A rollback replays the copies in
//! reverse order, which restores every byte no matter how the writes overlapped.

use crate::error::{Error, Result};
use crate::frame::io::Store;
use crate::frame::offsets::{Locs, LocsRef};
use crate::frame::sframe::{SparseDir, INDEX_FILE};
use crate::frame::Backing;

/// Copies of what a transaction's writes destroyed, and the removals it deferred.
///
/// For a cframe in a file (directly or through a user backend) the transaction's writes are
/// not made at all before the commit: they are *staged* here, and the commit
/// ([`super::Frame::commit_with`]) makes them in the crash-safe order of docs/durability.md.
/// A failure before the commit then leaves the file untouched.
pub(in crate::frame) struct Undo {
    /// cframe in a file: the writes of the transaction, in issue order (`None`: in memory).
    pub staged: Option<Vec<(u64, Vec<u8>)>>,
    /// cframe in a file: the old state moved out of the way by the commit's first step, as
    /// `(header, offsets)`: what the frame holds on disk if the second step then fails
    /// (offsets `None`: the old ones, unchanged; only an update's relocation shifts them, and
    /// copying a large frame's offsets on every append cost as much as the append).
    pub relocated: Option<(super::super::header::FrameHeader, Option<Locs>)>,
    /// The fingerprint's data part of the state the transaction started from, when known
    /// (seals the old state's copy made by a relocating commit).
    pub old_data: Option<crate::frame::fingerprint::Piece>,
    /// cframe: the store length when the transaction began, and the length now.
    len0: u64,
    len: u64,
    /// cframe: the bytes below this the rollback reads or restores: the original length, or
    /// the end of a move past it (which the reverse move reads back).
    needed: u64,
    /// cframe: what each write destroyed, oldest first.
    ranges: Vec<Saved>,
    /// sframe: chunk files written, with their first saved content (`None`: did not exist).
    chunk_files: Vec<(u64, Option<Vec<u8>>)>,
    /// sframe: the index file before its first rewrite (`None`: not saved yet).
    index_file: Option<Option<Vec<u8>>>,
    /// sframe: chunk files to remove once the commit succeeded.
    pub removals: Vec<u64>,
    /// sframe: `(new id, old id)` of updated chunks written under a new id, to be moved back
    /// to their old id by a second commit (so the directory ends as c-blosc2 leaves it).
    pub moved_ids: Vec<(u64, u64)>,
    /// The offsets the transaction started from (what a rollback restores).
    pub old_locs: OldLocs,
    /// Empty buffers for the copies (reused across transactions: see [`Undo::recycle`]).
    spare: Vec<Vec<u8>>,
}

/// The offsets a transaction started from. An append keeps only their count: the frame's
/// offsets start with them as long as the transaction only adds entries after them, so a large
/// frame's offsets are not copied on every append. Code that edits an existing entry during
/// such a transaction calls [`Undo::keep_old_locs`] first.
pub(in crate::frame) enum OldLocs {
    /// A copy of all of them.
    Full(Locs),
    /// The first `n` entries of the frame's offsets, unchanged so far.
    Prefix(usize),
}

impl OldLocs {
    /// The old offsets, given the frame's current ones.
    pub fn get<'a>(&'a self, now: &'a Locs) -> LocsRef<'a> {
        match self {
            OldLocs::Full(v) => v.view(),
            OldLocs::Prefix(n) => now.prefix(*n),
        }
    }

    /// How many leading entries of the current offsets are known to be the old ones
    /// unchanged (`None`: not known; compare them).
    pub fn same_prefix(&self) -> Option<usize> {
        match self {
            OldLocs::Full(_) => None,
            OldLocs::Prefix(n) => Some(*n),
        }
    }

    /// The offsets a rollback restores, given the frame's current ones.
    pub fn restore(self, now: &mut Locs) {
        match self {
            OldLocs::Full(v) => *now = v,
            OldLocs::Prefix(n) => now.truncate(n),
        }
    }
}

/// One undo record of a cframe in memory.
enum Saved {
    /// `(position, bytes before the write)`.
    Bytes(u64, Vec<u8>),
    /// A move of `len` bytes from `from` to `to`, undone by the reverse move (the bytes it
    /// overwrote outside its source are a [`Saved::Bytes`] record just before it).
    Moved { from: u64, to: u64, len: u64 },
}

impl Undo {
    /// An empty log for a transaction on `backing`.
    pub fn new(backing: &Backing) -> Result<Undo> {
        let (len0, staged) = match backing {
            Backing::Contiguous(store) if store.persistent() => (0, Some(Vec::new())),
            Backing::Contiguous(store) => (store.available()?, None),
            Backing::Sparse(_) => (0, None),
        };
        Ok(Undo {
            staged,
            relocated: None,
            old_data: None,
            len0,
            len: len0,
            needed: len0,
            ranges: Vec::new(),
            chunk_files: Vec::new(),
            index_file: None,
            removals: Vec::new(),
            moved_ids: Vec::new(),
            old_locs: OldLocs::Full(Locs::new()),
            spare: Vec::new(),
        })
    }

    /// Gives the log empty buffers to copy into (an in-memory append copies the old index,
    /// which grows with the frame: a fresh allocation of that size on every append cost more
    /// in page faults and heap trims than the copy).
    pub fn with_buffers(mut self, spare: Vec<Vec<u8>>) -> Undo {
        self.spare = spare;
        self
    }

    /// Takes back the copies' buffers (and the unused ones), emptied: call it once the copies
    /// are no longer needed (after the commit or the rollback).
    pub fn recycle(&mut self) -> Vec<Vec<u8>> {
        let mut out = std::mem::take(&mut self.spare);
        for r in self.ranges.drain(..) {
            if let Saved::Bytes(_, b) = r {
                out.push(b);
            }
        }
        if let Some(Some(b)) = self.index_file.take() {
            out.push(b);
        }
        out
    }

    /// An empty buffer for a copy of `len` bytes: a spare one if any.
    fn buffer(&mut self, len: usize) -> Vec<u8> {
        let i = self.spare.iter().position(|b| b.capacity() >= len);
        match i.or_else(|| self.spare.len().checked_sub(1)) {
            Some(i) => {
                let mut b = self.spare.swap_remove(i);
                b.clear();
                b
            }
            None => Vec::new(),
        }
    }

    /// Before an existing entry of `now` (the frame's offsets) is edited: keeps a copy of the
    /// old offsets if only their count was kept.
    pub fn keep_old_locs(&mut self, now: &Locs) {
        if let OldLocs::Prefix(n) = self.old_locs {
            self.old_locs = OldLocs::Full(now.prefix(n).to_locs());
        }
    }

    /// Keeps the bytes of `[pos, pos + len)` that belong to the original store (or that the
    /// rollback of a move reads back) and still exist.
    fn save(&mut self, store: &Store, pos: u64, len: u64) -> Result<()> {
        let end = pos.saturating_add(len).min(self.needed).min(self.len);
        if pos < end {
            let bytes = match store.slice(pos, end - pos) {
                // In memory: copied into a spare buffer.
                Some(held) => {
                    let mut b = self.buffer(held.len());
                    b.extend_from_slice(held);
                    b
                }
                None => store.read_at(pos, end - pos)?,
            };
            self.ranges.push(Saved::Bytes(pos, bytes));
        }
        Ok(())
    }

    /// [`Store::write_at`], keeping what it overwrites.
    pub fn write_at(&mut self, store: &mut Store, pos: u64, data: &[u8]) -> Result<()> {
        if let Some(w) = self.staged.as_mut() {
            w.push((pos, data.to_vec()));
            return Ok(());
        }
        self.save(store, pos, data.len() as u64)?;
        // The length may have grown even if the write fails part way; assume it did.
        self.len = self.len.max(pos.saturating_add(data.len() as u64));
        store.write_at(pos, data)
    }

    /// [`Undo::write_at`], returning `crc` extended with `data` ([`Store::write_at_crc`]; a
    /// staged write hashes the bytes as it copies them into the log).
    pub fn write_at_crc(
        &mut self,
        store: &mut Store,
        pos: u64,
        data: &[u8],
        crc: u32,
    ) -> Result<u32> {
        if let Some(w) = self.staged.as_mut() {
            let mut bytes = Vec::new();
            let crc = crate::crc::extend_vec(&mut bytes, data, crc);
            w.push((pos, bytes));
            return Ok(crc);
        }
        self.save(store, pos, data.len() as u64)?;
        self.len = self.len.max(pos.saturating_add(data.len() as u64));
        store.write_at_crc(pos, data, crc)
    }

    /// Stages the write of `data` at `pos`: bytes the caller read from the file, e.g. the
    /// source of a move no staged write lies in (file frames only: `Failure` otherwise).
    pub fn stage_read(&mut self, pos: u64, data: Vec<u8>) -> Result<()> {
        let w = self.staged.as_mut().ok_or(crate::error::Error::Failure)?;
        if !data.is_empty() {
            w.push((pos, data));
        }
        Ok(())
    }

    /// [`Store::move_within`], keeping what it overwrites.
    pub fn move_within(&mut self, store: &mut Store, from: u64, to: u64, len: u64) -> Result<()> {
        if len == 0 || from == to {
            return Ok(());
        }
        if let Some(w) = self.staged.as_mut() {
            // Staged writes are not in the file yet: the source must not include any.
            let end = from.checked_add(len).ok_or(crate::error::Error::Failure)?;
            if w.iter().any(|(p, d)| *p < end && from < p + d.len() as u64) {
                return Err(crate::error::Error::Failure);
            }
            let bytes = store.read_at(from, len)?;
            w.push((to, bytes));
            return Ok(());
        }
        // Only the overwritten bytes the source does not cover are copied (the reverse move
        // restores the rest): a data tail shifted by a few bytes costs a few bytes of log,
        // not a copy of the tail.
        let (from_end, to_end) = (
            from.checked_add(len).ok_or(crate::error::Error::Failure)?,
            to.checked_add(len).ok_or(crate::error::Error::Failure)?,
        );
        if to_end <= from || from_end <= to {
            self.save(store, to, len)?;
        } else if to < from {
            self.save(store, to, from - to)?;
        } else {
            self.save(store, from_end, to_end - from_end)?;
        }
        self.ranges.push(Saved::Moved { from, to, len });
        self.needed = self.needed.max(to_end);
        self.len = self.len.max(to_end);
        store.move_within(from, to, len)
    }

    /// [`Store::truncate`], keeping what it cuts off.
    pub fn truncate(&mut self, store: &mut Store, len: u64) -> Result<()> {
        if len < self.len {
            self.save(store, len, self.len - len)?;
        }
        self.len = len;
        store.truncate(len)
    }

    /// [`SparseDir::write_chunk`], keeping the file's previous content. With `fresh` (an id
    /// past every id the committed index names), no previous content is looked for: a file of
    /// that id can only be an unreferenced leftover, which a rollback removes.
    pub fn write_chunk(
        &mut self,
        dir: &SparseDir,
        id: u64,
        chunk: &[u8],
        fresh: bool,
    ) -> Result<()> {
        if !self.chunk_files.iter().any(|(i, _)| *i == id) {
            let old = if fresh {
                None
            } else {
                dir.read_chunk_file(id)?
            };
            self.chunk_files.push((id, old));
        }
        dir.write_chunk(id, chunk)
    }

    /// Removes chunk file `id`, but only after a successful commit ([`Undo::finish`]).
    pub fn remove_chunk_later(&mut self, id: u64) {
        self.removals.push(id);
    }

    /// [`SparseDir::write_index_file`], keeping the previous index file.
    pub fn write_index_file(&mut self, dir: &SparseDir, bytes: &[u8]) -> Result<()> {
        if self.index_file.is_none() {
            let old = if dir.path().join(INDEX_FILE).exists() {
                let store = dir.index_store()?;
                let n = store.available()?;
                // Into a reused buffer (the index grows with the frame).
                let mut b = self.buffer(usize::try_from(n).map_err(|_| Error::ReadBuffer)?);
                b.resize(n as usize, 0);
                store.read_into(0, &mut b)?;
                Some(b)
            } else {
                None
            };
            self.index_file = Some(old);
        }
        dir.write_index_file(bytes)
    }

    /// After a successful commit: performs the deferred removals. A removal that fails only
    /// leaves an unreferenced chunk file (the committed frame does not point at it), so it
    /// does not turn the successful mutation into a failure.
    pub fn finish(self, backing: &Backing) {
        if let Backing::Sparse(dir) = backing {
            for id in self.removals {
                let _ = dir.remove_chunk(id);
            }
        }
    }

    /// After a failure: puts every saved byte back (newest copy first) and restores the
    /// original length. Best effort: a storage error here cannot be reported better than the
    /// failure that caused the rollback (in memory nothing can fail).
    pub fn rollback(&mut self, backing: &mut Backing) {
        match backing {
            // Staged: whatever the commit wrote lies past the committed frame (which the
            // header on disk describes), nothing to put back.
            Backing::Contiguous(_) if self.staged.is_some() => {}
            Backing::Contiguous(store) => {
                for r in self.ranges.iter().rev() {
                    let _ = match r {
                        Saved::Bytes(pos, bytes) => store.write_at(*pos, bytes),
                        Saved::Moved { from, to, len } => store.move_within(*to, *from, *len),
                    };
                }
                let _ = store.truncate(self.len0);
            }
            Backing::Sparse(dir) => {
                for (id, old) in &self.chunk_files {
                    let _ = match old {
                        Some(bytes) => dir.write_chunk(*id, bytes),
                        None => dir.remove_chunk(*id),
                    };
                }
                if let Some(Some(bytes)) = &self.index_file {
                    let _ = dir.write_index_file(bytes);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::chunk::{self, CParams, DParams};
    use crate::error::Error;
    use crate::frame::{Backing, Frame, Target};
    use std::collections::BTreeMap;
    use std::path::Path;

    /// Every byte that makes up the frame: the store, or every file of the sframe directory.
    fn snapshot(f: &Frame) -> BTreeMap<String, Vec<u8>> {
        match &f.backing {
            Backing::Contiguous(store) => {
                let n = store.available().unwrap();
                BTreeMap::from([(String::new(), store.read_at(0, n).unwrap())])
            }
            Backing::Sparse(dir) => std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| {
                    let p = e.unwrap().path();
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    (name, std::fs::read(&p).unwrap())
                })
                .collect(),
        }
    }

    /// Three chunks with a fixed chunksize of 1000: data, a special ZERO chunk, a short one.
    fn frame_at(target: Target<'_>) -> (Frame, Vec<Vec<u8>>) {
        let cp = CParams::default();
        let mut f = Frame::create(target, &cp, &DParams::default()).unwrap();
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut zero = vec![0u8; 32];
        chunk::special::zeros(&cp, 1000, &mut zero).unwrap();
        let short = chunk::compress_vec(&cp, &data[..400]).unwrap();
        for c in [chunk::compress_vec(&cp, &data).unwrap(), zero, short] {
            f.append_chunk(&c).unwrap();
        }
        let chunks = (0..3).map(|i| f.chunk(i).unwrap().into_owned()).collect();
        (f, chunks)
    }

    /// Failed transactions that wrote payloads (over the index), moved the data section, or
    /// asked for a chunk file removal leave every byte as it was; the next index-keeping
    /// mutation then writes a frame that reopens with the same chunks.
    fn rolls_back(target: Target<'_>, reopen: &dyn Fn(&Frame) -> Frame) {
        let (mut f, chunks) = frame_at(target);
        let before = snapshot(&f);
        let (header, locs) = (f.header.clone(), f.locs.clone());
        let big = chunk::compress_vec(&CParams::default(), &[9u8; 3000]).unwrap();

        // Like the fuzz finding: switch to variable sizes (payloads for the special chunk)
        // and store another payload, then a commit that fails before writing.
        let r = f.transaction(|f, undo| {
            f.switch_to_variable(undo)?;
            f.store_payload(&big, undo)?;
            f.header.nbytes = -1;
            Ok(())
        });
        assert_eq!(r, Err(Error::Data));
        assert_eq!(snapshot(&f), before, "failed commit after payload writes");

        // An in-place update of the first chunk (moves the tail of the data section), then
        // a failure.
        let r: crate::error::Result<()> = f.transaction(|f, undo| {
            let Some(at) = f.locs.at(0).stored() else {
                panic!("chunk 0 is stored")
            };
            let old = i64::from(f.chunk_info(0)?.cbytes);
            f.replace_payload(at, old, &big, undo)?;
            f.replace_payload(at, big.len() as i64, &big[..40], undo)?;
            if let (Backing::Sparse(_), Some(id)) = (&f.backing, f.locs.at(2).stored()) {
                undo.remove_chunk_later(id);
            }
            Err(Error::Failure)
        });
        assert_eq!(r, Err(Error::Failure));
        assert_eq!(snapshot(&f), before, "failed in-place update");
        assert_eq!((&f.header, &f.locs), (&header, &locs));

        // A single growing and a single shrinking in-place update (the tail moves one way;
        // in memory the rollback moves it back), then a failure.
        for grow in [true, false] {
            let r: crate::error::Result<()> = f.transaction(|f, undo| {
                let Some(at) = f.locs.at(0).stored() else {
                    panic!("chunk 0 is stored")
                };
                let old = i64::from(f.chunk_info(0)?.cbytes);
                // A shift shorter than the tail: the move's source and target overlap.
                let new = vec![7u8; if grow { old + 8 } else { old - 8 } as usize];
                f.replace_payload(at, old, &new, undo)?;
                Err(Error::Failure)
            });
            assert_eq!(r, Err(Error::Failure));
            assert_eq!(
                snapshot(&f),
                before,
                "failed in-place update (grow: {grow})"
            );
            assert_eq!((&f.header, &f.locs), (&header, &locs));
        }

        f.add_vlmetalayer_raw("v", b"abc").unwrap();
        let g = reopen(&f);
        assert_eq!(g.nchunks(), 3);
        for (i, c) in chunks.iter().enumerate() {
            assert_eq!(&*g.chunk(i as i64).unwrap(), &c[..]);
        }
        assert_eq!(g.vlmeta.len(), 1);
    }

    /// A path `name` in a fresh directory, removed with everything in it when the returned
    /// guard is dropped.
    fn scratch(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let d = crate::test_util::temp_dir(&format!("b2frame-undo-{name}-"));
        let p = d.path().join(name);
        (d, p)
    }

    #[test]
    fn memory_frame_rolls_back() {
        rolls_back(Target::Memory, &|f| {
            Frame::from_bytes(&f.to_cframe().unwrap()).unwrap()
        });
    }

    #[test]
    fn file_frame_rolls_back() {
        let (_dir, p) = scratch("file.b2frame");
        rolls_back(Target::File(&p), &|_| Frame::open(&p).unwrap());
    }

    #[test]
    fn sparse_frame_rolls_back() {
        let (_dir, p) = scratch("dir.b2frame");
        rolls_back(Target::Sparse(&p), &|_| Frame::open(&p).unwrap());
    }

    /// A deferred removal happens once the commit succeeded (sframe delete).
    #[test]
    fn sparse_delete_removes_the_chunk_file_after_commit() {
        let (_dir, p) = scratch("del.b2frame");
        let (mut f, chunks) = frame_at(Target::Sparse(&p));
        let Some(id) = f.locs.at(0).stored() else {
            panic!("chunk 0 is stored")
        };
        let file = crate::frame::sframe::chunk_path(&p, id).unwrap();
        assert!(file.exists());
        assert_eq!(f.delete_chunk(0), Ok(2));
        assert!(!file.exists());
        let g = Frame::open(Path::new(&p)).unwrap();
        assert_eq!(&*g.chunk(1).unwrap(), &chunks[2][..]);
    }
}
