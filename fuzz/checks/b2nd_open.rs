//! Arbitrary bytes as an in-memory cframe opened as a b2nd array through the C API
//! (`b2nd_from_cframe`), then read: the whole array, slices whose corners come from the input's
//! last bytes (inside, across and past the shape), sparse items and an orthogonal selection.
//! Nothing may crash; errors are fine. Reads are skipped when the metalayer claims chunks or an
//! array bigger than [`MAX_BYTES`] (allocating what the frame declares is the caller's budget,
//! as in `frame_open`).
use b2frame::capi::b2nd_array::*;
use std::ffi::c_void;

/// The largest chunk or array buffer this check allocates.
pub const MAX_BYTES: i64 = 16 << 20;

/// Runs one fuzz input; returns how many reads succeeded.
pub fn run(data: &[u8]) -> usize {
    let mut frame = data.to_vec();
    let mut a: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: `frame` is valid for its length and copied; `a` is a valid out-pointer.
    if unsafe { b2nd_from_cframe(frame.as_mut_ptr(), frame.len() as i64, true, &mut a) } != 0 {
        assert!(a.is_null(), "a failed open returns no array");
        return 0;
    }
    // SAFETY: a live array from the call above.
    let (ndim, shape, ts, chunk_items, nitems) = unsafe {
        let r = &*a;
        (
            r.ndim as usize,
            r.shape,
            (*r.sc).typesize as i64,
            r.extchunknitems,
            r.nitems,
        )
    };
    let mut ok = 0;
    let fits = chunk_items.checked_mul(ts).is_some_and(|b| b <= MAX_BYTES);
    let whole = nitems.checked_mul(ts).filter(|&b| b <= MAX_BYTES);
    if fits {
        if let Some(n) = whole {
            let mut buf = vec![0u8; n as usize];
            // SAFETY: live array; buffer of `n` bytes.
            ok +=
                usize::from(unsafe { b2nd_to_cbuffer(a, buf.as_mut_ptr() as *mut c_void, n) } == 0);
        }
        let tail = &data[data.len().saturating_sub(3 * ndim)..];
        let pick = |k: usize, s: i64| -> i64 {
            let b = i64::from(tail.get(k).copied().unwrap_or(0));
            if s <= 0 {
                b
            } else {
                b % (s + 2)
            }
        };
        for round in 0..3usize {
            let (mut s0, mut s1) = (vec![0i64; ndim], vec![0i64; ndim]);
            for i in 0..ndim {
                let (x, y) = (pick(i + round, shape[i]), pick(i + ndim + round, shape[i]));
                (s0[i], s1[i]) = (x.min(y), x.max(y));
            }
            let bshape: Vec<i64> = s0.iter().zip(&s1).map(|(x, y)| y - x).collect();
            let n = bshape
                .iter()
                .try_fold(ts, |acc, &e| acc.checked_mul(e))
                .filter(|&b| b <= MAX_BYTES);
            if let Some(n) = n {
                let mut buf = vec![0u8; n.max(1) as usize];
                // SAFETY: live array; ndim values each; buffer of at least `n` bytes.
                let rc = unsafe {
                    b2nd_get_slice_cbuffer(
                        a,
                        s0.as_ptr(),
                        s1.as_ptr(),
                        buf.as_mut_ptr() as *mut c_void,
                        bshape.as_ptr(),
                        n,
                    )
                };
                ok += usize::from(rc == 0);
            }
        }
        if nitems > 0 && ndim > 0 {
            let coords: Vec<i64> = (0..4)
                .map(|k| (pick(k, nitems) * 7919 + k as i64) % nitems)
                .collect();
            let mut buf = vec![0u8; (4 * ts) as usize];
            // SAFETY: live array; 4 coordinates; buffer of 4 items.
            let rc = unsafe {
                b2nd_get_sparse_cbuffer(
                    a,
                    4,
                    coords.as_ptr(),
                    buf.as_mut_ptr() as *mut c_void,
                    4 * ts,
                )
            };
            ok += usize::from(rc == 0);
            let mut sel: Vec<Vec<i64>> = (0..ndim).map(|i| vec![pick(i, shape[i]), 0]).collect();
            let mut sizes: Vec<i64> = vec![2; ndim];
            let mut ptrs: Vec<*mut i64> = sel.iter_mut().map(|v| v.as_mut_ptr()).collect();
            let mut bs = sizes.clone();
            let n = (1i64 << ndim) * ts;
            if n <= MAX_BYTES {
                let mut buf = vec![0u8; n as usize];
                // SAFETY: live array; ndim lists of 2 indices; buffer of `n` bytes.
                let rc = unsafe {
                    b2nd_get_orthogonal_selection(
                        a,
                        ptrs.as_mut_ptr(),
                        sizes.as_mut_ptr(),
                        buf.as_mut_ptr() as *mut c_void,
                        bs.as_mut_ptr(),
                        n,
                    )
                };
                ok += usize::from(rc == 0);
            }
        }
    }
    // SAFETY: the live array, freed once.
    assert_eq!(unsafe { b2nd_free(a) }, 0);
    ok
}
