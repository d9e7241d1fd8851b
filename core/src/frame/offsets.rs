//! The offsets index: one ordinary chunk whose payload is `nchunks` little-endian int64 entries
//! (docs/format/offsets.md#entries). A non-negative entry locates a stored chunk (cframe: offset from the
//! end of the header; sframe: chunk-file id); a negative one marks a special chunk with no
//! payload, whose bytes are synthesised on read.

use super::chunkinfo::{special, EXTENDED_HEADER_LEN};
use super::fingerprint::Piece;
use crate::chunk::{self, CParams};
use crate::error::{Error, Result};

/// Special chunks that frames store as offsets rather than payloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecialKind {
    /// All zeros (`0x81` top byte).
    Zeros,
    /// All NaN (`0x82`).
    Nan,
    /// Uninitialised (`0x84`).
    Uninit,
}

impl SpecialKind {
    /// The chunk header special id (byte 31 bits 4-6).
    pub fn special_id(self) -> u8 {
        match self {
            SpecialKind::Zeros => special::ZERO,
            SpecialKind::Nan => special::NAN,
            SpecialKind::Uninit => special::UNINIT,
        }
    }

    /// The kind for a chunk header special id, if frames encode it as an offset.
    pub fn from_special_id(id: u8) -> Option<SpecialKind> {
        match id {
            special::ZERO => Some(SpecialKind::Zeros),
            special::NAN => Some(SpecialKind::Nan),
            special::UNINIT => Some(SpecialKind::Uninit),
            _ => None,
        }
    }
}

/// Where chunk `i` lives: the index entry itself, 8 bytes, as c-blosc2 keeps a frame's offsets
/// (a frame of a million chunks holds 8 MB of them, not 16). Read it with [`ChunkLoc::get`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChunkLoc(i64);

/// What a [`ChunkLoc`] says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Loc {
    /// cframe: byte offset from the end of the header; sframe: chunk-file id.
    Stored(u64),
    /// No payload: a special chunk synthesised on read.
    Special(SpecialKind),
}

/// The entry of each special kind (`0x8X00000000000000`).
const fn special_entry(k: SpecialKind) -> i64 {
    let id = match k {
        SpecialKind::Zeros => special::ZERO,
        SpecialKind::Nan => special::NAN,
        SpecialKind::Uninit => special::UNINIT,
    };
    ((0x80u64 | id as u64) << 56) as i64
}

impl ChunkLoc {
    /// A stored chunk: cframe data offset or sframe chunk-file id (below 2^63, as every
    /// offset a frame can hold).
    #[allow(non_snake_case)]
    pub const fn Stored(v: u64) -> ChunkLoc {
        ChunkLoc(v as i64)
    }

    /// A special chunk.
    #[allow(non_snake_case)]
    pub const fn Special(k: SpecialKind) -> ChunkLoc {
        ChunkLoc(special_entry(k))
    }

    /// Stored or special, and where or which.
    pub const fn get(self) -> Loc {
        match self.0 {
            v if v == special_entry(SpecialKind::Zeros) => Loc::Special(SpecialKind::Zeros),
            v if v == special_entry(SpecialKind::Nan) => Loc::Special(SpecialKind::Nan),
            v if v == special_entry(SpecialKind::Uninit) => Loc::Special(SpecialKind::Uninit),
            v => Loc::Stored(v as u64),
        }
    }

    /// The stored location, `None` for a special chunk.
    pub const fn stored(self) -> Option<u64> {
        match self.get() {
            Loc::Stored(v) => Some(v),
            Loc::Special(_) => None,
        }
    }

    /// Whether this is a stored chunk.
    pub const fn is_stored(self) -> bool {
        self.stored().is_some()
    }

    /// Decodes one index entry.
    pub fn from_entry(v: i64) -> Result<ChunkLoc> {
        if v >= 0 {
            return Ok(ChunkLoc(v));
        }
        // Same test order as the reference: zeros, uninit, NaN.
        let top = (v as u64) >> 56;
        if top & u64::from(special::ZERO) != 0 {
            Ok(ChunkLoc::Special(SpecialKind::Zeros))
        } else if top & u64::from(special::UNINIT) != 0 {
            Ok(ChunkLoc::Special(SpecialKind::Uninit))
        } else if top & u64::from(special::NAN) != 0 {
            Ok(ChunkLoc::Special(SpecialKind::Nan))
        } else {
            Err(Error::Data)
        }
    }

    /// Encodes one index entry (`0x8X00000000000000` for specials).
    pub const fn to_entry(self) -> i64 {
        self.0
    }
}

impl std::fmt::Debug for ChunkLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// Decodes index payload bytes (`nchunks * 8` little-endian int64s).
pub fn decode_entries(raw: &[u8]) -> Result<Vec<ChunkLoc>> {
    if !raw.len().is_multiple_of(8) {
        return Err(Error::Data);
    }
    raw.chunks_exact(8)
        .map(|e| ChunkLoc::from_entry(i64::from_le_bytes(e.try_into().unwrap_or([0; 8]))))
        .collect()
}

/// Encodes index payload bytes.
pub fn encode_entries(locs: &[ChunkLoc]) -> Vec<u8> {
    let mut out = Vec::with_capacity(locs.len() * 8);
    for l in locs {
        out.extend_from_slice(&l.0.to_le_bytes());
    }
    out
}

/// Decompresses an index chunk (exactly `chunk.len()` bytes, already bounded by the caller).
///
/// Memcpyed and SPECIAL_VALUE index chunks (what c-blosc2 writes for ≤ 3 chunks and for
/// `fill_special`) are read here directly; anything else goes through [`chunk::decompress_vec`].
pub fn decompress_index(chunk: &[u8]) -> Result<Vec<u8>> {
    let info = super::chunkinfo::ChunkInfo::parse(chunk)?;
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
pub fn decode_index(chunk: &[u8], max_stored: Option<u64>) -> Result<Vec<ChunkLoc>> {
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
    let special = super::chunkinfo::ChunkInfo::parse(chunk)?.special;
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
        return Ok(out);
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
                return Err(Error::Data);
            }
            let mut out = Vec::with_capacity(nbytes / 8);
            for _ in 0..repeated {
                out.extend_from_slice(&first);
            }
            return Ok(out);
        }
    }
    // Compressed indexes expand up to some 2000 times: reserve only what stored entries can
    // justify; special entries beyond it grow the vector as they come.
    let mut out = Vec::with_capacity((nbytes / 8).min(usize::try_from(budget).unwrap_or(0)));
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
        push_entries(&decompress_index(chunk)?, max_stored, &mut budget, &mut out)?;
        return Ok(out);
    }
    let mut d = chunk::Decompressor::new(chunk::DParams::default(), chunk::no_hooks())?;
    let mut block = vec![0u8; bs.min(nbytes)];
    let nblocks = i32::try_from(nbytes.div_ceil(bs)).map_err(|_| Error::Data)?;
    let mut done = 0usize;
    for j in 0..nblocks {
        let n = d.decompress_block(chunk, j, &mut block)?;
        if n % 8 != 0 {
            return Err(Error::Data);
        }
        push_entries(&block[..n], max_stored, &mut budget, &mut out)?;
        done += n;
    }
    if done != nbytes {
        return Err(Error::Data);
    }
    Ok(out)
}

/// The largest block the block-by-block index decoder takes (c-blosc2 writes 16 KiB blocks).
const MAX_INDEX_BLOCK: usize = 64 * 1024;

/// How many stored entries an index whose stored locations are at most `max_stored` can hold:
/// distinct chunks of at least 16 bytes (a chunk header) starting in `[0, max_stored]` and
/// ending within the 32 bytes after it (cframes: the data section; see `cframe::max_stored`).
pub fn stored_entries_bound(max_stored: Option<u64>) -> u64 {
    max_stored.map_or(0, |m| m / chunk::header::MIN_HEADER_LEN as u64 + 2)
}

/// Appends the entries of `raw` (a multiple of 8 bytes) to `out`, checking stored ones against
/// `max_stored` and taking them from `budget` (see [`stored_entries_bound`]).
fn push_entries(
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
fn index_pool() -> Result<std::sync::Arc<crate::pool::Pool>> {
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
pub fn encode_index_with_room(locs: &[ChunkLoc], extra_room: usize) -> Result<Vec<u8>> {
    let raw = encode_entries(locs);
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
    comp.set_pool(index_pool()?)?;
    let mut dst = vec![0u8; raw.len() + EXTENDED_HEADER_LEN + extra_room];
    let n = comp.compress(&raw, &mut dst)?;
    if n == 0 {
        return Err(Error::WriteBuffer);
    }
    dst.truncate(n);
    Ok(dst)
}

/// Entries per block of an index chunk (its 16 KiB blocksize over 8-byte entries).
const BLOCK_ENTRIES: usize = 16 * 1024 / 8;

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
    blocks: Vec<(chunk::LoneBlock, Piece)>,
}

impl IndexBlocks {
    /// The index chunk for `new` with `extra_room` spare destination bytes, as
    /// [`encode_index_with_room`] builds it. `old` must be the entries the kept blocks were
    /// built for (the committed index); afterwards the kept blocks are those of `new`.
    /// `same_prefix`: how many leading entries the caller knows `old` and `new` share (an
    /// append: all of `old`); those are not compared.
    pub fn encode(
        &mut self,
        old: &[ChunkLoc],
        new: &[ChunkLoc],
        same_prefix: Option<usize>,
        extra_room: usize,
    ) -> Result<Vec<u8>> {
        Ok(self.encode_with_piece(old, new, same_prefix, extra_room)?.0)
    }

    /// [`IndexBlocks::encode`], with the CRC piece of the chunk when it was assembled from
    /// kept blocks (`None`: hash the chunk).
    pub fn encode_with_piece(
        &mut self,
        old: &[ChunkLoc],
        new: &[ChunkLoc],
        same_prefix: Option<usize>,
        extra_room: usize,
    ) -> Result<(Vec<u8>, Option<Piece>)> {
        let nbytes = new.len() * 8;
        let whole = |new: &[ChunkLoc]| Ok((encode_index_with_room(new, extra_room)?, None));
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
        if let Some(b) = (known.min(keep)..keep).find(|&b| {
            let r = b * BLOCK_ENTRIES..(b + 1) * BLOCK_ENTRIES;
            old[r.clone()] != new[r]
        }) {
            keep = b;
        }
        self.blocks.truncate(keep);
        let cp = CParams {
            nthreads: 1,
            ..index_cparams()
        };
        let mut comp = chunk::Compressor::new(cp, chunk::no_hooks())?;
        let mut lone = |j: usize, entries: &[ChunkLoc]| -> Result<Option<chunk::LoneBlock>> {
            comp.encode_lone_block(nbytes, j, &encode_entries(entries))
        };
        for b in keep..full {
            match lone(b, &new[b * BLOCK_ENTRIES..(b + 1) * BLOCK_ENTRIES])? {
                Some(block) => {
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
        let tail = match &new[full * BLOCK_ENTRIES..] {
            [] => None,
            t => match lone(full, t)? {
                Some(block) => Some(block),
                None => return whole(new),
            },
        };
        let all: Vec<&chunk::LoneBlock> = self
            .blocks
            .iter()
            .map(|k| &k.0)
            .chain(tail.as_ref())
            .collect();
        let dest = nbytes + EXTENDED_HEADER_LEN + extra_room;
        match comp.assemble_blocks(nbytes, &all, dest)? {
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
pub fn encode_index(locs: &[ChunkLoc]) -> Result<Vec<u8>> {
    encode_index_with_room(locs, 0)
}

/// The blocksize c-blosc2 writes into a synthesised special chunk: its automatic blocksize for
/// `BLOSC2_CPARAMS_DEFAULTS` (BloscLZ, clevel 5, shuffle) with the frame's typesize, or the
/// frame's requested blocksize (docs/format/chunk.md#blocksize, verified against 3.3.5 output).
pub fn special_blocksize(typesize: i32, nbytes: i32, requested: i32) -> i32 {
    let ts = typesize.max(1) as i64;
    let nb = nbytes as i64;
    if nb < ts {
        return 1;
    }
    let mut bs = if requested > 0 {
        requested as i64
    } else {
        // BloscLZ + shuffle + clevel 5 splits when typesize <= 16 and there are >= 32 elements.
        let split = ts <= 16 && nb / ts >= 32;
        if split {
            (64 * 1024 * ts).clamp(32 * 1024, 4 * 1024 * 1024)
        } else if nb >= 32 * 1024 {
            128 * 1024
        } else {
            nb
        }
    };
    bs = bs.min(nb);
    if bs > ts {
        bs -= bs % ts;
    }
    bs as i32
}

/// A regular (non-special) chunk with the same contents as a ZERO/UNINIT/NaN special chunk of
/// `nbytes`, for frames with variable chunk sizes: there a special offset cannot be sized on
/// read (c-blosc2 3.3.5 fails on it), and a *stored* special chunk makes c-blosc2's lazy-chunk
/// path fail (it refuses to even open a file frame whose chunk 0 is one).
///
/// Zeros (and uninit, whose contents are undefined) become blocks whose single stream has
/// `csize == 0` ("all zero"), 8 bytes per block; NaNs (typesize 4 or 8, as the special chunk
/// requires) become byte-shuffled blocks whose split streams are zero streams or one-byte runs
/// (18 or 34 bytes per block), not a memcpyed chunk of nbytes.
pub fn regular_equivalent(kind: SpecialKind, typesize: i32, nbytes: i32) -> Result<Vec<u8>> {
    if nbytes <= 0 {
        return Err(Error::InvalidParam);
    }
    let ts_byte = if (1..=255).contains(&typesize) {
        typesize as u8
    } else {
        1
    };
    let header = |flags: u8, blocksize: i32, cbytes: i32| {
        let mut c = vec![0u8; EXTENDED_HEADER_LEN];
        c[..4].copy_from_slice(&[5, 1, flags, ts_byte]);
        c[4..8].copy_from_slice(&nbytes.to_le_bytes());
        c[8..12].copy_from_slice(&blocksize.to_le_bytes());
        c[12..16].copy_from_slice(&cbytes.to_le_bytes());
        c
    };
    match kind {
        SpecialKind::Zeros | SpecialKind::Uninit => {
            // Blocks from the typesize the header states: a frame typesize no chunk can have
            // (> 255, e.g. a hostile frame) must not shrink them to 1 byte (8 bytes each).
            let bs = special_blocksize(i32::from(ts_byte), nbytes, 0).max(1);
            let nblocks = (nbytes as i64 + bs as i64 - 1) / bs as i64;
            let cbytes = EXTENDED_HEADER_LEN as i64 + 8 * nblocks;
            let cbytes = i32::try_from(cbytes).map_err(|_| Error::TwoGbLimit)?;
            // Extended header, never split: one stream per block.
            let mut c = header(0x15, bs, cbytes);
            let streams = EXTENDED_HEADER_LEN as i64 + 4 * nblocks;
            for j in 0..nblocks {
                c.extend_from_slice(&((streams + 4 * j) as i32).to_le_bytes());
            }
            c.resize(cbytes as usize, 0);
            Ok(c)
        }
        SpecialKind::Nan => {
            let pattern: &[u8] = match typesize {
                4 => &[0x00, 0x00, 0xc0, 0x7f],
                8 => &[0, 0, 0, 0, 0, 0, 0xf8, 0x7f],
                _ => return Err(Error::Data),
            };
            if !(nbytes as usize).is_multiple_of(pattern.len()) {
                return Err(Error::Data);
            }
            // Byte-shuffled, every byte plane of a NaN block is one repeated byte: each full
            // block is `typesize` split streams, each a zero stream or a one-byte run, so the
            // chunk stays small whatever nbytes says (a 32-byte NaN chunk may claim 2 GiB).
            // The leftover block is never split: one raw stream of its shuffled bytes.
            let ts = pattern.len();
            let bs = special_blocksize(typesize, nbytes, 0).max(1) as usize;
            let nbytes_u = nbytes as usize;
            let (nfull, left) = (nbytes_u / bs, nbytes_u % bs);
            let nblocks = nfull + usize::from(left > 0);
            // Per byte plane: a zero stream (csize 0), or a run (csize -byte, token 1).
            let mut full_block = Vec::new();
            for &b in pattern {
                full_block.extend_from_slice(&(-i32::from(b)).to_le_bytes());
                if b != 0 {
                    full_block.push(1);
                }
            }
            let streams = EXTENDED_HEADER_LEN + 4 * nblocks;
            let len = streams + nfull * full_block.len() + if left > 0 { 4 + left } else { 0 };
            let cbytes = i32::try_from(len).map_err(|_| Error::TwoGbLimit)?;
            // Extended header with splitting allowed, SHUFFLE in the last of the six filter
            // slots (header bytes 16..22).
            let mut c = header(0x05, bs as i32, cbytes);
            c[21] = crate::filters::SHUFFLE;
            for j in 0..nblocks {
                let at = streams + j * full_block.len();
                c.extend_from_slice(&(at as i32).to_le_bytes());
            }
            for _ in 0..nfull {
                c.extend_from_slice(&full_block);
            }
            if left > 0 {
                c.extend_from_slice(&(left as i32).to_le_bytes());
                for &b in pattern {
                    c.extend(std::iter::repeat_n(b, left / ts));
                }
            }
            debug_assert_eq!(c.len(), len);
            Ok(c)
        }
    }
}

/// A 32-byte special chunk as c-blosc2 synthesises it for a special offset.
pub fn synthesise_special(
    kind: SpecialKind,
    typesize: i32,
    nbytes: i32,
    blocksize: i32,
) -> Vec<u8> {
    let mut c = vec![0u8; EXTENDED_HEADER_LEN];
    c[0] = 5;
    c[1] = 1;
    c[2] = 0x05;
    c[3] = if (1..=255).contains(&typesize) {
        typesize as u8
    } else {
        1
    };
    c[4..8].copy_from_slice(&nbytes.to_le_bytes());
    c[8..12].copy_from_slice(&special_blocksize(typesize, nbytes, blocksize).to_le_bytes());
    c[12..16].copy_from_slice(&(EXTENDED_HEADER_LEN as i32).to_le_bytes());
    c[31] = kind.special_id() << 4;
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip() {
        assert_eq!(std::mem::size_of::<ChunkLoc>(), 8);
        let locs = vec![
            ChunkLoc::Stored(0),
            ChunkLoc::Special(SpecialKind::Zeros),
            ChunkLoc::Special(SpecialKind::Nan),
            ChunkLoc::Special(SpecialKind::Uninit),
            ChunkLoc::Stored(1234),
        ];
        let raw = encode_entries(&locs);
        assert_eq!(&raw[8..16], &[0, 0, 0, 0, 0, 0, 0, 0x81]);
        assert_eq!(&raw[16..24], &[0, 0, 0, 0, 0, 0, 0, 0x82]);
        assert_eq!(&raw[24..32], &[0, 0, 0, 0, 0, 0, 0, 0x84]);
        assert_eq!(decode_entries(&raw).unwrap(), locs);
        assert_eq!(ChunkLoc::from_entry(i64::MIN), Err(Error::Data));
        assert_eq!(
            ChunkLoc::from_entry(-1).unwrap(),
            ChunkLoc::Special(SpecialKind::Zeros)
        );
        assert_eq!(decode_entries(&raw[..7]), Err(Error::Data));
    }

    #[test]
    fn small_index_is_c_blosc2s_memcpyed_chunk() {
        // From a 3-chunk frame written by c-blosc2 3.3.5 (offsets 0, 0x3f04, 0x7e08).
        let expected: [u8; 56] = [
            0x05, 0x01, 0x07, 0x08, 0x18, 0, 0, 0, 0x18, 0, 0, 0, 0x38, 0, 0, 0, 0, 0, 0, 0, 0, 1,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x04, 0x3f, 0, 0, 0, 0, 0, 0,
            0x08, 0x7e, 0, 0, 0, 0, 0, 0,
        ];
        let locs = [
            ChunkLoc::Stored(0),
            ChunkLoc::Stored(0x3f04),
            ChunkLoc::Stored(0x7e08),
        ];
        assert_eq!(encode_index(&locs).unwrap(), expected);
        assert_eq!(
            decode_entries(&decompress_index(&expected).unwrap()).unwrap(),
            locs
        );
        // Truncated or inconsistent index chunks are errors.
        assert!(decompress_index(&expected[..50]).is_err());
        let mut bad = expected;
        bad[12] = 0x37;
        assert!(decompress_index(&bad).is_err());
    }

    #[test]
    fn decode_index_checks_every_entry_in_one_pass() {
        // 5000 entries: a compressed index of several 16 KiB blocks.
        let mut locs: Vec<ChunkLoc> = (0..5000u64).map(|i| ChunkLoc::Stored(i * 40)).collect();
        locs[4321] = ChunkLoc::Special(SpecialKind::Nan);
        let c = encode_index(&locs).unwrap();
        assert_eq!(c[2] & 0x02, 0, "expected a compressed index");
        assert_eq!(decode_index(&c, Some(4999 * 40)).unwrap(), locs);
        assert_eq!(decode_index(&c, Some(4999 * 40 - 1)), Err(Error::Data));
        assert_eq!(decode_index(&c, None), Err(Error::Data));
        // Memcpyed (small) indexes, and the same answers as decompress_index + decode_entries.
        let small = [ChunkLoc::Stored(7), ChunkLoc::Special(SpecialKind::Zeros)];
        let c = encode_index(&small).unwrap();
        assert_eq!(decode_index(&c, Some(7)).unwrap(), small);
        assert_eq!(decode_index(&c, Some(6)), Err(Error::Data));
        let specials = [ChunkLoc::Special(SpecialKind::Uninit); 2];
        assert_eq!(
            decode_index(&encode_index(&specials).unwrap(), None).unwrap(),
            specials
        );
        let mut bad = encode_index(&small).unwrap();
        bad[32 + 15] = 0x80; // entry 1 becomes 0x80000..., no special bit
        assert_eq!(decode_index(&bad, Some(7)), Err(Error::Data));
        assert!(decode_index(&c[..c.len() - 1], Some(7)).is_err());
    }

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
                let (got, piece) = blocks.encode_with_piece(old, &new, hint, room).unwrap();
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

    /// An index may not name more stored chunks than the data section can hold: a few
    /// edited header bytes of a small frame (fuzzing found a ZERO index claiming 81 million
    /// entries, all stored offset 0) must fail before the entries are expanded.
    #[test]
    fn stored_entries_are_bounded_by_the_data_section() {
        let cp = CParams {
            typesize: 8,
            ..CParams::default()
        };
        let mut buf = [0u8; 64];
        // ZERO index: every entry is stored offset 0. One entry is fine, two name one chunk.
        for (nbytes, ok) in [(8, true), (16, false), (654_311_448, false)] {
            let n = chunk::special::zeros(&cp, nbytes, &mut buf).unwrap();
            let r = decode_index(&buf[..n], Some(608));
            assert_eq!(r.is_ok(), ok, "{nbytes}: {r:?}");
            if !ok {
                assert_eq!(r, Err(Error::Data));
            }
        }
        // VALUE index of a 16-byte value (two entries, one stored), repeated.
        let mut value = ChunkLoc::Special(SpecialKind::Nan)
            .to_entry()
            .to_le_bytes()
            .to_vec();
        value.extend_from_slice(&64i64.to_le_bytes());
        for (nbytes, ok) in [(16, true), (32, false), (1 << 30, false)] {
            let cp16 = CParams {
                typesize: 16,
                ..CParams::default()
            };
            let n = chunk::special::repeatval(&cp16, nbytes, &mut buf, &value).unwrap();
            assert_eq!(decode_index(&buf[..n], Some(608)).is_ok(), ok, "{nbytes}");
        }
        // Compressed index of distinct offsets: at most max_stored / 16 + 2 of them.
        let locs: Vec<ChunkLoc> = (0..3000u64).map(ChunkLoc::Stored).collect();
        let c = encode_index(&locs).unwrap();
        assert_eq!(decode_index(&c, Some(2999)), Err(Error::Data));
        let bound = stored_entries_bound(Some(2999 * 16));
        assert!(bound >= 3000);
        assert_eq!(decode_index(&c, Some(2999 * 16)).unwrap(), locs);
        // Special entries are not bounded by the data section (the header bounds them).
        let locs = vec![ChunkLoc::Special(SpecialKind::Zeros); 3000];
        let c = encode_index(&locs).unwrap();
        assert_eq!(decode_index(&c, None).unwrap(), locs);
    }

    #[test]
    fn special_value_index_is_expanded() {
        let mut c = vec![5u8, 1, 0x05, 8];
        c.extend_from_slice(&24i32.to_le_bytes());
        c.extend_from_slice(&24i32.to_le_bytes());
        c.extend_from_slice(&40i32.to_le_bytes());
        c.extend_from_slice(&[0; 15]);
        c.push(0x30);
        c.extend_from_slice(
            &ChunkLoc::Special(SpecialKind::Zeros)
                .to_entry()
                .to_le_bytes(),
        );
        let locs = decode_entries(&decompress_index(&c).unwrap()).unwrap();
        assert_eq!(locs, vec![ChunkLoc::Special(SpecialKind::Zeros); 3]);
        assert_eq!(decode_index(&c, None).unwrap(), locs);
    }

    /// `decode_index` reads one-entry-repeated indexes (ZERO, 8-byte VALUE) without expanding
    /// them; its answers must be those of the expanding path for every kind of entry, except
    /// that a stored location named more than once is refused.
    #[test]
    fn repeated_entry_index_matches_the_expanding_path() {
        let expanded = |c: &[u8], max: Option<u64>| -> Result<Vec<ChunkLoc>> {
            let mut out = Vec::new();
            let mut budget = u64::MAX;
            push_entries(&decompress_index(c)?, max, &mut budget, &mut out)?;
            if out.len() > 1 && out.iter().any(|l| l.is_stored()) {
                return Err(Error::Data);
            }
            Ok(out)
        };
        let cp = CParams {
            typesize: 8,
            ..CParams::default()
        };
        let mut buf = [0u8; 64];
        for nbytes in [8i32, 24, 8 * 100_000] {
            let n = chunk::special::zeros(&cp, nbytes, &mut buf).unwrap();
            let zero = buf[..n].to_vec();
            let mut values = Vec::new();
            for entry in [
                ChunkLoc::Special(SpecialKind::Zeros).to_entry(),
                ChunkLoc::Special(SpecialKind::Nan).to_entry(),
                7,
                i64::MIN, // no special bit: Data
            ] {
                let n =
                    chunk::special::repeatval(&cp, nbytes, &mut buf, &entry.to_le_bytes()).unwrap();
                values.push(buf[..n].to_vec());
            }
            for c in std::iter::once(&zero).chain(&values) {
                for max in [None, Some(0), Some(6), Some(7), Some(1000)] {
                    assert_eq!(decode_index(c, max), expanded(c, max), "{nbytes} {max:?}");
                }
            }
        }
        // A VALUE index of 2^24 ZERO entries: the index of the 221-byte cframe python-blosc2
        // writes for `blosc2.zeros` of 2^24 chunks (BENCHMARKS.md, "Frames of millions of
        // special chunks").
        let n = chunk::special::repeatval(
            &cp,
            8 << 24,
            &mut buf,
            &ChunkLoc::Special(SpecialKind::Zeros)
                .to_entry()
                .to_le_bytes(),
        )
        .unwrap();
        let locs = decode_index(&buf[..n], None).unwrap();
        assert_eq!(locs.len(), 1 << 24);
        assert!(locs
            .iter()
            .all(|l| *l == ChunkLoc::Special(SpecialKind::Zeros)));
    }

    #[test]
    fn special_chunk_bytes_match_reference() {
        // get_chunk(0) of a frame with an all-zero chunk, c-blosc2 3.3.5.
        let cases: [(i32, i32, i32, &str); 6] = [
            (
                8,
                80000,
                0,
                "0501050880380100803801002000000000000000000000000000000000000010",
            ),
            (
                8,
                4000000,
                0,
                "0501050800093d00000008002000000000000000000000000000000000000010",
            ),
            (
                3,
                99999,
                0,
                "050105039f8601009f8601002000000000000000000000000000000000000010",
            ),
            (
                8,
                100000,
                4096,
                "05010508a0860100001000002000000000000000000000000000000000000010",
            ),
            (
                1,
                200000,
                0,
                "05010501400d0300000001002000000000000000000000000000000000000010",
            ),
            (
                40,
                400000,
                0,
                "05010528801a0600e0ff01002000000000000000000000000000000000000010",
            ),
        ];
        for (ts, nb, bs, hex) in cases {
            let c = synthesise_special(SpecialKind::Zeros, ts, nb, bs);
            let h: String = c.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(h, hex, "ts {ts} nbytes {nb}");
        }
        assert_eq!(special_blocksize(8, 4, 0), 1);
    }

    #[test]
    fn regular_equivalents_decode_to_the_special_contents() {
        for (kind, ts, nb) in [
            (SpecialKind::Zeros, 8, 800_000),
            (SpecialKind::Zeros, 3, 1001),
            (SpecialKind::Uninit, 1, 5),
            (SpecialKind::Nan, 8, 8000),
            (SpecialKind::Nan, 4, 44),
        ] {
            let c = regular_equivalent(kind, ts, nb).unwrap();
            let out = crate::chunk::decompress_vec(&c).unwrap();
            assert_eq!(out.len(), nb as usize);
            let info = super::super::chunkinfo::ChunkInfo::parse(&c).unwrap();
            assert_eq!(
                (info.cbytes as usize, info.special),
                (c.len(), special::NONE)
            );
            match kind {
                SpecialKind::Nan if ts == 8 => assert!(out
                    .chunks(8)
                    .all(|x| f64::from_le_bytes(x.try_into().unwrap()).is_nan())),
                SpecialKind::Nan => assert!(out
                    .chunks(4)
                    .all(|x| f32::from_le_bytes(x.try_into().unwrap()).is_nan())),
                _ => assert!(out.iter().all(|&b| b == 0)),
            }
        }
        assert_eq!(regular_equivalent(SpecialKind::Nan, 2, 8), Err(Error::Data));
        assert_eq!(
            regular_equivalent(SpecialKind::Zeros, 8, 0),
            Err(Error::InvalidParam)
        );
    }
}
