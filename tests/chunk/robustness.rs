//! Bad input never panics: randomly corrupted chunks of every kind go through every reader
//! entry point and come back as `Ok` or an `Err` code, never a panic (overflow checks are on
//! in test builds).
use crate::common;

use b2frame::chunk::header::{cbuffer_sizes, ChunkHeader};
use b2frame::chunk::{no_hooks, special, CParams, Compressor, DParams, Decompressor};
use common::{data_kind, Rng};

fn chunks() -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let data = data_kind("f64_series", 20_000, 1);
    for (codec, filters, clevel, dict) in [
        (0u8, [0, 0, 0, 0, 0, 1], 5u8, false),
        (1, [0, 0, 0, 0, 3, 1], 5, false),
        (5, [0, 0, 0, 0, 0, 2], 5, true),
        (4, [0, 0, 0, 0, 0, 0], 1, false),
        (0, [0, 0, 0, 0, 0, 1], 0, false),
    ] {
        let cp = CParams {
            compcode: codec,
            clevel,
            filters,
            use_dict: dict,
            blocksize: 4096,
            ..Default::default()
        };
        let mut c = Compressor::new(cp, no_hooks()).unwrap();
        let mut dst = vec![0u8; data.len() + 32];
        let n = c.compress(&data, &mut dst).unwrap();
        v.push(dst[..n].to_vec());
        let mut dst = vec![0u8; data.len() + 64];
        let n = c.compress_blosc1(&data, &mut dst).unwrap();
        v.push(dst[..n].to_vec());
        let blocks: Vec<&[u8]> = data.chunks(3000).collect();
        let mut dst = vec![0u8; data.len() + 1024];
        let n = c.vlcompress(&blocks, &mut dst).unwrap();
        v.push(dst[..n].to_vec());
    }
    let mut b = [0u8; 40];
    let cp = CParams::default();
    let n = special::repeatval(&cp, 800, &mut b, &[1; 8]).unwrap();
    v.push(b[..n].to_vec());
    let n = special::nans(&cp, 800, &mut b).unwrap();
    v.push(b[..n].to_vec());
    v
}

#[test]
fn corrupted_chunks_never_panic() {
    let base = chunks();
    let mut rng = Rng::new(4242);
    let mut d = Decompressor::new(DParams::default(), no_hooks()).unwrap();
    let mut d2 = Decompressor::new(DParams { nthreads: 2 }, no_hooks()).unwrap();
    let mut out = vec![0u8; 1 << 16];
    let mut errors = 0;
    for i in 0..30_000 {
        let mut f = base[i % base.len()].clone();
        let flips = 1 + rng.below(4);
        for _ in 0..flips {
            let at = if rng.below(2) == 0 {
                rng.below(32.min(f.len() as u64)) as usize
            } else {
                rng.below(f.len() as u64) as usize
            };
            f[at] = match rng.below(4) {
                0 => 0,
                1 => 0xff,
                _ => rng.next_u64() as u8,
            };
        }
        if rng.below(8) == 0 {
            let cut = rng.below(f.len() as u64) as usize;
            f.truncate(cut);
        }
        let _ = ChunkHeader::parse(&f);
        let _ = cbuffer_sizes(&f);
        let r1 = d.decompress(&f, &mut out);
        let r2 = d2.decompress(&f, &mut out);
        assert_eq!(r1.is_ok(), r2.is_ok(), "nthreads changes the outcome");
        errors += r1.is_err() as usize;
        let start = rng.below(3000) as i32;
        let _ = d.getitem(&f, start, rng.below(3000) as i32, &mut out);
        let _ = d.getitem_bytes(&f, start * 8, 64, &mut out);
        let _ = d.decompress_block(&f, rng.below(8) as i32, &mut out);
        let _ = d.vldecompress(&f);
        let _ = d.vldecompress_block(&f, rng.below(8) as i32);
        d.set_maskout(&[false, true, false, true, false]);
        let _ = d.decompress(&f, &mut out);
    }
    println!("corrupted chunks: 30000 tried, {errors} rejected");
    assert!(errors > 5000);
}
