//! Reading the contiguous layout `header | data section (cbytes) | offsets index | trailer`
//! (also the sframe index file, which has no data section). Only the header, trailer and index
//! are read at open; every length is validated before it is used to read or allocate.

use super::chunkinfo::{ChunkInfo, EXTENDED_HEADER_LEN, MIN_HEADER_LEN};
use super::header::{self, FrameHeader, FrameType, HEADER_MINLEN, TRAILER_MINLEN};
use super::io::Store;
use super::offsets::{self, Locs, LocsRef};
use super::trailer;
use crate::error::{Error, Result};
use std::borrow::Cow;

/// The frame extent of an in-memory buffer: `(frame_len, header_len)`, with
/// `87 + 25 <= frame_len <= buf.len()`.
pub fn frame_extent(buf: &[u8]) -> Result<(usize, usize)> {
    let (hl, fl) = header::peek_lengths(buf)?;
    check_frame_len(fl, buf.len() as u64)?;
    Ok((fl as usize, hl as usize))
}

fn check_frame_len(frame_len: u64, available: u64) -> Result<()> {
    check_min_frame_len(frame_len)?;
    if frame_len > available {
        return Err(Error::ReadBuffer);
    }
    Ok(())
}

fn check_min_frame_len(frame_len: u64) -> Result<()> {
    if frame_len < (HEADER_MINLEN + TRAILER_MINLEN) as u64 {
        return Err(Error::InvalidHeader);
    }
    Ok(())
}

/// Validated contents of a frame (or sframe index file): header, chunk locations, vlmetalayers.
pub type FrameParts = (FrameHeader, Locs, Vec<(String, Vec<u8>)>);

/// What [`read_frame`] reads a frame from: a [`Store`], or a frame being built whose chunk data
/// is not materialised ([`Skeleton`]).
pub trait FrameBytes {
    /// `len` bytes at frame position `pos`, or an error when they are not all there.
    fn read_at(&self, pos: u64, len: u64) -> Result<Vec<u8>>;
    /// Whether the frame's bytes reach `end`.
    fn holds(&self, end: u64) -> Result<bool>;
}

impl FrameBytes for Store {
    fn read_at(&self, pos: u64, len: u64) -> Result<Vec<u8>> {
        Store::read_at(self, pos, len)
    }
    fn holds(&self, end: u64) -> Result<bool> {
        Store::holds(self, end)
    }
}

impl FrameBytes for [u8] {
    fn read_at(&self, pos: u64, len: u64) -> Result<Vec<u8>> {
        let end = pos.checked_add(len).ok_or(Error::ReadBuffer)?;
        let (pos, end) = (
            usize::try_from(pos).map_err(|_| Error::ReadBuffer)?,
            usize::try_from(end).map_err(|_| Error::ReadBuffer)?,
        );
        self.get(pos..end)
            .map(<[u8]>::to_vec)
            .ok_or(Error::ReadBuffer)
    }
    fn holds(&self, end: u64) -> Result<bool> {
        Ok(end <= self.len() as u64)
    }
}

/// The chunk stored at data offset `at` of the in-memory frame `buf` (whose header is
/// `header`), checked as [`fetch_chunk`] checks it.
pub fn lend_chunk<'a>(buf: &'a [u8], header: &FrameHeader, at: u64) -> Result<&'a [u8]> {
    let cbytes = header.cbytes as u64;
    let room = cbytes.checked_sub(at).ok_or(Error::ReadBuffer)?;
    if room < MIN_HEADER_LEN as u64 {
        return Err(Error::ReadBuffer);
    }
    let pos = u64::from(header.header_len) + at;
    let slice = |len: u64| -> Result<&'a [u8]> {
        let lo = usize::try_from(pos).map_err(|_| Error::ReadBuffer)?;
        let hi = usize::try_from(pos + len).map_err(|_| Error::ReadBuffer)?;
        buf.get(lo..hi).ok_or(Error::ReadBuffer)
    };
    let len = checked_len(slice(room.min(EXTENDED_HEADER_LEN as u64))?, room)?;
    slice(len)
}

/// The nbytes of a chunk stored as a special offset at index `i` of a frame of `nchunks`
/// chunks: the chunksize, or the remainder for the last chunk. A variable-chunksize frame does
/// not record it (c-blosc2 3.3.5 reads such chunks wrongly): `InvalidHeader`.
pub fn special_nbytes(header: &FrameHeader, nchunks: i64, i: i64) -> Result<i32> {
    let cs = header.chunksize;
    if cs <= 0 {
        return Err(Error::InvalidHeader);
    }
    let rest = header.nbytes % cs as i64;
    if i == nchunks - 1 && rest != 0 {
        Ok(rest as i32)
    } else {
        Ok(cs)
    }
}

/// A frame of `len` bytes known by its first bytes (`head`: the header) and its last ones
/// (`tail`: offsets index and trailer); the data section between them reads as zeros. Lets a
/// frame writer check what it is about to write with the reader's own validation, without
/// holding the chunk data.
pub struct Skeleton<'a> {
    /// The header.
    pub head: &'a [u8],
    /// Offsets index and trailer.
    pub tail: &'a [u8],
    /// The whole frame's length.
    pub len: u64,
}

impl FrameBytes for Skeleton<'_> {
    fn read_at(&self, pos: u64, len: u64) -> Result<Vec<u8>> {
        let end = pos.checked_add(len).ok_or(Error::ReadBuffer)?;
        if end > self.len {
            return Err(Error::ReadBuffer);
        }
        let n = usize::try_from(len).map_err(|_| Error::ReadBuffer)?;
        let mut out = vec![0u8; n];
        let tail_at = self.len - self.tail.len() as u64;
        for (part, at) in [(self.head, 0u64), (self.tail, tail_at)] {
            let (lo, hi) = (pos.max(at), end.min(at + part.len() as u64));
            if lo < hi {
                out[(lo - pos) as usize..(hi - pos) as usize]
                    .copy_from_slice(&part[(lo - at) as usize..(hi - at) as usize]);
            }
        }
        Ok(out)
    }
    fn holds(&self, end: u64) -> Result<bool> {
        Ok(end <= self.len)
    }
}

/// Reads and validates header, trailer and offsets index from `store`.
pub fn read_frame<S: FrameBytes + ?Sized>(store: &S, expect: FrameType) -> Result<FrameParts> {
    let fixed = store.read_at(0, HEADER_MINLEN as u64)?;
    let (header_len, frame_len) = header::peek_lengths(&fixed)?;
    check_min_frame_len(frame_len)?;
    if !store.holds(frame_len)? {
        return Err(Error::ReadBuffer);
    }
    let hbuf = store.read_at(0, u64::from(header_len))?;
    let header = FrameHeader::parse(&hbuf)?;
    if header.frame_type != expect {
        return Err(Error::FrameType);
    }
    let window = store.read_at(frame_len - TRAILER_MINLEN as u64, TRAILER_MINLEN as u64)?;
    let trailer_len = trailer::trailer_len_from_window(&window, frame_len)?;
    let trailer_start = frame_len - u64::from(trailer_len);
    if trailer_start < u64::from(header_len) {
        return Err(Error::InvalidHeader);
    }
    let tbuf = store.read_at(trailer_start, u64::from(trailer_len))?;
    let vlmeta = trailer::parse(&tbuf)?;

    let index_pos = match expect {
        FrameType::Contiguous => u64::from(header_len)
            .checked_add(header.cbytes as u64)
            .ok_or(Error::InvalidHeader)?,
        FrameType::Sparse => u64::from(header_len),
    };
    // The data section must lie inside the frame, except in a frame without chunks: there
    // the trailer follows the header whatever `cbytes` says (c-blosc2 keeps the cbytes of
    // deleted chunks and writes `header | trailer`).
    if index_pos > trailer_start && header.nbytes != 0 {
        return Err(Error::InvalidHeader);
    }
    let locs = match header.fixed_nchunks()? {
        Some(0) => Locs::new(),
        fixed => {
            let region = store.read_at(index_pos, trailer_start - index_pos)?;
            // Bound the index size before expanding it: exactly nchunks entries for fixed
            // chunksizes; for variable ones each entry needs a byte of nbytes (special) or 16
            // bytes of data section (stored).
            let index_nbytes = i64::from(ChunkInfo::parse(&region)?.nbytes);
            let max_entries = match fixed {
                Some(n) => n,
                None => header
                    .nbytes
                    .saturating_add(header.cbytes / MIN_HEADER_LEN as i64)
                    .min(header::MAX_NCHUNKS),
            };
            if index_nbytes % 8 != 0
                || index_nbytes / 8 > max_entries
                || (fixed.is_some() && index_nbytes / 8 != max_entries)
            {
                return Err(Error::Data);
            }
            let locs = offsets::decode_index(&region, max_stored(&header))?;
            if let Some(n) = fixed {
                if locs.len() as i64 != n {
                    return Err(Error::Data);
                }
            } else if locs.len() as i64 > header::MAX_NCHUNKS {
                return Err(Error::Data);
            }
            locs
        }
    };
    Ok((header, locs, vlmeta))
}

/// The largest readable stored location: cframe offsets `<= cbytes - 32` (none when the data
/// section is shorter than a chunk header), sframe ids within the `%08X` file-name space.
pub fn max_stored(header: &FrameHeader) -> Option<u64> {
    match header.frame_type {
        FrameType::Contiguous => (header.cbytes as u64).checked_sub(EXTENDED_HEADER_LEN as u64),
        FrameType::Sparse => Some(u64::from(u32::MAX)),
    }
}

/// Every stored location must be readable (see [`max_stored`]).
pub fn validate_locs(locs: LocsRef<'_>, header: &FrameHeader) -> Result<()> {
    validate_locs_from(locs, 0, header)
}

/// [`validate_locs`] for the entries from `start` on.
pub fn validate_locs_from(locs: LocsRef<'_>, start: usize, header: &FrameHeader) -> Result<()> {
    let limit = max_stored(header);
    for v in locs.stored_range(start, locs.len()) {
        if limit.is_none_or(|m| v > m) {
            return Err(Error::Data);
        }
    }
    Ok(())
}

/// Header fields of the chunk stored at data offset `at`, its cbytes checked against the data
/// section (reads at most 32 bytes).
pub fn read_chunk_info(store: &Store, header: &FrameHeader, at: u64) -> Result<ChunkInfo> {
    let cbytes = header.cbytes as u64;
    let room = cbytes.checked_sub(at).ok_or(Error::ReadBuffer)?;
    if room < MIN_HEADER_LEN as u64 {
        return Err(Error::ReadBuffer);
    }
    let pos = u64::from(header.header_len) + at;
    let head = store.read_at(pos, room.min(EXTENDED_HEADER_LEN as u64))?;
    let info = ChunkInfo::parse(&head)?;
    if info.cbytes as u64 > room {
        return Err(Error::ReadBuffer);
    }
    Ok(info)
}

/// A chunk as [`fetch_chunk`] found it.
pub enum Fetched<'a> {
    /// Borrowed from an in-memory frame.
    Lent(&'a [u8]),
    /// The first `n` bytes of the caller's buffer.
    Read(usize),
}

impl<'a> Fetched<'a> {
    /// The chunk's bytes: the lent ones, or the first `n` of `buf` (the buffer the chunk was
    /// fetched with).
    pub fn bytes<'b>(&self, buf: &'b [u8]) -> &'b [u8]
    where
        'a: 'b,
    {
        match *self {
            Fetched::Lent(s) => s,
            Fetched::Read(n) => &buf[..n],
        }
    }
}

/// Reads the chunk stored at data offset `at`, re-validating its cbytes against the data
/// section.
pub fn read_chunk<'a>(store: &'a Store, header: &FrameHeader, at: u64) -> Result<Cow<'a, [u8]>> {
    let mut buf = Vec::new();
    Ok(match fetch_chunk(store, header, at, 0, &mut buf)? {
        Fetched::Lent(s) => Cow::Borrowed(s),
        Fetched::Read(n) => {
            buf.truncate(n);
            Cow::Owned(buf)
        }
    })
}

/// [`read_chunk`] into a reusable buffer (see [`super::io::sized`]). `hint` is how many bytes
/// the chunk probably spans (0: unknown): when it covers the chunk's header, the header and
/// payload come in one read of `hint` bytes (capped by the data section), and only a chunk
/// longer than that needs a second read for its rest; without a hint the header is read
/// first. A wrong hint costs a read, never correctness.
pub fn fetch_chunk<'a>(
    store: &'a Store,
    header: &FrameHeader,
    at: u64,
    hint: u64,
    buf: &mut Vec<u8>,
) -> Result<Fetched<'a>> {
    let cbytes = header.cbytes as u64;
    let room = cbytes.checked_sub(at).ok_or(Error::ReadBuffer)?;
    if room < MIN_HEADER_LEN as u64 {
        return Err(Error::ReadBuffer);
    }
    let pos = u64::from(header.header_len) + at;
    let head_len = room.min(EXTENDED_HEADER_LEN as u64);
    if let Some(head) = store.slice(pos, head_len) {
        let len = checked_len(head, room)?;
        return store
            .slice(pos, len)
            .map(Fetched::Lent)
            .ok_or(Error::ReadBuffer);
    }
    let first = if hint >= head_len {
        hint.min(room)
    } else {
        head_len
    };
    let first_n = usize::try_from(first).map_err(|_| Error::ReadBuffer)?;
    store.read_into(pos, super::io::sized(buf, first_n))?;
    let len = checked_len(&buf[..head_len as usize], room)?;
    let n = usize::try_from(len).map_err(|_| Error::ReadBuffer)?;
    if n > first_n {
        store.read_into(pos + first, &mut super::io::sized(buf, n)[first_n..])?;
    }
    Ok(Fetched::Read(n))
}

/// The cbytes of the chunk whose header starts `head`, checked against the `room` left in the
/// data section.
fn checked_len(head: &[u8], room: u64) -> Result<u64> {
    let info = ChunkInfo::parse(head)?;
    let len = info.cbytes as u64;
    if len > room {
        return Err(Error::ReadBuffer);
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::{CParams, DParams};
    use crate::frame::{Backing, Frame};

    #[test]
    fn fetch_chunk_reads_the_same_bytes_for_any_hint() {
        // Removed with everything in it when `dir` is dropped.
        let dir = crate::test_util::temp_dir("b2f-fetch-");
        let path = dir.path().join("f.b2frame");
        let cp = CParams {
            typesize: 4,
            ..CParams::default()
        };
        let mut f = Frame::new_file(&path, &cp, &DParams::default()).unwrap();
        for k in 1..4u32 {
            let d: Vec<u8> = (0..4000u32).flat_map(|i| (i * k).to_le_bytes()).collect();
            f.append_chunk(&crate::chunk::compress_vec(&cp, &d).unwrap())
                .unwrap();
        }
        let mem = Frame::from_bytes(&f.to_cframe().unwrap()).unwrap();
        for frame in [&f, &mem] {
            let Backing::Contiguous(store) = frame.backing() else {
                unreachable!()
            };
            let mut buf = vec![0xEE; 1 << 16];
            for (i, loc) in frame.locs().iter().enumerate() {
                let Some(at) = loc.stored() else {
                    panic!("chunk {i} is stored")
                };
                let c = frame.chunk(i as i64).unwrap().into_owned();
                let n = c.len() as u64;
                assert!(n > 64, "{n}");
                for hint in [0, 1, 16, 31, 32, 33, n - 1, n, n + 1, n + 100, u64::MAX] {
                    let got = match fetch_chunk(store, frame.header(), at, hint, &mut buf) {
                        Ok(Fetched::Lent(s)) => s.to_vec(),
                        Ok(Fetched::Read(k)) => buf[..k].to_vec(),
                        Err(e) => panic!("hint {hint}: {e:?}"),
                    };
                    assert_eq!(got, c, "chunk {i} hint {hint}");
                }
            }
            // Past the data section, or too close to its end for a header: no read.
            let end = frame.header().cbytes as u64;
            let mut buf = Vec::new();
            for at in [end, end - 8, u64::MAX] {
                assert!(fetch_chunk(store, frame.header(), at, 64, &mut buf).is_err());
            }
        }
    }
}
