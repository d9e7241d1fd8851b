//! Dictionaries for Zstd and LZ4/LZ4HC chunks (`use_dict`, chunk flag `USEDICT`).
//!
//! A dictionary chunk stores `int32 dict_size | dict bytes` right after bstarts, and every stream
//! of the chunk is compressed against that dictionary alone (never against earlier blocks), so
//! blocks stay independently decodable. What the dictionary bytes are and how they are used:
//! * Zstd: trained with `ZDICT_trainFromBuffer` over samples of the filtered blocks; compression
//!   uses a digested `ZSTD_CDict` built at zstd level 1 — c-blosc2 always digests at level 1,
//!   whatever the chunk's clevel, and a CDict fixes the compression parameters — and
//!   decompression a `ZSTD_DDict`.
//! * LZ4/LZ4HC: the first `max_size` bytes of the samples, verbatim (no training); the bytes are
//!   loaded into the worker's LZ4 stream before each block and handed to
//!   `LZ4_decompress_safe_usingDict` on decode.
//!
//! Both types are immutable once built, and `Send + Sync`: the chunk engine shares one between
//! its worker threads.

#![forbid(unsafe_code)]

use super::{zstd, LZ4, LZ4HC, ZSTD};
use crate::error::{Error, Result};

/// Largest dictionary a chunk may hold (`BLOSC2_MAXDICTSIZE`).
pub const MAX_DICT_SIZE: usize = 32 * 1024;

/// Smallest dictionary worth building (`BLOSC2_MINUSEFULDICT`); below it c-blosc2 writes the
/// chunk without a dictionary.
pub const MIN_USEFUL_DICT: usize = 256;

enum CKind {
    Lz4(Vec<u8>),
    Zstd(zstd::CDict),
}

enum DKind {
    Lz4(Vec<u8>),
    Zstd(zstd::DDict),
}

/// A dictionary prepared for compression (digested zstd CDict, or LZ4 raw dictionary bytes).
pub struct CompressDict {
    kind: CKind,
    bytes_len: usize,
}

/// A dictionary prepared for decompression (zstd DDict, or LZ4 raw dictionary bytes).
pub struct DecompressDict {
    kind: DKind,
}

fn check_size(dict_bytes: &[u8]) -> Result<()> {
    if dict_bytes.is_empty() || dict_bytes.len() > MAX_DICT_SIZE {
        return Err(Error::CodecDict);
    }
    Ok(())
}

impl CompressDict {
    /// Prepares `dict_bytes` for compressing with `compcode` (ZSTD, LZ4 or LZ4HC; others fail
    /// with `CodecDict`, as c-blosc2 does). `clevel` is accepted for symmetry with the codec
    /// call: LZ4/LZ4HC take their level per block, and zstd digests at level 1 (see module docs).
    pub fn new(compcode: u8, clevel: u8, dict_bytes: &[u8]) -> Result<CompressDict> {
        let _ = clevel;
        check_size(dict_bytes)?;
        let kind = match compcode {
            LZ4 | LZ4HC => CKind::Lz4(dict_bytes.to_vec()),
            ZSTD => CKind::Zstd(zstd::CDict::new(dict_bytes, 1)?),
            _ => return Err(Error::CodecDict),
        };
        Ok(CompressDict {
            kind,
            bytes_len: dict_bytes.len(),
        })
    }

    /// Size in bytes of the dictionary as stored in the chunk.
    pub fn len(&self) -> usize {
        self.bytes_len
    }

    /// Always false: empty dictionaries are rejected by [`CompressDict::new`].
    pub fn is_empty(&self) -> bool {
        self.bytes_len == 0
    }

    pub(crate) fn lz4_bytes(&self) -> Option<&[u8]> {
        match &self.kind {
            CKind::Lz4(b) => Some(b),
            CKind::Zstd(_) => None,
        }
    }

    pub(crate) fn zstd_cdict(&self) -> Option<&zstd::CDict> {
        match &self.kind {
            CKind::Zstd(c) => Some(c),
            CKind::Lz4(_) => None,
        }
    }
}

impl DecompressDict {
    /// Prepares `dict_bytes` (as read from a chunk) for decoding streams of `compcode`; the
    /// LZ4 decoder serves LZ4HC too. Sizes outside 1..=32768 and other codecs fail with
    /// `CodecDict`, like c-blosc2's reader.
    pub fn new(compcode: u8, dict_bytes: &[u8]) -> Result<DecompressDict> {
        check_size(dict_bytes)?;
        let kind = match compcode {
            LZ4 | LZ4HC => DKind::Lz4(dict_bytes.to_vec()),
            ZSTD => DKind::Zstd(zstd::DDict::new(dict_bytes)?),
            _ => return Err(Error::CodecDict),
        };
        Ok(DecompressDict { kind })
    }

    pub(crate) fn lz4_bytes(&self) -> Option<&[u8]> {
        match &self.kind {
            DKind::Lz4(b) => Some(b),
            DKind::Zstd(_) => None,
        }
    }

    pub(crate) fn zstd_ddict(&self) -> Option<&zstd::DDict> {
        match &self.kind {
            DKind::Zstd(d) => Some(d),
            DKind::Lz4(_) => None,
        }
    }
}

/// Builds dictionary bytes for `compcode` from `samples` (the concatenated samples whose
/// lengths are `sample_sizes`), at most `max_size` bytes.
///
/// * Zstd: `ZDICT_trainFromBuffer`; `None` when training fails (too few or too uniform
///   samples), in which case the chunk is written without a dictionary.
/// * LZ4/LZ4HC: c-blosc2's rule, the first `min(sum(sample_sizes), max_size)` sample bytes.
///
/// `None` also when `max_size` is below [`MIN_USEFUL_DICT`], the samples are empty, the sizes
/// do not add up to at most `samples.len()`, or the codec has no dictionaries.
pub fn train(
    compcode: u8,
    samples: &[u8],
    sample_sizes: &[usize],
    max_size: usize,
) -> Option<Vec<u8>> {
    let max_size = max_size.min(MAX_DICT_SIZE);
    let total = sample_sizes
        .iter()
        .try_fold(0usize, |acc, &s| acc.checked_add(s))?;
    if max_size < MIN_USEFUL_DICT || total == 0 || total > samples.len() {
        return None;
    }
    match compcode {
        LZ4 | LZ4HC => Some(samples[..total.min(max_size)].to_vec()),
        ZSTD => zstd::train(&samples[..total], sample_sizes, max_size),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn dicts_are_send_and_sync() {
        assert_send_sync::<CompressDict>();
        assert_send_sync::<DecompressDict>();
    }

    #[test]
    fn lz4_training_takes_leading_sample_bytes() {
        let samples: Vec<u8> = (0..4000u32).map(|i| (i % 253) as u8).collect();
        let d = train(LZ4, &samples, &[1000, 1000, 1000], 2000).unwrap();
        assert_eq!(d, &samples[..2000]);
        let d = train(LZ4HC, &samples, &[300, 300], 2000).unwrap();
        assert_eq!(d, &samples[..600]);
    }

    #[test]
    fn training_rejects_bad_inputs() {
        let samples = vec![7u8; 1000];
        assert_eq!(train(LZ4, &samples, &[500], 255), None);
        assert_eq!(train(LZ4, &samples, &[600, 600], 1000), None);
        assert_eq!(train(LZ4, &samples, &[], 1000), None);
        assert_eq!(train(super::super::ZLIB, &samples, &[500], 1000), None);
    }

    #[test]
    fn dict_constructors_validate() {
        assert_eq!(
            CompressDict::new(super::super::ZLIB, 5, b"abc").err(),
            Some(Error::CodecDict)
        );
        assert_eq!(DecompressDict::new(LZ4, &[]).err(), Some(Error::CodecDict));
        assert_eq!(
            DecompressDict::new(ZSTD, &vec![0u8; MAX_DICT_SIZE + 1]).err(),
            Some(Error::CodecDict)
        );
        assert_eq!(CompressDict::new(LZ4HC, 9, b"hello").unwrap().len(), 5);
        assert!(DecompressDict::new(ZSTD, b"raw content dictionary").is_ok());
    }
}
