//! Slice reads and writes and shape changes of an array over a [`ChunkStore`] (the
//! super-chunk holding its chunks). The functions take the array's [`Geometry`] and return
//! the new one when the shape changes; storing the `b2nd` metalayer is the caller's part.
//!
//! Semantics follow c-blosc2 3.3's `b2nd.c`, with the slices checked first: a slice outside
//! the array, a buffer too small for the box it is said to hold, or a stored chunk whose size
//! disagrees with the geometry are errors, never out-of-bounds accesses.
//!
//! Submodules: `slice` (slice reads and writes) and `shape` (shape changes). This module holds
//! the [`ChunkStore`] trait and the unit tests.

#![forbid(unsafe_code)]

mod shape;
mod slice;

pub use shape::*;
pub use slice::*;

use super::geometry::{c_strides, unravel, Geometry};
use super::hyperslab::{
    blocks_touched, chunk_covered, chunks_touched, copy_nd, BlockPart, ChunkPart,
};
use crate::error::{Error, Result};

/// The chunks of an array: a super-chunk seen through compression. Reads take `&self`, so one
/// store serves a whole read; writes take `&mut self`.
pub trait ChunkStore {
    /// Bytes per item.
    fn typesize(&self) -> i32;
    /// Number of chunks.
    fn nchunks(&self) -> i64;
    /// Decompresses chunk `nchunk` into `dst`; returns its uncompressed size.
    fn read_chunk(&self, nchunk: i64, dst: &mut [u8]) -> Result<usize>;
    /// Decompresses only the blocks of chunk `nchunk` whose `skip` entry is false into their
    /// places in `dst` (the others are left undefined); returns the chunk's size. The default
    /// decompresses everything.
    fn read_chunk_blocks(&self, nchunk: i64, skip: &[bool], dst: &mut [u8]) -> Result<usize> {
        let _ = skip;
        self.read_chunk(nchunk, dst)
    }
    /// Decompression threads (1 by default). With more, a slice that touches many blocks of a
    /// chunk decodes them together ([`ChunkStore::read_chunk_blocks`], in parallel) rather
    /// than one at a time.
    fn nthreads(&self) -> i32 {
        1
    }
    /// Decodes the blocks `nblocks` of chunk `nchunk` one at a time into `scratch` (one
    /// block's bytes), calling `f(i, scratch)` after block `nblocks[i]`; a chunk whose
    /// uncompressed size is not `chunk_bytes` is `Data`. Returns `false`, having decoded
    /// nothing, when the store cannot decode single blocks (the default); the caller then
    /// decodes the chunk.
    fn read_blocks(
        &self,
        nchunk: i64,
        chunk_bytes: usize,
        nblocks: &[i64],
        scratch: &mut [u8],
        f: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<bool> {
        let _ = (nchunk, chunk_bytes, nblocks, scratch, f);
        Ok(false)
    }
    /// Compresses `src` and stores it as chunk `nchunk` (replacing it).
    fn write_chunk(&mut self, nchunk: i64, src: &[u8]) -> Result<()>;
    /// Inserts at `nchunk` a chunk of `nbytes` zero bytes (a special chunk).
    fn insert_zero_chunk(&mut self, nchunk: i64, nbytes: i32) -> Result<()>;
    /// Deletes chunk `nchunk`.
    fn delete_chunk(&mut self, nchunk: i64) -> Result<()>;
    /// Commits `shape` as the stored array's shape (its `b2nd` metalayer) before a shrink
    /// deletes chunks: a stored array may hold more chunks than its shape needs but never fewer,
    /// so every state a crash can leave between the deletions is an array both libraries read.
    /// The default (stores without a metalayer) does nothing.
    fn commit_shape(&mut self, shape: &[i64]) -> Result<()> {
        let _ = shape;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::b2nd::shared::Shared;
    use crate::chunk::{CParams, DParams};
    use crate::schunk::{NewStorage, SChunk};

    /// A new in-memory array of `g` filled with zero chunks.
    fn new_sc(g: &Geometry, ts: i32) -> Shared {
        let cp = CParams {
            typesize: ts,
            blocksize: g.block_nbytes(ts).unwrap() as i32,
            ..CParams::default()
        };
        let sh = Shared::new(SChunk::new(NewStorage::Memory, cp, DParams { nthreads: 1 }).unwrap());
        let mut st = sh.writing().unwrap();
        for i in 0..g.nchunks() {
            st.insert_zero_chunk(i, g.chunk_nbytes(ts).unwrap() as i32)
                .unwrap();
        }
        drop(st);
        sh
    }

    /// Row-major u32 items `0..n` (each the item's own linear index).
    fn iota(n: i64) -> Vec<u8> {
        (0..n as u32).flat_map(|x| x.to_ne_bytes()).collect()
    }

    fn items(b: &[u8]) -> Vec<u32> {
        b.chunks(4)
            .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn slices_round_trip_in_every_rank() {
        let cases: &[(&[i64], &[i32], &[i32])] = &[
            (&[10], &[4], &[3]),
            (&[10, 7], &[4, 7], &[3, 2]),
            (&[6, 6], &[3, 3], &[3, 3]),
            (&[5, 4, 3], &[2, 4, 2], &[1, 3, 2]),
            (
                &[3, 2, 3, 2, 3, 2, 3, 2],
                &[2, 2, 2, 1, 2, 2, 2, 2],
                &[1, 2, 1, 1, 2, 1, 2, 1],
            ),
        ];
        for (shape, cs, bs) in cases {
            let g = Geometry::new(shape, cs, bs).unwrap();
            let sc = new_sc(&g, 4);
            let mut st = sc.writing().unwrap();
            let zero = vec![0i64; g.ndim()];
            let all = iota(g.nitems());
            set_slice(&mut st, &g, &zero, shape, &all, shape).unwrap();
            let mut back = vec![0u8; all.len()];
            get_slice(&st, &g, &zero, shape, &mut back, shape).unwrap();
            assert_eq!(back, all, "{shape:?}");
            // An inner box: each item must be its linear index in the array.
            let start: Vec<i64> = shape.iter().map(|&s| s / 3).collect();
            let stop: Vec<i64> = shape.iter().map(|&s| s - s / 4).collect();
            let bshape = box_shape(&start, &stop);
            let nb: i64 = bshape.iter().product();
            let mut part = vec![0u8; nb as usize * 4];
            get_slice(&st, &g, &start, &stop, &mut part, &bshape).unwrap();
            let astr = c_strides(shape);
            let want: Vec<u32> = (0..nb)
                .map(|k| {
                    let c = super::super::hyperslab::coords_of(k, &bshape);
                    (0..c.len())
                        .map(|i| (c[i] + start[i]) * astr[i])
                        .sum::<i64>() as u32
                })
                .collect();
            assert_eq!(items(&part), want, "{shape:?}");
            // Overwrite the box with its complement and read everything back.
            let inv: Vec<u8> = want.iter().flat_map(|x| (!x).to_ne_bytes()).collect();
            set_slice(&mut st, &g, &start, &stop, &inv, &bshape).unwrap();
            get_slice(&st, &g, &zero, shape, &mut back, shape).unwrap();
            let got = items(&back);
            for (k, v) in got.iter().enumerate() {
                let c = super::super::hyperslab::coords_of(k as i64, shape);
                let inside = (0..c.len()).all(|i| start[i] <= c[i] && c[i] < stop[i]);
                assert_eq!(*v, if inside { !(k as u32) } else { k as u32 });
            }
        }
    }

    #[test]
    fn bad_slices_and_stored_chunk_mismatch_are_errors() {
        let g = Geometry::new(&[10, 10], &[5, 5], &[5, 5]).unwrap();
        let sc = new_sc(&g, 4);
        let mut st = sc.writing().unwrap();
        let mut buf = vec![0u8; 400];
        let bad = Err(Error::InvalidParam);
        assert_eq!(
            get_slice(&st, &g, &[0, 0], &[11, 10], &mut buf, &[11, 10]),
            bad
        );
        assert_eq!(
            get_slice(&st, &g, &[-1, 0], &[3, 10], &mut buf, &[10, 10]),
            bad
        );
        assert_eq!(
            get_slice(&st, &g, &[0, 0], &[10, 10], &mut buf[..399], &[10, 10]),
            bad
        );
        assert_eq!(
            get_slice(&st, &g, &[0, 0], &[10, 10], &mut buf, &[9, 10]),
            bad
        );
        assert_eq!(
            set_slice(&mut st, &g, &[0, 0], &[10, 10], &buf[..10], &[10, 10]),
            bad
        );
        // The same chunks read with a geometry whose chunks are bigger.
        let g2 = Geometry::new(&[10, 10], &[5, 10], &[5, 10]).unwrap();
        assert_eq!(
            get_slice(&st, &g2, &[0, 0], &[10, 10], &mut buf, &[10, 10]),
            Err(Error::Data)
        );
    }

    #[test]
    fn resize_insert_delete_keep_items_in_place() {
        let g = Geometry::new(&[4, 6], &[2, 3], &[1, 3]).unwrap();
        let sc = new_sc(&g, 4);
        let mut st = sc.writing().unwrap();
        set_slice(&mut st, &g, &[0, 0], &[4, 6], &iota(24), &[4, 6]).unwrap();
        // Insert two rows at row 2 (chunk-aligned), then delete them again.
        let rows: Vec<u8> = (100..112u32).flat_map(|x| x.to_ne_bytes()).collect();
        let g2 = insert(&mut st, &g, &rows, 0, 2).unwrap();
        assert_eq!(g2.shape(), &[6, 6]);
        assert_eq!(st.nchunks(), 6);
        let mut b = vec![0u8; 144];
        get_slice(&st, &g2, &[0, 0], &[6, 6], &mut b, &[6, 6]).unwrap();
        let v = items(&b);
        assert_eq!(&v[..12], &(0..12).collect::<Vec<u32>>()[..]);
        assert_eq!(&v[12..24], &(100..112).collect::<Vec<u32>>()[..]);
        assert_eq!(&v[24..], &(12..24).collect::<Vec<u32>>()[..]);
        let g3 = delete(&mut st, &g2, 0, 2, 2).unwrap();
        let mut b = vec![0u8; 96];
        get_slice(&st, &g3, &[0, 0], &[4, 6], &mut b, &[4, 6]).unwrap();
        assert_eq!(items(&b), (0..24).collect::<Vec<u32>>());
        // Growing at the end adds zeros; unaligned starts are refused and change nothing.
        let g4 = resize(&mut st, &g3, &[5, 7], None).unwrap();
        assert_eq!(st.nchunks(), 9);
        let mut b = vec![0u8; 140];
        get_slice(&st, &g4, &[0, 0], &[5, 7], &mut b, &[5, 7]).unwrap();
        assert_eq!(items(&b)[6], 0);
        assert_eq!(items(&b)[7], 6);
        assert_eq!(
            resize(&mut st, &g4, &[6, 7], Some(&[1, 0])).unwrap_err(),
            Error::InvalidParam
        );
        assert_eq!(st.nchunks(), 9);
        assert_eq!(
            insert(&mut st, &g4, &rows[..5], 0, 0).unwrap_err(),
            Error::InvalidParam
        );
        assert_eq!(
            delete(&mut st, &g4, 2, 0, 1).unwrap_err(),
            Error::InvalidParam
        );
        assert_eq!(
            delete(&mut st, &g4, 0, 4, 2).unwrap_err(),
            Error::InvalidParam
        );
    }

    #[test]
    fn sparse_coords_follow_the_chunk_and_block_layout() {
        let g = Geometry::new(&[10, 7], &[4, 7], &[3, 2]).unwrap();
        // Item (5, 3): chunk 1, in-chunk (1, 3) -> block (0, 1) = 1, in-block (1, 1) -> 3.
        assert_eq!(
            sparse_storage_coords(&g, &[5 * 7 + 3]).unwrap(),
            vec![48 + 6 + 3]
        );
        assert_eq!(sparse_storage_coords(&g, &[70]), Err(Error::InvalidParam));
    }
}
