//! Chunks: compress a buffer with a few codec and filter choices, decompress it, inspect what the
//! chunks say about themselves, and make special-value chunks.
//!
//! Run with `cargo run --release -p blosc2-frame --example chunks`.

use blosc2_frame::{CParams, Codec, DParams, Filter, Special, SplitMode};

fn main() -> blosc2_frame::Result<()> {
    // 8 MB of f64 values on a coarse grid: what shuffle and a fast codec do well on.
    let values: Vec<f64> = (0..1_000_000).map(|i| f64::from(i % 5000) * 0.25).collect();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();

    println!("{:<28} {:>10} {:>8}", "parameters", "bytes", "ratio");
    for (label, cparams) in [
        ("blosclz, shuffle (default)", CParams::default()),
        (
            "zstd 5, shuffle, 2 threads",
            CParams::default()
                .codec(Codec::Zstd)
                .clevel(5)
                .typesize(8)
                .filters(&[Filter::Shuffle])
                .nthreads(2),
        ),
        (
            "lz4, bitshuffle",
            CParams::default()
                .codec(Codec::Lz4)
                .filters(&[Filter::BitShuffle]),
        ),
        (
            "zlib 9, trunc_prec 20 bits",
            CParams::default()
                .codec(Codec::Zlib)
                .clevel(9)
                .filters(&[Filter::TruncPrec, Filter::Shuffle])
                .filters_meta(&[20]),
        ),
        (
            "lz4hc, never split",
            CParams::default()
                .codec(Codec::Lz4Hc)
                .split_mode(SplitMode::Never),
        ),
    ] {
        let chunk = blosc2_frame::compress(&bytes, &cparams)?;
        let back = blosc2_frame::decompress_with(&chunk, &DParams::default().nthreads(2))?;
        assert_eq!(back.len(), bytes.len());
        // Lossless unless the pipeline truncates.
        if !cparams.get_filters().contains(&Filter::TruncPrec) {
            assert_eq!(back, bytes);
        }
        println!(
            "{label:<28} {:>10} {:>8.1}",
            chunk.len(),
            bytes.len() as f64 / chunk.len() as f64
        );
    }

    // The codec table: every codec this build knows, and where its code comes from.
    println!();
    for codec in [Codec::BloscLz, Codec::Zstd, Codec::Ndlz, Codec::Htj2k] {
        let info = codec.info().expect("in the table");
        println!(
            "{:>3} {:<10} library {:<8} {:?}",
            codec.id(),
            info.name,
            info.library,
            info.origin
        );
    }

    // Special-value chunks: a header alone stands for the whole chunk.
    let cp = CParams::default().typesize(4);
    for special in [
        Special::Zeros,
        Special::Nans,
        Special::Value(42u32.to_le_bytes().to_vec()),
    ] {
        let chunk = special.chunk(4_000_000, &cp)?;
        let back = blosc2_frame::decompress(&chunk)?;
        println!(
            "{special:?}: {} bytes stand for {} bytes",
            chunk.len(),
            back.len()
        );
        assert_eq!(Special::of(&chunk)?, Some(special));
    }

    // Bad input is an error with c-blosc2's code, never a panic.
    let err = blosc2_frame::decompress(&bytes[..100]).unwrap_err();
    println!("\n100 bytes of raw data as a chunk: {err}");
    assert_eq!(err.code(), -11);
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
