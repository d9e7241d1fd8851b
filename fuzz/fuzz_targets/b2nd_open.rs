//! Fuzz target for opening and reading b2nd arrays; the properties checked are in
//! `fuzz/checks/b2nd_open.rs`.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks/b2nd_open.rs"]
mod checks;

fuzz_target!(|data: &[u8]| {
    checks::run(data);
});
