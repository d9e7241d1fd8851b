//! [`Frame::compacted`] and [`Frame::write_compacted`]: a fresh cframe with the same contents,
//! without dead space, planned and checked before anything is written.

#![forbid(unsafe_code)]

use super::*;

impl Frame {
    /// A fresh in-memory cframe with the same parameters, metalayers, vlmetalayers and chunks
    /// (in logical order, no dead space). Deterministic.
    pub fn compacted(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write_compacted(&mut out)?;
        Ok(out)
    }

    /// Writes [`Frame::compacted`] to `out`, chunk by chunk (one chunk in memory at a time
    /// for a frame on disk); returns its length. Header, offsets index and trailer are
    /// planned and checked before anything is written.
    pub fn write_compacted(&self, out: &mut dyn std::io::Write) -> Result<u64> {
        let h = &self.header;
        let cparams = CParams {
            compcode: h.compcode,
            compcode_meta: h.compcode_meta,
            clevel: h.clevel,
            use_dict: h.use_dict,
            typesize: h.typesize,
            nthreads: h.nthreads_comp,
            blocksize: h.blocksize,
            splitmode: i32::from(h.splitmode),
            filters: h.filters,
            filters_meta: h.filters_meta,
        };
        let dparams = DParams {
            nthreads: h.nthreads_decomp,
        };
        let mut header = crate::frame::new_header(FrameType::Contiguous, &cparams, &dparams);
        header.user_type = h.user_type;
        header.metalayers = h.metalayers.clone();
        header.chunksize = h.chunksize;
        let infos = (0..self.nchunks())
            .map(|i| self.chunk_info(i))
            .collect::<Result<Vec<_>>>()?;
        let plan = crate::schunk::build::CframePlan::from_header(header, &infos, &self.vlmeta)?;
        plan.emit(out, |i, buf| self.fetch(i as i64, buf))?;
        Ok(plan.len())
    }
}
