//! Running the blocks of a chunk (serially, or on the workers) and laying their encodings out
//! in block order, checking at each stream whether it still fits the way c-blosc2's serial
//! writer does.

use super::*;

impl Compressor {
    /// Encodes every block of `plan` into `self.outs` (in parallel when worthwhile).
    fn encode_blocks(&mut self, plan: &Plan<'_>) -> Result<()> {
        let n = plan.nblocks;
        while self.outs.len() < n {
            self.outs.push(Mutex::new(BlockOut::default()));
        }
        let workers = &self.workers;
        let outs = &self.outs[..n];
        let job = |tid: usize, j: usize| {
            let mut w = lock(&workers[tid]);
            let mut o = lock(&outs[j]);
            let r = encode_block_out(plan, &mut w, j, tid, &mut o, None, false).map(|_| ());
            o.result = Some(r);
        };
        self.threads.for_each(n, &job)?;
        Ok(())
    }

    /// Training pass: the filtered blocks, concatenated in block order.
    pub(super) fn encode_all(&mut self, plan: &Plan<'_>) -> Result<Vec<u8>> {
        self.encode_blocks(plan)?;
        let mut v = Vec::new();
        for o in &self.outs[..plan.nblocks] {
            let mut o = lock(o);
            o.result.take().unwrap_or(Err(Error::Failure))?;
            v.extend_from_slice(o.encoded());
        }
        Ok(v)
    }

    /// Encodes all blocks and lays them out from `start` (bstarts at byte 32). `None` when
    /// the chunk does not fit in `destsize`; else (cbytes, every stream was a zero run).
    pub(super) fn run_blocks(
        &mut self,
        plan: &Plan<'_>,
        dst: &mut Room<'_>,
        start: usize,
        destsize: usize,
    ) -> Result<Option<(usize, bool)>> {
        debug_assert!(!plan.training);
        let mut nt = start;
        let mut all_zero = plan.dict.is_none() && !plan.is_vl();
        let mut first = 0;
        if self.threads.count() > 1 && plan.nblocks > 1 {
            match self.run_parallel(plan, dst.upto(destsize), start, destsize)? {
                Placed::All(n, zero) => return Ok(Some((n, zero))),
                Placed::NoFit => return Ok(None),
                Placed::Upto(next, at, zero) => (first, nt, all_zero) = (next, at, zero),
            }
        }
        // Serial (or the tail of a parallel run from a block that needs a room limit): encode
        // straight into the chunk, as c-blosc2's serial writer does. With room for the worst
        // case no stream can fail a fit check; otherwise each stream gets only the room left,
        // which is what `check_fit` + `Fit::Redo` would end up with (same bytes, one copy
        // fewer).
        let mut w = lock(&self.workers[0]);
        let w = &mut *w;
        let mut o = std::mem::take(&mut w.out);
        let r = (|| {
            for j in first..plan.nblocks {
                let bpos = plan.hlen + 4 * j;
                let bound = nt.saturating_add(block_bound(plan, j));
                let limit = if bound <= destsize {
                    None
                } else if nt < destsize {
                    Some((nt, destsize))
                } else {
                    return Ok(None);
                };
                let len = if dst.in_place() {
                    let BlockOut {
                        streams, neblock, ..
                    } = &mut o;
                    let end = bound.min(destsize);
                    let out = &mut dst.upto(end)[nt..];
                    let r = encode_block(plan, w, j, 0, out, streams, neblock, limit, false)?;
                    let Some((len, _)) = r else {
                        return Ok(None);
                    };
                    len
                } else {
                    if encode_block_out(plan, w, j, 0, &mut o, limit, false)?.is_none() {
                        return Ok(None);
                    }
                    dst.upto(start);
                    dst.put(nt, o.encoded());
                    o.len
                };
                dst.upto(bpos + 4)[bpos..].copy_from_slice(&(nt as i32).to_le_bytes());
                nt += len;
                all_zero &= o.streams.iter().all(|s| *s == Stream::Zero);
            }
            Ok(Some((nt, all_zero)))
        })();
        w.out = o;
        r
    }

    /// Encodes and places the blocks on the workers (see [`Order`]): each worker claims the
    /// next block, encodes it into its own buffer and, when every earlier block is placed,
    /// copies it into the chunk, then places any later blocks already waiting; otherwise it
    /// leaves its buffer waiting and takes a free one. Placement stops at the first block that
    /// fails (its error), does not fit, or needs a room-limited encode (`Placed::Upto`, for
    /// the serial writer to go on from there), exactly where the serial writer would.
    fn run_parallel(
        &mut self,
        plan: &Plan<'_>,
        dst: &mut [u8],
        start: usize,
        destsize: usize,
    ) -> Result<Placed> {
        let n = plan.nblocks;
        let (head, tail) = dst.split_at_mut(start);
        let mut starts = std::mem::take(&mut self.starts);
        starts.clear();
        let order = Mutex::new(Order {
            next: 0,
            nt: start,
            rest: &mut tail[..destsize - start],
            pending: std::mem::take(&mut self.pending),
            spares: std::mem::take(&mut self.spares),
            starts,
            all_zero: plan.dict.is_none() && !plan.is_vl(),
            stop: None,
        });
        let claim = AtomicUsize::new(0);
        let stopped = AtomicBool::new(false);
        let workers = &self.workers;
        // Each worker claims blocks until none are left.
        let job = |tid: usize| {
            if claim.load(Relaxed) >= n || stopped.load(Relaxed) {
                return;
            }
            let mut w = lock(&workers[tid]);
            let w = &mut *w;
            let mut mine = std::mem::take(&mut w.out);
            while !stopped.load(Relaxed) {
                let j = claim.fetch_add(1, Relaxed);
                if j >= n {
                    break;
                }
                let (r, filtered) = match encode_block_out(plan, w, j, tid, &mut mine, None, true) {
                    Ok(f) => (Ok(()), f.unwrap_or_default()),
                    Err(e) => (Err(e), &[][..]),
                };
                mine.result = Some(r);
                let mut st = lock(&order);
                if j != st.next && mine.raw_deferred {
                    drop(st);
                    mine.fill_raw(filtered);
                    st = lock(&order);
                }
                if j != st.next {
                    // An earlier block is still being encoded: leave this one to whoever
                    // places that block, and go on with a free buffer.
                    let spare = st.spares.pop().unwrap_or_default();
                    st.pending.push((j, std::mem::replace(&mut mine, spare)));
                    continue;
                }
                let piece = st.reserve(&mine, destsize);
                drop(st);
                let Some(piece) = piece else {
                    stopped.store(true, Relaxed);
                    break;
                };
                mine.copy_to(piece, filtered);
                if !place_waiting(&order, destsize) {
                    stopped.store(true, Relaxed);
                }
            }
            w.out = mine;
        };
        let r = self.threads.run_workers(n, &job);
        let st = order.into_inner().unwrap_or_else(|e| e.into_inner());
        for (j, &at) in st.starts.iter().enumerate() {
            let bpos = plan.hlen + 4 * j;
            head[bpos..bpos + 4].copy_from_slice(&(at as i32).to_le_bytes());
        }
        let placed = match st.stop {
            None if st.next == n => Ok(Placed::All(st.nt, st.all_zero)),
            None => Err(Error::Failure),
            Some(Stop::Failed(e)) => Err(e),
            Some(Stop::NoFit) => Ok(Placed::NoFit),
            Some(Stop::Redo) => Ok(Placed::Upto(st.next, st.nt, st.all_zero)),
        };
        let Order {
            mut pending,
            mut spares,
            starts,
            ..
        } = st;
        spares.extend(pending.drain(..).map(|(_, o)| o));
        (self.pending, self.spares, self.starts) = (pending, spares, starts);
        r?;
        placed
    }
}

/// How far [`Compressor::run_parallel`] got.
enum Placed {
    /// Every block: (cbytes, every stream was a zero run).
    All(usize, bool),
    /// The chunk does not fit.
    NoFit,
    /// Blocks before `.0` are placed, up to byte `.1` (`.2`: all their streams were zero
    /// runs); block `.0` needs a room-limited encode.
    Upto(usize, usize, bool),
}

/// Why in-order placement stopped before the last block.
enum Stop {
    /// Block `next` does not fit: neither does the chunk.
    NoFit,
    /// Block `next` needs a room-limited encode ([`Fit::Redo`]).
    Redo,
    /// Encoding block `next` failed.
    Failed(Error),
}

/// What the workers of one [`Compressor::run_parallel`] share, behind one mutex held only to
/// claim output, never while encoding or copying. Blocks are placed strictly in index order,
/// so every block lands where the serial writer would put it.
struct Order<'d> {
    /// First block not placed yet.
    next: usize,
    /// Where it goes.
    nt: usize,
    /// The chunk from `nt` up to `destsize`, not handed out yet.
    rest: &'d mut [u8],
    /// Blocks encoded while an earlier one was not placed yet, with their index.
    pending: Vec<(usize, BlockOut)>,
    /// Free buffers for workers that left theirs in `pending`.
    spares: Vec<BlockOut>,
    /// Start of each placed block (bstarts).
    starts: Vec<usize>,
    all_zero: bool,
    stop: Option<Stop>,
}

impl<'d> Order<'d> {
    /// Claims the output for block `next`, encoded in `o`, if it passes c-blosc2's serial fit
    /// checks where it lands; else records why not (for good: nothing is placed after that).
    fn reserve(&mut self, o: &BlockOut, destsize: usize) -> Option<&'d mut [u8]> {
        if self.stop.is_some() {
            return None;
        }
        let stop = match o.result {
            Some(Ok(())) => match check_fit(o, self.nt, destsize, false) {
                (Fit::Yes, zero) => {
                    self.all_zero &= zero;
                    self.starts.push(self.nt);
                    let (piece, rest) = std::mem::take(&mut self.rest).split_at_mut(o.len);
                    self.rest = rest;
                    self.nt += o.len;
                    self.next += 1;
                    return Some(piece);
                }
                (Fit::No, _) => Stop::NoFit,
                (Fit::Redo, _) => Stop::Redo,
            },
            Some(Err(e)) => Stop::Failed(e),
            None => Stop::Failed(Error::Failure),
        };
        self.stop = Some(stop);
        None
    }
}

/// Places the blocks left waiting in `order` that have become next in line, one by one (each
/// copied outside the lock, so other workers keep claiming blocks meanwhile); false when
/// placement stopped.
fn place_waiting(order: &Mutex<Order<'_>>, destsize: usize) -> bool {
    let mut done: Option<BlockOut> = None;
    loop {
        let mut st = lock(order);
        if let Some(o) = done.take() {
            st.spares.push(o);
        }
        if st.stop.is_some() {
            return false;
        }
        let next = st.next;
        let Some(i) = st.pending.iter().position(|&(k, _)| k == next) else {
            return true;
        };
        let (_, o) = st.pending.swap_remove(i);
        let piece = st.reserve(&o, destsize);
        drop(st);
        if let Some(piece) = piece {
            copy_bytes(piece, o.encoded());
        }
        done = Some(o);
    }
}

/// Outcome of laying out one block.
#[derive(PartialEq, Eq)]
enum Fit {
    /// Copied.
    Yes,
    /// The chunk does not fit.
    No,
    /// A codec stream would get less room than `neblock` here: encode the block again with
    /// that limit (see [`encode_block`]) and retry.
    Redo,
}

/// c-blosc2's serial fit checks for block `o` landing at `nt`, stream by stream; on
/// [`Fit::Yes`] also whether every stream is a zero run.
/// `exact`: the block was encoded for this position (no [`Fit::Redo`]).
fn check_fit(o: &BlockOut, nt: usize, destsize: usize, exact: bool) -> (Fit, bool) {
    let neblock = o.neblock;
    let mut n = nt;
    let mut zero = true;
    for s in &o.streams {
        n += 4;
        match *s {
            Stream::Zero => {
                if n > destsize {
                    return (Fit::No, false);
                }
            }
            Stream::Run => {
                zero = false;
                n += 1;
                if n > destsize {
                    return (Fit::No, false);
                }
            }
            Stream::Raw => {
                zero = false;
                if n + neblock > destsize {
                    return (Fit::No, false);
                }
                n += neblock;
            }
            Stream::Codec(c) => {
                zero = false;
                if n + neblock > destsize {
                    if destsize <= n || c > destsize - n {
                        return (Fit::No, false);
                    }
                    if !exact {
                        return (Fit::Redo, false);
                    }
                }
                n += c;
            }
        }
    }
    debug_assert_eq!(n - nt, o.len);
    (Fit::Yes, zero)
}
