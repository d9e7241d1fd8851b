//! Frames c-blosc2 3.3.5 wrote (the corpus beside the repository, `shared/corpus`, described by
//! its `manifest.txt`), read through the crate's public API alone: every chunk decompressed and
//! checked against the SHA-256 the manifest records, every metalayer and vlmetalayer compared
//! byte for byte, and the b2nd arrays opened as arrays. Skipped when the corpus is absent
//! (`B2FRAME_CORPUS` names another place).

use blosc2_frame::{Array, SChunk};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn corpus() -> Option<PathBuf> {
    if let Some(c) = std::env::var_os("B2FRAME_CORPUS") {
        return Some(PathBuf::from(c));
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/corpus"))
        .find(|c| c.join("manifest.txt").is_file())
}

/// One frame of the manifest: the lines between `frame NAME` and `end`.
#[derive(Default, Debug)]
struct Entry {
    name: String,
    path: String,
    kind: String,
    offset: u64,
    /// nchunks, nbytes, cbytes, typesize, chunksize.
    dims: Vec<i64>,
    /// (nbytes, sha256 of the decompressed chunk).
    chunks: Vec<(usize, String)>,
    meta: Vec<(String, Vec<u8>)>,
    vlmeta: Vec<(String, Vec<u8>)>,
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn manifest(dir: &Path) -> Vec<Entry> {
    let text = std::fs::read_to_string(dir.join("manifest.txt")).unwrap();
    let mut out = Vec::new();
    let mut e = Entry::default();
    for line in text.lines() {
        let w: Vec<&str> = line.split(' ').collect();
        match w[0] {
            "frame" => {
                e = Entry {
                    name: w[1].into(),
                    ..Entry::default()
                }
            }
            "path" => e.path = w[1].into(),
            "kind" => e.kind = w[1].into(),
            "offset" => e.offset = w[1].parse().unwrap(),
            "dims" => e.dims = w[1..].iter().map(|v| v.parse().unwrap()).collect(),
            "chunk" => e.chunks.push((w[2].parse().unwrap(), w[4].into())),
            "meta" => e.meta.push((w[1].into(), unhex(w.get(3).unwrap_or(&"")))),
            "vlmeta" => e.vlmeta.push((w[1].into(), unhex(w.get(3).unwrap_or(&"")))),
            "end" => out.push(std::mem::take(&mut e)),
            _ => {}
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn every_corpus_frame_reads_as_its_manifest_says() {
    let Some(dir) = corpus() else {
        eprintln!("skipped: no c-blosc2 corpus (shared/corpus or B2FRAME_CORPUS)");
        return;
    };
    let entries = manifest(&dir);
    assert!(
        entries.len() >= 50,
        "{} frames in the manifest",
        entries.len()
    );
    let mut checked_chunks = 0;
    for e in &entries {
        assert!(
            e.kind == "cframe" || e.kind == "sframe",
            "{}: {}",
            e.name,
            e.kind
        );
        if e.offset != 0 {
            continue;
        }
        let sc = SChunk::open(dir.join(&e.path)).unwrap_or_else(|err| panic!("{}: {err}", e.name));
        assert_eq!(sc.nchunks(), e.dims[0], "{}", e.name);
        assert_eq!(sc.counters().nbytes, e.dims[1], "{}", e.name);
        assert_eq!(sc.cparams().get_typesize() as i64, e.dims[3], "{}", e.name);
        for (i, (chunk, (nbytes, sha))) in sc.chunks().zip(&e.chunks).enumerate() {
            let chunk = chunk.unwrap_or_else(|err| panic!("{} chunk {i}: {err}", e.name));
            assert_eq!(chunk.len(), *nbytes, "{} chunk {i}", e.name);
            // Uninitialised chunks have no recorded content.
            if sha != "-" {
                assert_eq!(&hex(&Sha256::digest(&chunk)), sha, "{} chunk {i}", e.name);
            }
            checked_chunks += 1;
        }
        for (name, content) in &e.meta {
            assert_eq!(sc.metalayer(name), Some(&content[..]), "{}: {name}", e.name);
        }
        for (name, content) in &e.vlmeta {
            assert_eq!(
                sc.vlmetalayer(name).unwrap().as_ref(),
                Some(content),
                "{}: {name}",
                e.name
            );
        }
        assert_eq!(sc.vlmetalayer_names().count(), e.vlmeta.len(), "{}", e.name);
    }
    assert!(checked_chunks > 1000, "{checked_chunks} chunks checked");
}

#[test]
fn corpus_b2nd_arrays_open_as_arrays() {
    let Some(dir) = corpus() else {
        eprintln!("skipped: no c-blosc2 corpus (shared/corpus or B2FRAME_CORPUS)");
        return;
    };
    let f64_2d = dir.join("frames/b2nd_f64_2d.b2nd");
    let arr = Array::<f64>::open(&f64_2d).unwrap();
    assert_eq!(arr.ndim(), 2);
    let all = arr.to_vec().unwrap();
    assert_eq!(all.len(), arr.shape().iter().product::<usize>());
    let shape = arr.shape();
    let part = arr.slice(&[1..shape[0], 0..shape[1] - 1]).unwrap();
    for (k, v) in part.iter().enumerate() {
        let (r, c) = (1 + k / (shape[1] - 1), k % (shape[1] - 1));
        assert_eq!(v.to_bits(), all[r * shape[1] + c].to_bits());
    }
    // Its typesize is 8: other item types are refused.
    assert!(Array::<i16>::open(&f64_2d).is_err());
    let zeros = Array::<i16>::open(dir.join("frames/b2nd_i16_zeros_3d.b2nd")).unwrap();
    // Zeros (special chunks) but for one chunk of 7s, as python-blosc2 reads it.
    assert_eq!(zeros.shape(), [30, 40, 50]);
    let items = zeros.to_vec().unwrap();
    assert!(items.iter().all(|&v| v == 0 || v == 7));
    assert_eq!(items.iter().filter(|&&v| v == 7).count(), 7500);
}
