//! Crash-state enumeration of the b2nd operations that change an array on disk
//! (docs/durability.md, "b2nd arrays"): `b2nd_set_slice_cbuffer`, `b2nd_resize` (growing and
//! shrinking), `b2nd_insert` and `b2nd_delete`, through the C API, on a cframe file and an sframe
//! directory, in default and durable mode.
//!
//! Such an operation is several frame commits (chunk updates, appends, inserts, deletes, the
//! `b2nd` metalayer), each crash-consistent on its own. What a crash may leave is therefore
//! any state at a commit boundary: the array before the call, after it, or after one of its
//! commits. The test records the call's storage operations, replays every prefix of them
//! untorn to list the commit states, then builds every crash state as
//! tests/frame_crash_states.rs does (every prefix, writes torn, in durable mode every subset
//! between two barriers) and requires that libb2frame and c-blosc2 3.3.5 open each one as the
//! same array (shape and every element, read with `b2nd_open` and `b2nd_to_cbuffer`), and that it
//! is one of the commit states. Every commit state must itself open as a valid array in both
//! libraries: an operation whose intermediate commits left an array c-blosc2 cannot read
//! (chunks missing for the shape its metalayer claims) would fail here.

#![allow(clippy::missing_transmute_annotations)]

mod common;

use b2frame::capi::b2nd_array::*;
use b2frame::capi::types::*;
use b2frame::frame::record::{self, Event};
use common::crash::{
    apply, apply_dir, crash_dir_images, crash_images_at, header_range, read_dir_image,
    write_dir_image, DirImage,
};
use common::reference::reference;
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::Path;
use std::sync::Mutex;

/// Durable mode is process-wide: cases run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

const SHAPE: [i64; 2] = [40, 30];
const CHUNKS: [i32; 2] = [10, 10];
const BLOCKS: [i32; 2] = [5, 5];

fn value(i: i64, j: i64, v: i32) -> i32 {
    (i * 1000 + j) as i32 + v * 1_000_000
}

/// An array as a library reads it: its shape and its items (int32, C order).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Array {
    shape: Vec<i64>,
    items: Vec<u8>,
}

impl Array {
    fn brief(&self) -> String {
        let first = self
            .items
            .get(..4)
            .map(|b| i32::from_le_bytes(b.try_into().unwrap()));
        format!(
            "shape {:?}, {} bytes, first item {first:?}",
            self.shape,
            self.items.len()
        )
    }
}

type OpenFn = unsafe extern "C" fn(*const c_char, *mut *mut b2nd_array_t) -> c_int;
type ToBufferFn = unsafe extern "C" fn(*const b2nd_array_t, *mut c_void, i64) -> c_int;
type FreeFn = unsafe extern "C" fn(*mut b2nd_array_t) -> c_int;

/// Opens the array at `path` with one library's b2nd_open / b2nd_to_cbuffer / b2nd_free.
fn read_array(path: &Path, f: (OpenFn, ToBufferFn, FreeFn)) -> Result<Array, String> {
    let url = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: C calls on an array opened and freed here; the struct layout is c-blosc2's in
    // both libraries; the buffer holds nitems * typesize bytes.
    unsafe {
        let mut a: *mut b2nd_array_t = std::ptr::null_mut();
        let rc = (f.0)(url.as_ptr(), &mut a);
        if rc < 0 || a.is_null() {
            return Err(format!("b2nd_open: {rc}"));
        }
        let ndim = (*a).ndim as usize;
        let shape = (&(*a).shape)[..ndim].to_vec();
        let n = (*a).nitems as usize * (*(*a).sc).typesize as usize;
        let mut items = vec![0u8; n];
        let rc = (f.1)(a, items.as_mut_ptr() as *mut c_void, n as i64);
        (f.2)(a);
        if rc < 0 {
            return Err(format!("b2nd_to_cbuffer: {rc}"));
        }
        Ok(Array { shape, items })
    }
}

fn ours(path: &Path) -> Result<Array, String> {
    read_array(path, (b2nd_open, b2nd_to_cbuffer, b2nd_free))
}

fn theirs(path: &Path) -> Result<Array, String> {
    let r = reference();
    // SAFETY: the symbols have the signatures b2nd.h 3.3.5 declares.
    let f = unsafe {
        (
            std::mem::transmute(r.sym("b2nd_open")),
            std::mem::transmute(r.sym("b2nd_to_cbuffer")),
            std::mem::transmute(r.sym("b2nd_free")),
        )
    };
    read_array(path, f)
}

/// The 40x30 int32 array (chunks 10x10, blocks 5x5) at `path`, written by libb2frame.
fn make(path: &Path, contiguous: bool) {
    b2frame::capi::globals::blosc2_init();
    let url = CString::new(path.to_str().unwrap()).unwrap();
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    let mut dp = BLOSC2_DPARAMS_DEFAULTS;
    let st = common::storage(contiguous, Some(&url), &mut cp, &mut dp);
    let data: Vec<i32> = (0..SHAPE[0])
        .flat_map(|i| (0..SHAPE[1]).map(move |j| value(i, j, 0)))
        .collect();
    let dtype = CString::new("<i4").unwrap();
    // SAFETY: C calls with valid arguments on a context and an array made and freed here.
    unsafe {
        let ctx = b2nd_create_ctx(
            &st,
            2,
            SHAPE.as_ptr(),
            CHUNKS.as_ptr(),
            BLOCKS.as_ptr(),
            dtype.as_ptr(),
            0,
            std::ptr::null_mut(),
            0,
        );
        assert!(!ctx.is_null());
        let mut a: *mut b2nd_array_t = std::ptr::null_mut();
        let rc = b2nd_from_cbuffer(
            ctx,
            &mut a,
            data.as_ptr() as *const c_void,
            (data.len() * 4) as i64,
        );
        assert_eq!(rc, 0);
        b2nd_free(a);
        b2nd_free_ctx(ctx);
    }
}

type Op = fn(*mut b2nd_array_t) -> c_int;

/// A crash state: its label, how to write it at a path, and whether it is past the last barrier.
type CrashImage = (String, Box<dyn Fn(&Path)>, bool);

/// The operations whose crash states are enumerated.
fn cases() -> Vec<(&'static str, Op)> {
    vec![
        ("set_slice", |a| {
            // A 14x17 box across four chunks, with new values.
            let (start, stop) = ([8i64, 6], [22i64, 23]);
            let shape = [stop[0] - start[0], stop[1] - start[1]];
            let data: Vec<i32> = (start[0]..stop[0])
                .flat_map(|i| (start[1]..stop[1]).map(move |j| value(i, j, 1)))
                .collect();
            // SAFETY: a live array; the buffer holds the box.
            unsafe {
                b2nd_set_slice_cbuffer(
                    data.as_ptr() as *const c_void,
                    shape.as_ptr(),
                    (data.len() * 4) as i64,
                    start.as_ptr(),
                    stop.as_ptr(),
                    a,
                )
            }
        }),
        ("resize_grow", |a| {
            let ns = [55i64, 37];
            // SAFETY: a live array; two dimensions.
            unsafe { b2nd_resize(a, ns.as_ptr(), std::ptr::null()) }
        }),
        ("resize_shrink", |a| {
            let ns = [25i64, 14];
            // SAFETY: a live array; two dimensions.
            unsafe { b2nd_resize(a, ns.as_ptr(), std::ptr::null()) }
        }),
        ("insert_rows", |a| {
            let data: Vec<i32> = (0..10 * SHAPE[1]).map(|k| value(900, k, 2)).collect();
            // SAFETY: a live array; 10 rows of 30 items.
            unsafe {
                b2nd_insert(
                    a,
                    data.as_ptr() as *const c_void,
                    (data.len() * 4) as i64,
                    0,
                    10,
                )
            }
        }),
        ("delete_columns", |a| {
            // Whole chunks away from the end of an axis.
            // SAFETY: a live array.
            unsafe { b2nd_delete(a, 1, 10, 10) }
        }),
    ]
}

/// One case on one storage: the number of crash states checked, and the failures.
fn check(name: &str, op: Op, contiguous: bool, durable: bool) -> (usize, Vec<String>) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let was = record::set_durable(false);
    let dir = common::scratch::dir("b2f-b2nd-crash-");
    let p0 = dir.join("made.b2nd");
    make(&p0, contiguous);
    let p = dir.join("a.b2nd");
    let before_file = contiguous.then(|| std::fs::read(&p0).unwrap());
    let before_dir = (!contiguous).then(|| read_dir_image(&p0));
    match (&before_file, &before_dir) {
        (Some(b), _) => std::fs::write(&p, b).unwrap(),
        (_, Some(d)) => write_dir_image(&p, d),
        _ => unreachable!(),
    }
    let before = ours(&p).unwrap();
    assert_eq!(theirs(&p), Ok(before.clone()), "{name}: setup");

    record::set_durable(durable);
    let url = CString::new(p.to_str().unwrap()).unwrap();
    let events: Vec<Event>;
    // SAFETY: the array is opened, changed and freed here.
    unsafe {
        let mut a: *mut b2nd_array_t = std::ptr::null_mut();
        assert_eq!(b2nd_open(url.as_ptr(), &mut a), 0);
        record::start();
        let rc = op(a);
        events = record::stop();
        assert!(rc >= 0, "{name}: {rc}");
        b2nd_free(a);
    }
    record::set_durable(was);
    let after = ours(&p).unwrap();
    assert_eq!(theirs(&p), Ok(after.clone()), "{name}: after");
    assert_ne!(before, after, "{name} changed nothing");

    // The commit states: every prefix of the operations, applied whole.
    let c = dir.join("crashed.b2nd");
    let mut commits = vec![before.clone()];
    let mut failures = Vec::new();
    let mut file = before_file.clone();
    let mut tree = before_dir.clone();
    for (k, e) in events.iter().enumerate() {
        match (&mut file, &mut tree) {
            (Some(f), _) => {
                apply(f, e, None);
                std::fs::write(&c, &*f).unwrap();
            }
            (_, Some(t)) => {
                apply_dir(t, e, None);
                write_dir_image(&c, t);
            }
            _ => unreachable!(),
        }
        match (ours(&c), theirs(&c)) {
            (Ok(o), Ok(t)) if o == t => {
                if commits.last() != Some(&o) {
                    commits.push(o);
                }
            }
            (o, t) => failures.push(format!(
                "{name} (contiguous {contiguous}) after operation {k} of {}: not an array both \
                 libraries read alike: ours {:?} / c-blosc2 {:?}",
                events.len(),
                o.map(|a| a.brief()),
                t.map(|a| a.brief())
            )),
        }
    }
    assert_eq!(
        commits.last(),
        Some(&after),
        "{name}: the last commit state"
    );

    // Every crash state.
    let images: Vec<CrashImage> = match (&before_file, &before_dir) {
        (Some(b), _) => {
            let atomic = {
                let (h0, h1) = (
                    header_range(b, 0),
                    header_range(&std::fs::read(&p).unwrap(), 0),
                );
                h0.start..h0.end.max(h1.end)
            };
            crash_images_at(b, &events, durable, &atomic)
                .into_iter()
                .map(|(l, img, past)| {
                    let w: Box<dyn Fn(&Path)> =
                        Box::new(move |c: &Path| std::fs::write(c, &img).unwrap());
                    (l, w, past)
                })
                .collect()
        }
        (_, Some(d)) => crash_dir_images(d, &events, durable)
            .into_iter()
            .map(|(l, img, past): (String, DirImage, bool)| {
                let w: Box<dyn Fn(&Path)> = Box::new(move |c: &Path| write_dir_image(c, &img));
                (l, w, past)
            })
            .collect(),
        _ => unreachable!(),
    };
    let n = images.len();
    for (label, write, past_last_barrier) in images {
        write(&c);
        let verdict = match (ours(&c), theirs(&c)) {
            (Ok(o), Ok(t)) if o != t => {
                Err(format!("libraries disagree: {} / {}", o.brief(), t.brief()))
            }
            (Ok(o), Ok(_)) if past_last_barrier && o != after => Err(format!(
                "not the after-state past the last barrier: {}",
                o.brief()
            )),
            (Ok(o), Ok(_)) if !commits.contains(&o) => {
                Err(format!("no commit state: {}", o.brief()))
            }
            (Ok(_), Ok(_)) => Ok(()),
            (o, t) => Err(format!(
                "ours {:?} / c-blosc2 {:?}",
                o.map(|a| a.brief()),
                t.map(|a| a.brief())
            )),
        };
        if let Err(why) = verdict {
            failures.push(format!(
                "{name} (contiguous {contiguous}, durable {durable}) {label}: {why}"
            ));
        }
    }
    eprintln!(
        "{name} (contiguous {contiguous}, durable {durable}): {} operations, {} commit states, {n} crash states",
        events.len(),
        commits.len()
    );
    (n, failures)
}

fn run(contiguous: bool, durable: bool) {
    let mut failures = Vec::new();
    let mut total = 0;
    for (name, op) in cases() {
        let (n, f) = check(name, op, contiguous, durable);
        total += n;
        failures.extend(f);
    }
    eprintln!("{total} crash states (contiguous {contiguous}, durable {durable})");
    assert!(
        failures.is_empty(),
        "{} crash states fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn cframe_kill() {
    run(true, false);
}

#[test]
fn cframe_durable() {
    run(true, true);
}

#[test]
fn sframe_kill() {
    run(false, false);
}

#[test]
fn sframe_durable() {
    run(false, true);
}
