//! User I/O backends (`blosc2_register_io_cb`) against the real c-blosc2 3.3.5 (dlopen): the
//! backend here keeps its files in a `HashMap` ([`MemFs`]), never on disk, so anything that
//! bypasses the callbacks (std I/O on the path) either finds nothing or leaves a file on disk,
//! and both are asserted against. The same callbacks are registered in both libraries, so each
//! library can read what the other wrote through them.
//!
//! * `blosc2_schunk_copy` into a cframe and an sframe storage with the backend: files only in
//!   the backend, same files as c-blosc2's copy, readable by both libraries;
//! * `blosc2_schunk_refresh` and the automatic re-sync of a second handle on a backend sframe
//!   (and cframe) after growth through another handle, also across libraries;
//! * a backend whose `open` never fails (c-blosc2's own test_udio backend does that) still
//!   gets its sframe index created with `"wb"` before it is rewritten `"rb+"`.

#![allow(clippy::missing_transmute_annotations)]

mod common;

use b2frame::capi::globals::blosc2_init;
use b2frame::capi::types::*;
use common::reference::reference;
use common::scratch::Scratch;
use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;
use std::sync::Mutex;

type Sc = *mut blosc2_schunk;

/// The backend id registered in both libraries.
const IO_ID: u8 = 211;

// ---------------------------------------------------------------------------------------------
// The in-memory backend
// ---------------------------------------------------------------------------------------------

/// A "filesystem" in a map, passed to the callbacks as `blosc2_io.params`.
#[derive(Default)]
struct MemFs {
    files: Mutex<HashMap<String, Vec<u8>>>,
    /// Every callback: (operation or open mode, path).
    log: Mutex<Vec<(String, String)>>,
    /// Like c-blosc2's test_udio backend: `open` hands out a stream even for a missing file
    /// (whose writes then fail), so a missing file cannot be detected by a failed open.
    lenient: bool,
}

impl MemFs {
    fn lenient() -> MemFs {
        MemFs {
            lenient: true,
            ..MemFs::default()
        }
    }

    fn file(&self, path: &Path) -> Option<Vec<u8>> {
        self.files
            .lock()
            .unwrap()
            .get(path.to_str().unwrap())
            .cloned()
    }

    /// The files under `dir`, by name.
    fn dir(&self, dir: &Path) -> BTreeMap<String, Vec<u8>> {
        let prefix = format!("{}/", dir.to_str().unwrap());
        self.files
            .lock()
            .unwrap()
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix(&prefix)?.to_string(), v.clone())))
            .collect()
    }

    /// How many callbacks `op` were made on `path` so far.
    fn count(&self, op: &str, path: &Path) -> usize {
        let p = path.to_str().unwrap();
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|(o, q)| o == op && q == p)
            .count()
    }

    /// How many streams were opened on `path` so far (any mode).
    fn opens(&self, path: &Path) -> usize {
        ["rb", "rb+", "wb", "ab"]
            .iter()
            .map(|m| self.count(m, path))
            .sum()
    }

    fn record(&self, op: &str, path: &str) {
        self.log
            .lock()
            .unwrap()
            .push((op.to_string(), path.to_string()));
    }

    /// A `blosc2_io` selecting this backend (valid while `self` lives).
    fn io(&self) -> blosc2_io {
        blosc2_io {
            id: IO_ID,
            name: c"memfs".as_ptr(),
            params: self as *const MemFs as *mut c_void,
        }
    }
}

struct Stream {
    fs: *const MemFs,
    path: String,
    /// Opened on a missing file by a lenient backend: nothing works.
    dead: bool,
}

/// # Safety
/// `stream` a live stream from [`m_open`].
unsafe fn stream<'a>(s: *mut c_void) -> (&'a Stream, &'a MemFs) {
    // SAFETY: streams are boxed `Stream`s whose `fs` outlives them (caller contract).
    unsafe {
        let st = &*(s as *const Stream);
        (st, &*st.fs)
    }
}

unsafe extern "C" fn m_open(
    urlpath: *const c_char,
    mode: *const c_char,
    params: *mut c_void,
) -> *mut c_void {
    // SAFETY: C strings and our MemFs by the callback contract.
    let (path, mode, fs) = unsafe {
        (
            CStr::from_ptr(urlpath).to_str().unwrap().to_string(),
            CStr::from_ptr(mode).to_str().unwrap().to_string(),
            &*(params as *const MemFs),
        )
    };
    fs.record(&mode, &path);
    let mut files = fs.files.lock().unwrap();
    let dead = match mode.as_str() {
        "wb" | "w+b" | "wb+" => {
            files.insert(path.clone(), Vec::new());
            false
        }
        "ab" => {
            files.entry(path.clone()).or_default();
            false
        }
        _ if files.contains_key(&path) => false,
        _ if fs.lenient => true,
        _ => return std::ptr::null_mut(),
    };
    Box::into_raw(Box::new(Stream { fs, path, dead })) as *mut c_void
}

unsafe extern "C" fn m_close(s: *mut c_void) -> c_int {
    // SAFETY: a live stream, closed once.
    let st = unsafe { Box::from_raw(s as *mut Stream) };
    // SAFETY: the MemFs outlives its streams.
    unsafe { &*st.fs }.record("close", &st.path);
    0
}

unsafe extern "C" fn m_size(s: *mut c_void) -> i64 {
    // SAFETY: a live stream.
    let (st, fs) = unsafe { stream(s) };
    fs.record("size", &st.path);
    match fs.files.lock().unwrap().get(&st.path) {
        Some(f) if !st.dead => f.len() as i64,
        _ => -1,
    }
}

unsafe extern "C" fn m_write(
    ptr: *const c_void,
    size: i64,
    nitems: i64,
    pos: i64,
    s: *mut c_void,
) -> i64 {
    // SAFETY: a live stream.
    let (st, fs) = unsafe { stream(s) };
    fs.record("write", &st.path);
    let mut files = fs.files.lock().unwrap();
    let Some(f) = files.get_mut(&st.path).filter(|_| !st.dead) else {
        return 0;
    };
    let n = (size * nitems) as usize;
    if n == 0 {
        return nitems;
    }
    // SAFETY: the caller passes `size * nitems` readable bytes.
    let src = unsafe { std::slice::from_raw_parts(ptr as *const u8, n) };
    let at = pos as usize;
    if f.len() < at + n {
        f.resize(at + n, 0);
    }
    f[at..at + n].copy_from_slice(src);
    nitems
}

unsafe extern "C" fn m_read(
    ptr: *mut *mut c_void,
    size: i64,
    nitems: i64,
    pos: i64,
    s: *mut c_void,
) -> i64 {
    // SAFETY: a live stream.
    let (st, fs) = unsafe { stream(s) };
    fs.record("read", &st.path);
    let files = fs.files.lock().unwrap();
    let Some(f) = files.get(&st.path).filter(|_| !st.dead) else {
        return 0;
    };
    let want = (size * nitems) as usize;
    let at = (pos as usize).min(f.len());
    let n = want.min(f.len() - at);
    // SAFETY: is_allocation_necessary: `*ptr` is a buffer of `size * nitems` bytes.
    unsafe { std::ptr::copy_nonoverlapping(f[at..].as_ptr(), *ptr as *mut u8, n) };
    (n as i64) / size
}

unsafe extern "C" fn m_truncate(s: *mut c_void, len: i64) -> c_int {
    // SAFETY: a live stream.
    let (st, fs) = unsafe { stream(s) };
    fs.record("truncate", &st.path);
    match fs.files.lock().unwrap().get_mut(&st.path) {
        Some(f) if !st.dead => {
            f.resize(len as usize, 0);
            0
        }
        _ => -1,
    }
}

unsafe extern "C" fn m_destroy(_params: *mut c_void) -> c_int {
    0
}

fn callbacks() -> blosc2_io_cb {
    blosc2_io_cb {
        id: IO_ID,
        name: c"memfs".as_ptr() as *mut c_char,
        is_allocation_necessary: true,
        open: Some(m_open),
        close: Some(m_close),
        size: Some(m_size),
        write: Some(m_write),
        read: Some(m_read),
        truncate: Some(m_truncate),
        destroy: Some(m_destroy),
    }
}

// ---------------------------------------------------------------------------------------------
// Both libraries behind one table
// ---------------------------------------------------------------------------------------------

/// The super-chunk functions used here, from one library.
struct Api {
    name: &'static str,
    new: unsafe extern "C" fn(*mut blosc2_storage) -> Sc,
    copy: unsafe extern "C" fn(Sc, *mut blosc2_storage) -> Sc,
    open_udio: unsafe extern "C" fn(*const c_char, *const blosc2_io) -> Sc,
    free: unsafe extern "C" fn(Sc) -> c_int,
    append_buffer: unsafe extern "C" fn(Sc, *const c_void, i32) -> i64,
    decompress_chunk: unsafe extern "C" fn(Sc, i64, *mut c_void, i32) -> c_int,
    refresh: unsafe extern "C" fn(Sc) -> c_int,
    to_file: unsafe extern "C" fn(Sc, *const c_char) -> i64,
    append_file: unsafe extern "C" fn(Sc, *const c_char) -> i64,
    meta_add: unsafe extern "C" fn(Sc, *const c_char, *mut u8, i32) -> c_int,
    vlmeta_add: unsafe extern "C" fn(Sc, *const c_char, *mut u8, i32, *mut blosc2_cparams) -> c_int,
    vlmeta_get: unsafe extern "C" fn(Sc, *const c_char, *mut *mut u8, *mut i32) -> c_int,
    register: unsafe extern "C" fn(*const blosc2_io_cb) -> c_int,
    get_lazychunk: unsafe extern "C" fn(Sc, i64, *mut *mut u8, *mut bool) -> c_int,
    getitem_ctx: unsafe extern "C" fn(
        *mut blosc2_context,
        *const c_void,
        i32,
        c_int,
        c_int,
        *mut c_void,
        i32,
    ) -> c_int,
    /// Frees what this library allocated (on Windows the reference's C runtime is another).
    free_mem: unsafe fn(*mut c_void),
}

fn ours() -> Api {
    use b2frame::capi::{io, meta, schunk};
    blosc2_init();
    let api = Api {
        name: "b2frame",
        new: schunk::blosc2_schunk_new,
        copy: schunk::blosc2_schunk_copy,
        open_udio: schunk::blosc2_schunk_open_udio,
        free: schunk::blosc2_schunk_free,
        append_buffer: schunk::blosc2_schunk_append_buffer,
        decompress_chunk: schunk::blosc2_schunk_decompress_chunk,
        refresh: schunk::blosc2_schunk_refresh,
        to_file: schunk::blosc2_schunk_to_file,
        append_file: schunk::blosc2_schunk_append_file,
        meta_add: meta::blosc2_meta_add,
        vlmeta_add: meta::blosc2_vlmeta_add,
        vlmeta_get: meta::blosc2_vlmeta_get,
        register: io::blosc2_register_io_cb,
        get_lazychunk: schunk::blosc2_schunk_get_lazychunk,
        getitem_ctx: b2frame::capi::codec::blosc2_getitem_ctx,
        free_mem: common::reference::free_ours,
    };
    api.register_memfs();
    api
}

fn refr() -> Api {
    let l = reference();
    // SAFETY: each symbol has exactly this C signature in c-blosc2 3.3.5's blosc2.h.
    let api = unsafe {
        Api {
            name: "c-blosc2",
            new: std::mem::transmute(l.sym("blosc2_schunk_new")),
            copy: std::mem::transmute(l.sym("blosc2_schunk_copy")),
            open_udio: std::mem::transmute(l.sym("blosc2_schunk_open_udio")),
            free: std::mem::transmute(l.sym("blosc2_schunk_free")),
            append_buffer: std::mem::transmute(l.sym("blosc2_schunk_append_buffer")),
            decompress_chunk: std::mem::transmute(l.sym("blosc2_schunk_decompress_chunk")),
            refresh: std::mem::transmute(l.sym("blosc2_schunk_refresh")),
            to_file: std::mem::transmute(l.sym("blosc2_schunk_to_file")),
            append_file: std::mem::transmute(l.sym("blosc2_schunk_append_file")),
            meta_add: std::mem::transmute(l.sym("blosc2_meta_add")),
            vlmeta_add: std::mem::transmute(l.sym("blosc2_vlmeta_add")),
            vlmeta_get: std::mem::transmute(l.sym("blosc2_vlmeta_get")),
            register: std::mem::transmute(l.sym("blosc2_register_io_cb")),
            get_lazychunk: std::mem::transmute(l.sym("blosc2_schunk_get_lazychunk")),
            getitem_ctx: std::mem::transmute(l.sym("blosc2_getitem_ctx")),
            free_mem: common::reference::free_ref,
        }
    };
    api.register_memfs();
    api
}

const ITEMS: usize = 2500;

fn data(tag: u32) -> Vec<u8> {
    (0..ITEMS as u32)
        .flat_map(|i| (tag.wrapping_mul(7919) ^ (i / 3)).to_le_bytes())
        .collect()
}

fn cparams() -> blosc2_cparams {
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.clevel = 5;
    cp.nthreads = 1;
    cp
}

/// A fresh scratch directory (tests run in parallel), removed when the guard is dropped after
/// the test passes (see `common::scratch`).
fn scratch(name: &str) -> Scratch {
    common::scratch::dir(&format!("b2frame-udio-{name}-"))
}

fn cstring(p: &Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

/// Files and directories under `dir` on disk (recursive), relative names.
fn on_disk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().to_str().unwrap().to_string());
            if p.is_dir() {
                todo.push(p);
            }
        }
    }
    out.sort();
    out
}

impl Api {
    fn register_memfs(&self) {
        let cb = callbacks();
        assert_eq!(
            // SAFETY: a valid struct with a static name.
            unsafe { (self.register)(&cb) },
            0,
            "{}: register",
            self.name
        );
    }

    /// A new in-memory super-chunk (a frame when `contiguous`, else plain chunks) with
    /// `nchunks` chunks, a metalayer and a vlmetalayer.
    fn source(&self, contiguous: bool, nchunks: u32) -> Sc {
        self.source_with_io(contiguous, nchunks, std::ptr::null_mut())
    }

    /// [`Api::source`] whose storage names the backend `io` (NULL: the default).
    fn source_with_io(&self, contiguous: bool, nchunks: u32, io: *mut blosc2_io) -> Sc {
        let mut cp = cparams();
        let mut st = blosc2_storage {
            contiguous,
            urlpath: std::ptr::null_mut(),
            cparams: &mut cp,
            dparams: std::ptr::null_mut(),
            io,
        };
        // SAFETY: valid storage and buffers.
        unsafe {
            let sc = (self.new)(&mut st);
            assert!(!sc.is_null(), "{}: new", self.name);
            let mut m = *b"\x93\x01\x02\x03";
            assert!((self.meta_add)(sc, c"shape".as_ptr(), m.as_mut_ptr(), 4) >= 0);
            for t in 0..nchunks {
                self.append(sc, t);
            }
            let mut v = b"attributes".to_vec();
            assert!(
                (self.vlmeta_add)(
                    sc,
                    c"attrs".as_ptr(),
                    v.as_mut_ptr(),
                    10,
                    std::ptr::null_mut()
                ) >= 0
            );
            sc
        }
    }

    fn append(&self, sc: Sc, tag: u32) {
        let d = data(tag);
        // SAFETY: `sc` live, `d` readable.
        let n = unsafe { (self.append_buffer)(sc, d.as_ptr() as *const c_void, d.len() as i32) };
        assert!(n > 0, "{}: append_buffer -> {n}", self.name);
    }

    /// A new super-chunk at `url` through `io`.
    fn new_udio(&self, url: &Path, contiguous: bool, io: &mut blosc2_io) -> Sc {
        let u = cstring(url);
        let mut cp = cparams();
        let mut st = blosc2_storage {
            contiguous,
            urlpath: u.as_ptr() as *mut c_char,
            cparams: &mut cp,
            dparams: std::ptr::null_mut(),
            io,
        };
        // SAFETY: valid storage.
        let sc = unsafe { (self.new)(&mut st) };
        assert!(!sc.is_null(), "{}: new at {}", self.name, url.display());
        sc
    }

    /// Copies `src` to `url` (cframe or sframe) through `io`, default parameters.
    fn copy_udio(&self, src: Sc, url: &Path, contiguous: bool, io: &mut blosc2_io) -> Sc {
        let u = cstring(url);
        let mut st = blosc2_storage {
            contiguous,
            urlpath: u.as_ptr() as *mut c_char,
            cparams: std::ptr::null_mut(),
            dparams: std::ptr::null_mut(),
            io,
        };
        // SAFETY: `src` live; valid storage.
        unsafe { (self.copy)(src, &mut st) }
    }

    /// Copies a new [`Api::source`] of `n` chunks (`contiguous_src` or not) to `url` through
    /// `io` with [`Api::copy_udio`], checks the copy's content and frees both.
    fn copy_source_checked(
        &self,
        contiguous_src: bool,
        n: u32,
        url: &Path,
        contiguous: bool,
        io: &mut blosc2_io,
    ) {
        let src = self.source(contiguous_src, n);
        let copy = self.copy_udio(src, url, contiguous, io);
        assert!(!copy.is_null(), "{}: copy", self.name);
        self.check_content(copy, n);
        self.free(copy);
        self.free(src);
    }

    fn open(&self, url: &Path, io: &blosc2_io) -> Sc {
        let u = cstring(url);
        // SAFETY: C string and valid io.
        let sc = unsafe { (self.open_udio)(u.as_ptr(), io) };
        assert!(!sc.is_null(), "{}: open_udio({})", self.name, url.display());
        sc
    }

    fn nchunks(&self, sc: Sc) -> i64 {
        // SAFETY: `sc` live; both libraries share the public struct layout.
        unsafe { (*sc).nchunks }
    }

    fn chunk(&self, sc: Sc, i: i64) -> Vec<u8> {
        let mut out = vec![0u8; ITEMS * 4];
        // SAFETY: `sc` live, buffer sized as declared.
        let n = unsafe {
            (self.decompress_chunk)(sc, i, out.as_mut_ptr() as *mut c_void, out.len() as i32)
        };
        assert_eq!(n as usize, out.len(), "{}: chunk {i}", self.name);
        out
    }

    /// Checks that `sc` holds chunks `0..n` of [`Api::source`] and its metalayers.
    fn check_content(&self, sc: Sc, n: u32) {
        assert_eq!(self.nchunks(sc), i64::from(n), "{}", self.name);
        for t in 0..n {
            assert_eq!(
                self.chunk(sc, i64::from(t)),
                data(t),
                "{}: chunk {t}",
                self.name
            );
        }
        let mut p = std::ptr::null_mut();
        let mut len = 0;
        // SAFETY: `sc` live; the content is malloc'ed by the library and freed here.
        unsafe {
            assert!((self.vlmeta_get)(sc, c"attrs".as_ptr(), &mut p, &mut len) >= 0);
            assert_eq!(std::slice::from_raw_parts(p, len as usize), b"attributes");
            (self.free_mem)(p as *mut c_void);
        }
    }

    fn free(&self, sc: Sc) {
        // SAFETY: `sc` live, not used afterwards.
        assert_eq!(unsafe { (self.free)(sc) }, 0);
    }
}

/// Both libraries reopen the frame at `url` through `io` and find [`Api::source`]'s `n` chunks.
fn both_read(url: &Path, io: &blosc2_io, n: u32) {
    for reader in [ours(), refr()] {
        let sc = reader.open(url, io);
        reader.check_content(sc, n);
        reader.free(sc);
    }
}

/// A frame (or sframe index) with the header's blocksize (bytes 53..57) and thread counts
/// (63..65, 66..68) zeroed. Every `blosc2_schunk_copy` of ours, native or through a backend,
/// writes the storage cparams' blocksize (0 = automatic) and its own thread counts there;
/// c-blosc2 writes its source context's last effective blocksize and the destination
/// contexts' thread counts (0 and 1 for a copy without cparams). Nothing reads these fields
/// back as frame structure, and everything else must match.
fn header_fields_masked(frame: &[u8]) -> Vec<u8> {
    // And the fingerprint (ours has one, c-blosc2's copy none).
    let mut v = common::without_fingerprint(frame);
    assert!(
        v.len() > 68 && v[52] == 0xd2 && v[62] == 0xd1 && v[65] == 0xd1,
        "header layout"
    );
    for i in (53..57).chain(63..65).chain(66..68) {
        v[i] = 0;
    }
    v
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn copy_into_a_backend_cframe_goes_through_its_callbacks_like_the_reference() {
    let dir = scratch("copy-cframe");
    let mut files = Vec::new();
    for (api, contiguous_src) in [(ours(), true), (ours(), false), (refr(), true)] {
        let fs = MemFs::default();
        let mut io = fs.io();
        let url = dir.join(format!("{}-{contiguous_src}.b2frame", api.name));
        api.copy_source_checked(contiguous_src, 4, &url, true, &mut io);
        // The frame exists only in the backend, created with "wb" and closed again.
        assert!(!url.exists(), "{}: copy bypassed the backend", api.name);
        assert!(fs.count("wb", &url) >= 1);
        assert_eq!(
            fs.count("close", &url),
            fs.opens(&url),
            "every stream is closed"
        );
        let bytes = fs.file(&url).expect("copy in the backend");
        // Both libraries reopen it through the backend. c-blosc2 first stat()s the path on disk
        // (to tell sframe directories from files, and to bound a cframe's length by the file
        // size): a placeholder of zeros satisfies it, and the content can only come from the
        // backend.
        std::fs::write(&url, vec![0u8; bytes.len()]).unwrap();
        both_read(&url, &io, 4);
        files.push((api.name, contiguous_src, bytes));
    }
    // Same bytes as c-blosc2's copy, whether the source was a frame or plain chunks (up to the
    // header fields every copy of ours writes differently, see [`header_fields_masked`]).
    for (name, contiguous_src, bytes) in &files[..2] {
        assert_eq!(
            header_fields_masked(bytes),
            header_fields_masked(&files[2].2),
            "{name} (source contiguous: {contiguous_src})"
        );
    }
}

#[test]
fn copy_into_a_backend_sframe_goes_through_its_callbacks_like_the_reference() {
    let dir = scratch("copy-sframe");
    let mut dirs = Vec::new();
    for api in [ours(), refr()] {
        let fs = MemFs::default();
        let mut io = fs.io();
        let url = dir.join(format!("{}.b2frame", api.name));
        api.copy_source_checked(true, 3, &url, false, &mut io);
        // The directory is on disk (c-blosc2 creates it there), its files only in the backend.
        assert!(url.is_dir());
        assert_eq!(on_disk(&url), Vec::<String>::new(), "{}", api.name);
        let files = fs.dir(&url);
        let names: Vec<&str> = files.keys().map(|s| s.as_str()).collect();
        assert_eq!(
            names,
            [
                "00000000.chunk",
                "00000001.chunk",
                "00000002.chunk",
                "chunks.b2frame"
            ],
            "{}",
            api.name
        );
        both_read(&url, &io, 3);
        dirs.push((api.name, files));
    }
    assert_eq!(dirs[0].1.len(), dirs[1].1.len());
    for (name, bytes) in &dirs[0].1 {
        let theirs = &dirs[1].1[name];
        if name == "chunks.b2frame" {
            assert_eq!(header_fields_masked(bytes), header_fields_masked(theirs));
        } else {
            assert_eq!(bytes, theirs, "{name}");
        }
    }
}

/// `writer` grows a backend frame that a `reader` handle has open; the reader sees the new
/// chunks after `blosc2_schunk_refresh` (through the backend), and also without it.
fn refresh_after_growth(writer: &Api, reader: &Api, contiguous: bool, tag: &str) {
    let dir = scratch(tag);
    let fs = MemFs::default();
    let mut io = fs.io();
    let url = dir.join("grow.b2frame");
    let index = if contiguous {
        url.clone()
    } else {
        sframe_index(&url)
    };
    let w = writer.new_udio(&url, contiguous, &mut io);
    writer.append(w, 0);
    writer.append(w, 1);
    let r = reader.open(&url, &io);
    assert_eq!(reader.nchunks(r), 2);
    // SAFETY: `r` live.
    assert_eq!(unsafe { (reader.refresh)(r) }, 0, "{tag}: nothing changed");

    writer.append(w, 2);
    writer.append(w, 3);
    let reads = fs.count("rb", &index);
    // SAFETY: `r` live.
    assert_eq!(unsafe { (reader.refresh)(r) }, 1, "{tag}: refresh");
    assert!(
        fs.count("rb", &index) > reads,
        "{tag}: refresh read the index through the backend"
    );
    assert_eq!(reader.nchunks(r), 4, "{tag}");
    assert_eq!(reader.chunk(r, 3), data(3), "{tag}");

    // The automatic re-sync: a read of a chunk the handle has not seen yet (c-blosc2 checks the
    // index against its cached count first and refuses it; we re-sync before the check).
    writer.append(w, 4);
    if reader.name == "b2frame" {
        assert_eq!(reader.chunk(r, 4), data(4), "{tag}: stale handle re-synced");
        assert_eq!(reader.nchunks(r), 5, "{tag}");
    }

    reader.free(r);
    writer.free(w);
    assert!(fs.file(&index).is_some());
    let left = on_disk(&dir);
    let expect: Vec<String> = if contiguous {
        vec![]
    } else {
        vec!["grow.b2frame".into()]
    };
    assert_eq!(
        left, expect,
        "{tag}: nothing but the sframe directory on disk"
    );
}

/// The index path both libraries hand to the backend for the sframe `url`: `url` + `/chunks.b2frame`
/// (a `/` on Windows too, where `Path::join` would put a backslash).
fn sframe_index(url: &Path) -> std::path::PathBuf {
    format!("{}/chunks.b2frame", url.to_str().unwrap()).into()
}

#[test]
fn refresh_of_a_backend_sframe_reads_its_index_through_the_backend() {
    refresh_after_growth(&ours(), &ours(), false, "refresh-s-ours");
    refresh_after_growth(&refr(), &ours(), false, "refresh-s-ref-writer");
}

#[test]
fn refresh_of_a_backend_cframe_reads_through_the_backend() {
    refresh_after_growth(&ours(), &ours(), true, "refresh-c-ours");
    refresh_after_growth(&refr(), &ours(), true, "refresh-c-ref-writer");
}

#[test]
fn the_reference_refreshes_our_backend_sframe_the_same_way() {
    // Pins the expectations of the test above on the reference itself.
    refresh_after_growth(&ours(), &refr(), false, "refresh-s-ref-reader");
}

#[test]
fn a_backend_whose_open_never_fails_still_gets_an_sframe() {
    for api in [ours(), refr()] {
        let dir = scratch(&format!("lenient-{}", api.name));
        let fs = MemFs::lenient();
        let mut io = fs.io();
        let url = dir.join("s.b2frame");
        let sc = api.new_udio(&url, false, &mut io);
        for t in 0..3 {
            api.append(sc, t);
        }
        let again = api.open(&url, &io);
        assert_eq!(api.nchunks(again), 3, "{}", api.name);
        assert_eq!(api.chunk(again, 2), data(2), "{}", api.name);
        api.free(again);
        api.free(sc);
        let index = sframe_index(&url);
        assert!(
            fs.count("wb", &index) >= 1,
            "{}: index created with wb",
            api.name
        );
        assert!(
            fs.count("rb+", &index) >= 1,
            "{}: index rewritten with rb+",
            api.name
        );
        assert_eq!(on_disk(&url), Vec::<String>::new());
    }
}

#[test]
fn saving_an_in_memory_frame_with_a_backend_goes_through_it_like_the_reference() {
    let dir = scratch("save");
    let mut saved = Vec::new();
    for api in [ours(), refr()] {
        let fs = MemFs::default();
        let mut io = fs.io();
        let src = api.source_with_io(true, 3, &mut io);
        let url = dir.join(format!("{}.b2frame", api.name));
        let u = cstring(&url);
        // SAFETY: `src` live, C string.
        let len = unsafe { (api.to_file)(src, u.as_ptr()) };
        let file = fs.file(&url).expect("to_file through the backend");
        assert_eq!(len, file.len() as i64, "{}", api.name);
        assert_eq!(fs.count("wb", &url), 1, "{}", api.name);
        // Appending goes to the end of what the backend holds: "rb+" and size().
        let other = dir.join(format!("{}-appended", api.name));
        let o = cstring(&other);
        // SAFETY: as above.
        let (a0, a1) = unsafe {
            (
                (api.append_file)(src, o.as_ptr()),
                (api.append_file)(src, o.as_ptr()),
            )
        };
        assert_eq!((a0, a1), (0, len), "{}: append offsets", api.name);
        let both = fs.file(&other).expect("append_file through the backend");
        assert_eq!(both.len() as i64, 2 * len);
        assert_eq!(&both[..len as usize], &file[..], "{}", api.name);
        assert_eq!(&both[len as usize..], &file[..], "{}", api.name);
        assert!(fs.count("rb+", &other) >= 2, "{}", api.name);
        api.free(src);
        saved.push(file);
    }
    assert_eq!(
        on_disk(&dir),
        Vec::<String>::new(),
        "nothing written past the backend"
    );
    assert_eq!(
        header_fields_masked(&saved[0]),
        header_fields_masked(&saved[1])
    );
}

/// Chunk `i`'s lazy chunk from `api` (copied; freed with libc's `free` when the library says so).
fn lazy_chunk(api: &Api, sc: Sc, i: i64) -> Vec<u8> {
    let (mut p, mut nf) = (std::ptr::null_mut(), false);
    // SAFETY: live schunk, valid out-pointers; the chunk is `n` bytes.
    unsafe {
        let n = (api.get_lazychunk)(sc, i, &mut p, &mut nf);
        assert!(n > 0, "{}: get_lazychunk({i}) = {n}", api.name);
        let v = std::slice::from_raw_parts(p, n as usize).to_vec();
        if nf {
            common::reference::free_ref(p as *mut c_void);
        }
        v
    }
}

/// A cframe behind the backend: `get_lazychunk` gives c-blosc2's lazy chunk in both libraries
/// (same bytes), and each library's `getitem` with its super-chunk's `dctx` reads items of its
/// own and the other's lazy chunks through the backend.
#[test]
fn lazy_chunks_of_a_backend_cframe_match_the_reference() {
    let dir = scratch("lazy");
    let fs = MemFs::default();
    let mut io = fs.io();
    let url = dir.join("lazy.b2frame");
    let t = refr();
    t.copy_source_checked(true, 4, &url, true, &mut io);
    let bytes = fs.file(&url).expect("frame in the backend");
    std::fs::write(&url, vec![0u8; bytes.len()]).unwrap();
    let o = ours();
    let (so, st) = (o.open(&url, &io), t.open(&url, &io));
    for i in 0..4i64 {
        let (lo, lt) = (lazy_chunk(&o, so, i), lazy_chunk(&t, st, i));
        assert_eq!(lo, lt, "chunk {i}: lazy chunk bytes");
        assert_eq!(lo[31] & 0x08, 0x08, "chunk {i}: lazy flag");
        for (api, sc) in [(&o, so), (&t, st)] {
            for lz in [&lo, &lt] {
                for at in [0usize, 1234, ITEMS - 1] {
                    let mut item = [0u8; 4];
                    // SAFETY: live super-chunk; buffers of the stated sizes.
                    let n = unsafe {
                        (api.getitem_ctx)(
                            (*sc).dctx,
                            lz.as_ptr() as *const c_void,
                            lz.len() as i32,
                            at as c_int,
                            1,
                            item.as_mut_ptr() as *mut c_void,
                            4,
                        )
                    };
                    assert_eq!(n, 4, "{}: getitem chunk {i} item {at}", api.name);
                    assert_eq!(item[..], data(i as u32)[4 * at..4 * at + 4], "{}", api.name);
                }
            }
        }
    }
    o.free(so);
    t.free(st);
}

/// A `blosc2_schunk_copy` into a native cframe file with other compression parameters (each
/// chunk recompressed; ours streams them into the file one by one) writes c-blosc2's bytes (up
/// to [`header_fields_masked`]), from a frame or plain source, and both libraries read it.
#[test]
fn recompressing_copy_into_a_cframe_file_matches_the_reference() {
    let dir = scratch("copy-recode");
    for (codec, clevel) in [(BLOSC_LZ4 as u8, 9), (BLOSC_BLOSCLZ as u8, 1)] {
        let mut files = Vec::new();
        for (api, contiguous_src) in [(ours(), true), (ours(), false), (refr(), true)] {
            let src = api.source(contiguous_src, 4);
            let url = dir.join(format!("{}-{contiguous_src}-{codec}.b2frame", api.name));
            let u = cstring(&url);
            let mut cp = cparams();
            cp.compcode = codec;
            cp.clevel = clevel;
            let mut st = blosc2_storage {
                contiguous: true,
                urlpath: u.as_ptr() as *mut c_char,
                cparams: &mut cp,
                dparams: std::ptr::null_mut(),
                io: std::ptr::null_mut(),
            };
            // SAFETY: `src` live; valid storage whose pointers outlive the call.
            let copy = unsafe { (api.copy)(src, &mut st) };
            assert!(!copy.is_null(), "{}: copy", api.name);
            api.check_content(copy, 4);
            api.free(copy);
            api.free(src);
            both_read(&url, &BLOSC2_IO_DEFAULTS, 4);
            files.push((api.name, contiguous_src, std::fs::read(&url).unwrap()));
        }
        for (name, contiguous_src, bytes) in &files[..2] {
            assert_eq!(
                header_fields_masked(bytes),
                header_fields_masked(&files[2].2),
                "{name} (source contiguous: {contiguous_src}, codec {codec})"
            );
        }
    }
}
