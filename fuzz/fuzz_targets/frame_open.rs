//! Arbitrary bytes as an in-memory cframe: opening it and reading every chunk, metalayer and
//! vlmetalayer (raw and decoded) must never crash; errors are fine.
#![no_main]
use b2frame::frame::Frame;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(f) = Frame::from_bytes(data) else {
        return;
    };
    for i in 0..f.nchunks().min(4096) {
        if let Ok(c) = f.chunk(i) {
            let _ = b2frame::chunk::decompress_vec(&c);
        }
        let _ = f.chunk_info(i);
    }
    for (name, content) in f.metalayers() {
        assert_eq!(f.metalayer(name), Some(&content[..]));
        if name == "b2nd" || name == "caterva" {
            let _ = b2frame::b2nd_meta::deserialize(content, true);
        }
    }
    for (name, _) in f.vlmetalayers() {
        let _ = f.vlmetalayer(name);
    }
    // A frame that opened must also survive being re-serialised and re-opened.
    if let Ok(bytes) = f.to_cframe() {
        assert!(Frame::from_bytes(&bytes).is_ok());
    }
});
