//! Contexts and the chunk-level C API: `blosc2_create_cctx/dctx`, `blosc2_*_ctx`, the VL-block
//! entry points, the `cbuffer_*` inspectors and the special-value chunk constructors. (The
//! global Blosc1-style API lives in [`super::blosc1`].)
//!
//! A `blosc2_context*` is a `Box<Context>`: the safe [`Compressor`] or [`Decompressor`], the
//! parameters as the caller sees them through `blosc2_ctx_get_cparams/dparams` (after the
//! `BLOSC_*` environment overrides c-blosc2 applies at creation), and `CHooks`, the bridge
//! that lets the chunk engine call user codecs, user filters and the pre/postfilter callbacks.
//!
//! Deliberate differences from the reference, all where it would crash or write garbage: NULL
//! pointers give `BLOSC2_ERROR_NULL_POINTER` (or NULL), a zero typesize gives
//! `INVALID_PARAM`, a negative source size is `INVALID_PARAM` (c-blosc2 writes a chunk with
//! nbytes -1) and a negative destination size counts as 0.

use super::boundary::{guard_int, guard_or, guard_ptr, guard_void, malloc_copy, slice, slice_mut};
use super::globals::{self, ThreadsCallback};
use super::registry;
use super::types::*;
use crate::chunk::header::{self, ChunkHeader, EXTENDED_HEADER_LEN, MIN_HEADER_LEN};
use crate::chunk::{
    special, vlchunk_nblocks, CParams, Compressor, DParams, Decompressor, Hooks, PostfilterArgs,
    PrefilterArgs,
};
use crate::env;
use crate::error::{Error, Result};
use std::cell::UnsafeCell;
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Arc;

// ---------------------------------------------------------------------------------------------
// Hooks: the chunk engine calling back into C
// ---------------------------------------------------------------------------------------------

/// The C side of [`Hooks`]: user codecs and filters from the [`registry`], and a context's
/// prefilter/postfilter with the parameter block c-blosc2 keeps in the context.
pub(crate) struct CHooks {
    /// What user codecs/filters receive as `blosc2_cparams*` (a fresh copy per call).
    cparams: blosc2_cparams,
    /// What user codecs/filters receive as `blosc2_dparams*`.
    dparams: blosc2_dparams,
    prefilter: blosc2_prefilter_fn,
    /// The context's copy of `cparams.preparams` (what `ctx_get_cparams` points to).
    preparams: Box<UnsafeCell<blosc2_prefilter_params>>,
    postfilter: blosc2_postfilter_fn,
    /// The context's copy of `dparams.postparams`.
    postparams: Box<UnsafeCell<blosc2_postfilter_params>>,
    /// The owning context (`params->ctx`), set once the context is boxed.
    ctx: AtomicPtr<blosc2_context>,
    /// `cparams.schunk` / `dparams.schunk`: where `nchunk` comes from.
    schunk: *mut c_void,
    /// The context's thread count, which bounds the jobs handed to a threads callback
    /// (`None`: the global API, bounded by `blosc2_get_nthreads()`).
    nthreads: Option<i16>,
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
            nthreads: None,
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
        let entry = registry::codec(compcode)?;
        let Some(enc) = entry.codec.encoder else {
            return Some(Err(Error::CodecSupport));
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
        let entry = registry::codec(compcode)?;
        let Some(dec) = entry.codec.decoder else {
            return Some(Err(Error::CodecSupport));
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
        let entry = registry::filter(id)?;
        let Some(fwd) = entry.filter.forward else {
            return Some(Err(Error::FilterPipeline));
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
        let entry = registry::filter(id)?;
        let Some(bwd) = entry.filter.backward else {
            return Some(Err(Error::FilterPipeline));
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

    fn run_parallel(&self, njobs: usize, job: &(dyn Fn(usize) + Sync)) -> bool {
        let Some(cb) = globals::threads_callback() else {
            return false;
        };
        // The thread count bounds `numjobs`; each callback job claims blocks until none
        // are left.
        let bound = self
            .nthreads
            .unwrap_or_else(|| globals::lock().nthreads)
            .max(1) as usize;
        let workers = njobs.min(bound);
        let next = AtomicUsize::new(0);
        let worker = |_: usize| loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= njobs {
                break;
            }
            job(i);
        };
        run_with_threads_callback(cb, workers, &worker);
        true
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

// ---------------------------------------------------------------------------------------------
// Contexts
// ---------------------------------------------------------------------------------------------

enum Engine {
    Compress(Compressor),
    Decompress(Decompressor),
}

/// What a `blosc2_context*` points to.
pub struct Context {
    engine: Engine,
    hooks: Arc<CHooks>,
    /// The parameters `blosc2_ctx_get_cparams` reports (environment overrides applied).
    cparams: blosc2_cparams,
    /// The parameters `blosc2_ctx_get_dparams` reports.
    dparams: blosc2_dparams,
    /// A failure c-blosc2 reports at the first compression rather than at creation (an
    /// unknown `BLOSC_COMPRESSOR`). A thread count <= 0 is not one: c-blosc2 then runs
    /// serially, and so does this.
    deferred: Option<Error>,
    /// A decoder for `getitem` calls on a compression context (c-blosc2 allows them).
    aux: Option<Decompressor>,
}

impl Context {
    /// The super-chunk this context belongs to (`cparams.schunk` / `dparams.schunk`), which
    /// lazy-chunk decompression needs.
    pub fn schunk(&self) -> *mut c_void {
        self.hooks.schunk
    }

    /// Whether this is a compression context.
    pub fn is_compression(&self) -> bool {
        matches!(self.engine, Engine::Compress(_))
    }

    fn compressor(&mut self) -> Result<&mut Compressor> {
        match &mut self.engine {
            Engine::Compress(c) => match self.deferred {
                Some(e) => Err(e),
                None => Ok(c),
            },
            Engine::Decompress(_) => Err(Error::InvalidParam),
        }
    }

    fn decompressor(&mut self) -> Result<&mut Decompressor> {
        match &mut self.engine {
            Engine::Decompress(d) => match self.deferred {
                Some(e) => Err(e),
                None => Ok(d),
            },
            Engine::Compress(_) => Err(Error::InvalidParam),
        }
    }

    /// Makes every later compression fail with `e` (how c-blosc2 reports an unusable
    /// compressor set through the Blosc1 API).
    pub(crate) fn fail_compressions_with(&mut self, e: Error) {
        self.deferred = Some(e);
    }

    /// The decoder `getitem` uses: the context's own, or an auxiliary one for compression
    /// contexts.
    fn getitem_engine(&mut self) -> Result<&mut Decompressor> {
        match &mut self.engine {
            Engine::Decompress(d) => Ok(d),
            Engine::Compress(_) => {
                if self.aux.is_none() {
                    self.aux = Some(Decompressor::new(DParams::default(), self.hooks.clone())?);
                }
                self.aux.as_mut().ok_or(Error::Failure)
            }
        }
    }

    /// Compresses `src` into `dst` (0 = does not fit).
    pub(crate) fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        if self.cparams.instr_codec {
            let cp = *self.compressor()?.cparams();
            if let Some(n) = crate::chunk::instr::compress(&cp, &*self.hooks, src, dst)? {
                return Ok(n);
            }
        }
        self.compressor()?.compress(src, dst)
    }

    /// Decompresses a whole chunk; returns nbytes.
    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        let n = self.decompressor()?.decompress(src, dst)?;
        self.dparams.typesize = i32::from(src.get(3).copied().unwrap_or(0));
        Ok(n)
    }

    fn into_raw(self: Box<Self>) -> *mut blosc2_context {
        let hooks = Arc::clone(&self.hooks);
        let p = Box::into_raw(self) as *mut blosc2_context;
        hooks.ctx.store(p, Ordering::Release);
        p
    }
}

/// Borrows the context behind a C handle.
///
/// # Safety
/// `ctx` must be NULL or a live handle from `blosc2_create_cctx/dctx`, not used concurrently.
pub unsafe fn context_mut<'a>(ctx: *mut blosc2_context) -> Result<&'a mut Context> {
    if ctx.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: by this function's contract `ctx` came from `Context::into_raw`.
    Ok(unsafe { &mut *(ctx as *mut Context) })
}

/// The super-chunk a context is bound to (NULL for NULL or unbound contexts).
///
/// # Safety
/// As for [`context_mut`].
pub unsafe fn context_schunk(ctx: *mut blosc2_context) -> *mut c_void {
    // SAFETY: forwarded contract.
    unsafe { context_mut(ctx) }.map_or(std::ptr::null_mut(), |c| c.schunk())
}

/// `build_filters`: what the shuffle/delta switches of the Blosc1 API and of `BLOSC_SHUFFLE` /
/// `BLOSC_DELTA` do to a pipeline (slots 5 and 4). `doshuffle` outside 0..=2 leaves slot 5.
pub(crate) fn build_filters(doshuffle: i32, delta: bool, typesize: i32, filters: &mut [u8; 6]) {
    match doshuffle {
        1 if typesize > 1 => filters[5] = 1,
        2 => filters[5] = 2,
        0 => filters[5] = 0,
        _ => {}
    }
    if delta {
        filters[4] = 3;
    }
}

/// Filter ids c-blosc2 refuses at context creation: 5..=31 and 37..=159 (undefined).
fn undefined_filter(id: u8) -> bool {
    (5..=31).contains(&id) || (37..=159).contains(&id)
}

/// The core parameters for C cparams (clevel and compcode are checked by the engine).
pub(crate) fn core_cparams(cp: &blosc2_cparams) -> CParams {
    CParams {
        compcode: cp.compcode,
        compcode_meta: cp.compcode_meta,
        clevel: cp.clevel,
        use_dict: cp.use_dict != 0,
        typesize: cp.typesize,
        nthreads: cp.nthreads.max(1),
        blocksize: cp.blocksize,
        splitmode: cp.splitmode,
        filters: cp.filters,
        filters_meta: cp.filters_meta,
    }
}

/// `blosc2_create_cctx` without the FFI: validates filters, applies the environment
/// (`BLOSC_SHUFFLE, DELTA, TYPESIZE, CLEVEL, COMPRESSOR, BLOCKSIZE, NTHREADS, SPLITMODE`) like
/// c-blosc2 and builds the compressor. `None` where the reference returns NULL.
pub(crate) fn create_cctx(
    given: &blosc2_cparams,
    lookup: impl Fn(&str) -> Option<String>,
) -> Option<Box<Context>> {
    if given.filters.iter().copied().any(undefined_filter) {
        return None;
    }
    let mut cp = *given;
    let mut deferred = None;
    cp.typesize = env::positive_i32(&lookup, env::names::TYPESIZE).unwrap_or(cp.typesize);
    let doshuffle = env::shuffle(&lookup).map_or(-1, i32::from);
    let delta = env::delta(&lookup).unwrap_or(false);
    build_filters(doshuffle, delta, cp.typesize, &mut cp.filters);
    if let Some(cl) = env::clevel(&lookup) {
        // c-blosc2 keeps an int; anything above 255 fails the 0..=9 check all the same.
        cp.clevel = u8::try_from(cl).unwrap_or(u8::MAX);
    }
    if let Some(name) = lookup(env::names::COMPRESSOR) {
        let code = registry::compname_to_compcode(&name);
        if code >= BLOSC_LAST_CODEC {
            return None;
        }
        match u8::try_from(code) {
            Ok(c) => cp.compcode = c,
            Err(_) => deferred = Some(Error::CodecSupport),
        }
    }
    cp.blocksize = env::positive_i32(&lookup, env::names::BLOCKSIZE).unwrap_or(cp.blocksize);
    cp.nthreads = env::nthreads_for_context(&lookup).unwrap_or(cp.nthreads);
    cp.splitmode = env::splitmode(&lookup).unwrap_or(cp.splitmode);
    if cp.tuner_id > 0 && !registry::has_tuner(cp.tuner_id) {
        return None;
    }
    let template = if given.prefilter.is_some() && !given.preparams.is_null() {
        // SAFETY: a non-NULL preparams is a valid struct by the C contract (c-blosc2 copies
        // it the same way).
        unsafe { *given.preparams }
    } else {
        blosc2_prefilter_params::default()
    };
    let hooks = Arc::new(CHooks {
        cparams: cp,
        prefilter: given.prefilter,
        preparams: Box::new(UnsafeCell::new(template)),
        schunk: given.schunk,
        nthreads: Some(cp.nthreads),
        ..CHooks::plain()
    });
    let mut reported = cp;
    reported.preparams = if cp.prefilter.is_some() {
        hooks.preparams.get()
    } else {
        std::ptr::null_mut()
    };
    let mut compressor = Compressor::new(core_cparams(&cp), hooks.clone()).ok()?;
    if cp.nthreads > 1 {
        let pool = globals::shared_pool(cp.nthreads as usize).ok()?;
        compressor.set_pool(pool).ok()?;
    }
    Some(Box::new(Context {
        engine: Engine::Compress(compressor),
        hooks,
        cparams: reported,
        // What c-blosc2 reports for the other kind of parameters: the context's own fields.
        dparams: blosc2_dparams {
            nthreads: cp.nthreads,
            schunk: cp.schunk,
            typesize: cp.typesize,
            ..BLOSC2_DPARAMS_DEFAULTS
        },
        deferred,
        aux: None,
    }))
}

/// `blosc2_create_dctx` without the FFI (honours `BLOSC_NTHREADS`).
pub(crate) fn create_dctx(
    given: &blosc2_dparams,
    lookup: impl Fn(&str) -> Option<String>,
) -> Option<Box<Context>> {
    let mut dp = *given;
    dp.nthreads = env::nthreads_for_context(&lookup).unwrap_or(dp.nthreads);
    let template = if given.postfilter.is_some() && !given.postparams.is_null() {
        // SAFETY: a non-NULL postparams is a valid struct by the C contract.
        unsafe { *given.postparams }
    } else {
        blosc2_postfilter_params::default()
    };
    let hooks = Arc::new(CHooks {
        dparams: dp,
        postfilter: given.postfilter,
        postparams: Box::new(UnsafeCell::new(template)),
        schunk: given.schunk,
        nthreads: Some(dp.nthreads),
        ..CHooks::plain()
    });
    let mut reported = dp;
    // The typesize reported is the one of the last chunk decoded (none yet: 0), as in c-blosc2.
    reported.typesize = 0;
    reported.postparams = if dp.postfilter.is_some() {
        hooks.postparams.get()
    } else {
        std::ptr::null_mut()
    };
    let core = DParams {
        nthreads: dp.nthreads.max(1),
    };
    let mut decompressor = Decompressor::new(core, hooks.clone()).ok()?;
    if core.nthreads > 1 {
        let pool = globals::shared_pool(core.nthreads as usize).ok()?;
        decompressor.set_pool(pool).ok()?;
    }
    Some(Box::new(Context {
        engine: Engine::Decompress(decompressor),
        hooks,
        // c-blosc2 reports a decompression context's unset compression fields as zeros.
        cparams: blosc2_cparams {
            compcode: 0,
            clevel: 0,
            typesize: 0,
            splitmode: 0,
            filters: [0; 6],
            nthreads: dp.nthreads,
            schunk: dp.schunk,
            ..BLOSC2_CPARAMS_DEFAULTS
        },
        dparams: reported,
        deferred: None,
        aux: None,
    }))
}

/// A compression context for `cparams` (environment applied); NULL for undefined filter ids,
/// an unknown user tuner, or a user codec named in `BLOSC_COMPRESSOR`.
#[no_mangle]
pub extern "C" fn blosc2_create_cctx(cparams: blosc2_cparams) -> *mut blosc2_context {
    guard_ptr(|| {
        create_cctx(&cparams, env::from_process)
            .map(Context::into_raw)
            .ok_or(Error::Failure)
    })
}

/// A decompression context for `dparams` (`BLOSC_NTHREADS` applied).
#[no_mangle]
pub extern "C" fn blosc2_create_dctx(dparams: blosc2_dparams) -> *mut blosc2_context {
    guard_ptr(|| {
        create_dctx(&dparams, env::from_process)
            .map(Context::into_raw)
            .ok_or(Error::Failure)
    })
}

/// Frees a context (NULL is ignored).
///
/// # Safety
/// `context` must be NULL or a live handle from `blosc2_create_cctx/dctx`, freed only once.
#[no_mangle]
pub unsafe extern "C" fn blosc2_free_ctx(context: *mut blosc2_context) {
    guard_void(|| {
        if !context.is_null() {
            // SAFETY: by this function's contract the handle came from `Context::into_raw`.
            drop(unsafe { Box::from_raw(context as *mut Context) });
        }
    })
}

/// Copies a context's compression parameters into `*cparams`.
///
/// # Safety
/// `ctx` as for [`blosc2_free_ctx`]; `cparams` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_ctx_get_cparams(
    ctx: *mut blosc2_context,
    cparams: *mut blosc2_cparams,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { context_mut(ctx) }?;
        if cparams.is_null() {
            return Err(Error::NullPointer);
        }
        // c-blosc2 leaves `tuner_params` and `filter_params` as the caller had them.
        // SAFETY: non-NULL and writable by this function's contract.
        let out = unsafe { &mut *cparams };
        let keep_tuner = out.tuner_params;
        let keep_filters = out.filter_params;
        *out = c.cparams;
        out.tuner_params = keep_tuner;
        out.filter_params = keep_filters;
        Ok(0)
    })
}

/// Copies a context's decompression parameters into `*dparams`.
///
/// # Safety
/// `ctx` as for [`blosc2_free_ctx`]; `dparams` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_ctx_get_dparams(
    ctx: *mut blosc2_context,
    dparams: *mut blosc2_dparams,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { context_mut(ctx) }?;
        if dparams.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: non-NULL and writable by this function's contract.
        unsafe { *dparams = c.dparams };
        Ok(0)
    })
}

/// Sets a one-shot block mask (true = skip) for the next decompression with `ctx`.
///
/// # Safety
/// `ctx` as for [`blosc2_free_ctx`]; `maskout` must hold `nblocks` bools.
#[no_mangle]
pub unsafe extern "C" fn blosc2_set_maskout(
    ctx: *mut blosc2_context,
    maskout: *mut bool,
    nblocks: c_int,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { context_mut(ctx) }?;
        let n = usize::try_from(nblocks).map_err(|_| Error::InvalidParam)?;
        // SAFETY: `maskout` holds `nblocks` bools by this function's contract.
        let mask = unsafe { slice(maskout as *const u8, n) }?;
        let mask: Vec<bool> = mask.iter().map(|&b| b != 0).collect();
        c.decompressor()?.set_maskout(&mask);
        Ok(0)
    })
}

// ---------------------------------------------------------------------------------------------
// Buffers from C arguments
// ---------------------------------------------------------------------------------------------

/// `len` as a buffer length: c-blosc2 sizes are `int32_t`; negative ones count as empty.
pub(crate) fn len_of(len: i32) -> usize {
    usize::try_from(len).unwrap_or(0)
}

/// Borrows a C input buffer of `len` bytes (negative = 0).
///
/// # Safety
/// `p` must be valid for `len` readable bytes (or NULL / `len <= 0`).
pub(crate) unsafe fn input<'a>(p: *const c_void, len: i32) -> Result<&'a [u8]> {
    // SAFETY: forwarded contract.
    unsafe { slice(p as *const u8, len_of(len)) }
}

/// Borrows a C output buffer of `len` bytes (negative = 0).
///
/// # Safety
/// `p` must be valid for `len` writable bytes (or NULL / `len <= 0`).
pub(crate) unsafe fn output<'a>(p: *mut c_void, len: i32) -> Result<&'a mut [u8]> {
    // SAFETY: forwarded contract.
    unsafe { slice_mut(p as *mut u8, len_of(len)) }
}

/// Borrows a whole chunk whose length the caller did not give (Blosc1 API): the header is read
/// first (16 bytes, then 32 if extended) and the chunk is `cbytes` long.
///
/// # Safety
/// `p` must point to a complete chunk.
pub(crate) unsafe fn whole_chunk<'a>(p: *const c_void) -> Result<&'a [u8]> {
    // SAFETY: a chunk has at least a 16-byte header by this function's contract.
    let head = unsafe { slice(p as *const u8, MIN_HEADER_LEN) }?;
    let mut need = MIN_HEADER_LEN;
    if head[2] & header::flags::EXTENDED == header::flags::EXTENDED {
        need = EXTENDED_HEADER_LEN;
    }
    let cbytes = i32::from_le_bytes([head[12], head[13], head[14], head[15]]);
    let len = len_of(cbytes).max(need);
    // SAFETY: the chunk is `cbytes` long by this function's contract (the header says so).
    unsafe { slice(p as *const u8, len) }
}

// ---------------------------------------------------------------------------------------------
// Context API
// ---------------------------------------------------------------------------------------------

/// Compresses `srcsize` bytes into `dest`; returns the chunk size, 0 if it does not fit, or a
/// negative error.
///
/// # Safety
/// `context` a live compression context; `src`/`dest` valid for their sizes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_compress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { context_mut(context) }?;
        if srcsize < 0 {
            return Err(Error::InvalidParam);
        }
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { (input(src, srcsize)?, output(dest, destsize)?) };
        Ok(c.compress(s, d)? as c_int)
    })
}

/// Decompresses a chunk into `dest`; returns the number of bytes written.
///
/// # Safety
/// `context` a live decompression context; `src`/`dest` valid for their sizes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_decompress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { context_mut(context) }?;
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { (input(src, srcsize)?, output(dest, destsize)?) };
        Ok(c.decompress(s, d)? as c_int)
    })
}

/// Decodes `nitems` items (in the chunk's typesize) from item `start`.
///
/// # Safety
/// `context` a live context; `src`/`dest` valid for their sizes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_getitem_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { context_mut(context) }?;
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { (input(src, srcsize)?, output(dest, destsize)?) };
        Ok(c.getitem_engine()?.getitem(s, start, nitems, d)? as c_int)
    })
}

/// Decodes `nbytes` bytes from byte `start` (both multiples of the chunk's typesize).
///
/// # Safety
/// `context` a live context; `src`/`dest` valid for their sizes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_getitem_bytes_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    start: i32,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { context_mut(context) }?;
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { (input(src, srcsize)?, output(dest, destsize)?) };
        Ok(c.getitem_engine()?.getitem_bytes(s, start, nbytes, d)? as c_int)
    })
}

/// Compresses `nblocks` buffers as one VL-block chunk.
///
/// # Safety
/// `context` a live compression context; `srcs`/`srcsizes` hold `nblocks` entries, each
/// source valid for its size; `dest` valid for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlcompress_ctx(
    context: *mut blosc2_context,
    srcs: *const *const c_void,
    srcsizes: *const i32,
    nblocks: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { context_mut(context) }?;
        let comp = c.compressor()?;
        if srcs.is_null() || srcsizes.is_null() || nblocks <= 0 {
            return Err(Error::InvalidParam);
        }
        let n = len_of(nblocks);
        // SAFETY: both arrays hold `nblocks` entries by this function's contract.
        let (ptrs, sizes) = unsafe {
            (
                std::slice::from_raw_parts(srcs, n),
                std::slice::from_raw_parts(srcsizes, n),
            )
        };
        let mut blocks = Vec::with_capacity(n);
        for (&p, &len) in ptrs.iter().zip(sizes) {
            if p.is_null() || len <= 0 {
                return Err(Error::InvalidParam);
            }
            // SAFETY: each source is valid for its size by this function's contract.
            blocks.push(unsafe { input(p, len) }?);
        }
        // SAFETY: forwarded contract.
        let d = unsafe { output(dest, destsize) }?;
        Ok(comp.vlcompress(&blocks, d)? as c_int)
    })
}

/// Decompresses every block of a VL-block chunk into `malloc`ed buffers (the caller frees
/// them); returns the number of blocks.
///
/// # Safety
/// `context` a live decompression context; `src` valid for `srcsize`; `dests`/`destsizes`
/// hold `maxblocks` writable entries.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vldecompress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dests: *mut *mut c_void,
    destsizes: *mut i32,
    maxblocks: i32,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { context_mut(context) }?;
        let d = c.decompressor()?;
        if dests.is_null() || destsizes.is_null() || maxblocks <= 0 {
            return Err(Error::InvalidParam);
        }
        // SAFETY: forwarded contract.
        let s = unsafe { input(src, srcsize) }?;
        let nblocks = vlchunk_nblocks(s)?;
        if nblocks > maxblocks {
            return Err(Error::InvalidParam);
        }
        let blocks = d.vldecompress(s)?;
        let n = blocks.len();
        // SAFETY: both arrays hold `maxblocks >= n` entries by this function's contract.
        let (out, sizes) = unsafe {
            (
                std::slice::from_raw_parts_mut(dests, n),
                std::slice::from_raw_parts_mut(destsizes, n),
            )
        };
        for (i, b) in blocks.iter().enumerate() {
            let p = malloc_copy(b);
            if p.is_null() {
                for q in out.iter_mut().take(i) {
                    // SAFETY: these buffers were malloc'ed just above.
                    unsafe { libc::free(*q) };
                    *q = std::ptr::null_mut();
                }
                return Err(Error::MemoryAlloc);
            }
            out[i] = p as *mut c_void;
            sizes[i] = b.len() as i32;
        }
        Ok(n as c_int)
    })
}

/// The number of blocks of a VL-block chunk.
///
/// # Safety
/// `src` valid for `srcsize` bytes; `nblocks` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlchunk_get_nblocks(
    src: *const c_void,
    srcsize: i32,
    nblocks: *mut i32,
) -> c_int {
    guard_int(|| {
        if src.is_null() || nblocks.is_null() {
            return Err(Error::InvalidParam);
        }
        // SAFETY: forwarded contract.
        let s = unsafe { input(src, srcsize) }?;
        let n = vlchunk_nblocks(s)?;
        // SAFETY: non-NULL and writable by this function's contract.
        unsafe { *nblocks = n };
        Ok(0)
    })
}

/// Decompresses block `nblock` of a VL-block chunk into a `malloc`ed buffer; returns its size.
///
/// # Safety
/// `context` a live decompression context; `src` valid for `srcsize`; `dest`/`destsize`
/// writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vldecompress_block_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    nblock: i32,
    dest: *mut *mut u8,
    destsize: *mut i32,
) -> c_int {
    guard_int(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { context_mut(context) }?;
        let d = c.decompressor()?;
        if dest.is_null() || destsize.is_null() {
            return Err(Error::InvalidParam);
        }
        // SAFETY: forwarded contract.
        let s = unsafe { input(src, srcsize) }?;
        let block = d.vldecompress_block(s, nblock)?;
        let p = malloc_copy(&block);
        if p.is_null() {
            return Err(Error::MemoryAlloc);
        }
        // SAFETY: both out-pointers are writable by this function's contract.
        unsafe {
            *dest = p;
            *destsize = block.len() as i32;
        }
        Ok(block.len() as c_int)
    })
}

// ---------------------------------------------------------------------------------------------
// Compressed-buffer inspection (they read the first 16 bytes only)
// ---------------------------------------------------------------------------------------------

/// The first 16 bytes of a chunk.
///
/// # Safety
/// `p` must be NULL or point to at least 16 readable bytes.
unsafe fn head16<'a>(p: *const c_void) -> Result<&'a [u8]> {
    // SAFETY: forwarded contract.
    unsafe { slice(p as *const u8, MIN_HEADER_LEN) }
}

/// Writes `v` through `p` when `p` is not NULL.
///
/// # Safety
/// `p` must be NULL or writable.
unsafe fn put<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-NULL and writable by this function's contract.
        unsafe { *p = v };
    }
}

/// nbytes, cbytes and blocksize of a chunk (any out-pointer may be NULL); on error they are
/// set to 0 and the error code is returned.
///
/// # Safety
/// `cbuffer` must hold a 16-byte header; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_cbuffer_sizes(
    cbuffer: *const c_void,
    nbytes: *mut i32,
    cbytes: *mut i32,
    blocksize: *mut i32,
) -> c_int {
    let (rc, (nb, cb, bs)) = match guard_or(Err(Error::Failure), || {
        // SAFETY: forwarded contract.
        header::cbuffer_sizes(unsafe { head16(cbuffer) }?)
    }) {
        Ok(v) => (0, v),
        Err(e) => (e.code(), (0, 0, 0)),
    };
    // SAFETY: forwarded contract.
    unsafe {
        put(nbytes, nb);
        put(cbytes, cb);
        put(blocksize, bs);
    }
    rc
}

/// Blosc1 variant of [`blosc2_cbuffer_sizes`] with `size_t` outputs.
///
/// # Safety
/// As for [`blosc2_cbuffer_sizes`].
#[no_mangle]
pub unsafe extern "C" fn blosc1_cbuffer_sizes(
    cbuffer: *const c_void,
    nbytes: *mut usize,
    cbytes: *mut usize,
    blocksize: *mut usize,
) {
    let (mut nb, mut cb, mut bs) = (0i32, 0i32, 0i32);
    // SAFETY: forwarded contract; the locals are writable.
    unsafe {
        blosc2_cbuffer_sizes(cbuffer, &mut nb, &mut cb, &mut bs);
        put(nbytes, nb as usize);
        put(cbytes, cb as usize);
        put(blocksize, bs as usize);
    }
}

/// Checks that `cbuffer` is a chunk of exactly `cbytes` bytes; stores its nbytes (0 on error).
///
/// # Safety
/// `cbuffer` must hold `cbytes` bytes (at least 16 when `cbytes >= 16`); `nbytes` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn blosc1_cbuffer_validate(
    cbuffer: *const c_void,
    cbytes: usize,
    nbytes: *mut usize,
) -> c_int {
    let r = guard_or(Err(Error::Failure), || {
        if cbytes < MIN_HEADER_LEN {
            return Err(Error::WriteBuffer);
        }
        // SAFETY: forwarded contract.
        header::cbuffer_validate(unsafe { head16(cbuffer) }?, cbytes)
    });
    let (rc, nb) = match r {
        Ok(n) => (0, n as usize),
        Err(e) => (e.code(), 0),
    };
    // SAFETY: forwarded contract.
    unsafe { put(nbytes, nb) };
    rc
}

/// typesize and flags of a chunk (0 and 0 when the header is invalid).
///
/// # Safety
/// `cbuffer` must hold a 16-byte header; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc1_cbuffer_metainfo(
    cbuffer: *const c_void,
    typesize: *mut usize,
    flags: *mut c_int,
) {
    let (ts, fl) = guard_or(Err(Error::Failure), || {
        // SAFETY: forwarded contract.
        header::cbuffer_metainfo(unsafe { head16(cbuffer) }?)
    })
    .unwrap_or((0, 0));
    // SAFETY: forwarded contract.
    unsafe {
        put(typesize, usize::from(ts));
        put(flags, c_int::from(fl));
    }
}

/// Format version and codec version of a chunk (0 and 0 when the header is invalid).
///
/// # Safety
/// `cbuffer` must hold a 16-byte header; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_cbuffer_versions(
    cbuffer: *const c_void,
    version: *mut c_int,
    versionlz: *mut c_int,
) {
    let (v, vlz) = guard_or(Err(Error::Failure), || {
        // SAFETY: forwarded contract.
        header::cbuffer_versions(unsafe { head16(cbuffer) }?)
    })
    .unwrap_or((0, 0));
    // SAFETY: forwarded contract.
    unsafe {
        put(version, c_int::from(v));
        put(versionlz, c_int::from(vlz));
    }
}

/// The codec library name of a chunk ("BloscLZ", "LZ4", "Zlib", "Zstd", or a registered
/// codec's name), NULL when the header is invalid.
///
/// # Safety
/// `cbuffer` must hold a 16-byte header.
#[no_mangle]
pub unsafe extern "C" fn blosc2_cbuffer_complib(cbuffer: *const c_void) -> *const c_char {
    guard_or(std::ptr::null(), || {
        // SAFETY: forwarded contract.
        let Ok(head) = (unsafe { head16(cbuffer) }) else {
            return std::ptr::null();
        };
        match ChunkHeader::read(head, false) {
            Ok(h) => registry::complib_name(h.compformat()),
            Err(_) => std::ptr::null(),
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Special-value chunks
// ---------------------------------------------------------------------------------------------

/// Which special chunk to build.
#[derive(Clone, Copy)]
enum SpecialCtor {
    Zeros,
    Nans,
    Uninit,
    Value(*const c_void),
}

/// Shared body of the `blosc2_chunk_*` constructors. Like c-blosc2 they go through a
/// compression context, so the environment overrides and filter checks apply.
///
/// # Safety
/// `dest` valid for `destsize` bytes; a `Value` pointer valid for `cparams.typesize` bytes.
unsafe fn special_chunk(
    cparams: &blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
    which: SpecialCtor,
) -> Result<usize> {
    let extra = match which {
        SpecialCtor::Value(_) => i64::from(cparams.typesize),
        _ => 0,
    };
    if i64::from(destsize) < EXTENDED_HEADER_LEN as i64 + extra {
        return Err(Error::Data);
    }
    if cparams.typesize <= 0 {
        return Err(Error::InvalidParam);
    }
    if nbytes > 0 && nbytes % cparams.typesize != 0 {
        return Err(Error::Data);
    }
    let ctx = create_cctx(cparams, env::from_process).ok_or(Error::NullPointer)?;
    let cp = core_cparams(&ctx.cparams);
    // SAFETY: forwarded contract.
    let d = unsafe { output(dest, destsize) }?;
    match which {
        SpecialCtor::Zeros => special::zeros(&cp, nbytes, d),
        SpecialCtor::Nans => special::nans(&cp, nbytes, d),
        SpecialCtor::Uninit => special::uninit(&cp, nbytes, d),
        SpecialCtor::Value(v) => {
            // SAFETY: the value holds `typesize` bytes by the C contract.
            let value = unsafe { slice(v as *const u8, len_of(cp.typesize)) }?;
            special::repeatval(&cp, nbytes, d, value)
        }
    }
}

/// [`special_chunk`] as the `blosc2_chunk_*` entry points return it (size or error code).
///
/// # Safety
/// As for [`special_chunk`].
unsafe fn special_chunk_c(
    cparams: &blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
    which: SpecialCtor,
) -> c_int {
    // SAFETY: forwarded contract.
    guard_int(|| Ok(unsafe { special_chunk(cparams, nbytes, dest, destsize, which) }? as c_int))
}

/// Writes a 32-byte chunk standing for `nbytes` zero bytes.
///
/// # Safety
/// `dest` valid for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_zeros(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { special_chunk_c(&cparams, nbytes, dest, destsize, SpecialCtor::Zeros) }
}

/// Writes a 32-byte chunk standing for NaNs (float32 for typesize 4, float64 for 8).
///
/// # Safety
/// `dest` valid for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_nans(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { special_chunk_c(&cparams, nbytes, dest, destsize, SpecialCtor::Nans) }
}

/// Writes a 32-byte chunk whose contents are undefined.
///
/// # Safety
/// `dest` valid for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_uninit(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { special_chunk_c(&cparams, nbytes, dest, destsize, SpecialCtor::Uninit) }
}

/// Writes a (32 + typesize)-byte chunk standing for `repeatval` repeated.
///
/// # Safety
/// `dest` valid for `destsize` bytes; `repeatval` for `cparams.typesize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_repeatval(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
    repeatval: *const c_void,
) -> c_int {
    let which = SpecialCtor::Value(repeatval);
    // SAFETY: forwarded contract.
    unsafe { special_chunk_c(&cparams, nbytes, dest, destsize, which) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn cctx_applies_the_environment() {
        let e = env(&[
            ("BLOSC_CLEVEL", "9"),
            ("BLOSC_COMPRESSOR", "zstd"),
            ("BLOSC_TYPESIZE", "2"),
            ("BLOSC_SHUFFLE", "BITSHUFFLE"),
            ("BLOSC_DELTA", "1"),
            ("BLOSC_BLOCKSIZE", "4096"),
            ("BLOSC_NTHREADS", "2"),
            ("BLOSC_SPLITMODE", "NEVER"),
        ]);
        let c = create_cctx(&BLOSC2_CPARAMS_DEFAULTS, e).unwrap();
        assert_eq!(c.cparams.clevel, 9);
        assert_eq!(c.cparams.compcode, 5);
        assert_eq!(c.cparams.typesize, 2);
        assert_eq!(c.cparams.filters, [0, 0, 0, 0, 3, 2]);
        assert_eq!(c.cparams.blocksize, 4096);
        assert_eq!(c.cparams.nthreads, 2);
        assert_eq!(c.cparams.splitmode, 2);
        assert!(c.deferred.is_none());
        // Unrecognised values are ignored; SHUFFLE needs a typesize > 1.
        let e = env(&[("BLOSC_SHUFFLE", "x"), ("BLOSC_CLEVEL", "-3")]);
        let c = create_cctx(&BLOSC2_CPARAMS_DEFAULTS, e).unwrap();
        assert_eq!(c.cparams.clevel, 5);
        assert_eq!(c.cparams.filters, [0, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn cctx_refusals_and_deferred_errors() {
        let mut cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.filters[0] = 7;
        assert!(create_cctx(&cp, env(&[])).is_none());
        cp.filters[0] = 140;
        assert!(create_cctx(&cp, env(&[])).is_none());
        cp.filters[0] = 35;
        assert!(create_cctx(&cp, env(&[])).is_some());
        let mut c = create_cctx(
            &BLOSC2_CPARAMS_DEFAULTS,
            env(&[("BLOSC_COMPRESSOR", "nope")]),
        )
        .unwrap();
        let mut dst = [0u8; 200];
        assert_eq!(c.compress(&[1u8; 100], &mut dst), Err(Error::CodecSupport));
        // A thread count <= 0 runs serially, as in c-blosc2.
        let mut cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.nthreads = 0;
        let mut c = create_cctx(&cp, env(&[])).unwrap();
        assert_eq!(c.cparams.nthreads, 0);
        let n = c.compress(&[1u8; 100], &mut dst).unwrap();
        let mut d = create_dctx(
            &blosc2_dparams {
                nthreads: -1,
                ..BLOSC2_DPARAMS_DEFAULTS
            },
            env(&[]),
        )
        .unwrap();
        let mut out = [0u8; 100];
        assert_eq!(d.decompress(&dst[..n], &mut out), Ok(100));
        assert_eq!(out, [1u8; 100]);
        // The compressor refuses decompression and vice versa.
        assert_eq!(c.decompress(&dst[..n], &mut out), Err(Error::InvalidParam));
        assert_eq!(d.compress(&out, &mut dst), Err(Error::InvalidParam));
    }

    static CALLS: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn serial(
        data: *mut c_void,
        dojob: Option<unsafe extern "C" fn(*mut c_void)>,
        numjobs: c_int,
        elsize: usize,
        jobdata: *mut c_void,
    ) {
        assert_eq!(data as usize, 0x1234);
        CALLS.fetch_add(1, Ordering::SeqCst);
        for i in 0..numjobs as usize {
            // SAFETY: the job records are `elsize` bytes apart, as the contract says.
            unsafe { dojob.unwrap()((jobdata as *mut u8).add(i * elsize) as *mut c_void) };
        }
    }

    #[test]
    fn threads_callback_runs_every_job_once() {
        let cb = ThreadsCallback {
            func: serial,
            data: 0x1234 as *mut c_void,
        };
        let hits: Vec<AtomicUsize> = (0..7).map(|_| AtomicUsize::new(0)).collect();
        run_with_threads_callback(cb, 7, &|i| {
            hits[i].fetch_add(1, Ordering::SeqCst);
        });
        assert!(hits.iter().all(|h| h.load(Ordering::SeqCst) == 1));
        assert_eq!(CALLS.load(Ordering::SeqCst), 1);
    }
}
