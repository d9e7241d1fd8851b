//! The chunk engine calling back into C: [`CHooks`] runs user codecs and filters from the
//! [`registry`], a context's prefilter/postfilter, and the user threads callback.

use super::*;

/// The C side of [`Hooks`]: user codecs and filters from the [`registry`], and a context's
/// prefilter/postfilter with the parameter block c-blosc2 keeps in the context.
pub(crate) struct CHooks {
    /// What user codecs/filters receive as `blosc2_cparams*` (a fresh copy per call).
    pub(super) cparams: blosc2_cparams,
    /// What user codecs/filters receive as `blosc2_dparams*`.
    pub(super) dparams: blosc2_dparams,
    pub(super) prefilter: blosc2_prefilter_fn,
    /// The context's copy of `cparams.preparams` (what `ctx_get_cparams` points to).
    pub(super) preparams: Box<UnsafeCell<blosc2_prefilter_params>>,
    pub(super) postfilter: blosc2_postfilter_fn,
    /// The context's copy of `dparams.postparams`.
    pub(super) postparams: Box<UnsafeCell<blosc2_postfilter_params>>,
    /// The owning context (`params->ctx`), set once the context is boxed.
    pub(super) ctx: AtomicPtr<blosc2_context>,
    /// `cparams.schunk` / `dparams.schunk`: where `nchunk` comes from.
    pub(super) schunk: *mut c_void,
}

// SAFETY: the raw pointers are C-owned handles (schunk, callback params) whose thread-safety is
// the C caller's contract, exactly as in c-blosc2, which calls the same callbacks from its
// worker threads; the parameter templates are only read after creation.
unsafe impl Send for CHooks {}
// SAFETY: as above.
unsafe impl Sync for CHooks {}

/// Runs `f` with a scratch buffer of `n` bytes for `params->ttmp`, which c-blosc2 documents as
/// a per-thread temporary callbacks may use. A fresh buffer per call keeps it private to the
/// calling thread without any process-wide state.
fn with_ttmp<R>(n: usize, f: impl FnOnce(*mut u8, usize) -> R) -> R {
    let mut t = vec![0u8; n];
    f(t.as_mut_ptr(), n)
}

/// A user codec's encoder or decoder; `P` is `blosc2_cparams` or `blosc2_dparams`.
type CodecFn<P> =
    unsafe extern "C" fn(*const u8, i32, *mut u8, i32, u8, *mut P, *const c_void) -> c_int;

/// Calls a user codec on `src` -> `dst` (`TwoGbLimit` when a length exceeds `i32`); returns
/// what the codec returned.
///
/// # Safety
/// `f` must honour the C codec contract for the buffers, lengths and `params` it is given.
unsafe fn call_codec<P>(
    f: CodecFn<P>,
    src: &[u8],
    dst: &mut [u8],
    meta: u8,
    params: &mut P,
    chunk: &[u8],
) -> Result<c_int> {
    let (Ok(ilen), Ok(olen)) = (i32::try_from(src.len()), i32::try_from(dst.len())) else {
        return Err(Error::TwoGbLimit);
    };
    // SAFETY: valid buffers of the stated lengths and a live params copy, which is all the
    // codec's C contract requires.
    Ok(unsafe {
        f(
            src.as_ptr(),
            ilen,
            dst.as_mut_ptr(),
            olen,
            meta,
            params,
            chunk.as_ptr() as *const c_void,
        )
    })
}

/// A user filter's forward or backward function; `P` is `blosc2_cparams` or `blosc2_dparams`.
type FilterFn<P> = unsafe extern "C" fn(*const u8, *mut u8, i32, u8, *mut P, u8) -> c_int;

/// Calls user filter `id` on the common length of `src` and `dst` (`TwoGbLimit` when it
/// exceeds `i32`); returns what the filter returned.
///
/// # Safety
/// `f` must honour the C filter contract for the buffers, size and `params` it is given.
unsafe fn call_filter<P>(
    f: FilterFn<P>,
    id: u8,
    meta: u8,
    src: &[u8],
    dst: &mut [u8],
    params: &mut P,
) -> Result<c_int> {
    let len = src.len().min(dst.len());
    let Ok(size) = i32::try_from(len) else {
        return Err(Error::TwoGbLimit);
    };
    // SAFETY: src and dst are valid for `len` bytes; params is a live copy.
    Ok(unsafe { f(src.as_ptr(), dst.as_mut_ptr(), size, meta, params, id) })
}

/// The parameter blocks of prefilter and postfilter callbacks, which lend the callback a
/// scratch buffer the same way.
trait ScratchParams {
    fn set_ttmp(&mut self, ttmp: *mut u8, nbytes: usize);
}

impl ScratchParams for blosc2_prefilter_params {
    fn set_ttmp(&mut self, ttmp: *mut u8, nbytes: usize) {
        self.ttmp = ttmp;
        self.ttmp_nbytes = nbytes;
    }
}

impl ScratchParams for blosc2_postfilter_params {
    fn set_ttmp(&mut self, ttmp: *mut u8, nbytes: usize) {
        self.ttmp = ttmp;
        self.ttmp_nbytes = nbytes;
    }
}

/// Calls a prefilter or postfilter `f` with `p` and a scratch buffer of `ttmp_len` bytes
/// (see [`with_ttmp`]); a non-zero return becomes `err`.
///
/// # Safety
/// Every pointer in `p` must be valid for the duration of the call.
unsafe fn call_block_filter<P: ScratchParams>(
    f: unsafe extern "C" fn(*mut P) -> c_int,
    mut p: P,
    ttmp_len: usize,
    err: Error,
) -> Result<()> {
    let rc = with_ttmp(ttmp_len, |t, n| {
        p.set_ttmp(t, n);
        // SAFETY: every pointer in `p` is valid for the duration of the call (this function's
        // contract; `ttmp` lives until `with_ttmp` returns).
        unsafe { f(&mut p) }
    });
    if rc == 0 {
        Ok(())
    } else {
        Err(err)
    }
}

impl CHooks {
    /// Hooks with user codecs/filters only (the global API, schunk-internal work).
    pub(crate) fn plain() -> CHooks {
        CHooks {
            cparams: BLOSC2_CPARAMS_DEFAULTS,
            dparams: BLOSC2_DPARAMS_DEFAULTS,
            prefilter: None,
            preparams: Box::new(UnsafeCell::new(blosc2_prefilter_params::default())),
            postfilter: None,
            postparams: Box::new(UnsafeCell::new(blosc2_postfilter_params::default())),
            ctx: AtomicPtr::new(std::ptr::null_mut()),
            schunk: std::ptr::null_mut(),
        }
    }

    /// `schunk->current_nchunk`, or -1 without a super-chunk (as c-blosc2 reports it).
    fn nchunk(&self) -> i64 {
        if self.schunk.is_null() {
            return -1;
        }
        // SAFETY: a non-NULL `schunk` in cparams/dparams is a live `blosc2_schunk` by the C
        // contract (the super-chunk owns the context); we read one plain field.
        unsafe { (*(self.schunk as *const blosc2_schunk)).current_nchunk }
    }
}

impl Hooks for CHooks {
    fn codec_version(&self, compcode: u8) -> Option<u8> {
        registry::codec(compcode).map(|c| c.codec.version)
    }

    fn encode(
        &self,
        compcode: u8,
        meta: u8,
        src: &[u8],
        dst: &mut [u8],
        chunk_src: &[u8],
    ) -> Option<Result<usize>> {
        let enc = match registry::codec_functions(compcode)? {
            Ok((Some(enc), _)) => enc,
            Ok((None, _)) => return Some(Err(Error::CodecSupport)),
            Err(e) => return Some(Err(e)),
        };
        let mut cp = self.cparams;
        // SAFETY: a codec from the registry, called as its C contract says.
        let n = unsafe { call_codec(enc, src, dst, meta, &mut cp, chunk_src) };
        Some(n.and_then(|n| match usize::try_from(n) {
            Ok(n) if n <= dst.len() => Ok(n),
            Ok(_) => Err(Error::WriteBuffer),
            Err(_) => Err(Error::Data),
        }))
    }

    fn decode(
        &self,
        compcode: u8,
        meta: u8,
        src: &[u8],
        dst: &mut [u8],
        chunk: &[u8],
    ) -> Option<Result<usize>> {
        let dec = match registry::codec_functions(compcode)? {
            Ok((_, Some(dec))) => dec,
            Ok((_, None)) => return Some(Err(Error::CodecSupport)),
            Err(e) => return Some(Err(e)),
        };
        let mut dp = self.dparams;
        // SAFETY: as for `encode`.
        let n = unsafe { call_codec(dec, src, dst, meta, &mut dp, chunk) };
        Some(n.and_then(|n| match usize::try_from(n) {
            Ok(n) if n <= dst.len() => Ok(n),
            _ => Err(Error::Data),
        }))
    }

    fn filter_forward(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Option<Result<()>> {
        let fwd = match registry::filter_functions(id)? {
            Ok((Some(fwd), _)) => fwd,
            Ok((None, _)) | Err(_) => return Some(Err(Error::FilterPipeline)),
        };
        let mut cp = self.cparams;
        // SAFETY: a filter from the registry, called as its C contract says.
        let rc = unsafe { call_filter(fwd, id, meta, src, dst, &mut cp) };
        Some(rc.and_then(|rc| {
            if rc == 0 {
                Ok(())
            } else {
                Err(Error::FilterPipeline)
            }
        }))
    }

    fn filter_backward(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Option<Result<()>> {
        let bwd = match registry::filter_functions(id)? {
            Ok((_, Some(bwd))) => bwd,
            Ok((_, None)) | Err(_) => return Some(Err(Error::FilterPipeline)),
        };
        let mut dp = self.dparams;
        // SAFETY: as for `filter_forward`.
        let rc = unsafe { call_filter(bwd, id, meta, src, dst, &mut dp) };
        Some(rc.and_then(|rc| {
            if rc == 0 {
                Ok(())
            } else {
                Err(Error::from_code(rc).unwrap_or(Error::FilterPipeline))
            }
        }))
    }

    fn plugin_env(&self) -> crate::chunk::SchunkEnv {
        if self.schunk.is_null() {
            return crate::chunk::SchunkEnv::default();
        }
        // SAFETY: a non-NULL `schunk` in cparams/dparams is a live `blosc2_schunk` by the C
        // contract (as in `nchunk`); like c-blosc2's plugins (through the inline
        // `blosc2_meta_get`) we read its typesize and its metalayer table, whose entries
        // hold NUL-terminated names and `content_len` bytes of content.
        unsafe {
            let sc = &*(self.schunk as *const blosc2_schunk);
            let mut b2nd = None;
            for &m in sc
                .metalayers
                .iter()
                .take(usize::from(sc.nmetalayers).min(16))
            {
                if m.is_null() || (*m).name.is_null() {
                    continue;
                }
                if std::ffi::CStr::from_ptr((*m).name).to_bytes() == b"b2nd" {
                    let len = usize::try_from((*m).content_len).unwrap_or(0);
                    b2nd = Some(if len == 0 || (*m).content.is_null() {
                        Vec::new()
                    } else {
                        std::slice::from_raw_parts((*m).content, len).to_vec()
                    });
                    break;
                }
            }
            crate::chunk::SchunkEnv {
                typesize: Some(sc.typesize),
                b2nd,
            }
        }
    }

    fn has_prefilter(&self) -> bool {
        self.prefilter.is_some()
    }

    fn prefilter_output_typesize(&self) -> i32 {
        // SAFETY: the template is only written by C through `ctx_get_cparams` between calls.
        unsafe { (*self.preparams.get()).output_typesize }
    }

    fn prefilter_output_is_disposable(&self) -> bool {
        // SAFETY: as above.
        unsafe { (*self.preparams.get()).output_is_disposable }
    }

    fn prefilter(&self, a: &mut PrefilterArgs<'_>) -> Result<()> {
        let f = self.prefilter.ok_or(Error::Failure)?;
        // SAFETY: as above; a per-block copy is made, like c-blosc2 does.
        let mut p = unsafe { *self.preparams.get() };
        p.input = a.input.as_ptr();
        p.output = a.output.as_mut_ptr();
        p.output_size = i32::try_from(a.output.len()).map_err(|_| Error::TwoGbLimit)?;
        p.output_typesize = a.output_typesize;
        p.output_offset = a.output_offset;
        p.nchunk = self.nchunk();
        p.nblock = a.nblock;
        p.tid = a.tid;
        p.ctx = self.ctx.load(Ordering::Acquire);
        let ttmp_len = 4 * a.input.len().max(a.output.len());
        // SAFETY: every pointer in `p` is valid for the duration of the call.
        unsafe { call_block_filter(f, p, ttmp_len, Error::FilterPipeline) }
    }

    fn has_postfilter(&self) -> bool {
        self.postfilter.is_some()
    }

    fn postfilter(&self, a: &mut PostfilterArgs<'_>) -> Result<()> {
        let f = self.postfilter.ok_or(Error::Failure)?;
        // SAFETY: as for the prefilter template.
        let mut p = unsafe { *self.postparams.get() };
        p.input = a.input.as_ptr();
        p.output = a.output.as_mut_ptr();
        p.size = a.size;
        p.typesize = a.typesize;
        p.offset = a.offset;
        p.nchunk = self.nchunk();
        p.nblock = a.nblock;
        p.tid = a.tid;
        p.ctx = self.ctx.load(Ordering::Acquire);
        let ttmp_len = 4 * a.input.len().max(a.output.len());
        // SAFETY: every pointer in `p` is valid for the duration of the call.
        unsafe { call_block_filter(f, p, ttmp_len, Error::Postfilter) }
    }
}

/// The user threads callback as the core's runner (`blosc2_set_threads_callback` installs it
/// with [`crate::pool::set_global_runner`]): each worker is one job of the callback.
impl crate::pool::Runner for ThreadsCallback {
    fn run(&self, nworkers: usize, worker: &(dyn Fn(usize) + Sync)) {
        run_with_threads_callback(*self, nworkers, worker);
    }
}

/// One job handed to a user threads callback: a pointer to the job closure and its index.
#[repr(C)]
struct CallbackJob {
    job: *const c_void,
    index: usize,
}

/// The `dojob` given to user threads callbacks.
unsafe extern "C" fn callback_dojob(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: `p` points into the `CallbackJob` array built by `run_with_threads_callback`,
    // alive until the callback returns; `job` points to a `&dyn Fn(usize) + Sync` there too.
    let (job, index) = unsafe {
        let j = &*(p as *const CallbackJob);
        (&*(j.job as *const &(dyn Fn(usize) + Sync)), j.index)
    };
    // A panic must not unwind into C; the engine notices a job that did not finish.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(index)));
}

/// Runs `job(0..njobs)` through a user `blosc_threads_callback`, which must call `dojob` once
/// per job and return when all are done (c-blosc2's contract).
pub(crate) fn run_with_threads_callback(
    cb: ThreadsCallback,
    njobs: usize,
    job: &(dyn Fn(usize) + Sync),
) {
    let job_ref: &(dyn Fn(usize) + Sync) = job;
    let job_ptr = &job_ref as *const &(dyn Fn(usize) + Sync) as *const c_void;
    let mut jobs: Vec<CallbackJob> = (0..njobs)
        .map(|index| CallbackJob {
            job: job_ptr,
            index,
        })
        .collect();
    let n = c_int::try_from(njobs).unwrap_or(c_int::MAX);
    // SAFETY: the callback receives our `dojob`, `n` valid job records of the stated size
    // and its own data pointer; everything stays alive until it returns.
    unsafe {
        (cb.func)(
            cb.data,
            Some(callback_dojob),
            n,
            std::mem::size_of::<CallbackJob>(),
            jobs.as_mut_ptr() as *mut c_void,
        )
    };
}
