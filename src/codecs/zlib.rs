//! zlib-wrapped deflate. (Stub: being implemented.)

use crate::error::{Error, Result};

/// Deflate at level `clevel` with the zlib wrapper; returns 0 when it does not fit.
pub fn compress(_clevel: u8, _src: &[u8], _dst: &mut [u8]) -> usize {
    0
}

/// Inflates a zlib stream into `dst`.
pub fn decompress(_src: &[u8], _dst: &mut [u8]) -> Result<usize> {
    Err(Error::CodecSupport)
}
