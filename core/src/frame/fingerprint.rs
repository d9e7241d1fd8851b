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
//! ([`Tracker`]) and extends it with each appended payload (`crc32fast::Hasher::combine`);
//! header, index and trailer are hashed as they are written. The data part is computed by one
//! pass over the stored chunks only when it is unknown: at the first mutation of a frame that
//! is not fingerprinted (or whose slot does not add up), at the commit of a cframe chunk update
//! or delete, after a failed mutation, and after a reload. The crash-consistent commit of a
//! cframe file also seals the relocated copy of the old state (`mutate/commit.rs`), with the old
//! state's data part: leaving dead bytes out is what makes that copy's fingerprint hold.
//!
//! Switches: `B2FRAME_FINGERPRINT=0` (or [`set_writes_enabled`]) writes `fpt = 0` and an empty
//! slot, as c-blosc2 does; `B2FRAME_VERIFY_ON_OPEN=1` (or [`set_verify_on_open`]) makes every
//! open check the fingerprint (a mismatch fails the open with `InvalidHeader`).

use super::header::FrameHeader;
use super::io::Store;
use super::offsets::ChunkLoc;
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

/// The CRC-32 of a byte sequence together with its length: enough to append it to another
/// one without its bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Piece {
    /// CRC-32 (IEEE) of the bytes.
    pub crc: u32,
    /// How many bytes.
    pub len: u64,
}

impl Piece {
    /// The empty sequence.
    pub const EMPTY: Piece = Piece { crc: 0, len: 0 };

    /// The piece of `bytes`.
    pub fn of(bytes: &[u8]) -> Piece {
        let mut p = Piece::EMPTY;
        p.extend(bytes);
        p
    }

    /// `self` followed by `bytes`.
    pub fn extend(&mut self, bytes: &[u8]) {
        let mut h = crc32fast::Hasher::new_with_initial_len(self.crc, self.len);
        h.update(bytes);
        self.crc = h.finalize();
        self.len += bytes.len() as u64;
    }

    /// The piece of the bytes of `self` without its last `suffix.len` bytes, given the piece
    /// of those (`None` when `suffix` is longer). CRC-32 concatenation is `crc(A B) = crc(A)
    /// x^(8|B|) + crc(B)` over GF(2) modulo the CRC polynomial, and `x` is invertible there, so
    /// `crc(A) = (crc(A B) + crc(B)) x^(-8|B|)`: O(log |B|), no bytes of `A` needed.
    pub fn strip_suffix(self, suffix: Piece) -> Option<Piece> {
        let len = self.len.checked_sub(suffix.len)?;
        let crc = gf2::mul(self.crc ^ suffix.crc, gf2::x_pow_minus_8n(suffix.len));
        Some(Piece { crc, len })
    }

    /// The piece of `self`'s bytes followed by `next`'s: `crc(A B) = crc(A) x^(8|B|) +
    /// crc(B)` (the CRC's initial and final inversions cancel). A table of `x^(8 v 256^k)` makes
    /// it at most one multiplication per non-zero byte of `|B|` (crc32fast's `combine` squares
    /// its way up, some 2 us for a length of 20 MB: per commit, more than the bytes it hashes).
    pub fn then(self, next: Piece) -> Piece {
        Piece {
            crc: gf2::mul(self.crc, gf2::x_pow_8n(next.len)) ^ next.crc,
            len: self.len + next.len,
        }
    }
}

/// Reads `buf.len()` bytes at a position of the data section (relative to its start).
pub(crate) type SectionRead<'a> = dyn FnMut(u64, &mut [u8]) -> Result<()> + 'a;

/// How many bytes of a chunk's header fix its length for the fingerprint (`cbytes` is the
/// little-endian `i32` at bytes 12..16).
const CHUNK_LEN_FIELD_END: usize = 16;

/// The length of the chunk whose header starts with `head` (at least 16 bytes): its `cbytes`,
/// taken as at least 16.
fn covered_chunk_len(head: &[u8]) -> u64 {
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
    locs: &[ChunkLoc],
    section_len: u64,
    read: &mut SectionRead<'_>,
) -> Result<Vec<(u64, u64)>> {
    let mut r = Vec::new();
    for l in locs {
        let Some(v) = l.stored() else { continue };
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
    locs: &[ChunkLoc],
    section_len: u64,
    read: &mut SectionRead<'_>,
) -> Result<Piece> {
    let ranges = live_ranges(locs, section_len, read)?;
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
fn slice_reader(buf: &[u8], base: usize) -> impl FnMut(u64, &mut [u8]) -> Result<()> + '_ {
    move |pos: u64, dst: &mut [u8]| {
        let s = base
            .checked_add(usize::try_from(pos).map_err(|_| Error::ReadBuffer)?)
            .ok_or(Error::ReadBuffer)?;
        let src = buf.get(s..s + dst.len()).ok_or(Error::ReadBuffer)?;
        dst.copy_from_slice(src);
        Ok(())
    }
}

/// Arithmetic modulo the CRC-32 polynomial, in the reflected bit order of the CRC registers
/// (bit 31 holds the coefficient of `x^0`, bit 0 that of `x^31`).
mod gf2 {
    /// The polynomial without its `x^32` term, reflected.
    const POLY: u32 = 0xEDB8_8320;
    /// `x^-1`: `x^31 + (P - x^32 - 1) / x`, reflected.
    const X_INV: u32 = (POLY << 1) | 1;
    /// `1` (reflected: bit 31).
    const ONE: u32 = 0x8000_0000;

    /// `b * x` modulo the polynomial.
    const fn times_x(b: u32) -> u32 {
        (b >> 1) ^ ((b & 1).wrapping_neg() & POLY)
    }

    /// `a * b` modulo the polynomial, one bit of `a` at a time (the definition: tables and
    /// tests use it; branch-free, the bits of `a` are data).
    pub const fn mul_bitwise(a: u32, mut b: u32) -> u32 {
        let mut p = 0;
        let mut i = 0;
        while i < 32 {
            p ^= b & ((a >> (31 - i)) & 1).wrapping_neg();
            b = times_x(b);
            i += 1;
        }
        p
    }

    /// `OVERFLOW[w]`: `w x^4` for the `w` whose bits are the coefficients of `x^28..x^31`
    /// (bits 3..0): what multiplying by `x^4` folds back into the low degrees.
    const OVERFLOW: [u32; 16] = {
        let mut t = [0u32; 16];
        let mut w = 0;
        while w < 16 {
            t[w] = times_x(times_x(times_x(times_x(w as u32))));
            w += 1;
        }
        t
    };

    /// `a * b` modulo the polynomial, four bits of `a` at a time (Horner's rule over the
    /// nibbles of `a`, highest degrees first, with the 16 multiples of `b` by the polynomials
    /// of degree below 4): a quarter of [`mul_bitwise`]'s dependent steps. Per commit a
    /// fingerprint makes some ten of these (the CRC concatenations), which cost more than
    /// hashing the header, index block and trailer did with the bitwise multiplication.
    pub fn mul(a: u32, b: u32) -> u32 {
        // Nibble value v: bit 3 is the coefficient of x^0, bit 0 that of x^3 (reflected).
        let b1 = times_x(b);
        let b2 = times_x(b1);
        let b3 = times_x(b2);
        let mut m = [0u32; 16];
        let mut v = 1;
        while v < 16 {
            m[v] = (b3 & (v as u32 & 1).wrapping_neg())
                ^ (b2 & ((v as u32 >> 1) & 1).wrapping_neg())
                ^ (b1 & ((v as u32 >> 2) & 1).wrapping_neg())
                ^ (b & ((v as u32 >> 3) & 1).wrapping_neg());
            v += 1;
        }
        // Degrees 28..31 of `a` sit in its bits 3..0: the first nibble taken.
        let mut p = 0u32;
        let mut k = 0;
        while k < 8 {
            p = (p >> 4) ^ OVERFLOW[(p & 15) as usize] ^ m[((a >> (4 * k)) & 15) as usize];
            k += 1;
        }
        p
    }

    /// `X8[k][v]` = `x^(8 v 256^k)`: `x^(8 n)` is the product of one entry per non-zero byte
    /// of `n` (at most four multiplications below 4 GiB).
    const X8: [[u32; 256]; 8] = {
        let mut t = [[ONE; 256]; 8];
        // x^8 (reflected: bit 31 - 8).
        let mut step = 0x0080_0000u32;
        let mut k = 0;
        while k < 8 {
            let mut v = 1;
            while v < 256 {
                t[k][v] = mul_bitwise(t[k][v - 1], step);
                v += 1;
            }
            // x^(8 256^(k+1)) = x^(8 255 256^k) x^(8 256^k).
            step = mul_bitwise(t[k][255], step);
            k += 1;
        }
        t
    };

    /// `x^(8 n)` modulo the polynomial: multiplying a CRC by it appends `n` zero bytes.
    pub fn x_pow_8n(n: u64) -> u32 {
        let mut r: Option<u32> = None;
        for (k, row) in X8.iter().enumerate() {
            let v = ((n >> (8 * k)) & 255) as usize;
            if v != 0 {
                r = Some(r.map_or(row[v], |r| mul(r, row[v])));
            }
        }
        r.unwrap_or(ONE)
    }

    /// `x^(-8 n)` modulo the polynomial.
    pub fn x_pow_minus_8n(n: u64) -> u32 {
        // (x^-8)^n by squaring; x^-8 = (x^-1)^8.
        let mut base = X_INV;
        for _ in 0..3 {
            base = mul(base, base);
        }
        let (mut r, mut n) = (ONE, n);
        while n > 0 {
            if n & 1 != 0 {
                r = mul(r, base);
            }
            base = mul(base, base);
            n >>= 1;
        }
        r
    }
}

/// The four consecutive parts the fingerprint covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts {
    /// The frame header, metalayers included (`header_len` bytes).
    pub header: Piece,
    /// cframe: the data section (`cbytes` bytes, dead space included); sframe: every stored
    /// chunk (its `cbytes` bytes) in index order.
    pub data: Piece,
    /// The offsets index chunk (empty when the frame has no chunks).
    pub index: Piece,
    /// The trailer up to and including the `fpt` byte.
    pub trailer: Piece,
}

impl Parts {
    /// The fingerprint: all four parts in order.
    pub fn total(&self) -> Piece {
        self.header
            .then(self.data)
            .then(self.index)
            .then(self.trailer)
    }
}

/// The fingerprint type and slot stored at the end of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// `fpt`: 0 none, 1 CRC-32 (2 and 3 are reserved for 64/128-bit fingerprints).
    pub fpt: u8,
    /// The 16 bytes of storage.
    pub bytes: [u8; SLOT_LEN],
}

impl Slot {
    /// The slot at the end of `tail` (the last bytes of a frame or trailer).
    pub fn from_tail(tail: &[u8]) -> Result<Slot> {
        let n = tail.len();
        if n < TYPE_FROM_END {
            return Err(Error::ReadBuffer);
        }
        let mut bytes = [0u8; SLOT_LEN];
        bytes.copy_from_slice(&tail[n - SLOT_LEN..]);
        Ok(Slot {
            fpt: tail[n - TYPE_FROM_END],
            bytes,
        })
    }

    /// The four little-endian words: fingerprint, header, data and index CRCs.
    pub fn words(&self) -> [u32; 4] {
        let w = |k: usize| u32::from_le_bytes(self.bytes[4 * k..4 * k + 4].try_into().unwrap());
        [w(0), w(1), w(2), w(3)]
    }

    /// Whether the part CRCs (bytes 4..16) are present (another writer may store only the
    /// fingerprint and leave them zero).
    pub fn has_parts(&self) -> bool {
        self.bytes[4..].iter().any(|&b| b != 0)
    }
}

/// Fills the fingerprint slot of `trailer` (a complete trailer as [`trailer::to_bytes`] makes
/// it) for a frame whose header, data and index parts are `header`, `data` and `index`.
pub fn seal(trailer: &mut [u8], header: Piece, data: Piece, index: Piece) {
    let n = trailer.len();
    debug_assert!(n > TYPE_FROM_END);
    trailer[n - TYPE_FROM_END] = TYPE_CRC32;
    // The trailer part is hashed on (one combination fewer than `Parts::total`).
    let mut total = header.then(data).then(index);
    total.extend(&trailer[..n - SLOT_LEN]);
    let words = [total.crc, header.crc, data.crc, index.crc];
    for (k, w) in words.iter().enumerate() {
        trailer[n - SLOT_LEN + 4 * k..n - SLOT_LEN + 4 * k + 4].copy_from_slice(&w.to_le_bytes());
    }
}

/// A part of a frame where a fingerprint mismatch was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// The header (metalayers included).
    Header,
    /// cframe: the data section; sframe: the chunk files.
    Data,
    /// The offsets index.
    Index,
    /// The trailer (vlmetalayers, lengths), or the stored fingerprint word itself.
    Trailer,
    /// The part CRCs of the slot (the covered bytes match the fingerprint).
    Slot,
}

impl Region {
    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Region::Header => "header",
            Region::Data => "data",
            Region::Index => "offsets index",
            Region::Trailer => "trailer",
            Region::Slot => "fingerprint slot",
        }
    }
}

/// The outcome of checking a frame's fingerprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `fpt = 0` and an empty slot: nothing to check (c-blosc2 and disabled writers).
    Unfingerprinted,
    /// `fpt = 1` and every stored CRC matches the frame.
    Match,
    /// `fpt = 1` and the frame differs: the parts where (empty when the slot cannot tell).
    Mismatch(Vec<Region>),
    /// `fpt = 0` with a non-empty slot: no writer produces that, the type byte was changed.
    DamagedType,
    /// A fingerprint type b2frame cannot check (2, 3 reserved; others undefined).
    Unsupported(u8),
}

impl Verdict {
    /// Whether nothing speaks against the frame (matched, or nothing to check).
    pub fn is_sound(&self) -> bool {
        matches!(self, Verdict::Unfingerprinted | Verdict::Match)
    }

    /// A one-line description.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Unfingerprinted => "none (fpt 0)".into(),
            Verdict::Match => "crc32 (fpt 1), matches".into(),
            Verdict::Mismatch(r) if r.is_empty() => "crc32 (fpt 1), MISMATCH".into(),
            Verdict::Mismatch(r) => format!(
                "crc32 (fpt 1), MISMATCH in the {}",
                r.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ")
            ),
            Verdict::DamagedType => "fpt 0 with a non-empty slot: the type byte is damaged".into(),
            Verdict::Unsupported(t) => format!("fpt {t}: a type b2frame cannot check"),
        }
    }
}

/// Compares the stored slot with the parts computed from the frame. `data` is `None` when a
/// stored chunk could not be read.
pub fn judge(
    slot: &Slot,
    header: Piece,
    data: Option<Piece>,
    index: Piece,
    trailer: Piece,
) -> Verdict {
    match slot.fpt {
        TYPE_NONE if slot.bytes.iter().all(|&b| b == 0) => return Verdict::Unfingerprinted,
        TYPE_NONE => return Verdict::DamagedType,
        TYPE_CRC32 => {}
        t => return Verdict::Unsupported(t),
    }
    let [total, sh, sd, si] = slot.words();
    let Some(data) = data else {
        return Verdict::Mismatch(vec![Region::Data]);
    };
    let actual = Parts {
        header,
        data,
        index,
        trailer,
    };
    let total_ok = actual.total().crc == total;
    if !slot.has_parts() {
        return if total_ok {
            Verdict::Match
        } else {
            Verdict::Mismatch(Vec::new())
        };
    }
    let mut bad: Vec<Region> = [
        (sh, header, Region::Header),
        (sd, data, Region::Data),
        (si, index, Region::Index),
    ]
    .into_iter()
    .filter(|(s, p, _)| *s != p.crc)
    .map(|(_, _, r)| r)
    .collect();
    match (total_ok, bad.is_empty()) {
        (true, true) => Verdict::Match,
        // The covered bytes are what was fingerprinted: a part word was damaged.
        (true, false) => Verdict::Mismatch(vec![Region::Slot]),
        (false, true) => Verdict::Mismatch(vec![Region::Trailer]),
        (false, false) => {
            // If the stored parts with the actual trailer do not add up to the stored
            // fingerprint either, the trailer (or the fingerprint word) changed as well.
            let stored = Parts {
                header: Piece {
                    crc: sh,
                    len: header.len,
                },
                data: Piece {
                    crc: sd,
                    len: data.len,
                },
                index: Piece {
                    crc: si,
                    len: index.len,
                },
                trailer,
            };
            if stored.total().crc != total {
                bad.push(Region::Trailer);
            }
            Verdict::Mismatch(bad)
        }
    }
}

/// Checks the fingerprint of the cframe `buf` (exactly `frame_len` bytes) whose parsed header
/// is `header`, without a [`Frame`] (a buffer validated where it lies).
pub fn verify_cframe_bytes(buf: &[u8], header: &FrameHeader) -> Result<Verdict> {
    let n = buf.len();
    let min = super::header::TRAILER_MINLEN;
    let window = buf
        .get(n.checked_sub(min).ok_or(Error::InvalidHeader)?..)
        .ok_or(Error::ReadBuffer)?;
    let tl = trailer::trailer_len_from_window(window, n as u64)? as usize;
    let ts = n - tl;
    let hl = header.header_len as usize;
    let cbytes = usize::try_from(header.cbytes).map_err(|_| Error::InvalidHeader)?;
    let de = hl.checked_add(cbytes).ok_or(Error::InvalidHeader)?;
    if tl <= TYPE_FROM_END || hl > ts {
        return Err(Error::InvalidHeader);
    }
    let slot = Slot::from_tail(buf)?;
    if slot.fpt != TYPE_CRC32 {
        return Ok(judge(
            &slot,
            Piece::EMPTY,
            Some(Piece::EMPTY),
            Piece::EMPTY,
            Piece::EMPTY,
        ));
    }
    // Without chunks (nbytes 0) the trailer follows the header whatever `cbytes` says.
    let (data, index_pos) = if header.nbytes == 0 || de > ts {
        (Some(Piece::EMPTY), hl)
    } else {
        let region = &buf[de..ts];
        let locs = super::offsets::decode_index(region, super::cframe::max_stored(header)).ok();
        let data =
            locs.and_then(|l| data_piece(&l, cbytes as u64, &mut slice_reader(buf, hl)).ok());
        (data, de)
    };
    let ilen = index_part_len(&buf[index_pos..ts], (ts - index_pos) as u64) as usize;
    Ok(judge(
        &slot,
        Piece::of(&buf[..hl]),
        data,
        Piece::of(&buf[index_pos..index_pos + ilen]),
        Piece::of(&buf[ts..n - SLOT_LEN]),
    ))
}

/// With verify-on-open set: fails with `InvalidHeader` unless the cframe `buf` (see
/// [`verify_cframe_bytes`]) passes the check.
pub fn check_bytes_on_open(buf: &[u8], header: &FrameHeader) -> Result<()> {
    if verify_on_open() && !verify_cframe_bytes(buf, header)?.is_sound() {
        return Err(Error::InvalidHeader);
    }
    Ok(())
}

/// What an open frame knows about its data part, so that a commit can fingerprint it without
/// re-reading it (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Tracker {
    /// cframe: the data section's piece; sframe: the piece of the stored chunks `ids` names.
    data: Option<Piece>,
    /// sframes only (boxed: a frame stays small).
    sparse: Box<SparseTrack>,
}

/// What an sframe's tracker knows about its chunk files.
#[derive(Clone, Debug, Default)]
struct SparseTrack {
    /// The chunk ids `Tracker::data` covers, in index order.
    ids: Vec<u64>,
    /// The piece of each chunk file written or read since open, by id.
    chunks: HashMap<u64, Piece>,
}

impl Tracker {
    /// A new frame's tracker: an empty data part.
    pub fn empty() -> Tracker {
        Tracker {
            data: Some(Piece::EMPTY),
            ..Tracker::default()
        }
    }

    /// Forgets everything (after a failed mutation or a reload).
    pub fn reset(&mut self) {
        *self = Tracker::default();
    }

    /// A cframe payload of `bytes` was written at the end of the data section (past every
    /// covered byte, so it extends the data part).
    pub(super) fn appended_data(&mut self, bytes: &[u8]) {
        if let Some(p) = &mut self.data {
            p.extend(bytes);
        }
    }

    /// The data part as known now (`None`: unknown).
    pub(super) fn data(&self) -> Option<Piece> {
        self.data
    }

    /// sframe chunk file `id` now holds `chunk`.
    pub(super) fn wrote_chunk_file(&mut self, id: u64, chunk: &[u8]) {
        self.sparse.chunks.insert(id, Piece::of(chunk));
        if self.sparse.ids.contains(&id) {
            self.data = None;
        }
    }
}

impl Tracker {
    /// sframe chunk files moved from `new id` back to `old id` (same bytes); `locs` are the
    /// offsets that now name them.
    pub(super) fn moved_chunk_files(&mut self, moved: &[(u64, u64)], locs: &[ChunkLoc]) {
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
fn stored_ids(locs: &[ChunkLoc]) -> Vec<u64> {
    locs.iter().filter_map(|l| l.stored()).collect()
}

/// The piece of `len` bytes of `store` from `pos`, read in blocks (lent when in memory).
fn piece_of_range(store: &Store, pos: u64, len: u64) -> Result<Piece> {
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
enum Held<'a> {
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
struct Layout {
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
        let min = super::header::TRAILER_MINLEN as u64;
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
                locs,
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
                            let n = dir.fetch_chunk(header, id, &mut buf)?;
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
                &self.locs,
                self.header.cbytes as u64,
                &mut store_reader(s, at.header_len),
            )
            .ok(),
            Backing::Sparse(dir) => {
                let mut p = Piece::EMPTY;
                let mut buf = Vec::new();
                let mut ok = true;
                for id in stored_ids(&self.locs) {
                    match dir.fetch_chunk(&self.header, id, &mut buf) {
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
    pub(super) fn check_on_open(self) -> Result<Frame> {
        if verify_on_open() && !self.verify_fingerprint()?.is_sound() {
            return Err(Error::InvalidHeader);
        }
        Ok(self)
    }

    /// Before a mutation writes anything: learn the data part, from the stored slot when it
    /// adds up (a cframe then reads only the 16-byte head of each stored chunk, for the
    /// length), else (cframes) by one pass over the stored chunks, so that the mutation can
    /// update it and its commit (and a relocated copy of the old state) can be sealed.
    pub(super) fn prime_fingerprint(&mut self) {
        if self.fp.data.is_some() || !writes_enabled() {
            return;
        }
        // Only sframes track their chunk ids (listing the ids of a large cframe on every
        // append cost a quarter of the append).
        let ids = match self.backing {
            Backing::Contiguous(_) => Vec::new(),
            Backing::Sparse(_) => stored_ids(&self.locs),
        };
        let empty = !self.locs.iter().any(|l| l.is_stored());
        if empty {
            self.fp.data = Some(Piece::EMPTY);
            self.fp.sparse.ids = ids;
            return;
        }
        let known = match self.data_piece_from_slot() {
            Ok(Some(d)) => Some(d),
            _ => match &self.backing {
                Backing::Contiguous(store) => data_piece(
                    &self.locs,
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
    pub(super) fn split_data_at(&self, at: u64, staged: bool) -> Option<(Piece, Piece)> {
        self.split_data_at_known(at, staged, None)
    }

    /// [`Frame::split_data_at`], taking the bytes of the data section from `known`
    /// (`(section position, bytes)`, read by the caller already) where it holds them, and
    /// those of an in-memory frame in place: no copy of the data after the chunk.
    pub(super) fn split_data_at_known(
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
        let named = |v: u64| {
            self.locs
                .iter()
                .filter(|l| **l == ChunkLoc::Stored(v))
                .count()
        };
        if named(at) != 1 {
            return None;
        }
        let before = self
            .locs
            .iter()
            .filter_map(|l| l.stored().filter(|&v| v < at))
            .max();
        if let Some(v) = before {
            let r = live_ranges(&[ChunkLoc::Stored(v)], section, &mut read).ok()?;
            if r.iter().any(|&(_, e)| e > at) {
                return None;
            }
        }
        let after: Vec<ChunkLoc> = self
            .locs
            .iter()
            .copied()
            .filter(|l| l.stored().is_some_and(|v| v > at))
            .collect();
        let own = live_ranges(&[ChunkLoc::Stored(at)], section, &mut read).ok()?;
        let rest = live_ranges(&after, section, &mut read).ok()?;
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
    pub(super) fn set_data_piece(&mut self, p: Option<Piece>) {
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
                    &self.locs,
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
    /// it will be once the `staged` writes are made).
    pub(super) fn data_piece_for_commit(
        &mut self,
        header: &FrameHeader,
        header_len: u64,
        staged: Option<&[(u64, Vec<u8>)]>,
    ) -> Result<Piece> {
        let piece = match &self.backing {
            Backing::Contiguous(_) if self.locs.is_empty() => Piece::EMPTY,
            Backing::Contiguous(store) => match (self.fp.data, staged) {
                (Some(p), _) => p,
                (None, Some(w)) => data_piece(
                    &self.locs,
                    header.cbytes as u64,
                    &mut overlay_reader(store, header_len, w),
                )?,
                (None, None) => self.stored_data_piece(header, header_len)?,
            },
            Backing::Sparse(_) => {
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
        };
        self.fp.data = Some(piece);
        Ok(piece)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nibble_multiplication_matches_the_bitwise_one() {
        let mut s = 0x9E37_79B9u32;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        };
        let edges = [
            0u32,
            1,
            0x8000_0000,
            0xFFFF_FFFF,
            0xEDB8_8320,
            0x0000_000F,
            0xF000_0000,
        ];
        for &a in &edges {
            for &b in &edges {
                assert_eq!(gf2::mul(a, b), gf2::mul_bitwise(a, b), "{a:#x} {b:#x}");
            }
        }
        for _ in 0..100_000 {
            let (a, b) = (next(), next());
            assert_eq!(gf2::mul(a, b), gf2::mul_bitwise(a, b), "{a:#x} {b:#x}");
        }
    }

    #[test]
    fn x_pow_8n_matches_repeated_multiplication() {
        let x8 = gf2::mul_bitwise(0x0080_0000, 0x8000_0000);
        let mut r = 0x8000_0000u32;
        for n in 0..70_000u64 {
            assert_eq!(gf2::x_pow_8n(n), r, "{n}");
            r = gf2::mul_bitwise(r, x8);
        }
        for n in [
            1u64 << 20,
            20_000_123,
            u64::from(u32::MAX) * 3 + 7,
            u64::MAX,
            0x0100_0000_0000_0000,
        ] {
            let (a, b) = (n / 3, n - n / 3);
            assert_eq!(
                gf2::x_pow_8n(n),
                gf2::mul(gf2::x_pow_8n(a), gf2::x_pow_8n(b))
            );
            assert_eq!(
                gf2::mul(gf2::x_pow_8n(n), gf2::x_pow_minus_8n(n)),
                0x8000_0000
            );
        }
    }

    #[test]
    fn pieces_combine_like_the_concatenation() {
        let a: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        let b: Vec<u8> = (0..333u32).map(|i| (i * 13 + 1) as u8).collect();
        let mut ab = a.clone();
        ab.extend_from_slice(&b);
        assert_eq!(Piece::of(&a).then(Piece::of(&b)), Piece::of(&ab));
        assert_eq!(Piece::EMPTY.then(Piece::of(&a)), Piece::of(&a));
        assert_eq!(Piece::of(&a).then(Piece::EMPTY), Piece::of(&a));
        let mut p = Piece::of(&a);
        p.extend(&b);
        assert_eq!(p, Piece::of(&ab));
        // The IEEE CRC-32 (zlib's): the check value of "123456789".
        assert_eq!(Piece::of(b"123456789").crc, 0xCBF4_3926);
    }

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

    #[test]
    fn a_suffix_strips_off_by_crc_arithmetic() {
        let a: Vec<u8> = (0..777u32).map(|i| (i * 31 + 7) as u8).collect();
        for blen in [0usize, 1, 3, 4, 100, 5000] {
            let b: Vec<u8> = (0..blen as u32).map(|i| (i * 17 + 3) as u8).collect();
            let mut ab = a.clone();
            ab.extend_from_slice(&b);
            assert_eq!(
                Piece::of(&ab).strip_suffix(Piece::of(&b)),
                Some(Piece::of(&a)),
                "{blen}"
            );
        }
        assert_eq!(Piece::of(b"ab").strip_suffix(Piece::of(b"abc")), None);
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
        let at = |i: usize| f.locs[i].stored().expect("stored");
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
