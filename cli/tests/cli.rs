//! The `b2frame` command-line tool, run as a process: every subcommand on frames written by
//! python-blosc2 (c-blosc2 3.3.5) and by b2frame itself, and on broken frames, which must give
//! exit status 1 and one `b2frame: PATH: reason` line — never a panic (exit 101).
// The pseudo-terminal and pipe tests are Unix-only; on Windows their helpers go unused.
#![cfg_attr(windows, allow(unused_imports, dead_code))]

#[path = "../../tests/common/mod.rs"]
mod common;

use b2frame::capi::types::{blosc2_metalayer, blosc2_schunk, BLOSC2_DPARAMS_DEFAULTS};
use b2frame::chunk::header::ChunkHeader;
use b2frame::chunk::{compress_vec, no_hooks, CParams, Compressor, DParams, Decompressor};
use b2frame::frame::{meta, Frame, Target};
use common::scratch::Scratch;
use serde_json::Value;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io::Read;
#[cfg(unix)]
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex, Weak};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_b2frame")
}

/// A fresh directory for one test, removed when the test passes (see `common::scratch`).
fn scratch(name: &str) -> Scratch {
    common::scratch::dir(&format!("b2frame-cli-{name}-"))
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
# b2nd arrays whose chunks are padded to whole blocks, all-special chunks, an empty array.
blosc2.asarray(np.arange(100_003, dtype=np.uint8), chunks=(30_000,), blocks=(7_000,), urlpath=os.path.join(d, "pad.b2nd"), mode="w")
blosc2.zeros((1000, 33), dtype=np.int16, chunks=(300, 33), urlpath=os.path.join(d, "zeros.b2nd"), mode="w")
blosc2.zeros((0, 5), urlpath=os.path.join(d, "empty.b2nd"), mode="w")
# VL-block frames: raw blosc2_vlcompress_ctx chunks (with a metalayer and a vlmetalayer) as a
# cframe and an sframe, and a BatchArray (python-blosc2's VL-block container).
vcp = dict(typesize=4, codec=blosc2.Codec.LZ4, codec_meta=0, clevel=5, filters=[0, 0, 0, 0, 0, blosc2.Filter.SHUFFLE],
           filters_meta=[0] * 6, use_dict=False, nthreads=1, blocksize=0, splitmode=blosc2.SplitMode.AUTO_SPLIT)
for name, contiguous in (("vl.b2frame", True), ("vl.b2sframe", False)):
    v = blosc2.SChunk(chunksize=0, urlpath=os.path.join(d, name), contiguous=contiguous, mode="w",
                      meta={"layout": [3, "vl"]}, cparams={"typesize": 4, "codec": blosc2.Codec.LZ4})
    for i in range(6):
        blocks = [np.arange(i * 100 + j * 37 + 1, dtype=np.int32).tobytes() for j in range(i % 3 + 1)]
        blocks.append(("text %d " % i).encode() * (i + 1))
        v.append_chunk(blosc2.blosc2_ext.vlcompress(blocks, **vcp))
    v.vlmeta["units"] = "m/s"
b = blosc2.BatchArray(urlpath=os.path.join(d, "batch.b2frame"), mode="w")
for i in range(5):
    b.append([{"k": i, "s": "x" * i}] * (i + 2))
# A BatchArray with dead space (a deleted and a replaced batch).
b = blosc2.BatchArray(urlpath=os.path.join(d, "mutbatch.b2frame"), mode="w")
for i in range(6):
    b.append([{"k": i}] * (i + 2))
del b[1]
b[2] = [{"k": 99}]
"#;

/// Runs `script` with python-blosc2 (`args` as its `sys.argv[1:]`); fails the test with its
/// stderr unless it succeeds.
fn python_ok(script: &str, args: &[&Path]) {
    let out = Command::new(common::python())
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The directory of frames written by python-blosc2 (`PY`), shared by the tests that run at the
/// same time: each holds it while it runs, and the last one to finish removes it (a test that
/// starts later writes it anew), so no directory outlives the tests.
fn py_dir() -> Arc<Scratch> {
    static DIR: Mutex<Weak<Scratch>> = Mutex::new(Weak::new());
    let mut shared = DIR.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = shared.upgrade() {
        return d;
    }
    let d = Arc::new(scratch("py"));
    python_ok(PY, &[&d]);
    *shared = Arc::downgrade(&d);
    d
}

fn run(args: &[&str]) -> Output {
    common::target_command(bin()).args(args).output().unwrap()
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

/// How the OS words a missing file, and a missing directory in a path (std's `io::Error` text,
/// which the CLI's messages end with).
const NO_SUCH_FILE: &str = if cfg!(windows) {
    "File not found"
} else {
    "No such file"
};
const NO_SUCH_DIR: &str = if cfg!(windows) {
    "Path not found"
} else {
    "No such file"
};

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

/// Where chunk `i` of `f` is stored (its offset in the chunks section); it must not be special.
fn stored_offset(f: &Frame, i: usize) -> usize {
    match f.locs().at(i).stored() {
        Some(o) => o as usize,
        None => panic!("chunk {i} is not stored: {:?}", f.locs().at(i)),
    }
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
    for name in [
        "py.b2frame",
        "py.b2sframe",
        "arr.b2nd",
        "mut.b2frame",
        "pad.b2nd",
        "zeros.b2nd",
        "empty.b2nd",
        "vl.b2frame",
        "vl.b2sframe",
        "batch.b2frame",
    ] {
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
    // c-blosc2 wrote the original without a fingerprint; ours carries one.
    assert_eq!(a["fingerprint"]["type"], 0);
    assert_eq!(b["fingerprint"]["status"], "crc32 (fpt 1), matches");
    a["fingerprint"] = Value::Null;
    b["fingerprint"] = Value::Null;
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
    // Paths as arguments (not in the script: under wine they are Windows paths, which
    // scripts/windows/unixrun.c turns into the Linux Python's).
    let check = "import blosc2, sys\ns = blosc2.open(sys.argv[1])\nassert s.nchunks == 10\nassert bytes(s[:]) == open(sys.argv[2], 'rb').read()\n";
    python_ok(check, &[re.as_path(), d.join("py.bin").as_path()]);
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
    // A VL-block frame with dead space: same blocks and vlmetalayers after compact, and
    // c-blosc2 and python-blosc2 read it.
    let p = w.join("mutbatch.b2frame");
    std::fs::copy(d.join("mutbatch.b2frame"), &p).unwrap();
    let blocks = our_vl_blocks(&p);
    let vlm = vlmetas(&Frame::open(&p).unwrap());
    assert!(info_json(&p)["dead_bytes"].as_i64().unwrap() > 0);
    ok(&["compact", s(&p)]);
    assert_eq!(info_json(&p)["dead_bytes"], 0);
    ok(&["verify", s(&p)]);
    assert_eq!(our_vl_blocks(&p), blocks);
    assert_eq!(vlmetas(&Frame::open(&p).unwrap()), vlm);
    let r = reference_view(&p, true, true);
    assert_eq!((r.blocks, r.vlblocks), (blocks.clone(), blocks));
    let check = "import blosc2, sys\nb = blosc2.BatchArray(urlpath=sys.argv[1], mode='r')\n\
         assert [b[i][:] for i in range(len(b))] == [[{'k': k}] * n for k, n in ((0, 2), (2, 4), (99, 1), (4, 6), (5, 7))]\n";
    python_ok(check, &[p.as_path()]);
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
    fails(
        &["info", s(&glued)],
        &glued,
        "no \"b2frame\" magic at byte 2 (a frame seems to start at byte 333: try --offset 333)",
    );
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
    let left = info_json(&d.join("py.b2frame"))["cbytes"].as_u64().unwrap() as usize - off;
    assert!(
        err.contains(&format!(
            "its header says cbytes 2147418112, {left} bytes are left in the data section"
        )),
        "{err}"
    );
    let err = fails(&["chunks", s(&p)], &p, "chunk 3: ");
    assert!(err.ends_with("(1 unreadable chunk(s) in all)\n"), "{err}");
    let listing = String::from_utf8(run(&["chunks", s(&p)]).stdout).unwrap();
    assert_eq!(listing.lines().count(), 11, "{listing}");
    assert!(listing
        .lines()
        .nth(4)
        .unwrap()
        .starts_with("     3 unreadable: "));
    // info still reports the frame and names the damaged chunk.
    let v = info_json(&p);
    assert_eq!(v["unreadable_chunks"], serde_json::json!([3]));
    assert_eq!(
        (v["nchunks"].as_i64(), v["dead_bytes"].is_null()),
        (Some(10), true)
    );
    assert!(ok(&["info", s(&p)]).contains("unreadable chunks     3 (see b2frame verify)"));
    // Broken sframe: a chunk file removed.
    let sp = w.join("s.b2sframe");
    ok(&["convert", s(&d.join("py.b2frame")), s(&sp), "--sparse"]);
    std::fs::remove_file(sp.join("00000004.chunk")).unwrap();
    let err = fails(&["verify", s(&sp)], &sp, "not sound");
    assert!(
        err.contains("chunk 4 (file 00000004.chunk): cannot read")
            && err.contains(&format!("the chunk file: {NO_SUCH_FILE}")),
        "{err}"
    );
    // A truncated chunk file: its size against its header's cbytes.
    let c6 = std::fs::read(sp.join("00000006.chunk")).unwrap();
    std::fs::write(sp.join("00000006.chunk"), &c6[..50]).unwrap();
    // Two chunk problems, the frame's cbytes against the chunk files, and the fingerprint's
    // data part.
    let err = fails(&["verify", s(&sp)], &sp, "not sound: 4 problem(s)");
    assert!(
        err.contains("fingerprint: crc32 (fpt 1), MISMATCH in the data"),
        "{err}"
    );
    let cb = i32::from_le_bytes(c6[12..16].try_into().unwrap());
    assert!(
        err.contains(&format!(
            "chunk 6 (file 00000006.chunk): cannot read: Not enough space to read (-5): its header says cbytes {cb}, the file has 50 bytes"
        )),
        "{err}"
    );
    // Usage errors are clap's (exit 2), still no panic.
    let out = run(&["cat"]);
    assert_eq!(out.status.code(), Some(2));
}

// ---------------------------------------------------------------------------------------------
// VL-block frames: convert recompresses them block by block.

/// Every chunk's VL blocks, decoded by b2frame.
fn our_vl_blocks(p: &Path) -> Vec<Vec<Vec<u8>>> {
    let f = Frame::open(p).unwrap();
    let mut d = Decompressor::new(DParams::default(), no_hooks()).unwrap();
    (0..f.nchunks())
        .map(|i| d.vldecompress(&f.chunk(i).unwrap()).unwrap())
        .collect()
}

/// A VL-block frame b2frame writes itself (metalayer first, vlmetalayer last); returns the
/// blocks of every chunk.
fn own_vl_frame(target: Target<'_>) -> Vec<Vec<Vec<u8>>> {
    let cp = CParams {
        compcode: 1,
        typesize: 2,
        ..CParams::default()
    };
    let mut f = Frame::create(target, &cp, &DParams::default()).unwrap();
    f.add_metalayer("shape", &[0x92, 0x05, 0x07]).unwrap();
    let mut all = Vec::new();
    for k in 0..5u16 {
        let blocks: Vec<Vec<u8>> = (0..=k % 4)
            .map(|j| {
                (0..(300 + 111 * j + k))
                    .flat_map(|x| (x / (j + 1)).to_le_bytes())
                    .collect()
            })
            .collect();
        let srcs: Vec<&[u8]> = blocks.iter().map(Vec::as_slice).collect();
        let mut dst = vec![0u8; 64 * 1024];
        let n = Compressor::new(cp, no_hooks())
            .unwrap()
            .vlcompress(&srcs, &mut dst)
            .unwrap();
        f.append_chunk(&dst[..n]).unwrap();
        all.push(blocks);
    }
    f.add_vlmetalayer_raw("desc", &meta::encode_vlmeta(b"\xa5hello", None).unwrap())
        .unwrap();
    all
}

type Open = unsafe extern "C" fn(*const c_char) -> *mut blosc2_schunk;
type Free = unsafe extern "C" fn(*mut blosc2_schunk) -> c_int;
type GetChunk = unsafe extern "C" fn(*mut blosc2_schunk, i64, *mut *mut u8, *mut bool) -> c_int;
type DecompressChunk = unsafe extern "C" fn(*mut blosc2_schunk, i64, *mut c_void, i32) -> c_int;
type VlDecompress =
    unsafe extern "C" fn(*mut c_void, *const c_void, i32, *mut *mut c_void, *mut i32, i32) -> c_int;
type GetVlblock =
    unsafe extern "C" fn(*mut blosc2_schunk, i64, i32, *mut *mut u8, *mut i32) -> c_int;
type VlmetaGet =
    unsafe extern "C" fn(*mut blosc2_schunk, *const c_char, *mut *mut u8, *mut i32) -> c_int;

/// What the real c-blosc2 reads from a frame on disk.
#[derive(Debug, Default)]
struct RefView {
    nbytes: i64,
    /// Each chunk as `blosc2_schunk_get_chunk` returns it.
    chunks: Vec<Vec<u8>>,
    /// Each chunk through `blosc2_schunk_decompress_chunk` (regular frames).
    data: Vec<Vec<u8>>,
    /// Each chunk's blocks through single-threaded `blosc2_vldecompress_ctx` (VL frames).
    blocks: Vec<Vec<Vec<u8>>>,
    /// Each chunk's blocks through `blosc2_schunk_get_vlblock`, when asked for.
    vlblocks: Vec<Vec<Vec<u8>>>,
    metalayers: Vec<(String, Vec<u8>)>,
    vlmetalayers: Vec<(String, Vec<u8>)>,
}

fn reference_view(p: &Path, vl: bool, get_vlblock: bool) -> RefView {
    let r = common::reference::reference();
    let mut v = RefView::default();
    // SAFETY: every symbol has the C signature of blosc2.h 3.3.5; the schunk and every buffer
    // the reference hands out are used within their lifetime and freed as its API says.
    unsafe {
        let open: Open = std::mem::transmute(r.sym("blosc2_schunk_open"));
        let free: Free = std::mem::transmute(r.sym("blosc2_schunk_free"));
        let get_chunk: GetChunk = std::mem::transmute(r.sym("blosc2_schunk_get_chunk"));
        let decompress: DecompressChunk =
            std::mem::transmute(r.sym("blosc2_schunk_decompress_chunk"));
        let vldecompress: VlDecompress = std::mem::transmute(r.sym("blosc2_vldecompress_ctx"));
        let vlblock: GetVlblock = std::mem::transmute(r.sym("blosc2_schunk_get_vlblock"));
        let vlmeta_get: VlmetaGet = std::mem::transmute(r.sym("blosc2_vlmeta_get"));
        let path = CString::new(s(p)).unwrap();
        let sc = open(path.as_ptr());
        assert!(!sc.is_null(), "the reference cannot open {}", p.display());
        v.nbytes = (*sc).nbytes;
        let dctx = (r.create_dctx)(BLOSC2_DPARAMS_DEFAULTS);
        for i in 0..(*sc).nchunks {
            let mut c: *mut u8 = std::ptr::null_mut();
            let mut needs_free = false;
            let n = get_chunk(sc, i, &mut c, &mut needs_free);
            assert!(n > 0, "{}: get_chunk({i}) = {n}", p.display());
            let chunk = std::slice::from_raw_parts(c, n as usize).to_vec();
            if needs_free {
                libc::free(c as *mut c_void);
            }
            if vl {
                let nblocks = ChunkHeader::parse(&chunk).unwrap().blocksize;
                let mut dests = vec![std::ptr::null_mut::<c_void>(); nblocks as usize];
                let mut sizes = vec![0i32; nblocks as usize];
                let got = vldecompress(
                    dctx,
                    chunk.as_ptr() as *const c_void,
                    chunk.len() as i32,
                    dests.as_mut_ptr(),
                    sizes.as_mut_ptr(),
                    nblocks,
                );
                assert_eq!(got, nblocks, "{}: vldecompress chunk {i}", p.display());
                let blocks = dests
                    .iter()
                    .zip(&sizes)
                    .map(|(&d, &n)| {
                        let b = std::slice::from_raw_parts(d as *const u8, n as usize).to_vec();
                        libc::free(d);
                        b
                    })
                    .collect();
                v.blocks.push(blocks);
                if get_vlblock {
                    let blocks = (0..nblocks)
                        .map(|j| {
                            let mut d: *mut u8 = std::ptr::null_mut();
                            let mut n = 0i32;
                            let rc = vlblock(sc, i, j, &mut d, &mut n);
                            assert!(rc >= 0, "{}: get_vlblock({i}, {j}) = {rc}", p.display());
                            let b = std::slice::from_raw_parts(d, n as usize).to_vec();
                            libc::free(d as *mut c_void);
                            b
                        })
                        .collect();
                    v.vlblocks.push(blocks);
                }
            } else {
                let nb = ChunkHeader::parse(&chunk).unwrap().nbytes;
                let mut out = vec![0u8; nb as usize];
                let n = decompress(sc, i, out.as_mut_ptr() as *mut c_void, nb);
                assert_eq!(n, nb, "{}: decompress_chunk({i})", p.display());
                v.data.push(out);
            }
            v.chunks.push(chunk);
        }
        (r.free_ctx)(dctx);
        for k in 0..(*sc).nmetalayers as usize {
            let m: &blosc2_metalayer = &*(*sc).metalayers[k];
            let name = CStr::from_ptr(m.name).to_str().unwrap().to_string();
            let c = std::slice::from_raw_parts(m.content, m.content_len as usize);
            v.metalayers.push((name, c.to_vec()));
        }
        for k in 0..(*sc).nvlmetalayers as usize {
            let m: &blosc2_metalayer = &*(*sc).vlmetalayers[k];
            let mut d: *mut u8 = std::ptr::null_mut();
            let mut n = 0i32;
            assert!(vlmeta_get(sc, m.name, &mut d, &mut n) >= 0);
            let name = CStr::from_ptr(m.name).to_str().unwrap().to_string();
            v.vlmetalayers
                .push((name, std::slice::from_raw_parts(d, n as usize).to_vec()));
            libc::free(d as *mut c_void);
        }
        free(sc);
    }
    v
}

/// The vlmetalayers of a frame, decompressed, in trailer order.
fn vlmetas(f: &Frame) -> Vec<(String, Vec<u8>)> {
    f.vlmetalayers()
        .iter()
        .map(|(n, _)| (n.clone(), f.vlmetalayer(n).unwrap()))
        .collect()
}

/// Options for `convert`, and the (compcode, clevel, filters) every converted chunk must have
/// (`None`: as in the source).
type Case<'a> = (&'a [&'a str], Option<u8>, Option<u8>, Option<[u8; 6]>);

/// `convert` with recompression options on VL-block frames from python-blosc2 and b2frame:
/// same blocks (read by b2frame and by c-blosc2), the requested codec/level/filters in every
/// chunk, metalayers and vlmetalayers kept.
#[test]
fn convert_recompresses_vl_block_frames() {
    let d = py_dir();
    let w = scratch("vl");
    let own = w.join("own-vl.b2frame");
    let own_blocks = own_vl_frame(Target::File(&own));
    let own_sparse = w.join("own-vl.b2sframe");
    assert_eq!(own_vl_frame(Target::Sparse(&own_sparse)), own_blocks);
    assert_eq!(our_vl_blocks(&own), own_blocks);
    let sources = [
        d.join("vl.b2frame"),
        d.join("vl.b2sframe"),
        d.join("batch.b2frame"),
        own,
        own_sparse,
    ];
    // (options, compcode, clevel, filters) expected in every converted chunk; None = unchanged.
    let cases: [Case; 4] = [
        (
            &["--codec", "zstd", "--clevel", "9", "--filter", "bitshuffle"],
            Some(5),
            Some(9),
            Some([0, 0, 0, 0, 0, 2]),
        ),
        (
            &[
                "--sparse", "--codec", "zlib", "--clevel", "3", "--filter", "nofilter",
            ],
            Some(4),
            Some(3),
            Some([0; 6]),
        ),
        (&["--clevel", "0"], None, Some(0), None),
        (
            &["--codec", "blosclz", "--filter", "shuffle,delta"],
            Some(0),
            None,
            Some([0, 0, 0, 0, 1, 3]),
        ),
    ];
    for (n, src) in sources.iter().enumerate() {
        let ours = our_vl_blocks(src);
        let sf = Frame::open(src).unwrap();
        assert!(sf.header().vl_blocks, "{}", src.display());
        // The reference decodes the source as b2frame does.
        let rsrc = reference_view(src, true, true);
        assert_eq!(rsrc.blocks, ours, "{}", src.display());
        assert_eq!(rsrc.vlblocks, ours, "{}", src.display());
        for (k, (opts, codec, clevel, filters)) in cases.iter().enumerate() {
            let dst = w.join(format!("c{n}-{k}"));
            let mut args = vec!["convert", s(src), s(&dst)];
            args.extend_from_slice(opts);
            let out = run(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{args:?}: {err}");
            let delta = filters.is_some_and(|f| f.contains(&3));
            assert_eq!(err.contains("warning"), delta, "{args:?}: {err}");
            let what = format!("{} {opts:?}", src.display());
            let df = Frame::open(&dst).unwrap();
            assert_eq!(dst.is_dir(), opts.contains(&"--sparse"), "{what}");
            assert!(df.header().vl_blocks, "{what}");
            assert_eq!(df.header().nbytes, sf.header().nbytes, "{what}");
            assert_eq!(df.metalayers(), sf.metalayers(), "{what}");
            assert_eq!(vlmetas(&df), vlmetas(&sf), "{what}");
            assert_eq!(our_vl_blocks(&dst), ours, "{what}");
            for i in 0..df.nchunks() {
                let h = ChunkHeader::parse(&df.chunk(i).unwrap()).unwrap();
                let sh = ChunkHeader::parse(&sf.chunk(i).unwrap()).unwrap();
                assert!(h.is_vl() && h.version == 6, "{what}: chunk {i}");
                assert_eq!(h.udcompcode, codec.unwrap_or(sh.udcompcode), "{what}: {i}");
                assert_eq!(h.filters, filters.unwrap_or(sh.filters), "{what}: {i}");
            }
            let v = info_json(&dst);
            if let Some(l) = clevel {
                assert_eq!(v["clevel"], *l, "{what}");
            }
            assert!(ok(&["verify", s(&dst)]).contains(": ok ("), "{what}");
            // c-blosc2 opens the converted frame: same chunks, blocks, metalayers.
            // Its get_vlblock misdecodes DELTA-filtered VL blocks (a reference bug), so that
            // path is compared only without DELTA.
            let rdst = reference_view(&dst, true, !delta);
            assert_eq!(rdst.nbytes, df.header().nbytes, "{what}");
            assert_eq!(rdst.chunks.len() as i64, df.nchunks(), "{what}");
            for (i, c) in rdst.chunks.iter().enumerate() {
                assert_eq!(
                    &c[..],
                    &df.chunk(i as i64).unwrap()[..],
                    "{what}: chunk {i}"
                );
            }
            assert_eq!(rdst.blocks, ours, "{what}");
            if !delta {
                assert_eq!(rdst.vlblocks, ours, "{what}");
            }
            assert_eq!(rdst.metalayers, rsrc.metalayers, "{what}");
            assert_eq!(rdst.vlmetalayers, rsrc.vlmetalayers, "{what}");
        }
    }
    // python-blosc2 reads its BatchArray back from the recompressed copy.
    let check = "import blosc2, sys\nb = blosc2.BatchArray(urlpath=sys.argv[1], mode='r')\nassert len(b) == 5\n\
         for i in range(5):\n    assert b[i][:] == [{'k': i, 's': 'x' * i}] * (i + 2), b[i][:]\n";
    python_ok(check, &[w.join("c2-0").as_path()]);
    // Info and chunks say what the chunks are.
    let v = info_json(&d.join("batch.b2frame"));
    assert_eq!(
        (v["vl_blocks"].as_bool(), v["chunk_format_version"].as_i64()),
        (Some(true), Some(6))
    );
    assert_eq!(v["metalayers"][0]["name"], "batcharray");
    let c = ok(&["chunks", s(&d.join("vl.b2frame"))]);
    assert!(c.lines().nth(2).unwrap().ends_with("(3 VL blocks)"), "{c}");
}

/// Regular frames: every chunk decompresses to the same bytes after recompression, special
/// chunks stay special, metalayers and vlmetalayers are kept, and c-blosc2 reads the result.
#[test]
fn convert_recompresses_regular_frames_chunk_by_chunk() {
    let d = py_dir();
    let w = scratch("regular");
    let own = w.join("own.b2frame");
    own_frame(&own);
    for (n, src) in [d.join("py.b2frame"), d.join("arr.b2nd"), own]
        .iter()
        .enumerate()
    {
        for (k, opts) in [
            &["--codec", "lz4hc", "--clevel", "6", "--filter", "shuffle"][..],
            &["--sparse", "--filter", "bitshuffle,delta"][..],
        ]
        .iter()
        .enumerate()
        {
            let dst = w.join(format!("r{n}-{k}"));
            let mut args = vec!["convert", s(src), s(&dst)];
            args.extend_from_slice(opts);
            ok(&args);
            let what = format!("{} {opts:?}", src.display());
            let (sf, df) = (Frame::open(src).unwrap(), Frame::open(&dst).unwrap());
            assert_eq!(df.nchunks(), sf.nchunks(), "{what}");
            assert_eq!(df.locs().len(), sf.locs().len());
            for i in 0..sf.nchunks() {
                assert_eq!(
                    df.decompress_chunk(i).unwrap(),
                    sf.decompress_chunk(i).unwrap(),
                    "{what}: chunk {i}"
                );
                // Special offsets stay special offsets.
                assert_eq!(
                    sf.locs().at(i as usize).is_stored(),
                    df.locs().at(i as usize).is_stored(),
                    "{what}: chunk {i}"
                );
            }
            assert_eq!(df.metalayers(), sf.metalayers(), "{what}");
            assert_eq!(vlmetas(&df), vlmetas(&sf), "{what}");
            let r = reference_view(&dst, false, false);
            assert_eq!(r.data.len() as i64, sf.nchunks(), "{what}");
            for (i, data) in r.data.iter().enumerate() {
                assert_eq!(data, &sf.decompress_chunk(i as i64).unwrap(), "{what}: {i}");
            }
            assert_eq!(r.metalayers, sf.metalayers().to_vec(), "{what}");
            assert_eq!(r.vlmetalayers, vlmetas(&sf), "{what}");
        }
    }
    // Filter metas: trunc_prec keeps the given mantissa bits; it needs 4- or 8-byte items.
    let t = w.join("trunc.b2frame");
    ok(&[
        "convert",
        s(&d.join("arr.b2nd")),
        s(&t),
        "--filter",
        "trunc_prec:20,shuffle",
    ]);
    let c = ok(&["chunks", s(&t)]);
    assert!(
        c.lines().nth(1).unwrap().contains("trunc_prec(20),shuffle"),
        "{c}"
    );
    fails(
        &[
            "convert",
            s(&own_path(&w)),
            s(&w.join("t2")),
            "--filter",
            "trunc_prec:3",
        ],
        &own_path(&w),
        "trunc_prec works on 4- or 8-byte floats; the frame's typesize is 2",
    );
    assert!(!w.join("t2").exists());
    fails(
        &[
            "convert",
            s(&own_path(&w)),
            s(&w.join("t3")),
            "--filter",
            "shuffle:x",
        ],
        &own_path(&w),
        "unknown filter",
    );
}

fn own_path(w: &Path) -> PathBuf {
    w.join("own.b2frame")
}

// ---------------------------------------------------------------------------------------------
// The progress bar: on a terminal only, rate-limited, erased at the end.

// Pseudo-terminals and raw pipes are POSIX: these tests run on Unix only.

/// Runs b2frame with stderr on a new pseudo-terminal and stdout on a pipe; returns the exit
/// code, everything written to the terminal, and stdout.
#[cfg(unix)]
fn run_on_pty(args: &[&str]) -> (Option<i32>, String, Vec<u8>) {
    run_on_pty_with(args, false)
}

/// As [`run_on_pty`]; with `both`, stdout goes to the same terminal (and the returned stdout
/// is empty).
#[cfg(unix)]
fn run_on_pty_with(args: &[&str], both: bool) -> (Option<i32>, String, Vec<u8>) {
    let (mut m, mut sl) = (0 as c_int, 0 as c_int);
    // SAFETY: openpty stores two new descriptors in `m` and `sl`; name, termios and winsize
    // may be null.
    let rc = unsafe {
        libc::openpty(
            &mut m,
            &mut sl,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors are fresh from openpty and owned from here on.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(sl)) };
    let stdout = if both {
        Stdio::from(slave.try_clone().unwrap())
    } else {
        Stdio::piped()
    };
    let mut cmd = common::target_command(bin());
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::from(slave));
    let mut child = cmd.spawn().unwrap();
    // Our copy of the slave must be closed, or reading the master never ends.
    drop(cmd);
    let reader = std::thread::spawn(move || {
        let mut tty = std::fs::File::from(master);
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        // Linux reports EIO once the last slave descriptor is closed.
        while let Ok(n) = tty.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
        }
        all
    });
    let mut stdout = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_end(&mut stdout).unwrap();
    }
    let status = child.wait().unwrap();
    let tty = reader.join().unwrap();
    (
        status.code(),
        String::from_utf8_lossy(&tty).into_owned(),
        stdout,
    )
}

/// A cframe of `n` small chunks (enough steps for a progress bar).
fn many_chunks(p: &Path, n: usize) -> Vec<u8> {
    let cp = CParams {
        typesize: 4,
        ..CParams::default()
    };
    let mut f = Frame::new_file(p, &cp, &DParams::default()).unwrap();
    let mut all = Vec::new();
    for k in 0..n as u32 {
        let data: Vec<u8> = (0..256u32)
            .flat_map(|x| (x * k + 1).to_le_bytes())
            .collect();
        f.append_chunk(&compress_vec(&cp, &data).unwrap()).unwrap();
        all.extend(data);
    }
    all
}

const ERASE: &str = "\r\x1b[K";

#[test]
#[cfg(unix)]
fn progress_bar_on_a_terminal() {
    let w = scratch("pty");
    let p = w.join("many.b2frame");
    let raw = many_chunks(&p, 300);
    let (code, tty, stdout) =
        run_on_pty(&["convert", s(&p), s(&w.join("out.b2sframe")), "--sparse"]);
    assert_eq!(code, Some(0), "{tty}");
    assert!(stdout.is_empty());
    assert!(tty.starts_with("\rconvert ["), "{tty:?}");
    assert!(tty.contains("] ") && tty.contains("/300"), "{tty:?}");
    // Rate-limited: at most one redraw per whole percent (300 steps, not 300 redraws).
    let draws = tty.matches("\rconvert [").count();
    assert!((1..=101).contains(&draws), "{draws} redraws: {tty:?}");
    // Every redraw clears the rest of its line, and the bar is erased at the end.
    assert_eq!(tty.matches("\x1b[K").count(), draws + 1, "{tty:?}");
    assert!(tty.ends_with(ERASE), "{tty:?}");
    assert!(!tty.contains('\n'), "the bar must not scroll: {tty:?}");
    // verify and cat (data to a pipe) show it too; stdout is untouched by it.
    let (code, tty, stdout) = run_on_pty(&["verify", s(&p)]);
    assert_eq!(code, Some(0), "{tty}");
    assert!(
        tty.starts_with("\rverify [") && tty.ends_with(ERASE),
        "{tty:?}"
    );
    assert!(String::from_utf8(stdout)
        .unwrap()
        .contains(": ok (300 chunks"));
    let (code, tty, stdout) = run_on_pty(&["cat", s(&p)]);
    assert_eq!(code, Some(0), "{tty}");
    assert!(
        tty.starts_with("\rcat [") && tty.ends_with(ERASE),
        "{tty:?}"
    );
    assert_eq!(stdout, raw);
    // An error in the middle: the bar is erased before the error line, which starts clean.
    let mut bytes = std::fs::read(&p).unwrap();
    let hl = info_json(&p)["header_len"].as_u64().unwrap() as usize;
    let line = ok(&["chunks", s(&p)]).lines().nth(201).unwrap().to_string();
    let off: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    for b in &mut bytes[hl + off + 40..hl + off + 60] {
        *b ^= 0xA5;
    }
    let bad = w.join("bad.b2frame");
    std::fs::write(&bad, &bytes).unwrap();
    let (code, tty, _) = run_on_pty(&["cat", s(&bad)]);
    assert_eq!(code, Some(1), "{tty:?}");
    let expect = format!("{ERASE}b2frame: {}: chunk 200: ", bad.display());
    assert!(
        tty.starts_with("\rcat [") && tty.contains(&expect),
        "{tty:?}"
    );
    // cat with its data going to the terminal too: no bar in the data.
    let (code, tty, _) = run_on_pty_with(&["cat", s(&p)], true);
    assert_eq!(code, Some(0));
    assert!(tty.len() >= raw.len() && !tty.contains("cat ["));
    // Too few chunks for a bar.
    let small = w.join("small.b2frame");
    many_chunks(&small, 10);
    let (code, tty, _) = run_on_pty(&["verify", s(&small)]);
    assert_eq!((code, tty.as_str()), (Some(0), ""));
}

#[test]
fn no_progress_bar_on_a_pipe() {
    let w = scratch("nopty");
    let p = w.join("many.b2frame");
    many_chunks(&p, 300);
    for args in [
        vec![
            "convert",
            s(&p),
            s(&w.join("out.b2frame")),
            "--codec",
            "zstd",
        ],
        vec!["verify", s(&p)],
        vec!["cat", s(&p)],
    ] {
        let out = run(&args);
        assert!(out.status.success(), "{args:?}");
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {:?}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Error-message rule and verify's "what is wrong where".

/// Output to a pipe whose reader is gone ends quietly (exit 0), never with a panic.
#[test]
#[cfg(unix)]
fn closed_stdout_is_not_a_panic() {
    let d = py_dir();
    for args in [
        vec!["info", s(&d.join("py.b2frame"))],
        vec!["info", "--json", s(&d.join("py.b2frame"))],
        vec!["chunks", s(&d.join("py.b2frame"))],
        vec!["verify", s(&d.join("py.b2frame"))],
        vec!["cat", s(&d.join("py.b2frame"))],
    ] {
        let mut fds = [0 as c_int; 2];
        // SAFETY: pipe stores two new descriptors in `fds`.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both descriptors are fresh and owned from here on.
        let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        drop(rd);
        let out = common::target_command(bin())
            .args(&args)
            .stdout(Stdio::from(wr))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

#[test]
fn clear_errors_for_bad_arguments_and_paths() {
    let d = py_dir();
    let w = scratch("errors");
    let py = d.join("py.b2frame");
    fails(
        &["cat", s(&py), "--chunk", "-1"],
        &py,
        "chunk -1 out of range (frame has 10 chunks)",
    );
    let empty = w.join("empty.dir");
    std::fs::create_dir(&empty).unwrap();
    for cmd in ["info", "chunks", "verify", "cat"] {
        fails(&[cmd, s(&empty)], &empty, "not an sframe directory");
    }
    let nowhere = w.join("no/such/dir/x.b2frame");
    fails(
        &["convert", s(&py), s(&nowhere)],
        &nowhere,
        &format!("cannot create: {NO_SUCH_DIR}"),
    );
    fails(
        &["convert", s(&py), s(&nowhere), "--sparse"],
        &nowhere,
        &format!("cannot create: {NO_SUCH_DIR}"),
    );
    fails(
        &["info", "--offset", "5", s(&d.join("py.b2sframe"))],
        &d.join("py.b2sframe"),
        "--offset",
    );
    fails(
        &["info", "--offset", "99999999", s(&py)],
        &py,
        "past the end of the file",
    );
}

#[test]
fn verify_says_what_is_wrong_where() {
    let d = py_dir();
    let w = scratch("where");
    // A VL-block frame whose header flag (byte 25, bit 7) was cleared, and a regular frame
    // whose flag was set.
    let good = std::fs::read(d.join("vl.b2frame")).unwrap();
    let mut bad = good.clone();
    assert_eq!(bad[25] & 0x80, 0x80);
    bad[25] &= 0x7f;
    let p = w.join("vlflag.b2frame");
    std::fs::write(&p, &bad).unwrap();
    let err = fails(&["verify", s(&p)], &p, "not sound: 6 problem(s)");
    assert!(
        err.contains("chunk 0 (at byte") && err.contains("is a VL-block chunk but the frame header's VL-blocks flag (byte 25 bit 7) is clear"),
        "{err}"
    );
    let mut bad = std::fs::read(d.join("py.b2frame")).unwrap();
    bad[25] |= 0x80;
    let p = w.join("regflag.b2frame");
    std::fs::write(&p, &bad).unwrap();
    let err = fails(&["verify", s(&p)], &p, "not sound: 10 problem(s)");
    assert!(err.contains("chunk 9 (at byte"), "{err}");
    assert!(err.contains("is a regular chunk but"), "{err}");
    // A damaged VL block: the message names the chunk and the block.
    let hl = info_json(&d.join("vl.b2frame"))["header_len"]
        .as_u64()
        .unwrap() as usize;
    let f = Frame::open(&d.join("vl.b2frame")).unwrap();
    let chunk4 = f.chunk(4).unwrap().to_vec();
    let off = stored_offset(&f, 4);
    // Block 1's stream starts at bstarts[1]; overwrite its compressed size word and payload.
    let b1 = i32::from_le_bytes(chunk4[36..40].try_into().unwrap()) as usize;
    let mut bad = good.clone();
    for b in &mut bad[hl + off + b1 + 4..hl + off + b1 + 12] {
        *b = 0xFF;
    }
    let p = w.join("vlblock.b2frame");
    std::fs::write(&p, &bad).unwrap();
    let err = fails(&["verify", s(&p)], &p, "not sound: 1 problem(s)");
    assert!(err.contains("chunk 4 (at byte"), "{err}");
    assert!(
        err.contains("decompression failed in VL block 1 of 3"),
        "{err}"
    );
    // A b2nd metalayer that disagrees with the frame.
    let cp = CParams {
        typesize: 8,
        ..CParams::default()
    };
    let p = w.join("b2nd.b2frame");
    let mut f = Frame::new_file(&p, &cp, &DParams::default()).unwrap();
    let m = b2frame::b2nd_meta::serialize(&[100, 10], &[20, 10], &[5, 5], Some(b"<f8"), 0).unwrap();
    f.add_metalayer("b2nd", &m).unwrap();
    for _ in 0..3 {
        f.append_chunk(&compress_vec(&cp, &[7u8; 1600]).unwrap())
            .unwrap();
    }
    drop(f);
    let v = info_json(&p);
    assert_eq!(
        v["metalayers"][0]["content"]["shape"],
        serde_json::json!([100, 10])
    );
    let err = fails(&["verify", s(&p)], &p, "not sound: 1 problem(s)");
    assert!(
        err.contains("metalayer \"b2nd\": shape [100, 10] in chunks of [20, 10] needs 5 chunks, the frame has 3"),
        "{err}"
    );
    // A damaged regular chunk: the block that fails is named.
    let arr = d.join("arr.b2nd");
    let good = std::fs::read(&arr).unwrap();
    let hl = info_json(&arr)["header_len"].as_u64().unwrap() as usize;
    let f = Frame::open(&arr).unwrap();
    let c2 = f.chunk(2).unwrap().to_vec();
    let h = ChunkHeader::parse(&c2).unwrap();
    assert!(h.nblocks() > 1);
    let off = stored_offset(&f, 2);
    let last = h.nblocks() as usize - 1;
    let bs = i32::from_le_bytes(c2[32 + 4 * last..36 + 4 * last].try_into().unwrap()) as usize;
    let mut bad = good.clone();
    // The first stream of the last block claims more bytes than the chunk holds.
    bad[hl + off + bs..hl + off + bs + 4].copy_from_slice(&0x7fff_fff0i32.to_le_bytes());
    let p = w.join("block.b2frame");
    std::fs::write(&p, &bad).unwrap();
    let err = fails(&["verify", s(&p)], &p, "not sound: 1 problem(s)");
    assert!(
        err.contains(&format!(
            "chunk 2 (at byte {} of the frame): decompression failed in block {last} of {}",
            hl + off,
            h.nblocks()
        )),
        "{err}"
    );
}

/// Frames the library refuses to open: the message names the field, its bytes and the
/// conflict, for header, trailer and offsets index.
#[test]
fn open_failures_name_the_field() {
    let d = py_dir();
    let w = scratch("open");
    let good = std::fs::read(d.join("py.b2frame")).unwrap();
    let n = good.len();
    let hl = i32::from_be_bytes(good[11..15].try_into().unwrap()) as usize;
    let cb = i64::from_be_bytes(good[39..47].try_into().unwrap()) as usize;
    let index = hl + cb;
    type Edit = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(&str, Edit, String)> = vec![
        (
            "nbytes",
            Box::new(|b| b[30..38].copy_from_slice(&400_001i64.to_be_bytes())),
            format!("the offsets index at byte {index} (header_len {hl} + cbytes {cb} (bytes 39-46)) has 10 entries, but nbytes 400001 (bytes 30-37) in chunks of 40000 (bytes 58-61) makes 11 chunks"),
        ),
        (
            "chunksize",
            Box::new(|b| b[58..62].copy_from_slice(&30_000i32.to_be_bytes())),
            "in chunks of 30000 (bytes 58-61) makes 14 chunks".to_string(),
        ),
        (
            "cbytes",
            Box::new(|b| b[39..47].copy_from_slice(&1_000_000i64.to_be_bytes())),
            format!("cbytes 1000000 (bytes 39-46) puts the offsets index at byte {}, past the trailer", hl + 1_000_000),
        ),
        (
            "frametype",
            Box::new(|b| b[26] = 1),
            "frame_type (byte 26) says sparse, but this is a cframe file".to_string(),
        ),
        (
            "trailerlen",
            Box::new(move |b| b[n - 22..n - 18].copy_from_slice(&5u32.to_be_bytes())),
            format!("trailer length 5 (bytes {}-{}) is impossible for a {n}-byte frame", n - 22, n - 19),
        ),
        (
            "index",
            Box::new(move |b| b[index + 40..index + 60].fill(0xAA)),
            format!("the offsets index at byte {index} does not decompress"),
        ),
    ];
    for (name, edit, reason) in cases {
        let mut bad = good.clone();
        edit(&mut bad);
        let p = w.join(format!("{name}.b2frame"));
        std::fs::write(&p, &bad).unwrap();
        for cmd in ["info", "verify", "cat"] {
            fails(&[cmd, s(&p)], &p, &reason);
        }
    }
    // The same in an sframe's index file, named in the message.
    let sp = w.join("s.b2sframe");
    ok(&["convert", s(&d.join("py.b2frame")), s(&sp), "--sparse"]);
    let idx = sp.join("chunks.b2frame");
    let mut bad = std::fs::read(&idx).unwrap();
    bad[26] = 0;
    std::fs::write(&idx, &bad).unwrap();
    fails(
        &["info", s(&sp)],
        &sp,
        &format!(
            "{}: frame_type (byte 26) says contiguous, but this is an sframe index",
            idx.display()
        ),
    );
}

/// A frame torn the way c-blosc2 tears one (the next chunk written over the index and trailer,
/// the header not yet rewritten): verify says it looks torn and suggests recover; recover
/// rebuilds it from its intact chunks (the new one included), and the result verifies.
#[test]
fn verify_spots_a_torn_frame_and_recover_salvages_it() {
    let d = py_dir();
    let w = scratch("recover");
    let good = std::fs::read(d.join("py.b2frame")).unwrap();
    let f = Frame::from_bytes(&good).unwrap();
    let h = f.header();
    let at = h.header_len as usize + h.cbytes as usize;
    let mut torn = good[..at].to_vec();
    torn.extend_from_slice(&f.chunk(0).unwrap());
    let p = w.join("torn.b2frame");
    std::fs::write(&p, &torn).unwrap();
    let out = run(&["verify", s(&p)]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("looks torn") && err.contains("b2frame recover"),
        "{err}"
    );
    let dst = w.join("saved.b2frame");
    let said = ok(&["recover", s(&p), s(&dst)]);
    assert!(said.contains("rebuilt from the intact chunks"), "{said}");
    let back = Frame::open(&dst).unwrap();
    assert_eq!(back.nchunks(), f.nchunks() + 1);
    for i in 0..f.nchunks() {
        assert_eq!(
            back.decompress_chunk(i).unwrap(),
            f.decompress_chunk(i).unwrap()
        );
    }
    assert!(ok(&["verify", s(&dst)]).contains(": ok ("));
    // An intact frame is copied as it is; an existing destination is refused.
    let copy = w.join("copy.b2frame");
    assert!(ok(&["recover", s(&d.join("py.b2frame")), s(&copy)]).contains("opens as it is"));
    assert_eq!(std::fs::read(&copy).unwrap(), good);
    fails(&["recover", s(&p), s(&copy)], &copy, "destination exists");
}

/// What both libraries open at `path` (`None`: neither opens a frame there).
fn opened_by_both(path: &Path) -> Result<Option<common::crash::State>, String> {
    use common::crash::{ours, theirs};
    match (ours(path, 0), theirs(path, 0)) {
        (Ok(o), Ok(t)) if o == t => Ok(Some(o)),
        (Err(_), Err(_)) => Ok(None),
        (o, t) => Err(format!(
            "libraries disagree: ours {:?} / c-blosc2 {:?}",
            o.map(|s| s.brief()),
            t.map(|s| s.brief())
        )),
    }
}

/// Kill test of `compact` and `convert` (docs/durability.md, "Whole-file calls"): each is
/// SIGKILLed at a random moment; the compacted frame must open with its chunks in both
/// libraries, and a convert destination must be absent (no frame) or the complete copy.
/// `B2FRAME_KILL_ROUNDS` sets the rounds (default 30).
#[test]
#[cfg(unix)]
fn kill_compact_and_convert() {
    let rounds: u64 = std::env::var("B2FRAME_KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let w = scratch("kill");
    let src = w.path().join("src.b2frame");
    let cp = CParams {
        typesize: 4,
        ..CParams::default()
    };
    let mut sc = b2frame::schunk::SChunk::new(
        b2frame::schunk::NewStorage::File(&src),
        cp,
        Default::default(),
    )
    .unwrap();
    sc.add_metalayer("m", b"abc").unwrap();
    let mut rng = common::Rng::new(7);
    for _ in 0..150 {
        let mut d = vec![0u8; 4000];
        rng.fill(&mut d);
        sc.append_buffer(&d).unwrap();
    }
    for i in (0..40).rev() {
        sc.delete_chunk(i * 3).unwrap();
    }
    sc.vlmeta_add("v", b"hello", None).unwrap();
    drop(sc);
    let want = opened_by_both(&src).unwrap().unwrap();
    let mut control = common::Rng::new(11);
    let mut failures = Vec::new();
    let mut outcomes = [[0u64; 2]; 3];
    for round in 0..rounds {
        let p = w.path().join(format!("c{round}.b2frame"));
        std::fs::copy(&src, &p).unwrap();
        let dst = w.path().join(format!("d{round}.b2frame"));
        let sdst = w.path().join(format!("d{round}.b2sframe"));
        let runs: [(&[&str], &Path); 3] = [
            (&["compact", s(&p)], &p),
            (&["convert", s(&src), s(&dst)], &dst),
            (&["convert", "--sparse", s(&src), s(&sdst)], &sdst),
        ];
        for (k, (args, target)) in runs.iter().enumerate() {
            let mut child = common::target_command(bin())
                .args(*args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(std::time::Duration::from_micros(control.below(40_000)));
            let _ = child.kill();
            let _ = child.wait();
            match opened_by_both(target) {
                Ok(Some(got)) if got == want => outcomes[k][1] += 1,
                Ok(None) if k > 0 => outcomes[k][0] += 1,
                Ok(got) => failures.push(format!(
                    "round {round}: {args:?} left {:?}",
                    got.map(|g| g.brief())
                )),
                Err(e) => failures.push(format!("round {round}: {args:?}: {e}")),
            }
        }
    }
    eprintln!("kill: (no frame, complete) for compact, convert, convert --sparse: {outcomes:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Appends one 40 000-byte buffer to the frame at `path` with the real c-blosc2.
fn reference_append(path: &Path) {
    type Sc = *mut b2frame::capi::types::blosc2_schunk;
    let r = common::reference::reference();
    let c = std::ffi::CString::new(s(path)).unwrap();
    let data: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
    // SAFETY: the symbols have these C signatures in blosc2.h 3.3.5; the schunk pointer is used
    // only between open and free; `data` outlives the call.
    unsafe {
        let open: unsafe extern "C" fn(*const c_char) -> Sc =
            std::mem::transmute(r.sym("blosc2_schunk_open"));
        let append: unsafe extern "C" fn(Sc, *const c_void, i32) -> i64 =
            std::mem::transmute(r.sym("blosc2_schunk_append_buffer"));
        let free: unsafe extern "C" fn(Sc) -> c_int =
            std::mem::transmute(r.sym("blosc2_schunk_free"));
        let sc = open(c.as_ptr());
        assert!(!sc.is_null());
        assert!(append(sc, data.as_ptr() as *const c_void, data.len() as i32) > 0);
        free(sc);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// `recover` on sframes (docs/durability.md, "Recovery"): c-blosc2 rewrites the index file in
/// place, so a kill during an append leaves the new header and a prefix of the new index over
/// the old one (rebuilt here from the index files before and after a real c-blosc2 append, cut
/// at several bytes), and damage can empty or remove it. Each salvaged sframe must open in both
/// libraries with every chunk of the state after the append, or of the one before it (when
/// the old index survived whole), in order.
#[test]
fn recover_salvages_torn_sframes() {
    let d = py_dir();
    let w = scratch("recover-sframe");
    let before = w.join("before.b2sframe");
    copy_dir(&d.join("py.b2sframe"), &before);
    let after = w.join("after.b2sframe");
    copy_dir(&before, &after);
    reference_append(&after);
    let want = opened_by_both(&after).unwrap().unwrap();
    let old = std::fs::read(before.join("chunks.b2frame")).unwrap();
    let new = std::fs::read(after.join("chunks.b2frame")).unwrap();
    let hl = u32::from_be_bytes(new[11..15].try_into().unwrap()) as usize;
    let was = opened_by_both(&before).unwrap().unwrap();
    assert_eq!(was.chunks.len() + 1, want.chunks.len());
    // (torn index file or None: removed, what recover must say)
    let mut cases: Vec<(String, Option<Vec<u8>>, &str)> = Vec::new();
    for k in [
        hl + 1,
        hl + 20,
        (hl + new.len()) / 2,
        new.len() - 30,
        new.len() - 3,
    ] {
        let mut torn = new[..k].to_vec();
        if old.len() > k {
            torn.extend_from_slice(&old[k..]);
        }
        cases.push((format!("cut at {k}"), Some(torn), ""));
    }
    cases.push((
        "emptied".into(),
        Some(Vec::new()),
        "rebuilt from the intact chunks",
    ));
    cases.push(("removed".into(), None, "rebuilt from the intact chunks"));
    let mut methods = Vec::new();
    for (n, (what, index, says)) in cases.iter().enumerate() {
        let src = w.join(format!("torn{n}.b2sframe"));
        copy_dir(&after, &src);
        match index {
            Some(b) => std::fs::write(src.join("chunks.b2frame"), b).unwrap(),
            None => std::fs::remove_file(src.join("chunks.b2frame")).unwrap(),
        }
        let dst = w.join(format!("saved{n}.b2sframe"));
        let said = ok(&["recover", s(&src), s(&dst)]);
        assert!(said.contains(says), "{what}: {said}");
        let got = opened_by_both(&dst)
            .unwrap_or_else(|e| panic!("{what}: {e}"))
            .unwrap_or_else(|| panic!("{what}: no frame"));
        // The state after the append, or (an old index kept whole) the one before it.
        assert!(
            got.chunks == want.chunks || got.chunks == was.chunks,
            "{what}: {said}"
        );
        methods.push(said.lines().next().unwrap_or("").to_string());
    }
    // Some cuts keep the torn index, others rebuild from the chunk files.
    assert!(
        methods.iter().any(|m| m.contains("kept the offsets index")),
        "{methods:?}"
    );
    assert!(methods.iter().any(|m| m.contains("rebuilt")), "{methods:?}");
    // An intact sframe is copied; a torn chunk file is reported and left out.
    let copy = w.join("copy.b2sframe");
    assert!(ok(&["recover", s(&after), s(&copy)]).contains("opens as it is"));
    assert_eq!(opened_by_both(&copy).unwrap().unwrap(), want);
    let src = w.join("tornchunk.b2sframe");
    copy_dir(&after, &src);
    std::fs::remove_file(src.join("chunks.b2frame")).unwrap();
    let last = format!("{:08X}.chunk", want.chunks.len() - 1);
    let c = std::fs::read(src.join(&last)).unwrap();
    std::fs::write(src.join(&last), &c[..c.len() / 2]).unwrap();
    let dst = w.join("saved-tornchunk.b2sframe");
    let said = ok(&["recover", s(&src), s(&dst)]);
    assert!(said.contains(&format!("{last} is torn")), "{said}");
    let got = opened_by_both(&dst).unwrap().unwrap();
    assert_eq!(got.chunks[..], want.chunks[..want.chunks.len() - 1]);
}
