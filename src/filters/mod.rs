//! Filters: the reversible (and one lossy) transforms applied to a block before its codec, and
//! the 6-slot pipeline that runs them.
//!
//! Filter ids (`BLOSC_*`): 0 none, 1 shuffle, 2 bitshuffle, 3 delta, 4 trunc_prec; 32..=159
//! registered plugins and 160..=255 user filters are delegated to a [`UserFilters`] hook.
//! The forward pipeline runs slots 0..6 in order; the backward pipeline runs them in reverse
//! and skips trunc_prec (it has no inverse). (Pipeline: being implemented.)

pub mod bitshuffle;
pub mod delta;
pub mod shuffle;
pub mod trunc_prec;

/// `BLOSC_NOFILTER`.
pub const NOFILTER: u8 = 0;
/// `BLOSC_SHUFFLE`.
pub const SHUFFLE: u8 = 1;
/// `BLOSC_BITSHUFFLE`.
pub const BITSHUFFLE: u8 = 2;
/// `BLOSC_DELTA`.
pub const DELTA: u8 = 3;
/// `BLOSC_TRUNC_PREC`.
pub const TRUNC_PREC: u8 = 4;
/// Number of pipeline slots (`BLOSC2_MAX_FILTERS`).
pub const MAX_FILTERS: usize = 6;
