//! AVX-512 (F + BW + VBMI) byte shuffle/unshuffle for element sizes 2, 4, 8 and 16.
//!
//! A step moves 64 elements: `es` registers of 64 bytes. Seen as an address `reg * 64 + byte`
//! (`log2(es) + 6` bits), shuffling and unshuffling are bit permutations of that address (the
//! element bits and the byte-of-element bits trade places). `vpermt2b` builds a register from
//! any 64 of the 128 bytes of two registers, so one round over register pairs `(r, r | 2^t)`
//! can trade register bit `t` for any byte bit and reorder the byte bits at will: `log2(es)`
//! rounds (one 2-source permute per 64 output bytes each) do the whole transpose, against
//! 4 zip rounds plus lane fix-ups with AVX2. The per-round index vectors are the same for every
//! pair, so they are computed at compile time ([`plan`]) and stay in registers.
//!
//! Every load and store of a step is a whole 64-byte register. The steps do not have to tile the
//! buffer: after the first step at element 0 the next one starts where the row accesses become
//! 64-byte aligned, and the last step ends exactly at `n` (overlapping its predecessor). Overlapping
//! steps write the same bytes again, which is harmless because `src` and `dst` never overlap.

use std::arch::x86_64::*;

/// One round's two index vectors (`vpermt2b`: bit 6 picks the second register).
type Round = [[u8; 64]; 2];

/// Index vectors of the `L` rounds transposing `2^L` rows of 64 bytes (`shuffle`: element-major
/// input to row-major output; else the inverse).
///
/// An address bit layout maps each bit of the logical position `pos = e * es + j` (element `e`,
/// byte `j`; bits `0..L` are `j`) to an address bit (`0..6` byte, `6..6+L` register). Round `t`
/// swaps register bit `t` with the byte bit holding the logical bit that belongs there at the
/// end; the last round also puts the byte bits in their final order.
const fn plan<const L: usize>(shuffle: bool) -> [Round; L] {
    plan_units::<L>(shuffle, 6)
}

/// [`plan`] for registers of `2^ab` units (6: bytes, 4: 32-bit words); the index of unit `q`
/// is in entry `q` (bit `ab` picks the second register).
const fn plan_units<const L: usize>(shuffle: bool, ab: usize) -> [Round; L] {
    let nb = L + ab;
    let mut loc = [0usize; 12];
    let mut fin = [0usize; 12];
    let mut b = 0;
    while b < nb {
        // Element-major: address = pos. Row-major: register = j, byte = e.
        let row_major = if b < L { ab + b } else { b - L };
        if shuffle {
            loc[b] = b;
            fin[b] = row_major;
        } else {
            loc[b] = row_major;
            fin[b] = b;
        }
        b += 1;
    }
    let mut out = [[[0u8; 64]; 2]; L];
    let mut t = 0;
    while t < L {
        let mut now = 0;
        while loc[now] != ab + t {
            now += 1;
        }
        let mut want = 0;
        while fin[want] != ab + t {
            want += 1;
        }
        let mut new = loc;
        new[now] = loc[want];
        new[want] = ab + t;
        if t == L - 1 {
            new = fin;
        }
        let mut v = 0;
        while v < 2 {
            let mut q = 0;
            while q < (1 << ab) {
                // The logical position at new address (register bit t = v, byte q) ...
                let addr = q | (v << (ab + t));
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
                out[t][v][q] = ((old & ((1 << ab) - 1)) | (((old >> (ab + t)) & 1) << ab)) as u8;
                q += 1;
            }
            v += 1;
        }
        loc = new;
        t += 1;
    }
    out
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

/// Shuffle with each step's rows stored over four steps: rows `2d` and `2d + 1` of a step are
/// stored `d` steps later (kept in registers meanwhile), for 8-byte elements.
///
/// Why: with the usual power-of-two block sizes the rows are a multiple of 4 KiB apart, so one
/// step's 8 row stores all land in the same L1 set (8 ways) together with the source lines,
/// and the line fills for that one set serialise. Spreading them over four consecutive sets
/// measured ~25% faster on 64 KiB blocks (Zen 4). With 16 rows the extra registers spill and
/// it does not pay, so 16-byte elements use [`shuffle_all`].
///
/// # Safety
/// As `shuffle_all` (`n >= 64`, buffers of `n * 8` bytes, CPU features).
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn shuffle_skewed8(src: *const u8, dst: *mut u8, n: usize) {
    let plan: &[Round; 3] = &const { plan::<3>(true) };
    /// Stores rows `rows` of a step whose first element is `at`.
    ///
    /// # Safety
    /// `at + 64 <= n`, `dst` writable for `8 * n` bytes.
    #[inline(always)]
    unsafe fn put(
        x: &[__m512i; 8],
        rows: std::ops::Range<usize>,
        dst: *mut u8,
        n: usize,
        at: usize,
    ) {
        for j in rows {
            // SAFETY: row j < 8 at element `at`, per the contract.
            unsafe { _mm512_storeu_si512(dst.add(j * n + at) as *mut __m512i, x[j]) };
        }
    }
    // SAFETY: every step starts at some i with i + 64 <= n, and rows are only stored at such
    // starting elements, so all accesses stay inside the `n * 8`-byte buffers.
    unsafe {
        // The steps 1, 2 and 3 back (h1..h3, first elements a1..a3) start out as the step at
        // element 0: storing its rows again is harmless and keeps the loop free of branches.
        let mut x = [_mm512_setzero_si512(); 8];
        let load = |x: &mut [__m512i; 8], i: usize| {
            for (r, v) in x.iter_mut().enumerate() {
                *v = _mm512_loadu_si512(src.add(i * 8 + 64 * r) as *const __m512i);
            }
        };
        load(&mut x, 0);
        rounds(&mut x, plan);
        put(&x, 0..2, dst, n, 0);
        let (mut h1, mut h2, mut h3) = (x, x, x);
        let (mut a1, mut a2, mut a3) = (0, 0, 0);
        let mut i = second_step(dst, 1);
        while i + 64 <= n {
            load(&mut x, i);
            rounds(&mut x, plan);
            put(&x, 0..2, dst, n, i);
            put(&h1, 2..4, dst, n, a1);
            put(&h2, 4..6, dst, n, a2);
            put(&h3, 6..8, dst, n, a3);
            (h3, h2, h1) = (h2, h1, x);
            (a3, a2, a1) = (a2, a1, i);
            i += 64;
        }
        put(&h1, 2..8, dst, n, a1);
        put(&h2, 4..8, dst, n, a2);
        put(&h3, 6..8, dst, n, a3);
        if i < n {
            shuffle_step::<8, 3>(src, dst, n, n - 64, plan);
        }
    }
}

/// Elements per tile of [`shuffle_two_pass16`] (an 8 KiB stage).
const TILE16: usize = 512;

/// [`plan_units`] for 32-bit words as `vpermt2d` indices: 4 rows of 16 words.
const fn word_plan() -> [[[u32; 16]; 2]; 2] {
    let p = plan_units::<2>(true, 4);
    let mut out = [[[0u32; 16]; 2]; 2];
    let mut t = 0;
    while t < 2 {
        let mut v = 0;
        while v < 2 {
            let mut q = 0;
            while q < 16 {
                out[t][v][q] = p[t][v][q] as u32;
                q += 1;
            }
            v += 1;
        }
        t += 1;
    }
    out
}

/// Shuffle of 16-byte elements in two passes over tiles of [`TILE16`] elements: first the
/// 32-bit words (4 rows of words into an L1 stage), then each word row as a 4-byte shuffle
/// into 4 rows of `dst`.
///
/// Why: a one-pass step writes 16 rows whose lines share one L1 set (rows a multiple of 4 KiB
/// apart); here only 4 rows are written at a time. Measured ~20% faster on 64 KiB blocks than
/// [`shuffle_all`] for the same number of permutes (2 word rounds + 2 byte rounds).
///
/// # Safety
/// As `shuffle_all` (`n >= 64`, buffers of `n * 16` bytes, CPU features).
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn shuffle_two_pass16(src: *const u8, dst: *mut u8, n: usize) {
    let full: &[Round; 4] = &const { plan::<4>(true) };
    let bytes: &[Round; 2] = &const { plan::<2>(true) };
    let words = &const { word_plan() };
    // Not zeroed: pass 2 reads only stage bytes pass 1 has just written.
    let mut stage = std::mem::MaybeUninit::<[u8; 16 * TILE16]>::uninit();
    let sp = stage.as_mut_ptr() as *mut u8;
    // SAFETY: the tiles cover elements i..i + TILE16 <= n: pass 1 reads their 16 * TILE16
    // source bytes and writes the whole stage (4 rows of 4 * TILE16 bytes); pass 2 reads each
    // stage row and writes rows 4u..4u+4 of dst at elements i.., as `shuffle_step` with
    // `i + TILE16 <= n`. The other steps are `shuffle_step`s at i with i + 64 <= n.
    unsafe {
        shuffle_step::<16, 4>(src, dst, n, 0, full);
        let mut i = second_step(dst, 1);
        while i + TILE16 <= n {
            for k in (0..TILE16).step_by(16) {
                let p = src.add((i + k) * 16);
                let mut x = [_mm512_setzero_si512(); 4];
                for (r, v) in x.iter_mut().enumerate() {
                    *v = _mm512_loadu_si512(p.add(64 * r) as *const __m512i);
                }
                for (t, round) in words.iter().enumerate() {
                    let i0 = _mm512_loadu_si512(round[0].as_ptr() as *const __m512i);
                    let i1 = _mm512_loadu_si512(round[1].as_ptr() as *const __m512i);
                    let bit = 1 << t;
                    for r in (0..4).filter(|r| r & bit == 0) {
                        let (a, b) = (x[r], x[r | bit]);
                        x[r] = _mm512_permutex2var_epi32(a, i0, b);
                        x[r | bit] = _mm512_permutex2var_epi32(a, i1, b);
                    }
                }
                for (u, v) in x.iter().enumerate() {
                    _mm512_storeu_si512(sp.add(u * 4 * TILE16 + 4 * k) as *mut __m512i, *v);
                }
            }
            for u in 0..4 {
                let (from, to) = (sp.add(u * 4 * TILE16), dst.add(4 * u * n + i));
                for j in (0..TILE16).step_by(64) {
                    shuffle_step::<4, 2>(from, to, n, j, bytes);
                }
            }
            i += TILE16;
        }
        while i + 64 <= n {
            shuffle_step::<16, 4>(src, dst, n, i, full);
            i += 64;
        }
        if i < n {
            shuffle_step::<16, 4>(src, dst, n, n - 64, full);
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
                let mut i = match ($dir, N) {
                    (true, _) => second_step(dst, 1),
                    (false, 2 | 4) => second_step(dst, N),
                    (false, _) => second_step(src as *mut u8, 1),
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
// Unshuffle of 8 or more rows aligns its row loads rather than its stores: the row lines of a
// step share one L1 set, and a misaligned load would leave each of them to be fetched again by
// the next step. (With 2 or 4 rows, aligned stores measured better.)
whole!(unshuffle_all, unshuffle_step, false);

/// Whether [`shuffle`] handles this element size and count.
pub(crate) fn covers_shuffle(es: usize, n: usize) -> bool {
    matches!(es, 2 | 4 | 8 | 16) && n >= 64
}

/// Whether [`unshuffle`] handles this element size and count. Not 8: the AVX2 kernel (32-byte
/// row loads) measured ~5% faster there than these steps, aligned either way or skewed.
pub(crate) fn covers_unshuffle(es: usize, n: usize) -> bool {
    matches!(es, 2 | 4 | 16) && n >= 64
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
            8 => shuffle_skewed8(src, dst, n),
            16 => shuffle_two_pass16(src, dst, n),
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
            16 => unshuffle_all::<16, 4>(src, dst, n),
            _ => unreachable!("checked by the caller"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies a round plan to labelled bytes in plain Rust and checks the result is the
    /// transpose, independently of any CPU feature.
    fn simulate<const N: usize, const L: usize>(shuffle: bool) {
        let n = 64;
        let input: Vec<u16> = (0..(N * 64) as u16).collect();
        let mut x: Vec<Vec<u16>> = input.chunks(64).map(|c| c.to_vec()).collect();
        for (t, round) in plan::<L>(shuffle).iter().enumerate() {
            let bit = 1 << t;
            let old = x.clone();
            for r in (0..N).filter(|r| r & bit == 0) {
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
        for e in 0..n {
            for j in 0..N {
                let (a, b) = (e * N + j, j * n + e);
                let (want_at, from) = if shuffle { (b, a) } else { (a, b) };
                assert_eq!(usize::from(flat[want_at]), from, "es {N} shuffle {shuffle}");
            }
        }
    }

    #[test]
    fn round_plans_transpose() {
        for dir in [true, false] {
            simulate::<2, 1>(dir);
            simulate::<4, 2>(dir);
            simulate::<8, 3>(dir);
            simulate::<16, 4>(dir);
        }
    }
}
