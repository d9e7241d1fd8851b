//! Lazy chunks against the real c-blosc2 3.3.5 (dlopened): `blosc2_schunk_get_lazychunk` on a
//! frame on storage (cframe file, cframe at an offset inside a file, sframe directory) returns
//! the chunk's header flagged lazy (blosc2_flags bit 3), its block starts, then `int32 nchunk |
//! int64 offset | int32 csize[nblocks]`. The frames are written by c-blosc2 from chunks it
//! compressed (several blocks and a leftover, two compression threads, memcpyed, a zstd
//! dictionary, DELTA, unsplit streams, a ZERO special offset, VL blocks with and without a
//! dictionary); each library opens them and:
//!
//! - the lazy chunks are byte-identical (except the four bytes per block of a memcpyed chunk's
//!   absent block-start table, which c-blosc2 leaves uninitialised);
//! - each library decompresses, `getitem`s and (VL blocks) `vldecompress_block`s its own lazy
//!   chunks *and the other library's*, through a context bound to its own super-chunk, to the
//!   original data;
//! - in-memory frames return the chunk itself, as c-blosc2 does.

#![allow(clippy::missing_transmute_annotations)]

use crate::common;

use b2frame::capi::chunk::*;
use b2frame::capi::codec::*;
use b2frame::capi::schunk::*;
use b2frame::capi::types::*;
use common::reference::reference;
use std::ffi::{c_char, c_int, c_void, CString};

type Sc = *mut blosc2_schunk;
type Ctx = *mut blosc2_context;

struct Api {
    name: &'static str,
    new: unsafe extern "C" fn(*mut blosc2_storage) -> Sc,
    open: unsafe extern "C" fn(*const c_char) -> Sc,
    open_offset: unsafe extern "C" fn(*const c_char, i64) -> Sc,
    free: unsafe extern "C" fn(Sc) -> c_int,
    append_chunk: unsafe extern "C" fn(Sc, *mut u8, bool) -> i64,
    get_lazychunk: unsafe extern "C" fn(Sc, i64, *mut *mut u8, *mut bool) -> c_int,
    create_cctx: unsafe extern "C" fn(blosc2_cparams) -> Ctx,
    create_dctx: unsafe extern "C" fn(blosc2_dparams) -> Ctx,
    free_ctx: unsafe extern "C" fn(Ctx),
    compress_ctx: unsafe extern "C" fn(Ctx, *const c_void, i32, *mut c_void, i32) -> c_int,
    vlcompress_ctx:
        unsafe extern "C" fn(Ctx, *const *const c_void, *const i32, i32, *mut c_void, i32) -> c_int,
    decompress_ctx: unsafe extern "C" fn(Ctx, *const c_void, i32, *mut c_void, i32) -> c_int,
    getitem_ctx:
        unsafe extern "C" fn(Ctx, *const c_void, i32, c_int, c_int, *mut c_void, i32) -> c_int,
    vldecompress_block_ctx:
        unsafe extern "C" fn(Ctx, *const c_void, i32, i32, *mut *mut u8, *mut i32) -> c_int,
    get_slice_buffer: unsafe extern "C" fn(Sc, i64, i64, *mut c_void) -> c_int,
}

fn ours() -> Api {
    b2frame::capi::globals::blosc2_init();
    Api {
        name: "b2frame",
        new: blosc2_schunk_new,
        open: blosc2_schunk_open,
        open_offset: blosc2_schunk_open_offset,
        free: blosc2_schunk_free,
        append_chunk: blosc2_schunk_append_chunk,
        get_lazychunk: blosc2_schunk_get_lazychunk,
        create_cctx: blosc2_create_cctx,
        create_dctx: blosc2_create_dctx,
        free_ctx: blosc2_free_ctx,
        compress_ctx: blosc2_compress_ctx,
        vlcompress_ctx: blosc2_vlcompress_ctx,
        decompress_ctx: blosc2_decompress_ctx,
        getitem_ctx: blosc2_getitem_ctx,
        vldecompress_block_ctx: blosc2_vldecompress_block_ctx,
        get_slice_buffer: blosc2_schunk_get_slice_buffer,
    }
}

fn theirs() -> Api {
    let r = reference();
    // SAFETY: each symbol has the C signature blosc2.h 3.3.5 declares for it.
    unsafe {
        Api {
            name: "c-blosc2",
            new: std::mem::transmute(r.sym("blosc2_schunk_new")),
            open: std::mem::transmute(r.sym("blosc2_schunk_open")),
            open_offset: std::mem::transmute(r.sym("blosc2_schunk_open_offset")),
            free: std::mem::transmute(r.sym("blosc2_schunk_free")),
            append_chunk: std::mem::transmute(r.sym("blosc2_schunk_append_chunk")),
            get_lazychunk: std::mem::transmute(r.sym("blosc2_schunk_get_lazychunk")),
            create_cctx: std::mem::transmute(r.sym("blosc2_create_cctx")),
            create_dctx: std::mem::transmute(r.sym("blosc2_create_dctx")),
            free_ctx: std::mem::transmute(r.sym("blosc2_free_ctx")),
            compress_ctx: std::mem::transmute(r.sym("blosc2_compress_ctx")),
            vlcompress_ctx: std::mem::transmute(r.sym("blosc2_vlcompress_ctx")),
            decompress_ctx: std::mem::transmute(r.sym("blosc2_decompress_ctx")),
            getitem_ctx: std::mem::transmute(r.sym("blosc2_getitem_ctx")),
            vldecompress_block_ctx: std::mem::transmute(r.sym("blosc2_vldecompress_block_ctx")),
            get_slice_buffer: std::mem::transmute(r.sym("blosc2_schunk_get_slice_buffer")),
        }
    }
}

/// Deterministic data: a slow ramp with a noisy low byte (compresses, not too well).
fn data(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9) | 1;
    (0..len)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if i % 4 == 0 {
                (x & 7) as u8
            } else {
                (i / 997) as u8
            }
        })
        .collect()
}

/// A chunk compressed by c-blosc2 with `cp`.
fn compress(t: &Api, cp: blosc2_cparams, src: &[u8]) -> Vec<u8> {
    // SAFETY: C calls with valid buffers.
    unsafe {
        let cctx = (t.create_cctx)(cp);
        assert!(!cctx.is_null());
        let mut out = vec![0u8; src.len() + 64 + 32 * 1024];
        let n = (t.compress_ctx)(
            cctx,
            src.as_ptr() as *const c_void,
            src.len() as i32,
            out.as_mut_ptr() as *mut c_void,
            out.len() as i32,
        );
        (t.free_ctx)(cctx);
        assert!(n > 0, "c-blosc2 compress: {n}");
        out.truncate(n as usize);
        out
    }
}

fn cparams(compcode: u8, clevel: u8, typesize: i32, blocksize: i32) -> blosc2_cparams {
    blosc2_cparams {
        compcode,
        clevel,
        typesize,
        blocksize,
        nthreads: 1,
        ..BLOSC2_CPARAMS_DEFAULTS
    }
}

/// The regular chunks: (name, original data, chunk bytes).
fn regular_chunks(t: &Api) -> Vec<(&'static str, Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let d = data(200_000, 1);
    out.push((
        "blosclz leftover",
        d.clone(),
        compress(t, cparams(0, 5, 4, 16384), &d),
    ));
    let mut cp = cparams(1, 5, 4, 8192);
    cp.nthreads = 2;
    let d = data(300_000, 2);
    out.push(("lz4 two threads", d.clone(), compress(t, cp, &d)));
    let d = data(50_000, 3);
    out.push((
        "memcpyed",
        d.clone(),
        compress(t, cparams(1, 0, 4, 8192), &d),
    ));
    let mut cp = cparams(5, 5, 4, 16384);
    cp.use_dict = 1;
    let d = data(400_000, 4);
    out.push(("zstd dict", d.clone(), compress(t, cp, &d)));
    let mut cp = cparams(0, 7, 8, 8192);
    cp.filters = [0, 0, 0, 0, 3, 1];
    let d = data(100_000, 5);
    out.push(("delta shuffle", d.clone(), compress(t, cp, &d)));
    let mut cp = cparams(1, 5, 4, 4096);
    cp.splitmode = 2; // BLOSC_NEVER_SPLIT
    let d = data(70_004, 6);
    out.push(("unsplit", d.clone(), compress(t, cp, &d)));
    for (name, _, c) in &out {
        assert!(c.len() >= 32, "{name}");
    }
    assert_eq!(out[2].2[2] & 0x02, 0x02, "memcpyed");
    assert_eq!(out[3].2[31] & 0x01, 0x01, "dict");
    out
}

/// VL-block chunks: (name, blocks, chunk bytes).
/// A VL-block chunk: name, its blocks, its bytes.
type VlChunk = (&'static str, Vec<Vec<u8>>, Vec<u8>);

fn vl_chunks(t: &Api) -> Vec<VlChunk> {
    let mut out = Vec::new();
    for (name, compcode, use_dict) in [("vl lz4", 1u8, 0), ("vl lz4 dict", 1, 1)] {
        // Many small similar records make c-blosc2 keep a dictionary; a few larger ones not.
        let blocks: Vec<Vec<u8>> = if use_dict == 1 {
            (0..64)
                .map(|k| {
                    format!(
                        "{{\"id\":\"item-{k:03}\",\"vegan\":\"{}\",\"percent\":{}.5,\"text\":\"NUMBER {k:03}\",\"labels\":null,\"origins\":null,\"quantity\":null,\"nova_group\":null}}",
                        if k % 3 == 0 { "maybe" } else { "yes" },
                        k % 20
                    )
                    .into_bytes()
                })
                .collect()
        } else {
            (0..5)
                .map(|k| {
                    let mut b = format!("record {k}: ").repeat(200 + 150 * k).into_bytes();
                    b.extend(data(3000 + 500 * k, 10 + k as u32));
                    b
                })
                .collect()
        };
        let mut cp = cparams(compcode, 5, 1, 0);
        cp.use_dict = use_dict;
        // SAFETY: C calls with valid buffers.
        let chunk = unsafe {
            let cctx = (t.create_cctx)(cp);
            let ptrs: Vec<*const c_void> =
                blocks.iter().map(|b| b.as_ptr() as *const c_void).collect();
            let sizes: Vec<i32> = blocks.iter().map(|b| b.len() as i32).collect();
            let mut dst = vec![0u8; 200_000];
            let n = (t.vlcompress_ctx)(
                cctx,
                ptrs.as_ptr(),
                sizes.as_ptr(),
                blocks.len() as i32,
                dst.as_mut_ptr() as *mut c_void,
                dst.len() as i32,
            );
            (t.free_ctx)(cctx);
            assert!(n > 0, "{name}: {n}");
            dst.truncate(n as usize);
            dst
        };
        assert_eq!(chunk[31] & 0x01, use_dict as u8, "{name} dict flag");
        out.push((name, blocks, chunk));
    }
    out
}

/// Writes `chunks` into a new frame at `url` with c-blosc2.
fn write_frame(t: &Api, url: &CString, contiguous: bool, chunks: &[&[u8]]) {
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    let mut dp = BLOSC2_DPARAMS_DEFAULTS;
    let mut st = common::storage(contiguous, Some(url), &mut cp, &mut dp);
    // SAFETY: C calls with valid arguments.
    unsafe {
        let sc = (t.new)(&mut st);
        assert!(!sc.is_null());
        for (i, c) in chunks.iter().enumerate() {
            let mut c = c.to_vec();
            assert_eq!((t.append_chunk)(sc, c.as_mut_ptr(), true), i as i64 + 1);
        }
        (t.free)(sc);
    }
}

/// Chunk `i`'s lazy chunk from `api` (copied; freed if needed).
fn lazy(api: &Api, sc: Sc, i: i64) -> Vec<u8> {
    let (mut p, mut nf) = (std::ptr::null_mut(), false);
    // SAFETY: live schunk, valid out-pointers; the chunk is `n` bytes.
    unsafe {
        let n = (api.get_lazychunk)(sc, i, &mut p, &mut nf);
        assert!(n > 0, "{} get_lazychunk({i}) = {n}", api.name);
        let v = std::slice::from_raw_parts(p, n as usize).to_vec();
        if nf {
            common::reference::free_ref(p as *mut c_void);
        }
        v
    }
}

/// Lazy chunks compare equal, except the block-start table of memcpyed ones.
fn same_lazy(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() || a.len() < 32 {
        return false;
    }
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    if a[2] & 0x02 != 0 && a[31] & 0x08 != 0 {
        let nb = i32::from_le_bytes(a[4..8].try_into().unwrap()) as usize;
        let bs = i32::from_le_bytes(a[8..12].try_into().unwrap()) as usize;
        let n = nb.div_ceil(bs);
        a[32..32 + 4 * n].fill(0);
        b[32..32 + 4 * n].fill(0);
    }
    a == b
}

/// A decompression context of `api` bound to `sc`.
fn dctx(api: &Api, sc: Sc) -> Ctx {
    let dp = blosc2_dparams {
        schunk: sc as *mut c_void,
        ..BLOSC2_DPARAMS_DEFAULTS
    };
    // SAFETY: a plain C call.
    let c = unsafe { (api.create_dctx)(dp) };
    assert!(!c.is_null());
    c
}

/// Decompresses and getitems `lz` (a lazy chunk of chunk `name`) with `api` through `ctx`.
fn check_decode(api: &Api, ctx: Ctx, lz: &[u8], want: &[u8], what: &str, getitem: bool) {
    let mut out = vec![0u8; want.len()];
    // SAFETY: valid buffers; `ctx` is bound to a live super-chunk holding the chunk.
    unsafe {
        let n = (api.decompress_ctx)(
            ctx,
            lz.as_ptr() as *const c_void,
            lz.len() as i32,
            out.as_mut_ptr() as *mut c_void,
            out.len() as i32,
        );
        assert_eq!(n as usize, want.len(), "{} decompress {what}", api.name);
        assert!(out == want, "{} decompress {what}", api.name);
        let ts = lz[3] as usize;
        let nitems = want.len() / ts;
        let starts = if getitem { 3 } else { 1 };
        for start in [0, nitems / 3, nitems - 7.min(nitems)]
            .into_iter()
            .take(starts)
        {
            let k = 7.min(nitems - start);
            let mut item = vec![0u8; k * ts];
            let n = (api.getitem_ctx)(
                ctx,
                lz.as_ptr() as *const c_void,
                lz.len() as i32,
                start as c_int,
                k as c_int,
                item.as_mut_ptr() as *mut c_void,
                item.len() as i32,
            );
            assert_eq!(n as usize, k * ts, "{} getitem {what} at {start}", api.name);
            assert!(
                item[..] == want[start * ts..(start + k) * ts],
                "{} getitem {what} at {start}",
                api.name
            );
        }
    }
}

/// Opens the frame with both libraries and checks every chunk of `chunks` (regular).
fn check_regular(url: &CString, offset: Option<i64>, chunks: &[(&str, Vec<u8>, Vec<u8>)]) {
    let (o, t) = (ours(), theirs());
    let open = |api: &Api| {
        // SAFETY: plain C calls.
        let sc = unsafe {
            match offset {
                None => (api.open)(url.as_ptr()),
                Some(off) => (api.open_offset)(url.as_ptr(), off),
            }
        };
        assert!(!sc.is_null(), "{} open", api.name);
        sc
    };
    let (so, st) = (open(&o), open(&t));
    let (co, ct) = (dctx(&o, so), dctx(&t, st));
    for (i, (name, want, _)) in chunks.iter().enumerate() {
        let what = format!("{name} (offset {offset:?}, {url:?})");
        let (lo, lt) = (lazy(&o, so, i as i64), lazy(&t, st, i as i64));
        assert!(
            same_lazy(&lo, &lt),
            "lazy chunk bytes of {what}:\nours   {lo:?}\ntheirs {lt:?}"
        );
        assert_eq!(lo[31] & 0x08, 0x08, "{what}: lazy flag");
        // c-blosc2's getitem of a lazy DELTA chunk returns wrong items past block 0 (it does
        // not read block 0 as the reference); its decompression is right.
        let their_getitem = !name.starts_with("delta");
        check_decode(&o, co, &lo, want, &what, true);
        check_decode(
            &o,
            co,
            &lt,
            want,
            &format!("{what}, c-blosc2's lazy chunk"),
            true,
        );
        check_decode(&t, ct, &lt, want, &what, their_getitem);
        check_decode(
            &t,
            ct,
            &lo,
            want,
            &format!("{what}, b2frame's lazy chunk"),
            their_getitem,
        );
    }
    // SAFETY: ours / theirs, live.
    unsafe {
        (o.free_ctx)(co);
        (t.free_ctx)(ct);
        (o.free)(so);
        (t.free)(st);
    }
}

#[test]
fn lazy_chunks_match_c_blosc2_on_cframes_sframes_and_frames_at_an_offset() {
    let t = theirs();
    let chunks = regular_chunks(&t);
    let refs: Vec<&[u8]> = chunks.iter().map(|c| &c.2[..]).collect();
    let dir = common::scratch::dir("b2f-lazy-ref-");
    let file = CString::new(dir.join("c.b2frame").to_str().unwrap()).unwrap();
    write_frame(&t, &file, true, &refs);
    check_regular(&file, None, &chunks);
    let sdir = CString::new(dir.join("s.b2frame").to_str().unwrap()).unwrap();
    write_frame(&t, &sdir, false, &refs);
    check_regular(&sdir, None, &chunks);
    // The same cframe at byte 1000 of a bigger file.
    let frame = std::fs::read(dir.join("c.b2frame")).unwrap();
    let mut big = vec![0xA5u8; 1000];
    big.extend_from_slice(&frame);
    big.extend_from_slice(&[0x5A; 77]);
    std::fs::write(dir.join("off.bin"), &big).unwrap();
    let off = CString::new(dir.join("off.bin").to_str().unwrap()).unwrap();
    check_regular(&off, Some(1000), &chunks);
}

#[test]
fn lazy_vl_block_chunks_match_c_blosc2_and_decode_block_by_block() {
    let (o, t) = (ours(), theirs());
    let chunks = vl_chunks(&t);
    let dir = common::scratch::dir("b2f-lazy-vl-");
    for contiguous in [true, false] {
        // One frame per chunk kind (a frame's VL chunks share their dictionary setting here).
        for (name, blocks, chunk) in &chunks {
            let url = CString::new(
                dir.join(format!("{}-{contiguous}.b2frame", name.replace(' ', "_")))
                    .to_str()
                    .unwrap(),
            )
            .unwrap();
            write_frame(&t, &url, contiguous, &[chunk, chunk]);
            // SAFETY: plain C calls on live super-chunks.
            unsafe {
                let (so, st) = ((o.open)(url.as_ptr()), (t.open)(url.as_ptr()));
                assert!(!so.is_null() && !st.is_null());
                let (co, ct) = (dctx(&o, so), dctx(&t, st));
                for i in 0..2 {
                    let (lo, lt) = (lazy(&o, so, i), lazy(&t, st, i));
                    assert!(same_lazy(&lo, &lt), "{name} {contiguous}: {lo:?} vs {lt:?}");
                    for (api, ctx) in [(&o, co), (&t, ct)] {
                        for lz in [&lo, &lt] {
                            for (k, want) in blocks.iter().enumerate().rev() {
                                let (mut p, mut n) = (std::ptr::null_mut(), 0i32);
                                let rc = (api.vldecompress_block_ctx)(
                                    ctx,
                                    lz.as_ptr() as *const c_void,
                                    lz.len() as i32,
                                    k as i32,
                                    &mut p,
                                    &mut n,
                                );
                                assert_eq!(
                                    rc as usize,
                                    want.len(),
                                    "{} {name} block {k}",
                                    api.name
                                );
                                let got = std::slice::from_raw_parts(p, n as usize).to_vec();
                                common::reference::free_ref(p as *mut c_void);
                                assert!(got == *want, "{} {name} block {k}", api.name);
                            }
                        }
                    }
                }
                (o.free_ctx)(co);
                (t.free_ctx)(ct);
                (o.free)(so);
                (t.free)(st);
            }
        }
    }
}

#[test]
fn in_memory_frames_hand_out_the_chunk_itself() {
    let o = ours();
    let t = theirs();
    let chunks = regular_chunks(&t);
    for api in [&o, &t] {
        let mut cp = BLOSC2_CPARAMS_DEFAULTS;
        let mut dp = BLOSC2_DPARAMS_DEFAULTS;
        let mut st = common::storage(true, None, &mut cp, &mut dp);
        // SAFETY: C calls with valid arguments.
        unsafe {
            let sc = (api.new)(&mut st);
            for (_, _, c) in &chunks {
                let mut c = c.clone();
                assert!((api.append_chunk)(sc, c.as_mut_ptr(), true) > 0);
            }
            for (i, (name, _, c)) in chunks.iter().enumerate() {
                let lz = lazy(api, sc, i as i64);
                assert!(lz == *c, "{} {name}", api.name);
            }
            (api.free)(sc);
        }
    }
}

/// A lazy chunk whose trailer or block starts were changed by its holder gives error codes
/// (never a crash or a read outside the stored chunk); a context not bound to a super-chunk
/// cannot read one (`INVALID_PARAM`, as c-blosc2).
#[test]
fn forged_lazy_chunks_give_error_codes() {
    let (o, t) = (ours(), theirs());
    let chunks = regular_chunks(&t);
    let refs: Vec<&[u8]> = chunks.iter().map(|c| &c.2[..]).collect();
    let dir = common::scratch::dir("b2f-lazy-forged-");
    for contiguous in [true, false] {
        let url =
            CString::new(dir.join(format!("f{contiguous}.b2frame")).to_str().unwrap()).unwrap();
        write_frame(&t, &url, contiguous, &refs);
        // SAFETY: C calls on a live super-chunk with valid buffers.
        unsafe {
            let sc = (o.open)(url.as_ptr());
            assert!(!sc.is_null());
            let ctx = dctx(&o, sc);
            let unbound = (o.create_dctx)(BLOSC2_DPARAMS_DEFAULTS);
            for (i, (name, want, _)) in chunks.iter().enumerate() {
                let lz = lazy(&o, sc, i as i64);
                let mut out = vec![0u8; want.len()];
                let dec = |c: Ctx, lz: &[u8], out: &mut Vec<u8>| {
                    (o.decompress_ctx)(
                        c,
                        lz.as_ptr() as *const c_void,
                        lz.len() as i32,
                        out.as_mut_ptr() as *mut c_void,
                        out.len() as i32,
                    )
                };
                let get = |lz: &[u8], out: &mut Vec<u8>| {
                    (o.getitem_ctx)(
                        ctx,
                        lz.as_ptr() as *const c_void,
                        lz.len() as i32,
                        5,
                        3,
                        out.as_mut_ptr() as *mut c_void,
                        out.len() as i32,
                    )
                };
                assert_eq!(
                    dec(unbound, &lz, &mut out),
                    BLOSC2_ERROR_INVALID_PARAM,
                    "{name}"
                );
                // Truncated: the trailer does not fit.
                assert!(dec(ctx, &lz[..lz.len() - 1], &mut out) < 0, "{name}");
                assert!(get(&lz[..lz.len() - 1], &mut out) < 0, "{name}");
                let nb = (lz.len() - 44) / 8;
                let trailer = 32 + 4 * nb;
                let mut rng = common::Rng::new(i as u64 + 7);
                for round in 0..200 {
                    let mut bad = lz.clone();
                    match round % 5 {
                        // a block csize
                        0 => {
                            let j = rng.below(nb as u64) as usize;
                            let v = [0i32, -1, 1, i32::MAX, i32::MIN, 7][round / 5 % 6];
                            bad[trailer + 12 + 4 * j..][..4].copy_from_slice(&v.to_le_bytes());
                        }
                        // the offset
                        1 => {
                            let v = [-1i64, 0, i64::MAX, 1 << 40, 3][round / 5 % 5];
                            bad[trailer + 4..][..8].copy_from_slice(&v.to_le_bytes());
                        }
                        // nchunk (the chunk file of an sframe)
                        2 => {
                            let v = [-1i32, 99, i32::MAX, 1][round / 5 % 4];
                            bad[trailer..][..4].copy_from_slice(&v.to_le_bytes());
                        }
                        // a block start
                        3 => {
                            let j = rng.below(nb as u64) as usize;
                            let v = [0i32, -5, 31, i32::MAX, 1 << 20][round / 5 % 5];
                            bad[32 + 4 * j..][..4].copy_from_slice(&v.to_le_bytes());
                        }
                        // any byte
                        _ => {
                            let k = rng.below(bad.len() as u64) as usize;
                            bad[k] ^= 1 << rng.below(8);
                        }
                    }
                    let _ = dec(ctx, &bad, &mut out);
                    let _ = get(&bad, &mut out);
                }
                assert_eq!(
                    dec(ctx, &lz, &mut out) as usize,
                    want.len(),
                    "{name} intact"
                );
            }
            (o.free_ctx)(ctx);
            (o.free_ctx)(unbound);
            (o.free)(sc);
        }
    }
}

/// `get_slice_buffer` of ranges inside one chunk and across chunks of a cframe file and an
/// sframe (partial chunks are read through lazy chunks, as c-blosc2 does): both libraries
/// return the data.
#[test]
fn slices_of_frames_on_storage_read_through_lazy_chunks() {
    let (o, t) = (ours(), theirs());
    let dir = common::scratch::dir("b2f-lazy-slice-");
    let d = data(4 * 100_000, 9);
    for contiguous in [true, false] {
        let url =
            CString::new(dir.join(format!("s{contiguous}.b2frame")).to_str().unwrap()).unwrap();
        let mut cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.typesize = 4;
        cp.blocksize = 8192;
        let mut dp = BLOSC2_DPARAMS_DEFAULTS;
        let mut st = common::storage(contiguous, Some(&url), &mut cp, &mut dp);
        // SAFETY: C calls with valid arguments.
        unsafe {
            let append: unsafe extern "C" fn(Sc, *const c_void, i32) -> i64 =
                std::mem::transmute(reference().sym("blosc2_schunk_append_buffer"));
            let sc = (t.new)(&mut st);
            for k in 0..4 {
                let part = &d[k * 100_000..(k + 1) * 100_000];
                assert_eq!(
                    append(sc, part.as_ptr() as *const c_void, 100_000),
                    k as i64 + 1
                );
            }
            // A fifth chunk of zeros: a special offset, handed out as a 32-byte special chunk
            // (never lazy) by both.
            let zeros = vec![0u8; 100_000];
            assert_eq!(append(sc, zeros.as_ptr() as *const c_void, 100_000), 5);
            (t.free)(sc);
            let mut specials = Vec::new();
            for api in [&o, &t] {
                let sc = (api.open)(url.as_ptr());
                assert!(!sc.is_null());
                specials.push(lazy(api, sc, 4));
                for (from, to) in [
                    (10i64, 11i64),
                    (1000, 1040),
                    (24_990, 25_010),
                    (3, 99_997),
                    (50_000, 50_000),
                ] {
                    let mut buf = vec![0u8; ((to - from) * 4) as usize];
                    let rc = (api.get_slice_buffer)(sc, from, to, buf.as_mut_ptr() as *mut c_void);
                    assert_eq!(rc, 0, "{} get_slice_buffer {from}..{to}", api.name);
                    assert!(
                        buf[..] == d[(from * 4) as usize..(to * 4) as usize],
                        "{} slice {from}..{to}",
                        api.name
                    );
                }
                (api.free)(sc);
            }
            assert_eq!(specials[0].len(), 32);
            assert_eq!(specials[0], specials[1]);
        }
    }
}
