//! Copies of whole arrays: `b2nd_copy` and `b2nd_concatenate`, which store a source chunk's
//! compressed bytes unchanged where the geometries allow it.

use super::*;

/// A copy of `src` with `ctx`'s storage, chunk and block shapes (`ctx`'s ndim and shape are
/// overwritten, as in c-blosc2). Same chunk and block shapes: the super-chunk is copied; else
/// the items are re-chunked, and the metalayers and vlmetalayers copied.
///
/// # Safety
/// `ctx` live; `src` live; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_copy(
    ctx: *mut b2nd_context_t,
    src: *const b2nd_array_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let s = unsafe { arr(src) }?;
        // SAFETY: forwarded contract.
        let c = unsafe { ctx_ref(ctx) }?;
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(s)?;
        let p = copy_array(c, s)?;
        // SAFETY: writable by contract.
        unsafe { *array = p };
        Ok(0)
    })
}

pub(super) fn copy_array(c: &mut b2nd_context_t, s: &b2nd_array_t) -> Result<*mut b2nd_array_t> {
    let g = geometry(s)?;
    store(s)?;
    let n = g.ndim();
    c.ndim = n as i8;
    c.shape[..n].copy_from_slice(g.shape());
    // A view's super-chunk is its parent's (with the parent's metalayer): re-chunked.
    let same = c.chunkshape[..n] == *g.chunkshape()
        && c.blockshape[..n] == *g.blockshape()
        && !shares::is_view(s);
    if same {
        let p = array_without_schunk(c)?;
        // SAFETY: live schunk; the context's storage is NULL or valid.
        let Ok(sc) = (unsafe { schunk_copy(s.sc, c.b2_storage) }) else {
            drop_array(p, false);
            return Err(Error::Failure);
        };
        // SAFETY: `p` is ours.
        unsafe {
            (*p).sc = sc;
            (*p).last_tick = (*sc).change_tick;
        }
        return Ok(p);
    }
    // Re-chunk: the source's other metalayers go along (their storage must outlive the call,
    // so they are gathered here).
    let mut cc = *c;
    let names = meta_names(s.sc);
    let mut owned: Vec<(std::ffi::CString, Vec<u8>)> = Vec::new();
    for nm in names.iter().filter(|n| n.as_slice() != b"b2nd") {
        let content = meta_get(s.sc, &String::from_utf8_lossy(nm)).unwrap_or_default();
        let name = std::ffi::CString::new(nm.clone()).map_err(|_| Error::InvalidParam)?;
        owned.push((name, content));
    }
    if owned.len() > B2ND_MAX_METALAYERS {
        return Err(Error::InvalidParam);
    }
    for (i, (name, content)) in owned.iter_mut().enumerate() {
        cc.metalayers[i] = blosc2_metalayer {
            name: name.as_ptr() as *mut c_char,
            content: content.as_mut_ptr(),
            content_len: content.len() as i32,
        };
    }
    cc.nmetalayers = owned.len() as i32;
    let p = array_new(&cc, BLOSC2_SPECIAL_ZERO)?;
    // SAFETY: `p` is ours.
    let r = copy_regions(s, unsafe { &*p }, |a, b| (a.to_vec(), b.to_vec()))
        // SAFETY: `p` is ours.
        .and_then(|_| copy_vlmeta(s.sc, unsafe { (*p).sc }));
    if let Err(e) = r {
        drop_array(p, true);
        return Err(e);
    }
    Ok(p)
}

/// Concatenates `src2` after `src1` along `axis`: into a copy of `src1` (per `ctx`) when
/// `copy`, else into `src1` itself (then `*array == src1`).
///
/// # Safety
/// `ctx` live when `copy`; `src1`, `src2` live; `array` writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_concatenate(
    ctx: *mut b2nd_context_t,
    src1: *const b2nd_array_t,
    src2: *const b2nd_array_t,
    axis: i8,
    copy: bool,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (a1, a2) = unsafe { (arr(src1)?, arr(src2)?) };
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        refresh_if_stale(a1)?;
        refresh_if_stale(a2)?;
        let (g1, g2) = (geometry(a1)?, geometry(a2)?);
        let n = g1.ndim();
        let ax = usize::try_from(axis)
            .ok()
            .filter(|&x| x < n)
            .ok_or(Error::InvalidParam)?;
        if store(a1)?.typesize() != store(a2)?.typesize() || g2.ndim() != n || n == 0 {
            return Err(Error::InvalidParam);
        }
        let mut new_shape = g1.shape().to_vec();
        for (i, ns) in new_shape.iter_mut().enumerate() {
            if i == ax {
                *ns = g1.shape()[i]
                    .checked_add(g2.shape()[i])
                    .ok_or(Error::InvalidParam)?;
            } else if g1.shape()[i] != g2.shape()[i] {
                return Err(Error::InvalidParam);
            }
        }
        let dst = if copy {
            // SAFETY: forwarded contract.
            copy_array(unsafe { ctx_ref(ctx) }?, a1)?
        } else {
            shares::reshaping(a1, a1.sc)?;
            src1 as *mut b2nd_array_t
        };
        let r = (|| {
            // SAFETY: `dst` is live (ours or the caller's `src1`).
            let d = unsafe { &mut *dst };
            let gd = geometry(d)?;
            let ng = core::resize(&mut store(d)?, &gd, &new_shape, None)?;
            set_geometry(d, &ng);
            publish_meta(d)?;
            let off = g1.shape()[ax];
            let shift = |v: &[i64]| -> Vec<i64> {
                let mut w = v.to_vec();
                w[ax] += off;
                w
            };
            // Copy src2's items chunk by chunk of src2 into the shifted region.
            let zero = vec![0i64; n];
            let ts = store(a2)?.typesize();
            // Chunks that line up (same chunk and block shapes, src1 ending on a chunk
            // boundary along `axis`) are copied as they are stored: each src2 chunk is one
            // destination chunk with the same items and the same padding.
            let aligned = g2.chunkshape() == ng.chunkshape()
                && g2.blockshape() == ng.blockshape()
                && off % i64::from(ng.chunkshape()[ax]) == 0;
            if aligned {
                for c in chunks_touched(&g2, &zero, g2.shape())? {
                    let target = chunks_touched(&ng, &shift(&c.start), &shift(&c.stop))?;
                    let [t] = target.as_slice() else {
                        return Err(Error::Failure);
                    };
                    copy_stored_chunk(a2.sc, c.nchunk, d.sc, t.nchunk)?;
                }
                return Ok(());
            }
            let mut buf = Vec::new();
            for c in chunks_touched(&g2, &zero, g2.shape())? {
                let shape: Vec<i64> = c.start.iter().zip(&c.stop).map(|(x, y)| y - x).collect();
                buf.resize((shape.iter().product::<i64>() * i64::from(ts)) as usize, 0);
                core::get_slice(&store(a2)?, &g2, &c.start, &c.stop, &mut buf, &shape)?;
                core::set_slice(
                    &mut store(d)?,
                    &ng,
                    &shift(&c.start),
                    &shift(&c.stop),
                    &buf,
                    &shape,
                )?;
            }
            Ok(())
        })();
        if let Err(e) = r {
            if copy {
                drop_array(dst, true);
            }
            return Err(e);
        }
        // SAFETY: writable by contract.
        unsafe { *array = dst };
        Ok(0)
    })
}

/// Stores chunk `from` of `src` (its compressed bytes, as stored) as chunk `to` of `dst`.
pub(super) fn copy_stored_chunk(
    src: *mut blosc2_schunk,
    from: i64,
    dst: *mut blosc2_schunk,
    to: i64,
) -> Result<()> {
    // Read as `blosc2_schunk_get_chunk` reads it (which sets `current_nchunk`), and copied:
    // `src` may be `dst`.
    let get = |r: &crate::capi::handle::Reader<'_>| {
        r.with_buffer(from, |buf| {
            Ok(r.h.core.fetch_chunk(from, buf)?.bytes(buf).to_vec())
        })
    };
    // SAFETY: `src` and `dst` are live arrays' super-chunks.
    let up = unsafe {
        read_op_plain(src, true, get).and_then(|c| mutate(dst, true, |s| s.update_chunk(to, &c)))
    };
    up.map(|_| ()).map_err(|_| Error::Failure)
}
