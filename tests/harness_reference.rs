//! The reference c-blosc2 is reachable and behaves as docs/ describes it; guards the harness itself.
mod common;
use b2frame::capi::types::BLOSC2_CPARAMS_DEFAULTS;
use common::reference::{ref_compress, ref_decompress};

#[test]
fn reference_round_trips_and_reports_memcpy_size() {
    let data = common::data_kind("random", 10_000, 1);
    let chunk = ref_compress(BLOSC2_CPARAMS_DEFAULTS, &data);
    // Random data falls back to a memcpyed chunk: 32-byte header + the data.
    assert_eq!(chunk.len(), data.len() + 32);
    assert_eq!(chunk[0], 5, "chunk format version 5");
    assert_eq!(ref_decompress(&chunk, data.len(), 1).unwrap(), data);
}
