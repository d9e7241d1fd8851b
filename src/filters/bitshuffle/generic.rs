//! Portable bit transposes between one byte row and its 8 bit rows.
//!
//! A *byte row* is byte `b` of `t` consecutive elements (`t` a multiple of 8), as produced by the
//! byte shuffle. Its 8 *bit rows* (`k = 0..8`, least significant bit first) are `t/8` bytes each,
//! stored at `bits[base + k*stride ..]`; bit `i` of bit-row byte `j` is bit `k` of row byte
//! `8j + i` (c-blosc2's bitshuffle layout, LSB first inside each byte).

use crate::filters::shuffle::vector::transpose_bits8_u64;

/// Byte row → bit rows, for row bytes `start..` (multiple of 8).
pub(crate) fn bit_t_from(row: &[u8], bits: &mut [u8], base: usize, stride: usize, start: usize) {
    for (j, g) in row.chunks_exact(8).enumerate().skip(start / 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(g);
        let y = transpose_bits8_u64(u64::from_le_bytes(w)).to_le_bytes();
        for (k, &b) in y.iter().enumerate() {
            bits[base + k * stride + j] = b;
        }
    }
}

/// Bit rows → byte row, for row bytes `start..` (multiple of 8).
pub(crate) fn bit_u_from(bits: &[u8], base: usize, stride: usize, row: &mut [u8], start: usize) {
    for (j, g) in row.chunks_exact_mut(8).enumerate().skip(start / 8) {
        let mut w = [0u8; 8];
        for (k, b) in w.iter_mut().enumerate() {
            *b = bits[base + k * stride + j];
        }
        g.copy_from_slice(&transpose_bits8_u64(u64::from_le_bytes(w)).to_le_bytes());
    }
}
