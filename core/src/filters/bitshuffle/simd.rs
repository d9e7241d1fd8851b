//! SIMD bit transposes (byte row ↔ 8 bit rows, see [`super::generic`]), generic over
//! [`Vector`].
//!
//! Strategy: a step covers `S = 128 * LANES` row bytes (16 groups of 8 per lane). Forward: the
//! row is loaded into 8 registers, each 64-bit word gets its 8x8 bit matrix transposed (byte `k`
//! of word `j` is then byte `j` of bit row `k`), and 4 zip rounds turn the lane's
//! `(group, k)` byte order into `(k, group)`, so register `k` is a run of bit row `k`. Backward is
//! the mirror: 3 zip rounds gather the 8 bit-row bytes of each group into one word, then the
//! word's bit matrix is transposed back.

use crate::filters::shuffle::vector::{zip_rounds, Vector};

/// Byte row (`t` bytes at `row`) → bit rows at `bits + base + k*stride`, from row byte `start`.
/// Returns the first row byte not processed.
///
/// # Safety
/// `row` readable for `t` bytes; `bits + base + k*stride` writable for `t/8` bytes, `k < 8`;
/// the CPU has `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn bit_t<V: Vector>(
    row: *const u8,
    t: usize,
    bits: *mut u8,
    base: usize,
    stride: usize,
    start: usize,
) -> usize {
    let s = 128 * V::LANES;
    let mut jo = start;
    while jo + s <= t {
        // SAFETY: reads row[jo..jo+s] (loop condition); each store writes s/8 bytes of bit row k
        // at byte jo/8, within its t/8 bytes.
        unsafe {
            let mut x: [V; 8] = [V::zero(); 8];
            for (m, r) in x.iter_mut().enumerate() {
                let p = row.add(jo + 16 * m);
                // Lane 1 (AVX2 only) covers row bytes jo+128.., in bounds when LANES == 2.
                let q = if V::LANES == 2 { p.add(128) } else { p };
                *r = V::load2(p, q).transpose_bits8();
            }
            zip_rounds(&mut x, 4);
            for (k, r) in x.iter().enumerate() {
                r.store(bits.add(base + k * stride + jo / 8));
            }
        }
        jo += s;
    }
    jo
}

/// Bit rows → byte row (`t` bytes at `row`), from row byte `start`; returns the first row byte
/// not processed.
///
/// # Safety
/// `bits + base + k*stride` readable for `t/8` bytes, `k < 8`; `row` writable for `t` bytes;
/// the CPU has `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn bit_u<V: Vector>(
    bits: *const u8,
    base: usize,
    stride: usize,
    row: *mut u8,
    t: usize,
    start: usize,
) -> usize {
    let s = 128 * V::LANES;
    let mut jo = start;
    while jo + s <= t {
        // SAFETY: each load reads s/8 bytes of bit row k at byte jo/8 (< t/8 by the loop
        // condition); the stores write row[jo..jo+s].
        unsafe {
            let mut x: [V; 8] = [V::zero(); 8];
            for (k, r) in x.iter_mut().enumerate() {
                *r = V::load(bits.add(base + k * stride + jo / 8));
            }
            zip_rounds(&mut x, 3);
            for r in x.iter_mut() {
                *r = r.transpose_bits8();
            }
            let p = row.add(jo);
            for lane in 0..V::LANES {
                for (m, r) in x.iter().enumerate() {
                    r.store_lane(lane, p.add(128 * lane + 16 * m));
                }
            }
        }
        jo += s;
    }
    jo
}
