//! Reading an index chunk: decompressing it (memcpyed and SPECIAL_VALUE index chunks
//! directly) and decoding its entries in one pass, each stored one checked against the bound
//! on what the frame can hold.

#![forbid(unsafe_code)]

use super::*;

/// Decompresses an index chunk (exactly `chunk.len()` bytes, already bounded by the caller).
///
/// Memcpyed and SPECIAL_VALUE index chunks (what c-blosc2 writes for ≤ 3 chunks and for
/// `fill_special`) are read here directly; anything else goes through [`chunk::decompress_vec`].
pub fn decompress_index(chunk: &[u8]) -> Result<Vec<u8>> {
    let info = crate::frame::chunkinfo::ChunkInfo::parse(chunk)?;
    if info.cbytes as usize > chunk.len() {
        return Err(Error::ReadBuffer);
    }
    let extended = chunk[2] & 0x05 == 0x05;
    let nbytes = info.nbytes as usize;
    if extended && info.special == special::VALUE {
        let value = &chunk[EXTENDED_HEADER_LEN..info.cbytes as usize];
        if value.is_empty() || !nbytes.is_multiple_of(value.len()) {
            return Err(Error::Data);
        }
        return Ok(value.repeat(nbytes / value.len()));
    }
    if extended && info.special == special::ZERO {
        return Ok(vec![0; nbytes]);
    }
    if extended && info.special == special::NONE && chunk[2] & 0x02 != 0 {
        if info.cbytes as usize != nbytes + EXTENDED_HEADER_LEN {
            return Err(Error::Data);
        }
        return Ok(chunk[EXTENDED_HEADER_LEN..info.cbytes as usize].to_vec());
    }
    let out = chunk::decompress_vec(&chunk[..info.cbytes as usize])?;
    if out.len() != nbytes {
        return Err(Error::Data);
    }
    Ok(out)
}

/// Decodes and bound-checks an index chunk (exactly `chunk.len()` bytes, already bounded by
/// the caller) in one pass: stored entries above `max_stored` (or any stored entry when it is
/// `None`) are `Data` errors.
///
/// The entries' memory is bounded by what the frame can hold: stored entries name distinct
/// chunks of at least 16 bytes starting at most at `max_stored`, so an index with more than
/// `max_stored / 16 + 2` of them ([`stored_entries_bound`]), or a one-entry-repeated index
/// (ZERO, VALUE) whose entry is a stored location named more than once, is a `Data` error
/// before it is expanded (no writer names a chunk twice; a few header bytes must not make the
/// open reserve gigabytes). Special entries are bounded by the caller (the header's chunk count).
///
/// This is the open path of every frame, so it avoids intermediate copies: memcpyed indexes are
/// decoded in place, and compressed ones block by block through one block-sized buffer instead
/// of a zero-filled buffer for the whole index. Unusual layouts (small or unaligned blocks,
/// dictionaries, special values) take [`decompress_index`].
///
/// Runs of one special entry stay runs ([`Locs`]): a repeated-entry index (what `fill_special`
/// writes) is one run whatever its length, and a compressed index's blocks of one special entry
/// extend a run, so that a frame of millions of special chunks opens in a few kilobytes.
pub fn decode_index(chunk: &[u8], max_stored: Option<u64>) -> Result<Locs> {
    let h = chunk::header::ChunkHeader::read(chunk, true)?;
    if h.cbytes < 0 || h.cbytes as usize > chunk.len() {
        return Err(Error::ReadBuffer);
    }
    let chunk = &chunk[..h.cbytes as usize];
    let nbytes = h.nbytes.max(0) as usize;
    if !nbytes.is_multiple_of(8) {
        return Err(Error::Data);
    }
    let mut budget = stored_entries_bound(max_stored);
    let extended = chunk[2] & 0x05 == 0x05;
    let special = crate::frame::chunkinfo::ChunkInfo::parse(chunk)?.special;
    if extended && special == special::NONE && chunk[2] & 0x02 != 0 {
        if chunk.len() != nbytes + EXTENDED_HEADER_LEN {
            return Err(Error::Data);
        }
        let mut out = Vec::with_capacity(nbytes / 8);
        push_entries(
            &chunk[EXTENDED_HEADER_LEN..],
            max_stored,
            &mut budget,
            &mut out,
        )?;
        return Ok(out.into());
    }
    // One entry repeated: a ZERO index, or a VALUE index of one 8-byte entry, which is how
    // c-blosc2's `fill_special` stores frames of millions of special chunks (a 221-byte file
    // can hold 16.7 million). Checked once and repeated, instead of expanding the raw index.
    if extended && nbytes > 0 {
        let unit: Option<Vec<u8>> = match special {
            special::ZERO => Some(vec![0; 8]),
            special::VALUE => chunk.get(EXTENDED_HEADER_LEN..).and_then(|v| {
                // The value repeats; whole entries repeat every lcm(len, 8) bytes.
                let l = v.len();
                let per = (1..=8).find(|k| (k * l).is_multiple_of(8))?;
                (l > 0 && nbytes.is_multiple_of(l) && nbytes.is_multiple_of(per * l))
                    .then(|| v.repeat(per))
            }),
            _ => None,
        };
        if let Some(unit) = unit {
            let mut first = Vec::with_capacity(unit.len() / 8);
            push_entries(&unit, max_stored, &mut budget, &mut first)?;
            let repeated = nbytes / unit.len();
            if repeated > 1 && first.iter().any(|l| l.is_stored()) {
                // A stored location repeated. No `fill_special` writes one, but an index whose
                // entries are all equal compresses to such a VALUE chunk, and a frame whose
                // chunks share one stored location has that index (b2frame writes it after a
                // delete leaves only the shared entries). Every further entry counts against
                // the stored-entries budget, which bounds the expansion by the frame's size: a
                // few hundred bytes claiming millions of copies are still refused.
                let more = u64::try_from(nbytes / 8 - first.len()).map_err(|_| Error::Data)?;
                if more > budget {
                    return Err(Error::Data);
                }
                let mut out = Locs::new();
                for _ in 0..repeated {
                    out.extend_from_slice(&first);
                }
                return Ok(out);
            }
            if let [one] = first[..] {
                return Ok(Locs::repeated(one, repeated));
            }
            // A value of several entries: no writer makes one (c-blosc2's `fill_special`
            // repeats one entry), so it is expanded only as far as 16 KiB of entries.
            if nbytes / 8 > BLOCK_ENTRIES {
                return Err(Error::Data);
            }
            let mut out = Locs::new();
            for _ in 0..repeated {
                out.extend_from_slice(&first);
            }
            return Ok(out);
        }
    }
    // Compressed indexes expand up to some 2000 times: reserve only what stored entries can
    // justify; special entries beyond it grow the lists as they come, and blocks of one
    // special entry become runs.
    let reserve = (nbytes / 8).min(usize::try_from(budget).unwrap_or(0));
    let mut out = Locs::new();
    let bs = h.blocksize.max(0) as usize;
    let regular =
        extended && special == special::NONE && !h.is_memcpyed() && !h.is_lazy() && !h.is_vl();
    if !regular
        || h.uses_dict()
        || !(1024..=MAX_INDEX_BLOCK).contains(&bs)
        || !bs.is_multiple_of(8)
        || nbytes == 0
    {
        // Layouts no index writer uses for more than a few entries (c-blosc2 and b2frame
        // compress indexes in 16 KiB blocks): expanded whole, so only as far as the stored
        // entries' bound or 16 KiB justifies.
        if nbytes / 8
            > usize::try_from(budget)
                .unwrap_or(usize::MAX)
                .max(BLOCK_ENTRIES)
        {
            return Err(Error::Data);
        }
        let mut v = Vec::new();
        push_entries(&decompress_index(chunk)?, max_stored, &mut budget, &mut v)?;
        return Ok(v.into());
    }
    let mut d = chunk::Decompressor::new(chunk::DParams::default(), chunk::no_hooks())?;
    let mut block = vec![0u8; bs.min(nbytes)];
    let nblocks = i32::try_from(nbytes.div_ceil(bs)).map_err(|_| Error::Data)?;
    let mut done = 0usize;
    let mut entries = Vec::with_capacity(block.len() / 8);
    for j in 0..nblocks {
        let n = d.decompress_block(chunk, j, &mut block)?;
        if n % 8 != 0 {
            return Err(Error::Data);
        }
        entries.clear();
        push_entries(&block[..n], max_stored, &mut budget, &mut entries)?;
        out.extend_reserving(&entries, reserve);
        done += n;
    }
    if done != nbytes {
        return Err(Error::Data);
    }
    Ok(out)
}

/// The largest block the block-by-block index decoder takes (c-blosc2 writes 16 KiB blocks).
pub(super) const MAX_INDEX_BLOCK: usize = 64 * 1024;

/// How many stored entries an index whose stored locations are at most `max_stored` can hold:
/// distinct chunks of at least 16 bytes (a chunk header) starting in `[0, max_stored]` and
/// ending within the 32 bytes after it (cframes: the data section; see `cframe::max_stored`).
pub fn stored_entries_bound(max_stored: Option<u64>) -> u64 {
    max_stored.map_or(0, |m| m / chunk::header::MIN_HEADER_LEN as u64 + 2)
}

/// Appends the entries of `raw` (a multiple of 8 bytes) to `out`, checking stored ones against
/// `max_stored` and taking them from `budget` (see [`stored_entries_bound`]).
pub(super) fn push_entries(
    raw: &[u8],
    max_stored: Option<u64>,
    budget: &mut u64,
    out: &mut Vec<ChunkLoc>,
) -> Result<()> {
    if !raw.len().is_multiple_of(8) {
        return Err(Error::Data);
    }
    // Stored entries compare as u64 below `limit`; negative ones (specials) wrap above it.
    let limit = max_stored.map_or(0, |m| m.min(i64::MAX as u64).wrapping_add(1));
    let entry = |e: &[u8]| u64::from_le_bytes(e.try_into().unwrap_or([0; 8]));
    // Common case first, in two branch-free passes: every entry a readable stored offset.
    if !raw
        .chunks_exact(8)
        .fold(false, |bad, e| bad | (entry(e) >= limit))
    {
        let n = (raw.len() / 8) as u64;
        *budget = budget.checked_sub(n).ok_or(Error::Data)?;
        out.extend(raw.chunks_exact(8).map(|e| ChunkLoc(entry(e) as i64)));
        return Ok(());
    }
    for e in raw.chunks_exact(8) {
        let v = i64::from_le_bytes(e.try_into().unwrap_or([0; 8]));
        if (v as u64) < limit {
            *budget = budget.checked_sub(1).ok_or(Error::Data)?;
            out.push(ChunkLoc(v));
        } else if v >= 0 {
            return Err(Error::Data);
        } else {
            out.push(ChunkLoc::from_entry(v)?);
        }
    }
    Ok(())
}
