//! blosc2-frame: the safe Rust core of b2frame, a Rust implementation of c-blosc2's chunk and
//! frame I/O. It exports no C symbols; the C library (`libb2frame`, the crate one directory up)
//! is a thin facade over it, and Rust programs can depend on this crate alone.
//!
//! Data flows one way, layered as super-chunk → frame → chunk → codecs/filters. Nothing here
//! sees a raw pointer from C, and nothing here names the C facade (the crate boundary enforces
//! it). `unsafe` is confined to the calls into the C codecs (`codecs::zstd`, `codecs::lz4`,
//! `codecs::zfp`), the SIMD kernels of `filters` and `crc` and the operating-system calls std
//! does not wrap (`sys::unix`, `sys::windows`, `sys::dl` for plugin libraries, the fallible
//! zeroed allocation of `sys::alloc`, and `sys::out`, the new output buffers decoders write
//! without zeroing them first); every other module has `#![forbid(unsafe_code)]`.
//!
//! # Chunks in three lines
//!
//! ```
//! use blosc2_frame::{CParams, Codec, Filter};
//!
//! let bytes: Vec<u8> = (0..10_000u64).flat_map(|i| i.to_le_bytes()).collect();
//! let cparams = CParams::default().codec(Codec::Zstd).clevel(5).typesize(8)
//!     .filters(&[Filter::Shuffle]).nthreads(2);
//! let chunk: Vec<u8> = blosc2_frame::compress(&bytes, &cparams)?;
//! let back: Vec<u8> = blosc2_frame::decompress(&chunk)?;
//! assert_eq!(back, bytes);
//! assert!(chunk.len() < bytes.len() / 10);
//! # Ok::<(), blosc2_frame::Error>(())
//! ```
//!
//! # What the crate holds
//!
//! | item | what it is |
//! |---|---|
//! | [`compress`], [`decompress`], [`decompress_with`] | one chunk, made and read |
//! | [`CParams`], [`DParams`] | compression and decompression parameters, set by chained setters |
//! | [`Codec`], [`Filter`], [`SplitMode`], [`Special`] | the format's codecs, filters, split modes and special values |
//! | [`Storage`] | where a super-chunk or an array lives: memory, a cframe file, an sframe directory |
//! | [`SChunk`] | a super-chunk: chunks with metalayers and vlmetalayers, in memory or a frame; `Send + Sync` |
//! | [`Chunks`] | the decompressed chunks of a super-chunk, as an iterator |
//! | [`Array`], [`Element`] | a b2nd N-dimensional array of Rust items: slices, selections, resizing, views |
//! | [`RawArray`], [`ArrayParams`], [`Fill`] | b2nd arrays of any item size and dtype |
//! | [`Error`], [`Result`] | the one error type, carrying the `BLOSC2_ERROR_*` code c-blosc2 returns |
//! | [`CodecInfo`], [`FilterInfo`], [`Origin`] | what the codec and filter table says of one entry |
//!
//! # A super-chunk in a file, read back
//!
//! ```
//! use blosc2_frame::{CParams, SChunk, Storage};
//!
//! let path = std::env::temp_dir().join(format!("front-page-{}.b2frame", std::process::id()));
//! # let _ = std::fs::remove_file(&path);
//! let mut sc = SChunk::create(Storage::file(&path), &CParams::default().typesize(4))?;
//! for i in 0..4u32 {
//!     sc.append(&[i.to_le_bytes(); 1000].concat())?;
//! }
//! sc.set_vlmetalayer("attrs", b"{}")?;
//! drop(sc);
//! let sc = SChunk::open(&path)?;
//! assert_eq!(sc.chunks().count(), 4);
//! assert_eq!(sc.decompress_chunk(3)?[..4], 3u32.to_le_bytes());
//! assert_eq!(sc.vlmetalayer("attrs")?.as_deref(), Some(&b"{}"[..]));
//! # std::fs::remove_file(&path).unwrap();
//! # Ok::<(), blosc2_frame::Error>(())
//! ```
//!
//! The layers below these items (super-chunk, frame, chunk, codecs and filters, one module per
//! concept of the format) are public for the C facade, which is another crate, and hidden
//! from these docs: they are not the crate's API and may change.

#![deny(missing_docs)]

pub mod b2nd;
#[doc(hidden)]
pub mod b2nd_meta;
#[doc(hidden)]
pub mod chunk;
#[doc(hidden)]
pub mod codecs;
#[doc(hidden)]
pub mod crc;
#[doc(hidden)]
pub mod dynamic;
#[doc(hidden)]
pub mod env;
#[doc(hidden)]
pub mod error;
#[doc(hidden)]
pub mod filters;
#[doc(hidden)]
pub mod frame;
#[doc(hidden)]
pub mod msgpack;
#[doc(hidden)]
pub mod pool;
#[doc(hidden)]
pub mod registry;
#[doc(hidden)]
pub mod schunk;
mod storage;
#[doc(hidden)]
pub mod sys;
#[cfg(test)]
mod test_util;

pub use b2nd::{Array, ArrayParams, Element, Fill, RawArray};
pub use chunk::{CParams, DParams, Special, SplitMode};
pub use codecs::{Codec, CodecInfo};
pub use error::{Error, Result};
pub use filters::{Filter, FilterInfo};
pub use registry::Origin;
pub use schunk::{Chunks, SChunk};
pub use storage::Storage;

/// The crate's README, whose example runs as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// Compresses `src` into a new chunk with `cparams`.
///
/// The chunk holds the whole of `src` (at most 2 GiB less 32 bytes; more is
/// [`Error::MaxBufsizeExceeded`]), compressed, or stored as it is when compressing does not
/// gain. Codecs and filters that read the super-chunk (NDLZ, ZFP, NDCELL, NDMEAN) need one;
/// compress through a super-chunk for them.
///
/// ```
/// use blosc2_frame::{CParams, Codec};
///
/// let src = vec![7u8; 100_000];
/// let chunk = blosc2_frame::compress(&src, &CParams::default().codec(Codec::Lz4))?;
/// assert!(chunk.len() < 1_000);
/// # Ok::<(), blosc2_frame::Error>(())
/// ```
pub fn compress(src: &[u8], cparams: &CParams) -> Result<Vec<u8>> {
    chunk::compress_vec(cparams, src)
}

/// Decompresses a whole chunk into a new buffer (of the chunk's `nbytes`), with one thread.
///
/// Bad chunks give an [`Error`] with the code c-blosc2 returns for them, never a panic:
///
/// ```
/// assert_eq!(blosc2_frame::decompress(&[0u8; 8]), Err(blosc2_frame::Error::ReadBuffer));
/// ```
pub fn decompress(chunk: &[u8]) -> Result<Vec<u8>> {
    chunk::decompress_vec(chunk)
}

/// Decompresses a whole chunk into `dst`, which must hold the chunk's `nbytes`; returns
/// `nbytes`. [`decompress`] writes its new buffer as it decodes (it is not zeroed first), so
/// reusing one `dst` saves only the allocation and the first touch of new pages.
/// A `dst` too short is [`Error::WriteBuffer`].
///
/// ```
/// use blosc2_frame::CParams;
///
/// let src: Vec<u8> = (0..100_000u32).flat_map(|i| (i / 9).to_le_bytes()).collect();
/// let chunk = blosc2_frame::compress(&src, &CParams::default().typesize(4))?;
/// let mut out = vec![0u8; src.len()];
/// assert_eq!(blosc2_frame::decompress_into(&chunk, &mut out)?, src.len());
/// assert_eq!(out, src);
/// assert_eq!(
///     blosc2_frame::decompress_into(&chunk, &mut out[..10]),
///     Err(blosc2_frame::Error::WriteBuffer)
/// );
/// # Ok::<(), blosc2_frame::Error>(())
/// ```
pub fn decompress_into(chunk: &[u8], dst: &mut [u8]) -> Result<usize> {
    chunk::decompress_into_with(chunk, dst, &DParams::default())
}

/// [`decompress`] with parameters (the number of threads).
///
/// ```
/// use blosc2_frame::{CParams, DParams};
///
/// let src: Vec<u8> = (0..1_000_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
/// let chunk = blosc2_frame::compress(&src, &CParams::default().typesize(4))?;
/// assert_eq!(blosc2_frame::decompress_with(&chunk, &DParams::default().nthreads(2))?, src);
/// # Ok::<(), blosc2_frame::Error>(())
/// ```
pub fn decompress_with(chunk: &[u8], dparams: &DParams) -> Result<Vec<u8>> {
    chunk::decompress_vec_with(chunk, dparams)
}
