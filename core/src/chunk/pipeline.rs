//! The chunk engine's view of the 6-slot filter pipeline: runs a block forward (before the
//! codec) or backward (after it), dispatching built-in filters to [`crate::filters`] and user
//! filters (ids ≥ 32) to [`Hooks`]. Forward runs slots 0..6 in order, ping-ponging between two
//! scratch buffers; backward runs them in reverse, in place (with one scratch buffer), and
//! skips TRUNC_PREC, which has no inverse.
//!
//! DELTA needs a reference: when encoding, block 0 is delta-coded against itself (prefix XOR of
//! the data at that pipeline stage) and every other block against the first bytes of the
//! original, unfiltered chunk; when decoding, against block 0's fully decoded bytes. The callers
//! pass that reference as `dref` (`None` = "this is block 0", also used for every VL block).

use super::Hooks;
use crate::error::{Error, Result};
use crate::filters;
use crate::sys::Out;

/// One chunk's pipeline.
pub(crate) struct Pipeline<'a> {
    pub filters: [u8; 6],
    pub meta: [u8; 6],
    /// The header typesize (1 when the real one exceeds 255).
    pub typesize: usize,
    /// Chunk format version (bitshuffle has a legacy rule for version 2).
    pub version: u8,
    pub hooks: &'a dyn Hooks,
}

/// The hooks seen as the filters layer's [`filters::UserFilters`].
struct HookFilters<'a>(&'a dyn Hooks);

impl filters::UserFilters for HookFilters<'_> {
    fn forward(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Result<()> {
        self.0
            .filter_forward(id, meta, src, dst)
            .unwrap_or(Err(Error::FilterPipeline))
    }
    fn backward(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Result<()> {
        self.0
            .filter_backward(id, meta, src, dst)
            .unwrap_or(Err(Error::FilterPipeline))
    }
}

impl Pipeline<'_> {
    /// Some slot does something when compressing.
    pub fn forward_active(&self) -> bool {
        self.filters.iter().any(|&f| f != filters::NOFILTER)
    }

    /// Some slot does something when decompressing.
    pub fn backward_active(&self) -> bool {
        self.filters
            .iter()
            .any(|&f| f != filters::NOFILTER && f != filters::TRUNC_PREC)
    }

    /// DELTA is in the pipeline (blocks then depend on block 0).
    pub fn has_delta(&self) -> bool {
        self.filters.contains(&filters::DELTA)
    }

    /// The pipeline undoes as one byte/bit unshuffle (the common case): `(filter id, element
    /// size)`. Lets the reader decode streams into scratch and unshuffle straight into place.
    pub fn single_unshuffle(&self) -> Option<(u8, usize)> {
        let mut found = None;
        for i in 0..6 {
            match self.filters[i] {
                filters::NOFILTER | filters::TRUNC_PREC => {}
                id @ (filters::SHUFFLE | filters::BITSHUFFLE) if found.is_none() => {
                    let es = if id == filters::SHUFFLE && self.meta[i] != 0 {
                        self.meta[i] as usize
                    } else {
                        self.typesize
                    };
                    found = Some((id, es));
                }
                _ => return None,
            }
        }
        found
    }

    /// [`Pipeline::unshuffle_into`] into an [`Out`] piece: the byte unshuffle writes it in
    /// whole; the bit unshuffle gets it zeroed first (unless initialised already).
    pub fn unshuffle_out(&self, u: (u8, usize), src: &[u8], out: &mut Out<'_>) {
        if u.0 == filters::SHUFFLE {
            filters::shuffle::unshuffle_out(u.1, src, out);
        } else {
            self.unshuffle_into(u, src, out.bytes());
        }
    }

    /// Runs the single unshuffle of [`Pipeline::single_unshuffle`] from `src` into `dst`.
    pub fn unshuffle_into(&self, (id, es): (u8, usize), src: &[u8], dst: &mut [u8]) {
        if id == filters::SHUFFLE {
            filters::unshuffle(es, src, dst);
        } else if self.version == 2 {
            filters::bitunshuffle_legacy(es, src, dst);
        } else {
            filters::bitunshuffle(es, src, dst);
        }
    }

    fn info<'r>(&self, offset: usize, dref: &'r [u8]) -> filters::BlockInfo<'r> {
        filters::BlockInfo {
            typesize: self.typesize,
            filters: self.filters,
            filters_meta: self.meta,
            offset,
            dref,
            legacy_bitshuffle: self.version == 2,
        }
    }

    /// Runs the forward pipeline over `input`; returns the filtered block, which lives in
    /// `input` (no filters), `buf1` or `buf2` (each at least `input.len()` long). `dref`:
    /// `None` for block 0 and VL blocks, else `(block offset, original chunk from its start)`.
    pub fn forward<'b>(
        &self,
        input: &'b [u8],
        dref: Option<(usize, &[u8])>,
        buf1: &'b mut [u8],
        buf2: &'b mut [u8],
    ) -> Result<&'b [u8]> {
        let (offset, d) = dref.unwrap_or((0, &[]));
        let user = HookFilters(self.hooks);
        filters::forward(&self.info(offset, d), input, buf1, buf2, Some(&user))
    }

    /// Undoes the pipeline on `buf` in place; `tmp` is scratch of at least `buf.len()` bytes.
    /// `dref`: `None` for block 0 and VL blocks, else `(block offset, decoded block 0)`.
    pub fn backward(
        &self,
        buf: &mut [u8],
        tmp: &mut [u8],
        dref: Option<(usize, &[u8])>,
    ) -> Result<()> {
        let (offset, d) = dref.unwrap_or((0, &[]));
        let user = HookFilters(self.hooks);
        filters::backward(&self.info(offset, d), buf, tmp, Some(&user))
    }
}
