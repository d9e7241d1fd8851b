//! Blosc2 chunks: the unit everything else stores. Writer and reader of the chunk format
//! (32-byte extended header, bstarts, optional dictionary, per-block streams), special-value
//! chunks and VL-block chunks, on top of [`crate::codecs`] and [`crate::filters`].
//!
//! (Being implemented. The public surface below is the contract other layers build on:
//! `CParams`/`DParams`, `Compressor`, `Decompressor`, `header::ChunkHeader`.)

use crate::error::{Error, Result};

/// Compression parameters of the safe core (the C `blosc2_cparams` minus pointers/hooks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CParams {
    /// Blosc2 compcode (`BLOSC_BLOSCLZ` ...).
    pub compcode: u8,
    /// Codec-specific meta byte (header byte 23).
    pub compcode_meta: u8,
    /// 0 (store) ..= 9.
    pub clevel: u8,
    /// Train and embed a dictionary (Zstd, LZ4, LZ4HC only).
    pub use_dict: bool,
    /// Element size in bytes; > 255 is stored as 1 in the header.
    pub typesize: i32,
    /// Worker threads for one chunk.
    pub nthreads: i16,
    /// Requested blocksize in bytes; 0 = automatic.
    pub blocksize: i32,
    /// `BLOSC_ALWAYS_SPLIT` (1) .. `BLOSC_FORWARD_COMPAT_SPLIT` (4).
    pub splitmode: i32,
    /// Filter ids of the 6 pipeline slots.
    pub filters: [u8; 6],
    /// Per-slot filter meta bytes.
    pub filters_meta: [u8; 6],
}

impl Default for CParams {
    /// `BLOSC2_CPARAMS_DEFAULTS`: BloscLZ, clevel 5, typesize 8, shuffle in slot 5.
    fn default() -> Self {
        CParams {
            compcode: 0,
            compcode_meta: 0,
            clevel: 5,
            use_dict: false,
            typesize: 8,
            nthreads: 1,
            blocksize: 0,
            splitmode: 4,
            filters: [0, 0, 0, 0, 0, 1],
            filters_meta: [0; 6],
        }
    }
}

/// Decompression parameters of the safe core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DParams {
    /// Worker threads for one chunk.
    pub nthreads: i16,
}

impl Default for DParams {
    fn default() -> Self {
        DParams { nthreads: 1 }
    }
}

/// Compresses `src` into a new chunk with `cparams` (convenience for layers above).
pub fn compress_vec(cparams: &CParams, src: &[u8]) -> Result<Vec<u8>> {
    let _ = (cparams, src);
    Err(Error::Failure)
}

/// Decompresses a whole chunk into a new buffer (convenience for layers above).
pub fn decompress_vec(chunk: &[u8]) -> Result<Vec<u8>> {
    let _ = chunk;
    Err(Error::Failure)
}
