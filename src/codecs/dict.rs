//! Dictionaries for Zstd and LZ4 chunks (`use_dict`). (Stub: being implemented.)

/// A dictionary prepared for compression (digested zstd CDict, or LZ4 raw dictionary bytes).
pub struct CompressDict {}

/// A dictionary prepared for decompression (zstd DDict, or LZ4 raw dictionary bytes).
pub struct DecompressDict {}
