//! Zeroed buffers whose size a frame or chunk claims.
//!
//! `vec![0u8; n]` asks the allocator for zeroed memory (`calloc`: fresh pages, touched only
//! when written) but aborts the process when the allocation fails; `Vec::try_reserve_exact`
//! followed by `resize` fails cleanly but writes every byte, so a chunk that claims 1 GiB and
//! fails to decode after a few bytes costs 1 GiB of resident memory (c-blosc2 `malloc`s such a
//! buffer and touches only what it decodes). [`try_zeroed`] has the properties of both.

use std::alloc::{alloc_zeroed, Layout};

/// `n` zero bytes, or `None` when the allocator cannot provide them. The pages are the
/// allocator's zeroed ones, so bytes never written cost no resident memory.
pub fn try_zeroed(n: usize) -> Option<Vec<u8>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = Layout::array::<u8>(n).ok()?;
    // SAFETY: `layout` has a non-zero size. A non-null result is `n` initialised (zero) bytes
    // from the global allocator with alignment 1, which is exactly the allocation a `Vec<u8>`
    // of capacity `n` owns and frees.
    unsafe {
        let p = alloc_zeroed(layout);
        if p.is_null() {
            return None;
        }
        Some(Vec::from_raw_parts(p, n, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_buffers_are_zero_and_failures_are_none() {
        assert_eq!(try_zeroed(0), Some(Vec::new()));
        let v = try_zeroed(1 << 20).unwrap();
        assert_eq!(v.len(), 1 << 20);
        assert!(v.iter().all(|&b| b == 0));
        // More than any address space holds: refused, not an abort.
        assert_eq!(try_zeroed(usize::MAX / 2), None);
    }
}
