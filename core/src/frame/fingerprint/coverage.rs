//! What a fingerprint covers: the length of a stored chunk as the fingerprint counts it, the
//! index part, the live byte ranges of a data section (dead bytes left out) and the readers
//! that hash them from a store, a buffer or a buffer over a store.

#![forbid(unsafe_code)]

use super::*;

/// Reads `buf.len()` bytes at a position of the data section (relative to its start).
pub(crate) type SectionRead<'a> = dyn FnMut(u64, &mut [u8]) -> Result<()> + 'a;

/// How many bytes of a chunk's header fix its length for the fingerprint (`cbytes` is the
/// little-endian `i32` at bytes 12..16).
pub(super) const CHUNK_LEN_FIELD_END: usize = 16;

/// The length of the chunk whose header starts with `head` (at least 16 bytes): its `cbytes`,
/// taken as at least 16.
pub(crate) fn covered_chunk_len(head: &[u8]) -> u64 {
    let c = i32::from_le_bytes([head[12], head[13], head[14], head[15]]);
    c.max(CHUNK_LEN_FIELD_END as i32) as u64
}

/// The length of a frame's index part: the offsets index chunk at the start of the `region`
/// between the data section and the trailer (`head`: its first bytes, up to 16). Its `cbytes`
/// when that lies in `16..=region_len`, else the whole region (docs/format/fingerprint.md).
pub fn index_part_len(head: &[u8], region_len: u64) -> u64 {
    if region_len >= CHUNK_LEN_FIELD_END as u64 && head.len() >= CHUNK_LEN_FIELD_END {
        let c = i32::from_le_bytes([head[12], head[13], head[14], head[15]]);
        if c >= CHUNK_LEN_FIELD_END as i32 && c as u64 <= region_len {
            return c as u64;
        }
    }
    region_len
}

/// The byte ranges of a cframe's data section (of `section_len` bytes, positions relative to
/// its start) that its fingerprint covers: the bytes of every stored chunk (`[offset, offset +
/// cbytes)` clipped to the section; a chunk whose 16-byte header does not fit covers the rest
/// of the section), each byte once, in file order; dead bytes are left out. Sorted, disjoint.
pub(crate) fn live_ranges(
    stored: impl IntoIterator<Item = u64>,
    section_len: u64,
    read: &mut SectionRead<'_>,
) -> Result<Vec<(u64, u64)>> {
    let mut r = Vec::new();
    for v in stored {
        if v >= section_len {
            continue;
        }
        let end = if section_len - v >= CHUNK_LEN_FIELD_END as u64 {
            let mut h = [0u8; CHUNK_LEN_FIELD_END];
            read(v, &mut h)?;
            v.saturating_add(covered_chunk_len(&h)).min(section_len)
        } else {
            section_len
        };
        r.push((v, end));
    }
    r.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(r.len());
    for (s, e) in r {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    Ok(out)
}

/// The total length of `ranges`.
pub(crate) fn ranges_len(ranges: &[(u64, u64)]) -> u64 {
    ranges.iter().map(|(s, e)| e - s).sum()
}

/// The piece of the bytes of `ranges`, in order, read in blocks.
pub(crate) fn piece_of_ranges(ranges: &[(u64, u64)], read: &mut SectionRead<'_>) -> Result<Piece> {
    let mut p = Piece::EMPTY;
    let mut buf = Vec::new();
    for &(s, e) in ranges {
        let mut at = s;
        while at < e {
            let n = (e - at).min(PASS_BLOCK as u64) as usize;
            buf.resize(n, 0);
            read(at, &mut buf[..n])?;
            p.extend(&buf[..n]);
            at += n as u64;
        }
    }
    Ok(p)
}

/// The piece of a cframe data section's covered bytes, `read` giving its bytes.
pub(crate) fn data_piece(
    stored: impl IntoIterator<Item = u64>,
    section_len: u64,
    read: &mut SectionRead<'_>,
) -> Result<Piece> {
    let ranges = live_ranges(stored, section_len, read)?;
    piece_of_ranges(&ranges, read)
}

/// A reader of a stored frame's data section (starting at `base` of `store`) as it will be
/// once the staged `writes` (frame positions, applied in order) are made.
pub(crate) fn overlay_reader<'a>(
    store: &'a Store,
    base: u64,
    writes: &'a [(u64, Vec<u8>)],
) -> impl FnMut(u64, &mut [u8]) -> Result<()> + 'a {
    move |pos: u64, dst: &mut [u8]| {
        let pos = base + pos;
        let end = pos + dst.len() as u64;
        let have = store.available()?.clamp(pos, end);
        dst.fill(0);
        if have > pos {
            store.read_into(pos, &mut dst[..(have - pos) as usize])?;
        }
        for (p, d) in writes {
            let (s, e) = ((*p).max(pos), (p + d.len() as u64).min(end));
            if s < e {
                dst[(s - pos) as usize..(e - pos) as usize]
                    .copy_from_slice(&d[(s - p) as usize..(e - p) as usize]);
            }
        }
        Ok(())
    }
}

/// A reader of `store`'s bytes from `base` (a stored frame's data section).
pub(crate) fn store_reader(
    store: &Store,
    base: u64,
) -> impl FnMut(u64, &mut [u8]) -> Result<()> + '_ {
    move |pos: u64, dst: &mut [u8]| store.read_into(base + pos, dst)
}

/// A reader of the bytes of `buf` from `base`.
pub(super) fn slice_reader(
    buf: &[u8],
    base: usize,
) -> impl FnMut(u64, &mut [u8]) -> Result<()> + '_ {
    move |pos: u64, dst: &mut [u8]| {
        let s = base
            .checked_add(usize::try_from(pos).map_err(|_| Error::ReadBuffer)?)
            .ok_or(Error::ReadBuffer)?;
        let src = buf.get(s..s + dst.len()).ok_or(Error::ReadBuffer)?;
        dst.copy_from_slice(src);
        Ok(())
    }
}
