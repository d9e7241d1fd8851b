//! The array's super-chunk seen through its C API: [`CStore`], the [`ChunkStore`] through
//! which the array core reads and writes chunks, and the metalayer helpers. Every chunk access
//! of an array goes through here, that is through the bodies of the super-chunk's own
//! operations, so locking, counters, user codecs and prefilters behave as for any other
//! super-chunk.

use super::*;

/// The array's super-chunk as a [`ChunkStore`].
pub(super) struct CStore {
    pub(super) sc: *mut blosc2_schunk,
}

impl CStore {
    fn sc(&self) -> &blosc2_schunk {
        // SAFETY: built only from a live array's non-NULL `sc` (see `store`).
        unsafe { &*self.sc }
    }
}

impl ChunkStore for CStore {
    fn typesize(&self) -> i32 {
        self.sc().typesize
    }
    fn nchunks(&self) -> i64 {
        // From the core under the shared lock: the struct's mirror is rewritten by every
        // mutation, which may be running on another thread.
        // SAFETY: live schunk.
        unsafe { read_op(self.sc, false, |r| Ok(r.h.core.nchunks())) }
            .unwrap_or_else(|_| self.sc().nchunks)
    }
    fn read_chunk(&self, nchunk: i64, dst: &mut [u8]) -> Result<usize> {
        i32::try_from(dst.len()).map_err(|_| Error::InvalidParam)?;
        // SAFETY: live schunk.
        unsafe { decompress_chunk_masked(self.sc, nchunk, None, dst) }.map_err(|_| Error::Failure)
    }
    fn nthreads(&self) -> i32 {
        // SAFETY: live schunk; `dctx` is its decompression context (or NULL: an error).
        unsafe { ctx_dparams(self.sc().dctx) }.map_or(1, |dp| i32::from(dp.nthreads))
    }
    fn read_blocks(
        &self,
        nchunk: i64,
        chunk_bytes: usize,
        nblocks: &[i64],
        scratch: &mut [u8],
        f: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<bool> {
        // SAFETY: live schunk.
        unsafe { decode_blocks(self.sc, nchunk, chunk_bytes, nblocks, scratch, f) }.map_err(
            |e| match e {
                Error::InvalidParam | Error::ReadBuffer | Error::InvalidHeader => Error::Data,
                e => e,
            },
        )?;
        Ok(true)
    }
    fn read_chunk_blocks(&self, nchunk: i64, skip: &[bool], dst: &mut [u8]) -> Result<usize> {
        // The mask goes with this read only: other threads reading the array at the same time
        // use the same `dctx` (or spares of it) with masks of their own.
        // SAFETY: live schunk.
        unsafe { decompress_chunk_masked(self.sc, nchunk, Some(skip.to_vec()), dst) }
            .map_err(|_| Error::Failure)
    }
    fn write_chunk(&mut self, nchunk: i64, src: &[u8]) -> Result<()> {
        if src.len() > BLOSC2_MAX_BUFFERSIZE as usize {
            return Err(Error::MaxBufsizeExceeded);
        }
        // Compressed as `blosc2_schunk_update_chunk`'s own callers compress: `current_nchunk`
        // (which prefilters read) set and pinned under the handle's `dctx` mutex, so that
        // readers of the same super-chunk decoding meanwhile neither race on it nor change it.
        let c = {
            // SAFETY: live schunk.
            let w = unsafe { crate::capi::handle::writer(self.sc) }?;
            w.compress(nchunk, src).map_err(|_| Error::Failure)?
        };
        // SAFETY: live schunk.
        let rc = unsafe { mutate(self.sc, true, |s| s.update_chunk(nchunk, &c)) };
        rc.map(|_| ()).map_err(|_| Error::Failure)
    }
    fn insert_zero_chunk(&mut self, nchunk: i64, nbytes: i32) -> Result<()> {
        let cp = cparams_of(self.sc)?;
        let mut c = [0u8; BLOSC_EXTENDED_HEADER_LENGTH as usize];
        // SAFETY: `c` is valid for its length.
        let n = unsafe {
            let d = c.as_mut_ptr() as *mut c_void;
            special_chunk(&cp, nbytes, d, c.len() as i32, SpecialCtor::Zeros)
        };
        let n = n.map_err(|_| Error::Failure)?;
        // SAFETY: live schunk.
        let rc = unsafe { mutate(self.sc, true, |s| s.insert_chunk(nchunk, &c[..n])) };
        rc.map(|_| ()).map_err(|_| Error::Failure)
    }
    fn delete_chunk(&mut self, nchunk: i64) -> Result<()> {
        // SAFETY: live schunk.
        let rc = unsafe { mutate(self.sc, true, |s| s.delete_chunk(nchunk)) };
        rc.map(|_| ()).map_err(|_| Error::Failure)
    }
    fn commit_shape(&mut self, shape: &[i64]) -> Result<()> {
        let Some(m) = meta_get(self.sc, "b2nd") else {
            return Ok(());
        };
        let m = b2nd_meta::with_shape(&m, shape).map_err(|_| Error::Failure)?;
        let update = |h: &mut Handle, n: &str| h.core.update_metalayer(n, &m);
        // SAFETY: live schunk; the name is NUL-terminated.
        let rc = unsafe { meta_op(self.sc, c"b2nd".as_ptr(), false, update) };
        rc.map(|_| ()).map_err(|_| Error::Failure)
    }
}

/// A copy of the super-chunk's cparams.
pub(super) fn cparams_of(sc: *mut blosc2_schunk) -> Result<blosc2_cparams> {
    // SAFETY: live schunk.
    let mut cp = unsafe { stored_params(sc, |st| st.cparams) }.map_err(|_| Error::NullPointer)?;
    cp.schunk = sc as *mut c_void;
    Ok(cp)
}

/// The metalayer `name` of a super-chunk (from its C mirror, like c-blosc2's header-inline
/// `blosc2_meta_get`).
pub(super) fn meta_get(sc: *mut blosc2_schunk, name: &str) -> Option<Vec<u8>> {
    // SAFETY: live schunk; its mirrored metalayers are valid C strings and buffers.
    unsafe {
        let s = &*sc;
        for i in 0..usize::from(s.nmetalayers).min(16) {
            let m = s.metalayers[i];
            if m.is_null() || (*m).name.is_null() {
                continue;
            }
            if CStr::from_ptr((*m).name).to_bytes() == name.as_bytes() {
                let len = usize::try_from((*m).content_len).ok()?;
                if len == 0 || (*m).content.is_null() {
                    return Some(Vec::new());
                }
                return Some(std::slice::from_raw_parts((*m).content, len).to_vec());
            }
        }
    }
    None
}

/// Names of the super-chunk's metalayers.
pub(super) fn meta_names(sc: *mut blosc2_schunk) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    // SAFETY: live schunk; mirrored names are valid C strings.
    unsafe {
        let s = &*sc;
        for i in 0..usize::from(s.nmetalayers).min(16) {
            let m = s.metalayers[i];
            if !m.is_null() && !(*m).name.is_null() {
                v.push(CStr::from_ptr((*m).name).to_bytes().to_vec());
            }
        }
    }
    v
}

/// Copies every vlmetalayer of `from` to `to`.
pub(super) fn copy_vlmeta(from: *mut blosc2_schunk, to: *mut blosc2_schunk) -> Result<()> {
    let mut names = Vec::new();
    // SAFETY: live schunk; mirrored names are valid C strings.
    unsafe {
        let s = &*from;
        for i in 0..usize::try_from(s.nvlmetalayers)
            .unwrap_or(0)
            .min(s.vlmetalayers.len())
        {
            let m = s.vlmetalayers[i];
            if !m.is_null() && !(*m).name.is_null() {
                names.push(CStr::from_ptr((*m).name).to_owned());
            }
        }
    }
    let cp = crate::capi::chunk::core_cparams(&BLOSC2_CPARAMS_DEFAULTS);
    for n in names {
        let name = n.to_str().map_err(|_| Error::InvalidParam)?;
        // SAFETY: live schunks; `n` is NUL-terminated.
        unsafe {
            let c = read_op(from, false, |r| r.h.core.vlmeta_get(name))?;
            i32::try_from(c.len()).map_err(|_| Error::Data)?;
            let add = |h: &mut Handle, n: &str| h.core.vlmeta_add(n, &c, Some(&cp));
            meta_op(to, n.as_ptr(), true, add)?;
        }
    }
    Ok(())
}
