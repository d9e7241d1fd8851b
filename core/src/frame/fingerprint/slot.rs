//! The 16-byte slot in the trailer and its check: the four [`Parts`], [`seal`], and the
//! [`Verdict`] of [`judge`], which says which region a mismatch is in; the check of a cframe
//! held in memory ([`verify_cframe_bytes`]) and the verify-on-open switch applied to it.

#![forbid(unsafe_code)]

use super::*;

/// The four consecutive parts the fingerprint covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts {
    /// The frame header, metalayers included (`header_len` bytes).
    pub header: Piece,
    /// cframe: the data section (`cbytes` bytes, dead space included); sframe: every stored
    /// chunk (its `cbytes` bytes) in index order.
    pub data: Piece,
    /// The offsets index chunk (empty when the frame has no chunks).
    pub index: Piece,
    /// The trailer up to and including the `fpt` byte.
    pub trailer: Piece,
}

impl Parts {
    /// The fingerprint: all four parts in order.
    pub fn total(&self) -> Piece {
        self.header
            .then(self.data)
            .then(self.index)
            .then(self.trailer)
    }
}

/// The fingerprint type and slot stored at the end of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// `fpt`: 0 none, 1 CRC-32 (2 and 3 are reserved for 64/128-bit fingerprints).
    pub fpt: u8,
    /// The 16 bytes of storage.
    pub bytes: [u8; SLOT_LEN],
}

impl Slot {
    /// The slot at the end of `tail` (the last bytes of a frame or trailer).
    pub fn from_tail(tail: &[u8]) -> Result<Slot> {
        let n = tail.len();
        if n < TYPE_FROM_END {
            return Err(Error::ReadBuffer);
        }
        let mut bytes = [0u8; SLOT_LEN];
        bytes.copy_from_slice(&tail[n - SLOT_LEN..]);
        Ok(Slot {
            fpt: tail[n - TYPE_FROM_END],
            bytes,
        })
    }

    /// The four little-endian words: fingerprint, header, data and index CRCs.
    pub fn words(&self) -> [u32; 4] {
        let w = |k: usize| u32::from_le_bytes(self.bytes[4 * k..4 * k + 4].try_into().unwrap());
        [w(0), w(1), w(2), w(3)]
    }

    /// Whether the part CRCs (bytes 4..16) are present (another writer may store only the
    /// fingerprint and leave them zero).
    pub fn has_parts(&self) -> bool {
        self.bytes[4..].iter().any(|&b| b != 0)
    }
}

/// Fills the fingerprint slot of `trailer` (a complete trailer as [`trailer::to_bytes`] makes
/// it) for a frame whose header, data and index parts are `header`, `data` and `index`.
pub fn seal(trailer: &mut [u8], header: Piece, data: Piece, index: Piece) {
    let n = trailer.len();
    debug_assert!(n > TYPE_FROM_END);
    trailer[n - TYPE_FROM_END] = TYPE_CRC32;
    // The trailer part is hashed on (one combination fewer than `Parts::total`).
    let mut total = header.then(data).then(index);
    total.extend(&trailer[..n - SLOT_LEN]);
    let words = [total.crc, header.crc, data.crc, index.crc];
    for (k, w) in words.iter().enumerate() {
        trailer[n - SLOT_LEN + 4 * k..n - SLOT_LEN + 4 * k + 4].copy_from_slice(&w.to_le_bytes());
    }
}

/// A part of a frame where a fingerprint mismatch was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// The header (metalayers included).
    Header,
    /// cframe: the data section; sframe: the chunk files.
    Data,
    /// The offsets index.
    Index,
    /// The trailer (vlmetalayers, lengths), or the stored fingerprint word itself.
    Trailer,
    /// The part CRCs of the slot (the covered bytes match the fingerprint).
    Slot,
}

impl Region {
    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Region::Header => "header",
            Region::Data => "data",
            Region::Index => "offsets index",
            Region::Trailer => "trailer",
            Region::Slot => "fingerprint slot",
        }
    }
}

/// The outcome of checking a frame's fingerprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `fpt = 0` and an empty slot: nothing to check (c-blosc2 and disabled writers).
    Unfingerprinted,
    /// `fpt = 1` and every stored CRC matches the frame.
    Match,
    /// `fpt = 1` and the frame differs: the parts where (empty when the slot cannot tell).
    Mismatch(Vec<Region>),
    /// `fpt = 0` with a non-empty slot: no writer produces that, the type byte was changed.
    DamagedType,
    /// A fingerprint type b2frame cannot check (2, 3 reserved; others undefined).
    Unsupported(u8),
}

impl Verdict {
    /// Whether nothing speaks against the frame (matched, or nothing to check).
    pub fn is_sound(&self) -> bool {
        matches!(self, Verdict::Unfingerprinted | Verdict::Match)
    }

    /// A one-line description.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Unfingerprinted => "none (fpt 0)".into(),
            Verdict::Match => "crc32 (fpt 1), matches".into(),
            Verdict::Mismatch(r) if r.is_empty() => "crc32 (fpt 1), MISMATCH".into(),
            Verdict::Mismatch(r) => format!(
                "crc32 (fpt 1), MISMATCH in the {}",
                r.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ")
            ),
            Verdict::DamagedType => "fpt 0 with a non-empty slot: the type byte is damaged".into(),
            Verdict::Unsupported(t) => format!("fpt {t}: a type b2frame cannot check"),
        }
    }
}

/// Compares the stored slot with the parts computed from the frame. `data` is `None` when a
/// stored chunk could not be read.
pub fn judge(
    slot: &Slot,
    header: Piece,
    data: Option<Piece>,
    index: Piece,
    trailer: Piece,
) -> Verdict {
    match slot.fpt {
        TYPE_NONE if slot.bytes.iter().all(|&b| b == 0) => return Verdict::Unfingerprinted,
        TYPE_NONE => return Verdict::DamagedType,
        TYPE_CRC32 => {}
        t => return Verdict::Unsupported(t),
    }
    let [total, sh, sd, si] = slot.words();
    let Some(data) = data else {
        return Verdict::Mismatch(vec![Region::Data]);
    };
    let actual = Parts {
        header,
        data,
        index,
        trailer,
    };
    let total_ok = actual.total().crc == total;
    if !slot.has_parts() {
        return if total_ok {
            Verdict::Match
        } else {
            Verdict::Mismatch(Vec::new())
        };
    }
    let mut bad: Vec<Region> = [
        (sh, header, Region::Header),
        (sd, data, Region::Data),
        (si, index, Region::Index),
    ]
    .into_iter()
    .filter(|(s, p, _)| *s != p.crc)
    .map(|(_, _, r)| r)
    .collect();
    match (total_ok, bad.is_empty()) {
        (true, true) => Verdict::Match,
        // The covered bytes are what was fingerprinted: a part word was damaged.
        (true, false) => Verdict::Mismatch(vec![Region::Slot]),
        (false, true) => Verdict::Mismatch(vec![Region::Trailer]),
        (false, false) => {
            // If the stored parts with the actual trailer do not add up to the stored
            // fingerprint either, the trailer (or the fingerprint word) changed as well.
            let stored = Parts {
                header: Piece {
                    crc: sh,
                    len: header.len,
                },
                data: Piece {
                    crc: sd,
                    len: data.len,
                },
                index: Piece {
                    crc: si,
                    len: index.len,
                },
                trailer,
            };
            if stored.total().crc != total {
                bad.push(Region::Trailer);
            }
            Verdict::Mismatch(bad)
        }
    }
}

/// Checks the fingerprint of the cframe `buf` (exactly `frame_len` bytes) whose parsed header
/// is `header`, without a [`Frame`] (a buffer validated where it lies).
pub fn verify_cframe_bytes(buf: &[u8], header: &FrameHeader) -> Result<Verdict> {
    let n = buf.len();
    let min = crate::frame::header::TRAILER_MINLEN;
    let window = buf
        .get(n.checked_sub(min).ok_or(Error::InvalidHeader)?..)
        .ok_or(Error::ReadBuffer)?;
    let tl = trailer::trailer_len_from_window(window, n as u64)? as usize;
    let ts = n - tl;
    let hl = header.header_len as usize;
    let cbytes = usize::try_from(header.cbytes).map_err(|_| Error::InvalidHeader)?;
    let de = hl.checked_add(cbytes).ok_or(Error::InvalidHeader)?;
    if tl <= TYPE_FROM_END || hl > ts {
        return Err(Error::InvalidHeader);
    }
    let slot = Slot::from_tail(buf)?;
    if slot.fpt != TYPE_CRC32 {
        return Ok(judge(
            &slot,
            Piece::EMPTY,
            Some(Piece::EMPTY),
            Piece::EMPTY,
            Piece::EMPTY,
        ));
    }
    // Without chunks (nbytes 0) the trailer follows the header whatever `cbytes` says.
    let (data, index_pos) = if header.nbytes == 0 || de > ts {
        (Some(Piece::EMPTY), hl)
    } else {
        let region = &buf[de..ts];
        let locs =
            crate::frame::offsets::decode_index(region, crate::frame::cframe::max_stored(header))
                .ok();
        let data = locs
            .and_then(|l| data_piece(l.stored(), cbytes as u64, &mut slice_reader(buf, hl)).ok());
        (data, de)
    };
    let ilen = index_part_len(&buf[index_pos..ts], (ts - index_pos) as u64) as usize;
    Ok(judge(
        &slot,
        Piece::of(&buf[..hl]),
        data,
        Piece::of(&buf[index_pos..index_pos + ilen]),
        Piece::of(&buf[ts..n - SLOT_LEN]),
    ))
}

/// With verify-on-open set: fails with `InvalidHeader` unless the cframe `buf` (see
/// [`verify_cframe_bytes`]) passes the check.
pub fn check_bytes_on_open(buf: &[u8], header: &FrameHeader) -> Result<()> {
    if verify_on_open() && !verify_cframe_bytes(buf, header)?.is_sound() {
        return Err(Error::InvalidHeader);
    }
    Ok(())
}
