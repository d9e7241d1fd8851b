//! The public fields of `blosc2_schunk` that callers write, and when the library honours them
//! (c-blosc2 3.3.5 keeps the struct as the truth; python-blosc2 writes into it).
//!
//! | field | caller's write | library writes it |
//! |---|---|---|
//! | `compcode`, `compcode_meta`, `clevel`, `splitmode`, `typesize`, `blocksize`, `use_dict`, `filters`, `filters_meta` | taken at the next operation that changes the super-chunk (append, insert, update, delete, reorder, fill_special, metalayer and vlmetalayer changes): from then on they are the frame header's defaults (a reopened frame reports them) and what `blosc2_schunk_get_cparams` reports. Chunks are compressed with `cctx`, not with these fields (as in c-blosc2) | at creation and open (from the storage's cparams or the frame header) |
//! | `chunksize` | taken the same way while the super-chunk has no chunk (an empty frame keeps it on reopen and in `to_buffer`); later writes are overwritten | the first chunk's nbytes when it is -1; 0 when the chunk sizes start to differ |
//! | `cctx`, `dctx` | used by every later compression and decompression; their thread counts go into the frame header like the fields above; the library frees whatever context is there at `blosc2_schunk_free` | at creation and open |
//! | `current_nchunk` | read by the caller's prefilters and postfilters | set to the chunk being compressed or decompressed by every chunk operation |
//! | `nchunks`, `nbytes`, `cbytes`, `flags2`, `data`, `data_len`, `frame`, `storage`, `metalayers`, `nmetalayers`, `vlmetalayers`, `nvlmetalayers`, `change_tick` | not read: the library's own state wins | after every operation (`data[i]` points at chunk `i` of a plain super-chunk until the next change) |
//!
//! Values a frame header cannot hold (typesize < 1, blocksize < 0, splitmode outside 1..=4,
//! chunksize < -1) are not taken: c-blosc2 writes them into the header as they are, which leaves
//! frames it cannot reopen or append to
//! (docs/divergences.md#16-caller-written-values-a-frame-header-cannot-hold-are-not-written).

use super::Handle;
use crate::capi::chunk::{context_params, core_cparams};
use crate::capi::types::{blosc2_context, blosc2_cparams, blosc2_schunk};
use crate::chunk::CParams;
use crate::schunk::HeaderTemplate;

/// The compression parameters the struct's fields describe (`nthreads` from `cctx`).
fn struct_cparams(sc: &blosc2_schunk) -> CParams {
    let mut cp = blosc2_cparams {
        compcode: sc.compcode,
        compcode_meta: sc.compcode_meta,
        clevel: sc.clevel,
        use_dict: i32::from(sc.use_dict),
        typesize: sc.typesize,
        blocksize: sc.blocksize,
        splitmode: i32::from(sc.splitmode),
        filters: sc.filters,
        filters_meta: sc.filters_meta,
        ..crate::capi::types::BLOSC2_CPARAMS_DEFAULTS
    };
    cp.nthreads = ctx_threads(sc).0;
    core_cparams(&cp)
}

/// The thread counts of the super-chunk's contexts (what c-blosc2 writes into frame headers);
/// 1 for a NULL context.
fn ctx_threads(sc: &blosc2_schunk) -> (i16, i16) {
    // SAFETY: `cctx`/`dctx` are NULL or contexts of this library (the schunk's own or ones a
    // caller created with `blosc2_create_cctx/dctx` and put there, as python-blosc2 does).
    let c = unsafe { context_params(sc.cctx) }.map_or(1, |(cp, _)| cp.nthreads);
    // SAFETY: as above.
    let d = unsafe { context_params(sc.dctx) }.map_or(1, |(_, n)| n);
    (c, d)
}

/// Takes the fields a caller may have written (see the table above) into the super-chunk,
/// before an operation that changes it.
pub(crate) fn adopt(sc: &blosc2_schunk, h: &mut Handle) {
    h.core
        .adopt_params(&struct_cparams(sc), ctx_threads(sc), sc.chunksize);
}

/// The header c-blosc2 gives a copy of this super-chunk (`to_buffer`, `to_file` and
/// `append_file` of anything but an in-memory frame): the parameters of `cctx`, with the
/// blocksize of the last chunk it compressed.
pub(crate) fn copy_template(cctx: *mut blosc2_context, h: &Handle) -> HeaderTemplate {
    // SAFETY: `cctx` is `schunk->cctx` (as in `ctx_threads`).
    let cp = match unsafe { context_params(cctx) } {
        Some((cp, _)) => core_cparams(&cp),
        None => *h.core.cparams(),
    };
    h.core.copy_template(cp)
}
