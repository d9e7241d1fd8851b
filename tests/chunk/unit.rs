//! Chunk engine: exact sizes, round trips, error codes for forged headers, getitem edges,
//! maskout, VL blocks and thread-count independence (no reference library needed).
use crate::common;

use b2frame::chunk::header::{cbuffer_sizes, ChunkHeader};
use b2frame::chunk::{
    compress_vec, decompress_vec, no_hooks, special, vlchunk_nblocks, CParams, Compressor, DParams,
    Decompressor,
};
use b2frame::Error;
use common::data_kind;

fn cp(compcode: u8, clevel: u8, typesize: i32, filters: [u8; 6]) -> CParams {
    CParams {
        compcode,
        clevel,
        typesize,
        filters,
        ..Default::default()
    }
}

/// Decodes and reports the decoded length (keeps assertion messages short).
fn dec(chunk: &[u8], n: usize) -> Result<usize, Error> {
    dec_full(chunk, n).map(|v| v.len())
}

fn dec_full(chunk: &[u8], n: usize) -> Result<Vec<u8>, Error> {
    let mut d = Decompressor::new(DParams::default(), no_hooks()).unwrap();
    let mut out = vec![0u8; n];
    let k = d.decompress(chunk, &mut out)?;
    out.truncate(k);
    Ok(out)
}

#[test]
fn exact_sizes() {
    let c = CParams::default();
    // 1-byte input: memcpyed, 33 bytes
    let ch = compress_vec(&c, &[7]).unwrap();
    assert_eq!(ch.len(), 33);
    assert_eq!(ch[2] & 0x02, 0x02);
    assert_eq!(decompress_vec(&ch).unwrap(), vec![7]);
    // empty input: 32 bytes
    let ch = compress_vec(&c, &[]).unwrap();
    assert_eq!(ch.len(), 32);
    assert_eq!(decompress_vec(&ch).unwrap(), Vec::<u8>::new());
    // clevel 0: memcpyed nbytes + 32
    let data = data_kind("text", 5000, 1);
    let ch = compress_vec(&cp(0, 0, 8, [0, 0, 0, 0, 0, 1]), &data).unwrap();
    assert_eq!(ch.len(), 5032);
    assert_eq!(ch[2], 0x07);
    assert_eq!(decompress_vec(&ch).unwrap(), data);
    // all zeros: 32-byte SPECIAL_ZERO
    let z = vec![0u8; 100_000];
    let ch = compress_vec(&c, &z).unwrap();
    assert_eq!(ch.len(), 32);
    assert_eq!(ch[31] >> 4, 1);
    assert_eq!(decompress_vec(&ch).unwrap(), z);
    // specials
    let mut buf = [0u8; 64];
    assert_eq!(special::zeros(&c, 800, &mut buf).unwrap(), 32);
    assert_eq!(decompress_vec(&buf[..32]).unwrap(), vec![0u8; 800]);
    assert_eq!(
        special::repeatval(&c, 800, &mut buf, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap(),
        40
    );
    let v = decompress_vec(&buf[..40]).unwrap();
    assert_eq!(v.len(), 800);
    assert!(v.chunks(8).all(|c| c == [1, 2, 3, 4, 5, 6, 7, 8]));
    assert_eq!(special::nans(&c, 800, &mut buf).unwrap(), 32);
    let v = decompress_vec(&buf[..32]).unwrap();
    assert!(v
        .chunks(8)
        .all(|c| f64::from_le_bytes(c.try_into().unwrap()).is_nan()));
    assert_eq!(special::uninit(&c, 800, &mut buf).unwrap(), 32);
    let mut d = Decompressor::new(DParams::default(), no_hooks()).unwrap();
    let mut out = vec![9u8; 800];
    assert_eq!(d.decompress(&buf[..32], &mut out).unwrap(), 800);
    assert!(out.iter().all(|&b| b == 9));
}

#[test]
fn incompressible_falls_back_to_memcpy_only_when_needed() {
    let data = data_kind("random", 10_000, 3);
    let mut c = Compressor::new(CParams::default(), no_hooks()).unwrap();
    let mut dst = vec![0u8; 10_000 + 32 + 4096];
    let n = c.compress(&data, &mut dst).unwrap();
    // 32 header + 4 bstarts + 8 streams x (4 + 1250 raw)
    assert_eq!(n, 10_068);
    assert_eq!(dec_full(&dst[..n], 10_000).unwrap(), data);
    let mut dst = vec![0u8; 10_000 + 32];
    let n = c.compress(&data, &mut dst).unwrap();
    assert_eq!(n, 10_032);
    assert_eq!(dst[2] & 2, 2);
    let mut dst = vec![0u8; 10_000 + 31];
    assert_eq!(c.compress(&data, &mut dst).unwrap(), 0);
    assert_eq!(
        c.compress(&data, &mut [0u8; 31]),
        Err(Error::MaxBufsizeExceeded)
    );
}

#[test]
fn round_trips_all_codecs_and_filters() {
    let pipelines = [
        [0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 1],
        [0, 0, 0, 0, 0, 2],
        [0, 0, 0, 0, 3, 1],
    ];
    for &codec in &[0u8, 1, 2, 4, 5] {
        for f in pipelines {
            for &ts in &[1, 2, 4, 8, 300] {
                for kind in ["f64_series", "text", "small_int", "random"] {
                    let data = data_kind(kind, 70_013, ts as u64);
                    let ch = compress_vec(&cp(codec, 5, ts, f), &data).unwrap();
                    assert_eq!(
                        decompress_vec(&ch).unwrap(),
                        data,
                        "codec {codec} filters {f:?} ts {ts} {kind}"
                    );
                }
            }
        }
    }
}

#[test]
fn nthreads_do_not_change_bytes() {
    let data = data_kind("f64_series", 1 << 20, 5);
    for &codec in &[0u8, 1, 5] {
        for f in [[0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 3, 1]] {
            let mut c1 = cp(codec, 5, 8, f);
            c1.blocksize = 32 * 1024;
            let one = compress_vec(&c1, &data).unwrap();
            for nt in [2i16, 4] {
                let mut cn = c1;
                cn.nthreads = nt;
                assert_eq!(compress_vec(&cn, &data).unwrap(), one, "nthreads {nt}");
                let mut d = Decompressor::new(DParams { nthreads: nt }, no_hooks()).unwrap();
                let mut out = vec![0u8; data.len()];
                assert_eq!(d.decompress(&one, &mut out).unwrap(), data.len());
                assert_eq!(out, data);
            }
        }
    }
}

#[test]
fn getitem_at_edges() {
    let data = data_kind("seq_i32", 100_000, 1);
    for f in [[0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 3, 1], [0, 0, 0, 0, 0, 2]] {
        let mut c = cp(0, 5, 4, f);
        c.blocksize = 4096;
        let ch = compress_vec(&c, &data).unwrap();
        let mut d = Decompressor::new(DParams::default(), no_hooks()).unwrap();
        let nitems = 25_000;
        for (start, n) in [
            (0, 1),
            (0, nitems),
            (1023, 2),
            (1024, 1024),
            (24_999, 1),
            (5000, 7777),
        ] {
            let mut out = vec![0u8; n as usize * 4];
            assert_eq!(d.getitem(&ch, start, n, &mut out).unwrap(), out.len());
            assert_eq!(out, data[start as usize * 4..(start + n) as usize * 4]);
        }
        let mut out = vec![0u8; 8];
        assert_eq!(
            d.getitem(&ch, nitems, 1, &mut out),
            Err(Error::InvalidParam)
        );
        assert_eq!(d.getitem(&ch, -1, 1, &mut out), Err(Error::InvalidParam));
        assert_eq!(d.getitem(&ch, 0, 3, &mut out), Err(Error::WriteBuffer));
        assert_eq!(d.getitem(&ch, 0, 0, &mut out), Ok(0));
        assert_eq!(
            d.getitem_bytes(&ch, 2, 4, &mut out),
            Err(Error::InvalidParam)
        );
        assert_eq!(d.getitem_bytes(&ch, 4000, 8, &mut out).unwrap(), 8);
        assert_eq!(out, data[4000..4008]);
    }
}

#[test]
fn maskout_skips_blocks_once() {
    let data = data_kind("seq_i32", 40_000, 1);
    let mut c = cp(0, 5, 4, [0, 0, 0, 0, 0, 1]);
    c.blocksize = 10_000;
    let ch = compress_vec(&c, &data).unwrap();
    let mut d = Decompressor::new(DParams::default(), no_hooks()).unwrap();
    let mut out = vec![0xEEu8; 40_000];
    d.set_maskout(&[false, true, false, true]);
    assert_eq!(d.decompress(&ch, &mut out).unwrap(), 40_000);
    assert_eq!(out[..10_000], data[..10_000]);
    assert!(out[10_000..20_000].iter().all(|&b| b == 0xEE));
    assert_eq!(out[20_000..30_000], data[20_000..30_000]);
    assert_eq!(d.decompress(&ch, &mut out).unwrap(), 40_000);
    assert_eq!(out, data);
    d.set_maskout(&[true]);
    assert_eq!(d.decompress(&ch, &mut out), Err(Error::Data));
}

#[test]
fn vl_blocks_round_trip() {
    let blocks: Vec<Vec<u8>> = (0..10)
        .map(|i| data_kind("text", 1000 + 777 * i, i as u64))
        .collect();
    let refs: Vec<&[u8]> = blocks.iter().map(|b| &b[..]).collect();
    for nt in [1i16, 3] {
        for f in [[0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 3, 0]] {
            let mut p = cp(5, 5, 4, f);
            p.nthreads = nt;
            let mut c = Compressor::new(p, no_hooks()).unwrap();
            let mut dst = vec![0u8; 100_000];
            let n = c.vlcompress(&refs, &mut dst).unwrap();
            assert!(n > 0);
            let ch = &dst[..n];
            assert_eq!(ch[0], 6);
            assert_eq!(vlchunk_nblocks(ch).unwrap(), 10);
            let mut d = Decompressor::new(DParams { nthreads: nt }, no_hooks()).unwrap();
            assert_eq!(d.vldecompress(ch).unwrap(), blocks);
            assert_eq!(d.vldecompress_block(ch, 7).unwrap(), blocks[7]);
            assert_eq!(d.vldecompress_block(ch, 10), Err(Error::InvalidParam));
            let flat: Vec<u8> = blocks.concat();
            assert_eq!(decompress_vec(ch).unwrap(), flat);
            let mut out = [0u8; 4];
            assert_eq!(d.getitem(ch, 0, 1, &mut out), Err(Error::InvalidParam));
        }
    }
    let plain = compress_vec(&CParams::default(), &[1u8; 100]).unwrap();
    assert_eq!(vlchunk_nblocks(&plain), Err(Error::InvalidParam));
}

#[test]
fn forged_headers_give_reference_codes() {
    let data = data_kind("seq_i32", 50_000, 2);
    let mut c = cp(0, 5, 4, [0, 0, 0, 0, 0, 1]);
    c.blocksize = 8192;
    let ch = compress_vec(&c, &data).unwrap();
    let n = data.len();
    let forge = |at: usize, bytes: &[u8]| {
        let mut v = ch.clone();
        v[at..at + bytes.len()].copy_from_slice(bytes);
        v
    };
    assert_eq!(dec(&ch[..15], n), Err(Error::ReadBuffer));
    assert_eq!(dec(&ch[..31], n), Err(Error::ReadBuffer));
    assert_eq!(dec(&ch[..ch.len() - 1], n), Err(Error::InvalidHeader));
    assert_eq!(dec(&ch, n - 1), Err(Error::WriteBuffer));
    assert_eq!(
        dec(&forge(8, &0i32.to_le_bytes()), n),
        Err(Error::InvalidHeader)
    );
    assert_eq!(dec(&forge(3, &[0]), n), Err(Error::InvalidHeader));
    assert_eq!(
        dec(&forge(12, &8i32.to_le_bytes()), n),
        Err(Error::InvalidHeader)
    );
    assert_eq!(dec(&forge(31, &[0x50]), n), Err(Error::Data));
    assert_eq!(dec(&forge(2, &[ch[2] | 2]), n), Err(Error::Data));
    // a bstart pointing outside the chunk
    assert_eq!(dec(&forge(32, &(-5i32).to_le_bytes()), n), Err(Error::Data));
    assert_eq!(
        dec(&forge(32, &1_000_000i32.to_le_bytes()), n),
        Err(Error::Data)
    );
    // a stream size larger than what is left
    let b0 = i32::from_le_bytes(ch[32..36].try_into().unwrap()) as usize;
    assert_eq!(
        dec(&forge(b0, &1_000_000i32.to_le_bytes()), n),
        Err(Error::ReadBuffer)
    );
    // a negative stream size must be followed by a run token with bit 0 set
    let mut v = forge(b0, &(-3i32).to_le_bytes());
    v[b0 + 4] = 0;
    assert_eq!(dec(&v, n), Err(Error::RunLength));
    // future version with unknown flags2 bits
    let mut v = forge(0, &[9]);
    v[30] = 0x80;
    assert_eq!(dec(&v, n), Err(Error::VersionSupport));
    assert_eq!(
        cbuffer_sizes(&ch).unwrap(),
        (n as i32, ch.len() as i32, 8192)
    );
    let h = ChunkHeader::parse(&ch).unwrap();
    assert_eq!(
        (h.typesize, h.nblocks(), h.leftover()),
        (4, 7, 50_000 - 6 * 8192)
    );
}

#[test]
fn contexts_on_different_threads_do_not_interfere() {
    let handles: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let data = data_kind(
                    ["f64_series", "text", "small_int", "seq_i32"][t],
                    300_000,
                    t as u64,
                );
                let mut p = cp([0u8, 1, 5, 4][t], 5, 8, [0, 0, 0, 0, 0, 1]);
                p.nthreads = 2;
                p.blocksize = 16 * 1024;
                let mut c = Compressor::new(p, no_hooks()).unwrap();
                let mut d = Decompressor::new(DParams { nthreads: 2 }, no_hooks()).unwrap();
                let first = {
                    let mut dst = vec![0u8; data.len() + 32];
                    let n = c.compress(&data, &mut dst).unwrap();
                    dst.truncate(n);
                    dst
                };
                for _ in 0..20 {
                    let mut dst = vec![0u8; data.len() + 32];
                    let n = c.compress(&data, &mut dst).unwrap();
                    assert!(dst[..n] == first[..]);
                    let mut out = vec![0u8; data.len()];
                    assert_eq!(d.decompress(&dst[..n], &mut out).unwrap(), data.len());
                    assert!(out == data);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn one_pool_can_serve_several_contexts() {
    let pool = b2frame::pool::Pool::new(2).unwrap();
    let data = data_kind("f64_series", 500_000, 8);
    let mut p = cp(1, 5, 8, [0, 0, 0, 0, 0, 1]);
    p.nthreads = 2;
    p.blocksize = 32 * 1024;
    let mut c1 = Compressor::new(p, no_hooks()).unwrap();
    let mut c2 = Compressor::new(p, no_hooks()).unwrap();
    c1.set_pool(pool.clone()).unwrap();
    c2.set_pool(pool.clone()).unwrap();
    let mut d = Decompressor::new(DParams { nthreads: 2 }, no_hooks()).unwrap();
    d.set_pool(pool.clone()).unwrap();
    let mut single = Decompressor::new(DParams::default(), no_hooks()).unwrap();
    assert_eq!(
        single.set_pool(pool.clone()),
        Err(Error::InvalidParam),
        "pool size must match nthreads"
    );
    let mut a = vec![0u8; data.len() + 32];
    let mut b = vec![0u8; data.len() + 32];
    let na = c1.compress(&data, &mut a).unwrap();
    let nb = c2.compress(&data, &mut b).unwrap();
    assert!(a[..na] == b[..nb]);
    let mut out = vec![0u8; data.len()];
    assert_eq!(d.decompress(&a[..na], &mut out).unwrap(), data.len());
    assert!(out == data);
    // Changing nthreads drops the shared pool and still gives the same bytes.
    p.nthreads = 3;
    c1.set_cparams(p).unwrap();
    let nc = c1.compress(&data, &mut b).unwrap();
    assert!(a[..na] == b[..nc]);
    d.set_dparams(DParams { nthreads: 1 }).unwrap();
    assert_eq!(d.decompress(&a[..na], &mut out).unwrap(), data.len());
    assert_eq!(
        Compressor::new(CParams { nthreads: 0, ..p }, no_hooks()).err(),
        Some(Error::InvalidParam)
    );
}
