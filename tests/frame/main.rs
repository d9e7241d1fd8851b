//! The frame layer's tests, one binary (docs/testing.md says which tests share a process):
//! `unit*` (b2frame's own behaviour, fingerprints included), `reference` (against the real
//! c-blosc2 3.3.5), `python` (against python-blosc2) and `crash_kill` (a writer killed at random;
//! it starts this binary again as the writer). `frame_crash_states` and `frame_crash_files`
//! flip the process-wide durable switch and are binaries of their own.

#[path = "../common/mod.rs"]
mod common;

mod crash_kill;
mod python;
mod reference;
mod reference_sizes;
mod unit;
mod unit_fingerprint;
