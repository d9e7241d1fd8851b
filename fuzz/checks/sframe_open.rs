//! Hostile sframe directories: the input becomes an index file (`chunks.b2frame`) and up to
//! [`MAX_CHUNK_FILES`] chunk files (`%08X.chunk`) in a scratch directory, which is opened through
//! the public API (`SChunk::open`) and through the C API (`blosc2_schunk_open`) and read whole:
//! every chunk (stored bytes, decoded into a buffer of at most [`MAX_CHUNK_NBYTES`], its lazy
//! chunk decoded through the frame, a few items by `getitem`), the metalayers and vlmetalayers.
//! Then a short script of mutations (append, insert, update, delete) runs on the open handle.
//!
//! Properties: nothing panics (errors are fine). Where the C and the Rust open both succeed
//! they see the same number of chunks and decode chunks to the same bytes; a lazy decode and a
//! `getitem` that succeed agree with the ordinary decode. A mutation that fails leaves the
//! handle and the directory (reopened) reading exactly as before; one that succeeds leaves a
//! directory that reopens and reads as the handle does, with the new chunk where it was put
//! and, when no two index entries share a chunk file, every other chunk decoding as before.
//!
//! Input, byte 0 even (raw pieces): byte 1 the number of pieces (at most 9), then each piece as
//! `u16 LE length | bytes`; piece 0 is the index file, piece k the chunk file of id k - 1. Byte 0
//! odd (edited base): byte 1 picks one of the valid sframes the check writes first ([`bases`]),
//! byte 2 the number of edits (at most 64), each `file, pos u16 LE, value` (file 0 the index,
//! then the chunk files in order; bit 7 of `file` truncates the file at `pos` instead of
//! writing `value`). The rest is the script: ops `op, idx, len, <len bytes>` (at most 4; op % 4:
//! append, insert, update, delete; bit 4 of op: the bytes are the chunk itself, otherwise they
//! are compressed with the super-chunk's parameters).
use b2frame::capi::schunk::{
    blosc2_schunk_decompress_chunk, blosc2_schunk_free, blosc2_schunk_open,
};
use b2frame::chunk::header::ChunkHeader;
use b2frame::chunk::{no_hooks, CParams, DParams, Decompressor};
use b2frame::schunk::{NewStorage, SChunk};
use std::path::{Path, PathBuf};

/// The largest chunk this check decodes (the directories fuzzed are a few KiB).
pub const MAX_CHUNK_NBYTES: i32 = 16 << 20;
/// Chunk files an input can make.
pub const MAX_CHUNK_FILES: usize = 8;
/// Chunks read (a hostile index can claim millions of special chunks).
const MAX_READ: i64 = 64;

/// A directory as files: (name, bytes).
pub type Files = Vec<(String, Vec<u8>)>;

fn chunk_name(id: usize) -> String {
    format!("{id:08X}.chunk")
}

/// A scratch directory per process and thread (the tests run checks on several threads).
fn scratch_dir() -> PathBuf {
    let t = std::thread::current().id();
    std::env::temp_dir().join(format!("b2f-fuzz-sframe-{}-{t:?}", std::process::id()))
}

fn sample(n: usize, k: u32) -> Vec<u8> {
    (0..n as u32)
        .flat_map(|i| (i / 3 + k).to_le_bytes())
        .take(n)
        .collect()
}

/// The directory's files, index first, chunk files sorted by name.
pub fn read_dir_files(dir: &Path) -> Files {
    let mut chunks: Files = std::fs::read_dir(dir)
        .expect("read sframe dir")
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            name.ends_with(".chunk")
                .then(|| (name, std::fs::read(e.path()).expect("read chunk file")))
        })
        .collect();
    chunks.sort();
    let index = std::fs::read(dir.join("chunks.b2frame")).expect("read index");
    let mut out = vec![("chunks.b2frame".to_string(), index)];
    out.extend(chunks);
    out
}

/// Valid sframes b2frame writes, as files: several chunks with meta- and vlmetalayers; variable
/// chunk sizes and a special chunk; deleted, inserted and updated chunks (file ids out of
/// order); an empty one with a metalayer.
pub fn bases() -> &'static [Files] {
    static B: std::sync::OnceLock<Vec<Files>> = std::sync::OnceLock::new();
    B.get_or_init(|| {
        let root = std::env::temp_dir().join(format!(
            "b2f-fuzz-sframe-bases-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("bases dir");
        let dp = DParams { nthreads: 1 };
        let mut out = Vec::new();
        for b in 0..4 {
            let dir = root.join(format!("b{b}"));
            let cp = CParams {
                typesize: [4, 8, 2, 1][b],
                compcode: [0, 5, 1, 4][b],
                clevel: 5,
                nthreads: 1,
                blocksize: [0, 1024, 512, 0][b],
                ..CParams::default()
            };
            let mut sc = SChunk::new(NewStorage::Sparse(&dir), cp, dp).expect("new sframe");
            match b {
                0 => {
                    sc.add_metalayer("m", b"meta").unwrap();
                    for k in 0..3 {
                        sc.append_buffer(&sample(4000, k)).unwrap();
                    }
                    sc.vlmeta_add("v", b"vlmeta content", None).unwrap();
                }
                1 => {
                    sc.append_buffer(&sample(4096, 1)).unwrap();
                    sc.append_buffer(&sample(1600, 2)).unwrap();
                    let z = b2frame::chunk::special::Special::Zeros
                        .chunk(800, &cp)
                        .unwrap();
                    sc.append_chunk(&z).unwrap();
                }
                2 => {
                    for k in 0..4 {
                        sc.append_buffer(&sample(2048, k)).unwrap();
                    }
                    sc.delete_chunk(1).unwrap();
                    let c = b2frame::chunk::compress_vec(&cp, &sample(2048, 9)).unwrap();
                    sc.insert_chunk(0, &c).unwrap();
                    sc.update_chunk(2, &c).unwrap();
                }
                _ => {
                    sc.add_metalayer("b2nd", &[0x90]).unwrap();
                }
            }
            drop(sc);
            out.push(read_dir_files(&dir));
        }
        let _ = std::fs::remove_dir_all(&root);
        out
    })
}

/// Splits the input into the directory's files and the mutation script.
pub fn parse(data: &[u8]) -> Option<(Files, &[u8])> {
    let (&mode, rest) = data.split_first()?;
    if mode & 1 == 0 {
        let (&n, mut rest) = rest.split_first()?;
        let mut files = Files::new();
        for k in 0..(n as usize % (MAX_CHUNK_FILES + 2)) {
            if rest.len() < 2 {
                break;
            }
            let len = (u16::from_le_bytes([rest[0], rest[1]]) as usize).min(rest.len() - 2);
            let (piece, r) = rest[2..].split_at(len);
            rest = r;
            let name = if k == 0 {
                "chunks.b2frame".to_string()
            } else {
                chunk_name(k - 1)
            };
            files.push((name, piece.to_vec()));
        }
        return Some((files, rest));
    }
    let (&pick, rest) = rest.split_first()?;
    let (&nedits, mut rest) = rest.split_first()?;
    let bases = bases();
    let mut files = bases[pick as usize % bases.len()].clone();
    for _ in 0..nedits.min(64) {
        if rest.len() < 4 {
            break;
        }
        let (sel, pos, val) = (rest[0], u16::from_le_bytes([rest[1], rest[2]]), rest[3]);
        rest = &rest[4..];
        let nfiles = files.len();
        let file = &mut files[(sel & 0x7f) as usize % nfiles].1;
        if sel & 0x80 != 0 {
            file.truncate(pos as usize % (file.len() + 1));
        } else if !file.is_empty() {
            let at = pos as usize % file.len();
            file[at] = val;
        }
    }
    Some((files, rest))
}

/// What reading chunk `i` gives: its stored bytes and its decoded bytes (`None` on error or
/// when it claims more than [`MAX_CHUNK_NBYTES`]).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Read {
    stored: Option<Vec<u8>>,
    decoded: Option<Vec<u8>>,
}

fn decode(sc: &SChunk, i: i64) -> Option<Vec<u8>> {
    let n = sc.chunk_nbytes(i).ok()?;
    if !(0..=MAX_CHUNK_NBYTES).contains(&n) {
        return None;
    }
    let mut out = vec![0u8; n as usize];
    let got = sc.decompress_chunk_into(i, &mut out).ok()?;
    assert!(
        got <= out.len(),
        "decompress_chunk_into claims more than the buffer"
    );
    out.truncate(got);
    Some(out)
}

fn read_all(sc: &SChunk) -> Vec<Read> {
    (0..sc.nchunks().min(MAX_READ))
        .map(|i| Read {
            stored: sc.chunk(i).ok().map(|c| c.into_owned()),
            decoded: decode(sc, i),
        })
        .collect()
}

/// Reads everything besides the chunks; lazy chunks and getitem checked against `reads`.
fn read_more(sc: &SChunk, reads: &[Read]) -> usize {
    let mut ok = 0;
    for (name, content) in sc.metalayers() {
        assert_eq!(sc.metalayer(name), Some(&content[..]));
    }
    let names: Vec<String> = sc.vlmetalayer_names().map(str::to_string).collect();
    for name in names {
        ok += sc.vlmetalayer(&name).is_ok() as usize;
    }
    let Some(f) = sc.frame() else {
        return ok;
    };
    let mut d = Decompressor::new(DParams { nthreads: 1 }, no_hooks()).expect("decompressor");
    let ts = sc.cparams().typesize;
    for (i, r) in reads.iter().enumerate() {
        let i = i as i64;
        let _ = f.chunk_info(i);
        if let Ok(Some(lazy)) = sc.lazy_chunk(i) {
            if let Ok(h) = ChunkHeader::read(&lazy, true) {
                if (0..=MAX_CHUNK_NBYTES).contains(&h.nbytes) {
                    let mut out = vec![0u8; h.nbytes as usize];
                    if let Ok(n) = d.with_source(f).decompress(&lazy, &mut out) {
                        ok += 1;
                        if let Some(want) = &r.decoded {
                            assert_eq!(&out[..n], &want[..], "lazy decode of chunk {i} differs");
                        }
                    }
                }
            }
        }
        if let (Some(want), Ok(ts)) = (&r.decoded, usize::try_from(ts)) {
            if ts == 0 {
                continue;
            }
            let items = want.len() / ts;
            for start in [0, items / 2, items.saturating_sub(2)] {
                let end = (start + 2).min(items);
                if let Ok(got) = sc.getitem(i, start..end) {
                    ok += 1;
                    assert_eq!(
                        got,
                        want[start * ts..end * ts],
                        "getitem of chunk {i} differs"
                    );
                }
            }
        }
    }
    ok
}

/// The C API's view: `blosc2_schunk_open` and every chunk decoded into a buffer sized from the
/// Rust side's nbytes; compared with `reads` where both open.
fn check_capi(dir: &Path, reads: Option<&[Read]>) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).expect("path without NUL");
    // SAFETY: a NUL-terminated path.
    let sc = unsafe { blosc2_schunk_open(c.as_ptr()) };
    if sc.is_null() {
        return;
    }
    // SAFETY: a live super-chunk from the call above.
    let nchunks = unsafe { (*sc).nchunks };
    if let Some(reads) = reads {
        let want = reads.len() as i64;
        assert!(
            nchunks >= want && (want == MAX_READ || nchunks == want),
            "C and Rust opens see {nchunks} and {want} chunks"
        );
        for (i, r) in reads.iter().enumerate() {
            let Some(want) = &r.decoded else { continue };
            let mut out = vec![0u8; want.len().max(1)];
            // SAFETY: live super-chunk; `out` is valid for its length.
            let n = unsafe {
                blosc2_schunk_decompress_chunk(
                    sc,
                    i as i64,
                    out.as_mut_ptr().cast(),
                    out.len() as i32,
                )
            };
            if n >= 0 {
                assert_eq!(
                    &out[..n as usize],
                    &want[..],
                    "C decode of chunk {i} differs"
                );
            }
        }
    }
    // SAFETY: live, freed once.
    unsafe { blosc2_schunk_free(sc) };
}

fn write_files(dir: &Path, files: &Files) -> bool {
    let _ = std::fs::remove_dir_all(dir);
    if std::fs::create_dir_all(dir).is_err() {
        return false;
    }
    files
        .iter()
        .all(|(name, bytes)| std::fs::write(dir.join(name), bytes).is_ok())
}

/// Runs one input; panics on a violated property. Returns 0 when the directory does not open,
/// else 1 plus how many reads and mutations succeeded.
pub fn run(data: &[u8]) -> usize {
    let Some((files, script)) = parse(data) else {
        return 0;
    };
    let dir = scratch_dir();
    if !write_files(&dir, &files) {
        return 0;
    }
    let ok = check(&dir, script);
    let _ = std::fs::remove_dir_all(&dir);
    ok
}

fn check(dir: &Path, mut script: &[u8]) -> usize {
    let Ok(mut sc) = SChunk::open(dir) else {
        check_capi(dir, None);
        return 0;
    };
    let mut reads = read_all(&sc);
    let mut ok = 1 + reads.iter().filter(|r| r.decoded.is_some()).count();
    ok += read_more(&sc, &reads);
    check_capi(dir, Some(&reads));
    for _ in 0..4 {
        if script.len() < 3 {
            break;
        }
        let (op, idx, len) = (script[0], script[1] as i64, script[2] as usize);
        script = &script[3..];
        let (bytes, rest) = script.split_at(len.min(script.len()));
        script = rest;
        let n = sc.nchunks();
        if n > MAX_READ {
            break;
        }
        let chunk = if op & 0x10 != 0 {
            bytes.to_vec()
        } else {
            let cp = CParams {
                nthreads: 1,
                ..*sc.cparams()
            };
            match b2frame::chunk::compress_vec(&cp, bytes) {
                Ok(c) => c,
                Err(_) => continue,
            }
        };
        let shared = sc.frame().is_some_and(|f| {
            let mut ids: Vec<u64> = f.locs().view().stored().collect();
            ids.sort_unstable();
            ids.windows(2).any(|w| w[0] == w[1])
        });
        // (result, where the new chunk is, which old chunk each new position holds)
        let (r, at, map): (_, Option<i64>, Vec<Option<usize>>) = match op % 4 {
            0 => (
                sc.append_chunk(&chunk).map(|_| ()),
                Some(n),
                (0..n as usize).map(Some).chain([None]).collect(),
            ),
            1 => {
                let i = idx % (n + 1);
                let map = (0..=n as usize)
                    .map(|j| match j.cmp(&(i as usize)) {
                        std::cmp::Ordering::Less => Some(j),
                        std::cmp::Ordering::Equal => None,
                        std::cmp::Ordering::Greater => Some(j - 1),
                    })
                    .collect();
                (sc.insert_chunk(i, &chunk).map(|_| ()), Some(i), map)
            }
            2 => {
                let i = idx % n.max(1);
                let map = (0..n as usize)
                    .map(|j| (j != i as usize).then_some(j))
                    .collect();
                (sc.update_chunk(i, &chunk).map(|_| ()), Some(i), map)
            }
            _ => {
                let i = idx % n.max(1);
                let map = (0..n as usize)
                    .filter(|&j| j != i as usize)
                    .map(Some)
                    .collect();
                (sc.delete_chunk(i).map(|_| ()), None, map)
            }
        };
        if r.is_err() {
            let op = op % 4;
            assert_eq!(
                sc.nchunks(),
                n,
                "a failed mutation (op {op}) changed nchunks"
            );
            assert_eq!(
                read_all(&sc),
                reads,
                "a failed mutation (op {op}) changed the handle"
            );
            let again = SChunk::open(dir).expect("reopen after a failed mutation");
            assert_eq!(
                again.nchunks(),
                n,
                "a failed mutation changed the directory's nchunks"
            );
            assert_eq!(
                read_all(&again),
                reads,
                "a failed mutation (op {op}) changed the directory"
            );
            continue;
        }
        let now = read_all(&sc);
        assert_eq!(
            now.len(),
            map.len().min(MAX_READ as usize),
            "nchunks after op {}",
            op % 4
        );
        let again = SChunk::open(dir).expect("reopen after a successful mutation");
        assert_eq!(again.nchunks(), sc.nchunks());
        assert_eq!(
            read_all(&again),
            now,
            "the reopened directory reads differently"
        );
        if let Some(at) = at {
            let h = ChunkHeader::read(&chunk, true).ok();
            let want = h
                .as_ref()
                .filter(|h| (0..=MAX_CHUNK_NBYTES).contains(&h.nbytes))
                .and_then(|_| b2frame::chunk::decompress_vec(&chunk).ok());
            // A special chunk reads back as its own bytes: the frame keeps it as an index
            // entry only where the frame's typesize gives the same bytes (a NaN chunk of other
            // items is stored as its regular equivalent).
            if let (Some(want), Some(got)) = (want, now.get(at as usize)) {
                assert_eq!(
                    got.decoded.as_ref(),
                    Some(&want),
                    "the new chunk {at} (op {}) does not read back",
                    op % 4
                );
            }
        }
        if !shared {
            for (j, old) in map.iter().enumerate().take(now.len()) {
                if let Some(old) = old.and_then(|o| reads.get(o)) {
                    if old.decoded.is_some() {
                        assert_eq!(
                            now[j].decoded,
                            old.decoded,
                            "chunk {j} changed by op {}",
                            op % 4
                        );
                    }
                }
            }
        }
        ok += 1;
        reads = now;
    }
    ok
}
