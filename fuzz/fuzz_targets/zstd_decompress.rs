//! Fuzz target for the zstd decoder (and encoder round trip); the input format and the
//! properties checked are in `fuzz/checks/codec_stream.rs`.
//! cc builds the C codec with gcc, which gives libFuzzer no edge coverage of it; for guidance
//! inside the C decoder build with `CFLAGS="-fsanitize-coverage=trace-cmp"` (plus the flag
//! below) and run with `-- -use_value_profile=1`, seeded with valid streams.
//! The C codecs are ASan-instrumented through cc (gcc here); gcc 12 reports a false
//! "stack-use-after-scope" on a constant table it promotes to a global inside zstd's optimal
//! parser (zstd_opt.c, getAllMatchesFns), so run with
//! `CFLAGS=-fno-sanitize-address-use-after-scope cargo +nightly fuzz run ...`.
#![no_main]
use b2frame::codecs::ZSTD;
use libfuzzer_sys::fuzz_target;

#[path = "../checks/codec_stream.rs"]
mod checks;

const CODEC: checks::Codec = checks::Codec {
    code: ZSTD,
    alt: ZSTD,
    dict: true,
};

fuzz_target!(|data: &[u8]| checks::run(&CODEC, data));
