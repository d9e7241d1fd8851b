//! Arbitrary bytes into one codec's decoder (through the codec dispatch, with a reused
//! per-worker state and, where the codec has them, an optional dictionary) for an arbitrary
//! expected size: must return exactly that size or an error, never crash. Mode bit 1 also
//! round-trips the input through the encoder.
//!
//! Input: bytes 0-1 the expected size (0..=65535); byte 2 the mode (bit 0: a dictionary of
//! byte 3's length comes first, bit 1: round trip, bit 2: round trip with the alternative
//! encoder); byte 3 the dictionary length / clevel; then the stream.
//!
//! Shared by the lz4, zstd and zlib fuzz targets.
use b2frame::codecs::{self, dict, CodecState};
use std::cell::RefCell;

thread_local! {
    static STATE: RefCell<CodecState> = RefCell::new(CodecState::new());
}

/// How one codec is fuzzed.
pub struct Codec {
    /// The compcode the stream is decoded with.
    pub code: u8,
    /// The encoder of a round trip with mode bit 2 set (e.g. LZ4HC for LZ4; else `code`).
    pub alt: u8,
    /// Whether mode bit 0 takes a dictionary from the input.
    pub dict: bool,
}

/// Runs one fuzz input; panics on a violated property.
pub fn run(c: &Codec, data: &[u8]) {
    if data.len() < 4 {
        return;
    }
    let dst_len = u16::from_le_bytes([data[0], data[1]]) as usize;
    let (mode, param) = (data[2], data[3]);
    let mut rest = &data[4..];
    STATE.with(|st| {
        let st = &mut *st.borrow_mut();
        let mut ddict = None;
        if c.dict && mode & 1 != 0 && rest.len() > param as usize && param > 0 {
            ddict = dict::DecompressDict::new(c.code, &rest[..param as usize]).ok();
            rest = &rest[param as usize..];
        }
        let mut dst = vec![0u8; dst_len];
        if let Ok(n) = codecs::decompress(st, c.code, rest, &mut dst, ddict.as_ref()) {
            assert_eq!(n, dst_len);
        }
        if mode & 2 != 0 && !rest.is_empty() {
            let code = if mode & 4 != 0 { c.alt } else { c.code };
            let clevel = 1 + param % 9;
            let mut comp = vec![0u8; rest.len()];
            let n = codecs::compress(st, code, clevel, rest, &mut comp, None).expect("compress");
            if n > 0 {
                assert!(n < rest.len());
                let mut out = vec![0u8; rest.len()];
                let m =
                    codecs::decompress(st, code, &comp[..n], &mut out, None).expect("own stream");
                assert_eq!(m, rest.len());
                assert_eq!(&out[..], rest);
            }
        }
    });
}
