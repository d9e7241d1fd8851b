//! Frame fingerprints: the trailer's fingerprint slot filled with a CRC-32 (fingerprint type 1).
//!
//! The definition (what is covered, in which order, how the 16-byte slot is laid out) is in
//! `docs/format/fingerprint.md`; in short, for a cframe the fingerprint is the CRC-32 (IEEE,
//! the one of zlib and `crc32fast`) of every frame byte before the 16-byte slot except dead
//! bytes (data-section bytes no stored chunk occupies, and anything between the index chunk and
//! the trailer), and for an sframe of its index file's bytes before the slot with the live chunk
//! files' bytes inserted where a cframe has its data section. The slot holds that CRC and the CRCs of the header,
//! data and index parts (little-endian), which only serve to say where a mismatch is.
//!
//! Cost: writers never re-read what they wrote. An open frame keeps the CRC of its data part
//! ([`Tracker`]) and extends it with each appended payload, hashed as it is copied into the
//! frame ([`crate::crc::extend_vec`]); header, index and trailer are hashed as they are written.
//! While fingerprints are off nothing is hashed and the data part is forgotten. It is computed
//! by one pass over the stored chunks only when it is unknown: at the first mutation of a frame
//! that is not fingerprinted (or whose slot does not add up, or after fingerprints were switched
//! back on), at the commit of a cframe chunk update
//! or delete, after a failed mutation, and after a reload. The crash-consistent commit of a
//! cframe file also seals the relocated copy of the old state (`mutate/commit.rs`), with the old
//! state's data part: leaving dead bytes out is what makes that copy's fingerprint hold.
//!
//! Switches: `B2FRAME_FINGERPRINT=0` (or [`set_writes_enabled`]) writes `fpt = 0` and an empty
//! slot, as c-blosc2 does; `B2FRAME_VERIFY_ON_OPEN=1` (or [`set_verify_on_open`]) makes every
//! open check the fingerprint (a mismatch fails the open with `InvalidHeader`).
//!
//! Submodules: `piece` (CRC arithmetic), `coverage` (which bytes count), `slot` (the slot
//! and its verdict) and `tracker` (an open frame's fingerprint). This module holds the
//! constants and the process-wide switches.

#![forbid(unsafe_code)]

mod coverage;
mod slot;
mod tracker;

pub use crate::crc::Piece;
pub use coverage::*;
pub use slot::*;
pub use tracker::*;

use super::header::FrameHeader;
use super::io::Store;
use super::offsets::Locs;
use super::{trailer, Backing, Frame};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};

/// `fpt` of a frame without a fingerprint (what c-blosc2 writes).
pub const TYPE_NONE: u8 = 0;
/// `fpt` of a CRC-32 fingerprint.
pub const TYPE_CRC32: u8 = 1;
/// Bytes of fingerprint storage at the end of the trailer.
pub const SLOT_LEN: usize = 16;
/// Position of the `fpt` byte counted back from the frame end.
pub const TYPE_FROM_END: usize = SLOT_LEN + 1;
/// Environment variable: `0`/`off`/`no`/`false` switches fingerprints off for the process.
pub const ENV_FINGERPRINT: &str = "B2FRAME_FINGERPRINT";
/// Environment variable: `1`/`on`/`yes`/`true` makes every open verify the fingerprint.
pub const ENV_VERIFY_ON_OPEN: &str = "B2FRAME_VERIFY_ON_OPEN";

/// Reads/writes of a byte pass over the data part in blocks of this size.
const PASS_BLOCK: usize = 1 << 22;

// 0: not read from the environment yet, 1: on, 2: off.
static WRITES: AtomicU8 = AtomicU8::new(0);
static VERIFY_ON_OPEN: AtomicU8 = AtomicU8::new(0);

fn switch(cell: &AtomicU8, var: &str, default: bool) -> bool {
    match cell.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let on = parse_switch(crate::env::from_process(var).as_deref(), default);
            // A concurrent setter wins over the environment.
            let _ = cell.compare_exchange(
                0,
                if on { 1 } else { 2 },
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            cell.load(Ordering::Relaxed) == 1
        }
    }
}

fn set_switch(cell: &AtomicU8, var: &str, default: bool, on: bool) -> bool {
    let before = switch(cell, var, default);
    cell.store(if on { 1 } else { 2 }, Ordering::Relaxed);
    before
}

/// An on/off environment value; anything unrecognised (or unset) keeps the default.
pub fn parse_switch(value: Option<&str>, default: bool) -> bool {
    match value.map(|v| v.trim().to_ascii_lowercase()) {
        Some(v) if matches!(v.as_str(), "0" | "off" | "no" | "false") => false,
        Some(v) if matches!(v.as_str(), "1" | "on" | "yes" | "true") => true,
        _ => default,
    }
}

/// Whether frames written from now on get a fingerprint (default on; `B2FRAME_FINGERPRINT`).
pub fn writes_enabled() -> bool {
    switch(&WRITES, ENV_FINGERPRINT, true)
}

/// Switches fingerprint writing on or off for the process; returns the previous setting.
pub fn set_writes_enabled(on: bool) -> bool {
    set_switch(&WRITES, ENV_FINGERPRINT, true, on)
}

/// Whether opens verify fingerprints (default off; `B2FRAME_VERIFY_ON_OPEN`).
pub fn verify_on_open() -> bool {
    switch(&VERIFY_ON_OPEN, ENV_VERIFY_ON_OPEN, false)
}

/// Switches verify-on-open on or off for the process; returns the previous setting.
pub fn set_verify_on_open(on: bool) -> bool {
    set_switch(&VERIFY_ON_OPEN, ENV_VERIFY_ON_OPEN, false, on)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cframe's covered bytes followed by F form a CRC-32 codeword (constant residue), which
    /// is what makes every burst of up to 32 bits across both detectable.
    #[test]
    fn a_sealed_cframe_has_the_crc32_residue() {
        let cp = crate::chunk::CParams::default();
        let mut f = Frame::new_memory(&cp, &crate::chunk::DParams::default()).unwrap();
        let d: Vec<u8> = (0..5000u32).map(|i| (i % 7) as u8).collect();
        f.append_chunk(&crate::chunk::compress_vec(&cp, &d).unwrap())
            .unwrap();
        let b = f.to_cframe().unwrap();
        let n = b.len();
        assert_eq!(b[n - TYPE_FROM_END], TYPE_CRC32);
        assert_eq!(Piece::of(&b[..n - 12]).crc, 0x2144_DF1C);
        let words = Slot::from_tail(&b).unwrap().words();
        assert_eq!(words[0], Piece::of(&b[..n - SLOT_LEN]).crc);
        let hl = f.header().header_len as usize;
        assert_eq!(words[1], Piece::of(&b[..hl]).crc);
        let de = hl + f.header().cbytes as usize;
        assert_eq!(words[2], Piece::of(&b[hl..de]).crc);
        assert_eq!(f.verify_fingerprint().unwrap(), Verdict::Match);
    }

    /// An update or delete learns the data part without the chunk from the chunk and what
    /// follows it (no pass over what precedes it).
    #[test]
    fn a_chunk_splits_the_data_part() {
        let cp = crate::chunk::CParams::default();
        let mut f = Frame::new_memory(&cp, &crate::chunk::DParams::default()).unwrap();
        let chunks: Vec<Vec<u8>> = (0..3u32)
            .map(|k| {
                let d: Vec<u8> = (0..3000u32).map(|i| (i * (k + 3) % 251) as u8).collect();
                crate::chunk::compress_vec(&cp, &d).unwrap()
            })
            .collect();
        for c in &chunks {
            f.append_chunk(c).unwrap();
        }
        let at = |i: usize| f.locs.at(i).stored().expect("stored");
        let (p, s) = f.split_data_at(at(1), false).unwrap();
        assert_eq!((p, s), (Piece::of(&chunks[0]), Piece::of(&chunks[2])));
        let (p, s) = f.split_data_at(at(2), false).unwrap();
        assert_eq!(
            (p, s),
            (
                Piece::of(&[&chunks[0][..], &chunks[1]].concat()),
                Piece::EMPTY
            )
        );
        assert_eq!(f.split_data_at(at(1), true), None, "staged writes");
        // Updates and deletes keep the fingerprint matching.
        f.update_chunk(0, &chunks[2]).unwrap();
        f.delete_chunk(1).unwrap();
        assert_eq!(f.verify_fingerprint().unwrap(), Verdict::Match);
        assert_eq!(
            f.fp.data(),
            Some(Piece::of(&[&chunks[2][..], &chunks[2]].concat()))
        );
    }

    #[test]
    fn switches_parse() {
        for (v, d, want) in [
            (None, true, true),
            (Some("0"), true, false),
            (Some(" OFF "), true, false),
            (Some("false"), true, false),
            (Some("1"), false, true),
            (Some("yes"), false, true),
            (Some("maybe"), false, false),
            (Some(""), true, true),
        ] {
            assert_eq!(parse_switch(v, d), want, "{v:?} {d}");
        }
    }

    #[test]
    fn judge_localises() {
        let t = crate::frame::trailer::to_bytes(&[]).unwrap();
        let mut t = t;
        let (h, d, i) = (
            Piece::of(b"header"),
            Piece::of(b"data"),
            Piece::of(b"index"),
        );
        seal(&mut t, h, d, i);
        let slot = Slot::from_tail(&t).unwrap();
        let tp = Piece::of(&t[..t.len() - SLOT_LEN]);
        assert_eq!(judge(&slot, h, Some(d), i, tp), Verdict::Match);
        let x = Piece::of(b"hEader");
        assert_eq!(
            judge(&slot, x, Some(d), i, tp),
            Verdict::Mismatch(vec![Region::Header])
        );
        assert_eq!(
            judge(&slot, h, Some(Piece::of(b"dada")), i, tp),
            Verdict::Mismatch(vec![Region::Data])
        );
        assert_eq!(
            judge(&slot, h, None, i, tp),
            Verdict::Mismatch(vec![Region::Data])
        );
        assert_eq!(
            judge(&slot, h, Some(d), Piece::of(b"indeX"), tp),
            Verdict::Mismatch(vec![Region::Index])
        );
        assert_eq!(
            judge(&slot, h, Some(d), i, Piece::of(b"x")),
            Verdict::Mismatch(vec![Region::Trailer])
        );
        let mut s2 = slot;
        s2.bytes[9] ^= 1;
        assert_eq!(
            judge(&s2, h, Some(d), i, tp),
            Verdict::Mismatch(vec![Region::Slot])
        );
        let mut s0 = slot;
        s0.fpt = 0;
        assert_eq!(judge(&s0, h, Some(d), i, tp), Verdict::DamagedType);
        s0.fpt = 3;
        assert_eq!(judge(&s0, h, Some(d), i, tp), Verdict::Unsupported(3));
        let empty = Slot {
            fpt: 0,
            bytes: [0; 16],
        };
        assert_eq!(judge(&empty, h, Some(d), i, tp), Verdict::Unfingerprinted);
        // Only the fingerprint word (another writer): checked as a whole.
        let mut only = slot;
        only.bytes[4..].fill(0);
        assert_eq!(judge(&only, h, Some(d), i, tp), Verdict::Match);
        assert_eq!(judge(&only, x, Some(d), i, tp), Verdict::Mismatch(vec![]));
    }
}
