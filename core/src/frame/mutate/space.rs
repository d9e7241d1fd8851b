//! The dead space of a cframe file's data section: the bytes no offset of the committed state
//! covers (old payloads of updated or deleted chunks). A far update puts its new payload into
//! the first dead range that fits (docs/mutation.md#update), so that repeated updates reuse
//! the space their old payloads left instead of growing the file.
//!
//! [`Space`] holds the live ranges of the committed state; it is built from the stored chunks'
//! headers (one small read each) the first time a far update needs it and kept between far
//! updates ([`super::Carry::space`]); any other transaction, a failed one or a reload drops it.

#![forbid(unsafe_code)]

use super::*;
use crate::frame::fingerprint::{piece_of_ranges, store_reader};

/// The live byte ranges of a committed cframe data section (positions relative to its start).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::frame) struct Space {
    /// One entry per stored chunk, sorted, disjoint (touching allowed): the bytes the
    /// fingerprint covers for it (docs/format/fingerprint.md), `[offset, offset + cbytes)`,
    /// with the CRC piece of those bytes once read (or written).
    chunks: Vec<(u64, u64, Option<Piece>)>,
    /// The data section's length (the header's `cbytes`).
    section: u64,
}

/// The bytes a chunk of `cbytes` at `at` covers in a section of `section` bytes (what
/// [`fingerprint::live_ranges`] takes for it).
pub(super) fn covered(at: u64, cbytes: u64, section: u64) -> (u64, u64) {
    (at, at.saturating_add(cbytes.max(16)).min(section))
}

impl Space {
    /// The live ranges of the stored chunks at `stored` of a section of `section` bytes
    /// (`read` gives its bytes; only the chunks' headers are read). `None` when two chunks
    /// share bytes (a payload named twice, or overlapping payloads: only hostile or odd
    /// frames): freeing one of them would free bytes the other still uses, so nothing is
    /// reused in such a frame.
    pub fn build(
        stored: impl IntoIterator<Item = u64>,
        section: u64,
        read: &mut fingerprint::SectionRead<'_>,
    ) -> Result<Option<Space>> {
        let mut chunks = Vec::new();
        for v in stored {
            if v >= section {
                return Ok(None);
            }
            let one = fingerprint::live_ranges([v], section, read)?;
            let &[(s, e)] = one.as_slice() else {
                return Ok(None);
            };
            chunks.push((s, e, None));
        }
        chunks.sort_unstable_by_key(|c| c.0);
        if chunks.windows(2).any(|w| w[1].0 < w[0].1) {
            return Ok(None);
        }
        Ok(Some(Space { chunks, section }))
    }

    /// How many bytes are live.
    pub fn live_len(&self) -> u64 {
        self.chunks.iter().map(|c| c.1 - c.0).sum()
    }

    /// The first dead range that holds `len` bytes: where it starts.
    pub fn first_fit(&self, len: u64) -> Option<u64> {
        if len == 0 {
            return None;
        }
        let mut prev = 0;
        for &(s, e, _) in &self.chunks {
            if s - prev >= len {
                return Some(prev);
            }
            prev = e;
        }
        (self.section - prev >= len).then_some(prev)
    }

    /// The entry of the chunk covering exactly `[s, e)`.
    fn find(&self, (s, e): (u64, u64)) -> Option<usize> {
        let k = self.chunks.partition_point(|c| c.0 < s);
        self.chunks
            .get(k)
            .filter(|c| c.0 == s && c.1 == e)
            .map(|_| k)
    }

    /// Whether `[s, e)` is the range of one chunk.
    pub fn is_live(&self, r: (u64, u64)) -> bool {
        self.find(r).is_some()
    }

    /// The chunk covering exactly `[s, e)` is no longer stored: its bytes turn dead.
    pub fn free(&mut self, r: (u64, u64)) -> bool {
        match self.find(r) {
            Some(k) => {
                self.chunks.remove(k);
                true
            }
            None => false,
        }
    }

    /// A chunk is stored at `[s, e)` (dead, inside the section, or appended at its end), its
    /// bytes' piece `piece` when known.
    pub fn take(&mut self, (s, e): (u64, u64), piece: Option<Piece>) -> bool {
        if s >= e {
            return true;
        }
        if s == self.section {
            self.section = e;
        }
        if e > self.section {
            return false;
        }
        let k = self.chunks.partition_point(|c| c.0 < s);
        let after_prev = k == 0 || self.chunks[k - 1].1 <= s;
        let before_next = self.chunks.get(k).is_none_or(|c| e <= c.0);
        if !(after_prev && before_next) {
            return false;
        }
        self.chunks.insert(k, (s, e, piece));
        true
    }

    /// The piece of entry `k`, read through `read` the first time.
    fn piece(&mut self, k: usize, read: &mut fingerprint::SectionRead<'_>) -> Option<Piece> {
        let (s, e, p) = self.chunks[k];
        if let Some(p) = p {
            return Some(p);
        }
        let p = piece_of_ranges(&[(s, e)], read).ok()?;
        self.chunks[k].2 = Some(p);
        Some(p)
    }

    /// The chunks [`Space::data_part_after_move`] combines for a payload of `len` bytes moved
    /// from `old` to `at`: those on the shorter side of the two places, and whether that is
    /// the side from the earlier place on (the suffix) or the one before the later place.
    fn move_side(&self, old: (u64, u64), at: u64, len: u64) -> (std::ops::Range<usize>, bool) {
        let (lo, hi) = (old.0.min(at), old.1.max(at + len));
        let from = self.chunks.partition_point(|c| c.0 < lo);
        let to = self.chunks.partition_point(|c| c.1 <= hi);
        let len_of =
            |r: std::ops::Range<usize>| -> u64 { self.chunks[r].iter().map(|c| c.1 - c.0).sum() };
        if len_of(from..self.chunks.len()) <= len_of(0..to) {
            (from..self.chunks.len(), true)
        } else {
            (0..to, false)
        }
    }

    /// How many bytes [`Space::data_part_after_move`] would read for that move: the chunks
    /// of [`Space::move_side`] whose piece is not known yet.
    pub fn move_read_cost(&self, old: (u64, u64), at: u64, len: u64) -> u64 {
        self.chunks[self.move_side(old, at, len).0]
            .iter()
            .filter(|c| c.2.is_none())
            .map(|c| c.1 - c.0)
            .sum()
    }

    /// The fingerprint's data part `d` (of this committed state) once the chunk covering `old`
    /// stops being covered and `new` (whose piece is `new_p`) is written at `at` (inside a dead
    /// range): by CRC arithmetic from the pieces of the chunks on the shorter side of the two
    /// places (before the later one, or from the earlier one on), each chunk's bytes read
    /// through `read` the first time only. `None` when `d` does not add up with these ranges
    /// (the commit then makes a pass).
    pub fn data_part_after_move(
        &mut self,
        d: Piece,
        old: (u64, u64),
        at: u64,
        new_p: Piece,
        read: &mut fingerprint::SectionRead<'_>,
    ) -> Option<Piece> {
        let ko = self.find(old)?;
        if d.len != self.live_len() {
            return None;
        }
        // Chunks at or past the earlier place, or ending at or before the later one.
        let (range, suffix) = self.move_side(old, at, new_p.len);
        let mut old_p = Piece::EMPTY;
        let mut new_side = Piece::EMPTY;
        let mut placed = false;
        for k in range {
            if !placed && at < self.chunks[k].0 {
                new_side = new_side.then(new_p);
                placed = true;
            }
            let p = self.piece(k, read)?;
            old_p = old_p.then(p);
            if k != ko {
                new_side = new_side.then(p);
            }
        }
        if !placed {
            new_side = new_side.then(new_p);
        }
        if suffix {
            Some(d.strip_suffix(old_p)?.then(new_side))
        } else {
            Some(new_side.then(d.strip_prefix(old_p)?))
        }
    }
}

impl Frame {
    /// The live ranges of the committed state of a cframe in a file, kept from the last far
    /// update or built now (`None`: not a cframe in a file, or chunks that share bytes).
    /// Call it only before the transaction writes anything.
    pub(super) fn committed_space(&mut self) -> Option<Space> {
        let section = self.header.cbytes as u64;
        if let Some(s) = self.carry.space.take() {
            if s.section == section {
                return Some(s);
            }
        }
        let Backing::Contiguous(store) = &self.backing else {
            return None;
        };
        let base = u64::from(self.header.header_len);
        Space::build(self.locs.stored(), section, &mut store_reader(store, base))
            .ok()
            .flatten()
    }

    /// The fingerprint's data part once the stored chunk covering `old` moves to `at` as
    /// a payload whose piece is `new_p` ([`Space::data_part_after_move`]); `None` when unknown.
    pub(super) fn data_part_after_move(
        &self,
        space: &mut Space,
        old: (u64, u64),
        at: u64,
        new_p: Piece,
    ) -> Option<Piece> {
        let d = self.fp.data()?;
        let Backing::Contiguous(store) = &self.backing else {
            return None;
        };
        let base = u64::from(self.header.header_len);
        space.data_part_after_move(d, old, at, new_p, &mut store_reader(store, base))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A space of chunks at `ranges`, pieces unknown.
    fn space(ranges: &[(u64, u64)], section: u64) -> Space {
        Space {
            chunks: ranges.iter().map(|&(s, e)| (s, e, None)).collect(),
            section,
        }
    }

    fn ranges(s: &Space) -> Vec<(u64, u64)> {
        s.chunks.iter().map(|c| (c.0, c.1)).collect()
    }

    #[test]
    fn first_fit_takes_the_first_dead_range_that_holds_the_payload() {
        let s = space(&[(10, 20), (20, 25), (25, 40), (100, 120)], 130);
        assert_eq!(s.first_fit(10), Some(0));
        assert_eq!(s.first_fit(11), Some(40));
        assert_eq!(s.first_fit(60), Some(40));
        assert_eq!(s.first_fit(61), None);
        assert_eq!(space(&[(0, 50)], 60).first_fit(10), Some(50));
        assert_eq!(space(&[(0, 50)], 60).first_fit(11), None);
        assert_eq!(s.first_fit(0), None);
    }

    #[test]
    fn freeing_and_taking_follow_the_chunks() {
        let mut s = space(&[(0, 20), (20, 40), (40, 100)], 100);
        assert!(!s.free((20, 30)), "not one chunk's range");
        assert!(s.free((20, 40)));
        assert_eq!(ranges(&s), [(0, 20), (40, 100)]);
        assert!(!s.take((10, 30), None), "overlaps a chunk");
        assert!(!s.take((30, 41), None), "overlaps a chunk");
        assert!(s.take((25, 40), None));
        assert!(s.take((20, 25), None));
        assert_eq!(ranges(&s), [(0, 20), (20, 25), (25, 40), (40, 100)]);
        assert!(s.take((100, 130), None), "appended");
        assert_eq!(s.section, 130);
        assert!(!s.take((140, 150), None), "past the end");
        assert_eq!(s.live_len(), 130);
    }

    /// The data part after a move, from either side, equals the CRC of the live bytes in file
    /// order after it; pieces read once are kept.
    #[test]
    fn the_data_part_after_a_move_is_the_live_bytes_in_file_order() {
        let bytes: Vec<u8> = (0..400u32).map(|i| (i * 7 + 3) as u8).collect();
        let s = space(
            &[(0, 50), (60, 100), (100, 120), (200, 300), (350, 400)],
            400,
        );
        let of = |s: &Space, b: &[u8]| {
            let mut p = Piece::EMPTY;
            for &(a, e, _) in &s.chunks {
                p.extend(&b[a as usize..e as usize]);
            }
            p
        };
        let new: Vec<u8> = (0..30u8).map(|i| i ^ 0x5a).collect();
        let new_p = Piece::of(&new);
        // New payloads before and after the old one, near either end.
        for (old, at) in [
            ((200, 300), 120),
            ((0, 50), 310),
            ((60, 100), 130),
            ((350, 400), 120),
            ((200, 300), 300),
            ((100, 120), 300),
        ] {
            let d = of(&s, &bytes);
            let mut reads = 0;
            let mut read = |pos: u64, dst: &mut [u8]| -> Result<()> {
                reads += 1;
                dst.copy_from_slice(&bytes[pos as usize..pos as usize + dst.len()]);
                Ok(())
            };
            let mut cached = s.clone();
            let got = cached.data_part_after_move(d, old, at, new_p, &mut read);
            let again = cached.data_part_after_move(d, old, at, new_p, &mut read);
            let mut after = s.clone();
            assert!(after.free(old));
            assert!(after.take((at, at + new.len() as u64), Some(new_p)));
            let mut nb = bytes.clone();
            nb[at as usize..at as usize + new.len()].copy_from_slice(&new);
            assert_eq!(got, Some(of(&after, &nb)), "{old:?} -> {at}");
            assert_eq!(again, got);
            assert!(reads <= s.chunks.len(), "{old:?} -> {at}: {reads} reads");
        }
        let d = of(&s, &bytes);
        let mut s2 = s.clone();
        let bad = Piece {
            len: d.len + 1,
            ..d
        };
        assert_eq!(
            s2.data_part_after_move(bad, (0, 50), 310, new_p, &mut |_, _| Ok(())),
            None
        );
        assert_eq!(
            s2.data_part_after_move(d, (0, 40), 310, new_p, &mut |_, _| Ok(())),
            None,
            "not a chunk"
        );
    }

    #[test]
    fn chunks_sharing_bytes_give_no_space() {
        let mut head = vec![0u8; 400];
        for at in [0usize, 100, 200] {
            head[at + 12..at + 16].copy_from_slice(&100i32.to_le_bytes());
        }
        let mut read = |pos: u64, dst: &mut [u8]| -> Result<()> {
            dst.copy_from_slice(&head[pos as usize..pos as usize + dst.len()]);
            Ok(())
        };
        let s = Space::build([200, 0], 400, &mut read).unwrap().unwrap();
        assert_eq!(ranges(&s), [(0, 100), (200, 300)]);
        assert_eq!(Space::build([0, 0], 400, &mut read).unwrap(), None);
        assert_eq!(Space::build([0, 50], 400, &mut read).unwrap(), None);
        assert_eq!(
            ranges(&Space::build([0, 100], 400, &mut read).unwrap().unwrap()),
            [(0, 100), (100, 200)]
        );
    }
}
