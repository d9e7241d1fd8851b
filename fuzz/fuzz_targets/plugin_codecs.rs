//! Fuzz target for the built-in plugin codecs and filters (NDLZ, ZFP, NDCELL, NDMEAN,
//! BYTEDELTA, INT_TRUNC); the input format and the properties checked are in
//! `fuzz/checks/plugin_codecs.rs`. zfp is C, built by cmake through zfp-sys without ASan
//! instrumentation of its own reads; the zero-padded copy it decodes from is what keeps it in
//! bounds (a read past it shows up as a heap overflow in the Rust-allocated buffer only when
//! zfp is instrumented: build with `CFLAGS=-fsanitize=address` to check that too).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks/plugin_codecs.rs"]
mod checks;

fuzz_target!(|data: &[u8]| checks::run(data));
