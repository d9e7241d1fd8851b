//! NDCELL (filter id 32): regroups an n-dimensional block so that the items of each cell (a
//! hypercube of side `meta` items, smaller at the block's far edges) are contiguous, cells in
//! row-major order, each cell's rows in row-major order. The geometry comes from the `b2nd`
//! metalayer of the super-chunk: its block shape must describe the block exactly
//! (`prod(blockshape) * typesize == block length`), so short (leftover) blocks fail, as in
//! c-blosc2. Up to 8 dimensions.
//!
//! The encoder uses the chunk's typesize, the decoder the super-chunk's, as c-blosc2 does.
//! [`Cells`] is the walk over cells and rows that NDMEAN shares.

#![forbid(unsafe_code)]

use crate::error::{Error, Result};

/// Most dimensions NDCELL and NDMEAN accept.
pub const MAX_DIM: usize = 8;

/// One row of one cell: `len` items starting at item `start` of the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// Index of the cell (row-major over the cell grid).
    pub cell: usize,
    /// First item of the row in the block.
    pub start: usize,
    /// Items in the row.
    pub len: usize,
}

/// The cell walk of NDCELL and NDMEAN over a validated block geometry.
pub struct Cells {
    blockshape: Vec<usize>,
    cellshape: Vec<usize>,
    /// Cells along each dimension.
    grid: Vec<usize>,
    /// Item strides of the block.
    strides: Vec<usize>,
    /// Multiplier of a cell's grid position in its origin: the cell side for NDCELL; NDMEAN
    /// (like c-blosc2) uses the first dimension's cell side for every dimension.
    origin_side: usize,
    /// Items of the block.
    pub nitems: usize,
}

impl Cells {
    /// Validates `blockshape` against a block of `length` bytes of `typesize`-byte items, as
    /// c-blosc2's NDCELL/NDMEAN do: 1..=8 dimensions, every side > 0, and exactly `length`
    /// bytes. `cellshape` must have one side >= 1 per dimension.
    pub fn new(
        blockshape: &[i32],
        cellshape: &[usize],
        typesize: usize,
        length: usize,
        origin_side: usize,
    ) -> Result<Cells> {
        let ndim = blockshape.len();
        if ndim == 0 || ndim > MAX_DIM || cellshape.len() != ndim || typesize == 0 {
            return Err(Error::Failure);
        }
        let mut bytes = typesize as u64;
        for &b in blockshape {
            if b <= 0 {
                return Err(Error::Failure);
            }
            bytes *= b as u64;
            if bytes > length as u64 {
                return Err(Error::Failure);
            }
        }
        if bytes != length as u64 || cellshape.contains(&0) {
            return Err(Error::Failure);
        }
        let blockshape: Vec<usize> = blockshape.iter().map(|&b| b as usize).collect();
        let grid = blockshape
            .iter()
            .zip(cellshape)
            .map(|(&b, &c)| b.div_ceil(c))
            .collect();
        let mut strides = vec![1usize; ndim];
        for d in (0..ndim - 1).rev() {
            strides[d] = strides[d + 1] * blockshape[d + 1];
        }
        Ok(Cells {
            nitems: length / typesize,
            blockshape,
            cellshape: cellshape.to_vec(),
            grid,
            strides,
            origin_side,
        })
    }

    /// Number of cells.
    pub fn ncells(&self) -> usize {
        self.grid.iter().product()
    }

    /// Calls `f` for every row of every cell, in stream order. Stops at the first error.
    pub fn for_each_row(&self, mut f: impl FnMut(Row) -> Result<()>) -> Result<()> {
        let ndim = self.blockshape.len();
        let mut ii = vec![0usize; ndim];
        let mut pad = vec![0usize; ndim];
        let mut kk = vec![0usize; ndim];
        for cell in 0..self.ncells() {
            // Grid position of the cell (row-major).
            let mut rest = cell;
            for d in (0..ndim).rev() {
                ii[d] = rest % self.grid[d];
                rest /= self.grid[d];
            }
            let origin: usize = (0..ndim)
                .map(|d| ii[d] * self.origin_side * self.strides[d])
                .sum();
            for d in 0..ndim {
                let (b, c) = (self.blockshape[d], self.cellshape[d]);
                pad[d] = if b % c != 0 && ii[d] == self.grid[d] - 1 {
                    b % c
                } else {
                    c
                };
            }
            let nrows: usize = pad[..ndim - 1].iter().product();
            for r in 0..nrows {
                let mut rest = r;
                for d in (0..ndim - 1).rev() {
                    kk[d] = rest % pad[d];
                    rest /= pad[d];
                }
                let start = origin
                    + (0..ndim - 1)
                        .map(|d| kk[d] * self.strides[d])
                        .sum::<usize>();
                f(Row {
                    cell,
                    start,
                    len: pad[ndim - 1],
                })?;
            }
        }
        Ok(())
    }

    /// Scatters `src` (rows in stream order) back into `dst`, then applies c-blosc2's final
    /// check: the last row must end at the block's last item.
    pub fn scatter(&self, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
        let mut ip = 0usize;
        let mut end = 0usize;
        self.for_each_row(|row| {
            let n = row.len * typesize;
            let at = row.start * typesize;
            let s = src.get(ip..ip + n).ok_or(Error::Failure)?;
            dst.get_mut(at..at + n)
                .ok_or(Error::Failure)?
                .copy_from_slice(s);
            ip += n;
            end = row.start + row.len;
            Ok(())
        })?;
        if end != self.nitems {
            return Err(Error::Failure);
        }
        Ok(())
    }
}

/// The side of an NDCELL cell: the meta byte, never 0.
fn cell_side(meta: u8) -> Result<usize> {
    match meta {
        0 => Err(Error::Failure),
        m => Ok(usize::from(m)),
    }
}

/// Builds the walk and checks that a whole cell fits in the block (c-blosc2 refuses cells with
/// more items than the block has).
fn cells(blockshape: &[i32], meta: u8, typesize: usize, length: usize) -> Result<Cells> {
    let side = cell_side(meta)?;
    let ndim = blockshape.len();
    let c = Cells::new(blockshape, &vec![side; ndim], typesize, length, side)?;
    let mut cell_size: u64 = 1;
    for _ in 0..ndim {
        cell_size = cell_size.checked_mul(side as u64).ok_or(Error::Failure)?;
    }
    if cell_size > c.nitems as u64 {
        return Err(Error::Failure);
    }
    Ok(c)
}

/// Forward NDCELL of one block (`src` → `dst`, same length); `typesize` is the chunk's.
pub fn encode(
    blockshape: &[i32],
    meta: u8,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
) -> Result<()> {
    let c = cells(blockshape, meta, typesize, src.len())?;
    let mut op = 0usize;
    c.for_each_row(|row| {
        let n = row.len * typesize;
        let at = row.start * typesize;
        let s = src.get(at..at + n).ok_or(Error::Failure)?;
        dst.get_mut(op..op + n)
            .ok_or(Error::Failure)?
            .copy_from_slice(s);
        op += n;
        Ok(())
    })?;
    if op != src.len() {
        return Err(Error::Failure);
    }
    Ok(())
}

/// Backward NDCELL of one block; `typesize` is the super-chunk's.
pub fn decode(
    blockshape: &[i32],
    meta: u8,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
) -> Result<()> {
    let c = cells(blockshape, meta, typesize, src.len())?;
    c.scatter(typesize, src, dst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_cells_2d() {
        // 4x6 block of u8 items, cells of 2: cell (0,0) = items 0,1,6,7.
        let src: Vec<u8> = (0..24).collect();
        let mut out = vec![0u8; 24];
        encode(&[4, 6], 2, 1, &src, &mut out).unwrap();
        assert_eq!(&out[..8], &[0, 1, 6, 7, 2, 3, 8, 9]);
        let mut back = vec![0u8; 24];
        decode(&[4, 6], 2, 1, &out, &mut back).unwrap();
        assert_eq!(back, src);
    }

    #[test]
    fn partial_cells_and_3d_roundtrip() {
        for (shape, side, ts) in [
            (vec![5i32, 7], 3u8, 4usize),
            (vec![3, 4, 5], 2, 2),
            (vec![10], 4, 8),
            (vec![2, 3, 2, 3], 2, 1),
        ] {
            let n = shape.iter().product::<i32>() as usize * ts;
            let src: Vec<u8> = (0..n).map(|i| (i * 31 % 251) as u8).collect();
            let mut enc = vec![0u8; n];
            encode(&shape, side, ts, &src, &mut enc).unwrap();
            let mut dec = vec![0u8; n];
            decode(&shape, side, ts, &enc, &mut dec).unwrap();
            assert_eq!(dec, src, "{shape:?}");
        }
    }

    #[test]
    fn rejects_bad_geometry() {
        let src = vec![0u8; 24];
        let mut out = vec![0u8; 24];
        assert_eq!(encode(&[4, 6], 0, 1, &src, &mut out), Err(Error::Failure));
        assert_eq!(encode(&[4, 5], 2, 1, &src, &mut out), Err(Error::Failure));
        assert_eq!(encode(&[4, -6], 2, 1, &src, &mut out), Err(Error::Failure));
        assert_eq!(encode(&[], 2, 1, &src, &mut out), Err(Error::Failure));
        assert_eq!(encode(&[4, 6], 5, 1, &src, &mut out), Err(Error::Failure));
        assert_eq!(encode(&[1; 9], 1, 24, &src, &mut out), Err(Error::Failure));
        assert_eq!(
            decode(&[i32::MAX, i32::MAX], 2, 1, &src, &mut out),
            Err(Error::Failure)
        );
    }
}
