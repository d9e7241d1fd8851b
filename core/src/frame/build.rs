//! One-pass cframe construction: header | chunk data | offsets index | trailer, written once
//! instead of rewriting the index after every appended chunk (which costs O(n²) for n chunks).
//!
//! The result is what a frame that received the same chunks one by one describes: the chunksize
//! follows c-blosc2's rules over the append sequence; ZERO/NaN/UNINIT chunks become special
//! offsets while the chunksize is fixed and are stored as 32-byte chunks in variable-size frames
//! (so that c-blosc2 3.3.5 can read them, docs/format/offsets.md#index-chunk), but for a NaN
//! chunk of other items than the frame's, which an offset cannot hold: it is stored as its
//! regular equivalent, as [`crate::frame::Frame::append_chunk`] stores it
//! ([`offsets::keeps_as_entry`]); the flags and version follow the chunksize and the chunk
//! kind. Header, index and trailer are parsed back by the frame reader before anything is
//! written, so a builder bug cannot produce a frame our own reader refuses; the chunk data is
//! streamed into the destination, never assembled in memory as a whole.

use crate::chunk::CParams;
use crate::error::{Error, Result};
use crate::frame::cframe::{self, Fetched, Skeleton};
use crate::frame::chunkinfo::ChunkInfo;
use crate::frame::fingerprint::{self, Piece};
use crate::frame::header::{FrameHeader, FrameType, MAX_NCHUNKS, VERSION_RC1};
use crate::frame::offsets::{self, ChunkLoc, SpecialKind};
use crate::frame::record::WriteSeek;
use crate::frame::trailer::{self, MAX_VLMETALAYERS_WRITE};
use std::io::{SeekFrom, Write};

/// c-blosc2's chunksize rules (docs/mutation.md#chunksize): -1 takes the first chunk's size; a fixed
/// size becomes variable (0) when a chunk is larger, follows a short last chunk, or a chunk
/// that is not last has another size.
pub(crate) fn next_chunksize(
    chunksize: i32,
    nchunks: usize,
    total: i64,
    at: usize,
    update: bool,
    nbytes: i32,
) -> i32 {
    if chunksize == 0 {
        return 0;
    }
    if chunksize < 0 {
        return if nchunks == 0 || (update && nchunks == 1) {
            nbytes
        } else {
            0
        };
    }
    let cs = i64::from(chunksize);
    let nb = i64::from(nbytes);
    let n = nchunks as i64;
    let last_short = n > 0 && total < n * cs;
    let variable = if update {
        nb > cs || (at as i64 != n - 1 && nb != cs)
    } else {
        nb > cs || (n > 0 && (last_short || (at as i64 != n && nb != cs)))
    };
    if variable {
        0
    } else {
        chunksize
    }
}

/// How a built frame's header describes its super-chunk: what c-blosc2 writes into the header
/// of a copy (`blosc2_schunk_copy`, and so `to_buffer`/`to_file` of anything but an in-memory
/// frame).
#[derive(Clone, Copy, Debug)]
pub struct HeaderTemplate {
    /// Compression parameters of the header (`nthreads` is not used).
    pub cparams: CParams,
    /// The header's compression and decompression thread counts.
    pub threads: (i16, i16),
    /// The chunksize the copy starts with (c-blosc2 presets the source's, so a variable frame
    /// stays variable); -1 derives it from the chunks.
    pub chunksize: i32,
}

impl HeaderTemplate {
    /// The header of a contiguous frame with this template and `metalayers`, before its
    /// chunks decide sizes, chunksize, flags and version ([`CframePlan::from_header`]).
    pub(crate) fn header(&self, metalayers: &[(String, Vec<u8>)]) -> FrameHeader {
        let cp = &self.cparams;
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
            self.threads,
        );
        header.metalayers = metalayers.to_vec();
        header.chunksize = self.chunksize.max(-1);
        header
    }

    /// Thread fields 0 and a chunksize derived from the chunks.
    pub fn plain(cparams: &CParams) -> HeaderTemplate {
        HeaderTemplate {
            cparams: *cparams,
            threads: (0, 0),
            chunksize: -1,
        }
    }
}

/// How a planned chunk goes into a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// A special offset of the index: nothing in the data section.
    Entry(SpecialKind),
    /// The chunk itself, its first `cbytes` bytes.
    Stored(u32),
    /// A special chunk no offset can hold ([`offsets::keeps_as_entry`]: NaNs of other items
    /// than the frame's) in a frame of fixed chunksize: its regular equivalent of `typesize`
    /// (`cbytes` bytes long), made again when the frame is written, as a frame's append makes
    /// it ([`offsets::regular_equivalent`]).
    Equivalent {
        kind: SpecialKind,
        typesize: i32,
        nbytes: i32,
        cbytes: u32,
    },
}

impl Place {
    /// How many bytes of the data section the chunk takes.
    fn data_len(self) -> Option<u32> {
        match self {
            Place::Entry(_) => None,
            Place::Stored(n) | Place::Equivalent { cbytes: n, .. } => Some(n),
        }
    }

    /// The regular equivalent of a [`Place::Equivalent`] chunk (`None` for the others).
    fn equivalent(self) -> Result<Option<Vec<u8>>> {
        match self {
            Place::Equivalent {
                kind,
                typesize,
                nbytes,
                cbytes,
            } => {
                let c = offsets::regular_equivalent(kind, typesize, nbytes)?;
                // The chunk must still be the one planned.
                if c.len() != cbytes as usize {
                    return Err(Error::Failure);
                }
                Ok(Some(c))
            }
            _ => Ok(None),
        }
    }
}

/// A compact cframe to be written: its header, offsets index and trailer, and which chunks
/// go into the data section (and how many bytes of each). Planned from the chunks' headers
/// alone, so the chunk data can be streamed into the destination afterwards
/// ([`CframePlan::emit`]): no copy of the whole frame is held in memory.
pub(crate) struct CframePlan {
    head: Vec<u8>,
    tail: Vec<u8>,
    /// How many bytes of `tail` are the offsets index (the trailer follows).
    index_len: usize,
    /// Per chunk: how it goes into the frame.
    stored: Vec<Place>,
    len: u64,
    /// The header's chunksize (0: variable chunks).
    chunksize: i32,
}

impl CframePlan {
    /// Plans a contiguous frame holding chunks whose headers are `infos` (in order), with the
    /// header template `tpl`, `metalayers` and `vlmeta`.
    pub(crate) fn new(
        tpl: &HeaderTemplate,
        metalayers: &[(String, Vec<u8>)],
        infos: &[ChunkInfo],
        vlmeta: &[(String, Vec<u8>)],
    ) -> Result<CframePlan> {
        CframePlan::from_header(tpl.header(metalayers), infos, vlmeta)
    }

    /// [`CframePlan::new`] with the parameters, metalayers and thread fields of `header` (a
    /// contiguous frame header); its chunksize is the one the first chunk meets (-1: none
    /// yet, a preset chunksize, or 0 for variable chunks), its sizes are replaced.
    pub(crate) fn from_header(
        mut header: FrameHeader,
        infos: &[ChunkInfo],
        vlmeta: &[(String, Vec<u8>)],
    ) -> Result<CframePlan> {
        if vlmeta.len() > MAX_VLMETALAYERS_WRITE {
            return Err(Error::Failure);
        }
        if infos.len() as i64 > MAX_NCHUNKS {
            return Err(Error::ChunkAppend);
        }
        let mut chunksize = header.chunksize;
        let mut nbytes = 0i64;
        for (n, info) in infos.iter().enumerate() {
            if !info.frame_storable() {
                return Err(Error::InvalidParam);
            }
            if n > 0 && info.vl_blocks != infos[0].vl_blocks {
                return Err(Error::InvalidParam);
            }
            chunksize = next_chunksize(chunksize, n, nbytes, n, false, info.nbytes);
            nbytes += i64::from(info.nbytes);
        }
        header.frame_type = FrameType::Contiguous;
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
        let mut data_len = 0u64;
        let mut locs = Vec::with_capacity(infos.len());
        let mut stored = Vec::with_capacity(infos.len());
        for info in infos {
            let special = SpecialKind::from_special_id(info.special).filter(|_| chunksize != 0);
            let place = match special {
                Some(kind) if offsets::keeps_as_entry(kind, header.typesize, info.typesize) => {
                    Place::Entry(kind)
                }
                Some(kind) => {
                    let typesize =
                        offsets::equivalent_typesize(kind, header.typesize, info.typesize);
                    let c = offsets::regular_equivalent(kind, typesize, info.nbytes)?;
                    Place::Equivalent {
                        kind,
                        typesize,
                        nbytes: info.nbytes,
                        cbytes: u32::try_from(c.len()).map_err(|_| Error::Failure)?,
                    }
                }
                None => Place::Stored(info.cbytes as u32),
            };
            match (place, place.data_len()) {
                (Place::Entry(kind), _) => locs.push(ChunkLoc::Special(kind)),
                (_, n) => {
                    locs.push(ChunkLoc::Stored(data_len));
                    data_len += u64::from(n.unwrap_or(0));
                }
            }
            stored.push(place);
        }
        header.cbytes = i64::try_from(data_len).map_err(|_| Error::Failure)?;
        let mut tail = if locs.is_empty() {
            Vec::new()
        } else {
            offsets::encode_index(&locs)?
        };
        let index_len = tail.len();
        tail.extend_from_slice(&trailer::to_bytes(vlmeta)?);
        header.check_encodable()?;
        let hl = header.encoded_len() as u64;
        let len = hl + data_len + tail.len() as u64;
        header.frame_len = len;
        let head = header.to_bytes()?;
        // Our own reader must accept it (and agree on the chunk count).
        let skeleton = Skeleton {
            head: &head,
            tail: &tail,
            len,
        };
        let (_, check, _) = cframe::read_frame(&skeleton, FrameType::Contiguous)?;
        if check.len() != infos.len() {
            return Err(Error::Failure);
        }
        Ok(CframePlan {
            head,
            tail,
            index_len,
            stored,
            len,
            chunksize,
        })
    }

    /// The frame's length in bytes.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Writes the frame to `out`; `chunk(i, buf)` gives chunk `i` (the one whose header was
    /// planned), borrowed or read into `buf`. Only chunks stored as they are are asked for (a
    /// regular equivalent is made here). Errors of `out` are `Error::FileWrite`. The trailer
    /// gets the frame's fingerprint (unless switched off), the data part hashed as it is
    /// written.
    pub(crate) fn emit<'s>(
        &self,
        out: &mut dyn Write,
        mut chunk: impl FnMut(usize, &mut Vec<u8>) -> Result<Fetched<'s>>,
    ) -> Result<()> {
        let w = |out: &mut dyn Write, b: &[u8]| out.write_all(b).map_err(|_| Error::FileWrite);
        w(out, &self.head)?;
        let sealing = fingerprint::writes_enabled();
        let mut data = Piece::EMPTY;
        let mut buf = Vec::new();
        for (i, &place) in self.stored.iter().enumerate() {
            let Some(n) = place.data_len() else { continue };
            let n = n as usize;
            let equivalent = place.equivalent()?;
            let c = match &equivalent {
                Some(c) => c.as_slice(),
                None => chunk(i, &mut buf)?.bytes(&buf),
            };
            // The chunk must still be the one planned.
            if c.len() < n || ChunkInfo::parse(c)?.cbytes as usize != n {
                return Err(Error::Failure);
            }
            if sealing {
                data.extend(&c[..n]);
            }
            w(out, &c[..n])?;
        }
        self.write_tail(out, sealing.then_some(data))?;
        out.flush().map_err(|_| Error::FileWrite)
    }

    /// Writes the offsets index and the trailer, the trailer sealed with the data part
    /// `data` (the stored chunks' piece) when fingerprints are written.
    fn write_tail(&self, out: &mut (impl Write + ?Sized), data: Option<Piece>) -> Result<()> {
        let (index, trailer) = self.tail.split_at(self.index_len);
        out.write_all(index).map_err(|_| Error::FileWrite)?;
        let r = match data {
            Some(data) => {
                let mut trailer = trailer.to_vec();
                fingerprint::seal(&mut trailer, Piece::of(&self.head), data, Piece::of(index));
                out.write_all(&trailer)
            }
            None => out.write_all(trailer),
        };
        r.map_err(|_| Error::FileWrite)
    }
}

impl CframePlan {
    /// [`CframePlan::emit`] into `dst`, which holds exactly [`CframePlan::len`] bytes:
    /// `direct(i, slot)` may read chunk `i` straight into its place in `dst` (true: a chunk
    /// read from a file passes through no chunk-sized buffer); otherwise `chunk` gives it as
    /// for `emit` and it is copied there. Neither is asked for a chunk stored as its regular
    /// equivalent.
    pub(crate) fn emit_into<'s>(
        &self,
        dst: &mut [u8],
        mut direct: impl FnMut(usize, &mut [u8]) -> Result<bool>,
        mut chunk: impl FnMut(usize, &mut Vec<u8>) -> Result<Fetched<'s>>,
    ) -> Result<()> {
        if dst.len() as u64 != self.len || dst.len() < self.head.len() {
            return Err(Error::Failure);
        }
        let (head, mut rest) = dst.split_at_mut(self.head.len());
        head.copy_from_slice(&self.head);
        let sealing = fingerprint::writes_enabled();
        let mut data = Piece::EMPTY;
        let mut buf = Vec::new();
        for (i, &place) in self.stored.iter().enumerate() {
            let Some(n) = place.data_len() else { continue };
            let n = n as usize;
            if rest.len() < n {
                return Err(Error::Failure);
            }
            let (slot, after) = std::mem::take(&mut rest).split_at_mut(n);
            if let Some(c) = place.equivalent()? {
                slot.copy_from_slice(&c);
            } else if !direct(i, slot)? {
                let c = chunk(i, &mut buf)?.bytes(&buf);
                if c.len() < n {
                    return Err(Error::Failure);
                }
                slot.copy_from_slice(&c[..n]);
            }
            // The chunk must still be the one planned.
            if ChunkInfo::parse(slot)?.cbytes as usize != n {
                return Err(Error::Failure);
            }
            if sealing {
                data.extend(slot);
            }
            rest = after;
        }
        let (index, trailer) = self.tail.split_at(self.index_len);
        if rest.len() != self.tail.len() {
            return Err(Error::Failure);
        }
        let (index_dst, trailer_dst) = rest.split_at_mut(index.len());
        index_dst.copy_from_slice(index);
        trailer_dst.copy_from_slice(trailer);
        if sealing {
            fingerprint::seal(trailer_dst, Piece::of(&self.head), data, Piece::of(index));
        }
        Ok(())
    }
}

/// Writes a compact cframe with `header` (as [`CframePlan::from_header`] takes it) to `out`
/// from chunks whose compressed sizes are known only once they are made (recompressed
/// chunks): `chunk(i, buf)` gives chunk `i`, borrowed or in `buf`, and `expected[i]` its
/// uncompressed size and VL-block layout, which decide the chunksize. A chunk that comes out
/// special (zeros, NaN, uninitialised; a recompressed chunk of zeros does) becomes a special
/// offset unless the chunks are variable; then, with `regular`, it is stored as its regular
/// equivalent as [`crate::frame::Frame::append_chunk`] stores it, else as it is (the 32-byte
/// chunk c-blosc2's copies store). A NaN chunk of other items than the frame's is never an
/// offset ([`offsets::keeps_as_entry`]): with a fixed chunksize, or with `regular`, it is
/// stored as its regular equivalent in its own typesize. The header is written
/// last, over a placeholder of its length (its length depends on the metalayers alone), so
/// only one chunk is held in memory at a time; the frame is checked by the frame reader before
/// the index and trailer are written. Returns the frame's length.
pub(crate) fn stream_cframe<'s>(
    header: FrameHeader,
    expected: &[ChunkInfo],
    vlmeta: &[(String, Vec<u8>)],
    regular: bool,
    out: &mut dyn WriteSeek,
    mut chunk: impl FnMut(usize, &mut Vec<u8>) -> Result<Fetched<'s>>,
) -> Result<u64> {
    let typesize = header.typesize;
    let w = |out: &mut dyn WriteSeek, b: &[u8]| out.write_all(b).map_err(|_| Error::FileWrite);
    let (placeholder, chunksize) = {
        let draft = CframePlan::from_header(header.clone(), expected, vlmeta)?;
        (draft.head, draft.chunksize)
    };
    let start = out.stream_position().map_err(|_| Error::FileWrite)?;
    w(out, &placeholder)?;
    let sealing = fingerprint::writes_enabled();
    let mut data = Piece::EMPTY;
    let mut infos = Vec::with_capacity(expected.len());
    let mut written = Vec::with_capacity(expected.len());
    let mut buf = Vec::new();
    for (i, want) in expected.iter().enumerate() {
        let mut c = match chunk(i, &mut buf)? {
            Fetched::Lent(lent) => lent,
            Fetched::Read(k) => &buf[..k],
        };
        let mut info = ChunkInfo::parse(c)?;
        if (info.nbytes, info.vl_blocks) != (want.nbytes, want.vl_blocks) {
            return Err(Error::Failure);
        }
        let kind = SpecialKind::from_special_id(info.special);
        let offset = chunksize != 0
            && kind.is_some_and(|k| offsets::keeps_as_entry(k, typesize, info.typesize));
        let equivalent;
        if let Some(kind) = kind.filter(|_| !offset && (regular || chunksize != 0)) {
            let ts = offsets::equivalent_typesize(kind, typesize, info.typesize);
            equivalent = offsets::regular_equivalent(kind, ts, info.nbytes)?;
            c = &equivalent;
            info = ChunkInfo::parse(c)?;
        }
        let n = usize::try_from(info.cbytes).map_err(|_| Error::Failure)?;
        if n > c.len() {
            return Err(Error::Failure);
        }
        if !offset {
            if sealing {
                data.extend(&c[..n]);
            }
            w(out, &c[..n])?;
        }
        written.push(!offset);
        infos.push(info);
    }
    let plan = CframePlan::from_header(header, &infos, vlmeta)?;
    // Every chunk written is stored as it was written (no equivalent to make).
    let as_written = plan.stored.iter().map(|p| matches!(p, Place::Stored(_)));
    if plan.head.len() != placeholder.len() || !as_written.eq(written) {
        return Err(Error::Failure);
    }
    plan.write_tail(out, sealing.then_some(data))?;
    let end = out.stream_position().map_err(|_| Error::FileWrite)?;
    if end - start != plan.len {
        return Err(Error::Failure);
    }
    out.seek(SeekFrom::Start(start))
        .map_err(|_| Error::FileWrite)?;
    w(out, &plan.head)?;
    out.seek(SeekFrom::Start(end))
        .map_err(|_| Error::FileWrite)?;
    out.flush().map_err(|_| Error::FileWrite)?;
    Ok(plan.len)
}

/// Builds a contiguous frame holding `chunks` (complete chunks, in order), in memory.
#[cfg(test)]
pub(crate) fn build_cframe<C: AsRef<[u8]>>(
    tpl: &HeaderTemplate,
    metalayers: &[(String, Vec<u8>)],
    chunks: &[C],
    vlmeta: &[(String, Vec<u8>)],
) -> Result<Vec<u8>> {
    let mut infos = Vec::with_capacity(chunks.len());
    for c in chunks {
        let info = ChunkInfo::parse(c.as_ref())?;
        if info.cbytes as usize > c.as_ref().len() {
            return Err(Error::InvalidParam);
        }
        infos.push(info);
    }
    let plan = CframePlan::new(tpl, metalayers, &infos, vlmeta)?;
    let mut out = Vec::with_capacity(usize::try_from(plan.len()).map_err(|_| Error::MemoryAlloc)?);
    plan.emit(&mut out, |i, _| Ok(Fetched::Lent(chunks[i].as_ref())))?;
    Ok(out)
}
