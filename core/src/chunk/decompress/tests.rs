use super::super::{no_hooks, CParams, Compressor, DParams};
use super::{rd_i32, Decompressor};

/// What one byte lane of the u32 test elements holds.
#[derive(Clone, Copy)]
enum Lane {
    Zero,
    Byte(u8),
    Noise,
    /// Noise in 0..4 (compressible: LZ4 streams, not raw ones).
    Small,
}

fn data(lanes: [Lane; 4], len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match lanes[i % 4] {
                Lane::Zero => 0,
                Lane::Byte(b) => b,
                Lane::Noise => x as u8,
                Lane::Small => x as u8 & 3,
            }
        })
        .collect()
}

fn chunk(src: &[u8], compcode: u8) -> Vec<u8> {
    chunk_filtered(src, compcode, 1)
}

/// `chunk` with `filter` (SHUFFLE 1, BITSHUFFLE 2, NOFILTER 0) as the only filter.
fn chunk_filtered(src: &[u8], compcode: u8, filter: u8) -> Vec<u8> {
    let cp = CParams {
        compcode,
        clevel: 5,
        typesize: 4,
        blocksize: 16 << 10,
        filters: [0, 0, 0, 0, 0, filter],
        ..Default::default()
    };
    let mut out = vec![0u8; src.len() + 64];
    let n = Compressor::new(cp, no_hooks())
        .unwrap()
        .compress(src, &mut out)
        .unwrap();
    out.truncate(n);
    out
}

/// Streams stored as a zero (csize 0) or run-length (csize < 0) fill, over all blocks.
fn fill_streams(c: &[u8]) -> usize {
    let nbytes = rd_i32(c, 4) as usize;
    let bs = rd_i32(c, 8) as usize;
    let (memcpyed, dont_split) = (c[2] & 0x02 != 0, c[2] & 0x10 != 0);
    let mut n = 0;
    for j in (0..nbytes.div_ceil(bs)).filter(|_| !memcpyed) {
        let size = bs.min(nbytes - j * bs);
        let nstreams = if size == bs && !dont_split { 4 } else { 1 };
        let mut p = rd_i32(c, 32 + 4 * j) as usize;
        for _ in 0..nstreams {
            let cs = rd_i32(c, p);
            p += 4 + if cs > 0 {
                cs as usize
            } else {
                (cs < 0) as usize
            };
            n += (cs <= 0) as usize;
        }
    }
    n
}

#[test]
fn fill_streams_left_in_scratch_are_reused_only_when_still_valid() {
    use Lane::*;
    let kinds = [
        [Noise, Zero, Zero, Zero],
        [Noise, Byte(7), Noise, Zero],
        [Noise, Byte(9), Zero, Byte(7)],
        [Noise, Noise, Noise, Noise],
        [Zero, Byte(7), Byte(7), Noise],
    ];
    // Whole blocks only, and a leftover block (one stream, at slot 0).
    for len in [64 << 10, (64 << 10) + 36] {
        for compcode in [0u8, 1, 5] {
            let srcs: Vec<Vec<u8>> = (0..kinds.len())
                .map(|i| data(kinds[i], len, 11 + i as u64))
                .collect();
            let chunks: Vec<Vec<u8>> = srcs.iter().map(|s| chunk(s, compcode)).collect();
            for (i, c) in chunks.iter().enumerate() {
                // The fills this test is about are really in the chunks.
                assert_eq!(fill_streams(c) > 0, i != 3, "chunk {i} codec {compcode}");
            }
            for nthreads in [1i16, 2] {
                let mut d = Decompressor::new(DParams { nthreads }, no_hooks()).unwrap();
                let mut out = vec![0u8; len];
                for &i in &[0usize, 1, 0, 2, 1, 3, 0, 2, 2, 4, 0, 4, 1] {
                    out.fill(0xEE);
                    assert_eq!(d.decompress(&chunks[i], &mut out).unwrap(), len);
                    assert!(out == srcs[i], "chunk {i} codec {compcode} thr {nthreads}");
                }
            }
        }
    }
}

#[test]
fn a_damaged_stream_over_a_cached_fill_is_not_trusted_afterwards() {
    use Lane::*;
    let len = 64 << 10;
    let a = data([Noise, Zero, Zero, Zero], len, 1);
    let b = data([Small, Small, Small, Small], len, 2);
    let (ca, cb) = (chunk(&a, 1), chunk(&b, 1));
    let mut d = Decompressor::new(DParams { nthreads: 1 }, no_hooks()).unwrap();
    let mut out = vec![0u8; len];
    d.decompress(&ca, &mut out).unwrap();
    assert!(out == a);
    // `b` is stored as streams (not one memcpyed chunk), none of them a fill.
    assert!(fill_streams(&ca) > 0 && fill_streams(&cb) == 0 && cb[2] & 0x02 == 0);
    // Garbage in the payload of block 0's stream 1 (headers intact): the decode fails or
    // writes junk into the slot where `a`'s zero fill was.
    let p = rd_i32(&cb, 32) as usize;
    let at = p + 8 + rd_i32(&cb, p) as usize;
    let cs1 = rd_i32(&cb, at - 4) as usize;
    for step in [3usize, 7, 13, 101] {
        let mut bad = cb.clone();
        for k in (at + cs1 / 4..at + cs1).step_by(step) {
            bad[k] ^= 0x5A;
        }
        let _ = d.decompress(&bad, &mut out);
        d.decompress(&ca, &mut out).unwrap();
        assert!(out == a, "step {step}");
    }
}

#[test]
fn raw_copies_are_exact_wherever_the_chunk_and_destination_sit() {
    use Lane::*;
    // Raw streams (noise lanes) next to LZ4 ones, and a memcpyed chunk (all noise), read
    // from every offset 0..80 of one buffer: the copies meet every distance modulo 4096
    // (`copy_bytes` cuts those at 1..63 into pieces), whole chunks, getitem ranges.
    let len = (64 << 10) + 36;
    for (lanes, memcpyed) in [([Noise, Small, Noise, Zero], false), ([Noise; 4], true)] {
        let src = data(lanes, len, 5);
        let c = chunk(&src, 1);
        assert_eq!(c[2] & 0x02 != 0, memcpyed);
        if !memcpyed {
            // Block 0 (16 KiB, 4 streams of 4 KiB) holds raw streams.
            let mut p = rd_i32(&c, 32) as usize;
            let mut raw = 0;
            for _ in 0..4 {
                let cs = rd_i32(&c, p);
                raw += (cs == 4096) as usize;
                p += 4 + cs.max(0) as usize + (cs < 0) as usize;
            }
            assert_eq!(raw, 2);
        }
        let mut d = Decompressor::new(DParams { nthreads: 1 }, no_hooks()).unwrap();
        let mut buf = vec![0u8; c.len() + 80];
        let mut out = vec![0u8; len + 80];
        for shift in 0..80 {
            buf[shift..shift + c.len()].copy_from_slice(&c);
            out.fill(0xEE);
            let n = d
                .decompress(&buf[shift..shift + c.len()], &mut out[79 - shift..][..len])
                .unwrap();
            assert_eq!(n, len);
            assert!(out[79 - shift..][..len] == src[..], "shift {shift}");
            let (start, nitems) = (shift as i32 * 97, 5000);
            let at = start as usize * 4;
            let got = d
                .getitem(
                    &buf[shift..shift + c.len()],
                    start,
                    nitems,
                    &mut out[shift..],
                )
                .unwrap();
            assert_eq!(got, 20000);
            assert!(
                out[shift..shift + got] == src[at..at + got],
                "getitem {shift}"
            );
        }
    }
}

/// A storage that holds `held` bytes of one stored chunk and records the largest read asked
/// of it.
struct ShortSource {
    stored: Vec<u8>,
    largest: std::sync::Mutex<usize>,
}

impl super::super::lazy::LazySource for ShortSource {
    fn read_lazy(
        &self,
        _nchunk: i32,
        _offset: i64,
        pos: u64,
        dst: &mut [u8],
    ) -> crate::error::Result<()> {
        let mut l = self.largest.lock().unwrap();
        *l = (*l).max(dst.len());
        let end = pos as usize + dst.len();
        if end > self.stored.len() {
            return Err(crate::error::Error::ReadBuffer);
        }
        dst.copy_from_slice(&self.stored[pos as usize..end]);
        Ok(())
    }
}

/// A fuzzed frame's lazy chunk claimed a stored size of 1.98 GB for a chunk its storage did
/// not hold, and the whole-chunk read allocated all of it before reading (libFuzzer's 2 GB
/// limit). Reads now grow with what the storage delivers: no read asks for more than twice
/// what the storage holds plus the first piece, and the decode fails with the read's error.
#[test]
fn a_lazy_chunk_claiming_more_than_storage_holds_is_not_allocated_whole() {
    let src = data([Lane::Small; 4], 64 << 10, 7);
    let stored = chunk(&src, 1);
    let nblocks = (64 << 10) / (16 << 10);
    // The lazy chunk: the stored header with the lazy bit and a forged cbytes, zero block
    // starts, then nchunk, offset and one csize per block.
    let mut lazy = stored[..32].to_vec();
    lazy[31] |= super::super::header::blosc2_flags::LAZY;
    let claimed: i32 = 0x7600_0000;
    lazy[12..16].copy_from_slice(&claimed.to_le_bytes());
    lazy.extend(std::iter::repeat_n(0u8, 4 * nblocks));
    lazy.extend(0i32.to_le_bytes());
    lazy.extend(0i64.to_le_bytes());
    for _ in 0..nblocks {
        lazy.extend(100i32.to_le_bytes());
    }
    let mut forged = stored.clone();
    forged[12..16].copy_from_slice(&claimed.to_le_bytes());
    let source = ShortSource {
        stored: forged,
        largest: std::sync::Mutex::new(0),
    };
    let whole = super::lazy::materialise(&lazy, &source);
    assert!(whole.is_err(), "a chunk the storage does not hold fails");
    let largest = *source.largest.lock().unwrap();
    assert!(
        largest <= 2 * stored.len() + super::lazy::FIRST_PIECE,
        "largest read {largest} for {} stored bytes",
        stored.len()
    );

    // A chunk the storage holds whole still reads whole, through several pieces.
    let big = data([Lane::Noise; 4], 3 << 20, 9);
    let stored = chunk(&big, 0);
    let mut lazy = stored[..32].to_vec();
    lazy[31] |= super::super::header::blosc2_flags::LAZY;
    let nblocks = (3usize << 20).div_ceil(16 << 10);
    lazy.extend(std::iter::repeat_n(0u8, 4 * nblocks));
    lazy.extend(0i32.to_le_bytes());
    lazy.extend(0i64.to_le_bytes());
    for _ in 0..nblocks {
        lazy.extend(100i32.to_le_bytes());
    }
    let source = ShortSource {
        stored: stored.clone(),
        largest: std::sync::Mutex::new(0),
    };
    assert!(stored.len() > 2 * super::lazy::FIRST_PIECE);
    assert_eq!(super::lazy::materialise(&lazy, &source).unwrap(), stored);
}

#[test]
fn raw_streams_left_in_a_shuffled_chunk_do_not_leak_into_the_next_chunk() {
    use Lane::*;
    // Byte shuffle unshuffles raw streams from where they lie in the chunk, noting where per
    // stream; a decoder reused for a bitshuffled or unfiltered chunk after such a chunk must not
    // read those notes (its worker outlives the chunk). Ends on a 36-byte leftover block (one
    // raw stream) so the notes are left set.
    let len = (64 << 10) + 36;
    let a = data([Noise, Small, Noise, Zero], len, 7);
    let b = data([Small, Noise, Zero, Small], len, 8);
    let ca = chunk_filtered(&a, 1, 1);
    assert!(ca[2] & 0x02 == 0 && fill_streams(&ca) > 0);
    for nthreads in [1, 2] {
        let mut d = Decompressor::new(DParams { nthreads }, no_hooks()).unwrap();
        let mut out = vec![0u8; len];
        for filter in [2u8, 0, 1] {
            let cb = chunk_filtered(&b, 1, filter);
            d.decompress(&ca, &mut out).unwrap();
            assert!(
                out == a,
                "nthreads {nthreads} filter {filter}: shuffled chunk"
            );
            out.fill(0xEE);
            d.decompress(&cb, &mut out).unwrap();
            assert!(
                out == b,
                "nthreads {nthreads} filter {filter} after a shuffled chunk"
            );
        }
    }
}

/// `decompress_to_vec` writes a new vector without zeroing it first (`crate::sys::Out`): every
/// kind of chunk must come out whole, as it went in (byte and bit shuffle, no filter, DELTA,
/// raw streams beside coded ones, memcpyed chunks, a tail shorter than an item, zero chunks,
/// masks, 1 and 2 threads), and masked blocks as zeros.
#[test]
fn new_vectors_are_written_whole_without_zeroing() {
    use crate::chunk::DParams;
    let kinds = [
        [Lane::Small, Lane::Zero, Lane::Byte(9), Lane::Small],
        [Lane::Noise, Lane::Noise, Lane::Noise, Lane::Noise],
        [Lane::Noise, Lane::Small, Lane::Zero, Lane::Noise],
        [Lane::Zero, Lane::Zero, Lane::Zero, Lane::Zero],
    ];
    for (k, lanes) in kinds.into_iter().enumerate() {
        for len in [0usize, 3, 1000, 100_003, 300_000] {
            let src = data(lanes, len, 7 + k as u64);
            for (compcode, filters, clevel) in [
                (1u8, [0, 0, 0, 0, 0, 1], 5u8),
                (1, [0, 0, 0, 0, 0, 2], 5),
                (1, [0, 0, 0, 0, 0, 0], 5),
                (5, [0, 0, 0, 0, 3, 1], 5),
                (0, [0, 0, 0, 0, 0, 1], 5),
                (1, [0, 0, 0, 0, 0, 1], 0),
            ] {
                let cp = CParams {
                    compcode,
                    clevel,
                    typesize: 4,
                    blocksize: 16 << 10,
                    filters,
                    ..Default::default()
                };
                let mut c = vec![0u8; len + 64];
                let n = Compressor::new(cp, no_hooks())
                    .unwrap()
                    .compress(&src, &mut c)
                    .unwrap();
                c.truncate(n);
                for nthreads in [1i16, 2] {
                    let mut d = Decompressor::new(DParams { nthreads }, no_hooks()).unwrap();
                    let what =
                        format!("kind {k} len {len} codec {compcode} {filters:?} t{nthreads}");
                    assert_eq!(d.decompress_to_vec(&c).unwrap(), src, "{what}");
                    let nblocks = len.div_ceil(16 << 10);
                    if nblocks >= 2 {
                        // Masked blocks of a new vector read as zeros.
                        let mask: Vec<bool> = (0..nblocks).map(|j| j % 2 == 1).collect();
                        d.set_maskout(&mask);
                        let got = d.decompress_to_vec(&c).unwrap();
                        let mut zeroed = vec![0u8; len];
                        d.set_maskout(&mask);
                        d.decompress(&c, &mut zeroed).unwrap();
                        assert_eq!(got, zeroed, "masked {what}");
                    }
                }
            }
        }
    }
}
