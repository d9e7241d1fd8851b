//! NDLZ (compcode 32): c-blosc2's experimental Lempel-Ziv codec for 2-D blocks of bytes. A
//! block (`blockshape[0] x blockshape[1]` one-byte items, from the `b2nd` metalayer) is cut in
//! square cells of 4x4 (meta 4) or 8x8 (meta 8) bytes; every cell becomes a token and its
//! payload: a literal cell, a repeat of an earlier literal cell, a cell of one repeated byte,
//! or rows copied from pairs/triples of rows of earlier literal cells (by 16-bit offset) plus
//! the remaining rows literally. Cells at the far edges are always literal.
//!
//! Stream: `ndim (=2) | blockshape[0] i32 LE | blockshape[1] i32 LE | cells...`. Offsets point
//! back from the token's position; the match tables hash rows with XXH32 (seed 1, top 12 bits).
//! The encoder reproduces c-blosc2's choices (including its table updates) so the bytes are
//! the same. The decoder validates every read against the stream, and the block shape against
//! the output, and fails (`Failure`) on anything else, as c-blosc2's patched decoder does.

#![forbid(unsafe_code)]

use crate::error::{Error, Result};

/// The NDLZ compcode (`BLOSC_CODEC_NDLZ`).
pub const NDLZ: u8 = 32;

const MAX_DISTANCE: u32 = 65535;
const HASH_LOG: u32 = 12;
const TABLE: usize = 1 << HASH_LOG;

const P1: u32 = 0x9E37_79B1;
const P2: u32 = 0x85EB_CA77;
const P3: u32 = 0xC2B2_AE3D;
const P4: u32 = 0x27D4_EB2F;
const P5: u32 = 0x1656_67B1;

fn rd32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// XXH32 of `data` with `seed`.
pub fn xxh32(data: &[u8], seed: u32) -> u32 {
    let round = |acc: u32, v: u32| {
        acc.wrapping_add(v.wrapping_mul(P2))
            .rotate_left(13)
            .wrapping_mul(P1)
    };
    let mut p = data;
    let mut h = if data.len() >= 16 {
        let mut v = [
            seed.wrapping_add(P1).wrapping_add(P2),
            seed.wrapping_add(P2),
            seed,
            seed.wrapping_sub(P1),
        ];
        while p.len() >= 16 {
            for (k, vk) in v.iter_mut().enumerate() {
                *vk = round(*vk, rd32(&p[4 * k..]));
            }
            p = &p[16..];
        }
        v[0].rotate_left(1)
            .wrapping_add(v[1].rotate_left(7))
            .wrapping_add(v[2].rotate_left(12))
            .wrapping_add(v[3].rotate_left(18))
    } else {
        seed.wrapping_add(P5)
    };
    h = h.wrapping_add(data.len() as u32);
    while p.len() >= 4 {
        h = h
            .wrapping_add(rd32(p).wrapping_mul(P3))
            .rotate_left(17)
            .wrapping_mul(P4);
        p = &p[4..];
    }
    for &b in p {
        h = h
            .wrapping_add(u32::from(b).wrapping_mul(P5))
            .rotate_left(11)
            .wrapping_mul(P1);
    }
    h ^= h >> 15;
    h = h.wrapping_mul(P2);
    h ^= h >> 13;
    h = h.wrapping_mul(P3);
    h ^ (h >> 16)
}

fn hash(data: &[u8]) -> usize {
    (xxh32(data, 1) >> (32 - HASH_LOG)) as usize
}

/// Output under construction, with c-blosc2's room checks.
struct Out<'a> {
    buf: &'a mut [u8],
    op: usize,
}

impl Out<'_> {
    fn push(&mut self, b: &[u8]) {
        self.buf[self.op..self.op + b.len()].copy_from_slice(b);
        self.op += b.len();
    }
}

/// The shared encoder; `C` is the cell side (4 or 8).
struct Encoder<'a> {
    bs: [usize; 2],
    input: &'a [u8],
    tab_cell: Vec<u32>,
    tab_triple: Vec<u32>,
    tab_pair: Vec<u32>,
    /// Persist across cells, as in c-blosc2 (stale entries are reused by its updates).
    hash_triple: [usize; 6],
    hash_pair: [usize; 7],
}

impl Encoder<'_> {
    /// Whether `len` bytes at output position `at` equal `what`.
    fn same(out: &Out, at: u32, what: &[u8]) -> bool {
        let at = at as usize;
        out.buf.get(at..at + what.len()) == Some(what)
    }

    /// Looks up a cell match: the distance, or 0.
    fn cell_distance(&self, out: &Out, anchor: usize, h: usize, cell: &[u8]) -> u32 {
        let t = self.tab_cell[h];
        if t != 0 && Self::same(out, t, cell) {
            (anchor - t as usize) as u32
        } else {
            0
        }
    }

    fn literal_update(&mut self, anchor: usize, h: usize, upd_t: &[u32], upd_p: &[u32]) {
        self.tab_cell[h] = (anchor + 1) as u32;
        if upd_t[0] != 0 {
            for (k, &u) in upd_t.iter().enumerate() {
                self.tab_triple[self.hash_triple[k]] = u;
            }
        }
        if upd_p[0] != 0 {
            for (k, &u) in upd_p.iter().enumerate() {
                self.tab_pair[self.hash_pair[k]] = u;
            }
        }
    }

    /// Encodes the 4x4 cell `cell` (16 bytes) at `anchor`.
    fn cell4(&mut self, out: &mut Out, cell: &[u8; 16]) {
        let anchor = out.op;
        let hc = hash(cell);
        let distance = self.cell_distance(out, anchor, hc, cell);
        if cell.iter().all(|&b| b == cell[0]) {
            out.push(&[1 << 6, cell[0]]);
            return;
        }
        if distance != 0 && distance < MAX_DISTANCE {
            let off = (anchor - self.tab_cell[hc] as usize) as u16;
            out.push(&[0xC0]);
            out.push(&off.to_le_bytes());
            return;
        }
        let row = |r: usize| &cell[4 * r..4 * r + 4];
        let mut upd_t = [0u32; 2];
        let mut upd_p = [0u32; 3];
        // Two pairs of rows, the first pair with row 0.
        for j in 1..4 {
            let pair1 = [row(0), row(j)].concat();
            let h1 = hash(&pair1);
            let t1 = self.tab_pair[h1];
            if t1 == 0 || !Self::same(out, t1, &pair1) {
                continue;
            }
            let off1 = (anchor - t1 as usize) as u16;
            let d1 = (anchor - t1 as usize) as u32;
            if d1 == 0 || d1 >= MAX_DISTANCE {
                continue;
            }
            let others: Vec<usize> = (1..4).filter(|&k| k != j).collect();
            let (l, m) = (others[0], others[1]);
            let pair2 = [row(l), row(m)].concat();
            let h2 = hash(&pair2);
            let t2 = self.tab_pair[h2];
            if t2 != 0 && Self::same(out, t2, &pair2) {
                let d2 = (anchor + l * 4 - t2 as usize) as u32;
                if d2 != 0 && d2 < MAX_DISTANCE {
                    let off2 = (anchor - t2 as usize) as u16;
                    out.push(&[(1 << 5) | ((j as u8) << 3)]);
                    out.push(&off1.to_le_bytes());
                    out.push(&off2.to_le_bytes());
                    return;
                }
            }
        }
        // Triples of rows.
        #[allow(clippy::needless_range_loop)]
        for i in 0..2 {
            for j in i + 1..3 {
                for k in j + 1..4 {
                    let triple = [row(i), row(j), row(k)].concat();
                    let h = hash(&triple);
                    let t = self.tab_triple[h];
                    let same = if t != 0 {
                        Self::same(out, t, &triple)
                    } else {
                        if j - i == 1 && k - j == 1 {
                            upd_t[i] = (anchor + 1 + i * 4) as u32;
                            self.hash_triple[i] = h;
                        }
                        false
                    };
                    if !same {
                        continue;
                    }
                    let d = (anchor + i * 4 - t as usize) as u32;
                    if d != 0 && d < MAX_DISTANCE {
                        let token = if i == 1 {
                            7 << 5
                        } else {
                            (7 << 5) | (((j + k - 2) as u8) << 3)
                        };
                        let off = (anchor - t as usize) as u16;
                        out.push(&[token]);
                        out.push(&off.to_le_bytes());
                        let l = (0..4).find(|&l| l != i && l != j && l != k).unwrap_or(0);
                        out.push(row(l));
                        return;
                    }
                }
            }
        }
        // Pairs of rows.
        #[allow(clippy::needless_range_loop)]
        for i in 0..3 {
            for j in i + 1..4 {
                let pair = [row(i), row(j)].concat();
                let h = hash(&pair);
                let t = self.tab_pair[h];
                let same = if t != 0 {
                    Self::same(out, t, &pair)
                } else {
                    if j - i == 1 {
                        upd_p[i] = (anchor + 1 + i * 4) as u32;
                        self.hash_pair[i] = h;
                    }
                    false
                };
                if !same {
                    continue;
                }
                let d = (anchor + i * 4 - t as usize) as u32;
                if d != 0 && d < MAX_DISTANCE {
                    let token = if i == 2 {
                        1 << 7
                    } else {
                        (1 << 7) | ((i as u8) << 5) | ((j as u8) << 3)
                    };
                    let off = (anchor - t as usize) as u16;
                    out.push(&[token]);
                    out.push(&off.to_le_bytes());
                    for k in (0..4).filter(|&k| k != i && k != j) {
                        out.push(row(k));
                    }
                    return;
                }
            }
        }
        self.literal_update(anchor, hc, &upd_t, &upd_p);
        out.push(&[0]);
        out.push(cell);
    }

    /// Encodes the 8x8 cell `cell` (64 bytes) at `anchor`.
    fn cell8(&mut self, out: &mut Out, cell: &[u8; 64]) {
        let anchor = out.op;
        let hc = hash(cell);
        let distance = self.cell_distance(out, anchor, hc, cell);
        if cell.iter().all(|&b| b == cell[0]) {
            out.push(&[1 << 6, cell[0]]);
            return;
        }
        if distance != 0 && distance < MAX_DISTANCE {
            let off = (anchor - self.tab_cell[hc] as usize) as u16;
            out.push(&[0xC0]);
            out.push(&off.to_le_bytes());
            return;
        }
        let mut upd_t = [0u32; 6];
        let mut upd_p = [0u32; 7];
        for (i, width, tab_is_triple) in (0..6)
            .map(|i| (i, 24usize, true))
            .chain((0..7).map(|i| (i, 16usize, false)))
        {
            let start = i * 8;
            let rows = &cell[start..start + width];
            let h = hash(rows);
            let t = if tab_is_triple {
                self.tab_triple[h]
            } else {
                self.tab_pair[h]
            };
            let same = if t != 0 {
                Self::same(out, t, rows)
            } else {
                if tab_is_triple {
                    upd_t[i] = (anchor + 1 + start) as u32;
                    self.hash_triple[i] = h;
                } else {
                    upd_p[i] = (anchor + 1 + start) as u32;
                    self.hash_pair[i] = h;
                }
                false
            };
            if !same {
                continue;
            }
            let d = (anchor + start - t as usize) as u32;
            if d != 0 && d < MAX_DISTANCE {
                let (kind, nrows) = if tab_is_triple { (21u8, 3) } else { (17u8, 2) };
                let off = (anchor - t as usize) as u16;
                out.push(&[(kind << 3) | i as u8]);
                out.push(&off.to_le_bytes());
                for l in (0..8).filter(|&l| l < i || l > i + nrows - 1) {
                    out.push(&cell[l * 8..l * 8 + 8]);
                }
                return;
            }
        }
        self.literal_update(anchor, hc, &upd_t, &upd_p);
        out.push(&[0]);
        out.push(cell);
    }

    /// The bytes of the `c x c` cell at grid position `(g0, g1)`.
    fn gather(&self, c: usize, g0: usize, g1: usize, buf: &mut [u8]) {
        let orig = g0 * c * self.bs[1] + g1 * c;
        for r in 0..c {
            let at = orig + r * self.bs[1];
            buf[r * c..r * c + c].copy_from_slice(&self.input[at..at + c]);
        }
    }
}

/// Compresses one block (`Ok(0)`: not compressible or no room; errors where c-blosc2's
/// encoder returns an error: cell side not 4 or 8, geometry not 2-D, block not
/// `blockshape[0] * blockshape[1]` bytes, output under 9 bytes).
pub fn compress(meta: u8, blockshape: &[i32], src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let c: usize = match meta {
        4 => 4,
        8 => 8,
        _ => return Err(Error::Failure),
    };
    let &[b0, b1] = blockshape else {
        return Err(Error::Failure);
    };
    if i64::from(b0) * i64::from(b1) != src.len() as i64 || b0 < 0 || b1 < 0 {
        return Err(Error::Failure);
    }
    if dst.len() < 9 {
        return Err(Error::Failure);
    }
    let cell_size = c * c;
    let overhead = 17 + (src.len() as i64 / cell_size as i64 - 1) * 2;
    if src.len() < cell_size || (dst.len() as i64) < overhead {
        return Ok(0);
    }
    let bs = [b0 as usize, b1 as usize];
    let mut enc = Encoder {
        bs,
        input: src,
        tab_cell: vec![0; TABLE],
        tab_triple: vec![0; TABLE],
        tab_pair: vec![0; TABLE],
        hash_triple: [0; 6],
        hash_pair: [0; 7],
    };
    let mut out = Out { buf: dst, op: 0 };
    out.push(&[2]);
    out.push(&b0.to_le_bytes());
    out.push(&b1.to_le_bytes());
    let stop = [bs[0].div_ceil(c), bs[1].div_ceil(c)];
    let mut cellbuf = [0u8; 64];
    for g0 in 0..stop[0] {
        for g1 in 0..stop[1] {
            if out.op + cell_size + 1 > out.buf.len() {
                return Ok(0);
            }
            let edge0 = !bs[0].is_multiple_of(c) && g0 == stop[0] - 1;
            let edge1 = !bs[1].is_multiple_of(c) && g1 == stop[1] - 1;
            if edge0 || edge1 {
                let pad = |d: usize, g: usize| {
                    if g == stop[d] - 1 && !bs[d].is_multiple_of(c) {
                        bs[d] % c
                    } else {
                        c
                    }
                };
                let (p0, p1) = (pad(0, g0), pad(1, g1));
                out.push(&[0]);
                let orig = g0 * c * bs[1] + g1 * c;
                for r in 0..p0 {
                    let at = orig + r * bs[1];
                    out.push(&src[at..at + p1]);
                }
            } else {
                enc.gather(c, g0, g1, &mut cellbuf);
                if c == 4 {
                    let mut cell = [0u8; 16];
                    cell.copy_from_slice(&cellbuf[..16]);
                    enc.cell4(&mut out, &cell);
                } else {
                    enc.cell8(&mut out, &cellbuf);
                }
            }
            if out.op > src.len() {
                return Ok(0);
            }
        }
    }
    Ok(out.op)
}

/// Checks that `len` bytes at `pos` lie inside a stream of `n` bytes.
fn range(pos: i64, len: i64, n: usize) -> Result<std::ops::Range<usize>> {
    if pos < 0 || len < 0 || pos > n as i64 - len {
        return Err(Error::Failure);
    }
    Ok(pos as usize..(pos + len) as usize)
}

/// Decompresses one block into `dst`; returns the bytes written (`blockshape[0] *
/// blockshape[1]`, which the chunk reader compares with the block size). `Ok(0)` where
/// c-blosc2 returns 0 (stream under 9 bytes, output too small).
pub fn decompress(meta: u8, src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let c: usize = match meta {
        4 => 4,
        8 => 8,
        _ => return Err(Error::Failure),
    };
    if src.len() < 9 {
        return Ok(0);
    }
    if src[0] != 2 {
        return Err(Error::Failure);
    }
    let b0 = i32::from_le_bytes([src[1], src[2], src[3], src[4]]);
    let b1 = i32::from_le_bytes([src[5], src[6], src[7], src[8]]);
    if b0 < 0 || b1 < 0 || dst.len() > i32::MAX as usize {
        return Err(Error::Failure);
    }
    let total = b0 as usize * b1 as usize;
    if dst.len() < total {
        return Ok(0);
    }
    dst[..total].fill(0);
    let bs = [b0 as usize, b1 as usize];
    let stop = [bs[0].div_ceil(c), bs[1].div_ceil(c)];
    let n = src.len();
    let mut ip = 9usize;
    let mut ind = 0usize;
    let mut pad = [0usize; 2];
    let mut local = [0u8; 64];
    for g0 in 0..stop[0] {
        for g1 in 0..stop[1] {
            for (d, g) in [(0, g0), (1, g1)] {
                pad[d] = if g == stop[d] - 1 && !bs[d].is_multiple_of(c) {
                    bs[d] % c
                } else {
                    c
                };
            }
            let cur = ip as i64;
            let token = src[range(cur, 1, n)?][0];
            ip += 1;
            // The cell's rows, `pad[1]` bytes each, one after the other.
            let cellbytes: &[u8] = if token == 0 {
                let r = range(cur + 1, (pad[0] * pad[1]) as i64, n)?;
                ip = r.end;
                &src[r]
            } else if token == 0xC0 {
                let o = &src[range(cur + 1, 2, n)?];
                let off = i64::from(u16::from_le_bytes([o[0], o[1]]));
                ip += 2;
                &src[range(cur - off, (pad[0] * pad[1]) as i64, n)?]
            } else if token == 1 << 6 {
                let v = src[range(cur + 1, 1, n)?][0];
                ip += 1;
                local.fill(v);
                &local[..]
            } else if c == 4 {
                ip = decode_rows4(token, src, cur, &mut local)?;
                &local[..16]
            } else {
                ip = decode_rows8(token, src, cur, &mut local)?;
                &local[..]
            };
            let orig = g0 * c * bs[1] + g1 * c;
            for r in 0..pad[0] {
                ind = orig + r * bs[1];
                let row = cellbytes
                    .get(r * pad[1]..(r + 1) * pad[1])
                    .ok_or(Error::Failure)?;
                dst.get_mut(ind..ind + pad[1])
                    .ok_or(Error::Failure)?
                    .copy_from_slice(row);
            }
        }
    }
    ind += pad[1];
    if ind != total {
        return Err(Error::Failure);
    }
    Ok(ind)
}

/// Rows of a 4x4 cell coded as row pairs/triples; returns the next stream position.
fn decode_rows4(token: u8, src: &[u8], cur: i64, cell: &mut [u8; 64]) -> Result<usize> {
    let n = src.len();
    let u16at = |p: i64| -> Result<i64> {
        let o = &src[range(p, 2, n)?];
        Ok(i64::from(u16::from_le_bytes([o[0], o[1]])))
    };
    let mut ip = cur as usize + 1;
    let rows_from = |cell: &mut [u8; 64], rows: &[usize], base: i64| -> Result<()> {
        let r = range(base, 4 * rows.len() as i64, n)?;
        for (k, &row) in rows.iter().enumerate() {
            cell[row * 4..row * 4 + 4].copy_from_slice(&src[r.start + 4 * k..r.start + 4 * k + 4]);
        }
        Ok(())
    };
    if token >= 224 {
        let off = u16at(cur + 1)?.wrapping_add(3) & 0xFFFF;
        ip += 2;
        let (i, j, k) = match token >> 3 {
            28 => (1, 2, 3),
            29 => (0, 1, 2),
            30 => (0, 1, 3),
            _ => (0, 2, 3),
        };
        rows_from(cell, &[i, j, k], cur + 3 - off)?;
        let l = (0..4).find(|&l| l != i && l != j && l != k).unwrap_or(0);
        let r = range(ip as i64, 4, n)?;
        cell[l * 4..l * 4 + 4].copy_from_slice(&src[r]);
        ip += 4;
    } else if (128..=191).contains(&token) {
        let off = u16at(cur + 1)?.wrapping_add(3) & 0xFFFF;
        ip += 2;
        let (i, j) = if token == 128 {
            (2usize, 3usize)
        } else {
            let i = usize::from((token - 128) >> 5);
            (i, usize::from((token - 128) >> 3) - (i << 2))
        };
        if j > 3 || i > 3 {
            return Err(Error::Failure);
        }
        rows_from(cell, &[i, j], cur + 3 - off)?;
        for k in (0..4).filter(|&k| k != i && k != j) {
            let r = range(ip as i64, 4, n)?;
            cell[k * 4..k * 4 + 4].copy_from_slice(&src[r]);
            ip += 4;
        }
    } else if (40..=63).contains(&token) {
        let off1 = u16at(cur + 1)?.wrapping_add(5) & 0xFFFF;
        let off2 = u16at(cur + 3)?.wrapping_add(5) & 0xFFFF;
        ip += 4;
        let j = usize::from((token - 32) >> 3);
        let others: Vec<usize> = (1..4).filter(|&k| k != j).collect();
        rows_from(cell, &[0, j], cur + 5 - off1)?;
        rows_from(cell, &[others[0], others[1]], cur + 5 - off2)?;
    } else {
        return Err(Error::Failure);
    }
    Ok(ip)
}

/// Rows of an 8x8 cell coded as a row pair/triple; returns the next stream position.
fn decode_rows8(token: u8, src: &[u8], cur: i64, cell: &mut [u8; 64]) -> Result<usize> {
    let n = src.len();
    let nrows = match token >> 3 {
        21 => 3,
        17 => 2,
        _ => return Err(Error::Failure),
    };
    let row = usize::from(token & 7);
    if row + nrows > 8 {
        return Err(Error::Failure);
    }
    let o = &src[range(cur + 1, 2, n)?];
    let off = i64::from(u16::from_le_bytes([o[0], o[1]]));
    let mut ip = cur as usize + 3;
    let r = range(cur - off, 8 * nrows as i64, n)?;
    cell[row * 8..(row + nrows) * 8].copy_from_slice(&src[r]);
    for l in (0..8).filter(|&l| l < row || l > row + nrows - 1) {
        let r = range(ip as i64, 8, n)?;
        cell[l * 8..l * 8 + 8].copy_from_slice(&src[r]);
        ip += 8;
    }
    Ok(ip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xxh32_known_values() {
        // Reference values of the XXH32 specification.
        assert_eq!(xxh32(b"", 0), 0x02CC_5D05);
        assert_eq!(xxh32(b"a", 0), 0x550D_7456);
        assert_eq!(xxh32(b"abc", 0), 0x32D1_53FF);
        assert_eq!(
            xxh32(b"Nobody inspects the spammish repetition", 0),
            0xE229_3B2F
        );
    }

    fn image(h: usize, w: usize) -> Vec<u8> {
        (0..h * w)
            .map(|i| {
                let (y, x) = (i / w, i % w);
                ((x / 4 + y / 4) % 3) as u8 * 40 + if (x + y) % 13 == 0 { 1 } else { 0 }
            })
            .collect()
    }

    #[test]
    fn roundtrip_both_cell_sizes() {
        for meta in [4u8, 8] {
            for (h, w) in [(32usize, 32usize), (30, 50), (64, 17), (8, 8)] {
                let src = image(h, w);
                let mut c = vec![0u8; src.len() + 64];
                let n = compress(meta, &[h as i32, w as i32], &src, &mut c[..src.len()]).unwrap();
                if n == 0 {
                    continue;
                }
                let mut d = vec![0u8; src.len()];
                assert_eq!(decompress(meta, &c[..n], &mut d), Ok(src.len()), "{h}x{w}");
                assert_eq!(d, src, "{meta} {h}x{w}");
            }
        }
    }

    #[test]
    fn forged_streams_fail_cleanly() {
        let mut d = vec![0u8; 256];
        let mut s = vec![2u8, 16, 0, 0, 0, 16, 0, 0, 0];
        assert_eq!(decompress(4, &s[..8], &mut d), Ok(0));
        assert_eq!(decompress(4, &s, &mut d), Err(Error::Failure));
        s.extend_from_slice(&[0xC0, 0xFF, 0xFF]);
        assert_eq!(decompress(4, &s, &mut d), Err(Error::Failure));
        for t in 0..=255u8 {
            let mut f = vec![2u8, 8, 0, 0, 0, 8, 0, 0, 0, t];
            f.extend(std::iter::repeat_n(t, 40));
            for meta in [4u8, 8] {
                let _ = decompress(meta, &f, &mut d);
            }
        }
        let big = [2u8, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0];
        assert_eq!(decompress(8, &big, &mut d), Ok(0));
        assert_eq!(decompress(5, &big, &mut d), Err(Error::Failure));
        let neg = [2u8, 0xFF, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0, 0];
        assert_eq!(decompress(4, &neg, &mut d), Err(Error::Failure));
    }
}
