//! The tests of C-API-only features, one binary (docs/testing.md says which tests share a
//! process): `conventions` (the generated header), `reference_abi`, `reference_info`,
//! `reference_io` and `reference_readers` (against the real c-blosc2 3.3.5). Those that change process-wide state are
//! binaries of their own: `capi_reference_udio` and `capi_unit_fingerprint_switches`.

#[path = "../common/mod.rs"]
mod common;

mod conventions;
mod reference_abi;
mod reference_info;
mod reference_io;
mod reference_readers;
