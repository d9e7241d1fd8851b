//! Portable byte shuffle/unshuffle: the reference semantics every SIMD kernel is tested against,
//! the fallback level, and the finisher for the elements a SIMD step cannot cover.

#![forbid(unsafe_code)]

use std::mem::MaybeUninit;

/// Shuffles elements `start..n` (`n * es == src.len()`): `dst[j*n + i] = src[i*es + j]`.
pub(crate) fn shuffle_from(es: usize, n: usize, src: &[u8], dst: &mut [u8], start: usize) {
    if start >= n {
        return;
    }
    for (i, elem) in src.chunks_exact(es).enumerate().skip(start) {
        for (j, &b) in elem.iter().enumerate() {
            dst[j * n + i] = b;
        }
    }
}

/// Unshuffles elements `start..n`: `dst[i*es + j] = src[j*n + i]`. `dst` may be
/// uninitialised (see [`crate::sys::Out`]): it is only written.
pub(crate) fn unshuffle_from(
    es: usize,
    n: usize,
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    start: usize,
) {
    if start >= n {
        return;
    }
    for (i, elem) in dst.chunks_exact_mut(es).enumerate().skip(start) {
        for (j, b) in elem.iter_mut().enumerate() {
            b.write(src[j * n + i]);
        }
    }
}
