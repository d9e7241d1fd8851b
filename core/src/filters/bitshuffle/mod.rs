//! Bit shuffle (`BLOSC_BITSHUFFLE`): the bit planes of the elements.
//!
//! Format (c-blosc2): with `nel = len / ts` and `n8 = nel - nel % 8`, the first `n8 * ts` bytes
//! become `8 * ts` bit rows of `n8 / 8` bytes; row `8b + k` holds bit `k` of byte `b` of every
//! element, element `i` at bit `i % 8` of byte `i / 8` (LSB first). Bytes from `n8 * ts` on are
//! copied verbatim. Chunks of format version 2 (Blosc1) differ on decode only: when
//! `nel % 8 != 0` their blocks were stored without bit shuffling at all.
//!
//! Implementation: the elements go through in tiles (a few KiB, reused thread-local scratch, no
//! allocation per call): byte shuffle of the tile, then a bit transpose of each byte row into
//! (or out of) its 8 bit rows. Typesize 1 needs no byte shuffle and skips the tile. Blocks of
//! fewer than 128 elements (bit rows under 16 bytes) instead transpose all their byte rows in one
//! call through 8 "virtual" bit rows (`bitshuffle_short`), so that the SIMD steps still apply.

pub(crate) mod generic;
pub(crate) mod simd;

use crate::filters::shuffle::dispatch::Kernels;
use crate::filters::shuffle::Simd;
use std::cell::RefCell;

thread_local! {
    /// Tile scratch, grown to the largest tile this thread has used.
    static TILE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Elements per tile: a multiple of 256 (a whole AVX2 bit-transpose step) with a tile of at
/// most 16 KiB, or 128 elements for typesizes above 64 (at most 32 KiB).
fn tile_elems(ts: usize) -> usize {
    if ts <= 64 {
        (16384 / ts) & !255
    } else {
        128
    }
}

/// Bit rows at least this far apart are staged on decode (for typesizes >= 16, where each
/// tile reads many short runs): 8 rows `R` bytes apart, `R` a multiple of 4 KiB as with the
/// usual power-of-two block sizes, all fall in one L1 cache set, and the 32-byte reads of the
/// SIMD steps then evict each other's lines. Copying each row's run whole into a small
/// contiguous stage first avoids that. (Measured: it does not pay on encode, nor for smaller
/// typesizes.)
const STAGE_ROW_DISTANCE: usize = 4096;

/// Runs `f` with a scratch buffer of `len` bytes.
fn with_tile<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    let mut f = Some(f);
    let r = TILE.try_with(|cell| {
        if let Ok(mut v) = cell.try_borrow_mut() {
            if v.len() < len {
                v.resize(len, 0);
            }
            let f = f.take().expect("called once");
            Some(f(&mut v[..len]))
        } else {
            None
        }
    });
    match r {
        Ok(Some(r)) => r,
        // Thread-local storage gone (thread exit) or re-entered: use a one-off buffer.
        _ => (f.take().expect("not yet called"))(&mut vec![0u8; len]),
    }
}

/// Number of bytes the bit transform covers: `n8 * ts`, with `n8` the whole groups of 8 elements.
fn body_len(ts: usize, len: usize) -> (usize, usize) {
    if ts == 0 {
        return (0, 0);
    }
    let n8 = len / ts / 8 * 8;
    (n8, n8 * ts)
}

/// Bit rows shorter than this many bytes (blocks of fewer than 128 elements) take the
/// "short rows" paths: the SIMD bit transposes work on 16 or 32 groups of a bit row at a time,
/// so with short rows the per-byte-row path would leave all the work to the portable tail, a few
/// groups per call, once per byte of the element.
const SHORT_ROW: usize = 16;

/// Copies `len < 16` bytes with at most two overlapping word moves (the short pieces of the
/// short-row paths; `copy_from_slice` of a length unknown at compile time is a `memcpy` call).
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8], len: usize) {
    let (dst, src) = (&mut dst[..len], &src[..len]);
    if len >= 8 {
        dst[..8].copy_from_slice(&src[..8]);
        dst[len - 8..].copy_from_slice(&src[len - 8..]);
    } else if len >= 4 {
        dst[..4].copy_from_slice(&src[..4]);
        dst[len - 4..].copy_from_slice(&src[len - 4..]);
    } else {
        dst.copy_from_slice(src);
    }
}

/// Short rows, encode: the block is byte-shuffled into `rows` (byte row `b` = byte `b` of every
/// element), the concatenated byte rows are bit-transposed as one long row into 8 *virtual* bit
/// rows of `ts * r` bytes in `stage` (virtual row `k` = bit row `k` of byte row 0, then of byte
/// row 1, ...), and each piece of `r` bytes goes to its bit row `8b + k`. So the SIMD bit
/// transpose sees `ts * r` groups per row instead of `r`.
fn bitshuffle_short(k: &Kernels, ts: usize, n8: usize, src: &[u8], dst: &mut [u8]) {
    let (r, body) = (n8 / 8, n8 * ts);
    let v = ts * r;
    with_tile(2 * body, |scratch| {
        let (rows, stage) = scratch.split_at_mut(body);
        (k.shuffle)(ts, n8, &src[..body], rows);
        (k.bit_t)(rows, stage, 0, v);
        for (kk, vrow) in stage.chunks_exact(v).enumerate() {
            for (b, piece) in vrow.chunks_exact(r).enumerate() {
                let at = (8 * b + kk) * r;
                copy_short(&mut dst[at..at + r], piece, r);
            }
        }
    });
}

/// Short rows, decode: the inverse of [`bitshuffle_short`].
fn bitunshuffle_short(k: &Kernels, ts: usize, n8: usize, src: &[u8], dst: &mut [u8]) {
    let (r, body) = (n8 / 8, n8 * ts);
    let v = ts * r;
    with_tile(2 * body, |scratch| {
        let (rows, stage) = scratch.split_at_mut(body);
        for (kk, vrow) in stage.chunks_exact_mut(v).enumerate() {
            for (b, piece) in vrow.chunks_exact_mut(r).enumerate() {
                let at = (8 * b + kk) * r;
                copy_short(piece, &src[at..at + r], r);
            }
        }
        (k.bit_u)(stage, 0, v, rows);
        k.unshuffle_init(ts, n8, rows, &mut dst[..body]);
    });
}

fn bitshuffle_with(k: &Kernels, ts: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(
        src.len(),
        dst.len(),
        "bitshuffle: src and dst lengths differ"
    );
    let (n8, body) = body_len(ts, src.len());
    let r = n8 / 8;
    if n8 > 0 {
        if ts == 1 {
            (k.bit_t)(&src[..n8], &mut dst[..n8], 0, r);
        } else if r < SHORT_ROW {
            bitshuffle_short(k, ts, n8, src, dst);
        } else {
            let tile = tile_elems(ts).min(n8);
            with_tile(tile * ts, |scratch| {
                let mut i0 = 0;
                while i0 < n8 {
                    let t = tile.min(n8 - i0);
                    let s = &mut scratch[..t * ts];
                    (k.shuffle)(ts, t, &src[i0 * ts..(i0 + t) * ts], s);
                    for (b, row) in s.chunks_exact(t).enumerate() {
                        (k.bit_t)(row, &mut dst[..body], 8 * b * r + i0 / 8, r);
                    }
                    i0 += t;
                }
            });
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

fn bitunshuffle_with(k: &Kernels, ts: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(
        src.len(),
        dst.len(),
        "bitunshuffle: src and dst lengths differ"
    );
    let (n8, body) = body_len(ts, src.len());
    let r = n8 / 8;
    if n8 > 0 {
        if ts == 1 {
            (k.bit_u)(&src[..n8], 0, r, &mut dst[..n8]);
        } else if r < SHORT_ROW {
            bitunshuffle_short(k, ts, n8, src, dst);
        } else {
            let tile = tile_elems(ts).min(n8);
            let staged = ts >= 16 && r >= STAGE_ROW_DISTANCE;
            with_tile(tile * ts + tile, |scratch| {
                let (scratch, stage) = scratch.split_at_mut(tile * ts);
                let mut i0 = 0;
                while i0 < n8 {
                    let t = tile.min(n8 - i0);
                    let s = &mut scratch[..t * ts];
                    for (b, row) in s.chunks_exact_mut(t).enumerate() {
                        let base = 8 * b * r + i0 / 8;
                        if staged {
                            let stage = &mut stage[..t];
                            for (kk, run) in stage.chunks_exact_mut(t / 8).enumerate() {
                                let at = base + kk * r;
                                run.copy_from_slice(&src[at..at + t / 8]);
                            }
                            (k.bit_u)(stage, 0, t / 8, row);
                        } else {
                            (k.bit_u)(&src[..body], base, r, row);
                        }
                    }
                    k.unshuffle_init(ts, t, s, &mut dst[i0 * ts..(i0 + t) * ts]);
                    i0 += t;
                }
            });
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

impl Simd {
    /// [`bitshuffle`] with this level's kernels.
    pub fn bitshuffle(self, typesize: usize, src: &[u8], dst: &mut [u8]) {
        bitshuffle_with(self.kernels(), typesize, src, dst)
    }

    /// [`bitunshuffle`] with this level's kernels.
    pub fn bitunshuffle(self, typesize: usize, src: &[u8], dst: &mut [u8]) {
        bitunshuffle_with(self.kernels(), typesize, src, dst)
    }

    /// [`bitunshuffle_legacy`] with this level's kernels.
    pub fn bitunshuffle_legacy(self, typesize: usize, src: &[u8], dst: &mut [u8]) {
        assert_eq!(
            src.len(),
            dst.len(),
            "bitunshuffle: src and dst lengths differ"
        );
        if typesize == 0 || !(src.len() / typesize).is_multiple_of(8) {
            dst.copy_from_slice(src);
        } else {
            let body = src.len() - src.len() % typesize;
            self.bitunshuffle(typesize, &src[..body], &mut dst[..body])
        }
    }
}

/// Bit-shuffles `src` into `dst` (same length); bytes after the last multiple of 8 elements are
/// copied verbatim. `typesize` 0 is a plain copy.
///
/// # Panics
/// If `src.len() != dst.len()` (a caller bug, never a data error).
pub fn bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    Simd::active().bitshuffle(typesize, src, dst)
}

/// Inverse of [`bitshuffle`] (chunk format versions 3 and later).
///
/// # Panics
/// If `src.len() != dst.len()`.
pub fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    Simd::active().bitunshuffle(typesize, src, dst)
}

/// Bit-unshuffle for chunks of format version 2 (Blosc1): a block whose element count is not a
/// multiple of 8 was stored without bit shuffling and is copied verbatim; otherwise its whole
/// elements are bit-unshuffled and the bytes after the last whole element are left as `dst`
/// holds them, as c-blosc2 leaves them. (Blosc 1.x's encoder never wrote them either: what a
/// chunk holds there is its scratch memory, not data, and c-blosc2 3.3.5 returns the caller's
/// bytes there; docs/divergences.md#15-bytedelta_buggy-and-int_trunc-write-the-trailing-bytes.)
///
/// # Panics
/// If `src.len() != dst.len()`.
pub fn bitunshuffle_legacy(typesize: usize, src: &[u8], dst: &mut [u8]) {
    Simd::active().bitunshuffle_legacy(typesize, src, dst)
}
