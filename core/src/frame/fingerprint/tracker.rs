//! The fingerprint of an open [`Frame`]: the [`Tracker`] of its data part, which spares a
//! writer re-reading what it wrote, and the frame methods that compute, seal and verify the
//! slot from the frame's store.

#![forbid(unsafe_code)]

use super::*;

/// What an open frame knows about its data part, so that a commit can fingerprint it without
/// re-reading it (see the docs of the `fingerprint` module).
#[derive(Clone, Debug, Default)]
pub struct Tracker {
    /// cframe: the data section's piece; sframe: the piece of the stored chunks `ids` names.
    data: Option<Piece>,
    /// sframes only (boxed: a frame stays small).
    sparse: Box<SparseTrack>,
}

/// What an sframe's tracker knows about its chunk files.
#[derive(Clone, Debug, Default)]
pub(super) struct SparseTrack {
    /// The chunk ids `Tracker::data` covers, in index order.
    ids: Vec<u64>,
    /// The piece of each chunk file written or read since open, by id.
    chunks: HashMap<u64, Piece>,
}

impl Tracker {
    /// A new frame's tracker: an empty data part (unknown while fingerprints are off, so that
    /// appends hash nothing; see `Frame::prime_fingerprint`).
    pub fn empty() -> Tracker {
        Tracker {
            data: writes_enabled().then_some(Piece::EMPTY),
            ..Tracker::default()
        }
    }

    /// Forgets everything (after a failed mutation or a reload).
    pub fn reset(&mut self) {
        *self = Tracker::default();
    }

    /// The data part to extend with a cframe payload about to be written at the end of the
    /// data section (past every covered byte), when it is known.
    pub(in crate::frame) fn appended_data(&mut self) -> Option<&mut Piece> {
        self.data.as_mut()
    }

    /// The data part as known now (`None`: unknown).
    pub(in crate::frame) fn data(&self) -> Option<Piece> {
        self.data
    }

    /// sframe chunk file `id` now holds `chunk`. `fresh`: the caller knows `id` is none of
    /// the chunk files the data part covers (an append's new file; not searched for).
    pub(in crate::frame) fn wrote_chunk_file(&mut self, id: u64, chunk: &[u8], fresh: bool) {
        // Not hashed while fingerprints are off (a commit with them on reads it if needed).
        if writes_enabled() {
            self.sparse.chunks.insert(id, Piece::of(chunk));
        } else {
            self.sparse.chunks.remove(&id);
        }
        if !fresh && self.sparse.ids.contains(&id) {
            self.data = None;
        }
    }
}

impl Tracker {
    /// sframe chunk files moved from `new id` back to `old id` (same bytes); `locs` are the
    /// offsets that now name them.
    pub(in crate::frame) fn moved_chunk_files(&mut self, moved: &[(u64, u64)], locs: &Locs) {
        for &(new_id, old_id) in moved {
            match self.sparse.chunks.remove(&new_id) {
                Some(p) => {
                    self.sparse.chunks.insert(old_id, p);
                }
                None => {
                    self.sparse.chunks.remove(&old_id);
                }
            }
        }
        self.sparse.ids = stored_ids(locs);
    }
}

/// The ids of the stored chunks, in index order.
pub(super) fn stored_ids(locs: &Locs) -> Vec<u64> {
    locs.stored().collect()
}

/// The piece of `len` bytes of `store` from `pos`, read in blocks (lent when in memory).
pub(super) fn piece_of_range(store: &Store, pos: u64, len: u64) -> Result<Piece> {
    if let Some(s) = store.slice(pos, len) {
        return Ok(Piece::of(s));
    }
    let mut p = Piece::EMPTY;
    let mut buf = vec![0u8; (len.min(PASS_BLOCK as u64)) as usize];
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(PASS_BLOCK as u64) as usize;
        store.read_into(pos + done, &mut buf[..n])?;
        p.extend(&buf[..n]);
        done += n as u64;
    }
    Ok(p)
}

/// A store borrowed from the frame or opened for the occasion (an sframe's index file).
pub(super) enum Held<'a> {
    Lent(&'a Store),
    Own(Store),
}

impl std::ops::Deref for Held<'_> {
    type Target = Store;
    fn deref(&self) -> &Store {
        match self {
            Held::Lent(s) => s,
            Held::Own(s) => s,
        }
    }
}

/// Where the parts of a stored frame lie, read from its storage.
pub(super) struct Layout {
    header_len: u64,
    index_pos: u64,
    /// The length of the index part (the index chunk).
    index_len: u64,
    frame_len: u64,
}

impl Frame {
    /// The store holding header, index and trailer (the index file for sframes).
    fn meta_store(&self) -> Result<Held<'_>> {
        Ok(match &self.backing {
            Backing::Contiguous(s) => Held::Lent(s),
            Backing::Sparse(dir) => Held::Own(dir.index_store()?),
        })
    }

    fn layout(&self, store: &Store) -> Result<(Layout, Vec<u8>)> {
        let h = &self.header;
        let frame_len = h.frame_len;
        let min = crate::frame::header::TRAILER_MINLEN as u64;
        let window = store.read_at(frame_len.checked_sub(min).ok_or(Error::InvalidHeader)?, min)?;
        let tl = u64::from(trailer::trailer_len_from_window(&window, frame_len)?);
        let trailer_start = frame_len - tl;
        let header_len = u64::from(h.header_len);
        // Without chunks the trailer follows the header whatever `cbytes` says.
        let index_pos = match self.backing {
            _ if self.locs.is_empty() => header_len,
            Backing::Contiguous(_) => header_len + h.cbytes as u64,
            Backing::Sparse(_) => header_len,
        };
        if index_pos > trailer_start || (tl as usize) < TYPE_FROM_END + 1 {
            return Err(Error::InvalidHeader);
        }
        let region = trailer_start - index_pos;
        let head = store.read_at(index_pos, region.min(CHUNK_LEN_FIELD_END as u64))?;
        let index_len = index_part_len(&head, region);
        let trailer = store.read_at(trailer_start, tl)?;
        Ok((
            Layout {
                header_len,
                index_pos,
                index_len,
                frame_len,
            },
            trailer,
        ))
    }

    /// The data part as stored: cframe covered chunk bytes, or the stored chunks in index
    /// order (their pieces kept in the tracker).
    fn stored_data_piece(&mut self, header: &FrameHeader, header_len: u64) -> Result<Piece> {
        let Frame {
            backing, locs, fp, ..
        } = self;
        match backing {
            Backing::Contiguous(store) => data_piece(
                locs.stored(),
                header.cbytes as u64,
                &mut store_reader(store, header_len),
            ),
            Backing::Sparse(dir) => {
                let mut p = Piece::EMPTY;
                let mut buf = Vec::new();
                for id in stored_ids(locs) {
                    let piece = match fp.sparse.chunks.get(&id) {
                        Some(&c) => c,
                        None => {
                            let n = dir.fetch_chunk(id, &mut buf)?;
                            let c = Piece::of(&buf[..n]);
                            fp.sparse.chunks.insert(id, c);
                            c
                        }
                    };
                    p = p.then(piece);
                }
                Ok(p)
            }
        }
    }

    /// Checks the frame's stored bytes against its fingerprint (reads the whole frame).
    pub fn verify_fingerprint(&self) -> Result<Verdict> {
        let store = self.meta_store()?;
        let (at, trailer) = self.layout(&store)?;
        let slot = Slot::from_tail(&trailer)?;
        if slot.fpt != TYPE_CRC32 {
            // Nothing to compute.
            return Ok(judge(
                &slot,
                Piece::EMPTY,
                Some(Piece::EMPTY),
                Piece::EMPTY,
                Piece::EMPTY,
            ));
        }
        let header = piece_of_range(&store, 0, at.header_len)?;
        let index = piece_of_range(&store, at.index_pos, at.index_len)?;
        let trailer_piece = Piece::of(&trailer[..trailer.len() - SLOT_LEN]);
        let data = match &self.backing {
            _ if self.locs.is_empty() => Some(Piece::EMPTY),
            Backing::Contiguous(s) => data_piece(
                self.locs.stored(),
                self.header.cbytes as u64,
                &mut store_reader(s, at.header_len),
            )
            .ok(),
            Backing::Sparse(dir) => {
                let mut p = Piece::EMPTY;
                let mut buf = Vec::new();
                let mut ok = true;
                for id in stored_ids(&self.locs) {
                    match dir.fetch_chunk(id, &mut buf) {
                        Ok(n) => p = p.then(Piece::of(&buf[..n])),
                        Err(_) => ok = false,
                    }
                }
                ok.then_some(p)
            }
        };
        debug_assert_eq!(at.frame_len, self.header.frame_len);
        Ok(judge(&slot, header, data, index, trailer_piece))
    }

    /// The fingerprint type stored in the frame's trailer.
    pub fn fingerprint_slot(&self) -> Result<Slot> {
        let store = self.meta_store()?;
        let fl = self.header.frame_len;
        let tail = store.read_at(
            fl.checked_sub(TYPE_FROM_END as u64)
                .ok_or(Error::InvalidHeader)?,
            TYPE_FROM_END as u64,
        )?;
        Slot::from_tail(&tail)
    }

    /// Fails an open with `InvalidHeader` when verify-on-open is set and the fingerprint does
    /// not match.
    pub(in crate::frame) fn check_on_open(self) -> Result<Frame> {
        if verify_on_open() && !self.verify_fingerprint()?.is_sound() {
            return Err(Error::InvalidHeader);
        }
        Ok(self)
    }

    /// Before a mutation writes anything: learn the data part, from the stored slot when it
    /// adds up (a cframe then reads only the 16-byte head of each stored chunk, for the
    /// length), else (cframes) by one pass over the stored chunks, so that the mutation can
    /// update it and its commit (and a relocated copy of the old state) can be sealed.
    /// While fingerprints are off the data part is forgotten instead: nothing is sealed, so
    /// hashing what the mutation writes would be wasted (a commit after they are switched on
    /// again makes the one pass of an unknown data part).
    pub(in crate::frame) fn prime_fingerprint(&mut self) {
        if !writes_enabled() {
            self.fp.data = None;
            return;
        }
        if self.fp.data.is_some() {
            return;
        }
        // Only sframes track their chunk ids (listing the ids of a large cframe on every
        // append cost a quarter of the append).
        let ids = match self.backing {
            Backing::Contiguous(_) => Vec::new(),
            Backing::Sparse(_) => stored_ids(&self.locs),
        };
        let empty = !self.locs.any_stored();
        if empty {
            self.fp.data = Some(Piece::EMPTY);
            self.fp.sparse.ids = ids;
            return;
        }
        let known = match self.data_piece_from_slot() {
            Ok(Some(d)) => Some(d),
            _ => match &self.backing {
                Backing::Contiguous(store) => data_piece(
                    self.locs.stored(),
                    self.header.cbytes as u64,
                    &mut store_reader(store, u64::from(self.header.header_len)),
                )
                .ok(),
                Backing::Sparse(_) => None,
            },
        };
        if let Some(d) = known {
            self.fp.data = Some(d);
            self.fp.sparse.ids = ids;
        }
    }

    /// Before the stored chunk at data offset `at` stops being covered (a cframe chunk update
    /// or delete), with the known data part `D = P C S` (`C`: that chunk, `S`: the covered
    /// bytes after it): `(P, S)`, reading only `C` and `S` (`P` by CRC arithmetic). `None` (the
    /// commit then makes a pass) when the data part is unknown, some staged write of this
    /// transaction may lie in the bytes read, or the chunk is not covered by itself alone (named
    /// twice, or overlapping another: only hostile frames).
    pub(in crate::frame) fn split_data_at(&self, at: u64, staged: bool) -> Option<(Piece, Piece)> {
        self.split_data_at_known(at, staged, None)
    }

    /// [`Frame::split_data_at`], taking the bytes of the data section from `known`
    /// (`(section position, bytes)`, read by the caller already) where it holds them, and
    /// those of an in-memory frame in place: no copy of the data after the chunk.
    pub(in crate::frame) fn split_data_at_known(
        &self,
        at: u64,
        staged: bool,
        known: Option<(u64, &[u8])>,
    ) -> Option<(Piece, Piece)> {
        let d = self.fp.data?;
        let Backing::Contiguous(store) = &self.backing else {
            return None;
        };
        if staged {
            return None;
        }
        let section = self.header.cbytes as u64;
        let base = u64::from(self.header.header_len);
        // Bytes in `known` (or in memory) are not read again: the chunk headers of the data
        // after the chunk are one small read each otherwise.
        let held = move |s: u64, e: u64| -> Option<&[u8]> {
            known
                .and_then(|(k, b)| {
                    let from = usize::try_from(s.checked_sub(k)?).ok()?;
                    b.get(from..from.checked_add(usize::try_from(e.checked_sub(s)?).ok()?)?)
                })
                .or_else(|| store.slice(base.checked_add(s)?, e.checked_sub(s)?))
        };
        let mut file_read = store_reader(store, base);
        let mut read = |pos: u64, dst: &mut [u8]| -> Result<()> {
            match held(pos, pos.saturating_add(dst.len() as u64)) {
                Some(b) => {
                    dst.copy_from_slice(b);
                    Ok(())
                }
                None => file_read(pos, dst),
            }
        };
        let named = |v: u64| self.locs.stored().filter(|&x| x == v).count();
        if named(at) != 1 {
            return None;
        }
        let before = self.locs.stored().filter(|&v| v < at).max();
        if let Some(v) = before {
            let r = live_ranges([v], section, &mut read).ok()?;
            if r.iter().any(|&(_, e)| e > at) {
                return None;
            }
        }
        let after: Vec<u64> = self.locs.stored().filter(|&v| v > at).collect();
        let own = live_ranges([at], section, &mut read).ok()?;
        let rest = live_ranges(after, section, &mut read).ok()?;
        let &[(s, e)] = own.as_slice() else {
            return None;
        };
        if rest.first().is_some_and(|&(r, _)| r < e) {
            return None;
        }
        let mut piece = |ranges: &[(u64, u64)]| -> Option<Piece> {
            let mut p = Piece::EMPTY;
            for &(s, e) in ranges {
                match held(s, e) {
                    Some(bytes) => p.extend(bytes),
                    None => p = p.then(piece_of_ranges(&[(s, e)], &mut read).ok()?),
                }
            }
            Some(p)
        };
        let c = piece(&[(s, e)])?;
        let tail = piece(&rest)?;
        let p = d.strip_suffix(c.then(tail))?;
        Some((p, tail))
    }

    /// Sets the data part (after a change computed by the caller).
    pub(in crate::frame) fn set_data_piece(&mut self, p: Option<Piece>) {
        self.fp.data = p;
    }

    /// The stored data CRC, when the slot's words add up with the stored trailer.
    fn data_piece_from_slot(&self) -> Result<Option<Piece>> {
        let store = self.meta_store()?;
        let (at, trailer) = self.layout(&store)?;
        let slot = Slot::from_tail(&trailer)?;
        if slot.fpt != TYPE_CRC32 || !slot.has_parts() {
            return Ok(None);
        }
        let data_len = match &self.backing {
            Backing::Contiguous(s) => {
                let cbytes = self.header.cbytes as u64;
                ranges_len(&live_ranges(
                    self.locs.stored(),
                    cbytes,
                    &mut store_reader(s, at.header_len),
                )?)
            }
            Backing::Sparse(_) => self.header.cbytes as u64,
        };
        let [total, sh, sd, si] = slot.words();
        let parts = Parts {
            header: Piece {
                crc: sh,
                len: at.header_len,
            },
            data: Piece {
                crc: sd,
                len: data_len,
            },
            index: Piece {
                crc: si,
                len: at.index_len,
            },
            trailer: Piece::of(&trailer[..trailer.len() - SLOT_LEN]),
        };
        Ok((parts.total().crc == total).then_some(parts.data))
    }

    /// The data part for the commit writing `header` (with header length `header_len`):
    /// what the tracker knows, or one pass over the stored data (for a cframe in a file, as
    /// it will be once the `staged` writes are made). `unchanged`: how many leading offsets
    /// the transaction left as they were (an append: all the old ones), so that an sframe's
    /// covered ids are extended by the new entries' instead of listed and compared again.
    pub(in crate::frame) fn data_piece_for_commit(
        &mut self,
        header: &FrameHeader,
        header_len: u64,
        staged: Option<&[(u64, Vec<u8>)]>,
        unchanged: Option<usize>,
    ) -> Result<Piece> {
        let piece = match &self.backing {
            Backing::Contiguous(_) if self.locs.is_empty() => Piece::EMPTY,
            Backing::Contiguous(store) => match (self.fp.data, staged) {
                (Some(p), _) => p,
                (None, Some(w)) => data_piece(
                    self.locs.stored(),
                    header.cbytes as u64,
                    &mut overlay_reader(store, header_len, w),
                )?,
                (None, None) => self.stored_data_piece(header, header_len)?,
            },
            // A known data part covers the ids of the offsets the transaction started from
            // (see `prime_fingerprint`); after an append those are the first `n` entries,
            // unchanged, and only the new entries' ids are added.
            Backing::Sparse(_) => match (self.fp.data, unchanged) {
                (Some(p), Some(n)) if n <= self.locs.len() => {
                    debug_assert!(self
                        .fp
                        .sparse
                        .ids
                        .iter()
                        .copied()
                        .eq(self.locs.prefix(n).stored()));
                    let new: Vec<u64> = self.locs.view().stored_range(n, self.locs.len()).collect();
                    let rest: Option<Vec<Piece>> = new
                        .iter()
                        .map(|id| self.fp.sparse.chunks.get(id).copied())
                        .collect();
                    match rest {
                        Some(r) => {
                            self.fp.sparse.ids.extend_from_slice(&new);
                            r.into_iter().fold(p, Piece::then)
                        }
                        None => {
                            let p = self.stored_data_piece(header, header_len)?;
                            self.fp.sparse.ids = stored_ids(&self.locs);
                            p
                        }
                    }
                }
                _ => {
                    let ids = stored_ids(&self.locs);
                    let known = match self.fp.data {
                        Some(p) if ids.starts_with(&self.fp.sparse.ids) => {
                            let rest: Option<Vec<Piece>> = ids[self.fp.sparse.ids.len()..]
                                .iter()
                                .map(|id| self.fp.sparse.chunks.get(id).copied())
                                .collect();
                            rest.map(|r| r.into_iter().fold(p, Piece::then))
                        }
                        _ => None,
                    };
                    let p = match known {
                        Some(p) => p,
                        None => self.stored_data_piece(header, header_len)?,
                    };
                    self.fp.sparse.ids = ids;
                    p
                }
            },
        };
        self.fp.data = Some(piece);
        Ok(piece)
    }
}
