//! Byte copies for the chunk reader and writer that stay fast wherever the two buffers sit.
//!
//! glibc's `memcpy` has one slow case on this machine's CPU (below); raw streams, memcpyed
//! chunks and block placement all copy through [`copy_bytes`] so none of them falls into it.
//! Large copies (memcpyed chunks) go through [`copy_parallel`] when there are threads for them.

use super::par::lock;
use crate::error::Result;
use crate::pool::Threads;
use crate::sys::Out;
use std::sync::Mutex;

/// `dst.copy_from_slice(src)`, cut into 2 KiB pieces when `dst` starts 1 to 63 bytes after
/// `src` modulo 4096. For those distances glibc's memcpy (`rep movsb` from 4 KiB on, on this
/// AMD EPYC with FSRM) is slow (engineers' C tests: distances 1-15 3.2-3.5 GB/s; at 128 KiB 16
/// and above 42-57 GB/s, but at 64 KiB 40-63 only ~29 GB/s); 2 KiB pieces stay below its
/// `rep movsb` threshold and take the vector loop, ~57 GB/s at every distance. The chunk writer hits such distances by construction: a raw
/// stream `4 * (s + 1)` bytes into a block buffer, copied from stream `s` of a filter buffer
/// with the same page offset.
/// The copy itself is [`Out::copy_from`], which also writes pieces of new output.
pub(crate) fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    Out::init(dst).copy_from(src);
}

/// From this many bytes on, a memcpyed chunk of several blocks is copied by all the threads
/// when `nthreads > 1` (below, handing the copy over costs more than it saves). One-block chunks
/// are copied by the caller, as c-blosc2 does: its workers would have to be woken for it
/// (lz4 random 256 KiB, one block: 48-67 µs a call through the workers, 25 µs without).
pub(crate) const PARALLEL_COPY_MIN: usize = 256 << 10;

/// `dst.copy_from_slice(src)` by every thread of `threads`, one piece each: a large copy is
/// bound by one core's memory bandwidth, which two cores exceed. `dst` may be new output
/// ([`Out`]): each piece is written in whole.
pub(crate) fn copy_parallel(threads: &mut Threads, mut dst: Out<'_>, src: &[u8]) -> Result<()> {
    assert_eq!(dst.len(), src.len(), "copy_parallel: lengths differ");
    let n = threads.count();
    if n < 2 {
        dst.copy_from(src);
        return Ok(());
    }
    // Pieces of whole cache lines, so no two threads write the same line.
    let step = src.len().div_ceil(n).next_multiple_of(64);
    let mut pieces: Vec<Mutex<Out<'_>>> = Vec::with_capacity(n);
    while dst.len() > step {
        let (a, b) = dst.split_at(step);
        pieces.push(Mutex::new(a));
        dst = b;
    }
    pieces.push(Mutex::new(dst));
    threads.for_each(pieces.len(), &|_, k| {
        let mut to = lock(&pieces[k]);
        let len = to.len();
        to.copy_from(&src[k * step..k * step + len]);
    })
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
