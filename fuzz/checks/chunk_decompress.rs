//! Arbitrary bytes as a chunk through every reader entry point of the safe chunk engine
//! (`decompress`, `getitem`, `getitem_bytes`, `decompress_block`, `vldecompress`,
//! `vldecompress_block`) with an arbitrary destination size and 1 or 2 threads: errors are
//! fine, panics, hangs and out-of-bounds accesses are not (ASan watches the SIMD kernels).
//!
//! Input: 8 parameter bytes, then the chunk.
//! `p[0]` bit 0: nthreads 1/2; `p[1..4]`: destination size (24 bits, so up to 16 MiB);
//! `p[4..6]`, `p[6..8]`: start / count for the range readers and the block number.
//!
//! Shared by the fuzz target and by tests/fuzz_regressions.rs (regression inputs).
use b2frame::chunk::{no_hooks, DParams, Decompressor};

use super::shared::pool2;

/// Runs one fuzz input; panics on a violated property.
pub fn run(data: &[u8]) {
    if data.len() < 8 {
        return;
    }
    let (p, chunk) = data.split_at(8);
    let nthreads = 1 + (p[0] & 1) as i16;
    let dsize = u32::from_le_bytes([p[1], p[2], p[3], 0]) as usize;
    let start = i16::from_le_bytes([p[4], p[5]]) as i32;
    let count = i16::from_le_bytes([p[6], p[7]]) as i32;
    let Ok(mut d) = Decompressor::new(DParams { nthreads }, no_hooks()) else {
        return;
    };
    if nthreads == 2 {
        d.set_pool(pool2()).expect("pool of the right size");
    }
    let mut dst = vec![0u8; dsize];
    if let Ok(n) = d.decompress(chunk, &mut dst) {
        assert!(n <= dsize, "decompress reported {n} bytes into {dsize}");
    }
    if let Ok(n) = d.getitem(chunk, start, count, &mut dst) {
        assert!(n <= dsize);
    }
    if let Ok(n) = d.getitem_bytes(chunk, start, count, &mut dst) {
        assert!(n <= dsize);
        assert_eq!(
            n as i32, count,
            "getitem_bytes must return the requested size"
        );
    }
    if let Ok(n) = d.decompress_block(chunk, start, &mut dst) {
        assert!(n <= dsize);
    }
    if let Ok(blocks) = d.vldecompress(chunk) {
        match usize::try_from(start).ok().and_then(|j| blocks.get(j)) {
            // One block decoded alone must equal the same block decoded with the others.
            Some(b) => assert_eq!(
                d.vldecompress_block(chunk, start).as_deref().ok(),
                Some(&b[..])
            ),
            // A block number outside the chunk is an error.
            None => assert!(
                d.vldecompress_block(chunk, start).is_err(),
                "block {start} of {} decoded",
                blocks.len()
            ),
        }
    }
    let _ = d.vldecompress_block(chunk, start);
    // A second decode with the same context must behave the same (no stale state).
    let mut dst2 = vec![0u8; dsize];
    let a = d.decompress(chunk, &mut dst);
    let b = d.decompress(chunk, &mut dst2);
    assert_eq!(
        a.is_ok(),
        b.is_ok(),
        "repeated decode differs: {a:?} vs {b:?}"
    );
    if let (Ok(n), Ok(m)) = (a, b) {
        assert_eq!(n, m);
        assert_eq!(dst[..n], dst2[..n], "repeated decode gave different bytes");
    }
}
