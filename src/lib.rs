//! b2frame: a Rust implementation of c-blosc2's frame I/O with the same C ABI.
//!
//! Data flows one way: the C facade ([`capi`]) converts and checks arguments and calls the safe
//! core, which is layered as super-chunk → frame → chunk → codecs/filters. Nothing below `capi`
//! sees a raw pointer.
//!
//! | module | format concept |
//! |---|---|
//! | [`error`] | the one error type and its `BLOSC2_ERROR_*` codes |
//! | [`codecs`] | BloscLZ, LZ4/LZ4HC, zlib, Zstd, dictionaries |
//! | [`filters`] | shuffle, bitshuffle, delta, trunc_prec and the 6-slot pipeline |
//! | [`chunk`] | the chunk format: header, blocks, streams, special and VL-block chunks |
//! | [`capi`] | the `extern "C"` facade and the `#[repr(C)]` types |

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

pub use error::{Error, Result};
