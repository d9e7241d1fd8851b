//! BloscLZ: Blosc's own FastLZ-derived codec, encoder and decoder written for b2frame.
//!
//! Stream format (one Blosc2 block stream, no header): a sequence of instructions.
//! * Literal run: control byte `0b000c_cccc` then `c + 1` (1..=32) raw bytes. The first
//!   instruction is always a literal run and has bit 5 set as a format marker.
//! * Near match: `LLLd_dddd` + `dddd_dddd`, `L` in 1..=6 ⇒ `L + 2` bytes; `L = 7` inserts
//!   extension bytes (added to the length while they are 255) before the low distance byte.
//!   The source is `distance + 1` bytes back (13-bit distance, 0..=8190).
//! * Far match: the near-match escape distance 8191 (`d_dddd = 31`, low byte 255) is followed
//!   by a big-endian 16-bit offset; the source is `offset + 8192` bytes back.
//!
//! The encoder reproduces c-blosc2's choices (hash sizes, match/length rules, the "entropy
//! probing" that gives up on poorly compressible input) so chunk sizes match the reference;
//! see `encode`. The decoder follows the reference's acceptance rules exactly; see
//! `decode`.

#![forbid(unsafe_code)]

mod decode;
mod encode;
#[cfg(test)]
mod tests;

pub use decode::decompress;
pub use encode::compress;

/// Longest literal run one control byte can describe.
const MAX_COPY: usize = 32;
/// Largest (biased) distance a near match encodes; 8191 itself is the far-match escape.
const MAX_DISTANCE: usize = 8191;
/// Matches this far back (unbiased) or farther are not encodable.
const MAX_FARDISTANCE: usize = 65535 + MAX_DISTANCE - 1;
