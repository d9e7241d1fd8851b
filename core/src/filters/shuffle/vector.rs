//! The small vector vocabulary the SIMD kernels are written in.
//!
//! Every kernel (byte shuffle, byte unshuffle, bit transposes) is one generic function over
//! [`Vector`], instantiated for SSE2 and AVX2 on x86-64 and for NEON on aarch64. A vector is
//! one or two independent 128-bit *lanes*; all data movement inside a kernel is lane-local
//! (`zip_lo`/`zip_hi` interleave bytes of the low/high halves of each lane, like
//! `punpcklbw`/`punpckhbw`, `vzip1q_u8`/`vzip2q_u8`), so a 256-bit vector simply solves two
//! 128-bit problems side by side. `load2`/`store_lane` move each lane to or from its own address.
//!
//! The implementations are `#[inline(always)]` so that they are compiled inside the
//! `#[target_feature]` entry points that call them, never on their own.

/// A SIMD register made of `LANES` 128-bit lanes.
pub(crate) trait Vector: Copy {
    /// Number of 128-bit lanes (1 or 2).
    const LANES: usize;

    /// Loads `16 * LANES` bytes from `p` (unaligned).
    ///
    /// # Safety
    /// `p..p+16*LANES` must be readable and the CPU must have the vector's feature.
    unsafe fn load(p: *const u8) -> Self;
    /// Loads lane 0 from `p` and lane 1 (if any) from `q`, 16 bytes each.
    ///
    /// # Safety
    /// `p..p+16` (and `q..q+16` when `LANES == 2`) must be readable.
    unsafe fn load2(p: *const u8, q: *const u8) -> Self;
    /// Loads `N` registers from the `16 * N * LANES` bytes at `p`: register `k` gets 16-byte
    /// chunk `k` in lane 0 and chunk `N + k` in lane 1 (if any).
    ///
    /// # Safety
    /// `p..p + 16*N*LANES` must be readable and the CPU must have the vector's feature.
    #[inline(always)]
    unsafe fn load_split<const N: usize>(p: *const u8) -> [Self; N] {
        // SAFETY: forwarded caller contract.
        unsafe {
            let mut x = [Self::zero(); N];
            for (k, r) in x.iter_mut().enumerate() {
                let q = if Self::LANES == 2 {
                    p.add(16 * (N + k))
                } else {
                    p
                };
                *r = Self::load2(p.add(16 * k), q);
            }
            x
        }
    }
    /// Stores `16 * LANES` bytes at `p`.
    ///
    /// # Safety
    /// `p..p+16*LANES` must be writable.
    unsafe fn store(self, p: *mut u8);
    /// Stores lane `lane` (16 bytes) at `p`.
    ///
    /// # Safety
    /// `p..p+16` must be writable; `lane < LANES`.
    unsafe fn store_lane(self, lane: usize, p: *mut u8);
    /// Interleaves the bytes of the low halves of each lane of `a` and `b`.
    ///
    /// # Safety
    /// The CPU must have the vector's feature.
    unsafe fn zip_lo(a: Self, b: Self) -> Self;
    /// Interleaves the bytes of the high halves of each lane of `a` and `b`.
    ///
    /// # Safety
    /// As [`Vector::zip_lo`].
    unsafe fn zip_hi(a: Self, b: Self) -> Self;
    /// Even bytes of each lane of `a` followed by the even bytes of the same lane of `b`
    /// (the inverse of the zips: `unzip_even(zip_lo(a, b), zip_hi(a, b)) == a`).
    ///
    /// # Safety
    /// As [`Vector::zip_lo`].
    unsafe fn unzip_even(a: Self, b: Self) -> Self;
    /// Odd bytes of each lane of `a` followed by the odd bytes of the same lane of `b`.
    ///
    /// # Safety
    /// As [`Vector::zip_lo`].
    unsafe fn unzip_odd(a: Self, b: Self) -> Self;
    /// All-zero register.
    ///
    /// # Safety
    /// As [`Vector::zip_lo`].
    unsafe fn zero() -> Self;
    /// Transposes the 8x8 bit matrix held in each 64-bit word (bit `8r+c` ↔ bit `8c+r`).
    ///
    /// # Safety
    /// As [`Vector::zip_lo`].
    unsafe fn transpose_bits8(self) -> Self;
}

/// One perfect-shuffle round over `N` registers (N a power of two, 2..=16): register pairs
/// `(i, i+N/2)` are byte-interleaved. Seen as an address `reg * 16 + byte` inside each lane,
/// one round rotates the address bits left by one; `k` rounds rotate by `k`. That single fact
/// gives every transposition the kernels need (see the callers).
///
/// # Safety
/// The CPU must have `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn zip_round<V: Vector, const N: usize>(x: &mut [V; N]) {
    let h = N / 2;
    let mut y = *x;
    let mut i = 0;
    while i < h {
        // SAFETY: the caller guarantees the CPU feature.
        unsafe {
            y[2 * i] = V::zip_lo(x[i], x[i + h]);
            y[2 * i + 1] = V::zip_hi(x[i], x[i + h]);
        }
        i += 1;
    }
    *x = y;
}

/// `k` [`zip_round`]s.
///
/// # Safety
/// The CPU must have `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn zip_rounds<V: Vector, const N: usize>(x: &mut [V; N], k: u32) {
    for _ in 0..k {
        // SAFETY: forwarded caller guarantee.
        unsafe { zip_round(x) };
    }
}

/// Inverse of [`zip_round`]: rotates the address bits right by one.
///
/// # Safety
/// The CPU must have `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn unzip_round<V: Vector, const N: usize>(x: &mut [V; N]) {
    let h = N / 2;
    let mut y = *x;
    let mut i = 0;
    while i < h {
        // SAFETY: the caller guarantees the CPU feature.
        unsafe {
            y[i] = V::unzip_even(x[2 * i], x[2 * i + 1]);
            y[i + h] = V::unzip_odd(x[2 * i], x[2 * i + 1]);
        }
        i += 1;
    }
    *x = y;
}

/// `k` [`unzip_round`]s.
///
/// # Safety
/// The CPU must have `V`'s feature.
#[inline(always)]
pub(crate) unsafe fn unzip_rounds<V: Vector, const N: usize>(x: &mut [V; N], k: u32) {
    for _ in 0..k {
        // SAFETY: forwarded caller guarantee.
        unsafe { unzip_round(x) };
    }
}

/// Scalar 8x8 bit-matrix transpose of a 64-bit word (bit `8r+c` ↔ bit `8c+r`).
#[inline(always)]
pub(crate) fn transpose_bits8_u64(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^= t ^ (t << 28);
    x
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    use super::Vector;
    use std::arch::x86_64::*;

    /// One SSE2 register.
    #[derive(Clone, Copy)]
    pub(crate) struct Sse2(__m128i);

    /// One AVX2 register (two lanes).
    #[derive(Clone, Copy)]
    pub(crate) struct Avx2(__m256i);

    impl Vector for Sse2 {
        const LANES: usize = 1;
        #[inline(always)]
        unsafe fn load(p: *const u8) -> Self {
            // SAFETY: the caller guarantees 16 readable bytes.
            Sse2(unsafe { _mm_loadu_si128(p as *const __m128i) })
        }
        #[inline(always)]
        unsafe fn load2(p: *const u8, _q: *const u8) -> Self {
            // SAFETY: as `load`.
            unsafe { Self::load(p) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut u8) {
            // SAFETY: the caller guarantees 16 writable bytes.
            unsafe { _mm_storeu_si128(p as *mut __m128i, self.0) }
        }
        #[inline(always)]
        unsafe fn store_lane(self, _lane: usize, p: *mut u8) {
            // SAFETY: as `store`.
            unsafe { self.store(p) }
        }
        #[inline(always)]
        unsafe fn zip_lo(a: Self, b: Self) -> Self {
            // SAFETY: SSE2 is baseline on x86-64.
            Sse2(unsafe { _mm_unpacklo_epi8(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn zip_hi(a: Self, b: Self) -> Self {
            // SAFETY: SSE2 is baseline on x86-64.
            Sse2(unsafe { _mm_unpackhi_epi8(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn unzip_even(a: Self, b: Self) -> Self {
            // SAFETY: SSE2 is baseline on x86-64; pure register arithmetic.
            unsafe {
                let m = _mm_set1_epi16(0x00FF);
                Sse2(_mm_packus_epi16(
                    _mm_and_si128(a.0, m),
                    _mm_and_si128(b.0, m),
                ))
            }
        }
        #[inline(always)]
        unsafe fn unzip_odd(a: Self, b: Self) -> Self {
            // SAFETY: SSE2 is baseline on x86-64; pure register arithmetic.
            unsafe {
                Sse2(_mm_packus_epi16(
                    _mm_srli_epi16::<8>(a.0),
                    _mm_srli_epi16::<8>(b.0),
                ))
            }
        }
        #[inline(always)]
        unsafe fn zero() -> Self {
            // SAFETY: SSE2 is baseline on x86-64.
            Sse2(unsafe { _mm_setzero_si128() })
        }
        #[inline(always)]
        unsafe fn transpose_bits8(self) -> Self {
            // SAFETY: SSE2 is baseline on x86-64; pure register arithmetic.
            unsafe {
                let mut x = self.0;
                let t = _mm_and_si128(
                    _mm_xor_si128(x, _mm_srli_epi64::<7>(x)),
                    _mm_set1_epi64x(0x00AA_00AA_00AA_00AA),
                );
                x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64::<7>(t)));
                let t = _mm_and_si128(
                    _mm_xor_si128(x, _mm_srli_epi64::<14>(x)),
                    _mm_set1_epi64x(0x0000_CCCC_0000_CCCC),
                );
                x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64::<14>(t)));
                let t = _mm_and_si128(
                    _mm_xor_si128(x, _mm_srli_epi64::<28>(x)),
                    _mm_set1_epi64x(0x0000_0000_F0F0_F0F0),
                );
                x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64::<28>(t)));
                Sse2(x)
            }
        }
    }

    impl Vector for Avx2 {
        const LANES: usize = 2;
        #[inline(always)]
        unsafe fn load(p: *const u8) -> Self {
            // SAFETY: the caller guarantees 32 readable bytes and AVX2.
            Avx2(unsafe { _mm256_loadu_si256(p as *const __m256i) })
        }
        #[inline(always)]
        unsafe fn load2(p: *const u8, q: *const u8) -> Self {
            // SAFETY: the caller guarantees 16 readable bytes at p and at q, and AVX2.
            unsafe {
                let lo = _mm256_castsi128_si256(_mm_loadu_si128(p as *const __m128i));
                Avx2(_mm256_inserti128_si256::<1>(
                    lo,
                    _mm_loadu_si128(q as *const __m128i),
                ))
            }
        }
        #[inline(always)]
        unsafe fn load_split<const N: usize>(p: *const u8) -> [Self; N] {
            // SAFETY: the caller guarantees 32*N readable bytes and AVX2. Whole 256-bit loads,
            // then one lane permute per register instead of a 128-bit insert.
            unsafe {
                let mut l = [_mm256_setzero_si256(); N];
                for (m, r) in l.iter_mut().enumerate() {
                    *r = _mm256_loadu_si256(p.add(32 * m) as *const __m256i);
                }
                let mut x = [Avx2(_mm256_setzero_si256()); N];
                for (k, r) in x.iter_mut().enumerate() {
                    let (a, b) = (l[k / 2], l[N / 2 + k / 2]);
                    r.0 = if k % 2 == 0 {
                        _mm256_permute2x128_si256::<0x20>(a, b)
                    } else {
                        _mm256_permute2x128_si256::<0x31>(a, b)
                    };
                }
                x
            }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut u8) {
            // SAFETY: the caller guarantees 32 writable bytes and AVX2.
            unsafe { _mm256_storeu_si256(p as *mut __m256i, self.0) }
        }
        #[inline(always)]
        unsafe fn store_lane(self, lane: usize, p: *mut u8) {
            // SAFETY: the caller guarantees 16 writable bytes and AVX2.
            unsafe {
                let v = if lane == 0 {
                    _mm256_castsi256_si128(self.0)
                } else {
                    _mm256_extracti128_si256::<1>(self.0)
                };
                _mm_storeu_si128(p as *mut __m128i, v)
            }
        }
        #[inline(always)]
        unsafe fn zip_lo(a: Self, b: Self) -> Self {
            // SAFETY: the caller guarantees AVX2.
            Avx2(unsafe { _mm256_unpacklo_epi8(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn zip_hi(a: Self, b: Self) -> Self {
            // SAFETY: the caller guarantees AVX2.
            Avx2(unsafe { _mm256_unpackhi_epi8(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn unzip_even(a: Self, b: Self) -> Self {
            // SAFETY: the caller guarantees AVX2; pure register arithmetic.
            unsafe {
                let m = _mm256_set1_epi16(0x00FF);
                Avx2(_mm256_packus_epi16(
                    _mm256_and_si256(a.0, m),
                    _mm256_and_si256(b.0, m),
                ))
            }
        }
        #[inline(always)]
        unsafe fn unzip_odd(a: Self, b: Self) -> Self {
            // SAFETY: the caller guarantees AVX2; pure register arithmetic.
            unsafe {
                Avx2(_mm256_packus_epi16(
                    _mm256_srli_epi16::<8>(a.0),
                    _mm256_srli_epi16::<8>(b.0),
                ))
            }
        }
        #[inline(always)]
        unsafe fn zero() -> Self {
            // SAFETY: the caller guarantees AVX2.
            Avx2(unsafe { _mm256_setzero_si256() })
        }
        #[inline(always)]
        unsafe fn transpose_bits8(self) -> Self {
            // SAFETY: the caller guarantees AVX2; pure register arithmetic.
            unsafe {
                let mut x = self.0;
                let t = _mm256_and_si256(
                    _mm256_xor_si256(x, _mm256_srli_epi64::<7>(x)),
                    _mm256_set1_epi64x(0x00AA_00AA_00AA_00AA),
                );
                x = _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64::<7>(t)));
                let t = _mm256_and_si256(
                    _mm256_xor_si256(x, _mm256_srli_epi64::<14>(x)),
                    _mm256_set1_epi64x(0x0000_CCCC_0000_CCCC),
                );
                x = _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64::<14>(t)));
                let t = _mm256_and_si256(
                    _mm256_xor_si256(x, _mm256_srli_epi64::<28>(x)),
                    _mm256_set1_epi64x(0x0000_0000_F0F0_F0F0),
                );
                x = _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64::<28>(t)));
                Avx2(x)
            }
        }
    }
}

#[cfg(target_arch = "aarch64")]
pub(crate) mod neon {
    use super::Vector;
    use std::arch::aarch64::*;

    /// One NEON register.
    #[derive(Clone, Copy)]
    pub(crate) struct Neon(uint8x16_t);

    impl Vector for Neon {
        const LANES: usize = 1;
        #[inline(always)]
        unsafe fn load(p: *const u8) -> Self {
            // SAFETY: the caller guarantees 16 readable bytes.
            Neon(unsafe { vld1q_u8(p) })
        }
        #[inline(always)]
        unsafe fn load2(p: *const u8, _q: *const u8) -> Self {
            // SAFETY: as `load`.
            unsafe { Self::load(p) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut u8) {
            // SAFETY: the caller guarantees 16 writable bytes.
            unsafe { vst1q_u8(p, self.0) }
        }
        #[inline(always)]
        unsafe fn store_lane(self, _lane: usize, p: *mut u8) {
            // SAFETY: as `store`.
            unsafe { self.store(p) }
        }
        #[inline(always)]
        unsafe fn zip_lo(a: Self, b: Self) -> Self {
            // SAFETY: NEON is baseline on aarch64.
            Neon(unsafe { vzip1q_u8(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn zip_hi(a: Self, b: Self) -> Self {
            // SAFETY: NEON is baseline on aarch64.
            Neon(unsafe { vzip2q_u8(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn unzip_even(a: Self, b: Self) -> Self {
            // SAFETY: NEON is baseline on aarch64.
            Neon(unsafe { vuzp1q_u8(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn unzip_odd(a: Self, b: Self) -> Self {
            // SAFETY: NEON is baseline on aarch64.
            Neon(unsafe { vuzp2q_u8(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn zero() -> Self {
            // SAFETY: NEON is baseline on aarch64.
            Neon(unsafe { vdupq_n_u8(0) })
        }
        #[inline(always)]
        unsafe fn transpose_bits8(self) -> Self {
            // SAFETY: NEON is baseline on aarch64; pure register arithmetic.
            unsafe {
                let mut x = vreinterpretq_u64_u8(self.0);
                let t = vandq_u64(
                    veorq_u64(x, vshrq_n_u64::<7>(x)),
                    vdupq_n_u64(0x00AA_00AA_00AA_00AA),
                );
                x = veorq_u64(x, veorq_u64(t, vshlq_n_u64::<7>(t)));
                let t = vandq_u64(
                    veorq_u64(x, vshrq_n_u64::<14>(x)),
                    vdupq_n_u64(0x0000_CCCC_0000_CCCC),
                );
                x = veorq_u64(x, veorq_u64(t, vshlq_n_u64::<14>(t)));
                let t = vandq_u64(
                    veorq_u64(x, vshrq_n_u64::<28>(x)),
                    vdupq_n_u64(0x0000_0000_F0F0_F0F0),
                );
                x = veorq_u64(x, veorq_u64(t, vshlq_n_u64::<28>(t)));
                Neon(vreinterpretq_u8_u64(x))
            }
        }
    }
}
