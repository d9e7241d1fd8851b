//! NDMEAN (filter id 33): lossy; replaces every cell of an n-dimensional block of `f32` or
//! `f64` items by its mean, written cell after cell as NDCELL lays cells out. Decoding
//! scatters the cells back (so the block holds each cell's mean everywhere in the cell).
//!
//! Cells have side `meta` (a signed byte that must be > 0), clipped to the block shape per
//! dimension. Like c-blosc2, a cell's origin uses the first dimension's (clipped) side for
//! every dimension; when sides differ and a dimension has more than one cell, the decoder's
//! final check fails, so such chunks do not decode (in c-blosc2 either). Means are summed in
//! the item type, rows in order, and divided by the item count converted to that type, as
//! c-blosc2 does, so the bytes match.

#![forbid(unsafe_code)]

use super::ndcell::Cells;
use crate::error::{Error, Result};

/// The clipped cell shape for `meta` (`Failure` unless `meta` is 1..=127).
fn cellshape(blockshape: &[i32], meta: u8) -> Result<Vec<usize>> {
    let side = meta as i8;
    if side <= 0 {
        return Err(Error::Failure);
    }
    Ok(blockshape
        .iter()
        .map(|&b| {
            if i32::from(side) > b {
                b.max(0) as usize
            } else {
                side as usize
            }
        })
        .collect())
}

fn walk(blockshape: &[i32], meta: u8, typesize: usize, length: usize) -> Result<Cells> {
    if blockshape.is_empty() || blockshape.len() > super::ndcell::MAX_DIM {
        return Err(Error::Failure);
    }
    let cs = cellshape(blockshape, meta)?;
    let first = cs[0];
    Cells::new(blockshape, &cs, typesize, length, first)
}

/// Sums and writes the means for one item type.
macro_rules! means {
    ($t:ty, $c:expr, $src:expr, $dst:expr) => {{
        const W: usize = std::mem::size_of::<$t>();
        let item = |i: usize| -> Result<$t> {
            let b = $src.get(i * W..i * W + W).ok_or(Error::Failure)?;
            Ok(<$t>::from_le_bytes(
                b.try_into().map_err(|_| Error::Failure)?,
            ))
        };
        let mut op = 0usize;
        let mut cur_cell = usize::MAX;
        let mut sum: $t = 0.0;
        let mut count = 0usize;
        let mut flush = |sum: $t, count: usize, op: &mut usize| -> Result<()> {
            let mean = (sum / (count as $t)).to_le_bytes();
            let out = $dst.get_mut(*op..*op + count * W).ok_or(Error::Failure)?;
            for o in out.chunks_exact_mut(W) {
                o.copy_from_slice(&mean);
            }
            *op += count * W;
            Ok(())
        };
        $c.for_each_row(|row| {
            if row.cell != cur_cell {
                if cur_cell != usize::MAX {
                    flush(sum, count, &mut op)?;
                }
                cur_cell = row.cell;
                sum = 0.0;
                count = 0;
            }
            for i in row.start..row.start + row.len {
                sum += item(i)?;
            }
            count += row.len;
            Ok(())
        })?;
        if cur_cell != usize::MAX {
            flush(sum, count, &mut op)?;
        }
        if op != $src.len() {
            return Err(Error::Failure);
        }
        Ok(())
    }};
}

/// Forward NDMEAN of one block; `typesize` (the chunk's) must be 4 or 8.
pub fn encode(
    blockshape: &[i32],
    meta: u8,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
) -> Result<()> {
    if blockshape.is_empty() || blockshape.len() > super::ndcell::MAX_DIM {
        return Err(Error::Failure);
    }
    if typesize != 4 && typesize != 8 {
        return Err(Error::Failure);
    }
    let c = walk(blockshape, meta, typesize, src.len())?;
    if typesize == 4 {
        means!(f32, c, src, dst)
    } else {
        means!(f64, c, src, dst)
    }
}

/// Backward NDMEAN of one block; `typesize` is the super-chunk's, read as a signed byte like
/// c-blosc2 does (so it must be 1..=127).
pub fn decode(
    blockshape: &[i32],
    meta: u8,
    schunk_typesize: i32,
    src: &[u8],
    dst: &mut [u8],
) -> Result<()> {
    let ts = schunk_typesize as i8;
    if ts <= 0 {
        return Err(Error::Failure);
    }
    let c = walk(blockshape, meta, ts as usize, src.len())?;
    c.scatter(ts as usize, src, dst)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn means_of_cells_1d_and_2d() {
        let src = f32s(&[1.0, 2.0, 3.0, 4.0, 10.0]);
        let mut out = vec![0u8; src.len()];
        encode(&[5], 2, 4, &src, &mut out).unwrap();
        assert_eq!(out, f32s(&[1.5, 1.5, 3.5, 3.5, 10.0]));
        let mut back = vec![0u8; src.len()];
        decode(&[5], 2, 4, &out, &mut back).unwrap();
        assert_eq!(back, out);

        // 2x4 block, cells 2x2: cell 0 = 0,1,4,5; cell 1 = 2,3,6,7.
        let src = f32s(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
        let mut out = vec![0u8; src.len()];
        encode(&[2, 4], 2, 4, &src, &mut out).unwrap();
        assert_eq!(out, f32s(&[2.5, 2.5, 2.5, 2.5, 4.5, 4.5, 4.5, 4.5]));
        let mut back2 = vec![0u8; 32];
        decode(&[2, 4], 2, 4, &out, &mut back2).unwrap();
        assert_eq!(back2, f32s(&[2.5, 2.5, 4.5, 4.5, 2.5, 2.5, 4.5, 4.5]));
    }

    #[test]
    fn clipped_sides_use_the_first_side_like_c_blosc2() {
        // Block 2x10, meta 4: cells are 2x4, but origins step by 2 along dimension 1. The
        // encoder succeeds; the decoder's final check fails.
        let n = 20;
        let src: Vec<u8> = (0..n).flat_map(|i| (i as f64).to_le_bytes()).collect();
        let mut out = vec![0u8; src.len()];
        encode(&[2, 10], 4, 8, &src, &mut out).unwrap();
        // Cell 1 averages rows 0-1, columns 2-5 (not 4-7).
        let m = f64::from_le_bytes(out[8 * 8..8 * 9].try_into().unwrap());
        assert_eq!(m, (2.0 + 3.0 + 4.0 + 5.0 + 12.0 + 13.0 + 14.0 + 15.0) / 8.0);
        let mut back = vec![0u8; src.len()];
        assert_eq!(decode(&[2, 10], 4, 8, &out, &mut back), Err(Error::Failure));
    }

    #[test]
    fn rejects_bad_input() {
        let src = vec![0u8; 32];
        let mut out = vec![0u8; 32];
        assert_eq!(
            encode(&[8], 2, 2, &src[..16], &mut out),
            Err(Error::Failure)
        );
        assert_eq!(encode(&[8], 0, 4, &src, &mut out), Err(Error::Failure));
        assert_eq!(encode(&[8], 200, 4, &src, &mut out), Err(Error::Failure));
        assert_eq!(encode(&[7], 2, 4, &src, &mut out), Err(Error::Failure));
        assert_eq!(decode(&[8], 2, 0, &src, &mut out), Err(Error::Failure));
        assert_eq!(decode(&[8], 2, 256, &src, &mut out), Err(Error::Failure));
        assert_eq!(decode(&[16], 2, 2, &src, &mut out), Ok(()));
    }
}
