//! The offsets index: one ordinary chunk whose payload is `nchunks` little-endian int64 entries
//! (docs/format/offsets.md#entries). A non-negative entry locates a stored chunk (cframe: offset from the
//! end of the header; sframe: chunk-file id); a negative one marks a special chunk with no
//! payload, whose bytes are synthesised on read.
//!
//! Submodules: `decode` (reading an index chunk), `encode` (writing one) and `specials`
//! (the bytes of special chunks). This module holds the entries themselves ([`ChunkLoc`],
//! [`Loc`], [`SpecialKind`]) and the unit tests.

#![forbid(unsafe_code)]

mod decode;
mod encode;
mod locs;
mod specials;

pub use decode::*;
pub use encode::*;
pub use locs::*;
pub use specials::*;

use super::chunkinfo::{special, EXTENDED_HEADER_LEN};
use crate::chunk::{self, CParams};
use crate::crc::Piece;
use crate::error::{Error, Result};

/// Special chunks that frames store as offsets rather than payloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecialKind {
    /// All zeros (`0x81` top byte).
    Zeros,
    /// All NaN (`0x82`).
    Nan,
    /// Uninitialised (`0x84`).
    Uninit,
}

impl SpecialKind {
    /// The chunk header special id (byte 31 bits 4-6).
    pub fn special_id(self) -> u8 {
        match self {
            SpecialKind::Zeros => special::ZERO,
            SpecialKind::Nan => special::NAN,
            SpecialKind::Uninit => special::UNINIT,
        }
    }

    /// The kind for a chunk header special id, if frames encode it as an offset.
    pub fn from_special_id(id: u8) -> Option<SpecialKind> {
        match id {
            special::ZERO => Some(SpecialKind::Zeros),
            special::NAN => Some(SpecialKind::Nan),
            special::UNINIT => Some(SpecialKind::Uninit),
            _ => None,
        }
    }
}

/// Where chunk `i` lives: the index entry itself, 8 bytes, as c-blosc2 keeps a frame's offsets
/// (a frame of a million chunks holds 8 MB of them, not 16). Read it with [`ChunkLoc::get`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChunkLoc(i64);

/// What a [`ChunkLoc`] says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Loc {
    /// cframe: byte offset from the end of the header; sframe: chunk-file id.
    Stored(u64),
    /// No payload: a special chunk synthesised on read.
    Special(SpecialKind),
}

/// The entry of each special kind (`0x8X00000000000000`).
const fn special_entry(k: SpecialKind) -> i64 {
    let id = match k {
        SpecialKind::Zeros => special::ZERO,
        SpecialKind::Nan => special::NAN,
        SpecialKind::Uninit => special::UNINIT,
    };
    ((0x80u64 | id as u64) << 56) as i64
}

impl ChunkLoc {
    /// A stored chunk: cframe data offset or sframe chunk-file id (below 2^63, as every
    /// offset a frame can hold).
    #[allow(non_snake_case)]
    pub const fn Stored(v: u64) -> ChunkLoc {
        ChunkLoc(v as i64)
    }

    /// A special chunk.
    #[allow(non_snake_case)]
    pub const fn Special(k: SpecialKind) -> ChunkLoc {
        ChunkLoc(special_entry(k))
    }

    /// Stored or special, and where or which.
    pub const fn get(self) -> Loc {
        match self.0 {
            v if v == special_entry(SpecialKind::Zeros) => Loc::Special(SpecialKind::Zeros),
            v if v == special_entry(SpecialKind::Nan) => Loc::Special(SpecialKind::Nan),
            v if v == special_entry(SpecialKind::Uninit) => Loc::Special(SpecialKind::Uninit),
            v => Loc::Stored(v as u64),
        }
    }

    /// The stored location, `None` for a special chunk.
    pub const fn stored(self) -> Option<u64> {
        match self.get() {
            Loc::Stored(v) => Some(v),
            Loc::Special(_) => None,
        }
    }

    /// Whether this is a stored chunk.
    pub const fn is_stored(self) -> bool {
        self.stored().is_some()
    }

    /// Decodes one index entry.
    pub fn from_entry(v: i64) -> Result<ChunkLoc> {
        if v >= 0 {
            return Ok(ChunkLoc(v));
        }
        // Same test order as the reference: zeros, uninit, NaN.
        let top = (v as u64) >> 56;
        if top & u64::from(special::ZERO) != 0 {
            Ok(ChunkLoc::Special(SpecialKind::Zeros))
        } else if top & u64::from(special::UNINIT) != 0 {
            Ok(ChunkLoc::Special(SpecialKind::Uninit))
        } else if top & u64::from(special::NAN) != 0 {
            Ok(ChunkLoc::Special(SpecialKind::Nan))
        } else {
            Err(Error::Data)
        }
    }

    /// Encodes one index entry (`0x8X00000000000000` for specials).
    pub const fn to_entry(self) -> i64 {
        self.0
    }
}

impl std::fmt::Debug for ChunkLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// Decodes index payload bytes (`nchunks * 8` little-endian int64s).
pub fn decode_entries(raw: &[u8]) -> Result<Vec<ChunkLoc>> {
    if !raw.len().is_multiple_of(8) {
        return Err(Error::Data);
    }
    raw.chunks_exact(8)
        .map(|e| ChunkLoc::from_entry(i64::from_le_bytes(e.try_into().unwrap_or([0; 8]))))
        .collect()
}

/// Encodes index payload bytes.
pub fn encode_entries(locs: &[ChunkLoc]) -> Vec<u8> {
    let mut out = Vec::with_capacity(locs.len() * 8);
    for l in locs {
        out.extend_from_slice(&l.0.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip() {
        assert_eq!(std::mem::size_of::<ChunkLoc>(), 8);
        let locs = vec![
            ChunkLoc::Stored(0),
            ChunkLoc::Special(SpecialKind::Zeros),
            ChunkLoc::Special(SpecialKind::Nan),
            ChunkLoc::Special(SpecialKind::Uninit),
            ChunkLoc::Stored(1234),
        ];
        let raw = encode_entries(&locs);
        assert_eq!(&raw[8..16], &[0, 0, 0, 0, 0, 0, 0, 0x81]);
        assert_eq!(&raw[16..24], &[0, 0, 0, 0, 0, 0, 0, 0x82]);
        assert_eq!(&raw[24..32], &[0, 0, 0, 0, 0, 0, 0, 0x84]);
        assert_eq!(decode_entries(&raw).unwrap(), locs);
        assert_eq!(ChunkLoc::from_entry(i64::MIN), Err(Error::Data));
        assert_eq!(
            ChunkLoc::from_entry(-1).unwrap(),
            ChunkLoc::Special(SpecialKind::Zeros)
        );
        assert_eq!(decode_entries(&raw[..7]), Err(Error::Data));
    }

    #[test]
    fn small_index_is_c_blosc2s_memcpyed_chunk() {
        // From a 3-chunk frame written by c-blosc2 3.3.5 (offsets 0, 0x3f04, 0x7e08).
        let expected: [u8; 56] = [
            0x05, 0x01, 0x07, 0x08, 0x18, 0, 0, 0, 0x18, 0, 0, 0, 0x38, 0, 0, 0, 0, 0, 0, 0, 0, 1,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x04, 0x3f, 0, 0, 0, 0, 0, 0,
            0x08, 0x7e, 0, 0, 0, 0, 0, 0,
        ];
        let locs = [
            ChunkLoc::Stored(0),
            ChunkLoc::Stored(0x3f04),
            ChunkLoc::Stored(0x7e08),
        ];
        assert_eq!(encode_index(&locs).unwrap(), expected);
        assert_eq!(
            decode_entries(&decompress_index(&expected).unwrap()).unwrap(),
            locs
        );
        // Truncated or inconsistent index chunks are errors.
        assert!(decompress_index(&expected[..50]).is_err());
        let mut bad = expected;
        bad[12] = 0x37;
        assert!(decompress_index(&bad).is_err());
    }

    #[test]
    fn decode_index_checks_every_entry_in_one_pass() {
        // 5000 entries: a compressed index of several 16 KiB blocks.
        let mut locs: Vec<ChunkLoc> = (0..5000u64).map(|i| ChunkLoc::Stored(i * 40)).collect();
        locs[4321] = ChunkLoc::Special(SpecialKind::Nan);
        let c = encode_index(&locs).unwrap();
        assert_eq!(c[2] & 0x02, 0, "expected a compressed index");
        assert_eq!(decode_index(&c, Some(4999 * 40)).unwrap(), locs);
        assert_eq!(decode_index(&c, Some(4999 * 40 - 1)), Err(Error::Data));
        assert_eq!(decode_index(&c, None), Err(Error::Data));
        // Memcpyed (small) indexes, and the same answers as decompress_index + decode_entries.
        let small = [ChunkLoc::Stored(7), ChunkLoc::Special(SpecialKind::Zeros)];
        let c = encode_index(&small).unwrap();
        assert_eq!(decode_index(&c, Some(7)).unwrap(), small);
        assert_eq!(decode_index(&c, Some(6)), Err(Error::Data));
        let specials = [ChunkLoc::Special(SpecialKind::Uninit); 2];
        assert_eq!(
            decode_index(&encode_index(&specials).unwrap(), None).unwrap(),
            specials
        );
        let mut bad = encode_index(&small).unwrap();
        bad[32 + 15] = 0x80; // entry 1 becomes 0x80000..., no special bit
        assert_eq!(decode_index(&bad, Some(7)), Err(Error::Data));
        assert!(decode_index(&c[..c.len() - 1], Some(7)).is_err());
    }

    /// An index may not name more stored chunks than the data section can hold: a few
    /// edited header bytes of a small frame (fuzzing found a ZERO index claiming 81 million
    /// entries, all stored offset 0) must fail before the entries are expanded. Repeats of one
    /// stored location count like distinct ones (chunks may share a location: such a frame's
    /// index of equal entries compresses to a ZERO or VALUE chunk, and must reopen).
    #[test]
    fn stored_entries_are_bounded_by_the_data_section() {
        let cp = CParams {
            typesize: 8,
            ..CParams::default()
        };
        let mut buf = [0u8; 64];
        // ZERO index: every entry is stored offset 0; 608 bytes of data hold at most
        // 608 / 16 + 2 = 40 entries.
        for (nbytes, ok) in [
            (8, true),
            (16, true),
            (8 * 40, true),
            (8 * 41, false),
            (654_311_448, false),
        ] {
            let n = chunk::special::zeros(&cp, nbytes, &mut buf).unwrap();
            let r = decode_index(&buf[..n], Some(608));
            assert_eq!(r.is_ok(), ok, "{nbytes}: {r:?}");
            if !ok {
                assert_eq!(r, Err(Error::Data));
            }
        }
        // VALUE index of a 16-byte value (two entries, one stored), repeated.
        let mut value = ChunkLoc::Special(SpecialKind::Nan)
            .to_entry()
            .to_le_bytes()
            .to_vec();
        value.extend_from_slice(&64i64.to_le_bytes());
        for (nbytes, ok) in [(16, true), (32, true), (16 * 50, false), (1 << 30, false)] {
            let cp16 = CParams {
                typesize: 16,
                ..CParams::default()
            };
            let n = chunk::special::repeatval(&cp16, nbytes, &mut buf, &value).unwrap();
            assert_eq!(decode_index(&buf[..n], Some(608)).is_ok(), ok, "{nbytes}");
        }
        // Compressed index of distinct offsets: at most max_stored / 16 + 2 of them.
        let locs: Vec<ChunkLoc> = (0..3000u64).map(ChunkLoc::Stored).collect();
        let c = encode_index(&locs).unwrap();
        assert_eq!(decode_index(&c, Some(2999)), Err(Error::Data));
        let bound = stored_entries_bound(Some(2999 * 16));
        assert!(bound >= 3000);
        assert_eq!(decode_index(&c, Some(2999 * 16)).unwrap(), locs);
        // Special entries are not bounded by the data section (the header bounds them).
        let locs = vec![ChunkLoc::Special(SpecialKind::Zeros); 3000];
        let c = encode_index(&locs).unwrap();
        assert_eq!(decode_index(&c, None).unwrap(), locs);
    }

    #[test]
    fn special_value_index_is_expanded() {
        let mut c = vec![5u8, 1, 0x05, 8];
        c.extend_from_slice(&24i32.to_le_bytes());
        c.extend_from_slice(&24i32.to_le_bytes());
        c.extend_from_slice(&40i32.to_le_bytes());
        c.extend_from_slice(&[0; 15]);
        c.push(0x30);
        c.extend_from_slice(
            &ChunkLoc::Special(SpecialKind::Zeros)
                .to_entry()
                .to_le_bytes(),
        );
        let locs = decode_entries(&decompress_index(&c).unwrap()).unwrap();
        assert_eq!(locs, vec![ChunkLoc::Special(SpecialKind::Zeros); 3]);
        assert_eq!(decode_index(&c, None).unwrap(), locs);
    }

    /// `decode_index` reads one-entry-repeated indexes (ZERO, 8-byte VALUE) without expanding
    /// them; its answers must be those of the expanding path for every kind of entry, with
    /// the same bound on stored entries ([`stored_entries_bound`]).
    #[test]
    fn repeated_entry_index_matches_the_expanding_path() {
        let expanded = |c: &[u8], max: Option<u64>| -> Result<Vec<ChunkLoc>> {
            let mut out = Vec::new();
            let mut budget = stored_entries_bound(max);
            push_entries(&decompress_index(c)?, max, &mut budget, &mut out)?;
            Ok(out)
        };
        let cp = CParams {
            typesize: 8,
            ..CParams::default()
        };
        let mut buf = [0u8; 64];
        for nbytes in [8i32, 24, 8 * 100_000] {
            let n = chunk::special::zeros(&cp, nbytes, &mut buf).unwrap();
            let zero = buf[..n].to_vec();
            let mut values = Vec::new();
            for entry in [
                ChunkLoc::Special(SpecialKind::Zeros).to_entry(),
                ChunkLoc::Special(SpecialKind::Nan).to_entry(),
                7,
                i64::MIN, // no special bit: Data
            ] {
                let n =
                    chunk::special::repeatval(&cp, nbytes, &mut buf, &entry.to_le_bytes()).unwrap();
                values.push(buf[..n].to_vec());
            }
            for c in std::iter::once(&zero).chain(&values) {
                for max in [None, Some(0), Some(6), Some(7), Some(1000)] {
                    assert_eq!(
                        decode_index(c, max).map(|l| l.to_vec()),
                        expanded(c, max),
                        "{nbytes} {max:?}"
                    );
                }
            }
        }
        // A VALUE index of 2^24 ZERO entries: the index of the 221-byte cframe python-blosc2
        // writes for `blosc2.zeros` of 2^24 chunks (BENCHMARKS.md, "Frames of millions of
        // special chunks").
        let n = chunk::special::repeatval(
            &cp,
            8 << 24,
            &mut buf,
            &ChunkLoc::Special(SpecialKind::Zeros)
                .to_entry()
                .to_le_bytes(),
        )
        .unwrap();
        let locs = decode_index(&buf[..n], None).unwrap();
        assert_eq!(locs.len(), 1 << 24);
        assert_eq!(locs.segments(), 1, "one run, not 2^24 entries");
        assert_eq!(
            locs.view().uniform(0, 1 << 24),
            Some(ChunkLoc::Special(SpecialKind::Zeros))
        );
    }

    #[test]
    fn special_chunk_bytes_match_reference() {
        // get_chunk(0) of a frame with an all-zero chunk, c-blosc2 3.3.5.
        let cases: [(i32, i32, i32, &str); 6] = [
            (
                8,
                80000,
                0,
                "0501050880380100803801002000000000000000000000000000000000000010",
            ),
            (
                8,
                4000000,
                0,
                "0501050800093d00000008002000000000000000000000000000000000000010",
            ),
            (
                3,
                99999,
                0,
                "050105039f8601009f8601002000000000000000000000000000000000000010",
            ),
            (
                8,
                100000,
                4096,
                "05010508a0860100001000002000000000000000000000000000000000000010",
            ),
            (
                1,
                200000,
                0,
                "05010501400d0300000001002000000000000000000000000000000000000010",
            ),
            (
                40,
                400000,
                0,
                "05010528801a0600e0ff01002000000000000000000000000000000000000010",
            ),
        ];
        for (ts, nb, bs, hex) in cases {
            let c = synthesise_special(SpecialKind::Zeros, ts, nb, bs);
            let h: String = c.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(h, hex, "ts {ts} nbytes {nb}");
        }
        assert_eq!(special_blocksize(8, 4, 0), 1);
    }

    #[test]
    fn regular_equivalents_decode_to_the_special_contents() {
        for (kind, ts, nb) in [
            (SpecialKind::Zeros, 8, 800_000),
            (SpecialKind::Zeros, 3, 1001),
            (SpecialKind::Uninit, 1, 5),
            (SpecialKind::Nan, 8, 8000),
            (SpecialKind::Nan, 4, 44),
        ] {
            let c = regular_equivalent(kind, ts, nb).unwrap();
            let out = crate::chunk::decompress_vec(&c).unwrap();
            assert_eq!(out.len(), nb as usize);
            let info = super::super::chunkinfo::ChunkInfo::parse(&c).unwrap();
            assert_eq!(
                (info.cbytes as usize, info.special),
                (c.len(), special::NONE)
            );
            match kind {
                SpecialKind::Nan if ts == 8 => assert!(out
                    .chunks(8)
                    .all(|x| f64::from_le_bytes(x.try_into().unwrap()).is_nan())),
                SpecialKind::Nan => assert!(out
                    .chunks(4)
                    .all(|x| f32::from_le_bytes(x.try_into().unwrap()).is_nan())),
                _ => assert!(out.iter().all(|&b| b == 0)),
            }
        }
        assert_eq!(regular_equivalent(SpecialKind::Nan, 2, 8), Err(Error::Data));
        assert_eq!(
            regular_equivalent(SpecialKind::Zeros, 8, 0),
            Err(Error::InvalidParam)
        );
    }
}
