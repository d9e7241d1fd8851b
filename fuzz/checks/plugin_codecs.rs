//! Arbitrary streams and geometries into the built-in plugins c-blosc2 registers (codecs NDLZ
//! and ZFP, filters NDCELL, NDMEAN, BYTEDELTA and BYTEDELTA_BUGGY, INT_TRUNC), through the
//! dispatch the chunk engine uses, with a `b2nd` block shape and a super-chunk typesize taken
//! from the input: decoders must return an error or fill the block, never crash or read out of
//! bounds (ASan watches zfp's C code, which has no bounds checks of its own: what we hand it
//! must be safe). The lossless ones must also round-trip the stream bytes taken as data.
//!
//! Input: byte 0 selects the plugin (`% 9`: codecs 32..=35, filters 32..=36), byte 1 is the
//! codec/filter meta, byte 2 the typesize (`1 + b % 8`), byte 3 the dimensions (`1 + b % 4`),
//! then one byte per dimension (block side `1 + b % 24`), one byte that shortens the
//! destination (`b % 8` bytes), then the stream.
//!
//! Shared by the fuzz target and tests/fuzz_regressions.rs.
use b2frame::b2nd_meta;
use b2frame::chunk::plugins;
use b2frame::chunk::SchunkEnv;

/// Runs one fuzz input; panics on a violated property.
pub fn run(data: &[u8]) {
    if data.len() < 5 {
        return;
    }
    let (sel, meta) = (data[0] % 9, data[1]);
    let typesize = 1 + i32::from(data[2] % 8);
    let ndim = 1 + usize::from(data[3] % 4);
    if data.len() < 5 + ndim {
        return;
    }
    let blockshape: Vec<i32> = data[4..4 + ndim]
        .iter()
        .map(|&b| 1 + i32::from(b % 24))
        .collect();
    let short = usize::from(data[4 + ndim] % 8);
    let stream = &data[5 + ndim..];
    let shape: Vec<i64> = blockshape.iter().map(|&b| i64::from(b)).collect();
    let env = SchunkEnv {
        typesize: Some(typesize),
        b2nd: b2nd_meta::serialize(&shape, &blockshape, &blockshape, None, 0).ok(),
    };
    let envf = || env.clone();
    let items: usize = blockshape.iter().map(|&b| b as usize).product();
    let full = items * typesize as usize;
    let dlen = full.saturating_sub(short);
    let mut dst = vec![0u8; dlen];
    if sel < 4 {
        let code = 32 + sel;
        if let Ok(n) = plugins::decode(code, meta, &envf, stream, &mut dst) {
            assert!(n <= dlen, "codec {code} reported {n} bytes into {dlen}");
        }
        // Round trip of the stream bytes as data (NDLZ is lossless; ZFP must just not fail
        // on its own output).
        if stream.len() >= full && full > 0 {
            let src = &stream[..full];
            let mut c = vec![0u8; full];
            if let Ok(n) = plugins::encode(code, meta, typesize as usize, &envf, src, &mut c) {
                if n > 0 {
                    let mut back = vec![0u8; full];
                    let r = plugins::decode(code, meta, &envf, &c[..n], &mut back);
                    assert_eq!(r, Ok(full), "codec {code} cannot read its own stream");
                    if code == 32 {
                        assert!(back == src, "NDLZ round trip");
                    }
                }
            }
        }
    } else {
        let id = 32 + (sel - 4);
        let n = stream.len().min(full);
        let src = &stream[..n];
        let mut out = vec![0u8; n];
        let _ = plugins::filter_backward(id, meta, &envf, src, &mut out);
        let mut enc = vec![0u8; n];
        if plugins::filter_forward(id, meta, typesize as usize, &envf, src, &mut enc).is_ok() {
            let mut back = vec![0u8; n];
            let r = plugins::filter_backward(id, meta, &envf, &enc, &mut back);
            // NDCELL and both BYTEDELTAs are lossless (the decoder reads the super-chunk
            // typesize, which is the same here).
            if matches!(id, 32 | 34 | 35) {
                assert_eq!(r, Ok(()), "filter {id} cannot undo itself");
                assert!(back == src, "filter {id} round trip");
            }
        }
    }
}
