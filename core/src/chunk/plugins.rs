//! The codecs and filters c-blosc2 registers in `blosc2_init`, built in here: codecs NDLZ (32)
//! and ZFP (33 accuracy, 34 precision, 35 rate); filters NDCELL (32), NDMEAN (33),
//! BYTEDELTA_BUGGY (34), BYTEDELTA (35) and INT_TRUNC (36). c-blosc2 also registers, without
//! code, the codecs it loads at run time from separate Python packages (OPENHTJ2K 36, GROK 37,
//! OPENZL 38, J2K 39, HTJ2K 40): `Plugins` hands those to the caller's hooks, which load them
//! ([`crate::dynamic`]; the C facade does) or answer `CodecSupport`. Which id is which comes
//! from the codec and filter tables ([`crate::codecs::table`], [`crate::filters::table`]).
//!
//! `Plugins` wraps the caller's [`Hooks`] (user codecs and filters, ids 160 and up, still go
//! there) and is what every [`super::Compressor`] and [`super::Decompressor`] calls. The
//! plugins read what c-blosc2 hands them through `cparams->schunk`/`dparams->schunk`: the
//! super-chunk's typesize and its `b2nd` metalayer, which the hooks supply as a
//! [`SchunkEnv`] ([`Hooks::plugin_env`]).

use super::Hooks;
use super::{PostfilterArgs, PrefilterArgs};
use crate::b2nd_meta;
use crate::codecs::ndlz;
use crate::error::{Error, Result};
use crate::filters::{bytedelta, int_trunc, ndcell, ndmean, Filter};
use crate::registry::Origin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Filter ids (`BLOSC_FILTER_*`).
pub const NDCELL: u8 = Filter::NdCell.id();
/// `BLOSC_FILTER_NDMEAN`.
pub const NDMEAN: u8 = Filter::NdMean.id();
/// `BLOSC_FILTER_BYTEDELTA_BUGGY`.
pub const BYTEDELTA_BUGGY: u8 = Filter::ByteDeltaBuggy.id();
/// `BLOSC_FILTER_BYTEDELTA`.
pub const BYTEDELTA: u8 = Filter::ByteDelta.id();
/// `BLOSC_FILTER_INT_TRUNC`.
pub const INT_TRUNC: u8 = Filter::IntTrunc.id();

/// Whether `compcode` is a codec the table lists as compiled in here as a plugin (NDLZ, ZFP)
/// or as loaded from a plugin package (OpenHTJ2K ... HTJ2K): ids c-blosc2 registers at init.
pub fn is_plugin_codec(compcode: u8) -> bool {
    crate::codecs::table::static_entry(compcode)
        .is_some_and(|c| matches!(c.origin, Origin::Plugin | Origin::Dynamic))
}

/// Whether `compcode` is a plugin codec compiled in here (NDLZ, ZFP): the ones [`Plugins`]
/// runs itself. The dynamically loaded ones go to the caller's hooks, which load them.
fn is_compiled_in(compcode: u8) -> bool {
    crate::codecs::table::static_entry(compcode).is_some_and(|c| c.origin == Origin::Plugin)
}

/// Whether `id` is one of the plugin filters compiled in here.
fn is_plugin_filter(id: u8) -> bool {
    crate::filters::table::is_plugin(id)
}

/// What the plugins read from the super-chunk a context belongs to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchunkEnv {
    /// `schunk->typesize` (`None`: no super-chunk).
    pub typesize: Option<i32>,
    /// The raw `b2nd` metalayer, if the super-chunk has one.
    pub b2nd: Option<Vec<u8>>,
}

impl SchunkEnv {
    /// The block shape of the `b2nd` metalayer; `Failure` without a super-chunk, without the
    /// metalayer, or when it does not parse (what c-blosc2's plugins return).
    pub fn blockshape(&self) -> Result<Vec<i32>> {
        let raw = self.b2nd.as_deref().ok_or(Error::Failure)?;
        let (meta, _) = b2nd_meta::deserialize(raw, false).map_err(|_| Error::Failure)?;
        Ok(meta.blockshape)
    }

    fn schunk_typesize(&self) -> Result<i32> {
        self.typesize.ok_or(Error::Failure)
    }
}

/// Hooks that only describe a super-chunk to the plugins (no user codecs or filters).
struct EnvHooks(SchunkEnv);

impl Hooks for EnvHooks {
    fn plugin_env(&self) -> SchunkEnv {
        self.0.clone()
    }
}

/// Hooks for chunks of a super-chunk described by `env` (for readers and writers outside the
/// C API: the super-chunk engines, the command-line tool).
pub fn env_hooks(env: SchunkEnv) -> Arc<dyn Hooks> {
    Arc::new(EnvHooks(env))
}

/// The caller's hooks plus the built-in plugins; `typesize` is the compression context's
/// (header) typesize, which the encoders of NDCELL, NDMEAN, INT_TRUNC and ZFP use.
pub(crate) struct Plugins {
    inner: Arc<dyn Hooks>,
    typesize: AtomicUsize,
}

impl Plugins {
    /// Wraps `inner` for a context whose typesize is `typesize` (as given in its parameters).
    pub(crate) fn new(inner: Arc<dyn Hooks>, typesize: i32) -> Arc<Plugins> {
        let p = Arc::new(Plugins {
            inner,
            typesize: AtomicUsize::new(1),
        });
        p.set_typesize(typesize);
        p
    }

    /// Follows a change of the context's typesize (> 255 counts as 1, like the header's).
    pub(crate) fn set_typesize(&self, typesize: i32) {
        let t = if (1..=255).contains(&typesize) {
            typesize as usize
        } else {
            1
        };
        self.typesize.store(t, Ordering::Relaxed);
    }

    fn typesize(&self) -> usize {
        self.typesize.load(Ordering::Relaxed)
    }
}

/// Runs a plugin filter forward (`src` → `dst`, same length).
pub fn filter_forward(
    id: u8,
    meta: u8,
    typesize: usize,
    env: &dyn Fn() -> SchunkEnv,
    src: &[u8],
    dst: &mut [u8],
) -> Result<()> {
    match id {
        BYTEDELTA | BYTEDELTA_BUGGY => {
            let ts = if meta != 0 {
                usize::from(meta)
            } else {
                bytedelta::element_size(0, env().typesize)?
            };
            bytedelta::encode(ts, id == BYTEDELTA_BUGGY, src, dst)
        }
        INT_TRUNC => int_trunc::encode(typesize, meta, src, dst),
        NDCELL => ndcell::encode(&env().blockshape()?, meta, typesize, src, dst),
        NDMEAN => ndmean::encode(&env().blockshape()?, meta, typesize, src, dst),
        _ => Err(Error::FilterPipeline),
    }
}

/// Runs a plugin filter backward (`src` → `dst`, same length).
pub fn filter_backward(
    id: u8,
    meta: u8,
    env: &dyn Fn() -> SchunkEnv,
    src: &[u8],
    dst: &mut [u8],
) -> Result<()> {
    match id {
        BYTEDELTA | BYTEDELTA_BUGGY => {
            let ts = if meta != 0 {
                usize::from(meta)
            } else {
                bytedelta::element_size(0, env().typesize)?
            };
            bytedelta::decode(ts, id == BYTEDELTA_BUGGY, src, dst)
        }
        INT_TRUNC => int_trunc::decode(src, dst),
        NDCELL => {
            let e = env();
            let ts = e.schunk_typesize()?;
            if ts <= 0 {
                return Err(Error::Failure);
            }
            ndcell::decode(&e.blockshape()?, meta, ts as usize, src, dst)
        }
        NDMEAN => {
            let e = env();
            ndmean::decode(&e.blockshape()?, meta, e.schunk_typesize()?, src, dst)
        }
        _ => Err(Error::FilterPipeline),
    }
}

/// Encodes one stream with a plugin codec: `Ok(0)` = store raw; errors become `Data` in the
/// chunk writer, as in c-blosc2 (which reports any negative codec return that way).
pub fn encode(
    compcode: u8,
    meta: u8,
    typesize: usize,
    env: &dyn Fn() -> SchunkEnv,
    src: &[u8],
    dst: &mut [u8],
) -> Result<usize> {
    let r = match compcode {
        ndlz::NDLZ => ndlz::compress(meta, &env().blockshape()?, src, dst),
        33..=35 if cfg!(feature = "zfp") => zfp_encode(compcode, meta, typesize, env, src, dst),
        _ => return Err(Error::CodecSupport),
    };
    r.map_err(|e| match e {
        Error::WriteBuffer | Error::MemoryAlloc => e,
        _ => Error::Data,
    })
}

/// Decodes one stream with a plugin codec; returns the bytes the codec reports. A failing
/// decoder is `Data`, as c-blosc2 reports it (it compares the codec's return with the block
/// size).
pub fn decode(
    compcode: u8,
    meta: u8,
    env: &dyn Fn() -> SchunkEnv,
    src: &[u8],
    dst: &mut [u8],
) -> Result<usize> {
    let r = match compcode {
        ndlz::NDLZ => ndlz::decompress(meta, src, dst),
        33..=35 if cfg!(feature = "zfp") => zfp_decode(compcode, meta, env, src, dst),
        _ => return Err(Error::CodecSupport),
    };
    r.map_err(|e| match e {
        Error::MemoryAlloc => e,
        _ => Error::Data,
    })
}

/// ZFP's encoder (compcodes 33..=35) for items of `typesize` bytes.
#[cfg(feature = "zfp")]
fn zfp_encode(
    compcode: u8,
    meta: u8,
    typesize: usize,
    env: &dyn Fn() -> SchunkEnv,
    src: &[u8],
    dst: &mut [u8],
) -> Result<usize> {
    let shape = env().blockshape()?;
    crate::codecs::zfp::compress(compcode, meta, typesize as i32, &shape, src, dst)
}

/// ZFP's decoder; it reads the super-chunk's typesize and block shape.
#[cfg(feature = "zfp")]
fn zfp_decode(
    compcode: u8,
    meta: u8,
    env: &dyn Fn() -> SchunkEnv,
    src: &[u8],
    dst: &mut [u8],
) -> Result<usize> {
    let e = env();
    let ts = e.schunk_typesize()?;
    crate::codecs::zfp::decompress(compcode, meta, ts, &e.blockshape()?, src, dst)
}

/// Without the `zfp` feature ZFP is unknown, as in a c-blosc2 built without it (never called:
/// the ids fall through to `CodecSupport` first).
#[cfg(not(feature = "zfp"))]
fn zfp_encode(
    _: u8,
    _: u8,
    _: usize,
    _: &dyn Fn() -> SchunkEnv,
    _: &[u8],
    _: &mut [u8],
) -> Result<usize> {
    Err(Error::CodecSupport)
}

/// Without the `zfp` feature ZFP is unknown.
#[cfg(not(feature = "zfp"))]
fn zfp_decode(_: u8, _: u8, _: &dyn Fn() -> SchunkEnv, _: &[u8], _: &mut [u8]) -> Result<usize> {
    Err(Error::CodecSupport)
}

impl Plugins {
    fn env(&self) -> SchunkEnv {
        self.inner.plugin_env()
    }
}

impl Hooks for Plugins {
    fn codec_version(&self, compcode: u8) -> Option<u8> {
        if is_plugin_codec(compcode) {
            Some(1)
        } else {
            self.inner.codec_version(compcode)
        }
    }

    fn encode(
        &self,
        compcode: u8,
        meta: u8,
        src: &[u8],
        dst: &mut [u8],
        chunk_src: &[u8],
    ) -> Option<Result<usize>> {
        if is_compiled_in(compcode) {
            return Some(encode(
                compcode,
                meta,
                self.typesize(),
                &|| self.env(),
                src,
                dst,
            ));
        }
        self.inner.encode(compcode, meta, src, dst, chunk_src)
    }

    fn decode(
        &self,
        compcode: u8,
        meta: u8,
        src: &[u8],
        dst: &mut [u8],
        chunk: &[u8],
    ) -> Option<Result<usize>> {
        if is_compiled_in(compcode) {
            return Some(decode(compcode, meta, &|| self.env(), src, dst));
        }
        self.inner.decode(compcode, meta, src, dst, chunk)
    }

    fn filter_forward(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Option<Result<()>> {
        if is_plugin_filter(id) {
            return Some(filter_forward(
                id,
                meta,
                self.typesize(),
                &|| self.env(),
                src,
                dst,
            ));
        }
        self.inner.filter_forward(id, meta, src, dst)
    }

    fn filter_backward(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Option<Result<()>> {
        if is_plugin_filter(id) {
            return Some(filter_backward(id, meta, &|| self.env(), src, dst));
        }
        self.inner.filter_backward(id, meta, src, dst)
    }

    fn plugin_env(&self) -> SchunkEnv {
        self.inner.plugin_env()
    }

    fn has_prefilter(&self) -> bool {
        self.inner.has_prefilter()
    }

    fn prefilter_output_typesize(&self) -> i32 {
        self.inner.prefilter_output_typesize()
    }

    fn prefilter_output_is_disposable(&self) -> bool {
        self.inner.prefilter_output_is_disposable()
    }

    fn prefilter(&self, args: &mut PrefilterArgs<'_>) -> Result<()> {
        self.inner.prefilter(args)
    }

    fn has_postfilter(&self) -> bool {
        self.inner.has_postfilter()
    }

    fn postfilter(&self, args: &mut PostfilterArgs<'_>) -> Result<()> {
        self.inner.postfilter(args)
    }
}
