//! Threads: eight threads share one super-chunk opened from a file. Reads take `&self` and
//! [`SChunk`] is `Send + Sync`, so the threads borrow it (no lock, no clone); each read checks a
//! decompression context out of the super-chunk's pool, so they never wait for each other.
//!
//! Run with `cargo run --release -p blosc2-frame --example threads`.

use blosc2_frame::{CParams, Codec, SChunk, Storage};

const NCHUNKS: usize = 64;
const ITEMS: usize = 50_000;

/// Chunk `i`: `ITEMS` `u64` values that depend on `i`.
fn chunk(i: usize) -> Vec<u8> {
    (0..ITEMS as u64)
        .flat_map(|v| (v * 3 + i as u64 * 1_000_003).to_le_bytes())
        .collect()
}

fn main() -> blosc2_frame::Result<()> {
    let dir = tempfile::tempdir().map_err(|_| blosc2_frame::Error::FileOpen)?;
    let path = dir.path().join("shared.b2frame");
    let cparams = CParams::default().codec(Codec::Lz4).typesize(8);
    let mut sc = SChunk::create(Storage::file(&path), &cparams)?;
    for i in 0..NCHUNKS {
        sc.append(&chunk(i))?;
    }
    drop(sc);

    let sc = SChunk::open(&path)?;
    let checked: usize = std::thread::scope(|s| {
        let workers: Vec<_> = (0..8)
            .map(|t| {
                let sc = &sc;
                s.spawn(move || -> blosc2_frame::Result<usize> {
                    // Thread `t` reads every chunk whose index is `t` modulo 8, twice, in
                    // opposite orders, and checks each one.
                    let mine: Vec<usize> = (t..NCHUNKS).step_by(8).collect();
                    for &i in mine.iter().chain(mine.iter().rev()) {
                        assert_eq!(sc.decompress_chunk(i as i64)?, chunk(i), "thread {t}");
                    }
                    Ok(2 * mine.len())
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a reader panicked"))
            .sum::<blosc2_frame::Result<usize>>()
    })?;
    assert_eq!(checked, 2 * NCHUNKS);
    println!(
        "8 threads checked {checked} chunk reads of one SChunk ({NCHUNKS} chunks of {} KB)",
        ITEMS * 8 / 1000
    );
    Ok(())
}

// `cargo test -p blosc2-frame --examples` runs the example (and its assertions).
#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        super::main().unwrap();
    }
}
