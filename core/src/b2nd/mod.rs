//! The b2nd N-dimensional array layer: an array of `shape` items split into chunks of
//! `chunkshape` items (one super-chunk chunk each, padded to `extchunkshape`) and blocks of
//! `blockshape` items (one Blosc block each), as c-blosc2's `b2nd.h` lays them out
//! (docs/format/metalayers.md#b2nd for the metalayer).
//!
//! | module | concept |
//! |---|---|
//! | [`geometry`] | shapes, padded shapes, item counts and strides, all overflow-checked |
//! | [`hyperslab`] | N-dimensional strided copies and the chunks/blocks a slice touches |
//! | [`array`](mod@array) | slice reads and writes and shape changes over a [`ChunkStore`] |
//! | [`selection`] | orthogonal (outer-product) selections |
//!
//! Storage order: chunks are numbered in C order over `extshape / chunkshape`; inside a
//! chunk (of `extchunknitems` items) blocks follow in C order over
//! `extchunkshape / blockshape`, and each block holds its `blocknitems` items in C order. The
//! padding is part of every chunk and is written as zeros.
//!
//! Views: c-blosc2 lets `b2nd_squeeze`/`b2nd_squeeze_index`/`b2nd_expand_dims` return an array
//! whose super-chunk aliases the parent's chunk pointers. b2frame never aliases: such a "view"
//! is a new in-memory array holding **copies** of the parent's chunks (the compressed bytes
//! verbatim when the padded chunk layout is the same, else the items re-chunked), so freeing
//! either array never frees what the other owns. The price is that a write through the view
//! does not show in the parent (in c-blosc2 it would, for the chunks both alias).

#![forbid(unsafe_code)]

pub mod array;
pub mod geometry;
pub mod hyperslab;
pub mod selection;

pub use array::ChunkStore;
pub use geometry::Geometry;
