//! Which super-chunks this thread holds shared: a thread-local record every read start and end
//! touches, so nested reads (callbacks reading the super-chunk they run for) are recognised.

use super::HandleSync;
use std::cell::{Cell, RefCell};

/// How many shared holds a thread records inline (beyond that, in [`SPILL`]).
const INLINE: usize = 8;

/// The [`HandleSync`]s (by address) this thread holds shared, once per [`Shared`] guard, in a
/// logical array: the first [`INLINE`] records here, the rest (reads nested that deep in
/// callbacks) in [`SPILL`]. Nothing here needs a destructor, so every read start and end is a
/// bare thread-local lookup, without the lazy destructor registration a `Vec` needs.
pub(super) struct Held {
    len: Cell<usize>,
    slots: [Cell<usize>; INLINE],
}

thread_local! {
    /// This thread's [`Held`]; its address identifies the thread ([`thread_token`]).
    pub(super) static HELD: Held = const {
        Held {
            len: Cell::new(0),
            slots: [const { Cell::new(0) }; INLINE],
        }
    };
    /// Records past the first [`INLINE`] of [`HELD`].
    static SPILL: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

impl Held {
    pub(super) fn contains(&self, a: usize) -> bool {
        let n = self.len.get();
        self.slots[..n.min(INLINE)].iter().any(|s| s.get() == a)
            || (n > INLINE && SPILL.with(|v| v.borrow().contains(&a)))
    }

    pub(super) fn push(&self, a: usize) {
        let n = self.len.get();
        match self.slots.get(n) {
            Some(s) => s.set(a),
            None => SPILL.with(|v| v.borrow_mut().push(a)),
        }
        self.len.set(n + 1);
    }

    /// Removes the last record of `a` (its place takes the last record).
    pub(super) fn remove(&self, a: usize) {
        let n = self.len.get();
        if n > INLINE {
            return self.remove_spilled(a);
        }
        if let Some(i) = self.slots[..n].iter().rposition(|s| s.get() == a) {
            self.slots[i].set(self.slots[n - 1].get());
            self.len.set(n - 1);
        }
    }

    /// [`Held::remove`] when records spilled.
    #[cold]
    fn remove_spilled(&self, a: usize) {
        SPILL.with(|v| {
            let mut v = v.borrow_mut();
            let Some(last) = v.pop() else {
                return;
            };
            if last != a {
                if let Some(i) = v.iter().rposition(|&x| x == a) {
                    v[i] = last;
                } else if let Some(i) = self.slots.iter().rposition(|s| s.get() == a) {
                    self.slots[i].set(last);
                } else {
                    v.push(last);
                    return;
                }
            }
            self.len.set(self.len.get() - 1);
        })
    }
}

/// Whether this thread holds `sync` shared (a read is running below us on this thread).
pub(super) fn held_here(sync: &HandleSync) -> bool {
    let a = sync as *const HandleSync as usize;
    HELD.with(|h| h.contains(a))
}

/// A non-zero number unique to the calling thread while it lives.
pub(super) fn thread_token() -> usize {
    HELD.with(token_of)
}

pub(super) fn token_of(held: &Held) -> usize {
    held as *const Held as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn held_records_spill_past_the_inline_slots_and_come_back_out_of_order() {
        std::thread::spawn(|| {
            HELD.with(|h| {
                // Three handles held 2 x INLINE times in all, with repeats.
                let recs: Vec<usize> = (0..2 * INLINE).map(|i| 100 + i % 3).collect();
                for &a in &recs {
                    h.push(a);
                }
                assert_eq!(h.len.get(), recs.len());
                assert!(h.contains(102) && !h.contains(103));
                let mut left = recs.clone();
                // Remove from the middle, the spill and the front.
                for a in [101, 100, 102, 102, 100, 101, 100, 102, 101, 101, 100, 102] {
                    h.remove(a);
                    let i = left.iter().rposition(|&x| x == a).unwrap();
                    left.remove(i);
                    let n = h.len.get();
                    let mut now: Vec<usize> =
                        h.slots[..n.min(INLINE)].iter().map(Cell::get).collect();
                    now.extend(SPILL.with(|v| v.borrow().clone()));
                    let mut want = left.clone();
                    now.sort();
                    want.sort();
                    assert_eq!(now, want);
                    assert_eq!(
                        SPILL.with(|v| v.borrow().len()),
                        left.len().saturating_sub(INLINE)
                    );
                }
                h.remove(7); // not held: nothing happens
                assert_eq!(h.len.get(), left.len());
                for a in left {
                    h.remove(a);
                }
                assert!(h.len.get() == 0 && !h.contains(100));
            })
        })
        .join()
        .unwrap();
    }
}
