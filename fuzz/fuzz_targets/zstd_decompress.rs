//! Arbitrary bytes into the zstd decoder (through the codec dispatch, with a reused per-worker
//! state and an optional dictionary) for an arbitrary expected size: must return exactly that
//! size or an error, never crash. Mode bit 1 also round-trips the input through the encoder.
//! cc builds the C codec with gcc, which gives libFuzzer no edge coverage of it; for guidance
//! inside the C decoder build with `CFLAGS="-fsanitize-coverage=trace-cmp"` (plus the flag
//! below) and run with `-- -use_value_profile=1`, seeded with valid streams.
//! The C codecs are ASan-instrumented through cc (gcc here); gcc 12 reports a false
//! "stack-use-after-scope" on a constant table it promotes to a global inside zstd's optimal
//! parser (zstd_opt.c, getAllMatchesFns), so run with
//! `CFLAGS=-fno-sanitize-address-use-after-scope cargo +nightly fuzz run ...`.
#![no_main]
use b2frame::codecs::{self, dict, CodecState, ZSTD};
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
    let mut rest = &data[4..];
    STATE.with(|st| {
        let st = &mut *st.borrow_mut();
        let mut ddict = None;
        if mode & 1 != 0 && rest.len() > param as usize && param > 0 {
            ddict = dict::DecompressDict::new(ZSTD, &rest[..param as usize]).ok();
            rest = &rest[param as usize..];
        }
        let mut dst = vec![0u8; dst_len];
        if let Ok(n) = codecs::decompress(st, ZSTD, rest, &mut dst, ddict.as_ref()) {
            assert_eq!(n, dst_len);
        }
        if mode & 2 != 0 && !rest.is_empty() {
            let code = ZSTD;
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
