//! Codecs: the byte-stream compressors a Blosc2 block stream can be encoded with.
//!
//! One module per codec; this module picks one by Blosc2 compcode. The contract every codec
//! follows (it is what the chunk writer relies on):
//! * `compress` returns `Ok(n)` with `n > 0` bytes written to `dst`, or `Ok(0)` when the output
//!   does not fit in `dst` or the codec gains nothing — the caller then stores the stream raw.
//!   It never fails because data is incompressible.
//! * `decompress` must produce exactly `dst.len()` bytes, or return `Err(Error::Data)`; it never
//!   reads or writes out of bounds, whatever `src` holds.
//!
//! LZ4/LZ4HC and Zstd are the C libraries (lz4-sys, zstd-sys): their modules are outbound FFI
//! clients and hold the only `unsafe` of this layer, in tiny blocks with `// SAFETY:` notes.
//! zlib is written with zlib-rs and read with libdeflate, both through safe APIs (see
//! `zlib.rs`); BloscLZ is ours. Codecs with a working state (zstd contexts, LZ4 streams, the
//! zlib compressor and decompressor) keep it per worker in [`CodecState`].

pub mod blosclz;
pub mod dict;
pub mod lz4;
pub mod ndlz;
pub mod table;
#[cfg(feature = "zfp")]
pub mod zfp;
pub mod zlib;
pub mod zstd;

use crate::error::{Error, Result};

pub use table::{list_compressors, Codec, CodecInfo};

/// Blosc2 compcodes of the built-in codecs (`BLOSC_BLOSCLZ` ...).
pub const BLOSCLZ: u8 = 0;
/// `BLOSC_LZ4`.
pub const LZ4: u8 = 1;
/// `BLOSC_LZ4HC`.
pub const LZ4HC: u8 = 2;
/// `BLOSC_ZLIB`.
pub const ZLIB: u8 = 4;
/// `BLOSC_ZSTD`.
pub const ZSTD: u8 = 5;

/// Codec *format* codes, stored in bits 5-7 of a chunk's flags byte.
pub mod format {
    /// BloscLZ streams.
    pub const BLOSCLZ: u8 = 0;
    /// LZ4 and LZ4HC raw blocks.
    pub const LZ4: u8 = 1;
    /// zlib-wrapped deflate.
    pub const ZLIB: u8 = 3;
    /// Zstd frames.
    pub const ZSTD: u8 = 4;
    /// A user/registered codec; the compcode is in header byte 22.
    pub const UDCODEC: u8 = 6;
}

/// The format code written in chunk flags for a compcode (`None` for an unknown compcode;
/// registered/user codecs use [`format::UDCODEC`]).
pub fn format_of(compcode: u8) -> Option<u8> {
    match compcode {
        BLOSCLZ => Some(format::BLOSCLZ),
        LZ4 | LZ4HC => Some(format::LZ4),
        ZLIB => Some(format::ZLIB),
        ZSTD => Some(format::ZSTD),
        32..=255 => Some(format::UDCODEC),
        _ => None,
    }
}

/// The compcode whose decoder reads a built-in format code (LZ4 reads LZ4HC output too).
pub fn decoder_for_format(format: u8) -> Option<u8> {
    match format {
        format::BLOSCLZ => Some(BLOSCLZ),
        format::LZ4 => Some(LZ4),
        format::ZLIB => Some(ZLIB),
        format::ZSTD => Some(ZSTD),
        _ => None,
    }
}

/// Per-worker codec state, reused across blocks and calls (zstd contexts, LZ4 HC state, ...).
/// One per thread; never shared between threads at the same time.
#[derive(Default)]
pub struct CodecState {
    /// Zstd compression/decompression contexts, created on first use.
    pub zstd: zstd::ZstdState,
    /// LZ4 / LZ4HC streams, created on first use.
    pub lz4: lz4::Lz4State,
    /// zlib-rs deflate stream (reset per block) and libdeflate decompressor, created on first use.
    pub zlib: zlib::ZlibState,
}

impl CodecState {
    /// A fresh state; codec contexts are created lazily.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Compresses `src` into `dst` with the built-in codec `compcode` at `clevel` (1..=9).
/// See the module docs for the `Ok(0)` contract: an output of `src.len()` bytes or more is
/// reported as `Ok(0)` too, because a stream whose size equals `neblock` means "stored raw".
pub fn compress(
    state: &mut CodecState,
    compcode: u8,
    clevel: u8,
    src: &[u8],
    dst: &mut [u8],
    dict: Option<&dict::CompressDict>,
) -> Result<usize> {
    let lz4_dict = dict.and_then(|d| d.lz4_bytes());
    let n = match compcode {
        BLOSCLZ => blosclz::compress(clevel, src, dst),
        LZ4 => lz4::compress(&mut state.lz4, clevel, src, dst, lz4_dict),
        LZ4HC => lz4::compress_hc(&mut state.lz4, clevel, src, dst, lz4_dict),
        ZLIB => zlib::compress(&mut state.zlib, clevel, src, dst),
        ZSTD => zstd::compress(
            &mut state.zstd,
            clevel,
            src,
            dst,
            dict.and_then(|d| d.zstd_cdict()),
        ),
        _ => return Err(Error::CodecSupport),
    };
    Ok(if n >= src.len() || n > dst.len() {
        0
    } else {
        n
    })
}

/// Decompresses `src` into exactly `dst.len()` bytes with the built-in codec `compcode`.
pub fn decompress(
    state: &mut CodecState,
    compcode: u8,
    src: &[u8],
    dst: &mut [u8],
    dict: Option<&dict::DecompressDict>,
) -> Result<usize> {
    let n = match compcode {
        BLOSCLZ => blosclz::decompress(src, dst)?,
        LZ4 | LZ4HC => lz4::decompress(src, dst, dict.and_then(|d| d.lz4_bytes()))?,
        ZLIB => zlib::decompress(&mut state.zlib, src, dst)?,
        ZSTD => zstd::decompress(&mut state.zstd, src, dst, dict.and_then(|d| d.zstd_ddict()))?,
        _ => return Err(Error::CodecSupport),
    };
    if n != dst.len() {
        return Err(Error::Data);
    }
    Ok(n)
}
