//! Filters: the reversible (and one lossy) transforms applied to a block before its codec, and
//! the 6-slot pipeline that runs them.
//!
//! Filter ids (`BLOSC_*`): 0 none, 1 shuffle, 2 bitshuffle, 3 delta, 4 trunc_prec; 5..=31 are
//! reserved (an error), 32..=255 (registered plugins and user filters) are delegated to a
//! [`UserFilters`] hook. The forward pipeline runs slots 0..6 in order; the backward pipeline runs
//! them in reverse and skips trunc_prec (it has no inverse).
//!
//! Shuffle and bitshuffle kernels are chosen once per process ([`simd_level`], `B2FRAME_SIMD`).

pub mod bitshuffle;
pub mod bytedelta;
pub mod delta;
pub mod int_trunc;
pub mod ndcell;
pub mod ndmean;
pub mod shuffle;
pub mod table;
pub mod trunc_prec;

use crate::error::{Error, Result};

pub use bitshuffle::{bitshuffle, bitunshuffle, bitunshuffle_legacy};
pub use shuffle::{shuffle, simd_level, unshuffle, Simd};
pub use table::{Filter, FilterInfo};

/// `BLOSC_NOFILTER`.
pub const NOFILTER: u8 = 0;
/// `BLOSC_SHUFFLE`.
pub const SHUFFLE: u8 = 1;
/// `BLOSC_BITSHUFFLE`.
pub const BITSHUFFLE: u8 = 2;
/// `BLOSC_DELTA`.
pub const DELTA: u8 = 3;
/// `BLOSC_TRUNC_PREC`.
pub const TRUNC_PREC: u8 = 4;
/// Number of pipeline slots (`BLOSC2_MAX_FILTERS`).
pub const MAX_FILTERS: usize = 6;
/// Last id reserved for built-in filters (`BLOSC2_DEFINED_FILTERS_STOP`).
pub const DEFINED_FILTERS_STOP: u8 = 31;

/// What the pipeline needs to know about one block.
#[derive(Clone, Copy, Debug)]
pub struct BlockInfo<'a> {
    /// Header typesize (1 when the real typesize is > 255).
    pub typesize: usize,
    /// Filter ids of the 6 slots.
    pub filters: [u8; 6],
    /// Per-slot meta bytes (shuffle: element size if non-zero; trunc_prec: signed precision).
    pub filters_meta: [u8; 6],
    /// Byte offset of the block in the chunk; 0 for block 0 and for VL blocks.
    pub offset: usize,
    /// Delta reference. Forward: the original unfiltered chunk (from its start). Backward: the
    /// fully decoded block 0. Ignored when `offset == 0`.
    pub dref: &'a [u8],
    /// Chunk format version byte 2 (Blosc1): legacy bitshuffle rule on decode.
    pub legacy_bitshuffle: bool,
}

/// Filters with ids 32..=255, supplied by the layer that knows about registered filters.
pub trait UserFilters: Sync {
    /// Applies filter `id` with meta `meta` from `src` into `dst` (same length).
    fn forward(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Result<()>;
    /// Undoes filter `id` from `src` into `dst` (same length).
    fn backward(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Result<()>;
}

/// Shuffle element size of slot `i`: its meta byte if non-zero, else the typesize.
fn shuffle_size(info: &BlockInfo, i: usize) -> usize {
    match info.filters_meta[i] {
        0 => info.typesize,
        m => usize::from(m),
    }
}

/// Which buffer holds the current data.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cur {
    Src,
    B1,
    B2,
}

/// Runs the forward pipeline on one block (`src`), using `buf1`/`buf2` (each at least
/// `src.len()` bytes) as scratch, and returns the filtered block: `src` itself when no slot
/// does anything, else a prefix of `buf1` or `buf2`.
///
/// Errors: `FilterPipeline` for a reserved id (5..=31), a user id without a hook (or refused by
/// it), scratch buffers too small, or a delta reference too short; trunc_prec errors likewise.
pub fn forward<'a>(
    info: &BlockInfo,
    src: &'a [u8],
    buf1: &'a mut [u8],
    buf2: &'a mut [u8],
    user: Option<&dyn UserFilters>,
) -> Result<&'a [u8]> {
    let n = src.len();
    if info.filters.iter().any(|&f| f != NOFILTER) && (buf1.len() < n || buf2.len() < n) {
        return Err(Error::FilterPipeline);
    }
    let mut cur = Cur::Src;
    for i in 0..MAX_FILTERS {
        let id = info.filters[i];
        if id == NOFILTER {
            continue;
        }
        let (input, output, next): (&[u8], &mut [u8], Cur) = match cur {
            Cur::Src => (src, &mut buf1[..n], Cur::B1),
            Cur::B1 => (&buf1[..n], &mut buf2[..n], Cur::B2),
            Cur::B2 => (&buf2[..n], &mut buf1[..n], Cur::B1),
        };
        match id {
            SHUFFLE => shuffle(shuffle_size(info, i), input, output),
            BITSHUFFLE => bitshuffle(info.typesize, input, output),
            DELTA => delta::encode(info.typesize, info.offset, info.dref, input, output)?,
            TRUNC_PREC => {
                trunc_prec::encode(info.typesize, info.filters_meta[i] as i8, input, output)?
            }
            id if id <= DEFINED_FILTERS_STOP => return Err(Error::FilterPipeline),
            id => user
                .ok_or(Error::FilterPipeline)?
                .forward(id, info.filters_meta[i], input, output)
                .map_err(|_| Error::FilterPipeline)?,
        }
        cur = next;
    }
    Ok(match cur {
        Cur::Src => src,
        Cur::B1 => &buf1[..n],
        Cur::B2 => &buf2[..n],
    })
}

/// Runs the backward pipeline in place on `buf` (one filtered block), with `tmp` (at least
/// `buf.len()` bytes) as scratch: slots in reverse order, trunc_prec skipped.
///
/// Errors as [`forward`], except that a failing user filter's own error is returned, as
/// c-blosc2 does when decompressing.
pub fn backward(
    info: &BlockInfo,
    buf: &mut [u8],
    tmp: &mut [u8],
    user: Option<&dyn UserFilters>,
) -> Result<()> {
    let n = buf.len();
    let needs_tmp = info
        .filters
        .iter()
        .any(|&f| f != NOFILTER && f != DELTA && f != TRUNC_PREC);
    if needs_tmp && tmp.len() < n {
        return Err(Error::FilterPipeline);
    }
    // `in_tmp`: the current data lives in tmp[..n] rather than buf.
    let mut in_tmp = false;
    for i in (0..MAX_FILTERS).rev() {
        let id = info.filters[i];
        if id == NOFILTER || id == TRUNC_PREC {
            continue;
        }
        if id == DELTA {
            let data = if in_tmp { &mut tmp[..n] } else { &mut *buf };
            delta::decode(info.typesize, info.offset, info.dref, data)?;
            continue;
        }
        let (input, output): (&[u8], &mut [u8]) = if in_tmp {
            (&tmp[..n], &mut *buf)
        } else {
            (&*buf, &mut tmp[..n])
        };
        match id {
            SHUFFLE => unshuffle(shuffle_size(info, i), input, output),
            BITSHUFFLE if info.legacy_bitshuffle => {
                bitunshuffle_legacy(info.typesize, input, output)
            }
            BITSHUFFLE => bitunshuffle(info.typesize, input, output),
            id if id <= DEFINED_FILTERS_STOP => return Err(Error::FilterPipeline),
            id => user
                .ok_or(Error::FilterPipeline)?
                .backward(id, info.filters_meta[i], input, output)
                // c-blosc2 returns what a failing filter returned when decompressing.
                ?,
        }
        in_tmp = !in_tmp;
    }
    if in_tmp {
        buf.copy_from_slice(&tmp[..n]);
    }
    Ok(())
}
