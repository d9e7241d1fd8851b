//! The b2nd array C API (`b2nd_array_t`, `b2nd_context_t` and the `b2nd_*` functions of
//! c-blosc2 3.3's `b2nd.h`) over the safe array core of [`crate::b2nd`].
//!
//! Like c-blosc2's own implementation, an array is a `b2nd_array_t` (libc-`malloc`ed, released
//! with `b2nd_free`) around a `blosc2_schunk*` (`sc`) that the array owns; every chunk goes
//! through the bodies of the super-chunk's public operations (those of
//! `blosc2_schunk_decompress_chunk`, `blosc2_schunk_update_chunk`, ...), so locking, counters,
//! user codecs and prefilters behave as for any other super-chunk. The geometry fields
//! of the struct are what every call reads (callers may read them, as python-blosc2 does), and
//! they are rewritten after each shape change together with the `b2nd` metalayer.
//!
//! `b2nd_context_t` is opaque in the public header but has c-blosc2's layout (its tests read
//! `ndim` and `shape` through their private header).
//!
//! Views (`b2nd_squeeze`, `b2nd_squeeze_index`, `b2nd_expand_dims`) share the parent's
//! super-chunk, counted so that either may be freed first (`shares`).
//!
//! The parts of the API live in submodules: `store` (the super-chunk behind an array),
//! `cstruct` (the struct and its metalayer), `context`, `construct` (new arrays),
//! `frames` (arrays as frames, in memory and in files), `slice` (C buffers and
//! hyperslabs), `views`, `copy`, `shape` (shape changes), `orthogonal` (selections) and
//! `buffer` (buffer-to-buffer copies). This module holds the C types they share.
//!
//! The header, `include/b2nd.h`, is written by hand (cbindgen skips this module) so that it keeps
//! c-blosc2's anonymous-struct typedef and its documentation order.
#![allow(non_camel_case_types)]

mod buffer;
mod construct;
mod context;
mod copy;
mod cstruct;
mod frames;
mod orthogonal;
mod shape;
mod shares;
mod slice;
mod store;
mod views;

pub use buffer::*;
pub use construct::*;
pub use context::*;
pub use copy::*;
pub use cstruct::*;
pub use frames::*;
pub use orthogonal::*;
pub use shape::*;
pub use slice::*;
use store::*;
pub use views::*;

use super::boundary::{guard, malloc_copy, malloc_zeroed};
use super::chunk::{ctx_dparams, special_chunk, SpecialCtor};
use super::handle::{
    free_block, read_op, read_op_plain, schunk_lock, schunk_refresh, schunk_unlock, Handle,
};
use super::meta::{content_arg, meta_op};
use super::schunk::{decode_blocks, decompress_chunk_masked, fill_special, mutate, open_default};
use super::schunk::{schunk_append_file, schunk_copy, schunk_from_buffer, schunk_new};
use super::schunk::{schunk_to_buffer, sparse_buffer, stored_params};
use super::types::*;
use crate::b2nd::array::{self as core, ChunkStore};
use crate::b2nd::geometry::{c_strides, Geometry};
use crate::b2nd::hyperslab::{chunks_touched, copy_nd};
use crate::b2nd::selection;
use crate::b2nd_meta::{self, MAX_DIM};
use crate::error::{Error, Result};
use std::ffi::{c_char, c_int, c_void, CStr};

/// `B2ND_MAX_METALAYERS`.
pub const B2ND_MAX_METALAYERS: usize = 15;

/// `struct chunk_cache_s`: a one-chunk cache callers may use (b2frame leaves it alone).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct chunk_cache_s {
    /// Cached chunk data.
    pub data: *mut u8,
    /// Chunk number in the cache, -1 when empty.
    pub nchunk: i64,
}

/// `b2nd_array_t`, with c-blosc2 3.3.5's layout.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct b2nd_array_t {
    pub sc: *mut blosc2_schunk,
    pub shape: [i64; 16],
    pub chunkshape: [i32; 16],
    pub extshape: [i64; 16],
    pub blockshape: [i32; 16],
    pub extchunkshape: [i64; 16],
    pub nitems: i64,
    pub chunknitems: i32,
    pub extnitems: i64,
    pub blocknitems: i32,
    pub extchunknitems: i64,
    pub ndim: i8,
    pub chunk_cache: chunk_cache_s,
    pub item_array_strides: [i64; 16],
    pub item_chunk_strides: [i64; 16],
    pub item_extchunk_strides: [i64; 16],
    pub item_block_strides: [i64; 16],
    pub block_chunk_strides: [i64; 16],
    pub chunk_array_strides: [i64; 16],
    pub dtype: *mut c_char,
    pub dtype_format: i8,
    pub last_tick: i64,
}

/// `struct b2nd_context_s` (`b2nd_context_t`), with c-blosc2's layout.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct b2nd_context_s {
    pub ndim: i8,
    pub shape: [i64; 16],
    pub chunkshape: [i32; 16],
    pub blockshape: [i32; 16],
    pub dtype: *mut c_char,
    pub dtype_format: i8,
    pub b2_storage: *mut blosc2_storage,
    pub metalayers: [blosc2_metalayer; 15],
    pub nmetalayers: i32,
}

/// `b2nd_context_t`.
pub type b2nd_context_t = b2nd_context_s;

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_cblosc2() {
        assert_eq!(size_of::<b2nd_array_t>(), 1376);
        assert_eq!(offset_of!(b2nd_array_t, ndim), 560);
        assert_eq!(offset_of!(b2nd_array_t, chunk_cache), 568);
        assert_eq!(offset_of!(b2nd_array_t, dtype), 1352);
        assert_eq!(offset_of!(b2nd_array_t, last_tick), 1368);
        assert_eq!(size_of::<b2nd_context_t>(), 656);
        assert_eq!(offset_of!(b2nd_context_t, nmetalayers), 648);
    }
}
