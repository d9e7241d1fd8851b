//! Fuzz target; the input format and the properties checked are in `fuzz/checks/frame_mutate.rs`.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks/frame_mutate.rs"]
mod checks;

fuzz_target!(|data: &[u8]| checks::run(data));
