//! Mutations of the metalayers (fixed-size, only while the frame holds no data) and of the
//! variable-length metalayers.

#![forbid(unsafe_code)]

use super::*;

impl Frame {
    /// Adds a fixed-size metalayer; only possible while the frame holds no data.
    pub fn add_metalayer(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        meta::check_name(name)?;
        if meta::find(&self.header.metalayers, name).is_some()
            || self.header.metalayers.len() >= MAX_METALAYERS
            || self.header.cbytes != 0
            || !self.locs.is_empty()
        {
            return Err(Error::InvalidParam);
        }
        self.transaction_full(true, Index::Encode(0), Edit::Any, |f, _| {
            f.header
                .metalayers
                .push((name.to_string(), content.to_vec()));
            Ok(f.header.metalayers.len() - 1)
        })
    }

    /// Updates a metalayer. On an empty frame any size is accepted; once the frame holds data
    /// the header cannot change size, so the content must not be longer than the stored one
    /// and only its first bytes are overwritten (c-blosc2's rule; it silently ignores longer
    /// contents, which is reported here as `InvalidParam`).
    pub fn update_metalayer(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        let idx = meta::find(&self.header.metalayers, name).ok_or(Error::MetalayerNotFound)?;
        let empty = self.header.cbytes == 0 && self.locs.is_empty();
        self.transaction_full(empty, Index::Keep, Edit::Any, |f, _| {
            let stored = &mut f.header.metalayers[idx].1;
            if empty {
                *stored = content.to_vec();
            } else if content.len() <= stored.len() {
                stored[..content.len()].copy_from_slice(content);
            } else {
                return Err(Error::InvalidParam);
            }
            Ok(idx)
        })
    }

    /// Adds a vlmetalayer whose content is already compressed (see [`meta::encode_vlmeta`]).
    pub fn add_vlmetalayer_raw(&mut self, name: &str, stored: &[u8]) -> Result<usize> {
        meta::check_name(name)?;
        if meta::find(&self.vlmeta, name).is_some() {
            return Err(Error::InvalidParam);
        }
        if self.vlmeta.len() >= MAX_VLMETALAYERS_WRITE {
            return Err(Error::Failure);
        }
        self.transaction_with(Index::Keep, |f, _| {
            f.vlmeta.push((name.to_string(), stored.to_vec()));
            Ok(f.vlmeta.len() - 1)
        })
    }

    /// Replaces the compressed content of an existing vlmetalayer.
    pub fn update_vlmetalayer_raw(&mut self, name: &str, stored: &[u8]) -> Result<usize> {
        let idx = meta::find(&self.vlmeta, name).ok_or(Error::MetalayerNotFound)?;
        self.transaction_with(Index::Keep, |f, _| {
            f.vlmeta[idx].1 = stored.to_vec();
            Ok(idx)
        })
    }

    /// Deletes a vlmetalayer; returns how many remain.
    pub fn delete_vlmetalayer(&mut self, name: &str) -> Result<usize> {
        let idx = meta::find(&self.vlmeta, name).ok_or(Error::MetalayerNotFound)?;
        self.transaction_with(Index::Keep, |f, _| {
            f.vlmeta.remove(idx);
            Ok(f.vlmeta.len())
        })
    }
}
