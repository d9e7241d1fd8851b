//! Arbitrary data and parameters (codec, clevel, dictionary, typesize 1..=300, any filter
//! pipeline incl. DELTA, TRUNC_PREC and BYTEDELTA with any meta, splitmode, blocksize, nthreads, Blosc1
//! header) → compress → decompress must give the input back (TRUNC_PREC is lossy: then only
//! the size is checked), and sizes must obey the format's rules: into `nbytes + 32` bytes a
//! chunk always fits (c-blosc2 falls back to a memcpyed chunk), its header says the truth, and
//! a smaller destination gives either a chunk that fits and decodes or "does not fit" (0).
//! A VL-block chunk made from the same data cut in pieces must give the pieces back.
//!
//! Input: 20 parameter bytes, then the data.
//!
//! Shared by the fuzz target and by tests/fuzz_regressions.rs (regression inputs).
use b2frame::chunk::header::{filters_to_flags, legacy_filters, ChunkHeader};
use b2frame::chunk::{no_hooks, CParams, Compressor, DParams, Decompressor};
use b2frame::filters;

use super::shared::{pool2, CODECS};

fn decode(chunk: &[u8], nbytes: usize, nthreads: i16) -> Vec<u8> {
    let mut d = Decompressor::new(DParams { nthreads }, no_hooks()).expect("decompressor");
    if nthreads == 2 {
        d.set_pool(pool2()).expect("pool of the right size");
    }
    let mut out = vec![0u8; nbytes];
    let n = d
        .decompress(chunk, &mut out)
        .unwrap_or_else(|e| panic!("decoding our own chunk failed: {e:?}"));
    assert_eq!(n, nbytes, "decoded size");
    out
}

/// Runs one fuzz input; panics on a violated property.
pub fn run(input: &[u8]) {
    if input.len() < 20 {
        return;
    }
    let (p, data) = input.split_at(20);
    let nthreads = 1 + ((p[0] >> 6) & 1) as i16;
    let blosc1 = p[0] & 0x80 != 0;
    let mut filters_ids = [0u8; 6];
    let mut filters_meta = [0u8; 6];
    for i in 0..6 {
        // NOFILTER, SHUFFLE, BITSHUFFLE, DELTA, TRUNC_PREC, and the plugin filters that need
        // no super-chunk: BYTEDELTA_BUGGY and BYTEDELTA (with meta 0 they fail without one).
        filters_ids[i] = [0, 1, 2, 3, 4, 34, 35][usize::from(p[6 + i] % 7)];
        filters_meta[i] = p[12 + i];
    }
    if blosc1 {
        // A 16-byte header describes the pipeline by flag bits only (one DELTA in slot 4, a
        // shuffle in slot 5), so other pipelines cannot be decoded from it (open finding,
        // tests/fuzz_regressions.rs::blosc1_header_with_unexpressible_pipeline).
        filters_ids = legacy_filters(filters_to_flags(&filters_ids));
        filters_meta = [0; 6];
    }
    let cp = CParams {
        compcode: CODECS[(p[0] & 7) as usize % 5],
        compcode_meta: 0,
        clevel: p[1] % 10,
        use_dict: p[0] & 8 != 0,
        typesize: (u16::from_le_bytes([p[2], p[3]]) % 300) as i32 + 1,
        nthreads,
        blocksize: u16::from_le_bytes([p[4], p[5]]) as i32 & 0x7fff,
        splitmode: ((p[0] >> 4) & 3) as i32 + 1,
        filters: filters_ids,
        filters_meta,
    };
    let lossy = filters_ids.contains(&filters::TRUNC_PREC);
    let hlen = if blosc1 { 16 } else { 32 };
    let mut c = Compressor::new(cp, no_hooks()).expect("compressor");
    if nthreads == 2 {
        c.set_pool(pool2()).expect("pool of the right size");
    }
    let mut dst = vec![0u8; data.len() + hlen];
    let res = if blosc1 {
        c.compress_blosc1(data, &mut dst)
    } else {
        c.compress(data, &mut dst)
    };
    let Ok(n) = res else {
        // Parameter errors (dictionary with a codec without one, TRUNC_PREC on a typesize it
        // does not support...) are fine; everything else must work.
        return;
    };
    assert!(n > 0, "a chunk always fits in nbytes + header ({cp:?})");
    assert!(n <= data.len() + hlen, "cbytes {n} > nbytes + {hlen}");
    let chunk = &dst[..n];
    let h = ChunkHeader::read(chunk, !blosc1).expect("our header parses");
    assert_eq!(h.nbytes as usize, data.len());
    assert_eq!(h.cbytes as usize, n);
    let expect_ts = if cp.typesize > 255 { 1 } else { cp.typesize };
    assert_eq!(h.typesize as i32, expect_ts);
    let out = decode(chunk, data.len(), 1 + (p[18] & 1) as i16);
    if !lossy {
        assert!(out == data, "round trip differs ({cp:?})");
    }

    // A smaller destination: either "does not fit" or a chunk that fits and decodes the same.
    let small = (u16::from_le_bytes([p[18], p[19]]) as usize) % (data.len() + hlen + 1);
    let mut dst2 = vec![0u8; small];
    let r2 = if blosc1 {
        c.compress_blosc1(data, &mut dst2)
    } else {
        c.compress(data, &mut dst2)
    };
    if let Ok(m) = r2 {
        if m > 0 {
            assert!(m <= small);
            let out2 = decode(&dst2[..m], data.len(), nthreads);
            if !lossy {
                assert!(out2 == data, "small-destination chunk decodes differently");
            }
        }
    }

    // The same data cut in pieces as a VL-block chunk.
    if !blosc1 && !data.is_empty() && p[19] & 1 == 0 {
        let step = 1 + p[18] as usize;
        let pieces: Vec<&[u8]> = data.chunks(step).take(64).collect();
        let total: usize = pieces.iter().map(|s| s.len()).sum();
        let mut vdst = vec![0u8; total + 32 + 64 * 16 + 1024];
        if let Ok(m) = c.vlcompress(&pieces, &mut vdst) {
            if m > 0 {
                let mut d = Decompressor::new(DParams { nthreads }, no_hooks()).unwrap();
                if nthreads == 2 {
                    d.set_pool(pool2()).expect("pool of the right size");
                }
                let blocks = d
                    .vldecompress(&vdst[..m])
                    .unwrap_or_else(|e| panic!("decoding our VL chunk failed: {e:?}"));
                assert_eq!(blocks.len(), pieces.len());
                if !lossy {
                    for (b, s) in blocks.iter().zip(&pieces) {
                        assert!(b[..] == s[..], "VL block differs");
                    }
                    let one =
                        d.vldecompress_block(&vdst[..m], (p[19] >> 1) as i32 % pieces.len() as i32);
                    let j = (p[19] >> 1) as usize % pieces.len();
                    assert_eq!(one.as_deref().ok(), Some(pieces[j]));
                }
            }
        }
    }
}
