//! A frame's offsets in memory ([`Locs`]): the entries as a sequence of segments, each either
//! a run of one repeated special entry or a list of explicit entries.
//!
//! A frame made by `fill_special` (c-blosc2's, python-blosc2's `zeros`/`full`, ours) is a few
//! hundred bytes but may claim some 268 million chunks, all one special entry; one 8-byte entry
//! per chunk would make its open allocate 2 GB where c-blosc2 keeps the compressed index. Here
//! such a frame is one run: opening it, reading from it and appending to it cost what the
//! stored entries cost. Runs only split where an entry inside one is updated or inserted
//! (deleting one only shortens it), and then only around that entry.
//!
//! Explicit entries take 4 bytes each while every stored location is below 2^32 - 16 (a cframe
//! under 4 GiB, every sframe), 8 bytes otherwise: a frame of a million chunks holds 4 MB of
//! offsets, half of c-blosc2's decoded index.
//!
//! Random access is O(1) for a frame of one segment (every frame without runs) and
//! O(log segments) otherwise. Read the entries with [`Locs::get`] (or [`Locs::at`]),
//! [`Locs::iter`], [`Locs::stored`] (the stored locations only, runs skipped) or
//! [`LocsRef::spans`] (runs as runs); views of a prefix are [`LocsRef`]s.

#![forbid(unsafe_code)]

use super::ChunkLoc;

/// Runs shorter than this are kept as explicit entries.
const MIN_RUN: usize = 64;

/// One segment: `Run(entry, count)` (a special entry, `count >= 1`) or explicit entries
/// (never empty).
#[derive(Clone, Debug)]
enum Seg {
    Run(ChunkLoc, usize),
    List(List),
}

impl Seg {
    fn len(&self) -> usize {
        match self {
            Seg::Run(_, n) => *n,
            Seg::List(v) => v.len(),
        }
    }
}

/// Narrow entries at or above this are special: `NARROW_SPECIAL | special id`.
const NARROW_SPECIAL: u32 = 0xFFFF_FFF0;

/// The 4-byte form of `l`, if it has one.
fn narrow(l: ChunkLoc) -> Option<u32> {
    match l.get() {
        super::Loc::Stored(v) => u32::try_from(v).ok().filter(|&v| v < NARROW_SPECIAL),
        super::Loc::Special(k) => Some(NARROW_SPECIAL | u32::from(k.special_id())),
    }
}

/// The entry of a 4-byte form.
fn widen(x: u32) -> ChunkLoc {
    if x < NARROW_SPECIAL {
        return ChunkLoc::Stored(u64::from(x));
    }
    match super::SpecialKind::from_special_id((x & 0xF) as u8) {
        Some(k) => ChunkLoc::Special(k),
        None => ChunkLoc::Stored(u64::from(x)),
    }
}

/// Explicit entries: 4 bytes each while they all have a 4-byte form ([`narrow`]), else 8.
#[derive(Clone, Debug)]
enum List {
    Narrow(Vec<u32>),
    Wide(Vec<ChunkLoc>),
}

impl List {
    /// `v`, narrow when every entry has a 4-byte form, with room for `reserve` entries.
    fn of(v: &[ChunkLoc], reserve: usize) -> List {
        let mut l = match v.iter().all(|&x| narrow(x).is_some()) {
            true => List::Narrow(Vec::with_capacity(reserve.max(v.len()))),
            false => List::Wide(Vec::with_capacity(reserve.max(v.len()))),
        };
        l.extend(v);
        l
    }

    fn len(&self) -> usize {
        match self {
            List::Narrow(v) => v.len(),
            List::Wide(v) => v.len(),
        }
    }

    fn get(&self, i: usize) -> ChunkLoc {
        match self {
            List::Narrow(v) => widen(v[i]),
            List::Wide(v) => v[i],
        }
    }

    /// Makes the entries 8 bytes each.
    fn widened(&mut self) -> &mut Vec<ChunkLoc> {
        if let List::Narrow(v) = self {
            *self = List::Wide(v.iter().map(|&x| widen(x)).collect());
        }
        match self {
            List::Wide(v) => v,
            List::Narrow(_) => unreachable!("widened above"),
        }
    }

    fn set(&mut self, i: usize, l: ChunkLoc) {
        match (&mut *self, narrow(l)) {
            (List::Narrow(v), Some(x)) => v[i] = x,
            _ => self.widened()[i] = l,
        }
    }

    fn insert(&mut self, i: usize, l: ChunkLoc) {
        match (&mut *self, narrow(l)) {
            (List::Narrow(v), Some(x)) => v.insert(i, x),
            _ => self.widened().insert(i, l),
        }
    }

    fn push(&mut self, l: ChunkLoc) {
        let n = self.len();
        self.insert(n, l);
    }

    fn remove(&mut self, i: usize) -> ChunkLoc {
        match self {
            List::Narrow(v) => widen(v.remove(i)),
            List::Wide(v) => v.remove(i),
        }
    }

    fn truncate(&mut self, n: usize) {
        match self {
            List::Narrow(v) => v.truncate(n),
            List::Wide(v) => v.truncate(n),
        }
    }

    fn extend(&mut self, more: &[ChunkLoc]) {
        if let List::Narrow(v) = self {
            let at = v.len();
            v.extend(more.iter().map_while(|&l| narrow(l)));
            if v.len() == at + more.len() {
                return;
            }
            v.truncate(at);
        }
        self.widened().extend_from_slice(more);
    }

    /// Appends `other`'s entries.
    fn append(&mut self, other: List) {
        match (&mut *self, other) {
            (List::Narrow(a), List::Narrow(b)) => a.extend_from_slice(&b),
            (_, List::Wide(b)) => self.widened().extend_from_slice(&b),
            (List::Wide(a), List::Narrow(b)) => a.extend(b.iter().map(|&x| widen(x))),
        }
    }

    fn span(&self, a: usize, b: usize) -> Span<'_> {
        match self {
            List::Narrow(v) => Span::Narrow(&v[a..b]),
            List::Wide(v) => Span::List(&v[a..b]),
        }
    }

    fn map_stored(&mut self, f: &mut impl FnMut(u64) -> u64) {
        let from = match self {
            List::Narrow(v) => {
                let mut failed = None;
                for (i, x) in v.iter_mut().enumerate() {
                    if *x < NARROW_SPECIAL {
                        let y = f(u64::from(*x));
                        match u32::try_from(y).ok().filter(|&y| y < NARROW_SPECIAL) {
                            Some(y) => *x = y,
                            None => {
                                failed = Some((i, y));
                                break;
                            }
                        }
                    }
                }
                // Entry `i` maps to a location without a 4-byte form: the list widens, with
                // the entries before it mapped already.
                let Some((i, y)) = failed else { return };
                self.widened()[i] = ChunkLoc::Stored(y);
                i + 1
            }
            List::Wide(_) => 0,
        };
        for l in self.widened()[from..].iter_mut() {
            if let Some(x) = l.stored() {
                *l = ChunkLoc::Stored(f(x));
            }
        }
    }
}

/// A frame's offsets: what `Vec<ChunkLoc>` held, with runs of one repeated special entry kept
/// as runs (see the module documentation).
#[derive(Clone, Default)]
pub struct Locs {
    segs: Vec<Seg>,
    /// `ends[k]`: the number of entries in `segs[..=k]`.
    ends: Vec<usize>,
}

/// A contiguous part of a [`LocsRef`]: `Run(entry, count)` or explicit entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span<'a> {
    /// `count` copies of one entry.
    Run(ChunkLoc, usize),
    /// Explicit entries.
    List(&'a [ChunkLoc]),
    /// Explicit entries in their 4-byte form (see the module documentation).
    Narrow(&'a [u32]),
}

impl Span<'_> {
    /// Its number of entries.
    pub fn len(&self) -> usize {
        match self {
            Span::Run(_, n) => *n,
            Span::List(v) => v.len(),
            Span::Narrow(v) => v.len(),
        }
    }

    /// Entry `i < len`.
    pub fn get(&self, i: usize) -> ChunkLoc {
        match self {
            Span::Run(l, _) => *l,
            Span::List(v) => v[i],
            Span::Narrow(v) => widen(v[i]),
        }
    }

    /// Whether it has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A read-only view of the first `len` entries of a [`Locs`] (or of a slice of entries).
#[derive(Clone, Copy)]
pub struct LocsRef<'a> {
    inner: RefInner<'a>,
    len: usize,
}

#[derive(Clone, Copy)]
enum RefInner<'a> {
    Locs(&'a Locs),
    Slice(&'a [ChunkLoc]),
}

impl<'a> From<&'a Locs> for LocsRef<'a> {
    fn from(l: &'a Locs) -> Self {
        l.view()
    }
}

impl<'a> From<&'a [ChunkLoc]> for LocsRef<'a> {
    fn from(s: &'a [ChunkLoc]) -> Self {
        LocsRef {
            inner: RefInner::Slice(s),
            len: s.len(),
        }
    }
}

impl<'a> From<&'a Vec<ChunkLoc>> for LocsRef<'a> {
    fn from(s: &'a Vec<ChunkLoc>) -> Self {
        s.as_slice().into()
    }
}

impl<'a, const N: usize> From<&'a [ChunkLoc; N]> for LocsRef<'a> {
    fn from(s: &'a [ChunkLoc; N]) -> Self {
        s.as_slice().into()
    }
}

impl<'a> LocsRef<'a> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entry `i`.
    pub fn get(&self, i: usize) -> Option<ChunkLoc> {
        if i >= self.len {
            return None;
        }
        match self.inner {
            RefInner::Locs(l) => l.get(i),
            RefInner::Slice(s) => s.get(i).copied(),
        }
    }

    /// The entries of `start..end` (clipped to the view) as runs and lists, in order.
    pub fn spans(&self, start: usize, end: usize) -> impl Iterator<Item = Span<'a>> + 'a {
        let end = end.min(self.len);
        let start = start.min(end);
        let (segs, slice): (&'a [Seg], &'a [ChunkLoc]) = match self.inner {
            RefInner::Locs(l) => (&l.segs, &[]),
            RefInner::Slice(s) => (&[], &s[start..end]),
        };
        let (first, ends): (usize, &'a [usize]) = match self.inner {
            RefInner::Locs(l) if start < end => (l.seg_of(start), &l.ends),
            _ => (segs.len(), &[]),
        };
        let from_slice = (!slice.is_empty()).then_some(Span::List(slice));
        let from_segs = segs
            .iter()
            .enumerate()
            .skip(first)
            .map_while(move |(k, s)| {
                let s0 = if k == 0 { 0 } else { ends[k - 1] };
                if s0 >= end {
                    return None;
                }
                let (a, b) = (start.max(s0) - s0, end.min(ends[k]) - s0);
                Some(match s {
                    Seg::Run(l, _) => Span::Run(*l, b - a),
                    Seg::List(v) => v.span(a, b),
                })
            });
        from_slice.into_iter().chain(from_segs)
    }

    /// The entries, in order.
    pub fn iter(&self) -> Iter<'a> {
        self.iter_range(0, self.len)
    }

    /// The entries of `start..end`, in order.
    pub fn iter_range(&self, start: usize, end: usize) -> Iter<'a> {
        Iter {
            spans: Box::new(self.spans(start, end)),
            cur: Span::List(&[]),
        }
    }

    /// The stored locations, in index order (runs, always special, are skipped whole).
    pub fn stored(&self) -> impl Iterator<Item = u64> + 'a {
        self.stored_range(0, self.len)
    }

    /// The stored locations among entries `start..end`.
    pub fn stored_range(&self, start: usize, end: usize) -> impl Iterator<Item = u64> + 'a {
        self.spans(start, end).flat_map(|s| {
            let (wide, narrow): (&[ChunkLoc], &[u32]) = match s {
                Span::Run(..) => (&[], &[]),
                Span::List(v) => (v, &[]),
                Span::Narrow(v) => (&[], v),
            };
            let narrow = narrow
                .iter()
                .filter(|&&x| x < NARROW_SPECIAL)
                .map(|&x| u64::from(x));
            wide.iter().filter_map(|l| l.stored()).chain(narrow)
        })
    }

    /// The one entry `start..end` (non-empty) consists of, if it is a single repeated one.
    pub fn uniform(&self, start: usize, end: usize) -> Option<ChunkLoc> {
        let mut one = None;
        for s in self.spans(start, end) {
            let l = match s {
                Span::Run(l, _) => l,
                Span::List(v) => {
                    let l = v[0];
                    if v.iter().any(|&x| x != l) {
                        return None;
                    }
                    l
                }
                Span::Narrow(v) => {
                    let l = v[0];
                    if v.iter().any(|&x| x != l) {
                        return None;
                    }
                    widen(l)
                }
            };
            if one.is_some_and(|o| o != l) {
                return None;
            }
            one = Some(l);
        }
        one
    }

    /// Whether entries `start..end` of `self` and `other` are the same.
    pub fn range_eq(&self, other: &LocsRef<'_>, start: usize, end: usize) -> bool {
        if end > self.len || end > other.len {
            return false;
        }
        if let (Some(a), Some(b)) = (self.uniform_run(start, end), other.uniform_run(start, end)) {
            return a == b;
        }
        // One list each (every frame without runs): compared as slices.
        match (self.only_span(start, end), other.only_span(start, end)) {
            (Some(Span::Narrow(a)), Some(Span::Narrow(b))) => return a == b,
            (Some(Span::List(a)), Some(Span::List(b))) => return a == b,
            _ => {}
        }
        self.iter_range(start, end).eq(other.iter_range(start, end))
    }

    /// The span `start..end` is, when it is one.
    fn only_span(&self, start: usize, end: usize) -> Option<Span<'a>> {
        let mut it = self.spans(start, end);
        match (it.next(), it.next()) {
            (Some(s), None) => Some(s),
            _ => None,
        }
    }

    /// [`LocsRef::uniform`] when `start..end` lies in one run (cheap).
    fn uniform_run(&self, start: usize, end: usize) -> Option<ChunkLoc> {
        let mut it = self.spans(start, end);
        match (it.next(), it.next()) {
            (Some(Span::Run(l, _)), None) => Some(l),
            _ => None,
        }
    }

    /// Appends the little-endian index entries of `start..end` to `out`.
    pub fn write_entries(&self, start: usize, end: usize, out: &mut Vec<u8>) {
        for s in self.spans(start, end) {
            match s {
                Span::Run(l, n) => {
                    let e = l.to_entry().to_le_bytes();
                    for _ in 0..n {
                        out.extend_from_slice(&e);
                    }
                }
                Span::List(v) => {
                    for l in v {
                        out.extend_from_slice(&l.to_entry().to_le_bytes());
                    }
                }
                Span::Narrow(v) => {
                    for &x in v {
                        out.extend_from_slice(&widen(x).to_entry().to_le_bytes());
                    }
                }
            }
        }
    }

    /// A [`Locs`] holding these entries (runs stay runs).
    pub fn to_locs(&self) -> Locs {
        let mut out = Locs::new();
        for s in self.spans(0, self.len) {
            match s {
                Span::Run(l, n) => out.push_run(l, n),
                Span::List(v) => out.extend_from_slice(v),
                Span::Narrow(v) => {
                    for &x in v {
                        out.push(widen(x));
                    }
                }
            }
        }
        out
    }

    /// The entries, expanded (tests and small frames).
    pub fn to_vec(&self) -> Vec<ChunkLoc> {
        self.iter().collect()
    }
}

/// Iterator over the entries of a [`LocsRef`].
pub struct Iter<'a> {
    spans: Box<dyn Iterator<Item = Span<'a>> + 'a>,
    cur: Span<'a>,
}

impl Iterator for Iter<'_> {
    type Item = ChunkLoc;

    fn next(&mut self) -> Option<ChunkLoc> {
        loop {
            match &mut self.cur {
                Span::Run(l, n) if *n > 0 => {
                    *n -= 1;
                    return Some(*l);
                }
                Span::List(v) if !v.is_empty() => {
                    let l = v[0];
                    *v = &v[1..];
                    return Some(l);
                }
                Span::Narrow(v) if !v.is_empty() => {
                    let l = widen(v[0]);
                    *v = &v[1..];
                    return Some(l);
                }
                _ => self.cur = self.spans.next()?,
            }
        }
    }
}

impl Locs {
    /// No entries.
    pub const fn new() -> Locs {
        Locs {
            segs: Vec::new(),
            ends: Vec::new(),
        }
    }

    /// `n` copies of `loc` (a run when `loc` is special).
    pub fn repeated(loc: ChunkLoc, n: usize) -> Locs {
        let mut l = Locs::new();
        l.push_run(loc, n);
        l
    }

    /// A view of all entries.
    pub fn view(&self) -> LocsRef<'_> {
        LocsRef {
            inner: RefInner::Locs(self),
            len: self.len(),
        }
    }

    /// A view of the first `n` entries (all of them when `n` is larger).
    pub fn prefix(&self, n: usize) -> LocsRef<'_> {
        LocsRef {
            inner: RefInner::Locs(self),
            len: n.min(self.len()),
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.ends.last().copied().unwrap_or(0)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// How many runs and lists hold the entries (tests; see [`LocsRef::spans`]).
    pub fn segments(&self) -> usize {
        self.segs.len()
    }

    /// The segment holding entry `i < len`.
    fn seg_of(&self, i: usize) -> usize {
        if self.segs.len() == 1 {
            0
        } else {
            self.ends.partition_point(|&e| e <= i)
        }
    }

    /// The segment holding entry `i < len`, and `i`'s position in it.
    fn locate(&self, i: usize) -> (usize, usize) {
        let k = self.seg_of(i);
        (k, i - if k == 0 { 0 } else { self.ends[k - 1] })
    }

    /// Entry `i`.
    pub fn get(&self, i: usize) -> Option<ChunkLoc> {
        if i >= self.len() {
            return None;
        }
        let (k, at) = self.locate(i);
        Some(match &self.segs[k] {
            Seg::Run(l, _) => *l,
            Seg::List(v) => v.get(at),
        })
    }

    /// Entry `i`, which the caller knows exists (panics otherwise: code that handles frames
    /// uses [`Locs::get`]).
    pub fn at(&self, i: usize) -> ChunkLoc {
        match self.get(i) {
            Some(l) => l,
            None => panic!("entry {i} of {} offsets", self.len()),
        }
    }

    /// The entries, in order.
    pub fn iter(&self) -> Iter<'_> {
        self.view().iter()
    }

    /// The stored locations, in index order (runs skipped whole).
    pub fn stored(&self) -> impl Iterator<Item = u64> + '_ {
        self.view().stored()
    }

    /// Whether any entry is a stored location.
    pub fn any_stored(&self) -> bool {
        self.stored().next().is_some()
    }

    /// The entries, expanded (tests and small frames).
    pub fn to_vec(&self) -> Vec<ChunkLoc> {
        self.view().to_vec()
    }

    fn recount(&mut self) {
        self.ends.clear();
        let mut n = 0;
        for s in &self.segs {
            n += s.len();
            self.ends.push(n);
        }
    }

    /// Merges neighbours of the same kind (lists; runs of one entry) and drops empty
    /// segments, around segments `from..to`, then recounts.
    fn tidy(&mut self, from: usize, to: usize) {
        let lo = from.saturating_sub(1);
        let hi = (to + 1).min(self.segs.len());
        let mut mid: Vec<Seg> = self.segs.drain(lo..hi).collect();
        mid.retain(|s| s.len() > 0);
        let mut merged: Vec<Seg> = Vec::with_capacity(mid.len());
        for s in mid {
            match (merged.last_mut(), s) {
                (Some(Seg::Run(a, n)), Seg::Run(b, m)) if *a == b => *n += m,
                (Some(Seg::List(a)), Seg::List(b)) => a.append(b),
                (Some(Seg::List(a)), Seg::Run(b, m)) if m < MIN_RUN => {
                    for _ in 0..m {
                        a.push(b);
                    }
                }
                (_, s) => merged.push(s),
            }
        }
        self.segs.splice(lo..lo, merged);
        self.recount();
    }

    /// Appends one entry (extending a final run of the same entry).
    pub fn push(&mut self, loc: ChunkLoc) {
        match self.segs.last_mut() {
            Some(Seg::Run(l, n)) if *l == loc => *n += 1,
            Some(Seg::List(v)) => v.push(loc),
            _ => {
                let n = self.len();
                self.segs.push(Seg::List(List::of(&[loc], 0)));
                self.ends.push(n);
            }
        }
        if let Some(e) = self.ends.last_mut() {
            *e += 1;
        }
    }

    /// Appends `n` copies of `loc`: a run when `loc` is special and `n` is not small.
    pub fn push_run(&mut self, loc: ChunkLoc, n: usize) {
        if n == 0 {
            return;
        }
        match self.segs.last_mut() {
            Some(Seg::Run(l, m)) if *l == loc => *m += n,
            _ if loc.is_stored() || n < MIN_RUN => {
                for _ in 0..n {
                    self.push(loc);
                }
                return;
            }
            _ => {
                self.segs.push(Seg::Run(loc, n));
                self.ends.push(self.len());
            }
        }
        if let Some(e) = self.ends.last_mut() {
            *e += n;
        }
    }

    /// Appends `v`; a slice of one repeated special entry (a uniform block of a decoded
    /// index) becomes (or extends) a run.
    pub fn extend_from_slice(&mut self, v: &[ChunkLoc]) {
        self.extend_reserving(v, 0);
    }

    /// [`Locs::extend_from_slice`]; a new list is created with room for `reserve` entries.
    pub fn extend_reserving(&mut self, v: &[ChunkLoc], reserve: usize) {
        let Some(&first) = v.first() else { return };
        if v.len() >= MIN_RUN && !first.is_stored() && v.iter().all(|&l| l == first) {
            return self.push_run(first, v.len());
        }
        match self.segs.last_mut() {
            Some(Seg::List(l)) => l.extend(v),
            _ => {
                self.segs.push(Seg::List(List::of(v, reserve)));
                self.ends.push(self.len());
            }
        }
        if let Some(e) = self.ends.last_mut() {
            *e += v.len();
        }
    }

    /// Keeps the first `n` entries.
    pub fn truncate(&mut self, n: usize) {
        if n >= self.len() {
            return;
        }
        if n == 0 {
            *self = Locs::new();
            return;
        }
        let (k, at) = self.locate(n);
        self.segs.truncate(k + 1);
        match &mut self.segs[k] {
            Seg::Run(_, m) => *m = at,
            Seg::List(v) => v.truncate(at),
        }
        if at == 0 {
            self.segs.pop();
        }
        self.recount();
    }

    /// Sets entry `i < len` (splitting a run around it when it differs).
    pub fn set(&mut self, i: usize, loc: ChunkLoc) {
        let (k, at) = self.locate(i);
        match &mut self.segs[k] {
            Seg::List(v) => v.set(at, loc),
            Seg::Run(l, _) if *l == loc => {}
            Seg::Run(l, n) => {
                let (l, n) = (*l, *n);
                let parts = [
                    Seg::Run(l, at),
                    Seg::List(List::of(&[loc], 0)),
                    Seg::Run(l, n - at - 1),
                ];
                self.segs.splice(k..=k, parts);
                self.tidy(k, k + 3);
            }
        }
    }

    /// Inserts `loc` before entry `i <= len`.
    pub fn insert(&mut self, i: usize, loc: ChunkLoc) {
        if i >= self.len() {
            return self.push(loc);
        }
        let (k, at) = self.locate(i);
        match &mut self.segs[k] {
            Seg::List(v) => v.insert(at, loc),
            Seg::Run(l, n) if *l == loc => *n += 1,
            Seg::Run(l, n) => {
                let (l, n) = (*l, *n);
                let parts = [
                    Seg::Run(l, at),
                    Seg::List(List::of(&[loc], 0)),
                    Seg::Run(l, n - at),
                ];
                self.segs.splice(k..=k, parts);
                return self.tidy(k, k + 3);
            }
        }
        for e in &mut self.ends[k..] {
            *e += 1;
        }
    }

    /// Removes entry `i < len` and returns it.
    pub fn remove(&mut self, i: usize) -> ChunkLoc {
        let (k, at) = self.locate(i);
        let (loc, emptied) = match &mut self.segs[k] {
            Seg::List(v) => (v.remove(at), v.len() == 0),
            Seg::Run(l, n) => {
                *n -= 1;
                (*l, *n == 0)
            }
        };
        if emptied {
            self.segs.remove(k);
            self.tidy(k, k);
        } else {
            for e in &mut self.ends[k..] {
                *e -= 1;
            }
        }
        loc
    }

    /// Replaces every stored location `v` by `f(v)` (runs, always special, are untouched).
    pub fn map_stored(&mut self, mut f: impl FnMut(u64) -> u64) {
        for s in &mut self.segs {
            if let Seg::List(v) = s {
                v.map_stored(&mut f);
            }
        }
    }
}

impl From<Vec<ChunkLoc>> for Locs {
    fn from(v: Vec<ChunkLoc>) -> Locs {
        let mut l = Locs::new();
        if !v.is_empty() {
            l.ends.push(v.len());
            l.segs.push(Seg::List(List::of(&v, 0)));
        }
        l
    }
}

impl FromIterator<ChunkLoc> for Locs {
    fn from_iter<I: IntoIterator<Item = ChunkLoc>>(it: I) -> Locs {
        let mut l = Locs::new();
        for x in it {
            l.push(x);
        }
        l
    }
}

impl<'a> IntoIterator for &'a Locs {
    type Item = ChunkLoc;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl PartialEq for Locs {
    fn eq(&self, other: &Locs) -> bool {
        self.len() == other.len() && self.view().range_eq(&other.view(), 0, self.len())
    }
}

impl Eq for Locs {}

impl PartialEq<[ChunkLoc]> for Locs {
    fn eq(&self, other: &[ChunkLoc]) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl PartialEq<Vec<ChunkLoc>> for Locs {
    fn eq(&self, other: &Vec<ChunkLoc>) -> bool {
        *self == other[..]
    }
}

impl<const N: usize> PartialEq<[ChunkLoc; N]> for Locs {
    fn eq(&self, other: &[ChunkLoc; N]) -> bool {
        *self == other[..]
    }
}

impl std::fmt::Debug for Locs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut l = f.debug_list();
        for s in self.view().spans(0, self.len()) {
            match s {
                Span::Run(x, n) => {
                    l.entry(&format_args!("{x:?} x {n}"));
                }
                Span::List(v) => {
                    l.entries(v);
                }
                Span::Narrow(v) => {
                    l.entries(v.iter().map(|&x| widen(x)));
                }
            }
        }
        l.finish()
    }
}

impl std::fmt::Debug for LocsRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.to_locs().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::super::SpecialKind;
    use super::*;

    fn check(l: &Locs, model: &[ChunkLoc]) {
        assert_eq!(l.len(), model.len());
        assert_eq!(l.to_vec(), model);
        for (i, m) in model.iter().enumerate() {
            assert_eq!(l.get(i), Some(*m), "{i}");
        }
        assert_eq!(l.get(model.len()), None);
        let stored: Vec<u64> = model.iter().filter_map(|x| x.stored()).collect();
        assert_eq!(l.stored().collect::<Vec<_>>(), stored);
        for (a, b) in [
            (0, model.len()),
            (1, model.len() / 2),
            (model.len() / 3, model.len()),
        ] {
            let (a, b) = (a.min(b), b);
            assert_eq!(l.view().iter_range(a, b).collect::<Vec<_>>(), model[a..b]);
            let mut raw = Vec::new();
            l.view().write_entries(a, b, &mut raw);
            assert_eq!(raw, super::super::encode_entries(&model[a..b]));
        }
        let total: usize = l.view().spans(0, l.len()).map(|s| s.len()).sum();
        assert_eq!(total, model.len());
        assert_eq!(*l, *model);
    }

    /// Every edit gives the entries a `Vec` gives, and runs stay runs: a frame of millions of
    /// special chunks holds a few segments through appends, reads, updates and deletes.
    #[test]
    fn edits_match_a_vec_and_keep_runs_compact() {
        let z = ChunkLoc::Special(SpecialKind::Zeros);
        let nan = ChunkLoc::Special(SpecialKind::Nan);
        let mut l = Locs::repeated(z, 1000);
        let mut m = vec![z; 1000];
        assert_eq!(l.segments(), 1);
        check(&l, &m);
        l.push(ChunkLoc::Stored(5));
        m.push(ChunkLoc::Stored(5));
        l.push(z);
        m.push(z);
        check(&l, &m);
        assert_eq!(l.segments(), 2);
        l.set(500, ChunkLoc::Stored(9));
        m[500] = ChunkLoc::Stored(9);
        check(&l, &m);
        assert_eq!(l.segments(), 4);
        l.set(501, nan);
        m[501] = nan;
        l.set(499, ChunkLoc::Stored(11));
        m[499] = ChunkLoc::Stored(11);
        check(&l, &m);
        assert_eq!(l.segments(), 4);
        l.insert(10, nan);
        m.insert(10, nan);
        l.insert(20, z);
        m.insert(20, z);
        l.insert(0, ChunkLoc::Stored(1));
        m.insert(0, ChunkLoc::Stored(1));
        check(&l, &m);
        for i in [0, 5, 11, 500, 700, 995] {
            assert_eq!(l.remove(i), m.remove(i), "{i}");
            check(&l, &m);
        }
        l.map_stored(|v| v + 100);
        for x in m.iter_mut() {
            if let Some(v) = x.stored() {
                *x = ChunkLoc::Stored(v + 100);
            }
        }
        check(&l, &m);
        for n in [900, 501, 499, 12, 3, 0] {
            l.truncate(n);
            m.truncate(n);
            check(&l, &m);
        }
        assert!(l.is_empty());
        // Deleting all of a run.
        let mut l = Locs::repeated(nan, 100);
        l.push(ChunkLoc::Stored(3));
        for _ in 0..100 {
            assert_eq!(l.remove(0), nan);
        }
        check(&l, &[ChunkLoc::Stored(3)]);
        // A decoded index: uniform blocks become runs, mixed ones lists.
        let mut l = Locs::new();
        l.extend_from_slice(&[z; 2048]);
        l.extend_from_slice(&[z; 2048]);
        l.extend_from_slice(&[ChunkLoc::Stored(0), z]);
        l.extend_from_slice(&[nan; 2048]);
        assert_eq!(l.segments(), 3);
        let mut m = vec![z; 4096];
        m.extend([ChunkLoc::Stored(0), z]);
        m.extend([nan; 2048]);
        check(&l, &m);
        assert_eq!(l.view().uniform(0, 4096), Some(z));
        assert_eq!(l.view().uniform(4000, 4097), None);
        assert_eq!(l.view().uniform(4097, 4098), Some(z));
        assert!(l.view().range_eq(&LocsRef::from(&m), 0, m.len()));
        assert!(!l.view().range_eq(&LocsRef::from(&m), 0, m.len() + 1));
        assert_eq!(l.view().to_locs(), l);
        assert_eq!(l.prefix(4097).to_vec(), m[..4097]);
        // A huge run costs nothing to open, read, append to or delete from.
        let mut l = Locs::repeated(z, 200_000_000);
        l.push(ChunkLoc::Stored(0));
        l.set(100_000_000, nan);
        l.remove(5);
        l.insert(7, ChunkLoc::Stored(44));
        assert_eq!(l.len(), 200_000_001);
        assert_eq!(l.get(100_000_000), Some(nan));
        assert_eq!(l.get(99_999_999), Some(z));
        assert_eq!(l.stored().collect::<Vec<_>>(), [44, 0]);
        assert!(l.segments() <= 6, "{l:?}");
    }

    /// Lists hold 4-byte entries until an entry has no 4-byte form (a location at or above
    /// 2^32 - 16), then widen; either way the entries are those of a `Vec`.
    #[test]
    fn narrow_lists_widen_when_an_entry_needs_8_bytes() {
        let z = ChunkLoc::Special(SpecialKind::Zeros);
        let u = ChunkLoc::Special(SpecialKind::Uninit);
        let big = ChunkLoc::Stored(u64::from(NARROW_SPECIAL));
        let edge = ChunkLoc::Stored(u64::from(NARROW_SPECIAL) - 1);
        for (k, x) in [z, u, edge, ChunkLoc::Stored(0)].into_iter().enumerate() {
            assert_eq!(narrow(x).map(widen), Some(x), "{k}");
        }
        assert_eq!(narrow(big), None);
        let is_narrow = |l: &Locs| matches!(l.segs[..], [Seg::List(List::Narrow(_))]);
        let mut m: Vec<ChunkLoc> = (0..100u64).map(|i| ChunkLoc::Stored(i * 40)).collect();
        m[7] = u;
        m[8] = edge;
        let fresh = |m: &Vec<ChunkLoc>| Locs::from(m.clone());
        let mut l = fresh(&m);
        assert!(is_narrow(&l));
        check(&l, &m);
        // Block comparisons of lists: as slices, or entry by entry across forms.
        let mut other = fresh(&m);
        assert!(l.view().range_eq(&other.view(), 0, 100));
        other.set(60, ChunkLoc::Stored(1));
        assert!(l.view().range_eq(&other.view(), 0, 60));
        assert!(!l.view().range_eq(&other.view(), 50, 70));
        assert!(l.view().range_eq(&LocsRef::from(&m), 0, 100));
        let mut wide = m.clone();
        wide.push(big);
        assert!(fresh(&wide).view().range_eq(&l.view(), 0, 100));
        assert!(!fresh(&wide).view().range_eq(&other.view(), 0, 100));
        // Each edit that stores a wide entry widens the list.
        type Edit = fn(&mut Locs, &mut Vec<ChunkLoc>, ChunkLoc);
        let edits: [Edit; 4] = [
            |l, m, x| {
                l.push(x);
                m.push(x)
            },
            |l, m, x| {
                l.set(3, x);
                m[3] = x
            },
            |l, m, x| {
                l.insert(5, x);
                m.insert(5, x)
            },
            |l, m, x| {
                let nan = ChunkLoc::Special(SpecialKind::Nan);
                l.extend_from_slice(&[x, nan]);
                m.extend([x, nan])
            },
        ];
        for e in edits {
            let (mut l2, mut m2) = (fresh(&m), m.clone());
            e(&mut l2, &mut m2, edge);
            assert!(is_narrow(&l2));
            check(&l2, &m2);
            e(&mut l2, &mut m2, big);
            assert!(!is_narrow(&l2));
            check(&l2, &m2);
        }
        // A shift past the 4-byte range widens midway, every entry shifted once.
        let shift = u64::from(NARROW_SPECIAL) - 50 * 40;
        l.map_stored(|v| v + shift);
        for x in m.iter_mut() {
            if let Some(v) = x.stored() {
                *x = ChunkLoc::Stored(v + shift);
            }
        }
        assert!(!is_narrow(&l));
        check(&l, &m);
        // Wide and narrow lists merge around a removed run.
        let mut l = Locs::from(vec![big, ChunkLoc::Stored(1)]);
        l.push_run(z, 100);
        l.extend_from_slice(&[ChunkLoc::Stored(2), u]);
        let mut m = vec![big, ChunkLoc::Stored(1)];
        m.extend([z; 100]);
        m.extend([ChunkLoc::Stored(2), u]);
        check(&l, &m);
        for _ in 0..100 {
            l.remove(2);
            m.remove(2);
        }
        check(&l, &m);
        assert_eq!(l.segments(), 1);
    }
}
