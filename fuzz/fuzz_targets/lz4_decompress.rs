//! Fuzz target for the lz4 decoder (and encoder round trip); the input format and the
//! properties checked are in `fuzz/checks/codec_stream.rs`.
//! cc builds the C codec with gcc, which gives libFuzzer no edge coverage of it; for guidance
//! inside the C decoder build with `CFLAGS="-fsanitize-coverage=trace-cmp"`
//! and run with `-- -use_value_profile=1`, seeded with valid streams.
#![no_main]
use b2frame::codecs::{LZ4, LZ4HC};
use libfuzzer_sys::fuzz_target;

#[path = "../checks/codec_stream.rs"]
mod checks;

const CODEC: checks::Codec = checks::Codec {
    code: LZ4,
    alt: LZ4HC,
    dict: true,
};

fuzz_target!(|data: &[u8]| checks::run(&CODEC, data));
