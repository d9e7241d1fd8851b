//! Shape changes of a [`RawArray`]: resize, insert, append and delete along one axis, as
//! c-blosc2's `b2nd_resize`, `b2nd_insert`, `b2nd_append` and `b2nd_delete` do them (items
//! added or removed away from the end must come in whole chunks). Each one rewrites the `b2nd`
//! metalayer and makes the views of the array stale. Views cannot change shape.

use super::access;
use super::*;
use crate::b2nd::array::{self as algo, ChunkStore};

impl RawArray {
    /// Resizes the array to `new_shape`. Items are added (as zeros) or removed at `start` in
    /// each dimension (default: at the end); away from the end, `start` and the change must be
    /// multiples of the chunk shape (`InvalidParam`).
    ///
    /// ```
    /// use blosc2_frame::b2nd::{ArrayParams, RawArray};
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let cparams = CParams::default().typesize(1);
    /// let p = ArrayParams::new(&[2, 2], &[2, 2], &[1, 2]);
    /// let mut a = RawArray::from_bytes(Storage::memory(), &p, &cparams, &[1, 2, 3, 4])?;
    /// a.resize(&[3, 3], None)?;
    /// assert_eq!(a.to_bytes()?, vec![1, 2, 0, 3, 4, 0, 0, 0, 0]);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn resize(&mut self, new_shape: &[usize], start: Option<&[usize]>) -> Result<()> {
        let ns = dims64(new_shape)?;
        let st = start.map(dims64).transpose()?;
        self.reshape(|s, g| algo::resize(s, g, &ns, st.as_deref()))
    }

    /// Inserts `data` (row-major items: the array's shape with `data.len() / slab` items along
    /// `axis`) before position `at` of `axis`.
    pub fn insert_bytes(&mut self, data: &[u8], axis: usize, at: usize) -> Result<()> {
        let ax = i8::try_from(axis).map_err(|_| Error::InvalidParam)?;
        let at = i64::try_from(at).map_err(|_| Error::InvalidParam)?;
        self.reshape(|s, g| algo::insert(s, g, data, ax, at))
    }

    /// Appends `data` at the end of `axis` ([`RawArray::insert_bytes`]).
    pub fn append_bytes(&mut self, data: &[u8], axis: usize) -> Result<()> {
        let at = *self.shape().get(axis).ok_or(Error::InvalidParam)?;
        self.insert_bytes(data, axis, at)
    }

    /// Deletes `len` items of `axis` from position `at`.
    ///
    /// ```
    /// use blosc2_frame::b2nd::{ArrayParams, RawArray};
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let cparams = CParams::default().typesize(1);
    /// let p = ArrayParams::new(&[6], &[2], &[2]);
    /// let mut a = RawArray::from_bytes(Storage::memory(), &p, &cparams, &[0, 1, 2, 3, 4, 5])?;
    /// a.delete(0, 2, 2)?;
    /// assert_eq!(a.to_bytes()?, vec![0, 1, 4, 5]);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn delete(&mut self, axis: usize, at: usize, len: usize) -> Result<()> {
        let ax = i8::try_from(axis).map_err(|_| Error::InvalidParam)?;
        let at = i64::try_from(at).map_err(|_| Error::InvalidParam)?;
        let len = i64::try_from(len).map_err(|_| Error::InvalidParam)?;
        self.reshape(|s, g| algo::delete(s, g, ax, at, len))
    }

    /// Appends the items of `other` (same typesize, same shape except along `axis`) along
    /// `axis` (c-blosc2's `b2nd_concatenate` into the first array). Chunks that line up (same
    /// chunk and block shapes, this array ending on a chunk boundary of `axis`) are stored as
    /// they are, else the items are copied chunk by chunk of `other`.
    pub fn extend(&mut self, other: &RawArray, axis: usize) -> Result<()> {
        other.check_current()?;
        let (g1, g2) = (self.geometry.clone(), other.geometry.clone());
        let n = g1.ndim();
        if axis >= n || g2.ndim() != n || self.typesize() != other.typesize() {
            return Err(Error::InvalidParam);
        }
        let mut new_shape = g1.shape().to_vec();
        for (i, ns) in new_shape.iter_mut().enumerate() {
            if i == axis {
                *ns = ns.checked_add(g2.shape()[i]).ok_or(Error::InvalidParam)?;
            } else if *ns != g2.shape()[i] {
                return Err(Error::InvalidParam);
            }
        }
        let ns = to_usize(&new_shape);
        self.resize(&ns, None)?;
        let off = g1.shape()[axis];
        let shift = |v: &[i64]| -> Vec<usize> {
            let mut w = to_usize(v);
            w[axis] += off as usize;
            w
        };
        let ng = self.geometry.clone();
        let zero = vec![0i64; n];
        let chunks = crate::b2nd::hyperslab::chunks_touched(&g2, &zero, g2.shape())?;
        let aligned = other.chunks_are_own()
            && !self.shares_data_with(other)
            && g2.chunkshape() == ng.chunkshape()
            && g2.blockshape() == ng.blockshape()
            && off % i64::from(ng.chunkshape()[axis]) == 0;
        if aligned {
            let src = other.shared.read();
            let mut w = self.shared.writing()?;
            for c in chunks {
                let (s, e) = (dims64(&shift(&c.start))?, dims64(&shift(&c.stop))?);
                let t = crate::b2nd::hyperslab::chunks_touched(&ng, &s, &e)?;
                let [t] = t.as_slice() else {
                    return Err(Error::Failure);
                };
                w.update_raw(t.nchunk, &src.chunk(c.nchunk)?)?;
            }
            return Ok(());
        }
        let ts = other.typesize();
        let mut buf = Vec::new();
        for c in chunks {
            let shape: Vec<usize> = to_usize(&algo::box_shape(&c.start, &c.stop));
            buf.resize(access::box_bytes(&dims64(&shape)?, ts)?, 0);
            other.read_slice_into(&to_usize(&c.start), &to_usize(&c.stop), &mut buf, &shape)?;
            self.write_slice_from(&shift(&c.start), &shift(&c.stop), &buf, &shape)?;
        }
        Ok(())
    }

    /// Runs a shape change computed over the chunks and publishes the new geometry.
    fn reshape(
        &mut self,
        f: impl FnOnce(&mut dyn ChunkStore, &Geometry) -> Result<Geometry>,
    ) -> Result<()> {
        self.check_root()?;
        let mut w = self.shared.writing()?;
        let r = f(&mut w, &self.geometry);
        // Whatever happened to the chunks, the views made before no longer match them.
        self.generation = self.shared.bump();
        self.geometry = r?;
        self.publish(&w)
    }
}
