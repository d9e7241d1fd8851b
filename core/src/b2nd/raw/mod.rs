//! [`RawArray`]: a b2nd array whose items are byte strings of the super-chunk's typesize. It
//! is what [`Array<T>`](super::Array) wraps and what the C library forwards to (it knows only a
//! typesize and a dtype string). Its data is a super-chunk shared with the views made from it
//! (`Arc`, see [`super::shared`]): reads take `&self` and run from any number of threads at once;
//! slice writes take `&self` too (views write into the same chunks); shape changes take
//! `&mut self`.
//!
//! Submodules: `access` (slices, orthogonal selections, sparse items), `reshape` (resize,
//! insert, append, delete), `views` (squeeze and expand_dims, sharing data) and `frames`
//! (cframes, files, copies, concatenation).

#![forbid(unsafe_code)]

mod access;
mod frames;
mod reshape;
mod views;

use super::geometry::Geometry;
use super::shared::{Shared, Writing};
use crate::b2nd_meta::{self, MAX_DIM};
use crate::chunk::{special, CParams, DParams};
use crate::error::{Error, Result};
use crate::schunk::{self, NewStorage, SChunk};
use crate::storage::Storage;
use std::path::Path;
use std::sync::Arc;

pub(crate) use access::bounds;
pub(crate) use views::Layout;

/// Metalayers besides `b2nd` a new array may carry (`B2ND_MAX_METALAYERS`).
pub const MAX_METALAYERS: usize = 15;

/// How the items of a new array start out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill<'a> {
    /// Zeros (special zero chunks: nothing is compressed).
    Zeros,
    /// NaNs of the typesize (4 or 8 bytes, else `Data`).
    Nans,
    /// Undefined contents, stored as c-blosc2's uninitialised special chunks (they read as
    /// zeros here).
    Uninit,
    /// Every item is these bytes (exactly one item's worth).
    Value(&'a [u8]),
}

/// The shape, chunk shape and block shape of a new array, its dtype and extra metalayers.
///
/// ```
/// use blosc2_frame::b2nd::ArrayParams;
///
/// let p = ArrayParams::new(&[100, 100], &[50, 50], &[10, 10]).dtype("<f8");
/// assert_eq!(p.shape(), &[100, 100]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayParams {
    shape: Vec<usize>,
    chunkshape: Vec<usize>,
    blockshape: Vec<usize>,
    dtype: Option<Vec<u8>>,
    dtype_format: i8,
    metalayers: Vec<(String, Vec<u8>)>,
}

impl ArrayParams {
    /// An array of `shape` items, stored in chunks of `chunkshape` items split into blocks
    /// of `blockshape` items (all three of the same length, at most 16).
    pub fn new(shape: &[usize], chunkshape: &[usize], blockshape: &[usize]) -> ArrayParams {
        ArrayParams {
            shape: shape.to_vec(),
            chunkshape: chunkshape.to_vec(),
            blockshape: blockshape.to_vec(),
            dtype: None,
            dtype_format: 0,
            metalayers: Vec::new(),
        }
    }

    /// The dtype string written into the `b2nd` metalayer (a NumPy dtype such as `"<f8"` by
    /// default; see [`ArrayParams::dtype_format`]). Without one, `"|S<typesize>"` is written,
    /// as c-blosc2 does.
    pub fn dtype(self, dtype: &str) -> ArrayParams {
        self.dtype_bytes(dtype.as_bytes())
    }

    /// [`ArrayParams::dtype`] as raw bytes (the format does not require UTF-8).
    pub fn dtype_bytes(mut self, dtype: &[u8]) -> ArrayParams {
        self.dtype = Some(dtype.to_vec());
        self
    }

    /// The dtype format (0: NumPy, the default).
    pub fn dtype_format(mut self, format: i8) -> ArrayParams {
        self.dtype_format = format;
        self
    }

    /// Adds a metalayer besides `b2nd` (at most [`MAX_METALAYERS`]).
    pub fn metalayer(mut self, name: &str, content: &[u8]) -> ArrayParams {
        self.metalayers.push((name.to_string(), content.to_vec()));
        self
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The geometry these parameters describe.
    pub(crate) fn geometry(&self) -> Result<Geometry> {
        Geometry::new(
            &dims64(&self.shape)?,
            &dims32(&self.chunkshape)?,
            &dims32(&self.blockshape)?,
        )
    }
}

/// `usize` extents as the format's `i64` (`InvalidParam` past `i64::MAX`).
pub(crate) fn dims64(v: &[usize]) -> Result<Vec<i64>> {
    v.iter()
        .map(|&x| i64::try_from(x).map_err(|_| Error::InvalidParam))
        .collect()
}

/// `usize` extents as the format's `i32` (`InvalidParam` past `i32::MAX`).
pub(crate) fn dims32(v: &[usize]) -> Result<Vec<i32>> {
    v.iter()
        .map(|&x| i32::try_from(x).map_err(|_| Error::InvalidParam))
        .collect()
}

/// The format's non-negative `i64` extents as `usize`.
pub(crate) fn to_usize(v: &[i64]) -> Vec<usize> {
    v.iter().map(|&x| x.max(0) as usize).collect()
}

/// An N-dimensional array of fixed-size items over a super-chunk (see the module docs).
#[derive(Debug)]
pub struct RawArray {
    shared: Arc<Shared>,
    geometry: Geometry,
    /// Views: how this array's dimensions map onto the chunks' geometry.
    layout: Option<Layout>,
    /// [`Shared::generation`] this array's geometry belongs to.
    generation: u64,
    dtype: Vec<u8>,
    dtype_format: i8,
}

impl RawArray {
    /// A new array at `storage` with the geometry, dtype and metalayers of `params`, items of
    /// `cparams.typesize` bytes, compressed with `cparams` (its blocksize is set to a block's
    /// bytes, as c-blosc2 does) and starting as `fill` says.
    ///
    /// ```
    /// use blosc2_frame::{ArrayParams, Fill, RawArray};
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let cparams = CParams::default().typesize(2);
    /// let p = ArrayParams::new(&[6, 4], &[3, 4], &[3, 2]);
    /// let a = RawArray::new(Storage::memory_frame(), &p, &cparams, Fill::Value(&[1, 2]))?;
    /// assert_eq!(a.slice_bytes(&[5..6, 3..4])?, vec![1, 2]);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn new(
        storage: impl Into<Storage>,
        params: &ArrayParams,
        cparams: &CParams,
        fill: Fill<'_>,
    ) -> Result<RawArray> {
        let g = params.geometry()?;
        let ts = cparams.typesize;
        if ts <= 0 {
            return Err(Error::InvalidParam);
        }
        if params.metalayers.len() > MAX_METALAYERS {
            return Err(Error::InvalidParam);
        }
        let mut cp = *cparams;
        cp.blocksize = g.blocknitems().checked_mul(ts).ok_or(Error::InvalidParam)?;
        let chunk_bytes =
            i32::try_from(g.chunk_nbytes(ts)?).map_err(|_| Error::MaxBufsizeExceeded)?;
        let dtype = params
            .dtype
            .clone()
            .unwrap_or_else(|| format!("|S{ts}").into_bytes());
        let meta = b2nd_meta::serialize(
            g.shape(),
            g.chunkshape(),
            g.blockshape(),
            Some(&dtype),
            params.dtype_format,
        )?;
        let dp = DParams {
            nthreads: cp.nthreads.max(1),
        };
        let mut sc = SChunk::new(storage.into().as_new(), cp, dp)?;
        let r = (|| {
            sc.set_chunksize(chunk_bytes)?;
            sc.add_metalayer("b2nd", &meta)?;
            for (name, content) in &params.metalayers {
                sc.add_metalayer(name, content)?;
            }
            let kind = match fill {
                Fill::Nans if ts != 4 && ts != 8 => return Err(Error::Data),
                Fill::Nans => schunk::special::NAN,
                Fill::Uninit => schunk::special::UNINIT,
                Fill::Zeros | Fill::Value(_) => schunk::special::ZERO,
            };
            if g.nitems() != 0 {
                let items = g
                    .nchunks()
                    .checked_mul(g.extchunknitems())
                    .ok_or(Error::InvalidParam)?;
                sc.fill_special(items, kind, chunk_bytes)?;
            }
            if let Fill::Value(v) = fill {
                if v.len() != ts as usize {
                    return Err(Error::InvalidParam);
                }
                let mut c = vec![0u8; crate::chunk::header::EXTENDED_HEADER_LEN + v.len()];
                let n = special::repeatval(sc.cparams(), chunk_bytes, &mut c, v)?;
                for i in 0..sc.nchunks() {
                    sc.update_chunk(i, &c[..n])?;
                }
            }
            Ok(())
        })();
        if let Err(e) = r {
            remove_files(&sc);
            return Err(e);
        }
        Ok(RawArray::wrap(sc, g, dtype, params.dtype_format))
    }

    /// A new array at `storage` holding `data` (its items in row-major order, exactly the
    /// array's bytes).
    pub fn from_bytes(
        storage: impl Into<Storage>,
        params: &ArrayParams,
        cparams: &CParams,
        data: &[u8],
    ) -> Result<RawArray> {
        let g = params.geometry()?;
        let need = g.array_nbytes(cparams.typesize)?;
        if data.len() as u64 != need as u64 {
            return Err(Error::InvalidParam);
        }
        let a = RawArray::new(storage, params, cparams, Fill::Zeros)?;
        if g.nitems() != 0 {
            let zero = vec![0; g.ndim()];
            let shape = to_usize(g.shape());
            if let Err(e) = a.write_slice_from(&zero, &shape, data, &shape) {
                remove_files(&a.shared.read());
                return Err(e);
            }
        }
        Ok(a)
    }

    fn wrap(sc: SChunk, g: Geometry, dtype: Vec<u8>, dtype_format: i8) -> RawArray {
        RawArray {
            shared: Arc::new(Shared::new(sc)),
            geometry: g,
            layout: None,
            generation: 0,
            dtype,
            dtype_format,
        }
    }

    /// The array a super-chunk holds, described by its `b2nd` (or older `caterva`) metalayer
    /// (`MetalayerNotFound` without one).
    pub fn from_schunk(sc: SChunk) -> Result<RawArray> {
        let (g, m) = stored_geometry(&sc)?;
        Ok(RawArray::wrap(
            sc,
            g,
            m.dtype.unwrap_or_default(),
            m.dtype_format,
        ))
    }

    /// Opens the array stored at `path`: a cframe file or an sframe directory.
    ///
    /// ```
    /// use blosc2_frame::{ArrayParams, Fill, RawArray};
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let dir = std::env::temp_dir().join(format!("b2nd-doc-open-{}", std::process::id()));
    /// let _ = std::fs::remove_file(&dir);
    /// let cparams = CParams::default().typesize(1);
    /// let p = ArrayParams::new(&[10], &[5], &[5]);
    /// RawArray::new(Storage::file(&dir), &p, &cparams, Fill::Value(&[7]))?;
    /// assert_eq!(RawArray::open(&dir)?.to_bytes()?, vec![7; 10]);
    /// # std::fs::remove_file(&dir).unwrap();
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<RawArray> {
        RawArray::open_offset(path, 0)
    }

    /// Opens the array whose cframe starts at byte `offset` of the file `path`.
    pub fn open_offset(path: impl AsRef<Path>, offset: u64) -> Result<RawArray> {
        RawArray::from_schunk(SChunk::open_offset(path.as_ref(), offset, 1)?)
    }

    /// The array in the serialised frame `cframe` (copied: the array is an in-memory frame).
    pub fn from_cframe(cframe: &[u8]) -> Result<RawArray> {
        RawArray::from_schunk(SChunk::from_cframe(cframe, false, 1)?)
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.geometry.ndim()
    }

    /// Shape (items along each dimension).
    pub fn shape(&self) -> Vec<usize> {
        to_usize(self.geometry.shape())
    }

    /// Chunk shape.
    pub fn chunkshape(&self) -> Vec<usize> {
        self.geometry
            .chunkshape()
            .iter()
            .map(|&x| x as usize)
            .collect()
    }

    /// Block shape.
    pub fn blockshape(&self) -> Vec<usize> {
        self.geometry
            .blockshape()
            .iter()
            .map(|&x| x as usize)
            .collect()
    }

    /// Number of items.
    pub fn nitems(&self) -> usize {
        self.geometry.nitems() as usize
    }

    /// Bytes per item.
    pub fn typesize(&self) -> usize {
        self.shared.read().cparams().typesize as usize
    }

    /// The dtype string of the `b2nd` metalayer (empty when it has none or it is not UTF-8;
    /// see [`RawArray::dtype_bytes`]).
    pub fn dtype(&self) -> &str {
        std::str::from_utf8(&self.dtype).unwrap_or("")
    }

    /// The dtype string as stored.
    pub fn dtype_bytes(&self) -> &[u8] {
        &self.dtype
    }

    /// The dtype format (0: NumPy).
    pub fn dtype_format(&self) -> i8 {
        self.dtype_format
    }

    /// The geometry (shapes, padded shapes, strides).
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Whether this array is a view ([`RawArray::squeeze`], [`RawArray::expand_dims`]) sharing
    /// another array's data.
    pub fn is_view(&self) -> bool {
        self.layout.is_some()
    }

    /// Runs `f` with the super-chunk holding the array's chunks (read-locked: other readers go
    /// on, writers wait). A view's super-chunk is its parent's, with the parent's `b2nd`
    /// metalayer.
    pub fn with_schunk<T>(&self, f: impl FnOnce(&SChunk) -> T) -> T {
        f(&self.shared.read())
    }

    /// Whether both arrays share one super-chunk (an array and its views).
    pub fn shares_data_with(&self, other: &RawArray) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Re-reads the geometry from the `b2nd` metalayer when the frame on disk was changed by
    /// another handle or process (c-blosc2's refresh): returns whether it changed. The chunk
    /// and block shapes must stay the same (else `Data`).
    pub fn refresh(&mut self) -> Result<bool> {
        if self.is_view() {
            return Ok(false);
        }
        let changed = {
            let mut sc = self.shared.write();
            if sc.frame().is_none() || !sc.frame_is_stale() {
                return Ok(false);
            }
            sc.refresh()?
        };
        if !changed {
            return Ok(false);
        }
        let old = self.geometry.clone();
        self.reload()?;
        if self.geometry.chunkshape() != old.chunkshape()
            || self.geometry.blockshape() != old.blockshape()
        {
            self.geometry = old;
            return Err(Error::Data);
        }
        Ok(self.geometry != old)
    }

    /// Re-reads geometry and dtype from the metalayer.
    fn reload(&mut self) -> Result<()> {
        let (g, m) = stored_geometry(&self.shared.read())?;
        self.geometry = g;
        self.dtype = m.dtype.unwrap_or_default();
        self.dtype_format = m.dtype_format;
        Ok(())
    }

    /// `InvalidParam` for a view made before a shape change of the data it shares.
    pub(crate) fn check_current(&self) -> Result<()> {
        if self.generation != self.shared.generation() {
            return Err(Error::InvalidParam);
        }
        Ok(())
    }

    /// `InvalidParam` for views (which cannot change the shape of shared data).
    fn check_root(&self) -> Result<()> {
        self.check_current()?;
        if self.is_view() {
            return Err(Error::InvalidParam);
        }
        Ok(())
    }

    /// Writes this array's geometry into the `b2nd` metalayer.
    fn publish(&self, w: &Writing<'_>) -> Result<()> {
        let g = &self.geometry;
        let m = b2nd_meta::serialize(
            g.shape(),
            g.chunkshape(),
            g.blockshape(),
            Some(&self.dtype),
            self.dtype_format,
        )?;
        let mut sc = w.schunk_mut();
        sc.update_metalayer("b2nd", &m)
            .or_else(|_| sc.add_metalayer("b2nd", &m))
            .map(|_| ())
    }
}

/// The geometry and metalayer of the array a super-chunk holds.
fn stored_geometry(sc: &SChunk) -> Result<(Geometry, b2nd_meta::B2ndMeta)> {
    let raw = ["b2nd", "caterva"]
        .iter()
        .find_map(|n| sc.metalayers().iter().find(|(m, _)| m == n))
        .map(|(_, c)| c)
        .ok_or(Error::MetalayerNotFound)?;
    let (m, _) = b2nd_meta::deserialize(raw, true)?;
    if m.ndim() > MAX_DIM {
        return Err(Error::InvalidParam);
    }
    let g = Geometry::stored(&m.shape, &m.chunkshape, &m.blockshape)?;
    if sc.cparams().typesize <= 0 {
        return Err(Error::InvalidParam);
    }
    Ok((g, m))
}

/// Removes the files of an array whose creation failed.
fn remove_files(sc: &SChunk) {
    match sc.location() {
        schunk::Location::File { path, offset: 0 } => {
            let _ = std::fs::remove_file(path);
        }
        schunk::Location::Sparse(dir) => {
            let _ = std::fs::remove_dir_all(dir);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
