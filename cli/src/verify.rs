//! `verify`: open the frame (which validates header, trailer and the whole offsets index),
//! then read and decompress every chunk and cross-check every size the frame records. Every
//! problem is reported with where it is; the exit status is 0 only for a sound frame.

use crate::{emit, info::special_offset_name, open, progress::Progress, CliResult, Failure};
use blosc2_frame::chunk::header::ChunkHeader;
use blosc2_frame::chunk::plugins::env_hooks;
use blosc2_frame::chunk::{DParams, Decompressor, SchunkEnv};
use blosc2_frame::frame::header::FrameType;
use blosc2_frame::frame::offsets::Loc;
use blosc2_frame::frame::{Backing, Frame};
use std::path::Path;
use std::process::ExitCode;

/// Most problems listed before the rest are only counted.
const MAX_LISTED: usize = 50;

struct Report {
    problems: Vec<String>,
    count: usize,
}

impl Report {
    fn push(&mut self, p: String) {
        self.count += 1;
        if self.problems.len() < MAX_LISTED {
            self.problems.push(p);
        }
    }
}

fn where_of(f: &Frame, i: i64) -> String {
    let Some(loc) = f.locs().get(i as usize) else {
        return format!("chunk {i}");
    };
    match loc.get() {
        Loc::Special(k) => format!("chunk {i} (special offset {})", special_offset_name(k)),
        Loc::Stored(v) => match f.backing() {
            Backing::Sparse(_) => format!("chunk {i} (file {v:08X}.chunk)"),
            Backing::Contiguous(_) => {
                format!(
                    "chunk {i} (at byte {} of the frame)",
                    u64::from(f.header().header_len) + v
                )
            }
        },
    }
}

/// Checks chunk `i`; returns its (nbytes, stored cbytes, stored extent) when it reads.
/// Why stored chunk `i` cannot be read: the bytes it occupies against what its header claims.
fn unreadable_detail(f: &Frame, src: (&Path, u64), i: i64) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let v = f.locs().get(i as usize)?.stored()?;
    let (file, at, room, what) = match f.backing() {
        Backing::Sparse(dir) => {
            let p = dir.path().join(format!("{v:08X}.chunk"));
            let size = match std::fs::metadata(&p) {
                Ok(m) => m.len(),
                Err(e) => return Some(format!("the chunk file: {e}")),
            };
            (p, 0, size, format!("the file has {size} bytes"))
        }
        Backing::Contiguous(_) => {
            let h = f.header();
            let room = (h.cbytes as u64).saturating_sub(v);
            let at = src.1 + u64::from(h.header_len) + v;
            let what = format!(
                "{room} bytes are left in the data section (cbytes {})",
                h.cbytes
            );
            (src.0.to_path_buf(), at, room, what)
        }
    };
    let mut head = [0u8; 16];
    let mut fh = std::fs::File::open(file).ok()?;
    fh.seek(SeekFrom::Start(at)).ok()?;
    if room < 16 || fh.read_exact(&mut head).is_err() {
        return Some(format!("{what}, too few for a chunk header"));
    }
    let cbytes = i32::from_le_bytes([head[12], head[13], head[14], head[15]]);
    Some(format!("its header says cbytes {cbytes}, {what}"))
}

fn check_chunk(
    f: &Frame,
    src: (&Path, u64),
    i: i64,
    rep: &mut Report,
) -> Option<(i64, Option<(u64, u64)>)> {
    let w = where_of(f, i);
    let chunk = match f.chunk(i) {
        Ok(c) => c,
        Err(e) => {
            match unreadable_detail(f, src, i) {
                Some(d) => rep.push(format!("{w}: cannot read: {e}: {d}")),
                None => rep.push(format!("{w}: cannot read: {e}")),
            }
            return None;
        }
    };
    let h = match ChunkHeader::parse(&chunk) {
        Ok(h) => h,
        Err(e) => {
            rep.push(format!("{w}: bad chunk header: {e}"));
            return None;
        }
    };
    if h.special().is_none() {
        rep.push(format!("{w}: invalid special code {}", h.special_code()));
    }
    match decode(&chunk, &h, &plugin_env(f)) {
        Ok(n) if n != i64::from(h.nbytes) => rep.push(format!(
            "{w}: decompressed to {n} bytes, header says {}",
            h.nbytes
        )),
        Ok(_) => {}
        Err(why) => rep.push(format!("{w}: {why}")),
    }
    let hd = f.header();
    // A frame holds VL-block chunks only or regular chunks only; the flag mirrors chunk 0.
    if h.special_code() == 0 && h.is_vl() != hd.vl_blocks {
        rep.push(if h.is_vl() {
            format!("{w}: is a VL-block chunk but the frame header's VL-blocks flag (byte 25 bit 7) is clear")
        } else {
            format!("{w}: is a regular chunk but the frame header's VL-blocks flag (byte 25 bit 7) is set")
        });
    }
    let last = i == f.nchunks() - 1;
    if hd.chunksize > 0 && !h.is_vl() {
        let cs = i64::from(hd.chunksize);
        let n = i64::from(h.nbytes);
        if (!last && n != cs) || (last && n > cs) {
            rep.push(format!("{w}: nbytes {n} but the frame's chunksize is {cs}"));
        }
    }
    if i64::from(h.typesize) != i64::from(hd.typesize)
        && hd.typesize <= 255
        && h.special_code() == 0
    {
        rep.push(format!(
            "{w}: typesize {} differs from the frame's {}",
            h.typesize, hd.typesize
        ));
    }
    let extent = f
        .locs()
        .get(i as usize)
        .and_then(|l| l.stored())
        .map(|v| (v, h.cbytes as u64));
    Some((i64::from(h.nbytes), extent))
}

/// What the plugin codecs and filters (ZFP, NDCELL, ...) read from the super-chunk: the frame's
/// typesize and `b2nd` metalayer.
pub(crate) fn plugin_env(f: &Frame) -> SchunkEnv {
    SchunkEnv {
        typesize: Some(f.header().typesize),
        b2nd: f
            .metalayers()
            .iter()
            .find(|(n, _)| n == "b2nd")
            .map(|(_, c)| c.clone()),
    }
}

/// Decompresses a chunk; returns its decompressed size, or which block fails and why.
fn decode(chunk: &[u8], h: &ChunkHeader, env: &SchunkEnv) -> Result<i64, String> {
    let mut d =
        Decompressor::new(DParams::default(), env_hooks(env.clone())).map_err(|e| e.to_string())?;
    if h.is_vl() {
        return match d.vldecompress(chunk) {
            Ok(blocks) => Ok(blocks.iter().map(|b| b.len() as i64).sum()),
            Err(e) => Err(locate(chunk, h, &mut d, e)),
        };
    }
    let mut out = vec![0u8; h.nbytes.max(0) as usize];
    match d.decompress(chunk, &mut out) {
        Ok(n) => Ok(n as i64),
        Err(e) => Err(locate(chunk, h, &mut d, e)),
    }
}

/// After a whole-chunk failure: the first block that does not decode, as "block j of n".
fn locate(
    chunk: &[u8],
    h: &ChunkHeader,
    d: &mut Decompressor,
    whole: blosc2_frame::Error,
) -> String {
    let (nblocks, kind) = if h.is_vl() {
        (h.blocksize, "VL block")
    } else {
        (h.nblocks(), "block")
    };
    let mut buf = vec![0u8; h.blocksize.max(0) as usize];
    for j in 0..nblocks.max(0) {
        let r = if h.is_vl() {
            d.vldecompress_block(chunk, j).map(|_| ())
        } else {
            d.decompress_block(chunk, j, &mut buf).map(|_| ())
        };
        if let Err(e) = r {
            return format!("decompression failed in {kind} {j} of {nblocks}: {e}");
        }
    }
    format!("decompression failed: {whole}")
}

/// The b2nd metalayer against the frame: every chunk holds a whole (padded) chunkshape, and
/// the shape needs exactly the frame's number of chunks.
fn check_b2nd(f: &Frame, name: &str, content: &[u8], rep: &mut Report) {
    let m = match blosc2_frame::b2nd_meta::deserialize(content, name == "b2nd") {
        Ok((m, _)) => m,
        Err(_) => {
            rep.push(format!("metalayer {name:?}: malformed b2nd content"));
            return;
        }
    };
    let ndim = m.ndim();
    if ndim == 0 || m.chunkshape.len() != ndim || m.shape.iter().any(|&s| s < 0) {
        return;
    }
    if m.chunkshape.iter().any(|&c| c < 0) {
        rep.push(format!(
            "metalayer {name:?}: chunkshape {:?} has a negative extent",
            m.chunkshape
        ));
        return;
    }
    if m.chunkshape.contains(&0) {
        // An empty array (some extent 0) has nothing to cross-check.
        return;
    }
    let h = f.header();
    // A chunk holds the chunkshape padded up to whole blocks in every dimension.
    let ext: Vec<i64> = m
        .chunkshape
        .iter()
        .zip(m.blockshape.iter().chain(std::iter::repeat(&0)))
        .map(|(&c, &b)| {
            let (c, b) = (i64::from(c), i64::from(b));
            if b > 0 {
                (c + b - 1) / b * b
            } else {
                c
            }
        })
        .collect();
    let want = ext
        .iter()
        .fold(i64::from(h.typesize), |a, &e| a.saturating_mul(e));
    if h.chunksize > 0 && want != i64::from(h.chunksize) {
        rep.push(format!(
            "metalayer {name:?}: chunkshape {:?} padded to blockshape {:?} x typesize {} = {want} bytes, but the frame's chunksize is {}",
            m.chunkshape, m.blockshape, h.typesize, h.chunksize
        ));
    }
    let nchunks = m
        .shape
        .iter()
        .zip(&m.chunkshape)
        .map(|(&s, &c)| (s + i64::from(c) - 1) / i64::from(c))
        .fold(1i64, |a, b| a.saturating_mul(b));
    if nchunks != f.nchunks() {
        rep.push(format!(
            "metalayer {name:?}: shape {:?} in chunks of {:?} needs {nchunks} chunks, the frame has {}",
            m.shape,
            m.chunkshape,
            f.nchunks()
        ));
    }
}

fn check(f: &Frame, src: (&Path, u64), rep: &mut Report) {
    let h = f.header();
    let n = f.nchunks();
    let mut bar = Progress::new("verify", n);
    let mut nbytes = 0i64;
    let mut extents = Vec::new();
    for i in 0..n {
        if let Some((nb, ext)) = check_chunk(f, src, i, rep) {
            nbytes += nb;
            extents.extend(ext);
        }
        bar.tick();
    }
    if rep.count == 0 && nbytes != h.nbytes {
        rep.push(format!(
            "header: nbytes {} but the chunks hold {nbytes}",
            h.nbytes
        ));
    }
    let stored: i64 = extents.iter().map(|e| e.1 as i64).sum();
    match f.backing() {
        Backing::Contiguous(_) => {
            if stored > h.cbytes {
                rep.push(format!(
                    "header: cbytes {} is smaller than the stored chunks ({stored})",
                    h.cbytes
                ));
            }
            extents.sort_unstable();
            for w in extents.windows(2) {
                if w[0].0 + w[0].1 > w[1].0 {
                    rep.push(format!(
                        "data section: chunks at offsets {} ({} bytes) and {} overlap",
                        w[0].0, w[0].1, w[1].0
                    ));
                }
            }
        }
        Backing::Sparse(_) => {
            if h.frame_type != FrameType::Sparse {
                rep.push("index: frame_type is not sparse".into());
            }
            if stored != h.cbytes {
                rep.push(format!(
                    "index: cbytes {} but the chunk files hold {stored}",
                    h.cbytes
                ));
            }
        }
    }
    for (name, content) in f.metalayers() {
        if name == "b2nd" || name == "caterva" {
            check_b2nd(f, name, content, rep);
        }
    }
    for (name, _) in f.vlmetalayers() {
        if let Err(e) = f.vlmetalayer(name) {
            rep.push(format!("vlmetalayer {name:?}: cannot decompress: {e}"));
        }
    } // The fingerprint names the part that changed (the checks above say what a change broke,
      // where they can).
    match f.verify_fingerprint() {
        Ok(v) if v.is_sound() => {}
        Ok(v) => rep.push(format!("fingerprint: {}", v.describe())),
        Err(e) => rep.push(format!("fingerprint: cannot check: {e}")),
    }
}

pub fn verify(path: &Path, offset: u64) -> CliResult<ExitCode> {
    let f = match open(path, offset) {
        Ok(f) => f,
        Err(e) => {
            // A frame header that parses while the frame does not open: a write was cut short.
            let torn = !path.is_dir()
                && std::fs::read(path).ok().is_some_and(|b| {
                    let from = usize::try_from(offset).unwrap_or(usize::MAX);
                    b.get(from..).is_some_and(|b| {
                        b.len() > 87 && &b[2..10] == b"b2frame\0" && {
                            let hl = u32::from_be_bytes([b[11], b[12], b[13], b[14]]) as usize;
                            b.get(..hl).is_some_and(|h| {
                                blosc2_frame::frame::header::FrameHeader::parse(h).is_ok()
                            })
                        }
                    })
                });
            let hint = if torn {
                format!(
                    "; the header is intact, so the frame looks torn (a write cut short): try \
                     `b2frame recover {} NEW_FILE`",
                    path.display()
                )
            } else {
                String::new()
            };
            return Err(Failure::new(path, format!("not sound: {}{hint}", e.reason)));
        }
    };
    let mut rep = Report {
        problems: Vec::new(),
        count: 0,
    };
    check(&f, (path, offset), &mut rep);
    if rep.count == 0 {
        let fp = match f.fingerprint_slot() {
            Ok(s) if s.fpt == 1 => ", crc32 fingerprint matches",
            _ => ", no fingerprint",
        };
        emit(&format!(
            "{}: ok ({} chunks, {} bytes, {} compressed{fp})\n",
            path.display(),
            f.nchunks(),
            f.header().nbytes,
            f.header().cbytes
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    for p in &rep.problems {
        eprintln!("b2frame: {}: {p}", path.display());
    }
    if rep.count > rep.problems.len() {
        eprintln!(
            "b2frame: {}: ... and {} more problems",
            path.display(),
            rep.count - rep.problems.len()
        );
    }
    eprintln!(
        "b2frame: {}: not sound: {} problem(s)",
        path.display(),
        rep.count
    );
    Ok(ExitCode::FAILURE)
}
