//! What both bench binaries share: the data, the cases and the timing. Each binary runs the
//! same cases with its own library and prints one line per case, `case<TAB>median ns`.

use std::time::Instant;

/// 4 MiB of `f64` on a coarse grid (what shuffle and a fast codec do well on).
pub fn floats(n: usize) -> Vec<f64> {
    (0..n).map(|i| ((i % 5000) as f64) * 0.25).collect()
}

/// The little-endian bytes of `v`.
pub fn bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Items of one chunk (4 MiB).
pub const CHUNK_ITEMS: usize = 512 * 1024;
/// Chunks of the frame case (64 MiB).
pub const FRAME_CHUNKS: usize = 16;
/// The b2nd case: shape, chunk shape, block shape and the slice read.
pub const SHAPE: [usize; 2] = [2000, 2000];
pub const CHUNKSHAPE: [usize; 2] = [500, 500];
pub const BLOCKSHAPE: [usize; 2] = [100, 100];
pub const START: [usize; 2] = [123, 457];
pub const STOP: [usize; 2] = [423, 757];

/// The median time of `reps` runs of `f`, in nanoseconds (one warm-up run first).
pub fn median_ns(reps: usize, mut f: impl FnMut()) -> u128 {
    f();
    let mut t: Vec<u128> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_nanos()
        })
        .collect();
    t.sort_unstable();
    t[t.len() / 2]
}

/// Prints one result line.
pub fn report(case: &str, ns: u128) {
    println!("{case}\t{ns}");
}

/// A scratch directory for the files of one run.
pub fn scratch(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("b2-pure-rs-bench-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
