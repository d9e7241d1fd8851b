//! Arbitrary bytes into the zlib decoder (through the codec dispatch, with a reused per-worker
//! state) for an arbitrary expected size: must return exactly that
//! size or an error, never crash. Mode bit 1 also round-trips the input through the encoder.
#![no_main]
use b2frame::codecs::{self, CodecState, ZLIB};
use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;

thread_local! {
    static STATE: RefCell<CodecState> = RefCell::new(CodecState::new());
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    // Bytes 0-1: expected size (0..=65535); byte 2: mode; byte 3: dictionary length / clevel.
    let dst_len = u16::from_le_bytes([data[0], data[1]]) as usize;
    let (mode, param) = (data[2], data[3]);
    let rest = &data[4..];
    STATE.with(|st| {
        let st = &mut *st.borrow_mut();
        let mut dst = vec![0u8; dst_len];
        if let Ok(n) = codecs::decompress(st, ZLIB, rest, &mut dst, None) {
            assert_eq!(n, dst_len);
        }
        if mode & 2 != 0 && !rest.is_empty() {
            let code = ZLIB;
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
});
