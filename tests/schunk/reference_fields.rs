//! Fields callers write into `blosc2_schunk` and `blosc2_schunk_to_buffer`, against the real
//! c-blosc2 3.3.5 (dlopened): the same history runs on both libraries and what each reports (the
//! struct's fields, `to_buffer` bytes, a reopened frame's fields) must agree.
//!
//! c-blosc2 treats the struct as the truth: `chunksize`, `typesize`, `blocksize`, `clevel`,
//! `compcode`, `compcode_meta`, `splitmode`, `use_dict`, `filters` and `filters_meta` written by a
//! caller go into every frame header it writes afterwards (so a reopened frame reports them) and
//! into `blosc2_schunk_get_cparams`; the library itself writes `chunksize` (first chunk, mixed
//! sizes), the counters, `flags2` and `current_nchunk`. python-blosc2 relies on this (its
//! `SChunk(chunksize=...)` with metalayers, its cparams setter).

#![allow(clippy::missing_transmute_annotations)]

use crate::common;

use b2frame::capi::chunk::{blosc2_create_cctx, blosc2_free_ctx};
use b2frame::capi::meta::*;
use b2frame::capi::schunk::*;
use b2frame::capi::types::*;
use b2frame::frame::fingerprint::{SLOT_LEN, TYPE_FROM_END};
use common::reference::reference;
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};

type Sc = *mut blosc2_schunk;
type Ctx = *mut blosc2_context;

/// The functions a history needs, from one library.
pub(crate) struct Api {
    pub(crate) name: &'static str,
    pub(crate) new: unsafe extern "C" fn(*mut blosc2_storage) -> Sc,
    pub(crate) open: unsafe extern "C" fn(*const c_char) -> Sc,
    pub(crate) from_buffer: unsafe extern "C" fn(*mut u8, i64, bool) -> Sc,
    pub(crate) to_buffer: unsafe extern "C" fn(Sc, *mut *mut u8, *mut bool) -> i64,
    pub(crate) free: unsafe extern "C" fn(Sc) -> c_int,
    pub(crate) append_buffer: unsafe extern "C" fn(Sc, *const c_void, i32) -> i64,
    pub(crate) append_chunk: unsafe extern "C" fn(Sc, *mut u8, bool) -> i64,
    pub(crate) insert_chunk: unsafe extern "C" fn(Sc, i64, *mut u8, bool) -> i64,
    pub(crate) update_chunk: unsafe extern "C" fn(Sc, i64, *mut u8, bool) -> i64,
    pub(crate) delete_chunk: unsafe extern "C" fn(Sc, i64) -> i64,
    pub(crate) get_chunk: unsafe extern "C" fn(Sc, i64, *mut *mut u8, *mut bool) -> c_int,
    pub(crate) decompress_chunk: unsafe extern "C" fn(Sc, i64, *mut c_void, i32) -> c_int,
    pub(crate) meta_add: unsafe extern "C" fn(Sc, *const c_char, *mut u8, i32) -> c_int,
    pub(crate) vlmeta_add:
        unsafe extern "C" fn(Sc, *const c_char, *mut u8, i32, *mut blosc2_cparams) -> c_int,
    pub(crate) get_cparams: unsafe extern "C" fn(Sc, *mut *mut blosc2_cparams) -> c_int,
    pub(crate) reorder: unsafe extern "C" fn(Sc, *mut i64) -> c_int,
    pub(crate) create_cctx: unsafe extern "C" fn(blosc2_cparams) -> Ctx,
    pub(crate) create_dctx: unsafe extern "C" fn(blosc2_dparams) -> Ctx,
    pub(crate) get_slice_buffer: unsafe extern "C" fn(Sc, i64, i64, *mut c_void) -> c_int,
    pub(crate) free_ctx: unsafe extern "C" fn(Ctx),
    /// Frees what this library allocated (on Windows the reference's C runtime is another).
    pub(crate) free_mem: unsafe fn(*mut c_void),
    /// Allocates what this library may free.
    pub(crate) malloc_mem: fn(usize) -> *mut c_void,
}

pub(crate) fn ours() -> Api {
    Api {
        name: "b2frame",
        new: blosc2_schunk_new,
        open: blosc2_schunk_open,
        from_buffer: blosc2_schunk_from_buffer,
        to_buffer: blosc2_schunk_to_buffer,
        free: blosc2_schunk_free,
        append_buffer: blosc2_schunk_append_buffer,
        append_chunk: blosc2_schunk_append_chunk,
        insert_chunk: blosc2_schunk_insert_chunk,
        update_chunk: blosc2_schunk_update_chunk,
        delete_chunk: blosc2_schunk_delete_chunk,
        get_chunk: blosc2_schunk_get_chunk,
        decompress_chunk: blosc2_schunk_decompress_chunk,
        meta_add: blosc2_meta_add,
        vlmeta_add: blosc2_vlmeta_add,
        get_cparams: blosc2_schunk_get_cparams,
        reorder: blosc2_schunk_reorder_offsets,
        create_cctx: blosc2_create_cctx,
        create_dctx: b2frame::capi::chunk::blosc2_create_dctx,
        get_slice_buffer: blosc2_schunk_get_slice_buffer,
        free_ctx: blosc2_free_ctx,
        free_mem: common::reference::free_ours,
        malloc_mem: common::reference::malloc_ours,
    }
}

pub(crate) fn theirs() -> Api {
    let r = reference();
    // SAFETY: each symbol has the C signature blosc2.h 3.3.5 declares for it.
    unsafe {
        Api {
            name: "c-blosc2",
            new: std::mem::transmute(r.sym("blosc2_schunk_new")),
            open: std::mem::transmute(r.sym("blosc2_schunk_open")),
            from_buffer: std::mem::transmute(r.sym("blosc2_schunk_from_buffer")),
            to_buffer: std::mem::transmute(r.sym("blosc2_schunk_to_buffer")),
            free: std::mem::transmute(r.sym("blosc2_schunk_free")),
            append_buffer: std::mem::transmute(r.sym("blosc2_schunk_append_buffer")),
            append_chunk: std::mem::transmute(r.sym("blosc2_schunk_append_chunk")),
            insert_chunk: std::mem::transmute(r.sym("blosc2_schunk_insert_chunk")),
            update_chunk: std::mem::transmute(r.sym("blosc2_schunk_update_chunk")),
            delete_chunk: std::mem::transmute(r.sym("blosc2_schunk_delete_chunk")),
            get_chunk: std::mem::transmute(r.sym("blosc2_schunk_get_chunk")),
            decompress_chunk: std::mem::transmute(r.sym("blosc2_schunk_decompress_chunk")),
            meta_add: std::mem::transmute(r.sym("blosc2_meta_add")),
            vlmeta_add: std::mem::transmute(r.sym("blosc2_vlmeta_add")),
            get_cparams: std::mem::transmute(r.sym("blosc2_schunk_get_cparams")),
            reorder: std::mem::transmute(r.sym("blosc2_schunk_reorder_offsets")),
            create_cctx: std::mem::transmute(r.sym("blosc2_create_cctx")),
            create_dctx: std::mem::transmute(r.sym("blosc2_create_dctx")),
            get_slice_buffer: std::mem::transmute(r.sym("blosc2_schunk_get_slice_buffer")),
            free_ctx: std::mem::transmute(r.sym("blosc2_free_ctx")),
            free_mem: common::reference::free_ref,
            malloc_mem: common::reference::malloc_ref,
        }
    }
}

/// Where a history's super-chunk lives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Kind {
    /// `contiguous=false`, no urlpath.
    Plain,
    /// `contiguous=true`, no urlpath (an in-memory cframe).
    Memory,
    /// A cframe file.
    File,
    /// An sframe directory.
    Sframe,
}

const KINDS: [Kind; 4] = [Kind::Plain, Kind::Memory, Kind::File, Kind::Sframe];

pub(crate) fn cparams(typesize: i32) -> blosc2_cparams {
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = typesize;
    cp.compcode = BLOSC_ZSTD as u8;
    cp.clevel = 3;
    cp.nthreads = 1;
    cp
}

fn data(seed: u32, nbytes: usize) -> Vec<u8> {
    (0..nbytes as u32)
        .map(|i| ((seed * 7 + i / 5) % 251) as u8)
        .collect()
}

/// What one library reports for a super-chunk.
#[derive(Debug, PartialEq)]
pub(crate) struct Fields {
    pub(crate) compcode: u8,
    pub(crate) compcode_meta: u8,
    pub(crate) clevel: u8,
    pub(crate) splitmode: u8,
    pub(crate) typesize: i32,
    pub(crate) blocksize: i32,
    pub(crate) chunksize: i32,
    pub(crate) use_dict: u8,
    pub(crate) filters: [u8; 6],
    pub(crate) filters_meta: [u8; 6],
    pub(crate) nchunks: i64,
    pub(crate) nbytes: i64,
}

/// # Safety
/// `sc` live.
pub(crate) unsafe fn fields(sc: Sc) -> Fields {
    // SAFETY: forwarded contract.
    let s = unsafe { &*sc };
    Fields {
        compcode: s.compcode,
        compcode_meta: s.compcode_meta,
        clevel: s.clevel,
        splitmode: s.splitmode,
        typesize: s.typesize,
        blocksize: s.blocksize,
        chunksize: s.chunksize,
        use_dict: s.use_dict,
        filters: s.filters,
        filters_meta: s.filters_meta,
        nchunks: s.nchunks,
        nbytes: s.nbytes,
    }
}

/// A super-chunk of `kind` under `dir` (files named after `api`).
pub(crate) fn create(
    api: &Api,
    kind: Kind,
    dir: &Path,
    cp: blosc2_cparams,
) -> (Sc, Option<CString>) {
    let mut cp = cp;
    let mut dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.nthreads = 1;
    let url = match kind {
        Kind::Plain | Kind::Memory => None,
        Kind::File => Some(dir.join(format!("{}.b2frame", api.name))),
        Kind::Sframe => Some(dir.join(format!("{}.b2sframe", api.name))),
    };
    let url = url.map(|p: PathBuf| CString::new(p.to_str().unwrap()).unwrap());
    let mut st = common::storage(
        matches!(kind, Kind::Memory | Kind::File),
        url.as_deref(),
        &mut cp,
        &mut dp,
    );
    // SAFETY: a valid storage description.
    let sc = unsafe { (api.new)(&mut st) };
    assert!(!sc.is_null(), "{} new {kind:?}", api.name);
    (sc, url)
}

/// `to_buffer` bytes (copied; the library's buffer is freed when it says so).
///
/// # Safety
/// `sc` live.
unsafe fn to_buffer(api: &Api, sc: Sc) -> Vec<u8> {
    let (mut p, mut nf) = (std::ptr::null_mut(), false);
    // SAFETY: forwarded contract; valid out-pointers.
    unsafe {
        let n = (api.to_buffer)(sc, &mut p, &mut nf);
        assert!(n > 0, "{} to_buffer: {n}", api.name);
        let v = std::slice::from_raw_parts(p, n as usize).to_vec();
        if nf {
            (api.free_mem)(p as *mut c_void);
        }
        v
    }
}

/// The fields of a super-chunk read back from `bytes` with `api`.
fn reread(api: &Api, bytes: &[u8]) -> Fields {
    let mut b = bytes.to_vec();
    // SAFETY: a buffer of the given length; copied by the library.
    unsafe {
        let sc = (api.from_buffer)(b.as_mut_ptr(), b.len() as i64, true);
        assert!(!sc.is_null(), "{} from_buffer", api.name);
        let f = fields(sc);
        (api.free)(sc);
        f
    }
}

/// The fields of the frame at `url`, reopened with `api`.
fn reopen(api: &Api, url: &CString) -> Fields {
    // SAFETY: a C string path.
    unsafe {
        let sc = (api.open)(url.as_ptr());
        assert!(!sc.is_null(), "{} open {url:?}", api.name);
        let f = fields(sc);
        (api.free)(sc);
        f
    }
}

/// Everything a history leaves behind in one library.
#[derive(Debug)]
struct Outcome {
    live: Fields,
    buffer: Vec<u8>,
    /// The `to_buffer` bytes read back by c-blosc2 (the reference reader for both).
    from_buffer: Fields,
    /// The frame reopened from its file (File and Sframe kinds) by c-blosc2.
    reopened: Option<Fields>,
    /// `to_buffer` of the super-chunk the library makes of its own `to_buffer` bytes with
    /// `from_buffer(copy=true)`.
    copied: Vec<u8>,
}

/// Runs `history` on a fresh super-chunk of `kind` with `api`.
fn run(
    api: &Api,
    kind: Kind,
    dir: &Path,
    cp: blosc2_cparams,
    history: &dyn Fn(&Api, Sc),
) -> Outcome {
    let (sc, url) = create(api, kind, dir, cp);
    history(api, sc);
    // SAFETY: live super-chunk.
    let (live, buffer) = unsafe { (fields(sc), to_buffer(api, sc)) };
    // SAFETY: live super-chunk, not used afterwards.
    unsafe { (api.free)(sc) };
    // SAFETY: `b` holds a whole frame; the copy is a live super-chunk until freed.
    let copied = unsafe {
        let mut b = buffer.clone();
        let sc = (api.from_buffer)(b.as_mut_ptr(), b.len() as i64, true);
        assert!(!sc.is_null(), "{} from_buffer(copy=true)", api.name);
        let v = to_buffer(api, sc);
        (api.free)(sc);
        v
    };
    let r = theirs();
    let from_buffer = reread(&r, &buffer);
    let reopened = url.as_ref().map(|u| reopen(&r, u));
    Outcome {
        live,
        buffer,
        from_buffer,
        reopened,
        copied,
    }
}

/// Runs `history` on both libraries for every kind and compares what they report and the
/// `to_buffer` bytes.
/// A cframe with its fingerprint type byte and slot zeroed.
fn without_slot(frame: &[u8]) -> Vec<u8> {
    let mut frame = frame.to_vec();
    let n = frame.len();
    if n >= TYPE_FROM_END {
        frame[n - TYPE_FROM_END] = 0;
        frame[n - SLOT_LEN..].fill(0);
    }
    frame
}

fn compare(what: &str, cp: blosc2_cparams, history: &dyn Fn(&Api, Sc)) {
    let (o, t) = (ours(), theirs());
    let mut bad = Vec::new();
    for kind in KINDS {
        let d = common::scratch::dir("b2f-conformance-fields-");
        let mine = run(&o, kind, d.path(), cp, history);
        let refs = run(&t, kind, d.path(), cp, history);
        if mine.live != refs.live {
            bad.push(format!(
                "{what} {kind:?}: fields after the history\n  ours {:?}\n  refs {:?}",
                mine.live, refs.live
            ));
        }
        if mine.from_buffer != refs.from_buffer {
            bad.push(format!(
                "{what} {kind:?}: fields of the to_buffer frame\n  ours {:?}\n  refs {:?}",
                mine.from_buffer, refs.from_buffer
            ));
        }
        if mine.reopened != refs.reopened {
            bad.push(format!(
                "{what} {kind:?}: fields of the reopened frame\n  ours {:?}\n  refs {:?}",
                mine.reopened, refs.reopened
            ));
        }
        // c-blosc2 writes `fpt = 0` and an empty slot; ours carries a fingerprint by default
        // (docs/format/fingerprint.md, checked by tests/frame/unit_fingerprint.rs). Every other byte must
        // be identical.
        if refs.buffer.len() >= TYPE_FROM_END && without_slot(&refs.buffer) != refs.buffer {
            bad.push(format!(
                "{what} {kind:?}: the reference wrote a fingerprint slot"
            ));
        }
        // to_buffer of a from_buffer(copy=true) super-chunk: the same bytes too.
        if without_slot(&mine.copied) != without_slot(&refs.copied) {
            bad.push(format!(
                "{what} {kind:?}: to_buffer after from_buffer(copy=true) differs ({} vs {} bytes; first difference at {:?})",
                mine.copied.len(),
                refs.copied.len(),
                mine.copied.iter().zip(&refs.copied).position(|(a, b)| a != b)
            ));
        }
        if without_slot(&mine.buffer) != without_slot(&refs.buffer) {
            bad.push(format!(
                "{what} {kind:?}: to_buffer bytes differ ({} vs {} bytes; first difference at {:?})",
                mine.buffer.len(),
                refs.buffer.len(),
                mine.buffer.iter().zip(&refs.buffer).position(|(a, b)| a != b)
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} differences:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The frame c-blosc2 wrote for `history` (File and Sframe kinds), reopened by each library:
/// `to_buffer` gives the same bytes and the same fields.
fn compare_reopened(what: &str, cp: blosc2_cparams, history: &dyn Fn(&Api, Sc)) {
    let (o, t) = (ours(), theirs());
    let mut bad = Vec::new();
    for kind in [Kind::File, Kind::Sframe] {
        let d = common::scratch::dir("b2f-conformance-fields-");
        let (sc, url) = create(&t, kind, d.path(), cp);
        history(&t, sc);
        // SAFETY: live super-chunk, not used afterwards.
        unsafe { (t.free)(sc) };
        let url = url.unwrap();
        let bufs: Vec<Vec<u8>> = [&o, &t]
            .iter()
            // SAFETY: `url` names the frame just written; each handle is freed once, by this closure.
            .map(|api| unsafe {
                let sc = (api.open)(url.as_ptr());
                assert!(!sc.is_null(), "{} open", api.name);
                let b = to_buffer(api, sc);
                (api.free)(sc);
                b
            })
            .collect();
        let (fo, ft) = (reread(&t, &bufs[0]), reread(&t, &bufs[1]));
        if fo != ft {
            bad.push(format!(
                "{what} {kind:?} reopened: fields of the to_buffer frame\n  ours {fo:?}\n  refs {ft:?}"
            ));
        }
        if without_slot(&bufs[0]) != without_slot(&bufs[1]) {
            bad.push(format!(
                "{what} {kind:?} reopened: to_buffer bytes differ ({} vs {} bytes; first difference at {:?})",
                bufs[0].len(),
                bufs[1].len(),
                bufs[0].iter().zip(&bufs[1]).position(|(a, b)| a != b)
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} differences:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// # Safety
/// `sc` live.
pub(crate) unsafe fn append(api: &Api, sc: Sc, seed: u32, nbytes: usize) {
    let v = data(seed, nbytes);
    // SAFETY: forwarded contract; `v` holds `nbytes`.
    let n = unsafe { (api.append_buffer)(sc, v.as_ptr() as *const c_void, nbytes as i32) };
    assert!(n > 0, "{} append: {n}", api.name);
}

/// # Safety
/// `sc` live.
unsafe fn meta_add(api: &Api, sc: Sc, name: &str, content: &[u8]) {
    let n = CString::new(name).unwrap();
    let mut c = content.to_vec();
    // SAFETY: forwarded contract.
    let rc = unsafe { (api.meta_add)(sc, n.as_ptr(), c.as_mut_ptr(), c.len() as i32) };
    assert!(rc >= 0, "{} meta_add: {rc}", api.name);
}

/// # Safety
/// `sc` live.
unsafe fn vlmeta_add(api: &Api, sc: Sc, name: &str, content: &[u8]) {
    let n = CString::new(name).unwrap();
    let mut c = content.to_vec();
    // SAFETY: forwarded contract.
    let rc = unsafe {
        (api.vlmeta_add)(
            sc,
            n.as_ptr(),
            c.as_mut_ptr(),
            c.len() as i32,
            std::ptr::null_mut(),
        )
    };
    assert!(rc >= 0, "{} vlmeta_add: {rc}", api.name);
}

/// python-blosc2's `SChunk(chunksize=N, meta=...)`: metalayers first, then the chunksize is
/// written into the struct; empty frames keep it (to_buffer, reopen).
#[test]
fn chunksize_written_before_metalayers_and_after() {
    for (typesize, chunksize) in [(4, 1000), (8, 64), (1, 4096)] {
        // SAFETY: `compare`/`compare_reopened` pass a live super-chunk of `api`'s library, used by
        // this thread only.
        let h = move |api: &Api, sc: Sc| unsafe {
            meta_add(api, sc, "m", b"\x93\x01\x02\x03");
            (*sc).chunksize = chunksize;
            vlmeta_add(api, sc, "v", b"\xa3abc");
        };
        compare("meta, chunksize, vlmeta", cparams(typesize), &h);
        // Empty frames c-blosc2 wrote this way, reopened by each library (python-blosc2's empty
        // arrays and stores): the same to_buffer bytes, chunksize included.
        compare_reopened("meta, chunksize, vlmeta", cparams(typesize), &h);
        // SAFETY: `compare`/`compare_reopened` pass a live super-chunk of `api`'s library, used by
        // this thread only.
        let h = move |api: &Api, sc: Sc| unsafe {
            (*sc).chunksize = chunksize;
            vlmeta_add(api, sc, "v", b"\xa3abc");
            meta_add(api, sc, "m", b"\x93\x01\x02\x03");
        };
        compare("chunksize, vlmeta, meta", cparams(typesize), &h);
        // SAFETY: `compare`/`compare_reopened` pass a live super-chunk of `api`'s library, used by
        // this thread only.
        let h = move |_: &Api, sc: Sc| unsafe {
            (*sc).chunksize = chunksize;
        };
        compare("chunksize only", cparams(typesize), &h);
    }
}

/// Appends of equal and of different sizes: `to_buffer` bytes identical, variable frames keep
/// chunksize 0. (The short last chunk is compressed by a fresh context: c-blosc2's `cctx` would
/// compress it with the blocksize it chose for the previous buffer, a chunk-level quirk the
/// README describes.)
#[test]
fn appends_give_the_same_buffer() {
    // SAFETY: `compare`/`compare_reopened` pass a live super-chunk of `api`'s library, used by
    // this thread only.
    let h = |api: &Api, sc: Sc| unsafe {
        for i in 0..3 {
            append(api, sc, i, 4000);
        }
        let c = chunk(api, cparams(4), 9, 1234);
        assert!((api.append_chunk)(sc, c, false) > 0);
    };
    compare("equal appends", cparams(4), &h);
    // SAFETY: `compare`/`compare_reopened` pass a live super-chunk of `api`'s library, used by
    // this thread only.
    let h = |api: &Api, sc: Sc| unsafe {
        append(api, sc, 1, 4000);
        for (seed, n) in [(2, 2000), (3, 12000)] {
            let c = chunk(api, cparams(4), seed, n);
            assert!((api.append_chunk)(sc, c, false) > 0);
        }
        vlmeta_add(api, sc, "v", b"\xa1x");
    };
    compare("variable appends", cparams(4), &h);
}

/// A chunk of `nbytes` compressed by `api` with `cp`, `malloc`ed (ownership can pass to the
/// super-chunk).
fn chunk(api: &Api, cp: blosc2_cparams, seed: u32, nbytes: usize) -> *mut u8 {
    let v = data(seed, nbytes);
    // SAFETY: buffers sized as declared; the context is freed.
    unsafe {
        let ctx = (api.create_cctx)(cp);
        let cap = nbytes + BLOSC2_MAX_OVERHEAD as usize;
        // The super-chunk may take it over and free it with its library's `free`.
        let p = (api.malloc_mem)(cap) as *mut u8;
        let compress: unsafe extern "C" fn(Ctx, *const c_void, i32, *mut c_void, i32) -> i32 =
            if api.name == "b2frame" {
                b2frame::capi::codec::blosc2_compress_ctx
            } else {
                std::mem::transmute(reference().sym("blosc2_compress_ctx"))
            };
        let n = compress(
            ctx,
            v.as_ptr() as *const c_void,
            nbytes as i32,
            p as *mut c_void,
            cap as i32,
        );
        (api.free_ctx)(ctx);
        assert!(n > 0);
        p
    }
}

/// Inserts, updates, deletes and reorders, ending with chunks of different sizes and with
/// chunks of equal sizes: variable frames stay variable (`chunksize` 0) through `to_buffer`,
/// also when the other library wrote the frame. In-memory frames come back as their own bytes
/// (the space the replaced and deleted chunks leave included) in both libraries.
#[test]
fn mutations_keep_the_chunksize() {
    let cp = cparams(4);
    // SAFETY: `compare`/`compare_reopened` pass a live super-chunk of `api`'s library, used by
    // this thread only.
    let h = move |api: &Api, sc: Sc| unsafe {
        for i in 0..4 {
            append(api, sc, i, 4000);
        }
        let c = chunk(api, cp, 7, 2000);
        assert!((api.insert_chunk)(sc, 1, c, false) > 0);
        let c = chunk(api, cp, 8, 12000);
        assert!((api.update_chunk)(sc, 3, c, false) > 0);
        assert!((api.delete_chunk)(sc, 0) > 0);
        let mut order = [3i64, 2, 1, 0, 4];
        assert!((api.reorder)(sc, order.as_mut_ptr()) >= 0);
    };
    compare("insert update delete reorder", cp, &h);
    // Back to equal sizes after the delete of the odd chunk: c-blosc2 keeps chunksize 0.
    // SAFETY: `compare`/`compare_reopened` pass a live super-chunk of `api`'s library, used by
    // this thread only.
    let h = move |api: &Api, sc: Sc| unsafe {
        for i in 0..3 {
            append(api, sc, i, 4000);
        }
        let c = chunk(api, cp, 7, 2000);
        assert!((api.insert_chunk)(sc, 1, c, false) > 0);
        assert!((api.delete_chunk)(sc, 1) > 0);
    };
    compare("variable then equal", cp, &h);
    compare_reopened("variable then equal", cp, &h);
    // SAFETY: `compare`/`compare_reopened` pass a live super-chunk of `api`'s library, used by
    // this thread only.
    let h = move |api: &Api, sc: Sc| unsafe {
        let c = chunk(api, cp, 7, 12000);
        assert!((api.insert_chunk)(sc, 0, c, false) > 0);
        let c = chunk(api, cp, 8, 12000);
        assert!((api.insert_chunk)(sc, 0, c, false) > 0);
        let c = chunk(api, cp, 9, 2000);
        assert!((api.insert_chunk)(sc, 1, c, false) > 0);
        assert!((api.delete_chunk)(sc, 1) > 0);
        append(api, sc, 4, 4000);
    };
    compare_reopened("inserts, delete, short append", cp, &h);
}

/// python-blosc2's cparams setter: writes the new parameters into `storage->cparams`, replaces
/// `cctx` with a context made from them and copies them into the struct's fields. c-blosc2
/// uses them for later appends and stores them in the frame header (reopened frames report
/// them, `splitmode` and `compcode_meta` included); `get_cparams` reports the struct's fields.
#[test]
fn cparams_setter_persists() {
    let cp = cparams(4);
    // SAFETY: `compare`/`compare_reopened` pass a live super-chunk of `api`'s library, used by
    // this thread only.
    let setter = |api: &Api, sc: Sc| unsafe {
        let s = &mut *sc;
        let st = &mut *(*s.storage).cparams;
        st.compcode = BLOSC_LZ4 as u8;
        st.compcode_meta = 7;
        st.clevel = 9;
        st.splitmode = BLOSC_ALWAYS_SPLIT;
        st.filters = [0, 0, 0, 0, BLOSC_DELTA as u8, BLOSC_BITSHUFFLE as u8];
        st.filters_meta = [0, 0, 0, 0, 0, 3];
        st.blocksize = 2048;
        (api.free_ctx)(s.cctx);
        s.cctx = (api.create_cctx)(*st);
        assert!(!s.cctx.is_null());
        s.compcode = st.compcode;
        s.compcode_meta = st.compcode_meta;
        s.clevel = st.clevel;
        s.splitmode = st.splitmode as u8;
        s.typesize = st.typesize;
        s.blocksize = st.blocksize;
        s.filters = st.filters;
        s.filters_meta = st.filters_meta;
    };
    // SAFETY: `compare`/`compare_reopened` pass a live super-chunk of `api`'s library, used by
    // this thread only.
    let h = move |api: &Api, sc: Sc| unsafe {
        append(api, sc, 1, 4000);
        setter(api, sc);
        append(api, sc, 2, 4000);
        let mut got: *mut blosc2_cparams = std::ptr::null_mut();
        assert_eq!((api.get_cparams)(sc, &mut got), 0);
        let g = *got;
        (api.free_mem)(got as *mut c_void);
        assert_eq!(
            (
                g.compcode,
                g.compcode_meta,
                g.clevel,
                g.splitmode,
                g.blocksize,
                g.filters
            ),
            (
                BLOSC_LZ4 as u8,
                7,
                9,
                BLOSC_ALWAYS_SPLIT,
                2048,
                [0, 0, 0, 0, 3, 2]
            ),
            "{}",
            api.name
        );
        // The second chunk was compressed with the new context (flags bits 5-7: the codec
        // format, 1 for LZ4).
        let (mut c, mut nf) = (std::ptr::null_mut(), false);
        assert!((api.get_chunk)(sc, 1, &mut c, &mut nf) > 0);
        assert_eq!(*c.add(2) >> 5, 1, "{}", api.name);
        if nf {
            (api.free_mem)(c as *mut c_void);
        }
    };
    compare("cparams setter after a chunk", cp, &h);
    // SAFETY: `compare`/`compare_reopened` pass a live super-chunk of `api`'s library, used by
    // this thread only.
    let h = move |api: &Api, sc: Sc| unsafe {
        setter(api, sc);
        vlmeta_add(api, sc, "v", b"\xa1x");
    };
    compare("cparams setter on an empty frame", cp, &h);
}

/// Records the chunk number each postfilter call reports (and copies the block through).
unsafe extern "C" fn record_nchunk(p: *mut blosc2_postfilter_params) -> c_int {
    // SAFETY: the library passes a valid parameter block whose `user_data` is our vector; the
    // slices below are read on one thread (nthreads 1).
    unsafe {
        let p = &mut *p;
        let seen = &mut *(p.user_data as *mut Vec<i64>);
        if seen.last() != Some(&p.nchunk) {
            seen.push(p.nchunk);
        }
        std::ptr::copy_nonoverlapping(p.input, p.output, p.size as usize);
    }
    0
}

/// A caller-supplied `dctx` with a postfilter: `get_slice_buffer` and `decompress_chunk` tell
/// it the number of each chunk they decode (c-blosc2 sets `current_nchunk` per chunk).
#[test]
fn postfilter_sees_each_chunk_number() {
    let (o, t) = (ours(), theirs());
    let mut got = Vec::new();
    for api in [&o, &t] {
        for kind in KINDS {
            let d = common::scratch::dir("b2f-conformance-fields-");
            let (sc, _url) = create(api, kind, d.path(), cparams(4));
            let mut seen: Vec<i64> = Vec::new();
            // SAFETY: live super-chunk; the postfilter's vector outlives its use.
            unsafe {
                for i in 0..4 {
                    append(api, sc, i, 40000);
                }
                let mut post = blosc2_postfilter_params {
                    user_data: &mut seen as *mut Vec<i64> as *mut c_void,
                    ..std::mem::zeroed()
                };
                let mut dp = BLOSC2_DPARAMS_DEFAULTS;
                dp.nthreads = 1;
                dp.schunk = sc as *mut c_void;
                dp.postfilter = Some(record_nchunk);
                dp.postparams = &mut post;
                let dctx = (api.create_dctx)(dp);
                assert!(!dctx.is_null());
                (api.free_ctx)((*sc).dctx);
                (*sc).dctx = dctx;
                let mut out = vec![0u8; 40000 * 4];
                // Items 5000..15000 (chunks 0 and 1), 9990..30010 (chunks 0..=3), one chunk.
                for (a, b) in [(5000i64, 15000i64), (9990, 30010), (20000, 30000)] {
                    let rc = (api.get_slice_buffer)(sc, a, b, out.as_mut_ptr() as *mut c_void);
                    assert_eq!(rc, 0, "{} {kind:?}", api.name);
                    assert!(
                        out[..(b - a) as usize * 4] == {
                            let mut want = Vec::new();
                            for i in 0..4 {
                                want.extend(data(i, 40000));
                            }
                            want[a as usize * 4..b as usize * 4].to_vec()
                        }
                    );
                    seen.push(-1);
                }
                let rc = (api.decompress_chunk)(sc, 2, out.as_mut_ptr() as *mut c_void, 40000);
                assert_eq!(rc, 40000);
                (api.free)(sc);
            }
            got.push((api.name, kind, seen));
        }
    }
    let (mine, refs) = got.split_at(KINDS.len());
    for (m, r) in mine.iter().zip(refs) {
        assert_eq!(m.2, r.2, "{:?}: chunk numbers the postfilter saw", m.1);
        assert_eq!(m.2, [0, 1, -1, 0, 1, 2, 3, -1, 2, -1, 2], "{:?}", m.1);
    }
}
