//! Arbitrary bytes as a chunk through every reader entry point of the safe chunk engine
//! (`decompress`, `getitem`, `getitem_bytes`, `decompress_block`, `vldecompress`,
//! `vldecompress_block`) with an arbitrary destination size and 1 or 2 threads: errors are
//! fine, panics, hangs and out-of-bounds accesses are not (ASan watches the SIMD kernels).
//!
//! Input: 8 parameter bytes, then the chunk.
//! `p[0]` bit 0: nthreads 1/2; bit 1: the chunk belongs to a super-chunk with a `b2nd`
//! metalayer (for the plugin codecs and filters: typesize from the header, block shape from the
//! header's blocksize cut in `1 + p[0] >> 2 & 3` dimensions);
//! `p[1..4]`: destination size (24 bits, so up to 16 MiB);
//! `p[4..6]`, `p[6..8]`: start / count for the range readers and the block number.
//!
//! Shared by the fuzz target and by tests/fuzz_regressions.rs (regression inputs).
use b2frame::chunk::{no_hooks, DParams, Decompressor, Hooks, SchunkEnv};
use std::sync::Arc;

use super::shared::pool2;

/// A super-chunk as the plugins see it.
struct Env(SchunkEnv);

impl Hooks for Env {
    fn plugin_env(&self) -> SchunkEnv {
        self.0.clone()
    }
}

/// The super-chunk a plugin chunk would come from: the header's typesize, and its blocksize
/// as a block shape of `ndim` dimensions (sides of 4 peeled off the front where they divide).
fn env_for(chunk: &[u8], ndim: usize) -> Arc<dyn Hooks> {
    if chunk.len() < 16 {
        return no_hooks();
    }
    let typesize = i32::from(chunk[3].max(1));
    let blocksize = i32::from_le_bytes([chunk[8], chunk[9], chunk[10], chunk[11]]);
    let mut items = (blocksize / typesize).max(1);
    let mut shape = Vec::new();
    for _ in 1..ndim {
        if items % 4 == 0 && items > 4 {
            shape.push(4);
            items /= 4;
        }
    }
    shape.push(items);
    let s64: Vec<i64> = shape.iter().map(|&x| i64::from(x)).collect();
    Arc::new(Env(SchunkEnv {
        typesize: Some(typesize),
        b2nd: b2frame::b2nd_meta::serialize(&s64, &shape, &shape, None, 0).ok(),
    }))
}

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
    let hooks = if p[0] & 2 != 0 {
        env_for(chunk, 1 + usize::from((p[0] >> 2) & 3))
    } else {
        no_hooks()
    };
    let Ok(mut d) = Decompressor::new(DParams { nthreads }, hooks) else {
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
