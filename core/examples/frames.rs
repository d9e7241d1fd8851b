//! Frames: the same super-chunk in memory, in a cframe file and in an sframe directory, with
//! metalayers (fixed-size, in the header) and vlmetalayers (compressed, in the trailer);
//! reopened from disk, read back and checked. Then a frame that c-blosc2 wrote, when the
//! corpus of the repository's test suite is next to it.
//!
//! Run with `cargo run --release -p blosc2-frame --example frames`.

use blosc2_frame::{CParams, Codec, Filter, SChunk, Storage};
use std::path::{Path, PathBuf};

/// Three chunks of `u32` counters, 40 KB each.
fn chunk(i: u32) -> Vec<u8> {
    (0..10_000u32)
        .flat_map(|v| (v + i * 10_000).to_le_bytes())
        .collect()
}

/// Writes three chunks, a metalayer and a vlmetalayer into a new super-chunk at `storage`.
fn fill(storage: Storage, cparams: &CParams) -> blosc2_frame::Result<SChunk> {
    let mut sc = SChunk::create(storage, cparams)?;
    // Metalayers are added while the frame is empty; their size is fixed from then on.
    sc.set_metalayer("kind", b"counters")?;
    for i in 0..3 {
        sc.append(&chunk(i))?;
    }
    sc.set_vlmetalayer("attrs", br#"{"unit": "count", "step": 1}"#)?;
    Ok(sc)
}

/// Checks everything `fill` wrote.
fn check(sc: &SChunk, label: &str) -> blosc2_frame::Result<()> {
    assert_eq!(sc.nchunks(), 3, "{label}");
    for (i, c) in sc.chunks().enumerate() {
        assert_eq!(c?, chunk(i as u32), "{label}: chunk {i}");
    }
    assert_eq!(sc.metalayer("kind"), Some(&b"counters"[..]), "{label}");
    let attrs = sc.vlmetalayer("attrs")?;
    assert_eq!(
        attrs.as_deref(),
        Some(&br#"{"unit": "count", "step": 1}"#[..])
    );
    println!(
        "{label:<10} 3 chunks, {:>6} bytes stored of {}, metalayer `kind`, vlmetalayer `attrs`",
        sc.counters().cbytes,
        sc.counters().nbytes
    );
    Ok(())
}

/// The c-blosc2 corpus: `B2FRAME_CORPUS`, else `shared/corpus` beside the repository or one
/// of its parents (a git worktree).
fn corpus() -> Option<PathBuf> {
    if let Some(c) = std::env::var_os("B2FRAME_CORPUS") {
        return Some(PathBuf::from(c));
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/corpus"))
        .find(|c| c.join("manifest.txt").is_file())
}

fn main() -> blosc2_frame::Result<()> {
    let cparams = CParams::default()
        .codec(Codec::Zstd)
        .clevel(3)
        .typesize(4)
        .filters(&[Filter::Shuffle]);
    let dir = tempfile::tempdir().map_err(|_| blosc2_frame::Error::FileOpen)?;

    // In memory: one contiguous frame, whose bytes are a cframe any Blosc2 library reads.
    let mem = fill(Storage::memory_frame(), &cparams)?;
    check(&mem, "memory")?;
    let bytes = mem.to_cframe()?;
    check(&SChunk::from_bytes(&bytes)?, "bytes")?;

    // A cframe file, written, closed and reopened.
    let file = dir.path().join("counters.b2frame");
    drop(fill(Storage::file(&file), &cparams)?);
    check(&SChunk::open(&file)?, "cframe")?;
    assert_eq!(std::fs::read(&file).ok(), Some(bytes));

    // An sframe directory: one file per chunk plus the index; appending later writes one more
    // chunk file and the index, nothing else.
    let sdir = dir.path().join("counters.b2frame.d");
    drop(fill(Storage::sframe(&sdir), &cparams)?);
    let mut sc = SChunk::open(&sdir)?;
    check(&sc, "sframe")?;
    sc.append(&chunk(3))?;
    sc.set_vlmetalayer("attrs", br#"{"unit": "count", "step": 1, "more": true}"#)?;
    drop(sc);
    let sc = SChunk::open(&sdir)?;
    assert_eq!(sc.nchunks(), 4);
    assert_eq!(sc.decompress_chunk(3)?, chunk(3));
    println!(
        "sframe     reopened after an append: {} chunks",
        sc.nchunks()
    );

    // A frame c-blosc2 3.3.5 wrote (the repository's corpus, when present).
    if let Some(corpus) = corpus() {
        let theirs = corpus.join("frames/meta_many.b2frame");
        let sc = SChunk::open(&theirs)?;
        let names: Vec<&str> = sc.metalayers().iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.contains(&"alpha"));
        let total: usize = sc
            .chunks()
            .map(|c| c.map(|c| c.len()))
            .sum::<Result<_, _>>()?;
        println!(
            "c-blosc2   {}: {} chunks, {total} bytes, metalayers {names:?}",
            theirs.file_name().unwrap().to_string_lossy(),
            sc.nchunks()
        );
    }
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
