//! The chunk engine's tests, one binary (docs/testing.md says which tests share a process):
//! `unit*` (b2frame's own behaviour), `reference*` (against the real c-blosc2 3.3.5) and
//! `robustness` (bad input never panics). Those that change process-wide state are binaries of
//! their own: `chunk_unit_fork` and `chunk_reference_blosc1`.

#[path = "../common/mod.rs"]
mod common;

mod reference;
mod reference_instr;
mod reference_plugins;
mod reference_trailing;
mod robustness;
mod unit;
mod unit_hooks;
mod unit_parallel;
