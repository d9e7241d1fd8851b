//! Fuzz target; the input format and the properties checked are in `fuzz/checks/chunk_getitem.rs`.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks/chunk_getitem.rs"]
mod checks;

fuzz_target!(|data: &[u8]| checks::run(data));
