//! Fuzz target for scripts of b2nd array operations checked against a model; the input format
//! and the properties checked are in `fuzz/checks/b2nd_ops.rs`.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks/b2nd_ops.rs"]
mod checks;
#[path = "../checks/shared.rs"]
mod shared;

fuzz_target!(|data: &[u8]| checks::run(data));
