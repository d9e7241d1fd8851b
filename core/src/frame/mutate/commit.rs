//! The crash-safe commit of a cframe stored in a file (docs/durability.md).
//!
//! The frame on disk always is the state its header describes: the header's `cbytes` places the
//! offsets index and its `frame_len` the trailer, and bytes past `frame_len` are ignored by
//! both libraries. A commit therefore never overwrites a byte that the committed state still
//! uses, except through the final header write:
//!
//! 1. *Relocation* (only when the new state's bytes would overwrite committed ones other than
//!    the header): the part of the old state that is in the way (its trailer, its index, and for
//!    an update the data after the updated chunk) is copied past everything the new state
//!    writes, and a header describing the *same* old state at that place is written.
//! 2. The new state's payloads, index and trailer are written where the old state no longer
//!    looks (dead space or past its end), then its header, then the file is cut after it.
//!
//! Each header write changes only the bytes that differ, all inside the header's first 70
//! bytes for the steps above. In durable mode every step is followed by a barrier (`fdatasync`).
//! Frames whose whole new state must replace the old one in place (the vlmetalayers of a frame
//! without chunks, whose trailer must follow the header, or a header that changes size) are
//! written with a single write of the differing span.

use super::super::fingerprint::{self, Piece};
use super::super::header::FrameHeader;
use super::super::io::Store;
use super::super::offsets::{self, LocsRef};
use super::super::trailer;
use super::undo::Undo;
use crate::error::{Error, Result};

/// The committed state a transaction started from.
pub(in crate::frame) struct Old<'a> {
    pub header: &'a FrameHeader,
    pub locs: LocsRef<'a>,
    pub vlmeta: &'a [(String, Vec<u8>)],
}

/// Writes the differing span of `new` over the header bytes `disk` (as stored now).
fn write_header(store: &mut Store, disk: &mut Vec<u8>, new: &[u8]) -> Result<()> {
    let n = disk.len().max(new.len());
    let byte = |v: &[u8], i: usize| v.get(i).copied();
    let first = (0..n).find(|&i| byte(disk, i) != byte(new, i));
    if let Some(first) = first {
        let last = (0..n)
            .rev()
            .find(|&i| byte(disk, i) != byte(new, i))
            .unwrap_or(first);
        let end = (last + 1).min(new.len());
        if first < end {
            store.write_at(first as u64, &new[first..end])?;
        }
    }
    *disk = new.to_vec();
    Ok(())
}

/// Commits the new state (`new`, encoded as `hbytes`, with `frame_len` set) whose other bytes
/// are `writes` (positions from the frame start) to a cframe file holding `old`. `old_data`:
/// the fingerprint's data part of `old`, with which a relocated copy of it is sealed (`None`:
/// written unfingerprinted). The relocation keeps every covered byte of `old` and adds only
/// dead bytes, so the data part is the same (docs/format/fingerprint.md).
pub(in crate::frame) fn commit(
    store: &mut Store,
    old: &Old<'_>,
    new: &FrameHeader,
    hbytes: &[u8],
    mut writes: Vec<(u64, Vec<u8>)>,
    undo: &mut Undo,
    old_data: Option<Piece>,
) -> Result<()> {
    writes.retain(|(_, d)| !d.is_empty());
    let hl_o = u64::from(old.header.header_len);
    let fl_o = old.header.frame_len;
    // A frame being created has no header on disk yet.
    let mut disk = store.read_at(0, hl_o.min(store.available()?))?;
    let old_has_data = old.header.nbytes > 0 && !old.locs.is_empty();
    let same_header_len = hbytes.len() as u64 == hl_o;
    let low = writes.iter().map(|(p, _)| *p).min().unwrap_or(u64::MAX);
    let high = writes
        .iter()
        .map(|(p, d)| p + d.len() as u64)
        .max()
        .unwrap_or(0);

    if low < fl_o && !(old_has_data && same_header_len && low >= hl_o) {
        return commit_in_place(store, fl_o, new, hbytes, &writes);
    }
    if low < fl_o {
        relocate(store, old, &mut disk, low, high.max(fl_o), undo, old_data)?;
    }
    for (pos, data) in &writes {
        store.write_at(*pos, data)?;
    }
    store.barrier()?;
    write_header(store, &mut disk, hbytes)?;
    store.barrier()?;
    store.truncate(new.frame_len)
}

/// Step 1: moves `[low, frame_len)` of the old state to `at` (past everything the new state
/// writes) and commits the old state there.
fn relocate(
    store: &mut Store,
    old: &Old<'_>,
    disk: &mut Vec<u8>,
    low: u64,
    at: u64,
    undo: &mut Undo,
    old_data: Option<Piece>,
) -> Result<()> {
    let hl = u64::from(old.header.header_len);
    let data_end = hl + old.header.cbytes as u64;
    let fl = old.header.frame_len;
    let tlen = fl
        .checked_sub(trailer_start(store, fl)?)
        .ok_or(Error::InvalidHeader)?;
    let index_len = fl - tlen - data_end;
    let mut header = old.header.clone();
    let mut locs = None;
    let mut trailer_bytes = trailer::to_bytes(old.vlmeta)?;
    // The old state's index chunk as the copy holds it, and where the copy's trailer goes.
    let (index, index_at) = if low >= data_end + index_len {
        // Only the trailer is in the way: a copy past the new state, the index stays.
        header.frame_len = at + trailer_bytes.len() as u64;
        (store.read_at(data_end, index_len)?, None)
    } else {
        // The index (and for updates the data after `low`) moves too.
        let low = low.min(data_end);
        let shift = at - low;
        const PIECE: u64 = 1 << 20;
        let mut done = 0;
        while low + done < data_end {
            let n = PIECE.min(data_end - low - done);
            let buf = store.read_at(low + done, n)?;
            store.write_at(at + done, &buf)?;
            done += n;
        }
        // Entries that do not move (all of them when no stored chunk lies past `low`, e.g. a
        // `fill_special` frame's run): the old index chunk is copied as it is, not encoded
        // again (an index of 100 million special entries is a 40-byte chunk, not 4 MB).
        let moves = old.locs.stored().any(|v| hl + v >= low);
        let index = if low == data_end || !moves {
            store.read_at(data_end, index_len)?
        } else {
            let mut shifted = old.locs.to_locs();
            shifted.map_stored(|v| if hl + v >= low { v + shift } else { v });
            let index = offsets::encode_index(&shifted)?;
            locs = Some(shifted);
            index
        };
        header.cbytes =
            i64::try_from(old.header.cbytes as u64 + shift).map_err(|_| Error::TwoGbLimit)?;
        let index_at = hl + header.cbytes as u64;
        header.frame_len = index_at + index.len() as u64 + trailer_bytes.len() as u64;
        (index, Some(index_at))
    };
    let hbytes = header.to_bytes()?;
    if hbytes.len() as u64 != hl {
        return Err(Error::Failure);
    }
    // The copy holds the same covered chunk bytes in the same order (the bytes it leaves
    // behind are dead), so it is sealed with the old state's data part.
    if let Some(data) = old_data {
        let ilen = fingerprint::index_part_len(&index, index.len() as u64) as usize;
        fingerprint::seal(
            &mut trailer_bytes,
            Piece::of(&hbytes),
            data,
            Piece::of(&index[..ilen]),
        );
    }
    match index_at {
        None => store.write_at(at, &trailer_bytes)?,
        Some(index_at) => {
            store.write_at(index_at, &index)?;
            store.write_at(index_at + index.len() as u64, &trailer_bytes)?;
        }
    }
    store.barrier()?;
    write_header(store, disk, &hbytes)?;
    store.barrier()?;
    undo.relocated = Some((header, locs));
    Ok(())
}

/// Where the trailer of a stored frame of length `frame_len` starts.
fn trailer_start(store: &Store, frame_len: u64) -> Result<u64> {
    let window_len = super::super::header::TRAILER_MINLEN as u64;
    let window = store.read_at(frame_len - window_len, window_len)?;
    let tlen = trailer::trailer_len_from_window(&window, frame_len)?;
    Ok(frame_len - u64::from(tlen))
}

/// The whole new frame replaces the old one (`old_len` bytes) in place: the differing bytes
/// past the old frame first, then one write of the differing span inside it (atomic when it
/// stays inside one 512-byte sector of the file; see docs/durability.md).
fn commit_in_place(
    store: &mut Store,
    old_len: u64,
    new: &FrameHeader,
    hbytes: &[u8],
    writes: &[(u64, Vec<u8>)],
) -> Result<()> {
    let end = new.frame_len;
    let n = usize::try_from(end).map_err(|_| Error::WriteBuffer)?;
    let have = store.available()?.min(end);
    let disk = store.read_at(0, have)?;
    let mut image = disk.clone();
    image.resize(n, 0);
    for (pos, data) in writes {
        let p = *pos as usize;
        let e = (p + data.len()).min(n);
        if p < e {
            image[p..e].copy_from_slice(&data[..e - p]);
        }
    }
    image[..hbytes.len()].copy_from_slice(hbytes);
    let differs = |i: usize| disk.get(i) != Some(&image[i]);
    if let Some(first) = (0..n).find(|&i| differs(i)) {
        let last = (0..n).rev().find(|&i| differs(i)).unwrap_or(first);
        let cut = usize::try_from(old_len)
            .unwrap_or(usize::MAX)
            .clamp(first, last + 1);
        if cut <= last {
            store.write_at(cut as u64, &image[cut..=last])?;
            store.barrier()?;
        }
        if first < cut {
            store.write_at(first as u64, &image[first..cut])?;
        }
    }
    store.barrier()?;
    store.truncate(end)
}
