//! Blosc2 chunks: the unit everything else stores. Writer and reader of the chunk format
//! (32-byte extended header, bstarts, optional dictionary, per-block streams), special-value
//! chunks and VL-block chunks, on top of [`crate::codecs`] and [`crate::filters`].
//!
//! # Safe API (what the C layer and the frame/schunk layers build on)
//!
//! * [`Compressor::new`]`(CParams, hooks)`; [`Compressor::compress`]`(src, dst)` returns the
//!   chunk size, or `Ok(0)` when the chunk does not fit in `dst` (like c-blosc2, whose callers
//!   treat 0 as "not enough room"); [`Compressor::compress_blosc1`] writes a 16-byte
//!   Blosc1-style header (`BLOSC_BLOSC1_COMPAT`); [`Compressor::vlcompress`]`(srcs, dst)` writes
//!   a VL-block chunk (version 6) with one block per source.
//! * [`Decompressor::new`]`(DParams, hooks)`; [`Decompressor::decompress`]`(src, dst)` returns
//!   nbytes; [`Decompressor::getitem`] / [`Decompressor::getitem_bytes`] decode a range
//!   without decoding the whole chunk; [`Decompressor::set_maskout`] skips blocks in the next
//!   `decompress` only; [`Decompressor::vldecompress`], [`Decompressor::vldecompress_block`],
//!   [`vlchunk_nblocks`] for VL-block chunks; [`Decompressor::decompress_block`] for one block.
//! * [`special`]: the zeros / NaNs / repeated value / uninit constructors.
//! * [`header`]: [`header::ChunkHeader`] (validated parse, write) and the `cbuffer_*` inspectors.
//! * [`compress_vec`] / [`decompress_vec`]: one-shot conveniences without hooks.
//!
//! Errors are [`Error`] values carrying the `BLOSC2_ERROR_*` code c-blosc2 returns for the same
//! input. Nothing here panics on bad input; every offset read from a chunk is checked.
//!
//! Output matches c-blosc2 3.3.5: same block sizes, split decisions, stream encodings and
//! fallbacks, hence the same bytes (serial writer) or the same bytes up to block order. On
//! purpose we differ where c-blosc2 has bugs (docs/divergences.md): the header always holds the
//! *effective* block size; memcpyed chunks never carry the dictionary flag; LZ4 dictionaries
//! are the samples as they are. The reader tolerates c-blosc2's quirky chunks (memcpyed chunks
//! flagged with a dictionary, legacy Blosc1 versions, bstarts in any order) and decodes DELTA
//! correctly in `getitem`, `decompress_block` and flat decoding of VL chunks, where c-blosc2
//! does not. Runtime-only *lazy* chunks are rejected with `InvalidParam` (frames hand this
//! layer whole chunks). Instrumented-codec chunks (`instr_codec`) come from [`instr`].
//!
//! # Determinism and threads
//!
//! Blocks are encoded independently and laid out in block order, so the bytes of a chunk do
//! not depend on `nthreads` (c-blosc2's do: it writes blocks in completion order). With
//! `nthreads > 1` and more than one block, blocks run on the calling thread and the workers of
//! a persistent [`crate::pool::Pool`] shared by every (de)compressor of that thread count (or
//! one given with [`Compressor::set_pool`] / [`Decompressor::set_pool`]), or on a
//! [`crate::pool::Runner`] (`blosc2_set_threads_callback`); see [`crate::pool::Threads`].
//! Otherwise everything runs on the caller's thread. Block `j`'s compressed bytes never depend on where the block lands,
//! except near the end of a too-small output buffer, where the block is re-encoded serially
//! with c-blosc2's room limits.
//!
//! # Hooks
//!
//! [`Hooks`] is how the C layer plugs in user codecs (compcodes 32..=255), user filters
//! (ids 32..=255), and the per-block prefilter/postfilter. [`NoHooks`] is the default.

#![forbid(unsafe_code)]

pub mod blocksize;
mod compress;
mod copy;
mod decompress;
pub mod header;
pub mod instr;
pub mod lazy;
mod par;
mod params;
mod pipeline;
pub mod plugins;
pub mod special;

pub use compress::{Compressor, LoneBlock};
pub use decompress::{vlchunk_nblocks, Decompressor, LazyDecoder};
pub use params::{CParams, DParams, SplitMode};
pub use plugins::SchunkEnv;
pub use special::Special;

use crate::error::{Error, Result};
use std::sync::Arc;

/// Arguments of one prefilter call (the fields of `blosc2_prefilter_params` the core knows).
pub struct PrefilterArgs<'a> {
    /// The block's bytes in the caller's source buffer.
    pub input: &'a [u8],
    /// Where the prefilter writes its output (`nelems * output_typesize` bytes, zeroed first).
    pub output: &'a mut [u8],
    /// Item size of the output (the chunk typesize unless the hooks say otherwise).
    pub output_typesize: i32,
    /// Byte offset of the block in the chunk.
    pub output_offset: i32,
    /// Block index.
    pub nblock: i32,
    /// Worker id (0..nthreads).
    pub tid: i32,
}

/// Arguments of one postfilter call (the fields of `blosc2_postfilter_params` the core knows).
pub struct PostfilterArgs<'a> {
    /// The decoded block (after the filter pipeline).
    pub input: &'a [u8],
    /// The block's place in the destination.
    pub output: &'a mut [u8],
    /// Block size in bytes.
    pub size: i32,
    /// Chunk typesize.
    pub typesize: i32,
    /// Byte offset of the block in the chunk (`nblock * blocksize`).
    pub offset: i32,
    /// Block index.
    pub nblock: i32,
    /// Worker id (0..nthreads).
    pub tid: i32,
}

/// Callbacks the chunk engine calls for what it does not implement itself. All methods have
/// defaults meaning "nothing registered". Implementations must be `Send + Sync`: blocks of one
/// chunk are processed on several worker threads at once.
pub trait Hooks: Send + Sync {
    /// Format version byte (header byte 1) of user codec `compcode`, `None` if unknown.
    fn codec_version(&self, compcode: u8) -> Option<u8> {
        let _ = compcode;
        None
    }
    /// Encodes one stream with user codec `compcode`. `None`: codec not registered
    /// (`CodecSupport`). `Some(Ok(n))`: `n` bytes written to `dst`, 0 = store raw.
    /// `Some(Err(_))`: the codec failed (c-blosc2 reports `Data` for negative returns).
    /// `chunk_src` is the whole input of the chunk (c-blosc2 passes it as `chunk`).
    fn encode(
        &self,
        compcode: u8,
        meta: u8,
        src: &[u8],
        dst: &mut [u8],
        chunk_src: &[u8],
    ) -> Option<Result<usize>> {
        let _ = (compcode, meta, src, dst, chunk_src);
        None
    }
    /// Decodes one stream with user codec `compcode` into `dst` (must fill it exactly).
    /// `None`: not registered (`CodecSupport`). `chunk` is the whole compressed chunk.
    fn decode(
        &self,
        compcode: u8,
        meta: u8,
        src: &[u8],
        dst: &mut [u8],
        chunk: &[u8],
    ) -> Option<Result<usize>> {
        let _ = (compcode, meta, src, dst, chunk);
        None
    }
    /// Runs user filter `id` forward (`src` → `dst`, same length). `None`: not registered.
    fn filter_forward(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Option<Result<()>> {
        let _ = (id, meta, src, dst);
        None
    }
    /// Runs user filter `id` backward (`src` → `dst`). `None`: not registered.
    fn filter_backward(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Option<Result<()>> {
        let _ = (id, meta, src, dst);
        None
    }
    /// What the built-in plugin codecs and filters ([`plugins`]) read from the super-chunk
    /// (its typesize and `b2nd` metalayer). Default: no super-chunk.
    fn plugin_env(&self) -> SchunkEnv {
        SchunkEnv::default()
    }
    /// Whether [`Hooks::prefilter`] is set.
    fn has_prefilter(&self) -> bool {
        false
    }
    /// Output item size of the prefilter (0 = chunk typesize).
    fn prefilter_output_typesize(&self) -> i32 {
        0
    }
    /// `output_is_disposable`: the compressed output is not wanted (streams become zero runs).
    fn prefilter_output_is_disposable(&self) -> bool {
        false
    }
    /// Called per block before the filter pipeline. Err → `FilterPipeline`.
    fn prefilter(&self, args: &mut PrefilterArgs<'_>) -> Result<()> {
        let _ = args;
        Ok(())
    }
    /// Whether [`Hooks::postfilter`] is set.
    fn has_postfilter(&self) -> bool {
        false
    }
    /// Called per block after the filter pipeline, instead of copying the block to its
    /// place. Err → `Postfilter`.
    fn postfilter(&self, args: &mut PostfilterArgs<'_>) -> Result<()> {
        let _ = args;
        Ok(())
    }
}

/// No user codecs, filters or pre/postfilters.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHooks;

impl Hooks for NoHooks {}

/// Shared "no hooks" value for constructors.
pub fn no_hooks() -> Arc<dyn Hooks> {
    Arc::new(NoHooks)
}

/// Compresses `src` into a new chunk with `cparams` (convenience for layers above): the
/// buffer is sized for the worst case (`nbytes + 32`), so this never returns an empty chunk.
///
/// One-thread compressions reuse a compressor kept per thread (see `REUSED`).
pub fn compress_vec(cparams: &CParams, src: &[u8]) -> Result<Vec<u8>> {
    let run = |c: &mut Compressor| {
        let dst = c.compress_to_vec(src, src.len() + header::EXTENDED_HEADER_LEN)?;
        if dst.is_empty() {
            return Err(Error::WriteBuffer);
        }
        Ok(dst)
    };
    if cparams.nthreads == 1 {
        let reused = REUSED.try_with(|slot| {
            let mut slot = slot.try_borrow_mut().ok()?;
            let c = match slot.take() {
                Some(mut c) => c.set_cparams(*cparams).map(|()| c),
                None => Compressor::new(*cparams, no_hooks()),
            };
            Some(c.and_then(|mut c| {
                let r = run(&mut c);
                if src.len() <= REUSE_MAX_NBYTES {
                    *slot = Some(c);
                }
                r
            }))
        });
        if let Ok(Some(r)) = reused {
            return r;
        }
    }
    run(&mut Compressor::new(*cparams, no_hooks())?)
}

thread_local! {
    /// The one-thread compressor [`compress_vec`] reuses on this thread, as c-blosc2's
    /// `blosc2_compress` reuses its global context: its scratch buffers (a few blocks, which a
    /// new compressor zeroes as it first grows them) and codec states are set up once, not at
    /// every call. Compressors with helper threads are not kept (no threads parked in a
    /// thread-local), nor one that has just compressed more than [`REUSE_MAX_NBYTES`] (its
    /// buffers are let go).
    static REUSED: std::cell::RefCell<Option<Compressor>> = const { std::cell::RefCell::new(None) };
}

/// The largest input after which [`compress_vec`] keeps its compressor (its scratch is a few
/// blocks, each at most the input).
const REUSE_MAX_NBYTES: usize = 8 << 20;

/// Decompresses a whole chunk into a new buffer (convenience for layers above).
pub fn decompress_vec(chunk: &[u8]) -> Result<Vec<u8>> {
    decompress_vec_with(chunk, &DParams::default())
}

/// Decodes a whole chunk into the caller's `dst` (at least its nbytes) with `dparams`.
pub fn decompress_into_with(chunk: &[u8], dst: &mut [u8], dparams: &DParams) -> Result<usize> {
    Decompressor::new(*dparams, no_hooks())?.decompress(chunk, dst)
}

/// [`decompress_vec`] with `dparams`.
pub fn decompress_vec_with(chunk: &[u8], dparams: &DParams) -> Result<Vec<u8>> {
    Decompressor::new(*dparams, no_hooks())?.decompress_to_vec(chunk)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codecs;

    /// The compressor `compress_vec` keeps per thread carries nothing from one call to the next:
    /// every call writes what a new compressor writes, whatever came before (other codecs,
    /// levels, typesizes, filters, dictionaries, block sizes, a threaded call, a large input).
    #[test]
    fn reused_compressor_writes_what_a_new_one_writes() {
        let smooth: Vec<u8> = (0..300_000u32)
            .flat_map(|i| (i / 7).to_le_bytes())
            .collect();
        let big: Vec<u8> = (0..(9usize << 20) / 8)
            .flat_map(|i| ((i % 5000) as f64).to_le_bytes())
            .collect();
        let cp = |compcode, clevel, typesize, filter, use_dict, blocksize, nthreads| CParams {
            compcode,
            clevel,
            typesize,
            filters: [0, 0, 0, 0, 0, filter],
            use_dict,
            blocksize,
            nthreads,
            ..CParams::default()
        };
        let cases = [
            (cp(codecs::ZSTD, 3, 4, 1, true, 16384, 1), &smooth),
            (cp(codecs::BLOSCLZ, 5, 8, 2, false, 0, 1), &smooth),
            (cp(codecs::LZ4, 9, 2, 1, false, 65536, 1), &smooth),
            (cp(codecs::LZ4, 1, 8, 1, false, 0, 2), &big),
            (cp(codecs::BLOSCLZ, 5, 8, 1, false, 0, 1), &big),
            (cp(codecs::ZSTD, 1, 4, 0, false, 0, 1), &smooth),
            (cp(codecs::ZSTD, 3, 4, 1, true, 16384, 1), &smooth),
            (cp(codecs::BLOSCLZ, 0, 1, 0, false, 0, 1), &smooth),
        ];
        for (i, (cp, src)) in cases.iter().enumerate() {
            let fresh = Compressor::new(*cp, no_hooks())
                .unwrap()
                .compress_to_vec(src, src.len() + 32)
                .unwrap();
            assert_eq!(compress_vec(cp, src).unwrap(), fresh, "case {i}");
            assert_eq!(decompress_vec(&fresh).unwrap(), **src, "case {i}");
        }
    }
}
