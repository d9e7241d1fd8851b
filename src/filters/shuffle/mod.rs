//! Byte shuffle: element bytes regrouped by significance. (Stub: being implemented.)

/// Shuffles `src` into `dst` (same length) by element size `typesize`; the tail
/// `src.len() % typesize` bytes are copied verbatim.
pub fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let _ = typesize;
    dst.copy_from_slice(src);
}

/// Inverse of [`shuffle`].
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let _ = typesize;
    dst.copy_from_slice(src);
}
