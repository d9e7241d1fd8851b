//! The process-wide fingerprint switches (docs/format/fingerprint.md), in their own test binary:
//! `b2frame_set_fingerprint(0)` writes frames exactly as c-blosc2 does (`fpt = 0`, empty slot),
//! and `b2frame_set_verify_on_open(1)` makes `blosc2_schunk_open` and `blosc2_schunk_from_buffer`
//! refuse a frame whose fingerprint does not match, with `BLOSC2_ERROR_INVALID_HEADER` from
//! `b2frame_schunk_verify`. One test, so that nothing runs while a switch is flipped.

mod common;

use b2frame::capi::fingerprint::*;
use b2frame::capi::schunk::*;
use b2frame::capi::types::*;
use b2frame::chunk::{CParams, DParams};
use b2frame::frame::fingerprint::Verdict;
use b2frame::frame::Frame;
use std::ffi::CString;

const INVALID_HEADER: i32 = -11;

fn frame_bytes() -> Vec<u8> {
    let cp = CParams {
        typesize: 4,
        ..CParams::default()
    };
    let mut f = Frame::new_memory(&cp, &DParams::default()).unwrap();
    f.add_metalayer("m", b"\x01").unwrap();
    let d: Vec<u8> = (0..2000u32).flat_map(|i| (i * 3).to_le_bytes()).collect();
    f.append_chunk(&b2frame::chunk::compress_vec(&cp, &d).unwrap())
        .unwrap();
    f.to_cframe().unwrap()
}

#[test]
fn switches() {
    assert_eq!(INVALID_HEADER, b2frame::Error::InvalidHeader.code());
    let dir = common::scratch::dir("b2f-fp-sw-");
    // On by default (the test environment does not set B2FRAME_FINGERPRINT).
    let on = frame_bytes();
    assert_eq!(on[on.len() - 17], 1);

    // Frames made with fingerprints on, to be appended to while off and then on again.
    let cp = CParams {
        typesize: 4,
        ..CParams::default()
    };
    let dp = DParams::default();
    let chunk = |k: u32| {
        // Long enough for the fused copy-and-CRC of in-memory appends (crc::extend_vec).
        let d: Vec<u8> = (0..3000u32).flat_map(|i| (i * k).to_le_bytes()).collect();
        b2frame::chunk::compress_vec(&cp, &d).unwrap()
    };
    let mut later = vec![
        Frame::new_memory(&cp, &dp).unwrap(),
        Frame::new_file(&dir.path().join("later.b2frame"), &cp, &dp).unwrap(),
        Frame::new_sframe(&dir.path().join("later.b2frames"), &cp, &dp).unwrap(),
    ];
    for f in &mut later {
        f.append_chunk(&chunk(3)).unwrap();
        assert_eq!(f.verify_fingerprint().unwrap(), Verdict::Match);
    }

    // Off: fpt 0 and sixteen zero bytes, the rest identical.
    assert_eq!(b2frame_set_fingerprint(0), 1);
    let off = frame_bytes();
    assert_eq!(off.len(), on.len());
    let n = on.len();
    assert_eq!(off[n - 17..], [0u8; 17]);
    assert_eq!(off[..n - 17], on[..n - 17]);
    assert_eq!(
        Frame::from_bytes(&off)
            .unwrap()
            .verify_fingerprint()
            .unwrap(),
        Verdict::Unfingerprinted
    );
    // A fingerprinted frame changed while off becomes unfingerprinted.
    let mut g = Frame::from_bytes(&on).unwrap();
    g.append_chunk(&Frame::from_bytes(&on).unwrap().chunk(0).unwrap())
        .unwrap();
    assert_eq!(g.verify_fingerprint().unwrap(), Verdict::Unfingerprinted);
    // Appends while off hash nothing (the frame forgets its data part); the next change
    // with fingerprints on learns it again by one pass and seals a matching fingerprint.
    for f in &mut later {
        f.append_chunk(&chunk(5)).unwrap();
        assert_eq!(f.verify_fingerprint().unwrap(), Verdict::Unfingerprinted);
    }
    assert_eq!(b2frame_set_fingerprint(1), 0);
    for f in &mut later {
        f.append_chunk(&chunk(7)).unwrap();
        assert_eq!(f.nchunks(), 3);
        assert_eq!(f.verify_fingerprint().unwrap(), Verdict::Match);
    }

    // b2frame_schunk_verify, and verify-on-open.
    let path = dir.path().join("f.b2frame");
    std::fs::write(&path, &on).unwrap();
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    let mut bad = on.clone();
    // A byte of the data section (the open reads no chunk).
    let hl = Frame::from_bytes(&on).unwrap().header().header_len as usize;
    bad[hl + 40] ^= 4;
    let bad_path = dir.path().join("bad.b2frame");
    std::fs::write(&bad_path, &bad).unwrap();
    let cbad = CString::new(bad_path.to_str().unwrap()).unwrap();
    // SAFETY: valid paths and buffers; every schunk is freed.
    unsafe {
        assert_eq!(b2frame_schunk_verify(std::ptr::null_mut()), -32);
        let sc = blosc2_schunk_open(cpath.as_ptr());
        assert_eq!(b2frame_schunk_verify(sc), 1);
        blosc2_schunk_free(sc);
        let sc = blosc2_schunk_open(cbad.as_ptr());
        assert!(!sc.is_null(), "verify-on-open is off by default");
        assert_eq!(b2frame_schunk_verify(sc), INVALID_HEADER);
        blosc2_schunk_free(sc);
        let mut plain_storage = blosc2_storage {
            contiguous: false,
            ..BLOSC2_STORAGE_DEFAULTS
        };
        let plain = blosc2_schunk_new(&mut plain_storage);
        assert_eq!(b2frame_schunk_verify(plain), -24);
        blosc2_schunk_free(plain);

        assert_eq!(b2frame_set_verify_on_open(1), 0);
        let sc = blosc2_schunk_open(cpath.as_ptr());
        assert!(!sc.is_null());
        blosc2_schunk_free(sc);
        assert!(blosc2_schunk_open(cbad.as_ptr()).is_null());
        let sc = blosc2_schunk_from_buffer(bad.as_mut_ptr(), bad.len() as i64, true);
        assert!(sc.is_null());
        let mut good = on.clone();
        let sc = blosc2_schunk_from_buffer(good.as_mut_ptr(), good.len() as i64, false);
        assert!(!sc.is_null());
        blosc2_schunk_free(sc);
        assert_eq!(
            Frame::open(&bad_path).unwrap_err(),
            b2frame::Error::InvalidHeader
        );
        assert_eq!(b2frame_set_verify_on_open(0), 1);
    }
}
