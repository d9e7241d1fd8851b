//! [`Array<T>`]: a b2nd array of items of the Rust type `T` ([`Element`]: the numbers, or
//! `[u8; N]` for any other item of `N` bytes), over a [`RawArray`] whose typesize is
//! `size_of::<T>()`. Every metadata method of [`RawArray`] is reachable through `Deref`.

#![forbid(unsafe_code)]

use super::raw::{dims64, ArrayParams, Fill, RawArray};
use crate::chunk::CParams;
use crate::error::{Error, Result};
use crate::storage::Storage;
use std::marker::PhantomData;
use std::ops::Range;
use std::path::Path;

/// An item type of [`Array`]: fixed size, any bit pattern valid, stored in native byte order
/// (what c-blosc2 and NumPy store on this machine).
pub trait Element: Copy + Default + Send + Sync + 'static {
    /// Bytes per item (the array's typesize).
    const SIZE: usize;
    /// The NumPy dtype string new arrays of this type get (`"<f8"` for `f64` on a
    /// little-endian machine, `"|V16"` for `[u8; 16]`).
    fn dtype() -> String;
    /// Appends the bytes of `items` to `out`.
    fn put(items: &[Self], out: &mut Vec<u8>);
    /// Appends the items whose bytes are `bytes` (a whole number of items) to `out`.
    fn take(bytes: &[u8], out: &mut Vec<Self>);
}

/// The byte-order character of NumPy dtype strings on this machine.
const ORDER: char = if cfg!(target_endian = "little") {
    '<'
} else {
    '>'
};

macro_rules! number {
    ($($t:ty => $kind:literal),*) => {$(
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn dtype() -> String {
                match Self::SIZE {
                    1 => format!("|{}1", $kind),
                    n => format!("{ORDER}{}{n}", $kind),
                }
            }
            fn put(items: &[Self], out: &mut Vec<u8>) {
                out.reserve(items.len() * Self::SIZE);
                for v in items {
                    out.extend_from_slice(&v.to_ne_bytes());
                }
            }
            fn take(bytes: &[u8], out: &mut Vec<Self>) {
                out.extend(bytes.chunks_exact(Self::SIZE).map(|c| {
                    let mut b = [0u8; std::mem::size_of::<$t>()];
                    b.copy_from_slice(c);
                    <$t>::from_ne_bytes(b)
                }));
            }
        }
    )*};
}

number!(u8 => "u", u16 => "u", u32 => "u", u64 => "u",
        i8 => "i", i16 => "i", i32 => "i", i64 => "i", f32 => "f", f64 => "f");

impl<const N: usize> Element for [u8; N]
where
    [u8; N]: Default,
{
    const SIZE: usize = N;
    fn dtype() -> String {
        format!("|V{N}")
    }
    fn put(items: &[Self], out: &mut Vec<u8>) {
        out.extend(items.iter().flatten());
    }
    fn take(bytes: &[u8], out: &mut Vec<Self>) {
        out.extend(bytes.chunks_exact(N).map(|c| {
            let mut b = [0u8; N];
            b.copy_from_slice(c);
            b
        }));
    }
}

fn bytes_of<T: Element>(items: &[T]) -> Vec<u8> {
    let mut v = Vec::new();
    T::put(items, &mut v);
    v
}

fn items_of<T: Element>(bytes: &[u8]) -> Vec<T> {
    let mut v = Vec::with_capacity(bytes.len() / T::SIZE.max(1));
    T::take(bytes, &mut v);
    v
}

/// An N-dimensional array of `T` items stored as a b2nd array (see the module docs).
///
/// ```
/// use blosc2_frame::Array;
/// use blosc2_frame::CParams;
/// use blosc2_frame::Storage;
///
/// let cparams = CParams::default();
/// let arr = Array::<f64>::create(Storage::memory_frame(), &[200, 200], &[50, 50], &[10, 10], &cparams)?;
/// let values: Vec<f64> = (0..200 * 200).map(|i| i as f64).collect();
/// arr.set_slice(&[0..200, 0..200], &values)?;
/// let part = arr.slice(&[12..14, 45..47])?;
/// assert_eq!(part, vec![2445.0, 2446.0, 2645.0, 2646.0]);
/// # Ok::<(), blosc2_frame::Error>(())
/// ```
#[derive(Debug)]
pub struct Array<T: Element> {
    raw: RawArray,
    _t: PhantomData<T>,
}

impl<T: Element> std::ops::Deref for Array<T> {
    type Target = RawArray;
    fn deref(&self) -> &RawArray {
        &self.raw
    }
}

/// `cparams` with `T`'s typesize.
fn typed<T: Element>(cparams: &CParams) -> Result<CParams> {
    Ok(CParams {
        typesize: i32::try_from(T::SIZE).map_err(|_| Error::InvalidParam)?,
        ..*cparams
    })
}

impl<T: Element> Array<T> {
    /// A new array of zeros at `storage` with this shape, chunk shape and block shape,
    /// compressed with `cparams` (whose typesize is replaced by `T`'s).
    pub fn create(
        storage: impl Into<Storage>,
        shape: &[usize],
        chunkshape: &[usize],
        blockshape: &[usize],
        cparams: &CParams,
    ) -> Result<Array<T>> {
        let p = ArrayParams::new(shape, chunkshape, blockshape).dtype(&T::dtype());
        Array::with_params(storage, &p, cparams, Fill::Zeros)
    }

    /// A new array whose items are all `value`.
    ///
    /// ```
    /// use blosc2_frame::Array;
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let a = Array::<i32>::full(Storage::memory(), &[3, 3], &[2, 2], &[2, 2], &CParams::default(), -1)?;
    /// assert_eq!(a.get(&[2, 1])?, -1);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn full(
        storage: impl Into<Storage>,
        shape: &[usize],
        chunkshape: &[usize],
        blockshape: &[usize],
        cparams: &CParams,
        value: T,
    ) -> Result<Array<T>> {
        let p = ArrayParams::new(shape, chunkshape, blockshape).dtype(&T::dtype());
        let v = bytes_of(&[value]);
        Array::with_params(storage, &p, cparams, Fill::Value(&v))
    }

    /// A new array holding `data` (row-major, exactly `shape`'s number of items).
    ///
    /// ```
    /// use blosc2_frame::Array;
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let data: Vec<u16> = (0..12).collect();
    /// let a = Array::from_slice(Storage::memory(), &[3, 4], &[2, 2], &[1, 2], &CParams::default(), &data)?;
    /// assert_eq!(a.to_vec()?, data);
    /// assert_eq!(a.dtype(), if cfg!(target_endian = "little") { "<u2" } else { ">u2" });
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn from_slice(
        storage: impl Into<Storage>,
        shape: &[usize],
        chunkshape: &[usize],
        blockshape: &[usize],
        cparams: &CParams,
        data: &[T],
    ) -> Result<Array<T>> {
        let p = ArrayParams::new(shape, chunkshape, blockshape).dtype(&T::dtype());
        let raw = RawArray::from_bytes(storage, &p, &typed::<T>(cparams)?, &bytes_of(data))?;
        Array::from_raw(raw)
    }

    /// A new array with the geometry, dtype and metalayers of `params`, starting as `fill`
    /// says.
    pub fn with_params(
        storage: impl Into<Storage>,
        params: &ArrayParams,
        cparams: &CParams,
        fill: Fill<'_>,
    ) -> Result<Array<T>> {
        Array::from_raw(RawArray::new(storage, params, &typed::<T>(cparams)?, fill)?)
    }

    /// Types a [`RawArray`] (`InvalidParam` unless its typesize is `T`'s).
    pub fn from_raw(raw: RawArray) -> Result<Array<T>> {
        if raw.typesize() != T::SIZE {
            return Err(Error::InvalidParam);
        }
        Ok(Array {
            raw,
            _t: PhantomData,
        })
    }

    /// The untyped array.
    pub fn into_raw(self) -> RawArray {
        self.raw
    }

    /// Opens the array stored at `path` (a cframe file or an sframe directory); its
    /// typesize must be `T`'s (`InvalidParam`).
    ///
    /// ```
    /// use blosc2_frame::Array;
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let path = std::env::temp_dir().join(format!("b2nd-doc-typed-{}.b2nd", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let arr = Array::<f64>::create(Storage::file(&path), &[2000, 2000], &[500, 500], &[100, 100], &CParams::default())?;
    /// arr.set_slice(&[0..2000, 0..2000], &vec![1.5; 2000 * 2000])?;
    /// drop(arr);
    /// let part: Vec<f64> = Array::<f64>::open(&path)?.slice(&[123..423, 457..757])?;
    /// assert_eq!(part, vec![1.5; 300 * 300]);
    /// assert!(Array::<f32>::open(&path).is_err());
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Array<T>> {
        Array::from_raw(RawArray::open(path)?)
    }

    /// Opens the array whose cframe starts at byte `offset` of the file `path`.
    pub fn open_offset(path: impl AsRef<Path>, offset: u64) -> Result<Array<T>> {
        Array::from_raw(RawArray::open_offset(path, offset)?)
    }

    /// The array in the serialised frame `cframe` (copied).
    pub fn from_cframe(cframe: &[u8]) -> Result<Array<T>> {
        Array::from_raw(RawArray::from_cframe(cframe)?)
    }

    /// The items of the slice `ranges` (one range per dimension, inside the shape), in
    /// row-major order.
    pub fn slice(&self, ranges: &[Range<usize>]) -> Result<Vec<T>> {
        Ok(items_of(&self.raw.slice_bytes(ranges)?))
    }

    /// Writes `values` (row-major, the slice's number of items) into the slice `ranges`.
    /// Views made from this array see the new values, and so does the array a view was made
    /// from.
    pub fn set_slice(&self, ranges: &[Range<usize>], values: &[T]) -> Result<()> {
        self.raw.set_slice_bytes(ranges, &bytes_of(values))
    }

    /// The item at `index` (one coordinate per dimension).
    pub fn get(&self, index: &[usize]) -> Result<T> {
        let r: Vec<Range<usize>> = index.iter().map(|&i| i..i.saturating_add(1)).collect();
        self.slice(&r)?.first().copied().ok_or(Error::InvalidParam)
    }

    /// Sets the item at `index`.
    pub fn set(&self, index: &[usize], value: T) -> Result<()> {
        let r: Vec<Range<usize>> = index.iter().map(|&i| i..i.saturating_add(1)).collect();
        self.set_slice(&r, &[value])
    }

    /// Every item, in row-major order.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        Ok(items_of(&self.raw.to_bytes()?))
    }

    /// The orthogonal selection `selection` (one index list per dimension; the result has
    /// their lengths as shape, row-major).
    ///
    /// ```
    /// use blosc2_frame::Array;
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let data: Vec<u32> = (0..20).collect();
    /// let a = Array::from_slice(Storage::memory(), &[4, 5], &[2, 3], &[2, 2], &CParams::default(), &data)?;
    /// assert_eq!(a.orthogonal(&[&[3, 0], &[4, 1]])?, vec![19, 16, 4, 1]);
    /// a.set_orthogonal(&[&[1], &[0, 2]], &[100, 102])?;
    /// assert_eq!(a.slice(&[1..2, 0..3])?, vec![100, 6, 102]);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn orthogonal(&self, selection: &[&[usize]]) -> Result<Vec<T>> {
        Ok(items_of(&self.raw.orthogonal_bytes(selection)?))
    }

    /// Writes `values` (row-major, shape: the lengths of the lists) into the orthogonal
    /// selection.
    pub fn set_orthogonal(&self, selection: &[&[usize]], values: &[T]) -> Result<()> {
        let shape: Vec<usize> = selection.iter().map(|l| l.len()).collect();
        let n = shape.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
        if n != Some(values.len()) {
            return Err(Error::InvalidParam);
        }
        self.raw
            .write_orthogonal_from(selection, &bytes_of(values), &shape)
    }

    /// The items at the row-major linear indices `coords`.
    ///
    /// ```
    /// use blosc2_frame::Array;
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let data: Vec<i64> = (0..30).map(|i| i * 10).collect();
    /// let a = Array::from_slice(Storage::memory_frame(), &[5, 6], &[2, 4], &[1, 2], &CParams::default(), &data)?;
    /// assert_eq!(a.sparse(&[29, 0, 7])?, vec![290, 0, 70]);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn sparse(&self, coords: &[usize]) -> Result<Vec<T>> {
        Ok(items_of(&self.raw.sparse_bytes(coords)?))
    }

    /// Resizes to `shape`, adding or removing items at the end of each dimension (see
    /// [`RawArray::resize`] for other positions). Added items are zeros, except where they
    /// fall in the padding of a chunk that already exists: there they read as the padding
    /// holds (the fill value after [`Array::full`], items an earlier shrink cut off), as in
    /// c-blosc2.
    pub fn resize(&mut self, shape: &[usize]) -> Result<()> {
        self.raw.resize(shape, None)
    }

    /// Inserts `values` (the array's shape with some number of items along `axis`) before
    /// position `at` of `axis`. Away from the end, `at` and the number inserted must be
    /// multiples of the chunk shape along `axis` (`InvalidParam`), as in c-blosc2.
    ///
    /// ```
    /// use blosc2_frame::Array;
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let mut a = Array::<u8>::from_slice(Storage::memory(), &[2, 2], &[2, 1], &[1, 1], &CParams::default(), &[1, 2, 3, 4])?;
    /// a.append(&[5, 6], 0)?;
    /// a.insert(&[7, 8, 9], 1, 0)?;
    /// assert_eq!(a.shape(), vec![3, 3]);
    /// assert_eq!(a.to_vec()?, vec![7, 1, 2, 8, 3, 4, 9, 5, 6]);
    /// a.delete(1, 0, 1)?;
    /// assert_eq!(a.to_vec()?, vec![1, 2, 3, 4, 5, 6]);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn insert(&mut self, values: &[T], axis: usize, at: usize) -> Result<()> {
        self.raw.insert_bytes(&bytes_of(values), axis, at)
    }

    /// Appends `values` at the end of `axis`.
    pub fn append(&mut self, values: &[T], axis: usize) -> Result<()> {
        self.raw.append_bytes(&bytes_of(values), axis)
    }

    /// Deletes `len` items of `axis` from position `at`.
    pub fn delete(&mut self, axis: usize, at: usize, len: usize) -> Result<()> {
        self.raw.delete(axis, at, len)
    }

    /// Appends the items of `other` along `axis`.
    pub fn extend(&mut self, other: &Array<T>, axis: usize) -> Result<()> {
        self.raw.extend(&other.raw, axis)
    }

    /// A view without the dimensions of extent 1, sharing this array's data.
    ///
    /// ```
    /// use blosc2_frame::Array;
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let a = Array::<f32>::create(Storage::memory_frame(), &[1, 3, 1], &[1, 2, 1], &[1, 1, 1], &CParams::default())?;
    /// let v = a.squeeze()?;
    /// a.set(&[0, 2, 0], 4.5)?;
    /// assert_eq!((v.shape(), v.get(&[2])?), (vec![3], 4.5));
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn squeeze(&self) -> Result<Array<T>> {
        Array::from_raw(self.raw.squeeze()?)
    }

    /// A view without the dimensions `axes` (each of extent 1), sharing this array's data.
    pub fn squeeze_axes(&self, axes: &[usize]) -> Result<Array<T>> {
        Array::from_raw(self.raw.squeeze_axes(axes)?)
    }

    /// A view with dimensions of extent 1 at the positions `axes` of the result, sharing this
    /// array's data.
    pub fn expand_dims(&self, axes: &[usize]) -> Result<Array<T>> {
        Array::from_raw(self.raw.expand_dims(axes)?)
    }

    /// A copy at `storage` with other chunk and block shapes and compression parameters.
    pub fn copy(
        &self,
        storage: impl Into<Storage>,
        chunkshape: &[usize],
        blockshape: &[usize],
        cparams: &CParams,
    ) -> Result<Array<T>> {
        let p = ArrayParams::new(&[], chunkshape, blockshape);
        Array::from_raw(self.raw.copy(storage, &p, cparams)?)
    }

    /// A new array at `storage` holding the slice `ranges` of this one.
    ///
    /// ```
    /// use blosc2_frame::Array;
    /// use blosc2_frame::CParams;
    /// use blosc2_frame::Storage;
    ///
    /// let data: Vec<u8> = (0..36).collect();
    /// let a = Array::from_slice(Storage::memory(), &[6, 6], &[3, 3], &[3, 3], &CParams::default(), &data)?;
    /// let b = a.slice_to_array(&[1..3, 4..6], Storage::memory_frame(), &[1, 2], &[1, 1], &CParams::default())?;
    /// assert_eq!((b.shape(), b.to_vec()?), (vec![2, 2], vec![10, 11, 16, 17]));
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn slice_to_array(
        &self,
        ranges: &[Range<usize>],
        storage: impl Into<Storage>,
        chunkshape: &[usize],
        blockshape: &[usize],
        cparams: &CParams,
    ) -> Result<Array<T>> {
        let (s0, s1) = super::raw::bounds(ranges);
        self.raw.check_inside(&s0, &s1)?;
        dims64(&s1)?;
        let p = ArrayParams::new(&[], chunkshape, blockshape).dtype_bytes(self.dtype_bytes());
        Array::from_raw(self.raw.slice_to_array(&s0, &s1, storage, &p, cparams)?)
    }
}
