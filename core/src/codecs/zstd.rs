//! Zstd frames (chunk format code 4) through zstd-sys.
//!
//! Each Blosc2 stream is one standard zstd frame. The zstd level for a Blosc2 clevel is
//! `2*clevel - 1` for clevel 1..=8 and `ZSTD_maxCLevel()` (22) for 9, as in c-blosc2 (whose
//! intended special case for 8 can never trigger, so it is not reproduced).
//!
//! Why `unsafe` lives here: this module is an outbound FFI client of the C zstd library built by
//! zstd-sys. Every call is a tiny `unsafe` block with pointers taken from live slices and the
//! slices' exact lengths as capacities; zstd checks every bound itself and reports errors as
//! codes (`ZSTD_isError`), never by touching memory outside the given ranges. Contexts and
//! dictionaries are owned by small RAII wrappers that free them exactly once.

use crate::error::{Error, Result};
use std::ffi::{c_int, c_uint, c_void};
use std::ptr::NonNull;
use zstd_sys as sys;

/// zstd level for a Blosc2 clevel (clamped to 1..=9).
pub fn level_for(clevel: u8) -> c_int {
    let c = c_int::from(clevel.clamp(1, 9));
    if c < 9 {
        2 * c - 1
    } else {
        // SAFETY: pure function of the library's constants.
        unsafe { sys::ZSTD_maxCLevel() }
    }
}

fn is_error(code: usize) -> bool {
    // SAFETY: pure function on an integer.
    unsafe { sys::ZSTD_isError(code) != 0 }
}

struct CCtx(NonNull<sys::ZSTD_CCtx>);
struct DCtx(NonNull<sys::ZSTD_DCtx>);

impl Drop for CCtx {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createCCtx, freed exactly once.
        unsafe { sys::ZSTD_freeCCtx(self.0.as_ptr()) };
    }
}

impl Drop for DCtx {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createDCtx, freed exactly once.
        unsafe { sys::ZSTD_freeDCtx(self.0.as_ptr()) };
    }
}

// SAFETY: zstd contexts have no thread affinity; the owning ZstdState is used through `&mut`,
// so one thread at a time.
unsafe impl Send for CCtx {}
// SAFETY: as above.
unsafe impl Send for DCtx {}

/// Reusable zstd contexts of one worker, created on first use and freed on drop. Reuse avoids
/// re-allocating zstd's (level-dependent, up to tens of MiB) working memory for every block.
#[derive(Default)]
pub struct ZstdState {
    cctx: Option<CCtx>,
    dctx: Option<DCtx>,
}

impl ZstdState {
    fn cctx(&mut self) -> Option<*mut sys::ZSTD_CCtx> {
        if self.cctx.is_none() {
            // SAFETY: plain constructor; NULL (allocation failure) is checked.
            self.cctx = NonNull::new(unsafe { sys::ZSTD_createCCtx() }).map(CCtx);
        }
        self.cctx.as_ref().map(|c| c.0.as_ptr())
    }

    fn dctx(&mut self) -> Option<*mut sys::ZSTD_DCtx> {
        if self.dctx.is_none() {
            // SAFETY: plain constructor; NULL (allocation failure) is checked.
            self.dctx = NonNull::new(unsafe { sys::ZSTD_createDCtx() }).map(DCtx);
        }
        self.dctx.as_ref().map(|d| d.0.as_ptr())
    }
}

/// A digested compression dictionary (`ZSTD_CDict`), immutable once built.
pub struct CDict(NonNull<sys::ZSTD_CDict>);

impl CDict {
    /// Digests `dict` (copied) for compression at zstd `level`.
    pub fn new(dict: &[u8], level: c_int) -> Result<CDict> {
        // SAFETY: dict is a live slice; zstd copies the content.
        let p = unsafe { sys::ZSTD_createCDict(dict.as_ptr() as *const c_void, dict.len(), level) };
        NonNull::new(p).map(CDict).ok_or(Error::CodecDict)
    }
}

impl Drop for CDict {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createCDict, freed exactly once.
        unsafe { sys::ZSTD_freeCDict(self.0.as_ptr()) };
    }
}

// SAFETY: a CDict is read-only after creation; zstd documents it as shareable between threads
// compressing concurrently.
unsafe impl Send for CDict {}
// SAFETY: as above.
unsafe impl Sync for CDict {}

/// A digested decompression dictionary (`ZSTD_DDict`), immutable once built.
pub struct DDict(NonNull<sys::ZSTD_DDict>);

impl DDict {
    /// Digests `dict` (copied) for decompression.
    pub fn new(dict: &[u8]) -> Result<DDict> {
        // SAFETY: dict is a live slice; zstd copies the content.
        let p = unsafe { sys::ZSTD_createDDict(dict.as_ptr() as *const c_void, dict.len()) };
        NonNull::new(p).map(DDict).ok_or(Error::CodecDict)
    }
}

impl Drop for DDict {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createDDict, freed exactly once.
        unsafe { sys::ZSTD_freeDDict(self.0.as_ptr()) };
    }
}

// SAFETY: a DDict is read-only after creation; zstd documents it as shareable between threads.
unsafe impl Send for DDict {}
// SAFETY: as above.
unsafe impl Sync for DDict {}

/// Zstd at level `2*clevel-1` (max level for clevel 9), or with the dictionary's own
/// parameters when `dict` is given; returns 0 when it does not fit.
pub fn compress(
    state: &mut ZstdState,
    clevel: u8,
    src: &[u8],
    dst: &mut [u8],
    dict: Option<&CDict>,
) -> usize {
    if src.is_empty() || dst.is_empty() {
        return 0;
    }
    let Some(cctx) = state.cctx() else {
        return 0;
    };
    let (s, n) = (src.as_ptr() as *const c_void, src.len());
    let (d, cap) = (dst.as_mut_ptr() as *mut c_void, dst.len());
    let code = match dict {
        // SAFETY: live context and CDict; src/dst are live, non-overlapping slices of n/cap.
        Some(cd) => unsafe { sys::ZSTD_compress_usingCDict(cctx, d, cap, s, n, cd.0.as_ptr()) },
        // SAFETY: as above.
        None => unsafe { sys::ZSTD_compressCCtx(cctx, d, cap, s, n, level_for(clevel)) },
    };
    if is_error(code) {
        0
    } else {
        code
    }
}

/// Decodes zstd frame(s) into `dst`; returns the bytes produced.
pub fn decompress(
    state: &mut ZstdState,
    src: &[u8],
    dst: &mut [u8],
    dict: Option<&DDict>,
) -> Result<usize> {
    let dctx = state.dctx().ok_or(Error::MemoryAlloc)?;
    let (s, n) = (src.as_ptr() as *const c_void, src.len());
    let (d, cap) = (dst.as_mut_ptr() as *mut c_void, dst.len());
    let code = match dict {
        // SAFETY: live context and DDict; zstd reads at most n bytes and writes at most cap.
        Some(dd) => unsafe { sys::ZSTD_decompress_usingDDict(dctx, d, cap, s, n, dd.0.as_ptr()) },
        // SAFETY: as above.
        None => unsafe { sys::ZSTD_decompressDCtx(dctx, d, cap, s, n) },
    };
    if is_error(code) {
        return Err(Error::Data);
    }
    Ok(code)
}

/// Trains a zstd dictionary of at most `max_size` bytes (`ZDICT_trainFromBuffer`); `None` when
/// zstd cannot build one. `samples` is exactly the concatenation of `sample_sizes`.
pub(crate) fn train(samples: &[u8], sample_sizes: &[usize], max_size: usize) -> Option<Vec<u8>> {
    debug_assert_eq!(sample_sizes.iter().sum::<usize>(), samples.len());
    let count = c_uint::try_from(sample_sizes.len()).ok()?;
    let mut out = vec![0u8; max_size];
    // SAFETY: out has max_size writable bytes; samples holds the sum of sample_sizes bytes and
    // sample_sizes has `count` entries.
    let code = unsafe {
        sys::ZDICT_trainFromBuffer(
            out.as_mut_ptr() as *mut c_void,
            out.len(),
            samples.as_ptr() as *const c_void,
            sample_sizes.as_ptr(),
            count,
        )
    };
    // SAFETY: pure function on an integer.
    if unsafe { sys::ZDICT_isError(code) } != 0 || code == 0 || code > max_size {
        return None;
    }
    out.truncate(code);
    Some(out)
}

/// "major.minor.release" of the linked Zstd.
pub fn version() -> String {
    // SAFETY: ZSTD_versionNumber takes no arguments and only returns a constant.
    let n = unsafe { zstd_sys::ZSTD_versionNumber() };
    format!("{}.{}.{}", n / 10000, (n / 100) % 100, n % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_cblosc2() {
        let got: Vec<c_int> = (1..=9).map(level_for).collect();
        assert_eq!(got, [1, 3, 5, 7, 9, 11, 13, 15, 22]);
    }

    #[test]
    fn round_trip_reusing_contexts() {
        let mut st = ZstdState::default();
        let src: Vec<u8> = (0..50_000u32).map(|i| (i % 97) as u8).collect();
        for clevel in 1..=9u8 {
            let mut c = vec![0u8; src.len()];
            let n = compress(&mut st, clevel, &src, &mut c, None);
            assert!(n > 0 && n < src.len());
            let mut out = vec![0u8; src.len()];
            assert_eq!(decompress(&mut st, &c[..n], &mut out, None), Ok(src.len()));
            assert_eq!(out, src);
            // One byte too little room for the output must fail, not truncate.
            let mut short = vec![0u8; src.len() - 1];
            assert_eq!(
                decompress(&mut st, &c[..n], &mut short, None),
                Err(Error::Data)
            );
        }
    }
}
