//! One-pass cframe construction: header | chunk data | offsets index | trailer, written once
//! instead of rewriting the index after every appended chunk (which costs O(n²) for n chunks).
//!
//! The result is what a frame that received the same chunks one by one describes: the chunksize
//! follows c-blosc2's rules over the append sequence; ZERO/NaN/UNINIT chunks become special
//! offsets while the chunksize is fixed and are stored as 32-byte chunks in variable-size frames
//! (so that c-blosc2 3.3.5 can read them, cblosc2-notes §2.10); the flags and version follow the
//! chunksize and the chunk kind. The bytes are parsed back with [`Frame::from_vec`] before they
//! are handed out, so a builder bug cannot produce a frame our own reader refuses.

use super::plain::next_chunksize;
use crate::chunk::CParams;
use crate::error::{Error, Result};
use crate::frame::chunkinfo::ChunkInfo;
use crate::frame::fingerprint::{self, Piece};
use crate::frame::header::{FrameHeader, FrameType, MAX_NCHUNKS, VERSION_RC1};
use crate::frame::offsets::{self, ChunkLoc, SpecialKind};
use crate::frame::trailer::{self, MAX_VLMETALAYERS_WRITE};
use crate::frame::Frame;

/// Builds a contiguous frame holding `chunks` (complete chunks, in order).
pub(super) fn build_cframe<C: AsRef<[u8]>>(
    cp: &CParams,
    metalayers: &[(String, Vec<u8>)],
    chunks: &[C],
    vlmeta: &[(String, Vec<u8>)],
) -> Result<Vec<u8>> {
    if vlmeta.len() > MAX_VLMETALAYERS_WRITE {
        return Err(Error::Failure);
    }
    if chunks.len() as i64 > MAX_NCHUNKS {
        return Err(Error::ChunkAppend);
    }
    let mut infos = Vec::with_capacity(chunks.len());
    let mut chunksize = -1i32;
    let mut nbytes = 0i64;
    for (n, c) in chunks.iter().enumerate() {
        let c = c.as_ref();
        let info = ChunkInfo::parse(c)?;
        if info.cbytes as usize > c.len() || !info.frame_storable() {
            return Err(Error::InvalidParam);
        }
        if n > 0 && info.vl_blocks != infos.first().is_some_and(|i: &ChunkInfo| i.vl_blocks) {
            return Err(Error::InvalidParam);
        }
        chunksize = next_chunksize(chunksize, n, nbytes, n, false, info.nbytes);
        nbytes += i64::from(info.nbytes);
        infos.push(info);
    }
    let mut header = FrameHeader::new_empty(
        FrameType::Contiguous,
        cp.compcode,
        cp.clevel,
        cp.splitmode.clamp(1, 4) as u8,
        cp.typesize,
        cp.blocksize,
        cp.filters,
        cp.filters_meta,
        cp.compcode_meta,
        cp.use_dict,
        (0, 0),
    );
    header.metalayers = metalayers.to_vec();
    header.chunksize = chunksize;
    header.nbytes = nbytes;
    header.vl_blocks = infos.first().is_some_and(|i| i.vl_blocks);
    header.variable_chunks = chunksize == 0;
    header.version = if header.variable_chunks || header.vl_blocks {
        3
    } else {
        VERSION_RC1
    };
    header.has_vlmeta = !vlmeta.is_empty();
    let mut data = Vec::new();
    let mut locs = Vec::with_capacity(chunks.len());
    for (c, info) in chunks.iter().zip(&infos) {
        let special = SpecialKind::from_special_id(info.special).filter(|_| chunksize != 0);
        match special {
            Some(kind) => locs.push(ChunkLoc::Special(kind)),
            None => {
                locs.push(ChunkLoc::Stored(data.len() as u64));
                data.extend_from_slice(&c.as_ref()[..info.cbytes as usize]);
            }
        }
    }
    header.cbytes = data.len() as i64;
    let index = if locs.is_empty() {
        Vec::new()
    } else {
        offsets::encode_index(&locs)?
    };
    let mut trailer = trailer::to_bytes(vlmeta)?;
    header.check_encodable()?;
    let hl = header.encoded_len();
    header.frame_len = (hl + data.len() + index.len() + trailer.len()) as u64;
    let mut out = header.to_bytes()?;
    if fingerprint::writes_enabled() {
        let (h, d, i) = (Piece::of(&out), Piece::of(&data), Piece::of(&index));
        fingerprint::seal(&mut trailer, h, d, i);
    }
    out.reserve(data.len() + index.len() + trailer.len());
    out.extend_from_slice(&data);
    out.extend_from_slice(&index);
    out.extend_from_slice(&trailer);
    // Our own reader must accept it (and agree on the chunk count).
    let check = Frame::from_bytes(&out)?;
    if check.nchunks() != chunks.len() as i64 {
        return Err(Error::Failure);
    }
    Ok(out)
}
