//! The `b2frame` command-line tool, run as a process: every subcommand on frames written by
//! python-blosc2 (c-blosc2 3.3.5) and by b2frame itself, and on broken frames, which must give
//! exit status 1 and one `b2frame: PATH: reason` line — never a panic (exit 101).

use b2frame::chunk::{compress_vec, CParams, DParams};
use b2frame::frame::Frame;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_b2frame")
}

fn python() -> PathBuf {
    if let Ok(p) = std::env::var("B2FRAME_PYTHON") {
        return PathBuf::from(p);
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        p.exists(),
        "python-blosc2 reference missing: {} (run scripts/setup-env.sh or set B2FRAME_PYTHON)",
        p.display()
    );
    p
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("b2frame-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Frames written once by python-blosc2, with their raw contents beside them.
const PY: &str = r#"
import sys, os, numpy as np, blosc2
d = sys.argv[1]
data = np.arange(100_000, dtype=np.int32)
cp = {"codec": blosc2.Codec.ZSTD, "clevel": 7, "typesize": 4, "filters": [blosc2.Filter.BITSHUFFLE]}
s = blosc2.SChunk(chunksize=40_000, data=data, cparams=cp, urlpath=os.path.join(d, "py.b2frame"), mode="w")
s.vlmeta["note"] = "hello"
data.tofile(os.path.join(d, "py.bin"))
sp = blosc2.SChunk(chunksize=40_000, data=data, cparams=cp, urlpath=os.path.join(d, "py.b2sframe"), contiguous=False, mode="w")
a = blosc2.asarray(np.linspace(0, 1, 120 * 90).reshape(120, 90), chunks=(50, 40), blocks=(10, 20), urlpath=os.path.join(d, "arr.b2nd"), mode="w")
m = blosc2.SChunk(chunksize=8_000, data=np.arange(20_000, dtype=np.int64), urlpath=os.path.join(d, "mut.b2frame"), mode="w")
m.delete_chunk(1)
m.update_data(0, np.full(1000, 7, dtype=np.int64), copy=True)
m.update_data(0, np.full(1000, 7, dtype=np.int64), copy=True)
open(os.path.join(d, "mut.bin"), "wb").write(m[:])
"#;

fn py_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = scratch("py");
        let out = Command::new(python())
            .arg("-c")
            .arg(PY)
            .arg(&d)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "python: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        d
    })
}

fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The command fails cleanly: exit 1 (not a panic's 101), one line naming the path.
fn fails(args: &[&str], path: &Path, reason: &str) -> String {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    let last = err.lines().last().unwrap_or("");
    assert!(
        last.starts_with(&format!("b2frame: {}: ", path.display())),
        "{args:?}: {err}"
    );
    assert!(
        err.contains(reason),
        "{args:?}: expected {reason:?} in {err}"
    );
    err
}

fn info_json(p: &Path) -> Value {
    serde_json::from_str(&ok(&["info", "--json", p.to_str().unwrap()])).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn info_of_python_cframe_and_sframe() {
    let d = py_dir();
    for (name, kind) in [("py.b2frame", "cframe"), ("py.b2sframe", "sframe")] {
        let v = info_json(&d.join(name));
        assert_eq!(v["kind"], kind);
        assert_eq!(v["nchunks"], 10);
        assert_eq!(v["nbytes"], 400_000);
        assert_eq!(v["chunksize"], 40_000);
        assert_eq!(v["typesize"], 4);
        assert_eq!(v["codec"], "zstd");
        assert_eq!(v["clevel"], 7);
        assert_eq!(v["filters"], serde_json::json!(["bitshuffle"]));
        assert_eq!(v["frame_format_version"], 2);
        assert_eq!(v["chunk_format_version"], 5);
    }
    let v = info_json(&d.join("py.b2frame"));
    assert_eq!(v["vlmetalayers"][0]["name"], "note");
    // python-blosc2 stores vlmeta values msgpack-encoded.
    assert_eq!(v["vlmetalayers"][0]["content"], "hello");
    let text = ok(&["info", s(&d.join("py.b2frame"))]);
    assert!(text.contains("zstd (clevel 7)"), "{text}");
    assert!(text.contains("cframe (contiguous)"), "{text}");
}

#[test]
fn info_decodes_b2nd_metalayer() {
    let v = info_json(&py_dir().join("arr.b2nd"));
    let m = &v["metalayers"][0];
    assert_eq!(m["name"], "b2nd");
    assert_eq!(m["content"]["shape"], serde_json::json!([120, 90]));
    assert_eq!(m["content"]["chunkshape"], serde_json::json!([50, 40]));
    assert_eq!(m["content"]["blockshape"], serde_json::json!([10, 20]));
    assert_eq!(m["content"]["dtype"], "<f8");
}

#[test]
fn chunks_lists_every_chunk() {
    let d = py_dir();
    let out = ok(&["chunks", s(&d.join("py.b2frame"))]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 11, "{out}");
    assert!(
        lines[1].contains("zstd") && lines[1].contains("bitshuffle"),
        "{out}"
    );
    // The first chunk sits right after the header (offset 0 in the index).
    assert_eq!(lines[1].split_whitespace().nth(1), Some("0"));
    let out = ok(&["chunks", s(&d.join("py.b2sframe"))]);
    assert!(out.contains("00000000.chunk"), "{out}");
}

#[test]
fn cat_gives_the_python_data() {
    let d = py_dir();
    let raw = std::fs::read(d.join("py.bin")).unwrap();
    for name in ["py.b2frame", "py.b2sframe"] {
        let out = run(&["cat", s(&d.join(name))]);
        assert!(out.status.success());
        assert_eq!(out.stdout, raw, "{name}");
    }
    let out = run(&["cat", s(&d.join("py.b2frame")), "--chunk", "9"]);
    assert_eq!(out.stdout, raw[360_000..]);
    fails(
        &["cat", s(&d.join("py.b2frame")), "--chunk", "10"],
        &d.join("py.b2frame"),
        "out of range",
    );
    let raw = std::fs::read(d.join("mut.bin")).unwrap();
    assert_eq!(run(&["cat", s(&d.join("mut.b2frame"))]).stdout, raw);
}

#[test]
fn verify_accepts_sound_frames() {
    let d = py_dir();
    for name in ["py.b2frame", "py.b2sframe", "arr.b2nd", "mut.b2frame"] {
        let out = ok(&["verify", s(&d.join(name))]);
        assert!(out.contains(": ok ("), "{out}");
    }
}

#[test]
fn convert_roundtrips_and_recompresses() {
    let d = py_dir();
    let w = scratch("convert");
    let raw = std::fs::read(d.join("py.bin")).unwrap();
    let sparse = w.join("s.b2sframe");
    ok(&["convert", s(&d.join("py.b2frame")), s(&sparse), "--sparse"]);
    let back = w.join("back.b2frame");
    ok(&["convert", s(&sparse), s(&back), "--contiguous"]);
    // Chunks are copied unchanged, so the round trip reproduces the frame: same info but path.
    let (mut a, mut b) = (info_json(&d.join("py.b2frame")), info_json(&back));
    a["path"] = Value::Null;
    b["path"] = Value::Null;
    assert_eq!(a, b);
    let re = w.join("re.b2frame");
    ok(&[
        "convert",
        s(&d.join("py.b2sframe")),
        s(&re),
        "--codec",
        "lz4",
        "--clevel",
        "3",
        "--filter",
        "shuffle",
    ]);
    let v = info_json(&re);
    assert_eq!(
        (v["codec"].as_str(), v["clevel"].as_i64()),
        (Some("lz4"), Some(3))
    );
    let c = ok(&["chunks", s(&re)]);
    assert!(
        c.lines()
            .skip(1)
            .all(|l| l.contains("lz4") && l.contains("shuffle")),
        "{c}"
    );
    for p in [&sparse, &back, &re] {
        ok(&["verify", s(p)]);
        assert_eq!(run(&["cat", s(p)]).stdout, raw);
    }
    // python-blosc2 reads what b2frame wrote.
    let check = format!(
        "import blosc2, numpy as np\ns = blosc2.open({:?})\nassert s.nchunks == 10\nassert bytes(s[:]) == open({:?}, 'rb').read()\n",
        s(&re),
        s(&d.join("py.bin"))
    );
    let out = Command::new(python())
        .arg("-c")
        .arg(&check)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fails(
        &["convert", s(&d.join("py.b2frame")), s(&re)],
        &re,
        "exists",
    );
    fails(
        &[
            "convert",
            s(&d.join("py.b2frame")),
            s(&w.join("x")),
            "--codec",
            "nope",
        ],
        &d.join("py.b2frame"),
        "unknown codec",
    );
}

#[test]
fn compact_removes_dead_space_and_keeps_data() {
    let d = py_dir();
    let w = scratch("compact");
    let p = w.join("mut.b2frame");
    std::fs::copy(d.join("mut.b2frame"), &p).unwrap();
    let before = info_json(&p);
    assert!(before["dead_bytes"].as_i64().unwrap() > 0, "{before}");
    ok(&["compact", s(&p)]);
    let after = info_json(&p);
    assert_eq!(after["dead_bytes"], 0);
    assert!(after["frame_len"].as_u64() < before["frame_len"].as_u64());
    ok(&["verify", s(&p)]);
    assert_eq!(
        run(&["cat", s(&p)]).stdout,
        std::fs::read(d.join("mut.bin")).unwrap()
    );
    fails(
        &["compact", s(&d.join("py.b2sframe"))],
        &d.join("py.b2sframe"),
        "sframe",
    );
}

/// A frame b2frame writes itself, with a zeros special chunk and a metalayer.
fn own_frame(p: &Path) -> Vec<u8> {
    let cp = CParams {
        typesize: 2,
        ..CParams::default()
    };
    let mut f = Frame::new_file(p, &cp, &DParams::default()).unwrap();
    f.add_metalayer("mine", &[0x93, 1, 2, 3]).unwrap();
    let mut all = Vec::new();
    for k in 0..4u16 {
        let data: Vec<u8> = if k == 2 {
            vec![0; 1000]
        } else {
            (0..500u16)
                .flat_map(|x| (x * (k + 1)).to_le_bytes())
                .collect()
        };
        f.append_chunk(&compress_vec(&cp, &data).unwrap()).unwrap();
        all.extend(data);
    }
    all
}

#[test]
fn own_frames_all_subcommands() {
    let w = scratch("own");
    let p = w.join("own.b2frame");
    let raw = own_frame(&p);
    let v = info_json(&p);
    assert_eq!(
        (v["nchunks"].as_i64(), v["special_chunks"].as_i64()),
        (Some(4), Some(1))
    );
    assert_eq!(v["metalayers"][0]["content"], serde_json::json!([1, 2, 3]));
    let c = ok(&["chunks", s(&p)]);
    assert!(c.lines().nth(3).unwrap().contains("zeros(offset)"), "{c}");
    ok(&["verify", s(&p)]);
    assert_eq!(run(&["cat", s(&p)]).stdout, raw);
    // A frame inside a larger file.
    let glued = w.join("glued.bin");
    let mut bytes = vec![0xAB; 333];
    bytes.extend(std::fs::read(&p).unwrap());
    std::fs::write(&glued, &bytes).unwrap();
    fails(&["info", s(&glued)], &glued, "magic");
    let v: Value =
        serde_json::from_str(&ok(&["info", "--json", "--offset", "333", s(&glued)])).unwrap();
    assert_eq!(v["offset"], 333);
    ok(&["verify", "--offset", "333", s(&glued)]);
    assert_eq!(run(&["cat", "--offset", "333", s(&glued)]).stdout, raw);
}

#[test]
fn broken_frames_fail_cleanly() {
    let d = py_dir();
    let w = scratch("broken");
    let good = std::fs::read(d.join("py.b2frame")).unwrap();
    let missing = w.join("missing.b2frame");
    for cmd in ["info", "chunks", "verify", "cat"] {
        fails(&[cmd, s(&missing)], &missing, "no such file");
    }
    // Truncated anywhere: header, data, trailer.
    for cut in [0usize, 50, 200, good.len() / 2, good.len() - 1] {
        let p = w.join(format!("cut{cut}.b2frame"));
        std::fs::write(&p, &good[..cut]).unwrap();
        for cmd in ["info", "chunks", "verify", "cat"] {
            fails(&[cmd, s(&p)], &p, "cannot open frame");
        }
    }
    let p = w.join("cut.b2frame");
    std::fs::write(&p, &good[..1000]).unwrap();
    fails(
        &["verify", s(&p)],
        &p,
        &format!("frame_len says {} bytes", good.len()),
    );
    // Forged magic.
    let mut bad = good.clone();
    bad[3] = b'X';
    let p = w.join("magic.b2frame");
    std::fs::write(&p, &bad).unwrap();
    fails(&["verify", s(&p)], &p, "magic");
    // Forged header fields and trailer marker: the message names the field and its bytes.
    let mut bad = good.clone();
    bad[48..52].copy_from_slice(&0i32.to_be_bytes());
    let p = w.join("typesize.b2frame");
    std::fs::write(&p, &bad).unwrap();
    fails(&["info", s(&p)], &p, "typesize 0 (bytes 48-51)");
    let mut bad = good.clone();
    let n = bad.len();
    bad[n - 23] = 0;
    let p = w.join("trailer.b2frame");
    std::fs::write(&p, &bad).unwrap();
    fails(&["verify", s(&p)], &p, &format!("0xCE at byte {}", n - 23));
    // Forged payload inside chunk 3: opening succeeds (no chunk is read), verify names chunk 3.
    let v = info_json(&d.join("py.b2frame"));
    let hl = v["header_len"].as_u64().unwrap() as usize;
    let line = ok(&["chunks", s(&d.join("py.b2frame"))])
        .lines()
        .nth(4)
        .unwrap()
        .to_string();
    let off: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    let mut bad = good.clone();
    for b in &mut bad[hl + off + 60..hl + off + 400] {
        *b ^= 0x5A;
    }
    let p = w.join("payload.b2frame");
    std::fs::write(&p, &bad).unwrap();
    let err = fails(&["verify", s(&p)], &p, "not sound");
    assert!(err.contains("chunk 3 (at byte"), "{err}");
    assert!(!err.contains("chunk 2 "), "{err}");
    fails(&["cat", s(&p)], &p, "chunk 3");
    // Forged chunk header cbytes: the chunk would run past the data section.
    let mut bad = good.clone();
    bad[hl + off + 12..hl + off + 16].copy_from_slice(&0x7fff_0000i32.to_le_bytes());
    let p = w.join("cbytes.b2frame");
    std::fs::write(&p, &bad).unwrap();
    let err = fails(&["verify", s(&p)], &p, "chunk 3");
    assert!(err.contains("not sound"), "{err}");
    fails(&["chunks", s(&p)], &p, "chunk 3");
    // Broken sframe: a chunk file removed.
    let sp = w.join("s.b2sframe");
    ok(&["convert", s(&d.join("py.b2frame")), s(&sp), "--sparse"]);
    std::fs::remove_file(sp.join("00000004.chunk")).unwrap();
    let err = fails(&["verify", s(&sp)], &sp, "not sound");
    assert!(
        err.contains("chunk 4 (file 00000004.chunk): cannot read"),
        "{err}"
    );
    // Usage errors are clap's (exit 2), still no panic.
    let out = run(&["cat"]);
    assert_eq!(out.status.code(), Some(2));
}
