//! 16-byte (Blosc1-style) chunk headers against the real c-blosc2: its `BLOSC_BLOSC1_COMPAT`
//! writer and our `compress_blosc1` produce the same bytes, each decodes the other's, and
//! legacy versions (1-4, with the version-2 bitshuffle rule) decode identically in both.
//! A separate test binary because it sets an environment variable the reference reads.
mod common;

use b2frame::chunk::{no_hooks, CParams, Compressor, DParams, Decompressor};
use common::data_kind;
use common::reference::{ref_decompress, reference};
use std::ffi::c_void;

type Blosc2Compress =
    unsafe extern "C" fn(i32, i32, i32, *const c_void, i32, *mut c_void, i32) -> i32;

fn ref_blosc1(clevel: i32, doshuffle: i32, typesize: i32, src: &[u8]) -> Vec<u8> {
    let r = reference();
    let mut dst = vec![0u8; src.len() + 32];
    // SAFETY: blosc2_compress has this signature in blosc2.h; buffers are sized as declared.
    let n = unsafe {
        let f: Blosc2Compress = std::mem::transmute(r.sym("blosc2_compress"));
        f(
            clevel,
            doshuffle,
            typesize,
            src.as_ptr() as *const c_void,
            src.len() as i32,
            dst.as_mut_ptr() as *mut c_void,
            dst.len() as i32,
        )
    };
    assert!(n > 0, "reference blosc2_compress failed: {n}");
    dst.truncate(n as usize);
    dst
}

fn ours_blosc1(clevel: u8, doshuffle: i32, typesize: i32, src: &[u8]) -> Vec<u8> {
    let mut filters = [0u8; 6];
    if (doshuffle == 1 && typesize > 1) || doshuffle == 2 {
        filters[5] = doshuffle as u8;
    }
    let cp = CParams {
        clevel,
        typesize,
        filters,
        ..Default::default()
    };
    let mut c = Compressor::new(cp, no_hooks()).unwrap();
    let mut dst = vec![0u8; src.len() + 32];
    let n = c.compress_blosc1(src, &mut dst).unwrap();
    assert!(n > 0);
    dst.truncate(n);
    dst
}

/// `chunk` decoded by the reference and by us into destinations of `n` bytes that hold `fill`
/// before the call, with `nthreads` threads.
type Decoded = Result<Vec<u8>, i32>;
fn both_into(chunk: &[u8], n: usize, fill: u8, nthreads: i16) -> (Decoded, Decoded) {
    let r = reference();
    let mut theirs = vec![fill; n];
    let mut dparams = b2frame::capi::types::BLOSC2_DPARAMS_DEFAULTS;
    dparams.nthreads = nthreads;
    // SAFETY: buffers sized as declared; the context is freed before returning.
    let k = unsafe {
        let ctx = (r.create_dctx)(dparams);
        let k = (r.decompress_ctx)(
            ctx,
            chunk.as_ptr() as *const c_void,
            chunk.len() as i32,
            theirs.as_mut_ptr() as *mut c_void,
            n as i32,
        );
        (r.free_ctx)(ctx);
        k
    };
    let theirs = if k < 0 {
        Err(k)
    } else {
        theirs.truncate(k as usize);
        Ok(theirs)
    };
    let mut d = Decompressor::new(DParams { nthreads }, no_hooks()).unwrap();
    let mut out = vec![fill; n];
    let ours = d
        .decompress(chunk, &mut out)
        .map(|k| {
            out.truncate(k);
            out
        })
        .map_err(|e| e.code());
    (theirs, ours)
}

fn ours_decode(chunk: &[u8], n: usize) -> Result<Vec<u8>, i32> {
    let mut d = Decompressor::new(DParams::default(), no_hooks()).unwrap();
    let mut out = vec![0u8; n];
    let k = d.decompress(chunk, &mut out).map_err(|e| e.code())?;
    out.truncate(k);
    Ok(out)
}

#[test]
fn blosc1_headers_match_and_cross_decode() {
    common::reference::set_env_for_reference("BLOSC_BLOSC1_COMPAT", Some("1"));
    let mut checked = 0;
    let mut identical = 0;
    for &(kind, size) in &[
        ("f64_series", 200_000usize),
        ("text", 70_001),
        ("random", 5000),
        ("small_int", 100),
        ("seq_i32", 20),
    ] {
        for &ts in &[1, 4, 8] {
            for &doshuffle in &[0, 1, 2] {
                for &clevel in &[0, 5, 9] {
                    let data = data_kind(kind, size, ts as u64);
                    let theirs = ref_blosc1(clevel, doshuffle, ts, &data);
                    let ours = ours_blosc1(clevel as u8, doshuffle, ts, &data);
                    let ctx = format!("{kind} {size} ts {ts} shuffle {doshuffle} clevel {clevel}");
                    assert!(theirs[2] & 0x05 != 0x05, "16-byte header expected: {ctx}");
                    assert_eq!(ours[..16], theirs[..16], "header: {ctx}");
                    identical += (ours == theirs) as usize;
                    assert!(ref_decompress(&ours, size, 1).unwrap() == data, "{ctx}");
                    assert!(ours_decode(&theirs, size).unwrap() == data, "{ctx}");
                    // Older format versions of the same bytes decode the same in both.
                    // Version 2 bitshuffle leaves the bytes after the last whole item of a
                    // block as the destination held them, in both libraries
                    // (docs/divergences.md#15-bytedelta_buggy-and-int_trunc-write-the-trailing-bytes): a
                    // destination holding other bytes than zeros shows it.
                    for v in [1u8, 2, 3, 4] {
                        let mut old = theirs.clone();
                        old[0] = v;
                        let a = ref_decompress(&old, size, 1);
                        let b = ours_decode(&old, size);
                        assert!(a == b, "version {v}: {ctx}");
                        for (fill, nt) in [(0xA5u8, 1i16), (0x5A, 2)] {
                            let (a, b) = both_into(&old, size, fill, nt);
                            assert!(a == b, "version {v}, {nt} threads, fill {fill:#x}: {ctx}");
                        }
                    }
                    checked += 1;
                }
            }
        }
    }
    common::reference::set_env_for_reference("BLOSC_BLOSC1_COMPAT", None);
    println!("blosc1 headers: {checked} cases, {identical} byte-identical");
    assert_eq!(identical, checked);
}
