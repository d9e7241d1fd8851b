//! Delta filter (`BLOSC_DELTA`): XOR against the chunk's first block.
//!
//! Element width `w`: the typesize if it is 1, 2, 4 or 8, else 8 if it is a multiple of 8,
//! else 1. Only the first `floor(len / w)` elements are transformed. Because XOR of `w`-byte
//! words is XOR of their bytes, everything below works on bytes with a lag of `w`.
//!
//! * Block 0 (offset 0; also every VL block) is the reference: `out[i] = in[i] ^ in[i-1]`
//!   (element-wise), decoded as a running (prefix) XOR.
//! * Any other block: `out[i] = in[i] ^ dref[i]`, where on encode `dref` is the start of the
//!   original, unfiltered chunk and on decode it is the fully decoded block 0.
//!
//! Trailing bytes after the last whole element: c-blosc2's decoder leaves them as they are, but
//! its encoder never writes them (the output keeps whatever the buffer held, so such chunks do
//! not round-trip; docs/divergences.md#2-delta-and-trunc_prec-encode-the-trailing-bytes). Our encoder copies them verbatim, which the reference
//! decoder then reproduces exactly.

#![forbid(unsafe_code)]

use crate::error::{Error, Result};

/// The element width delta works with for a (header) typesize.
pub fn element_width(typesize: usize) -> usize {
    match typesize {
        1 | 2 | 4 | 8 => typesize,
        t if t > 0 && t % 8 == 0 => 8,
        _ => 1,
    }
}

/// Encodes one block. `offset` is the block's byte offset in the chunk (0 for block 0 and for
/// VL blocks); `dref` is the original chunk from its start (ignored when `offset == 0`).
///
/// Fails with `FilterPipeline` if `src`/`dst` lengths differ or `dref` is shorter than the block.
pub fn encode(
    typesize: usize,
    offset: usize,
    dref: &[u8],
    src: &[u8],
    dst: &mut [u8],
) -> Result<()> {
    if src.len() != dst.len() {
        return Err(Error::FilterPipeline);
    }
    let w = element_width(typesize);
    let body = src.len() / w * w;
    if offset == 0 {
        let head = w.min(body);
        dst[..head].copy_from_slice(&src[..head]);
        if body > w {
            for ((d, &s), &p) in dst[w..body]
                .iter_mut()
                .zip(&src[w..body])
                .zip(&src[..body - w])
            {
                *d = s ^ p;
            }
        }
    } else {
        let r = dref.get(..body).ok_or(Error::FilterPipeline)?;
        for ((d, &s), &p) in dst[..body].iter_mut().zip(&src[..body]).zip(r) {
            *d = s ^ p;
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
    Ok(())
}

/// Decodes one block in place. `dref` is the fully decoded block 0 (ignored when
/// `offset == 0`). Fails with `FilterPipeline` if `dref` is shorter than the block's elements.
pub fn decode(typesize: usize, offset: usize, dref: &[u8], buf: &mut [u8]) -> Result<()> {
    let w = element_width(typesize);
    let body = buf.len() / w * w;
    if offset == 0 {
        prefix_xor(w, &mut buf[..body]);
    } else {
        let r = dref.get(..body).ok_or(Error::FilterPipeline)?;
        for (d, &p) in buf[..body].iter_mut().zip(r) {
            *d ^= p;
        }
    }
    Ok(())
}

/// `x[i] ^= x[i - w]` in order, i.e. each element becomes the XOR of all elements up to it.
fn prefix_xor(w: usize, x: &mut [u8]) {
    match w {
        8 => prefix_xor_words::<8>(x),
        4 => prefix_xor_words::<4>(x),
        2 => prefix_xor_words::<2>(x),
        _ => {
            let mut acc = 0u8;
            for b in x.iter_mut() {
                acc ^= *b;
                *b = acc;
            }
        }
    }
}

/// [`prefix_xor`] on whole `W`-byte words (`x.len()` is a multiple of `W`).
fn prefix_xor_words<const W: usize>(x: &mut [u8]) {
    let mut acc = [0u8; W];
    for e in x.chunks_exact_mut(W) {
        for (a, b) in acc.iter_mut().zip(e.iter_mut()) {
            *a ^= *b;
            *b = *a;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_the_format_rule() {
        let got: Vec<usize> = [1, 2, 3, 4, 5, 8, 12, 16, 24, 255]
            .map(element_width)
            .to_vec();
        assert_eq!(got, vec![1, 2, 1, 4, 1, 8, 1, 8, 8, 1]);
    }

    #[test]
    fn block0_encodes_against_previous_element() {
        let src = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10];
        let mut out = [0u8; 10];
        encode(4, 0, &[], &src, &mut out).unwrap();
        // Two whole u32 elements: first verbatim, second XOR first; 2 trailing bytes verbatim.
        assert_eq!(out, [1, 2, 3, 4, 5 ^ 1, 6 ^ 2, 7 ^ 3, 8 ^ 4, 9, 10]);
        decode(4, 0, &[], &mut out).unwrap();
        assert_eq!(out, src);
    }

    #[test]
    fn other_blocks_xor_the_reference() {
        let dref = [0xF0u8; 16];
        let src = [0x0Fu8, 0x01, 0x02];
        let mut out = [0u8; 3];
        encode(2, 16, &dref, &src, &mut out).unwrap();
        assert_eq!(out, [0xFF, 0xF1, 0x02]);
        decode(2, 16, &dref, &mut out).unwrap();
        assert_eq!(out, src);
        assert_eq!(
            encode(2, 16, &dref[..1], &src, &mut out),
            Err(Error::FilterPipeline)
        );
    }
}
