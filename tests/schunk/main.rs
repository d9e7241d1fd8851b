//! The super-chunk's tests, one binary (docs/testing.md says which tests share a process):
//! `unit*` (b2frame's own behaviour), `reference*` (against the real c-blosc2 3.3.5) and
//! `python` (against python-blosc2). `schunk_unit_reentrant` registers a codec in the
//! process-wide registry and is a binary of its own.

#[path = "../common/mod.rs"]
mod common;

mod python;
mod reference;
mod reference_blosc1;
mod reference_fields;
mod reference_fields_refused;
mod reference_lazy;
mod unit_nchunk;
mod unit_threads;
