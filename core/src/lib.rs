//! b2frame-core: the safe Rust core of b2frame, a Rust implementation of c-blosc2's chunk and
//! frame I/O. It exports no C symbols; the C library (`libb2frame`, the crate one directory up)
//! is a thin facade over it, and Rust programs can depend on this crate alone.
//!
//! Data flows one way, layered as super-chunk → frame → chunk → codecs/filters. Nothing here
//! sees a raw pointer from C, and nothing here names the C facade (the crate boundary enforces
//! it). `unsafe` is confined to the calls into the C codecs (`codecs::zstd`, `codecs::lz4`,
//! `codecs::zfp`), the SIMD kernels of `filters` and [`crc`] and the operating-system calls std
//! does not wrap (`sys::unix`, `sys::windows`); every other module has `#![forbid(unsafe_code)]`.
//!
//! | module | format concept |
//! |---|---|
//! | [`error`] | the one error type and its `BLOSC2_ERROR_*` codes |
//! | [`codecs`] | BloscLZ (ours), LZ4/LZ4HC, zlib, Zstd, dictionaries |
//! | [`filters`] | shuffle, bitshuffle (run-time SIMD), delta, trunc_prec, the 6-slot pipeline |
//! | [`chunk`] | the chunk format: header, blocks, streams, special and VL-block chunks |
//! | [`crc`] | a copy fused with the CRC-32 of the copied bytes (frame fingerprints) |
//! | [`pool`] | persistent worker threads for block-parallel chunk work |
//! | [`msgpack`] | the bounds-checked msgpack subset frame headers and trailers use |
//! | [`frame`] | cframes and sframes: header, offsets index, trailer, I/O, locking |
//! | [`b2nd_meta`] | the `b2nd` (and `caterva`) array metalayer |
//! | [`b2nd`](mod@b2nd) | N-dimensional arrays over a super-chunk: geometry, slices, selections |
//! | [`schunk`] | the super-chunk: storage-agnostic operations over chunks and frames |
//! | [`env`](mod@env) | the `BLOSC_*` environment variables, parsed once into typed values |
//! | [`sys`] | positional file I/O, file identity, locks and C paths on Unix and Windows |

pub mod b2nd;
pub mod b2nd_meta;
pub mod chunk;
pub mod codecs;
pub mod crc;
pub mod env;
pub mod error;
pub mod filters;
pub mod frame;
pub mod msgpack;
pub mod pool;
pub mod schunk;
pub mod sys;
#[cfg(test)]
mod test_util;

pub use error::{Error, Result};
