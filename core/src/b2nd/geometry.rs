//! Array geometry: shape, chunk and block shapes, their padded ("ext") versions, item counts
//! and the strides c-blosc2's `b2nd_array_t` exposes. Every product is overflow-checked, so a
//! crafted metalayer is an error here and never a wrapped size further down.

use crate::b2nd_meta::MAX_DIM;
use crate::error::{Error, Result};

/// The largest chunk c-blosc2 compresses (`BLOSC2_MAX_BUFFERSIZE`: `INT32_MAX` minus the
/// 32-byte chunk header).
const MAX_BUFFERSIZE: i64 = i32::MAX as i64 - 32;

/// The geometry of an array (see the module docs). Built only through [`Geometry::new`], so
/// every value is consistent and no product overflows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    shape: Vec<i64>,
    chunkshape: Vec<i32>,
    blockshape: Vec<i32>,
    extshape: Vec<i64>,
    extchunkshape: Vec<i64>,
    nitems: i64,
    chunknitems: i32,
    blocknitems: i32,
    extnitems: i64,
    extchunknitems: i64,
}

/// The six stride vectors of `b2nd_array_t` (`ndim` entries each; a dimension following a
/// zero-sized or unchunked one has stride 0, as in c-blosc2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Strides {
    /// Items per step of each dimension of the array.
    pub item_array: Vec<i64>,
    /// Items per step inside a padded chunk.
    pub item_extchunk: Vec<i64>,
    /// Items per step inside an unpadded chunk.
    pub item_chunk: Vec<i64>,
    /// Items per step inside a block.
    pub item_block: Vec<i64>,
    /// Blocks per step inside a padded chunk.
    pub block_chunk: Vec<i64>,
    /// c-blosc2's `chunk_array_strides` (its own formula, kept for layout compatibility).
    pub chunk_array: Vec<i64>,
}

/// `v` rounded up to a multiple of `m` (`m > 0`), or `None` on overflow.
fn round_up(v: i64, m: i64) -> Option<i64> {
    let r = v % m;
    if r == 0 {
        Some(v)
    } else {
        v.checked_add(m - r)
    }
}

fn mul_nonneg(a: i64, b: i64) -> Result<i64> {
    if a < 0 || b < 0 {
        return Err(Error::InvalidParam);
    }
    a.checked_mul(b).ok_or(Error::InvalidParam)
}

fn mul_nonneg32(a: i32, b: i32) -> Result<i32> {
    if a < 0 || b < 0 {
        return Err(Error::InvalidParam);
    }
    a.checked_mul(b).ok_or(Error::InvalidParam)
}

/// Row-major strides of `shape` (last dimension 1).
pub fn c_strides(shape: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1].saturating_mul(shape[i + 1]);
    }
    s
}

/// Row-major coordinates of linear index `n` in `shape` (all extents positive).
pub fn unravel(n: i64, shape: &[i64], out: &mut [i64]) {
    let mut n = n;
    for i in (0..shape.len()).rev() {
        if shape[i] > 0 {
            out[i] = n % shape[i];
            n /= shape[i];
        } else {
            out[i] = 0;
        }
    }
}

impl Geometry {
    /// Validates and derives a geometry, with c-blosc2's rules: negative extents are
    /// `InvalidParam`; a zero chunk extent (with a zero block extent) is allowed as the
    /// placeholder of empty arrays; a zero block extent with a non-zero chunk extent, an
    /// extent that cannot be rounded up, or any overflowing product is `InvalidParam`.
    pub fn new(shape: &[i64], chunkshape: &[i32], blockshape: &[i32]) -> Result<Geometry> {
        let ndim = shape.len();
        if ndim > MAX_DIM || chunkshape.len() != ndim || blockshape.len() != ndim {
            return Err(Error::InvalidParam);
        }
        let mut g = Geometry {
            shape: shape.to_vec(),
            chunkshape: chunkshape.to_vec(),
            blockshape: blockshape.to_vec(),
            extshape: vec![0; ndim],
            extchunkshape: vec![0; ndim],
            nitems: 1,
            chunknitems: 1,
            blocknitems: 1,
            extnitems: 1,
            extchunknitems: 1,
        };
        for i in 0..ndim {
            let (s, c, b) = (shape[i], chunkshape[i], blockshape[i]);
            if s < 0 || c < 0 || b < 0 || (b == 0 && c != 0) {
                return Err(Error::InvalidParam);
            }
            if c != 0 {
                g.extshape[i] = round_up(s, i64::from(c)).ok_or(Error::InvalidParam)?;
                g.extchunkshape[i] =
                    round_up(i64::from(c), i64::from(b)).ok_or(Error::InvalidParam)?;
            } else {
                g.extshape[i] = 0;
                g.extchunkshape[i] = 0;
            }
            g.nitems = mul_nonneg(g.nitems, s)?;
            g.extnitems = mul_nonneg(g.extnitems, g.extshape[i])?;
            g.extchunknitems = mul_nonneg(g.extchunknitems, g.extchunkshape[i])?;
            g.chunknitems = mul_nonneg32(g.chunknitems, c)?;
            g.blocknitems = mul_nonneg32(g.blocknitems, b)?;
        }
        Ok(g)
    }

    /// [`Geometry::new`] for a geometry read from a stored metalayer: additionally a non-empty
    /// dimension must have non-zero chunk and block extents (c-blosc2's `b2nd_from_schunk`).
    pub fn stored(shape: &[i64], chunkshape: &[i32], blockshape: &[i32]) -> Result<Geometry> {
        for i in 0..shape.len().min(chunkshape.len()).min(blockshape.len()) {
            if shape[i] != 0 && (chunkshape[i] == 0 || blockshape[i] == 0) {
                return Err(Error::InvalidParam);
            }
        }
        Geometry::new(shape, chunkshape, blockshape)
    }

    /// The same chunk and block shapes with another shape.
    pub fn with_shape(&self, shape: &[i64]) -> Result<Geometry> {
        Geometry::new(shape, &self.chunkshape, &self.blockshape)
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
    /// Array shape.
    pub fn shape(&self) -> &[i64] {
        &self.shape
    }
    /// Chunk shape.
    pub fn chunkshape(&self) -> &[i32] {
        &self.chunkshape
    }
    /// Block shape.
    pub fn blockshape(&self) -> &[i32] {
        &self.blockshape
    }
    /// Shape padded to whole chunks.
    pub fn extshape(&self) -> &[i64] {
        &self.extshape
    }
    /// Chunk shape padded to whole blocks.
    pub fn extchunkshape(&self) -> &[i64] {
        &self.extchunkshape
    }
    /// Items in the array.
    pub fn nitems(&self) -> i64 {
        self.nitems
    }
    /// Items in an unpadded chunk.
    pub fn chunknitems(&self) -> i32 {
        self.chunknitems
    }
    /// Items in a block.
    pub fn blocknitems(&self) -> i32 {
        self.blocknitems
    }
    /// Items in the padded array.
    pub fn extnitems(&self) -> i64 {
        self.extnitems
    }
    /// Items in a padded chunk (what every stored chunk holds).
    pub fn extchunknitems(&self) -> i64 {
        self.extchunknitems
    }

    /// Chunks along each dimension.
    pub fn chunks_in_array(&self) -> Vec<i64> {
        (0..self.ndim())
            .map(|i| match self.chunkshape[i] {
                0 => 0,
                c => self.extshape[i] / i64::from(c),
            })
            .collect()
    }

    /// Blocks along each dimension of a padded chunk.
    pub fn blocks_in_chunk(&self) -> Vec<i64> {
        (0..self.ndim())
            .map(|i| match self.blockshape[i] {
                0 => 0,
                b => self.extchunkshape[i] / i64::from(b),
            })
            .collect()
    }

    /// Chunks the super-chunk holds: 0 for an empty array, 1 for a 0-dimensional one.
    pub fn nchunks(&self) -> i64 {
        if self.nitems == 0 {
            0
        } else {
            self.chunks_in_array().iter().product()
        }
    }

    /// Blocks in a padded chunk.
    pub fn nblocks(&self) -> i64 {
        self.blocks_in_chunk().iter().product()
    }

    /// Bytes of a padded chunk for items of `typesize` bytes: `MaxBufsizeExceeded` past
    /// `BLOSC2_MAX_BUFFERSIZE` (c-blosc2's limit), `InvalidParam` for a non-positive typesize.
    pub fn chunk_nbytes(&self, typesize: i32) -> Result<usize> {
        if typesize <= 0 {
            return Err(Error::InvalidParam);
        }
        let n = self
            .extchunknitems
            .checked_mul(i64::from(typesize))
            .filter(|&n| n <= MAX_BUFFERSIZE)
            .ok_or(Error::MaxBufsizeExceeded)?;
        Ok(n as usize)
    }

    /// Bytes of a block (fits because the chunk does).
    pub fn block_nbytes(&self, typesize: i32) -> Result<usize> {
        self.chunk_nbytes(typesize)?;
        Ok(self.blocknitems as usize * typesize as usize)
    }

    /// Bytes of the whole (unpadded) array, `InvalidParam` past `i64::MAX`.
    pub fn array_nbytes(&self, typesize: i32) -> Result<i64> {
        mul_nonneg(self.nitems, i64::from(typesize))
    }

    /// The strides of `b2nd_array_t`, computed as c-blosc2 does.
    pub fn strides(&self) -> Strides {
        let n = self.ndim();
        let mut s = Strides {
            item_array: vec![0; n],
            item_extchunk: vec![0; n],
            item_chunk: vec![0; n],
            item_block: vec![0; n],
            block_chunk: vec![0; n],
            chunk_array: vec![0; n],
        };
        if n == 0 {
            return s;
        }
        s.item_array[n - 1] = 1;
        s.item_extchunk[n - 1] = 1;
        s.item_chunk[n - 1] = 1;
        s.item_block[n - 1] = 1;
        s.block_chunk[n - 1] = 1;
        s.chunk_array[n - 1] = 1;
        for i in (0..n - 1).rev() {
            let (c, b) = (
                i64::from(self.chunkshape[i + 1]),
                i64::from(self.blockshape[i + 1]),
            );
            if self.shape[i + 1] != 0 && c != 0 && b != 0 {
                // Every factor is bounded by an extent whose product was checked, except
                // chunk_array (extshape * chunkshape), which saturates instead of wrapping.
                s.item_array[i] = s.item_array[i + 1].saturating_mul(self.shape[i + 1]);
                s.item_extchunk[i] =
                    s.item_extchunk[i + 1].saturating_mul(self.extchunkshape[i + 1]);
                s.item_chunk[i] = s.item_chunk[i + 1].saturating_mul(c);
                s.item_block[i] = s.item_block[i + 1].saturating_mul(b);
                s.block_chunk[i] =
                    s.block_chunk[i + 1].saturating_mul(self.extchunkshape[i + 1] / b);
                s.chunk_array[i] =
                    s.chunk_array[i + 1].saturating_mul(self.extshape[i + 1].saturating_mul(c));
            }
        }
        s
    }

    /// Checks a slice `start..stop`: `InvalidParam` unless `0 <= start <= stop` in every
    /// dimension. As in c-blosc2, `stop` may pass the shape: the part of the slice outside the
    /// array reads as zeros and is not written ([`Geometry::clip`]).
    pub fn check_slice(&self, start: &[i64], stop: &[i64]) -> Result<()> {
        if start.len() != self.ndim() || stop.len() != self.ndim() {
            return Err(Error::InvalidParam);
        }
        for i in 0..self.ndim() {
            if start[i] < 0 || start[i] > stop[i] {
                return Err(Error::InvalidParam);
            }
        }
        Ok(())
    }

    /// `stop` clipped to the shape; `None` when the slice has no item inside the array.
    pub fn clip(&self, start: &[i64], stop: &[i64]) -> Option<Vec<i64>> {
        let c: Vec<i64> = stop
            .iter()
            .zip(&self.shape)
            .map(|(&a, &b)| a.min(b))
            .collect();
        (0..self.ndim()).all(|i| start[i] < c[i]).then_some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_shapes_and_counts() {
        let g = Geometry::new(&[10, 7], &[4, 7], &[3, 2]).unwrap();
        assert_eq!(g.extshape(), &[12, 7]);
        assert_eq!(g.extchunkshape(), &[6, 8]);
        assert_eq!((g.nitems(), g.chunknitems(), g.blocknitems()), (70, 28, 6));
        assert_eq!((g.extnitems(), g.extchunknitems()), (84, 48));
        assert_eq!(g.chunks_in_array(), vec![3, 1]);
        assert_eq!(g.blocks_in_chunk(), vec![2, 4]);
        assert_eq!((g.nchunks(), g.nblocks()), (3, 8));
        assert_eq!(g.chunk_nbytes(8).unwrap(), 384);
        let s = g.strides();
        assert_eq!(s.item_array, vec![7, 1]);
        assert_eq!(s.item_extchunk, vec![8, 1]);
        assert_eq!(s.block_chunk, vec![4, 1]);
        assert_eq!(s.chunk_array, vec![49, 1]);
        let z = Geometry::new(&[], &[], &[]).unwrap();
        assert_eq!((z.nitems(), z.nchunks(), z.extchunknitems()), (1, 1, 1));
        let e = Geometry::new(&[0, 5], &[0, 5], &[0, 5]).unwrap();
        assert_eq!((e.nitems(), e.nchunks()), (0, 0));
    }

    #[test]
    fn hostile_geometries_are_errors() {
        let bad = Err(Error::InvalidParam);
        assert_eq!(Geometry::new(&[-1], &[1], &[1]), bad);
        assert_eq!(Geometry::new(&[1], &[-1], &[1]), bad);
        assert_eq!(Geometry::new(&[4], &[2], &[0]), bad);
        assert_eq!(Geometry::new(&[i64::MAX], &[8], &[8]), bad);
        assert_eq!(Geometry::new(&[1 << 40, 1 << 40], &[1, 1], &[1, 1]), bad);
        assert_eq!(Geometry::new(&[1, 1], &[1 << 16, 1 << 16], &[1, 1]), bad);
        assert_eq!(Geometry::new(&[1; 17], &[1; 17], &[1; 17]), bad);
        assert_eq!(Geometry::stored(&[5], &[0], &[0]), bad);
        assert!(Geometry::new(&[5], &[0], &[0]).is_ok());
        let g = Geometry::new(&[1 << 20], &[1 << 30], &[1]).unwrap();
        assert_eq!(g.chunk_nbytes(4), Err(Error::MaxBufsizeExceeded));
        assert_eq!(g.chunk_nbytes(0), Err(Error::InvalidParam));
        let g = Geometry::new(&[10, 10], &[5, 5], &[5, 5]).unwrap();
        let bad = Err(Error::InvalidParam);
        assert!(g.check_slice(&[0, 0], &[10, 10]).is_ok());
        assert!(g.check_slice(&[0, 0], &[11, 10]).is_ok());
        assert_eq!(g.clip(&[0, 0], &[11, 10]), Some(vec![10, 10]));
        assert_eq!(g.clip(&[10, 0], &[11, 10]), None);
        assert_eq!(g.check_slice(&[-1, 0], &[1, 10]), bad);
        assert_eq!(g.check_slice(&[5, 0], &[4, 10]), bad);
        assert_eq!(g.check_slice(&[0], &[4]), bad);
    }
}
