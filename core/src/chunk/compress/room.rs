//! [`Room`]: where a chunk is written. A caller's buffer is written in place; a new vector
//! grows only as far as the writer reaches, so the room a chunk may need (its input size plus
//! the header) is reserved but never zeroed in whole: a 4 MiB input that compresses to 16 KiB
//! writes (and zero-fills) about one block's worth, not 4 MiB.

/// The room a chunk is written into (see the module doc).
pub(super) enum Room<'a> {
    /// A caller's buffer: all of it is room.
    Slice(&'a mut [u8]),
    /// A new vector with `room` bytes of room: its length is how far the writer has reached.
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
            Room::Vec { v, .. } => {
                if v.len() < end {
                    v.resize(end, 0);
                }
                &mut v[..end]
            }
        }
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
        assert_eq!(v.len(), 12);

        let mut buf = [1u8; 8];
        let mut r = Room::Slice(&mut buf);
        assert_eq!(r.len(), 8);
        assert_eq!(r.upto(3), &[1, 1, 1]);
    }
}
