//! Writing an index chunk as c-blosc2 does: its compression parameters and blocks
//! ([`IndexBlocks`], which lets a commit re-encode only the blocks that changed) and the
//! repeated-entry index of `fill_special`.

#![forbid(unsafe_code)]

use super::*;

/// The cparams c-blosc2 uses whenever it rewrites the index: BloscLZ clevel 5, typesize 8,
/// blocksize 16384, never split, shuffle in slot 5, 4 threads (the thread count changes
/// c-blosc2's output for some inputs, so it is part of the contract).
pub fn index_cparams() -> CParams {
    CParams {
        compcode: 0,
        compcode_meta: 0,
        clevel: 5,
        use_dict: false,
        typesize: 8,
        nthreads: 4,
        blocksize: 16 * 1024,
        splitmode: 2,
        filters: [0, 0, 0, 0, 0, 1],
        filters_meta: [0; 6],
    }
}

/// The one worker pool every index rewrite shares. The index is compressed with c-blosc2's
/// 4-thread parameters (they decide its bytes), and a pool per rewrite would start and stop 4
/// threads at every append of a large frame.
pub(super) fn index_pool() -> Result<std::sync::Arc<crate::pool::Pool>> {
    static POOL: std::sync::OnceLock<std::sync::Arc<crate::pool::Pool>> =
        std::sync::OnceLock::new();
    if let Some(p) = POOL.get() {
        return Ok(p.clone());
    }
    let p = crate::pool::Pool::new(index_cparams().nthreads as usize)?;
    Ok(POOL.get_or_init(|| p).clone())
}

/// Builds the index chunk for `locs`, compressed into a destination of
/// `nbytes + 32 + extra_room` bytes.
///
/// The destination size matters for byte-exactness: a chunk whose encoded form does not fit
/// falls back to memcpy, so c-blosc2's delete path, which compresses into a buffer sized for
/// the index *before* the delete (8 bytes more), can keep an output the other paths would
/// store memcpyed. Indexes under 32 bytes are below `BLOSC_MIN_BUFFERSIZE` and always memcpyed;
/// that exact chunk is built here. Larger ones go through [`chunk::Compressor`] with
/// [`index_cparams`].
///
/// Entries holding long runs (see [`Locs`]) are encoded block by block through
/// [`IndexBlocks`], each distinct uniform block once: the same bytes, without expanding the
/// runs (a frame of 100 million special chunks has an 800 MB index before compression).
pub fn encode_index_with_room<'a>(
    locs: impl Into<LocsRef<'a>>,
    extra_room: usize,
) -> Result<Vec<u8>> {
    let locs = locs.into();
    let has_runs = locs
        .spans(0, locs.len())
        .any(|s| matches!(s, Span::Run(..)));
    if has_runs && locs.len() > BLOCK_ENTRIES {
        let none: &[ChunkLoc] = &[];
        return IndexBlocks::default().encode(none, locs, Some(0), extra_room);
    }
    encode_whole(locs, extra_room)
}

/// [`encode_index_with_room`] through the entries' bytes, compressed whole.
fn encode_whole(locs: LocsRef<'_>, extra_room: usize) -> Result<Vec<u8>> {
    let mut raw = Vec::new();
    raw.try_reserve_exact(locs.len().saturating_mul(8))
        .map_err(|_| Error::MemoryAlloc)?;
    locs.write_entries(0, locs.len(), &mut raw);
    if raw.len() > i32::MAX as usize - EXTENDED_HEADER_LEN - extra_room {
        return Err(Error::TwoGbLimit);
    }
    if raw.len() < 32 {
        let n = raw.len() as i32;
        let mut c = Vec::with_capacity(EXTENDED_HEADER_LEN + raw.len());
        c.extend_from_slice(&[5, 1, 0x07, 8]);
        c.extend_from_slice(&n.to_le_bytes());
        c.extend_from_slice(&n.to_le_bytes());
        c.extend_from_slice(&(n + EXTENDED_HEADER_LEN as i32).to_le_bytes());
        c.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        c.extend_from_slice(&raw);
        return Ok(c);
    }
    let mut comp = chunk::Compressor::new(index_cparams(), chunk::no_hooks())?;
    // One block (up to 2048 entries) is compressed on the caller's thread: the shared pool's
    // four workers are started only for an index that uses them (started, they spin in
    // `sched_yield` for a while before they sleep).
    if raw.len() > BLOCK_ENTRIES * 8 {
        comp.set_pool(index_pool()?)?;
    }
    let mut dst = vec![0u8; raw.len() + EXTENDED_HEADER_LEN + extra_room];
    let n = comp.compress(&raw, &mut dst)?;
    if n == 0 {
        return Err(Error::WriteBuffer);
    }
    dst.truncate(n);
    Ok(dst)
}

/// Entries per block of an index chunk (its 16 KiB blocksize over 8-byte entries).
pub(super) const BLOCK_ENTRIES: usize = 16 * 1024 / 8;

/// The encoded full blocks of a frame's committed index, kept by the open frame so that a
/// commit re-encodes only the blocks whose entries changed (an append: the last one) instead of
/// compressing the whole index again on the index thread pool: appends to a large frame cost
/// what changed, not the size of the index. The chunk is assembled from the blocks
/// ([`chunk::Compressor::assemble_blocks`]) and is byte for byte the chunk
/// [`encode_index_with_room`] writes; where it would not be (see there), the whole index is
/// encoded as before.
#[derive(Debug, Default)]
pub struct IndexBlocks {
    /// Block `b` encodes entries `b * BLOCK_ENTRIES ..` of the committed index; with it the
    /// CRC piece of the bytes of blocks `0..=b`, so that the fingerprint's index part
    /// (docs/format/fingerprint.md) costs the changed blocks, not the whole index.
    /// Blocks of one repeated entry share their encoding (a run of 100 million special
    /// entries is 48,829 blocks).
    blocks: Vec<(std::sync::Arc<chunk::LoneBlock>, Piece)>,
}

impl IndexBlocks {
    /// The index chunk for `new` with `extra_room` spare destination bytes, as
    /// [`encode_index_with_room`] builds it. `old` must be the entries the kept blocks were
    /// built for (the committed index); afterwards the kept blocks are those of `new`.
    /// `same_prefix`: how many leading entries the caller knows `old` and `new` share (an
    /// append: all of `old`); those are not compared.
    pub fn encode<'a, 'b>(
        &mut self,
        old: impl Into<LocsRef<'a>>,
        new: impl Into<LocsRef<'b>>,
        same_prefix: Option<usize>,
        extra_room: usize,
    ) -> Result<Vec<u8>> {
        Ok(self
            .encode_with_piece(old, new, same_prefix, extra_room, Vec::new())?
            .0)
    }

    /// [`IndexBlocks::encode`], with the CRC piece of the chunk when it was assembled from
    /// kept blocks (`None`: hash the chunk). A chunk assembled from kept blocks is built in
    /// `out` (a buffer to reuse: an in-memory frame copies its index into the frame, and a new
    /// allocation of the index's size on every append cost page faults and heap trims).
    pub fn encode_with_piece<'a, 'b>(
        &mut self,
        old: impl Into<LocsRef<'a>>,
        new: impl Into<LocsRef<'b>>,
        same_prefix: Option<usize>,
        extra_room: usize,
        out: Vec<u8>,
    ) -> Result<(Vec<u8>, Option<Piece>)> {
        let (old, new) = (old.into(), new.into());
        let nbytes = new.len() * 8;
        let whole = |new: LocsRef<'_>| Ok((encode_whole(new, extra_room)?, None));
        // One block: nothing to keep, and the encoder runs it serially anyway.
        if nbytes <= BLOCK_ENTRIES * 8
            || nbytes > i32::MAX as usize - EXTENDED_HEADER_LEN - extra_room
        {
            self.blocks.clear();
            return whole(new);
        }
        // Kept blocks stay while their entries are the same.
        let full = new.len() / BLOCK_ENTRIES;
        let mut keep = self.blocks.len().min(full).min(old.len() / BLOCK_ENTRIES);
        let known = same_prefix.map_or(0, |n| n.min(old.len()).min(new.len()) / BLOCK_ENTRIES);
        if let Some(b) = (known.min(keep)..keep)
            .find(|&b| !old.range_eq(&new, b * BLOCK_ENTRIES, (b + 1) * BLOCK_ENTRIES))
        {
            keep = b;
        }
        self.blocks.truncate(keep);
        let cp = CParams {
            nthreads: 1,
            ..index_cparams()
        };
        let mut comp = chunk::Compressor::new(cp, chunk::no_hooks())?;
        let mut raw = Vec::with_capacity(BLOCK_ENTRIES * 8);
        let mut lone = |j: usize, start: usize, end: usize| -> Result<Option<chunk::LoneBlock>> {
            raw.clear();
            new.write_entries(start, end, &mut raw);
            comp.encode_lone_block(nbytes, j, &raw)
        };
        // The last full block of one repeated entry, and its encoding (full blocks encode
        // alike wherever they are).
        let mut uniform: Option<(ChunkLoc, std::sync::Arc<chunk::LoneBlock>)> = None;
        for b in keep..full {
            let (start, end) = (b * BLOCK_ENTRIES, (b + 1) * BLOCK_ENTRIES);
            let one = new.uniform(start, end);
            if let (Some(l), Some((u, block))) = (one, &uniform) {
                if l == *u {
                    let block = block.clone();
                    let before = self.blocks.last().map_or(Piece::EMPTY, |k| k.1);
                    let piece = before.then(Piece::of(block.bytes()));
                    self.blocks.push((block, piece));
                    continue;
                }
            }
            match lone(b, start, end)? {
                Some(block) => {
                    let block = std::sync::Arc::new(block);
                    if let Some(l) = one {
                        uniform = Some((l, block.clone()));
                    }
                    let before = self.blocks.last().map_or(Piece::EMPTY, |k| k.1);
                    let piece = before.then(Piece::of(block.bytes()));
                    self.blocks.push((block, piece));
                }
                None => {
                    self.blocks.clear();
                    return whole(new);
                }
            }
        }
        let tail = match full * BLOCK_ENTRIES {
            t if t == new.len() => None,
            t => match lone(full, t, new.len())? {
                Some(block) => Some(block),
                None => return whole(new),
            },
        };
        let all: Vec<&chunk::LoneBlock> = self
            .blocks
            .iter()
            .map(|k| &*k.0)
            .chain(tail.as_ref())
            .collect();
        let dest = nbytes + EXTENDED_HEADER_LEN + extra_room;
        match comp.assemble_blocks(nbytes, &all, dest, out)? {
            Some(c) => {
                // The chunk is its header and block starts, then the blocks' bytes in order.
                let starts = EXTENDED_HEADER_LEN + 4 * all.len();
                let mut piece = Piece::of(c.get(..starts).ok_or(Error::Failure)?);
                if let Some(kept) = self.blocks.last() {
                    piece = piece.then(kept.1);
                }
                if let Some(t) = &tail {
                    piece = piece.then(Piece::of(t.bytes()));
                }
                debug_assert_eq!(piece, Piece::of(&c));
                Ok((c, Some(piece)))
            }
            None => whole(new),
        }
    }
}

/// Builds the index chunk of `n` copies of one entry as c-blosc2's `fill_special` writes it: a
/// 40-byte SPECIAL_VALUE chunk (index cparams, typesize 8, the entry as the value) instead of
/// the compressed entries, whatever `n` (a million special chunks: 40 bytes, not 45 KB).
pub fn encode_repeated_index(loc: ChunkLoc, n: usize) -> Result<Vec<u8>> {
    let nbytes = n
        .checked_mul(8)
        .and_then(|b| i32::try_from(b).ok())
        .filter(|&b| b <= i32::MAX - EXTENDED_HEADER_LEN as i32)
        .ok_or(Error::TwoGbLimit)?;
    let mut c = vec![0u8; EXTENDED_HEADER_LEN + 8];
    let len = chunk::special::repeatval(
        &index_cparams(),
        nbytes,
        &mut c,
        &loc.to_entry().to_le_bytes(),
    )?;
    c.truncate(len);
    Ok(c)
}

/// Builds the index chunk for `locs` as append/insert/update/reorder write it.
pub fn encode_index<'a>(locs: impl Into<LocsRef<'a>>) -> Result<Vec<u8>> {
    encode_index_with_room(locs, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kept blocks give the full encoder's bytes through appends across block boundaries,
    /// inserts, updates, deletes and specials (each step starts from the entries the blocks
    /// were last updated for, as a frame's commits do), and appends re-encode only the tail.
    #[test]
    fn kept_index_blocks_give_the_full_encoders_bytes() {
        let mut blocks = IndexBlocks::default();
        let mut old: Vec<ChunkLoc> = Vec::new();
        let mut assembled = 0;
        let mut step =
            |new: Vec<ChunkLoc>, room: usize, old: &mut Vec<ChunkLoc>, assembled: &mut usize| {
                // Appends also tell the blocks that the old entries are unchanged.
                let hint = new.starts_with(old).then_some(old.len());
                let (got, piece) = blocks
                    .encode_with_piece(&*old, &new, hint, room, vec![0xa5; 3000])
                    .unwrap();
                assert_eq!(
                    got,
                    encode_index_with_room(&new, room).unwrap(),
                    "{}",
                    new.len()
                );
                // The index part's CRC combined from the kept blocks is the chunk's.
                if let Some(p) = piece {
                    assert_eq!(p, Piece::of(&got), "{}", new.len());
                    *assembled += 1;
                }
                *old = new;
            };
        let mut cur: Vec<ChunkLoc> = Vec::new();
        for i in 0..4200u64 {
            cur.push(ChunkLoc::Stored(i * 4001 + (i % 7) * 13));
            if i % 97 == 0 || (2040..2060).contains(&i) || i > 4090 {
                step(cur.clone(), 0, &mut old, &mut assembled);
            }
        }
        type Edit = Box<dyn Fn(&mut Vec<ChunkLoc>)>;
        let mut edits: Vec<Edit> = vec![
            Box::new(|v| v.insert(100, ChunkLoc::Stored(5))),
            Box::new(|v| v[3000] = ChunkLoc::Special(SpecialKind::Nan)),
            Box::new(|v| {
                v.remove(2049);
            }),
            Box::new(|v| v[0] = ChunkLoc::Stored(77)),
            Box::new(|v| v.truncate(2048)),
            Box::new(|v| v.extend((0..3000).map(|i| ChunkLoc::Stored(i * 3)))),
            Box::new(|v| v.reverse()),
            Box::new(|v| {
                v.iter_mut()
                    .for_each(|l| *l = ChunkLoc::Special(SpecialKind::Zeros))
            }),
        ];
        for (k, e) in edits.drain(..).enumerate() {
            e(&mut cur);
            step(
                cur.clone(),
                if k % 2 == 0 { 8 } else { 0 },
                &mut old,
                &mut assembled,
            );
        }
        assert!(assembled > 50, "{assembled} chunks assembled from blocks");
        // An append to a kept index re-encodes its last block only.
        let base: Vec<ChunkLoc> = (0..10_000u64).map(|i| ChunkLoc::Stored(i * 977)).collect();
        let mut b = IndexBlocks::default();
        b.encode(&[], &base, Some(0), 0).unwrap();
        let first = b.blocks[0].0.bytes().as_ptr();
        let mut more = base.clone();
        more.push(ChunkLoc::Stored(10_000 * 977));
        let c = b.encode(&base, &more, Some(base.len()), 0).unwrap();
        assert_eq!(c, encode_index(&more).unwrap());
        assert_eq!(
            b.blocks[0].0.bytes().as_ptr(),
            first,
            "block 0 was encoded again"
        );
    }
}
