//! Why a frame cannot be opened, said with the byte positions involved: the library's open
//! only returns an error code, so on failure the same structure is walked again here, step by
//! step, naming the first thing that is wrong and where it is.

use blosc2_frame::frame::chunkinfo::{ChunkInfo, EXTENDED_HEADER_LEN};
use blosc2_frame::frame::header::{peek_lengths, FrameHeader, FrameType, TRAILER_MINLEN};
use blosc2_frame::frame::offsets;
use blosc2_frame::frame::trailer;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The offsets index is read for diagnosis only up to this size.
const MAX_INDEX_READ: u64 = 64 << 20;

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
    let mut file = match File::open(&index) {
        Ok(f) => f,
        Err(e) if path.is_dir() => {
            return Some(format!("not an sframe directory: {}: {e}", index.display()))
        }
        Err(e) => return Some(e.to_string()),
    };
    let size = file.metadata().ok()?.len();
    if size < offset {
        return Some(format!(
            "offset {offset} is past the end of the file ({size} bytes)"
        ));
    }
    let mut fixed = [0u8; 87];
    file.seek(SeekFrom::Start(offset)).ok()?;
    let n = file.read(&mut fixed).ok()?;
    if n < 87 {
        return Some(format!(
            "{shown}only {n} bytes at offset {offset}, a frame header needs 87"
        ));
    }
    if &fixed[2..10] != b"b2frame\0" {
        let hint = match find_frame_start(&index, offset) {
            Some(at) => format!("a frame seems to start at byte {at}: try --offset {at}"),
            None => "is the frame inside a larger file? try --offset".into(),
        };
        return Some(format!(
            "{shown}no \"b2frame\" magic at byte {} ({hint})",
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
        Ok((header_len, frame_len)) => diagnose_fields(&fixed, &mut file, offset, frame_len)
            .or_else(|| {
                let at = Frame {
                    file: &mut file,
                    offset,
                    header_len,
                    frame_len,
                    sparse: path.is_dir(),
                };
                diagnose_structure(at, &fixed)
            })
            .map(|why| format!("{shown}{why}")),
    }
}

/// Where the first frame header after `offset` begins (fixarray, fixstr(8), magic), searching
/// the first MiB.
fn find_frame_start(path: &Path, offset: u64) -> Option<u64> {
    const START: &[u8] = b"\x9e\xa8b2frame\0";
    let mut file = File::open(path).ok()?;
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut buf = Vec::new();
    file.take(1 << 20).read_to_end(&mut buf).ok()?;
    buf.windows(START.len())
        .position(|w| w == START)
        .map(|p| offset + p as u64)
}

/// Header fields and the trailer marker that make a frame unreadable, with their positions.
fn diagnose_fields(
    fixed: &[u8; 87],
    file: &mut File,
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
    file.seek(SeekFrom::Start(offset + frame_len.checked_sub(23)?))
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

/// The frame being diagnosed: where it is and its two lengths.
struct Frame<'a> {
    file: &'a mut File,
    offset: u64,
    header_len: u32,
    frame_len: u64,
    /// An sframe's index file (the offsets index follows the header; no data section).
    sparse: bool,
}

impl Frame<'_> {
    /// `len` bytes at frame position `pos`.
    fn read(&mut self, pos: u64, len: u64) -> Option<Vec<u8>> {
        self.file.seek(SeekFrom::Start(self.offset + pos)).ok()?;
        let mut buf = vec![0u8; usize::try_from(len).ok()?];
        self.file.read_exact(&mut buf).ok()?;
        Some(buf)
    }
}

/// Header, trailer and offsets index, in the order the library reads them.
fn diagnose_structure(mut f: Frame<'_>, fixed: &[u8; 87]) -> Option<String> {
    let be64 = |at: usize| i64::from_be_bytes(fixed[at..at + 8].try_into().unwrap_or([0; 8]));
    let (nbytes, cbytes) = (be64(30), be64(39));
    let chunksize = i32::from_be_bytes([fixed[58], fixed[59], fixed[60], fixed[61]]);
    if nbytes < 0 || cbytes < 0 {
        return Some(format!(
            "nbytes {nbytes} (bytes 30-37) and cbytes {cbytes} (bytes 39-46) must not be negative"
        ));
    }
    if nbytes > 0 && chunksize < 0 {
        return Some(format!(
            "chunksize {chunksize} (bytes 58-61) says no chunk was added, but nbytes (bytes 30-37) is {nbytes}"
        ));
    }
    let hbuf = f.read(0, u64::from(f.header_len))?;
    let h = match FrameHeader::parse(&hbuf) {
        Ok(h) => h,
        Err(e) => {
            return Some(format!(
                "the header (bytes 0-{}, with its metalayers) does not parse: {e}",
                f.header_len - 1
            ))
        }
    };
    let expect = if f.sparse {
        FrameType::Sparse
    } else {
        FrameType::Contiguous
    };
    if h.frame_type != expect {
        return Some(if f.sparse {
            "frame_type (byte 26) says contiguous, but this is an sframe index".into()
        } else {
            "frame_type (byte 26) says sparse, but this is a cframe file".into()
        });
    }
    let window = f.read(f.frame_len - TRAILER_MINLEN as u64, TRAILER_MINLEN as u64)?;
    let tlen = match trailer::trailer_len_from_window(&window, f.frame_len) {
        Ok(l) => u64::from(l),
        Err(_) => {
            let raw = &window[window.len() - 22..window.len() - 18];
            return Some(format!(
                "trailer length {} (bytes {}-{}) is impossible for a {}-byte frame",
                u32::from_be_bytes(raw.try_into().unwrap_or([0; 4])),
                f.frame_len - 22,
                f.frame_len - 19,
                f.frame_len
            ));
        }
    };
    let tstart = f.frame_len - tlen;
    if tstart < u64::from(f.header_len) {
        return Some(format!(
            "the trailer ({tlen} bytes from byte {tstart}) overlaps the header ({} bytes)",
            f.header_len
        ));
    }
    let tbuf = f.read(tstart, tlen)?;
    if let Err(e) = trailer::parse(&tbuf) {
        return Some(format!(
            "the trailer at byte {tstart} (its vlmetalayers) does not parse: {e}"
        ));
    }
    let index_pos = if f.sparse {
        u64::from(f.header_len)
    } else {
        u64::from(f.header_len) + cbytes as u64
    };
    if index_pos > tstart {
        return Some(format!(
            "cbytes {cbytes} (bytes 39-46) puts the offsets index at byte {index_pos}, past the trailer at byte {tstart}"
        ));
    }
    let fixed_n = h.fixed_nchunks().ok()?;
    if fixed_n == Some(0) || tstart - index_pos > MAX_INDEX_READ {
        return None;
    }
    let region = f.read(index_pos, tstart - index_pos)?;
    let whose = if f.sparse {
        format!("after the {}-byte header", f.header_len)
    } else {
        format!(
            "header_len {} + cbytes {cbytes} (bytes 39-46)",
            f.header_len
        )
    };
    let info = match ChunkInfo::parse(&region) {
        Ok(i) => i,
        Err(e) => {
            return Some(format!(
                "no offsets-index chunk at byte {index_pos} ({whose}): {e}"
            ))
        }
    };
    let count_msg = |have: i64, n: i64| {
        format!(
            "the offsets index at byte {index_pos} ({whose}) has {have} entries, but nbytes {nbytes} (bytes 30-37) in chunks of {chunksize} (bytes 58-61) makes {n} chunks"
        )
    };
    if let Some(n) = fixed_n {
        if info.nbytes % 8 != 0 || i64::from(info.nbytes / 8) != n {
            return Some(count_msg(i64::from(info.nbytes) / 8, n));
        }
    }
    let raw = match offsets::decompress_index(&region) {
        Ok(r) => r,
        Err(e) => {
            return Some(format!(
                "the offsets index at byte {index_pos} does not decompress: {e}"
            ))
        }
    };
    let locs = match offsets::decode_entries(&raw) {
        Ok(l) => l,
        Err(e) => {
            return Some(format!(
                "the offsets index at byte {index_pos} holds an invalid entry: {e}"
            ))
        }
    };
    if let Some(n) = fixed_n {
        if locs.len() as i64 != n {
            return Some(count_msg(locs.len() as i64, n));
        }
    }
    if !f.sparse {
        let limit = (cbytes as u64).saturating_sub(EXTENDED_HEADER_LEN as u64);
        for (i, l) in locs.iter().enumerate() {
            if let Some(v) = l.stored() {
                if v > limit || (cbytes as u64) < EXTENDED_HEADER_LEN as u64 {
                    return Some(format!(
                        "offsets index entry {i} (at byte {index_pos}) puts chunk {i} at data offset {v}, past the {cbytes}-byte data section (cbytes, bytes 39-46)"
                    ));
                }
            }
        }
    }
    None
}
