//! Metalayers (fixed-size, uncompressed, in the frame header) and vlmetalayers (compressed
//! chunks, in the trailer). Frames enforce their own limits (metalayers only while empty, at most
//! 16 vlmetalayers as the trailer writer allows); plain storage allows metalayers at any time and
//! up to 8192 vlmetalayers (`BLOSC2_MAX_VLMETALAYERS`). Unlike c-blosc2, the metalayer count is
//! checked (at most 16) and a failed add changes nothing.

use super::{Body, SChunk};
use crate::chunk::CParams;
use crate::error::{Error, Result};
use crate::frame::meta as fmeta;

/// `BLOSC2_MAX_METALAYERS`.
pub const MAX_METALAYERS: usize = 16;
/// `BLOSC2_MAX_VLMETALAYERS`.
pub const MAX_VLMETALAYERS: usize = 8192;

fn not_found(e: Error) -> Error {
    if e == Error::MetalayerNotFound {
        Error::NotFound
    } else {
        e
    }
}

impl SChunk {
    /// Metalayers (name, uncompressed content), in order.
    pub fn metalayers(&self) -> &[(String, Vec<u8>)] {
        match &self.body {
            Body::Plain(p) => &p.metalayers,
            Body::Frame(f) => f.metalayers(),
        }
    }

    /// The content of metalayer `name`, if there is one.
    ///
    /// ```
    /// # use blosc2_frame::{CParams, DParams};
    /// # use blosc2_frame::{SChunk, Storage};
    /// let mut sc = SChunk::create(Storage::memory_frame(), &CParams::default())?;
    /// sc.add_metalayer("units", b"m/s")?;
    /// assert_eq!(sc.metalayer("units"), Some(&b"m/s"[..]));
    /// assert_eq!(sc.metalayer("other"), None);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn metalayer(&self, name: &str) -> Option<&[u8]> {
        let i = fmeta::find(self.metalayers(), name)?;
        Some(&self.metalayers()[i].1)
    }

    /// Index of metalayer `name` (`NotFound` if absent).
    #[doc(hidden)]
    pub fn metalayer_index(&self, name: &str) -> Result<usize> {
        fmeta::find(self.metalayers(), name).ok_or(Error::NotFound)
    }

    /// Adds a metalayer; returns its index. Frames only accept it while they hold no data.
    pub fn add_metalayer(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        fmeta::check_name(name)?;
        // The plugin codecs and filters read the `b2nd` metalayer through the engines.
        self.reset_engines();
        match &mut self.body {
            Body::Plain(p) => {
                if fmeta::find(&p.metalayers, name).is_some()
                    || p.metalayers.len() >= MAX_METALAYERS
                {
                    return Err(Error::InvalidParam);
                }
                p.metalayers.push((name.to_string(), content.to_vec()));
                Ok(p.metalayers.len() - 1)
            }
            Body::Frame(f) => f.add_metalayer(name, content),
        }
    }

    /// Updates metalayer `name`: a content no longer than the stored one overwrites its first
    /// bytes (the stored length stays, as the frame header cannot change size); an empty frame
    /// takes any content. Longer contents are `InvalidParam`.
    pub fn update_metalayer(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        self.reset_engines();
        match &mut self.body {
            Body::Plain(p) => {
                let i = fmeta::find(&p.metalayers, name).ok_or(Error::NotFound)?;
                let stored = &mut p.metalayers[i].1;
                if content.len() > stored.len() {
                    return Err(Error::InvalidParam);
                }
                stored[..content.len()].copy_from_slice(content);
                Ok(i)
            }
            Body::Frame(f) => {
                // The stored length stays (c-blosc2 overwrites a prefix), also while empty.
                let i = fmeta::find(f.metalayers(), name).ok_or(Error::NotFound)?;
                let mut full = f.metalayers()[i].1.clone();
                if content.len() > full.len() {
                    return Err(Error::InvalidParam);
                }
                full[..content.len()].copy_from_slice(content);
                f.update_metalayer(name, &full).map_err(not_found)
            }
        }
    }

    /// vlmetalayers (name, compressed content as stored), in order.
    #[doc(hidden)]
    pub fn vlmetalayers(&self) -> &[(String, Vec<u8>)] {
        match &self.body {
            Body::Plain(p) => &p.vlmeta,
            Body::Frame(f) => f.vlmetalayers(),
        }
    }

    /// Index of vlmetalayer `name` (`NotFound` if absent).
    #[doc(hidden)]
    pub fn vlmeta_index(&self, name: &str) -> Result<usize> {
        fmeta::find(self.vlmetalayers(), name).ok_or(Error::NotFound)
    }

    /// Adds a vlmetalayer compressed with `cparams` (default: `BLOSC2_CPARAMS_DEFAULTS`).
    #[doc(hidden)]
    pub fn vlmeta_add(
        &mut self,
        name: &str,
        content: &[u8],
        cparams: Option<&CParams>,
    ) -> Result<usize> {
        let stored = fmeta::encode_vlmeta(content, cparams)?;
        self.vlmeta_add_raw(name, &stored)
    }

    /// Adds a vlmetalayer whose content is already a compressed chunk.
    #[doc(hidden)]
    pub fn vlmeta_add_raw(&mut self, name: &str, stored: &[u8]) -> Result<usize> {
        fmeta::check_name(name)?;
        match &mut self.body {
            Body::Plain(p) => {
                if fmeta::find(&p.vlmeta, name).is_some() {
                    return Err(Error::InvalidParam);
                }
                if p.vlmeta.len() >= MAX_VLMETALAYERS {
                    return Err(Error::Failure);
                }
                p.vlmeta.push((name.to_string(), stored.to_vec()));
                Ok(p.vlmeta.len() - 1)
            }
            Body::Frame(f) => f.add_vlmetalayer_raw(name, stored),
        }
    }

    /// Replaces the content of vlmetalayer `name`.
    #[doc(hidden)]
    pub fn vlmeta_update(
        &mut self,
        name: &str,
        content: &[u8],
        cparams: Option<&CParams>,
    ) -> Result<usize> {
        self.vlmeta_index(name)?;
        let stored = fmeta::encode_vlmeta(content, cparams)?;
        match &mut self.body {
            Body::Plain(p) => {
                let i = fmeta::find(&p.vlmeta, name).ok_or(Error::NotFound)?;
                p.vlmeta[i].1 = stored;
                Ok(i)
            }
            Body::Frame(f) => f.update_vlmetalayer_raw(name, &stored).map_err(not_found),
        }
    }

    /// The decompressed content of vlmetalayer `name`, `None` if there is none (a stored
    /// content that does not decode is an error).
    ///
    /// ```
    /// # use blosc2_frame::{CParams, DParams};
    /// # use blosc2_frame::{SChunk, Storage};
    /// let mut sc = SChunk::create(Storage::memory_frame(), &CParams::default())?;
    /// sc.vlmeta_add("attrs", b"{\"a\": 1}", None)?;
    /// assert_eq!(sc.vlmetalayer("attrs")?.as_deref(), Some(&b"{\"a\": 1}"[..]));
    /// assert_eq!(sc.vlmetalayer("none")?, None);
    /// # Ok::<(), blosc2_frame::Error>(())
    /// ```
    pub fn vlmetalayer(&self, name: &str) -> Result<Option<Vec<u8>>> {
        match self.vlmeta_get(name) {
            Err(Error::NotFound) => Ok(None),
            r => r.map(Some),
        }
    }

    /// The decompressed content of vlmetalayer `name` (`NotFound` if absent).
    #[doc(hidden)]
    pub fn vlmeta_get(&self, name: &str) -> Result<Vec<u8>> {
        let i = self.vlmeta_index(name)?;
        fmeta::decode_vlmeta(&self.vlmetalayers()[i].1)
    }

    /// Deletes vlmetalayer `name`; returns how many remain.
    #[doc(hidden)]
    pub fn vlmeta_delete(&mut self, name: &str) -> Result<usize> {
        match &mut self.body {
            Body::Plain(p) => {
                let i = fmeta::find(&p.vlmeta, name).ok_or(Error::NotFound)?;
                p.vlmeta.remove(i);
                Ok(p.vlmeta.len())
            }
            Body::Frame(f) => f.delete_vlmetalayer(name).map_err(not_found),
        }
    }
}
