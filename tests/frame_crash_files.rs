//! Crash-state enumeration for the whole-file calls (issue 18, docs/durability.md, "Whole-file
//! calls"): `to_file`, `append_file`, copies into a cframe file and into an sframe directory,
//! and the storage operations of `b2frame convert` and `b2frame compact`. Each call runs on a
//! scratch directory while the recording I/O layer (`b2frame::frame::record`) records its
//! writes, creations, syncs, renames and removals; every crash state of that record (every
//! prefix, every torn write, and in durable mode every subset of the operations between two
//! barriers) is rebuilt as a directory tree, and each frame the call touches must open, in
//! libb2frame and in c-blosc2 3.3.5 alike, with the state before the call or after it. For a
//! new destination "before" means that neither library opens anything there (absent, or not a
//! frame yet).

mod common;

use b2frame::chunk::{self, CParams};
use b2frame::frame::record;
use b2frame::frame::{Frame, Target};
use b2frame::schunk::{NewStorage, SChunk};
use common::crash::{crash_tree_images, ours, read_tree, theirs, write_tree, State};
use common::Rng;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Durable mode is process-wide: cases run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn cparams() -> CParams {
    CParams {
        typesize: 4,
        ..CParams::default()
    }
}

fn data(n: usize, seed: u64) -> Vec<u8> {
    let mut v = vec![0u8; n];
    Rng::new(seed).fill(&mut v);
    v
}

/// A super-chunk at `storage` with a metalayer, `n` chunks (one of them zeros) and a
/// vlmetalayer; `seed` varies the content.
fn filled(storage: NewStorage<'_>, n: u64, seed: u64) -> SChunk {
    let mut sc = SChunk::new(storage, cparams(), Default::default()).unwrap();
    sc.add_metalayer("m", b"abc").unwrap();
    for k in 0..n {
        if k == 1 {
            let mut buf = [0u8; 64];
            let len = chunk::special::zeros(&cparams(), 4000, &mut buf).unwrap();
            sc.append_chunk(&buf[..len]).unwrap();
        } else {
            sc.append_buffer(&data(4000, seed * 100 + k)).unwrap();
        }
    }
    sc.vlmeta_add("v", format!("seed {seed}").as_bytes(), None)
        .unwrap();
    sc
}

/// What both libraries open at `offset` of `path`: `None` when neither opens a frame there.
fn both(path: &Path, offset: u64) -> Result<Option<State>, String> {
    match (ours(path, offset), theirs(path, offset)) {
        (Ok(o), Ok(t)) if o == t => Ok(Some(o)),
        (Ok(o), Ok(t)) => Err(format!(
            "libraries disagree: ours {} / c-blosc2 {}",
            o.brief(),
            t.brief()
        )),
        (Err(_), Err(_)) => Ok(None),
        (Ok(o), Err(e)) => Err(format!("libb2frame opens {} but {e}", o.brief())),
        (Err(e), Ok(t)) => Err(format!("c-blosc2 opens {} but {e}", t.brief())),
    }
}

/// One whole-file call: `prepare` fills the scratch root (outside the record), `call` runs
/// the call there, `targets` names the frames to check (relative path, offset) given the
/// prepared root.
struct Case {
    name: &'static str,
    prepare: fn(&Path),
    call: fn(&Path),
    targets: fn(&Path) -> Vec<(PathBuf, u64)>,
}

fn one(name: &str) -> fn(&Path) -> Vec<(PathBuf, u64)> {
    match name {
        "t.b2frame" => |_| vec![(PathBuf::from("t.b2frame"), 0)],
        "t.b2sframe" => |_| vec![(PathBuf::from("t.b2sframe"), 0)],
        _ => unreachable!(),
    }
}

fn nothing(_: &Path) {}

fn source_file(root: &Path) {
    drop(filled(NewStorage::File(&root.join("src.b2frame")), 3, 1));
}

fn old_target(root: &Path) {
    drop(filled(NewStorage::File(&root.join("t.b2frame")), 2, 9));
}

fn base_file(root: &Path) {
    drop(filled(NewStorage::File(&root.join("base.bin")), 2, 7));
}

fn appended(root: &Path) -> Vec<(PathBuf, u64)> {
    let len = std::fs::metadata(root.join("base.bin")).unwrap().len();
    vec![
        (PathBuf::from("base.bin"), 0),
        (PathBuf::from("base.bin"), len),
    ]
}

/// A cframe with dead space (a deleted chunk), then an updated one, for `compact`.
fn dead_space(root: &Path) {
    let mut sc = filled(NewStorage::File(&root.join("t.b2frame")), 4, 3);
    sc.delete_chunk(2).unwrap();
    sc.update_chunk(0, &chunk::compress_vec(&cparams(), &data(1000, 5)).unwrap())
        .unwrap();
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "to_file new, from memory",
            prepare: nothing,
            call: |root| {
                let sc = filled(NewStorage::Memory, 3, 2);
                sc.to_file(&root.join("t.b2frame")).unwrap();
            },
            targets: one("t.b2frame"),
        },
        Case {
            name: "to_file over an old frame, from plain chunks",
            prepare: old_target,
            call: |root| {
                let sc = filled(NewStorage::Plain, 3, 2);
                sc.to_file(&root.join("t.b2frame")).unwrap();
            },
            targets: one("t.b2frame"),
        },
        Case {
            name: "to_file over an old frame, from a file",
            prepare: |root| {
                source_file(root);
                old_target(root);
            },
            call: |root| {
                let sc = SChunk::open(root.join("src.b2frame")).unwrap();
                sc.to_file(&root.join("t.b2frame")).unwrap();
            },
            targets: one("t.b2frame"),
        },
        Case {
            name: "append_file, from memory",
            prepare: base_file,
            call: |root| {
                let sc = filled(NewStorage::Memory, 3, 2);
                sc.append_file(&root.join("base.bin")).unwrap();
            },
            targets: appended,
        },
        Case {
            name: "append_file, from a file",
            prepare: |root| {
                source_file(root);
                base_file(root);
            },
            call: |root| {
                let sc = SChunk::open(root.join("src.b2frame")).unwrap();
                sc.append_file(&root.join("base.bin")).unwrap();
            },
            targets: appended,
        },
        Case {
            name: "copy into a cframe file",
            prepare: source_file,
            call: |root| {
                let sc = SChunk::open(root.join("src.b2frame")).unwrap();
                sc.copy_to(NewStorage::File(&root.join("t.b2frame")), None, None)
                    .unwrap();
            },
            targets: one("t.b2frame"),
        },
        Case {
            name: "copy into a cframe file, recompressed",
            prepare: source_file,
            call: |root| {
                let sc = SChunk::open(root.join("src.b2frame")).unwrap();
                let cp = CParams {
                    clevel: 9,
                    ..cparams()
                };
                sc.copy_to(NewStorage::File(&root.join("t.b2frame")), Some(cp), None)
                    .unwrap();
            },
            targets: one("t.b2frame"),
        },
        Case {
            name: "copy into an sframe",
            prepare: source_file,
            call: |root| {
                let sc = SChunk::open(root.join("src.b2frame")).unwrap();
                sc.copy_to(NewStorage::Sparse(&root.join("t.b2sframe")), None, None)
                    .unwrap();
            },
            targets: one("t.b2sframe"),
        },
        Case {
            // `b2frame convert SRC DST`: streamed into a temporary file (the header last, over
            // a placeholder), renamed into place.
            name: "convert to a cframe (the CLI's operations)",
            prepare: source_file,
            call: |root| {
                let src = Frame::open(&root.join("src.b2frame")).unwrap();
                let mut header = src.header().clone();
                header.clevel = 9;
                record::publish_seekable(&root.join("t.b2frame"), true, false, |w| {
                    src.write_converted(&header, w, |_, c| {
                        // Recompressed at clevel 9 (special chunks stay as they are).
                        if b2frame::frame::chunkinfo::ChunkInfo::parse(c)?.special != 0 {
                            return Ok(None);
                        }
                        let cp = CParams {
                            clevel: 9,
                            ..cparams()
                        };
                        chunk::compress_vec(&cp, &chunk::decompress_vec(c)?).map(Some)
                    })
                    .map(drop)
                    .map_err(std::io::Error::other)
                })
                .unwrap();
            },
            targets: one("t.b2frame"),
        },
        Case {
            // `b2frame convert --sparse SRC DST`: built in a temporary directory (the chunks
            // appended in one transaction), renamed.
            name: "convert to an sframe (the CLI's operations)",
            prepare: source_file,
            call: |root| {
                let src = Frame::open(&root.join("src.b2frame")).unwrap();
                record::publish_dir(
                    &root.join("t.b2sframe"),
                    |tmp| {
                        let mut out = Frame::new_like(src.header(), Target::Sparse(tmp))?;
                        out.set_chunksize(src.header().chunksize)?;
                        out.append_chunks(src.nchunks(), |i| src.chunk(i))?;
                        for (name, stored) in src.vlmetalayers() {
                            out.add_vlmetalayer_raw(name, stored)?;
                        }
                        Ok::<(), b2frame::Error>(())
                    },
                    |_| b2frame::Error::FileWrite,
                )
                .unwrap();
            },
            targets: one("t.b2sframe"),
        },
        Case {
            // `b2frame compact PATH`: streamed into a temporary file, synced, renamed over.
            name: "compact (the CLI's operations)",
            prepare: dead_space,
            call: |root| {
                let p = root.join("t.b2frame");
                // Closed before the rename, as the CLI does (Windows refuses to rename over an
                // open file).
                let mut src = Some(Frame::open(&p).unwrap());
                record::publish_with(&p, false, true, |w| {
                    let f = src.take().unwrap();
                    f.write_compacted(w)
                        .map(drop)
                        .map_err(std::io::Error::other)
                })
                .unwrap();
            },
            targets: one("t.b2frame"),
        },
    ]
}

fn check(case: &Case, durable: bool) -> Vec<String> {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let was = record::set_durable(false);
    let scratch = common::scratch::dir("b2f-crash-files-");
    let root = scratch.path().join("root");
    std::fs::create_dir(&root).unwrap();
    (case.prepare)(&root);
    let targets = (case.targets)(&root);
    let before_tree = read_tree(&root);
    let before: Vec<Option<State>> = targets
        .iter()
        .map(|(p, o)| both(&root.join(p), *o).unwrap())
        .collect();

    record::set_durable(durable);
    record::start();
    (case.call)(&root);
    let events = record::stop();
    record::set_durable(was);
    let after: Vec<Option<State>> = targets
        .iter()
        .map(|(p, o)| both(&root.join(p), *o).unwrap())
        .collect();
    let name = case.name;
    assert!(after.iter().all(Option::is_some), "{name}: no frame after");
    assert!(!events.is_empty(), "{name}: nothing recorded");
    if durable {
        assert!(
            events
                .iter()
                .any(|e| matches!(e, record::Event::Sync { .. })),
            "{name}: no barrier in durable mode"
        );
    }

    let mut failures = Vec::new();
    let replay = scratch.path().join("replay");
    for (label, img, past_last_barrier) in crash_tree_images(&before_tree, &root, &events, durable)
    {
        write_tree(&replay, &img);
        for (k, (p, o)) in targets.iter().enumerate() {
            let verdict = both(&replay.join(p), *o).and_then(|got| {
                if got == after[k] || (got == before[k] && !past_last_barrier) {
                    Ok(())
                } else {
                    Err(match got {
                        Some(s) => format!("neither before nor after: {}", s.brief()),
                        None => "no frame".to_string(),
                    })
                }
            });
            if let Err(why) = verdict {
                failures.push(format!(
                    "{name} (durable {durable}) {label}, {} at {o}: {why}",
                    p.display()
                ));
            }
        }
    }
    failures
}

fn run(durable: bool) {
    let mut failures = Vec::new();
    for case in cases() {
        failures.extend(check(&case, durable));
    }
    assert!(
        failures.is_empty(),
        "{} crash states fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn whole_file_calls_kill() {
    run(false);
}

#[test]
fn whole_file_calls_durable() {
    run(true);
}
