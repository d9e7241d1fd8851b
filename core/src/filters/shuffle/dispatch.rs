//! Run-time choice of the SIMD level, made once per process.
//!
//! Each level is a table of four safe functions ([`Kernels`]). The SIMD tables are only ever
//! handed out by [`kernels_for`], which checks the CPU first, so the `unsafe` calls into
//! `#[target_feature]` code inside them are sound. `B2FRAME_SIMD=generic|sse2|avx2|avx512|neon`
//! forces a level; a level the CPU (or architecture) lacks falls back to the best available one.

use std::mem::MaybeUninit;
use std::sync::OnceLock;

use super::generic as sg;
use crate::filters::bitshuffle::generic as bg;

/// Byte (un)shuffle of `n` elements of `es >= 2` bytes (`es`, `n`, `src`, `dst`; both buffers
/// exactly `n * es` bytes). `n` is passed in because a run-time division costs as much as a
/// few dozen bytes of shuffling on a cache-resident block.
pub(crate) type ShuffleFn = fn(usize, usize, &[u8], &mut [u8]);
/// Byte unshuffle, as [`ShuffleFn`] but into a destination that may be uninitialised (see
/// [`crate::sys::Out`]): every kernel only writes it, every byte of it.
pub(crate) type UnshuffleFn = fn(usize, usize, &[u8], &mut [MaybeUninit<u8>]);
/// Byte row → bit rows (`row`, `bits`, `base`, `stride`).
pub(crate) type BitTFn = fn(&[u8], &mut [u8], usize, usize);
/// Bit rows → byte row (`bits`, `base`, `stride`, `row`).
pub(crate) type BitUFn = fn(&[u8], usize, usize, &mut [u8]);

/// One SIMD level's kernels.
pub(crate) struct Kernels {
    pub name: &'static str,
    pub shuffle: ShuffleFn,
    pub unshuffle: UnshuffleFn,
    pub bit_t: BitTFn,
    pub bit_u: BitUFn,
}

impl Kernels {
    /// The unshuffle kernel into initialised bytes.
    pub(crate) fn unshuffle_init(&self, es: usize, n: usize, src: &[u8], dst: &mut [u8]) {
        let mut out = crate::sys::Out::init(dst);
        // SAFETY: the kernel writes only initialised values (its contract).
        (self.unshuffle)(es, n, src, unsafe { out.as_uninit() });
    }
}

/// Checks the contract shared by every (un)shuffle kernel. A violation is a bug in b2frame (all
/// callers derive the lengths themselves), never a data error.
fn check_shuffle(es: usize, n: usize, src: &[u8], dst_len: usize) {
    assert!(es >= 2 && src.len() == dst_len && n.checked_mul(es) == Some(src.len()));
}

/// Checks the bit-transpose contract; see [`check_shuffle`].
fn check_bits(row_len: usize, bits_len: usize, base: usize, stride: usize) {
    assert!(row_len.is_multiple_of(8));
    if row_len > 0 {
        assert!(base + 7 * stride + row_len / 8 <= bits_len && row_len / 8 <= stride);
    }
}

fn shuffle_generic(es: usize, n: usize, src: &[u8], dst: &mut [u8]) {
    check_shuffle(es, n, src, dst.len());
    sg::shuffle_from(es, n, src, dst, 0);
}
fn unshuffle_generic(es: usize, n: usize, src: &[u8], dst: &mut [MaybeUninit<u8>]) {
    check_shuffle(es, n, src, dst.len());
    sg::unshuffle_from(es, n, src, dst, 0);
}
fn bit_t_generic(row: &[u8], bits: &mut [u8], base: usize, stride: usize) {
    check_bits(row.len(), bits.len(), base, stride);
    bg::bit_t_from(row, bits, base, stride, 0);
}
fn bit_u_generic(bits: &[u8], base: usize, stride: usize, row: &mut [u8]) {
    check_bits(row.len(), bits.len(), base, stride);
    bg::bit_u_from(bits, base, stride, row, 0);
}

static GENERIC: Kernels = Kernels {
    name: "generic",
    shuffle: shuffle_generic,
    unshuffle: unshuffle_generic,
    bit_t: bit_t_generic,
    bit_u: bit_u_generic,
};

/// Bytes of the stack stage used by the (un)shuffle kernels.
const STAGE: usize = 16384;

/// Elements per staged tile, when staging pays off. Rows of a shuffled buffer are `n` bytes
/// apart; with 8 or more rows and power-of-two `n` (the usual block sizes) every row maps to the
/// same L1 cache set and 32-byte row accesses thrash it. Shuffling a tile into a small stage
/// and copying each row's run out whole (or, to unshuffle, copying row runs in) avoids that.
/// Only sizes whose SIMD kernels always cover a whole tile qualify (8 and >= 16); `min_es` is
/// the smallest element size worth it (unshuffle reads 8 rows without trouble), and buffers
/// that fit in L1 anyway (such as bitshuffle's tiles) are left alone.
fn stage_elems(es: usize, n: usize, min_es: usize) -> Option<usize> {
    if (es == 8 || (16..=256).contains(&es)) && es >= min_es && n * es > 16384 {
        let t = (8192 / es).clamp(64, 512) & !31;
        assert!(t * es <= STAGE);
        Some(t)
    } else {
        None
    }
}

/// Defines the four `#[target_feature]` entry points of one SIMD level: each runs the generic
/// kernel with the level's vector types (widest first), returning how far it got.
macro_rules! level_entry_points {
    ($feat:literal, $($v:ty),+) => {
        /// Runs the level's shuffle kernels (widest first) on elements `start..n`.
        #[inline(always)]
        unsafe fn shuffle_run(es: usize, src: *const u8, dst: *mut u8, n: usize, start: usize) -> usize {
            let mut i = start;
            // SAFETY: forwarded contract (buffers of n*es bytes; CPU feature checked by caller).
            $( i = unsafe { crate::filters::shuffle::simd::shuffle::<$v>(es, src, dst, n, i) }; )+
            i
        }
        #[inline(always)]
        unsafe fn unshuffle_run(es: usize, src: *const u8, dst: *mut u8, n: usize, start: usize) -> usize {
            let mut i = start;
            // SAFETY: as in shuffle_run.
            $( i = unsafe { crate::filters::shuffle::simd::unshuffle::<$v>(es, src, dst, n, i) }; )+
            i
        }
        #[target_feature(enable = $feat)]
        unsafe fn shuffle_tf(es: usize, src: *const u8, dst: *mut u8, n: usize) -> usize {
            let mut i = 0;
            if let Some(t) = super::stage_elems(es, n, 8) {
                // SAFETY: forwarded contract.
                i = unsafe { shuffle_staged(es, src, dst, n, t) };
            }
            // SAFETY: forwarded contract.
            unsafe { shuffle_run(es, src, dst, n, i) }
        }
        /// The staged part of `shuffle_tf`, apart so that only calls that stage have the
        /// 16 KiB stack frame: its stack probes touch every page of it on entry (4 pages of
        /// stack a process keeps resident). Returns the elements done (whole tiles).
        #[target_feature(enable = $feat)]
        #[inline(never)]
        unsafe fn shuffle_staged(es: usize, src: *const u8, dst: *mut u8, n: usize, t: usize) -> usize {
            let mut i = 0;
            let mut stage = std::mem::MaybeUninit::<[u8; super::STAGE]>::uninit();
            let sp = stage.as_mut_ptr() as *mut u8;
            while i + t <= n {
                // SAFETY: the tile (elements i..i+t) is in bounds; `stage_elems` only
                // allows sizes whose kernels cover a whole tile (t a multiple of 32), so
                // every stage byte copied out was written by the kernel just before.
                unsafe {
                    shuffle_run(es, src.add(i * es), sp, t, 0);
                    for j in 0..es {
                        std::ptr::copy_nonoverlapping(sp.add(j * t), dst.add(j * n + i), t);
                    }
                }
                i += t;
            }
            i
        }
        #[target_feature(enable = $feat)]
        unsafe fn unshuffle_tf(es: usize, src: *const u8, dst: *mut u8, n: usize) -> usize {
            let mut i = 0;
            if let Some(t) = super::stage_elems(es, n, 16) {
                // SAFETY: forwarded contract.
                i = unsafe { unshuffle_staged(es, src, dst, n, t) };
            }
            // SAFETY: forwarded contract.
            unsafe { unshuffle_run(es, src, dst, n, i) }
        }
        /// The staged part of `unshuffle_tf`, apart for the reason given at `shuffle_staged`.
        #[target_feature(enable = $feat)]
        #[inline(never)]
        unsafe fn unshuffle_staged(es: usize, src: *const u8, dst: *mut u8, n: usize, t: usize) -> usize {
            let mut i = 0;
            let mut stage = std::mem::MaybeUninit::<[u8; super::STAGE]>::uninit();
            let sp = stage.as_mut_ptr() as *mut u8;
            while i + t <= n {
                // SAFETY: rows j < es hold elements i..i+t (in bounds); the stage gets all
                // t*es bytes before the kernel reads them.
                unsafe {
                    for j in 0..es {
                        std::ptr::copy_nonoverlapping(src.add(j * n + i), sp.add(j * t), t);
                    }
                    unshuffle_run(es, sp, dst.add(i * es), t, 0);
                }
                i += t;
            }
            i
        }
        #[target_feature(enable = $feat)]
        unsafe fn bit_t_tf(row: *const u8, t: usize, bits: *mut u8, base: usize, stride: usize) -> usize {
            let mut j = 0;
            // SAFETY: as in shuffle_tf (row of t bytes, bit rows checked by the caller).
            $( j = unsafe { crate::filters::bitshuffle::simd::bit_t::<$v>(row, t, bits, base, stride, j) }; )+
            j
        }
        #[target_feature(enable = $feat)]
        unsafe fn bit_u_tf(bits: *const u8, base: usize, stride: usize, row: *mut u8, t: usize) -> usize {
            let mut j = 0;
            // SAFETY: as in bit_t_tf.
            $( j = unsafe { crate::filters::bitshuffle::simd::bit_u::<$v>(bits, base, stride, row, t, j) }; )+
            j
        }

        fn shuffle(es: usize, n: usize, src: &[u8], dst: &mut [u8]) {
            super::check_shuffle(es, n, src, dst.len());
            // SAFETY: lengths checked above; this table is only reachable after the CPU check
            // in `kernels_for`.
            let done = unsafe { shuffle_tf(es, src.as_ptr(), dst.as_mut_ptr(), n) };
            super::sg::shuffle_from(es, n, src, dst, done);
        }
        fn unshuffle(es: usize, n: usize, src: &[u8], dst: &mut [std::mem::MaybeUninit<u8>]) {
            super::check_shuffle(es, n, src, dst.len());
            // SAFETY: as in `shuffle`; the kernels only write `dst`, initialised values.
            let done = unsafe { unshuffle_tf(es, src.as_ptr(), dst.as_mut_ptr() as *mut u8, n) };
            super::sg::unshuffle_from(es, n, src, dst, done);
        }
        fn bit_t(row: &[u8], bits: &mut [u8], base: usize, stride: usize) {
            super::check_bits(row.len(), bits.len(), base, stride);
            // SAFETY: bounds checked above; CPU checked as in `shuffle`.
            let done = unsafe { bit_t_tf(row.as_ptr(), row.len(), bits.as_mut_ptr(), base, stride) };
            super::bg::bit_t_from(row, bits, base, stride, done);
        }
        fn bit_u(bits: &[u8], base: usize, stride: usize, row: &mut [u8]) {
            super::check_bits(row.len(), bits.len(), base, stride);
            // SAFETY: as in `bit_t`.
            let done = unsafe { bit_u_tf(bits.as_ptr(), base, stride, row.as_mut_ptr(), row.len()) };
            super::bg::bit_u_from(bits, base, stride, row, done);
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use crate::filters::shuffle::vector::x86::Sse2;
    level_entry_points!("sse2", Sse2);
    pub(super) static KERNELS: super::Kernels = super::Kernels {
        name: "sse2",
        shuffle,
        unshuffle,
        bit_t,
        bit_u,
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use crate::filters::shuffle::vector::x86::{Avx2, Sse2};
    level_entry_points!("avx2", Avx2, Sse2);
    pub(super) static KERNELS: super::Kernels = super::Kernels {
        name: "avx2",
        shuffle,
        unshuffle,
        bit_t,
        bit_u,
    };
}

/// AVX-512 level: the `vpermt2b` kernels for element sizes 2, 4, 8 and 16 (64 elements or more;
/// unshuffle of 8 only above 16 KiB); everything else (other sizes, short buffers, bit
/// transposes) runs the AVX2 level.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use crate::filters::shuffle::avx512 as k;

    fn shuffle(es: usize, n: usize, src: &[u8], dst: &mut [u8]) {
        super::check_shuffle(es, n, src, dst.len());
        if k::covers_shuffle(es, n) {
            // SAFETY: lengths checked above (`&mut` rules out overlap); this table is only
            // reachable after the CPU check in `kernels_for`.
            unsafe { k::shuffle(es, src.as_ptr(), dst.as_mut_ptr(), n) }
        } else {
            (super::avx2::KERNELS.shuffle)(es, n, src, dst)
        }
    }
    fn unshuffle(es: usize, n: usize, src: &[u8], dst: &mut [std::mem::MaybeUninit<u8>]) {
        super::check_shuffle(es, n, src, dst.len());
        if k::covers_unshuffle(es, n) {
            // SAFETY: as in `shuffle`; the kernel only writes `dst`, initialised values.
            unsafe { k::unshuffle(es, src.as_ptr(), dst.as_mut_ptr() as *mut u8, n) }
        } else {
            (super::avx2::KERNELS.unshuffle)(es, n, src, dst)
        }
    }
    pub(super) static KERNELS: super::Kernels = super::Kernels {
        name: "avx512",
        shuffle,
        unshuffle,
        bit_t: super::avx2::KERNELS.bit_t,
        bit_u: super::avx2::KERNELS.bit_u,
    };
}

#[cfg(target_arch = "aarch64")]
mod neon {
    use crate::filters::shuffle::vector::neon::Neon;
    level_entry_points!("neon", Neon);
    pub(super) static KERNELS: super::Kernels = super::Kernels {
        name: "neon",
        shuffle,
        unshuffle,
        bit_t,
        bit_u,
    };
}

/// Every level name this build knows, best last.
pub const LEVELS: [&str; 5] = ["generic", "sse2", "neon", "avx2", "avx512"];

/// The kernels of `level` if this CPU can run them.
pub(crate) fn kernels_for(level: &str) -> Option<&'static Kernels> {
    match level {
        "generic" => Some(&GENERIC),
        #[cfg(target_arch = "x86_64")]
        "sse2" if std::arch::is_x86_feature_detected!("sse2") => Some(&sse2::KERNELS),
        #[cfg(target_arch = "x86_64")]
        "avx2" if std::arch::is_x86_feature_detected!("avx2") => Some(&avx2::KERNELS),
        #[cfg(target_arch = "x86_64")]
        "avx512"
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vbmi") =>
        {
            Some(&avx512::KERNELS)
        }
        #[cfg(target_arch = "aarch64")]
        "neon" if std::arch::is_aarch64_feature_detected!("neon") => Some(&neon::KERNELS),
        _ => None,
    }
}

/// The best level this CPU can run.
fn best() -> &'static Kernels {
    LEVELS
        .iter()
        .rev()
        .find_map(|l| kernels_for(l))
        .unwrap_or(&GENERIC)
}

/// The process-wide kernels: `B2FRAME_SIMD` if set and runnable, else the best level.
pub(crate) fn active() -> &'static Kernels {
    static ACTIVE: OnceLock<&'static Kernels> = OnceLock::new();
    ACTIVE.get_or_init(|| {
        std::env::var("B2FRAME_SIMD")
            .ok()
            .and_then(|v| kernels_for(v.trim().to_ascii_lowercase().as_str()))
            .unwrap_or_else(best)
    })
}
