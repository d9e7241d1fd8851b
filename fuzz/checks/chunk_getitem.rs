//! Partial readers against the full decode, on chunks made from arbitrary data with
//! arbitrary lossless parameters: `getitem(start, nitems)`, `getitem_bytes` and
//! `decompress_block(j)` must return exactly the matching slice of the input (in units of the
//! header's typesize, which is 1 for typesizes > 255), and out-of-range requests must fail
//! without touching more than the destination they were given.
//!
//! Input: 16 parameter bytes, then the data.
//!
//! Shared by the fuzz target and by tests/fuzz_regressions.rs (regression inputs).
use b2frame::chunk::header::ChunkHeader;
use b2frame::chunk::{no_hooks, CParams, Compressor, DParams, Decompressor};

use super::shared::{pool2, CODECS};

/// Runs one fuzz input; panics on a violated property.
pub fn run(input: &[u8]) {
    if input.len() < 16 {
        return;
    }
    let (p, data) = input.split_at(16);
    let mut filters = [0u8; 6];
    for (i, f) in filters.iter_mut().enumerate() {
        *f = p[6 + i] % 4; // lossless: NOFILTER, SHUFFLE, BITSHUFFLE, DELTA
    }
    let nthreads = 1 + (p[0] >> 7) as i16;
    let cp = CParams {
        compcode: CODECS[(p[0] & 7) as usize % 5],
        compcode_meta: 0,
        clevel: p[1] % 10,
        use_dict: p[0] & 8 != 0,
        typesize: (u16::from_le_bytes([p[2], p[3]]) % 300) as i32 + 1,
        nthreads,
        blocksize: u16::from_le_bytes([p[4], p[5]]) as i32 & 0x3fff,
        splitmode: ((p[0] >> 4) & 3) as i32 + 1,
        filters,
        filters_meta: [0; 6],
    };
    let Ok(mut c) = Compressor::new(cp, no_hooks()) else {
        return;
    };
    if nthreads == 2 {
        c.set_pool(pool2()).expect("pool of the right size");
    }
    let mut dst = vec![0u8; data.len() + 32];
    let Ok(n) = c.compress(data, &mut dst) else {
        return;
    };
    assert!(n > 0);
    let chunk = &dst[..n];
    let h = ChunkHeader::read(chunk, true).expect("our header parses");
    let ts = h.typesize as usize;
    let nitems_total = data.len() / ts;
    let mut d = Decompressor::new(DParams { nthreads }, no_hooks()).unwrap();
    if nthreads == 2 {
        d.set_pool(pool2()).expect("pool of the right size");
    }

    // getitem on a range derived from the input (sometimes out of range on purpose).
    let start = u16::from_le_bytes([p[12], p[13]]) as usize % (nitems_total + 2);
    let count = u16::from_le_bytes([p[14], p[15]]) as usize % (nitems_total + 2);
    let mut out = vec![0xA5u8; count * ts + 8];
    let r = d.getitem(chunk, start as i32, count as i32, &mut out);
    if start + count <= nitems_total {
        let got = r.unwrap_or_else(|e| panic!("getitem({start},{count}) failed: {e:?}"));
        assert_eq!(got, count * ts);
        assert!(
            out[..got] == data[start * ts..(start + count) * ts],
            "getitem bytes differ"
        );
        assert!(
            out[got..].iter().all(|&b| b == 0xA5),
            "getitem wrote past its range"
        );
    } else if count > 0 {
        assert!(
            r.is_err(),
            "out-of-range getitem({start},{count}) succeeded"
        );
    }
    // The same range in bytes.
    let r = d.getitem_bytes(chunk, (start * ts) as i32, (count * ts) as i32, &mut out);
    if start + count <= nitems_total {
        let got = r.unwrap_or_else(|e| panic!("getitem_bytes failed: {e:?}"));
        assert_eq!(got, count * ts);
        assert!(out[..got] == data[start * ts..(start + count) * ts]);
    } else if count > 0 {
        assert!(r.is_err());
    }
    // A destination one byte too small must be refused.
    if count > 0 && start + count <= nitems_total {
        let mut tiny = vec![0u8; count * ts - 1];
        assert!(d
            .getitem(chunk, start as i32, count as i32, &mut tiny)
            .is_err());
    }

    // One block alone equals its slice of the whole chunk.
    if !data.is_empty() && h.blocksize > 0 && !h.is_memcpyed() && h.special_code() == 0 {
        let bs = h.blocksize as usize;
        let nblocks = data.len().div_ceil(bs);
        let j = start % nblocks;
        let mut blk = vec![0u8; bs];
        let got = d
            .decompress_block(chunk, j as i32, &mut blk)
            .unwrap_or_else(|e| panic!("decompress_block({j}) failed: {e:?}"));
        let want = &data[j * bs..((j + 1) * bs).min(data.len())];
        assert_eq!(got, want.len());
        assert!(blk[..got] == *want, "decompress_block({j}) differs");
        assert!(d.decompress_block(chunk, nblocks as i32, &mut blk).is_err());
    }
}
