//! ZFP (compcodes 33, 34, 35): lossy compression of `f32`/`f64` blocks of an n-dimensional
//! array with the zfp library in fixed-accuracy, fixed-precision or fixed-rate mode. This is an
//! outbound FFI client of zfp 1.0.1 (the version c-blosc2 3.3.5 bundles, built from source by
//! the `zfp-sys` crate), so the streams are the ones c-blosc2 writes.
//!
//! The block geometry comes from the `b2nd` metalayer: zfp compresses one block as a field of
//! `blockshape` (1 to 4 dimensions, each at least 4 items), so a stream must hold a whole
//! block; anything else (a split stream, a short last block) is stored raw, as in c-blosc2.
//! The codec's meta byte selects the quality:
//! * accuracy: tolerance `10^meta` (meta read as a signed byte);
//! * precision: `meta + 2*ndim + 3` bit planes, at most 64;
//! * rate: `meta / 100` of the input size, in bits per value.
//!
//! The encoder uses the chunk's typesize, the decoder the super-chunk's (4 or 8), as c-blosc2
//! does. zfp's bit-stream reader has no bounds checks, so [`decompress`] never hands it the
//! caller's bytes: it decodes from a zero-padded copy large enough for the most bits any
//! stream, valid or forged, can make zfp read for that geometry and mode.

use crate::error::{Error, Result};
use std::ffi::c_void;
use zfp_sys as z;

/// compcode of fixed-accuracy ZFP (`BLOSC_CODEC_ZFP_FIXED_ACCURACY`).
pub const ZFP_ACC: u8 = 33;
/// compcode of fixed-precision ZFP.
pub const ZFP_PREC: u8 = 34;
/// compcode of fixed-rate ZFP.
pub const ZFP_RATE: u8 = 35;

/// The zfp library version, as `zfp_version_string` spells it.
pub const ZFP_VERSION: &str = "1.0.1";

/// Most dimensions zfp handles.
const MAX_DIM: usize = 4;

/// A zfp stream owning its bitstream, closed on drop.
struct Stream {
    zfp: *mut z::zfp_stream,
    bits: *mut z::bitstream,
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: both pointers came from zfp's open functions (or are NULL, which its close
        // functions accept) and are closed exactly once, here.
        unsafe {
            z::zfp_stream_close(self.zfp);
            z::stream_close(self.bits);
        }
    }
}

/// A zfp field descriptor, freed on drop.
struct Field(*mut z::zfp_field);

impl Drop for Field {
    fn drop(&mut self) {
        // SAFETY: created by zfp_field_*d, freed once.
        unsafe { z::zfp_field_free(self.0) }
    }
}

/// The three modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Accuracy,
    Precision,
    Rate,
}

fn mode_of(compcode: u8) -> Result<Mode> {
    match compcode {
        ZFP_ACC => Ok(Mode::Accuracy),
        ZFP_PREC => Ok(Mode::Precision),
        ZFP_RATE => Ok(Mode::Rate),
        _ => Err(Error::CodecSupport),
    }
}

fn zfp_type(typesize: i32) -> Result<z::zfp_type> {
    match typesize {
        4 => Ok(z::zfp_type_zfp_type_float),
        8 => Ok(z::zfp_type_zfp_type_double),
        _ => Err(Error::Failure),
    }
}

/// Opens a stream over `buf` (64-bit words) with the mode set as c-blosc2 sets it.
fn open(
    mode: Mode,
    meta: u8,
    ty: z::zfp_type,
    ndim: usize,
    typesize: i32,
    buf: &mut [u64],
) -> Stream {
    // SAFETY: zfp_stream_open(NULL) allocates a stream with default parameters; stream_open
    // wraps `buf`, which outlives the returned Stream at every call site (the callers keep the
    // buffer alive until the stream is dropped); the setters only write the stream struct.
    unsafe {
        let zfp = z::zfp_stream_open(std::ptr::null_mut());
        let bits = z::stream_open(buf.as_mut_ptr() as *mut c_void, buf.len() * 8);
        if !zfp.is_null() {
            match mode {
                Mode::Accuracy => {
                    z::zfp_stream_set_accuracy(zfp, 10f64.powf(f64::from(meta as i8)));
                }
                Mode::Precision => {
                    let prec = (u32::from(meta) + 2 * ndim as u32 + 3).min(z::ZFP_MAX_PREC);
                    z::zfp_stream_set_precision(zfp, prec);
                }
                Mode::Rate => {
                    let rate = f64::from(meta) / 100.0 * f64::from(typesize) * 8.0;
                    z::zfp_stream_set_rate(zfp, rate, ty, ndim as u32, 0);
                }
            }
            if !bits.is_null() {
                z::zfp_stream_set_bit_stream(zfp, bits);
                z::zfp_stream_rewind(zfp);
            }
        }
        Stream { zfp, bits }
    }
}

/// A field of `ty` items over `ptr` with the b2nd block shape (zfp lists the fastest
/// dimension first).
///
/// # Safety
/// `ptr` must be valid for `prod(shape) * typesize` bytes while the field is used.
unsafe fn field(ptr: *mut c_void, ty: z::zfp_type, shape: &[usize]) -> Field {
    // SAFETY: zfp_field_*d only stores the pointer and sizes.
    Field(unsafe {
        match *shape {
            [a] => z::zfp_field_1d(ptr, ty, a),
            [a, b] => z::zfp_field_2d(ptr, ty, b, a),
            [a, b, c] => z::zfp_field_3d(ptr, ty, c, b, a),
            [a, b, c, d] => z::zfp_field_4d(ptr, ty, d, c, b, a),
            _ => std::ptr::null_mut(),
        }
    })
}

/// Compresses one block. `Ok(0)`: store raw (not a whole block, or no gain). Errors
/// (`Failure`) where c-blosc2's encoder returns an error: no or bad geometry, sides under 4,
/// typesize other than 4 or 8.
pub fn compress(
    compcode: u8,
    meta: u8,
    typesize: i32,
    blockshape: &[i32],
    src: &[u8],
    dst: &mut [u8],
) -> Result<usize> {
    let mode = mode_of(compcode)?;
    let ndim = blockshape.len();
    if ndim == 0 || ndim > MAX_DIM {
        return Err(Error::Failure);
    }
    if blockshape.iter().any(|&b| b < 4) {
        return Err(Error::Failure);
    }
    let shape: Vec<usize> = blockshape.iter().map(|&b| b as usize).collect();
    let mut nbytes = typesize.max(0) as u64;
    for &s in &shape {
        nbytes = nbytes.saturating_mul(s as u64);
    }
    if nbytes != src.len() as u64 {
        return Ok(0);
    }
    let ty = zfp_type(typesize)?;
    // The input is only read by zfp_compress; zfp's field API takes a mutable pointer.
    let mut input = src.to_vec();
    // SAFETY: `input` holds exactly prod(shape) * typesize bytes (checked above) and lives
    // until the end of this function, after every use of the field.
    let f = unsafe { field(input.as_mut_ptr() as *mut c_void, ty, &shape) };
    if f.0.is_null() {
        return Err(Error::MemoryAlloc);
    }
    let mut probe = [0u64; 1];
    let s0 = open(mode, meta, ty, ndim, typesize, &mut probe);
    if s0.zfp.is_null() {
        return Err(Error::MemoryAlloc);
    }
    // SAFETY: a live stream and field.
    let maxsize = unsafe { z::zfp_stream_maximum_size(s0.zfp, f.0) };
    drop(s0);
    let mut out = vec![0u64; maxsize.div_ceil(8) + 1];
    let s = open(mode, meta, ty, ndim, typesize, &mut out);
    if s.zfp.is_null() || s.bits.is_null() {
        return Err(Error::MemoryAlloc);
    }
    // SAFETY: the stream writes at most `maxsize` bytes into `out` (zfp's own bound for this
    // stream and field) and reads the field's `input`.
    let n = unsafe { z::zfp_compress(s.zfp, f.0) };
    drop(s);
    if n == 0 || n >= src.len() {
        return Ok(0);
    }
    if n > dst.len() {
        return Err(Error::WriteBuffer);
    }
    for (d, w) in dst[..n].chunks_mut(8).zip(&out) {
        d.copy_from_slice(&w.to_ne_bytes()[..d.len()]);
    }
    Ok(n)
}

/// Bits zfp may read for one block in this mode, valid stream or not: the sign/exponent
/// header plus, per bit plane, the verbatim bits and the unary run-length tests (at most
/// `2 * values + 1`), capped by the stream's `maxbits` and raised to its `minbits` (fixed
/// rate skips to `minbits`).
fn block_read_bound(st: &z::zfp_stream, ndim: usize, typesize: i32) -> u64 {
    let values = 1u64 << (2 * ndim);
    let intprec = 8 * typesize as u64;
    let planes = intprec.min(u64::from(st.maxprec));
    let header = if typesize == 4 { 1 + 8 } else { 1 + 11 };
    let bound = header + planes * (2 * values + 1);
    bound
        .min(u64::from(st.maxbits))
        .max(u64::from(st.minbits))
        .max(header)
}

/// Decompresses one block into `dst` (c-blosc2 reports the whole `dst.len()` on success).
pub fn decompress(
    compcode: u8,
    meta: u8,
    typesize: i32,
    blockshape: &[i32],
    src: &[u8],
    dst: &mut [u8],
) -> Result<usize> {
    let mode = mode_of(compcode)?;
    let ndim = blockshape.len();
    if ndim == 0 || ndim > MAX_DIM || typesize <= 0 {
        return Err(Error::Failure);
    }
    let mut nbytes = typesize as u64;
    for &b in blockshape {
        if b <= 0 {
            return Err(Error::Failure);
        }
        nbytes = nbytes.saturating_mul(b as u64);
        if nbytes > dst.len() as u64 {
            return Err(Error::Failure);
        }
    }
    let ty = zfp_type(typesize)?;
    let shape: Vec<usize> = blockshape.iter().map(|&b| b as usize).collect();
    let blocks: u64 = shape.iter().map(|&s| s.div_ceil(4) as u64).product();
    let mut probe = [0u64; 1];
    let s0 = open(mode, meta, ty, ndim, typesize, &mut probe);
    if s0.zfp.is_null() {
        return Err(Error::MemoryAlloc);
    }
    // SAFETY: a live stream struct, read only.
    let per_block = block_read_bound(unsafe { &*s0.zfp }, ndim, typesize);
    drop(s0);
    let words = blocks
        .checked_mul(per_block)
        .map(|bits| bits.div_ceil(64) + 2)
        .ok_or(Error::Failure)?
        .max(src.len().div_ceil(8) as u64 + 2);
    let words = usize::try_from(words).map_err(|_| Error::Failure)?;
    let mut input = vec![0u64; words];
    for (w, c) in input.iter_mut().zip(src.chunks(8)) {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        *w = u64::from_ne_bytes(b);
    }
    let s = open(mode, meta, ty, ndim, typesize, &mut input);
    if s.zfp.is_null() || s.bits.is_null() {
        return Err(Error::MemoryAlloc);
    }
    // SAFETY: `dst` holds at least prod(shape) * typesize bytes (checked above) and outlives
    // the field.
    let f = unsafe { field(dst.as_mut_ptr() as *mut c_void, ty, &shape) };
    if f.0.is_null() {
        return Err(Error::MemoryAlloc);
    }
    // SAFETY: zfp writes the field (inside `dst`) and reads at most `blocks * per_block` bits
    // of the stream, all inside the zero-padded `input`.
    let n = unsafe { z::zfp_decompress(s.zfp, f.0) };
    if n == 0 {
        return Err(Error::Data);
    }
    Ok(dst.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_f32(n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| ((i as f32 * 0.37).sin() * 100.0).to_le_bytes())
            .collect()
    }

    #[test]
    fn modes_roundtrip_within_their_promise() {
        let shape = [16i32, 16];
        let src = field_f32(256);
        for (code, meta) in [(ZFP_ACC, (-2i8) as u8), (ZFP_PREC, 20), (ZFP_RATE, 50)] {
            let mut c = vec![0u8; src.len()];
            let n = compress(code, meta, 4, &shape, &src, &mut c).unwrap();
            assert!(n > 0 && n < src.len(), "{code}: {n}");
            let mut d = vec![0u8; src.len()];
            assert_eq!(
                decompress(code, meta, 4, &shape, &c[..n], &mut d),
                Ok(src.len())
            );
            for (a, b) in src.chunks(4).zip(d.chunks(4)) {
                let (a, b) = (
                    f32::from_le_bytes(a.try_into().unwrap()),
                    f32::from_le_bytes(b.try_into().unwrap()),
                );
                assert!((a - b).abs() < 1.0, "{code}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn partial_blocks_are_stored_raw_and_bad_geometry_fails() {
        let src = field_f32(256);
        let mut c = vec![0u8; src.len()];
        assert_eq!(
            compress(ZFP_RATE, 50, 4, &[16, 16], &src[..512], &mut c),
            Ok(0)
        );
        assert_eq!(
            compress(ZFP_RATE, 50, 4, &[16, 3], &src, &mut c),
            Err(Error::Failure)
        );
        assert_eq!(
            compress(ZFP_RATE, 50, 2, &[16, 32], &src, &mut c),
            Err(Error::Failure)
        );
        assert_eq!(
            compress(ZFP_RATE, 50, 4, &[], &src, &mut c),
            Err(Error::Failure)
        );
        let mut d = vec![0u8; 1024];
        assert_eq!(
            decompress(ZFP_RATE, 50, 4, &[16, 17], &c, &mut d),
            Err(Error::Failure)
        );
        assert_eq!(
            decompress(ZFP_RATE, 50, 3, &[16, 16], &c, &mut d),
            Err(Error::Failure)
        );
        assert_eq!(
            decompress(ZFP_ACC, 0, 4, &[i32::MAX, i32::MAX, 4], &c, &mut d),
            Err(Error::Failure)
        );
    }

    #[test]
    fn forged_streams_never_read_out_of_bounds() {
        // All-ones streams make every group test positive: the longest possible reads.
        let mut d = vec![0u8; 4 * 4 * 4 * 4 * 8];
        for (code, meta) in [
            (ZFP_ACC, 0x80u8),
            (ZFP_PREC, 255),
            (ZFP_RATE, 255),
            (ZFP_RATE, 0),
        ] {
            for shape in [&[256i32][..], &[16, 16], &[4, 8, 8], &[4, 4, 4, 4]] {
                for src in [vec![0xFFu8; 3], vec![0xFF; 64], vec![], vec![0x55; 1000]] {
                    let r = decompress(code, meta, 8, shape, &src, &mut d);
                    assert!(r.is_ok() || r == Err(Error::Data), "{r:?}");
                }
            }
        }
    }
}
