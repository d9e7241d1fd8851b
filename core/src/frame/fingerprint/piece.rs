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

    /// The piece of `self`'s bytes followed by `next`'s: `crc(A B) = crc(A) x^(8|B|) +
    /// crc(B)` (the CRC's initial and final inversions cancel). A table of `x^(8 v 16^k)` makes
    /// it at most one multiplication per hex digit of `|B|` (crc32fast's `combine` squares its
    /// way up, some 2 us for a length of 20 MB: per commit, more than the bytes it hashes).
    pub fn then(self, next: Piece) -> Piece {
        Piece {
            crc: gf2::mul(self.crc, gf2::x_pow_8n(next.len)) ^ next.crc,
            len: self.len + next.len,
        }
    }
}

/// Arithmetic modulo the CRC-32 polynomial, in the reflected bit order of the CRC registers
/// (bit 31 holds the coefficient of `x^0`, bit 0 that of `x^31`).
pub(super) mod gf2 {
    /// The polynomial without its `x^32` term, reflected.
    const POLY: u32 = 0xEDB8_8320;
    /// `x^-1`: `x^31 + (P - x^32 - 1) / x`, reflected.
    const X_INV: u32 = (POLY << 1) | 1;

    /// `a * b` modulo the polynomial (branch-free: the bits of `a` are data).
    pub const fn mul(a: u32, mut b: u32) -> u32 {
        let mut p = 0;
        let mut i = 0;
        while i < 32 {
            p ^= b & ((a >> (31 - i)) & 1).wrapping_neg();
            b = (b >> 1) ^ ((b & 1).wrapping_neg() & POLY);
            i += 1;
        }
        p
    }

    /// `X8[k][v]` = `x^(8 v 16^k)`: `x^(8 n)` is the product of one entry per non-zero hex
    /// digit of `n`.
    const X8: [[u32; 16]; 16] = {
        let mut t = [[0x8000_0000u32; 16]; 16];
        // x^8 (reflected: bit 31 - 8).
        let mut step = 0x0080_0000u32;
        let mut k = 0;
        while k < 16 {
            let mut v = 1;
            while v < 16 {
                t[k][v] = mul(t[k][v - 1], step);
                v += 1;
            }
            // x^(8 16^(k+1)) = (x^(8 16^k))^16.
            step = mul(t[k][15], step);
            k += 1;
        }
        t
    };

    /// `x^(8 n)` modulo the polynomial: multiplying a CRC by it appends `n` zero bytes.
    pub fn x_pow_8n(n: u64) -> u32 {
        let mut r = 0x8000_0000u32;
        let mut k = 0;
        let mut n = n;
        while n != 0 {
            let v = (n & 15) as usize;
            if v != 0 {
                r = mul(r, X8[k][v]);
            }
            n >>= 4;
            k += 1;
        }
        r
    }

    /// `x^(-8 n)` modulo the polynomial.
    pub fn x_pow_minus_8n(n: u64) -> u32 {
        // (x^-8)^n by squaring; x^-8 = (x^-1)^8.
        let mut base = X_INV;
        for _ in 0..3 {
            base = mul(base, base);
        }
        let (mut r, mut n) = (0x8000_0000u32, n);
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
