//! A cframe file b2frame mutates is never larger than the one c-blosc2 3.3.5 leaves for the
//! same calls (docs/mutation.md#update): the same histories run on a file of ours and on a
//! copy of it opened by the reference (dlopen'ed, tests/common/reference.rs), and after every
//! call the two files are compared. b2frame keeps c-blosc2's layout (an update moves the data
//! after the chunk by the size difference), so the files are in fact byte-identical but for
//! the fingerprint; the size is checked first, as the property users see.
//!
//! The histories: python-blosc2's bounded disk cache of a remote array (`fill_special`
//! UNINIT, chunks fetched into their slots, the least recently fetched evicted back to UNINIT,
//! the cache reopened), and loops of updates, inserts, deletes and appends over frames whose
//! data after most chunks is far longer than a chunk.

use crate::common;
use crate::reference::{api, check_against_reference, Api, AppendChunk, DeleteChunk, PosChunk};

use b2frame::capi::types::blosc2_schunk;
use b2frame::chunk::{self, CParams, DParams};
use b2frame::frame::offsets::SpecialKind;
use b2frame::frame::Frame;
use common::{data_kind, Rng};
use std::ffi::{c_void, CString};
use std::path::{Path, PathBuf};

/// The reference's chunk mutations.
struct Calls {
    append: AppendChunk,
    insert: PosChunk,
    update: PosChunk,
    delete: DeleteChunk,
}

fn calls() -> Calls {
    let r = common::reference::reference();
    // SAFETY: each symbol has exactly the C signature declared by blosc2.h 3.3.5.
    unsafe {
        Calls {
            append: std::mem::transmute::<*mut c_void, AppendChunk>(
                r.sym("blosc2_schunk_append_chunk"),
            ),
            insert: std::mem::transmute::<*mut c_void, PosChunk>(
                r.sym("blosc2_schunk_insert_chunk"),
            ),
            update: std::mem::transmute::<*mut c_void, PosChunk>(
                r.sym("blosc2_schunk_update_chunk"),
            ),
            delete: std::mem::transmute::<*mut c_void, DeleteChunk>(
                r.sym("blosc2_schunk_delete_chunk"),
            ),
        }
    }
}

/// Our file and the reference's copy of it, each open in its library.
struct Pair<'a> {
    api: &'a Api,
    ours: Frame,
    ours_path: PathBuf,
    theirs: *mut blosc2_schunk,
    theirs_path: PathBuf,
    /// Calls compared so far.
    steps: usize,
}

impl<'a> Pair<'a> {
    /// The frame `f` (a file at `path`) and a copy of it at `path` + `.ref`, opened by c-blosc2.
    fn new(api: &'a Api, f: Frame, path: &Path) -> Pair<'a> {
        drop(f);
        let theirs_path = path.with_extension("ref.b2frame");
        std::fs::copy(path, &theirs_path).unwrap();
        let mut p = Pair {
            api,
            ours: Frame::open(path).unwrap(),
            ours_path: path.to_path_buf(),
            theirs: std::ptr::null_mut(),
            theirs_path,
            steps: 0,
        };
        p.theirs = p.open_theirs();
        p
    }

    fn open_theirs(&self) -> *mut blosc2_schunk {
        let c = CString::new(self.theirs_path.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        let s = unsafe { (self.api.open)(c.as_ptr()) };
        assert!(!s.is_null(), "c-blosc2 cannot open {:?}", self.theirs_path);
        s
    }

    /// Both libraries close and reopen their file (what a cache does between sessions).
    fn reopen(&mut self) {
        // SAFETY: a live schunk of the reference, freed once.
        unsafe { (self.api.free)(self.theirs) };
        self.theirs = self.open_theirs();
        self.ours = Frame::open(&self.ours_path).unwrap();
    }

    /// After a call on both: our file is no larger than c-blosc2's (and holds its bytes).
    fn compare(&mut self, what: &str) {
        let a = std::fs::read(&self.ours_path).unwrap();
        let b = std::fs::read(&self.theirs_path).unwrap();
        assert!(
            a.len() <= b.len(),
            "{what}: our file has {} bytes, c-blosc2's {}",
            a.len(),
            b.len()
        );
        // (c-blosc2 keeps the fingerprint of a trailer it has not rewritten yet.)
        assert!(
            common::without_fingerprint(&a) == common::without_fingerprint(&b),
            "{what}: the files differ ({} bytes each)",
            a.len()
        );
        self.steps += 1;
    }

    /// Checks every chunk c-blosc2 reads from our file, then releases the reference's handle.
    fn finish(self, what: &str) -> usize {
        // SAFETY: a live schunk of the reference, freed once.
        unsafe { (self.api.free)(self.theirs) };
        let c = CString::new(self.ours_path.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        let s = unsafe { (self.api.open)(c.as_ptr()) };
        check_against_reference(self.api, s, &self.ours, what, true);
        self.steps
    }
}

/// A compressed chunk of `nbytes` of data of one of the kinds a cache holds (incompressible,
/// smooth, small integers), or a special chunk of `kind`.
fn payload(cp: &CParams, rng: &mut Rng, nbytes: usize) -> Vec<u8> {
    let kind = ["random", "f64_series", "small_int"][rng.below(3) as usize];
    chunk::compress_vec(cp, &data_kind(kind, nbytes, rng.next_u64())).unwrap()
}

fn special_chunk(cp: &CParams, kind: SpecialKind, nbytes: usize) -> Vec<u8> {
    let mut buf = [0u8; 64];
    let n = match kind {
        SpecialKind::Zeros => chunk::special::zeros(cp, nbytes as i32, &mut buf),
        SpecialKind::Nan => chunk::special::nans(cp, nbytes as i32, &mut buf),
        SpecialKind::Uninit => chunk::special::uninit(cp, nbytes as i32, &mut buf),
    };
    buf[..n.unwrap()].to_vec()
}

/// python-blosc2's bounded disk cache (`RemoteArray(..., cache_policy=DISK,
/// max_cache_bytes=...)`, what `test_disk_bound_shrinks_self_caching_carrier` in its suite
/// checks): a carrier frame made with `fill_special(UNINIT)`, chunks fetched into their slots
/// (`update_chunk`), the least recently fetched ones evicted back to UNINIT once the cached
/// bytes pass the budget, and the carrier reopened now and then.
#[test]
fn cache_histories_leave_files_no_larger_than_the_references() {
    let api = api();
    let calls = calls();
    let dir = common::scratch::dir("b2frame-sizes-cache-");
    let mut steps = 0;
    for seed in 0..16u64 {
        let mut rng = Rng::new(seed + 500);
        let cp = CParams {
            typesize: 8,
            ..CParams::default()
        };
        let chunksize = [8_000usize, 20_000, 40_000][rng.below(3) as usize];
        let nchunks = 6 + rng.below(30) as i64;
        let budget = chunksize as u64 * (2 + rng.below(5));
        let path = dir.join(format!("cache{seed}.b2frame"));
        let mut f = Frame::new_file(&path, &cp, &DParams::default()).unwrap();
        let last = chunksize as i64 - rng.below(chunksize as u64 / 8) as i64 * 8;
        let nbytes = (nchunks - 1) * chunksize as i64 + last;
        f.fill_special(SpecialKind::Uninit, nchunks, nbytes, chunksize as i32, 0)
            .unwrap();
        let mut p = Pair::new(&api, f, &path);
        p.compare(&format!("seed {seed}: carrier"));
        // Fetched chunks, least recently fetched first, with their compressed sizes.
        let mut cached: Vec<(i64, u64)> = Vec::new();
        for step in 0..80 {
            let what = format!("seed {seed} step {step}");
            let k = rng.below(nchunks as u64) as i64;
            if cached.iter().any(|&(c, _)| c == k) {
                continue;
            }
            let n = if k == nchunks - 1 {
                last as usize
            } else {
                chunksize
            };
            let mut c = payload(&cp, &mut rng, n);
            // SAFETY: a live schunk; `c` outlives the call (copy = true).
            assert!(unsafe { (calls.update)(p.theirs, k, c.as_mut_ptr(), true) } >= 0);
            p.ours.update_chunk(k, &c).unwrap();
            p.compare(&format!("{what}: fetch {k}"));
            cached.push((k, c.len() as u64));
            while cached.iter().map(|c| c.1).sum::<u64>() > budget {
                let (e, _) = cached.remove(0);
                let n = if e == nchunks - 1 {
                    last as usize
                } else {
                    chunksize
                };
                let mut u = special_chunk(&cp, SpecialKind::Uninit, n);
                // SAFETY: as above.
                assert!(unsafe { (calls.update)(p.theirs, e, u.as_mut_ptr(), true) } >= 0);
                p.ours.update_chunk(e, &u).unwrap();
                p.compare(&format!("{what}: evict {e}"));
            }
            if rng.below(10) == 0 {
                p.reopen();
                p.compare(&format!("{what}: reopened"));
            }
        }
        steps += p.finish(&format!("seed {seed}: after the cache history"));
    }
    assert!(steps > 16 * 80, "{steps} calls compared");
}

/// Loops of updates (to other sizes, to and from special chunks), inserts, deletes and appends
/// over cframe files of 20 to 60 chunks, most of them followed by far more data than one chunk
/// (what made b2frame write an update's payload at the end of the data section before, while
/// c-blosc2 moves the data after the chunk), with fixed and variable chunk sizes, reopened now
/// and then.
#[test]
fn update_insert_delete_loops_leave_files_no_larger_than_the_references() {
    let api = api();
    let calls = calls();
    let dir = common::scratch::dir("b2frame-sizes-loops-");
    let mut steps = 0;
    for seed in 0..24u64 {
        let mut rng = Rng::new(seed + 900);
        let cp = CParams {
            typesize: 4,
            ..CParams::default()
        };
        let chunksize = [4_000usize, 16_000][rng.below(2) as usize];
        let variable = seed % 3 == 2;
        let size = |rng: &mut Rng| {
            if variable {
                chunksize / (1 + rng.below(4) as usize)
            } else {
                chunksize
            }
        };
        let path = dir.join(format!("loop{seed}.b2frame"));
        let mut f = Frame::new_file(&path, &cp, &DParams::default()).unwrap();
        for _ in 0..20 + rng.below(40) {
            let n = size(&mut rng);
            f.append_chunk(&payload(&cp, &mut rng, n)).unwrap();
        }
        let mut p = Pair::new(&api, f, &path);
        for step in 0..40 {
            let what = format!("seed {seed} step {step}");
            let nch = p.ours.nchunks();
            let i = rng.below(nch as u64) as i64;
            let n = size(&mut rng);
            // Special chunks only while the chunk size is fixed: a frame with variable sizes
            // stores them as regular chunks, where c-blosc2 writes special offsets it cannot
            // read back (docs/divergences.md#3-special-chunks-in-frames-with-variable-chunk-sizes-are-stored).
            let mut c = match rng.below(6) {
                0 if !variable => special_chunk(&cp, SpecialKind::Zeros, n),
                1 if !variable => special_chunk(&cp, SpecialKind::Uninit, n),
                _ => payload(&cp, &mut rng, n),
            };
            // SAFETY: a live schunk; `c` outlives the calls (copy = true).
            unsafe {
                match rng.below(8) {
                    0 => {
                        assert!(
                            (calls.append)(p.theirs, c.as_mut_ptr(), true) >= 0,
                            "{what}"
                        );
                        p.ours.append_chunk(&c).unwrap();
                    }
                    1 if variable => {
                        assert!((calls.insert)(p.theirs, i, c.as_mut_ptr(), true) >= 0);
                        p.ours.insert_chunk(i, &c).unwrap();
                    }
                    2 if nch > 2 => {
                        assert!((calls.delete)(p.theirs, i) >= 0, "{what}");
                        p.ours.delete_chunk(i).unwrap();
                    }
                    _ => {
                        assert!((calls.update)(p.theirs, i, c.as_mut_ptr(), true) >= 0);
                        p.ours.update_chunk(i, &c).unwrap();
                    }
                }
            }
            p.compare(&what);
            if rng.below(8) == 0 {
                p.reopen();
                p.compare(&format!("{what}: reopened"));
            }
        }
        steps += p.finish(&format!("seed {seed}: after the loop"));
    }
    assert!(steps >= 24 * 40, "{steps} calls compared");
}
