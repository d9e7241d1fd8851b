//! Fuzz target for reading cframes; the properties checked are in `fuzz/checks/frame_open.rs`.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks/frame_open.rs"]
mod checks;

fuzz_target!(|data: &[u8]| {
    checks::run(data);
});
