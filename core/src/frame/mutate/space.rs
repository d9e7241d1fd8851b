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
    /// Sorted, disjoint, touching ranges merged: the bytes the fingerprint covers
    /// (docs/format/fingerprint.md), each chunk's `[offset, offset + cbytes)`.
    live: Vec<(u64, u64)>,
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
    /// (`read` gives its bytes). `None` when two chunks share bytes (a payload named twice, or
    /// overlapping payloads: only hostile or odd frames): freeing one of them would free bytes
    /// the other still uses, so nothing is reused in such a frame.
    pub fn build(
        stored: impl IntoIterator<Item = u64>,
        section: u64,
        read: &mut fingerprint::SectionRead<'_>,
    ) -> Result<Option<Space>> {
        let mut each = Vec::new();
        for v in stored {
            if v >= section {
                return Ok(None);
            }
            // One chunk at a time: a chunk whose header does not fit is not reused around.
            let one = fingerprint::live_ranges([v], section, read)?;
            let &[r] = one.as_slice() else {
                return Ok(None);
            };
            each.push(r);
        }
        each.sort_unstable();
        let mut live: Vec<(u64, u64)> = Vec::with_capacity(each.len());
        for (s, e) in each {
            match live.last_mut() {
                Some(last) if s < last.1 => return Ok(None),
                Some(last) if s == last.1 => last.1 = e,
                _ => live.push((s, e)),
            }
        }
        Ok(Some(Space { live, section }))
    }

    /// How many bytes are live.
    pub fn live_len(&self) -> u64 {
        fingerprint::ranges_len(&self.live)
    }

    /// The first dead range that holds `len` bytes: where it starts.
    pub fn first_fit(&self, len: u64) -> Option<u64> {
        if len == 0 {
            return None;
        }
        let mut prev = 0;
        for &(s, e) in &self.live {
            if s - prev >= len {
                return Some(prev);
            }
            prev = e;
        }
        (self.section - prev >= len).then_some(prev)
    }

    /// Whether `[s, e)` lies inside one live range.
    pub fn is_live(&self, (s, e): (u64, u64)) -> bool {
        let k = self.live.partition_point(|r| r.1 < e);
        self.live.get(k).is_some_and(|&(a, b)| a <= s && e <= b)
    }

    /// `[s, e)` (inside one live range) turns dead.
    pub fn free(&mut self, (s, e): (u64, u64)) -> bool {
        let k = self.live.partition_point(|r| r.1 < e);
        let Some(&(a, b)) = self.live.get(k).filter(|&&(a, b)| a <= s && e <= b) else {
            return false;
        };
        let mut parts = Vec::with_capacity(2);
        if a < s {
            parts.push((a, s));
        }
        if e < b {
            parts.push((e, b));
        }
        self.live.splice(k..=k, parts);
        true
    }

    /// `[s, e)` (dead, inside the section, or appended at its end) turns live.
    pub fn take(&mut self, (s, e): (u64, u64)) -> bool {
        if s >= e {
            return true;
        }
        if s == self.section {
            self.section = e;
        }
        if e > self.section {
            return false;
        }
        let k = self.live.partition_point(|r| r.1 <= s);
        if self.live.get(k).is_some_and(|&(a, _)| a < e) {
            return false;
        }
        let join_prev = k > 0 && self.live[k - 1].1 == s;
        let join_next = self.live.get(k).is_some_and(|&(a, _)| a == e);
        match (join_prev, join_next) {
            (true, true) => {
                self.live[k - 1].1 = self.live[k].1;
                self.live.remove(k);
            }
            (true, false) => self.live[k - 1].1 = e,
            (false, true) => self.live[k].0 = s,
            (false, false) => self.live.insert(k, (s, e)),
        }
        true
    }

    /// The live ranges clipped to `[w0, w1)`, cut at `cut` points, in order.
    fn segments(&self, (w0, w1): (u64, u64), cuts: &[u64]) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for &(s, e) in &self.live {
            let (s, e) = (s.max(w0), e.min(w1));
            if s >= e {
                continue;
            }
            let mut from = s;
            let mut inner: Vec<u64> = cuts.iter().copied().filter(|&c| s < c && c < e).collect();
            inner.sort_unstable();
            for c in inner {
                out.push((from, c));
                from = c;
            }
            out.push((from, e));
        }
        out
    }

    /// The fingerprint's data part `d` (of this committed state) once the chunk covering `old`
    /// stops being covered and `new` is written at `at` (inside a dead range): by CRC
    /// arithmetic from the bytes on the shorter side of the two places (before the later one,
    /// or from the earlier one on), read through `read`. `None` when `d` does not add up with
    /// these ranges (the commit then makes a pass).
    pub fn data_part_after_move(
        &self,
        d: Piece,
        old: (u64, u64),
        at: u64,
        new: &[u8],
        read: &mut fingerprint::SectionRead<'_>,
    ) -> Option<Piece> {
        if d.len != self.live_len() || !self.is_live(old) {
            return None;
        }
        let new_end = at + new.len() as u64;
        let (lo, hi) = (old.0.min(at), old.1.max(new_end));
        let live_in = |w0: u64, w1: u64| -> u64 {
            self.live
                .iter()
                .map(|&(s, e)| e.min(w1).saturating_sub(s.max(w0)))
                .sum()
        };
        let suffix = live_in(lo, self.section) <= live_in(0, hi);
        let window = if suffix { (lo, self.section) } else { (0, hi) };
        let mut old_p = Piece::EMPTY;
        let mut new_p = Piece::EMPTY;
        let mut placed = false;
        for seg in self.segments(window, &[old.0, old.1]) {
            if !placed && at < seg.0 {
                new_p.extend(new);
                placed = true;
            }
            let p = piece_of_ranges(&[seg], read).ok()?;
            old_p = old_p.then(p);
            if !(old.0 <= seg.0 && seg.1 <= old.1) {
                new_p = new_p.then(p);
            }
        }
        if !placed {
            new_p.extend(new);
        }
        if suffix {
            Some(d.strip_suffix(old_p)?.then(new_p))
        } else {
            Some(new_p.then(d.strip_prefix(old_p)?))
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
    /// `new` ([`Space::data_part_after_move`]); `None` when unknown.
    pub(super) fn data_part_after_move(
        &self,
        space: &Space,
        old: (u64, u64),
        at: u64,
        new: &[u8],
    ) -> Option<Piece> {
        let d = self.fp.data()?;
        let Backing::Contiguous(store) = &self.backing else {
            return None;
        };
        let base = u64::from(self.header.header_len);
        space.data_part_after_move(d, old, at, new, &mut store_reader(store, base))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(live: &[(u64, u64)], section: u64) -> Space {
        Space {
            live: live.to_vec(),
            section,
        }
    }

    #[test]
    fn first_fit_takes_the_first_dead_range_that_holds_the_payload() {
        let s = space(&[(10, 20), (25, 40), (100, 120)], 130);
        assert_eq!(s.first_fit(10), Some(0));
        assert_eq!(s.first_fit(11), Some(40));
        assert_eq!(s.first_fit(60), Some(40));
        assert_eq!(s.first_fit(61), None);
        assert_eq!(space(&[(0, 50)], 60).first_fit(10), Some(50));
        assert_eq!(space(&[(0, 50)], 60).first_fit(11), None);
        assert_eq!(s.first_fit(0), None);
    }

    #[test]
    fn freeing_and_taking_keep_the_ranges_merged() {
        let mut s = space(&[(0, 100)], 100);
        assert!(s.free((20, 40)));
        assert_eq!(s.live, [(0, 20), (40, 100)]);
        assert!(!s.free((15, 25)), "not live");
        assert!(!s.take((10, 30)), "not dead");
        assert!(s.take((25, 40)));
        assert_eq!(s.live, [(0, 20), (25, 100)]);
        assert!(s.take((20, 25)));
        assert_eq!(s.live, [(0, 100)]);
        assert!(s.take((100, 130)), "appended");
        assert_eq!((s.live.clone(), s.section), (vec![(0, 130)], 130));
        assert!(!s.take((140, 150)), "past the end");
        assert!(s.free((0, 130)));
        assert!(s.live.is_empty());
        assert!(s.take((50, 60)));
        assert_eq!(s.live, [(50, 60)]);
    }

    /// The data part after a move, from either side, equals the CRC of the live bytes in file
    /// order after it.
    #[test]
    fn the_data_part_after_a_move_is_the_live_bytes_in_file_order() {
        let mut bytes: Vec<u8> = (0..400u32).map(|i| (i * 7 + 3) as u8).collect();
        let s = space(&[(0, 50), (60, 120), (200, 300), (350, 400)], 400);
        let of = |s: &Space, b: &[u8]| {
            let mut p = Piece::EMPTY;
            for &(a, e) in &s.live {
                p.extend(&b[a as usize..e as usize]);
            }
            p
        };
        let new: Vec<u8> = (0..30u8).map(|i| i ^ 0x5a).collect();
        // New payloads before and after the old one, near either end.
        for (old, at) in [
            ((200, 300), 120),
            ((0, 50), 310),
            ((60, 120), 130),
            ((350, 400), 120),
            ((200, 300), 300),
        ] {
            let d = of(&s, &bytes);
            let b = bytes.clone();
            let mut read = |pos: u64, dst: &mut [u8]| -> Result<()> {
                dst.copy_from_slice(&b[pos as usize..pos as usize + dst.len()]);
                Ok(())
            };
            let got = s.data_part_after_move(d, old, at, &new, &mut read);
            let mut after = s.clone();
            assert!(after.free(old));
            assert!(after.take((at, at + new.len() as u64)));
            let mut nb = bytes.clone();
            nb[at as usize..at as usize + new.len()].copy_from_slice(&new);
            assert_eq!(got, Some(of(&after, &nb)), "{old:?} -> {at}");
        }
        bytes[0] ^= 1;
        let d = of(&s, &bytes);
        assert_eq!(
            s.data_part_after_move(
                Piece {
                    len: d.len + 1,
                    ..d
                },
                (0, 50),
                310,
                &new,
                &mut |_, _| Ok(())
            ),
            None
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
        assert_eq!(s.live, [(0, 100), (200, 300)]);
        assert_eq!(Space::build([0, 0], 400, &mut read).unwrap(), None);
        assert_eq!(Space::build([0, 50], 400, &mut read).unwrap(), None);
        assert_eq!(
            Space::build([0, 100], 400, &mut read)
                .unwrap()
                .unwrap()
                .live,
            [(0, 200)]
        );
    }
}
