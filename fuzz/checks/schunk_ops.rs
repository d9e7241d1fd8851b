//! A script of super-chunk operations decoded from the input, applied both to the safe
//! super-chunk (`b2frame::schunk::SChunk`, in memory as plain chunks or as a cframe, or as a
//! cframe file) and to a model (decoded chunk data + metalayer and vlmetalayer lists). After
//! every step the super-chunk must decode to exactly the model; an operation that fails must
//! leave everything unchanged; operations that cannot fail (append, delete/reorder with valid
//! arguments, serialising, reopening what was serialised) must succeed. A plain super-chunk
//! takes a 0-byte chunk or one shorter than 32 bytes (as c-blosc2 does) but no frame can hold
//! one: serialising must then fail with `InvalidParam`, write nothing and change nothing.
//!
//! Input: 4 header bytes (storage, codec, typesize, clevel/filter), then ops of the form
//! `op, a, b, len, <len bytes>`.
//!
//! Shared by the fuzz target and by tests/fuzz_regressions.rs (regression inputs).
use b2frame::chunk::{compress_vec, CParams, DParams};
use b2frame::schunk::{NewStorage, SChunk};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use super::shared::CODECS;

/// Names: valid ones, a 31-character one, an empty and a too-long one (both invalid).
const NAMES: [&str; 6] = [
    "a",
    "b2nd",
    "vl",
    "0123456789012345678901234567890",
    "",
    "0123456789012345678901234567890123456789",
];

#[derive(Default, Clone, PartialEq, Debug)]
struct Model {
    /// What each chunk decodes to (an error for hostile chunks the super-chunk accepted but
    /// cannot decode: that must then stay so).
    chunks: Vec<Result<Vec<u8>, b2frame::Error>>,
    metalayers: Vec<(String, Vec<u8>)>,
    vlmeta: Vec<(String, Vec<u8>)>,
}

fn observe(sc: &mut SChunk) -> Model {
    let n = sc.nchunks();
    let chunks = (0..n).map(|i| sc.decompress_chunk(i)).collect();
    let metalayers = sc.metalayers().to_vec();
    let mut vlmeta: Vec<(String, Vec<u8>)> = sc
        .vlmetalayers()
        .iter()
        .map(|(k, _)| k.clone())
        .collect::<Vec<_>>()
        .into_iter()
        .map(|k| {
            let v = sc.vlmeta_get(&k).expect("a listed vlmetalayer decodes");
            (k, v)
        })
        .collect();
    vlmeta.sort();
    Model {
        chunks,
        metalayers,
        vlmeta,
    }
}

fn check(sc: &mut SChunk, model: &Model, step: usize, what: &str) {
    let got = observe(sc);
    assert_eq!(
        got.chunks.len(),
        model.chunks.len(),
        "nchunks after step {step} ({what})"
    );
    for (i, (g, m)) in got.chunks.iter().zip(&model.chunks).enumerate() {
        match (g, m) {
            (Ok(g), Ok(m)) => assert!(g == m, "chunk {i} differs after step {step} ({what})"),
            (Err(_), Err(_)) => {}
            _ => panic!("chunk {i} decodability changed after step {step} ({what}): {g:?}"),
        }
    }
    assert_eq!(
        got.metalayers, model.metalayers,
        "metalayers after step {step} ({what})"
    );
    let mut mv = model.vlmeta.clone();
    mv.sort();
    assert_eq!(got.vlmeta, mv, "vlmetalayers after step {step} ({what})");
    let c = sc.counters();
    assert_eq!(c.nchunks, model.chunks.len() as i64);
    let nbytes: i64 = (0..c.nchunks)
        .map(|i| i64::from(sc.chunk_nbytes(i).expect("chunk_nbytes")))
        .sum();
    assert_eq!(
        c.nbytes, nbytes,
        "nbytes counter after step {step} ({what})"
    );
}

/// Op 255: `fill_special` with a special value from `b` (VALUE is refused), a chunksize from
/// the payload (sometimes 0 or not a whole number of items) and up to 64 chunks. Only an empty
/// super-chunk (no chunks, no compressed bytes) takes it; then every chunk has the chunksize (the last may be shorter), ZERO
/// chunks decode to zeros, and the later steps run on its one-entry index. Returns whether it
/// added chunks that do not decode.
fn fill_special(sc: &mut SChunk, model: &mut Model, a: u8, b: u8, payload: &[u8]) -> bool {
    use b2frame::frame::chunkinfo::special;
    let kind = [special::ZERO, special::NAN, special::UNINIT, special::VALUE][b as usize % 4];
    let ts = sc.cparams().typesize;
    let chunksize = i32::from(payload.first().copied().unwrap_or(0)) * 16 + i32::from(b >> 4);
    let per_chunk = i64::from(chunksize.max(0) / ts);
    let nitems = i64::from(a % 65) * per_chunk + i64::from(a >> 7) * (per_chunk / 2).max(1);
    // Empty as c-blosc2 counts it: no chunks and no compressed bytes, and a cframe keeps the
    // bytes of deleted chunks as dead space (so c-blosc2 refuses to fill it too).
    let empty = model.chunks.is_empty() && sc.counters().cbytes == 0;
    let r = sc.fill_special(nitems, i32::from(kind), chunksize);
    let Ok(k) = r else {
        // Refused: only for the reasons c-blosc2 has.
        let valid =
            nitems > 0 && chunksize > 0 && empty && chunksize % ts == 0 && kind != special::VALUE;
        assert!(
            !valid,
            "fill_special({nitems}, {kind}, {chunksize}) failed: {r:?}"
        );
        return false;
    };
    if nitems == 0 {
        assert_eq!(k, 0);
        return false;
    }
    assert!(
        empty && kind != special::VALUE,
        "fill_special on a non-empty super-chunk"
    );
    let total = nitems * i64::from(ts);
    let cs = i64::from(chunksize);
    assert_eq!(k, (total + cs - 1) / cs, "fill_special chunk count");
    for i in 0..k {
        let size = cs.min(total - i * cs);
        assert_eq!(
            sc.chunk_nbytes(i).map(i64::from),
            Ok(size),
            "filled chunk {i} size"
        );
        // NaN chunks only decode for typesizes 4 and 8 (as in c-blosc2); that then stays so.
        let d = sc.decompress_chunk(i);
        match &d {
            Ok(d) => {
                assert_eq!(d.len() as i64, size, "filled chunk {i} decoded size");
                if kind == special::ZERO {
                    assert!(d.iter().all(|&x| x == 0), "filled chunk {i} is not zeros");
                }
            }
            Err(e) => assert!(
                kind == special::NAN && ts != 4 && ts != 8,
                "chunk {i}: {e:?}"
            ),
        }
        model.chunks.push(d);
    }
    kind == special::NAN && ts != 4 && ts != 8
}

/// Whether the super-chunk holds a 0-byte chunk or one shorter than a 32-byte header (frame
/// readers need room for one at every stored offset): only a plain one takes such a chunk (as
/// c-blosc2 does), and serialising it into a frame must then fail and change nothing.
fn holds_unframeable_chunk(sc: &SChunk) -> bool {
    (0..sc.nchunks())
        .any(|i| sc.chunk_nbytes(i) == Ok(0) || sc.chunk(i).is_ok_and(|c| c.len() < 32))
}

/// The scratch files of one `run`: named after the process and a per-process counter (the
/// regression tests call `run` from parallel threads) and removed, with their `.b2lock`
/// sidecars, when the run ends, including its early returns. A run that panics keeps them for
/// diagnosis (under the fuzzer a panic aborts the process anyway).
struct Scratch {
    base: PathBuf,
}

/// The tags of the files a run may write: the file-backed super-chunk and the `to_file`
/// targets.
const SCRATCH_TAGS: [&str; 3] = ["a", "b", "c"];

impl Scratch {
    fn new() -> Self {
        static RUNS: AtomicU64 = AtomicU64::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let base = std::env::temp_dir().join(format!("b2frame-fuzz-{}-{n}", std::process::id()));
        let s = Scratch { base };
        s.remove_all();
        s
    }

    fn path(&self, tag: &str) -> PathBuf {
        let mut p = self.base.clone().into_os_string();
        p.push(format!("-{tag}.b2frame"));
        PathBuf::from(p)
    }

    fn remove_all(&self) {
        for tag in SCRATCH_TAGS {
            let p = self.path(tag);
            let mut lock = p.clone().into_os_string();
            lock.push(".b2lock");
            let _ = std::fs::remove_file(lock);
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.remove_all();
        }
    }
}

/// Runs one fuzz input; panics on a violated property.
pub fn run(input: &[u8]) {
    if input.len() < 4 {
        return;
    }
    let (h, mut script) = input.split_at(4);
    let cp = CParams {
        compcode: CODECS[h[1] as usize % 5],
        clevel: h[3] % 10,
        typesize: 1 + (h[2] % 16) as i32,
        filters: [0, 0, 0, 0, 0, (h[3] >> 4) % 4],
        ..CParams::default()
    };
    let scratch = Scratch::new();
    let file = scratch.path(SCRATCH_TAGS[0]);
    let storage = match h[0] % 3 {
        0 => NewStorage::Plain,
        1 => NewStorage::Memory,
        _ => NewStorage::File(&file),
    };
    let Ok(mut sc) = SChunk::new(storage, cp, DParams::default()) else {
        return;
    };
    let mut model = Model::default();
    let mut step = 0;
    let mut reopens = 0usize;
    let mut hostile = false;
    // A NaN fill of a typesize other than 4 or 8 took place (its chunks never decode).
    let mut undecodable_fill = false;
    while script.len() >= 4 && step < 64 {
        step += 1;
        let (op, a, b, len) = (script[0], script[1], script[2], script[3] as usize);
        script = &script[4..];
        let len = len.min(script.len());
        let (payload, rest) = script.split_at(len);
        script = rest;
        let n = model.chunks.len() as i64;
        let name = NAMES[b as usize % NAMES.len()];
        let what;
        if op == 255 {
            // NaN chunks of a typesize other than 4 or 8 never decode: like hostile chunks, they
            // may make later changes fail (a frame turning variable cannot store them as
            // regular chunks), which must then change nothing.
            if fill_special(&mut sc, &mut model, a, b, payload) {
                (hostile, undecodable_fill) = (true, true);
            }
            check(&mut sc, &model, step, "fill_special");
            // A frame's stored bytes (its index as written) read back to the same chunks.
            if let Some(f) = sc.frame() {
                let raw = f.to_cframe().expect("the frame's own bytes");
                let mut again = SChunk::from_cframe(&raw, true, 1).expect("reopen after fill");
                check(&mut again, &model, step, "fill_special, read back");
            }
            continue;
        }
        match op % 14 {
            0 => {
                what = "append_buffer";
                let r = sc.append_buffer(payload);
                if let Ok(k) = r {
                    assert_eq!(k, n + 1);
                    assert!(
                        !payload.is_empty() || sc.frame().is_none(),
                        "a frame took 0 bytes"
                    );
                    model.chunks.push(Ok(payload.to_vec()));
                } else {
                    // Only an empty buffer (frames), or a VL-block chunk (hostile) among the
                    // chunks, may make a regular chunk unwelcome.
                    let empty_in_frame = payload.is_empty() && sc.frame().is_some();
                    assert!(empty_in_frame || hostile, "append_buffer failed: {r:?}");
                }
            }
            1 | 2 => {
                // A chunk compressed with other parameters (any codec/typesize works).
                let ocp = CParams {
                    compcode: CODECS[a as usize % 5],
                    typesize: 1 + (a >> 3) as i32,
                    ..cp
                };
                let Ok(chunk) = compress_vec(&ocp, payload) else {
                    continue;
                };
                let i = a as i64 % (n + 2) - 1; // sometimes -1 or past the end
                if op % 14 == 1 {
                    what = "insert_chunk";
                    if sc.insert_chunk(i, &chunk).is_ok() {
                        assert!((0..=n).contains(&i), "insert at {i} of {n} succeeded");
                        model.chunks.insert(i as usize, Ok(payload.to_vec()));
                    }
                } else {
                    what = "update_chunk";
                    if sc.update_chunk(i, &chunk).is_ok() {
                        assert!((0..n).contains(&i), "update at {i} of {n} succeeded");
                        model.chunks[i as usize] = Ok(payload.to_vec());
                    }
                }
            }
            3 => {
                what = "delete_chunk";
                let i = a as i64 % (n + 2) - 1;
                let r = sc.delete_chunk(i);
                if (0..n).contains(&i) {
                    assert_eq!(r, Ok(n - 1), "delete {i} of {n}");
                    let _ = model.chunks.remove(i as usize);
                } else {
                    assert!(r.is_err());
                }
            }
            4 => {
                what = "reorder";
                let mut order: Vec<i64> = (0..n).collect();
                // Fisher-Yates driven by the payload.
                for k in (1..order.len()).rev() {
                    let r = payload.get(k % payload.len().max(1)).copied().unwrap_or(0);
                    order.swap(k, r as usize % (k + 1));
                }
                let valid = b & 1 == 0 || order.is_empty();
                if !valid {
                    // Break the permutation: a duplicate, an out-of-range or a short list.
                    match a % 3 {
                        0 => order[0] = order[order.len() - 1].max(1) % n.max(1),
                        1 => order[0] = n + a as i64,
                        _ => {
                            order.pop();
                        }
                    }
                }
                let is_perm = {
                    let mut s = order.clone();
                    s.sort();
                    s == (0..n).collect::<Vec<_>>()
                };
                let r = sc.reorder(&order);
                // Moving a short special chunk off the end turns the frame variable-sized,
                // where special chunks are stored as regular ones: undecodable NaN chunks have
                // no regular form, so that reorder fails (and must change nothing).
                let excused = r.is_err() && undecodable_fill && sc.frame().is_some();
                if is_perm && !excused {
                    assert!(r.is_ok(), "reorder {order:?}: {r:?}");
                    let old = std::mem::take(&mut model.chunks);
                    model.chunks = order.iter().map(|&o| old[o as usize].clone()).collect();
                } else if !is_perm {
                    assert!(r.is_err(), "reorder accepted {order:?}");
                }
            }
            5 => {
                what = "add_metalayer";
                if let Ok(k) = sc.add_metalayer(name, payload) {
                    assert!(!name.is_empty() && name.len() <= 31);
                    assert!(model.metalayers.iter().all(|(m, _)| m != name));
                    assert_eq!(k, model.metalayers.len());
                    model.metalayers.push((name.to_string(), payload.to_vec()));
                }
            }
            6 => {
                what = "update_metalayer";
                if let Ok(k) = sc.update_metalayer(name, payload) {
                    let (m, stored) = &mut model.metalayers[k];
                    assert_eq!(m, name);
                    assert!(payload.len() <= stored.len());
                    stored[..payload.len()].copy_from_slice(payload);
                }
            }
            7 => {
                what = "vlmeta_add";
                let exists = model.vlmeta.iter().any(|(m, _)| m == name);
                let r = sc.vlmeta_add(name, payload, None);
                if r.is_ok() {
                    assert!(!exists && !name.is_empty());
                    model.vlmeta.push((name.to_string(), payload.to_vec()));
                } else if !exists && !name.is_empty() && name.len() <= 31 && !payload.is_empty() {
                    panic!("vlmeta_add({name:?}) of a new name failed: {r:?}");
                }
            }
            8 => {
                what = "vlmeta_update";
                if sc.vlmeta_update(name, payload, None).is_ok() {
                    let e = model.vlmeta.iter_mut().find(|(m, _)| m == name);
                    e.expect("updated a vlmetalayer that does not exist").1 = payload.to_vec();
                }
            }
            9 => {
                what = "vlmeta_delete";
                let r = sc.vlmeta_delete(name);
                let pos = model.vlmeta.iter().position(|(m, _)| m == name);
                match pos {
                    Some(p) => {
                        assert_eq!(r, Ok(model.vlmeta.len() - 1), "vlmeta_delete({name:?})");
                        model.vlmeta.remove(p);
                    }
                    None => assert!(r.is_err()),
                }
            }
            10 => {
                what = "to_cframe + from_cframe";
                let bytes = match sc.to_cframe() {
                    Err(e) if holds_unframeable_chunk(&sc) => {
                        assert_eq!(e, b2frame::Error::InvalidParam);
                        check(
                            &mut sc,
                            &model,
                            step,
                            "to_cframe refused a short or 0-byte chunk",
                        );
                        continue;
                    }
                    r => r.expect("to_cframe"),
                };
                assert!(
                    !holds_unframeable_chunk(&sc),
                    "a short or 0-byte chunk went into a cframe"
                );
                sc = SChunk::from_cframe(&bytes, a & 1 == 0, 1)
                    .unwrap_or_else(|e| panic!("reopening our own cframe failed: {e:?}"));
            }
            11 => {
                what = "to_file + open";
                reopens += 1;
                let p = scratch.path(SCRATCH_TAGS[1 + reopens % 2]);
                let _ = std::fs::remove_file(&p);
                match sc.to_file(&p) {
                    Err(e) if holds_unframeable_chunk(&sc) => {
                        assert_eq!(e, b2frame::Error::InvalidParam);
                        assert!(!p.exists(), "to_file wrote a frame it refused");
                        check(
                            &mut sc,
                            &model,
                            step,
                            "to_file refused a short or 0-byte chunk",
                        );
                        continue;
                    }
                    r => r.expect("to_file"),
                };
                assert!(
                    !holds_unframeable_chunk(&sc),
                    "a short or 0-byte chunk went into a file"
                );
                sc = SChunk::open(&p).unwrap_or_else(|e| panic!("open our own file: {e:?}"));
            }
            12 => {
                // A hostile chunk (arbitrary bytes): may be refused; if taken, whatever it
                // decodes to (or fails with) must then stay so.
                what = "insert hostile chunk";
                let i = a as i64 % (n + 1);
                if sc.insert_chunk(i, payload).is_ok() {
                    hostile = true;
                    let d = sc.decompress_chunk(i);
                    model.chunks.insert(i as usize, d);
                }
            }
            _ => {
                what = "update with hostile chunk";
                if n > 0 {
                    let i = a as i64 % n;
                    if sc.update_chunk(i, payload).is_ok() {
                        hostile = true;
                        model.chunks[i as usize] = sc.decompress_chunk(i);
                    }
                }
            }
        }
        check(&mut sc, &model, step, what);
    }
    // The super-chunk is closed before `scratch` removes its files.
    drop(sc);
}
