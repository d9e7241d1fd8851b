//! Super-chunk interop with python-blosc2 4.14.1 (the project's .venv): frames the safe
//! [`SChunk`] writes (cframe file, sframe directory, after update/delete) are read by
//! python-blosc2 with the same chunks, metalayer and vlmetalayer; frames python-blosc2 writes are
//! read by [`SChunk`]. Fails loudly when the venv is missing.

use crate::common;

use b2frame::chunk::{CParams, DParams};
use b2frame::schunk::{NewStorage, SChunk};
use common::scratch::Scratch;
use std::path::{Path, PathBuf};
use std::process::Command;

fn run_py(script: &str, args: &[&str]) -> String {
    let out = Command::new(common::python())
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("running python");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "python failed: {}\n{}",
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A path `name` in a fresh directory, which the returned guard removes when it is dropped
/// after the test passes (see `common::scratch`).
fn scratch(name: &str) -> (Scratch, PathBuf) {
    let d = common::scratch::dir("b2f-schunk-py-");
    let p = d.join(name);
    (d, p)
}

/// int32 items `seed * 10000 + i` for `i in 0..n`, little-endian.
fn items(seed: i32, n: i32) -> Vec<u8> {
    (0..n)
        .flat_map(|i| (seed * 10000 + i).to_le_bytes())
        .collect()
}

fn cparams() -> CParams {
    CParams {
        typesize: 4,
        compcode: 5,
        clevel: 4,
        ..CParams::default()
    }
}

/// python-blosc2 keeps metalayer and vlmetalayer contents msgpack-packed.
const META: &[u8] = b"\xc4\x03xyz";
const VLMETA: &[u8] = b"\xa5hello";

const READER: &str = r#"
import sys, blosc2, numpy as np
s = blosc2.open(sys.argv[1])
seeds = [int(x) for x in sys.argv[2].split(",")]
assert s.nchunks == len(seeds), (s.nchunks, seeds)
assert s.typesize == 4
for i, seed in enumerate(seeds):
    got = np.frombuffer(s.decompress_chunk(i), dtype="<i4")
    n = 1000 if seed != 7 else 250
    want = seed * 10000 + np.arange(n, dtype="<i4")
    assert (got == want).all(), (i, seed, got[:4])
assert s.meta["m"] == b"xyz", s.meta["m"]
assert s.vlmeta["v"] == "hello", s.vlmeta["v"]
print("OK", s.nchunks)
"#;

fn write_ours(path: &Path, sparse: bool) {
    let st = if sparse {
        NewStorage::Sparse(path)
    } else {
        NewStorage::File(path)
    };
    let mut sc = SChunk::new(st, cparams(), DParams::default()).unwrap();
    sc.add_metalayer("m", META).unwrap();
    for seed in 1..=5 {
        sc.append_buffer(&items(seed, 1000)).unwrap();
    }
    sc.append_buffer(&items(7, 250)).unwrap();
    let c9 = b2frame::chunk::compress_vec(&cparams(), &items(9, 1000)).unwrap();
    sc.update_chunk(1, &c9).unwrap();
    sc.delete_chunk(3).unwrap();
    sc.vlmeta_add_raw(
        "v",
        &b2frame::chunk::compress_vec(&CParams::default(), VLMETA).unwrap(),
    )
    .unwrap();
}

#[test]
fn python_blosc2_reads_our_frames() {
    for sparse in [false, true] {
        let (_dir, p) = scratch(if sparse {
            "ours-s.b2frame"
        } else {
            "ours.b2frame"
        });
        write_ours(&p, sparse);
        let out = run_py(READER, &[p.to_str().unwrap(), "1,9,3,5,7"]);
        assert!(out.starts_with("OK 5"), "{out}");
        // Our to_file output of the reopened frame reads the same.
        let sc = SChunk::open(&p).unwrap();
        let (_qdir, q) = scratch(if sparse {
            "copy-s.b2frame"
        } else {
            "copy.b2frame"
        });
        sc.to_file(&q).unwrap();
        let out = run_py(READER, &[q.to_str().unwrap(), "1,9,3,5,7"]);
        assert!(out.starts_with("OK 5"), "{out}");
    }
}

const WRITER: &str = r#"
import sys, os, blosc2, numpy as np
p, contiguous = sys.argv[1], sys.argv[2] == "1"
s = blosc2.SChunk(chunksize=4000, urlpath=p, contiguous=contiguous,
                  cparams={"typesize": 4, "codec": blosc2.Codec.LZ4, "clevel": 6}, meta={"m": b"xyz"})
for seed in (2, 4, 6):
    s.append_data(seed * 10000 + np.arange(1000, dtype="<i4"))
s.append_data(np.zeros(1000, dtype="<i4"))
s.vlmeta["v"] = "hello"
s.insert_chunk(0, s.get_chunk(2))
print("OK")
"#;

#[test]
fn our_schunk_reads_python_blosc2_frames() {
    for contiguous in [true, false] {
        let (_dir, p) = scratch(if contiguous {
            "py.b2frame"
        } else {
            "py-s.b2frame"
        });
        let out = run_py(
            WRITER,
            &[p.to_str().unwrap(), if contiguous { "1" } else { "0" }],
        );
        assert!(out.starts_with("OK"));
        let mut sc = SChunk::open(&p).unwrap();
        assert_eq!(sc.nchunks(), 5);
        assert_eq!(sc.cparams().typesize, 4);
        assert_eq!(sc.cparams().compcode, 1);
        for (i, seed) in [6, 2, 4, 6].iter().enumerate() {
            assert_eq!(
                sc.decompress_chunk(i as i64).unwrap(),
                items(*seed, 1000),
                "chunk {i}"
            );
        }
        assert_eq!(sc.decompress_chunk(4).unwrap(), vec![0u8; 4000]);
        assert_eq!(sc.metalayers(), &[("m".to_string(), META.to_vec())]);
        assert_eq!(sc.vlmeta_get("v").unwrap(), VLMETA);
        // Mutate with ours; python-blosc2 still reads it.
        sc.delete_chunk(4).unwrap();
        sc.append_buffer(&items(7, 250)).unwrap();
        drop(sc);
        let out = run_py(READER, &[p.to_str().unwrap(), "6,2,4,6,7"]);
        assert!(out.starts_with("OK 5"), "{out}");
    }
}
