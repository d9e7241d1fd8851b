//! Salvaging a cframe that does not open (a crash tore it, e.g. one c-blosc2 was writing):
//! the last consistent state still on disk if there is one, else a frame rebuilt from the chunks
//! that are intact (chunk headers are self-describing), keeping the metalayers of the header and
//! the vlmetalayers of the last readable trailer (docs/durability.md).

use super::chunkinfo::ChunkInfo;
use super::header::{self, FrameHeader, TRAILER_MINLEN};
use super::{trailer, Frame, Target};
use crate::error::{Error, Result};
use std::path::Path;

/// How a frame was salvaged.
#[derive(Debug, PartialEq, Eq)]
pub enum Method {
    /// It opens as it is.
    Intact,
    /// An earlier consistent state found on disk (its `frame_len`).
    Earlier(u64),
    /// Rebuilt from the intact chunks found in the data section (an sframe: from its chunk
    /// files, in id order).
    Rebuilt,
    /// An sframe whose index file is torn but whose offsets index still decodes and names
    /// intact chunk files: that index is kept (the order of the chunks with it), the header's
    /// counters and the trailer rebuilt.
    IndexKept,
}

/// A salvaged frame.
#[derive(Debug)]
pub struct Recovery {
    /// The salvaged frame, as cframe bytes.
    pub cframe: Vec<u8>,
    /// How.
    pub method: Method,
    /// What could not be kept, and other remarks, one line each.
    pub notes: Vec<String>,
}

/// Where trailers of a frame whose header is `hl` bytes long may end in `b`, last first: a
/// `trailer_len` marker 23 bytes before the end, a fingerprint marker 18 bytes before, and a
/// trailer that parses.
fn trailer_ends(b: &[u8], hl: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    (hl + TRAILER_MINLEN..=b.len()).rev().filter_map(move |e| {
        if b[e - 23] != 0xCE || b[e - 18] != 0xD8 {
            return None;
        }
        let tl = u32::from_be_bytes(b[e - 22..e - 18].try_into().ok()?) as usize;
        if tl < TRAILER_MINLEN || tl > e - hl {
            return None;
        }
        trailer::parse(&b[e - tl..e]).ok()?;
        Some((e, tl))
    })
}

/// The frame `b` with the header counters `cbytes`, `nbytes` and `frame_len` replaced.
fn patched(b: &[u8], h: &FrameHeader, cbytes: u64, nbytes: i64, frame_len: u64) -> Result<Vec<u8>> {
    let mut h = h.clone();
    h.cbytes = cbytes as i64;
    h.nbytes = nbytes;
    h.frame_len = frame_len;
    let hb = h.to_bytes()?;
    if hb.len() != h.header_len as usize {
        return Err(Error::InvalidHeader);
    }
    let mut out = b[..frame_len as usize].to_vec();
    out[..hb.len()].copy_from_slice(&hb);
    Ok(out)
}

/// An earlier consistent state: a trailer preceded by an index chunk whose entries point at
/// chunks of the data section before it.
fn earlier_state(b: &[u8], h: &FrameHeader) -> Option<(Vec<u8>, u64)> {
    let hl = h.header_len as usize;
    for (e, tl) in trailer_ends(b, hl).take(64) {
        let t = e - tl;
        // The index chunk ends where the trailer starts (how both libraries write it).
        for s in (hl..t.saturating_sub(31)).rev().take(1 << 16) {
            let Ok(info) = ChunkInfo::parse(&b[s..t]) else {
                continue;
            };
            if info.cbytes as usize != t - s || info.nbytes % 8 != 0 || info.nbytes == 0 {
                continue;
            }
            let cbytes = (s - hl) as u64;
            // nbytes: the sum of the chunks the index names (special ones need the header's
            // chunksize, which the patched frame keeps).
            let Ok(locs) = super::offsets::decode_index(&b[s..t], cbytes.checked_sub(32)) else {
                continue;
            };
            let mut nbytes = 0i64;
            let mut ok = true;
            for (i, l) in locs.iter().enumerate() {
                match l.get() {
                    super::offsets::Loc::Stored(v) if hl + (v as usize) + 32 <= s => {
                        match ChunkInfo::parse(&b[hl + v as usize..s]) {
                            Ok(c) => nbytes += i64::from(c.nbytes),
                            Err(_) => ok = false,
                        }
                    }
                    super::offsets::Loc::Stored(_) => ok = false,
                    super::offsets::Loc::Special(_) => {
                        let last = i + 1 == locs.len();
                        if h.chunksize <= 0 || last {
                            ok = false;
                        } else {
                            nbytes += i64::from(h.chunksize);
                        }
                    }
                }
            }
            if !ok {
                continue;
            }
            let Ok(cand) = patched(b, h, cbytes, nbytes, e as u64) else {
                continue;
            };
            if let Ok(f) = Frame::from_bytes(&cand) {
                if (0..f.nchunks()).all(|i| f.decompress_chunk(i).is_ok()) {
                    return Some((cand, e as u64));
                }
            }
        }
    }
    None
}

/// Salvages the cframe at the start of `b` (the bytes of a file from the frame's offset on).
pub fn recover_cframe(b: &[u8]) -> Result<Recovery> {
    if let Ok(f) = Frame::from_bytes(b) {
        if (0..f.nchunks()).all(|i| f.decompress_chunk(i).is_ok()) {
            return Ok(Recovery {
                cframe: f.to_cframe()?,
                method: Method::Intact,
                notes: Vec::new(),
            });
        }
    }
    let fixed = b.get(..header::HEADER_MINLEN).ok_or(Error::ReadBuffer)?;
    let (hl, _) = header::peek_lengths(fixed)?;
    let hl = hl as usize;
    let h = FrameHeader::parse(b.get(..hl).ok_or(Error::ReadBuffer)?)?;
    if let Some((cframe, e)) = earlier_state(b, &h) {
        let f = Frame::from_bytes(&cframe)?;
        return Ok(Recovery {
            notes: vec![format!(
                "the header did not describe a readable state; kept the last consistent one on \
                 disk ({} chunks, frame_len {e})",
                f.nchunks()
            )],
            cframe,
            method: Method::Earlier(e),
        });
    }
    rebuild(b, &h)
}

/// The chunk ids of the `%08X.chunk` files of an sframe directory, ascending.
fn chunk_file_ids(dir: &Path) -> Vec<u64> {
    let mut ids: Vec<u64> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                let hex = name.strip_suffix(".chunk")?;
                (hex.len() == 8 && hex.bytes().all(|c| c.is_ascii_hexdigit()))
                    .then(|| u64::from_str_radix(hex, 16).ok())?
            })
            .collect()
        })
        .unwrap_or_default();
    ids.sort_unstable();
    ids
}

/// Chunk file `id` of `dir` when it holds one intact chunk (it decompresses).
fn intact_chunk_file(dir: &Path, id: u64) -> Option<Vec<u8>> {
    let b = std::fs::read(dir.join(format!("{id:08X}.chunk"))).ok()?;
    let info = ChunkInfo::parse(&b).ok()?;
    (info.cbytes as usize == b.len() && crate::chunk::decompress_vec(&b).is_ok()).then_some(b)
}

/// What can be read of a torn sframe index file: its header, its offsets index (when it
/// decodes and every chunk it names is intact: those chunks), its vlmetalayers.
type IndexRead = (
    Option<FrameHeader>,
    Option<Vec<Vec<u8>>>,
    Option<Vec<(String, Vec<u8>)>>,
);

fn read_torn_index(dir: &Path, b: &[u8]) -> IndexRead {
    let hl = b
        .get(11..15)
        .map(|v| u32::from_be_bytes(v.try_into().unwrap()) as usize)
        .filter(|&hl| hl >= header::HEADER_MINLEN && hl <= b.len());
    let Some(hl) = hl else {
        return (None, None, None);
    };
    let Ok(h) = FrameHeader::parse(&b[..hl]) else {
        return (None, None, None);
    };
    let vlmeta = trailer_ends(b, hl)
        .next()
        .and_then(|(e, tl)| trailer::parse(&b[e - tl..e]).ok());
    let chunks = super::offsets::decode_index(&b[hl..], Some(u64::from(u32::MAX)))
        .ok()
        .and_then(|locs| {
            let n = locs.len() as i64;
            let mut h2 = h.clone();
            if h2.chunksize > 0
                && (h2.nbytes <= 0
                    || (h2.nbytes + i64::from(h2.chunksize) - 1) / i64::from(h2.chunksize) != n)
            {
                // The counters are torn too: every special chunk a whole chunksize.
                h2.nbytes = n * i64::from(h2.chunksize);
            }
            locs.iter()
                .enumerate()
                .map(|(i, l)| match l.get() {
                    super::offsets::Loc::Stored(id) => intact_chunk_file(dir, id),
                    super::offsets::Loc::Special(kind) => {
                        let nb = super::cframe::special_nbytes(&h2, n, i as i64).ok()?;
                        Some(super::offsets::synthesise_special(
                            kind,
                            h.typesize,
                            nb,
                            h.blocksize,
                        ))
                    }
                })
                .collect::<Option<Vec<_>>>()
        });
    (Some(h), chunks, vlmeta)
}

/// Salvages the sframe in directory `src` into the new sframe directory `dst` (built next to
/// it and renamed into place). The rule (docs/durability.md, "Recovery"): the frame as it opens
/// when every chunk of it reads; else the offsets index of its torn index file when it still
/// decodes and every chunk file it names is intact; else every intact chunk file, in id order
/// (the order c-blosc2 appends in). The header of the index file (metalayers, compression
/// parameters) is kept when it parses, its vlmetalayers when a trailer parses.
pub fn recover_sframe(src: &Path, dst: &Path) -> Result<(Method, Vec<String>)> {
    let mut notes = Vec::new();
    let (header, chunks, vlmeta, method) = match Frame::open_sframe(src) {
        Ok(f) if (0..f.nchunks()).all(|i| f.decompress_chunk(i).is_ok()) => {
            let chunks = (0..f.nchunks())
                .map(|i| f.chunk(i).map(|c| c.into_owned()))
                .collect::<Result<Vec<_>>>()?;
            (
                Some(f.header().clone()),
                chunks,
                Some(f.vlmetalayers().to_vec()),
                Method::Intact,
            )
        }
        _ => {
            let b = std::fs::read(src.join(super::sframe::INDEX_FILE)).unwrap_or_default();
            let (h, kept, vl) = read_torn_index(src, &b);
            if h.is_none() {
                notes.push(
                    "the index file's header is unreadable: metalayers lost, default compression                      parameters \
                     for later appends"
                        .into(),
                );
            }
            if vl.is_none() {
                notes.push("no readable trailer: vlmetalayers lost".into());
            }
            match kept {
                Some(chunks) => (h, chunks, vl, Method::IndexKept),
                None => {
                    let ids = chunk_file_ids(src);
                    let mut chunks = Vec::new();
                    for id in &ids {
                        match intact_chunk_file(src, *id) {
                            Some(c) => chunks.push(c),
                            None => {
                                notes.push(format!("chunk file {id:08X}.chunk is torn: not kept"))
                            }
                        }
                    }
                    notes.push(format!(
                        "the offsets index is unreadable: rebuilt from {} intact chunk files in id \
                         order (an earlier insert or reorder is not known; special chunks, which \
                         have no file, are lost)",
                        chunks.len()
                    ));
                    (h, chunks, vl, Method::Rebuilt)
                }
            }
        }
    };
    crate::frame::record::publish_dir(
        dst,
        |tmp| {
            let mut out = match &header {
                Some(h) => Frame::new_like(h, Target::Sparse(tmp))?,
                None => {
                    let typesize = chunks
                        .first()
                        .and_then(|c| ChunkInfo::parse(c).ok())
                        .map_or(1, |i| i32::from(i.typesize));
                    let cp = crate::chunk::CParams {
                        typesize,
                        ..Default::default()
                    };
                    Frame::create(Target::Sparse(tmp), &cp, &Default::default())?
                }
            };
            for c in &chunks {
                out.append_chunk(c)?;
            }
            for (name, stored) in vlmeta.iter().flatten() {
                out.add_vlmetalayer_raw(name, stored)?;
            }
            Ok(())
        },
        |_| Error::FileWrite,
    )?;
    Ok((method, notes))
}

/// Rebuilds a frame from the intact chunks of the data section, in file order.
fn rebuild(b: &[u8], h: &FrameHeader) -> Result<Recovery> {
    let hl = h.header_len as usize;
    let mut notes = Vec::new();
    let mut out = Frame::new_like(h, Target::Memory)?;
    let vl = trailer_ends(b, hl).next();
    match vl {
        Some((e, tl)) => {
            for (name, stored) in trailer::parse(&b[e - tl..e])? {
                if out.add_vlmetalayer_raw(&name, &stored).is_err() {
                    notes.push(format!("vlmetalayer {name:?} not kept"));
                }
            }
        }
        None if h.has_vlmeta => notes.push("no readable trailer: vlmetalayers lost".into()),
        None => {}
    }
    let (mut p, mut kept, mut skipped) = (hl, 0usize, 0usize);
    while p + 32 <= b.len() {
        let chunk = ChunkInfo::parse(&b[p..])
            .ok()
            .filter(|c| c.cbytes >= 32 && p + c.cbytes as usize <= b.len())
            .filter(|c| c.typesize == h.typesize.clamp(1, 255) as u8 || h.typesize > 255)
            .filter(|c| h.chunksize <= 0 || c.nbytes <= h.chunksize);
        if let Some(c) = chunk {
            let bytes = &b[p..p + c.cbytes as usize];
            if crate::chunk::decompress_vec(bytes).is_ok() && out.append_chunk(bytes).is_ok() {
                kept += 1;
                p += c.cbytes as usize;
                continue;
            }
        }
        skipped += 1;
        p += 1;
    }
    notes.push(format!(
        "rebuilt from the chunks found intact in the data section: {kept} kept (file order; \
         an earlier reorder or insert is not known), {skipped} bytes skipped"
    ));
    Ok(Recovery {
        cframe: out.to_cframe()?,
        method: Method::Rebuilt,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::{compress_vec, CParams, DParams};

    fn frame(n: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
        let cp = CParams {
            typesize: 4,
            ..CParams::default()
        };
        let mut f = Frame::new_memory(&cp, &DParams::default()).unwrap();
        f.add_vlmetalayer_raw("v", &compress_vec(&cp, b"abcd").unwrap())
            .unwrap();
        let mut chunks = Vec::new();
        for k in 0..n {
            let d: Vec<u8> = (0..4000u32)
                .flat_map(|i| (i * k as u32 + 7).to_le_bytes())
                .collect();
            let c = compress_vec(&cp, &d).unwrap();
            f.append_chunk(&c).unwrap();
            chunks.push(c);
        }
        (f.to_cframe().unwrap(), chunks)
    }

    /// c-blosc2's torn append: the next chunk written over the old index and trailer, header
    /// unchanged: the old state is gone, the chunks are rebuilt (and the new one kept).
    #[test]
    fn torn_append_is_rebuilt_from_the_chunks() {
        let (b, chunks) = frame(3);
        let h = FrameHeader::parse(&b[..b[14] as usize]).unwrap();
        let at = h.header_len as usize + h.cbytes as usize;
        let mut torn = b[..at].to_vec();
        torn.extend_from_slice(&chunks[0]);
        assert!(Frame::from_bytes(&torn).is_err());
        let r = recover_cframe(&torn).unwrap();
        assert_eq!(r.method, Method::Rebuilt);
        let f = Frame::from_bytes(&r.cframe).unwrap();
        assert_eq!(f.nchunks(), 4);
        assert_eq!(&*f.chunk(3).unwrap(), &chunks[0][..]);
    }

    /// A header that was rewritten for a state whose index never reached the file: the old
    /// index and trailer are still there, so the last consistent state is found.
    #[test]
    fn header_ahead_of_the_file_finds_the_earlier_state() {
        let (b, _) = frame(3);
        let mut torn = b.clone();
        torn[16..24].copy_from_slice(&(b.len() as u64 + 5000).to_be_bytes());
        assert!(Frame::from_bytes(&torn).is_err());
        let r = recover_cframe(&torn).unwrap();
        assert_eq!(r.method, Method::Earlier(b.len() as u64));
        assert_eq!(r.cframe, b);
        assert_eq!(recover_cframe(&b).unwrap().method, Method::Intact);
    }
}
