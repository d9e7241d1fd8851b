//! A plain (frame == NULL) super-chunk takes Blosc1-style chunks with a 16-byte header, as
//! c-blosc2 3.3.5 does (its test_schunk_min_header_chunk): a 16-byte memcpyed chunk of 0 bytes
//! (append, update, insert), and a 40-byte one whose payload byte at 0x1e is not read as
//! flags2. The same calls run through our C API and the reference's (dlopen) and must give
//! the same results, counters and bytes back. No frame can hold a 0-byte chunk: a frame refuses
//! it on append, and serialising a plain super-chunk holding one fails without writing
//! anything (c-blosc2 writes a frame there that it cannot reopen).

use b2frame::capi::schunk::*;
use b2frame::capi::types::*;
use std::ffi::{c_char, c_int, c_void, CString};

use crate::common;

type New = unsafe extern "C" fn(*mut blosc2_storage) -> *mut blosc2_schunk;
type Free = unsafe extern "C" fn(*mut blosc2_schunk) -> c_int;
type Put = unsafe extern "C" fn(*mut blosc2_schunk, *mut u8, bool) -> i64;
type PutAt = unsafe extern "C" fn(*mut blosc2_schunk, i64, *mut u8, bool) -> i64;
type Dec = unsafe extern "C" fn(*mut blosc2_schunk, i64, *mut c_void, i32) -> c_int;
type Get = unsafe extern "C" fn(*mut blosc2_schunk, i64, *mut *mut u8, *mut bool) -> c_int;

/// The super-chunk calls of one library.
struct Api {
    new: New,
    free: Free,
    append: Put,
    insert: PutAt,
    update: PutAt,
    decompress: Dec,
    get_chunk: Get,
    /// Frees what this library allocated (on Windows the reference's C runtime is another).
    free_mem: unsafe fn(*mut c_void),
}

fn ours() -> Api {
    Api {
        new: blosc2_schunk_new,
        free: blosc2_schunk_free,
        append: blosc2_schunk_append_chunk,
        insert: blosc2_schunk_insert_chunk,
        update: blosc2_schunk_update_chunk,
        decompress: blosc2_schunk_decompress_chunk,
        get_chunk: blosc2_schunk_get_chunk,
        free_mem: common::reference::free_ours,
    }
}

fn reference() -> Api {
    let r = common::reference::reference();
    // SAFETY: each symbol has exactly this C signature in blosc2.h 3.3.5.
    unsafe {
        Api {
            new: std::mem::transmute::<*mut c_void, New>(r.sym("blosc2_schunk_new")),
            free: std::mem::transmute::<*mut c_void, Free>(r.sym("blosc2_schunk_free")),
            append: std::mem::transmute::<*mut c_void, Put>(r.sym("blosc2_schunk_append_chunk")),
            insert: std::mem::transmute::<*mut c_void, PutAt>(r.sym("blosc2_schunk_insert_chunk")),
            update: std::mem::transmute::<*mut c_void, PutAt>(r.sym("blosc2_schunk_update_chunk")),
            decompress: std::mem::transmute::<*mut c_void, Dec>(
                r.sym("blosc2_schunk_decompress_chunk"),
            ),
            get_chunk: std::mem::transmute::<*mut c_void, Get>(r.sym("blosc2_schunk_get_chunk")),
            free_mem: common::reference::free_ref,
        }
    }
}

/// A Blosc1-style memcpyed chunk (16-byte header, no extended header) with `payload` bytes.
/// With a payload of 24, the byte at 0x1e (flags2 in an extended header) says VL blocks.
fn blosc1_chunk(payload: usize) -> Vec<u8> {
    let cbytes = 16 + payload;
    let mut c = vec![0u8; cbytes];
    c[0] = 5; // BLOSC2_VERSION_FORMAT
    c[1] = 1;
    c[2] = BLOSC_MEMCPYED as u8;
    c[3] = 1;
    c[4..8].copy_from_slice(&(payload as i32).to_le_bytes());
    c[8..12].copy_from_slice(&(payload.max(1) as i32).to_le_bytes());
    c[12..16].copy_from_slice(&(cbytes as i32).to_le_bytes());
    for (i, b) in c[16..].iter_mut().enumerate() {
        *b = 0x40 + i as u8;
    }
    if cbytes > 0x1e {
        c[0x1e] = BLOSC2_VL_BLOCKS as u8;
    }
    c
}

/// What a history of calls gave: each call's result, then nchunks, nbytes, cbytes,
/// chunksize, flags2, and per chunk (decompress result, the first output bytes, the chunk).
type Outcome = (Vec<i64>, [i64; 5], Vec<(c_int, Vec<u8>, Vec<u8>)>);

fn plain_history(api: &Api, payload: usize) -> Outcome {
    let mut st = BLOSC2_STORAGE_DEFAULTS;
    // SAFETY: a valid storage description (plain: not contiguous, no urlpath).
    let sc = unsafe { (api.new)(&mut st) };
    assert!(!sc.is_null());
    let mut rcs = Vec::new();
    // SAFETY: live schunk; every chunk is complete and copied (copy=true).
    unsafe {
        rcs.push((api.append)(sc, blosc1_chunk(payload).as_mut_ptr(), true));
        rcs.push((api.append)(sc, blosc1_chunk(payload).as_mut_ptr(), true));
        rcs.push((api.update)(
            sc,
            0,
            blosc1_chunk(payload).as_mut_ptr(),
            true,
        ));
        rcs.push((api.insert)(
            sc,
            1,
            blosc1_chunk(payload).as_mut_ptr(),
            true,
        ));
        let s = &*sc;
        let counters = [
            s.nchunks,
            s.nbytes,
            s.cbytes,
            i64::from(s.chunksize),
            i64::from(s.flags2),
        ];
        let mut chunks = Vec::new();
        for i in 0..s.nchunks {
            let mut out = vec![0xeeu8; 64];
            let rc = (api.decompress)(sc, i, out.as_mut_ptr() as *mut c_void, 64);
            out.truncate(rc.max(0) as usize);
            let (mut c, mut nf) = (std::ptr::null_mut(), false);
            let n = (api.get_chunk)(sc, i, &mut c, &mut nf);
            assert!(n > 0, "get_chunk({i}) -> {n}");
            let bytes = std::slice::from_raw_parts(c, n as usize).to_vec();
            if nf {
                (api.free_mem)(c as *mut c_void);
            }
            chunks.push((rc, out, bytes));
        }
        (api.free)(sc);
        (rcs, counters, chunks)
    }
}

#[test]
fn min_header_chunk_in_a_plain_schunk_like_cblosc2() {
    b2frame::capi::globals::blosc2_init();
    let (o, r) = (plain_history(&ours(), 0), plain_history(&reference(), 0));
    assert_eq!(o, r);
    // Pinned: three chunks of 16 bytes, 0 bytes each; each decompresses to nothing and
    // get_chunk hands back the 16 bytes stored.
    assert_eq!(o.0, [1, 2, 2, 3]);
    assert_eq!(o.1[..3], [3, 0, 48]);
    for (rc, out, bytes) in &o.2 {
        assert_eq!(*rc, 0);
        assert!(out.is_empty());
        assert_eq!(bytes, &blosc1_chunk(0));
    }
}

#[test]
fn blosc1_header_payload_is_not_flags2() {
    b2frame::capi::globals::blosc2_init();
    let (o, r) = (plain_history(&ours(), 24), plain_history(&reference(), 24));
    assert_eq!(o, r);
    assert_eq!(o.0, [1, 2, 2, 3]);
    assert_eq!(
        o.1[4] & i64::from(BLOSC2_VL_BLOCKS),
        0,
        "flags2 from the payload"
    );
    for (rc, out, bytes) in &o.2 {
        assert_eq!(*rc, 24);
        assert_eq!(out, &blosc1_chunk(24)[16..]);
        assert_eq!(bytes, &blosc1_chunk(24));
    }
}

/// Default storage, `contiguous` or not, at `url` (None: in memory).
fn storage(contiguous: bool, url: Option<&CString>) -> blosc2_storage {
    let mut st = BLOSC2_STORAGE_DEFAULTS;
    st.contiguous = contiguous;
    st.urlpath = url.map_or(std::ptr::null_mut(), |u| u.as_ptr() as *mut c_char);
    st
}

/// Frames refuse a 0-byte chunk; a plain super-chunk holding one is not serialised into a
/// frame by to_buffer, to_file, append_file or copy (nothing written, every chunk kept).
#[test]
fn zero_byte_chunk_never_reaches_a_frame() {
    b2frame::capi::globals::blosc2_init();
    // Removed when the test passes (see `common::scratch`).
    let dir = common::scratch::dir("b2frame-minhdr-");
    let cpath = |n: &str| CString::new(dir.join(n).to_str().unwrap()).unwrap();
    // SAFETY: every schunk is live where used; chunks are complete and copied; paths are
    // NUL-terminated; storage descriptions are valid for the calls.
    unsafe {
        for (contiguous, url) in [
            (true, None),
            (true, Some("f.b2frame")),
            (false, Some("s.b2frame")),
        ] {
            let u = url.map(cpath);
            let mut st = storage(contiguous, u.as_ref());
            let sc = blosc2_schunk_new(&mut st);
            assert!(!sc.is_null());
            assert!(blosc2_schunk_append_chunk(sc, blosc1_chunk(24).as_mut_ptr(), true) == 1);
            let rc = blosc2_schunk_append_chunk(sc, blosc1_chunk(0).as_mut_ptr(), true);
            assert_eq!(rc, i64::from(BLOSC2_ERROR_INVALID_PARAM), "{url:?}");
            assert_eq!((*sc).nchunks, 1);
            blosc2_schunk_free(sc);
        }

        let mut st = BLOSC2_STORAGE_DEFAULTS;
        let sc = blosc2_schunk_new(&mut st);
        assert_eq!(
            blosc2_schunk_append_chunk(sc, blosc1_chunk(24).as_mut_ptr(), true),
            1
        );
        assert_eq!(
            blosc2_schunk_append_chunk(sc, blosc1_chunk(0).as_mut_ptr(), true),
            2
        );
        let (mut buf, mut nf) = (std::ptr::null_mut(), false);
        assert_eq!(
            blosc2_schunk_to_buffer(sc, &mut buf, &mut nf),
            i64::from(BLOSC2_ERROR_INVALID_PARAM)
        );
        assert!(buf.is_null());
        let f = cpath("out.b2frame");
        assert_eq!(
            blosc2_schunk_to_file(sc, f.as_ptr()),
            i64::from(BLOSC2_ERROR_INVALID_PARAM)
        );
        assert_eq!(
            blosc2_schunk_append_file(sc, f.as_ptr()),
            i64::from(BLOSC2_ERROR_INVALID_PARAM)
        );
        assert!(!dir.join("out.b2frame").exists());
        for (contiguous, url) in [
            (true, None),
            (true, Some("c.b2frame")),
            (false, Some("d.b2frame")),
        ] {
            let u = url.map(cpath);
            let mut st = storage(contiguous, u.as_ref());
            assert!(blosc2_schunk_copy(sc, &mut st).is_null(), "{url:?}");
            if let Some(n) = url {
                assert!(!dir.join(n).exists(), "{n} written");
            }
        }
        // A plain copy takes it; the source is intact.
        let mut st = BLOSC2_STORAGE_DEFAULTS;
        let cp = blosc2_schunk_copy(sc, &mut st);
        assert!(!cp.is_null());
        assert_eq!((*cp).nchunks, 2);
        blosc2_schunk_free(cp);
        assert_eq!((*sc).nchunks, 2);
        assert_eq!((*sc).nbytes, 24);
        let mut out = [0u8; 24];
        assert_eq!(
            blosc2_schunk_decompress_chunk(sc, 1, out.as_mut_ptr() as *mut c_void, 24),
            0
        );
        assert_eq!(
            blosc2_schunk_decompress_chunk(sc, 0, out.as_mut_ptr() as *mut c_void, 24),
            24
        );
        assert_eq!(out[..], blosc1_chunk(24)[16..]);
        // Without the 0-byte chunk it serialises and reopens.
        assert_eq!(blosc2_schunk_delete_chunk(sc, 1), 1);
        let len = blosc2_schunk_to_buffer(sc, &mut buf, &mut nf);
        assert!(len > 0 && nf);
        let back = blosc2_schunk_from_buffer(buf, len, true);
        assert!(!back.is_null());
        assert_eq!((*back).nchunks, 1);
        blosc2_schunk_free(back);
        libc::free(buf as *mut c_void);
        blosc2_schunk_free(sc);
    }
}
