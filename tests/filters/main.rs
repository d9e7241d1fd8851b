//! The filters' tests, one binary (docs/testing.md says which tests share a process):
//! `unit` (the filter pipeline) and `reference` (shuffle and bitshuffle kernels, every SIMD
//! level, against the portable ones and the real c-blosc2 3.3.5).

#[path = "../common/mod.rs"]
mod common;

mod reference;
mod unit;
