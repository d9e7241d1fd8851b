//! A copy fused with a CRC-32 of the copied bytes (IEEE, the CRC of zlib and `crc32fast`).
//!
//! A fingerprinted frame hashes every chunk it appends (docs/format/fingerprint.md). Done
//! after the copy into the frame, that is a second pass over the chunk, which for an in-memory
//! frame costs about as much as the copy itself. [`extend_vec`] makes one pass instead where the
//! CPU has AVX-512 with VPCLMULQDQ: each 64-byte load is stored to the destination and folded
//! into four 512-bit CRC accumulators (carry-less multiplication by `x^(2048±32)` modulo the
//! polynomial, the folding of Intel's "Fast CRC Computation Using PCLMULQDQ" on 128-bit lanes
//! 2048 bits apart); the 256 accumulated bytes, which have the same CRC as everything folded
//! into them, and the last bytes of the source go through `crc32fast`. Other CPUs, and short
//! sources, copy and then hash with `crc32fast`.

mod piece;

pub use piece::Piece;

/// Appends `src` to `v` and returns the CRC-32 of the bytes before them (`crc`, as
/// `crc32fast::Hasher` reports it, 0 for none) followed by `src`.
pub fn extend_vec(v: &mut Vec<u8>, src: &[u8], crc: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if src.len() >= x86::MIN_LEN && x86::available() {
        v.reserve(src.len());
        let spare = v.spare_capacity_mut();
        assert!(spare.len() >= src.len());
        // SAFETY: `spare` has room for `src.len()` bytes (reserved, asserted), does not overlap
        // `src` (a shared borrow of other memory), and `available()` checked the CPU features
        // the kernel is compiled for.
        let crc = unsafe {
            x86::copy_crc(
                spare.as_mut_ptr().cast::<u8>(),
                src.as_ptr(),
                src.len(),
                crc,
            )
        };
        // SAFETY: the kernel wrote all `src.len()` bytes after the current length, within
        // the capacity.
        unsafe { v.set_len(v.len() + src.len()) };
        return crc;
    }
    v.extend_from_slice(src);
    update(crc, src)
}

/// Copies `src` over `dst` (of the same length: panics otherwise) and returns `crc` extended
/// with `src`, as [`extend_vec`].
pub fn copy(dst: &mut [u8], src: &[u8], crc: u32) -> u32 {
    assert_eq!(dst.len(), src.len(), "crc::copy of unequal lengths");
    #[cfg(target_arch = "x86_64")]
    if src.len() >= x86::MIN_LEN && x86::available() {
        // SAFETY: `dst` and `src` are valid for `src.len()` bytes (equal lengths, asserted)
        // and do not overlap (a unique and a shared borrow); CPU features checked.
        return unsafe { x86::copy_crc(dst.as_mut_ptr(), src.as_ptr(), src.len(), crc) };
    }
    dst.copy_from_slice(src);
    update(crc, src)
}

/// `crc` (as `crc32fast::Hasher` reports it) extended with `bytes`.
fn update(crc: u32, bytes: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new_with_initial(crc);
    h.update(bytes);
    h.finalize()
}

/// `a * b` modulo the CRC-32 polynomial, both in the bit order of a reflected CRC register
/// (bit 31 holds the coefficient of `x^0`, bit 0 that of `x^31`): one carry-less multiplication
/// and a four-step table reduction, where the CPU has PCLMULQDQ (`None` elsewhere: the caller
/// multiplies in software). CRC-32 concatenation multiplies by `x^(8n)` this way.
pub fn mul_mod(a: u32, b: u32) -> Option<u32> {
    #[cfg(target_arch = "x86_64")]
    if x86::has_clmul() {
        // SAFETY: the CPU has PCLMULQDQ (checked).
        return Some(unsafe { x86::mul_clmul(a, b) });
    }
    let _ = (a, b);
    None
}

/// `X8_TABLE[v]`: the byte `v` (bits 0..7 of a reflected register: the coefficients of `x^31` down
/// to `x^24`) times `x^8` modulo the polynomial, the table of a bytewise CRC-32.
#[cfg(target_arch = "x86_64")]
const X8_TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut v = 0;
    while v < 256 {
        let mut c = v as u32;
        let mut k = 0;
        while k < 8 {
            c = (c >> 1) ^ ((c & 1).wrapping_neg() & 0xEDB8_8320);
            k += 1;
        }
        t[v] = c;
        v += 1;
    }
    t
};

/// Whether [`extend_vec`] makes one pass over long sources on this CPU.
pub fn fused() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Shorter sources are copied and hashed apart (the fold needs 256 bytes, and its set-up
    /// and final reduction are not worth it for a few hundred).
    pub(super) const MIN_LEN: usize = 1024;

    /// `x^(2048+32)` and `x^(2048-32)` modulo the CRC-32 polynomial, bit-reflected and shifted
    /// left by one (the form carry-less folding of a reflected CRC takes): the multipliers of
    /// the low and high 64 bits of a 128-bit lane that moves 2048 bits (256 bytes) ahead.
    const K_LO: i64 = 0x1_1542_778a;
    const K_HI: i64 = 0x1_322d_1430;

    pub(super) fn has_clmul() -> bool {
        std::arch::is_x86_feature_detected!("pclmulqdq")
    }

    /// [`super::mul_mod`]. The product of the two reflected 32-bit values, shifted left by one,
    /// holds `x^0..x^31` in its high half and `x^32..x^63` in its low half (each in register
    /// order); the low half times `x^32` is reduced by four table steps of a bytewise CRC.
    ///
    /// # Safety
    /// The CPU must have PCLMULQDQ.
    #[target_feature(enable = "pclmulqdq")]
    pub(super) unsafe fn mul_clmul(a: u32, b: u32) -> u32 {
        let p = _mm_clmulepi64_si128(
            _mm_cvtsi64_si128(i64::from(a)),
            _mm_cvtsi64_si128(i64::from(b)),
            0x00,
        );
        let prod = (_mm_cvtsi128_si64(p) as u64) << 1;
        let mut lo = prod as u32;
        for _ in 0..4 {
            lo = (lo >> 8) ^ super::X8_TABLE[(lo & 0xFF) as usize];
        }
        (prod >> 32) as u32 ^ lo
    }

    pub(super) fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("vpclmulqdq")
    }

    /// `a` folded 256 bytes ahead onto `d`: `a.lo * K_LO + a.hi * K_HI + d` in every lane.
    #[inline]
    #[target_feature(enable = "avx512f,vpclmulqdq")]
    fn fold(a: __m512i, k: __m512i, d: __m512i) -> __m512i {
        let lo = _mm512_clmulepi64_epi128(a, k, 0x00);
        let hi = _mm512_clmulepi64_epi128(a, k, 0x11);
        // 0x96: the truth table of a ^ b ^ c.
        _mm512_ternarylogic_epi64(lo, hi, d, 0x96)
    }

    /// The 64 bytes at `p + at`.
    ///
    /// # Safety
    /// They must be readable; the CPU must have AVX-512F.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load(p: *const u8, at: usize) -> __m512i {
        // SAFETY: the caller's promise; an unaligned load.
        unsafe { _mm512_loadu_si512(p.add(at).cast()) }
    }

    /// Writes `v` to the 64 bytes at `p + at`.
    ///
    /// # Safety
    /// They must be writable; the CPU must have AVX-512F.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store(p: *mut u8, at: usize, v: __m512i) {
        // SAFETY: the caller's promise; an unaligned store.
        unsafe { _mm512_storeu_si512(p.add(at).cast(), v) }
    }

    /// Copies `len >= 256` bytes from `src` to `dst` and returns `crc` extended with them.
    ///
    /// # Safety
    /// `src` must be valid for `len` reads and `dst` for `len` writes, not overlapping; the CPU
    /// must have AVX-512F and VPCLMULQDQ.
    #[target_feature(enable = "avx512f,vpclmulqdq")]
    pub(super) unsafe fn copy_crc(dst: *mut u8, src: *const u8, len: usize, crc: u32) -> u32 {
        assert!(len >= 256);
        let k = _mm512_set_epi64(K_HI, K_LO, K_HI, K_LO, K_HI, K_LO, K_HI, K_LO);
        // SAFETY: every load and store here and in the loop below covers 64 bytes at an offset
        // `at` with `at + 64 <= len`: within the `len` bytes the caller vouches for.
        let (d0, d1, d2, d3) = unsafe {
            let d = (load(src, 0), load(src, 64), load(src, 128), load(src, 192));
            store(dst, 0, d.0);
            store(dst, 64, d.1);
            store(dst, 128, d.2);
            store(dst, 192, d.3);
            d
        };
        // The running CRC register (the complement of the reported CRC) enters as the XOR of
        // the first four message bytes.
        let init = _mm512_zextsi128_si512(_mm_cvtsi32_si128(!crc as i32));
        let mut a = [_mm512_xor_si512(d0, init), d1, d2, d3];
        let mut at = 256;
        while len - at >= 256 {
            for (j, aj) in a.iter_mut().enumerate() {
                // SAFETY: as above (`at + 256 <= len`).
                let d = unsafe { load(src, at + 64 * j) };
                // SAFETY: as above.
                unsafe { store(dst, at + 64 * j, d) };
                *aj = fold(*aj, k, d);
            }
            at += 256;
        }
        // The accumulators are congruent to everything folded into them, as a 256-byte
        // message hashed from a zero register (a reported CRC of all ones).
        let mut rest = [0u8; 256];
        for (j, &aj) in a.iter().enumerate() {
            // SAFETY: `rest` has 64 bytes at `64 * j` for j < 4.
            unsafe { store(rest.as_mut_ptr(), 64 * j, aj) };
        }
        let crc = super::update(!0, &rest);
        // SAFETY: `at <= len`: the tail lies within both ranges.
        let (s, d) = unsafe { (src.add(at), dst.add(at)) };
        // SAFETY: `len - at` bytes at `s` and `d`, within the caller's ranges, not overlapping.
        unsafe { std::ptr::copy_nonoverlapping(s, d, len - at) };
        // SAFETY: `s` is valid for `len - at` reads (the caller's range).
        super::update(crc, unsafe { std::slice::from_raw_parts(s, len - at) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(crc: u32, bytes: &[u8]) -> u32 {
        let mut h = crc32fast::Hasher::new_with_initial(crc);
        h.update(bytes);
        h.finalize()
    }

    /// A xorshift stream: the same bytes on every run.
    pub(super) fn bytes(seed: u64, n: usize) -> Vec<u8> {
        let mut s = seed | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 32) as u8
            })
            .collect()
    }

    #[test]
    fn extend_vec_matches_crc32fast_at_every_length_and_alignment() {
        let data = bytes(7, 20_000);
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |m: usize| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as usize % m
        };
        let mut lens: Vec<usize> = (0..1500).collect();
        lens.extend([2047, 2048, 2049, 4096 + 255, 8191, 16_384, 19_000]);
        for _ in 0..300 {
            lens.push(next(19_000));
        }
        for len in lens {
            let off = next(64);
            let src = &data[off..off + len];
            let crc = next(1 << 31) as u32 ^ (next(2) as u32) << 31;
            // The destination at varying offsets too.
            let mut v = data[..next(100)].to_vec();
            let before = v.clone();
            let got = extend_vec(&mut v, src, crc);
            assert_eq!(got, reference(crc, src), "len {len} off {off} crc {crc:#x}");
            assert_eq!(&v[..before.len()], &before[..]);
            assert_eq!(&v[before.len()..], src, "len {len}");
        }
        // Over existing bytes.
        for len in [0, 100, 1023, 1024, 1025, 5000, 19_000] {
            let src = &data[1..1 + len];
            let mut dst = vec![0xA5u8; len + 3];
            let got = copy(&mut dst[2..2 + len], src, 0x1234_5678);
            assert_eq!(got, reference(0x1234_5678, src), "copy len {len}");
            assert_eq!(&dst[2..2 + len], src);
            assert_eq!((dst[..2].to_vec(), dst[2 + len]), (vec![0xA5; 2], 0xA5));
        }
        // A zero initial CRC (the empty prefix) and a zero message.
        let zeros = vec![0u8; 5000];
        let mut v = Vec::new();
        assert_eq!(extend_vec(&mut v, &zeros, 0), reference(0, &zeros));
    }

    #[test]
    fn the_kernel_is_used_where_the_cpu_has_it() {
        // Pins what the test above covered on this machine (the fused kernel or the fallback).
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            fused(),
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("vpclmulqdq")
        );
        #[cfg(not(target_arch = "x86_64"))]
        assert!(!fused());
    }
}
