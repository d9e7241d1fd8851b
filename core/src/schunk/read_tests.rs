//! Many threads reading one `&SChunk`: every kind of read at once, each checked against the
//! data, with dparams nthreads 1 and 3 on every storage.

use super::*;
use std::sync::Barrier;

const BLOCK: usize = 1024;
const CHUNK: usize = 16 * BLOCK;

/// Byte `i` of chunk `k`: differs between chunks and between blocks.
fn byte(k: usize, i: usize) -> u8 {
    (k * 31 + i / BLOCK * 7 + i % 251) as u8
}

fn storages(dir: &Path) -> Vec<(&'static str, NewStorage<'_>)> {
    vec![
        ("plain", NewStorage::Plain),
        ("memory", NewStorage::Memory),
        ("file", NewStorage::File(dir.join("f.b2frame").leak())),
        ("sparse", NewStorage::Sparse(dir.join("s.b2frame").leak())),
    ]
}

#[test]
fn threads_share_one_schunk_with_per_call_masks_and_decoders() {
    for nthreads in [1i16, 3] {
        let dir = crate::test_util::temp_dir("b2f-schunk-threads-");
        for (kind, st) in storages(dir.path()) {
            let cparams = CParams {
                typesize: 1,
                blocksize: BLOCK as i32,
                nthreads,
                ..CParams::default()
            };
            let mut sc = SChunk::new(st, cparams, DParams { nthreads }).unwrap();
            let nchunks = 6;
            for k in 0..nchunks {
                let c: Vec<u8> = (0..CHUNK).map(|i| byte(k, i)).collect();
                sc.append_buffer(&c).unwrap();
            }
            let sc = &sc;
            let go = Barrier::new(8);
            std::thread::scope(|s| {
                for t in 0..8usize {
                    let go = &go;
                    s.spawn(move || {
                        go.wait();
                        for round in 0..40usize {
                            let k = (t + round) % nchunks;
                            match (t + round) % 4 {
                                0 => {
                                    let v = sc.decompress_chunk(k as i64).unwrap();
                                    assert!(v.iter().enumerate().all(|(i, &b)| b == byte(k, i)));
                                }
                                1 => {
                                    // Each thread its own mask: block j kept when (j + t) is odd.
                                    let mask: Vec<bool> =
                                        (0..16).map(|j| (j + t) % 2 == 0).collect();
                                    let mut out = vec![0xEEu8; CHUNK];
                                    sc.decompress_chunk_masked_into(k as i64, &mask, &mut out)
                                        .unwrap();
                                    for (i, &b) in out.iter().enumerate() {
                                        let want = if mask[i / BLOCK] { 0xEE } else { byte(k, i) };
                                        assert_eq!(b, want, "{kind} t{t} chunk {k} byte {i}");
                                    }
                                }
                                2 => {
                                    let from = (t * 997) % (CHUNK - 300);
                                    let v = sc.getitem(k as i64, from..from + 300).unwrap();
                                    assert!(v
                                        .iter()
                                        .enumerate()
                                        .all(|(i, &b)| b == byte(k, from + i)));
                                }
                                _ => {
                                    let blocks = [(t % 16) as i64, ((t + 5) % 16) as i64];
                                    let mut scratch = vec![0u8; BLOCK];
                                    sc.decode_blocks(
                                        k as i64,
                                        CHUNK,
                                        &blocks,
                                        &mut scratch,
                                        &mut |n, b| {
                                            let j = blocks[n] as usize;
                                            assert!(b
                                                .iter()
                                                .enumerate()
                                                .all(|(i, &x)| x == byte(k, j * BLOCK + i)));
                                            Ok(())
                                        },
                                    )
                                    .unwrap();
                                }
                            }
                        }
                    });
                }
            });
        }
    }
}

#[test]
fn a_failed_masked_read_leaves_no_mask_behind() {
    let cparams = CParams {
        typesize: 1,
        blocksize: BLOCK as i32,
        ..CParams::default()
    };
    let mut sc = SChunk::new(NewStorage::Memory, cparams, DParams::default()).unwrap();
    let c: Vec<u8> = (0..CHUNK).map(|i| byte(0, i)).collect();
    sc.append_buffer(&c).unwrap();
    let mask = [true; 16];
    // Fails before decoding (destination too short): the mask must not reach the next read.
    assert!(sc
        .decompress_chunk_masked_into(0, &mask, &mut [0u8; 10])
        .is_err());
    assert_eq!(sc.decompress_chunk(0).unwrap(), c);
}
