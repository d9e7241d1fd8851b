//! Values a caller writes into `blosc2_schunk` that a frame header cannot hold (typesize < 1,
//! blocksize < 0, splitmode outside 1..=4, chunksize < -1), against c-blosc2 3.3.5: it writes them
//! into its frame header as they are, which leaves frames it cannot reopen, cannot append to,
//! or that read back another value; b2frame keeps the last valid value instead
//! (docs/divergences.md#16-caller-written-values-a-frame-header-cannot-hold-are-not-written).
//! The same history runs on both libraries, and both read both files.

use super::reference_fields::{append, cparams, create, fields, ours, theirs, Api, Fields, Kind};
use b2frame::capi::types::blosc2_schunk;
use std::ffi::{c_void, CString};

type Set = fn(&mut blosc2_schunk);

/// A cframe file written by `w`: one chunk, the caller's write (`set`), a second chunk (with
/// `before`, the write comes first: a chunksize is only taken while there is no chunk). Returns
/// the file and what the second append returned.
fn written(w: &Api, dir: &std::path::Path, set: Set, before: bool) -> (CString, i64) {
    let (sc, url) = create(w, Kind::File, dir, cparams(4));
    // SAFETY: a live super-chunk of `w`'s library, freed once; `v` holds 4000 bytes.
    let n = unsafe {
        if before {
            set(&mut *sc);
        } else {
            append(w, sc, 1, 4000);
            set(&mut *sc);
        }
        let v = vec![7u8; 4000];
        let n = (w.append_buffer)(sc, v.as_ptr() as *const c_void, 4000);
        (w.free)(sc);
        n
    };
    (url.unwrap(), n)
}

/// The fields `r` reads from the file at `url` and what one more append returns (`None`: it
/// does not open).
fn reopened(r: &Api, url: &CString) -> Option<(Fields, i64)> {
    // SAFETY: a C string path; the handle is freed once; `v` holds 4000 bytes.
    unsafe {
        let s = (r.open)(url.as_ptr());
        if s.is_null() {
            return None;
        }
        let f = fields(s);
        let v = vec![9u8; 4000];
        let n = (r.append_buffer)(s, v.as_ptr() as *const c_void, 4000);
        (r.free)(s);
        Some((f, n))
    }
}

#[test]
fn caller_written_values_a_header_cannot_hold() {
    let (o, t) = (ours(), theirs());
    let dir = crate::common::scratch::dir("b2f-refused-");
    let mut k = 0;
    let mut both = |set: Set, before: bool| {
        k += 1;
        let (d1, d2) = (dir.join(format!("o{k}")), dir.join(format!("t{k}")));
        std::fs::create_dir_all(&d1).unwrap();
        std::fs::create_dir_all(&d2).unwrap();
        (written(&o, &d1, set, before), written(&t, &d2, set, before))
    };
    // typesize 0 and -3: c-blosc2's file opens in neither library; ours keeps typesize 4.
    for set in [(|s| s.typesize = 0) as Set, |s| s.typesize = -3] {
        let ((mine, n1), (refs, n2)) = both(set, false);
        assert_eq!((n1, n2), (2, 2));
        assert!(reopened(&t, &refs).is_none() && reopened(&o, &refs).is_none());
        for r in [&o, &t] {
            let (f, n) = reopened(r, &mine).expect("our file opens");
            assert_eq!(
                (f.typesize, f.nchunks),
                (4, 2 + i64::from(r.name == "c-blosc2"))
            );
            assert!(n > 0, "{}: append to our file", r.name);
        }
    }
    // blocksize -5: c-blosc2 reopens its file with it, then fails to append; we read that file
    // with an automatic blocksize and append to it. Our file keeps the automatic blocksize.
    let ((mine, _), (refs, _)) = both(|s| s.blocksize = -5, false);
    let (f, n) = reopened(&t, &refs).unwrap();
    assert_eq!(f.blocksize, -5);
    assert!(n < 0, "c-blosc2 appends to its own file: {n}");
    let (f, n) = reopened(&o, &refs).expect("we read c-blosc2's file");
    assert_eq!((f.blocksize, f.nchunks, n), (0, 2, 3));
    for r in [&o, &t] {
        let (f, n) = reopened(r, &mine).unwrap();
        assert_eq!(f.blocksize, 0);
        assert!(n > 0);
    }
    // splitmode 0 and 7: c-blosc2 writes the byte `splitmode - 1` (0xFF, 6), which both read as
    // another valid splitmode (4, 3), not the caller's; ours keeps the one it had (4).
    for (sm, back) in [(0u8, 4u8), (7, 3)] {
        let set: Set = if sm == 0 {
            |s| s.splitmode = 0
        } else {
            |s| s.splitmode = 7
        };
        let ((mine, _), (refs, _)) = both(set, false);
        for r in [&o, &t] {
            assert_eq!(reopened(r, &refs).unwrap().0.splitmode, back, "{}", r.name);
            assert_eq!(reopened(r, &mine).unwrap().0.splitmode, 4, "{}", r.name);
        }
    }
    // chunksize -7 before the first chunk: c-blosc2 keeps it and refuses the append; ours
    // takes the first chunk's size.
    let ((mine, n1), (_, n2)) = both(|s| s.chunksize = -7, true);
    assert!(n2 < 0, "c-blosc2 appends after chunksize -7: {n2}");
    assert_eq!(n1, 1);
    for r in [&o, &t] {
        let (f, n) = reopened(r, &mine).unwrap();
        assert_eq!(f.chunksize, 4000, "{}", r.name);
        assert!(n > 0);
    }
}
