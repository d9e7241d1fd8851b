//! Fuzz target for the zlib decoder (and encoder round trip); the input format and the
//! properties checked are in `fuzz/checks/codec_stream.rs`.
#![no_main]
use b2frame::codecs::ZLIB;
use libfuzzer_sys::fuzz_target;

#[path = "../checks/codec_stream.rs"]
mod checks;

const CODEC: checks::Codec = checks::Codec {
    code: ZLIB,
    alt: ZLIB,
    dict: false,
};

fuzz_target!(|data: &[u8]| checks::run(&CODEC, data));
