//! The transaction every mutation runs in ([`Frame::transaction_full`]: roll back memory and
//! storage on failure) and the commit that ends it: the rewrite of the offsets index, the
//! trailer and the header after the data section.

#![forbid(unsafe_code)]

use super::*;

impl Frame {
    /// Rewrites index, trailer and header after the data section and truncates there.
    /// The header length may only change when `may_resize` (empty frames).
    /// Like every mutation, a transaction: on failure memory and storage are as before.
    pub(in crate::frame) fn commit(&mut self, may_resize: bool) -> Result<()> {
        self.transaction_full(may_resize, Index::Encode(0), Edit::Any, |_, _| Ok(()))
    }

    /// The stored index chunk as it is now (before this commit writes anything).
    pub(super) fn current_index_chunk(&self) -> Result<Vec<u8>> {
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
    pub(super) fn commit_with(
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
        let limit = crate::frame::cframe::max_stored;
        let checked = match (old_locs.same_prefix(), limit(&old.0), limit(&header)) {
            (Some(n), Some(was), Some(now))
                if now >= was && old.0.frame_type == header.frame_type =>
            {
                n.min(self.locs.len())
            }
            _ => 0,
        };
        crate::frame::cframe::validate_locs_from(self.locs.view(), checked, &header)?;
        // The kept index blocks describe `old.1`; they come back only when the commit
        // succeeds with the entries they were last updated for.
        let mut blocks = std::mem::take(&mut self.carry.blocks);
        let mut index_piece = None;
        let mut index = match index_mode {
            _ if self.locs.is_empty() => Vec::new(),
            Index::Keep => self.current_index_chunk()?,
            Index::Encode(room) => {
                let (c, piece) = blocks.encode_with_piece(
                    old_locs.get(&self.locs),
                    self.locs.view(),
                    old_locs.same_prefix(),
                    room,
                    std::mem::take(&mut self.carry.index),
                )?;
                index_piece = piece;
                c
            }
            Index::Repeated => offsets::encode_repeated_index(
                self.locs.get(0).ok_or(Error::Failure)?,
                self.locs.len(),
            )?,
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
            let data = self.data_piece_for_commit(&header, hl, staged, old_locs.same_prefix())?;
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
                    let mut locs = self.locs.clone();
                    locs.map_stored(|v| v - shift);
                    let index = match index_mode {
                        Index::Encode(room) => offsets::encode_index_with_room(&locs, room)?,
                        Index::Repeated => offsets::encode_repeated_index(
                            locs.get(0).ok_or(Error::Failure)?,
                            locs.len(),
                        )?,
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
                        locs: committed.1.view(),
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
                // Copied into the frame: the next index is assembled in its buffer.
                self.carry.index = std::mem::take(&mut index);
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
                            locs.map_stored(|v| if v == new_id { old_id } else { v });
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
            self.carry.blocks = blocks;
        }
        Ok(())
    }

    /// Runs a mutation and commits it; if anything fails, restores the in-memory state and
    /// rolls the storage back (see [`Frame::transaction_full`]).
    pub(super) fn transaction<T>(
        &mut self,
        f: impl FnOnce(&mut Frame, &mut Undo) -> Result<T>,
    ) -> Result<T> {
        self.transaction_full(false, Index::Encode(0), Edit::Any, f)
    }

    pub(super) fn transaction_with<T>(
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
    pub(super) fn transaction_full<T>(
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
        let mut undo = Undo::new(&self.backing)?.with_buffers(self.carry.take_buffers());
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
        let sparse = matches!(self.backing, Backing::Sparse(_));
        match r {
            Ok(_) => {
                self.carry
                    .after_transaction(&self.locs, undo.old_locs.same_prefix(), sparse);
                self.carry.keep_buffers(undo.recycle());
                undo.finish(&self.backing)
            }
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
                self.carry.keep_buffers(undo.recycle());
                (self.header, self.vlmeta) = saved;
                let unchanged = old_locs.same_prefix();
                old_locs.restore(&mut self.locs);
                self.carry.after_transaction(&self.locs, unchanged, sparse);
                self.fp.reset();
            }
        }
        r
    }

    /// The first chunk of a frame without chunks: its trailer follows the header (where both
    /// libraries look for it while `nbytes` is 0), so the new payloads, written at the start of
    /// the data section, would overwrite it. They move past it instead; the old trailer stays
    /// as dead bytes at the start of the data section (docs/durability.md).
    pub(super) fn shift_past_empty_trailer(
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
        let cb = oh.cbytes as u64;
        self.locs
            .map_stored(|v| if v >= cb { v + shift } else { v });
        self.header.cbytes += shift as i64;
        shift
    }
}
