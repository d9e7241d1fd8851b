//! Fuzz target; the properties checked are in `fuzz/checks/sframe_open.rs`.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks/sframe_open.rs"]
mod checks;

fuzz_target!(|data: &[u8]| {
    checks::run(data);
});
