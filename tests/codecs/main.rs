//! The codecs' tests, one binary (docs/testing.md says which tests share a process):
//! `unit` (the codec contract through the public dispatch), `reference` and
//! `reference_blosclz` (streams against the real c-blosc2 3.3.5).

#[path = "../common/mod.rs"]
mod common;

mod reference;
mod reference_blosclz;
mod table;
mod unit;
