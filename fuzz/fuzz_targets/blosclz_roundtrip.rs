//! Compress arbitrary bytes at an arbitrary clevel and decode them back: must be identical.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let clevel = data[0] % 10;
    let src = &data[1..];
    let mut comp = vec![0u8; src.len() + src.len() / 16 + 64];
    let n = b2frame::codecs::blosclz::compress(clevel, src, &mut comp);
    if n == 0 {
        return;
    }
    assert!(n <= comp.len());
    let mut out = vec![0u8; src.len()];
    let m = b2frame::codecs::blosclz::decompress(&comp[..n], &mut out).expect("own stream decodes");
    assert_eq!(m, src.len());
    assert_eq!(&out[..], src);
});
