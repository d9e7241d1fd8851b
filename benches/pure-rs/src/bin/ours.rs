//! The cases of `common` with blosc2-frame.

#[path = "../common.rs"]
mod common;

use blosc2_frame::{Array, CParams, Codec, SChunk, Storage};
use common::*;

fn main() {
    let reps: usize = std::env::args().nth(1).map_or(15, |a| a.parse().unwrap());
    let data = bytes(&floats(CHUNK_ITEMS));
    for (name, codec) in [
        ("blosclz", Codec::BloscLz),
        ("lz4", Codec::Lz4),
        ("zstd", Codec::Zstd),
    ] {
        let cp = CParams::default().codec(codec).clevel(5).typesize(8);
        let chunk = blosc2_frame::compress(&data, &cp).unwrap();
        assert_eq!(blosc2_frame::decompress(&chunk).unwrap(), data);
        report(
            &format!("chunk compress {name} 4 MiB"),
            median_ns(reps, || {
                std::hint::black_box(blosc2_frame::compress(&data, &cp).unwrap());
            }),
        );
        report(
            &format!("chunk decompress {name} 4 MiB"),
            median_ns(reps, || {
                std::hint::black_box(blosc2_frame::decompress(&chunk).unwrap());
            }),
        );
        let mut out = vec![0u8; data.len()];
        report(
            &format!("chunk decompress_into {name} 4 MiB"),
            median_ns(reps, || {
                blosc2_frame::decompress_into(&chunk, &mut out).unwrap();
                std::hint::black_box(&out);
            }),
        );
    }

    let dir = scratch("ours");
    let path = dir.join("frame.b2frame");
    let cp = CParams::default().codec(Codec::Lz4).typesize(8);
    let mut sc = SChunk::create(Storage::file(&path), &cp).unwrap();
    for _ in 0..FRAME_CHUNKS {
        sc.append(&data).unwrap();
    }
    drop(sc);
    report(
        "frame open + read 64 MiB",
        median_ns(reps, || {
            let sc = SChunk::open(&path).unwrap();
            let n: usize = sc.chunks().map(|c| c.unwrap().len()).sum();
            assert_eq!(n, FRAME_CHUNKS * data.len());
        }),
    );

    let mut out = vec![0u8; data.len()];
    report(
        "frame open + read into one buffer 64 MiB",
        median_ns(reps, || {
            let sc = SChunk::open(&path).unwrap();
            let n: usize = (0..sc.nchunks())
                .map(|i| sc.decompress_chunk_into(i, &mut out).unwrap())
                .sum();
            assert_eq!(n, FRAME_CHUNKS * data.len());
        }),
    );

    let a = dir.join("a.b2nd");
    let values = floats(SHAPE[0] * SHAPE[1]);
    let arr = Array::<f64>::from_slice(
        Storage::file(&a),
        &SHAPE,
        &CHUNKSHAPE,
        &BLOCKSHAPE,
        &CParams::default(),
        &values,
    )
    .unwrap();
    drop(arr);
    let ranges = [START[0]..STOP[0], START[1]..STOP[1]];
    report(
        "b2nd open + slice 300x300 of 2000x2000 f64",
        median_ns(reps, || {
            let part = Array::<f64>::open(&a).unwrap().slice(&ranges).unwrap();
            assert_eq!(part[0], values[START[0] * SHAPE[1] + START[1]]);
        }),
    );
    let _ = std::fs::remove_dir_all(&dir);
}
