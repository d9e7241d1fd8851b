//! The bytes after the last whole element of a chunk (its nbytes not a multiple of the
//! typesize) through the two filters whose c-blosc2 3.3.5 encoders leave them unwritten:
//! BYTEDELTA_BUGGY (id 34, after SHUFFLE; its decoder leaves them unwritten too) and INT_TRUNC
//! (id 36; its decoder copies the block). c-blosc2 compresses whatever its scratch buffer held
//! there, so no encoder can write its bytes; b2frame copies the trailing bytes, as c-blosc2's
//! fixed BYTEDELTA (id 35) does (docs/divergences.md#15-bytedelta_buggy-and-int_trunc-write-the-trailing-bytes).
//! Every whole element is the same in both libraries' chunks.

use super::reference_plugins::{base, floats, ints, ours, theirs};

#[test]
fn bytedelta_buggy_and_int_trunc_keep_the_trailing_bytes() {
    let mut cases = 0;
    for (id, ts, meta) in [
        (34u8, 4i32, 0u8),
        (34, 8, 8),
        (34, 2, 2),
        (36, 4, 20),
        (36, 8, (-7i8) as u8),
        (36, 2, 9),
    ] {
        let t = ts as usize;
        for nbytes in [t * 21 + 1, t * 4099 + t - 1, 300_001] {
            let mut c = base(if id == 34 { 1 } else { 5 }, ts);
            if id == 34 {
                c.filters = [0, 0, 0, 0, 1, 34];
                c.filters_meta = [0, 0, 0, 0, 0, meta];
            } else {
                c.filters = [0, 0, 0, 0, 36, 1];
                c.filters_meta = [0, 0, 0, 0, meta, 0];
            }
            c.nbytes = nbytes;
            let items = nbytes / t;
            let whole = items * t;
            let mut src = if id == 34 && ts != 2 {
                floats(items, ts, nbytes as u64)
            } else {
                ints(items, t, nbytes as u64)
            };
            src.extend((0..nbytes - whole).map(|k| 0xC1 + k as u8));
            let what = format!("filter {id}, typesize {ts}, meta {meta}, {nbytes} bytes");
            let (o, r) = (ours(), theirs());
            let (so, sr) = (c.schunk(&o), c.schunk(&r));
            let mine = so.compress(&src).unwrap();
            let refs = sr.compress(&src).unwrap();
            // Ours: the trailing bytes come back as they went in (the whole elements losslessly
            // for BYTEDELTA_BUGGY, truncated as c-blosc2 truncates them for INT_TRUNC).
            let back = so.decompress(&mine, nbytes).unwrap();
            assert!(back[whole..] == src[whole..], "{what}: trailing bytes");
            let refs_back = sr.decompress(&refs, nbytes).unwrap();
            assert!(
                back[..whole] == refs_back[..whole],
                "{what}: whole elements"
            );
            if id == 34 {
                assert!(back == src, "{what}: not lossless");
            }
            // Each reads the other's chunk: the same whole elements; c-blosc2's INT_TRUNC
            // decoder copies our trailing bytes too.
            let theirs_of_mine = sr.decompress(&mine, nbytes).unwrap();
            assert!(
                theirs_of_mine[..whole] == back[..whole],
                "{what}: c-blosc2 reads ours"
            );
            if id == 36 {
                assert!(
                    theirs_of_mine == back,
                    "{what}: c-blosc2 reads our trailing bytes"
                );
            }
            let mine_of_theirs = so.decompress(&refs, nbytes).unwrap();
            assert!(
                mine_of_theirs[..whole] == refs_back[..whole],
                "{what}: we read c-blosc2's"
            );
            cases += 1;
        }
    }
    assert_eq!(cases, 18);
}
