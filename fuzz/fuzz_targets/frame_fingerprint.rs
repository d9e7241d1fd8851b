//! Fuzz target for frame fingerprints; the properties checked are in
//! `fuzz/checks/frame_fingerprint.rs`.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks/frame_fingerprint.rs"]
mod checks;

fuzz_target!(|data: &[u8]| {
    checks::run(data);
});
