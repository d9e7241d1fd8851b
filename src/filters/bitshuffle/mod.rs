//! Bit shuffle: bit planes of the elements. (Stub: being implemented.)

/// Bit-shuffles `src` into `dst` (same length); bytes after the last multiple of 8 elements are
/// copied verbatim.
pub fn bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let _ = typesize;
    dst.copy_from_slice(src);
}

/// Inverse of [`bitshuffle`].
pub fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let _ = typesize;
    dst.copy_from_slice(src);
}
