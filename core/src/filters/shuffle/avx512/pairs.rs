//! AVX-512 shuffle of 8-byte and unshuffle of 8- and 16-byte elements through zipped row pairs.
//!
//! Unshuffle: a step (64 elements) starts by zipping rows `2m` and `2m + 1` with
//! `vpunpck{l,h}qdq`: the low result holds, per 16-byte lane, 8 elements of row `2m` then the
//! same 8 of row `2m + 1` ([`zipped_rows`]). Two `vpermt2b` rounds then give 64-byte chunks of
//! the output ([`element_chunks`]; 16-byte elements: each half of the rows gives 8-byte halves
//! ([`half_chunks`]) that a final pair of qword unpacks merges). Shuffle of 8-byte elements runs
//! the same path backwards (two rounds, then the zips give the rows). Per output line that is 2
//! permutes, 1 or 2 unpacks and the store, against 3 or 4 permute rounds, and unpacks run on
//! more execution ports than `vpermt2b` on Zen 4.
//!
//! Why rows are loaded ahead or stored late: rows are a multiple of 4 KiB apart with the usual
//! block sizes, so a step's row lines share one L1 set. Loading (storing) the rows of different
//! groups at different steps, held in registers meanwhile, spreads them over several sets.

use super::{plan_map, prefetch_rows, rounds, second_step, Round};
use std::arch::x86_64::*;

/// Layout after zipping: byte `[e0 e1 e2 j0 | e4 e5]` (`e` the element in the step, `j` the
/// byte of the element), register bits `(j1, j2, e3)`: register `m` (`m + 4`) is the low (high)
/// unpack of rows `2m` and `2m + 1`.
pub(super) const fn zipped_rows() -> [usize; 12] {
    [3, 6, 7, 0, 1, 2, 8, 4, 5, 9, 10, 11]
}

/// Element-major layout (8-byte elements) with register bits `(e4, e5, e3)`: register `r` is
/// 64-byte chunk [`chunk`]`(r)` of the step.
pub(super) const fn element_chunks() -> [usize; 12] {
    [0, 1, 2, 3, 4, 5, 8, 6, 7, 9, 10, 11]
}

/// The 8-byte halves (`j3` fixed) of 16-byte elements: qword `2L + s` of register `r` is
/// element `4s + L` of 64-byte chunk pair [`chunk`]`(r)` (byte `[j0 j1 j2 e2 | e0 e1]`,
/// register bits `(e4, e5, e3)`), so the low and high qword unpacks of the two halves are
/// chunks `2 chunk(r)` and `2 chunk(r) + 1` of the step.
pub(super) const fn half_chunks() -> [usize; 12] {
    [0, 1, 2, 4, 5, 3, 8, 6, 7, 9, 10, 11]
}

/// The chunk (or chunk pair) register `r` holds in [`element_chunks`] and [`half_chunks`]:
/// register bits `(e4, e5, e3)` read as `e3 + 2 e4 + 4 e5`.
#[inline(always)]
const fn chunk(r: usize) -> usize {
    (r >> 2) | ((r & 3) << 1)
}

/// Rows `2m` and `2m + 1` of `rows` (`n` bytes apart) at element `at`, zipped: registers `m`
/// and `m + 4` of [`zipped_rows`].
///
/// # Safety
/// `at + 64 <= n`; `rows` readable for `(2m + 2) * n` bytes; the CPU has AVX512F.
#[inline(always)]
unsafe fn pair(rows: *const u8, n: usize, m: usize, at: usize) -> [__m512i; 2] {
    // SAFETY: both loads read 64 bytes of rows 2m, 2m + 1 at element at + 64 <= n.
    unsafe {
        let a = _mm512_loadu_si512(rows.add(2 * m * n + at) as *const __m512i);
        let b = _mm512_loadu_si512(rows.add((2 * m + 1) * n + at) as *const __m512i);
        [_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b)]
    }
}

/// The 8 registers of [`zipped_rows`] from its 4 pairs.
#[inline(always)]
fn gather(p: [[__m512i; 2]; 4]) -> [__m512i; 8] {
    let mut y = [p[0][0]; 8];
    for (m, [lo, hi]) in p.into_iter().enumerate() {
        y[m] = lo;
        y[m + 4] = hi;
    }
    y
}

/// Permutes zipped rows into [`element_chunks`] and stores the step at element `i`.
///
/// # Safety
/// `i + 64 <= n` for a `dst` writable for `8 * n` bytes; CPU as in [`super::rounds`].
#[inline(always)]
unsafe fn finish8(p: [[__m512i; 2]; 4], dst: *mut u8, i: usize) {
    let plan: &[Round; 2] = &const { plan_map::<2>(9, zipped_rows(), element_chunks()) };
    let mut y = gather(p);
    // SAFETY: CPU per the contract; the stores write bytes [i*8, (i+64)*8) of dst.
    unsafe {
        rounds(&mut y, plan);
        for (r, v) in y.iter().enumerate() {
            _mm512_storeu_si512(dst.add(i * 8 + 64 * chunk(r)) as *mut __m512i, *v);
        }
    }
}

/// One unshuffle step of 8-byte elements at element `i`, all rows loaded now.
///
/// # Safety
/// `i + 64 <= n`; `src` readable and `dst` writable for `8 * n` bytes; CPU as in
/// [`super::rounds`].
#[inline(always)]
unsafe fn step8(src: *const u8, dst: *mut u8, n: usize, i: usize) {
    // SAFETY: forwarded contract.
    unsafe {
        let p = [
            pair(src, n, 0, i),
            pair(src, n, 1, i),
            pair(src, n, 2, i),
            pair(src, n, 3, i),
        ];
        finish8(p, dst, i);
    }
}

/// Unshuffles `n >= 64` 8-byte elements; row pair `m` is loaded `3 - m` steps ahead of its use,
/// so each step reads 2 row lines from each of 4 L1 sets instead of 8 lines from one (64 KiB,
/// Zen 4: 0.91 of memcpy in the bench against 0.87-0.88 for the AVX2 kernel; stand-alone over
/// 6 buffer placements 0.96, and 0.88 with all rows loaded in their own step).
///
/// # Safety
/// `src` readable and `dst` writable for `8 * n` bytes, not overlapping; the CPU has AVX512F,
/// AVX512BW and AVX512VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
pub(super) unsafe fn unshuffle8(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: every step below starts at some i with i + 64 <= n; the pairs loaded ahead are at
    // i + 64 * k with i + 64 * (k + 1) <= i + 256 <= n.
    unsafe {
        step8(src, dst, n, 0);
        // Steps from here on read whole aligned row lines.
        let mut i = second_step(src as *mut u8, 1);
        if i + 256 <= n {
            let mut p0 = [
                pair(src, n, 0, i),
                pair(src, n, 0, i + 64),
                pair(src, n, 0, i + 128),
            ];
            let mut p1 = [pair(src, n, 1, i), pair(src, n, 1, i + 64)];
            let mut p2 = pair(src, n, 2, i);
            while i + 256 <= n {
                let n0 = pair(src, n, 0, i + 192);
                let n1 = pair(src, n, 1, i + 128);
                let n2 = pair(src, n, 2, i + 64);
                let p3 = pair(src, n, 3, i);
                finish8([p0[0], p1[0], p2, p3], dst, i);
                p0 = [p0[1], p0[2], n0];
                p1 = [p1[1], n1];
                p2 = n2;
                i += 64;
            }
        }
        while i + 64 <= n {
            step8(src, dst, n, i);
            i += 64;
        }
        if i < n {
            step8(src, dst, n, n - 64);
        }
    }
}

/// The 8 rows of the shuffled step of 8-byte elements at element `i` (row `j` in register `j`):
/// two rounds from [`element_chunks`] to [`zipped_rows`], then the inverse of [`pair`]'s zip.
///
/// # Safety
/// `i + 64 <= n` for a `src` readable for `8 * n` bytes; CPU as in [`super::rounds`].
#[inline(always)]
unsafe fn rows8(src: *const u8, i: usize) -> [__m512i; 8] {
    let plan: &[Round; 2] = &const { plan_map::<2>(9, element_chunks(), zipped_rows()) };
    // SAFETY: the loads read bytes [i*8, (i+64)*8) of src; CPU per the contract.
    unsafe {
        let mut x = [_mm512_setzero_si512(); 8];
        for (r, v) in x.iter_mut().enumerate() {
            *v = _mm512_loadu_si512(src.add(i * 8 + 64 * chunk(r)) as *const __m512i);
        }
        rounds(&mut x, plan);
        let mut rows = x;
        for m in 0..4 {
            rows[2 * m] = _mm512_unpacklo_epi64(x[m], x[m + 4]);
            rows[2 * m + 1] = _mm512_unpackhi_epi64(x[m], x[m + 4]);
        }
        rows
    }
}

/// How many steps late [`shuffle8`] stores row `j` of a step.
///
/// Why: with all 8 row lines of a step going to one L1 set the stores' line fills serialise
/// (0.61 of memcpy on 64 KiB). Stored late like this, a step's stores touch 6 sets, at most 2
/// lines each. The pattern was found by measurement on Zen 4 (stand-alone, geometric mean over 6
/// buffer placements, 64 KiB): rows `2d, 2d + 1` stored `d` steps late 0.79, this one 0.94, the
/// same delays in reverse row order 0.82, delays summing to 20 0.73 (the held rows no longer
/// fit the registers: 19 held + 8 working + 4 index vectors = 31 of 32). In the filters bench
/// (64 KiB) shuffle 8 went from 0.75-0.77 of memcpy (3 rounds, rows `2d, 2d + 1` `d` steps
/// late, prefetched) to 0.97-0.98; at 4 MiB from 0.77 to 0.83-0.84.
const DELAY8: [usize; 8] = [0, 1, 2, 3, 4, 5, 1, 3];

/// Steps whose rows [`shuffle8`] holds (the largest delay + 1).
const HELD8: usize = 6;

/// Shuffles `n >= 64` 8-byte elements, storing row `j` of each step [`DELAY8`]`[j]` steps late.
///
/// # Safety
/// As [`unshuffle8`].
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
pub(super) unsafe fn shuffle8(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: rows are only stored at elements `at` where a step started (at + 64 <= n), into
    // the 8 rows of the `8 * n`-byte dst; every step's loads are inside src.
    unsafe {
        let put = |x: &__m512i, j: usize, at: usize| {
            _mm512_storeu_si512(dst.add(j * n + at) as *mut __m512i, *x)
        };
        let x = rows8(src, 0);
        // The held steps start out as the step at 0: its late rows are stored from there
        // (repeatedly, which is harmless) and the loop needs no branch.
        let mut held = [x; HELD8];
        let mut at = [0usize; HELD8];
        for (j, &d) in DELAY8.iter().enumerate() {
            if d == 0 {
                put(&x[j], j, 0);
            }
        }
        let mut i = second_step(dst, 1);
        while i + 64 <= n {
            let x = rows8(src, i);
            for k in (1..HELD8).rev() {
                held[k] = held[k - 1];
                at[k] = at[k - 1];
            }
            held[0] = x;
            at[0] = i;
            for (j, &d) in DELAY8.iter().enumerate() {
                put(&held[d][j], j, at[d]);
            }
            i += 64;
        }
        // Rows not stored yet: row j of the last DELAY8[j] steps.
        for (j, &d) in DELAY8.iter().enumerate() {
            for k in 0..d {
                put(&held[k][j], j, at[k]);
            }
        }
        if i < n {
            let x = rows8(src, n - 64);
            for (j, v) in x.iter().enumerate() {
                put(v, j, n - 64);
            }
        }
    }
}

/// Rows `8h..8h + 8` of 16-byte elements at element `i`, zipped and permuted into
/// [`half_chunks`].
///
/// # Safety
/// `i + 64 <= n`, `h < 2`; `src` readable for `16 * n` bytes; CPU as in [`super::rounds`].
#[inline(always)]
unsafe fn half16(src: *const u8, n: usize, h: usize, i: usize) -> [__m512i; 8] {
    let plan: &[Round; 2] = &const { plan_map::<2>(9, zipped_rows(), half_chunks()) };
    // SAFETY: rows 8h..8h+8 < 16 at element i; CPU per the contract.
    unsafe {
        let rows = src.add(8 * h * n);
        let mut y = gather([
            pair(rows, n, 0, i),
            pair(rows, n, 1, i),
            pair(rows, n, 2, i),
            pair(rows, n, 3, i),
        ]);
        rounds(&mut y, plan);
        y
    }
}

/// Merges the two halves of the step at element `i` and stores it.
///
/// # Safety
/// `i + 64 <= n` for a `dst` writable for `16 * n` bytes; the CPU has AVX512F.
#[inline(always)]
unsafe fn store16(h0: &[__m512i; 8], h1: &[__m512i; 8], dst: *mut u8, i: usize) {
    for r in 0..8 {
        // SAFETY: chunks 2 chunk(r), 2 chunk(r) + 1 < 16 of the step: bytes [i*16, (i+64)*16).
        unsafe {
            let p = dst.add(i * 16 + 128 * chunk(r));
            _mm512_storeu_si512(p as *mut __m512i, _mm512_unpacklo_epi64(h0[r], h1[r]));
            _mm512_storeu_si512(
                p.add(64) as *mut __m512i,
                _mm512_unpackhi_epi64(h0[r], h1[r]),
            );
        }
    }
}

/// Unshuffles `n >= 64` 16-byte elements; rows 0..8 are loaded (and permuted) one step ahead
/// of rows 8..16, so a step reads 8 row lines from each of 2 L1 sets instead of 16 from one
/// (more than its 8 ways), and each row's line `j + 1` steps ahead is prefetched as in
/// [`prefetch_rows`] (64 KiB, Zen 4: 0.70-0.71 of memcpy in the bench against 0.63-0.64 for
/// 4 `vpermt2b` rounds with the same prefetches).
///
/// # Safety
/// As [`unshuffle8`] with `16 * n`-byte buffers.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
pub(super) unsafe fn unshuffle16(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: `cur` and `next` always satisfy x + 64 <= n when their rows are read; the
    // prefetches stay inside the rows (next + 64 * 9 <= n).
    unsafe {
        let mut cur = 0;
        let mut h0 = half16(src, n, 0, cur);
        let mut next = second_step(src as *mut u8, 1);
        while next + 64 <= n {
            let h0_next = half16(src, n, 0, next);
            let h1 = half16(src, n, 1, cur);
            prefetch_rows::<8>(src, n, next);
            prefetch_rows::<8>(src.add(8 * n), n, cur);
            store16(&h0, &h1, dst, cur);
            h0 = h0_next;
            cur = next;
            next += 64;
        }
        let h1 = half16(src, n, 1, cur);
        store16(&h0, &h1, dst, cur);
        if cur + 64 < n {
            let (a, b) = (half16(src, n, 0, n - 64), half16(src, n, 1, n - 64));
            store16(&a, &b, dst, n - 64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filters::shuffle::generic::{shuffle_from, unshuffle_from};

    fn has_cpu() -> bool {
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vbmi")
    }

    /// The kernels against the portable code, called directly (the dispatcher only uses the
    /// 8-byte unshuffle on large buffers), for sizes covering the prologue, the loop, the plain
    /// steps after it and the overlapping last step, at many alignments of `src` and `dst`.
    #[test]
    fn kernels_equal_the_portable_code() {
        if !has_cpu() {
            return;
        }
        let mut big = vec![0u8; 16 * 2200 + 128];
        let mut x = 0x9E37_79B9u32;
        for b in big.iter_mut() {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *b = x as u8;
        }
        for es in [8usize, 16] {
            for n in [64usize, 65, 127, 128, 255, 256, 300, 383, 640, 1000, 2113] {
                for off in (0..64).step_by(5) {
                    let src = &big[off..off + n * es];
                    let mut want = vec![0u8; n * es];
                    let mut w = crate::sys::Out::init(&mut want);
                    // SAFETY: the generic kernel writes only initialised values.
                    unshuffle_from(es, n, src, unsafe { w.as_uninit() }, 0);
                    drop(w);
                    let mut got = vec![0u8; n * es + 64];
                    let dst = &mut got[(off * 3) % 64..][..n * es];
                    if es == 8 {
                        let mut want = vec![0u8; n * es];
                        shuffle_from(es, n, src, &mut want, 0);
                        // SAFETY: as below.
                        unsafe { shuffle8(src.as_ptr(), dst.as_mut_ptr(), n) };
                        assert!(dst == &want[..], "shuffle es {es} n {n} off {off}");
                    }
                    // SAFETY: CPU checked above; buffers of n * es bytes, not overlapping.
                    unsafe {
                        if es == 8 {
                            unshuffle8(src.as_ptr(), dst.as_mut_ptr(), n)
                        } else {
                            unshuffle16(src.as_ptr(), dst.as_mut_ptr(), n)
                        }
                    }
                    assert!(dst == &want[..], "es {es} n {n} off {off}");
                }
            }
        }
    }
}
