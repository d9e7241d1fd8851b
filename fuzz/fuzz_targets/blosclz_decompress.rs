//! Arbitrary bytes into the BloscLZ decoder with an arbitrary output size: must never crash.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    // First two bytes pick the output buffer size (0..=65535), the rest is the stream.
    let dst_len = u16::from_le_bytes([data[0], data[1]]) as usize;
    let src = &data[2..];
    let mut dst = vec![0u8; dst_len];
    if let Ok(n) = b2frame::codecs::blosclz::decompress(src, &mut dst) {
        assert!(n <= dst_len);
    }
});
