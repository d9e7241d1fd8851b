//! BloscLZ encoder, behaving like c-blosc2's (same parse, same give-up rules, hence the same
//! stream sizes), written from the format and behaviour description.
//!
//! The parse: one hash table of 4-byte sequences (2^12, 2^13 or 2^14 slots for clevel 1, 2,
//! 3..9) holding the latest position of each hash; every input position is looked up and then
//! inserted. A candidate is taken when its first 4 bytes match and it is less than 73725
//! bytes back. A match is extended to the first differing byte; the emitted length then
//! backs off so the match ends 3 bytes before that byte (4 minus the one-byte bias), leaving the
//! tail to literals. Matches shorter than 6 output bytes, or shorter than 8 when far
//! (distance ≥ 8192), are not taken. After a match the hash table learns the position at the
//! match end (clevel 9 also learns the next one, from a 3-byte hash) and the parse resumes two
//! bytes later.
//!
//! Before any of that, "entropy probing" runs the same parse, counting instead of writing, on
//! a window of at most one hash table's length (the last 1/8, 1/4, 1/2 or all of the input
//! for clevel 1, 2-3, 4-6, 7-9); when the estimated ratio is below the clevel's threshold the
//! encoder gives up and the caller stores the input raw.

use super::{MAX_COPY, MAX_DISTANCE, MAX_FARDISTANCE};

/// How far the emitted match length backs off from the first mismatching byte.
const IPSHIFT: usize = 4;
/// Shortest match length value (before the +2 bias of the format) worth encoding.
const MINLEN: usize = 4;
/// Multiplicative hash constant (Knuth's golden ratio for 32 bits).
const HASH_MUL: u32 = 2_654_435_761;
/// Inputs shorter than this, or outputs smaller than [`MIN_OUTPUT`], are never compressed.
const MIN_INPUT: usize = 16;
const MIN_OUTPUT: usize = 66;

/// Per-clevel hash log (index 0 unused).
const HASH_LOG: [u32; 10] = [0, 12, 13, 14, 14, 14, 14, 14, 14, 14];
/// Per-clevel minimum estimated compression ratio to go on compressing (index 0 unused).
const MIN_RATIO: [f64; 10] = [0.0, 2.0, 1.5, 1.2, 1.2, 1.2, 1.2, 1.15, 1.1, 1.0];

/// Compresses `src` into `dst` at `clevel` (1..=9; 0 means "do not compress", larger values
/// act as 9). Returns the stream length, or 0 when the input is too small or too poorly
/// compressible, the stream does not fit in `dst`, or it would not be smaller than `src`;
/// the caller then stores `src` raw.
pub fn compress(clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    if clevel == 0 || src.len() > i32::MAX as usize {
        return 0;
    }
    let clevel = clevel.min(9) as usize;
    match HASH_LOG[clevel] {
        12 => compress_with::<{ 1 << 12 }>(clevel, src, dst),
        13 => compress_with::<{ 1 << 13 }>(clevel, src, dst),
        _ => compress_with::<{ 1 << 14 }>(clevel, src, dst),
    }
}

/// [`compress`] with a hash table of `N` slots, on the stack.
fn compress_with<const N: usize>(clevel: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let length = src.len();
    // Positions in the probe window (at most `N` bytes) and in inputs of at most 64 KiB fit
    // 16 bits: a table of `u16` is half the bytes to zero and to cache (see `encode`).
    let mut htab = [0u16; N];

    // Entropy probing on a window ending at the end of the input.
    let maxlen = match clevel {
        1 => length / 8,
        2..=3 => length / 4,
        4..=6 => length / 2,
        _ => length,
    };
    let start = length - maxlen;
    let window = &src[start..start + maxlen.min(N)];
    if probe_ratio::<N>(window, &mut htab) < MIN_RATIO[clevel] {
        return 0;
    }
    if length < MIN_INPUT || dst.len() < MIN_OUTPUT {
        return 0;
    }
    let dst = if dst.len() > i32::MAX as usize {
        &mut dst[..i32::MAX as usize]
    } else {
        dst
    };
    let n = match (length <= 1 << 16, clevel == 9) {
        (true, false) => encode::<N, false, u16>(src, dst),
        (true, true) => encode::<N, true, u16>(src, dst),
        (false, false) => encode::<N, false, u32>(src, dst),
        (false, true) => encode::<N, true, u32>(src, dst),
    };
    match n {
        Some(n) if n < length => n,
        _ => 0,
    }
}

/// A hash-table slot: an input position, stored in 16 bits when every position fits.
trait Slot: Copy {
    const ZERO: Self;
    fn get(self) -> usize;
    fn of(pos: usize) -> Self;
}

impl Slot for u16 {
    const ZERO: Self = 0;
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn of(pos: usize) -> Self {
        pos as u16
    }
}

impl Slot for u32 {
    const ZERO: Self = 0;
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn of(pos: usize) -> Self {
        pos as u32
    }
}

#[inline(always)]
fn hash<const N: usize>(seq: u32) -> usize {
    // N = 2^hash_log; the mask is a no-op that lets the compiler drop table bounds checks.
    (seq.wrapping_mul(HASH_MUL) >> (32 - N.trailing_zeros())) as usize & (N - 1)
}

#[inline(always)]
fn read_u32(s: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(s[i..i + 4].try_into().unwrap())
}

#[inline(always)]
fn read_u64(s: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(s[i..i + 8].try_into().unwrap())
}

/// One past the first position `p >= ip` where `s[p] != s[p - (ip - r)]`, capped at `bound`
/// (`r < ip < bound <= s.len()`). The "+1" is the reference's convention; the caller backs
/// off by [`IPSHIFT`].
#[inline(always)]
fn match_end(s: &[u8], ip: usize, r: usize, bound: usize) -> usize {
    // Equal-length views (one bounds check here, none in the loops).
    let a = &s[ip..bound];
    let b = &s[r..r + a.len()];
    let mut k = 0;
    while k + 8 <= a.len() {
        let x = read_u64(a, k) ^ read_u64(b, k);
        if x != 0 {
            return ip + k + (x.trailing_zeros() / 8) as usize + 1;
        }
        k += 8;
    }
    while k < a.len() {
        if a[k] != b[k] {
            return ip + k + 1;
        }
        k += 1;
    }
    bound
}

/// For a candidate `r < anchor` with `anchor + 8 < bound`: `None` when the first 4 bytes
/// differ or the match is too short to take (see [`short_end`]), else [`match_end`] from
/// `anchor`. One 8-byte comparison does both the 4-byte check and, usually, the whole
/// extension (most candidates stop within 8 bytes).
/// `word` is the 8 bytes at `anchor`, already loaded by the caller for the hash.
#[inline(always)]
fn candidate_end(s: &[u8], anchor: usize, word: u64, r: usize, bound: usize) -> Option<usize> {
    let x = word ^ read_u64(s, r);
    if x as u32 != 0 {
        return None;
    }
    if x != 0 {
        return short_end(anchor, x);
    }
    Some(match_end(s, anchor + 8, r + 8, bound))
}

/// [`match_end`] for a match whose first differing byte is among bytes 4..8 of `anchor`
/// (`x`, the XOR of the two 8-byte words, is non-zero with its low 4 bytes zero), or `None`
/// when that match is shorter than [`MINLEN`] after the [`IPSHIFT`] back-off, which both
/// parses skip like a failed candidate. Only a mismatch at byte 7 survives (end `anchor + 8`,
/// length 4), so the end is a constant offset behind one branch instead of a `trailing_zeros`
/// of loaded data: with the latter every later load of the parse waited on this candidate's
/// load (no speculation across a data dependency), with the branch the CPU predicts and runs
/// ahead, as with the reference's byte loop. Same stream, fewer instructions.
#[inline(always)]
fn short_end(anchor: usize, x: u64) -> Option<usize> {
    const _: () = assert!(IPSHIFT == 4 && MINLEN == 4);
    if x << 8 == 0 {
        Some(anchor + 8)
    } else {
        None
    }
}

/// The probe's literal scan from `ip`: the first position `< ip_end` whose hash candidate
/// shares its first 4 bytes, as (position, candidate, XOR of their 8 bytes); every position
/// scanned is entered in `htab`. Out of line so that the hot loop (most positions are
/// literals) keeps its few values in registers.
#[inline(never)]
fn probe_scan<const N: usize>(
    scan: &[u8],
    mut ip: usize,
    htab: &mut [u16; N],
) -> Option<(usize, usize, u64)> {
    let ip_end = scan.len().checked_sub(7)?;
    while ip < ip_end {
        let word = u64::from_le_bytes(*scan[ip..].first_chunk::<8>().unwrap());
        let h = hash::<N>(word as u32);
        let r = htab[h] as usize;
        htab[h] = ip as u16;
        if r < ip && ip - r < MAX_FARDISTANCE {
            // r < ip, so this load is in `scan` too.
            let x = word ^ u64::from_le_bytes(*scan[r..].first_chunk::<8>().unwrap());
            if x as u32 == 0 {
                return Some((ip, r, x));
            }
        }
        ip += 1;
    }
    None
}

/// Estimated compression ratio of `win` (input bytes consumed / output bytes counted) under
/// the same parse as [`encode`], with the reference's probe bookkeeping: the count starts as if
/// a 4-literal run had been written, while the parse itself starts at byte 0.
fn probe_ratio<const N: usize>(win: &[u8], htab: &mut [u16; N]) -> f64 {
    // `htab` is freshly zeroed by the caller; `win.len() <= N <= 2^14`, so positions fit.
    let limit = win.len();
    if limit <= 12 {
        return 0.0;
    }
    let bound = limit - 1;
    // The parse runs while `ip < limit - 12`, i.e. while `scan[ip..ip + 8]` exists; with the
    // bound in the slice's length the scan loop needs no other bounds check.
    let scan = &win[..limit - 5];
    let Some(ip_end) = scan.len().checked_sub(7) else {
        return 0.0;
    };
    let mut oc: usize = 5;
    // Literal bookkeeping per run of literals (not per byte): `copy` is the reference's
    // literal counter (mod 32) when the pending literals, from `lit`, began.
    let mut copy: usize = 4;
    let mut lit = 0usize;
    let mut ip = 0usize;
    'parse: loop {
        let Some((anchor, r, x)) = probe_scan::<N>(scan, ip, htab) else {
            ip = ip_end.max(ip);
            break 'parse;
        };
        ip = anchor;
        let end = if x != 0 {
            let Some(end) = short_end(anchor, x) else {
                ip += 1;
                continue;
            };
            end
        } else {
            match_end(win, anchor + 8, r + 8, bound)
        };
        let distance = anchor - r;
        let end = end - IPSHIFT;
        let len = end - anchor;
        if len < MINLEN {
            ip += 1;
            continue;
        }
        // Each literal counts 1, each 32nd in a row one more (a new control byte); a match
        // right after a full run takes back that unused control byte.
        let n = anchor - lit;
        oc += n + (copy + n) / MAX_COPY;
        let open_run = (copy + n) % MAX_COPY;
        if open_run == 0 {
            oc -= 1;
        }
        copy = 0;
        if len >= 7 {
            oc += (len - 7) / 255 + 1;
        }
        oc += if distance - 1 < MAX_DISTANCE { 2 } else { 4 };
        ip = end;
        let h = hash::<N>(read_u32(win, ip));
        htab[h] = ip as u16;
        ip += 2;
        oc += 1;
        lit = ip;
    }
    let n = ip - lit;
    oc += n + (copy + n) / MAX_COPY;
    ip as f64 / oc as f64
}

/// Writes the literal runs for `src[lit..end]` at `op`; `None` when the reference would run
/// out of output (it wants one spare byte after the last literal).
#[inline(always)]
fn emit_literals(src: &[u8], lit: usize, end: usize, dst: &mut [u8], op: usize) -> Option<usize> {
    let n = end - lit;
    if n == 0 {
        return Some(op);
    }
    let total = n + n.div_ceil(MAX_COPY);
    if total + 1 > dst.len() - op {
        return None;
    }
    // Common case, one short run: a fixed 32-byte copy (two vector moves, no memcpy call);
    // bytes past the run are overwritten by what follows or lie past the stream's end.
    if n <= MAX_COPY {
        if let (Some(d), Some(s)) = (
            dst.get_mut(op + 1..op + 1 + MAX_COPY),
            src.get(lit..lit + MAX_COPY),
        ) {
            d.copy_from_slice(s);
            dst[op] = (n - 1) as u8;
            return Some(op + total);
        }
    }
    let out = &mut dst[op..op + total];
    let mut o = 0;
    for run in src[lit..end].chunks(MAX_COPY) {
        out[o] = (run.len() - 1) as u8;
        out[o + 1..o + 1 + run.len()].copy_from_slice(run);
        o += run.len() + 1;
    }
    Some(op + total)
}

/// Writes a match of length value `len` (decoded length `len + 2`) whose source is
/// `distance` bytes back; `None` when it does not fit.
#[inline(always)]
fn emit_match(dst: &mut [u8], op: usize, len: usize, distance: usize) -> Option<usize> {
    let d = distance - 1;
    let room = dst.len() - op;
    if d < MAX_DISTANCE {
        if len < 7 {
            if room < 2 {
                return None;
            }
            dst[op] = ((len << 5) + (d >> 8)) as u8;
            dst[op + 1] = d as u8;
            Some(op + 2)
        } else {
            let ext = (len - 7) / 255;
            let need = 3 + ext;
            if room < need {
                return None;
            }
            let out = &mut dst[op..op + need];
            out[0] = ((7 << 5) + (d >> 8)) as u8;
            out[1..1 + ext].fill(255);
            out[1 + ext] = ((len - 7) % 255) as u8;
            out[2 + ext] = d as u8;
            Some(op + need)
        }
    } else {
        let f = d - MAX_DISTANCE;
        if len < 7 {
            if room < 4 {
                return None;
            }
            dst[op..op + 4].copy_from_slice(&[
                ((len << 5) + 31) as u8,
                255,
                (f >> 8) as u8,
                f as u8,
            ]);
            Some(op + 4)
        } else {
            let ext = (len - 7) / 255;
            let need = 5 + ext;
            if room < need {
                return None;
            }
            let out = &mut dst[op..op + need];
            out[0] = (7 << 5) + 31;
            out[1..1 + ext].fill(255);
            out[1 + ext..].copy_from_slice(&[
                ((len - 7) % 255) as u8,
                255,
                (f >> 8) as u8,
                f as u8,
            ]);
            Some(op + need)
        }
    }
}

/// The real parse; `src.len() >= 16`, `dst.len() >= 66`. `DOUBLE_HASH` is clevel 9's extra
/// hash insertion after each match.
/// `T` holds every position of `src` (the caller picks `u16` for inputs of at most 64 KiB).
/// Out of line, with its table in its own frame: each instance gets the registers to itself.
#[inline(never)]
fn encode<const N: usize, const DOUBLE_HASH: bool, T: Slot>(
    src: &[u8],
    dst: &mut [u8],
) -> Option<usize> {
    let mut htab = [T::ZERO; N];
    let length = src.len();
    let bound = length - 1;
    let ip_limit = length - 12;
    let mut op = 0usize;
    // Literals pending since `lit`; the first 4 bytes always start the first literal run.
    let mut lit = 0usize;
    let mut ip = 4usize;
    while ip < ip_limit {
        let anchor = ip;
        let word = read_u64(src, ip);
        let h = hash::<N>(word as u32);
        let r = htab[h].get();
        htab[h] = T::of(anchor);
        let distance = anchor - r;
        if distance == 0 || distance >= MAX_FARDISTANCE {
            ip += 1;
            continue;
        }
        let Some(end) = candidate_end(src, anchor, word, r, bound) else {
            ip += 1;
            continue;
        };
        let end = end - IPSHIFT;
        let len = end - anchor;
        // Far matches (biased distance >= MAX_DISTANCE) cost 4 bytes: not worth it when short.
        if len < MINLEN || (len <= 5 && distance > MAX_DISTANCE) {
            ip += 1;
            continue;
        }
        op = emit_literals(src, lit, anchor, dst, op)?;
        op = emit_match(dst, op, len, distance)?;
        ip = end;
        let seq = read_u32(src, ip);
        htab[hash::<N>(seq)] = T::of(ip);
        if DOUBLE_HASH {
            htab[hash::<N>(seq >> 8)] = T::of(ip + 1);
        }
        ip += 2;
        // The reference reserves the next literal run's control byte here.
        if op + 1 > dst.len() {
            return None;
        }
        lit = ip;
    }
    op = emit_literals(src, lit, length, dst, op)?;
    dst[0] |= 1 << 5;
    Some(op)
}

#[cfg(test)]
mod slot_tests {
    use super::*;

    /// Text-like input with repeats at every distance class, `len` bytes.
    fn sample(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        let mut v = Vec::with_capacity(len);
        while v.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let back = (x >> 8) as usize % 70_000;
            let n = 3 + (x >> 40) as usize % 40;
            if back > 0 && back <= v.len() && !x.is_multiple_of(3) {
                for _ in 0..n {
                    v.push(v[v.len() - back]);
                }
            } else {
                v.extend((0..n).map(|i| (x >> (i % 8 * 8)) as u8 % 16));
            }
        }
        v.truncate(len);
        v
    }

    /// `short_end` gives what the full rule gives: end = first differing byte + 1, backed off
    /// by IPSHIFT, kept only when at least MINLEN long.
    #[test]
    fn short_end_is_the_backed_off_match_end() {
        let anchor = 100;
        for byte in 4..8 {
            for diff in 1..=255u64 {
                for above in [0u64, 1, 0xff, 0xa5a5_a5a5] {
                    let x = (diff << (8 * byte)) | above.checked_shl(8 * (byte + 1)).unwrap_or(0);
                    let end = anchor + (x.trailing_zeros() / 8) as usize + 1 - IPSHIFT;
                    let taken = end - anchor >= MINLEN;
                    assert_eq!(short_end(anchor, x), taken.then_some(end + IPSHIFT));
                }
            }
        }
    }

    /// The 16-bit table (inputs up to 64 KiB) parses exactly like the 32-bit one, up to the
    /// last position it can hold.
    #[test]
    fn u16_and_u32_tables_give_the_same_stream() {
        for (len, seed) in [(1 << 16, 1), (1 << 16, 2), (40_000, 3)] {
            let src = sample(len, seed);
            for double in [false, true] {
                let mut a = vec![0u8; len + 64];
                let mut b = vec![0u8; len + 64];
                let (x, y) = if double {
                    (
                        encode::<{ 1 << 14 }, true, u16>(&src, &mut a),
                        encode::<{ 1 << 14 }, true, u32>(&src, &mut b),
                    )
                } else {
                    (
                        encode::<{ 1 << 14 }, false, u16>(&src, &mut a),
                        encode::<{ 1 << 14 }, false, u32>(&src, &mut b),
                    )
                };
                let n = x.expect("fits");
                assert!(n < len / 2, "sample compresses: {n} of {len}");
                assert_eq!(x, y);
                assert_eq!(a[..n], b[..n]);
            }
        }
    }
}
