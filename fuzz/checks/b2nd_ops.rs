//! A script of b2nd array operations decoded from the input, applied through the typed API
//! (`b2frame::b2nd::Array<T>`, with `RawArray` for resizes at a position) to an array of `u8`,
//! `i32` or `f64` items in memory (plain chunks or a cframe), in a cframe file or in an sframe
//! directory, and to a model (the shape and the items in C order). Properties:
//!
//! - after every operation, failed or not, the array has the model's shape and reads whole to
//!   exactly the model's items (bytes compared, so NaNs of any payload count);
//! - every read that succeeds (slice, orthogonal selection, sparse items, views) gives the
//!   model's items;
//! - an operation succeeds exactly when its arguments are valid: slices inside the shape
//!   (`start <= stop <= shape`) with the slice's number of values; orthogonal lists of indices
//!   inside the shape; sparse indices below the number of items; resizes, inserts and deletes
//!   that change the shape at the end of an axis, or away from it by whole chunks at a chunk
//!   boundary (c-blosc2's rule), whose removed items lie inside the array (c-blosc2 takes
//!   more, see `regressions/b2nd_ops`); inserts of a whole number of slabs. Items a resize adds are zeros, except
//!   those an axis grows into at its end inside existing chunks: those read what the padding
//!   held (as in c-blosc2 3.3.5), and the model takes them from the array. Otherwise it fails with the documented error (`InvalidParam`,
//!   `InvalidIndex` for orthogonal indices) and changes nothing;
//! - views (`squeeze`, `expand_dims`) read the model and write into the array; a view made
//!   before a successful shape change fails (`InvalidParam`) and writes nothing;
//! - `to_cframe` and `from_cframe` succeed and give the same array (shape, chunk and block
//!   shapes, items); a file or sframe reopens to the same array, and `save` of an in-memory one
//!   too.
//!
//! Input: 3 header bytes, 3 bytes per dimension, then ops (see [`run_stats`]). Arrays stay
//! within [`MAX_ITEMS`] items (ops that would grow past it are skipped).
//!
//! Shared by the fuzz target and by tests/fuzz_regressions.rs.
use b2frame::b2nd::{Array, Element};
use b2frame::chunk::CParams;
use b2frame::filters;
use b2frame::schunk::NewStorage;
use b2frame::Error;
use std::fmt::Debug;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use super::shared::CODECS;

/// The most items an array of the script may hold (64 KiB of `f64`).
pub const MAX_ITEMS: usize = 8192;
/// The most ops one input runs.
const MAX_OPS: usize = 48;
/// The largest extent along one axis.
const MAX_EXTENT: usize = 64;
/// Number of op kinds (the op byte modulo this).
pub const NOPS: usize = 12;
/// Op names, for messages and the tests' coverage of the seeds.
pub const OP_NAMES: [&str; NOPS] = [
    "set_slice",
    "get_slice",
    "resize",
    "insert",
    "append",
    "delete",
    "get_orthogonal",
    "set_orthogonal",
    "views",
    "cframe",
    "reopen",
    "sparse",
];

/// What one run did: per op kind, how many calls succeeded and how many failed as expected.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub ok: [u32; NOPS],
    pub err: [u32; NOPS],
}

/// Item types of the script.
pub trait Val: Element + Debug {
    fn make(x: u64) -> Self;
}
impl Val for u8 {
    fn make(x: u64) -> u8 {
        x as u8
    }
}
impl Val for i32 {
    fn make(x: u64) -> i32 {
        x as i32
    }
}
impl Val for f64 {
    fn make(x: u64) -> f64 {
        if x & 3 == 3 {
            f64::from_bits(x.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        } else {
            (x % 2000) as f64 * 0.25 - 100.0
        }
    }
}

fn bytes<T: Element>(v: &[T]) -> Vec<u8> {
    let mut out = Vec::new();
    T::put(v, &mut out);
    out
}

/// `n` values of the pattern `kind`, `base`.
fn pattern<T: Val>(kind: u8, base: u8, n: usize) -> Vec<T> {
    let b = u64::from(base);
    let mut x = b.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
    (0..n as u64)
        .map(|k| {
            T::make(match kind % 4 {
                0 => b,
                1 => b + k,
                2 => {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x
                }
                _ => k.wrapping_mul(b | 1).wrapping_mul(0x1_0001),
            })
        })
        .collect()
}

fn nitems(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Calls `f` with every index of `shape` in C order.
fn for_each(shape: &[usize], mut f: impl FnMut(&[usize])) {
    let n = nitems(shape);
    let mut idx = vec![0usize; shape.len()];
    for k in 0..n {
        let mut r = k;
        for d in (0..shape.len()).rev() {
            idx[d] = r % shape[d];
            r /= shape[d];
        }
        f(&idx);
    }
}

/// The array as the script expects it.
#[derive(Clone, Debug)]
struct Model<T> {
    shape: Vec<usize>,
    items: Vec<T>,
}

impl<T: Val> Model<T> {
    fn pos(&self, idx: &[usize]) -> usize {
        idx.iter()
            .zip(&self.shape)
            .fold(0, |acc, (&i, &s)| acc * s + i)
    }

    fn at(&self, idx: &[usize]) -> T {
        self.items[self.pos(idx)]
    }

    fn slice(&self, r: &[Range<usize>]) -> Vec<T> {
        let shape: Vec<usize> = r.iter().map(|r| r.end - r.start).collect();
        let mut out = Vec::with_capacity(nitems(&shape));
        let mut full = vec![0; r.len()];
        for_each(&shape, |j| {
            for d in 0..j.len() {
                full[d] = r[d].start + j[d];
            }
            out.push(self.at(&full));
        });
        out
    }

    fn set_slice(&mut self, r: &[Range<usize>], vals: &[T]) {
        let shape: Vec<usize> = r.iter().map(|r| r.end - r.start).collect();
        let mut full = vec![0; r.len()];
        let mut k = 0;
        for_each(&shape, |j| {
            for d in 0..j.len() {
                full[d] = r[d].start + j[d];
            }
            let p = self.pos(&full);
            self.items[p] = vals[k];
            k += 1;
        });
    }

    /// Resized as `RawArray::resize` does it: per axis, items added or removed at `start`
    /// (default: the end). Added items are zeros, except where an axis grows at its end into
    /// the padding of chunks that exist already: those items are what the padding held, and
    /// the second vector marks them (c-blosc2 3.3.5 does the same: a shrink leaves the items
    /// it cut off in the last chunk, `full` fills the padding with its value).
    fn resized(
        &self,
        new: &[usize],
        start: Option<&[usize]>,
        chunk: &[usize],
    ) -> (Model<T>, Vec<bool>) {
        let mut items = Vec::with_capacity(nitems(new));
        let mut unknown = Vec::with_capacity(nitems(new));
        let mut old = vec![0; new.len()];
        for_each(new, |j| {
            let (mut inside, mut fresh, mut padding) = (true, false, false);
            for d in 0..j.len() {
                let (o, n) = (self.shape[d], new[d]);
                let s = start.map_or(o.min(n), |s| s[d]);
                old[d] = if n >= o {
                    if j[d] < s {
                        j[d]
                    } else if j[d] < s + (n - o) {
                        inside = false;
                        if s == o && j[d] < o.div_ceil(chunk[d]) * chunk[d] {
                            padding = true;
                        } else {
                            fresh = true;
                        }
                        0
                    } else {
                        j[d] - (n - o)
                    }
                } else if j[d] < s {
                    j[d]
                } else {
                    j[d] + (o - n)
                };
            }
            items.push(if inside { self.at(&old) } else { T::default() });
            unknown.push(!inside && padding && !fresh);
        });
        (
            Model {
                shape: new.to_vec(),
                items,
            },
            unknown,
        )
    }

    fn inserted(&self, axis: usize, at: usize, count: usize, vals: &[T]) -> Model<T> {
        let mut shape = self.shape.clone();
        shape[axis] += count;
        let mut bshape = self.shape.clone();
        bshape[axis] = count;
        let buf = Model {
            shape: bshape,
            items: vals.to_vec(),
        };
        let mut items = Vec::with_capacity(nitems(&shape));
        let mut o = vec![0; shape.len()];
        for_each(&shape, |j| {
            o.copy_from_slice(j);
            items.push(if j[axis] < at {
                self.at(&o)
            } else if j[axis] < at + count {
                o[axis] -= at;
                buf.at(&o)
            } else {
                o[axis] -= count;
                self.at(&o)
            });
        });
        Model { shape, items }
    }

    fn deleted(&self, axis: usize, at: usize, len: usize) -> Model<T> {
        let mut shape = self.shape.clone();
        shape[axis] -= len;
        let mut items = Vec::with_capacity(nitems(&shape));
        let mut o = vec![0; shape.len()];
        for_each(&shape, |j| {
            o.copy_from_slice(j);
            if o[axis] >= at {
                o[axis] += len;
            }
            items.push(self.at(&o));
        });
        Model { shape, items }
    }
}

/// Reads the input's bytes (zeros past its end).
struct Input<'a> {
    d: &'a [u8],
    at: usize,
}

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.d.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
    fn done(&self) -> bool {
        self.at >= self.d.len()
    }
    /// A region over `shape`: mostly inside, sometimes past the end, and (flag) possibly
    /// reversed.
    fn region(&mut self, shape: &[usize], raw: bool) -> Vec<Range<usize>> {
        shape
            .iter()
            .map(|&s| {
                let (a, b) = (
                    self.byte() as usize % (s + 2),
                    self.byte() as usize % (s + 2),
                );
                if raw {
                    a..b
                } else {
                    a.min(b)..a.max(b)
                }
            })
            .collect()
    }
    /// A position along an axis of extent `s` and chunk extent `c`: high bit set, a chunk
    /// boundary (possibly past the end), else any position up to `s + 1`.
    fn position(&mut self, s: usize, c: usize) -> usize {
        let b = self.byte() as usize;
        if b & 0x80 != 0 {
            ((b & 0x7f) % (s / c + 2)) * c
        } else {
            b % (s + 2)
        }
    }
    /// A count of items: high bit set, whole chunks (0 to 3), else 0 to 15.
    fn count(&mut self, c: usize) -> usize {
        let b = self.byte() as usize;
        if b & 0x80 != 0 {
            (b & 3) * c
        } else {
            b % 16
        }
    }
    /// An index along an axis of extent `s`: high bit set, just past the end.
    fn index(&mut self, s: usize) -> usize {
        let b = self.byte() as usize;
        if b & 0x80 != 0 || s == 0 {
            s + (b & 1)
        } else {
            b % s
        }
    }
}

/// A per-process scratch directory, new for each run (the tests call `run` from parallel
/// threads) and removed when the run ends unless it panicked.
struct Scratch {
    dir: PathBuf,
    saves: usize,
}

impl Scratch {
    fn new() -> Scratch {
        static RUNS: AtomicU64 = AtomicU64::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("b2nd-ops-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch directory");
        Scratch { dir, saves: 0 }
    }
    fn next(&mut self) -> PathBuf {
        self.saves += 1;
        self.dir.join(format!("save-{}.b2nd", self.saves))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Runs one fuzz input; panics on a violated property.
pub fn run(data: &[u8]) {
    run_stats(data);
}

/// Runs one fuzz input and says which ops succeeded and failed.
///
/// Header: `h0` (ndim `1 + h0 % 3`, item type `h0 / 3 % 3`: u8, i32, f64; storage `h0 / 9 % 4`:
/// plain, in-memory cframe, cframe file, sframe), `h1` (codec `h1 % 5` of [`CODECS`], filter
/// `h1 / 5 % 4`: none, shuffle, bitshuffle, delta; clevel `h1 / 20 % 10`), `h2` (first items:
/// `h2 % 3` zeros, one value, a pattern; pattern kind `h2 / 3`), then per dimension the extent,
/// the chunk extent (1 to 8) and the block extent (1 to the chunk's). Then ops: an op byte
/// (`% NOPS` the kind, the rest flags) and the op's bytes.
pub fn run_stats(data: &[u8]) -> Stats {
    let mut stats = Stats::default();
    if data.len() < 3 {
        return stats;
    }
    let h0 = data[0];
    match h0 / 3 % 3 {
        0 => Script::<u8>::go(data, &mut stats),
        1 => Script::<i32>::go(data, &mut stats),
        _ => Script::<f64>::go(data, &mut stats),
    }
    stats
}

struct Script<'a, T: Val> {
    arr: Array<T>,
    model: Model<T>,
    chunk: Vec<usize>,
    block: Vec<usize>,
    /// Where the array is stored (file or sframe), for reopening.
    path: Option<PathBuf>,
    /// A squeeze view and whether a shape change succeeded (it must then be stale) or was
    /// attempted (it may be) since it was made.
    held: Option<(Array<T>, bool, bool)>,
    scratch: Scratch,
    input: Input<'a>,
    step: usize,
}

/// A tiny in-memory array to stand in while the real one is moved out.
fn placeholder<T: Val>() -> Array<T> {
    Array::<T>::create(NewStorage::Plain, &[1], &[1], &[1], &CParams::default()).expect("tiny")
}

fn squeezed(shape: &[usize]) -> Vec<usize> {
    shape.iter().copied().filter(|&s| s != 1).collect()
}

impl<'a, T: Val> Script<'a, T> {
    fn go(data: &'a [u8], stats: &mut Stats) {
        let mut input = Input { d: data, at: 0 };
        let (h0, h1, h2) = (input.byte(), input.byte(), input.byte());
        let ndim = 1 + (h0 % 3) as usize;
        let limit = [48, 16, 8][ndim - 1];
        let (mut shape, mut chunk, mut block) = (vec![], vec![], vec![]);
        for _ in 0..ndim {
            shape.push(input.byte() as usize % (limit + 1));
            let c = 1 + input.byte() as usize % 8;
            chunk.push(c);
            block.push(1 + input.byte() as usize % c);
        }
        let cp = CParams {
            compcode: CODECS[h1 as usize % 5],
            clevel: h1 / 20 % 10,
            filters: [
                0,
                0,
                0,
                0,
                0,
                [
                    filters::NOFILTER,
                    filters::SHUFFLE,
                    filters::BITSHUFFLE,
                    filters::DELTA,
                ][(h1 / 5 % 4) as usize],
            ],
            nthreads: 1,
            ..CParams::default()
        };
        let mut scratch = Scratch::new();
        let kind = h0 / 9 % 4;
        let path = (kind >= 2).then(|| scratch.next());
        let storage = match (kind, &path) {
            (0, _) => NewStorage::Plain,
            (1, _) => NewStorage::Memory,
            (2, Some(p)) => NewStorage::File(p),
            (_, Some(p)) => NewStorage::Sparse(p),
            _ => unreachable!(),
        };
        let n = nitems(&shape);
        let value: T = pattern(h2 / 3, h2, 1)[0];
        let first: Vec<T> = match h2 % 3 {
            0 => vec![T::default(); n],
            1 => vec![value; n],
            _ => pattern(h2 / 3, h2, n),
        };
        let made = match h2 % 3 {
            0 => Array::<T>::create(storage, &shape, &chunk, &block, &cp),
            1 => Array::<T>::full(storage, &shape, &chunk, &block, &cp, value),
            _ => Array::<T>::from_slice(storage, &shape, &chunk, &block, &cp, &first),
        };
        let arr = made.unwrap_or_else(|e| {
            panic!("creating {shape:?} / {chunk:?} / {block:?} with {cp:?}: {e:?}")
        });
        let mut s = Script {
            arr,
            model: Model {
                shape,
                items: first,
            },
            chunk,
            block,
            path,
            held: None,
            scratch,
            input,
            step: 0,
        };
        s.check_whole("create");
        while !s.input.done() && s.step < MAX_OPS {
            s.step += 1;
            let op = s.input.byte();
            let kind = op as usize % NOPS;
            let flags = op as usize / NOPS;
            if let Some(ok) = s.op(kind, flags) {
                if ok {
                    stats.ok[kind] += 1;
                } else {
                    stats.err[kind] += 1;
                }
            }
            s.check_whole(OP_NAMES[kind]);
        }
        // Arrays and views are closed before the scratch directory goes.
        drop(s.held.take());
    }

    fn ctx(&self, what: &str) -> String {
        format!(
            "step {} ({what}), shape {:?}, chunks {:?}, blocks {:?}",
            self.step, self.model.shape, self.chunk, self.block
        )
    }

    /// The array, and the held view, against the model.
    fn check_whole(&self, what: &str) {
        assert_eq!(self.arr.shape(), self.model.shape, "{}", self.ctx(what));
        let v = self
            .arr
            .to_vec()
            .unwrap_or_else(|e| panic!("{}: to_vec: {e:?}", self.ctx(what)));
        assert!(
            bytes(&v) == bytes(&self.model.items),
            "{}: array {v:?}, model {:?}",
            self.ctx(what),
            self.model.items
        );
        if let Some((view, must_be_stale, may_be_stale)) = &self.held {
            match view.to_vec() {
                Ok(v) => {
                    assert!(!must_be_stale, "{}: a stale view reads", self.ctx(what));
                    assert_eq!(view.shape(), squeezed(&self.model.shape));
                    assert!(
                        bytes(&v) == bytes(&self.model.items),
                        "{}: view reads {v:?}",
                        self.ctx(what)
                    );
                }
                Err(e) => {
                    assert!(*may_be_stale, "{}: view read: {e:?}", self.ctx(what));
                    assert_eq!(e, Error::InvalidParam, "{}", self.ctx(what));
                }
            }
        }
    }

    /// A shape change was attempted (`ok`: it succeeded).
    fn shape_changed(&mut self, ok: bool) {
        if let Some((_, must, may)) = &mut self.held {
            *must |= ok;
            *may = true;
        }
    }

    /// Asserts that a call succeeds exactly when `valid` and, when not, with `want`.
    fn expect<R: Debug>(&self, what: &str, r: &Result<R, Error>, valid: bool, want: Error) {
        match r {
            Ok(_) => assert!(valid, "{}: invalid arguments accepted", self.ctx(what)),
            Err(e) => {
                assert!(!valid, "{}: valid call failed: {e:?}", self.ctx(what));
                assert_eq!(*e, want, "{}", self.ctx(what));
            }
        }
    }

    /// Runs op `kind`; `None` when skipped, else whether it succeeded.
    fn op(&mut self, kind: usize, flags: usize) -> Option<bool> {
        let ndim = self.model.shape.len();
        let shape = self.model.shape.clone();
        match kind {
            0 => {
                let r = self.input.region(&shape, flags & 1 != 0);
                let (pk, pb) = (self.input.byte(), self.input.byte());
                let inside = r
                    .iter()
                    .zip(&shape)
                    .all(|(r, &s)| r.start <= r.end && r.end <= s);
                let n = r
                    .iter()
                    .map(|r| r.end.saturating_sub(r.start))
                    .product::<usize>();
                let extra = usize::from(flags & 2 != 0);
                let vals: Vec<T> = pattern(pk, pb, n + extra);
                let res = self.arr.set_slice(&r, &vals);
                self.expect("set_slice", &res, inside && extra == 0, Error::InvalidParam);
                if res.is_ok() {
                    self.model.set_slice(&r, &vals);
                }
                Some(res.is_ok())
            }
            1 => {
                let r = self.input.region(&shape, flags & 1 != 0);
                let inside = r
                    .iter()
                    .zip(&shape)
                    .all(|(r, &s)| r.start <= r.end && r.end <= s);
                let res = self.arr.slice(&r);
                self.expect("get_slice", &res, inside, Error::InvalidParam);
                if let Ok(v) = &res {
                    let want = self.model.slice(&r);
                    assert!(
                        bytes(v) == bytes(&want),
                        "{}: slice {r:?} reads {v:?}, model {want:?}",
                        self.ctx("get_slice")
                    );
                }
                Some(res.is_ok())
            }
            2 => {
                let mut new = Vec::with_capacity(ndim);
                let chunk = self.chunk.clone();
                for (&o, &c) in shape.iter().zip(&chunk) {
                    let b = self.input.byte() as usize;
                    new.push(if b & 0x80 != 0 {
                        let k = (b & 0x3f) % 3 * c;
                        if b & 0x40 != 0 {
                            o.saturating_sub(k)
                        } else {
                            o + k
                        }
                    } else {
                        (b & 0x7f) % (MAX_EXTENT + 1)
                    });
                }
                let start: Option<Vec<usize>> = (flags & 1 != 0).then(|| {
                    (0..ndim)
                        .map(|d| self.input.position(shape[d], self.chunk[d]))
                        .collect()
                });
                if nitems(&new) > MAX_ITEMS || new.iter().any(|&e| e > MAX_EXTENT) {
                    return None;
                }
                let valid = start.as_ref().is_none_or(|st| {
                    (0..ndim).all(|d| {
                        let (o, n, s, c) = (shape[d], new[d], st[d], self.chunk[d]);
                        let away = (n > o && s != o) || (n < o && s != n);
                        s <= o
                            && (n >= o || s <= n)
                            && (!away || (s.is_multiple_of(c) && n.abs_diff(o).is_multiple_of(c)))
                    })
                });
                let res = match &start {
                    None => self.arr.resize(&new),
                    Some(st) => {
                        let arr = std::mem::replace(&mut self.arr, placeholder());
                        let mut raw = arr.into_raw();
                        let r = raw.resize(&new, Some(st));
                        self.arr = Array::from_raw(raw).expect("same typesize");
                        r
                    }
                };
                self.expect(
                    &format!("resize to {new:?} at {start:?}"),
                    &res,
                    valid,
                    Error::InvalidParam,
                );
                self.shape_changed(res.is_ok());
                if res.is_ok() {
                    let (m, unknown) = self.model.resized(&new, start.as_deref(), &self.chunk);
                    self.model = m;
                    if unknown.contains(&true) {
                        let v = self
                            .arr
                            .to_vec()
                            .unwrap_or_else(|e| panic!("{}: to_vec: {e:?}", self.ctx("resize")));
                        for (k, _) in unknown.iter().enumerate().filter(|(_, &u)| u) {
                            self.model.items[k] = v[k];
                        }
                    }
                }
                Some(res.is_ok())
            }
            3 | 4 => {
                let axis = self.input.byte() as usize % ndim;
                let c = self.chunk[axis];
                let at = if kind == 3 {
                    self.input.position(shape[axis], c)
                } else {
                    shape[axis]
                };
                let count = self.input.count(c);
                let (pk, pb) = (self.input.byte(), self.input.byte());
                let slab: usize = (0..ndim).filter(|&d| d != axis).map(|d| shape[d]).product();
                let extra = usize::from(flags & 1 != 0);
                let nvals = slab * count + extra;
                if nitems(&shape) + nvals > MAX_ITEMS || shape[axis] + count > MAX_EXTENT {
                    return None;
                }
                let vals: Vec<T> = pattern(pk, pb, nvals);
                // The library sees a number of items: whole slabs or not.
                let count = nvals.checked_div(slab).unwrap_or(0);
                let valid = slab > 0
                    && nvals.is_multiple_of(slab)
                    && at <= shape[axis]
                    && (count == 0
                        || at == shape[axis]
                        || (at.is_multiple_of(c) && count.is_multiple_of(c)));
                let name = if kind == 3 { "insert" } else { "append" };
                let res = if kind == 3 {
                    self.arr.insert(&vals, axis, at)
                } else {
                    self.arr.append(&vals, axis)
                };
                self.expect(
                    &format!("{name} {count} at {at} of axis {axis}"),
                    &res,
                    valid,
                    Error::InvalidParam,
                );
                self.shape_changed(res.is_ok());
                if res.is_ok() {
                    self.model = self.model.inserted(axis, at, count, &vals);
                }
                Some(res.is_ok())
            }
            5 => {
                let axis = self.input.byte() as usize % ndim;
                let c = self.chunk[axis];
                let at = self.input.position(shape[axis], c);
                let len = self.input.count(c);
                let s = shape[axis];
                let valid = at + len <= s
                    && (len == 0
                        || at + len == s
                        || (at.is_multiple_of(c) && len.is_multiple_of(c)));
                let res = self.arr.delete(axis, at, len);
                self.expect(
                    &format!("delete {len} at {at} of axis {axis}"),
                    &res,
                    valid,
                    Error::InvalidParam,
                );
                self.shape_changed(res.is_ok());
                if res.is_ok() {
                    self.model = self.model.deleted(axis, at, len);
                }
                Some(res.is_ok())
            }
            6 | 7 => {
                let mut lists: Vec<Vec<usize>> = Vec::with_capacity(ndim);
                for &s in &shape {
                    let n = self.input.byte() as usize % 4;
                    let mut l: Vec<usize> = (0..3).map(|_| self.input.index(s)).collect();
                    l.truncate(n);
                    if kind == 7 {
                        // Distinct indices: which of two writes of one item wins is not
                        // specified.
                        let mut seen = Vec::new();
                        l.retain(|x| {
                            let new = !seen.contains(x);
                            seen.push(*x);
                            new
                        });
                    }
                    lists.push(l);
                }
                let inside = lists
                    .iter()
                    .zip(&shape)
                    .all(|(l, &s)| l.iter().all(|&x| x < s));
                let refs: Vec<&[usize]> = lists.iter().map(|l| &l[..]).collect();
                let lshape: Vec<usize> = lists.iter().map(|l| l.len()).collect();
                let mut want = Vec::new();
                let mut full = vec![0; ndim];
                if inside {
                    for_each(&lshape, |j| {
                        for d in 0..ndim {
                            full[d] = lists[d][j[d]];
                        }
                        want.push(full.clone());
                    });
                }
                if kind == 6 {
                    let res = self.arr.orthogonal(&refs);
                    self.expect("get_orthogonal", &res, inside, Error::InvalidIndex);
                    if let Ok(v) = &res {
                        let m: Vec<T> = want.iter().map(|i| self.model.at(i)).collect();
                        assert!(
                            bytes(v) == bytes(&m),
                            "{}: {lists:?} reads {v:?}, model {m:?}",
                            self.ctx("get_orthogonal")
                        );
                    }
                    Some(res.is_ok())
                } else {
                    let (pk, pb) = (self.input.byte(), self.input.byte());
                    let vals: Vec<T> = pattern(pk, pb, nitems(&lshape));
                    let res = self.arr.set_orthogonal(&refs, &vals);
                    self.expect("set_orthogonal", &res, inside, Error::InvalidIndex);
                    if res.is_ok() {
                        for (i, v) in want.iter().zip(&vals) {
                            let p = self.model.pos(i);
                            self.model.items[p] = *v;
                        }
                    }
                    Some(res.is_ok())
                }
            }
            8 => self.views(flags),
            9 => {
                let cf = self
                    .arr
                    .to_cframe()
                    .unwrap_or_else(|e| panic!("{}: to_cframe: {e:?}", self.ctx("cframe")));
                let b = Array::<T>::from_cframe(&cf)
                    .unwrap_or_else(|e| panic!("{}: from_cframe: {e:?}", self.ctx("cframe")));
                assert_eq!(
                    (b.chunkshape(), b.blockshape()),
                    (self.chunk.clone(), self.block.clone())
                );
                if flags & 1 != 0 {
                    self.held = None;
                    self.arr = b;
                    self.path = None;
                } else {
                    let v = b.to_vec().expect("reads");
                    assert!(
                        bytes(&v) == bytes(&self.model.items),
                        "{}",
                        self.ctx("from_cframe")
                    );
                    assert_eq!(b.shape(), self.model.shape);
                }
                Some(true)
            }
            10 => {
                self.held = None;
                match self.path.clone() {
                    Some(p) => {
                        let old = std::mem::replace(&mut self.arr, placeholder());
                        drop(old);
                        self.arr = Array::<T>::open(&p).unwrap_or_else(|e| {
                            panic!("{}: reopen {}: {e:?}", self.ctx("reopen"), p.display())
                        });
                    }
                    None => {
                        let p = self.scratch.next();
                        self.arr
                            .save(&p)
                            .unwrap_or_else(|e| panic!("{}: save: {e:?}", self.ctx("save")));
                        let b = Array::<T>::open(&p)
                            .unwrap_or_else(|e| panic!("{}: open saved: {e:?}", self.ctx("save")));
                        if flags & 1 != 0 {
                            self.arr = b;
                            self.path = Some(p);
                        } else {
                            let v = b.to_vec().expect("reads");
                            assert!(
                                bytes(&v) == bytes(&self.model.items),
                                "{}",
                                self.ctx("saved")
                            );
                        }
                    }
                }
                assert_eq!(
                    (self.arr.chunkshape(), self.arr.blockshape()),
                    (self.chunk.clone(), self.block.clone())
                );
                Some(true)
            }
            _ => {
                let n = self.model.items.len();
                let coords: Vec<usize> = (0..1 + flags % 4).map(|_| self.input.index(n)).collect();
                let inside = coords.iter().all(|&k| k < n);
                let res = self.arr.sparse(&coords);
                self.expect("sparse", &res, inside, Error::InvalidParam);
                if let Ok(v) = &res {
                    let m: Vec<T> = coords.iter().map(|&k| self.model.items[k]).collect();
                    assert!(
                        bytes(v) == bytes(&m),
                        "{}: sparse {coords:?}",
                        self.ctx("sparse")
                    );
                }
                Some(res.is_ok())
            }
        }
    }

    /// Views: squeeze and expand_dims read the model; flags: write through one, keep the
    /// squeeze view (its reads are checked after every later op, see `check_whole`), write
    /// through the held view (it must fail once stale).
    fn views(&mut self, flags: usize) -> Option<bool> {
        let shape = self.model.shape.clone();
        let ndim = shape.len();
        let axis = self.input.byte() as usize % (ndim + 2);
        let sq = self
            .arr
            .squeeze()
            .unwrap_or_else(|e| panic!("{}: squeeze: {e:?}", self.ctx("views")));
        assert_eq!(sq.shape(), squeezed(&shape), "{}", self.ctx("squeeze"));
        let v = sq
            .to_vec()
            .unwrap_or_else(|e| panic!("{}: squeeze read: {e:?}", self.ctx("views")));
        assert!(
            bytes(&v) == bytes(&self.model.items),
            "{}: squeeze reads {v:?}",
            self.ctx("views")
        );
        let ex = self.arr.expand_dims(&[axis]);
        self.expect("expand_dims", &ex, axis <= ndim, Error::InvalidParam);
        let mut eshape = shape.clone();
        if let Ok(ex) = &ex {
            eshape.insert(axis, 1);
            assert_eq!(ex.shape(), eshape, "{}", self.ctx("expand_dims"));
            let v = ex
                .to_vec()
                .unwrap_or_else(|e| panic!("{}: expand_dims read: {e:?}", self.ctx("views")));
            assert!(
                bytes(&v) == bytes(&self.model.items),
                "{}: expand_dims reads {v:?}",
                self.ctx("views")
            );
        }
        if flags & 1 != 0 {
            // A write through a view: its region maps onto the array's with 0..1 for the
            // dimensions it drops or adds (C order is the same).
            let through_ex = flags & 4 != 0 && ex.is_ok();
            let vshape = if through_ex {
                eshape.clone()
            } else {
                squeezed(&shape)
            };
            let r = self.input.region(&vshape, false);
            let (pk, pb) = (self.input.byte(), self.input.byte());
            let inside = r.iter().zip(&vshape).all(|(r, &s)| r.end <= s);
            let n = r.iter().map(|r| r.end - r.start).product::<usize>();
            let vals: Vec<T> = pattern(pk, pb, n);
            let res = if through_ex {
                ex.as_ref().expect("checked").set_slice(&r, &vals)
            } else {
                sq.set_slice(&r, &vals)
            };
            self.expect("view set_slice", &res, inside, Error::InvalidParam);
            // An empty range along the added axis writes nothing.
            if res.is_ok() && n > 0 {
                let full: Vec<Range<usize>> = if through_ex {
                    r.iter()
                        .enumerate()
                        .filter(|&(d, _)| d != axis)
                        .map(|(_, r)| r.clone())
                        .collect()
                } else {
                    let mut it = r.iter();
                    shape
                        .iter()
                        .map(|&s| {
                            if s == 1 {
                                0..1
                            } else {
                                it.next().expect("dims").clone()
                            }
                        })
                        .collect()
                };
                self.model.set_slice(&full, &vals);
            }
        }
        if flags & 2 != 0 {
            if let Some((old, must_be_stale, may_be_stale)) = self.held.take() {
                // A write through the older view: refused once stale, else it lands.
                let r: Vec<Range<usize>> = old.shape().iter().map(|&s| 0..s.min(1)).collect();
                let n = r.iter().map(|r| r.end - r.start).product::<usize>();
                let vals: Vec<T> = pattern(3, flags as u8, n);
                let res = old.set_slice(&r, &vals);
                if must_be_stale || (may_be_stale && res.is_err()) {
                    assert_eq!(
                        res,
                        Err(Error::InvalidParam),
                        "{}: stale view writes",
                        self.ctx("views")
                    );
                } else {
                    res.unwrap_or_else(|e| panic!("{}: view write: {e:?}", self.ctx("views")));
                    let full: Vec<Range<usize>> =
                        self.model.shape.iter().map(|&s| 0..s.min(1)).collect();
                    self.model.set_slice(&full, &vals);
                }
            }
            self.held = Some((sq, false, false));
        }
        Some(true)
    }
}
