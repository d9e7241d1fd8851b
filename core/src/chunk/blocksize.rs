//! Block size and split rules (c-blosc2's built-in tuner, "stune").
//!
//! A chunk is cut into blocks of `blocksize` bytes (the last one may be shorter); each block is
//! compressed on its own, as `typesize` byte-significance streams when it is *split*. The sizes
//! here are the ones c-blosc2 picks, so our chunks have the same block structure and nearly the
//! same compressed size. Unlike c-blosc2 3.0-3.3 we always write the *effective* block size in
//! the header (c-blosc2 writes the requested one, which makes chunks undecodable when the two
//! differ).

use crate::codecs;
use crate::filters;

/// `BLOSC_ALWAYS_SPLIT`.
pub const ALWAYS_SPLIT: i32 = 1;
/// `BLOSC_NEVER_SPLIT`.
pub const NEVER_SPLIT: i32 = 2;
/// `BLOSC_AUTO_SPLIT`.
pub const AUTO_SPLIT: i32 = 3;
/// `BLOSC_FORWARD_COMPAT_SPLIT`.
pub const FORWARD_COMPAT_SPLIT: i32 = 4;

/// Typesizes above this are never split (`MAX_STREAMS`).
const MAX_STREAMS: i32 = 16;
/// The base block size (`L1`).
const L1: i32 = 32 * 1024;

/// Whether blocks are split into `typesize` streams (`split_block`). `typesize` and `blocksize`
/// are the values the caller is deciding for; unknown split modes behave like AUTO.
pub fn split_block(
    splitmode: i32,
    compcode: u8,
    clevel: u8,
    filters: &[u8; 6],
    typesize: i32,
    blocksize: i32,
) -> bool {
    match splitmode {
        ALWAYS_SPLIT => return true,
        NEVER_SPLIT => return false,
        _ => {}
    }
    let codec_ok = compcode == codecs::BLOSCLZ
        || compcode == codecs::LZ4
        || (compcode == codecs::ZSTD && clevel <= 5);
    codec_ok
        && filters.contains(&filters::SHUFFLE)
        && typesize <= MAX_STREAMS
        && typesize > 0
        && blocksize / typesize >= super::header::MIN_BUFFERSIZE
}

/// Codecs meant for high compression ratios get larger blocks.
fn is_hcr(compcode: u8) -> bool {
    matches!(compcode, codecs::LZ4HC | codecs::ZLIB | codecs::ZSTD)
}

/// The effective block size for `nbytes` bytes (`blosc_stune_next_blocksize`). `typesize` is
/// the caller's real typesize (before the > 255 cap); `requested` is the cparams blocksize
/// (0 = automatic). Always ≥ 1.
pub fn compute_blocksize(
    compcode: u8,
    clevel: u8,
    typesize: i32,
    splitmode: i32,
    filters: &[u8; 6],
    nbytes: i32,
    requested: i32,
) -> i32 {
    let typesize = typesize.max(1);
    if nbytes < typesize {
        return 1;
    }
    let split = split_block(splitmode, compcode, clevel, filters, typesize, nbytes);
    let mut bs = nbytes;
    if requested > 0 {
        bs = requested;
    } else {
        if nbytes >= L1 {
            bs = L1;
            if is_hcr(compcode) {
                bs *= 2;
            }
            match clevel {
                0 => bs /= 4,
                1 => bs /= 2,
                2 => {}
                3 => bs *= 2,
                4 | 5 => bs *= 4,
                6..=8 => bs *= 8,
                9 => {
                    bs *= 8;
                    if is_hcr(compcode) {
                        bs *= 2;
                    }
                }
                _ => {}
            }
        }
        if clevel > 0 && split {
            let per_item: i64 = match clevel {
                1..=3 => 32 * 1024,
                4..=6 => 64 * 1024,
                7 => 128 * 1024,
                8 => 256 * 1024,
                _ => 512 * 1024,
            };
            let b = (per_item * typesize as i64).clamp(32 * 1024, 4 * 1024 * 1024);
            bs = b as i32;
        }
    }
    if bs > nbytes {
        bs = nbytes;
    }
    if bs > typesize {
        bs = bs / typesize * typesize;
    }
    bs.max(1)
}

/// How a chunk of `nbytes` bytes is cut into blocks with `cp`, as every chunk writer computes
/// it: [`compute_blocksize`], then [`split_block`] on the effective size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Blocks {
    /// The item size the header, the filters and the split see (1 when the real typesize
    /// exceeds the header's 255).
    pub typesize: usize,
    pub blocksize: usize,
    pub nblocks: usize,
    /// Bytes of the short last block (0: every block is whole).
    pub leftover: usize,
    /// Blocks are compressed whole, not as one stream per byte of an item (also when the
    /// blocksize holds no whole number of items, where streams would miss bytes).
    pub dont_split: bool,
}

/// [`Blocks`] of a chunk of `nbytes` bytes written with `cp`.
pub(crate) fn blocks_of(cp: &super::CParams, nbytes: usize) -> Blocks {
    let typesize = if cp.typesize > super::header::MAX_HEADER_TYPESIZE {
        1
    } else {
        cp.typesize as usize
    };
    let blocksize = compute_blocksize(
        cp.compcode,
        cp.clevel,
        cp.typesize,
        cp.splitmode,
        &cp.filters,
        nbytes as i32,
        cp.blocksize,
    ) as usize;
    let dont_split = !split_block(
        cp.splitmode,
        cp.compcode,
        cp.clevel,
        &cp.filters,
        typesize as i32,
        blocksize as i32,
    ) || !blocksize.is_multiple_of(typesize);
    Blocks {
        typesize,
        blocksize,
        nblocks: nbytes.div_ceil(blocksize),
        leftover: nbytes % blocksize,
        dont_split,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const SH: [u8; 6] = [0, 0, 0, 0, 0, 1];
    const NO: [u8; 6] = [0; 6];

    #[test]
    fn automatic_sizes() {
        // blosclz clevel 5 shuffle typesize 8: split -> 64 KiB * 8 = 512 KiB
        assert_eq!(compute_blocksize(0, 5, 8, 4, &SH, 4 << 20, 0), 512 * 1024);
        // no split (no shuffle): 32 KiB * 4
        assert_eq!(compute_blocksize(0, 5, 8, 4, &NO, 4 << 20, 0), 128 * 1024);
        // zstd clevel 9 (no split): 32K*2*8*2
        assert_eq!(compute_blocksize(5, 9, 8, 4, &SH, 4 << 20, 0), 1 << 20);
        // clevel 0
        assert_eq!(compute_blocksize(0, 0, 8, 4, &SH, 4 << 20, 0), 8 * 1024);
        // small inputs
        assert_eq!(compute_blocksize(0, 5, 8, 4, &SH, 1000, 0), 1000);
        assert_eq!(compute_blocksize(0, 5, 8, 4, &SH, 1001, 0), 1000);
        assert_eq!(compute_blocksize(0, 5, 8, 4, &SH, 7, 0), 1);
        assert_eq!(compute_blocksize(0, 5, 300, 4, &SH, 1000, 0), 900);
    }

    #[test]
    fn requested_sizes_are_rounded_to_typesize() {
        assert_eq!(compute_blocksize(0, 5, 8, 4, &SH, 40004, 65536), 40000);
        assert_eq!(compute_blocksize(0, 5, 8, 4, &SH, 1 << 20, 1001), 1000);
        assert_eq!(compute_blocksize(0, 5, 8, 4, &SH, 1 << 20, 4), 4);
    }

    #[test]
    fn split_rule() {
        assert!(split_block(4, 0, 5, &SH, 8, 8 * 32));
        assert!(!split_block(4, 0, 5, &SH, 8, 8 * 31));
        assert!(!split_block(4, 0, 5, &SH, 17, 1 << 20));
        assert!(!split_block(4, 2, 5, &SH, 8, 1 << 20));
        assert!(split_block(4, 5, 5, &SH, 8, 1 << 20));
        assert!(!split_block(4, 5, 6, &SH, 8, 1 << 20));
        assert!(split_block(1, 4, 5, &NO, 8, 8));
        assert!(!split_block(2, 0, 5, &SH, 8, 1 << 20));
    }
}
