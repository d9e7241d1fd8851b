//! The super-chunk as a Rust program uses it: create at a [`Storage`], open a path, append
//! buffers, iterate over the decompressed chunks, and read or set metalayers by name. Each
//! method wraps the storage-agnostic operations of the other modules of [`super`].

use super::SChunk;
use crate::chunk::{CParams, DParams};
use crate::error::{Error, Result};
use crate::storage::Storage;
use std::iter::FusedIterator;
use std::path::Path;

impl SChunk {
    /// A new, empty super-chunk at `storage`, compressing with `cparams` and decompressing
    /// with as many threads as `cparams` asks for.
    ///
    /// ```
    /// use blosc2_frame::{CParams, SChunk, Storage};
    ///
    /// let mut sc = SChunk::create(Storage::memory_frame(), &CParams::default().typesize(4))?;
    /// let bytes: Vec<u8> = (0..1000u32).flat_map(|v| v.to_le_bytes()).collect();
    /// assert_eq!(sc.append(&bytes)?, 1);
    /// assert_eq!(sc.decompress_chunk(0)?, bytes);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    ///
    /// A path that exists is refused, so nothing stored is overwritten:
    ///
    /// ```
    /// use blosc2_frame::{CParams, Error, SChunk, Storage};
    ///
    /// let dir = std::env::temp_dir();
    /// let err = SChunk::create(Storage::sframe(&dir), &CParams::default()).unwrap_err();
    /// assert_eq!(err, Error::FileOpen);
    /// ```
    pub fn create(storage: impl Into<Storage>, cparams: &CParams) -> Result<SChunk> {
        let dparams = DParams {
            nthreads: cparams.nthreads.max(1),
        };
        SChunk::new(storage.into().as_new(), *cparams, dparams)
    }

    /// Opens the frame at `path`: a cframe file (c-blosc2's `.b2frame`, b2nd's `.b2nd`) or an
    /// sframe directory, reading with one thread. Frames c-blosc2 wrote open the same way.
    ///
    /// ```
    /// use blosc2_frame::{CParams, SChunk, Storage};
    ///
    /// let path = std::env::temp_dir().join(format!("schunk-doc-open-{}.b2frame", std::process::id()));
    /// # let _ = std::fs::remove_file(&path);
    /// let mut sc = SChunk::create(Storage::file(&path), &CParams::default())?;
    /// sc.append(&[1u8; 4096])?;
    /// sc.append(&[2u8; 4096])?;
    /// drop(sc);
    /// let sc = SChunk::open(&path)?;
    /// assert_eq!(sc.nchunks(), 2);
    /// assert_eq!(sc.decompress_chunk(1)?, vec![2u8; 4096]);
    /// assert!(SChunk::open(path.with_extension("absent")).is_err());
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<SChunk> {
        SChunk::open_offset(path.as_ref(), 0, 1)
    }

    /// A super-chunk in memory holding a copy of the serialised frame `cframe` (what
    /// [`SChunk::to_cframe`] gives, or a `.b2frame` file's bytes).
    ///
    /// ```
    /// use blosc2_frame::{CParams, SChunk, Storage};
    ///
    /// let mut sc = SChunk::create(Storage::memory_frame(), &CParams::default())?;
    /// sc.append(&[9u8; 3000])?;
    /// let bytes = sc.to_cframe()?;
    /// let copy = SChunk::from_bytes(&bytes)?;
    /// assert_eq!(copy.decompress_chunk(0)?, vec![9u8; 3000]);
    /// assert!(SChunk::from_bytes(&bytes[..bytes.len() / 2]).is_err());
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn from_bytes(cframe: &[u8]) -> Result<SChunk> {
        SChunk::from_cframe(cframe, false, 1)
    }

    /// Compresses `bytes` into a new last chunk; returns the number of chunks.
    ///
    /// ```
    /// use blosc2_frame::{CParams, SChunk, Storage};
    ///
    /// let mut sc = SChunk::create(Storage::memory(), &CParams::default().typesize(1))?;
    /// assert_eq!(sc.append(b"first")?, 1);
    /// assert_eq!(sc.append(b"second")?, 2);
    /// assert_eq!(sc.decompress_chunk(1)?, b"second");
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn append(&mut self, bytes: &[u8]) -> Result<usize> {
        let n = self.append_buffer(bytes)?;
        usize::try_from(n).map_err(|_| Error::Failure)
    }

    /// The chunks, decompressed one by one as the iterator advances (each item is what
    /// [`SChunk::decompress_chunk`] gives).
    ///
    /// ```
    /// use blosc2_frame::{CParams, SChunk, Storage};
    ///
    /// let mut sc = SChunk::create(Storage::memory_frame(), &CParams::default())?;
    /// for i in 0..5u8 {
    ///     sc.append(&[i; 800])?;
    /// }
    /// let chunks = sc.chunks().collect::<Result<Vec<_>, _>>()?;
    /// assert_eq!(chunks.len(), 5);
    /// assert_eq!(chunks[3], vec![3u8; 800]);
    /// assert_eq!(sc.chunks().rev().next().unwrap()?, vec![4u8; 800]);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn chunks(&self) -> Chunks<'_> {
        Chunks {
            sc: self,
            next: 0,
            end: self.nchunks().max(0),
        }
    }

    /// Sets metalayer `name` to `content`: adds it, or replaces the content of the one
    /// there (which must keep its length, as the format stores metalayers in place in the
    /// header). Frames accept new metalayers only while they hold no chunks.
    ///
    /// ```
    /// use blosc2_frame::{CParams, SChunk, Storage};
    ///
    /// let mut sc = SChunk::create(Storage::memory_frame(), &CParams::default())?;
    /// sc.set_metalayer("units", b"m/s")?;
    /// sc.set_metalayer("units", b"km ")?;
    /// assert_eq!(sc.metalayer("units"), Some(&b"km "[..]));
    /// assert!(sc.set_metalayer("units", b"longer").is_err());
    /// assert_eq!(sc.metalayer("units"), Some(&b"km "[..]));
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn set_metalayer(&mut self, name: &str, content: &[u8]) -> Result<()> {
        if self.metalayer(name).is_some() {
            self.update_metalayer(name, content)?;
        } else {
            self.add_metalayer(name, content)?;
        }
        Ok(())
    }

    /// Sets variable-length metalayer `name` to `content` (compressed with the defaults),
    /// adding it or replacing the one there. vlmetalayers live in the frame's trailer and
    /// may change at any time.
    ///
    /// ```
    /// use blosc2_frame::{CParams, SChunk, Storage};
    ///
    /// let mut sc = SChunk::create(Storage::memory_frame(), &CParams::default())?;
    /// sc.append(&[0u8; 100])?;
    /// sc.set_vlmetalayer("attrs", b"{\"unit\": \"K\"}")?;
    /// sc.set_vlmetalayer("attrs", b"{\"unit\": \"degC\", \"scale\": 10}")?;
    /// assert_eq!(sc.vlmetalayer("attrs")?.unwrap(), b"{\"unit\": \"degC\", \"scale\": 10}");
    /// assert!(sc.remove_vlmetalayer("attrs")?);
    /// assert!(!sc.remove_vlmetalayer("attrs")?);
    /// assert_eq!(sc.vlmetalayer("attrs")?, None);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn set_vlmetalayer(&mut self, name: &str, content: &[u8]) -> Result<()> {
        match self.vlmeta_index(name) {
            Ok(_) => self.vlmeta_update(name, content, None)?,
            Err(Error::NotFound) => self.vlmeta_add(name, content, None)?,
            Err(e) => return Err(e),
        };
        Ok(())
    }

    /// Removes variable-length metalayer `name`; whether there was one.
    pub fn remove_vlmetalayer(&mut self, name: &str) -> Result<bool> {
        match self.vlmeta_delete(name) {
            Ok(_) => Ok(true),
            Err(Error::NotFound) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The names of the variable-length metalayers, in order.
    ///
    /// ```
    /// use blosc2_frame::{CParams, SChunk, Storage};
    ///
    /// let mut sc = SChunk::create(Storage::memory(), &CParams::default())?;
    /// sc.set_vlmetalayer("b", b"2")?;
    /// sc.set_vlmetalayer("a", b"1")?;
    /// assert_eq!(sc.vlmetalayer_names().collect::<Vec<_>>(), ["b", "a"]);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn vlmetalayer_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.vlmetalayers().iter().map(|(n, _)| n.as_str())
    }
}

/// The decompressed chunks of a super-chunk, in order ([`SChunk::chunks`]).
#[derive(Clone, Debug)]
pub struct Chunks<'a> {
    sc: &'a SChunk,
    next: i64,
    end: i64,
}

impl Iterator for Chunks<'_> {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        self.next += 1;
        Some(self.sc.decompress_chunk(self.next - 1))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.end - self.next).unwrap_or(0);
        (n, Some(n))
    }
}

impl DoubleEndedIterator for Chunks<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        self.end -= 1;
        Some(self.sc.decompress_chunk(self.end))
    }
}

impl ExactSizeIterator for Chunks<'_> {}
impl FusedIterator for Chunks<'_> {}
