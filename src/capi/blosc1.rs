//! The global (Blosc1-style) API: `blosc2_compress/decompress/getitem`,
//! `blosc1_compress/decompress/getitem`, and the setters of the settings they use
//! (`blosc1_set_compressor`, `blosc1_set_blocksize`, `blosc1_set_splitmode`, `blosc2_set_delta`).
//! The settings themselves are process state, kept in [`super::globals`].

use super::boundary::{cstr, guard};
use super::chunk::{
    build_filters, create_cctx, create_dctx, input, len_of, output, whole_chunk, CHooks,
};
use super::globals::{blosc1_settings, engines, ensure_init, lock, nthreads, set_nthreads};
use super::registry;
use super::types::BLOSC2_DPARAMS_DEFAULTS;
use super::types::{blosc2_dparams, BLOSC2_CPARAMS_DEFAULTS};
use crate::chunk::header::{self, ChunkHeader, EXTENDED_HEADER_LEN, MIN_HEADER_LEN};
use crate::chunk::{CParams, Compressor, DParams, Decompressor};
use crate::env;
use crate::error::{Error, Result};
use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

/// `blosc1_set_compressor` semantics: built-in names only. User codecs are refused with
/// `CODEC_SUPPORT`; an unknown name stores -1 and returns -1 (as the reference does).
pub(crate) fn set_compressor(name: &str) -> i32 {
    let code = registry::compname_to_compcode(name);
    if code >= 6 {
        return Error::CodecSupport.code();
    }
    ensure_init();
    lock().compressor = code;
    code
}

/// The Blosc1 compressor name ("blosclz", ...); NULL after an unknown name was set.
#[no_mangle]
pub extern "C" fn blosc1_get_compressor() -> *const c_char {
    guard(|| {
        let code = blosc1_settings().compressor;
        Ok(registry::compcode_to_compname(code).1)
    })
}

/// Selects the Blosc1 compressor by name; returns its compcode, -1 for an unknown name, or
/// `BLOSC2_ERROR_CODEC_SUPPORT` for a user codec.
///
/// # Safety
/// `compname` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc1_set_compressor(compname: *const c_char) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract `compname` is NULL or NUL-terminated.
        let name = unsafe { cstr(compname) }?;
        Ok(set_compressor(name))
    })
}

/// Switches DELTA on (non-zero) or off for the Blosc1-style API.
#[no_mangle]
pub extern "C" fn blosc2_set_delta(dodelta: c_int) {
    guard(|| {
        ensure_init();
        lock().delta = dodelta;
        Ok(())
    })
}

/// The forced blocksize of the Blosc1-style API (0 = automatic).
#[no_mangle]
pub extern "C" fn blosc1_get_blocksize() -> c_int {
    guard(|| Ok(blosc1_settings().force_blocksize))
}

/// Forces a blocksize for the Blosc1-style API (0 = automatic); stored as `int32_t` like the
/// reference.
#[no_mangle]
pub extern "C" fn blosc1_set_blocksize(blocksize: usize) {
    guard(|| {
        ensure_init();
        lock().force_blocksize = blocksize as i32;
        Ok(())
    })
}

/// Sets the split mode of the Blosc1-style API (`BLOSC_*_SPLIT`).
#[no_mangle]
pub extern "C" fn blosc1_set_splitmode(mode: c_int) {
    guard(|| {
        ensure_init();
        lock().splitmode = mode;
        Ok(())
    })
}

/// `blosc2_compress` without the FFI: applies the `BLOSC_*` variables the way c-blosc2 does
/// (some of them, like `BLOSC_COMPRESSOR`, change the global settings for good), then
/// compresses with the global settings.
pub(crate) fn global_compress(
    clevel: i32,
    doshuffle: i32,
    typesize: i32,
    src: &[u8],
    dst: &mut [u8],
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<usize> {
    ensure_init();
    let clevel = env::clevel(&lookup).map_or(clevel, |v| v as i32);
    let doshuffle = env::shuffle(&lookup).map_or(doshuffle, i32::from);
    if let Some(d) = env::delta(&lookup) {
        lock().delta = i32::from(d);
    }
    let typesize = env::positive_long_as_i32(&lookup, env::names::TYPESIZE).unwrap_or(typesize);
    if let Some(name) = lookup(env::names::COMPRESSOR) {
        set_compressor(&name);
    }
    if let Some(bs) = env::number(&lookup, env::names::BLOCKSIZE).filter(|&v| v > 0) {
        lock().force_blocksize = bs as i32;
    }
    if let Some(n) = env::number(&lookup, env::names::NTHREADS).filter(|&v| v > 0) {
        let _ = set_nthreads(n as i16);
    }
    if let Some(mode) = env::splitmode(&lookup) {
        lock().splitmode = mode;
    }
    let s = blosc1_settings();

    if env::is_set(&lookup, env::names::NOLOCK) {
        let mut cp = BLOSC2_CPARAMS_DEFAULTS;
        build_filters(doshuffle, s.delta != 0, typesize, &mut cp.filters);
        cp.typesize = typesize;
        cp.compcode = u8::try_from(s.compressor).unwrap_or(u8::MAX);
        cp.clevel = u8::try_from(clevel).unwrap_or(u8::MAX);
        cp.nthreads = s.nthreads;
        cp.splitmode = s.splitmode;
        let mut ctx = create_cctx(&cp, &lookup).ok_or(Error::NullPointer)?;
        if s.compressor < 0 {
            ctx.fail_compressions_with(Error::CodecSupport);
        }
        return ctx.compress(src, dst);
    }

    // c-blosc2 checks sizes and clevel before it finds out the codec is unusable.
    let Ok(compcode) = u8::try_from(s.compressor) else {
        if src.len() > header::MAX_BUFFERSIZE as usize || dst.len() < EXTENDED_HEADER_LEN {
            return Err(Error::MaxBufsizeExceeded);
        }
        if !(0..=9).contains(&clevel) {
            return Err(Error::CodecParam);
        }
        return Err(Error::CodecSupport);
    };
    let mut filters = [0u8; 6];
    build_filters(doshuffle, s.delta != 0, typesize, &mut filters);
    let cp = CParams {
        compcode,
        compcode_meta: 0,
        clevel: u8::try_from(clevel).unwrap_or(u8::MAX),
        use_dict: false,
        typesize,
        nthreads: s.nthreads.max(1),
        blocksize: s.force_blocksize,
        splitmode: s.splitmode,
        filters,
        filters_meta: [0; 6],
    };
    let blosc1_header = env::is_set(&lookup, env::names::BLOSC1_COMPAT);
    let mut engines = engines();
    let comp = match &mut engines.compressor {
        Some(c) => {
            c.set_cparams(cp)?;
            c
        }
        slot => slot.insert(Compressor::new(cp, Arc::new(CHooks::plain()))?),
    };
    let n = comp.compress(src, dst)?;
    if blosc1_header && n > 0 {
        to_blosc1_header(dst, n, src, &cp)
    } else {
        Ok(n)
    }
}

/// Reads an `int32` at `at` (bounds-checked).
fn rd_i32(b: &[u8], at: usize) -> Result<i32> {
    let v = b.get(at..at + 4).ok_or(Error::ReadBuffer)?;
    Ok(i32::from_le_bytes([v[0], v[1], v[2], v[3]]))
}

/// The streams of a regular extended chunk, re-laid out after a 16-byte header: bstarts move
/// down 16 bytes and every run-encoded stream (which Blosc1 readers do not know) is encoded
/// with the chunk's codec instead, or stored raw when that gains nothing, as c-blosc2's writer
/// does for 16-byte headers. A whole-chunk zero (special) chunk is treated as one whose
/// streams are all zero runs, which is what the writer found before replacing it.
fn blosc1_body(chunk: &[u8], h: &ChunkHeader, compcode: u8, clevel: u8) -> Result<Vec<u8>> {
    let all_zero = h.special_code() == 1;
    let nblocks = len_of(h.nblocks());
    let blocksize = len_of(h.blocksize);
    let mut out = vec![0u8; MIN_HEADER_LEN + 4 * nblocks];
    let mut state = crate::codecs::CodecState::new();
    let mut run = Vec::new();
    let mut enc = Vec::new();
    for j in 0..nblocks {
        let last = j + 1 == nblocks && h.leftover() > 0;
        let bsize = if last {
            len_of(h.leftover())
        } else {
            blocksize
        };
        let nstreams = if h.dont_split() || last {
            1
        } else {
            usize::from(h.typesize)
        };
        let neblock = bsize / nstreams;
        let start = i32::try_from(out.len()).map_err(|_| Error::TwoGbLimit)?;
        out[MIN_HEADER_LEN + 4 * j..MIN_HEADER_LEN + 4 * j + 4]
            .copy_from_slice(&start.to_le_bytes());
        let mut at = if all_zero {
            0
        } else {
            len_of(rd_i32(chunk, EXTENDED_HEADER_LEN + 4 * j)?)
        };
        for _ in 0..nstreams {
            let csize = if all_zero { 0 } else { rd_i32(chunk, at)? };
            if csize > 0 {
                let end = at + 4 + len_of(csize);
                out.extend_from_slice(chunk.get(at..end).ok_or(Error::ReadBuffer)?);
                at = end;
                continue;
            }
            let value = if csize == 0 {
                at += 4;
                0
            } else {
                at += 5;
                (-csize & 0xff) as u8
            };
            run.clear();
            run.resize(neblock, value);
            enc.resize(neblock, 0);
            let n = if clevel > 0 {
                crate::codecs::compress(&mut state, compcode, clevel, &run, &mut enc, None)?
            } else {
                0
            };
            if n == 0 || n >= neblock {
                out.extend_from_slice(&(neblock as i32).to_le_bytes());
                out.extend_from_slice(&run);
            } else {
                out.extend_from_slice(&(n as i32).to_le_bytes());
                out.extend_from_slice(&enc[..n]);
            }
        }
    }
    Ok(out)
}

/// Rewrites a freshly written extended chunk (`dst[..n]`) with a 16-byte Blosc1 header, as
/// `BLOSC_BLOSC1_COMPAT` asks: the shuffle/bitshuffle/delta flag bits carry the pipeline and
/// run-encoded streams and all-zero chunks are re-encoded (see [`blosc1_body`]). Chunks that
/// no longer fit are stored memcpyed (`16 + nbytes` bytes; 0 if even that does not fit), like
/// c-blosc2's fallback.
fn to_blosc1_header(dst: &mut [u8], n: usize, src: &[u8], cp: &CParams) -> Result<usize> {
    let h = ChunkHeader::read(&dst[..n], true)?;
    let expressible = h.special_code() == 0 || (h.special_code() == 1 && h.nbytes > 0);
    let body = if h.is_memcpyed() || !expressible || h.uses_dict() {
        None
    } else {
        Some(blosc1_body(&dst[..n], &h, cp.compcode, cp.clevel)?)
    };
    match body {
        Some(body) if body.len() <= dst.len() => {
            let mut fl = h.flags & (header::flags::DONT_SPLIT | 0xe0);
            fl |= header::filters_to_flags(&h.filters);
            dst[MIN_HEADER_LEN..body.len()].copy_from_slice(&body[MIN_HEADER_LEN..]);
            dst[2] = fl;
            dst[12..16].copy_from_slice(&(body.len() as i32).to_le_bytes());
            Ok(body.len())
        }
        _ => {
            let total = MIN_HEADER_LEN + src.len();
            if total > dst.len() {
                return Ok(0);
            }
            dst[2] = header::flags::MEMCPYED;
            dst[12..16].copy_from_slice(&(total as i32).to_le_bytes());
            dst[MIN_HEADER_LEN..total].copy_from_slice(src);
            Ok(total)
        }
    }
}

/// `blosc2_decompress` without the FFI (honours `BLOSC_NTHREADS` and `BLOSC_NOLOCK`).
pub(crate) fn global_decompress(
    src: &[u8],
    dst: &mut [u8],
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<usize> {
    ensure_init();
    match env::nthreads_for_decompress(&lookup) {
        Some(Err(())) => return Err(Error::InvalidParam),
        Some(Ok(n)) => {
            set_nthreads(n)?;
        }
        None => {}
    }
    let nthreads = nthreads();
    if env::is_set(&lookup, env::names::NOLOCK) {
        let dp = blosc2_dparams {
            nthreads,
            ..BLOSC2_DPARAMS_DEFAULTS
        };
        let mut ctx = create_dctx(&dp, &lookup).ok_or(Error::NullPointer)?;
        return ctx.decompress(src, dst);
    }
    let mut engines = engines();
    let reuse = matches!(&engines.decompressor, Some(d) if d.dparams().nthreads == nthreads);
    if !reuse {
        engines.decompressor = None;
        let dp = DParams {
            nthreads: nthreads.max(1),
        };
        engines.decompressor = Some(Decompressor::new(dp, Arc::new(CHooks::plain()))?);
    }
    let d = engines.decompressor.as_mut().ok_or(Error::Failure)?;
    d.decompress(src, dst)
}

/// `blosc2_getitem` without the FFI: a serial one-off decoder, as in c-blosc2.
fn global_getitem(src: &[u8], start: i32, nitems: i32, dst: &mut [u8]) -> Result<usize> {
    let mut d = Decompressor::new(DParams::default(), Arc::new(CHooks::plain()))?;
    d.getitem(src, start, nitems, dst)
}

/// Compresses with the global settings (Blosc1-style API); see `blosc2.h`.
///
/// # Safety
/// `src` valid for `srcsize` bytes, `dest` for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_compress(
    clevel: c_int,
    doshuffle: c_int,
    typesize: i32,
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(|| {
        if srcsize < 0 {
            return Err(Error::InvalidParam);
        }
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { (input(src, srcsize)?, output(dest, destsize)?) };
        Ok(global_compress(clevel, doshuffle, typesize, s, d, env::from_process)? as c_int)
    })
}

/// Decompresses with the global settings.
///
/// # Safety
/// `src` valid for `srcsize` bytes, `dest` for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_decompress(
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { (input(src, srcsize)?, output(dest, destsize)?) };
        Ok(global_decompress(s, d, env::from_process)? as c_int)
    })
}

/// Decodes `nitems` items from item `start` without a context.
///
/// # Safety
/// `src` valid for `srcsize` bytes, `dest` for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_getitem(
    src: *const c_void,
    srcsize: i32,
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { (input(src, srcsize)?, output(dest, destsize)?) };
        Ok(global_getitem(s, start, nitems, d)? as c_int)
    })
}

/// Blosc1 `blosc_compress`: sizes are `size_t` and converted to `int32_t` as c-blosc2 does.
///
/// # Safety
/// `src` valid for `nbytes` bytes, `dest` for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc1_compress(
    clevel: c_int,
    doshuffle: c_int,
    typesize: usize,
    nbytes: usize,
    src: *const c_void,
    dest: *mut c_void,
    destsize: usize,
) -> c_int {
    // `blosc2_compress`'s body; the casts mirror the reference's.
    let (typesize, srcsize, destsize) = (typesize as i32, nbytes as i32, destsize as i32);
    guard(|| {
        if srcsize < 0 {
            return Err(Error::InvalidParam);
        }
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { (input(src, srcsize)?, output(dest, destsize)?) };
        Ok(global_compress(clevel, doshuffle, typesize, s, d, env::from_process)? as c_int)
    })
}

/// Blosc1 `blosc_decompress`: the chunk's length is taken from its header.
///
/// # Safety
/// `src` must hold a whole chunk; `dest` valid for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc1_decompress(
    src: *const c_void,
    dest: *mut c_void,
    destsize: usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let s = unsafe { whole_chunk(src) }?;
        // SAFETY: forwarded contract.
        let d = unsafe { output(dest, i32::try_from(destsize).unwrap_or(i32::MAX)) }?;
        Ok(global_decompress(s, d, env::from_process)? as c_int)
    })
}

/// Blosc1 `blosc_getitem`: the chunk's length is taken from its header and `dest` is assumed
/// large enough for `nitems` items, as in c-blosc2.
///
/// # Safety
/// `src` must hold a whole chunk; `dest` must have room for `nitems` items.
#[no_mangle]
pub unsafe extern "C" fn blosc1_getitem(
    src: *const c_void,
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let s = unsafe { whole_chunk(src) }?;
        let typesize = i64::from(s[3]);
        let want = i64::from(nitems.max(0)) * typesize;
        let dlen = i32::try_from(want).map_err(|_| Error::WriteBuffer)?;
        // SAFETY: `dest` has room for `nitems` items by this function's contract.
        let d = unsafe { output(dest, dlen) }?;
        Ok(global_getitem(s, start, nitems, d)? as c_int)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::globals::tests::TEST_LOCK;

    #[test]
    fn compressor_names() {
        let _t = TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        assert_eq!(set_compressor("lz4"), 1);
        assert_eq!(set_compressor("nope"), -1);
        assert!(blosc1_get_compressor().is_null());
        assert_eq!(set_compressor("blosclz"), 0);
        assert!(!blosc1_get_compressor().is_null());
    }

    #[test]
    fn blosc1_header_conversion_round_trips() {
        let src: Vec<u8> = (0..40000u32).flat_map(|i| (i * 3).to_le_bytes()).collect();
        let cp = CParams {
            typesize: 4,
            blocksize: 16384,
            ..CParams::default()
        };
        let mut comp = Compressor::new(cp, Arc::new(CHooks::plain())).unwrap();
        let mut dst = vec![0u8; src.len() + 32];
        let n = comp.compress(&src, &mut dst).unwrap();
        let m = to_blosc1_header(&mut dst, n, &src, &cp).unwrap();
        assert!(m > 16 && m < src.len() / 4);
        assert_eq!(dst[2] & 0x07, header::flags::DOSHUFFLE);
        assert_eq!(&dst[12..16], &(m as i32).to_le_bytes());
        assert_eq!(crate::chunk::decompress_vec(&dst[..m]).unwrap(), src);
        // Every stream of every block is codec output or raw (csize > 0): no runs.
        let h = ChunkHeader::read(&dst[..m], true).unwrap();
        for j in 0..h.nblocks() as usize {
            let mut at = rd_i32(&dst, 16 + 4 * j).unwrap() as usize;
            let leftover = j + 1 == h.nblocks() as usize && h.leftover() > 0;
            for _ in 0..if leftover { 1 } else { 4 } {
                let csize = rd_i32(&dst, at).unwrap();
                assert!(csize > 0, "block {j} flags {:#x} csize {csize}", h.flags);
                at += 4 + csize as usize;
            }
        }
        // An all-zero buffer is a special chunk in Blosc2; Blosc1 gets it codec-encoded.
        let zeros = vec![0u8; 40000];
        let n = comp.compress(&zeros, &mut dst).unwrap();
        assert_eq!(n, 32);
        let m = to_blosc1_header(&mut dst, n, &zeros, &cp).unwrap();
        assert!(m > 16 && m < 2000, "{m}");
        assert_eq!(dst[2] & 0x07, header::flags::DOSHUFFLE);
        assert_eq!(crate::chunk::decompress_vec(&dst[..m]).unwrap(), zeros);
        // Random bytes that no longer fit are stored memcpyed, or give 0 when even that
        // does not fit.
        let mut x = 1u32;
        let noise: Vec<u8> = (0..4000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        let n = comp.compress(&noise, &mut dst[..4032]).unwrap();
        assert!(n > 0);
        let m = to_blosc1_header(&mut dst[..4032], n, &noise, &cp).unwrap();
        assert_eq!(crate::chunk::decompress_vec(&dst[..m]).unwrap(), noise);
        // The memcpyed fallback of a 4000-byte input does not fit in 1000 bytes: 0.
        let n = comp.compress(&noise, &mut dst[..4032]).unwrap();
        let mut small = dst[..n].to_vec();
        small.resize(1000, 0);
        let n = n.min(1000);
        assert_eq!(to_blosc1_header(&mut small, n, &noise, &cp).unwrap(), 0);
    }
}
