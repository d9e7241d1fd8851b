//! Frame mutations, following c-blosc2 3.3 (docs/mutation.md#common-steps): payloads go to the end of the
//! data section (cframe) or to a new `%08X.chunk` file (sframe); then the offsets index, the
//! trailer and the header are rewritten and the frame truncated after the trailer.
//!
//! Deliberate differences (the reference's bugs, docs/divergences.md): chunks with `nbytes == 0` are refused
//! (a frame cannot count them); special offsets are only used while the chunksize is fixed
//! (their size is derived from it), so in a frame with variable chunk sizes ZERO/NaN/UNINIT
//! chunks are stored as regular chunks with the same contents
//! ([`offsets::regular_equivalent`]); a failed operation changes nothing, in memory or in the
//! storage: every mutation runs in a transaction whose storage writes go through an undo log
//! ([`undo::Undo`]).

mod commit;
mod undo;

use super::chunkinfo::ChunkInfo;
use super::fingerprint::{self, Piece};
use super::header::{self, FrameType, MAX_METALAYERS, MAX_NCHUNKS};
use super::io::Store;
use super::offsets::{self, ChunkLoc, Loc, SpecialKind};
use super::trailer::{self, MAX_VLMETALAYERS_WRITE};
use super::{meta, Backing, Frame};
use crate::chunk::{CParams, DParams};
use crate::error::{Error, Result};
use undo::{OldLocs, Undo};

/// The length of the index write, the last of `writes`.
fn index_len_of(writes: &[(u64, Vec<u8>)]) -> u64 {
    writes.last().map_or(0, |(_, d)| d.len() as u64)
}

/// A frame's in-memory state but its offsets (kept by [`Undo::old_locs`]): header,
/// vlmetalayers.
type Saved = (header::FrameHeader, Vec<(String, Vec<u8>)>);

/// How a commit produces the index chunk.
#[derive(Clone, Copy)]
enum Index {
    /// Keep the stored one (metadata-only operations; c-blosc2 does not rewrite it then).
    Keep,
    /// Compress it anew with this many spare destination bytes (see
    /// [`offsets::encode_index_with_room`]).
    Encode(usize),
    /// As `fill_special` writes it: one SPECIAL_VALUE chunk of the first entry (every entry is
    /// the same; see [`offsets::encode_repeated_index`]).
    Repeated,
}

/// What a transaction may do to the existing offsets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Edit {
    /// Anything: the transaction keeps a copy of them for a rollback.
    Any,
    /// Only add entries after them (an append): they are not copied, and the commit neither
    /// re-checks nor compares them. Code that edits one anyway calls [`Undo::keep_old_locs`]
    /// first.
    Append,
}

/// What a mutation does to the chunk list (for the chunksize bookkeeping).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Insert(usize),
    Update(usize),
}

impl Frame {
    /// Rewrites index, trailer and header after the data section and truncates there.
    /// The header length may only change when `may_resize` (empty frames).
    /// Like every mutation, a transaction: on failure memory and storage are as before.
    pub(super) fn commit(&mut self, may_resize: bool) -> Result<()> {
        self.transaction_full(may_resize, Index::Encode(0), Edit::Any, |_, _| Ok(()))
    }

    /// The stored index chunk as it is now (before this commit writes anything).
    fn current_index_chunk(&self) -> Result<Vec<u8>> {
        let pos = u64::from(self.header.header_len)
            + match self.backing {
                Backing::Contiguous(_) => self.header.cbytes as u64,
                Backing::Sparse(_) => 0,
            };
        let read = |store: &Store| -> Result<Vec<u8>> {
            let head = store.read_at(pos, 32)?;
            let info = ChunkInfo::parse(&head)?;
            store.read_at(pos, info.cbytes as u64)
        };
        match &self.backing {
            Backing::Contiguous(store) => read(store),
            Backing::Sparse(dir) => read(&dir.index_store()?),
        }
    }

    /// Writes index, trailer and header for the current in-memory state (through `undo`),
    /// choosing how the index chunk is produced. Only [`Frame::transaction_full`] calls it.
    fn commit_with(
        &mut self,
        may_resize: bool,
        index_mode: Index,
        undo: &mut Undo,
        old: &Saved,
        old_locs: &OldLocs,
    ) -> Result<()> {
        // The first chunks of a frame without chunks: committed past the empty frame's
        // trailer first, then moved to where c-blosc2 puts them (`compact_to`).
        let mut compact_to = None;
        if undo.staged.is_some() {
            let old_empty = old_locs.get(&self.locs).is_empty();
            // Only a frame without chunks can be shifted: no copy of an update's staged
            // writes (an update in the middle of a large frame stages the whole data tail).
            let unshifted = if old_empty {
                undo.staged.clone().unwrap_or_default()
            } else {
                Vec::new()
            };
            let shift = self.shift_past_empty_trailer(&old.0, old_empty, undo);
            if shift > 0 {
                compact_to = Some((shift, unshifted));
            }
        }
        let mut header = self.header.clone();
        header.has_vlmeta = !self.vlmeta.is_empty();
        // Like c-blosc2, the flags follow the chunksize and the chunk kind at every write.
        header.variable_chunks = header.chunksize == 0;
        header.version = if header.variable_chunks || header.vl_blocks {
            3
        } else {
            header::VERSION_RC1
        };
        // Never write a frame that readers would refuse: the chunk count derived from the header
        // must match the index, and every stored offset must be readable. (A hostile frame whose
        // chunk headers disagree with its counters can otherwise lead there.)
        if header.nbytes < 0 || header.cbytes < 0 {
            return Err(Error::Data);
        }
        match header.fixed_nchunks()? {
            Some(n) if n != self.locs.len() as i64 => return Err(Error::Data),
            None if self.locs.is_empty() => return Err(Error::Data),
            _ => {}
        }
        // Entries an append left as they were passed this check at their commit (or open),
        // against a limit that has not shrunk since: only the new ones are checked.
        let limit = super::cframe::max_stored;
        let checked = match (old_locs.same_prefix(), limit(&old.0), limit(&header)) {
            (Some(n), Some(was), Some(now))
                if now >= was && old.0.frame_type == header.frame_type =>
            {
                n.min(self.locs.len())
            }
            _ => 0,
        };
        super::cframe::validate_locs(&self.locs[checked..], &header)?;
        // The kept index blocks describe `old.1`; they come back only when the commit
        // succeeds with the entries they were last updated for.
        let mut blocks = std::mem::take(&mut self.index_blocks);
        let mut index_piece = None;
        let index = match index_mode {
            _ if self.locs.is_empty() => Vec::new(),
            Index::Keep => self.current_index_chunk()?,
            Index::Encode(room) => {
                let (c, piece) = blocks.encode_with_piece(
                    old_locs.get(&self.locs),
                    &self.locs,
                    old_locs.same_prefix(),
                    room,
                )?;
                index_piece = piece;
                c
            }
            Index::Repeated => offsets::encode_repeated_index(self.locs[0], self.locs.len())?,
        };
        // Only an encoded index leaves the blocks describing the new entries; a kept one
        // leaves them describing the same (unchanged) entries.
        let mut keep_blocks =
            !self.locs.is_empty() && matches!(index_mode, Index::Encode(_) | Index::Keep);
        // The first chunks of an empty frame are laid out twice (other entries).
        keep_blocks &= compact_to.is_none();
        let mut trailer = trailer::to_bytes(&self.vlmeta)?;
        header.check_encodable()?;
        let hl = header.encoded_len() as u64;
        if !may_resize && hl != u64::from(self.header.header_len) {
            return Err(Error::InvalidParam);
        }
        // Without chunks the trailer follows the header, where c-blosc2 reads it (the cbytes
        // of deleted chunks are kept, as c-blosc2 keeps them).
        let data_end = match self.backing {
            Backing::Contiguous(_) if !self.locs.is_empty() => hl + header.cbytes as u64,
            Backing::Contiguous(_) | Backing::Sparse(_) => hl,
        };
        header.frame_len = data_end + index.len() as u64 + trailer.len() as u64;
        let hbytes = header.to_bytes()?;
        // The data part the trailer is sealed with (none: not fingerprinted). Staged
        // (crash-consistent) commits of file frames make their payload writes only in
        // `commit::commit`: an unknown data part is then read through them.
        let mut sealed_data = None;
        if fingerprint::writes_enabled() {
            let staged = match self.backing {
                Backing::Contiguous(_) => undo.staged.as_deref(),
                Backing::Sparse(_) => None,
            };
            let data = self.data_piece_for_commit(&header, hl, staged)?;
            // From the kept index blocks when the index was assembled from them.
            let index_piece = index_piece.unwrap_or_else(|| Piece::of(&index));
            fingerprint::seal(&mut trailer, Piece::of(&hbytes), data, index_piece);
            sealed_data = Some(data);
        }
        // The data part of the state this commit starts from (it seals a relocated copy).
        let old_data = undo.old_data;
        match &mut self.backing {
            Backing::Contiguous(store) if undo.staged.is_some() => {
                // Left `Some` (empty): a rollback after a failed commit must still know the
                // writes were staged (the file holds the old state), not replay an unstaged
                // log, which would cut the file to the length it recorded, 0.
                let mut writes = undo.staged.as_mut().map(std::mem::take).unwrap_or_default();
                let index_len = index.len() as u64;
                // A kept index is on disk already, where the new state expects it. (Moved,
                // not copied: a large frame's index is most of what an append writes.)
                if !matches!(index_mode, Index::Keep) {
                    writes.push((data_end, index));
                }
                writes.push((data_end + index_len, trailer));
                let before = commit::Old {
                    header: &old.0,
                    locs: old_locs.get(&self.locs),
                    vlmeta: &old.1,
                };
                commit::commit(store, &before, &header, &hbytes, writes, undo, old_data)?;
                if let Some((shift, payloads)) = compact_to {
                    // The same state again, laid out as c-blosc2 lays it out: payloads from
                    // the start of the data section (through the relocation step, as the
                    // committed state occupies those bytes).
                    let committed = (header.clone(), self.locs.clone(), self.vlmeta.clone());
                    let mut h = header.clone();
                    h.cbytes -= shift as i64;
                    let locs: Vec<ChunkLoc> = self
                        .locs
                        .iter()
                        .map(|l| match l.get() {
                            Loc::Stored(v) => ChunkLoc::Stored(v - shift),
                            Loc::Special(_) => *l,
                        })
                        .collect();
                    let index = match index_mode {
                        Index::Encode(room) => offsets::encode_index_with_room(&locs, room)?,
                        Index::Repeated => offsets::encode_repeated_index(locs[0], locs.len())?,
                        Index::Keep => return Err(Error::Failure),
                    };
                    let trailer = trailer::to_bytes(&self.vlmeta)?;
                    let data_end = u64::from(h.header_len) + h.cbytes as u64;
                    h.frame_len = data_end + index.len() as u64 + trailer.len() as u64;
                    let hb = h.to_bytes()?;
                    // Dead bytes are not covered: both layouts have the same data part.
                    let mut trailer = trailer;
                    if let Some(data) = sealed_data {
                        fingerprint::seal(&mut trailer, Piece::of(&hb), data, Piece::of(&index));
                    }
                    let mut writes = payloads;
                    writes.push((data_end, index));
                    writes.push((data_end + index_len_of(&writes), trailer));
                    let before = commit::Old {
                        header: &committed.0,
                        locs: &committed.1,
                        vlmeta: &committed.2,
                    };
                    undo.relocated = None;
                    match commit::commit(store, &before, &h, &hb, writes, undo, sealed_data) {
                        Ok(()) => {
                            header = h;
                            self.locs = locs;
                        }
                        // The call succeeded with the first layout (or its relocated copy).
                        Err(_) => {
                            if let Some((rh, rl)) = undo.relocated.take() {
                                header = rh;
                                if let Some(rl) = rl {
                                    self.locs = rl;
                                }
                            }
                        }
                    }
                }
            }
            Backing::Contiguous(store) => {
                undo.write_at(store, data_end, &index)?;
                undo.write_at(store, data_end + index.len() as u64, &trailer)?;
                undo.write_at(store, 0, &hbytes)?;
                undo.truncate(store, header.frame_len)?;
            }
            Backing::Sparse(dir) => {
                let mut all = hbytes.clone();
                all.extend_from_slice(&index);
                all.extend_from_slice(&trailer);
                undo.write_index_file(dir, &all)?;
                if !undo.moved_ids.is_empty() {
                    keep_blocks = false;
                    // Updated chunks were committed under new ids; now their content goes
                    // back under the old ids (files the committed index no longer names) and
                    // a second index names them again, as c-blosc2's in-place rewrite leaves
                    // the directory. A failure here keeps the committed first layout.
                    let moved = std::mem::take(&mut undo.moved_ids);
                    let mut locs = self.locs.clone();
                    let back = (|| -> Result<()> {
                        for &(new_id, old_id) in &moved {
                            let bytes = dir.read_chunk_file(new_id)?.ok_or(Error::FileRead)?;
                            dir.write_chunk(old_id, &bytes)?;
                            for l in locs.iter_mut() {
                                if *l == ChunkLoc::Stored(new_id) {
                                    *l = ChunkLoc::Stored(old_id);
                                }
                            }
                        }
                        let index = match index_mode {
                            Index::Encode(room) => offsets::encode_index_with_room(&locs, room)?,
                            Index::Repeated | Index::Keep => return Err(Error::Failure),
                        };
                        // The chunks hold the same bytes in the same order, under other
                        // ids: only the index part of the fingerprint changes.
                        let mut trailer = trailer.clone();
                        if let Some(data) = sealed_data {
                            fingerprint::seal(
                                &mut trailer,
                                Piece::of(&hbytes),
                                data,
                                Piece::of(&index),
                            );
                        }
                        let mut all = hbytes;
                        all.extend_from_slice(&index);
                        all.extend_from_slice(&trailer);
                        dir.write_index_file(&all)
                    })();
                    if back.is_ok() {
                        self.locs = locs;
                        for &(new_id, old_id) in &moved {
                            undo.removals.retain(|&r| r != old_id);
                            undo.removals.push(new_id);
                        }
                        self.fp.moved_chunk_files(&moved, &self.locs);
                    } else {
                        // Which ids the chunks ended under is not certain: learn them again.
                        self.fp.reset();
                    }
                }
            }
        }
        self.header = header;
        if keep_blocks {
            self.index_blocks = blocks;
        }
        Ok(())
    }

    /// Runs a mutation and commits it; if anything fails, restores the in-memory state and
    /// rolls the storage back (see [`Frame::transaction_full`]).
    fn transaction<T>(&mut self, f: impl FnOnce(&mut Frame, &mut Undo) -> Result<T>) -> Result<T> {
        self.transaction_full(false, Index::Encode(0), Edit::Any, f)
    }

    fn transaction_with<T>(
        &mut self,
        index_mode: Index,
        f: impl FnOnce(&mut Frame, &mut Undo) -> Result<T>,
    ) -> Result<T> {
        self.transaction_full(false, index_mode, Edit::Any, f)
    }

    /// The one place where the frame changes: `f` edits the in-memory state and writes
    /// payloads, then the commit writes index, trailer and header. Every storage write of both
    /// goes through `undo` (the backing is only reached through it here), so on failure the
    /// header, offsets, vlmetalayers *and* the stored bytes are put back as they were.
    fn transaction_full<T>(
        &mut self,
        may_resize: bool,
        index_mode: Index,
        edit: Edit,
        f: impl FnOnce(&mut Frame, &mut Undo) -> Result<T>,
    ) -> Result<T> {
        // A frame without chunks may claim more dead bytes than it holds (c-blosc2 keeps the
        // cbytes of deleted chunks while the trailer moves back behind the header): new
        // payloads go right after what exists, not past a hole (or a huge allocation).
        if self.locs.is_empty() && self.header.nbytes == 0 {
            if let Backing::Contiguous(_) = self.backing {
                let room = self
                    .header
                    .frame_len
                    .saturating_sub(u64::from(self.header.header_len));
                if self.header.cbytes as u64 > room {
                    self.header.cbytes = room as i64;
                }
            }
        }
        self.prime_fingerprint();
        let mut saved: Saved = (self.header.clone(), self.vlmeta.clone());
        let mut undo = Undo::new(&self.backing)?;
        undo.old_data = self.fp.data();
        undo.old_locs = match edit {
            Edit::Append => OldLocs::Prefix(self.locs.len()),
            Edit::Any => OldLocs::Full(self.locs.clone()),
        };
        let r = f(self, &mut undo).and_then(|v| {
            let old_locs = std::mem::replace(&mut undo.old_locs, OldLocs::Prefix(0));
            let r = self.commit_with(may_resize, index_mode, &mut undo, &saved, &old_locs);
            undo.old_locs = old_locs;
            r.map(|_| v)
        });
        match r {
            Ok(_) => undo.finish(&self.backing),
            Err(_) => {
                // A commit that failed after moving the old state keeps it where it moved.
                if let Some((h, l)) = undo.relocated.take() {
                    saved.0 = h;
                    if let Some(l) = l {
                        undo.old_locs = OldLocs::Full(l);
                    }
                }
                let old_locs = std::mem::replace(&mut undo.old_locs, OldLocs::Prefix(0));
                undo.rollback(&mut self.backing);
                (self.header, self.vlmeta) = saved;
                old_locs.restore(&mut self.locs);
                self.fp.reset();
            }
        }
        r
    }

    /// The first chunk of a frame without chunks: its trailer follows the header (where both
    /// libraries look for it while `nbytes` is 0), so the new payloads, written at the start of
    /// the data section, would overwrite it. They move past it instead; the old trailer stays
    /// as dead bytes at the start of the data section (docs/durability.md).
    fn shift_past_empty_trailer(
        &mut self,
        oh: &header::FrameHeader,
        old_empty: bool,
        undo: &mut Undo,
    ) -> u64 {
        if oh.nbytes != 0
            || !old_empty
            || self.locs.is_empty()
            || self.header.header_len != oh.header_len
        {
            return 0;
        }
        let base = u64::from(oh.header_len) + oh.cbytes as u64;
        let shift = oh.frame_len.saturating_sub(base);
        if shift == 0 {
            return 0;
        }
        for (pos, _) in undo.staged.iter_mut().flatten() {
            if *pos >= base {
                *pos += shift;
            }
        }
        for l in self.locs.iter_mut() {
            if let Loc::Stored(v) = l.get() {
                if v >= oh.cbytes as u64 {
                    *l = ChunkLoc::Stored(v + shift);
                }
            }
        }
        self.header.cbytes += shift as i64;
        shift
    }

    fn nbytes_at(&self, i: usize) -> Result<i64> {
        Ok(i64::from(self.chunk_info(i as i64)?.nbytes))
    }

    /// Checks a chunk before it enters the frame and returns its header fields.
    fn check_incoming(&self, chunk: &[u8]) -> Result<ChunkInfo> {
        let info = ChunkInfo::parse(chunk)?;
        if info.cbytes as usize > chunk.len() || !info.frame_storable() {
            return Err(Error::InvalidParam);
        }
        let vl_frame = self.header.vl_blocks;
        if !self.locs.is_empty() && info.vl_blocks != vl_frame {
            return Err(Error::InvalidParam);
        }
        Ok(info)
    }

    /// Chunksize bookkeeping, with c-blosc2's rules: `-1` (never set) takes the first chunk's
    /// nbytes; a fixed chunksize switches to variable sizes (version 3, bit 6) when an insert
    /// follows a short last chunk, a chunk is larger than the chunksize, or a chunk that is
    /// not last has a different size. (c-blosc2 refuses a first chunk larger than a preset
    /// chunksize; here that also just makes the frame variable.)
    fn account(&mut self, op: Op, nbytes: i64, undo: &mut Undo) -> Result<()> {
        if self.needs_variable(op, nbytes)? {
            self.switch_to_variable(undo)?;
        }
        Ok(())
    }

    /// [`Frame::account`] without the switch: whether the frame must turn variable.
    fn needs_variable(&mut self, op: Op, nbytes: i64) -> Result<bool> {
        if self.header.chunksize == 0 {
            return Ok(false);
        }
        let n = self.locs.len() as i64;
        if self.header.chunksize < 0 {
            self.header.chunksize = i32::try_from(nbytes).map_err(|_| Error::TwoGbLimit)?;
        }
        let cs = i64::from(self.header.chunksize);
        let last_short = n > 0 && self.header.nbytes < n * cs;
        let variable = match op {
            Op::Insert(i) => {
                nbytes > cs || (n > 0 && (last_short || (i as i64 != n && nbytes != cs)))
            }
            Op::Update(i) => nbytes > cs || (i as i64 != n - 1 && nbytes != cs),
        };
        Ok(variable)
    }

    /// Presets the chunksize of an empty frame (what c-blosc2 does when a caller sets
    /// `schunk->chunksize` before the first append, e.g. python-blosc2).
    pub fn set_chunksize(&mut self, chunksize: i32) -> Result<()> {
        if !self.locs.is_empty() || self.header.nbytes != 0 || chunksize < -1 {
            return Err(Error::InvalidParam);
        }
        self.transaction(|f, _| {
            f.header.chunksize = chunksize;
            Ok(())
        })
    }

    /// Sets the header's default compression parameters and thread counts (what c-blosc2's
    /// next header write takes from a `blosc2_schunk` whose fields a caller changed), and the
    /// chunksize while the frame has no chunk. Only the in-memory header changes: the next
    /// transaction writes it. Values a header cannot hold (typesize or blocksize below 0 or 1, a
    /// splitmode outside 1..=4) leave those fields alone.
    pub fn set_header_params(&mut self, c: &CParams, threads: (i16, i16), chunksize: i32) {
        let h = &mut self.header;
        h.compcode = c.compcode;
        h.compcode_meta = c.compcode_meta;
        h.clevel = c.clevel;
        if (1..=4).contains(&c.splitmode) {
            h.splitmode = c.splitmode as u8;
        }
        if c.typesize > 0 {
            h.typesize = c.typesize;
        }
        if c.blocksize >= 0 {
            h.blocksize = c.blocksize;
        }
        h.use_dict = c.use_dict;
        h.filters = c.filters;
        h.filters_meta = c.filters_meta;
        (h.nthreads_comp, h.nthreads_decomp) = threads;
        if self.locs.is_empty() && self.header.nbytes == 0 && chunksize >= -1 {
            self.header.chunksize = chunksize;
        }
    }

    /// Variable chunk sizes: special offsets can no longer be sized, so they are replaced by
    /// stored regular chunks with the same contents ([`offsets::regular_equivalent`]).
    fn switch_to_variable(&mut self, undo: &mut Undo) -> Result<()> {
        undo.keep_old_locs(&self.locs);
        for i in 0..self.locs.len() {
            if let Loc::Special(kind) = self.locs[i].get() {
                let nbytes = self.special_nbytes(i as i64)?;
                let c = offsets::regular_equivalent(kind, self.header.typesize, nbytes)?;
                let loc = self.store_payload(&c, undo)?;
                self.locs[i] = loc;
            }
        }
        self.header.chunksize = 0;
        Ok(())
    }

    /// Writes a payload at the end of the data section (cframe) or into a new chunk file
    /// (sframe), and counts it in `cbytes`.
    fn store_payload(&mut self, chunk: &[u8], undo: &mut Undo) -> Result<ChunkLoc> {
        let len = chunk.len() as i64;
        let loc = match &mut self.backing {
            Backing::Contiguous(store) => {
                let at = self.header.cbytes as u64;
                undo.write_at(store, u64::from(self.header.header_len) + at, chunk)?;
                self.fp.appended_data(chunk);
                ChunkLoc::Stored(at)
            }
            Backing::Sparse(dir) => {
                let id = self
                    .locs
                    .iter()
                    .filter_map(|l| l.stored().map(|v| v + 1))
                    .max()
                    .unwrap_or(0);
                undo.write_chunk(dir, id, chunk)?;
                self.fp.wrote_chunk_file(id, chunk);
                ChunkLoc::Stored(id)
            }
        };
        self.header.cbytes = self
            .header
            .cbytes
            .checked_add(len)
            .ok_or(Error::TwoGbLimit)?;
        Ok(loc)
    }

    /// Places an incoming chunk: a special offset when the chunksize is fixed, else a payload
    /// (a regular equivalent for ZERO/NaN/UNINIT chunks).
    fn place(&mut self, chunk: &[u8], info: &ChunkInfo, undo: &mut Undo) -> Result<ChunkLoc> {
        match SpecialKind::from_special_id(info.special) {
            Some(kind) if self.header.chunksize != 0 => Ok(ChunkLoc::Special(kind)),
            Some(kind) => {
                let c = offsets::regular_equivalent(kind, self.header.typesize, info.nbytes)?;
                self.store_payload(&c, undo)
            }
            None => self.store_payload(chunk, undo),
        }
    }

    /// Appends a chunk (a complete Blosc2 chunk, at least `cbytes` long).
    pub fn append_chunk(&mut self, chunk: &[u8]) -> Result<i64> {
        let n = self.locs.len();
        self.insert_chunk(n as i64, chunk)
    }

    /// Fills an empty frame with `nchunks` special chunks of `kind` holding `nbytes` in all, as
    /// c-blosc2's `fill_special` writes it: chunksize `chunksize` (the last chunk may be
    /// shorter, or the only one), blocksize `blocksize`, no payload, and the index as one
    /// 40-byte SPECIAL_VALUE chunk, in one transaction. One commit per chunk took 24 s for
    /// 65,536 chunks (each re-encodes the whole index); this writes a million in milliseconds.
    /// Returns nchunks.
    pub fn fill_special(
        &mut self,
        kind: SpecialKind,
        nchunks: i64,
        nbytes: i64,
        chunksize: i32,
        blocksize: i32,
    ) -> Result<i64> {
        if !self.locs.is_empty() || self.header.nbytes != 0 || self.header.cbytes != 0 {
            return Err(Error::FrameSpecial);
        }
        let n = usize::try_from(nchunks)
            .ok()
            .filter(|&n| (1..=MAX_NCHUNKS as usize).contains(&n))
            .ok_or(Error::InvalidParam)?;
        let cs = i64::from(chunksize);
        if chunksize <= 0 || blocksize < 0 || nbytes <= (nchunks - 1) * cs || nbytes > nchunks * cs
        {
            return Err(Error::InvalidParam);
        }
        self.transaction_with(Index::Repeated, |f, _| {
            f.locs = vec![ChunkLoc::Special(kind); n];
            f.header.chunksize = chunksize;
            f.header.blocksize = blocksize;
            f.header.nbytes = nbytes;
            f.header.vl_blocks = false;
            Ok(n as i64)
        })
    }

    /// Inserts a chunk before position `i` (`i == nchunks` appends). Returns the new nchunks.
    pub fn insert_chunk(&mut self, i: i64, chunk: &[u8]) -> Result<i64> {
        let i = usize::try_from(i)
            .ok()
            .filter(|&i| i <= self.locs.len())
            .ok_or(Error::InvalidIndex)?;
        if self.locs.len() as i64 >= MAX_NCHUNKS {
            return Err(Error::ChunkInsert);
        }
        let info = self.check_incoming(chunk)?;
        let chunk = &chunk[..info.cbytes as usize];
        let edit = if i == self.locs.len() {
            Edit::Append
        } else {
            Edit::Any
        };
        self.transaction_full(false, Index::Encode(0), edit, |f, undo| {
            if f.locs.is_empty() {
                f.header.vl_blocks = info.vl_blocks;
            }
            f.account(Op::Insert(i), i64::from(info.nbytes), undo)?;
            let loc = f.place(chunk, &info, undo)?;
            f.locs.insert(i, loc);
            f.header.nbytes = f
                .header
                .nbytes
                .checked_add(i64::from(info.nbytes))
                .ok_or(Error::TwoGbLimit)?;
            Ok(f.locs.len() as i64)
        })
    }

    /// Replaces chunk `i`. cframes compact in place: the tail of the data section moves by the
    /// size difference (docs/mutation.md#update). Returns nchunks.
    pub fn update_chunk(&mut self, i: i64, chunk: &[u8]) -> Result<i64> {
        let old_loc = self.loc(i)?;
        let i = i as usize;
        let info = self.check_incoming(chunk)?;
        let chunk = &chunk[..info.cbytes as usize];
        let old_nbytes = self.nbytes_at(i)?;
        // Read before the transaction writes anything (a file frame's writes are staged).
        let old_cbytes = match old_loc.get() {
            Loc::Stored(_) => i64::from(self.chunk_info(i as i64)?.cbytes),
            Loc::Special(_) => 0,
        };
        self.transaction(|f, undo| {
            let variable = f.needs_variable(Op::Update(i), i64::from(info.nbytes))?;
            let new_special = match SpecialKind::from_special_id(info.special) {
                Some(k) if !variable && f.header.chunksize != 0 => Some(k),
                _ => None,
            };
            // In variable mode a special chunk is stored as its regular equivalent.
            let owned;
            let chunk: &[u8] = match SpecialKind::from_special_id(info.special) {
                Some(k) if new_special.is_none() => {
                    owned = offsets::regular_equivalent(k, f.header.typesize, info.nbytes)?;
                    &owned
                }
                _ => chunk,
            };
            match old_loc.get() {
                Loc::Special(_) => {
                    f.locs[i] = match new_special {
                        Some(k) => ChunkLoc::Special(k),
                        None => f.store_payload(chunk, undo)?,
                    };
                }
                Loc::Stored(at) => {
                    let new_payload: &[u8] = if new_special.is_some() { &[] } else { chunk };
                    f.replace_payload(at, old_cbytes, new_payload, undo)?;
                    if let Some(k) = new_special {
                        f.locs[i] = ChunkLoc::Special(k);
                    }
                }
            }
            // After the payload moves: the other special chunks become stored ones at the
            // new end of the data section (chunk `i` is stored already).
            if variable {
                f.switch_to_variable(undo)?;
            }
            f.header.nbytes = f
                .header
                .nbytes
                .checked_add(i64::from(info.nbytes) - old_nbytes)
                .ok_or(Error::TwoGbLimit)?;
            Ok(f.locs.len() as i64)
        })
    }

    /// Replaces the payload of stored chunk `i` (at `at`, `old_cbytes` long) by `new`
    /// (empty = remove; an sframe's chunk file goes once the commit succeeded).
    fn replace_payload(
        &mut self,
        at: u64,
        old_cbytes: i64,
        new: &[u8],
        undo: &mut Undo,
    ) -> Result<()> {
        let delta = new.len() as i64 - old_cbytes;
        let old_end = at + old_cbytes as u64;
        // A file frame's writes are staged: the data after the chunk, which moves by `delta`,
        // is read once, for the data part and for the staged write (when no write is staged
        // yet, none can lie in it).
        let tail_bytes = match &self.backing {
            Backing::Contiguous(store)
                if delta != 0 && undo.staged.as_ref().is_some_and(|w| w.is_empty()) =>
            {
                let tail = (self.header.cbytes as u64)
                    .checked_sub(old_end)
                    .ok_or(Error::Data)?;
                Some(store.read_at(u64::from(self.header.header_len) + old_end, tail)?)
            }
            _ => None,
        };
        // Read before the writes: the chunk and what follows it, for the data part.
        let split = match self.backing {
            Backing::Contiguous(_) => self.split_data_at_known(
                at,
                undo.staged.as_ref().is_some_and(|w| !w.is_empty()),
                tail_bytes.as_deref().map(|b| (old_end, b)),
            ),
            Backing::Sparse(_) => None,
        };
        match &mut self.backing {
            Backing::Contiguous(store) => {
                let hl = u64::from(self.header.header_len);
                let tail = (self.header.cbytes as u64)
                    .checked_sub(old_end)
                    .ok_or(Error::Data)?;
                let new_end = at + new.len() as u64;
                match tail_bytes {
                    Some(bytes) => undo.stage_read(hl + new_end, bytes)?,
                    None => undo.move_within(store, hl + old_end, hl + new_end, tail)?,
                }
                undo.write_at(store, hl + at, new)?;
                // The data part with the new chunk in the old one's place, by CRC arithmetic.
                let updated = split.map(|(p, s)| {
                    let mut p = p;
                    p.extend(new);
                    p.then(s)
                });
                self.set_data_piece(updated);
                for l in self.locs.iter_mut() {
                    if let Loc::Stored(v) = l.get() {
                        if v >= old_end {
                            *l = ChunkLoc::Stored((v as i64 + delta) as u64);
                        }
                    }
                }
            }
            Backing::Sparse(dir) => {
                // Never rewritten in place: the new content gets a new chunk file (a crash
                // then leaves the committed index's files intact), the old one goes once the
                // commit succeeded.
                undo.remove_chunk_later(at);
                if !new.is_empty() {
                    let id = self
                        .locs
                        .iter()
                        .filter_map(|l| l.stored().map(|v| v + 1))
                        .max()
                        .unwrap_or(0);
                    undo.write_chunk(dir, id, new)?;
                    self.fp.wrote_chunk_file(id, new);
                    for l in self.locs.iter_mut() {
                        if *l == ChunkLoc::Stored(at) {
                            *l = ChunkLoc::Stored(id);
                        }
                    }
                    undo.moved_ids.push((id, at));
                }
            }
        }
        self.header.cbytes += delta;
        Ok(())
    }

    /// Deletes chunk `i`. cframes keep the payload as dead space (cbytes unchanged, as
    /// c-blosc2 does); sframes remove the chunk file. Returns nchunks.
    pub fn delete_chunk(&mut self, i: i64) -> Result<i64> {
        let loc = self.loc(i)?;
        let i = i as usize;
        let nbytes = self.nbytes_at(i)?;
        let sparse_cbytes = match (&self.backing, loc.get()) {
            (Backing::Sparse(_), Loc::Stored(_)) => i64::from(self.chunk_info(i as i64)?.cbytes),
            _ => 0,
        };
        // c-blosc2 compresses the shortened index into a buffer sized for the old one.
        self.transaction_with(Index::Encode(8), |f, undo| {
            if let (Backing::Contiguous(_), Loc::Stored(at)) = (&f.backing, loc.get()) {
                // The payload turns into dead bytes: the data part without it, by CRC
                // arithmetic (or a pass at the commit).
                let staged = undo.staged.as_ref().is_some_and(|w| !w.is_empty());
                let rest = f.split_data_at(at, staged).map(|(p, s)| p.then(s));
                f.set_data_piece(rest);
            }
            f.locs.remove(i);
            f.header.nbytes -= nbytes;
            f.header.cbytes -= sparse_cbytes;
            if let (Backing::Sparse(_), Loc::Stored(id)) = (&f.backing, loc.get()) {
                undo.remove_chunk_later(id);
            }
            Ok(f.locs.len() as i64)
        })
    }

    /// Reorders chunks: new position `k` holds old chunk `order[k]` (a permutation).
    pub fn reorder(&mut self, order: &[i64]) -> Result<()> {
        let n = self.locs.len();
        if order.len() != n {
            return Err(Error::InvalidParam);
        }
        let mut seen = vec![false; n];
        for &o in order {
            let o = usize::try_from(o)
                .ok()
                .filter(|&o| o < n)
                .ok_or(Error::InvalidParam)?;
            if std::mem::replace(&mut seen[o], true) {
                return Err(Error::InvalidParam);
            }
        }
        self.transaction(|f, undo| {
            let cs = i64::from(f.header.chunksize);
            let short_last = cs > 0 && f.header.nbytes % cs != 0;
            if short_last && order[n - 1] as usize != n - 1 {
                f.switch_to_variable(undo)?;
            }
            let old = f.locs.clone();
            f.locs = order.iter().map(|&o| old[o as usize]).collect();
            Ok(())
        })
    }

    /// Adds a fixed-size metalayer; only possible while the frame holds no data.
    pub fn add_metalayer(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        meta::check_name(name)?;
        if meta::find(&self.header.metalayers, name).is_some()
            || self.header.metalayers.len() >= MAX_METALAYERS
            || self.header.cbytes != 0
            || !self.locs.is_empty()
        {
            return Err(Error::InvalidParam);
        }
        self.transaction_full(true, Index::Encode(0), Edit::Any, |f, _| {
            f.header
                .metalayers
                .push((name.to_string(), content.to_vec()));
            Ok(f.header.metalayers.len() - 1)
        })
    }

    /// Updates a metalayer. On an empty frame any size is accepted; once the frame holds data
    /// the header cannot change size, so the content must not be longer than the stored one
    /// and only its first bytes are overwritten (c-blosc2's rule; it silently ignores longer
    /// contents, which is reported here as `InvalidParam`).
    pub fn update_metalayer(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        let idx = meta::find(&self.header.metalayers, name).ok_or(Error::MetalayerNotFound)?;
        let empty = self.header.cbytes == 0 && self.locs.is_empty();
        self.transaction_full(empty, Index::Keep, Edit::Any, |f, _| {
            let stored = &mut f.header.metalayers[idx].1;
            if empty {
                *stored = content.to_vec();
            } else if content.len() <= stored.len() {
                stored[..content.len()].copy_from_slice(content);
            } else {
                return Err(Error::InvalidParam);
            }
            Ok(idx)
        })
    }

    /// Adds a vlmetalayer whose content is already compressed (see [`meta::encode_vlmeta`]).
    pub fn add_vlmetalayer_raw(&mut self, name: &str, stored: &[u8]) -> Result<usize> {
        meta::check_name(name)?;
        if meta::find(&self.vlmeta, name).is_some() {
            return Err(Error::InvalidParam);
        }
        if self.vlmeta.len() >= MAX_VLMETALAYERS_WRITE {
            return Err(Error::Failure);
        }
        self.transaction_with(Index::Keep, |f, _| {
            f.vlmeta.push((name.to_string(), stored.to_vec()));
            Ok(f.vlmeta.len() - 1)
        })
    }

    /// Replaces the compressed content of an existing vlmetalayer.
    pub fn update_vlmetalayer_raw(&mut self, name: &str, stored: &[u8]) -> Result<usize> {
        let idx = meta::find(&self.vlmeta, name).ok_or(Error::MetalayerNotFound)?;
        self.transaction_with(Index::Keep, |f, _| {
            f.vlmeta[idx].1 = stored.to_vec();
            Ok(idx)
        })
    }

    /// Deletes a vlmetalayer; returns how many remain.
    pub fn delete_vlmetalayer(&mut self, name: &str) -> Result<usize> {
        let idx = meta::find(&self.vlmeta, name).ok_or(Error::MetalayerNotFound)?;
        self.transaction_with(Index::Keep, |f, _| {
            f.vlmeta.remove(idx);
            Ok(f.vlmeta.len())
        })
    }

    /// A fresh in-memory cframe with the same parameters, metalayers, vlmetalayers and chunks
    /// (in logical order, no dead space). Deterministic.
    pub fn compacted(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write_compacted(&mut out)?;
        Ok(out)
    }

    /// Writes [`Frame::compacted`] to `out`, chunk by chunk (one chunk in memory at a time
    /// for a frame on disk); returns its length. Header, offsets index and trailer are
    /// planned and checked before anything is written.
    pub fn write_compacted(&self, out: &mut dyn std::io::Write) -> Result<u64> {
        let h = &self.header;
        let cparams = CParams {
            compcode: h.compcode,
            compcode_meta: h.compcode_meta,
            clevel: h.clevel,
            use_dict: h.use_dict,
            typesize: h.typesize,
            nthreads: h.nthreads_comp,
            blocksize: h.blocksize,
            splitmode: i32::from(h.splitmode),
            filters: h.filters,
            filters_meta: h.filters_meta,
        };
        let dparams = DParams {
            nthreads: h.nthreads_decomp,
        };
        let mut header = super::new_header(FrameType::Contiguous, &cparams, &dparams);
        header.user_type = h.user_type;
        header.metalayers = h.metalayers.clone();
        header.chunksize = h.chunksize;
        let infos = (0..self.nchunks())
            .map(|i| self.chunk_info(i))
            .collect::<Result<Vec<_>>>()?;
        let plan = crate::schunk::build::CframePlan::from_header(header, &infos, &self.vlmeta)?;
        plan.emit(out, |i, buf| self.fetch(i as i64, buf))?;
        Ok(plan.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::special;

    /// Typesize-4 cparams and a ZERO special chunk of `nbytes` made with them.
    fn zeros_chunk(nbytes: i32) -> (CParams, Vec<u8>) {
        let cp = CParams {
            typesize: 4,
            ..CParams::default()
        };
        let mut buf = [0u8; 64];
        let n = special::zeros(&cp, nbytes, &mut buf).unwrap();
        (cp, buf[..n].to_vec())
    }

    /// `fill_special` writes what c-blosc2 writes (the bytes are compared with the reference in
    /// tests/schunk/reference.rs): chunks that read back as the special kind with the right sizes,
    /// and the index as one 40-byte SPECIAL_VALUE chunk whatever the chunk count.
    #[test]
    fn fill_special_reads_back_with_a_40_byte_index() {
        let (cp, _) = zeros_chunk(4000);
        for (n, nbytes) in [
            (1i64, 4000i64),
            (1, 1200),
            (3, 9200),
            (1_000_000, 4_000_000_000),
        ] {
            let mut f = Frame::new_memory(&cp, &DParams::default()).unwrap();
            assert_eq!(
                f.fill_special(SpecialKind::Nan, n, nbytes, 4000, 4000),
                Ok(n)
            );
            assert_eq!(f.nchunks(), n);
            let cframe = f.to_cframe().unwrap();
            let h = &f.header;
            let index_at = (u64::from(h.header_len) + h.cbytes as u64) as usize;
            assert_eq!(cframe[index_at + 12..index_at + 16], 40i32.to_le_bytes());
            assert_eq!(
                cframe[index_at + 31] >> 4,
                super::super::chunkinfo::special::VALUE
            );
            let again = Frame::from_vec(cframe).unwrap();
            let last = n - 1;
            let want_last = nbytes - 4000 * last;
            let chunk = again.chunk(last).unwrap();
            let info = ChunkInfo::parse(&chunk).unwrap();
            assert_eq!(
                (info.nbytes as i64, info.special),
                (want_last, super::super::chunkinfo::special::NAN)
            );
            // The frame's blocksize, at most the chunk's nbytes.
            let bs = i64::from(i32::from_le_bytes(chunk[8..12].try_into().unwrap()));
            assert_eq!(bs, want_last.min(4000));
        }
    }

    /// A refused `fill_special` leaves the frame as it was.
    #[test]
    fn refused_fill_special_changes_nothing() {
        let (cp, zeros) = zeros_chunk(4000);
        let mut f = Frame::new_memory(&cp, &DParams::default()).unwrap();
        let empty = f.to_cframe().unwrap();
        let z = SpecialKind::Zeros;
        // A count past the chunk limit or under 1, nbytes that n chunks cannot hold.
        for (n, nbytes) in [
            (MAX_NCHUNKS + 1, 4000),
            (0, 0),
            (-2, 4000),
            (2, 4000),
            (2, 8001),
        ] {
            assert_eq!(
                f.fill_special(z, n, nbytes, 4000, 4000),
                Err(Error::InvalidParam)
            );
            assert_eq!(f.to_cframe().unwrap(), empty);
        }
        f.append_chunk(&zeros).unwrap();
        let before = f.to_cframe().unwrap();
        assert_eq!(
            f.fill_special(z, 2, 8000, 4000, 4000),
            Err(Error::FrameSpecial)
        );
        assert_eq!(f.nchunks(), 1);
        assert_eq!(f.to_cframe().unwrap(), before);
    }

    /// An append transaction keeps only the count of the old offsets; one that edits old
    /// entries (the switch to variable chunk sizes) and then fails still restores them, and an
    /// append that fails after adding entries drops them.
    #[test]
    fn failed_append_transactions_restore_the_offsets() {
        let (cp, zeros) = zeros_chunk(4000);
        let mut f = Frame::new_memory(&cp, &DParams::default()).unwrap();
        for _ in 0..3 {
            f.append_chunk(&zeros).unwrap();
        }
        let locs = f.locs.clone();
        let bytes = f.to_cframe().unwrap();
        assert!(locs.iter().all(|l| !l.is_stored()));
        let r: Result<()> = f.transaction_full(false, Index::Encode(0), Edit::Append, |f, u| {
            f.switch_to_variable(u)?;
            assert!(f.locs.iter().all(|l| l.is_stored()));
            f.locs.push(ChunkLoc::Stored(0));
            Err(Error::Failure)
        });
        assert_eq!(r, Err(Error::Failure));
        assert_eq!(
            (f.locs.clone(), f.to_cframe().unwrap()),
            (locs.clone(), bytes.clone())
        );
        let r: Result<()> = f.transaction_full(false, Index::Encode(0), Edit::Append, |f, _| {
            f.locs.push(ChunkLoc::Stored(0));
            Err(Error::Failure)
        });
        assert_eq!(r, Err(Error::Failure));
        assert_eq!((f.locs.clone(), f.to_cframe().unwrap()), (locs, bytes));
    }
}
