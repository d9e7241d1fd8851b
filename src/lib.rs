//! b2frame: a Rust implementation of c-blosc2's frame I/O with the same C ABI.
//!
//! This crate is the C library (`libb2frame.so`/`.a`): the `extern "C"` facade ([`capi`]) and
//! the `#[repr(C)]` types. It converts and checks C arguments and calls the safe core, the
//! [`blosc2_frame`] crate (codecs, filters, chunk, frame, super-chunk, b2nd arrays), whose
//! modules are re-exported here under their own names so that `b2frame::chunk` and
//! `blosc2_frame::chunk` are the same module. Nothing in the core sees a raw pointer from C.

pub mod capi;
#[cfg(test)]
mod test_util;

pub use blosc2_frame::{
    b2nd, b2nd_meta, chunk, codecs, crc, dynamic, env, error, filters, frame, msgpack, pool,
    registry, schunk, sys, Error, Result,
};
