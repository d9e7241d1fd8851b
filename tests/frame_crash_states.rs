//! Crash-state enumeration (issue 18, docs/durability.md): every mutating call on a cframe file
//! is recorded through the recording I/O layer (`b2frame::frame::record`), and every state a
//! crash can leave is rebuilt from that record: every prefix of the storage operations, every
//! write torn (small writes at every byte, header writes and long ones at sector boundaries:
//! docs/durability.md, "Torn writes"), and in durable mode every subset of the writes between
//! two barriers, each possibly torn or missing a sector. Each state must open in libb2frame and in c-blosc2 3.3.5 with exactly the state
//! before the call or exactly the state after it (in durable mode: after it, once the call's
//! last barrier has passed), and both libraries must agree. Every state must also carry the
//! fingerprint of the state it describes (docs/format/fingerprint.md): the frames are written
//! by libb2frame, so each one must match, none may be unfingerprinted.

mod common;

use b2frame::chunk::{self, CParams};
use b2frame::frame::fingerprint::Verdict;
use b2frame::frame::record;
use b2frame::schunk::{NewStorage, SChunk};
use common::crash::{
    crash_dir_images, crash_images, crash_images_at, header_range, ours, read_dir_image, theirs,
    write_dir_image, State,
};
use common::Rng;
use std::path::Path;
use std::sync::Mutex;

/// Durable mode is process-wide: cases run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn cparams() -> CParams {
    CParams {
        typesize: 4,
        ..CParams::default()
    }
}

/// `n` bytes: incompressible when `random` (chunks then span several sectors), else a ramp.
fn data(n: usize, seed: u64, random: bool) -> Vec<u8> {
    let mut v = vec![0u8; n];
    if random {
        Rng::new(seed).fill(&mut v);
    } else {
        for (i, c) in v.chunks_mut(4).enumerate() {
            c.copy_from_slice(&((i as u32).wrapping_mul(seed as u32 + 1)).to_le_bytes()[..c.len()]);
        }
    }
    v
}

fn zeros_chunk(nbytes: i32) -> Vec<u8> {
    let mut buf = [0u8; 64];
    let n = chunk::special::zeros(&cparams(), nbytes, &mut buf).unwrap();
    buf[..n].to_vec()
}

fn compress(d: &[u8]) -> Vec<u8> {
    chunk::compress_vec(&cparams(), d).unwrap()
}

type Step = fn(&mut SChunk);

fn setup_three(sc: &mut SChunk) {
    sc.add_metalayer("m", b"abc").unwrap();
    sc.append_buffer(&data(4000, 1, true)).unwrap();
    sc.append_chunk(&zeros_chunk(4000)).unwrap();
    sc.append_buffer(&data(4000, 2, false)).unwrap();
    sc.vlmeta_add("v", b"hello", None).unwrap();
}

/// Chunk 0 is followed by several times its size of data: its update moves all of it, as
/// c-blosc2 moves it (docs/mutation.md#update), through the relocation step of the commit.
fn setup_long(sc: &mut SChunk) {
    sc.add_metalayer("m", b"abc").unwrap();
    for i in 0..8 {
        sc.append_buffer(&data(4000, 20 + i, true)).unwrap();
    }
    sc.vlmeta_add("v", b"hello", None).unwrap();
}

fn setup_one(sc: &mut SChunk) {
    sc.add_metalayer("m", b"abc").unwrap();
    sc.append_buffer(&data(4000, 1, true)).unwrap();
    sc.vlmeta_add("v", b"hello", None).unwrap();
}

fn setup_empty(sc: &mut SChunk) {
    sc.add_metalayer("m", b"abc").unwrap();
    sc.vlmeta_add("v", b"hello", None).unwrap();
}

fn setup_bare(_: &mut SChunk) {}

/// `(name, setup, call)`: the calls whose crash states are enumerated.
fn cases() -> Vec<(&'static str, Step, Step)> {
    vec![
        ("append", setup_three, |sc| {
            sc.append_buffer(&data(4000, 3, true)).unwrap();
        }),
        ("append_zeros", setup_three, |sc| {
            sc.append_chunk(&zeros_chunk(4000)).unwrap();
        }),
        ("append_short", setup_three, |sc| {
            sc.append_buffer(&data(1000, 4, true)).unwrap();
        }),
        ("append_larger_turns_variable", setup_three, |sc| {
            sc.append_buffer(&data(8000, 5, true)).unwrap();
        }),
        ("insert_first", setup_three, |sc| {
            sc.insert_chunk(0, &compress(&data(4000, 6, true))).unwrap();
        }),
        ("update_grows", setup_three, |sc| {
            sc.update_chunk(2, &compress(&data(4000, 7, true))).unwrap();
        }),
        ("update_shrinks", setup_three, |sc| {
            sc.update_chunk(0, &compress(&data(4000, 8, false)))
                .unwrap();
        }),
        ("update_far_moves_the_data_after_it", setup_long, |sc| {
            sc.update_chunk(0, &compress(&data(4000, 13, false)))
                .unwrap();
        }),
        ("update_far_same_size", setup_long, |sc| {
            // Incompressible, as the old payload: the data after it stays where it is.
            sc.update_chunk(1, &compress(&data(4000, 16, true)))
                .unwrap();
        }),
        ("update_far_to_special", setup_long, |sc| {
            sc.update_chunk(0, &zeros_chunk(4000)).unwrap();
        }),
        ("update_to_special", setup_three, |sc| {
            sc.update_chunk(0, &zeros_chunk(4000)).unwrap();
        }),
        ("update_special_to_stored", setup_three, |sc| {
            sc.update_chunk(1, &compress(&data(4000, 9, true))).unwrap();
        }),
        ("delete_middle", setup_three, |sc| {
            sc.delete_chunk(1).unwrap();
        }),
        ("delete_last_chunk", setup_one, |sc| {
            sc.delete_chunk(0).unwrap();
        }),
        ("reorder", setup_three, |sc| {
            sc.reorder(&[2, 0, 1]).unwrap();
        }),
        ("vlmeta_add", setup_three, |sc| {
            sc.vlmeta_add("w", b"world", None).unwrap();
        }),
        ("vlmeta_update_long", setup_three, |sc| {
            sc.vlmeta_update("v", &data(3000, 10, true), None).unwrap();
        }),
        ("vlmeta_delete", setup_three, |sc| {
            sc.vlmeta_delete("v").unwrap();
        }),
        ("meta_update", setup_three, |sc| {
            sc.update_metalayer("m", b"xyz").unwrap();
        }),
        ("first_append", setup_empty, |sc| {
            sc.append_buffer(&data(4000, 11, true)).unwrap();
        }),
        ("first_append_bare", setup_bare, |sc| {
            sc.append_buffer(&data(4000, 12, true)).unwrap();
        }),
        ("vlmeta_add_empty_frame", setup_empty, |sc| {
            sc.vlmeta_add("w", b"world", None).unwrap();
        }),
        ("meta_add_empty_frame", setup_empty, |sc| {
            sc.add_metalayer("n", b"0123456789").unwrap();
        }),
        ("fill_special", setup_empty, |sc| {
            sc.fill_special(30_000, 1, 4000).unwrap();
        }),
    ]
}

/// Runs one call on a frame at `offset` of a file and checks every crash state it allows.
fn check(name: &str, setup: Step, call: Step, offset: u64, durable: bool) -> Vec<String> {
    check_recorded(name, setup, call, offset, durable).0
}

/// [`check`], also giving the call's recorded storage operations (the failures' labels name
/// them by index: "event K torn at T").
fn check_recorded(
    name: &str,
    setup: Step,
    call: Step,
    offset: u64,
    durable: bool,
) -> (Vec<String>, Vec<record::Event>) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let was = record::set_durable(false);
    let dir = common::scratch::dir("b2f-crash-");
    let p0 = dir.join("made.b2frame");
    let mut sc = SChunk::new(NewStorage::File(&p0), cparams(), Default::default()).unwrap();
    setup(&mut sc);
    drop(sc);
    let p = dir.join("f.b2frame");
    let mut bytes = vec![0xA5u8; offset as usize];
    bytes.extend(std::fs::read(&p0).unwrap());
    std::fs::write(&p, &bytes).unwrap();
    let before_state = ours(&p, offset).unwrap();
    assert_eq!(fingerprint_matches(&p, offset), Ok(()), "{name}: setup");
    assert_eq!(
        theirs(&p, offset),
        Ok(before_state.clone()),
        "{name}: setup"
    );

    record::set_durable(durable);
    let mut sc = SChunk::open_offset(&p, offset, 1).unwrap();
    record::start();
    call(&mut sc);
    let events = record::stop();
    drop(sc);
    record::set_durable(was);
    let after_state = ours(&p, offset).unwrap();
    assert_eq!(fingerprint_matches(&p, offset), Ok(()), "{name}: after");
    assert_eq!(theirs(&p, offset), Ok(after_state.clone()), "{name}: after");
    assert_ne!(before_state, after_state, "{name} changed nothing");
    if durable {
        assert!(
            events
                .iter()
                .any(|e| matches!(e, record::Event::Sync { .. })),
            "{name}: no barrier in durable mode"
        );
    }

    let mut failures = Vec::new();
    let c = dir.join("crashed.b2frame");
    // The header bytes of both states: commit writes there are torn at sector boundaries
    // only (docs/durability.md, "Torn writes"); every other small write at every byte.
    let (h0, h1) = (
        header_range(&bytes, offset),
        header_range(&std::fs::read(&p).unwrap(), offset),
    );
    let atomic = h0.start..h0.end.max(h1.end);
    let images = crash_images_at(&bytes, &events, durable, &atomic);
    for (label, img, past_last_barrier) in &images {
        std::fs::write(&c, img).unwrap();
        let got = ours(&c, offset);
        let verdict = check_state(
            &got,
            &theirs(&c, offset),
            &before_state,
            &after_state,
            *past_last_barrier,
        )
        .and_then(|()| fingerprint_matches(&c, offset));
        if let Err(why) = verdict {
            failures.push(format!(
                "{name} (offset {offset}, durable {durable}) {label}: {why}"
            ));
        }
    }
    (failures, events)
}

/// The fingerprint check of the frame at `offset` of `path` (a directory: an sframe): every
/// frame libb2frame writes matches its fingerprint.
fn fingerprint_matches(path: &Path, offset: u64) -> Result<(), String> {
    let sc = if path.is_dir() {
        SChunk::open(path)
    } else {
        SChunk::open_offset(path, offset, 1)
    };
    let sc = sc.map_err(|e| format!("open for verify: {e:?}"))?;
    let frame = sc.frame().ok_or("no frame")?;
    match frame.verify_fingerprint() {
        Ok(Verdict::Match) => Ok(()),
        v => Err(format!("fingerprint: {v:?}")),
    }
}

fn check_state(
    ours: &Result<State, String>,
    theirs: &Result<State, String>,
    before: &State,
    after: &State,
    must_be_after: bool,
) -> Result<(), String> {
    let o = ours.as_ref().map_err(|e| e.clone())?;
    let t = theirs.as_ref().map_err(|e| e.clone())?;
    if o != t {
        return Err(format!(
            "libraries disagree: ours {} / c-blosc2 {}",
            o.brief(),
            t.brief()
        ));
    }
    if o == after || (o == before && !must_be_after) {
        Ok(())
    } else {
        Err(format!("neither before nor after: {}", o.brief()))
    }
}

/// [`check`] for an sframe directory (index file exchanged into place, chunk files by id).
/// `warm`: the call runs on a handle that has committed before (a vlmetalayer added after
/// opening), so its index commits overwrite the handle's spare temporary index file (the index
/// that the previous exchange replaced) instead of creating one; the spare is part of the
/// state before the call.
fn check_sparse(name: &str, setup: Step, call: Step, durable: bool, warm: bool) -> Vec<String> {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let was = record::set_durable(false);
    let dir = common::scratch::dir("b2f-crash-sparse-");
    let p0 = dir.join("made.b2sframe");
    let mut sc = SChunk::new(NewStorage::Sparse(&p0), cparams(), Default::default()).unwrap();
    setup(&mut sc);
    drop(sc);
    let p = dir.join("f.b2sframe");
    write_dir_image(&p, &read_dir_image(&p0));

    record::set_durable(durable);
    let mut sc = SChunk::open(&p).unwrap();
    if warm {
        sc.vlmeta_add("warm", b"up", None).unwrap();
    }
    let before = read_dir_image(&p);
    // Only where the index is exchanged into place (Linux's renameat2) is the old index kept as
    // the spare; elsewhere (Windows) each commit renames a new temporary index over it.
    if warm && cfg!(target_os = "linux") {
        assert!(
            before.keys().any(|n| n.contains(".b2tmp-")),
            "{name}: no spare index file after a commit: {:?}",
            before.keys()
        );
    }
    let before_state = ours(&p, 0).unwrap();
    assert_eq!(theirs(&p, 0), Ok(before_state.clone()), "{name}: setup");
    record::start();
    call(&mut sc);
    let events = record::stop();
    drop(sc);
    record::set_durable(was);
    let after_state = ours(&p, 0).unwrap();
    assert_eq!(theirs(&p, 0), Ok(after_state.clone()), "{name}: after");
    assert_ne!(before_state, after_state, "{name} changed nothing");
    // The events name files of `p`; the images are replayed in another directory.
    let mut failures = Vec::new();
    let c = dir.join("crashed.b2sframe");
    for (label, img, past_last_barrier) in crash_dir_images(&before, &events, durable) {
        write_dir_image(&c, &img);
        let verdict = check_state(
            &ours(&c, 0),
            &theirs(&c, 0),
            &before_state,
            &after_state,
            past_last_barrier,
        )
        .and_then(|()| fingerprint_matches(&c, 0));
        if let Err(why) = verdict {
            failures.push(format!(
                "{name} (sframe, durable {durable}, warm {warm}) {label}: {why}"
            ));
        }
    }
    failures
}

fn run_sparse(durable: bool, warm: bool) {
    let mut failures = Vec::new();
    for (name, setup, call) in cases() {
        failures.extend(check_sparse(name, setup, call, durable, warm));
    }
    assert!(
        failures.is_empty(),
        "{} crash states fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn sframe_kill() {
    run_sparse(false, false);
}

#[test]
fn sframe_durable() {
    run_sparse(true, false);
}

#[test]
fn sframe_kill_warm_handle() {
    run_sparse(false, true);
}

#[test]
fn sframe_durable_warm_handle() {
    run_sparse(true, true);
}

fn run_all(offset: u64, durable: bool) {
    let mut failures = Vec::new();
    for (name, setup, call) in cases() {
        failures.extend(check(name, setup, call, offset, durable));
    }
    assert!(
        failures.is_empty(),
        "{} crash states fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn cframe_file_kill() {
    run_all(0, false);
}

#[test]
fn cframe_at_offset_kill() {
    run_all(300, false);
}

#[test]
fn cframe_file_durable() {
    run_all(0, true);
}

#[test]
fn cframe_at_offset_durable() {
    run_all(300, true);
}

/// The enumeration finds a torn frame: c-blosc2's way of appending (payload over the old
/// index, then index, trailer and header in place) is replayed as a record and must fail.
#[test]
fn enumeration_catches_an_in_place_commit() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::scratch::dir("b2f-crash-self-");
    let p = dir.join("f.b2frame");
    let mut sc = SChunk::new(NewStorage::File(&p), cparams(), Default::default()).unwrap();
    setup_three(&mut sc);
    drop(sc);
    let before = std::fs::read(&p).unwrap();
    let before_state = ours(&p, 0).unwrap();
    // The after-state written as one in-memory frame: its bytes replace the old ones in place.
    let mut mem = SChunk::from_cframe(&before, true, 1).unwrap();
    mem.append_buffer(&data(4000, 3, true)).unwrap();
    let after = mem.to_cframe().unwrap();
    std::fs::write(&p, &after).unwrap();
    let after_state = ours(&p, 0).unwrap();
    let file = record::FileRef::Path(p.clone());
    let hl = 97 + 21;
    let events = vec![
        record::Event::Write {
            file: file.clone(),
            pos: hl as u64,
            data: after[hl..].to_vec(),
        },
        record::Event::Write {
            file,
            pos: 0,
            data: after[..hl].to_vec(),
        },
    ];
    let c = dir.join("crashed.b2frame");
    let bad = crash_images(&before, &events, false)
        .iter()
        .filter(|(_, img, _)| {
            std::fs::write(&c, img).unwrap();
            check_state(
                &ours(&c, 0),
                &theirs(&c, 0),
                &before_state,
                &after_state,
                false,
            )
            .is_err()
        })
        .count();
    assert!(bad > 0, "an in-place rewrite passed the enumeration");
    let _ = Path::new("");
}

/// Costs for BENCHMARKS.md (run by hand: `cargo test --release --test frame_crash_states -- --ignored
/// --nocapture write_costs`): bytes written and syncs per append (4000-byte random chunks,
/// frames of 1000 chunks), ours in both modes.
#[test]
#[ignore = "measurement, not a check"]
fn write_costs() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for durable in [false, true] {
        for sparse in [false, true] {
            let dir = common::scratch::dir("b2f-costs-");
            let p = dir.join("f");
            let storage = if sparse {
                NewStorage::Sparse(&p)
            } else {
                NewStorage::File(&p)
            };
            let mut sc = SChunk::new(storage, cparams(), Default::default()).unwrap();
            let was = record::set_durable(durable);
            let (mut bytes, mut writes, mut syncs, mut n) = (0usize, 0usize, 0usize, 0usize);
            let t = std::time::Instant::now();
            for k in 0..1000u64 {
                let d = data(4000, k, true);
                record::start();
                sc.append_buffer(&d).unwrap();
                for e in record::stop() {
                    match e {
                        record::Event::Write { data, .. } => {
                            bytes += data.len();
                            writes += 1;
                        }
                        record::Event::Sync { .. } | record::Event::SyncDir { .. } => syncs += 1,
                        _ => {}
                    }
                }
                n += 1;
            }
            let secs = t.elapsed().as_secs_f64();
            record::set_durable(was);
            let chunk = sc.chunk(999).unwrap().len();
            println!(
                "{} durable={durable}: {:.0} appends/s, {:.0} bytes written per append ({chunk}-byte chunk), {:.1} writes and {:.1} syncs per append",
                if sparse { "sframe" } else { "cframe" },
                n as f64 / secs,
                bytes as f64 / n as f64,
                writes as f64 / n as f64,
                syncs as f64 / n as f64
            );
        }
    }
}

/// A user I/O backend over the filesystem that reports every write, truncation and `"wb"`
/// creation to the recording layer, as the filesystem paths of the frame code do.
#[cfg(unix)]
#[derive(Debug)]
struct LoggedIo;

#[cfg(unix)]
struct LoggedStream {
    path: std::path::PathBuf,
    file: std::fs::File,
}

#[cfg(unix)]
impl b2frame::frame::udio::UserIo for LoggedIo {
    fn open(
        &self,
        path: &Path,
        mode: &str,
    ) -> b2frame::Result<Box<dyn b2frame::frame::udio::UserStream + '_>> {
        let mut o = std::fs::OpenOptions::new();
        match mode {
            "rb" => o.read(true),
            "rb+" => o.read(true).write(true),
            "wb" => {
                record::create(path);
                o.write(true).create(true).truncate(true)
            }
            _ => return Err(b2frame::Error::FileOpen),
        };
        let file = o.open(path).map_err(|_| b2frame::Error::FileOpen)?;
        Ok(Box::new(LoggedStream {
            path: path.to_path_buf(),
            file,
        }))
    }
}

#[cfg(unix)]
impl b2frame::frame::udio::UserStream for LoggedStream {
    fn size(&mut self) -> b2frame::Result<u64> {
        Ok(self
            .file
            .metadata()
            .map_err(|_| b2frame::Error::FileRead)?
            .len())
    }
    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> b2frame::Result<()> {
        use std::os::unix::fs::FileExt;
        self.file
            .read_exact_at(buf, pos)
            .map_err(|_| b2frame::Error::FileRead)
    }
    fn write_all_at(&mut self, pos: u64, data: &[u8]) -> b2frame::Result<()> {
        use std::os::unix::fs::FileExt;
        record::write(&record::FileRef::Path(self.path.clone()), pos, data);
        self.file
            .write_all_at(data, pos)
            .map_err(|_| b2frame::Error::FileWrite)
    }
    fn truncate(&mut self, len: u64) -> b2frame::Result<()> {
        record::truncate(&record::FileRef::Path(self.path.clone()), len);
        self.file
            .set_len(len)
            .map_err(|_| b2frame::Error::FileWrite)
    }
}

/// The sframe index through a user I/O backend (docs/durability.md, "sframes through a user I/O
/// backend"): the backend can only write, truncate and create files, so the index file is
/// rewritten in place and a crash during that write can leave a torn index; this enumeration
/// shows that it does (some crash states open in neither library) and pins what a user backend
/// gets instead: in every crash state every file but the index holds its bytes from before or
/// after the call, or is a new chunk file no committed index names; and for appends, `b2frame
/// recover` (`recover_sframe`) salvages every torn state into the state before or after.
#[cfg(unix)]
#[test]
fn sframe_through_user_io() {
    use b2frame::frame::{recover, Frame};
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let was = record::set_durable(false);
    type Call = fn(&mut Frame);
    let calls: [(&str, Call, bool); 4] = [
        (
            "append",
            |f| {
                f.append_chunk(&compress(&data(4000, 3, true))).unwrap();
            },
            true,
        ),
        (
            "insert",
            |f| {
                f.insert_chunk(0, &compress(&data(4000, 4, true))).unwrap();
            },
            false,
        ),
        (
            "update",
            |f| {
                f.update_chunk(1, &compress(&data(4000, 5, true))).unwrap();
            },
            false,
        ),
        (
            "delete",
            |f| {
                f.delete_chunk(1).unwrap();
            },
            false,
        ),
    ];
    let (mut clean, mut torn, mut salvaged) = (0, 0, 0);
    let mut failures = Vec::new();
    for (name, call, append) in calls {
        let dir = common::scratch::dir("b2f-crash-udio-");
        let p = dir.join("f.b2sframe");
        let io = std::sync::Arc::new(LoggedIo);
        let mut f =
            Frame::new_sframe_udio(io.clone(), &p, &cparams(), &Default::default()).unwrap();
        for k in 0..3 {
            f.append_chunk(&compress(&data(4000, 10 + k, k != 1)))
                .unwrap();
        }
        drop(f);
        let before = read_dir_image(&p);
        let before_state = ours(&p, 0).unwrap();
        assert_eq!(theirs(&p, 0), Ok(before_state.clone()), "{name}: before");
        let mut f = Frame::open_sframe_udio(io, &p).unwrap();
        record::start();
        call(&mut f);
        let events = record::stop();
        drop(f);
        let after = read_dir_image(&p);
        let after_state = ours(&p, 0).unwrap();
        assert_eq!(theirs(&p, 0), Ok(after_state.clone()), "{name}: after");
        assert!(
            events.iter().any(|e| matches!(e, record::Event::Write { file: record::FileRef::Path(f), pos: 0, .. } if f.ends_with("chunks.b2frame"))),
            "{name}: the backend saw no index write: {events:?}"
        );
        let c = dir.join("crashed.b2sframe");
        for (label, img, _) in crash_dir_images(&before, &events, false) {
            write_dir_image(&c, &img);
            let (o, t) = (ours(&c, 0), theirs(&c, 0));
            if check_state(&o, &t, &before_state, &after_state, false).is_ok() {
                clean += 1;
                continue;
            }
            torn += 1;
            // Only the index is damaged: every other file is as before or after, or new.
            for (file, bytes) in &img {
                let known = before.get(file) == Some(bytes)
                    || after.get(file) == Some(bytes)
                    || !before.contains_key(file);
                if file != "chunks.b2frame" && !known {
                    failures.push(format!("{name} {label}: {file} damaged"));
                }
            }
            if append {
                let dst = dir.join(format!("salvaged-{torn}.b2sframe"));
                let got = recover::recover_sframe(&c, &dst)
                    .map_err(|e| format!("{e:?}"))
                    .and_then(|_| ours(&dst, 0));
                match got {
                    Ok(s) if s == before_state || s == after_state => salvaged += 1,
                    Ok(s) => failures.push(format!("{name} {label}: recovered {}", s.brief())),
                    Err(e) => failures.push(format!("{name} {label}: recover: {e}")),
                }
            }
        }
    }
    record::set_durable(was);
    eprintln!("user I/O sframe: {clean} crash states clean, {torn} torn ({salvaged} salvaged)");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        torn > 0,
        "no torn index: the in-place rewrite of the index went unnoticed"
    );
}

/// The gap of the cframe commit that no order of writes closes (docs/durability.md, "Torn
/// writes"): a frame at an offset whose header commit crosses a sector boundary. The kill
/// enumeration cuts header writes at sector boundaries. Where such a boundary falls inside a
/// commit's span (`o mod 512` in 444..=495 for the counters, also below 444 for a metalayer
/// update, whose changed bytes lie further on) it must find failing states, and every one of
/// them must be a header write cut at a sector boundary: nothing else in the protocol depends
/// on where the frame starts. With the boundary right before `frame_len` (`o mod 512` = 496)
/// only metalayer changes have any (adding one to a frame without chunks rewrites the header
/// from its `header_len`, bytes 11 to 14).
#[test]
fn header_commit_across_a_sector_boundary_is_the_only_gap() {
    let mut found = 0;
    for offset in [512 + 443u64, 512 + 444, 1000, 512 + 495, 512 + 496] {
        for (name, setup, call) in cases() {
            let (failures, events) = check_recorded(name, setup, call, offset, false);
            for f in &failures {
                let cut = f.split(") event ").nth(1).and_then(|r| {
                    let (k, rest) = r.split_once(" torn at ")?;
                    let t = rest.split(':').next()?;
                    Some((k.parse::<usize>().ok()?, t.parse::<u64>().ok()?))
                });
                let Some((k, t)) = cut else {
                    panic!("{f}: not a torn write");
                };
                let record::Event::Write { pos, .. } = &events[k] else {
                    panic!("{f}: not a write");
                };
                assert!(
                    (pos + t) % 512 == 0 && *pos < offset + 512,
                    "{f}: a failing state that is not a header commit cut at a sector boundary"
                );
            }
            assert!(
                offset % 512 != 496 || name.starts_with("meta_") || failures.is_empty(),
                "{name} at {offset}: {failures:?}"
            );
            found += failures.len();
        }
    }
    assert!(found > 0, "no torn header commit found inside the window");
}
