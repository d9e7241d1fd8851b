//! Views: [`RawArray::squeeze`], [`RawArray::squeeze_axes`] and [`RawArray::expand_dims`]
//! return arrays that add or remove dimensions of extent 1 and share the parent's super-chunk,
//! as c-blosc2's `view_new` does: a later write to either is seen through the other. A view
//! keeps the geometry of the chunks it shares ([`Layout`]) and maps every access onto it, so it
//! reads the right items whatever its own chunk and block shapes would pad to.
//!
//! A view cannot change the shape of the data (`InvalidParam`), and after the parent's shape
//! changes the view is stale: its operations fail with `InvalidParam` (in c-blosc2 they read
//! freed or misplaced chunks).

use super::*;
use crate::b2nd::geometry::c_strides;

/// How a view's dimensions map onto the geometry its chunks follow.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    /// The geometry of the stored chunks (the root array's).
    pub(crate) geometry: Geometry,
    /// For each dimension of `geometry`, the view's dimension it is (`None`: squeezed away,
    /// extent 1). View dimensions no entry names were added (extent 1).
    pub(crate) axes: Vec<Option<usize>>,
    /// The view's number of dimensions.
    view_ndim: usize,
}

impl Layout {
    /// The view dimensions that were added (not in the chunks' geometry).
    fn added(&self) -> Vec<bool> {
        let mut a = vec![true; self.view_ndim];
        for v in self.axes.iter().flatten() {
            a[*v] = false;
        }
        a
    }

    /// The view's box `start..stop` in the chunks' geometry; `None` when it holds no item
    /// (empty, or past the extent of an added dimension).
    pub(crate) fn map_box(&self, start: &[i64], stop: &[i64]) -> Option<(Vec<i64>, Vec<i64>)> {
        for (v, added) in self.added().into_iter().enumerate() {
            if added && !(start[v] == 0 && stop[v] > 0) {
                return None;
            }
        }
        let s = self
            .axes
            .iter()
            .map(|a| a.map_or(0, |v| start[v]))
            .collect();
        let e = self.axes.iter().map(|a| a.map_or(1, |v| stop[v])).collect();
        Some((s, e))
    }

    /// A view buffer shape in the chunks' geometry (squeezed dimensions of extent 1).
    pub(crate) fn map_shape(&self, shape: &[i64]) -> Vec<i64> {
        self.axes
            .iter()
            .map(|a| a.map_or(1, |v| shape[v]))
            .collect()
    }

    /// Whether a row-major buffer of `shape` (the view's dimensions) has the same strides
    /// seen through [`Layout::map_shape`]: every added dimension after the first kept one
    /// has extent 1.
    pub(crate) fn strides_match(&self, shape: &[i64]) -> bool {
        let added = self.added();
        let first_kept = added.iter().position(|a| !a).unwrap_or(added.len());
        (first_kept..added.len()).all(|v| !added[v] || shape[v] == 1)
    }

    /// An orthogonal selection of the view in the chunks' geometry, and whether the view's
    /// buffer of `shape` can be used as it is (else [`Layout::scatter`] places the items). An
    /// index of an added dimension must be 0 (`InvalidIndex`).
    pub(crate) fn map_lists(
        &self,
        view: &Geometry,
        sel: &[&[i64]],
        shape: &[i64],
    ) -> Result<(Vec<Vec<i64>>, bool)> {
        if sel.len() != view.ndim() || shape.len() != view.ndim() {
            return Err(Error::InvalidParam);
        }
        let added = self.added();
        for (v, &a) in added.iter().enumerate() {
            if a && sel[v].iter().any(|&x| x != 0) {
                return Err(Error::InvalidIndex);
            }
        }
        let direct = self.strides_match(shape)
            && added
                .iter()
                .enumerate()
                .all(|(v, &a)| !a || sel[v].len() == 1);
        let lists = self
            .axes
            .iter()
            .map(|a| a.map_or_else(|| vec![0], |v| sel[v].to_vec()))
            .collect();
        Ok((lists, direct))
    }

    /// Calls `f(at, from)` for every item of the view's orthogonal selection `sel`: `at` is its
    /// byte offset in the view's buffer of `shape`, `from` in the compact buffer of the
    /// selection [`Layout::map_lists`] gives.
    pub(crate) fn scatter(
        &self,
        sel: &[&[i64]],
        shape: &[i64],
        ts: usize,
        f: &mut dyn FnMut(usize, usize) -> Result<()>,
    ) -> Result<()> {
        let n = self.view_ndim;
        if sel.iter().any(|l| l.is_empty()) {
            return Ok(());
        }
        let vstr = c_strides(shape);
        let lshape: Vec<i64> = self
            .axes
            .iter()
            .map(|a| a.map_or(1, |v| sel[v].len() as i64))
            .collect();
        let lstr = c_strides(&lshape);
        let mut j = vec![0usize; n];
        loop {
            let mut at = 0i64;
            for v in 0..n {
                at = at
                    .checked_add(
                        (j[v] as i64)
                            .checked_mul(vstr[v])
                            .ok_or(Error::InvalidParam)?,
                    )
                    .ok_or(Error::InvalidParam)?;
            }
            let from: i64 = self
                .axes
                .iter()
                .enumerate()
                .map(|(d, a)| a.map_or(0, |v| j[v] as i64 * lstr[d]))
                .sum();
            let at = usize::try_from(at).map_err(|_| Error::InvalidParam)?;
            f(at * ts, from as usize * ts)?;
            let mut v = n;
            loop {
                if v == 0 {
                    return Ok(());
                }
                v -= 1;
                j[v] += 1;
                if j[v] < sel[v].len() {
                    break;
                }
                j[v] = 0;
            }
        }
    }
}

impl RawArray {
    /// A view without the dimensions of extent 1 (see the module docs).
    ///
    /// ```
    /// use blosc2_frame::b2nd::{ArrayParams, RawArray};
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let cparams = CParams::default().typesize(1);
    /// let p = ArrayParams::new(&[1, 4], &[1, 2], &[1, 2]);
    /// let a = RawArray::from_bytes(Storage::memory(), &p, &cparams, &[1, 2, 3, 4])?;
    /// let v = a.squeeze()?;
    /// assert_eq!(v.shape(), vec![4]);
    /// a.set_slice_bytes(&[0..1, 1..2], &[9])?; // written through the parent...
    /// assert_eq!(v.to_bytes()?, vec![1, 9, 3, 4]); // ...seen through the view
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn squeeze(&self) -> Result<RawArray> {
        let g = &self.geometry;
        let axes: Vec<usize> = (0..g.ndim()).filter(|&i| g.shape()[i] == 1).collect();
        self.squeeze_axes(&axes)
    }

    /// A view without the dimensions `axes` (each of extent 1, else `InvalidIndex`; an axis
    /// past the dimensions is `InvalidParam`).
    pub fn squeeze_axes(&self, axes: &[usize]) -> Result<RawArray> {
        let g = &self.geometry;
        let mut gone = vec![false; g.ndim()];
        for &a in axes {
            *gone.get_mut(a).ok_or(Error::InvalidParam)? = true;
            if g.shape()[a] != 1 {
                return Err(Error::InvalidIndex);
            }
        }
        let (mut sh, mut cs, mut bs, mut map) = (vec![], vec![], vec![], vec![]);
        for (i, &gone) in gone.iter().enumerate() {
            if gone {
                map.push(None);
            } else {
                map.push(Some(sh.len()));
                sh.push(g.shape()[i]);
                cs.push(g.chunkshape()[i]);
                bs.push(g.blockshape()[i]);
            }
        }
        self.view(Geometry::new(&sh, &cs, &bs)?, &map)
    }

    /// A view with new dimensions of extent 1 at the positions `axes` of the result (which has
    /// `ndim + axes.len()` dimensions, at most 16): `InvalidParam` for a position past them or
    /// named twice.
    ///
    /// ```
    /// use blosc2_frame::b2nd::{ArrayParams, RawArray};
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let cparams = CParams::default().typesize(1);
    /// let p = ArrayParams::new(&[3], &[2], &[1]);
    /// let a = RawArray::from_bytes(Storage::memory(), &p, &cparams, &[1, 2, 3])?;
    /// let v = a.expand_dims(&[0, 2])?;
    /// assert_eq!(v.shape(), vec![1, 3, 1]);
    /// v.set_slice_bytes(&[0..1, 2..3, 0..1], &[7])?; // written through the view...
    /// assert_eq!(a.to_bytes()?, vec![1, 2, 7]); // ...seen through the parent
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn expand_dims(&self, axes: &[usize]) -> Result<RawArray> {
        let g = &self.geometry;
        let n = g.ndim() + axes.len();
        if n > MAX_DIM {
            return Err(Error::InvalidParam);
        }
        let mut added = vec![false; n];
        for &a in axes {
            let slot = added.get_mut(a).ok_or(Error::InvalidParam)?;
            if std::mem::replace(slot, true) {
                return Err(Error::InvalidParam);
            }
        }
        let (mut sh, mut cs, mut bs, mut map) = (vec![], vec![], vec![], vec![]);
        for (i, &a) in added.iter().enumerate() {
            if a {
                sh.push(1);
                cs.push(1);
                bs.push(1);
            } else {
                let old = map.len();
                map.push(Some(i));
                sh.push(g.shape()[old]);
                cs.push(g.chunkshape()[old]);
                bs.push(g.blockshape()[old]);
            }
        }
        self.view(Geometry::new(&sh, &cs, &bs)?, &map)
    }

    /// A view of geometry `g`; `map[i]` is the view dimension of this array's dimension `i`.
    fn view(&self, g: Geometry, map: &[Option<usize>]) -> Result<RawArray> {
        self.check_current()?;
        // As in c-blosc2, whose views get fresh metalayers: only the `b2nd` one may be there.
        if self
            .shared
            .read()
            .metalayers()
            .iter()
            .any(|(n, _)| n != "b2nd")
        {
            return Err(Error::InvalidParam);
        }
        let base = self.layout.clone().unwrap_or_else(|| Layout {
            geometry: self.geometry.clone(),
            axes: (0..self.ndim()).map(Some).collect(),
            view_ndim: self.ndim(),
        });
        let layout = Layout {
            axes: base.axes.iter().map(|a| a.and_then(|v| map[v])).collect(),
            geometry: base.geometry,
            view_ndim: g.ndim(),
        };
        Ok(RawArray {
            shared: self.shared.clone(),
            geometry: g,
            layout: Some(layout),
            generation: self.generation,
            dtype: self.dtype.clone(),
            dtype_format: self.dtype_format,
        })
    }

    /// Whether this array's chunks, as stored, are the chunks its own geometry describes (true
    /// for every array but views that removed a dimension whose padded chunk extent is not 1).
    pub(crate) fn chunks_are_own(&self) -> bool {
        self.layout.as_ref().is_none_or(|l| {
            l.axes
                .iter()
                .enumerate()
                .all(|(d, a)| a.is_some() || l.geometry.extchunkshape()[d] == 1)
        })
    }
}
