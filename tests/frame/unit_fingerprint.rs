//! Frame fingerprints (docs/format/fingerprint.md): every frame b2frame writes carries a CRC-32
//! fingerprint that matches after any sequence of mutations, on every storage; every single-bit
//! change anywhere in a fingerprinted frame is reported; the real c-blosc2 3.3.5 reads the
//! fingerprinted frames, appends to them, and its rewrites leave them unfingerprinted.
//!
//! (The process-wide switches are exercised in tests/capi_unit_fingerprint_switches.rs, their
//! own test binary, so that they cannot change what the tests here see.)

#![allow(clippy::missing_transmute_annotations)]

use crate::common;

use b2frame::capi::types::blosc2_schunk;
use b2frame::chunk::{compress_vec, special, CParams, DParams};
use b2frame::frame::fingerprint::{Region, Verdict, SLOT_LEN, TYPE_FROM_END};
use b2frame::frame::meta::encode_vlmeta;
use b2frame::frame::offsets::SpecialKind;
use b2frame::frame::Frame;
use common::reference::reference;
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};

fn cparams() -> CParams {
    CParams {
        typesize: 4,
        blocksize: 1024,
        ..CParams::default()
    }
}

fn chunk(k: u32, n: u32) -> Vec<u8> {
    let d: Vec<u8> = (0..n)
        .flat_map(|i| (i.wrapping_mul(k) ^ (i >> 3)).to_le_bytes())
        .collect();
    compress_vec(&cparams(), &d).unwrap()
}

fn zeros(nbytes: i32) -> Vec<u8> {
    let mut b = [0u8; 64];
    let n = special::zeros(&cparams(), nbytes, &mut b).unwrap();
    b[..n].to_vec()
}

/// A small frame with a metalayer, two vlmetalayers, regular chunks, a special chunk, a
/// deleted chunk (dead bytes in a cframe) and an updated one.
fn populate(f: &mut Frame) {
    f.add_metalayer("meta1", b"\x93\x01\x02\x03").unwrap();
    f.add_vlmetalayer_raw("vl1", &encode_vlmeta(b"first vlmeta", None).unwrap())
        .unwrap();
    f.append_chunk(&chunk(3, 256)).unwrap();
    f.append_chunk(&zeros(1024)).unwrap();
    f.append_chunk(&chunk(5, 256)).unwrap();
    f.append_chunk(&chunk(7, 256)).unwrap();
    f.delete_chunk(3).unwrap();
    f.append_chunk(&chunk(11, 256)).unwrap();
    f.update_chunk(0, &chunk(13, 256)).unwrap();
    f.add_vlmetalayer_raw("vl2", &encode_vlmeta(b"second", None).unwrap())
        .unwrap();
}

fn assert_match(f: &Frame, what: &str) {
    assert_eq!(f.verify_fingerprint().unwrap(), Verdict::Match, "{what}");
    assert_eq!(f.fingerprint_slot().unwrap().fpt, 1, "{what}");
}

/// After a change of ours, on every storage (cframe files included): a match.
fn assert_changed_ok(f: &Frame, what: &str) {
    assert_match(f, what);
}

/// Whether a (possibly damaged) frame is reported: its open fails, or its fingerprint does not
/// check out.
fn reported(open: impl FnOnce() -> b2frame::Result<Frame>) -> bool {
    match open() {
        Err(_) => true,
        Ok(f) => !matches!(f.verify_fingerprint(), Ok(v) if v.is_sound()),
    }
}

fn flipped(bytes: &[u8], at: usize, bit: u32) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at] ^= 1 << bit;
    b
}

#[test]
fn every_mutation_keeps_the_fingerprint_matching_on_every_storage() {
    let dir = common::scratch::dir("b2f-fp-mut-");
    let cp = cparams();
    let dp = DParams::default();
    let file = dir.path().join("f.b2frame");
    let sdir = dir.path().join("s.b2frame");
    let mut frames = [
        Frame::new_memory(&cp, &dp).unwrap(),
        Frame::new_file(&file, &cp, &dp).unwrap(),
        Frame::new_sframe(&sdir, &cp, &dp).unwrap(),
    ];
    for f in frames.iter_mut() {
        assert_changed_ok(f, "new");
        populate(f);
        assert_changed_ok(f, "populated");
        f.insert_chunk(1, &chunk(17, 256)).unwrap();
        assert_changed_ok(f, "insert");
        f.reorder(&[3, 0, 1, 2, 4]).unwrap();
        assert_changed_ok(f, "reorder");
        f.update_chunk(2, &zeros(1024)).unwrap();
        assert_changed_ok(f, "update to special");
        f.update_chunk(2, &chunk(19, 256)).unwrap();
        assert_changed_ok(f, "update from special");
        f.update_metalayer("meta1", b"\x93\x04").unwrap();
        assert_changed_ok(f, "metalayer update");
        f.update_vlmetalayer_raw("vl1", &encode_vlmeta(b"changed", None).unwrap())
            .unwrap();
        f.delete_vlmetalayer("vl2").unwrap();
        assert_changed_ok(f, "vlmetalayers");
        // A shorter chunk in the middle: variable chunk sizes (the special chunk becomes a
        // stored one).
        f.insert_chunk(1, &chunk(23, 100)).unwrap();
        assert_eq!(f.header().chunksize, 0);
        assert_changed_ok(f, "variable");
        // A refused mutation changes nothing and the next one still matches.
        assert!(f.insert_chunk(99, &chunk(1, 256)).is_err());
        assert!(f.update_chunk(0, &chunk(1, 1024)[..20]).is_err());
        assert_changed_ok(f, "refused");
        f.append_chunk(&chunk(29, 256)).unwrap();
        assert_changed_ok(f, "after refused");
        f.delete_chunk(0).unwrap();
        assert_changed_ok(f, "delete first");
    }
    // Reopened (the data CRC comes from the slot) and mutated again.
    let again = [
        Frame::from_bytes(&frames[0].to_cframe().unwrap()).unwrap(),
        Frame::open(&file).unwrap(),
        Frame::open(&sdir).unwrap(),
    ];
    for mut f in again {
        assert_changed_ok(&f, "reopened");
        f.append_chunk(&chunk(31, 256)).unwrap();
        assert_changed_ok(&f, "reopened + append");
        f.delete_chunk(1).unwrap();
        f.update_chunk(0, &chunk(37, 256)).unwrap();
        assert_changed_ok(&f, "reopened + delete + update");
    }
    // The compacted cframe of an sframe, and fill_special.
    let s = Frame::open(&sdir).unwrap();
    assert_match(
        &Frame::from_vec(s.to_cframe().unwrap()).unwrap(),
        "compacted",
    );
    let mut fs = Frame::new_memory(&cp, &dp).unwrap();
    fs.fill_special(SpecialKind::Nan, 1000, 4_000_000 - 8, 4000, 4000)
        .unwrap();
    assert_match(&fs, "fill_special");
}

/// A stale slot is not trusted: a data CRC that does not add up with the rest of the slot makes
/// the next commit compute it from the stored data.
#[test]
fn a_slot_that_does_not_add_up_is_not_extended() {
    let mut f = Frame::new_memory(&cparams(), &DParams::default()).unwrap();
    populate(&mut f);
    let mut b = f.to_cframe().unwrap();
    let n = b.len();
    // A wrong data CRC (and a fingerprint consistent with it would be needed to be trusted).
    b[n - 8] ^= 0x40;
    let mut g = Frame::from_vec(b).unwrap();
    assert_eq!(
        g.verify_fingerprint().unwrap(),
        Verdict::Mismatch(vec![Region::Slot])
    );
    g.append_chunk(&chunk(41, 256)).unwrap();
    assert_match(&g, "recomputed");
}

/// Flips every bit of `bytes` (or one bit per byte when `one_bit`) at the positions `prot`
/// marks (every position when `None`), writes the result with `store`, and checks that `open`
/// reports it.
fn all_flips_reported(
    what: &str,
    bytes: &[u8],
    one_bit: bool,
    prot: Option<&[bool]>,
    mut store: impl FnMut(&[u8]),
    open: impl Fn() -> b2frame::Result<Frame>,
) {
    store(bytes);
    let f = open().unwrap_or_else(|e| panic!("{what}: untouched frame does not open: {e:?}"));
    assert_eq!(f.verify_fingerprint().unwrap(), Verdict::Match, "{what}");
    drop(f);
    let mut missed = Vec::new();
    for at in (0..bytes.len()).filter(|&i| prot.is_none_or(|p| p[i])) {
        let bits: Vec<u32> = if one_bit {
            vec![(at % 8) as u32]
        } else {
            (0..8).collect()
        };
        for bit in bits {
            store(&flipped(bytes, at, bit));
            if !reported(&open) {
                missed.push((at, bit));
            }
        }
    }
    store(bytes);
    assert!(
        missed.is_empty(),
        "{what} ({} bytes): flips not reported at (byte, bit) {missed:?}",
        bytes.len()
    );
}

/// The bytes of `bytes` the fingerprint protects (fuzz/checks/frame_fingerprint.rs), checked
/// to leave out exactly the payload of the chunk `populate` deletes (dead bytes, which no
/// reader looks at): one run of its length.
fn protected_but_the_deleted_chunk(bytes: &[u8]) -> Vec<bool> {
    let prot = fuzz_check::protected(bytes);
    let dead: Vec<usize> = (0..bytes.len()).filter(|&i| !prot[i]).collect();
    let deleted = chunk(7, 256).len();
    assert_eq!(dead.len(), deleted, "dead bytes");
    assert_eq!(dead[deleted - 1] - dead[0] + 1, deleted, "one run");
    // Changing them changes nothing a reader sees, and the frame still matches.
    let mut g = bytes.to_vec();
    for &i in &dead {
        g[i] ^= 0x5A;
    }
    let (a, b) = (
        Frame::from_bytes(bytes).unwrap(),
        Frame::from_bytes(&g).unwrap(),
    );
    assert_eq!(b.verify_fingerprint().unwrap(), Verdict::Match);
    for i in 0..a.nchunks() {
        assert_eq!(
            a.decompress_chunk(i).unwrap(),
            b.decompress_chunk(i).unwrap()
        );
    }
    prot
}

#[test]
fn every_bit_flip_of_a_cframe_is_reported() {
    let dir = common::scratch::dir("b2f-fp-flip-");
    let cp = cparams();
    let mut f = Frame::new_memory(&cp, &DParams::default()).unwrap();
    populate(&mut f);
    let bytes = f.to_cframe().unwrap();
    assert!(bytes.len() < 4096, "{}", bytes.len());
    let prot = protected_but_the_deleted_chunk(&bytes);
    // In memory: every bit of every protected byte.
    let cell = std::cell::RefCell::new(Vec::new());
    all_flips_reported(
        "in-memory cframe",
        &bytes,
        false,
        Some(&prot),
        |b| *cell.borrow_mut() = b.to_vec(),
        || Frame::from_bytes(&cell.borrow()),
    );
    // A file written by the file commits (crash-consistent, relocating), and a frame at an
    // offset inside a file changed there: the same bytes as in memory, slot included (one bit
    // per byte: a file per flip).
    let path = dir.path().join("f.b2frame");
    let mut ff = Frame::new_file(&path, &cp, &DParams::default()).unwrap();
    populate(&mut ff);
    drop(ff);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "file and memory frames"
    );
    all_flips_reported(
        "cframe file",
        &bytes,
        true,
        Some(&prot),
        |b| std::fs::write(&path, b).unwrap(),
        || Frame::open(&path),
    );
    let prefix = b"some bytes before the frame".repeat(3);
    let at = dir.path().join("at.bin");
    let mut all = prefix.clone();
    all.extend(
        Frame::new_memory(&cp, &DParams::default())
            .unwrap()
            .to_cframe()
            .unwrap(),
    );
    std::fs::write(&at, &all).unwrap();
    let mut fo = Frame::open_file_at(&at, prefix.len() as u64).unwrap();
    populate(&mut fo);
    drop(fo);
    let stored = std::fs::read(&at).unwrap();
    assert_eq!(&stored[..prefix.len()], &prefix[..]);
    assert_eq!(&stored[prefix.len()..], &bytes[..], "frame at an offset");
    all_flips_reported(
        "cframe at an offset",
        &bytes,
        true,
        Some(&prot),
        |b| {
            let mut all = prefix.clone();
            all.extend_from_slice(b);
            all.extend_from_slice(b"and after");
            std::fs::write(&at, all).unwrap()
        },
        || Frame::open_file_at(&at, prefix.len() as u64),
    );
    // fill_special's index (one SPECIAL_VALUE chunk), no data section.
    let mut fs = Frame::new_memory(&cp, &DParams::default()).unwrap();
    fs.add_metalayer("m", b"\x01").unwrap();
    fs.fill_special(SpecialKind::Zeros, 10, 39_000, 4000, 4000)
        .unwrap();
    let bytes = fs.to_cframe().unwrap();
    assert!(fuzz_check::protected(&bytes).iter().all(|&p| p));
    all_flips_reported(
        "fill_special cframe",
        &bytes,
        false,
        None,
        |b| *cell.borrow_mut() = b.to_vec(),
        || Frame::from_bytes(&cell.borrow()),
    );
}

#[test]
fn every_bit_flip_of_an_sframe_is_reported() {
    let dir = common::scratch::dir("b2f-fp-sflip-");
    let sdir = dir.path().join("s.b2frame");
    let mut f = Frame::new_sframe(&sdir, &cparams(), &DParams::default()).unwrap();
    populate(&mut f);
    drop(f);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&sdir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    // The index file and the chunk files of live chunks (a deleted chunk's file is gone).
    assert!(files.len() >= 4, "{files:?}");
    // Each flip rewrites a file and reopens the whole directory. On Windows (tested under wine,
    // where every file open costs milliseconds: all 8 bits of every byte took over 8 minutes)
    // one bit per byte, as the cframe file variants above do; the bits are checked
    // exhaustively on the other platforms, and the fingerprint arithmetic is the same code.
    let one_bit = cfg!(windows);
    for p in &files {
        let bytes = std::fs::read(p).unwrap();
        all_flips_reported(
            &p.display().to_string(),
            &bytes,
            one_bit,
            None,
            |b| std::fs::write(p, b).unwrap(),
            || Frame::open(&sdir),
        );
    }
    // A missing or truncated chunk file is reported too.
    let chunk_file = files
        .iter()
        .find(|p| p.extension().unwrap() == "chunk")
        .unwrap();
    let bytes = std::fs::read(chunk_file).unwrap();
    std::fs::write(chunk_file, &bytes[..bytes.len() - 1]).unwrap();
    assert!(reported(|| Frame::open(&sdir)));
    std::fs::remove_file(chunk_file).unwrap();
    assert!(reported(|| Frame::open(&sdir)));
}

/// What the report says for a change in each part.
#[test]
fn mismatches_are_localised() {
    let mut f = Frame::new_memory(&cparams(), &DParams::default()).unwrap();
    populate(&mut f);
    let bytes = f.to_cframe().unwrap();
    let h = f.header();
    let hl = h.header_len as usize;
    let data = hl + 40;
    let index = hl + h.cbytes as usize + 20;
    let n = bytes.len();
    let trailer = n - 25;
    for (at, want) in [
        (hl - 3, vec![Region::Header]),
        (data, vec![Region::Data]),
        (index, vec![Region::Index]),
        (trailer, vec![Region::Trailer]),
        (n - SLOT_LEN, vec![Region::Trailer]),
        (n - 5, vec![Region::Slot]),
    ] {
        // Flip a bit that keeps the frame readable where possible: the last header byte is in
        // a metalayer's content, data bytes are compressed payload.
        let g = Frame::from_bytes(&flipped(&bytes, at, 0)).unwrap();
        assert_eq!(
            g.verify_fingerprint().unwrap(),
            Verdict::Mismatch(want.clone()),
            "byte {at}"
        );
    }
    let g = Frame::from_bytes(&flipped(&bytes, n - TYPE_FROM_END, 0)).unwrap();
    assert_eq!(g.verify_fingerprint().unwrap(), Verdict::DamagedType);
    let g = Frame::from_bytes(&flipped(&bytes, n - TYPE_FROM_END, 1)).unwrap();
    assert_eq!(g.verify_fingerprint().unwrap(), Verdict::Unsupported(3));
}

// ----- the real c-blosc2 -----

type Sc = *mut blosc2_schunk;

struct Ref {
    open: unsafe extern "C" fn(*const c_char) -> Sc,
    open_offset: unsafe extern "C" fn(*const c_char, i64) -> Sc,
    from_buffer: unsafe extern "C" fn(*mut u8, i64, bool) -> Sc,
    to_buffer: unsafe extern "C" fn(Sc, *mut *mut u8, *mut bool) -> i64,
    free: unsafe extern "C" fn(Sc) -> c_int,
    append_buffer: unsafe extern "C" fn(Sc, *const c_void, i32) -> i64,
    decompress_chunk: unsafe extern "C" fn(Sc, i64, *mut c_void, i32) -> c_int,
    delete_chunk: unsafe extern "C" fn(Sc, i64) -> i64,
    meta_update: unsafe extern "C" fn(Sc, *const c_char, *mut u8, i32) -> c_int,
    vlmeta_update: unsafe extern "C" fn(Sc, *const c_char, *mut u8, i32, *mut c_void) -> c_int,
}

fn cref() -> Ref {
    let r = reference();
    // SAFETY: the symbols have these C signatures in c-blosc2 3.3.5's blosc2.h.
    unsafe {
        Ref {
            open: std::mem::transmute(r.sym("blosc2_schunk_open")),
            open_offset: std::mem::transmute(r.sym("blosc2_schunk_open_offset")),
            from_buffer: std::mem::transmute(r.sym("blosc2_schunk_from_buffer")),
            to_buffer: std::mem::transmute(r.sym("blosc2_schunk_to_buffer")),
            free: std::mem::transmute(r.sym("blosc2_schunk_free")),
            append_buffer: std::mem::transmute(r.sym("blosc2_schunk_append_buffer")),
            decompress_chunk: std::mem::transmute(r.sym("blosc2_schunk_decompress_chunk")),
            delete_chunk: std::mem::transmute(r.sym("blosc2_schunk_delete_chunk")),
            meta_update: std::mem::transmute(r.sym("blosc2_meta_update")),
            vlmeta_update: std::mem::transmute(r.sym("blosc2_vlmeta_update")),
        }
    }
}

fn cpath(p: &Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

/// c-blosc2 reads every chunk of `sc` exactly as our frame `f` decompresses it.
fn reference_reads_like_us(r: &Ref, sc: Sc, f: &Frame, what: &str) {
    assert!(!sc.is_null(), "{what}: c-blosc2 refuses the frame");
    // SAFETY: sc is a live schunk of the reference; its struct has c-blosc2's layout.
    let n = unsafe { (*sc).nchunks };
    assert_eq!(n, f.nchunks(), "{what}");
    for i in 0..n {
        let want = f.decompress_chunk(i).unwrap();
        let mut got = vec![0u8; want.len() + 64];
        // SAFETY: got is writable for its length.
        let k = unsafe { (r.decompress_chunk)(sc, i, got.as_mut_ptr().cast(), got.len() as i32) };
        assert_eq!(k, want.len() as c_int, "{what}: chunk {i}");
        assert_eq!(&got[..want.len()], &want[..], "{what}: chunk {i}");
    }
}

#[test]
fn c_blosc2_reads_appends_to_and_unfingerprints_our_frames() {
    let r = cref();
    let dir = common::scratch::dir("b2f-fp-ref-");
    let cp = cparams();
    let dp = DParams::default();
    let file = dir.path().join("f.b2frame");
    let sdir = dir.path().join("s.b2frame");
    let mut a = Frame::new_memory(&cp, &dp).unwrap();
    let mut s = Frame::new_sframe(&sdir, &cp, &dp).unwrap();
    populate(&mut a);
    populate(&mut s);
    let mem = a.to_cframe().unwrap();
    std::fs::write(&file, &mem).unwrap();
    drop((a, s));
    let payload: Vec<u8> = (0..1024u32).map(|i| (i % 251) as u8).collect();
    for path in [&file, &sdir] {
        let ours = Frame::open(path).unwrap();
        assert_match(&ours, "before");
        // SAFETY: valid path; the schunk is freed below.
        let sc = unsafe { (r.open)(cpath(path).as_ptr()) };
        reference_reads_like_us(&r, sc, &ours, &path.display().to_string());
        // SAFETY: sc is live; payload holds 1024 bytes.
        unsafe {
            assert_eq!((r.append_buffer)(sc, payload.as_ptr().cast(), 1024), 5);
            assert_eq!((r.free)(sc), 0);
        }
        // c-blosc2 rewrote the trailer: the frame is now simply unfingerprinted.
        let after = Frame::open(path).unwrap();
        assert_eq!(after.fingerprint_slot().unwrap().fpt, 0);
        assert_eq!(
            after.verify_fingerprint().unwrap(),
            Verdict::Unfingerprinted
        );
        assert_eq!(after.decompress_chunk(4).unwrap(), payload);
        // ... and gets a fingerprint again at our next change (one pass over its data).
        let mut after = after;
        after.append_chunk(&chunk(43, 256)).unwrap();
        assert_changed_ok(&after, "ours after c-blosc2");
        // SAFETY: as above.
        let sc = unsafe { (r.open)(cpath(path).as_ptr()) };
        reference_reads_like_us(&r, sc, &after, "again");
        // SAFETY: sc is live.
        unsafe {
            assert_eq!((r.delete_chunk)(sc, 0), 5);
            assert_eq!((r.free)(sc), 0);
        }
        assert_eq!(
            Frame::open(path).unwrap().verify_fingerprint().unwrap(),
            Verdict::Unfingerprinted
        );
    }
    // An in-memory frame: c-blosc2 reads it, and its to_buffer after an append has fpt 0.
    let ours = Frame::from_bytes(&mem).unwrap();
    let mut copy = mem.clone();
    // SAFETY: copy is live for the schunk's life (copy = true anyway).
    let sc = unsafe { (r.from_buffer)(copy.as_mut_ptr(), copy.len() as i64, true) };
    reference_reads_like_us(&r, sc, &ours, "buffer");
    let mut out: *mut u8 = std::ptr::null_mut();
    let mut needs_free = false;
    // SAFETY: sc is live; out/needs_free are written by to_buffer.
    let bytes = unsafe {
        assert_eq!((r.append_buffer)(sc, payload.as_ptr().cast(), 1024), 5);
        let n = (r.to_buffer)(sc, &mut out, &mut needs_free);
        assert!(n > 0);
        let v = std::slice::from_raw_parts(out, n as usize).to_vec();
        if needs_free {
            libc::free(out.cast());
        }
        assert_eq!((r.free)(sc), 0);
        v
    };
    let g = Frame::from_vec(bytes).unwrap();
    assert_eq!(g.verify_fingerprint().unwrap(), Verdict::Unfingerprinted);
}

/// cframe files fingerprinted by our crash-consistent file commits, as a plain file and at an
/// offset inside a larger file: c-blosc2 reads them like us and appends to them (its trailer
/// rewrite leaves them unfingerprinted), and our next change fingerprints them again.
#[test]
fn c_blosc2_reads_and_appends_to_cframe_files_fingerprinted_by_the_file_commit() {
    let r = cref();
    let dir = common::scratch::dir("b2f-fp-refc-");
    let (cp, dp) = (cparams(), DParams::default());
    let payload: Vec<u8> = (0..1024u32).map(|i| (i % 241) as u8).collect();
    let prefix = b"leading bytes ".repeat(5);
    for offset in [0, prefix.len() as u64] {
        let path = dir.path().join(format!("f{offset}.b2frame"));
        let mut f = if offset == 0 {
            Frame::new_file(&path, &cp, &dp).unwrap()
        } else {
            let mut all = prefix.clone();
            all.extend(Frame::new_memory(&cp, &dp).unwrap().to_cframe().unwrap());
            std::fs::write(&path, all).unwrap();
            Frame::open_file_at(&path, offset).unwrap()
        };
        populate(&mut f);
        assert_match(&f, "populated file");
        drop(f);
        let what = format!("offset {offset}");
        let ours = Frame::open_file_at(&path, offset).unwrap();
        assert_match(&ours, &what);
        // SAFETY: valid path; the schunk is freed below.
        let sc = unsafe { (r.open_offset)(cpath(&path).as_ptr(), offset as i64) };
        assert!(!sc.is_null(), "{what}: c-blosc2 open");
        reference_reads_like_us(&r, sc, &ours, &what);
        // SAFETY: sc is live; payload holds 1024 bytes.
        unsafe {
            assert_eq!((r.append_buffer)(sc, payload.as_ptr().cast(), 1024), 5);
            assert_eq!((r.free)(sc), 0);
        }
        let mut after = Frame::open_file_at(&path, offset).unwrap();
        assert_eq!(
            after.verify_fingerprint().unwrap(),
            Verdict::Unfingerprinted,
            "{what}"
        );
        assert_eq!(after.decompress_chunk(4).unwrap(), payload);
        after.append_chunk(&chunk(47, 256)).unwrap();
        assert_match(&after, &what);
        // SAFETY: as above.
        let sc = unsafe { (r.open_offset)(cpath(&path).as_ptr(), offset as i64) };
        assert!(!sc.is_null(), "{what}: c-blosc2 reopen");
        reference_reads_like_us(&r, sc, &after, &what);
        // SAFETY: sc is live.
        unsafe { assert_eq!((r.free)(sc), 0) };
    }
}

/// c-blosc2's metalayer update rewrites only the header, leaving the slot as it was: our check
/// then reports the header (the documented limitation), and a later change of ours makes the
/// frame match again.
#[test]
fn c_blosc2_metalayer_update_is_reported_in_the_header() {
    let r = cref();
    let dir = common::scratch::dir("b2f-fp-meta-");
    let file = dir.path().join("f.b2frame");
    let mut f = Frame::new_memory(&cparams(), &DParams::default()).unwrap();
    populate(&mut f);
    std::fs::write(&file, f.to_cframe().unwrap()).unwrap();
    drop(f);
    let name = CString::new("meta1").unwrap();
    let mut content = *b"\x93\x09\x08\x07";
    // SAFETY: valid path and buffers.
    unsafe {
        let sc = (r.open)(cpath(&file).as_ptr());
        assert!(!sc.is_null());
        assert!((r.meta_update)(sc, name.as_ptr(), content.as_mut_ptr(), 4) >= 0);
        assert_eq!((r.free)(sc), 0);
    }
    let mut f = Frame::open(&file).unwrap();
    assert_eq!(f.metalayer("meta1").unwrap(), b"\x93\x09\x08\x07");
    assert_eq!(
        f.verify_fingerprint().unwrap(),
        Verdict::Mismatch(vec![Region::Header])
    );
    // Our next change writes the header anew.
    f.append_chunk(&chunk(47, 256)).unwrap();
    assert_changed_ok(&f, "after our append");
    // A vlmetalayer update by c-blosc2 rewrites the trailer: unfingerprinted.
    let vname = CString::new("vl1").unwrap();
    let mut v = *b"\xa3abc";
    // SAFETY: as above.
    unsafe {
        let sc = (r.open)(cpath(&file).as_ptr());
        assert!(
            (r.vlmeta_update)(sc, vname.as_ptr(), v.as_mut_ptr(), 4, std::ptr::null_mut()) >= 0
        );
        assert_eq!((r.free)(sc), 0);
    }
    assert_eq!(
        Frame::open(&file).unwrap().verify_fingerprint().unwrap(),
        Verdict::Unfingerprinted
    );
}

#[path = "../../fuzz/checks/frame_fingerprint.rs"]
mod fuzz_check;

/// The fuzz target's check (fuzz/checks/frame_fingerprint.rs) on every 1-bit and 32-bit burst
/// position of every frame it mutates, on arbitrary edits, and on its committed seeds.
#[test]
fn fuzz_check_on_every_burst_and_the_seeds() {
    let bases = fuzz_check::bases();
    for (k, b) in bases.iter().enumerate() {
        let seq: Vec<u8> = fuzz_check::covered(b)
            .unwrap()
            .iter()
            .flat_map(|&(s, e)| b[s..e].iter().copied())
            .collect();
        assert_eq!(
            fuzz_check::crc32_bitwise(&seq),
            u32::from_le_bytes(b[b.len() - 16..b.len() - 12].try_into().unwrap())
        );
        let sel = (k as u8) << 1;
        fuzz_check::run(&[sel]);
        for pos in 0..b.len() as u16 {
            let p = pos.to_le_bytes();
            fuzz_check::run(&[sel, p[0], p[1], 1, 0, 0, 0]);
            fuzz_check::run(&[sel, p[0], p[1], 0x80, 0xff, 0x7f, 0xff]);
            // Edits: the same byte written back (untouched), and a changed byte.
            fuzz_check::run(&[sel | 1, p[0], p[1], b[pos as usize]]);
            fuzz_check::run(&[sel | 1, p[0], p[1], !b[pos as usize]]);
        }
    }
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/frame_fingerprint");
    for e in std::fs::read_dir(seeds).unwrap() {
        fuzz_check::run(&std::fs::read(e.unwrap().path()).unwrap());
    }
}
