//! [`Piece`], a CRC-32 with the length of the bytes it covers, and the arithmetic modulo the
//! CRC-32 polynomial (`gf2`) that appends, splits and strips pieces without their bytes.

#![forbid(unsafe_code)]

/// The CRC-32 of a byte sequence together with its length: enough to append it to another
/// one without its bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Piece {
    /// CRC-32 (IEEE) of the bytes.
    pub crc: u32,
    /// How many bytes.
    pub len: u64,
}

impl Piece {
    /// The empty sequence.
    pub const EMPTY: Piece = Piece { crc: 0, len: 0 };

    /// The piece of `bytes`.
    pub fn of(bytes: &[u8]) -> Piece {
        let mut p = Piece::EMPTY;
        p.extend(bytes);
        p
    }

    /// `self` followed by `bytes`.
    pub fn extend(&mut self, bytes: &[u8]) {
        let mut h = crc32fast::Hasher::new_with_initial_len(self.crc, self.len);
        h.update(bytes);
        self.crc = h.finalize();
        self.len += bytes.len() as u64;
    }

    /// The piece of the bytes of `self` without its last `suffix.len` bytes, given the piece
    /// of those (`None` when `suffix` is longer). CRC-32 concatenation is `crc(A B) = crc(A)
    /// x^(8|B|) + crc(B)` over GF(2) modulo the CRC polynomial, and `x` is invertible there, so
    /// `crc(A) = (crc(A B) + crc(B)) x^(-8|B|)`: O(log |B|), no bytes of `A` needed.
    pub fn strip_suffix(self, suffix: Piece) -> Option<Piece> {
        let len = self.len.checked_sub(suffix.len)?;
        let crc = gf2::mul(self.crc ^ suffix.crc, gf2::x_pow_minus_8n(suffix.len));
        Some(Piece { crc, len })
    }

    /// The piece of the bytes of `self` without its first `prefix.len` bytes, given the piece
    /// of those (`None` when `prefix` is longer): `crc(B) = crc(A B) + crc(A) x^(8|B|)`.
    pub fn strip_prefix(self, prefix: Piece) -> Option<Piece> {
        let len = self.len.checked_sub(prefix.len)?;
        let crc = self.crc ^ gf2::mul(prefix.crc, gf2::x_pow_8n(len));
        Some(Piece { crc, len })
    }

    /// The piece of `self`'s bytes followed by `next`'s: `crc(A B) = crc(A) x^(8|B|) +
    /// crc(B)` (the CRC's initial and final inversions cancel). A table of `x^(8 v 256^k)` makes
    /// it at most one multiplication per non-zero byte of `|B|` (crc32fast's `combine` squares
    /// its way up, some 2 us for a length of 20 MB: per commit, more than the bytes it hashes).
    pub fn then(self, next: Piece) -> Piece {
        Piece {
            crc: gf2::mul(self.crc, gf2::x_pow_8n(next.len)) ^ next.crc,
            len: self.len + next.len,
        }
    }
}

/// Arithmetic modulo the CRC-32 polynomial, in the reflected bit order of the CRC registers
/// (bit 31 holds the coefficient of `x^0`, bit 0 that of `x^31`).
mod gf2 {
    /// The polynomial without its `x^32` term, reflected.
    const POLY: u32 = 0xEDB8_8320;
    /// `x^-1`: `x^31 + (P - x^32 - 1) / x`, reflected.
    const X_INV: u32 = (POLY << 1) | 1;
    /// `1` (reflected: bit 31).
    const ONE: u32 = 0x8000_0000;

    /// `b * x` modulo the polynomial.
    const fn times_x(b: u32) -> u32 {
        (b >> 1) ^ ((b & 1).wrapping_neg() & POLY)
    }

    /// `a * b` modulo the polynomial, one bit of `a` at a time (the definition: tables and
    /// tests use it; branch-free, the bits of `a` are data).
    pub const fn mul_bitwise(a: u32, mut b: u32) -> u32 {
        let mut p = 0;
        let mut i = 0;
        while i < 32 {
            p ^= b & ((a >> (31 - i)) & 1).wrapping_neg();
            b = times_x(b);
            i += 1;
        }
        p
    }

    /// `OVERFLOW[w]`: `w x^4` for the `w` whose bits are the coefficients of `x^28..x^31`
    /// (bits 3..0): what multiplying by `x^4` folds back into the low degrees.
    const OVERFLOW: [u32; 16] = {
        let mut t = [0u32; 16];
        let mut w = 0;
        while w < 16 {
            t[w] = times_x(times_x(times_x(times_x(w as u32))));
            w += 1;
        }
        t
    };

    /// `a * b` modulo the polynomial: by carry-less multiplication where the CPU has it
    /// ([`crate::crc::mul_mod`]), else [`mul_nibbles`]. Per commit a fingerprint makes some ten
    /// of these (the CRC concatenations), which cost more than hashing the header, index block
    /// and trailer did with the bitwise multiplication.
    pub fn mul(a: u32, b: u32) -> u32 {
        crate::crc::mul_mod(a, b).unwrap_or_else(|| mul_nibbles(a, b))
    }

    /// `a * b` modulo the polynomial in software, four bits of `a` at a time (Horner's rule
    /// over the nibbles of `a`, highest degrees first, with the 16 multiples of `b` by the
    /// polynomials of degree below 4): a quarter of [`mul_bitwise`]'s dependent steps.
    pub fn mul_nibbles(a: u32, b: u32) -> u32 {
        // Nibble value v: bit 3 is the coefficient of x^0, bit 0 that of x^3 (reflected).
        let b1 = times_x(b);
        let b2 = times_x(b1);
        let b3 = times_x(b2);
        let mut m = [0u32; 16];
        let mut v = 1;
        while v < 16 {
            m[v] = (b3 & (v as u32 & 1).wrapping_neg())
                ^ (b2 & ((v as u32 >> 1) & 1).wrapping_neg())
                ^ (b1 & ((v as u32 >> 2) & 1).wrapping_neg())
                ^ (b & ((v as u32 >> 3) & 1).wrapping_neg());
            v += 1;
        }
        // Degrees 28..31 of `a` sit in its bits 3..0: the first nibble taken.
        let mut p = 0u32;
        let mut k = 0;
        while k < 8 {
            p = (p >> 4) ^ OVERFLOW[(p & 15) as usize] ^ m[((a >> (4 * k)) & 15) as usize];
            k += 1;
        }
        p
    }

    /// `X8[k][v]` = `x^(8 v 256^k)`: `x^(8 n)` is the product of one entry per non-zero byte
    /// of `n` (at most four multiplications below 4 GiB).
    const X8: [[u32; 256]; 8] = {
        let mut t = [[ONE; 256]; 8];
        // x^8 (reflected: bit 31 - 8).
        let mut step = 0x0080_0000u32;
        let mut k = 0;
        while k < 8 {
            let mut v = 1;
            while v < 256 {
                t[k][v] = mul_bitwise(t[k][v - 1], step);
                v += 1;
            }
            // x^(8 256^(k+1)) = x^(8 255 256^k) x^(8 256^k).
            step = mul_bitwise(t[k][255], step);
            k += 1;
        }
        t
    };

    /// `x^(8 n)` modulo the polynomial: multiplying a CRC by it appends `n` zero bytes.
    pub fn x_pow_8n(n: u64) -> u32 {
        let mut r: Option<u32> = None;
        for (k, row) in X8.iter().enumerate() {
            let v = ((n >> (8 * k)) & 255) as usize;
            if v != 0 {
                r = Some(r.map_or(row[v], |r| mul(r, row[v])));
            }
        }
        r.unwrap_or(ONE)
    }

    /// `x^(-8 n)` modulo the polynomial.
    pub fn x_pow_minus_8n(n: u64) -> u32 {
        // (x^-8)^n by squaring; x^-8 = (x^-1)^8.
        let mut base = X_INV;
        for _ in 0..3 {
            base = mul(base, base);
        }
        let (mut r, mut n) = (ONE, n);
        while n > 0 {
            if n & 1 != 0 {
                r = mul(r, base);
            }
            base = mul(base, base);
            n >>= 1;
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nibble_multiplication_matches_the_bitwise_one() {
        let mut s = 0x9E37_79B9u32;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        };
        let edges = [
            0u32,
            1,
            0x8000_0000,
            0xFFFF_FFFF,
            0xEDB8_8320,
            0x0000_000F,
            0xF000_0000,
        ];
        for &a in &edges {
            for &b in &edges {
                assert_eq!(gf2::mul(a, b), gf2::mul_bitwise(a, b), "{a:#x} {b:#x}");
                assert_eq!(
                    gf2::mul_nibbles(a, b),
                    gf2::mul_bitwise(a, b),
                    "{a:#x} {b:#x}"
                );
            }
        }
        for _ in 0..100_000 {
            let (a, b) = (next(), next());
            let m = gf2::mul_bitwise(a, b);
            assert_eq!(gf2::mul(a, b), m, "{a:#x} {b:#x}");
            // Both ways the multiplication can go, whichever this CPU takes.
            assert_eq!(gf2::mul_nibbles(a, b), m, "{a:#x} {b:#x}");
            if let Some(c) = crate::crc::mul_mod(a, b) {
                assert_eq!(c, m, "{a:#x} {b:#x}");
            }
        }
    }

    #[test]
    fn x_pow_8n_matches_repeated_multiplication() {
        let x8 = gf2::mul_bitwise(0x0080_0000, 0x8000_0000);
        let mut r = 0x8000_0000u32;
        for n in 0..70_000u64 {
            assert_eq!(gf2::x_pow_8n(n), r, "{n}");
            r = gf2::mul_bitwise(r, x8);
        }
        for n in [
            1u64 << 20,
            20_000_123,
            u64::from(u32::MAX) * 3 + 7,
            u64::MAX,
            0x0100_0000_0000_0000,
        ] {
            let (a, b) = (n / 3, n - n / 3);
            assert_eq!(
                gf2::x_pow_8n(n),
                gf2::mul(gf2::x_pow_8n(a), gf2::x_pow_8n(b))
            );
            assert_eq!(
                gf2::mul(gf2::x_pow_8n(n), gf2::x_pow_minus_8n(n)),
                0x8000_0000
            );
        }
    }

    #[test]
    fn pieces_combine_like_the_concatenation() {
        let a: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        let b: Vec<u8> = (0..333u32).map(|i| (i * 13 + 1) as u8).collect();
        let mut ab = a.clone();
        ab.extend_from_slice(&b);
        assert_eq!(Piece::of(&a).then(Piece::of(&b)), Piece::of(&ab));
        assert_eq!(Piece::EMPTY.then(Piece::of(&a)), Piece::of(&a));
        assert_eq!(Piece::of(&a).then(Piece::EMPTY), Piece::of(&a));
        let mut p = Piece::of(&a);
        p.extend(&b);
        assert_eq!(p, Piece::of(&ab));
        // The IEEE CRC-32 (zlib's): the check value of "123456789".
        assert_eq!(Piece::of(b"123456789").crc, 0xCBF4_3926);
    }

    #[test]
    fn a_suffix_strips_off_by_crc_arithmetic() {
        let a: Vec<u8> = (0..777u32).map(|i| (i * 31 + 7) as u8).collect();
        for blen in [0usize, 1, 3, 4, 100, 5000] {
            let b: Vec<u8> = (0..blen as u32).map(|i| (i * 17 + 3) as u8).collect();
            let mut ab = a.clone();
            ab.extend_from_slice(&b);
            assert_eq!(
                Piece::of(&ab).strip_suffix(Piece::of(&b)),
                Some(Piece::of(&a)),
                "{blen}"
            );
        }
        assert_eq!(Piece::of(b"ab").strip_suffix(Piece::of(b"abc")), None);
    }

    #[test]
    fn a_prefix_strips_off_by_crc_arithmetic() {
        let b: Vec<u8> = (0..777u32).map(|i| (i * 31 + 7) as u8).collect();
        for alen in [0usize, 1, 3, 4, 100, 5000] {
            let a: Vec<u8> = (0..alen as u32).map(|i| (i * 17 + 3) as u8).collect();
            let mut ab = a.clone();
            ab.extend_from_slice(&b);
            assert_eq!(
                Piece::of(&ab).strip_prefix(Piece::of(&a)),
                Some(Piece::of(&b)),
                "{alen}"
            );
        }
        assert_eq!(Piece::of(b"ab").strip_prefix(Piece::of(b"abc")), None);
    }
}
