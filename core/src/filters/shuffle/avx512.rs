//! AVX-512 (F + BW + VBMI) byte shuffle/unshuffle for element sizes 2, 4, 8 and 16 (shuffle of
//! 8, unshuffle of 8 and 16 in [`pairs`]).
//!
//! A step moves 64 elements: `es` registers of 64 bytes. Seen as an address `reg * 64 + byte`
//! (`log2(es) + 6` bits), shuffling and unshuffling are bit permutations of that address (the
//! element bits and the byte-of-element bits trade places). `vpermt2b` builds a register from
//! any 64 of the 128 bytes of two registers, so one round over register pairs `(r, r | 2^t)`
//! can trade register bit `t` for any byte bit and reorder the byte bits at will: `log2(es)`
//! rounds (one 2-source permute per 64 output bytes each) do the whole transpose, against
//! 4 zip rounds plus lane fix-ups with AVX2. The per-round index vectors are the same for every
//! pair, so they are computed at compile time ([`plan`], [`plan_map`]) and stay in registers.
//!
//! On Zen 4 a zmm store, `vextracti64x4` to memory and `vinserti64x4` from memory each take
//! about one `vpermt2b` issue slot, while `vpunpck*` takes a third of one; shuffling 16-byte
//! elements ([`shuffle_pairs16`]) therefore picks 8-byte halves with unpacks and ends in 32-byte
//! row pairs ([`row_pairs`]), one round short of whole rows. BENCHMARKS.md ("Filters") has the
//! measurements and the variants that lost.
//!
//! Every load and store of a step is a whole 64-byte register. The steps do not have to tile the
//! buffer: after the first step at element 0 the next one starts where the row accesses become
//! 64-byte aligned, and the last step ends exactly at `n` (overlapping its predecessor). Overlapping
//! steps write the same bytes again, which is harmless because `src` and `dst` never overlap.

use std::arch::x86_64::*;

mod pairs;

/// One round's two index vectors (`vpermt2b`: bit 6 picks the second register).
type Round = [[u8; 64]; 2];

/// Index vectors of the `L` rounds transposing `2^L` rows of 64 bytes (`shuffle`: element-major
/// input to row-major output; else the inverse).
const fn plan<const L: usize>(shuffle: bool) -> [Round; L] {
    let (elements, rows) = (element_major(), row_major(L));
    if shuffle {
        plan_map::<L>(L + 6, elements, rows)
    } else {
        plan_map::<L>(L + 6, rows, elements)
    }
}

/// Index vectors of `R` rounds taking the `nb`-bit address layout `from` to `to`.
///
/// A layout maps each bit of the logical position `pos = e * es + j` (element `e`, byte `j`;
/// bits `0..log2(es)` are `j`) to an address bit: `0..6` the byte in a register, `6..` the
/// register. Round `t` swaps register bit `t` with the byte bit holding the logical bit that
/// belongs there at the end (register bits `R..` must already be in place); the last round
/// also puts the byte bits in their final order.
const fn plan_map<const R: usize>(nb: usize, from: [usize; 12], to: [usize; 12]) -> [Round; R] {
    let mut loc = from;
    let mut out = [[[0u8; 64]; 2]; R];
    let mut t = 0;
    while t < R {
        let mut now = 0;
        while loc[now] != 6 + t {
            now += 1;
        }
        let mut want = 0;
        while to[want] != 6 + t {
            want += 1;
        }
        let mut new = loc;
        new[now] = loc[want];
        new[want] = 6 + t;
        if t == R - 1 {
            new = to;
        }
        let mut v = 0;
        while v < 2 {
            let mut q = 0;
            while q < 64 {
                // The logical position at new address (register bit t = v, byte q) ...
                let addr = q | (v << (6 + t));
                let mut pos = 0;
                let mut k = 0;
                while k < nb {
                    pos |= ((addr >> new[k]) & 1) << k;
                    k += 1;
                }
                // ... and where it was before this round (other register bits unchanged).
                let mut old = 0;
                k = 0;
                while k < nb {
                    old |= ((pos >> k) & 1) << loc[k];
                    k += 1;
                }
                out[t][v][q] = ((old & 63) | (((old >> (6 + t)) & 1) << 6)) as u8;
                q += 1;
            }
            v += 1;
        }
        loc = new;
        t += 1;
    }
    out
}

/// Element-major layout: address = logical position.
const fn element_major() -> [usize; 12] {
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
}

/// Row-major layout for `2^l` rows: register = byte of element `j`, byte = element `e`.
const fn row_major(l: usize) -> [usize; 12] {
    let mut a = [0usize; 12];
    let mut b = 0;
    while b < l + 6 {
        a[b] = if b < l { 6 + b } else { b - l };
        b += 1;
    }
    a
}

/// Row-pair layout for `2^l` rows: the low 32-byte half of register `m + 2^(l-1) * s` holds
/// row `2m`, its high half row `2m + 1`, both for elements `32s..32s + 32` of the step. One
/// round fewer than [`row_major`]; the rows go out as 32-byte stores.
const fn row_pairs(l: usize) -> [usize; 12] {
    let mut a = [0usize; 12];
    a[0] = 5;
    let mut b = 1;
    while b < l {
        a[b] = 5 + b;
        b += 1;
    }
    let mut e = 0;
    while e < 5 {
        a[l + e] = e;
        e += 1;
    }
    a[l + 5] = 5 + l;
    a
}

/// Layout of one half (8-byte half-elements) of 64 16-byte elements after `vpunpck{l,h}qdq`
/// of source registers `2q` and `2q + 1` into register `q`: qword `2L + s` of register `q` is
/// element `8q + 4s + L` (logical bits: 3 byte bits, then 6 element bits).
const fn qword_halves() -> [usize; 12] {
    [0, 1, 2, 4, 5, 3, 6, 7, 8, 9, 10, 11]
}

/// Runs the `L` rounds of `plan` over `N = 2^L` registers.
///
/// # Safety
/// The CPU has AVX512F, AVX512BW and AVX512VBMI.
#[inline(always)]
unsafe fn rounds<const N: usize, const L: usize>(x: &mut [__m512i; N], plan: &[Round; L]) {
    for (t, round) in plan.iter().enumerate() {
        // SAFETY: the index tables are 64 readable bytes each; CPU features per the contract.
        unsafe {
            let i0 = _mm512_loadu_si512(round[0].as_ptr() as *const __m512i);
            let i1 = _mm512_loadu_si512(round[1].as_ptr() as *const __m512i);
            let bit = 1 << t;
            for r in 0..N {
                if r & bit == 0 {
                    let (a, b) = (x[r], x[r | bit]);
                    x[r] = _mm512_permutex2var_epi8(a, i0, b);
                    x[r | bit] = _mm512_permutex2var_epi8(a, i1, b);
                }
            }
        }
    }
}

/// The element where the second step starts: the first one above 0 at which `p + i * stride`
/// is 64-byte aligned, or 64 if there is none below.
#[inline(always)]
fn second_step(p: *mut u8, stride: usize) -> usize {
    match (64 - (p as usize & 63)) & 63 {
        m if m != 0 && m % stride == 0 => m / stride,
        _ => 64,
    }
}

/// Shuffles one step of 64 elements starting at element `i`.
///
/// # Safety
/// `i + 64 <= n`; `src` readable and `dst` writable for `n * N` bytes; CPU as in [`rounds`].
#[inline(always)]
unsafe fn shuffle_step<const N: usize, const L: usize>(
    src: *const u8,
    dst: *mut u8,
    n: usize,
    i: usize,
    plan: &[Round; L],
) {
    // SAFETY: the loads read bytes [i*N, (i+64)*N); row j's store writes [j*n + i, j*n + i + 64);
    // both inside the buffers since i + 64 <= n.
    unsafe {
        let mut x = [_mm512_setzero_si512(); N];
        for (r, v) in x.iter_mut().enumerate() {
            *v = _mm512_loadu_si512(src.add(i * N + 64 * r) as *const __m512i);
        }
        rounds(&mut x, plan);
        for (j, v) in x.iter().enumerate() {
            _mm512_storeu_si512(dst.add(j * n + i) as *mut __m512i, *v);
        }
    }
}

/// Unshuffles one step of 64 elements starting at element `i`.
///
/// # Safety
/// As [`shuffle_step`].
#[inline(always)]
unsafe fn unshuffle_step<const N: usize, const L: usize>(
    src: *const u8,
    dst: *mut u8,
    n: usize,
    i: usize,
    plan: &[Round; L],
) {
    // SAFETY: mirror of `shuffle_step`: row loads at j*n + i, stores at [i*N, (i+64)*N).
    unsafe {
        let mut x = [_mm512_setzero_si512(); N];
        for (j, v) in x.iter_mut().enumerate() {
            *v = _mm512_loadu_si512(src.add(j * n + i) as *const __m512i);
        }
        rounds(&mut x, plan);
        for (r, v) in x.iter().enumerate() {
            _mm512_storeu_si512(dst.add(i * N + 64 * r) as *mut __m512i, *v);
        }
    }
}

/// Prefetches, for a step at element `i`, row `j`'s line `j + 1` steps ahead (`N` rows
/// `n` bytes apart from `rows`), when all of them are inside the rows.
///
/// Why: the row lines of one step share one L1 set (rows a multiple of 4 KiB apart), so their
/// fills crowd that set all at once; fetched ahead like this, each step's prefetches go to `N`
/// different sets and the stores (or loads) find their lines present. `prefetcht0` (SSE, every
/// x86-64) did as well as `prefetchw` for the stores.
///
/// # Safety
/// `rows` points into an allocation of at least `N * n` bytes.
#[inline(always)]
unsafe fn prefetch_rows<const N: usize>(rows: *const u8, n: usize, i: usize) {
    if i + 64 * (N + 1) <= n {
        for j in 0..N {
            // SAFETY: row j < N at element i + 64 (j + 1) < n: inside the allocation. A
            // prefetch never faults and changes no memory.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(rows.add(j * n + i + 64 * (j + 1)) as *const i8) };
        }
    }
}

/// The 8-byte halves `H` of the 64 16-byte elements of a step at element `i`, picked from
/// source registers `2q`, `2q + 1` into register `q` by `vpunpck{l,h}qdq` (an in-lane op, about
/// a third of a `vpermt2b`), in [`qword_halves`] layout.
///
/// # Safety
/// `src` readable for `(i + 64) * 16` bytes; CPU as in [`rounds`].
#[inline(always)]
unsafe fn half_sources<const H: usize>(src: *const u8, i: usize) -> [__m512i; 8] {
    // SAFETY: AVX-512F is available by this function's contract (CPU as in `rounds`).
    let mut y = [unsafe { _mm512_setzero_si512() }; 8];
    for (q, v) in y.iter_mut().enumerate() {
        // SAFETY: the loads read bytes [i*16, (i+64)*16), readable per the contract.
        unsafe {
            let p = src.add(i * 16 + 128 * q);
            let a = _mm512_loadu_si512(p as *const __m512i);
            let b = _mm512_loadu_si512(p.add(64) as *const __m512i);
            *v = if H == 0 {
                _mm512_unpacklo_epi64(a, b)
            } else {
                _mm512_unpackhi_epi64(a, b)
            };
        }
    }
    y
}

/// Stores row pair `m` (rows `2m`, `2m + 1` of `rows`) of a step in [`row_pairs`] layout whose
/// first element is `at`, each row's two 32-byte halves one after the other.
///
/// # Safety
/// `at + 64 <= n`; `rows` writable for `8 * n` bytes; CPU as in [`rounds`].
#[inline(always)]
unsafe fn put_pair(x: &[__m512i; 8], m: usize, rows: *mut u8, n: usize, at: usize) {
    // SAFETY: rows 2m, 2m + 1 < 8 at elements at .. at + 64 <= n.
    unsafe {
        let p = rows.add(2 * m * n + at);
        _mm256_storeu_si256(p as *mut __m256i, _mm512_castsi512_si256(x[m]));
        _mm256_storeu_si256(p.add(32) as *mut __m256i, _mm512_castsi512_si256(x[m + 4]));
        let p = p.add(n);
        _mm256_storeu_si256(p as *mut __m256i, _mm512_extracti64x4_epi64(x[m], 1));
        _mm256_storeu_si256(
            p.add(32) as *mut __m256i,
            _mm512_extracti64x4_epi64(x[m + 4], 1),
        );
    }
}

/// Shuffles the halves `H` of the 16-byte elements of the steps at `start, start + 64, .. <
/// end` into rows `8H..8H + 8`, storing row pair `m` of each step `m` steps late (kept in
/// registers meanwhile), and prefetching as [`prefetch_rows`].
///
/// Why the [`row_pairs`] layout: it takes 2 rounds instead of 3; its high halves are stored
/// with `vextracti64x4`, which costs a shuffle slot like a round would, but so does a zmm
/// store. With the unpack that picks the halves, a 64-byte row line costs about 3.3 shuffle
/// slots against 5 (4 rounds and a zmm store) for a one-pass step.
///
/// # Safety
/// `start < end <= n`, `end - start` a multiple of 64; `src` readable and `dst` writable for
/// `n * 16` bytes; CPU as in [`rounds`].
#[inline(always)]
unsafe fn shuffle_half16<const H: usize>(
    src: *const u8,
    dst: *mut u8,
    n: usize,
    start: usize,
    end: usize,
) {
    let plan: &[Round; 2] = &const { plan_map::<2>(9, qword_halves(), row_pairs(3)) };
    // SAFETY: every step starts at some i with start <= i, i + 64 <= end <= n, so its loads and
    // its stores (rows 8H..8H+8 < 16 at elements i..i+64) stay inside the buffers.
    unsafe {
        let rows = dst.add(8 * H * n);
        // The steps 1, 2 and 3 back (h1..h3, first elements a1..a3) start out as the first
        // step: storing its rows again is harmless and keeps the loop free of branches.
        let mut x = half_sources::<H>(src, start);
        rounds(&mut x, plan);
        put_pair(&x, 0, rows, n, start);
        let (mut h1, mut h2, mut h3) = (x, x, x);
        let (mut a1, mut a2, mut a3) = (start, start, start);
        let mut i = start + 64;
        while i < end {
            let mut x = half_sources::<H>(src, i);
            rounds(&mut x, plan);
            put_pair(&x, 0, rows, n, i);
            put_pair(&h1, 1, rows, n, a1);
            put_pair(&h2, 2, rows, n, a2);
            put_pair(&h3, 3, rows, n, a3);
            prefetch_rows::<8>(rows, n, i);
            (h3, h2, h1) = (h2, h1, x);
            (a3, a2, a1) = (a2, a1, i);
            i += 64;
        }
        for m in 1..4 {
            put_pair(&h1, m, rows, n, a1);
        }
        for m in 2..4 {
            put_pair(&h2, m, rows, n, a2);
        }
        put_pair(&h3, 3, rows, n, a3);
    }
}

/// Elements per tile of [`shuffle_pairs16`]: its source (24 KiB) is read twice, the second time
/// mostly from L1. Measured on 64 KiB at 5d8a080: 512: ~0.53, 768: ~0.58, 1024: ~0.57, 2048:
/// ~0.53 of memcpy; re-measured later in one run (geometric mean over 6 placements): 768: 0.54,
/// 1024: 0.57, 1536: 0.58, 2048: 0.58, 4096: 0.56.
const TILE16: usize = 1536;

/// Shuffle of 16-byte elements: per tile of [`TILE16`] elements, rows 0..8 and then rows
/// 8..16 with [`shuffle_half16`].
///
/// Why: 16 row lines of one step would share one L1 set of 8 ways, and there are not enough
/// registers to skew 16 rows; a half pass writes 8 rows, skewed over 4 L1 sets
/// (64 KiB: ~0.50 -> ~0.55 of memcpy against 32-bit word rows staged in L1 and written 4 rows
/// at a time).
///
/// # Safety
/// `n >= 64`; `src` readable and `dst` writable for `n * 16` bytes, not overlapping; CPU as in
/// [`rounds`].
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn shuffle_pairs16(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: each range below is whole steps inside 0..n (n >= 64), per `shuffle_half16`.
    unsafe {
        shuffle_half16::<0>(src, dst, n, 0, 64);
        shuffle_half16::<1>(src, dst, n, 0, 64);
        let mut i = second_step(dst, 1);
        while i + 64 <= n {
            let end = (i + TILE16).min(i + (n - i) / 64 * 64);
            shuffle_half16::<0>(src, dst, n, i, end);
            shuffle_half16::<1>(src, dst, n, i, end);
            i = end;
        }
        if i < n {
            shuffle_half16::<0>(src, dst, n, n - 64, n);
            shuffle_half16::<1>(src, dst, n, n - 64, n);
        }
    }
}

/// Defines a whole-buffer kernel from a step function.
macro_rules! whole {
    ($name:ident, $step:ident, $dir:literal) => {
        /// Runs steps over all `n >= 64` elements (see the module docs for the step placement).
        ///
        /// # Safety
        /// `n >= 64`; `src` readable and `dst` writable for `n * N` bytes, not overlapping; the
        /// CPU has AVX512F, AVX512BW and AVX512VBMI.
        #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
        unsafe fn $name<const N: usize, const L: usize>(src: *const u8, dst: *mut u8, n: usize) {
            let plan: &[Round; L] = &const { plan::<L>($dir) };
            // SAFETY: every step below starts at some i with i + 64 <= n (n >= 64).
            unsafe {
                $step::<N, L>(src, dst, n, 0, plan);
                // Unshuffle of 2 or 4 rows aligns its stores (measured better than aligned row
                // loads, which [`pairs`] uses for 8 and 16 rows).
                let mut i = if $dir {
                    second_step(dst, 1)
                } else {
                    second_step(dst, N)
                };
                while i + 64 <= n {
                    $step::<N, L>(src, dst, n, i, plan);
                    i += 64;
                }
                if i < n {
                    $step::<N, L>(src, dst, n, n - 64, plan);
                }
            }
        }
    };
}

whole!(shuffle_all, shuffle_step, true);
whole!(unshuffle_all, unshuffle_step, false);

/// Whether [`shuffle`] handles this element size and count.
pub(crate) fn covers_shuffle(es: usize, n: usize) -> bool {
    matches!(es, 2 | 4 | 8 | 16) && n >= 64
}

/// Whether [`unshuffle`] handles this element size and count. 8-byte elements only when the
/// buffers do not fit L1 together (> 16 KiB each): there the row loads spread over L1 sets by
/// [`pairs::unshuffle8`] win (64 KiB: 0.91 vs 0.87-0.88 of memcpy in the bench; 32 KiB: 0.98
/// vs 0.93 stand-alone), while on L1-resident buffers the AVX2 kernel's unpacks cost fewer
/// cycles (16 KiB: 78 vs 70 GB/s stand-alone).
pub(crate) fn covers_unshuffle(es: usize, n: usize) -> bool {
    n >= 64 && (matches!(es, 2 | 4 | 16) || (es == 8 && n * 8 > 16384))
}

/// Shuffles all `n` elements of `es` bytes.
///
/// # Safety
/// `covers_shuffle(es, n)`; `src` readable and `dst` writable for `n * es` bytes, not
/// overlapping; the CPU has AVX512F, AVX512BW and AVX512VBMI.
pub(crate) unsafe fn shuffle(es: usize, src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: forwarded contract.
    unsafe {
        match es {
            2 => shuffle_all::<2, 1>(src, dst, n),
            4 => shuffle_all::<4, 2>(src, dst, n),
            8 => pairs::shuffle8(src, dst, n),
            16 => shuffle_pairs16(src, dst, n),
            _ => unreachable!("checked by the caller"),
        }
    }
}

/// Unshuffles all `n` elements of `es` bytes.
///
/// # Safety
/// As [`shuffle`] with `covers_unshuffle(es, n)`.
pub(crate) unsafe fn unshuffle(es: usize, src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: forwarded contract.
    unsafe {
        match es {
            2 => unshuffle_all::<2, 1>(src, dst, n),
            4 => unshuffle_all::<4, 2>(src, dst, n),
            8 => pairs::unshuffle8(src, dst, n),
            16 => pairs::unshuffle16(src, dst, n),
            _ => unreachable!("checked by the caller"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Address of logical position `pos` in layout `map` (`nb` bits).
    fn address(pos: usize, map: &[usize; 12], nb: usize) -> usize {
        (0..nb).map(|k| ((pos >> k) & 1) << map[k]).sum()
    }

    /// Applies `R` rounds of `plan_map(nb, from, to)` to labelled bytes in plain Rust and
    /// checks every logical position lands at its `to` address, independently of any CPU
    /// feature.
    fn simulate<const R: usize>(nb: usize, from: [usize; 12], to: [usize; 12]) {
        let size = 1 << nb;
        let mut flat = vec![0u16; size];
        for pos in 0..size {
            flat[address(pos, &from, nb)] = pos as u16;
        }
        let mut x: Vec<Vec<u16>> = flat.chunks(64).map(|c| c.to_vec()).collect();
        for (t, round) in plan_map::<R>(nb, from, to).iter().enumerate() {
            let bit = 1 << t;
            let old = x.clone();
            for r in (0..x.len()).filter(|r| r & bit == 0) {
                for (v, idx) in round.iter().enumerate() {
                    let out = if v == 0 { r } else { r | bit };
                    for q in 0..64 {
                        let k = usize::from(idx[q]);
                        let from = if k & 64 == 0 { r } else { r | bit };
                        x[out][q] = old[from][k & 63];
                    }
                }
            }
        }
        let flat: Vec<u16> = x.concat();
        for pos in 0..size {
            assert_eq!(
                usize::from(flat[address(pos, &to, nb)]),
                pos,
                "nb {nb} R {R}"
            );
        }
    }

    #[test]
    fn round_plans_transpose() {
        let (e, r) = (element_major(), row_major);
        simulate::<1>(7, e, r(1));
        simulate::<2>(8, e, r(2));
        simulate::<3>(9, e, r(3));
        simulate::<4>(10, e, r(4));
        simulate::<1>(7, r(1), e);
        simulate::<2>(8, r(2), e);
        simulate::<3>(9, r(3), e);
        simulate::<4>(10, r(4), e);
        // The two-round row-pair plan of shuffle_half16, and its inverse.
        simulate::<2>(9, qword_halves(), row_pairs(3));
        simulate::<2>(9, row_pairs(3), qword_halves());
        // The two-round plans of `pairs` (unshuffle 8 and 16 after the row zips, shuffle 8 before them).
        simulate::<2>(9, pairs::zipped_rows(), pairs::element_chunks());
        simulate::<2>(9, pairs::zipped_rows(), pairs::half_chunks());
        simulate::<2>(9, pairs::element_chunks(), pairs::zipped_rows());
    }

    /// `plan` is `plan_map` between the element-major and row-major layouts: the rows of a
    /// shuffled step are its registers.
    #[test]
    fn row_major_is_the_shuffled_step() {
        let n = 64;
        for j in 0..8 {
            for e in 0..n {
                // Row j, element e of a step of 8-byte elements: register j, byte e.
                assert_eq!(address(e * 8 + j, &row_major(3), 9), j * 64 + e);
                // Row pair layout: register (j / 2) + 4 * (e / 32), half j % 2, byte e % 32.
                let want = ((j / 2) + 4 * (e / 32)) * 64 + 32 * (j % 2) + e % 32;
                assert_eq!(address(e * 8 + j, &row_pairs(3), 9), want);
                // Zipped rows (`pairs`): register j/2 (+4 for the high unpack: e bit 3), lane
                // e/16, qword half j % 2, byte e % 8.
                let want =
                    ((j / 2) + 4 * ((e >> 3) & 1)) * 64 + 16 * (e >> 4) + 8 * (j % 2) + e % 8;
                assert_eq!(address(e * 8 + j, &pairs::zipped_rows(), 9), want);
                // Element chunks: register r holds 64-byte chunk e/8 = (r >> 2) | (r & 3) << 1.
                let r = ((e / 8) >> 1) | (((e / 8) & 1) << 2);
                assert_eq!(
                    address(e * 8 + j, &pairs::element_chunks(), 9),
                    r * 64 + e % 8 * 8 + j
                );
                // Half chunks: e is a 16-byte element of chunk pair e/8 (register r as above);
                // qword 2L + s holds element 4s + L of the pair, byte j < 8 of its half.
                let (s, l) = ((e % 8) / 4, e % 4);
                let want = r * 64 + 8 * (2 * l + s) + j;
                assert_eq!(address(e * 8 + j, &pairs::half_chunks(), 9), want);
            }
        }
    }
}
