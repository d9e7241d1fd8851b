//! Fuzz target for lazy chunks of frames on storage; the properties are in
//! `fuzz/checks/frame_lazy.rs`.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks/frame_lazy.rs"]
mod checks;

fuzz_target!(|data: &[u8]| {
    checks::run(data);
});
