//! Frame mutations, following c-blosc2 3.3 (docs/mutation.md#common-steps): payloads go to the end of the
//! data section (cframe) or to a new `%08X.chunk` file (sframe); then the offsets index, the
//! trailer and the header are rewritten and the frame truncated after the trailer.
//!
//! Deliberate differences (the reference's bugs, docs/divergences.md): chunks with `nbytes == 0` are refused
//! (a frame cannot count them); special offsets are only used while the chunksize is fixed
//! (their size is derived from it), so in a frame with variable chunk sizes ZERO/NaN/UNINIT
//! chunks are stored as regular chunks with the same contents
//! ([`offsets::regular_equivalent`]); a failed operation changes nothing, in memory or in the
//! storage: every mutation runs in a transaction whose storage writes go through an undo log
//! ([`undo::Undo`]).
//!
//! Submodules: `transaction` (the transaction and its commit), `chunks` (chunk-list
//! mutations), `metalayers`, `compact` (compacted copies), `commit` (the crash-safe commit of a
//! cframe file) and `undo` (the undo log).

#![forbid(unsafe_code)]

mod chunks;
mod commit;
mod compact;
mod metalayers;
mod transaction;
mod undo;

use super::chunkinfo::ChunkInfo;
use super::fingerprint::{self, Piece};
use super::header::{self, FrameType, MAX_METALAYERS, MAX_NCHUNKS};
use super::io::Store;
use super::offsets::{self, ChunkLoc, Loc, Locs, SpecialKind};
use super::trailer::{self, MAX_VLMETALAYERS_WRITE};
use super::{meta, Backing, Frame};
use crate::chunk::{CParams, DParams};
use crate::error::{Error, Result};
use undo::{OldLocs, Undo};

/// The length of the index write, the last of `writes`.
fn index_len_of(writes: &[(u64, Vec<u8>)]) -> u64 {
    writes.last().map_or(0, |(_, d)| d.len() as u64)
}

/// A frame's in-memory state but its offsets (kept by [`Undo::old_locs`]): header,
/// vlmetalayers.
type Saved = (header::FrameHeader, Vec<(String, Vec<u8>)>);

/// How a commit produces the index chunk.
#[derive(Clone, Copy)]
enum Index {
    /// Keep the stored one (metadata-only operations; c-blosc2 does not rewrite it then).
    Keep,
    /// Compress it anew with this many spare destination bytes (see
    /// [`offsets::encode_index_with_room`]).
    Encode(usize),
    /// As `fill_special` writes it: one SPECIAL_VALUE chunk of the first entry (every entry is
    /// the same; see [`offsets::encode_repeated_index`]).
    Repeated,
}

/// What a transaction may do to the existing offsets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Edit {
    /// Anything: the transaction keeps a copy of them for a rollback.
    Any,
    /// Only add entries after them (an append): they are not copied, and the commit neither
    /// re-checks nor compares them. Code that edits one anyway calls [`Undo::keep_old_locs`]
    /// first.
    Append,
}

/// What one transaction leaves for the next, so that appends to a large frame do not redo work
/// over all its chunks: the kept index blocks, the next free chunk-file id of an sframe and
/// buffers to reuse (an
/// in-memory frame's undo copies of the old index: allocated afresh on every append, they cost
/// page faults and heap trims that grew with the index).
#[derive(Debug, Default)]
pub(in crate::frame) struct Carry {
    /// The encoded blocks of the committed index (built by the first commit, dropped by a
    /// failed one).
    pub blocks: offsets::IndexBlocks,
    /// sframe: `(n, m)`: the first `n` offsets name no chunk file id at or above `m` (and `m`
    /// is one past the largest they name, 0 if none). Valid while those entries are unchanged:
    /// used only by append transactions ([`undo::OldLocs::Prefix`] of at least `n`), dropped
    /// by any other.
    file_ids: Option<(usize, u64)>,
    /// Emptied buffers for the undo log's copies (a few, as large as the index).
    spare: Vec<Vec<u8>>,
    /// The buffer the next index chunk is assembled in: an in-memory frame's last one.
    pub index: Vec<u8>,
}

impl Carry {
    /// The kept buffers, for a transaction's undo log.
    pub fn take_buffers(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.spare)
    }

    /// Keeps the largest few of `bufs` (emptied) for the next transaction.
    pub fn keep_buffers(&mut self, mut bufs: Vec<Vec<u8>>) {
        bufs.sort_unstable_by_key(|b| std::cmp::Reverse(b.capacity()));
        bufs.truncate(Carry::KEEP);
        for b in &mut bufs {
            b.clear();
        }
        self.spare = bufs;
    }

    /// How many buffers are kept: an append saves two ranges (what its payload and its new
    /// index overwrite).
    const KEEP: usize = 3;

    /// sframe: one past the largest chunk-file id `locs` name (0 if none), scanning only the
    /// entries past the known prefix when the transaction has left at least `unchanged`
    /// leading entries as they were.
    pub fn next_file_id(&self, locs: &offsets::Locs, unchanged: Option<usize>) -> u64 {
        let (n, m) = match (self.file_ids, unchanged) {
            (Some((n, m)), Some(p)) if n <= p && n <= locs.len() => (n, m),
            _ => (0, 0),
        };
        locs.view()
            .stored_range(n, locs.len())
            .map(|v| v.saturating_add(1))
            .max()
            .unwrap_or(0)
            .max(m)
    }

    /// After a transaction on an sframe: `unchanged` leading entries of `locs` are as they
    /// were when it began (`None`: any may have changed). Keeps the next-id bookkeeping
    /// valid for the next append.
    pub fn after_transaction(
        &mut self,
        locs: &offsets::Locs,
        unchanged: Option<usize>,
        sparse: bool,
    ) {
        self.file_ids = match unchanged {
            Some(_) if sparse => Some((locs.len(), self.next_file_id(locs, unchanged))),
            _ => None,
        };
    }
}

/// What a mutation does to the chunk list (for the chunksize bookkeeping).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Insert(usize),
    Update(usize),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::special;
    use crate::frame::Target;

    /// Typesize-4 cparams and a ZERO special chunk of `nbytes` made with them.
    fn zeros_chunk(nbytes: i32) -> (CParams, Vec<u8>) {
        let cp = CParams {
            typesize: 4,
            ..CParams::default()
        };
        let mut buf = [0u8; 64];
        let n = special::zeros(&cp, nbytes, &mut buf).unwrap();
        (cp, buf[..n].to_vec())
    }

    /// `fill_special` writes what c-blosc2 writes (the bytes are compared with the reference in
    /// tests/schunk/reference.rs): chunks that read back as the special kind with the right sizes,
    /// and the index as one 40-byte SPECIAL_VALUE chunk whatever the chunk count.
    #[test]
    fn fill_special_reads_back_with_a_40_byte_index() {
        let (cp, _) = zeros_chunk(4000);
        for (n, nbytes) in [
            (1i64, 4000i64),
            (1, 1200),
            (3, 9200),
            (1_000_000, 4_000_000_000),
        ] {
            let mut f = Frame::new_memory(&cp, &DParams::default()).unwrap();
            assert_eq!(
                f.fill_special(SpecialKind::Nan, n, nbytes, 4000, 4000),
                Ok(n)
            );
            assert_eq!(f.nchunks(), n);
            let cframe = f.to_cframe().unwrap();
            let h = &f.header;
            let index_at = (u64::from(h.header_len) + h.cbytes as u64) as usize;
            assert_eq!(cframe[index_at + 12..index_at + 16], 40i32.to_le_bytes());
            assert_eq!(
                cframe[index_at + 31] >> 4,
                super::super::chunkinfo::special::VALUE
            );
            let again = Frame::from_vec(cframe).unwrap();
            let last = n - 1;
            let want_last = nbytes - 4000 * last;
            let chunk = again.chunk(last).unwrap();
            let info = ChunkInfo::parse(&chunk).unwrap();
            assert_eq!(
                (info.nbytes as i64, info.special),
                (want_last, super::super::chunkinfo::special::NAN)
            );
            // The frame's blocksize, at most the chunk's nbytes.
            let bs = i64::from(i32::from_le_bytes(chunk[8..12].try_into().unwrap()));
            assert_eq!(bs, want_last.min(4000));
        }
    }

    /// A refused `fill_special` leaves the frame as it was.
    #[test]
    fn refused_fill_special_changes_nothing() {
        let (cp, zeros) = zeros_chunk(4000);
        let mut f = Frame::new_memory(&cp, &DParams::default()).unwrap();
        let empty = f.to_cframe().unwrap();
        let z = SpecialKind::Zeros;
        // A count past the chunk limit or under 1, nbytes that n chunks cannot hold.
        for (n, nbytes) in [
            (MAX_NCHUNKS + 1, 4000),
            (0, 0),
            (-2, 4000),
            (2, 4000),
            (2, 8001),
        ] {
            assert_eq!(
                f.fill_special(z, n, nbytes, 4000, 4000),
                Err(Error::InvalidParam)
            );
            assert_eq!(f.to_cframe().unwrap(), empty);
        }
        f.append_chunk(&zeros).unwrap();
        let before = f.to_cframe().unwrap();
        assert_eq!(
            f.fill_special(z, 2, 8000, 4000, 4000),
            Err(Error::FrameSpecial)
        );
        assert_eq!(f.nchunks(), 1);
        assert_eq!(f.to_cframe().unwrap(), before);
    }

    /// An append transaction keeps only the count of the old offsets; one that edits old
    /// entries (the switch to variable chunk sizes) and then fails still restores them, and an
    /// append that fails after adding entries drops them.
    #[test]
    fn failed_append_transactions_restore_the_offsets() {
        let (cp, zeros) = zeros_chunk(4000);
        let mut f = Frame::new_memory(&cp, &DParams::default()).unwrap();
        for _ in 0..3 {
            f.append_chunk(&zeros).unwrap();
        }
        let locs = f.locs.clone();
        let bytes = f.to_cframe().unwrap();
        assert!(locs.iter().all(|l| !l.is_stored()));
        let r: Result<()> = f.transaction_full(false, Index::Encode(0), Edit::Append, |f, u| {
            f.switch_to_variable(u)?;
            assert!(f.locs.iter().all(|l| l.is_stored()));
            f.locs.push(ChunkLoc::Stored(0));
            Err(Error::Failure)
        });
        assert_eq!(r, Err(Error::Failure));
        assert_eq!(
            (f.locs.clone(), f.to_cframe().unwrap()),
            (locs.clone(), bytes.clone())
        );
        let r: Result<()> = f.transaction_full(false, Index::Encode(0), Edit::Append, |f, _| {
            f.locs.push(ChunkLoc::Stored(0));
            Err(Error::Failure)
        });
        assert_eq!(r, Err(Error::Failure));
        assert_eq!((f.locs.clone(), f.to_cframe().unwrap()), (locs, bytes));
    }

    /// A failed append: stores a payload, then fails before the commit.
    fn failed_append(f: &mut Frame, payload: &[u8]) {
        let r: Result<()> = f.transaction_full(false, Index::Encode(0), Edit::Append, |f, u| {
            let loc = f.store_payload(payload, u)?;
            f.locs.push(loc);
            Err(Error::Failure)
        });
        assert_eq!(r, Err(Error::Failure));
    }

    /// The buffers appends reuse (the undo log's copies of the old index, the chunk the
    /// index blocks are assembled in) never leak old bytes: failed appends of a frame whose
    /// index spans several blocks leave its bytes as they were, and the frame reopens.
    #[test]
    fn appends_reusing_buffers_roll_back_and_reopen() {
        let cp = CParams {
            typesize: 4,
            ..CParams::default()
        };
        let mut f = Frame::new_memory(&cp, &DParams::default()).unwrap();
        let chunk = |i: u32| {
            let data: Vec<u8> = (0..250u32)
                .flat_map(|k| (k * 31 + i).to_le_bytes())
                .collect();
            crate::chunk::compress_vec(&cp, &data).unwrap()
        };
        let c = chunk(7);
        for i in 0..5000 {
            if i % 1000 == 999 {
                let before = f.to_cframe().unwrap();
                failed_append(&mut f, &chunk(i));
                assert_eq!(f.to_cframe().unwrap(), before, "after {i} appends");
            }
            f.append_chunk(&c).unwrap();
        }
        let g = Frame::from_vec(f.to_cframe().unwrap()).unwrap();
        assert_eq!(g.nchunks(), 5000);
        assert_eq!(&*g.chunk(4999).unwrap(), &c[..]);
    }

    /// A failed sframe append does not look for an old file of its fresh chunk id (past every
    /// id the committed index names): a leftover file there is removed by the rollback. A
    /// failed transaction that edited the old entries first (so the id it writes may be one
    /// the committed index names) restores that file.
    #[test]
    fn failed_sframe_writes_restore_only_named_chunk_files() {
        let d = crate::test_util::temp_dir("b2frame-mutate-fresh-");
        let path = d.path().join("s.b2frame");
        let (cp, _) = zeros_chunk(4000);
        let data: Vec<u8> = (0..4000u32).map(|i| (i * 7 % 251) as u8).collect();
        let full = crate::chunk::compress_vec(&cp, &data).unwrap();
        let other = crate::chunk::compress_vec(&cp, &[3u8; 4000]).unwrap();
        let mut f = Frame::create(Target::Sparse(&path), &cp, &DParams::default()).unwrap();
        f.append_chunk(&full).unwrap();
        f.append_chunk(&full).unwrap();
        let file = |id| crate::frame::sframe::chunk_path(&path, id).unwrap();
        // A leftover of a crashed append at the next id.
        std::fs::write(file(2), b"leftover").unwrap();
        failed_append(&mut f, &other);
        assert!(
            !file(2).exists(),
            "the rollback removes the fresh id's file"
        );
        // Dropping the last entry first: the payload goes to id 1, a committed file.
        let r: Result<()> = f.transaction_full(false, Index::Encode(0), Edit::Any, |f, u| {
            f.locs.truncate(1);
            let loc = f.store_payload(&other, u)?;
            assert_eq!(loc.stored(), Some(1));
            f.locs.push(loc);
            Err(Error::Failure)
        });
        assert_eq!(r, Err(Error::Failure));
        assert_eq!(std::fs::read(file(1)).unwrap(), full);
        drop(f);
        let g = Frame::open(&path).unwrap();
        assert_eq!(g.nchunks(), 2);
        assert_eq!(g.chunk(1).unwrap(), full);
    }

    /// sframe appends name a new chunk file one past the largest id the offsets name (what
    /// c-blosc2 does), from a count kept between appends: right after a failed append, a
    /// delete, and an append that turns special chunks into stored ones (which edits the
    /// existing entries, so the kept count does not apply).
    #[test]
    fn sframe_appends_name_the_next_chunk_file() {
        let d = crate::test_util::temp_dir("b2frame-mutate-ids-");
        let path = d.path().join("s.b2frame");
        let (cp, zeros) = zeros_chunk(4000);
        let data: Vec<u8> = (0..4000u32).map(|i| (i * 7 % 251) as u8).collect();
        let full = crate::chunk::compress_vec(&cp, &data).unwrap();
        let mut f = Frame::create(Target::Sparse(&path), &cp, &DParams::default()).unwrap();
        let ids = |f: &Frame| -> Vec<Option<u64>> { f.locs.iter().map(|l| l.stored()).collect() };
        f.append_chunk(&full).unwrap();
        f.append_chunk(&zeros).unwrap();
        f.append_chunk(&full).unwrap();
        assert_eq!(ids(&f), [Some(0), None, Some(1)]);
        failed_append(&mut f, &full);
        f.append_chunk(&full).unwrap();
        assert_eq!(ids(&f), [Some(0), None, Some(1), Some(2)]);
        f.delete_chunk(3).unwrap();
        f.append_chunk(&full).unwrap();
        assert_eq!(ids(&f), [Some(0), None, Some(1), Some(2)]);
        // Larger than the chunksize: the frame turns variable in this append.
        let big: Vec<u8> = (0..6000u32).map(|i| (i % 13) as u8).collect();
        let big = crate::chunk::compress_vec(&cp, &big).unwrap();
        f.append_chunk(&big).unwrap();
        assert_eq!(
            ids(&f),
            [Some(0), Some(3), Some(1), Some(2), Some(4)],
            "the special chunk is stored first, then the new one"
        );
        drop(f);
        let g = Frame::open(&path).unwrap();
        let want = [&full, &zeros, &full, &full, &big];
        for (i, c) in want.iter().enumerate() {
            let got = g.chunk(i as i64).unwrap();
            assert_eq!(
                crate::chunk::decompress_vec(&got).unwrap(),
                crate::chunk::decompress_vec(c).unwrap(),
                "chunk {i}"
            );
        }
    }
}
