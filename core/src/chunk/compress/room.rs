//! [`Room`]: where a chunk is written. A caller's buffer is written in place, straight from
//! the encoders; a new vector grows only as far as the chunk reaches (blocks are encoded into
//! a worker's scratch buffer and appended), so the room a chunk may need (its input size plus
//! the header) is reserved but not zeroed nor touched in whole: a 4 MiB input that compresses
//! to 16 KiB writes about 16 KiB of it. The block-parallel writer takes the whole room at once
//! (its workers place blocks into it), zeroed by `calloc`.

use super::copy_bytes;

/// The room a chunk is written into (see the module doc).
pub(super) enum Room<'a> {
    /// A caller's buffer: all of it is room.
    Slice(&'a mut [u8]),
    /// A new vector with `room` bytes of room, allocated when first reached: its length is
    /// how far the writer has reached.
    Vec { v: &'a mut Vec<u8>, room: usize },
}

impl Room<'_> {
    /// How many bytes the chunk may take.
    pub(super) fn len(&self) -> usize {
        match self {
            Room::Slice(s) => s.len(),
            Room::Vec { room, .. } => *room,
        }
    }

    /// The first `end` bytes of the room (`end <= len()`). Bytes of a vector not written before
    /// read as zeros; writers write every byte of the chunk, so this is only what they write over.
    pub(super) fn upto(&mut self, end: usize) -> &mut [u8] {
        debug_assert!(end <= self.len());
        match self {
            Room::Slice(s) => &mut s[..end],
            Room::Vec { v, room } => {
                if v.capacity() == 0 && end == *room {
                    // All of it at once (the block-parallel writer hands pieces of it to its
                    // workers): zeroed by the allocator (`calloc`: a large room is fresh pages
                    // that only the bytes written touch, on the threads that write them), not
                    // by a pass over it on this thread.
                    **v = vec![0u8; end];
                } else if v.len() < end {
                    v.reserve_exact(*room - v.len());
                    v.resize(end, 0);
                }
                &mut v[..end]
            }
        }
    }

    /// Writes `bytes` at `at`. A vector written up to `at` is extended (nothing zeroed first).
    pub(super) fn put(&mut self, at: usize, bytes: &[u8]) {
        let end = at + bytes.len();
        match self {
            Room::Vec { v, room } if v.len() == at && v.capacity() > 0 => {
                debug_assert!(end <= *room);
                v.extend_from_slice(bytes);
            }
            _ => copy_bytes(&mut self.upto(end)[at..], bytes),
        }
    }

    /// A vector cut back to its first `at` bytes (zero-filled up to there if shorter), for a
    /// writer that appends the rest itself; `None` for a caller's buffer.
    pub(super) fn vec_from(&mut self, at: usize) -> Option<&mut Vec<u8>> {
        self.upto(at);
        match self {
            Room::Vec { v, .. } => {
                v.truncate(at);
                Some(v)
            }
            Room::Slice(_) => None,
        }
    }

    /// Whether writing in place (straight from the encoders) saves a copy: into a caller's
    /// buffer, yes; into a vector, encoding into a scratch buffer and [`Room::put`]ting the
    /// result touches only the bytes of the chunk, where zeroing the room an encoder may use
    /// (a block's worst case) would touch fresh pages the chunk never reaches.
    pub(super) fn in_place(&self) -> bool {
        matches!(self, Room::Slice(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_grows_only_as_far_as_it_is_reached() {
        let mut v = Vec::with_capacity(100);
        let mut r = Room::Vec {
            v: &mut v,
            room: 100,
        };
        assert_eq!(r.len(), 100);
        r.upto(10)[9] = 7;
        assert_eq!(r.upto(4), &[0, 0, 0, 0]);
        assert_eq!(r.upto(12)[9..], [7, 0, 0]);
        assert_eq!((v.len(), v.capacity()), (12, 100));

        let mut v = Vec::new();
        let mut r = Room::Vec {
            v: &mut v,
            room: 100,
        };
        assert!(r.upto(100).iter().all(|&b| b == 0));
        assert_eq!((v.len(), v.capacity()), (100, 100));

        let mut buf = [1u8; 8];
        let mut r = Room::Slice(&mut buf);
        assert_eq!(r.len(), 8);
        assert_eq!(r.upto(3), &[1, 1, 1]);
    }
}
