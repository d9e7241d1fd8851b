//! Arbitrary bytes as an in-memory cframe: opening it and reading every chunk, metalayer and
//! vlmetalayer (raw and decoded) must never crash; errors are fine. A frame that opened must
//! survive being re-serialised and re-opened.
//!
//! Chunks are decoded only up to [`MAX_CHUNK_NBYTES`] each. A special chunk of 32 bytes can
//! rightly declare 2 GiB of zeros or NaNs, and decoding it means writing them: that is the
//! caller's memory budget, not a fault (c-blosc2 decodes into the caller's buffer, which its
//! callers size from the frame's chunksize). The fuzzer's 2 GiB RSS limit stopped on exactly such
//! a frame (`regressions/frame_open/nan-chunk-2gib`).
use b2frame::chunk::header::ChunkHeader;
use b2frame::frame::Frame;

/// The largest chunk this check decodes (the frames fuzzed are at most a few KiB).
pub const MAX_CHUNK_NBYTES: i32 = 64 << 20;

/// Runs one fuzz input; panics on a violated property. Returns the bytes it decoded.
pub fn run(data: &[u8]) -> usize {
    let Ok(f) = Frame::from_bytes(data) else {
        return 0;
    };
    let mut decoded = 0;
    for i in 0..f.nchunks().min(4096) {
        let _ = f.chunk_info(i);
        let Ok(c) = f.chunk(i) else {
            continue;
        };
        // `decompress_vec` allocates what the chunk's header declares.
        let declared = ChunkHeader::read(&c, true).map_or(0, |h| h.nbytes);
        if declared <= MAX_CHUNK_NBYTES {
            decoded += b2frame::chunk::decompress_vec(&c).map_or(0, |v| v.len());
        }
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
    if let Ok(bytes) = f.to_cframe() {
        assert!(Frame::from_bytes(&bytes).is_ok());
    }
    decoded
}
