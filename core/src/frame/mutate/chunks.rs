//! Mutations of the chunk list: append, insert, update, delete, reorder and `fill_special`,
//! with the chunksize bookkeeping (a fixed chunksize turns variable when chunk sizes differ)
//! and the placement of payloads in the data section or in chunk files.

#![forbid(unsafe_code)]

use super::*;
use std::borrow::Cow;

impl Frame {
    pub(super) fn nbytes_at(&self, i: usize) -> Result<i64> {
        Ok(i64::from(self.chunk_info(i as i64)?.nbytes))
    }

    /// Checks a chunk before it enters the frame and returns its header fields.
    pub(super) fn check_incoming(&self, chunk: &[u8]) -> Result<ChunkInfo> {
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
    pub(super) fn account(&mut self, op: Op, nbytes: i64, undo: &mut Undo) -> Result<()> {
        if self.needs_variable(op, nbytes)? {
            self.switch_to_variable(undo)?;
        }
        Ok(())
    }

    /// [`Frame::account`] without the switch: whether the frame must turn variable.
    pub(super) fn needs_variable(&mut self, op: Op, nbytes: i64) -> Result<bool> {
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
    pub(super) fn switch_to_variable(&mut self, undo: &mut Undo) -> Result<()> {
        undo.keep_old_locs(&self.locs);
        for i in 0..self.locs.len() {
            if let Loc::Special(kind) = self.locs.at(i).get() {
                let nbytes = self.special_nbytes(i as i64)?;
                let c = offsets::regular_equivalent(kind, self.header.typesize, nbytes)?;
                let loc = self.store_payload(&c, undo)?;
                self.locs.set(i, loc);
            }
        }
        self.header.chunksize = 0;
        Ok(())
    }

    /// Writes a payload at the end of the data section (cframe) or into a new chunk file
    /// (sframe), and counts it in `cbytes`.
    pub(super) fn store_payload(&mut self, chunk: &[u8], undo: &mut Undo) -> Result<ChunkLoc> {
        let len = chunk.len() as i64;
        let loc = match &mut self.backing {
            Backing::Contiguous(store) => {
                let at = self.header.cbytes as u64;
                let pos = u64::from(self.header.header_len) + at;
                // The data part grows by the chunk, hashed as it is copied.
                match self.fp.appended_data() {
                    Some(p) => {
                        let crc = undo.write_at_crc(store, pos, chunk, p.crc)?;
                        *p = Piece {
                            crc,
                            len: p.len + chunk.len() as u64,
                        };
                    }
                    None => undo.write_at(store, pos, chunk)?,
                }
                ChunkLoc::Stored(at)
            }
            Backing::Sparse(dir) => {
                // One past the largest id named (an append scans only the new entries).
                let unchanged = undo.old_locs.same_prefix();
                let id = self.carry.next_file_id(&self.locs, unchanged);
                // With the old entries unchanged, `id` is past every id the committed index
                // names: no previous file to keep.
                undo.write_chunk(dir, id, chunk, unchanged.is_some())?;
                // Past every id the entries at the transaction's start named when they are
                // known unchanged: not a chunk file the fingerprint covers.
                self.fp.wrote_chunk_file(id, chunk, unchanged.is_some());
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
    pub(super) fn place(
        &mut self,
        chunk: &[u8],
        info: &ChunkInfo,
        undo: &mut Undo,
    ) -> Result<ChunkLoc> {
        let ts = self.header.typesize;
        match SpecialKind::from_special_id(info.special) {
            Some(kind)
                if self.header.chunksize != 0
                    && offsets::keeps_as_entry(kind, ts, info.typesize) =>
            {
                Ok(ChunkLoc::Special(kind))
            }
            Some(kind) => {
                let ts = offsets::equivalent_typesize(kind, ts, info.typesize);
                let c = offsets::regular_equivalent(kind, ts, info.nbytes)?;
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
            f.locs = Locs::repeated(ChunkLoc::Special(kind), n);
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
            f.insert_in(i, chunk, &info, undo)?;
            Ok(f.locs.len() as i64)
        })
    }

    /// Inside a transaction: stores checked `chunk` (`info`) as the new chunk `i` and
    /// accounts for it (shared by [`Frame::insert_chunk`] and [`Frame::append_chunks`]).
    fn insert_in(
        &mut self,
        i: usize,
        chunk: &[u8],
        info: &ChunkInfo,
        undo: &mut Undo,
    ) -> Result<()> {
        if self.locs.is_empty() {
            self.header.vl_blocks = info.vl_blocks;
        }
        self.account(Op::Insert(i), i64::from(info.nbytes), undo)?;
        let loc = self.place(chunk, info, undo)?;
        self.locs.insert(i, loc);
        self.header.nbytes = self
            .header
            .nbytes
            .checked_add(i64::from(info.nbytes))
            .ok_or(Error::TwoGbLimit)?;
        Ok(())
    }

    /// Appends the `n` chunks `next(k)` gives (`k` in `0..n`, in order) in one transaction: the
    /// index, trailer and header are committed once at the end instead of after every chunk
    /// (for a new sframe being filled, one index file write instead of `n`). The frame ends as
    /// `n` calls of [`Frame::append_chunk`] leave it; a failure (of `next` too) leaves it as it
    /// was. Returns nchunks.
    pub fn append_chunks<'c>(
        &mut self,
        n: i64,
        mut next: impl FnMut(i64) -> Result<Cow<'c, [u8]>>,
    ) -> Result<i64> {
        if n <= 0 {
            return Ok(self.nchunks());
        }
        self.transaction_full(false, Index::Encode(0), Edit::Append, |f, undo| {
            for k in 0..n {
                if f.locs.len() as i64 >= MAX_NCHUNKS {
                    return Err(Error::ChunkInsert);
                }
                let chunk = next(k)?;
                let info = f.check_incoming(&chunk)?;
                let i = f.locs.len();
                f.insert_in(i, &chunk[..info.cbytes as usize], &info, undo)?;
            }
            Ok(f.locs.len() as i64)
        })
    }

    /// Replaces chunk `i` as c-blosc2 does: the new payload takes the old one's place and the
    /// rest of the data section moves by the size difference (a special chunk that becomes
    /// stored is appended), so the frame holds the bytes c-blosc2 writes for the same calls and
    /// is never larger (docs/mutation.md#update). Returns nchunks.
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
            let ts = f.header.typesize;
            let new_special = match SpecialKind::from_special_id(info.special) {
                Some(k)
                    if !variable
                        && f.header.chunksize != 0
                        && offsets::keeps_as_entry(k, ts, info.typesize) =>
                {
                    Some(k)
                }
                _ => None,
            };
            // In variable mode (or retyped) a special chunk is stored as its regular equivalent.
            let owned;
            let chunk: &[u8] = match SpecialKind::from_special_id(info.special) {
                Some(k) if new_special.is_none() => {
                    let ts = offsets::equivalent_typesize(k, ts, info.typesize);
                    owned = offsets::regular_equivalent(k, ts, info.nbytes)?;
                    &owned
                }
                _ => chunk,
            };
            match old_loc.get() {
                Loc::Special(_) => {
                    let loc = match new_special {
                        Some(k) => ChunkLoc::Special(k),
                        None => f.store_payload(chunk, undo)?,
                    };
                    f.locs.set(i, loc);
                }
                Loc::Stored(at) => {
                    let new_payload: &[u8] = if new_special.is_some() { &[] } else { chunk };
                    f.replace_payload(at, old_cbytes, new_payload, undo)?;
                    if let Some(k) = new_special {
                        f.locs.set(i, ChunkLoc::Special(k));
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
    pub(super) fn replace_payload(
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
                self.locs.map_stored(|v| {
                    if v >= old_end {
                        (v as i64 + delta) as u64
                    } else {
                        v
                    }
                });
            }
            Backing::Sparse(dir) => {
                // Never rewritten in place: the new content gets a new chunk file (a crash
                // then leaves the committed index's files intact), the old one goes once the
                // commit succeeded.
                undo.remove_chunk_later(at);
                if !new.is_empty() {
                    let id = self.locs.stored().map(|v| v + 1).max().unwrap_or(0);
                    undo.write_chunk(dir, id, new, false)?;
                    self.fp.wrote_chunk_file(id, new, false);
                    self.locs.map_stored(|v| if v == at { id } else { v });
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
            let old = std::mem::take(&mut f.locs);
            f.locs = order.iter().map(|&o| old.at(o as usize)).collect();
            Ok(())
        })
    }
}
