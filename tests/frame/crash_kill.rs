//! Kill tests (issue 18, docs/durability.md): a writer process runs a random mix of mutating
//! calls on a frame (cframe file, cframe at an offset inside a larger file, sframe) and is
//! SIGKILLed at a random moment. The frame must then open in libb2frame and in c-blosc2 3.3.5
//! with the state after every acknowledged call (or after one more: the call in flight may
//! have committed before its acknowledgement), both libraries agreeing. The expected states
//! come from replaying the same calls on an in-memory frame.
//!
//! `B2FRAME_KILL_ROUNDS` sets the number of rounds per storage kind (default 100).

use crate::common;

use b2frame::chunk::{self, CParams};
use b2frame::schunk::{NewStorage, SChunk};
use common::crash::{ours, theirs, State};
use common::Rng;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// The bound on every wait for a child process (its start, its listing, its end after the
/// kill): far above what any of them takes, even under qemu-user, and a failed test, not a
/// hang, when something never returns.
const LIMIT: Duration = Duration::from_secs(60);

fn cparams() -> CParams {
    CParams {
        typesize: 4,
        ..CParams::default()
    }
}

fn data(n: usize, rng: &mut Rng) -> Vec<u8> {
    let mut v = vec![0u8; n];
    if rng.below(2) == 0 {
        rng.fill(&mut v);
    } else {
        let k = rng.next_u64() as u32;
        for (i, c) in v.chunks_mut(4).enumerate() {
            c.copy_from_slice(&((i as u32).wrapping_mul(k)).to_le_bytes()[..c.len()]);
        }
    }
    v
}

/// Call `k` of the sequence seeded by `seed`, on `sc` (its result is not checked: the model
/// runs the same call on the same state and gets the same result).
fn step(sc: &mut SChunk, rng: &mut Rng) {
    let n = sc.nchunks();
    let pick = |rng: &mut Rng| rng.below(n.max(1) as u64) as i64;
    let size = if rng.below(8) == 0 { 1000 } else { 4000 };
    match rng.below(12) {
        0..=3 => {
            let d = data(size, rng);
            let _ = sc.append_buffer(&d);
        }
        4 => {
            let c = chunk::compress_vec(&cparams(), &data(size, rng)).unwrap();
            let i = rng.below(n as u64 + 1) as i64;
            let _ = sc.insert_chunk(i, &c);
        }
        5 => {
            let c = chunk::compress_vec(&cparams(), &data(size, rng)).unwrap();
            let i = pick(rng);
            let _ = sc.update_chunk(i, &c);
        }
        6 => {
            let i = pick(rng);
            let _ = sc.delete_chunk(i);
        }
        7 => {
            let mut order: Vec<i64> = (0..n).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let _ = sc.reorder(&order);
        }
        8 => {
            let name = format!("v{}", rng.below(4));
            let content = data(rng.below(600) as usize + 1, rng);
            let _ = sc.vlmeta_add(&name, &content, None);
        }
        9 => {
            let name = format!("v{}", rng.below(4));
            let content = data(rng.below(600) as usize + 1, rng);
            let _ = sc.vlmeta_update(&name, &content, None);
        }
        10 => {
            let name = format!("v{}", rng.below(4));
            let _ = sc.vlmeta_delete(&name);
        }
        _ => {
            let v = [rng.below(256) as u8; 3];
            let _ = sc.update_metalayer("m", &v);
        }
    }
}

/// The state of an in-memory super-chunk.
fn state_of(sc: &mut SChunk) -> State {
    let chunks = (0..sc.nchunks())
        .map(|i| sc.decompress_chunk(i).unwrap())
        .collect();
    let names: Vec<String> = sc.vlmetalayers().iter().map(|(n, _)| n.clone()).collect();
    State {
        chunks,
        meta: sc.metalayers().to_vec(),
        vlmeta: names
            .into_iter()
            .map(|n| {
                let v = sc.vlmeta_get(&n).unwrap();
                (n, v)
            })
            .collect(),
    }
}

/// The child: runs calls on the frame named by the environment until killed, appending one
/// byte to the acknowledgement file after each call returns.
#[test]
#[ignore = "the writer process of the kill tests (started by them)"]
fn kill_writer_child() {
    let Ok(path) = std::env::var("B2F_KILL_PATH") else {
        return;
    };
    let offset: u64 = std::env::var("B2F_KILL_OFFSET").unwrap().parse().unwrap();
    let seed: u64 = std::env::var("B2F_KILL_SEED").unwrap().parse().unwrap();
    let durable = std::env::var("B2F_KILL_DURABLE").is_ok();
    b2frame::frame::record::set_durable(durable);
    let path = PathBuf::from(path);
    let mut sc = if path.is_dir() {
        SChunk::open(&path).unwrap()
    } else {
        SChunk::open_offset(&path, offset, 1).unwrap()
    };
    let mut ack = std::fs::OpenOptions::new()
        .append(true)
        .open(std::env::var("B2F_KILL_ACK").unwrap())
        .unwrap();
    let mut rng = Rng::new(seed);
    for _ in 0..400 {
        step(&mut sc, &mut rng);
        ack.write_all(b".").unwrap();
    }
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    File,
    Offset,
    Sparse,
}

fn new_frame(kind: Kind, dir: &Path) -> (PathBuf, u64) {
    let made = dir.join("made");
    let mut sc = match kind {
        Kind::Sparse => SChunk::new(NewStorage::Sparse(&made), cparams(), Default::default()),
        _ => SChunk::new(NewStorage::File(&made), cparams(), Default::default()),
    }
    .unwrap();
    sc.add_metalayer("m", b"abc").unwrap();
    drop(sc);
    match kind {
        Kind::Offset => {
            let p = dir.join("f.bin");
            let mut bytes = vec![0x5Au8; 1000];
            bytes.extend(std::fs::read(&made).unwrap());
            std::fs::write(&p, bytes).unwrap();
            (p, 1000)
        }
        _ => (made, 0),
    }
}

/// The full name of the writer test `name` in this binary (it depends on the binary the file is
/// grouped into), after checking that the binary has it: a wrong name would run nothing and
/// every round would pass. The binary is started through the target's runner (qemu-user when
/// cross-testing), as the writers are.
fn writer_test(name: &str) -> String {
    let exe = std::env::current_exe().unwrap();
    let writer = common::test_name(module_path!(), name);
    let mut cmd = common::target_command(&exe);
    cmd.args(["--ignored", "--exact", writer.as_str(), "--list"]);
    let listed = common::output_within(cmd, LIMIT);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains(&format!("{writer}: test")),
        "{} has no test {writer}",
        exe.display()
    );
    writer
}

fn rounds() -> u64 {
    std::env::var("B2FRAME_KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}

fn run(kind: Kind) {
    let exe = std::env::current_exe().unwrap();
    // The writer is this binary run with `--exact` on the writer test's name, which depends on the
    // binary the file is grouped into: a wrong name would run nothing and every round would pass.
    let writer = writer_test("kill_writer_child");
    let dir = common::scratch::dir("b2f-kill-");
    let mut failures = Vec::new();
    let mut outcomes = [0u64; 2];
    let mut control = Rng::new(0xC0FFEE ^ kind as u64);
    for round in 0..rounds() {
        let rdir = dir.join(format!("r{round}"));
        std::fs::create_dir(&rdir).unwrap();
        let (path, offset) = new_frame(kind, &rdir);
        let ack = rdir.join("ack");
        std::fs::write(&ack, b"").unwrap();
        let seed = control.next_u64();
        let durable = control.below(4) == 0;
        let mut cmd = common::target_command(&exe);
        cmd.args(["--ignored", "--exact", writer.as_str(), "--test-threads=1"])
            .env("B2F_KILL_PATH", &path)
            .env("B2F_KILL_OFFSET", offset.to_string())
            .env("B2F_KILL_SEED", seed.to_string())
            .env("B2F_KILL_ACK", &ack)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if durable {
            cmd.env("B2F_KILL_DURABLE", "1");
        }
        let mut child = common::spawn_within(cmd, LIMIT);
        std::thread::sleep(Duration::from_micros(2000 + control.below(60_000)));
        common::kill_within(&mut child, LIMIT);
        let acked = std::fs::read(&ack).unwrap().len();

        // The model: the same calls on an in-memory frame.
        let mut model = SChunk::new(NewStorage::Memory, cparams(), Default::default()).unwrap();
        model.add_metalayer("m", b"abc").unwrap();
        let mut rng = Rng::new(seed);
        for _ in 0..acked {
            step(&mut model, &mut rng);
        }
        let want = state_of(&mut model);
        step(&mut model, &mut rng);
        let or_next = state_of(&mut model);

        let got = ours(&path, offset);
        let reference = theirs(&path, offset);
        let verdict = match (&got, &reference) {
            (Ok(o), Ok(t)) if o != t => Err("libraries disagree".to_string()),
            (Ok(o), Ok(_)) if *o == want => Ok(0),
            (Ok(o), Ok(_)) if *o == or_next => Ok(1),
            (Ok(o), Ok(_)) => Err(format!("neither acknowledged state: {}", o.brief())),
            (Err(e), _) | (_, Err(e)) => Err(e.clone()),
        };
        match verdict {
            Ok(k) => {
                outcomes[k] += 1;
                let _ = std::fs::remove_dir_all(&rdir);
            }
            Err(why) => failures.push(format!(
                "{kind:?} round {round} (seed {seed}, durable {durable}, {acked} acknowledged, \
                 kept in {}): {why}",
                rdir.display()
            )),
        }
    }
    eprintln!(
        "{kind:?}: {} rounds, {} at the acknowledged state, {} one call further, {} failed",
        rounds(),
        outcomes[0],
        outcomes[1],
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn kill_cframe_file() {
    run(Kind::File);
}

#[test]
fn kill_cframe_at_offset() {
    run(Kind::Offset);
}

#[test]
fn kill_sframe() {
    run(Kind::Sparse);
}

/// The super-chunk the whole-file child saves at step `k`: `k % 5 + 1` chunks and a
/// vlmetalayer, in memory (even steps) or as plain chunks (odd ones).
fn whole_source(k: u64) -> SChunk {
    let storage = if k.is_multiple_of(2) {
        NewStorage::Memory
    } else {
        NewStorage::Plain
    };
    let mut sc = SChunk::new(storage, cparams(), Default::default()).unwrap();
    sc.add_metalayer("m", &[k as u8; 3]).unwrap();
    let mut rng = Rng::new(k);
    for _ in 0..k % 5 + 1 {
        sc.append_buffer(&data(4000, &mut rng)).unwrap();
    }
    sc.vlmeta_add("k", &k.to_le_bytes(), None).unwrap();
    sc
}

/// The whole-file child: step `k` saves [`whole_source`]`(k)` with call `k % 4` (`to_file`
/// over `t.b2frame`, `append_file` to `a.bin`, a copy into `c{k}.b2frame`, a copy into
/// `s{k}.b2sframe`), then appends `k offset end` to the acknowledgement file (for appends,
/// the frame's offset and the file's length after it).
#[test]
#[ignore = "the writer process of the whole-file kill test (started by it)"]
fn kill_whole_file_child() {
    let Ok(dir) = std::env::var("B2F_KILL_PATH") else {
        return;
    };
    let dir = PathBuf::from(dir);
    b2frame::frame::record::set_durable(std::env::var("B2F_KILL_DURABLE").is_ok());
    let mut ack = std::fs::OpenOptions::new()
        .append(true)
        .open(std::env::var("B2F_KILL_ACK").unwrap())
        .unwrap();
    for k in 0..400u64 {
        let sc = whole_source(k);
        let (mut at, mut end) = (0, 0);
        match k % 4 {
            0 => {
                sc.to_file(&dir.join("t.b2frame")).unwrap();
            }
            1 => {
                at = sc.append_file(&dir.join("a.bin")).unwrap();
                end = std::fs::metadata(dir.join("a.bin")).unwrap().len();
            }
            2 => {
                let p = dir.join(format!("c{k}.b2frame"));
                sc.copy_to(NewStorage::File(&p), None, None).unwrap();
            }
            _ => {
                let p = dir.join(format!("s{k}.b2sframe"));
                sc.copy_to(NewStorage::Sparse(&p), None, None).unwrap();
            }
        }
        // One write per line: `writeln!` on a `File` writes each piece on its own, and a kill
        // between them left a torn line.
        ack.write_all(format!("{k} {at} {end}\n").as_bytes())
            .unwrap();
    }
}

/// What both libraries open at `offset` of `path` (`None`: neither opens a frame).
fn opened(path: &Path, offset: u64) -> Result<Option<State>, String> {
    match (ours(path, offset), theirs(path, offset)) {
        (Ok(o), Ok(t)) if o == t => Ok(Some(o)),
        (Err(_), Err(_)) => Ok(None),
        (o, t) => Err(format!(
            "libraries disagree: ours {:?} / c-blosc2 {:?}",
            o.map(|s| s.brief()),
            t.map(|s| s.brief())
        )),
    }
}

/// Kill test of the whole-file calls: after the kill, every frame an acknowledged call wrote
/// opens with its state in both libraries, and the call in flight left its destination as
/// before (no frame, or the previous `to_file`'s) or complete.
#[test]
fn kill_whole_file_calls() {
    let exe = std::env::current_exe().unwrap();
    let writer = writer_test("kill_whole_file_child");
    let dir = common::scratch::dir("b2f-kill-files-");
    let mut failures = Vec::new();
    let mut control = Rng::new(0xF11E);
    let mut in_flight_done = 0;
    for round in 0..rounds() {
        let rdir = dir.join(format!("r{round}"));
        std::fs::create_dir(&rdir).unwrap();
        let ack = dir.join(format!("ack{round}"));
        std::fs::write(&ack, b"").unwrap();
        let durable = control.below(4) == 0;
        let mut cmd = common::target_command(&exe);
        cmd.args(["--ignored", "--exact", writer.as_str(), "--test-threads=1"])
            .env("B2F_KILL_PATH", &rdir)
            .env("B2F_KILL_ACK", &ack)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if durable {
            cmd.env("B2F_KILL_DURABLE", "1");
        }
        let mut child = common::spawn_within(cmd, LIMIT);
        std::thread::sleep(Duration::from_micros(2000 + control.below(40_000)));
        common::kill_within(&mut child, LIMIT);
        let text = std::fs::read_to_string(&ack).unwrap();
        // Only whole lines acknowledge a call; a line the kill cut is the call in flight.
        let acks: Vec<(u64, u64, u64)> = text
            .split_inclusive('\n')
            .filter(|l| l.ends_with('\n'))
            .map(|l| l.trim_end())
            .map(|l| {
                let v: Vec<u64> = l.split(' ').map(|w| w.parse().unwrap()).collect();
                (v[0], v[1], v[2])
            })
            .collect();
        let next = acks.len() as u64;
        let mut errs = Vec::new();
        let mut check = |what: String, got: Result<Option<State>, String>, ok: &[Option<u64>]| {
            let want: Vec<Option<State>> = ok
                .iter()
                .map(|k| k.map(|k| state_of(&mut whole_source(k))))
                .collect();
            match got {
                Ok(s) if want.contains(&s) => {}
                Ok(s) => errs.push(format!(
                    "{what}: {:?} is none of steps {ok:?}",
                    s.map(|s| s.brief())
                )),
                Err(e) => errs.push(format!("{what}: {e}")),
            }
        };
        // to_file: the last acknowledged one, or the one in flight.
        let last_t = acks.iter().rev().find(|a| a.0 % 4 == 0).map(|a| a.0);
        let mut ok_t = vec![last_t];
        if next.is_multiple_of(4) {
            ok_t.push(Some(next));
        }
        check(
            "t.b2frame".into(),
            opened(&rdir.join("t.b2frame"), 0),
            &ok_t,
        );
        // append_file: every acknowledged frame, and at the end the one in flight or nothing.
        let a = rdir.join("a.bin");
        let mut end = 0;
        for &(k, at, e) in acks.iter().filter(|a| a.0 % 4 == 1) {
            check(format!("a.bin at {at}"), opened(&a, at), &[Some(k)]);
            end = e;
        }
        if next % 4 == 1 && a.exists() {
            check(
                format!("a.bin at {end}"),
                opened(&a, end),
                &[None, Some(next)],
            );
        }
        // Copies: every acknowledged one, and the one in flight absent or complete.
        for k in 0..=next {
            let p = match k % 4 {
                2 => rdir.join(format!("c{k}.b2frame")),
                3 => rdir.join(format!("s{k}.b2sframe")),
                _ => continue,
            };
            let ok: &[Option<u64>] = if k < next {
                &[Some(k)]
            } else {
                &[None, Some(k)]
            };
            let got = opened(&p, 0);
            if k == next && matches!(got, Ok(Some(_))) {
                in_flight_done += 1;
            }
            check(p.file_name().unwrap().to_string_lossy().into(), got, ok);
        }
        if errs.is_empty() {
            let _ = std::fs::remove_dir_all(&rdir);
        } else {
            failures.push(format!(
                "round {round} (durable {durable}, {next} acknowledged, kept in {}): {}",
                rdir.display(),
                errs.join("; ")
            ));
        }
    }
    eprintln!(
        "whole-file calls: {} rounds, {} failed, {in_flight_done} in-flight copies complete",
        rounds(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
