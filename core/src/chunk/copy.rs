//! Byte copies for the chunk reader and writer that stay fast wherever the two buffers sit.
//!
//! glibc's `memcpy` has one slow case on this machine's CPU (below); raw streams, memcpyed
//! chunks and block placement all copy through [`copy_bytes`] so none of them falls into it.

/// `dst.copy_from_slice(src)`, cut into 2 KiB pieces when `dst` starts 1 to 63 bytes after
/// `src` modulo 4096. For those distances glibc's memcpy (`rep movsb` from 4 KiB on, on this
/// AMD EPYC with FSRM) is slow (engineers' C tests: distances 1-15 3.2-3.5 GB/s; at 128 KiB 16
/// and above 42-57 GB/s, but at 64 KiB 40-63 only ~29 GB/s); 2 KiB pieces stay below its
/// `rep movsb` threshold and take the vector loop, ~57 GB/s at every distance. The chunk writer hits such distances by construction: a raw
/// stream `4 * (s + 1)` bytes into a block buffer, copied from stream `s` of a filter buffer
/// with the same page offset.
pub(crate) fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    const PIECE: usize = 2048;
    let dist = (dst.as_ptr() as usize).wrapping_sub(src.as_ptr() as usize) % 4096;
    if src.len() <= PIECE || dist == 0 || dist >= 64 {
        dst.copy_from_slice(src);
        return;
    }
    assert_eq!(dst.len(), src.len(), "copy_bytes: lengths differ");
    for (d, s) in dst.chunks_mut(PIECE).zip(src.chunks(PIECE)) {
        d.copy_from_slice(s);
    }
}

#[cfg(test)]
mod tests {
    use super::copy_bytes;

    #[test]
    fn copy_bytes_copies_at_every_distance() {
        let src: Vec<u8> = (0..20_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut buf = vec![0u8; 30_000];
        for shift in [0usize, 1, 4, 15, 16, 63, 64, 100] {
            for len in [0usize, 1, 2048, 2049, 4096, 10_001] {
                buf.fill(0);
                copy_bytes(&mut buf[shift..shift + len], &src[..len]);
                assert_eq!(buf[shift..shift + len], src[..len], "{shift} {len}");
                assert!(buf[..shift].iter().all(|&b| b == 0));
                assert!(buf[shift + len..].iter().all(|&b| b == 0));
            }
        }
        // Overlap-free but close in memory: dst 4 bytes after src within one buffer.
        let mut one: Vec<u8> = (0..9000u32).map(|i| i as u8).collect();
        let (a, b) = one.split_at_mut(4500);
        copy_bytes(&mut b[4..4004], &a[500..4500]);
        assert!(b[4..4004]
            .iter()
            .enumerate()
            .all(|(i, &v)| v == (500 + i) as u8));
    }
}
