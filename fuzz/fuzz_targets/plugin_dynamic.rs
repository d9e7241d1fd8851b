//! Fuzz target for the dynamic plugin loader; the properties checked are in
//! `fuzz/checks/plugin_dynamic.rs`. It is built without a sanitizer (`-s none`, see
//! `fuzz/sanitizer-none`): AddressSanitizer refuses every `dlopen` with `RTLD_DEEPBIND`, which
//! the loader uses on glibc, and kills the process.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks/plugin_dynamic.rs"]
mod checks;

fuzz_target!(|data: &[u8]| {
    checks::run(data);
});
