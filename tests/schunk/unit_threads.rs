//! Concurrent readers on ONE `blosc2_schunk*` through the C API (issue 5): several threads call
//! decompress_chunk / get_chunk / get_lazychunk / get_slice_buffer / frame_get_offsets /
//! vlmeta_get / get_cparams at the same time on every storage kind, and every byte is checked.
//! Other tests add a writer thread (update/append/vlmeta_update) while readers read: a reader
//! must see either the old or the new content of a chunk, never anything else, and nothing may
//! crash. A postfilter test checks that `nchunk` stays right for each reader under contention.
//!
//! Borrowed chunks (`needs_free == false`, plain and in-memory storage) are, as in c-blosc2,
//! valid only until the next mutation, so the tests with a writer only look into copies.

use b2frame::capi::chunk::*;
use b2frame::capi::codec::*;
use b2frame::capi::globals::blosc2_init;
use b2frame::capi::meta::*;
use b2frame::capi::schunk::*;
use b2frame::capi::types::*;
use std::ffi::{c_int, c_void, CString};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::common;
use common::scratch::Scratch;
use common::Rng;

const ITEMS: usize = 4096;
const CHUNK_BYTES: usize = ITEMS * 4;
const NCHUNKS: usize = 24;
const READERS: usize = 6;

/// Item `j` of chunk `i` at version `v` (every item encodes `(i, v)`).
fn item(i: usize, v: u64, j: usize) -> [u8; 4] {
    (((i as u32) << 20) ^ ((v as u32) << 12) ^ (j as u32 / 8)).to_le_bytes()
}

/// Chunk `i` at version `v`: compressible i32 items.
fn chunk_data(i: usize, v: u64) -> Vec<u8> {
    (0..ITEMS).flat_map(|j| item(i, v, j)).collect()
}

/// The version recorded in the first item of chunk `i`'s data.
fn version_of(i: usize, d: &[u8]) -> u64 {
    let x = u32::from_le_bytes(d[..4].try_into().unwrap());
    u64::from(((x ^ ((i as u32) << 20)) >> 12) & 0xff)
}

/// A shareable raw super-chunk pointer (the API under test makes sharing it sound).
#[derive(Clone, Copy)]
struct Sc(*mut blosc2_schunk);
// SAFETY: the point of the test: the C API synchronises every use of the handle.
unsafe impl Send for Sc {}
// SAFETY: as above.
unsafe impl Sync for Sc {}

impl Sc {
    /// The pointer (a method, so closures capture the whole `Sc`, not its field).
    fn p(self) -> *mut blosc2_schunk {
        self.0
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Plain,
    Memory,
    File,
    Sparse,
    /// `blosc2_schunk_from_buffer(copy=false)` of an in-memory cframe.
    FromBuffer,
    /// A cframe file reopened with `blosc2_schunk_open`.
    Reopened,
}

const KINDS: [Kind; 6] = [
    Kind::Plain,
    Kind::Memory,
    Kind::File,
    Kind::Sparse,
    Kind::FromBuffer,
    Kind::Reopened,
];

/// A path `name` in a fresh directory, which the returned guard removes when it is dropped
/// after the test passes (see `common::scratch`).
fn scratch(name: &str) -> (Scratch, PathBuf) {
    let d = common::scratch::dir(&format!("b2f-conc-{name}-"));
    let p = d.join(name);
    (d, p)
}

fn cleanup(p: &Option<(Scratch, PathBuf)>) {
    if let Some((_, p)) = p {
        let _ = std::fs::remove_file(p);
        let _ = std::fs::remove_dir_all(p);
    }
}

/// A new super-chunk of `kind` holding chunks `0..NCHUNKS` at version 0, with a vlmetalayer
/// "vl" = b"v0" and `nthreads` decompression threads.
fn build(
    kind: Kind,
    tag: &str,
    nthreads: i16,
    dparams: Option<blosc2_dparams>,
) -> (Sc, Option<(Scratch, PathBuf)>) {
    blosc2_init();
    let path = match kind {
        Kind::File | Kind::Sparse | Kind::Reopened => Some(scratch(&format!("{tag}-{kind:?}"))),
        _ => None,
    };
    let url = path
        .as_ref()
        .map(|(_, p)| CString::new(p.to_str().unwrap()).unwrap());
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.clevel = 5;
    cp.nthreads = nthreads;
    let mut dp = dparams.unwrap_or(BLOSC2_DPARAMS_DEFAULTS);
    dp.nthreads = nthreads;
    let mut st = common::storage(
        !matches!(kind, Kind::Plain | Kind::Sparse),
        url.as_deref(),
        &mut cp,
        &mut dp,
    );
    // SAFETY: a valid storage description whose pointers outlive the call.
    let mut sc = unsafe { blosc2_schunk_new(&mut st) };
    assert!(!sc.is_null(), "{kind:?}");
    for i in 0..NCHUNKS {
        let d = chunk_data(i, 0);
        // SAFETY: live schunk.
        let n = unsafe { append(sc, &d) };
        assert_eq!(n, i as i64 + 1);
    }
    let name = CString::new("vl").unwrap();
    let mut v0 = b"v0".to_vec();
    // SAFETY: live schunk, valid name and content.
    let rc =
        unsafe { blosc2_vlmeta_add(sc, name.as_ptr(), v0.as_mut_ptr(), 2, std::ptr::null_mut()) };
    assert!(rc >= 0);
    match kind {
        Kind::FromBuffer => {
            let mut buf = std::ptr::null_mut();
            let mut nf = false;
            // SAFETY: live schunk, valid out-pointers.
            let len = unsafe { blosc2_schunk_to_buffer(sc, &mut buf, &mut nf) };
            assert!(len > 0 && nf);
            // SAFETY: `buf` holds `len` bytes. Without `copy` the new schunk reads them in
            // place (c-blosc2's contract): they stay alive until `free_schunk` frees both.
            let from = unsafe { blosc2_schunk_from_buffer(buf, len, false) };
            assert!(!from.is_null());
            LENT.lock().unwrap().push((from as usize, buf as usize));
            // SAFETY: ours to free, not used afterwards.
            unsafe { blosc2_schunk_free(sc) };
            sc = from;
        }
        Kind::Reopened => {
            // SAFETY: ours to free.
            unsafe { blosc2_schunk_free(sc) };
            // SAFETY: a NUL-terminated path.
            sc = unsafe { blosc2_schunk_open(url.as_ref().unwrap().as_ptr()) };
            assert!(!sc.is_null());
        }
        _ => {}
    }
    (Sc(sc), path)
}

/// The buffers lent to `FromBuffer` super-chunks, by super-chunk address (both as `usize`).
static LENT: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());

/// Frees a super-chunk made by [`build`], then the buffer it was lent, if any.
///
/// # Safety
/// `sc` must be a live super-chunk no thread uses any more.
unsafe fn free_schunk(sc: Sc) {
    // SAFETY: by contract.
    unsafe { blosc2_schunk_free(sc.p()) };
    let mut lent = LENT.lock().unwrap();
    if let Some(i) = lent.iter().position(|&(s, _)| s == sc.p() as usize) {
        let (_, buf) = lent.swap_remove(i);
        // SAFETY: malloc'ed by `blosc2_schunk_to_buffer`, and its reader is gone.
        unsafe { libc_free(buf as *mut c_void) };
    }
}

/// Decompresses chunk `i` of `sc` into a new CHUNK_BYTES buffer; returns the result code and
/// the buffer.
///
/// # Safety
/// `sc` must be a live super-chunk.
unsafe fn decompress_chunk(sc: *mut blosc2_schunk, i: usize) -> (c_int, Vec<u8>) {
    // SAFETY: live schunk by contract.
    unsafe { common::decompress_chunk(sc, i, CHUNK_BYTES) }
}

/// Appends the CHUNK_BYTES bytes of `d` to `sc` as a new chunk; returns the call's result.
///
/// # Safety
/// `sc` must be a live super-chunk.
unsafe fn append(sc: *mut blosc2_schunk, d: &[u8]) -> i64 {
    assert_eq!(d.len(), CHUNK_BYTES);
    // SAFETY: live schunk by contract; `d` holds CHUNK_BYTES.
    unsafe { blosc2_schunk_append_buffer(sc, d.as_ptr() as *const c_void, CHUNK_BYTES as i32) }
}

extern "C" {
    #[link_name = "free"]
    fn libc_free(p: *mut c_void);
}

/// Decompresses a whole chunk with a private context (to check chunks handed out).
fn decompress_private(chunk: &[u8]) -> Vec<u8> {
    let dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
    let mut out = vec![0u8; CHUNK_BYTES];
    // SAFETY: `chunk` is a complete chunk; `out` has CHUNK_BYTES bytes.
    let n = unsafe {
        blosc2_decompress_ctx(
            dctx,
            chunk.as_ptr() as *const c_void,
            chunk.len() as i32,
            out.as_mut_ptr() as *mut c_void,
            CHUNK_BYTES as i32,
        )
    };
    // SAFETY: ours.
    unsafe { blosc2_free_ctx(dctx) };
    assert_eq!(n, CHUNK_BYTES as c_int);
    out
}

/// Decompresses a lazy chunk of `sc` (blocks read from its storage) with a private context
/// bound to it.
fn decompress_lazy(sc: Sc, chunk: &[u8]) -> Vec<u8> {
    let dp = blosc2_dparams {
        schunk: sc.p() as *mut c_void,
        ..BLOSC2_DPARAMS_DEFAULTS
    };
    let dctx = blosc2_create_dctx(dp);
    let mut out = vec![0u8; CHUNK_BYTES];
    // SAFETY: `chunk` is a lazy chunk of `sc`, which is live; `out` has CHUNK_BYTES bytes.
    let n = unsafe {
        blosc2_decompress_ctx(
            dctx,
            chunk.as_ptr() as *const c_void,
            chunk.len() as i32,
            out.as_mut_ptr() as *mut c_void,
            CHUNK_BYTES as i32,
        )
    };
    // SAFETY: ours.
    unsafe { blosc2_free_ctx(dctx) };
    assert_eq!(n, CHUNK_BYTES as c_int);
    out
}

/// Whether a chunk handed out is a lazy one (blosc2_flags bit 3).
fn is_lazy(c: &[u8]) -> bool {
    c.len() >= 32 && c[31] & 0x08 != 0
}

/// Fetches chunk `i` with get_chunk (or get_lazychunk); returns a copy, or None for a borrowed
/// chunk when `mutating` (another thread may free or move it: borrowed chunks are only valid
/// until the next mutation). Frees what needs freeing.
fn fetch(sc: Sc, i: usize, lazy: bool, mutating: bool) -> Option<Vec<u8>> {
    let mut p = std::ptr::null_mut();
    let mut nf = false;
    // SAFETY: live schunk, valid out-pointers.
    let n = unsafe {
        if lazy {
            blosc2_schunk_get_lazychunk(sc.p(), i as i64, &mut p, &mut nf)
        } else {
            blosc2_schunk_get_chunk(sc.p(), i as i64, &mut p, &mut nf)
        }
    };
    assert!(n > 0, "get_chunk({i}) = {n}");
    if !nf && mutating {
        return None;
    }
    // SAFETY: the library vouches for `n` bytes at `p` (borrowed ones until the next mutation,
    // and there is none while borrowed ones are read here).
    let v = unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec();
    if nf {
        // SAFETY: malloc'ed for us.
        unsafe { libc_free(p as *mut c_void) };
    }
    Some(v)
}

/// What every reader may check on an unchanging super-chunk.
struct Expected {
    chunks: Vec<Vec<u8>>,
    offsets: Option<Vec<i64>>,
}

fn snapshot(sc: Sc, kind: Kind) -> Expected {
    let chunks = (0..NCHUNKS)
        .map(|i| fetch(sc, i, false, false).unwrap())
        .collect();
    // SAFETY: live schunk.
    let p = unsafe { blosc2_frame_get_offsets(sc.p()) };
    let offsets = if kind == Kind::Plain {
        assert!(p.is_null());
        None
    } else {
        assert!(!p.is_null());
        // SAFETY: nchunks values, malloc'ed for us.
        let v = unsafe { std::slice::from_raw_parts(p, NCHUNKS) }.to_vec();
        // SAFETY: as above.
        unsafe { libc_free(p as *mut c_void) };
        Some(v)
    };
    Expected { chunks, offsets }
}

/// One random read, checked against version-0 data.
fn read_once(sc: Sc, rng: &mut Rng, exp: &Expected) {
    let i = rng.below(NCHUNKS as u64) as usize;
    match rng.below(8) {
        0 | 1 => {
            // SAFETY: live schunk.
            let (n, out) = unsafe { decompress_chunk(sc.p(), i) };
            assert_eq!(n, CHUNK_BYTES as c_int, "decompress_chunk({i}) = {n}");
            assert!(out == chunk_data(i, 0), "decompress_chunk({i})");
        }
        2 => assert!(
            fetch(sc, i, false, false).unwrap() == exp.chunks[i],
            "get_chunk({i})"
        ),
        3 => {
            // Files give lazy chunks (header, block starts, trailer), memory the chunk itself.
            let c = fetch(sc, i, true, false).unwrap();
            if is_lazy(&c) {
                assert!(
                    decompress_lazy(sc, &c) == decompress_private(&exp.chunks[i]),
                    "get_lazychunk({i})"
                );
            } else {
                assert!(c == exp.chunks[i], "get_lazychunk({i})");
            }
        }
        4 | 5 => {
            let total = (NCHUNKS * ITEMS) as u64;
            let start = rng.below(total);
            let stop = start + rng.below((total - start).min(3 * ITEMS as u64) + 1);
            let mut out = vec![0u8; (stop - start) as usize * 4];
            // SAFETY: live schunk; `out` holds (stop - start) items.
            let rc = unsafe {
                blosc2_schunk_get_slice_buffer(
                    sc.p(),
                    start as i64,
                    stop as i64,
                    out.as_mut_ptr() as *mut c_void,
                )
            };
            assert_eq!(rc, 0, "get_slice_buffer({start}, {stop}) = {rc}");
            for (k, got) in out.chunks_exact(4).enumerate() {
                let g = start as usize + k;
                let want = &item(g / ITEMS, 0, g % ITEMS)[..];
                assert_eq!(got, want, "slice item {g}");
            }
        }
        6 => {
            // SAFETY: live schunk.
            let p = unsafe { blosc2_frame_get_offsets(sc.p()) };
            match &exp.offsets {
                None => assert!(p.is_null()),
                Some(o) => {
                    assert!(!p.is_null());
                    // SAFETY: nchunks values, malloc'ed for us.
                    assert!(unsafe { std::slice::from_raw_parts(p, NCHUNKS) } == &o[..]);
                    // SAFETY: as above.
                    unsafe { libc_free(p as *mut c_void) };
                }
            }
        }
        _ => {
            vlmeta_check(sc, &[b"v0".to_vec()]);
            let mut cp = std::ptr::null_mut();
            // SAFETY: live schunk, valid out-pointer.
            assert_eq!(unsafe { blosc2_schunk_get_cparams(sc.p(), &mut cp) }, 0);
            // SAFETY: a calloc'ed struct for us.
            unsafe {
                assert_eq!((*cp).typesize, 4);
                assert_eq!((*cp).schunk, sc.p() as *mut c_void);
                libc_free(cp as *mut c_void);
            }
        }
    }
}

/// vlmetalayer "vl" holds one of `allowed`.
fn vlmeta_check(sc: Sc, allowed: &[Vec<u8>]) {
    let v = vlmeta_get(sc);
    assert!(allowed.contains(&v), "vlmeta {v:?}");
}

/// The content of vlmetalayer "vl".
fn vlmeta_get(sc: Sc) -> Vec<u8> {
    let name = CString::new("vl").unwrap();
    let mut p = std::ptr::null_mut();
    let mut len = 0;
    // SAFETY: live schunk, valid name and out-pointers.
    let rc = unsafe { blosc2_vlmeta_get(sc.p(), name.as_ptr(), &mut p, &mut len) };
    assert_eq!(rc, 0);
    // SAFETY: `len` bytes malloc'ed for us.
    let v = unsafe { std::slice::from_raw_parts(p, len as usize) }.to_vec();
    // SAFETY: as above.
    unsafe { libc_free(p as *mut c_void) };
    v
}

fn readers_only(kind: Kind, nthreads: i16) {
    let (sc, path) = build(kind, &format!("ro{nthreads}"), nthreads, None);
    let exp = Arc::new(snapshot(sc, kind));
    std::thread::scope(|s| {
        for t in 0..READERS {
            let exp = exp.clone();
            s.spawn(move || {
                let mut rng = Rng::new(t as u64 * 7 + nthreads as u64);
                for _ in 0..1000 {
                    read_once(sc, &mut rng, &exp);
                }
            });
        }
    });
    // SAFETY: no thread uses it any more.
    unsafe { free_schunk(sc) };
    cleanup(&path);
}

#[test]
fn readers_on_every_storage_kind() {
    for kind in KINDS {
        readers_only(kind, 1);
    }
}

#[test]
fn readers_with_block_parallel_decompression() {
    for kind in [Kind::Plain, Kind::File, Kind::Sparse] {
        readers_only(kind, 4);
    }
}

/// Readers while a writer updates chunks, appends new ones and rewrites the vlmetalayer.
fn readers_and_writer(kind: Kind) {
    let (sc, path) = build(kind, "rw", 1, None);
    let nchunks = Arc::new(AtomicUsize::new(NCHUNKS));
    let version = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let cctx = {
        let mut cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.typesize = 4;
        blosc2_create_cctx(cp) as usize
    };
    std::thread::scope(|s| {
        for t in 0..READERS {
            let (nchunks, version, done) = (nchunks.clone(), version.clone(), done.clone());
            s.spawn(move || {
                let mut rng = Rng::new(100 + t as u64);
                let mut reads = 0u64;
                while !done.load(Ordering::Acquire) || reads < 300 {
                    reads += 1;
                    let n = nchunks.load(Ordering::Acquire);
                    let i = rng.below(n as u64) as usize;
                    match rng.below(4) {
                        0 | 1 => {
                            // SAFETY: live schunk.
                            let (r, out) = unsafe { decompress_chunk(sc.p(), i) };
                            assert_eq!(r, CHUNK_BYTES as c_int, "{kind:?} chunk {i}");
                            let v = version_of(i, &out);
                            assert!(
                                v <= version.load(Ordering::Acquire),
                                "{kind:?} chunk {i} from the future: {v}"
                            );
                            assert!(out == chunk_data(i, v), "{kind:?} chunk {i} garbage");
                        }
                        2 => {
                            if let Some(c) = fetch(sc, i, t % 2 == 0, true) {
                                if is_lazy(&c) {
                                    // Its blocks are read from storage, which the writer
                                    // changes meanwhile (as in c-blosc2): only the header
                                    // is checked.
                                    let nb = i32::from_le_bytes([c[4], c[5], c[6], c[7]]);
                                    assert_eq!(nb as usize, CHUNK_BYTES, "{kind:?} lazy {i}");
                                    continue;
                                }
                                let d = decompress_private(&c);
                                assert!(
                                    d == chunk_data(i, version_of(i, &d)),
                                    "{kind:?} get_chunk {i}"
                                );
                            }
                        }
                        _ => {
                            let start = (i * ITEMS + rng.below(ITEMS as u64) as usize) as i64;
                            let len = ITEMS as i64;
                            let stop = (start + len).min((n * ITEMS) as i64);
                            let mut out = vec![0u8; (stop - start) as usize * 4];
                            // SAFETY: live schunk; `out` holds (stop - start) items.
                            let rc = unsafe {
                                blosc2_schunk_get_slice_buffer(
                                    sc.p(),
                                    start,
                                    stop,
                                    out.as_mut_ptr() as *mut c_void,
                                )
                            };
                            assert_eq!(rc, 0);
                            // Each chunk's part of the slice comes from one version of it.
                            let newest = version.load(Ordering::Acquire);
                            let mut seen: Option<(usize, u64)> = None;
                            for (k, got) in out.chunks_exact(4).enumerate() {
                                let g = start as usize + k;
                                let (c, j) = (g / ITEMS, g % ITEMS);
                                let v = version_of(c, got);
                                assert!(v <= newest, "{kind:?} slice item {g} from the future");
                                assert_eq!(got, &item(c, v, j)[..], "{kind:?} slice item {g}");
                                if let Some((pc, pv)) = seen {
                                    assert!(
                                        pc != c || pv == v,
                                        "{kind:?} slice mixes versions of chunk {c}"
                                    );
                                }
                                seen = Some((c, v));
                            }
                        }
                    }
                    if rng.below(16) == 0 {
                        // The writer publishes a version before storing it.
                        let content = vlmeta_get(sc);
                        let v = version.load(Ordering::Acquire);
                        let allowed: Vec<Vec<u8>> =
                            (0..=v).map(|v| format!("v{v}").into_bytes()).collect();
                        assert!(allowed.contains(&content), "{kind:?} vlmeta {content:?}");
                    }
                }
            });
        }
        s.spawn(|| {
            let name = CString::new("vl").unwrap();
            for round in 1..=40u64 {
                // Chunks of version `round` may appear from now on.
                version.store(round, Ordering::Release);
                let mut rng = Rng::new(round);
                for _ in 0..4 {
                    let i = rng.below(nchunks.load(Ordering::Acquire) as u64) as usize;
                    let d = chunk_data(i, round);
                    let mut c = vec![0u8; CHUNK_BYTES + 64];
                    // SAFETY: a live cctx; buffers of the given sizes.
                    let n = unsafe {
                        blosc2_compress_ctx(
                            cctx as *mut blosc2_context,
                            d.as_ptr() as *const c_void,
                            CHUNK_BYTES as i32,
                            c.as_mut_ptr() as *mut c_void,
                            c.len() as i32,
                        )
                    };
                    assert!(n > 0);
                    // SAFETY: live schunk; `c` is a complete chunk, copied.
                    let r = unsafe {
                        blosc2_schunk_update_chunk(sc.p(), i as i64, c.as_mut_ptr(), true)
                    };
                    assert!(r > 0, "{kind:?} update {i}: {r}");
                }
                if round % 4 == 0 {
                    let i = nchunks.load(Ordering::Acquire);
                    let d = chunk_data(i, 0);
                    // SAFETY: live schunk.
                    let r = unsafe { append(sc.p(), &d) };
                    assert_eq!(r, i as i64 + 1);
                    nchunks.store(i + 1, Ordering::Release);
                }
                let mut content = format!("v{round}").into_bytes();
                // SAFETY: live schunk, valid name and content.
                let rc = unsafe {
                    blosc2_vlmeta_update(
                        sc.p(),
                        name.as_ptr(),
                        content.as_mut_ptr(),
                        content.len() as i32,
                        std::ptr::null_mut(),
                    )
                };
                assert!(rc >= 0);
                std::thread::yield_now();
            }
            done.store(true, Ordering::Release);
        });
    });
    // The final state is exactly what the writer left.
    let n = nchunks.load(Ordering::Acquire);
    // SAFETY: the C struct is quiescent now.
    assert_eq!(unsafe { (*sc.p()).nchunks }, n as i64);
    for i in 0..n {
        // SAFETY: live schunk.
        let (r, out) = unsafe { decompress_chunk(sc.p(), i) };
        assert_eq!(r, CHUNK_BYTES as c_int);
        assert!(out == chunk_data(i, version_of(i, &out)));
    }
    // SAFETY: no thread uses them any more.
    unsafe {
        blosc2_free_ctx(cctx as *mut blosc2_context);
        free_schunk(sc);
    }
    cleanup(&path);
}

#[test]
fn readers_and_a_writer_on_every_storage_kind() {
    for kind in KINDS {
        readers_and_writer(kind);
    }
}

/// XORs every byte with the low byte of `nchunk` (and counts calls in `user_data`).
unsafe extern "C" fn xor_nchunk(p: *mut blosc2_postfilter_params) -> c_int {
    // SAFETY: the library passes a valid parameter block with `size` bytes in and out.
    unsafe {
        let p = &mut *p;
        let n = p.size as usize;
        let k = p.nchunk as u8;
        for j in 0..n {
            *p.output.add(j) = *p.input.add(j) ^ k;
        }
        (*(p.user_data as *const AtomicU64)).fetch_add(1, Ordering::Relaxed);
    }
    0
}

/// With a postfilter on the schunk's dctx, concurrent readers must each see their own
/// `nchunk` (the postfilter's view of `schunk->current_nchunk`).
#[test]
fn postfilter_sees_each_readers_nchunk() {
    for kind in [Kind::Plain, Kind::File] {
        let calls = Box::new(AtomicU64::new(0));
        let mut post = blosc2_postfilter_params {
            user_data: &*calls as *const AtomicU64 as *mut c_void,
            ..Default::default()
        };
        let mut dp = BLOSC2_DPARAMS_DEFAULTS;
        dp.postfilter = Some(xor_nchunk);
        dp.postparams = &mut post;
        let (sc, path) = build(kind, "post", 1, Some(dp));
        std::thread::scope(|s| {
            for t in 0..READERS {
                s.spawn(move || {
                    let mut rng = Rng::new(900 + t as u64);
                    for _ in 0..400 {
                        let i = rng.below(NCHUNKS as u64) as usize;
                        // SAFETY: live schunk.
                        let (r, out) = unsafe { decompress_chunk(sc.p(), i) };
                        assert_eq!(r, CHUNK_BYTES as c_int);
                        let want: Vec<u8> = chunk_data(i, 0).iter().map(|b| b ^ i as u8).collect();
                        assert!(
                            out == want,
                            "{kind:?} chunk {i} with another reader's nchunk"
                        );
                    }
                });
            }
        });
        assert!(calls.load(Ordering::Relaxed) >= (READERS * 400) as u64);
        // SAFETY: no thread uses it any more.
        unsafe { free_schunk(sc) };
        cleanup(&path);
    }
}

/// What the re-entrant callbacks below record.
struct Reentry {
    sc: std::sync::atomic::AtomicPtr<blosc2_schunk>,
    /// Result of the call back into the same super-chunk (`i64::MIN`: not made yet).
    inner: std::sync::atomic::AtomicI64,
    /// Result of a second, read-only call back (`i64::MIN`: not made yet).
    inner_read: std::sync::atomic::AtomicI64,
}

impl Reentry {
    fn new() -> Box<Reentry> {
        Box::new(Reentry {
            sc: std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
            inner: std::sync::atomic::AtomicI64::new(i64::MIN),
            inner_read: std::sync::atomic::AtomicI64::new(i64::MIN),
        })
    }
}

/// A postfilter that calls decompress_chunk and get_cparams on its own super-chunk once.
unsafe extern "C" fn reentrant_post(p: *mut blosc2_postfilter_params) -> c_int {
    // SAFETY: the library passes a valid parameter block; `user_data` is our `Reentry`.
    unsafe {
        let p = &mut *p;
        let r = &*(p.user_data as *const Reentry);
        let sc = r.sc.load(Ordering::Acquire);
        if !sc.is_null() && r.inner.load(Ordering::Acquire) == i64::MIN {
            let (rc, _) = decompress_chunk(sc, 1);
            r.inner.store(i64::from(rc), Ordering::Release);
            let mut cp = std::ptr::null_mut();
            let rc = blosc2_schunk_get_cparams(sc, &mut cp);
            if rc == 0 {
                libc_free(cp as *mut c_void);
            }
            r.inner_read.store(i64::from(rc), Ordering::Release);
        }
        std::ptr::copy_nonoverlapping(p.input, p.output, p.size as usize);
    }
    0
}

/// A prefilter that calls append_buffer and get_chunk on its own super-chunk once.
unsafe extern "C" fn reentrant_pre(p: *mut blosc2_prefilter_params) -> c_int {
    // SAFETY: the library passes a valid parameter block; `user_data` is our `Reentry`.
    unsafe {
        let p = &mut *p;
        let r = &*(p.user_data as *const Reentry);
        let sc = r.sc.load(Ordering::Acquire);
        if !sc.is_null() && r.inner.load(Ordering::Acquire) == i64::MIN {
            let d = chunk_data(9, 9);
            let n = append(sc, &d);
            r.inner.store(n, Ordering::Release);
            let (mut c, mut nf) = (std::ptr::null_mut(), false);
            let rc = blosc2_schunk_get_chunk(sc, 0, &mut c, &mut nf);
            r.inner_read.store(i64::from(rc), Ordering::Release);
        }
        std::ptr::copy_nonoverlapping(p.input, p.output, p.output_size as usize);
    }
    0
}

/// Callbacks that call back into their own super-chunk get an error where that would
/// deadlock (the dctx or the mutation is theirs already) instead of hanging; a read from a
/// postfilter or a prefilter works. The outer call is not disturbed.
#[test]
fn reentrant_callbacks_fail_instead_of_deadlocking() {
    let post = Reentry::new();
    let mut pp = blosc2_postfilter_params {
        user_data: &*post as *const Reentry as *mut c_void,
        ..Default::default()
    };
    let mut dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.postfilter = Some(reentrant_post);
    dp.postparams = &mut pp;
    let (sc, path) = build(Kind::Plain, "reentry", 1, Some(dp));
    post.sc.store(sc.p(), Ordering::Release);
    // SAFETY: live schunk.
    let (rc, out) = unsafe { decompress_chunk(sc.p(), 3) };
    assert_eq!(rc, CHUNK_BYTES as c_int);
    assert!(out == chunk_data(3, 0));
    assert_eq!(
        post.inner.load(Ordering::Acquire),
        i64::from(BLOSC2_ERROR_FAILURE)
    );
    assert_eq!(post.inner_read.load(Ordering::Acquire), 0);
    // SAFETY: ours, unused elsewhere.
    unsafe { free_schunk(sc) };
    cleanup(&path);

    let pre = Reentry::new();
    let mut prp = blosc2_prefilter_params {
        user_data: &*pre as *const Reentry as *mut c_void,
        ..Default::default()
    };
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.nthreads = 1;
    cp.prefilter = Some(reentrant_pre);
    cp.preparams = &mut prp;
    let mut st = common::storage(false, None, &mut cp, std::ptr::null_mut());
    // SAFETY: a valid storage description.
    let sc = unsafe { blosc2_schunk_new(&mut st) };
    assert!(!sc.is_null());
    let d = chunk_data(0, 0);
    // SAFETY: live schunk; `d` holds CHUNK_BYTES (appended before the prefilter is armed).
    assert_eq!(unsafe { append(sc, &d) }, 1);
    pre.sc.store(sc, Ordering::Release);
    let d = chunk_data(1, 0);
    // SAFETY: as above.
    assert_eq!(unsafe { append(sc, &d) }, 2);
    assert_eq!(
        pre.inner.load(Ordering::Acquire),
        i64::from(BLOSC2_ERROR_FAILURE)
    );
    // A read from the prefilter works: the chunk is compressed outside the exclusive lock.
    assert!(pre.inner_read.load(Ordering::Acquire) > 0);
    // SAFETY: the C struct is quiescent.
    assert_eq!(unsafe { (*sc).nchunks }, 2);
    // SAFETY: ours.
    unsafe { blosc2_schunk_free(sc) };
}

/// Another handle grows the frame between two reading phases: the readers of the stale
/// handle all notice at once and re-sync it (under the exclusive lock) without tripping over
/// each other, then read the new chunks.
#[test]
fn concurrent_readers_resync_a_stale_handle() {
    for kind in [Kind::File, Kind::Sparse] {
        let (writer, path) = build(kind, "stale", 1, None);
        let url = CString::new(path.as_ref().unwrap().1.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        let reader = Sc(unsafe { blosc2_schunk_open(url.as_ptr()) });
        assert!(!reader.p().is_null());
        let phase = |n: usize| {
            std::thread::scope(|s| {
                for t in 0..READERS {
                    s.spawn(move || {
                        let mut rng = Rng::new(500 + t as u64);
                        // The first read of each thread may hit a chunk only the re-sync shows.
                        for k in 0..200 {
                            let i = if k == 0 {
                                n - 1 - t % 4
                            } else {
                                rng.below(n as u64) as usize
                            };
                            // SAFETY: live schunk.
                            let (rc, out) = unsafe { decompress_chunk(reader.p(), i) };
                            assert_eq!(rc, CHUNK_BYTES as c_int, "{kind:?} chunk {i} of {n}");
                            assert!(out == chunk_data(i, 0), "{kind:?} chunk {i}");
                        }
                    });
                }
            });
        };
        phase(NCHUNKS);
        for i in NCHUNKS..NCHUNKS + 8 {
            let d = chunk_data(i, 0);
            // SAFETY: the writer handle is used by this thread only.
            let n = unsafe { append(writer.p(), &d) };
            assert_eq!(n, i as i64 + 1);
        }
        phase(NCHUNKS + 8);
        // SAFETY: quiescent now.
        assert_eq!(unsafe { (*reader.p()).nchunks }, (NCHUNKS + 8) as i64);
        // SAFETY: ours, unused elsewhere.
        unsafe {
            blosc2_schunk_free(reader.p());
            free_schunk(writer);
        }
        cleanup(&path);
    }
}
