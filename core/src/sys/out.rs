//! Output that a decoder fills without zeroing it first: [`fill_new`] hands a new vector's
//! capacity to a decoder as one [`Out`], which the decoder splits into pieces (one per block)
//! and writes; the vector gets its length only once every piece was written.
//!
//! Why: a decoder that writes every byte anyway (an unshuffle, a copy) into a buffer zeroed
//! first writes the whole output twice. For a new 4 MiB chunk the `memset` was a third of
//! `blosc2_frame::decompress`'s time (`benches/pure-rs`). Safe Rust cannot hand uninitialised
//! memory out as `&mut [u8]`, so the few writers that fill a whole piece (the byte unshuffle
//! kernels, a copy) write through [`Out`] directly, and every other one asks [`Out::bytes`],
//! which zeroes the piece first (as before, but for that piece only).
//!
//! Soundness rests on two rules kept here: a piece that is dropped unwritten is zeroed by its
//! `Drop` (error paths, masked blocks), and every piece adds its length to the root's counter
//! exactly once, when it becomes initialised, so a piece leaked with `mem::forget` leaves the
//! counter short and [`fill_new`] refuses the vector instead of exposing the bytes.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A piece of output: initialised bytes (a caller's `&mut [u8]`), or part of a new vector's
/// capacity that must be written in whole (see the module documentation).
pub struct Out<'a> {
    bytes: &'a mut [MaybeUninit<u8>],
    /// Every byte of `bytes` is initialised.
    init: bool,
    /// The root's count of initialised bytes (`None` for a caller's initialised slice).
    written: Option<&'a AtomicUsize>,
}

impl<'a> Out<'a> {
    /// A caller's initialised buffer as output.
    pub fn init(bytes: &'a mut [u8]) -> Out<'a> {
        // SAFETY: `u8` and `MaybeUninit<u8>` have the same layout. The view never gets an
        // uninitialised byte written into it: `init` is true, so no method of `Out` writes
        // anything but initialised values (only `as_uninit`, `unsafe`, hands the view out, and
        // its contract forbids it).
        let bytes = unsafe { &mut *(bytes as *mut [u8] as *mut [MaybeUninit<u8>]) };
        Out {
            bytes,
            init: true,
            written: None,
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the piece is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Whether the bytes are initialised already (a caller's slice, or a piece written or
    /// zeroed): writing them through [`Out::bytes`] then costs no zeroing.
    pub fn is_init(&self) -> bool {
        self.init
    }

    /// Splits into `..mid` and `mid..` (the two pieces take over this one's duty).
    ///
    /// # Panics
    /// If `mid > len`.
    pub fn split_at(mut self, mid: usize) -> (Out<'a>, Out<'a>) {
        // Taken out: `self` is dropped empty, so its `Drop` does nothing.
        let bytes = std::mem::take(&mut self.bytes);
        let (a, b) = bytes.split_at_mut(mid);
        let part = |bytes| Out {
            bytes,
            init: self.init,
            written: self.written,
        };
        (part(a), part(b))
    }

    /// The piece as initialised bytes, zeroed first unless they are initialised already.
    pub fn bytes(&mut self) -> &mut [u8] {
        if !self.init {
            self.bytes.fill(MaybeUninit::new(0));
            self.mark_init();
        }
        // SAFETY: every byte is initialised (`init`).
        unsafe { &mut *(&mut *self.bytes as *mut [MaybeUninit<u8>] as *mut [u8]) }
    }

    /// Copies `src` (of the piece's length) into the piece. Copies whose destination starts
    /// 1-63 bytes after the source modulo 4096 go in 2 KiB pieces: glibc's `memcpy` crawls on
    /// those (the measurements are at `copy_bytes` in core/src/chunk/copy.rs, which every
    /// copy of the chunk reader and writer goes through).
    ///
    /// # Panics
    /// If the lengths differ.
    pub fn copy_from(&mut self, src: &[u8]) {
        const PIECE: usize = 2048;
        assert_eq!(self.len(), src.len(), "copy: lengths differ");
        let dst = self.bytes.as_mut_ptr() as *mut u8;
        let dist = (dst as usize).wrapping_sub(src.as_ptr() as usize) % 4096;
        if src.len() <= PIECE || dist == 0 || dist >= 64 {
            // SAFETY: `dst` is valid for `src.len()` writes (same length, checked); a `&mut`
            // piece and a `&` slice never overlap.
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
        } else {
            for (k, s) in src.chunks(PIECE).enumerate() {
                // SAFETY: as above, for the piece's `k`-th 2 KiB.
                unsafe { std::ptr::copy_nonoverlapping(s.as_ptr(), dst.add(k * PIECE), s.len()) };
            }
        }
        if !self.init {
            self.mark_init();
        }
    }

    /// The piece's bytes for a kernel that writes all of them.
    ///
    /// # Safety
    /// Only initialised values may be written through the view, and when it is not
    /// [`Out::is_init`], every byte must have been written before [`Out::assume_written`].
    pub unsafe fn as_uninit(&mut self) -> &mut [MaybeUninit<u8>] {
        &mut *self.bytes
    }

    /// Records that a kernel wrote every byte through [`Out::as_uninit`].
    ///
    /// # Safety
    /// Every byte of the piece has been written with an initialised value.
    pub unsafe fn assume_written(&mut self) {
        if !self.init {
            self.mark_init();
        }
    }

    fn mark_init(&mut self) {
        self.init = true;
        if let Some(w) = self.written {
            w.fetch_add(self.bytes.len(), Ordering::Release);
        }
    }
}

impl Drop for Out<'_> {
    /// A piece nobody wrote (an error, a masked block) is zeroed, so the whole output is
    /// always initialised.
    fn drop(&mut self) {
        if !self.init && !self.bytes.is_empty() {
            self.bytes.fill(MaybeUninit::new(0));
            self.mark_init();
        }
    }
}

/// A new vector of `n` bytes written by `decode`, which gets all of them as one [`Out`] and
/// returns how many of them make the result (at most `n`). `None` when the allocator cannot
/// provide `n` bytes; `decode`'s error as it is.
pub fn fill_new<E>(
    n: usize,
    decode: impl FnOnce(Out<'_>) -> Result<usize, E>,
) -> Option<Result<Vec<u8>, E>> {
    let mut v: Vec<u8> = Vec::new();
    Some(fill_spare(&mut v, n, decode)?.map(|()| v))
}

/// [`fill_new`] after the bytes `v` holds already: the `n` bytes after them are written by
/// `decode` (as one [`Out`]), and the first of them it returns (at most `n`) are appended.
/// `None` when the allocator cannot provide them (`v` unchanged); on `decode`'s error `v` is
/// unchanged too.
pub fn fill_spare<E>(
    v: &mut Vec<u8>,
    n: usize,
    decode: impl FnOnce(Out<'_>) -> Result<usize, E>,
) -> Option<Result<(), E>> {
    v.try_reserve_exact(n).ok()?;
    let written = AtomicUsize::new(0);
    let out = Out {
        bytes: &mut v.spare_capacity_mut()[..n],
        init: false,
        written: Some(&written),
    };
    let len = match decode(out) {
        Ok(len) => len.min(n),
        Err(e) => return Some(Err(e)),
    };
    // Every piece was dropped by now (they borrow `v`); each added its length once when it
    // was initialised, so `n` means every byte is. Short only if a piece was leaked: then the
    // bytes are not handed out (a bug of the decoder, reported as an allocation failure).
    if written.load(Ordering::Acquire) != n {
        return None;
    }
    // SAFETY: the `n >= len` bytes of the capacity after `v.len()` are initialised (above).
    unsafe { v.set_len(v.len() + len) };
    Some(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_piece_is_written_or_zeroed() {
        let v = fill_new(10_000, |out| {
            let (mut a, rest) = out.split_at(3000);
            a.copy_from(&[7u8; 3000]);
            let (_unwritten, mut c) = rest.split_at(4000);
            c.bytes()[..5].copy_from_slice(b"hello");
            Ok::<usize, ()>(10_000)
        })
        .unwrap()
        .unwrap();
        assert_eq!(v.len(), 10_000);
        assert!(v[..3000].iter().all(|&b| b == 7));
        assert!(v[3000..7000].iter().all(|&b| b == 0));
        assert_eq!(&v[7000..7005], b"hello");
        assert!(v[7005..].iter().all(|&b| b == 0));
    }

    #[test]
    fn spare_capacity_is_appended_after_what_the_vector_holds() {
        let mut v = b"head".to_vec();
        let r = fill_spare(&mut v, 6, |mut out| {
            out.copy_from(b"body!!");
            Ok::<usize, ()>(5)
        });
        assert_eq!(r, Some(Ok(())));
        assert_eq!(v, b"headbody!");
        let r = fill_spare(&mut v, 3, |out| {
            std::mem::forget(out);
            Ok::<usize, ()>(3)
        });
        assert_eq!(r, None);
        assert_eq!(fill_spare(&mut v, 3, |_| Err::<usize, u8>(7)), Some(Err(7)));
        assert_eq!(v, b"headbody!", "a refused or failed fill appends nothing");
    }

    #[test]
    fn a_leaked_piece_refuses_the_vector() {
        let r = fill_new(100, |out| {
            let (a, _b) = out.split_at(50);
            std::mem::forget(a);
            Ok::<usize, ()>(100)
        });
        assert!(r.is_none());
    }

    #[test]
    fn errors_pass_through_and_lengths_are_capped() {
        assert_eq!(fill_new(8, |_| Err::<usize, u8>(3)), Some(Err(3)));
        assert_eq!(fill_new(4, |_| Ok::<usize, ()>(9)), Some(Ok(vec![0u8; 4])));
        assert_eq!(fill_new(usize::MAX / 2, |_| Ok::<usize, ()>(0)), None);
    }
}
