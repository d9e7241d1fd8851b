//! LZ4 and LZ4HC raw blocks (chunk format code 1) through lz4-sys.
//!
//! Blosc2 stores every LZ4/LZ4HC stream as one raw LZ4 block (no frame, no size prefix): the
//! expected decoded size comes from the chunk (`neblock`). LZ4 runs with acceleration
//! `10 - clevel`, LZ4HC at level `clevel` (both facts from c-blosc2's codec wrappers).
//!
//! Why `unsafe` lives here: this module is an outbound FFI client of the C LZ4 library (the one
//! lz4-sys builds and links). Each call is a tiny `unsafe` block whose pointers come straight from
//! live slices, with lengths checked to fit in `c_int` first; LZ4's `*_safe` decoders and its
//! bounded (`dstCapacity`) encoders never touch memory outside the ranges they are given.
//! lz4-sys only declares part of the LZ4 API, so the extra entry points used here (external
//! state, streaming with a dictionary, HC streams) are declared below; they are in the same
//! static library lz4-sys links.
//!
//! Dictionaries follow c-blosc2: every block is compressed against the dictionary alone (the
//! worker's stream is reset to "dictionary only" before each block), so any block can be decoded
//! on its own with `LZ4_decompress_safe_usingDict`.

use crate::error::{Error, Result};
use std::ffi::{c_char, c_int, c_void};
use std::ptr::NonNull;

/// Opaque `LZ4_stream_t`.
#[repr(C)]
struct Lz4Stream {
    _opaque: [u8; 0],
}

/// Opaque `LZ4_streamHC_t`.
#[repr(C)]
struct Lz4StreamHc {
    _opaque: [u8; 0],
}

// Entry points of the LZ4 library that lz4-sys does not declare (all stable API of lz4 1.10,
// except the `_fastReset` ones, which are exported by the static library and documented in the
// "static linking only" section of lz4.h / lz4hc.h).
extern "C" {
    fn LZ4_createStream() -> *mut Lz4Stream;
    fn LZ4_freeStream(stream: *mut Lz4Stream) -> c_int;
    fn LZ4_loadDict(stream: *mut Lz4Stream, dict: *const c_char, dict_size: c_int) -> c_int;
    fn LZ4_compress_fast_continue(
        stream: *mut Lz4Stream,
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
        acceleration: c_int,
    ) -> c_int;
    fn LZ4_compress_fast_extState_fastReset(
        state: *mut c_void,
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
        acceleration: c_int,
    ) -> c_int;
    fn LZ4_decompress_safe_usingDict(
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
        dict: *const c_char,
        dict_size: c_int,
    ) -> c_int;
    fn LZ4_createStreamHC() -> *mut Lz4StreamHc;
    fn LZ4_freeStreamHC(stream: *mut Lz4StreamHc) -> c_int;
    fn LZ4_resetStreamHC_fast(stream: *mut Lz4StreamHc, level: c_int);
    fn LZ4_loadDictHC(stream: *mut Lz4StreamHc, dict: *const c_char, dict_size: c_int) -> c_int;
    fn LZ4_compress_HC_continue(
        stream: *mut Lz4StreamHc,
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
    ) -> c_int;
    fn LZ4_compress_HC_extStateHC_fastReset(
        state: *mut c_void,
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
        level: c_int,
    ) -> c_int;
}

/// Largest input LZ4 accepts (`LZ4_MAX_INPUT_SIZE`).
const MAX_INPUT: usize = 0x7E00_0000;

/// An owned, initialised `LZ4_stream_t` (created by `LZ4_createStream`, freed on drop).
struct FastStream(NonNull<Lz4Stream>);

impl FastStream {
    fn new() -> Option<Self> {
        // SAFETY: plain constructor; returns NULL on allocation failure, checked below.
        NonNull::new(unsafe { LZ4_createStream() }).map(FastStream)
    }
}

impl Drop for FastStream {
    fn drop(&mut self) {
        // SAFETY: the pointer came from LZ4_createStream and is freed exactly once.
        unsafe { LZ4_freeStream(self.0.as_ptr()) };
    }
}

// SAFETY: an LZ4 stream is plain heap memory with no thread affinity; `&mut` access through the
// owning CodecState guarantees one user at a time.
unsafe impl Send for FastStream {}

/// An owned, initialised `LZ4_streamHC_t` (created by `LZ4_createStreamHC`, freed on drop).
struct HcStream(NonNull<Lz4StreamHc>);

impl HcStream {
    fn new() -> Option<Self> {
        // SAFETY: plain constructor; returns NULL on allocation failure, checked below.
        NonNull::new(unsafe { LZ4_createStreamHC() }).map(HcStream)
    }
}

impl Drop for HcStream {
    fn drop(&mut self) {
        // SAFETY: the pointer came from LZ4_createStreamHC and is freed exactly once.
        unsafe { LZ4_freeStreamHC(self.0.as_ptr()) };
    }
}

// SAFETY: as for FastStream.
unsafe impl Send for HcStream {}

/// Per-worker LZ4 state: one stream for plain blocks and one for dictionary blocks, per
/// flavour, created on first use. Reusing them saves LZ4HC's 256 KiB allocation per call and
/// lets LZ4 skip re-zeroing its hash table (`_fastReset` entry points).
#[derive(Default)]
pub struct Lz4State {
    fast: Option<FastStream>,
    fast_dict: Option<FastStream>,
    hc: Option<HcStream>,
    hc_dict: Option<HcStream>,
}

fn fast_stream(slot: &mut Option<FastStream>) -> Option<*mut Lz4Stream> {
    if slot.is_none() {
        *slot = FastStream::new();
    }
    slot.as_ref().map(|s| s.0.as_ptr())
}

fn hc_stream(slot: &mut Option<HcStream>) -> Option<*mut Lz4StreamHc> {
    if slot.is_none() {
        *slot = HcStream::new();
    }
    slot.as_ref().map(|s| s.0.as_ptr())
}

/// Sizes as `c_int`, or `None` when the input is beyond what LZ4 takes (then the caller stores
/// the stream raw). The output capacity is clamped: LZ4 never needs more than its bound.
fn c_sizes(src: &[u8], dst: &[u8]) -> Option<(c_int, c_int)> {
    if src.is_empty() || src.len() > MAX_INPUT || dst.is_empty() {
        return None;
    }
    Some((
        src.len() as c_int,
        dst.len().min(c_int::MAX as usize) as c_int,
    ))
}

/// LZ4 acceleration for a Blosc2 clevel (`10 - clevel`, clevel clamped to 1..=9).
fn acceleration(clevel: u8) -> c_int {
    10 - c_int::from(clevel.clamp(1, 9))
}

/// LZ4 with acceleration `10 - clevel`; returns 0 when it does not fit.
pub fn compress(
    state: &mut Lz4State,
    clevel: u8,
    src: &[u8],
    dst: &mut [u8],
    dict: Option<&[u8]>,
) -> usize {
    let Some((n, cap)) = c_sizes(src, dst) else {
        return 0;
    };
    let accel = acceleration(clevel);
    let s = src.as_ptr() as *const c_char;
    let d = dst.as_mut_ptr() as *mut c_char;
    let written = match dict {
        Some(dict_bytes) => {
            let Some(stream) = fast_stream(&mut state.fast_dict) else {
                return 0;
            };
            // SAFETY: stream is a live LZ4_stream_t; dict_bytes (<= 32 KiB, checked by
            // CompressDict) outlives the compression call below, which is all LZ4 needs.
            unsafe {
                LZ4_loadDict(
                    stream,
                    dict_bytes.as_ptr() as *const c_char,
                    dict_bytes.len() as c_int,
                )
            };
            // SAFETY: src/dst are live, non-overlapping slices of n/cap bytes.
            unsafe { LZ4_compress_fast_continue(stream, s, d, n, cap, accel) }
        }
        None => {
            let Some(stream) = fast_stream(&mut state.fast) else {
                return 0;
            };
            // SAFETY: stream was initialised by LZ4_createStream (required by _fastReset);
            // src/dst are live, non-overlapping slices of n/cap bytes.
            unsafe {
                LZ4_compress_fast_extState_fastReset(stream as *mut c_void, s, d, n, cap, accel)
            }
        }
    };
    written.max(0) as usize
}

/// LZ4HC at level `clevel`; returns 0 when it does not fit.
pub fn compress_hc(
    state: &mut Lz4State,
    clevel: u8,
    src: &[u8],
    dst: &mut [u8],
    dict: Option<&[u8]>,
) -> usize {
    let Some((n, cap)) = c_sizes(src, dst) else {
        return 0;
    };
    let level = c_int::from(clevel.clamp(1, 9));
    let s = src.as_ptr() as *const c_char;
    let d = dst.as_mut_ptr() as *mut c_char;
    let written = match dict {
        Some(dict_bytes) => {
            let Some(stream) = hc_stream(&mut state.hc_dict) else {
                return 0;
            };
            // SAFETY: stream is a live, initialised LZ4_streamHC_t.
            unsafe { LZ4_resetStreamHC_fast(stream, level) };
            // SAFETY: dict_bytes outlives the compression call below.
            unsafe {
                LZ4_loadDictHC(
                    stream,
                    dict_bytes.as_ptr() as *const c_char,
                    dict_bytes.len() as c_int,
                )
            };
            // SAFETY: src/dst are live, non-overlapping slices of n/cap bytes.
            unsafe { LZ4_compress_HC_continue(stream, s, d, n, cap) }
        }
        None => {
            let Some(stream) = hc_stream(&mut state.hc) else {
                return 0;
            };
            // SAFETY: stream was initialised by LZ4_createStreamHC (required by _fastReset);
            // src/dst are live, non-overlapping slices of n/cap bytes.
            unsafe {
                LZ4_compress_HC_extStateHC_fastReset(stream as *mut c_void, s, d, n, cap, level)
            }
        }
    };
    written.max(0) as usize
}

/// Decodes a raw LZ4 block (LZ4 or LZ4HC output) into `dst`; returns the bytes produced.
pub fn decompress(src: &[u8], dst: &mut [u8], dict: Option<&[u8]>) -> Result<usize> {
    if src.len() > c_int::MAX as usize || dst.len() > c_int::MAX as usize {
        return Err(Error::Data);
    }
    if dst.is_empty() {
        return if src.is_empty() {
            Ok(0)
        } else {
            Err(Error::Data)
        };
    }
    let s = src.as_ptr() as *const c_char;
    let d = dst.as_mut_ptr() as *mut c_char;
    let (n, cap) = (src.len() as c_int, dst.len() as c_int);
    let got = match dict {
        // SAFETY: LZ4_decompress_safe* reads at most n bytes of src, writes at most cap bytes
        // of dst and only reads the dictionary range it is given, whatever src holds.
        Some(db) => unsafe {
            LZ4_decompress_safe_usingDict(
                s,
                d,
                n,
                cap,
                db.as_ptr() as *const c_char,
                db.len() as c_int,
            )
        },
        // SAFETY: as above.
        None => unsafe { lz4_sys::LZ4_decompress_safe(s, d, n, cap) },
    };
    if got < 0 {
        return Err(Error::Data);
    }
    Ok(got as usize)
}

/// "major.minor.release" of the linked LZ4.
pub fn version() -> String {
    // SAFETY: LZ4_versionNumber takes no arguments and only returns a constant.
    let n = unsafe { lz4_sys::LZ4_versionNumber() };
    format!("{}.{}.{}", n / 10000, (n / 100) % 100, n % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(len: usize) -> Vec<u8> {
        (0..len).map(|i| ((i / 7) % 251) as u8).collect()
    }

    #[test]
    fn round_trip_both_flavours_reusing_state() {
        let mut st = Lz4State::default();
        for len in [1usize, 15, 100, 4096, 70_000] {
            let src = sample(len);
            for clevel in 1..=9u8 {
                for hc in [false, true] {
                    let mut c = vec![0u8; len + 64];
                    let n = if hc {
                        compress_hc(&mut st, clevel, &src, &mut c, None)
                    } else {
                        compress(&mut st, clevel, &src, &mut c, None)
                    };
                    assert!(n > 0, "len {len} clevel {clevel} hc {hc}");
                    let mut out = vec![0u8; len];
                    assert_eq!(decompress(&c[..n], &mut out, None), Ok(len));
                    assert_eq!(out, src);
                }
            }
        }
    }

    #[test]
    fn empty_or_tiny_output_does_not_fit() {
        let mut st = Lz4State::default();
        let src = sample(1000);
        assert_eq!(compress(&mut st, 5, &src, &mut [], None), 0);
        assert_eq!(compress(&mut st, 5, &src, &mut [0u8; 3], None), 0);
        assert_eq!(compress_hc(&mut st, 5, &src, &mut [0u8; 3], None), 0);
        assert_eq!(compress(&mut st, 5, &[], &mut [0u8; 16], None), 0);
    }

    #[test]
    fn garbage_is_an_error_not_a_crash() {
        let mut out = vec![0u8; 100];
        assert_eq!(decompress(&[], &mut out, None), Err(Error::Data));
        assert_eq!(decompress(&[0xF0, 1, 2], &mut out, None), Err(Error::Data));
    }
}
