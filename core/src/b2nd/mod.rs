//! The b2nd N-dimensional array layer: an array of `shape` items split into chunks of
//! `chunkshape` items (one super-chunk chunk each, padded to `extchunkshape`) and blocks of
//! `blockshape` items (one Blosc block each), as c-blosc2's `b2nd.h` lays them out
//! (docs/format/metalayers.md#b2nd for the metalayer).
//!
//! | item | what it is |
//! |---|---|
//! | [`Array`] | an array of [`Element`] items (numbers, or `[u8; N]`) |
//! | [`RawArray`] | an array of byte items: constructors, access, views, shape changes, frames |
//! | [`ArrayParams`], [`Fill`] | the geometry, dtype and metalayers of a new array, and its first items |
//!
//! The modules that hold the geometry, the N-dimensional copies, slices, selections and
//! shape changes are public for the C facade and hidden from these docs.
//!
//! Storage order: chunks are numbered in C order over `extshape / chunkshape`; inside a
//! chunk (of `extchunknitems` items) blocks follow in C order over
//! `extchunkshape / blockshape`, and each block holds its `blocknitems` items in C order. The
//! padding is part of every chunk and is written as zeros.
//!
//! Arrays: [`Array<T>`] (items of a Rust type) over [`RawArray`] (items of any typesize, what
//! the C library forwards to). An array owns its super-chunk through an `Arc` that its views
//! share: [`RawArray::squeeze`], [`RawArray::squeeze_axes`] and [`RawArray::expand_dims`] return
//! arrays over the same chunks, as c-blosc2's `view_new` does, so a write through one is read
//! through the others (see `raw::views`).
//!
//! ```
//! use blosc2_frame::Array;
//! use blosc2_frame::CParams;
//! use blosc2_frame::Storage;
//!
//! let arr = Array::<i32>::create(Storage::memory_frame(), &[4, 1, 6], &[2, 1, 3], &[1, 1, 3], &CParams::default())?;
//! let view = arr.squeeze()?;
//! arr.set_slice(&[1..2, 0..1, 0..6], &[1, 2, 3, 4, 5, 6])?;
//! assert_eq!(view.slice(&[1..2, 2..4])?, vec![3, 4]);
//! # Ok::<(), blosc2_frame::Error>(())
//! ```

#![forbid(unsafe_code)]

#[doc(hidden)]
pub mod array;
#[doc(hidden)]
pub mod geometry;
#[doc(hidden)]
pub mod hyperslab;
mod raw;
#[doc(hidden)]
pub mod selection;
mod shared;
mod typed;

#[doc(hidden)]
pub use array::ChunkStore;
#[doc(hidden)]
pub use geometry::Geometry;
pub use raw::{ArrayParams, Fill, RawArray, MAX_METALAYERS};
pub use typed::{Array, Element};
