//! The codecs and filters c-blosc2 3.3.5 registers in `blosc2_init` (filters BYTEDELTA_BUGGY,
//! BYTEDELTA, INT_TRUNC, NDCELL, NDMEAN; codecs NDLZ and ZFP in its three modes), against the
//! real library (dlopened): the same super-chunk (same parameters and `b2nd` metalayer) is made
//! in both libraries, a chunk is compressed with each one's `schunk->cctx`, and
//! * both succeed or fail alike (same code);
//! * the chunks are byte-identical (every one of these is deterministic, ZFP included: both
//!   run zfp 1.0.1);
//! * each library decodes the other's chunk to the same bytes as the writer's own decoding
//!   (the input itself for the lossless ones).
//!
//! Plus: what the codec tables report, the dynamically loaded codecs (ids 36-40, no plugin
//! package: `CodecSupport` both ways), and forged streams/metalayers (error codes, no crash).

#![allow(clippy::missing_transmute_annotations)]

use crate::common;

use b2frame::b2nd_meta;
use b2frame::capi::chunk::{blosc2_create_cctx, blosc2_free_ctx};
use b2frame::capi::codec::{blosc2_compress_ctx, blosc2_decompress_ctx, blosc2_getitem_ctx};
use b2frame::capi::meta::blosc2_meta_add;
use b2frame::capi::schunk::{blosc2_schunk_free, blosc2_schunk_new};
use b2frame::capi::types::*;
use common::reference::reference;
use common::Rng;
use std::ffi::{c_char, c_int, c_void};

type Sc = *mut blosc2_schunk;
type Ctx = *mut blosc2_context;

pub(crate) struct Api {
    new: unsafe extern "C" fn(*mut blosc2_storage) -> Sc,
    free: unsafe extern "C" fn(Sc) -> c_int,
    meta_add: unsafe extern "C" fn(Sc, *const c_char, *mut u8, i32) -> c_int,
    compress: unsafe extern "C" fn(Ctx, *const c_void, i32, *mut c_void, i32) -> c_int,
    decompress: unsafe extern "C" fn(Ctx, *const c_void, i32, *mut c_void, i32) -> c_int,
    getitem: unsafe extern "C" fn(Ctx, *const c_void, i32, c_int, c_int, *mut c_void, i32) -> c_int,
    create_cctx: unsafe extern "C" fn(blosc2_cparams) -> Ctx,
    free_ctx: unsafe extern "C" fn(Ctx),
}

pub(crate) fn ours() -> Api {
    Api {
        new: blosc2_schunk_new,
        free: blosc2_schunk_free,
        meta_add: blosc2_meta_add,
        compress: blosc2_compress_ctx,
        decompress: blosc2_decompress_ctx,
        getitem: blosc2_getitem_ctx,
        create_cctx: blosc2_create_cctx,
        free_ctx: blosc2_free_ctx,
    }
}

pub(crate) fn theirs() -> Api {
    let r = reference();
    // SAFETY: each symbol has the C signature blosc2.h 3.3.5 declares for it.
    unsafe {
        Api {
            new: std::mem::transmute(r.sym("blosc2_schunk_new")),
            free: std::mem::transmute(r.sym("blosc2_schunk_free")),
            meta_add: std::mem::transmute(r.sym("blosc2_meta_add")),
            compress: std::mem::transmute(r.sym("blosc2_compress_ctx")),
            decompress: std::mem::transmute(r.sym("blosc2_decompress_ctx")),
            getitem: std::mem::transmute(r.sym("blosc2_getitem_ctx")),
            create_cctx: std::mem::transmute(r.sym("blosc2_create_cctx")),
            free_ctx: std::mem::transmute(r.sym("blosc2_free_ctx")),
        }
    }
}

/// An in-memory super-chunk of one library, freed on drop.
pub(crate) struct Schunk<'a> {
    api: &'a Api,
    sc: Sc,
}

impl Drop for Schunk<'_> {
    fn drop(&mut self) {
        // SAFETY: created by this API's schunk_new.
        unsafe { (self.api.free)(self.sc) };
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Case {
    pub(crate) compcode: u8,
    pub(crate) compcode_meta: u8,
    pub(crate) clevel: u8,
    pub(crate) typesize: i32,
    pub(crate) splitmode: i32,
    pub(crate) filters: [u8; 6],
    pub(crate) filters_meta: [u8; 6],
    /// (chunkshape, blockshape) of a b2nd metalayer; the array shape is the chunk shape.
    pub(crate) nd: Option<(Vec<i32>, Vec<i32>)>,
    /// Chunk bytes when there is no b2nd geometry.
    pub(crate) nbytes: usize,
    pub(crate) lossless: bool,
}

impl Case {
    pub(crate) fn schunk<'a>(&self, api: &'a Api) -> Schunk<'a> {
        let mut cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.compcode = self.compcode;
        cp.compcode_meta = self.compcode_meta;
        cp.clevel = self.clevel;
        cp.typesize = self.typesize;
        cp.splitmode = self.splitmode;
        cp.filters = self.filters;
        cp.filters_meta = self.filters_meta;
        if let Some((_, bs)) = &self.nd {
            cp.blocksize = bs.iter().product::<i32>() * self.typesize;
        }
        let mut dp = BLOSC2_DPARAMS_DEFAULTS;
        let mut st = BLOSC2_STORAGE_DEFAULTS;
        st.cparams = &mut cp;
        st.dparams = &mut dp;
        // SAFETY: a valid storage whose params outlive the call (they are copied).
        let sc = unsafe { (api.new)(&mut st) };
        assert!(!sc.is_null());
        if let Some((cs, bs)) = &self.nd {
            let shape: Vec<i64> = cs.iter().map(|&c| i64::from(c)).collect();
            let mut meta = b2nd_meta::serialize(&shape, cs, bs, Some(b"<f4"), 0).unwrap();
            // SAFETY: a live schunk, a NUL-terminated name and `meta.len()` bytes.
            let rc = unsafe {
                (api.meta_add)(sc, c"b2nd".as_ptr(), meta.as_mut_ptr(), meta.len() as i32)
            };
            assert!(rc >= 0, "meta_add: {rc}");
        }
        Schunk { api, sc }
    }
}

impl Schunk<'_> {
    pub(crate) fn compress(&self, src: &[u8]) -> Result<Vec<u8>, i32> {
        let mut dst = vec![0u8; src.len() + 64];
        // SAFETY: the schunk's own context; buffers of the stated sizes.
        let n = unsafe {
            (self.api.compress)(
                (*self.sc).cctx,
                src.as_ptr().cast(),
                src.len() as i32,
                dst.as_mut_ptr().cast(),
                dst.len() as i32,
            )
        };
        if n <= 0 {
            return Err(n);
        }
        dst.truncate(n as usize);
        Ok(dst)
    }

    pub(crate) fn decompress(&self, chunk: &[u8], nbytes: usize) -> Result<Vec<u8>, i32> {
        let mut dst = vec![0u8; nbytes];
        // SAFETY: as above.
        let n = unsafe {
            (self.api.decompress)(
                (*self.sc).dctx,
                chunk.as_ptr().cast(),
                chunk.len() as i32,
                dst.as_mut_ptr().cast(),
                dst.len() as i32,
            )
        };
        if n < 0 {
            return Err(n);
        }
        dst.truncate(n as usize);
        Ok(dst)
    }

    fn getitem(&self, chunk: &[u8], start: i32, n: i32, typesize: i32) -> Result<Vec<u8>, i32> {
        let mut dst = vec![0u8; (n * typesize) as usize];
        // SAFETY: as above.
        let r = unsafe {
            (self.api.getitem)(
                (*self.sc).dctx,
                chunk.as_ptr().cast(),
                chunk.len() as i32,
                start,
                n,
                dst.as_mut_ptr().cast(),
                dst.len() as i32,
            )
        };
        if r < 0 {
            return Err(r);
        }
        Ok(dst)
    }
}

/// Smooth float data (what ZFP, NDMEAN and BYTEDELTA are for), as `typesize`-byte items.
pub(crate) fn floats(n: usize, typesize: i32, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let noise = (rng.below(1000) as f64) / 1000.0;
    (0..n)
        .flat_map(|i| {
            let x = (i as f64 * 0.013 + noise).sin() * 40.0 + (i % 7) as f64 * 0.01;
            if typesize == 4 {
                (x as f32).to_le_bytes().to_vec()
            } else {
                x.to_le_bytes().to_vec()
            }
        })
        .collect()
}

/// Integers with structure, as `typesize`-byte little-endian items.
pub(crate) fn ints(n: usize, typesize: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    (0..n)
        .flat_map(|i| {
            let v = (i as u64 / 3) * 17 + rng.below(5);
            v.to_le_bytes()[..typesize].to_vec()
        })
        .collect()
}

/// 2-D byte images with repeated cells and rows (what NDLZ matches).
fn image(n: usize, w: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let palette: Vec<u8> = (0..4).map(|_| rng.below(256) as u8).collect();
    (0..n)
        .map(|i| {
            let (y, x) = (i / w, i % w);
            palette[(x / 8 + y / 8) % 4].wrapping_add(((x + y) % 5 == 0) as u8)
        })
        .collect()
}

/// Runs one case; returns whether the chunk was written (by both).
fn run(case: &Case, src: &[u8]) -> bool {
    if case.nd.is_none() {
        assert_eq!(src.len(), case.nbytes);
    }
    let (o, t) = (ours(), theirs());
    let (so, st) = (case.schunk(&o), case.schunk(&t));
    let co = so.compress(src);
    let ct = st.compress(src);
    match (&co, &ct) {
        (Ok(a), Ok(b)) => assert!(
            a == b,
            "{case:?}: chunks differ ({} vs {} bytes)",
            a.len(),
            b.len()
        ),
        (Err(a), Err(b)) => {
            assert_eq!(a, b, "{case:?}: error codes");
            return false;
        }
        _ => panic!(
            "{case:?}: ours {:?} vs reference {:?}",
            co.as_ref().map(|c| c.len()),
            ct.as_ref().map(|c| c.len())
        ),
    }
    let chunk = ct.unwrap();
    let n = src.len();
    let theirs_own = st.decompress(&chunk, n);
    let ours_read = so.decompress(&chunk, n);
    let their_read = st.decompress(co.as_ref().unwrap(), n);
    // Where the reference cannot decode its own chunk (NDMEAN with clipped cells), neither
    // can we, with the same code.
    assert!(ours_read == theirs_own, "{case:?}: decoded bytes differ");
    assert!(their_read == theirs_own);
    let Ok(theirs_own) = theirs_own else {
        return true;
    };
    if case.lossless {
        assert!(theirs_own == src, "{case:?}: not lossless");
    }
    // getitem of a range inside one chunk: ours returns the decoded items. (The reference's
    // getitem returns other bytes for some ND-filter and ZFP chunks; not held against us.)
    let ts = case.typesize;
    let items = (n as i32) / ts;
    if items > 4 {
        let start = items / 3;
        let cnt = (items / 4).min(1000);
        let a = so.getitem(&chunk, start, cnt, ts).unwrap();
        let exp = &theirs_own[(start * ts) as usize..((start + cnt) * ts) as usize];
        assert!(a == exp, "{case:?}: getitem");
    }
    true
}

pub(crate) fn base(compcode: u8, typesize: i32) -> Case {
    Case {
        compcode,
        compcode_meta: 0,
        clevel: 5,
        typesize,
        splitmode: BLOSC_FORWARD_COMPAT_SPLIT,
        filters: [0; 6],
        filters_meta: [0; 6],
        nd: None,
        nbytes: 0,
        lossless: true,
    }
}

#[test]
fn bytedelta_both_variants_match_the_reference() {
    let mut rng = Rng::new(35);
    for id in [35u8, 34] {
        for ts in [2i32, 4, 8] {
            for codec in [0u8, 1, 5] {
                for meta in [0u8, ts as u8] {
                    for nbytes in [
                        ts as usize * 21,
                        ts as usize * 4099,
                        200_000 * ts as usize / 4,
                    ] {
                        let mut c = base(codec, ts);
                        c.clevel = [1, 5, 9][rng.below(3) as usize];
                        c.filters = [0, 0, 0, 0, 1, id];
                        c.filters_meta = [0, 0, 0, 0, 0, meta];
                        c.nbytes = nbytes;
                        let items = nbytes / ts as usize;
                        let src = if ts == 2 {
                            ints(items, 2, rng.next_u64())
                        } else {
                            floats(items, ts, rng.next_u64())
                        };
                        run(&c, &src);
                    }
                }
            }
        }
    }
}

#[test]
fn int_trunc_matches_the_reference() {
    let mut rng = Rng::new(36);
    for ts in [1usize, 2, 4, 8, 3] {
        for meta in [
            1i8,
            5,
            -3,
            0,
            (8 * ts as i8).wrapping_add(1),
            -(8 * ts as i8),
        ] {
            let mut c = base(5, ts as i32);
            c.filters = [0, 0, 0, 0, 36, 1];
            c.filters_meta = [0, 0, 0, 0, meta as u8, 0];
            c.nbytes = ts * 10_000;
            c.lossless = false;
            run(&c, &ints(10_000, ts, rng.next_u64()));
        }
    }
}

#[test]
fn ndcell_and_ndmean_match_the_reference() {
    let mut rng = Rng::new(32);
    let geoms: [(Vec<i32>, Vec<i32>); 5] = [
        (vec![64, 64], vec![32, 32]),
        (vec![40, 30], vec![20, 15]),
        (vec![16, 12, 10], vec![8, 6, 5]),
        (vec![1000], vec![250]),
        (vec![10, 100], vec![2, 50]),
    ];
    for (cs, bs) in &geoms {
        let items: usize = cs.iter().product::<i32>() as usize;
        for (id, meta, ts, lossless) in [
            (32u8, 4u8, 4i32, true),
            (32, 3, 8, true),
            (32, 2, 1, true),
            (32, 0, 4, true),
            (33, 4, 4, false),
            (33, 3, 8, false),
            (33, 2, 2, false),
            (33, 200, 4, false),
        ] {
            let mut c = base(5, ts);
            c.filters = [0, 0, 0, 0, id, 1];
            c.filters_meta = [0, 0, 0, 0, meta, 0];
            c.nd = Some((cs.clone(), bs.clone()));
            c.lossless = lossless;
            let src = if ts == 4 || ts == 8 {
                floats(items, ts, rng.next_u64())
            } else {
                ints(items, ts as usize, rng.next_u64())
            };
            run(&c, &src);
        }
    }
    // Without a b2nd metalayer both fail alike.
    let mut c = base(5, 4);
    c.filters = [0, 0, 0, 0, 0, 32];
    c.filters_meta = [0, 0, 0, 0, 0, 2];
    c.nbytes = 4000;
    run(&c, &floats(1000, 4, 1));
}

#[test]
fn ndlz_matches_the_reference() {
    let mut rng = Rng::new(32);
    let mut written = 0;
    for (cs, bs) in [
        (vec![128, 128], vec![64, 64]),
        (vec![100, 90], vec![50, 45]),
        (vec![64, 40], vec![32, 40]),
        (vec![17, 200], vec![17, 100]),
    ] {
        for meta in [4u8, 8, 5] {
            for clevel in [0u8, 5] {
                let mut c = base(32, 1);
                c.compcode_meta = meta;
                c.clevel = clevel;
                c.nd = Some((cs.clone(), bs.clone()));
                let w = bs[1] as usize;
                let items = cs.iter().product::<i32>() as usize;
                written += usize::from(run(&c, &image(items, w, rng.next_u64())));
                // Noise: literal cells and no gain.
                let mut noise = vec![0u8; items];
                rng.fill(&mut noise);
                run(&c, &noise);
            }
        }
    }
    // Every cell size 4 and 8 case writes a chunk, and size 5 only at clevel 0 (memcpyed).
    assert_eq!(written, 20);
    // 3-D geometry, and a typesize that makes the block longer than the b2nd block.
    let mut c = base(32, 1);
    c.compcode_meta = 4;
    c.nd = Some((vec![8, 8, 8], vec![4, 8, 8]));
    run(&c, &image(512, 8, 3));
    let mut c = base(32, 4);
    c.compcode_meta = 4;
    c.nd = Some((vec![32, 32], vec![16, 16]));
    run(&c, &floats(1024, 4, 3));
}

#[cfg(feature = "zfp")]
#[test]
fn zfp_matches_the_reference() {
    let mut rng = Rng::new(33);
    let mut written = 0;
    for (cs, bs) in [
        (vec![64, 64], vec![32, 32]),
        (vec![30, 40], vec![15, 20]),
        (vec![16, 16, 16], vec![8, 8, 16]),
        (vec![4096], vec![1024]),
        (vec![8, 8, 8, 8], vec![4, 8, 4, 8]),
        (vec![20, 20], vec![3, 20]),
    ] {
        let items = cs.iter().product::<i32>() as usize;
        for ts in [4i32, 8] {
            for (code, metas) in [
                (33u8, [(-3i8) as u8, 0, (-9i8) as u8]),
                (34, [0u8, 10, 30]),
                (35, [10u8, 37, 80]),
            ] {
                for meta in metas {
                    for split in [BLOSC_FORWARD_COMPAT_SPLIT, BLOSC_ALWAYS_SPLIT] {
                        let mut c = base(code, ts);
                        c.compcode_meta = meta;
                        c.splitmode = split;
                        c.nd = Some((cs.clone(), bs.clone()));
                        c.lossless = false;
                        written += usize::from(run(&c, &floats(items, ts, rng.next_u64())));
                    }
                }
            }
        }
    }
    // Block sides under 4 fail in both (1 geometry of 6).
    assert_eq!(written, 5 * 2 * 3 * 3 * 2);
    // Typesizes zfp cannot take.
    let mut c = base(35, 2);
    c.compcode_meta = 50;
    c.nd = Some((vec![32, 32], vec![16, 16]));
    run(&c, &ints(1024, 2, 1));
}

#[test]
fn dynamically_loaded_codecs_fail_like_without_their_package() {
    for code in [36u8, 37, 38, 39, 40, 41, 100] {
        let mut c = base(code, 4);
        c.nbytes = 40_000;
        run(&c, &ints(10_000, 4, 7));
    }
    // A chunk that claims codec 37: CodecSupport when decoding, in both.
    let (o, t) = (ours(), theirs());
    let c = base(5, 4);
    let (so, st) = (c.schunk(&o), c.schunk(&t));
    let src = ints(10_000, 4, 8);
    let mut chunk = st.compress(&src).unwrap();
    chunk[2] = (chunk[2] & 0x1F) | (6 << 5);
    chunk[22] = 37;
    assert_eq!(so.decompress(&chunk, src.len()), Err(-7));
    assert_eq!(st.decompress(&chunk, src.len()), Err(-7));
}

type NameToCode = unsafe extern "C" fn(*const c_char) -> c_int;
type CodeToName = unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int;
type ComplibInfo = unsafe extern "C" fn(*const c_char, *mut *mut c_char, *mut *mut c_char) -> c_int;

#[test]
fn codec_tables_know_the_plugins_like_the_reference() {
    let r = reference();
    // SAFETY: the reference's functions, with their C signatures.
    let (n2c, c2n, info): (NameToCode, CodeToName, ComplibInfo) = unsafe {
        (
            std::mem::transmute(r.sym("blosc2_compname_to_compcode")),
            std::mem::transmute(r.sym("blosc2_compcode_to_compname")),
            std::mem::transmute(r.sym("blosc2_get_complib_info")),
        )
    };
    let ours_n2c: NameToCode = b2frame::capi::info::blosc2_compname_to_compcode;
    let ours_c2n: CodeToName = b2frame::capi::info::blosc2_compcode_to_compname;
    let ours_info: ComplibInfo = b2frame::capi::info::blosc2_get_complib_info;
    let cstr = |p: *const c_char| {
        // SAFETY: NULL or a NUL-terminated string from one of the libraries.
        (!p.is_null()).then(|| unsafe { std::ffi::CStr::from_ptr(p) }.to_owned())
    };
    for name in [
        c"ndlz",
        c"zfp_acc",
        c"zfp_prec",
        c"zfp_rate",
        c"openhtj2k",
        c"grok",
        c"openzl",
        c"j2k",
        c"htj2k",
        c"zstd",
    ] {
        // SAFETY: NUL-terminated names; out-pointers to locals; strings freed with free().
        unsafe {
            assert_eq!(ours_n2c(name.as_ptr()), n2c(name.as_ptr()), "{name:?}");
            let (mut l1, mut v1, mut l2, mut v2) = (
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            let a = ours_info(name.as_ptr(), &mut l1, &mut v1);
            let b = info(name.as_ptr(), &mut l2, &mut v2);
            assert_eq!(a, b, "{name:?}");
            if b >= 32 {
                assert_eq!(cstr(l1), cstr(l2));
                assert_eq!(cstr(v1), cstr(v2));
            }
            for p in [l1, v1] {
                if !p.is_null() {
                    libc::free(p.cast());
                }
            }
            for p in [l2, v2] {
                if !p.is_null() {
                    common::reference::free_ref(p.cast());
                }
            }
        }
    }
    // (Names the reference does not know crash its get_complib_info: strdup(NULL).)
    // SAFETY: NUL-terminated names.
    unsafe {
        assert_eq!(ours_n2c(c"bytedelta".as_ptr()), n2c(c"bytedelta".as_ptr()));
        assert_eq!(ours_n2c(c"ndcell".as_ptr()), -1);
    }
    for code in [31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 160] {
        let (mut p1, mut p2) = (std::ptr::null(), std::ptr::null());
        // SAFETY: out-pointers to locals.
        let (a, b) = unsafe { (ours_c2n(code, &mut p1), c2n(code, &mut p2)) };
        assert_eq!(a, b, "{code}");
        assert_eq!(cstr(p1), cstr(p2), "{code}");
    }
}

/// Forged plugin chunks and metalayers: our decoder returns an error code or bytes, never
/// crashes; where the reference reports an error, so do we.
#[test]
fn forged_plugin_chunks_are_errors() {
    let mut rng = Rng::new(99);
    let mut cases = Vec::new();
    let mut c = base(32, 1);
    c.compcode_meta = 4;
    c.nd = Some((vec![64, 64], vec![32, 32]));
    cases.push((c, image(4096, 32, 1)));
    let mut c = base(0, 4);
    c.filters = [0, 0, 0, 0, 1, 32];
    c.filters_meta = [0, 0, 0, 0, 0, 4];
    c.nd = Some((vec![64, 64], vec![32, 32]));
    cases.push((c, floats(4096, 4, 2)));
    #[cfg(feature = "zfp")]
    for code in [33u8, 34, 35] {
        let mut c = base(code, 8);
        c.compcode_meta = 30;
        c.nd = Some((vec![32, 32], vec![16, 16]));
        cases.push((c, floats(1024, 8, 3)));
    }
    let o = ours();
    for (case, src) in &cases {
        let so = case.schunk(&o);
        let chunk = so.compress(src).unwrap();
        for _ in 0..300 {
            let mut f = chunk.clone();
            let k = 1 + rng.below(4) as usize;
            for _ in 0..k {
                let i = 32 + rng.below((f.len() - 32) as u64) as usize;
                f[i] = rng.below(256) as u8;
            }
            let _ = so.decompress(&f, src.len());
            let _ = so.getitem(&f, 3, 10, case.typesize);
        }
        // A codec/filter meta and block shapes that do not fit the chunk.
        for meta in [0u8, 1, 7, 128, 255] {
            let mut f = chunk.clone();
            f[23] = meta;
            f[0x18 + 5] = meta;
            let _ = so.decompress(&f, src.len());
        }
    }
    // A b2nd metalayer whose block shape is far larger than the blocks.
    #[cfg(feature = "zfp")]
    {
        let mut c = base(35, 4);
        c.compcode_meta = 50;
        c.nd = Some((vec![32, 32], vec![16, 16]));
        let src = floats(1024, 4, 5);
        let chunk = c.schunk(&o).compress(&src).unwrap();
        let mut huge = c.clone();
        huge.nd = Some((vec![32, 32], vec![i32::MAX, 1 << 20]));
        let t = theirs();
        let (so, st) = (huge.schunk(&o), huge.schunk(&t));
        assert_eq!(
            so.decompress(&chunk, src.len()),
            st.decompress(&chunk, src.len())
        );
    }
}

/// Compresses `src` with a new context of `case`'s parameters, `instr_codec` set and bound to
/// the super-chunk `sc` (whose `b2nd` metalayer the plugin codecs read).
fn instr_compress(api: &Api, case: &Case, sc: Sc, src: &[u8]) -> Result<Vec<u8>, i32> {
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = case.compcode;
    cp.compcode_meta = case.compcode_meta;
    cp.clevel = case.clevel;
    cp.typesize = case.typesize;
    cp.splitmode = case.splitmode;
    cp.filters = case.filters;
    cp.filters_meta = case.filters_meta;
    if let Some((_, bs)) = &case.nd {
        cp.blocksize = bs.iter().product::<i32>() * case.typesize;
    }
    cp.instr_codec = true;
    cp.schunk = sc as *mut c_void;
    let mut dst = vec![0u8; 4 * src.len() + 4096];
    // SAFETY: plain C calls with buffers of the stated sizes; the context is freed after.
    let n = unsafe {
        let ctx = (api.create_cctx)(cp);
        assert!(!ctx.is_null());
        let n = (api.compress)(
            ctx,
            src.as_ptr().cast(),
            src.len() as i32,
            dst.as_mut_ptr().cast(),
            (src.len() + 4096) as i32,
        );
        (api.free_ctx)(ctx);
        n
    };
    if n <= 0 {
        return Err(n);
    }
    dst.truncate(n as usize);
    Ok(dst)
}

/// One stream of an instrumented chunk: csize, and (cratio bits, flags) of its record.
type InstrStream = (i32, Option<(u32, [u8; 4])>);

/// The deterministic part of an instrumented chunk: per stream its csize and, for records,
/// the cratio and flags (speeds vary from run to run).
fn instr_streams(chunk: &[u8]) -> Vec<InstrStream> {
    let rd = |at: usize| i32::from_le_bytes(chunk[at..at + 4].try_into().unwrap());
    let (nbytes, bs) = (rd(4) as usize, rd(8) as usize);
    let mut v = Vec::new();
    for j in 0..nbytes.div_ceil(bs) {
        let bytes = (nbytes - j * bs).min(bs);
        let mut pos = rd(32 + 4 * j) as usize;
        for _ in 0..bytes / 16 {
            let csize = rd(pos);
            let rec = (csize == 16).then(|| {
                let r = &chunk[pos + 4..pos + 20];
                (
                    u32::from_le_bytes(r[0..4].try_into().unwrap()),
                    [r[12], r[13], r[14], r[15]],
                )
            });
            pos += 4 + if csize == 16 { 16 } else { 0 };
            v.push((csize, rec));
        }
    }
    v
}

/// `instr_codec` with the plugin codecs (NDLZ, ZFP): c-blosc2 measures them through its
/// registered codecs like the built-in ones; so do we. Same header, same size, same streams and
/// the same deterministic record fields (cratio, flags) as c-blosc2's instrumented chunk.
#[test]
fn instrumented_plugin_codecs_match_the_reference() {
    let (o, t) = (ours(), theirs());
    let mut cases = Vec::new();
    let mut c = base(32, 1);
    c.compcode_meta = 4;
    c.nd = Some((vec![128, 128], vec![64, 64]));
    cases.push((c, image(128 * 128, 64, 7)));
    let mut c = base(32, 1);
    c.compcode_meta = 8;
    c.nd = Some((vec![64, 40], vec![32, 40]));
    cases.push((c, image(64 * 40, 40, 8)));
    #[cfg(feature = "zfp")]
    for (code, meta) in [(33u8, 3u8), (34, 20), (35, 50)] {
        let mut c = base(code, 4);
        c.compcode_meta = meta;
        c.nd = Some((vec![32, 32], vec![16, 16]));
        cases.push((c, floats(1024, 4, 9)));
    }
    for (case, src) in &cases {
        let (so, st) = (case.schunk(&o), case.schunk(&t));
        let a = instr_compress(&o, case, so.sc, src);
        let b = instr_compress(&t, case, st.sc, src);
        let (a, b) = match (a, b) {
            (Ok(a), Ok(b)) => (a, b),
            (a, b) => panic!(
                "{case:?}: ours {:?} vs reference {:?}",
                a.map(|v| v.len()),
                b.map(|v| v.len())
            ),
        };
        assert_eq!(a[31] & 0x80, 0x80, "{case:?}: instrumented flag");
        assert_eq!(a[..32], b[..32], "{case:?}: header");
        assert_eq!(a.len(), b.len(), "{case:?}: size");
        let (sa, sb) = (instr_streams(&a), instr_streams(&b));
        assert!(
            !sa.is_empty() && sa.iter().any(|s| s.1.is_some()),
            "{case:?}: records"
        );
        assert_eq!(sa, sb, "{case:?}: streams");
    }
}
