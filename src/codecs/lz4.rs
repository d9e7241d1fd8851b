//! LZ4 and LZ4HC raw blocks through lz4-sys. (Stub: being implemented.)

use super::dict::{CompressDict, DecompressDict};
use crate::error::{Error, Result};

/// LZ4 with acceleration `10 - clevel`; returns 0 when it does not fit.
pub fn compress(_clevel: u8, _src: &[u8], _dst: &mut [u8], _dict: Option<&CompressDict>) -> usize {
    0
}

/// LZ4HC at level `clevel`; returns 0 when it does not fit.
pub fn compress_hc(
    _clevel: u8,
    _src: &[u8],
    _dst: &mut [u8],
    _dict: Option<&CompressDict>,
) -> usize {
    0
}

/// Decodes a raw LZ4 block into `dst`.
pub fn decompress(_src: &[u8], _dst: &mut [u8], _dict: Option<&DecompressDict>) -> Result<usize> {
    Err(Error::CodecSupport)
}
