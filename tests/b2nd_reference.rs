//! b2nd arrays against the real c-blosc2 3.3.5 (dlopened): arrays either library writes (cframe
//! buffers, cframe files, sframe directories, frames at an offset) read identically in the
//! other, 1-D to 8-D, with chunk and block shapes that do and do not divide the shape, item
//! sizes 1 to 16, whole arrays and slices; after resize/insert/delete; and hostile metalayers
//! and slices give error codes.

#![allow(clippy::missing_transmute_annotations)]

mod common;

use b2frame::capi::b2nd_array::*;
use b2frame::capi::types::*;
use common::reference::reference;
use common::Rng;
use std::ffi::{c_char, c_int, c_void, CString};

type Arr = *mut b2nd_array_t;
type Ctx = *mut b2nd_context_t;

/// The b2nd functions both libraries share.
struct Api {
    create_ctx: unsafe extern "C" fn(
        *const blosc2_storage,
        i8,
        *const i64,
        *const i32,
        *const i32,
        *const c_char,
        i8,
        *const blosc2_metalayer,
        i32,
    ) -> Ctx,
    free_ctx: unsafe extern "C" fn(Ctx) -> c_int,
    from_cbuffer: unsafe extern "C" fn(Ctx, *mut Arr, *const c_void, i64) -> c_int,
    to_cbuffer: unsafe extern "C" fn(*const b2nd_array_t, *mut c_void, i64) -> c_int,
    to_cframe:
        unsafe extern "C" fn(*const b2nd_array_t, *mut *mut u8, *mut i64, *mut bool) -> c_int,
    from_cframe: unsafe extern "C" fn(*mut u8, i64, bool, *mut Arr) -> c_int,
    open: unsafe extern "C" fn(*const c_char, *mut Arr) -> c_int,
    open_offset: unsafe extern "C" fn(*const c_char, *mut Arr, i64) -> c_int,
    save_append: unsafe extern "C" fn(*const b2nd_array_t, *const c_char) -> i64,
    free: unsafe extern "C" fn(Arr) -> c_int,
    get_slice_cbuffer: unsafe extern "C" fn(
        *const b2nd_array_t,
        *const i64,
        *const i64,
        *mut c_void,
        *const i64,
        i64,
    ) -> c_int,
    set_slice_cbuffer:
        unsafe extern "C" fn(*const c_void, *const i64, i64, *const i64, *const i64, Arr) -> c_int,
    resize: unsafe extern "C" fn(Arr, *const i64, *const i64) -> c_int,
    insert: unsafe extern "C" fn(Arr, *const c_void, i64, i8, i64) -> c_int,
    delete: unsafe extern "C" fn(Arr, i8, i64, i64) -> c_int,
    get_sparse:
        unsafe extern "C" fn(*const b2nd_array_t, i64, *const i64, *mut c_void, i64) -> c_int,
    get_orthogonal: unsafe extern "C" fn(
        *const b2nd_array_t,
        *mut *mut i64,
        *mut i64,
        *mut c_void,
        *mut i64,
        i64,
    ) -> c_int,
    concatenate: unsafe extern "C" fn(
        Ctx,
        *const b2nd_array_t,
        *const b2nd_array_t,
        i8,
        bool,
        *mut Arr,
    ) -> c_int,
    /// Frees what this library allocated (on Windows the reference's C runtime is another).
    free_mem: unsafe fn(*mut c_void),
}

fn ours() -> Api {
    Api {
        create_ctx: b2nd_create_ctx,
        free_ctx: b2nd_free_ctx,
        from_cbuffer: b2nd_from_cbuffer,
        to_cbuffer: b2nd_to_cbuffer,
        to_cframe: b2nd_to_cframe,
        from_cframe: b2nd_from_cframe,
        open: b2nd_open,
        open_offset: b2nd_open_offset,
        save_append: b2nd_save_append,
        free: b2nd_free,
        get_slice_cbuffer: b2nd_get_slice_cbuffer,
        set_slice_cbuffer: b2nd_set_slice_cbuffer,
        resize: b2nd_resize,
        insert: b2nd_insert,
        delete: b2nd_delete,
        get_sparse: b2nd_get_sparse_cbuffer,
        get_orthogonal: b2nd_get_orthogonal_selection,
        concatenate: b2nd_concatenate,
        free_mem: common::reference::free_ours,
    }
}

fn theirs() -> Api {
    let r = reference();
    // SAFETY: each symbol has the C signature b2nd.h 3.3.5 declares for it.
    unsafe {
        Api {
            create_ctx: std::mem::transmute(r.sym("b2nd_create_ctx")),
            free_ctx: std::mem::transmute(r.sym("b2nd_free_ctx")),
            from_cbuffer: std::mem::transmute(r.sym("b2nd_from_cbuffer")),
            to_cbuffer: std::mem::transmute(r.sym("b2nd_to_cbuffer")),
            to_cframe: std::mem::transmute(r.sym("b2nd_to_cframe")),
            from_cframe: std::mem::transmute(r.sym("b2nd_from_cframe")),
            open: std::mem::transmute(r.sym("b2nd_open")),
            open_offset: std::mem::transmute(r.sym("b2nd_open_offset")),
            save_append: std::mem::transmute(r.sym("b2nd_save_append")),
            free: std::mem::transmute(r.sym("b2nd_free")),
            get_slice_cbuffer: std::mem::transmute(r.sym("b2nd_get_slice_cbuffer")),
            set_slice_cbuffer: std::mem::transmute(r.sym("b2nd_set_slice_cbuffer")),
            resize: std::mem::transmute(r.sym("b2nd_resize")),
            insert: std::mem::transmute(r.sym("b2nd_insert")),
            delete: std::mem::transmute(r.sym("b2nd_delete")),
            get_sparse: std::mem::transmute(r.sym("b2nd_get_sparse_cbuffer")),
            get_orthogonal: std::mem::transmute(r.sym("b2nd_get_orthogonal_selection")),
            concatenate: std::mem::transmute(r.sym("b2nd_concatenate")),
            free_mem: common::reference::free_ref,
        }
    }
}

/// An array geometry and item size.
struct Case {
    shape: Vec<i64>,
    chunks: Vec<i32>,
    blocks: Vec<i32>,
    typesize: i32,
    dtype: &'static str,
}

fn cases() -> Vec<Case> {
    let c = |s: &[i64], ch: &[i32], b: &[i32], ts: i32, dt: &'static str| Case {
        shape: s.to_vec(),
        chunks: ch.to_vec(),
        blocks: b.to_vec(),
        typesize: ts,
        dtype: dt,
    };
    vec![
        c(&[1000], &[100], &[25], 8, "<f8"),
        c(&[1001], &[130], &[17], 4, "<i4"),
        c(&[40, 60], &[10, 20], &[5, 10], 8, "<f8"),
        c(&[41, 59], &[13, 20], &[6, 7], 2, "<u2"),
        c(&[10, 11, 12], &[4, 5, 6], &[2, 3, 3], 1, "|u1"),
        c(&[9, 8, 7, 6], &[4, 4, 4, 4], &[2, 2, 2, 2], 16, "<c16"),
        c(
            &[5, 6, 4, 3, 5],
            &[2, 3, 4, 2, 5],
            &[1, 3, 2, 2, 2],
            4,
            "<f4",
        ),
        c(
            &[3, 4, 3, 4, 3, 4],
            &[2, 2, 2, 2, 2, 2],
            &[1, 2, 1, 2, 1, 2],
            8,
            "<i8",
        ),
        c(
            &[3, 2, 3, 2, 3, 2, 3],
            &[2, 2, 2, 2, 2, 2, 2],
            &[1, 1, 2, 1, 2, 1, 2],
            4,
            "<u4",
        ),
        c(
            &[2, 3, 2, 3, 2, 3, 2, 3],
            &[2, 2, 2, 2, 2, 2, 2, 2],
            &[1, 2, 1, 2, 1, 2, 1, 2],
            2,
            "<i2",
        ),
        // A structured dtype (typesize 12).
        c(
            &[50, 7],
            &[16, 7],
            &[4, 7],
            12,
            "[('a', '<i4'), ('b', '<f8')]",
        ),
    ]
}

fn nitems(c: &Case) -> usize {
    c.shape.iter().product::<i64>() as usize
}

fn data(c: &Case, seed: u64) -> Vec<u8> {
    let mut r = Rng::new(seed);
    // Compressible: small values, repeated.
    (0..nitems(c) * c.typesize as usize)
        .map(|i| {
            if i % 3 == 0 {
                r.below(7) as u8
            } else {
                (i / 97) as u8
            }
        })
        .collect()
}

/// Storage for a new array (cparams and urlpath must outlive the call).
struct Storage {
    cp: blosc2_cparams,
    dp: blosc2_dparams,
    path: Option<CString>,
    st: blosc2_storage,
}

fn storage(ts: i32, path: Option<&str>, contiguous: bool) -> Box<Storage> {
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = ts;
    cp.clevel = 5;
    cp.compcode = BLOSC_LZ4 as u8;
    let mut s = Box::new(Storage {
        cp,
        dp: BLOSC2_DPARAMS_DEFAULTS,
        path: path.map(|p| CString::new(p).unwrap()),
        st: BLOSC2_STORAGE_DEFAULTS,
    });
    s.st.cparams = &mut s.cp;
    s.st.dparams = &mut s.dp;
    s.st.contiguous = contiguous;
    s.st.urlpath = s
        .path
        .as_ref()
        .map_or(std::ptr::null_mut(), |p| p.as_ptr() as *mut c_char);
    s
}

/// Builds an array of `c` holding `d` with `api`.
fn build(api: &Api, c: &Case, d: &[u8], path: Option<&str>, contiguous: bool) -> Arr {
    let st = storage(c.typesize, path, contiguous);
    let dt = CString::new(c.dtype).unwrap();
    let mut a: Arr = std::ptr::null_mut();
    // SAFETY: arrays hold ndim values; strings NUL-terminated; buffers sized as declared.
    unsafe {
        let ctx = (api.create_ctx)(
            &st.st,
            c.shape.len() as i8,
            c.shape.as_ptr(),
            c.chunks.as_ptr(),
            c.blocks.as_ptr(),
            dt.as_ptr(),
            0,
            std::ptr::null(),
            0,
        );
        assert!(!ctx.is_null());
        assert_eq!(
            (api.from_cbuffer)(ctx, &mut a, d.as_ptr() as *const c_void, d.len() as i64),
            0
        );
        assert_eq!((api.free_ctx)(ctx), 0);
    }
    a
}

fn to_vec(api: &Api, a: Arr, n: usize) -> Vec<u8> {
    let mut v = vec![0xAAu8; n];
    assert_eq!(
        // SAFETY: live array; buffer of `n` bytes.
        unsafe { (api.to_cbuffer)(a, v.as_mut_ptr() as *mut c_void, n as i64) },
        0
    );
    v
}

fn slice(api: &Api, a: Arr, ts: i32, start: &[i64], stop: &[i64]) -> Vec<u8> {
    let shape: Vec<i64> = start.iter().zip(stop).map(|(a, b)| b - a).collect();
    let n = shape.iter().product::<i64>() as usize * ts as usize;
    let mut v = vec![0xAAu8; n];
    // SAFETY: live array; ndim values each; buffer of `n` bytes.
    let rc = unsafe {
        (api.get_slice_cbuffer)(
            a,
            start.as_ptr(),
            stop.as_ptr(),
            v.as_mut_ptr() as *mut c_void,
            shape.as_ptr(),
            n as i64,
        )
    };
    assert_eq!(rc, 0, "get_slice {start:?}..{stop:?}");
    v
}

fn cframe(api: &Api, a: Arr) -> Vec<u8> {
    let (mut p, mut len, mut nf) = (std::ptr::null_mut(), 0i64, false);
    // SAFETY: live array; out-pointers valid; the buffer is freed when `needs_free`.
    unsafe {
        assert_eq!((api.to_cframe)(a, &mut p, &mut len, &mut nf), 0);
        let v = std::slice::from_raw_parts(p, len as usize).to_vec();
        if nf {
            (api.free_mem)(p as *mut c_void);
        }
        v
    }
}

fn from_cframe(api: &Api, mut f: Vec<u8>) -> Arr {
    let mut a: Arr = std::ptr::null_mut();
    assert_eq!(
        // SAFETY: `f` is valid for its length and copied (copy=true).
        unsafe { (api.from_cframe)(f.as_mut_ptr(), f.len() as i64, true, &mut a) },
        0
    );
    a
}

/// A few slices of `c`: the whole array, an inner box, a single item, a box across chunks.
fn slices(c: &Case) -> Vec<(Vec<i64>, Vec<i64>)> {
    let s = &c.shape;
    vec![
        (vec![0; s.len()], s.clone()),
        (
            s.iter().map(|&x| x / 3).collect(),
            s.iter().map(|&x| x - x / 4).collect(),
        ),
        (s.iter().map(|&x| x - 1).collect(), s.clone()),
        (
            c.chunks.iter().map(|&x| i64::from(x) - 1).collect(),
            s.iter()
                .zip(&c.chunks)
                .map(|(&x, &ch)| x.min(i64::from(ch) + 1))
                .collect(),
        ),
    ]
}

/// The struct fields python-blosc2 reads, compared between the two libraries.
fn fields(a: Arr) -> String {
    // SAFETY: a live array.
    let a = unsafe { &*a };
    let n = a.ndim as usize;
    format!(
        "{:?} {:?} {:?} {:?} {:?} {} {} {} {} {} {} {:?} {:?} {:?}",
        &a.shape[..],
        &a.chunkshape[..],
        &a.blockshape[..],
        &a.extshape[..],
        &a.extchunkshape[..],
        a.nitems,
        a.chunknitems,
        a.extnitems,
        a.blocknitems,
        a.extchunknitems,
        a.ndim,
        &a.item_array_strides[..n],
        &a.item_block_strides[..n],
        &a.block_chunk_strides[..n],
    )
}

#[test]
fn cframes_written_by_either_library_read_identically_in_the_other() {
    let (us, them) = (ours(), theirs());
    for (k, c) in cases().iter().enumerate() {
        let d = data(c, k as u64 + 1);
        for (writer, reader, who) in [(&us, &them, "ours->ref"), (&them, &us, "ref->ours")] {
            let a = build(writer, c, &d, None, true);
            let b = from_cframe(reader, cframe(writer, a));
            assert_eq!(fields(a), fields(b), "{who} {:?}", c.shape);
            assert_eq!(to_vec(reader, b, d.len()), d, "{who} {:?}", c.shape);
            for (s0, s1) in slices(c) {
                assert_eq!(
                    slice(reader, b, c.typesize, &s0, &s1),
                    slice(writer, a, c.typesize, &s0, &s1),
                    "{who} {:?} {s0:?}..{s1:?}",
                    c.shape
                );
            }
            // SAFETY: both arrays are live and freed once.
            unsafe {
                assert_eq!((writer.free)(a), 0);
                assert_eq!((reader.free)(b), 0);
            }
        }
    }
}

#[test]
fn set_slices_and_shape_changes_match_the_reference() {
    let (us, them) = (ours(), theirs());
    for (k, c) in cases().iter().enumerate().take(8) {
        let d = data(c, 100 + k as u64);
        let (a, b) = (
            build(&us, c, &d, None, false),
            build(&them, c, &d, None, false),
        );
        let n = c.shape.len();
        let (s0, s1) = slices(c)[1].clone();
        let bshape: Vec<i64> = s0.iter().zip(&s1).map(|(x, y)| y - x).collect();
        let patch: Vec<u8> = (0..bshape.iter().product::<i64>() as usize * c.typesize as usize)
            .map(|i| (i * 7 + 3) as u8)
            .collect();
        // Both arrays take the same patch, then grow at the end, gain a slab along axis 0 and
        // lose another.
        let grown: Vec<i64> = c.shape.iter().map(|&s| s + 3).collect();
        let slab = c.shape[1..].iter().map(|&s| s + 3).product::<i64>() * i64::from(c.typesize);
        let chunk0 = i64::from(c.chunks[0]);
        let rows: Vec<u8> = (0..(slab * chunk0) as usize)
            .map(|i| (i % 251) as u8)
            .collect();
        for api in [&us, &them] {
            let arr = if std::ptr::eq(api, &us) { a } else { b };
            // SAFETY: live arrays; buffers sized as declared.
            unsafe {
                let rc = (api.set_slice_cbuffer)(
                    patch.as_ptr() as *const c_void,
                    bshape.as_ptr(),
                    patch.len() as i64,
                    s0.as_ptr(),
                    s1.as_ptr(),
                    arr,
                );
                assert_eq!(rc, 0);
                assert_eq!((api.resize)(arr, grown.as_ptr(), std::ptr::null()), 0);
                assert_eq!(
                    (api.insert)(arr, rows.as_ptr() as *const c_void, rows.len() as i64, 0, 0),
                    0
                );
                assert_eq!((api.delete)(arr, 0, (*arr).shape[0] - 1, 1), 0);
            }
        }
        let total = fields(a);
        assert_eq!(total, fields(b), "{:?}", c.shape);
        // SAFETY: live arrays.
        let nb = unsafe { (*a).nitems } as usize * c.typesize as usize;
        assert_eq!(to_vec(&us, a, nb), to_vec(&them, b, nb), "{:?}", c.shape);
        // And each reads the other's frame the same.
        let (ra, rb) = (
            from_cframe(&them, cframe(&us, a)),
            from_cframe(&us, cframe(&them, b)),
        );
        assert_eq!(to_vec(&them, ra, nb), to_vec(&us, rb, nb));
        // Sparse and orthogonal reads agree too.
        let coords: Vec<i64> = (0..20)
            .map(|i| (i * 7919) % nb as i64 / c.typesize as i64)
            .collect();
        let mut sel: Vec<Vec<i64>> = (0..n)
            .map(|i| {
                // SAFETY: live array.
                let s = unsafe { (*a).shape[i] };
                vec![s - 1, 0, s / 2, s / 2]
            })
            .collect();
        let mut sizes: Vec<i64> = sel.iter().map(|v| v.len() as i64).collect();
        let mut ptrs: Vec<*mut i64> = sel.iter_mut().map(|v| v.as_mut_ptr()).collect();
        let mut bshape = sizes.clone();
        let on = sizes.iter().product::<i64>() as usize * c.typesize as usize;
        let mut got = Vec::new();
        for (api, arr) in [(&us, a), (&them, b)] {
            let mut sp = vec![0u8; coords.len() * c.typesize as usize];
            let mut ob = vec![0u8; on];
            // SAFETY: live arrays; buffers and index lists sized as declared.
            unsafe {
                let rc = (api.get_sparse)(
                    arr,
                    coords.len() as i64,
                    coords.as_ptr(),
                    sp.as_mut_ptr() as *mut c_void,
                    sp.len() as i64,
                );
                assert_eq!(rc, 0);
                let rc = (api.get_orthogonal)(
                    arr,
                    ptrs.as_mut_ptr(),
                    sizes.as_mut_ptr(),
                    ob.as_mut_ptr() as *mut c_void,
                    bshape.as_mut_ptr(),
                    on as i64,
                );
                assert_eq!(rc, 0);
            }
            got.push((sp, ob));
        }
        assert_eq!(got[0], got[1], "{:?}", c.shape);
        // SAFETY: each array freed once.
        unsafe {
            for (api, arr) in [(&us, a), (&them, b), (&them, ra), (&us, rb)] {
                assert_eq!((api.free)(arr), 0);
            }
        }
    }
}

/// `b2nd_concatenate` into `src1` (in memory, in a cframe file and in an sframe), with
/// `src1` ending on a chunk boundary along the axis (chunks copied as stored) and not.
#[test]
fn concatenations_match_the_reference() {
    let (us, them) = (ours(), theirs());
    let dir = common::scratch::dir("b2f-b2nd-concat-");
    for (k, c) in cases().iter().enumerate().take(6) {
        for ax in 0..c.shape.len() {
            for aligned in [true, false] {
                let mut c1 = Case {
                    shape: c.shape.clone(),
                    chunks: c.chunks.clone(),
                    blocks: c.blocks.clone(),
                    typesize: c.typesize,
                    dtype: c.dtype,
                };
                let ch = i64::from(c.chunks[ax]);
                c1.shape[ax] = if aligned { 2 * ch } else { 2 * ch - 1 };
                let (d1, d2) = (data(&c1, 300 + k as u64), data(c, 400 + k as u64));
                for (si, (path, contiguous)) in [(false, false), (true, true), (true, false)]
                    .into_iter()
                    .enumerate()
                {
                    let mut got = Vec::new();
                    for (who, api) in [("ours", &us), ("ref", &them)] {
                        let p = dir.join(format!("{who}-{k}-{ax}-{aligned}-{si}.b2nd"));
                        let ps = p.to_str().unwrap();
                        let a = build(api, &c1, &d1, path.then_some(ps), contiguous);
                        let b = build(api, c, &d2, None, false);
                        let st = storage(c.typesize, None, false);
                        let dt = CString::new(c.dtype).unwrap();
                        let mut out: Arr = std::ptr::null_mut();
                        // SAFETY: live arrays; ctx built from valid arrays and strings.
                        let shape = unsafe {
                            let ctx = (api.create_ctx)(
                                &st.st,
                                c1.shape.len() as i8,
                                c1.shape.as_ptr(),
                                c1.chunks.as_ptr(),
                                c1.blocks.as_ptr(),
                                dt.as_ptr(),
                                0,
                                std::ptr::null(),
                                0,
                            );
                            assert!(!ctx.is_null());
                            let rc = (api.concatenate)(ctx, a, b, ax as i8, false, &mut out);
                            assert_eq!(rc, 0, "{who} case {k} axis {ax} aligned {aligned}");
                            assert_eq!(out, a);
                            assert_eq!((api.free_ctx)(ctx), 0);
                            (&(*a).shape)[..c.shape.len()].to_vec()
                        };
                        let n = shape.iter().product::<i64>() as usize * c.typesize as usize;
                        got.push((shape, to_vec(api, a, n)));
                        // SAFETY: live arrays, freed once.
                        unsafe {
                            (api.free)(a);
                            (api.free)(b);
                        }
                        if path {
                            let cp = CString::new(ps).unwrap();
                            let mut r: Arr = std::ptr::null_mut();
                            // SAFETY: path NUL-terminated; out-pointer valid.
                            assert_eq!(unsafe { (api.open)(cp.as_ptr(), &mut r) }, 0);
                            assert_eq!(to_vec(api, r, n), got.last().unwrap().1, "{who} reopened");
                            // SAFETY: live array.
                            unsafe { (api.free)(r) };
                        }
                    }
                    assert_eq!(got[0].0, got[1].0, "shape: case {k} axis {ax} storage {si}");
                    assert!(
                        got[0].1 == got[1].1,
                        "items differ: case {k} axis {ax} aligned {aligned} storage {si}"
                    );
                }
            }
        }
    }
}

#[test]
fn files_sframes_and_offsets_cross_over() {
    let (us, them) = (ours(), theirs());
    let dir = common::scratch::dir("b2f-b2nd-interop-");
    let c = &cases()[3];
    let d = data(c, 7);
    for (writer, reader, who) in [(&us, &them, "ours"), (&them, &us, "ref")] {
        for contiguous in [true, false] {
            let p = dir.join(format!("{who}-{contiguous}.b2nd"));
            let ps = p.to_str().unwrap();
            let a = build(writer, c, &d, Some(ps), contiguous);
            let cp = CString::new(ps).unwrap();
            let mut b: Arr = std::ptr::null_mut();
            assert_eq!(
                // SAFETY: path NUL-terminated; out-pointer valid.
                unsafe { (reader.open)(cp.as_ptr(), &mut b) },
                0,
                "{who} {contiguous}"
            );
            assert_eq!(to_vec(reader, b, d.len()), d, "{who} {contiguous}");
            // SAFETY: freed once each.
            unsafe {
                (writer.free)(a);
                (reader.free)(b);
            }
        }
        // Two arrays appended to one file, opened at their offsets.
        let p = dir.join(format!("{who}-append.bin"));
        std::fs::write(&p, b"header!").unwrap();
        let cp = CString::new(p.to_str().unwrap()).unwrap();
        let a = build(writer, c, &d, None, true);
        // SAFETY: live array; path NUL-terminated.
        let off = unsafe { (writer.save_append)(a, cp.as_ptr()) };
        assert_eq!(off, 7);
        let mut b: Arr = std::ptr::null_mut();
        // SAFETY: as above.
        assert_eq!(unsafe { (reader.open_offset)(cp.as_ptr(), &mut b, off) }, 0);
        assert_eq!(to_vec(reader, b, d.len()), d);
        // SAFETY: freed once each.
        unsafe {
            (writer.free)(a);
            (reader.free)(b);
        }
    }
}

/// A change to a metalayer.
type Patch = Box<dyn Fn(&mut Vec<u8>)>;

/// A cframe of a small array whose `b2nd` metalayer content is patched by `f` (same length).
fn patched_frame(f: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let us = ours();
    let c = Case {
        shape: vec![20, 10],
        chunks: vec![10, 10],
        blocks: vec![5, 10],
        typesize: 4,
        dtype: "<i4",
    };
    let a = build(&us, &c, &data(&c, 3), None, true);
    let mut fr = cframe(&us, a);
    // SAFETY: freed once.
    unsafe { (us.free)(a) };
    let meta =
        b2frame::b2nd_meta::serialize(&[20, 10], &[10, 10], &[5, 10], Some(b"<i4"), 0).unwrap();
    let at = fr
        .windows(meta.len())
        .position(|w| w == meta)
        .expect("metalayer in the frame");
    let mut m = meta.clone();
    f(&mut m);
    fr[at..at + m.len()].copy_from_slice(&m);
    fr
}

#[test]
fn hostile_metalayers_and_slices_are_errors() {
    let us = ours();
    let set_i64 =
        |m: &mut Vec<u8>, at: usize, v: i64| m[at..at + 8].copy_from_slice(&v.to_be_bytes());
    let set_i32 =
        |m: &mut Vec<u8>, at: usize, v: i32| m[at..at + 4].copy_from_slice(&v.to_be_bytes());
    // Offsets in the metalayer: shape values at 5 and 14, chunk shape at 24 and 29, block
    // shape at 35 and 40.
    let bad: Vec<(&str, Patch, c_int)> = vec![
        (
            "ndim 17",
            Box::new(|m: &mut Vec<u8>| m[2] = 17),
            BLOSC2_ERROR_FAILURE,
        ),
        (
            "negative ndim",
            Box::new(|m: &mut Vec<u8>| m[2] = 0xff),
            BLOSC2_ERROR_FAILURE,
        ),
        (
            "negative shape",
            Box::new(move |m: &mut Vec<u8>| set_i64(m, 5, -20)),
            BLOSC2_ERROR_INVALID_PARAM,
        ),
        (
            "overflowing shape product",
            Box::new(move |m: &mut Vec<u8>| {
                set_i64(m, 5, 1 << 40);
                set_i64(m, 14, 1 << 40);
            }),
            BLOSC2_ERROR_INVALID_PARAM,
        ),
        (
            "shape near i64::MAX",
            Box::new(move |m: &mut Vec<u8>| set_i64(m, 5, i64::MAX - 1)),
            BLOSC2_ERROR_INVALID_PARAM,
        ),
        (
            "zero chunk shape",
            Box::new(move |m: &mut Vec<u8>| set_i32(m, 24, 0)),
            BLOSC2_ERROR_INVALID_PARAM,
        ),
        (
            "overflowing chunk product",
            Box::new(move |m: &mut Vec<u8>| {
                set_i32(m, 24, 1 << 20);
                set_i32(m, 29, 1 << 20);
            }),
            BLOSC2_ERROR_INVALID_PARAM,
        ),
        (
            "zero block shape",
            Box::new(move |m: &mut Vec<u8>| set_i32(m, 35, 0)),
            BLOSC2_ERROR_INVALID_PARAM,
        ),
    ];
    for (what, f, want) in bad {
        let mut fr = patched_frame(f);
        let mut a: Arr = std::ptr::null_mut();
        // SAFETY: the frame is valid for its length and copied.
        let rc = unsafe { (us.from_cframe)(fr.as_mut_ptr(), fr.len() as i64, true, &mut a) };
        assert_eq!(rc, want, "{what}");
        assert!(a.is_null(), "{what}");
    }
    // A chunk shape that disagrees with the stored chunks: opens, but reads fail cleanly.
    for (what, f) in [
        (
            "bigger chunks",
            Box::new(move |m: &mut Vec<u8>| set_i32(m, 24, 20)) as Box<dyn Fn(&mut Vec<u8>)>,
        ),
        (
            "smaller chunks",
            Box::new(move |m: &mut Vec<u8>| set_i32(m, 24, 5)),
        ),
        (
            "more items",
            Box::new(move |m: &mut Vec<u8>| set_i64(m, 5, 40)),
        ),
    ] {
        let mut fr = patched_frame(f);
        let mut a: Arr = std::ptr::null_mut();
        assert_eq!(
            // SAFETY: as above.
            unsafe { (us.from_cframe)(fr.as_mut_ptr(), fr.len() as i64, true, &mut a) },
            0
        );
        // SAFETY: live array.
        let n = unsafe { (*a).nitems } as usize * 4;
        let mut v = vec![0u8; n];
        // SAFETY: buffer of `n` bytes.
        let rc = unsafe { (us.to_cbuffer)(a, v.as_mut_ptr() as *mut c_void, n as i64) };
        assert!(rc < 0, "{what}: {rc}");
        // SAFETY: freed once.
        unsafe { (us.free)(a) };
    }
    // Slices out of range, reversed, negative or huge; buffers too small.
    let c = Case {
        shape: vec![20, 10],
        chunks: vec![10, 10],
        blocks: vec![5, 10],
        typesize: 4,
        dtype: "<i4",
    };
    let a = build(&us, &c, &data(&c, 3), None, true);
    let mut buf = vec![0u8; 800];
    for (s0, s1, bs) in [
        ([0i64, 0], [21i64, 10], [21i64, 10]),
        ([-1, 0], [5, 10], [6, 10]),
        ([5, 0], [4, 10], [1, 10]),
        ([0, 0], [i64::MAX, 10], [i64::MAX, 10]),
        ([i64::MIN, 0], [0, 10], [20, 10]),
        ([0, 0], [20, 10], [19, 10]),
    ] {
        // SAFETY: live array; 2 values each; buffer of 800 bytes.
        let rc = unsafe {
            (us.get_slice_cbuffer)(
                a,
                s0.as_ptr(),
                s1.as_ptr(),
                buf.as_mut_ptr() as *mut c_void,
                bs.as_ptr(),
                800,
            )
        };
        assert_eq!(rc, BLOSC2_ERROR_INVALID_PARAM, "{s0:?}..{s1:?}");
        // SAFETY: as above.
        let rc = unsafe {
            (us.set_slice_cbuffer)(
                buf.as_ptr() as *const c_void,
                bs.as_ptr(),
                800,
                s0.as_ptr(),
                s1.as_ptr(),
                a,
            )
        };
        assert_eq!(rc, BLOSC2_ERROR_INVALID_PARAM, "{s0:?}..{s1:?}");
    }
    // SAFETY: as above, with a buffer one byte short.
    let rc = unsafe {
        (us.get_slice_cbuffer)(
            a,
            [0i64, 0].as_ptr(),
            [20i64, 10].as_ptr(),
            buf.as_mut_ptr() as *mut c_void,
            [20i64, 10].as_ptr(),
            799,
        )
    };
    assert_eq!(rc, BLOSC2_ERROR_INVALID_PARAM);
    // Absurd contexts.
    // SAFETY: arrays hold the values given.
    unsafe {
        let sh = [1i64; 17];
        let ch = [1i32; 17];
        assert!(b2nd_create_ctx(
            std::ptr::null(),
            17,
            sh.as_ptr(),
            ch.as_ptr(),
            ch.as_ptr(),
            std::ptr::null(),
            0,
            std::ptr::null(),
            0
        )
        .is_null());
        assert!(b2nd_create_ctx(
            std::ptr::null(),
            -1,
            sh.as_ptr(),
            ch.as_ptr(),
            ch.as_ptr(),
            std::ptr::null(),
            0,
            std::ptr::null(),
            0
        )
        .is_null());
        let big = [1i32 << 16, 1 << 16];
        assert!(b2nd_create_ctx(
            std::ptr::null(),
            2,
            sh.as_ptr(),
            big.as_ptr(),
            big.as_ptr(),
            std::ptr::null(),
            0,
            std::ptr::null(),
            0
        )
        .is_null());
        assert_eq!(b2nd_free(std::ptr::null_mut()), BLOSC2_ERROR_NULL_POINTER);
        (us.free)(a);
    }
}

/// The generation counter of a frame's `.b2lock` sidecar (u64 at byte 8, bumped by every
/// exclusive acquisition that is not nested in another).
fn lock_generation(frame: &std::path::Path) -> u64 {
    let mut side = frame.as_os_str().to_owned();
    side.push(".b2lock");
    let b = std::fs::read(&side).unwrap();
    u64::from_ne_bytes(b[8..16].try_into().unwrap())
}

#[test]
fn set_slice_and_resize_hold_one_exclusive_lock_like_the_reference() {
    // c-blosc2 holds the exclusive frame lock across all the chunks of one
    // `b2nd_set_slice_cbuffer` and across a whole `b2nd_resize`, so locked handles (another
    // process's readers) see the whole change or none of it. Each library takes the lock once
    // per call: the sidecar's generation counter moves by the same amount in both.
    let (us, them) = (ours(), theirs());
    let dir = common::scratch::dir("b2f-b2nd-lock-");
    let c = Case {
        shape: vec![200, 50],
        chunks: vec![50, 50],
        blocks: vec![25, 50],
        typesize: 8,
        dtype: "<i8",
    };
    let d = vec![0u8; nitems(&c) * 8];
    let mut moved = Vec::new();
    for (api, who) in [(&us, "ours"), (&them, "ref")] {
        let p = dir.join(format!("{who}.b2nd"));
        let mut params = blosc2_stdio_params { locking: true };
        let mut io = blosc2_io {
            id: BLOSC2_IO_FILESYSTEM as u8,
            name: c"filesystem".as_ptr(),
            params: &mut params as *mut _ as *mut c_void,
        };
        let mut st = storage(8, Some(p.to_str().unwrap()), true);
        st.st.io = &mut io;
        let dt = CString::new(c.dtype).unwrap();
        let mut a: Arr = std::ptr::null_mut();
        let all = vec![7u8; d.len()];
        let (start, stop, shape) = ([0i64, 0], [200i64, 50], [200i64, 50]);
        // SAFETY: ndim values each; `io`, `params` and `st` outlive the array (freed below).
        unsafe {
            let ctx = (api.create_ctx)(
                &st.st,
                2,
                c.shape.as_ptr(),
                c.chunks.as_ptr(),
                c.blocks.as_ptr(),
                dt.as_ptr(),
                0,
                std::ptr::null(),
                0,
            );
            assert!(!ctx.is_null());
            assert_eq!(
                (api.from_cbuffer)(ctx, &mut a, d.as_ptr() as *const c_void, d.len() as i64),
                0
            );
            assert_eq!((api.free_ctx)(ctx), 0);
            let g0 = lock_generation(&p);
            let rc = (api.set_slice_cbuffer)(
                all.as_ptr() as *const c_void,
                shape.as_ptr(),
                all.len() as i64,
                start.as_ptr(),
                stop.as_ptr(),
                a,
            );
            assert_eq!(rc, 0, "{who}");
            let g1 = lock_generation(&p);
            assert_eq!((api.resize)(a, [300i64, 50].as_ptr(), std::ptr::null()), 0);
            let g2 = lock_generation(&p);
            assert_eq!(slice(api, a, 8, &[0, 0], &[200, 50]), all, "{who}");
            assert_eq!((api.free)(a), 0);
            moved.push((who, g1 - g0, g2 - g1));
        }
    }
    assert_eq!(
        moved[0].1, moved[1].1,
        "set_slice lock acquisitions: {moved:?}"
    );
    assert_eq!(
        moved[0].2, moved[1].2,
        "resize lock acquisitions: {moved:?}"
    );
    assert_eq!(moved[1].1, 1, "{moved:?}");
}
