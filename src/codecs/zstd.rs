//! Zstd frames through zstd-sys. (Stub: being implemented.)

use super::dict::{CompressDict, DecompressDict};
use crate::error::{Error, Result};

/// Reusable zstd contexts of one worker.
#[derive(Default)]
pub struct ZstdState {}

/// Zstd at level `2*clevel-1` (max level for clevel 9); returns 0 when it does not fit.
pub fn compress(
    _state: &mut ZstdState,
    _clevel: u8,
    _src: &[u8],
    _dst: &mut [u8],
    _dict: Option<&CompressDict>,
) -> usize {
    0
}

/// Decodes a zstd frame into `dst`.
pub fn decompress(
    _state: &mut ZstdState,
    _src: &[u8],
    _dst: &mut [u8],
    _dict: Option<&DecompressDict>,
) -> Result<usize> {
    Err(Error::CodecSupport)
}
