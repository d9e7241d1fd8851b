//! Reading and writing items of a [`RawArray`]: slices (hyperslabs) into and from row-major
//! buffers, orthogonal selections and sparse items. A view maps its slices onto the chunks'
//! geometry ([`Layout`]) and reads or writes the shared chunks.

use super::*;
use crate::b2nd::array::{check_buffer, get_slice, set_slice, sparse_storage_coords, ChunkStore};
use crate::b2nd::hyperslab::copy_nd;
use crate::b2nd::selection::{get_orthogonal, set_orthogonal};
use std::ops::Range;

/// Starts and stops of `ranges`.
pub(crate) fn bounds(ranges: &[Range<usize>]) -> (Vec<usize>, Vec<usize>) {
    ranges.iter().map(|r| (r.start, r.end)).unzip()
}

/// The number of bytes of a box of `shape` items of `ts` bytes.
pub(crate) fn box_bytes(shape: &[i64], ts: usize) -> Result<usize> {
    shape
        .iter()
        .try_fold(ts, |acc, &e| {
            usize::try_from(e).ok().and_then(|e| acc.checked_mul(e))
        })
        .ok_or(Error::InvalidParam)
}

impl RawArray {
    /// Reads the slice `start..stop` into `buffer`, a row-major array of shape `buffershape`
    /// (the slice goes to its origin; every other byte of `buffer` is zeroed, as in c-blosc2).
    /// `stop` may pass the shape: what lies outside the array reads as zeros.
    pub fn read_slice_into(
        &self,
        start: &[usize],
        stop: &[usize],
        buffer: &mut [u8],
        buffershape: &[usize],
    ) -> Result<()> {
        self.check_current()?;
        let (s0, s1, bs) = (dims64(start)?, dims64(stop)?, dims64(buffershape)?);
        let st = self.shared.reading()?;
        let Some(l) = &self.layout else {
            return get_slice(&st, &self.geometry, &s0, &s1, buffer, &bs);
        };
        let ts = st.typesize();
        if let Err(e) = check_buffer(&self.geometry, ts, &s0, &s1, &bs, buffer.len()) {
            buffer.fill(0);
            return Err(e);
        }
        let Some((ls, le)) = l.map_box(&s0, &s1) else {
            buffer.fill(0);
            return Ok(());
        };
        if l.strides_match(&bs) {
            return get_slice(&st, &l.geometry, &ls, &le, buffer, &l.map_shape(&bs));
        }
        // The buffer's strides differ from the chunks' view of it: read compactly, then place.
        let cstop = self.geometry.clip(&s0, &s1).ok_or(Error::Failure)?;
        let cs: Vec<i64> = s0.iter().zip(&cstop).map(|(a, b)| b - a).collect();
        let mut tmp = vec![0u8; box_bytes(&cs, ts as usize)?];
        get_slice(&st, &l.geometry, &ls, &le, &mut tmp, &l.map_shape(&cs))?;
        buffer.fill(0);
        let zero = vec![0i64; cs.len()];
        copy_nd(ts as usize, &tmp, &cs, &zero, &cs, buffer, &bs, &zero)
    }

    /// Writes `buffer` (a row-major array of shape `buffershape`, read from its origin) into
    /// the slice `start..stop`; the part of the slice past the shape is ignored. Views write
    /// into the chunks they share.
    pub fn write_slice_from(
        &self,
        start: &[usize],
        stop: &[usize],
        buffer: &[u8],
        buffershape: &[usize],
    ) -> Result<()> {
        self.check_current()?;
        let (s0, s1, bs) = (dims64(start)?, dims64(stop)?, dims64(buffershape)?);
        let mut st = self.shared.writing()?;
        let Some(l) = &self.layout else {
            return set_slice(&mut st, &self.geometry, &s0, &s1, buffer, &bs);
        };
        let ts = st.typesize();
        check_buffer(&self.geometry, ts, &s0, &s1, &bs, buffer.len())?;
        let Some((ls, le)) = l.map_box(&s0, &s1) else {
            return Ok(());
        };
        if l.strides_match(&bs) {
            return set_slice(&mut st, &l.geometry, &ls, &le, buffer, &l.map_shape(&bs));
        }
        let cstop = self.geometry.clip(&s0, &s1).ok_or(Error::Failure)?;
        let cs: Vec<i64> = s0.iter().zip(&cstop).map(|(a, b)| b - a).collect();
        let mut tmp = vec![0u8; box_bytes(&cs, ts as usize)?];
        let zero = vec![0i64; cs.len()];
        copy_nd(ts as usize, buffer, &bs, &zero, &cs, &mut tmp, &cs, &zero)?;
        set_slice(&mut st, &l.geometry, &ls, &le, &tmp, &l.map_shape(&cs))
    }

    /// The slice `ranges` (one per dimension, inside the shape) as row-major bytes.
    ///
    /// ```
    /// use blosc2_frame::b2nd::{ArrayParams, RawArray};
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let cparams = CParams::default().typesize(1);
    /// let p = ArrayParams::new(&[4, 4], &[2, 2], &[1, 2]);
    /// let a = RawArray::from_bytes(Storage::memory(), &p, &cparams, &(0..16).collect::<Vec<u8>>())?;
    /// assert_eq!(a.slice_bytes(&[1..3, 2..4])?, vec![6, 7, 10, 11]);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn slice_bytes(&self, ranges: &[Range<usize>]) -> Result<Vec<u8>> {
        let (s0, s1) = bounds(ranges);
        self.check_inside(&s0, &s1)?;
        let shape: Vec<usize> = ranges.iter().map(|r| r.end - r.start).collect();
        let mut out = vec![0u8; box_bytes(&dims64(&shape)?, self.typesize())?];
        self.read_slice_into(&s0, &s1, &mut out, &shape)?;
        Ok(out)
    }

    /// Writes `data` (row-major bytes of the slice's shape) into the slice `ranges`.
    pub fn set_slice_bytes(&self, ranges: &[Range<usize>], data: &[u8]) -> Result<()> {
        let (s0, s1) = bounds(ranges);
        self.check_inside(&s0, &s1)?;
        let shape: Vec<usize> = ranges.iter().map(|r| r.end - r.start).collect();
        if data.len() != box_bytes(&dims64(&shape)?, self.typesize())? {
            return Err(Error::InvalidParam);
        }
        self.write_slice_from(&s0, &s1, data, &shape)
    }

    /// The whole array as row-major bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let shape = self.shape();
        let ranges: Vec<Range<usize>> = shape.iter().map(|&s| 0..s).collect();
        if self.ndim() == 0 {
            let mut one = vec![0u8; self.typesize()];
            self.read_slice_into(&[], &[], &mut one, &[])?;
            return Ok(one);
        }
        self.slice_bytes(&ranges)
    }

    /// `InvalidParam` unless `start <= stop <= shape` in every dimension.
    pub(crate) fn check_inside(&self, start: &[usize], stop: &[usize]) -> Result<()> {
        let shape = self.geometry.shape();
        if start.len() != shape.len() || stop.len() != shape.len() {
            return Err(Error::InvalidParam);
        }
        for i in 0..shape.len() {
            if start[i] > stop[i] || stop[i] as u64 > shape[i] as u64 {
                return Err(Error::InvalidParam);
            }
        }
        Ok(())
    }

    /// Reads the orthogonal selection `selection` (one list of indices per dimension) into
    /// `buffer`, a row-major array of shape `buffershape` whose item `(j0, j1, ...)` is the
    /// array's item `(selection[0][j0], selection[1][j1], ...)`. An index outside the shape
    /// is `InvalidIndex`.
    pub fn read_orthogonal_into(
        &self,
        selection: &[&[usize]],
        buffer: &mut [u8],
        buffershape: &[usize],
    ) -> Result<()> {
        self.check_current()?;
        let (sel, bs) = (lists64(selection)?, dims64(buffershape)?);
        let refs: Vec<&[i64]> = sel.iter().map(|v| &v[..]).collect();
        let st = self.shared.reading()?;
        let Some(l) = &self.layout else {
            return get_orthogonal(&st, &self.geometry, &refs, buffer, &bs);
        };
        let (lsel, direct) = l.map_lists(&self.geometry, &refs, &bs)?;
        let lrefs: Vec<&[i64]> = lsel.iter().map(|v| &v[..]).collect();
        let lshape: Vec<i64> = lsel.iter().map(|v| v.len() as i64).collect();
        if direct {
            return get_orthogonal(&st, &l.geometry, &lrefs, buffer, &l.map_shape(&bs));
        }
        let ts = st.typesize() as usize;
        let mut tmp = vec![0u8; box_bytes(&lshape, ts)?];
        get_orthogonal(&st, &l.geometry, &lrefs, &mut tmp, &lshape)?;
        l.scatter(&refs, &bs, ts, &mut |at, from| {
            buffer
                .get_mut(at..at + ts)
                .ok_or(Error::InvalidParam)?
                .copy_from_slice(&tmp[from..from + ts]);
            Ok(())
        })
    }

    /// Writes `buffer` (laid out as in [`RawArray::read_orthogonal_into`]) into the orthogonal
    /// selection.
    pub fn write_orthogonal_from(
        &self,
        selection: &[&[usize]],
        buffer: &[u8],
        buffershape: &[usize],
    ) -> Result<()> {
        self.check_current()?;
        let (sel, bs) = (lists64(selection)?, dims64(buffershape)?);
        let refs: Vec<&[i64]> = sel.iter().map(|v| &v[..]).collect();
        let mut st = self.shared.writing()?;
        let Some(l) = &self.layout else {
            return set_orthogonal(&mut st, &self.geometry, &refs, buffer, &bs);
        };
        let (lsel, direct) = l.map_lists(&self.geometry, &refs, &bs)?;
        let lrefs: Vec<&[i64]> = lsel.iter().map(|v| &v[..]).collect();
        let lshape: Vec<i64> = lsel.iter().map(|v| v.len() as i64).collect();
        if direct {
            return set_orthogonal(&mut st, &l.geometry, &lrefs, buffer, &l.map_shape(&bs));
        }
        let ts = st.typesize() as usize;
        let mut tmp = vec![0u8; box_bytes(&lshape, ts)?];
        get_orthogonal(&st, &l.geometry, &lrefs, &mut tmp, &lshape)?;
        l.scatter(&refs, &bs, ts, &mut |at, to| {
            tmp[to..to + ts].copy_from_slice(buffer.get(at..at + ts).ok_or(Error::InvalidParam)?);
            Ok(())
        })?;
        set_orthogonal(&mut st, &l.geometry, &lrefs, &tmp, &lshape)
    }

    /// The orthogonal selection as row-major bytes (shape: the lengths of the lists).
    pub fn orthogonal_bytes(&self, selection: &[&[usize]]) -> Result<Vec<u8>> {
        let shape: Vec<usize> = selection.iter().map(|l| l.len()).collect();
        let mut out = vec![0u8; box_bytes(&dims64(&shape)?, self.typesize())?];
        self.read_orthogonal_into(selection, &mut out, &shape)?;
        Ok(out)
    }

    /// Gathers the items at the row-major linear indices `coords` into `buffer` (at least
    /// `coords.len()` items), in order.
    pub fn read_sparse_into(&self, coords: &[usize], buffer: &mut [u8]) -> Result<()> {
        self.check_current()?;
        if coords.is_empty() {
            return Ok(());
        }
        let g = self.layout.as_ref().map_or(&self.geometry, |l| &l.geometry);
        let cs = sparse_storage_coords(g, &dims64(coords)?)?;
        self.shared.reading()?.sparse(&cs, buffer)
    }

    /// The items at the row-major linear indices `coords`, as bytes.
    pub fn sparse_bytes(&self, coords: &[usize]) -> Result<Vec<u8>> {
        let n = coords
            .len()
            .checked_mul(self.typesize())
            .ok_or(Error::InvalidParam)?;
        let mut out = vec![0u8; n];
        self.read_sparse_into(coords, &mut out)?;
        Ok(out)
    }
}

/// Index lists as the format's `i64` (`InvalidIndex` past `i64::MAX`).
fn lists64(sel: &[&[usize]]) -> Result<Vec<Vec<i64>>> {
    sel.iter()
        .map(|l| dims64(l).map_err(|_| Error::InvalidIndex))
        .collect()
}
