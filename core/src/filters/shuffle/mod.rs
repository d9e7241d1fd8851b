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

    /// [`unshuffle_rows`] with this level's kernels.
    pub fn unshuffle_rows(self, rows: &[&[u8]], dst: &mut [u8]) {
        self.unshuffle_rows_out(rows, &mut Out::init(dst))
    }

    /// [`Simd::unshuffle_rows`] into an [`Out`] piece, which it writes in whole.
    pub(crate) fn unshuffle_rows_out(self, rows: &[&[u8]], out: &mut Out<'_>) {
        let es = rows.len();
        let n = rows.first().map_or(0, |r| r.len());
        assert!(
            es >= 2 && rows.iter().all(|r| r.len() == n) && out.len() == n * es,
            "unshuffle_rows: {es} rows of unequal length or a destination of another size"
        );
        // Tiles of whole 32-byte runs per row, as many as fill the stage (at least 32).
        let t = (ROW_STAGE / es / 32 * 32).max(32);
        let mut stage = [0u8; ROW_STAGE];
        let mut i = 0;
        // SAFETY: the kernel writes only initialised values; the tiles `i..i + m` cover every
        // element `0..n`, that is every byte of the piece.
        unsafe {
            let dst = out.as_uninit();
            while i < n {
                let m = t.min(n - i);
                let st = &mut stage[..m * es];
                for (j, row) in rows.iter().enumerate() {
                    st[j * m..(j + 1) * m].copy_from_slice(&row[i..i + m]);
                }
                (self.0.unshuffle)(es, m, st, &mut dst[i * es..(i + m) * es]);
                i += m;
            }
            out.assume_written();
        }
    }
}

/// Bytes of the stage [`Simd::unshuffle_rows`] gathers a tile into: it stays in L1.
const ROW_STAGE: usize = 16384;

/// [`unshuffle`] of a shuffled buffer given as its `es = rows.len()` rows (row `j`: byte `j` of
/// every element) wherever they are, e.g. some in scratch and some still inside a chunk: the
/// rows are gathered tile by tile into a small stage (in L1) and unshuffled from there, so a
/// row that is not in one buffer with the others is read once, never copied in whole first.
///
/// # Panics
/// If fewer than 2 rows, rows of unequal length, or `dst.len() != es * row length`.
pub fn unshuffle_rows(rows: &[&[u8]], dst: &mut [u8]) {
    Simd::active().unshuffle_rows(rows, dst)
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

/// [`unshuffle_rows`] into an [`Out`] piece, which it writes in whole.
pub(crate) fn unshuffle_rows_out(rows: &[&[u8]], out: &mut Out<'_>) {
    Simd::active().unshuffle_rows_out(rows, out)
}
