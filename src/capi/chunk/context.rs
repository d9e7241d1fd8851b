//! Contexts: `blosc2_create_cctx/dctx`, `blosc2_free_ctx`, `blosc2_ctx_get_cparams/dparams`,
//! `blosc2_set_maskout`, and the parameter conversion they share with the rest of the C API.

use super::*;

pub(super) enum Engine {
    Compress(Compressor),
    Decompress(Decompressor),
}

/// What a `blosc2_context*` points to.
pub struct Context {
    pub(super) engine: Engine,
    pub(super) hooks: Arc<CHooks>,
    /// The parameters `blosc2_ctx_get_cparams` reports (environment overrides applied).
    pub(super) cparams: blosc2_cparams,
    /// The parameters `blosc2_ctx_get_dparams` reports.
    pub(super) dparams: blosc2_dparams,
    /// A failure c-blosc2 reports at the first compression rather than at creation (an
    /// unknown `BLOSC_COMPRESSOR`). A thread count <= 0 is not one: c-blosc2 then runs
    /// serially, and so does this.
    pub(super) deferred: Option<Error>,
    /// A decoder for `getitem` calls on a compression context (c-blosc2 allows them).
    pub(super) aux: Option<Decompressor>,
    /// The blocksize of the last chunk this context compressed (`i32::MIN`: none yet):
    /// c-blosc2's context keeps it (its `blocksize` field), and copies of a super-chunk write it
    /// into their header. Atomic: read while another thread may compress with the context.
    pub(super) last_blocksize: std::sync::atomic::AtomicI32,
    /// The typesize of the last chunk this context decompressed (what
    /// `blosc2_ctx_get_dparams` reports, 0 before the first): atomic for the same reason.
    pub(super) last_typesize: std::sync::atomic::AtomicI32,
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

    pub(crate) fn compressor(&mut self) -> Result<&mut Compressor> {
        match &mut self.engine {
            Engine::Compress(c) => match self.deferred {
                Some(e) => Err(e),
                None => Ok(c),
            },
            Engine::Decompress(_) => Err(Error::InvalidParam),
        }
    }

    pub(crate) fn decompressor(&mut self) -> Result<&mut Decompressor> {
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
    pub(crate) fn getitem_engine(&mut self) -> Result<&mut Decompressor> {
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
            // Through the compressor's hooks, which put the plugin codecs (NDLZ, ZFP) and
            // filters in front of the caller's, as for regular chunks.
            let comp = self.compressor()?;
            let cp = *comp.cparams();
            if let Some(n) = crate::chunk::instr::compress(&cp, comp.hooks(), src, dst)? {
                return Ok(n);
            }
        }
        let n = self.compressor()?.compress(src, dst)?;
        self.note_blocksize(&dst[..n]);
        Ok(n)
    }

    /// Records the blocksize in the header of the chunk just made, which
    /// `blosc2_ctx_get_cparams` reports afterwards.
    fn note_blocksize(&self, chunk: &[u8]) {
        if let Some(b) = chunk.get(8..12).filter(|_| chunk.len() >= 16) {
            let bs = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            self.last_blocksize.store(bs, Ordering::Relaxed);
        }
    }

    /// [`Context::compress`] into a new vector with room for `destsize` bytes (see
    /// [`Compressor::compress_to_vec`]): the chunk, empty when it does not fit.
    pub(crate) fn compress_to_vec(&mut self, src: &[u8], destsize: usize) -> Result<Vec<u8>> {
        if self.cparams.instr_codec {
            let mut dst = vec![0u8; destsize];
            let n = self.compress(src, &mut dst)?;
            dst.truncate(n);
            return Ok(dst);
        }
        let v = self.compressor()?.compress_to_vec(src, destsize)?;
        self.note_blocksize(&v);
        Ok(v)
    }

    /// Decompresses a whole chunk; returns nbytes.
    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        let n = self.decompressor()?.decompress(src, dst)?;
        self.note_typesize(src);
        Ok(n)
    }

    /// [`Context::decompress`] reading a lazy chunk through `source` (the frame it came from).
    pub(crate) fn decompress_lazy(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        source: &dyn LazySource,
    ) -> Result<usize> {
        let n = self
            .decompressor()?
            .with_source(source)
            .decompress(src, dst)?;
        self.note_typesize(src);
        Ok(n)
    }

    /// Records the typesize of the chunk just decompressed (`blosc2_ctx_get_dparams`).
    fn note_typesize(&self, chunk: &[u8]) {
        let ts = i32::from(chunk.get(3).copied().unwrap_or(0));
        self.last_typesize.store(ts, Ordering::Relaxed);
    }

    /// Sets a one-shot block mask for the next decompression (`None`: none).
    pub(crate) fn apply_mask(&mut self, mask: Option<Vec<bool>>) -> Result<()> {
        if let Some(m) = mask {
            self.decompressor()?.set_maskout(&m);
        }
        Ok(())
    }

    /// `getitem_bytes` of `dst.len()` bytes from byte `start`, reading a lazy chunk through
    /// `source`.
    pub(crate) fn getitem_bytes_lazy(
        &mut self,
        src: &[u8],
        start: i32,
        dst: &mut [u8],
        source: &dyn LazySource,
    ) -> Result<usize> {
        let n = i32::try_from(dst.len()).map_err(|_| Error::InvalidParam)?;
        self.getitem_engine()?
            .with_source(source)
            .getitem_bytes(src, start, n, dst)
    }

    fn into_raw(self: Box<Self>) -> *mut blosc2_context {
        let hooks = Arc::clone(&self.hooks);
        let decompression = !self.is_compression();
        let cell = Box::new(ContextCell {
            lock: Mutex::new(()),
            owner: AtomicUsize::new(0),
            decompression,
            schunk: self.schunk(),
            masks: Mutex::new(Vec::new()),
            ctx: UnsafeCell::new(*self),
        });
        let p = Box::into_raw(cell) as *mut blosc2_context;
        hooks.ctx.store(p, Ordering::Release);
        p
    }
}

/// What a `blosc2_context*` points to: the [`Context`] and what lets any number of threads hold
/// the same pointer. c-blosc2's contexts are not safe to share (its issue #147: two threads
/// decompressing with a super-chunk's `dctx` corrupt its block mask and scratch buffers); here
/// one caller at a time uses a context and the others wait ([`context_mut`]), and the one-shot
/// block masks of `blosc2_set_maskout` are kept per thread, outside the context, so a mask one
/// thread sets is used by that thread's next decompression and by no other caller's.
pub struct ContextCell {
    lock: Mutex<()>,
    /// [`thread_token`] of the thread using the context, 0 when none: a call on a context from
    /// inside a callback of a call on the same context (same thread) fails instead of waiting
    /// for itself.
    owner: AtomicUsize,
    /// A decompression context (fixed at creation; read without the lock).
    decompression: bool,
    /// [`Context::schunk`] (fixed at creation; read without the lock).
    schunk: *mut c_void,
    /// Masks set by `blosc2_set_maskout` and not used yet, by the setting thread's token.
    masks: Mutex<Vec<(usize, Vec<bool>)>>,
    ctx: UnsafeCell<Context>,
}

// SAFETY: the context inside is only reached through a `CtxGuard`, which holds `lock` (one
// user at a time), or through fields that are never written after creation or are atomic
// (`context_params`, `context_schunk`, `blosc2_ctx_get_*params`). Its raw pointers (hooks'
// user data, the super-chunk) are the C caller's and are shared as c-blosc2 shares them.
unsafe impl Sync for ContextCell {}
// SAFETY: as above; a context is created on one thread and may be used and freed on another,
// as in c-blosc2.
unsafe impl Send for ContextCell {}

/// A token for the calling thread (the address of a thread-local), never 0.
pub(crate) fn thread_token() -> usize {
    thread_local!(static TOKEN: u8 = const { 0 });
    TOKEN.with(|t| t as *const u8 as usize)
}

impl ContextCell {
    /// The mask this thread set with `blosc2_set_maskout` and has not used yet.
    pub(crate) fn take_mask(&self) -> Option<Vec<bool>> {
        let me = thread_token();
        let mut m = self.masks.lock().unwrap_or_else(|e| e.into_inner());
        let i = m.iter().position(|(t, _)| *t == me)?;
        Some(m.swap_remove(i).1)
    }

    fn set_mask(&self, mask: Vec<bool>) {
        let me = thread_token();
        let mut m = self.masks.lock().unwrap_or_else(|e| e.into_inner());
        m.retain(|(t, _)| *t != me);
        m.push((me, mask));
    }

    /// The context, waiting while another thread uses it; `Failure` when this thread is using
    /// it already (a nested call from one of its callbacks).
    pub(crate) fn lock(&self) -> Result<CtxGuard<'_>> {
        let me = thread_token();
        if self.owner.load(Ordering::Relaxed) == me {
            return Err(Error::Failure);
        }
        let g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.owner.store(me, Ordering::Relaxed);
        Ok(CtxGuard { cell: self, _g: g })
    }

    /// The context if no other caller is using it (`None`: busy, or used by this thread).
    pub(crate) fn try_lock(&self) -> Option<CtxGuard<'_>> {
        let me = thread_token();
        if self.owner.load(Ordering::Relaxed) == me {
            return None;
        }
        let g = match self.lock.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        self.owner.store(me, Ordering::Relaxed);
        Some(CtxGuard { cell: self, _g: g })
    }

    /// The context's fields that never change after creation, read without the lock.
    fn fixed(&self) -> *const Context {
        self.ctx.get()
    }
}

/// One caller's use of a context (see [`ContextCell`]).
pub struct CtxGuard<'a> {
    cell: &'a ContextCell,
    _g: MutexGuard<'a, ()>,
}

impl std::ops::Deref for CtxGuard<'_> {
    type Target = Context;
    fn deref(&self) -> &Context {
        // SAFETY: the guard holds the cell's lock, so no other guard exists.
        unsafe { &*self.cell.ctx.get() }
    }
}

impl std::ops::DerefMut for CtxGuard<'_> {
    fn deref_mut(&mut self) -> &mut Context {
        // SAFETY: as in `deref`; `&mut self` makes this the only reference.
        unsafe { &mut *self.cell.ctx.get() }
    }
}

impl Drop for CtxGuard<'_> {
    fn drop(&mut self) {
        self.cell.owner.store(0, Ordering::Relaxed);
    }
}

/// The cell behind a C handle.
///
/// # Safety
/// `ctx` must be NULL or a live handle from `blosc2_create_cctx/dctx`.
pub unsafe fn context_cell<'a>(ctx: *mut blosc2_context) -> Result<&'a ContextCell> {
    if ctx.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: by this function's contract `ctx` came from `Context::into_raw`; the cell is
    // shared (`Sync`) and lives until `blosc2_free_ctx`.
    Ok(unsafe { &*(ctx as *const ContextCell) })
}

/// Uses the context behind a C handle, waiting while another thread uses it (see
/// `ContextCell::lock`).
///
/// # Safety
/// `ctx` must be NULL or a live handle from `blosc2_create_cctx/dctx`.
pub unsafe fn context_mut<'a>(ctx: *mut blosc2_context) -> Result<CtxGuard<'a>> {
    // SAFETY: forwarded contract.
    unsafe { context_cell(ctx) }?.lock()
}

/// What c-blosc2's context reports as its parameters while another thread may be using it:
/// the creation parameters (never changed afterwards) with the blocksize of the last chunk the
/// context compressed, and its decompression thread count. `None` for NULL.
///
/// # Safety
/// `ctx` must be NULL or a live handle from `blosc2_create_cctx/dctx`.
pub(crate) unsafe fn context_params(ctx: *mut blosc2_context) -> Option<(blosc2_cparams, i16)> {
    if ctx.is_null() {
        return None;
    }
    // SAFETY: a live context by contract.
    let p = unsafe { context_cell(ctx) }.ok()?.fixed();
    // SAFETY: a live context by contract. Only fields that no operation writes after creation
    // (`cparams`, `dparams.nthreads`) are read, plus an atomic, through raw places: no
    // reference to the whole context is made while its user may hold one.
    unsafe {
        let mut cp = std::ptr::addr_of!((*p).cparams).read();
        let bs = (*std::ptr::addr_of!((*p).last_blocksize)).load(Ordering::Relaxed);
        if bs != i32::MIN {
            cp.blocksize = bs;
        }
        let dthreads = std::ptr::addr_of!((*p).dparams.nthreads).read();
        Some((cp, dthreads))
    }
}

/// The super-chunk a context is bound to (NULL for NULL or unbound contexts).
///
/// # Safety
/// As for [`context_mut`].
pub unsafe fn context_schunk(ctx: *mut blosc2_context) -> *mut c_void {
    // SAFETY: forwarded contract.
    let Ok(cell) = (unsafe { context_cell(ctx) }) else {
        return std::ptr::null_mut();
    };
    cell.schunk
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
        ..CHooks::plain()
    });
    let mut reported = cp;
    reported.preparams = if cp.prefilter.is_some() {
        hooks.preparams.get()
    } else {
        std::ptr::null_mut()
    };
    // Its threads start on the first parallel call (see `crate::pool::Threads`).
    let compressor = Compressor::new(core_cparams(&cp), hooks.clone()).ok()?;
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
        last_blocksize: std::sync::atomic::AtomicI32::new(i32::MIN),
        last_typesize: std::sync::atomic::AtomicI32::new(0),
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
    let decompressor = Decompressor::new(core, hooks.clone()).ok()?;
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
        last_blocksize: std::sync::atomic::AtomicI32::new(i32::MIN),
        last_typesize: std::sync::atomic::AtomicI32::new(0),
    }))
}

/// `blosc2_create_cctx`: a C handle for `cparams` (environment applied), for the library's
/// own super-chunks too.
pub(crate) fn new_cctx(cparams: &blosc2_cparams) -> Result<*mut blosc2_context> {
    create_cctx(cparams, env::from_process)
        .map(Context::into_raw)
        .ok_or(Error::Failure)
}

/// `blosc2_create_dctx`: a C handle for `dparams` (`BLOSC_NTHREADS` applied).
pub(crate) fn new_dctx(dparams: &blosc2_dparams) -> Result<*mut blosc2_context> {
    create_dctx(dparams, env::from_process)
        .map(Context::into_raw)
        .ok_or(Error::Failure)
}

/// `blosc2_free_ctx`: frees a C handle (NULL is ignored).
///
/// # Safety
/// `context` must be NULL or a live handle from [`new_cctx`]/[`new_dctx`], freed only once.
pub(crate) unsafe fn free_ctx(context: *mut blosc2_context) {
    if !context.is_null() {
        // SAFETY: by this function's contract the handle came from `Context::into_raw`
        // and nobody uses it any more.
        drop(unsafe { Box::from_raw(context as *mut ContextCell) });
    }
}

/// A compression context for `cparams` (environment applied); NULL for undefined filter ids,
/// an unknown user tuner, or a user codec named in `BLOSC_COMPRESSOR`.
#[no_mangle]
pub extern "C" fn blosc2_create_cctx(cparams: blosc2_cparams) -> *mut blosc2_context {
    guard(|| new_cctx(&cparams))
}

/// A decompression context for `dparams` (`BLOSC_NTHREADS` applied).
#[no_mangle]
pub extern "C" fn blosc2_create_dctx(dparams: blosc2_dparams) -> *mut blosc2_context {
    guard(|| new_dctx(&dparams))
}

/// Frees a context (NULL is ignored).
///
/// # Safety
/// `context` must be NULL or a live handle from `blosc2_create_cctx/dctx`, freed only once.
#[no_mangle]
pub unsafe extern "C" fn blosc2_free_ctx(context: *mut blosc2_context) {
    guard(|| {
        // SAFETY: forwarded contract.
        unsafe { free_ctx(context) };
        Ok(())
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
    guard(|| {
        // Without the context's lock: a prefilter may ask while its context compresses.
        // SAFETY: forwarded contract.
        let (cp, _) = unsafe { context_params(ctx) }.ok_or(Error::NullPointer)?;
        if cparams.is_null() {
            return Err(Error::NullPointer);
        }
        // c-blosc2 leaves `tuner_params` and `filter_params` as the caller had them.
        // SAFETY: non-NULL and writable by this function's contract.
        let out = unsafe { &mut *cparams };
        let keep_tuner = out.tuner_params;
        let keep_filters = out.filter_params;
        *out = cp;
        out.tuner_params = keep_tuner;
        out.filter_params = keep_filters;
        Ok(0)
    })
}

/// `blosc2_ctx_get_dparams`: a context's decompression parameters (with the typesize of the
/// last chunk it decoded), read without the context's lock: a postfilter may ask while its
/// context decompresses.
///
/// # Safety
/// `ctx` must be NULL or a live handle from `blosc2_create_cctx/dctx`.
pub(crate) unsafe fn ctx_dparams(ctx: *mut blosc2_context) -> Result<blosc2_dparams> {
    // SAFETY: forwarded contract.
    let c = unsafe { context_cell(ctx) }?.fixed();
    // SAFETY: `dparams` is never written after creation and `last_typesize` is atomic
    // (raw places: no reference to the context while its user holds one).
    unsafe {
        let mut dp = std::ptr::addr_of!((*c).dparams).read();
        dp.typesize = (*std::ptr::addr_of!((*c).last_typesize)).load(Ordering::Relaxed);
        Ok(dp)
    }
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
    guard(|| {
        // SAFETY: forwarded contract.
        let dp = unsafe { ctx_dparams(ctx) }?;
        if dparams.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: non-NULL and writable by this function's contract.
        unsafe { *dparams = dp };
        Ok(0)
    })
}

/// Sets a one-shot block mask (true = skip) for the calling thread's next decompression with
/// `ctx`.
///
/// # Safety
/// `ctx` as for [`blosc2_free_ctx`]; `maskout` must hold `nblocks` bools.
#[no_mangle]
pub unsafe extern "C" fn blosc2_set_maskout(
    ctx: *mut blosc2_context,
    maskout: *mut bool,
    nblocks: c_int,
) -> c_int {
    guard(|| {
        // Kept for this thread's next decompression with `ctx` (see `ContextCell`), without
        // waiting for another thread that may be decompressing with it.
        // SAFETY: forwarded contract.
        let c = unsafe { context_cell(ctx) }?;
        if !c.decompression {
            return Err(Error::InvalidParam);
        }
        let n = usize::try_from(nblocks).map_err(|_| Error::InvalidParam)?;
        // SAFETY: `maskout` holds `nblocks` bools by this function's contract.
        let mask = unsafe { slice(maskout as *const u8, n) }?;
        c.set_mask(mask.iter().map(|&b| b != 0).collect());
        Ok(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Contexts made with `nthreads > 1` start their worker threads (the shared pool) on the
    /// first call that runs blocks in parallel, as c-blosc2's do: a context used only for
    /// single-block chunks, or not at all, starts none.
    #[test]
    fn contexts_start_their_threads_on_first_parallel_use() {
        let mut cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.nthreads = 3;
        cp.typesize = 4;
        cp.blocksize = 16 << 10;
        let mut dp = BLOSC2_DPARAMS_DEFAULTS;
        dp.nthreads = 3;
        let mut cctx = create_cctx(&cp, |_| None).expect("cctx");
        let mut dctx = create_dctx(&dp, |_| None).expect("dctx");
        let Engine::Compress(c) = &mut cctx.engine else {
            panic!("not a compression context")
        };
        assert!(!c.pool_started(), "started at creation");
        let small: Vec<u8> = (0..1000u32).flat_map(|i| (i % 7).to_le_bytes()).collect();
        let mut one = vec![0u8; small.len() + 64];
        let n1 = c.compress(&small[..1000], &mut one).unwrap();
        assert!(n1 > 0);
        assert!(!c.pool_started(), "started for a single-block chunk");
        let big: Vec<u8> = (0..(256u32 << 10))
            .flat_map(|i| (i / 3).to_le_bytes())
            .collect();
        let mut many = vec![0u8; big.len() + 64];
        let n = c.compress(&big, &mut many).unwrap();
        assert!(c.pool_started(), "not started for a chunk of 64 blocks");

        let Engine::Decompress(d) = &mut dctx.engine else {
            panic!("not a decompression context")
        };
        assert!(!d.pool_started(), "started at creation");
        let mut out = vec![0u8; 1000];
        assert_eq!(d.decompress(&one[..n1], &mut out).unwrap(), 1000);
        assert!(!d.pool_started(), "started for a single-block chunk");
        let mut back = vec![0u8; big.len()];
        assert_eq!(d.decompress(&many[..n], &mut back).unwrap(), big.len());
        assert_eq!(back, big);
        assert!(d.pool_started(), "not started for a chunk of 64 blocks");
    }
}
