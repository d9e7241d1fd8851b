//! Byte shuffle: element bytes regrouped by significance (`BLOSC_SHUFFLE`).
//!
//! For `n = len / es` whole elements, `out[j*n + i] = in[i*es + j]`; the last `len % es` bytes
//! are copied verbatim (c-blosc2's format). Kernels: portable, SSE2, AVX2, AVX-512 (x86-64) and NEON
//! (aarch64), chosen once at run time (see `dispatch`).

// The AVX-512 intrinsics are stable since Rust 1.89, the crate's `rust-version`.
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;
pub(crate) mod dispatch;
pub(crate) mod generic;
pub(crate) mod simd;
pub(crate) mod vector;

use crate::sys::Out;
use dispatch::Kernels;

/// The SIMD level names this build knows (`B2FRAME_SIMD` values).
pub use dispatch::LEVELS;

/// One SIMD level's filter primitives. [`Simd::active`] is what the rest of b2frame uses;
/// [`Simd::get`] exists so tests and benchmarks can compare levels on one machine.
#[derive(Clone, Copy)]
pub struct Simd(&'static Kernels);

impl Simd {
    /// The process-wide level (`B2FRAME_SIMD`, else the best the CPU supports).
    pub fn active() -> Simd {
        Simd(dispatch::active())
    }

    /// The level named `level`, if this CPU can run it.
    pub fn get(level: &str) -> Option<Simd> {
        dispatch::kernels_for(level).map(Simd)
    }

    /// Every level this CPU can run.
    pub fn available() -> Vec<Simd> {
        LEVELS.iter().filter_map(|l| Simd::get(l)).collect()
    }

    /// The level's name (`"generic"`, `"sse2"`, `"avx2"`, `"avx512"` or `"neon"`).
    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub(crate) fn kernels(self) -> &'static Kernels {
        self.0
    }

    /// [`shuffle`] with this level's kernels.
    pub fn shuffle(self, typesize: usize, src: &[u8], dst: &mut [u8]) {
        assert_eq!(src.len(), dst.len(), "shuffle: src and dst lengths differ");
        let n = if typesize > 1 {
            src.len() / typesize
        } else {
            0
        };
        let body = n * typesize;
        if n > 0 {
            (self.0.shuffle)(typesize, n, &src[..body], &mut dst[..body]);
        }
        dst[body..].copy_from_slice(&src[body..]);
    }

    /// [`unshuffle`] with this level's kernels.
    pub fn unshuffle(self, typesize: usize, src: &[u8], dst: &mut [u8]) {
        self.unshuffle_out(typesize, src, &mut Out::init(dst))
    }

    /// [`Simd::unshuffle`] into an [`Out`] piece, which it writes in whole (no zeroing first).
    pub(crate) fn unshuffle_out(self, typesize: usize, src: &[u8], out: &mut Out<'_>) {
        assert_eq!(
            src.len(),
            out.len(),
            "unshuffle: src and dst lengths differ"
        );
        let n = if typesize > 1 {
            src.len() / typesize
        } else {
            0
        };
        let body = n * typesize;
        // SAFETY: the kernel and the tail copy write only initialised values, and every byte
        // of the piece: `..body` the kernel (its contract), `body..` the copy.
        unsafe {
            let dst = out.as_uninit();
            if n > 0 {
                (self.0.unshuffle)(typesize, n, &src[..body], &mut dst[..body]);
            }
            for (d, &s) in dst[body..].iter_mut().zip(&src[body..]) {
                d.write(s);
            }
            out.assume_written();
        }
    }
}

/// The name of the SIMD level in use (`"generic"`, `"sse2"`, `"avx2"`, `"avx512"` or `"neon"`).
pub fn simd_level() -> &'static str {
    Simd::active().name()
}

/// Shuffles `src` into `dst` (same length) by element size `typesize`; the tail
/// `src.len() % typesize` bytes are copied verbatim. `typesize` 0 or 1 is a plain copy.
///
/// # Panics
/// If `src.len() != dst.len()` (a caller bug, never a data error).
pub fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    Simd::active().shuffle(typesize, src, dst)
}

/// Inverse of [`shuffle`].
///
/// # Panics
/// If `src.len() != dst.len()`.
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    Simd::active().unshuffle(typesize, src, dst)
}

/// [`unshuffle`] into an [`Out`] piece, which it writes in whole.
pub(crate) fn unshuffle_out(typesize: usize, src: &[u8], out: &mut Out<'_>) {
    Simd::active().unshuffle_out(typesize, src, out)
}
