//! Hyperslabs: N-dimensional strided copies between row-major buffers, and the chunks and
//! blocks of an array that a slice `start..stop` touches.

use super::geometry::{c_strides, unravel, Geometry};
use crate::b2nd_meta::MAX_DIM;
use crate::error::{Error, Result};

/// Copies the box `src_start..src_stop` of the row-major array `src` (of shape
/// `src_shape`, items of `itemsize` bytes) to `dst_start` of the row-major array `dst` (of
/// shape `dst_shape`): c-blosc2's `b2nd_copy_buffer2`, bounds-checked. As there, the leading
/// extent of each shape is not used (only the strides matter) and an empty box copies
/// nothing; a 0-dimensional copy moves one item. Negative extents, more than `MAX_DIM`
/// dimensions or a box reaching past either buffer are `InvalidParam`.
#[allow(clippy::too_many_arguments)]
pub fn copy_nd(
    itemsize: usize,
    src: &[u8],
    src_shape: &[i64],
    src_start: &[i64],
    src_stop: &[i64],
    dst: &mut [u8],
    dst_shape: &[i64],
    dst_start: &[i64],
) -> Result<()> {
    let n = src_shape.len();
    if n > MAX_DIM
        || [
            src_start.len(),
            src_stop.len(),
            dst_shape.len(),
            dst_start.len(),
        ]
        .iter()
        .any(|&l| l != n)
    {
        return Err(Error::InvalidParam);
    }
    if n == 0 {
        let s = src.get(..itemsize).ok_or(Error::InvalidParam)?;
        dst.get_mut(..itemsize)
            .ok_or(Error::InvalidParam)?
            .copy_from_slice(s);
        return Ok(());
    }
    // Fixed-size work arrays (no allocation: slice reads call this once per block).
    let mut copy = [0i64; MAX_DIM];
    for i in 0..n {
        copy[i] = src_stop[i] - src_start[i];
        if copy[i] < 0
            || src_start[i] < 0
            || dst_start[i] < 0
            || src_shape[i] < 0
            || dst_shape[i] < 0
        {
            return Err(Error::InvalidParam);
        }
    }
    let copy = &copy[..n];
    if copy.contains(&0) {
        return Ok(());
    }
    let (mut ss, mut ds) = ([1i64; MAX_DIM], [1i64; MAX_DIM]);
    checked_strides_into(src_shape, &mut ss[..n])?;
    checked_strides_into(dst_shape, &mut ds[..n])?;
    // Offsets (in items) of the first and of the last item of the box, in both buffers.
    let span = |strides: &[i64], start: &[i64]| -> Result<(i64, i64)> {
        let mut first = 0i64;
        let mut last = 0i64;
        for i in 0..n {
            first = strides[i]
                .checked_mul(start[i])
                .and_then(|v| v.checked_add(first))
                .ok_or(Error::InvalidParam)?;
            last = strides[i]
                .checked_mul(start[i] + copy[i] - 1)
                .and_then(|v| v.checked_add(last))
                .ok_or(Error::InvalidParam)?;
        }
        Ok((first, last))
    };
    let fits = |last: i64, len: usize| (last as u128 + 1) * itemsize as u128 <= len as u128;
    let (s0, slast) = span(&ss, src_start)?;
    let (d0, dlast) = span(&ds, dst_start)?;
    if !fits(slast, src.len()) || !fits(dlast, dst.len()) {
        return Err(Error::InvalidParam);
    }
    // Fold trailing dimensions copied whole on both sides into one contiguous row.
    let mut k = n - 1;
    let mut row = copy[k];
    while k > 0 && copy[k] == src_shape[k] && copy[k] == dst_shape[k] {
        k -= 1;
        row *= copy[k];
    }
    let row_bytes = row as usize * itemsize;
    // Byte strides of the outer dimensions 0..k.
    let (mut sb, mut db) = ([0usize; MAX_DIM], [0usize; MAX_DIM]);
    for j in 0..k {
        sb[j] = ss[j] as usize * itemsize;
        db[j] = ds[j] as usize * itemsize;
    }
    let mut idx = [0i64; MAX_DIM];
    let (mut so, mut doff) = (s0 as usize * itemsize, d0 as usize * itemsize);
    // The innermost outer dimension as a plain loop, the others as an odometer.
    let (inner, kin) = if k > 0 { (copy[k - 1], k - 1) } else { (1, 0) };
    let (sin, din) = if k > 0 {
        (sb[k - 1], db[k - 1])
    } else {
        (0, 0)
    };
    loop {
        let (mut a, mut b) = (so, doff);
        for _ in 0..inner {
            dst[b..b + row_bytes].copy_from_slice(&src[a..a + row_bytes]);
            a += sin;
            b += din;
        }
        // Odometer over the outer dimensions 0..kin.
        let mut j = kin;
        loop {
            if j == 0 {
                return Ok(());
            }
            j -= 1;
            idx[j] += 1;
            so += sb[j];
            doff += db[j];
            if idx[j] < copy[j] {
                break;
            }
            so -= sb[j] * copy[j] as usize;
            doff -= db[j] * copy[j] as usize;
            idx[j] = 0;
        }
    }
}

/// Row-major strides of `shape` into `s`, with overflow checks.
fn checked_strides_into(shape: &[i64], s: &mut [i64]) -> Result<()> {
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1]
            .checked_mul(shape[i + 1])
            .ok_or(Error::InvalidParam)?;
    }
    Ok(())
}

/// A chunk that a slice touches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkPart {
    /// Its index in the super-chunk.
    pub nchunk: i64,
    /// Its first item (array coordinates).
    pub start: Vec<i64>,
    /// One past its last item, clipped to the array shape.
    pub stop: Vec<i64>,
}

/// A block of a chunk that a slice touches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockPart {
    /// Its index inside the chunk.
    pub nblock: i64,
    /// Its first item (array coordinates).
    pub start: Vec<i64>,
    /// The part of the slice inside it: first item (array coordinates).
    pub sel_start: Vec<i64>,
    /// One past the last item of that part.
    pub sel_stop: Vec<i64>,
}

/// Per dimension, the first and last index of the `size`-item tiles that `lo..hi` touches
/// (relative to `base`); `None` if the range is empty.
fn tile_range(lo: i64, hi: i64, size: i64) -> Option<(i64, i64)> {
    (hi > lo && size > 0).then(|| (lo / size, (hi - 1) / size))
}

/// Calls `f` for every index vector of the box `lo..=hi` (row-major order).
fn for_each_index(lo: &[i64], hi: &[i64], mut f: impl FnMut(&[i64]) -> Result<()>) -> Result<()> {
    let n = lo.len();
    let mut idx = lo.to_vec();
    loop {
        f(&idx)?;
        let mut j = n;
        loop {
            if j == 0 {
                return Ok(());
            }
            j -= 1;
            if idx[j] < hi[j] {
                idx[j] += 1;
                break;
            }
            idx[j] = lo[j];
        }
    }
}

/// The chunks the slice `start..stop` (already checked against the shape) touches, in
/// super-chunk order. A 0-dimensional array has the single chunk 0.
pub fn chunks_touched(g: &Geometry, start: &[i64], stop: &[i64]) -> Result<Vec<ChunkPart>> {
    let n = g.ndim();
    if n == 0 {
        return Ok(vec![ChunkPart {
            nchunk: 0,
            start: vec![],
            stop: vec![],
        }]);
    }
    let (mut lo, mut hi) = (vec![0i64; n], vec![0i64; n]);
    for i in 0..n {
        match tile_range(start[i], stop[i], i64::from(g.chunkshape()[i])) {
            Some((a, b)) => (lo[i], hi[i]) = (a, b),
            None => return Ok(vec![]),
        }
    }
    let strides = c_strides(&g.chunks_in_array());
    let mut out = Vec::new();
    for_each_index(&lo, &hi, |idx| {
        let mut p = ChunkPart {
            nchunk: 0,
            start: vec![0; n],
            stop: vec![0; n],
        };
        for i in 0..n {
            let c = i64::from(g.chunkshape()[i]);
            p.nchunk += idx[i] * strides[i];
            p.start[i] = idx[i] * c;
            p.stop[i] = (p.start[i] + c).min(g.shape()[i]);
        }
        out.push(p);
        Ok(())
    })?;
    Ok(out)
}

/// Whether the chunk lies entirely inside the slice.
pub fn chunk_covered(c: &ChunkPart, start: &[i64], stop: &[i64]) -> bool {
    (0..c.start.len()).all(|i| start[i] <= c.start[i] && c.stop[i] <= stop[i])
}

/// The blocks of chunk `c` that the slice `start..stop` touches, in chunk order.
pub fn blocks_touched(g: &Geometry, c: &ChunkPart, start: &[i64], stop: &[i64]) -> Vec<BlockPart> {
    let n = g.ndim();
    let (mut lo, mut hi) = (vec![0i64; n], vec![0i64; n]);
    for i in 0..n {
        let a = start[i].max(c.start[i]) - c.start[i];
        let b = stop[i].min(c.stop[i]) - c.start[i];
        match tile_range(a, b, i64::from(g.blockshape()[i])) {
            Some((x, y)) => (lo[i], hi[i]) = (x, y),
            None => return vec![],
        }
    }
    let strides = c_strides(&g.blocks_in_chunk());
    let mut out = Vec::new();
    let _ = for_each_index(&lo, &hi, |idx| {
        let mut p = BlockPart {
            nblock: 0,
            start: vec![0; n],
            sel_start: vec![0; n],
            sel_stop: vec![0; n],
        };
        for i in 0..n {
            let b = i64::from(g.blockshape()[i]);
            p.nblock += idx[i] * strides[i];
            p.start[i] = c.start[i] + idx[i] * b;
            let bstop = (p.start[i] + b).min(c.stop[i]);
            p.sel_start[i] = p.start[i].max(start[i]);
            p.sel_stop[i] = bstop.min(stop[i]);
        }
        out.push(p);
        Ok(())
    });
    out
}

/// The coordinates of item `n` (row-major over `shape`).
pub fn coords_of(n: i64, shape: &[i64]) -> Vec<i64> {
    let mut v = vec![0; shape.len()];
    unravel(n, shape, &mut v);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The obvious item-by-item copy, as the model.
    #[allow(clippy::too_many_arguments)]
    fn naive(
        src: &[u32],
        ss: &[i64],
        s0: &[i64],
        s1: &[i64],
        dst: &mut [u32],
        ds: &[i64],
        d0: &[i64],
    ) {
        let n = ss.len();
        let copy: Vec<i64> = (0..n).map(|i| s1[i] - s0[i]).collect();
        let total: i64 = copy.iter().product();
        let (sst, dst_s) = (c_strides(ss), c_strides(ds));
        for k in 0..total {
            let c = coords_of(k, &copy);
            let so: i64 = (0..n).map(|i| (c[i] + s0[i]) * sst[i]).sum();
            let dofs: i64 = (0..n).map(|i| (c[i] + d0[i]) * dst_s[i]).sum();
            dst[dofs as usize] = src[so as usize];
        }
    }

    fn bytes(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    #[test]
    fn copy_nd_matches_the_naive_copy() {
        type Case<'a> = (&'a [i64], &'a [i64], &'a [i64], &'a [i64], &'a [i64]);
        let cases: &[Case] = &[
            (&[10], &[2], &[9], &[12], &[3]),
            (&[4, 5], &[1, 0], &[3, 5], &[6, 5], &[2, 0]),
            (&[4, 5], &[1, 1], &[3, 4], &[3, 3], &[0, 0]),
            (&[3, 4, 5], &[0, 0, 0], &[3, 4, 5], &[3, 4, 5], &[0, 0, 0]),
            (&[3, 4, 5], &[1, 2, 0], &[3, 4, 5], &[5, 2, 5], &[2, 0, 0]),
            (
                &[2, 3, 2, 3, 2, 3, 2, 3],
                &[0, 1, 0, 1, 0, 1, 1, 0],
                &[2, 3, 2, 2, 2, 3, 2, 2],
                &[2, 2, 2, 1, 2, 2, 1, 2],
                &[0, 0, 0, 0, 0, 0, 0, 0],
            ),
        ];
        for (ss, s0, s1, ds, d0) in cases {
            let src: Vec<u32> = (0..ss.iter().product::<i64>() as u32).collect();
            let dn = ds.iter().product::<i64>() as usize;
            let mut want = vec![0u32; dn];
            naive(&src, ss, s0, s1, &mut want, ds, d0);
            let mut got = vec![0u8; dn * 4];
            copy_nd(4, &bytes(&src), ss, s0, s1, &mut got, ds, d0).unwrap();
            assert_eq!(got, bytes(&want), "{ss:?} {s0:?} {s1:?} {ds:?} {d0:?}");
        }
    }

    #[test]
    fn copy_nd_rejects_boxes_outside_the_buffers() {
        let src = vec![0u8; 40];
        let mut dst = vec![0u8; 40];
        let r = copy_nd(4, &src, &[10], &[5], &[11], &mut dst, &[10], &[0]);
        assert_eq!(r, Err(Error::InvalidParam));
        let r = copy_nd(4, &src, &[10], &[0], &[5], &mut dst, &[10], &[6]);
        assert_eq!(r, Err(Error::InvalidParam));
        let r = copy_nd(4, &src, &[10], &[3], &[2], &mut dst, &[10], &[0]);
        assert_eq!(r, Err(Error::InvalidParam));
        let r = copy_nd(
            4,
            &src,
            &[2, 5],
            &[0, 0],
            &[2, 5],
            &mut dst,
            &[2, i64::MAX],
            &[0, 0],
        );
        assert_eq!(r, Err(Error::InvalidParam));
        assert!(copy_nd(4, &src, &[10], &[3], &[3], &mut dst, &[10], &[0]).is_ok());
    }

    #[test]
    fn chunks_and_blocks_of_a_slice() {
        let g = Geometry::new(&[10, 7], &[4, 7], &[3, 2]).unwrap();
        let cs = chunks_touched(&g, &[3, 1], &[9, 3]).unwrap();
        assert_eq!(
            cs.iter().map(|c| c.nchunk).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert_eq!(
            (cs[2].start.clone(), cs[2].stop.clone()),
            (vec![8, 0], vec![10, 7])
        );
        let bs = blocks_touched(&g, &cs[1], &[3, 1], &[9, 3]);
        // Chunk rows 4..8: blocks rows 0..3 and 3..6 (clipped to 4..8), columns 0..2 and 2..4.
        assert_eq!(
            bs.iter().map(|b| b.nblock).collect::<Vec<_>>(),
            vec![0, 1, 4, 5]
        );
        assert_eq!(
            (bs[3].sel_start.clone(), bs[3].sel_stop.clone()),
            (vec![7, 2], vec![8, 3])
        );
        assert!(chunks_touched(&g, &[3, 3], &[3, 5]).unwrap().is_empty());
    }
}
