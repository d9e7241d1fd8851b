//! The `b2nd_array_t` struct itself: checked access from a pointer, the geometry fields read
//! and rewritten after a shape change, the `b2nd` metalayer published from them (and printed
//! by `b2nd_print_meta`), allocation and release, and the reload of an array whose frame
//! another handle changed.

use super::*;

/// The array behind a pointer.
///
/// # Safety
/// `p` NULL or a live array.
pub(super) unsafe fn arr<'a>(p: *const b2nd_array_t) -> Result<&'a mut b2nd_array_t> {
    if p.is_null() {
        return Err(Error::NullPointer);
    }
    shares::check_current(p)?;
    // SAFETY: live by contract; b2nd arrays are not shared between threads (as in c-blosc2).
    Ok(unsafe { &mut *(p as *mut b2nd_array_t) })
}

/// The array's super-chunk as a store (`NullPointer` without one).
pub(super) fn store(a: &b2nd_array_t) -> Result<CStore> {
    if a.sc.is_null() {
        return Err(Error::NullPointer);
    }
    Ok(CStore { sc: a.sc })
}

/// The geometry the struct describes.
pub(super) fn geometry(a: &b2nd_array_t) -> Result<Geometry> {
    let n = usize::try_from(a.ndim)
        .ok()
        .filter(|&n| n <= MAX_DIM)
        .ok_or(Error::InvalidParam)?;
    Geometry::new(&a.shape[..n], &a.chunkshape[..n], &a.blockshape[..n])
}

/// Writes `g` into the struct (entries past `ndim` are 1, strides past `ndim` 0).
pub(super) fn set_geometry(a: &mut b2nd_array_t, g: &Geometry) {
    let n = g.ndim();
    a.ndim = n as i8;
    a.nitems = g.nitems();
    a.chunknitems = g.chunknitems();
    a.extnitems = g.extnitems();
    a.blocknitems = g.blocknitems();
    a.extchunknitems = g.extchunknitems();
    let s = g.strides();
    for i in 0..MAX_DIM {
        let inside = i < n;
        a.shape[i] = if inside { g.shape()[i] } else { 1 };
        a.chunkshape[i] = if inside { g.chunkshape()[i] } else { 1 };
        a.blockshape[i] = if inside { g.blockshape()[i] } else { 1 };
        a.extshape[i] = if inside { g.extshape()[i] } else { 1 };
        a.extchunkshape[i] = if inside { g.extchunkshape()[i] } else { 1 };
        let pick = |v: &Vec<i64>| if inside { v[i] } else { 0 };
        a.item_array_strides[i] = pick(&s.item_array);
        a.item_chunk_strides[i] = pick(&s.item_chunk);
        a.item_extchunk_strides[i] = pick(&s.item_extchunk);
        a.item_block_strides[i] = pick(&s.item_block);
        a.block_chunk_strides[i] = pick(&s.block_chunk);
        a.chunk_array_strides[i] = pick(&s.chunk_array);
    }
}

/// The dtype string of the struct.
pub(super) fn dtype_of(a: &b2nd_array_t) -> Option<Vec<u8>> {
    // SAFETY: NULL or the NUL-terminated string this module malloc'ed.
    (!a.dtype.is_null()).then(|| unsafe { CStr::from_ptr(a.dtype) }.to_bytes().to_vec())
}

/// A malloc'ed NUL-terminated copy of `s`.
pub(super) fn strdup(s: &[u8]) -> Result<*mut c_char> {
    let mut v = s.to_vec();
    v.push(0);
    let p = malloc_copy(&v) as *mut c_char;
    if p.is_null() {
        return Err(Error::MemoryAlloc);
    }
    Ok(p)
}

/// Stores the struct's geometry in the `b2nd` metalayer (added or updated).
pub(super) fn publish_meta(a: &mut b2nd_array_t) -> Result<()> {
    if a.sc.is_null() {
        return Ok(());
    }
    let g = geometry(a)?;
    let dt = dtype_of(a);
    let m = b2nd_meta::serialize(
        g.shape(),
        g.chunkshape(),
        g.blockshape(),
        dt.as_deref(),
        a.dtype_format,
    )
    .map_err(|_| Error::Failure)?;
    let exists = meta_get(a.sc, "b2nd").is_some();
    let set = |h: &mut Handle, n: &str| match exists {
        true => h.core.update_metalayer(n, &m),
        false => h.core.add_metalayer(n, &m),
    };
    // SAFETY: live schunk; the name is NUL-terminated.
    unsafe { meta_op(a.sc, c"b2nd".as_ptr(), false, set) }.map_err(|_| Error::Failure)?;
    // SAFETY: live schunk.
    a.last_tick = unsafe { (*a.sc).change_tick };
    Ok(())
}

/// A new zeroed `malloc`ed struct with an empty chunk cache.
pub(super) fn alloc_array() -> Result<*mut b2nd_array_t> {
    let p = malloc_zeroed(std::mem::size_of::<b2nd_array_t>()) as *mut b2nd_array_t;
    if p.is_null() {
        return Err(Error::MemoryAlloc);
    }
    // SAFETY: freshly allocated, zeroed (a valid bit pattern for every field) and ours.
    unsafe { (*p).chunk_cache.nchunk = -1 };
    Ok(p)
}

/// Frees a struct built here, with its dtype and (when `with_sc`) its super-chunk unless a
/// view or the parent of a view still uses it ([`shares`]).
pub(super) fn drop_array(p: *mut b2nd_array_t, with_sc: bool) {
    if p.is_null() {
        return;
    }
    // SAFETY: `p` is a live array of ours; each owned pointer is released once.
    unsafe {
        if with_sc && !(*p).sc.is_null() && shares::release(p, (*p).sc) {
            let _ = free_block((*p).sc);
        }
        libc::free((*p).dtype as *mut c_void);
        libc::free(p as *mut c_void);
    }
}

/// Re-reads the geometry when another handle changed the `b2nd` metalayer of a disk frame
/// (c-blosc2's refresh path). Returns whether it re-synced.
pub(super) fn refresh_if_stale(a: &mut b2nd_array_t) -> Result<bool> {
    // A view's geometry is its own, not the shared metalayer's.
    if a.sc.is_null() || shares::is_view(a) {
        return Ok(false);
    }
    // SAFETY: live schunk.
    let (frame, on_disk) = unsafe {
        let s = &*a.sc;
        let disk = !s.storage.is_null() && !(*s.storage).urlpath.is_null();
        (s.frame, disk)
    };
    if frame.is_null() {
        return Ok(false);
    }
    if on_disk {
        // SAFETY: live schunk.
        unsafe { schunk_refresh(a.sc) }?;
    }
    // SAFETY: live schunk.
    let tick = unsafe { (*a.sc).change_tick };
    if tick == a.last_tick {
        return Ok(false);
    }
    let Some(m) = meta_get(a.sc, "b2nd").or_else(|| meta_get(a.sc, "caterva")) else {
        return Ok(false);
    };
    let (m, _) = b2nd_meta::deserialize(&m, true)?;
    let n = m.ndim();
    if n != a.ndim as usize
        || m.chunkshape[..] != a.chunkshape[..n]
        || m.blockshape[..] != a.blockshape[..n]
    {
        return Err(Error::Data);
    }
    let g = Geometry::stored(&m.shape, &m.chunkshape, &m.blockshape)?;
    set_geometry(a, &g);
    a.last_tick = tick;
    Ok(true)
}

// ---------------------------------------------------------------------------------------------
// Contexts
// ---------------------------------------------------------------------------------------------

/// Prints the `b2nd` metalayer to stdout, in c-blosc2's format.
///
/// # Safety
/// `array` live.
#[no_mangle]
pub unsafe extern "C" fn b2nd_print_meta(array: *const b2nd_array_t) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let a = unsafe { arr(array) }?;
        store(a)?;
        let m = if shares::is_view(a) {
            let g = geometry(a)?;
            b2nd_meta::serialize(
                g.shape(),
                g.chunkshape(),
                g.blockshape(),
                dtype_of(a).as_deref(),
                a.dtype_format,
            )?
        } else {
            meta_get(a.sc, "b2nd")
                .or_else(|| meta_get(a.sc, "caterva"))
                .ok_or(Error::MetalayerNotFound)?
        };
        let (m, _) = b2nd_meta::deserialize(&m, true)?;
        let join = |v: Vec<String>| v.join(", ");
        let mut out = format!("b2nd metalayer parameters:\n Ndim:       {}", m.ndim());
        out += &format!(
            "\n shape:      {}",
            join(m.shape.iter().map(|x| x.to_string()).collect())
        );
        out += &format!(
            "\n chunkshape: {}",
            join(m.chunkshape.iter().map(|x| x.to_string()).collect())
        );
        if let Some(d) = &m.dtype {
            out += &format!("\n dtype: {}", String::from_utf8_lossy(d));
        }
        out += &format!(
            "\n blockshape: {}\n",
            join(m.blockshape.iter().map(|x| x.to_string()).collect())
        );
        // Through C stdio, so that the output interleaves with the caller's printf.
        let c = std::ffi::CString::new(out).map_err(|_| Error::Failure)?;
        // SAFETY: "%s" with a valid C string.
        unsafe { libc::printf(c"%s".as_ptr(), c.as_ptr()) };
        Ok(0)
    })
}
