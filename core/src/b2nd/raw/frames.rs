//! A [`RawArray`] as frames and copies: serialised frames in memory, files, copies with other
//! storage or chunking, slices into new arrays and concatenation. A view serialises as an array
//! of its own shape: its `b2nd` metalayer with the shared chunks (or, when its geometry pads
//! chunks differently, its items re-chunked).

use super::access;
use super::*;
use crate::b2nd::array::box_shape;
use crate::b2nd::hyperslab::chunks_touched;

impl RawArray {
    /// The array as a serialised cframe (c-blosc2's `b2nd_to_cframe`).
    ///
    /// ```
    /// use blosc2_frame::b2nd::{ArrayParams, RawArray};
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let cparams = CParams::default().typesize(1);
    /// let p = ArrayParams::new(&[3], &[2], &[2]);
    /// let a = RawArray::from_bytes(Storage::memory_frame(), &p, &cparams, &[5, 6, 7])?;
    /// let back = RawArray::from_cframe(&a.to_cframe()?)?;
    /// assert_eq!((back.shape(), back.to_bytes()?), (vec![3], vec![5, 6, 7]));
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn to_cframe(&self) -> Result<Vec<u8>> {
        self.check_current()?;
        if !self.is_view() {
            return self.shared.read().to_cframe();
        }
        self.own_schunk()?.to_cframe()
    }

    /// Saves a copy of the array at `path`: a cframe file when the array is a contiguous frame
    /// (in memory or a file), else an sframe directory (as c-blosc2's `b2nd_save`; views are
    /// not contiguous). `path` must not exist (`FileOpen`).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        self.check_current()?;
        let p = path.as_ref();
        let contiguous = !self.is_view()
            && matches!(
                self.shared.read().location(),
                schunk::Location::Memory | schunk::Location::File { .. }
            );
        let storage = if contiguous {
            NewStorage::File(p)
        } else {
            NewStorage::Sparse(p)
        };
        self.with_own_schunk(|sc| sc.copy_to(storage, None, None).map(|_| ()))
    }

    /// Appends the array's cframe to the file `path` (created if missing); returns the offset
    /// where it starts, for [`RawArray::open_offset`].
    pub fn save_append(&self, path: impl AsRef<Path>) -> Result<u64> {
        self.check_current()?;
        let p = path.as_ref();
        let off = self.with_own_schunk(|sc| sc.append_file(p))?;
        u64::try_from(off).map_err(|_| Error::FileWrite)
    }

    /// Runs `f` with a super-chunk holding exactly this array: its own for a root array, else
    /// [`RawArray::own_schunk`].
    fn with_own_schunk<T>(&self, f: impl FnOnce(&SChunk) -> Result<T>) -> Result<T> {
        if self.is_view() {
            f(&self.own_schunk()?)
        } else {
            f(&self.shared.read())
        }
    }

    /// A plain super-chunk holding this view as an array of its own: its `b2nd` metalayer,
    /// the shared chunks (or its items re-chunked, see [`RawArray::chunks_are_own`]) and the
    /// vlmetalayers.
    fn own_schunk(&self) -> Result<SChunk> {
        let sc = self.shared.read();
        let g = &self.geometry;
        if !self.chunks_are_own() {
            let params = ArrayParams::new(&self.shape(), &self.chunkshape(), &self.blockshape())
                .dtype_bytes(&self.dtype)
                .dtype_format(self.dtype_format);
            let cp = *sc.cparams();
            drop(sc);
            let copy = RawArray::new(NewStorage::Plain, &params, &cp, Fill::Zeros)?;
            copy_regions(self, &copy, &vec![0; g.ndim()])?;
            let sc = self.shared.read();
            let mut out = Arc::try_unwrap(copy.shared)
                .map_err(|_| Error::Failure)?
                .into_schunk();
            for (name, stored) in sc.vlmetalayers() {
                out.vlmeta_add_raw(name, stored)?;
            }
            return Ok(out);
        }
        let meta = b2nd_meta::serialize(
            g.shape(),
            g.chunkshape(),
            g.blockshape(),
            Some(&self.dtype),
            self.dtype_format,
        )?;
        let mut out = SChunk::new(NewStorage::Plain, *sc.cparams(), *sc.dparams())?;
        out.set_chunksize(sc.counters().chunksize)?;
        out.add_metalayer("b2nd", &meta)?;
        for i in 0..sc.nchunks() {
            out.append_chunk(&sc.chunk(i)?)?;
        }
        for (name, stored) in sc.vlmetalayers() {
            out.vlmeta_add_raw(name, stored)?;
        }
        Ok(out)
    }

    /// A copy of the array at `storage`, chunked per `params` (its shape is ignored: the copy
    /// has this array's shape) and compressed with `cparams` (typesize: this array's). With
    /// the same chunk and block shapes the chunks are copied as stored (recompressed only for
    /// incompatible parameters) together with every metalayer; else the items are re-chunked
    /// and the other metalayers copied. Vlmetalayers are copied either way.
    pub fn copy(
        &self,
        storage: impl Into<Storage>,
        params: &ArrayParams,
        cparams: &CParams,
    ) -> Result<RawArray> {
        self.check_current()?;
        let storage: Storage = storage.into();
        let mut params = params.clone();
        params.shape = self.shape();
        let g = params.geometry()?;
        let ts = self.typesize() as i32;
        let mut cp = CParams {
            typesize: ts,
            ..*cparams
        };
        cp.blocksize = g.blocknitems().checked_mul(ts).ok_or(Error::InvalidParam)?;
        if g.chunkshape() == self.geometry.chunkshape()
            && g.blockshape() == self.geometry.blockshape()
        {
            let dp = DParams {
                nthreads: cp.nthreads.max(1),
            };
            let sc = self.with_own_schunk(|sc| sc.copy_to(storage.as_new(), Some(cp), Some(dp)))?;
            return RawArray::from_schunk(sc);
        }
        params.dtype = Some(self.dtype.clone());
        params.dtype_format = self.dtype_format;
        {
            let sc = self.shared.read();
            params.metalayers = sc
                .metalayers()
                .iter()
                .filter(|(n, _)| n != "b2nd")
                .cloned()
                .collect();
        }
        let copy = RawArray::new(storage, &params, &cp, Fill::Zeros)?;
        let r = copy_regions(self, &copy, &vec![0; g.ndim()]).and_then(|_| {
            let src = self.shared.read();
            let mut dst = copy.shared.write();
            for (name, stored) in src.vlmetalayers() {
                dst.vlmeta_add_raw(name, stored)?;
            }
            Ok(())
        });
        if let Err(e) = r {
            remove_files(&copy.shared.read());
            return Err(e);
        }
        Ok(copy)
    }

    /// A new array at `storage` (chunked per `params`, whose shape is ignored) holding the
    /// items `start..stop` of this one (c-blosc2's `b2nd_get_slice`; `stop` may pass the
    /// shape, the part outside reads as zeros).
    pub fn slice_to_array(
        &self,
        start: &[usize],
        stop: &[usize],
        storage: impl Into<Storage>,
        params: &ArrayParams,
        cparams: &CParams,
    ) -> Result<RawArray> {
        self.check_current()?;
        self.geometry.check_slice(&dims64(start)?, &dims64(stop)?)?;
        let mut params = params.clone();
        params.shape = start.iter().zip(stop).map(|(a, b)| b - a).collect();
        let cp = CParams {
            typesize: self.typesize() as i32,
            ..*cparams
        };
        let out = RawArray::new(storage, &params, &cp, Fill::Zeros)?;
        if let Err(e) = copy_regions(self, &out, start) {
            remove_files(&out.shared.read());
            return Err(e);
        }
        Ok(out)
    }

    /// A new array (a copy of this one per `storage`, `params` and `cparams`, as in
    /// [`RawArray::copy`]) with the items of `other` appended along `axis`
    /// ([`RawArray::extend`]).
    pub fn concatenate(
        &self,
        other: &RawArray,
        axis: usize,
        storage: impl Into<Storage>,
        params: &ArrayParams,
        cparams: &CParams,
    ) -> Result<RawArray> {
        let mut out = self.copy(storage, params, cparams)?;
        if let Err(e) = out.extend(other, axis) {
            remove_files(&out.shared.read());
            return Err(e);
        }
        Ok(out)
    }
}

/// Copies into every chunk region of `dst` (in its own coordinates) the same region of `src`
/// shifted by `offset`, chunk by chunk of `dst`.
fn copy_regions(src: &RawArray, dst: &RawArray, offset: &[usize]) -> Result<()> {
    let gd = dst.geometry.clone();
    if gd.nitems() == 0 {
        return Ok(());
    }
    let ts = src.typesize();
    if ts != dst.typesize() {
        return Err(Error::InvalidParam);
    }
    if gd.ndim() == 0 {
        let one = src.to_bytes()?;
        return dst.write_slice_from(&[], &[], &one, &[]);
    }
    let zero = vec![0i64; gd.ndim()];
    let mut buf = Vec::new();
    for c in chunks_touched(&gd, &zero, gd.shape())? {
        let shape = box_shape(&c.start, &c.stop);
        buf.resize(access::box_bytes(&shape, ts)?, 0);
        let shift = |v: &[i64]| -> Vec<usize> {
            v.iter()
                .zip(offset)
                .map(|(&a, &o)| a as usize + o)
                .collect()
        };
        let shape = to_usize(&shape);
        src.read_slice_into(&shift(&c.start), &shift(&c.stop), &mut buf, &shape)?;
        dst.write_slice_from(&to_usize(&c.start), &to_usize(&c.stop), &buf, &shape)?;
    }
    Ok(())
}
