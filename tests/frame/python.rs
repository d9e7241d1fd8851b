//! Interop with c-blosc2 through python-blosc2: `tests/python/make_frames.py` writes a seeded set
//! of frames (cframes, sframes, metalayers, b2nd arrays, vlmetalayers, special chunks,
//! variable-size chunks, inserts/updates/deletes, frames inside a larger file) and prints what
//! the reference reads back; our reader must read the same chunks and metalayers.
//!
//! The Python of the project's `.venv` (or `B2FRAME_PYTHON`) is required: a missing reference
//! fails the test instead of skipping it.

use b2frame::frame::chunkinfo::special;
use b2frame::frame::{Frame, Target};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex, Weak};

use crate::common;
use common::scratch::Scratch;

/// A chunk as the reference returns it and decompressed; `None` where the reference fails.
type ChunkPair = (Option<Vec<u8>>, Option<Vec<u8>>);

struct Expected {
    path: String,
    offset: u64,
    nchunks: i64,
    chunks: Vec<ChunkPair>,
    meta: Vec<(String, Vec<u8>)>,
    vlmeta: Vec<(String, Vec<u8>)>,
    /// The mutations that produced the frame (`op` lines, split on spaces).
    ops: Vec<Vec<String>>,
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s == "ERR" {
        return None;
    }
    let b = s.as_bytes();
    assert!(b.len().is_multiple_of(2), "odd hex");
    let d = |c: u8| (c as char).to_digit(16).expect("hex digit") as u8;
    Some(
        (0..b.len() / 2)
            .map(|i| d(b[2 * i]) << 4 | d(b[2 * i + 1]))
            .collect(),
    )
}

/// The frames the generator wrote, in a directory that lives as long as this value.
struct Generated {
    frames: Vec<Expected>,
    /// Removed when the last holder drops it after passing (see `common::scratch`).
    _dir: Scratch,
}

/// Runs the generator and parses its report. Tests that run at the same time share one run:
/// each holds it while it runs and the last one to finish removes its directory (a test that
/// starts later runs the generator anew), so no directory outlives the tests.
fn expected() -> Arc<Generated> {
    static SHARED: Mutex<Weak<Generated>> = Mutex::new(Weak::new());
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(g) = shared.upgrade() {
        return g;
    }
    let g = Arc::new(generate());
    *shared = Arc::downgrade(&g);
    g
}

fn generate() -> Generated {
    let dir = common::scratch::dir("b2frame-pyinterop-");
    // One string (not `Path::join`, which on Windows would add a `\` to this Unix path, given to
    // a Linux Python under wine).
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/make_frames.py");
    let out = Command::new(common::python())
        .arg(script)
        .arg(dir.path())
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "make_frames.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut frames = Vec::new();
    let mut cur: Option<Expected> = None;
    for line in text.lines() {
        let t: Vec<&str> = line.split(' ').collect();
        match t[0] {
            "frame" => {
                cur = Some(Expected {
                    path: t[1].to_string(),
                    offset: t[2].parse().unwrap(),
                    nchunks: t[3].parse().unwrap(),
                    chunks: Vec::new(),
                    meta: Vec::new(),
                    vlmeta: Vec::new(),
                    ops: Vec::new(),
                })
            }
            "chunk" => cur
                .as_mut()
                .unwrap()
                .chunks
                .push((unhex(t[2]), unhex(t[3]))),
            "meta" => cur
                .as_mut()
                .unwrap()
                .meta
                .push((t[1].to_string(), unhex(t.get(2).unwrap_or(&"")).unwrap())),
            "vlmeta" => cur
                .as_mut()
                .unwrap()
                .vlmeta
                .push((t[1].to_string(), unhex(t.get(2).unwrap_or(&"")).unwrap())),
            "op" => cur
                .as_mut()
                .unwrap()
                .ops
                .push(t[1..].iter().map(|x| x.to_string()).collect()),
            "end" => frames.push(cur.take().unwrap()),
            _ => panic!("unexpected line {line}"),
        }
    }
    assert!(frames.len() >= 20, "only {} frames", frames.len());
    Generated { frames, _dir: dir }
}

fn open(e: &Expected) -> Frame {
    let p = Path::new(&e.path);
    let f = if p.is_dir() {
        Frame::open(p)
    } else {
        Frame::open_file_at(p, e.offset)
    };
    f.unwrap_or_else(|err| panic!("{}: open failed: {err:?}", e.path))
}

#[test]
fn chunks_and_metalayers_match_the_reference() {
    let mut nchunks = 0;
    let generated = expected();
    for e in &generated.frames {
        let f = open(e);
        assert_eq!(f.nchunks(), e.nchunks, "{}", e.path);
        for (i, (raw, _)) in e.chunks.iter().enumerate() {
            let ours = f.chunk(i as i64);
            match raw {
                Some(raw) => {
                    assert_eq!(&ours.unwrap()[..], &raw[..], "{} chunk {i}", e.path);
                    nchunks += 1;
                }
                None => assert!(ours.is_err(), "{} chunk {i}", e.path),
            }
        }
        let names: Vec<&str> = f.metalayers().iter().map(|(n, _)| n.as_str()).collect();
        let want: Vec<&str> = e.meta.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, want, "{}", e.path);
        for (n, v) in &e.meta {
            assert_eq!(f.metalayer(n), Some(&v[..]), "{} meta {n}", e.path);
        }
        let mut names: Vec<&str> = f.vlmetalayers().iter().map(|(n, _)| n.as_str()).collect();
        let mut want: Vec<&str> = e.vlmeta.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        want.sort_unstable();
        assert_eq!(names, want, "{}", e.path);
    }
    assert!(nchunks > 60, "only {nchunks} chunks compared");
}

#[test]
fn cframes_reserialise_byte_identically() {
    let generated = expected();
    for e in &generated.frames {
        let p = Path::new(&e.path);
        if p.is_dir() {
            continue;
        }
        let f = open(e);
        let file = std::fs::read(p).unwrap();
        let start = e.offset as usize;
        let end = start + f.header().frame_len as usize;
        assert_eq!(f.to_cframe().unwrap(), &file[start..end], "{}", e.path);
        let mut h = f.header().clone();
        assert_eq!(
            h.to_bytes().unwrap(),
            &file[start..start + f.header().header_len as usize],
            "{} header",
            e.path
        );
        let t = b2frame::frame::trailer::to_bytes(f.vlmetalayers()).unwrap();
        assert!(file[start..end].ends_with(&t), "{} trailer", e.path);
    }
}

/// Needs the chunk engine (`crate::chunk::decompress_vec`).
#[test]
fn chunks_and_vlmetalayers_decompress_like_the_reference() {
    let generated = expected();
    for e in &generated.frames {
        let f = open(e);
        for (i, (_, dec)) in e.chunks.iter().enumerate() {
            if let Some(dec) = dec {
                let ours = f.decompress_chunk(i as i64);
                if f.chunk_info(i as i64).unwrap().special == special::UNINIT {
                    // Uninitialised contents: only the size is defined.
                    assert_eq!(ours.map(|v| v.len()), Ok(dec.len()), "{} chunk {i}", e.path);
                } else {
                    assert_eq!(ours.as_deref(), Ok(&dec[..]), "{} chunk {i}", e.path);
                }
            }
        }
        for (n, v) in &e.vlmeta {
            assert_eq!(
                f.vlmetalayer(n).as_deref(),
                Ok(&v[..]),
                "{} vlmeta {n}",
                e.path
            );
        }
    }
}

/// Applies logged ops (from `ops[from..]`, skipping the snapshot marker) to `f`.
fn replay(f: &mut Frame, e: &Expected, ops: &[Vec<String>]) {
    for op in ops {
        let chunk = || unhex(op.last().unwrap()).unwrap();
        let idx = || op[1].parse::<i64>().unwrap();
        let r = match op[0].as_str() {
            "snapshot" => Ok(0),
            "chunksize" => f.set_chunksize(op[1].parse().unwrap()).map(|_| 0),
            "append" => f.append_chunk(&chunk()),
            "insert" => f.insert_chunk(idx(), &chunk()),
            "update" => f.update_chunk(idx(), &chunk()),
            "delete" => f.delete_chunk(idx()),
            other => panic!("unknown op {other}"),
        };
        r.unwrap_or_else(|err| panic!("{}: {op:?}: {err:?}", e.path));
    }
}

/// The sframe directories `ours` and `theirs` hold the same files with the same bytes (`ours`
/// once its handle is dropped: an open handle keeps its spare index file there,
/// docs/durability.md "sframes").
fn assert_same_dirs(ours: &Path, theirs: &Path) {
    for name in std::fs::read_dir(theirs)
        .unwrap()
        .map(|d| d.unwrap().file_name())
    {
        let a = std::fs::read(ours.join(&name)).map(|a| common::without_fingerprint(&a));
        let b = common::without_fingerprint(&std::fs::read(theirs.join(&name)).unwrap());
        assert_eq!(a.ok().as_ref(), Some(&b), "{} {name:?}", theirs.display());
    }
    assert_eq!(
        std::fs::read_dir(ours).unwrap().count(),
        std::fs::read_dir(theirs).unwrap().count(),
        "{}",
        theirs.display()
    );
}

/// Replays c-blosc2's mutations (append, insert, update, delete; special chunks; switches to
/// variable chunk sizes) with our writer, into a new frame in memory, in a file and as an
/// sframe: the result must be byte-identical to c-blosc2's.
#[test]
fn replayed_mutations_write_the_same_bytes() {
    let mut replayed = 0;
    for e in expected().frames.iter().filter(|e| !e.ops.is_empty()) {
        let reference = open(e);
        let p = Path::new(&e.path);
        let out = p.with_extension("replay");
        let _ = std::fs::remove_dir_all(&out);
        let _ = std::fs::remove_file(&out);
        let targets: Vec<Target> = if p.is_dir() {
            vec![Target::Sparse(&out)]
        } else {
            vec![Target::Memory, Target::File(&out)]
        };
        for target in targets {
            let mut f = Frame::new_like(reference.header(), target).unwrap();
            replay(&mut f, e, &e.ops);
            if p.is_dir() {
                drop(f);
                assert_same_dirs(&out, p);
            } else {
                let theirs = std::fs::read(p).unwrap();
                let ours = common::without_fingerprint(&f.to_cframe().unwrap());
                assert_eq!(ours, theirs, "{} {target:?}", e.path);
                if let Target::File(path) = target {
                    let ours = common::without_fingerprint(&std::fs::read(path).unwrap());
                    assert_eq!(ours, theirs, "{}", e.path);
                }
            }
            replayed += 1;
        }
    }
    assert_eq!(replayed, 10);
}

/// Opens a frame c-blosc2 wrote (file or directory) and applies the rest of its mutations in
/// place: the files must end up byte-identical to what c-blosc2 produced.
#[test]
fn in_place_mutations_of_reference_frames_match() {
    let mut done = 0;
    let generated = expected();
    for e in &generated.frames {
        let Some(at) = e.ops.iter().position(|op| op[0] == "snapshot") else {
            continue;
        };
        let snap = Path::new(&e.ops[at][1]);
        let work = snap.with_extension("inplace");
        let _ = std::fs::remove_dir_all(&work);
        if snap.is_dir() {
            std::fs::create_dir_all(&work).unwrap();
            for d in std::fs::read_dir(snap).unwrap() {
                let d = d.unwrap();
                std::fs::copy(d.path(), work.join(d.file_name())).unwrap();
            }
        } else {
            std::fs::copy(snap, &work).unwrap();
        }
        let mut f = Frame::open(&work).unwrap();
        replay(&mut f, e, &e.ops[at + 1..]);
        let p = Path::new(&e.path);
        if p.is_dir() {
            drop(f);
            assert_same_dirs(&work, p);
        } else {
            assert_eq!(
                common::without_fingerprint(&std::fs::read(&work).unwrap()),
                std::fs::read(p).unwrap(),
                "{}",
                e.path
            );
        }
        done += 1;
    }
    assert_eq!(done, 4);
}
