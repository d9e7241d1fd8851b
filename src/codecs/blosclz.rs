//! BloscLZ: Blosc's own FastLZ-derived codec, encoder and decoder written for b2frame.
//! (Stub: being implemented.)

use crate::error::{Error, Result};

/// Compresses `src` into `dst` at `clevel`; returns 0 when it does not fit or gains nothing.
pub fn compress(_clevel: u8, _src: &[u8], _dst: &mut [u8]) -> usize {
    0
}

/// Decodes a BloscLZ stream into `dst`; returns the number of bytes produced.
pub fn decompress(_src: &[u8], _dst: &mut [u8]) -> Result<usize> {
    Err(Error::CodecSupport)
}
