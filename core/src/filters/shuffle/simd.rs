//! Byte shuffle/unshuffle kernels, generic over [`Vector`] (SSE2, AVX2, NEON).
//!
//! Layout facts (c-blosc2 format): for `n` elements of `es` bytes, shuffled byte
//! `out[j*n + i] = in[i*es + j]` ("row" `j` holds byte `j` of every element).
//!
//! Transposition strategy: a step handles `G = 16 * LANES` elements. Within one 128-bit lane a
//! group of 16 elements is a small matrix whose address `reg*16 + byte` has `log2(es)` + 4 bits;
//! shuffling rotates that address by 4 (element bits to the bottom), unshuffling by
//! `log2(es)`, and each [`zip_round`] rotates it by one. Element sizes that are not a power of two
//! (or exceed 16) go through 16x16 byte transposes of 16-byte column windows.
//!
//! All functions take raw pointers and a start element, process as many whole steps as fit, and
//! return the next unprocessed element; the caller finishes with the scalar code.

use super::vector::{unzip_rounds, zip_rounds, Vector};

/// Shuffles elements `start..` of `src` (`n` elements of size `N`, a power of two 2..=16).
///
/// # Safety
/// `src` readable and `dst` writable for `n * N` bytes; the CPU has `V`'s feature.
#[inline(always)]
unsafe fn shuffle_pow2<V: Vector, const N: usize, const LOG: u32>(
    src: *const u8,
    dst: *mut u8,
    n: usize,
    start: usize,
) -> usize {
    let g = 16 * V::LANES;
    let mut i = start;
    while i + g <= n {
        // SAFETY: elements i..i+g are in bounds (loop condition): lane 0 reads bytes
        // [i*N, i*N + 16N), lane 1 the next 16N; each row store writes g bytes of row j at i.
        unsafe {
            let mut x: [V; N] = V::load_split::<N>(src.add(i * N));
            // Rotating the address left by 4 = right by LOG: LOG unzip rounds, or 4 zip rounds
            // where those are cheaper (byte packs cost two extra ALU ops per register).
            if LOG >= 3 {
                zip_rounds(&mut x, 4);
            } else {
                unzip_rounds(&mut x, LOG);
            }
            for (j, r) in x.iter().enumerate() {
                r.store(dst.add(j * n + i));
            }
        }
        i += g;
    }
    i
}

/// Inverse of [`shuffle_pow2`]; `LOG` is `log2(N)`.
///
/// # Safety
/// As [`shuffle_pow2`].
#[inline(always)]
unsafe fn unshuffle_pow2<V: Vector, const N: usize, const LOG: u32>(
    src: *const u8,
    dst: *mut u8,
    n: usize,
    start: usize,
) -> usize {
    let g = 16 * V::LANES;
    let mut i = start;
    while i + g <= n {
        // SAFETY: each row load reads g bytes of row j at element i (< n); the stores write the
        // 16N bytes of elements i..i+16 (lane 0) and i+16..i+32 (lane 1), all < n.
        unsafe {
            let mut x: [V; N] = [V::zero(); N];
            for (j, r) in x.iter_mut().enumerate() {
                *r = V::load(src.add(j * n + i));
            }
            zip_rounds(&mut x, LOG);
            let p = dst.add(i * N);
            for lane in 0..V::LANES {
                for (m, r) in x.iter().enumerate() {
                    r.store_lane(lane, p.add(16 * (N * lane + m)));
                }
            }
        }
        i += g;
    }
    i
}

/// The 16-byte column windows `c0` covering an element of `es` bytes (the last one may overlap
/// its predecessor; for `es < 16` the single window starts at 0).
#[inline(always)]
fn windows(es: usize) -> impl Iterator<Item = usize> {
    let full = es / 16;
    let extra = if es < 16 {
        Some(0)
    } else if !es.is_multiple_of(16) {
        Some(es - 16)
    } else {
        None
    };
    (0..full).map(|w| 16 * w).chain(extra)
}

/// Whether a step of `g` elements starting at `i` stays in bounds for any element size: the
/// 16-byte window of the last element must end inside the `n * es` buffer.
#[inline(always)]
fn step_fits(i: usize, g: usize, n: usize, es: usize) -> bool {
    i + g <= n && (i + g - 1) * es + es.max(16) <= n * es
}

/// Shuffle for any element size (>= 2) through 16x16 byte transposes.
///
/// # Safety
/// As [`shuffle_pow2`] with `N = es`.
#[inline(always)]
unsafe fn shuffle_any<V: Vector>(
    es: usize,
    src: *const u8,
    dst: *mut u8,
    n: usize,
    start: usize,
) -> usize {
    let g = 16 * V::LANES;
    let mut i = start;
    while step_fits(i, g, n, es) {
        for c0 in windows(es) {
            let rows = (es - c0).min(16);
            // SAFETY: `step_fits` bounds every 16-byte window read at (i+e)*es + c0 for e < g;
            // each row store writes g bytes of row c0+r (< es) at element i (i + g <= n).
            unsafe {
                let mut x: [V; 16] = [V::zero(); 16];
                for (e, r) in x.iter_mut().enumerate() {
                    let p = src.add((i + e) * es + c0);
                    // Lane 1 (AVX2 only): element i+16+e, in bounds when LANES == 2.
                    let q = if V::LANES == 2 { p.add(16 * es) } else { p };
                    *r = V::load2(p, q);
                }
                zip_rounds(&mut x, 4);
                for (r, v) in x.iter().enumerate().take(rows) {
                    v.store(dst.add((c0 + r) * n + i));
                }
            }
        }
        i += g;
    }
    i
}

/// Unshuffle for any element size (>= 2) through 16x16 byte transposes. For `es < 16` each
/// element store spills into the following elements; stores run in element order so every
/// spill is overwritten later (by this step, the next one or the caller's scalar tail).
///
/// # Safety
/// As [`shuffle_pow2`] with `N = es`.
#[inline(always)]
unsafe fn unshuffle_any<V: Vector>(
    es: usize,
    src: *const u8,
    dst: *mut u8,
    n: usize,
    start: usize,
) -> usize {
    let g = 16 * V::LANES;
    let mut i = start;
    while step_fits(i, g, n, es) {
        for c0 in windows(es) {
            let rows = (es - c0).min(16);
            // SAFETY: row loads read g bytes of rows c0+r < es at element i (i + g <= n);
            // `step_fits` bounds every 16-byte store at (i+e)*es + c0.
            unsafe {
                let mut x: [V; 16] = [V::zero(); 16];
                for (r, v) in x.iter_mut().enumerate().take(rows) {
                    *v = V::load(src.add((c0 + r) * n + i));
                }
                zip_rounds(&mut x, 4);
                for lane in 0..V::LANES {
                    for (e, v) in x.iter().enumerate() {
                        v.store_lane(lane, dst.add((i + 16 * lane + e) * es + c0));
                    }
                }
            }
        }
        i += g;
    }
    i
}

/// Shuffles elements `start..n` as far as whole steps go; returns the next element.
///
/// # Safety
/// `src` readable and `dst` writable for `n * es` bytes, `es >= 2`; the CPU has `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn shuffle<V: Vector>(
    es: usize,
    src: *const u8,
    dst: *mut u8,
    n: usize,
    start: usize,
) -> usize {
    // SAFETY: forwarded contract.
    unsafe {
        match es {
            2 => shuffle_pow2::<V, 2, 1>(src, dst, n, start),
            4 => shuffle_pow2::<V, 4, 2>(src, dst, n, start),
            8 => shuffle_pow2::<V, 8, 3>(src, dst, n, start),
            16 => shuffle_pow2::<V, 16, 4>(src, dst, n, start),
            _ => shuffle_any::<V>(es, src, dst, n, start),
        }
    }
}

/// Unshuffles elements `start..n` as far as whole steps go; returns the next element.
///
/// # Safety
/// As [`shuffle`].
#[inline(always)]
pub(crate) unsafe fn unshuffle<V: Vector>(
    es: usize,
    src: *const u8,
    dst: *mut u8,
    n: usize,
    start: usize,
) -> usize {
    // SAFETY: forwarded contract.
    unsafe {
        match es {
            2 => unshuffle_pow2::<V, 2, 1>(src, dst, n, start),
            4 => unshuffle_pow2::<V, 4, 2>(src, dst, n, start),
            8 => unshuffle_pow2::<V, 8, 3>(src, dst, n, start),
            16 => unshuffle_pow2::<V, 16, 4>(src, dst, n, start),
            _ => unshuffle_any::<V>(es, src, dst, n, start),
        }
    }
}
