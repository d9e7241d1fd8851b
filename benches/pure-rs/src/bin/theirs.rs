//! The cases of `common` with blosc2-pure-rs 0.2.4.

#[path = "../common.rs"]
mod common;

use blosc2_pure_rs::constants::{BLOSC_BLOSCLZ, BLOSC_LZ4, BLOSC_ZSTD};
use blosc2_pure_rs::schunk::Schunk;
use blosc2_pure_rs::{B2ndArray, B2ndMeta, CContext, CParams, DContext, DParams};
use common::*;

fn main() {
    let reps: usize = std::env::args().nth(1).map_or(15, |a| a.parse().unwrap());
    let data = bytes(&floats(CHUNK_ITEMS));
    for (name, codec) in [
        ("blosclz", BLOSC_BLOSCLZ),
        ("lz4", BLOSC_LZ4),
        ("zstd", BLOSC_ZSTD),
    ] {
        let cp = CParams {
            compcode: codec,
            clevel: 5,
            typesize: 8,
            ..CParams::default()
        };
        let cctx = CContext::new(cp);
        let dctx = DContext::new(DParams::default());
        let chunk = cctx.compress(&data).unwrap();
        assert_eq!(dctx.decompress(&chunk).unwrap(), data);
        report(
            &format!("chunk compress {name} 4 MiB"),
            median_ns(reps, || {
                std::hint::black_box(cctx.compress(&data).unwrap());
            }),
        );
        report(
            &format!("chunk decompress {name} 4 MiB"),
            median_ns(reps, || {
                std::hint::black_box(dctx.decompress(&chunk).unwrap());
            }),
        );
        let mut out = vec![0u8; data.len()];
        report(
            &format!("chunk decompress_into {name} 4 MiB"),
            median_ns(reps, || {
                dctx.decompress_into(&chunk, &mut out).unwrap();
                std::hint::black_box(&out);
            }),
        );
    }

    let dir = scratch("theirs");
    let path = dir.join("frame.b2frame");
    let cp = CParams {
        compcode: BLOSC_LZ4,
        typesize: 8,
        ..CParams::default()
    };
    let mut sc = Schunk::new(cp, DParams::default());
    for _ in 0..FRAME_CHUNKS {
        sc.append_buffer(&data).unwrap();
    }
    sc.to_file(path.to_str().unwrap()).unwrap();
    drop(sc);
    report(
        "frame open + read 64 MiB",
        median_ns(reps, || {
            let sc = Schunk::open(path.to_str().unwrap()).unwrap();
            let n: usize = (0..sc.nchunks())
                .map(|i| sc.decompress_chunk(i).unwrap().len())
                .sum();
            assert_eq!(n, FRAME_CHUNKS * data.len());
        }),
    );

    let mut out = vec![0u8; data.len()];
    report(
        "frame open + read into one buffer 64 MiB",
        median_ns(reps, || {
            let sc = Schunk::open(path.to_str().unwrap()).unwrap();
            let n: usize = (0..sc.nchunks())
                .map(|i| sc.decompress_chunk_into(i, &mut out).unwrap())
                .sum();
            assert_eq!(n, FRAME_CHUNKS * data.len());
        }),
    );

    let a = dir.join("a.b2nd");
    let values = floats(SHAPE[0] * SHAPE[1]);
    let meta = B2ndMeta::new(
        SHAPE.iter().map(|&v| v as i64).collect(),
        CHUNKSHAPE.iter().map(|&v| v as i32).collect(),
        BLOCKSHAPE.iter().map(|&v| v as i32).collect(),
        "<f8",
        0,
    )
    .unwrap();
    let arr = B2ndArray::from_dense_buffer(
        meta,
        &bytes(&values),
        CParams::default(),
        DParams::default(),
    )
    .unwrap();
    arr.save(&a).unwrap();
    drop(arr);
    let (start, stop) = (START.map(|v| v as i64), STOP.map(|v| v as i64));
    report(
        "b2nd open + slice 300x300 of 2000x2000 f64",
        median_ns(reps, || {
            let part = B2ndArray::open(&a)
                .unwrap()
                .get_slice(&start, &stop)
                .unwrap();
            let first = f64::from_le_bytes(part[..8].try_into().unwrap());
            assert_eq!(first, values[START[0] * SHAPE[1] + START[1]]);
        }),
    );
    let _ = std::fs::remove_dir_all(&dir);
}
