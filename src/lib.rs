//! b2frame: a Rust implementation of c-blosc2's frame I/O with the same C ABI.
//!
//! Data flows one way: the C facade ([`capi`]) converts and checks arguments and calls the safe
//! core, which is layered as super-chunk → frame → chunk → codecs/filters. Nothing below `capi`
//! sees a raw pointer.
//!
//! | module | format concept |
//! |---|---|
//! | [`error`] | the one error type and its `BLOSC2_ERROR_*` codes |
//! | [`codecs`] | BloscLZ (ours), LZ4/LZ4HC, zlib, Zstd, dictionaries |
//! | [`filters`] | shuffle, bitshuffle (run-time SIMD), delta, trunc_prec, the 6-slot pipeline |
//! | [`chunk`] | the chunk format: header, blocks, streams, special and VL-block chunks |
//! | [`pool`] | persistent worker threads for block-parallel chunk work |
//! | [`msgpack`] | the bounds-checked msgpack subset frame headers and trailers use |
//! | [`frame`] | cframes and sframes: header, offsets index, trailer, I/O, locking |
//! | [`b2nd_meta`] | the `b2nd` (and `caterva`) array metalayer |
//! | [`b2nd`](mod@b2nd) | N-dimensional arrays over a super-chunk: geometry, slices, selections |
//! | [`schunk`] | the super-chunk: storage-agnostic operations over chunks and frames |
//! | [`env`](mod@env) | the `BLOSC_*` environment variables, parsed once into typed values |
//! | [`capi`] | the `extern "C"` facade and the `#[repr(C)]` types: the only FFI layer |

pub mod b2nd;
pub mod b2nd_meta;
pub mod capi;
pub mod chunk;
pub mod codecs;
pub mod env;
pub mod error;
pub mod filters;
pub mod frame;
pub mod msgpack;
pub mod pool;
pub mod schunk;
#[cfg(test)]
mod test_util;

pub use error::{Error, Result};
