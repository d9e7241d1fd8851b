//! Fuzz target; the input format and the properties checked are in `fuzz/checks/chunk_decompress.rs`.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks/chunk_decompress.rs"]
mod checks;
#[path = "../checks/shared.rs"]
mod shared;

fuzz_target!(|data: &[u8]| checks::run(data));
