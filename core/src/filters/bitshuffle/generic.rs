//! Portable bit transposes between one byte row and its 8 bit rows.
//!
//! A *byte row* is byte `b` of `t` consecutive elements (`t` a multiple of 8), as produced by the
//! byte shuffle. Its 8 *bit rows* (`k = 0..8`, least significant bit first) are `t/8` bytes each,
//! stored at `bits[base + k*stride ..]`; bit `i` of bit-row byte `j` is bit `k` of row byte
//! `8j + i` (c-blosc2's bitshuffle layout, LSB first inside each byte).

#![forbid(unsafe_code)]

use crate::filters::shuffle::vector::transpose_bits8_u64;

/// The groups `g0..n` of the 8 bit rows at `base + k*stride` (one bounds check per row, so the
/// per-group loops below index these slices without multiplying or re-checking).
fn bit_rows(bits: &[u8], base: usize, stride: usize, g0: usize, n: usize) -> [&[u8]; 8] {
    std::array::from_fn(|k| &bits[base + k * stride..][g0..n])
}

/// [`bit_rows`] for writing: the rows are disjoint because `n <= stride` (the kernels'
/// contract, checked by their callers).
fn bit_rows_mut(
    bits: &mut [u8],
    base: usize,
    stride: usize,
    g0: usize,
    n: usize,
) -> [&mut [u8]; 8] {
    let mut rest = &mut bits[base..];
    std::array::from_fn(|k| {
        let take = if k < 7 { stride } else { rest.len() };
        let (row, tail) = std::mem::take(&mut rest).split_at_mut(take);
        rest = tail;
        &mut row[g0..n]
    })
}

/// Byte row → bit rows, for row bytes `start..` (multiple of 8).
pub(crate) fn bit_t_from(row: &[u8], bits: &mut [u8], base: usize, stride: usize, start: usize) {
    let (g0, n) = (start / 8, row.len() / 8);
    if g0 >= n {
        return;
    }
    let [r0, r1, r2, r3, r4, r5, r6, r7] = bit_rows_mut(bits, base, stride, g0, n);
    for (i, g) in row[8 * g0..8 * n].chunks_exact(8).enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(g);
        let y = transpose_bits8_u64(u64::from_le_bytes(w)).to_le_bytes();
        (r0[i], r1[i], r2[i], r3[i]) = (y[0], y[1], y[2], y[3]);
        (r4[i], r5[i], r6[i], r7[i]) = (y[4], y[5], y[6], y[7]);
    }
}

/// Bit rows → byte row, for row bytes `start..` (multiple of 8).
pub(crate) fn bit_u_from(bits: &[u8], base: usize, stride: usize, row: &mut [u8], start: usize) {
    let (g0, n) = (start / 8, row.len() / 8);
    if g0 >= n {
        return;
    }
    let r = bit_rows(bits, base, stride, g0, n);
    for (i, g) in row[8 * g0..8 * n].chunks_exact_mut(8).enumerate() {
        let w = [
            r[0][i], r[1][i], r[2][i], r[3][i], r[4][i], r[5][i], r[6][i], r[7][i],
        ];
        g.copy_from_slice(&transpose_bits8_u64(u64::from_le_bytes(w)).to_le_bytes());
    }
}
