//! One super-chunk read by many threads through the safe core API, and reader handles following
//! a writer handle on the same file with `.b2lock` locking; every byte is checked.
//!
//! `SChunk` is `Sync` and reads take `&self`: READERS threads share one super-chunk in memory,
//! in a cframe file and in an sframe, with dparams nthreads 1 and 2 (chunk decompressions, item
//! ranges, slices across chunks, lazy chunks through the frame). Readers beside a writer, and
//! `.b2lock` locking between handles, are the C API's (ctests/test_schunk_threads.c): the core's
//! `SChunk` does not take the `.b2lock` locks itself.
//!
//! scripts/tsan.sh runs this binary built with `-Zsanitizer=thread` (and the standard library
//! rebuilt the same way), where it must report no data race. `B2FRAME_THREADS_ROUNDS` lowers
//! the number of operations per thread there.

use blosc2_frame::chunk::{CParams, DParams};
use blosc2_frame::schunk::{NewStorage, SChunk};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

const ITEMS: usize = 4096;
const CHUNK_BYTES: usize = ITEMS * 4;
const NCHUNKS: usize = 12;
const READERS: usize = 8;

fn rounds() -> usize {
    std::env::var("B2FRAME_THREADS_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400)
}

/// Item `j` of chunk `i` at version `v`.
fn item(i: usize, v: u32, j: usize) -> u32 {
    ((i as u32) << 20) ^ (v << 12) ^ (j as u32 / 8)
}

fn chunk_bytes(i: usize, v: u32) -> Vec<u8> {
    (0..ITEMS)
        .flat_map(|j| item(i, v, j).to_le_bytes())
        .collect()
}

/// The version of chunk `i` that `bytes` holds whole, if any (at most `newest`).
fn version_of(i: usize, bytes: &[u8], newest: u32) -> Option<u32> {
    if bytes.len() != CHUNK_BYTES {
        return None;
    }
    let first = u32::from_le_bytes(bytes[..4].try_into().unwrap());
    let v = ((first ^ ((i as u32) << 20)) >> 12) & 0xff;
    (v <= newest && bytes == chunk_bytes(i, v)).then_some(v)
}

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn cparams() -> CParams {
    CParams {
        typesize: 4,
        blocksize: 4096,
        ..CParams::default()
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("b2f-core-threads-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&d);
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn build(storage: NewStorage<'_>, dthreads: i16) -> SChunk {
    let dp = DParams { nthreads: dthreads };
    let mut sc = SChunk::new(storage, cparams(), dp).unwrap();
    for i in 0..NCHUNKS {
        assert_eq!(sc.append_buffer(&chunk_bytes(i, 0)).unwrap(), i as i64 + 1);
    }
    sc
}

/// READERS threads on `sc`, each doing `rounds()` checked reads.
fn shared_readers(sc: &SChunk, what: &str) {
    let checked = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for t in 0..READERS {
            let checked = &checked;
            s.spawn(move || {
                let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (t as u64 + 1));
                let mut buf = vec![0u8; 2 * CHUNK_BYTES];
                for _ in 0..rounds() {
                    let i = rng.below(NCHUNKS);
                    match rng.below(4) {
                        0 => {
                            let got = sc.decompress_chunk(i as i64).unwrap();
                            assert_eq!(version_of(i, &got, 0), Some(0), "{what}: chunk {i}");
                        }
                        1 => {
                            let a = rng.below(ITEMS);
                            let b = a + rng.below(ITEMS - a) + 1;
                            let got = sc.getitem(i as i64, a..b).unwrap();
                            let want = &chunk_bytes(i, 0)[a * 4..b * 4];
                            assert_eq!(got, want, "{what}: items {a}..{b} of chunk {i}");
                        }
                        2 => {
                            // Items across two chunks.
                            let start = rng.below((NCHUNKS - 2) * ITEMS);
                            let n = 1 + rng.below(2 * ITEMS - 1);
                            let out = &mut buf[..n * 4];
                            sc.get_slice(start as i64, (start + n) as i64, out).unwrap();
                            for (k, w) in out.chunks_exact(4).enumerate() {
                                let g = start + k;
                                let want = item(g / ITEMS, 0, g % ITEMS);
                                assert_eq!(
                                    u32::from_le_bytes(w.try_into().unwrap()),
                                    want,
                                    "{what}"
                                );
                            }
                        }
                        _ => {
                            // The lazy chunk of a frame on storage, decoded through the frame.
                            if let (Some(lazy), Some(_)) =
                                (sc.lazy_chunk(i as i64).unwrap(), sc.lazy_source())
                            {
                                assert!(lazy.len() < CHUNK_BYTES, "{what}: a lazy chunk");
                            }
                            let got = sc.decompress_chunk(i as i64).unwrap();
                            assert_eq!(version_of(i, &got, 0), Some(0), "{what}: chunk {i}");
                        }
                    }
                    checked.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    assert_eq!(checked.into_inner(), READERS * rounds(), "{what}");
}

#[test]
fn readers_share_one_super_chunk() {
    for dthreads in [1, 2] {
        let sc = build(NewStorage::Memory, dthreads);
        shared_readers(&sc, &format!("memory, dparams nthreads {dthreads}"));
        let path = scratch(&format!("shared-{dthreads}.b2frame"));
        let sc = build(NewStorage::File(&path), dthreads);
        shared_readers(&sc, &format!("cframe, dparams nthreads {dthreads}"));
        drop(sc);
        let _ = std::fs::remove_file(&path);
        let dir = scratch(&format!("shared-{dthreads}.b2sframe"));
        let sc = build(NewStorage::Sparse(&dir), dthreads);
        shared_readers(&sc, &format!("sframe, dparams nthreads {dthreads}"));
        drop(sc);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
