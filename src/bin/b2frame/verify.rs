//! `verify`: open the frame (which validates header, trailer and the whole offsets index),
//! then read and decompress every chunk and cross-check every size the frame records. Every
//! problem is reported with where it is; the exit status is 0 only for a sound frame.

use crate::{info::special_offset_name, open, progress::Progress, CliResult, Failure};
use b2frame::chunk::header::ChunkHeader;
use b2frame::frame::header::{peek_lengths, FrameType};
use b2frame::frame::offsets::ChunkLoc;
use b2frame::frame::{Backing, Frame};
use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

/// Most problems listed before the rest are only counted.
const MAX_LISTED: usize = 50;

/// Why a frame could not even be opened, as precisely as the first bytes tell.
pub fn diagnose_open(path: &Path, offset: u64) -> Option<String> {
    let index = if path.is_dir() {
        path.join("chunks.b2frame")
    } else {
        path.to_path_buf()
    };
    // Name the index file only when it is not the path the user gave.
    let shown = if path.is_dir() {
        format!("{}: ", index.display())
    } else {
        String::new()
    };
    let mut file = std::fs::File::open(&index).ok()?;
    let size = file.metadata().ok()?.len();
    if size < offset {
        return Some(format!(
            "offset {offset} is past the end of the file ({size} bytes)"
        ));
    }
    let mut fixed = [0u8; 87];
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(offset)).ok()?;
    let n = file.read(&mut fixed).ok()?;
    if n < 87 {
        return Some(format!(
            "{shown}only {n} bytes at offset {offset}, a frame header needs 87"
        ));
    }
    if &fixed[2..10] != b"b2frame\0" {
        return Some(format!(
            "{shown}no \"b2frame\" magic at byte {} (is the frame inside a larger file? try --offset)",
            offset + 2
        ));
    }
    match peek_lengths(&fixed) {
        Err(_) => Some(format!(
            "{shown}header_len/frame_len fields (bytes 11-23) are inconsistent"
        )),
        Ok((_, frame_len)) if frame_len > size - offset => Some(format!(
            "{shown}truncated: frame_len says {frame_len} bytes, the file has {} after offset {offset}",
            size - offset
        )),
        Ok((_, frame_len)) => diagnose_fields(&fixed, &mut file, offset, frame_len)
            .map(|why| format!("{shown}{why}")),
    }
}

/// Header fields and the trailer marker that make a frame unreadable, with their positions.
fn diagnose_fields(
    fixed: &[u8; 87],
    file: &mut std::fs::File,
    offset: u64,
    frame_len: u64,
) -> Option<String> {
    let version = fixed[25] & 0x0f;
    if version > 3 {
        return Some(format!(
            "frame format version {version} (byte 25) is newer than 3"
        ));
    }
    let typesize = i32::from_be_bytes([fixed[48], fixed[49], fixed[50], fixed[51]]);
    if typesize <= 0 {
        return Some(format!(
            "typesize {typesize} (bytes 48-51) must be positive"
        ));
    }
    if fixed[70] > 6 {
        return Some(format!("{} filters (byte 70), at most 6", fixed[70]));
    }
    let mut marker = [0u8; 1];
    std::io::Seek::seek(
        file,
        std::io::SeekFrom::Start(offset + frame_len.checked_sub(23)?),
    )
    .ok()?;
    file.read_exact(&mut marker).ok()?;
    if marker[0] != 0xCE {
        return Some(format!(
            "no trailer-length marker 0xCE at byte {} (frame_len - 23)",
            frame_len - 23
        ));
    }
    None
}

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
    match f.locs()[i as usize] {
        ChunkLoc::Special(k) => format!("chunk {i} (special offset {})", special_offset_name(k)),
        ChunkLoc::Stored(v) => match f.backing() {
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
fn check_chunk(f: &Frame, i: i64, rep: &mut Report) -> Option<(i64, Option<(u64, u64)>)> {
    let w = where_of(f, i);
    let chunk = match f.chunk(i) {
        Ok(c) => c,
        Err(e) => {
            rep.push(format!("{w}: cannot read: {e}"));
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
    match f.decompress_chunk(i) {
        Ok(d) if d.len() as i64 != i64::from(h.nbytes) => rep.push(format!(
            "{w}: decompressed to {} bytes, header says {}",
            d.len(),
            h.nbytes
        )),
        Ok(_) => {}
        Err(e) => rep.push(format!("{w}: decompression failed: {e}")),
    }
    let hd = f.header();
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
    let extent = match f.locs()[i as usize] {
        ChunkLoc::Stored(v) => Some((v, h.cbytes as u64)),
        ChunkLoc::Special(_) => None,
    };
    Some((i64::from(h.nbytes), extent))
}

fn check(f: &Frame, rep: &mut Report) {
    let h = f.header();
    let n = f.nchunks();
    let mut bar = Progress::new("verify", n);
    let mut nbytes = 0i64;
    let mut extents = Vec::new();
    for i in 0..n {
        if let Some((nb, ext)) = check_chunk(f, i, rep) {
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
        if (name == "b2nd" || name == "caterva")
            && b2frame::b2nd_meta::deserialize(content, name == "b2nd").is_err()
        {
            rep.push(format!("metalayer {name:?}: malformed b2nd content"));
        }
    }
    for (name, _) in f.vlmetalayers() {
        if let Err(e) = f.vlmetalayer(name) {
            rep.push(format!("vlmetalayer {name:?}: cannot decompress: {e}"));
        }
    }
}

pub fn verify(path: &Path, offset: u64) -> CliResult<ExitCode> {
    let f = match open(path, offset) {
        Ok(f) => f,
        Err(e) => return Err(Failure::new(path, format!("not sound: {}", e.reason))),
    };
    let mut rep = Report {
        problems: Vec::new(),
        count: 0,
    };
    check(&f, &mut rep);
    if rep.count == 0 {
        println!(
            "{}: ok ({} chunks, {} bytes, {} compressed)",
            path.display(),
            f.nchunks(),
            f.header().nbytes,
            f.header().cbytes
        );
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
