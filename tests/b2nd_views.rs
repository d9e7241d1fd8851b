//! b2nd views (`b2nd_squeeze_index`, `b2nd_squeeze`, `b2nd_expand_dims`) against the real
//! c-blosc2 3.3.5 (dlopened): a view shares its parent's chunks, so writes to the parent after
//! the view was made are read through the view and writes through the view are read through
//! the parent, on plain and contiguous arrays, with the same results on both libraries. Freeing
//! a view leaves the parent's data; on b2frame the parent can also be freed first (c-blosc2
//! then reads freed memory, so that order runs on ours only), a stale view is an error and a
//! view cannot change shape.

#![allow(clippy::missing_transmute_annotations)]

mod common;

use b2frame::capi::b2nd_array::*;
use b2frame::capi::types::*;
use common::reference::reference;
use std::ffi::{c_char, c_int, c_void};

type Arr = *mut b2nd_array_t;
type Ctx = *mut b2nd_context_t;

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
    squeeze_index: unsafe extern "C" fn(Arr, *mut Arr, *const bool) -> c_int,
    squeeze: unsafe extern "C" fn(Arr, *mut Arr) -> c_int,
    expand_dims: unsafe extern "C" fn(*const b2nd_array_t, *mut Arr, *const bool, u8) -> c_int,
    free: unsafe extern "C" fn(Arr) -> c_int,
}

fn ours() -> Api {
    Api {
        create_ctx: b2nd_create_ctx,
        free_ctx: b2nd_free_ctx,
        from_cbuffer: b2nd_from_cbuffer,
        get_slice_cbuffer: b2nd_get_slice_cbuffer,
        set_slice_cbuffer: b2nd_set_slice_cbuffer,
        squeeze_index: b2nd_squeeze_index,
        squeeze: b2nd_squeeze,
        expand_dims: b2nd_expand_dims,
        free: b2nd_free,
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
            get_slice_cbuffer: std::mem::transmute(r.sym("b2nd_get_slice_cbuffer")),
            set_slice_cbuffer: std::mem::transmute(r.sym("b2nd_set_slice_cbuffer")),
            squeeze_index: std::mem::transmute(r.sym("b2nd_squeeze_index")),
            squeeze: std::mem::transmute(r.sym("b2nd_squeeze")),
            expand_dims: std::mem::transmute(r.sym("b2nd_expand_dims")),
            free: std::mem::transmute(r.sym("b2nd_free")),
        }
    }
}

/// A `u32` array of `shape` whose items are their row-major index.
fn build(api: &Api, shape: &[i64], chunks: &[i32], blocks: &[i32], contiguous: bool) -> Arr {
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.compcode = BLOSC_LZ4 as u8;
    let mut dp = BLOSC2_DPARAMS_DEFAULTS;
    let mut st = BLOSC2_STORAGE_DEFAULTS;
    st.cparams = &mut cp;
    st.dparams = &mut dp;
    st.contiguous = contiguous;
    let n: i64 = shape.iter().product();
    let data: Vec<u8> = (0..n as u32).flat_map(|x| x.to_ne_bytes()).collect();
    let mut a: Arr = std::ptr::null_mut();
    // SAFETY: arrays hold ndim values; the dtype is NUL-terminated; buffers sized as declared.
    unsafe {
        let ctx = (api.create_ctx)(
            &st,
            shape.len() as i8,
            shape.as_ptr(),
            chunks.as_ptr(),
            blocks.as_ptr(),
            c"<u4".as_ptr(),
            0,
            std::ptr::null(),
            0,
        );
        assert!(!ctx.is_null());
        let rc = (api.from_cbuffer)(ctx, &mut a, data.as_ptr() as *const c_void, n * 4);
        assert_eq!(rc, 0);
        assert_eq!((api.free_ctx)(ctx), 0);
    }
    a
}

/// The whole of `a` (shape `shape`) as items, or the error code.
fn read(api: &Api, a: Arr, shape: &[i64]) -> Result<Vec<u32>, c_int> {
    let n: i64 = shape.iter().product();
    let mut v = vec![0xAAu8; n as usize * 4];
    let zero = vec![0i64; shape.len()];
    // SAFETY: live array; ndim values each; buffer of `4n` bytes.
    let rc = unsafe {
        (api.get_slice_cbuffer)(
            a,
            zero.as_ptr(),
            shape.as_ptr(),
            v.as_mut_ptr() as *mut c_void,
            shape.as_ptr(),
            n * 4,
        )
    };
    if rc != 0 {
        return Err(rc);
    }
    Ok(v.chunks(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect())
}

/// Writes `vals` into the box `start..stop` of `a`.
fn write(api: &Api, a: Arr, start: &[i64], stop: &[i64], vals: &[u32]) -> c_int {
    let shape: Vec<i64> = start.iter().zip(stop).map(|(x, y)| y - x).collect();
    let bytes: Vec<u8> = vals.iter().flat_map(|x| x.to_ne_bytes()).collect();
    // SAFETY: live array; ndim values each; buffer of its length.
    unsafe {
        (api.set_slice_cbuffer)(
            bytes.as_ptr() as *const c_void,
            shape.as_ptr(),
            bytes.len() as i64,
            start.as_ptr(),
            stop.as_ptr(),
            a,
        )
    }
}

/// What one library reads through views of one array after writes to parent and views.
fn history(api: &Api, contiguous: bool) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    let a = build(api, &[4, 1, 6], &[2, 1, 3], &[1, 1, 3], contiguous);
    let (mut sq, mut ex, mut sqi) = (
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
    let axis = [true, false, false, true];
    let index = [false, true, false];
    // SAFETY: live arrays; masks hold ndim (resp. final_dims) values; out-pointers valid.
    unsafe {
        assert_eq!((api.squeeze)(a, &mut sq), 0);
        assert_eq!((api.expand_dims)(sq, &mut ex, axis.as_ptr(), 4), 0);
        assert_eq!((api.squeeze_index)(a, &mut sqi, index.as_ptr()), 0);
    }
    // SAFETY: live views.
    unsafe {
        assert_eq!(((*sq).ndim, (*ex).ndim, (*sqi).ndim), (2, 4, 2));
        assert_eq!(&(&(*ex).shape)[..4], &[1, 4, 6, 1]);
    }
    // Writes to the parent after the views were made.
    assert_eq!(
        write(
            api,
            a,
            &[1, 0, 0],
            &[3, 1, 4],
            &(100..108).collect::<Vec<_>>()
        ),
        0
    );
    out.push(read(api, sq, &[4, 6]).unwrap());
    out.push(read(api, ex, &[1, 4, 6, 1]).unwrap());
    out.push(read(api, sqi, &[4, 6]).unwrap());
    // Writes through a view, read through the parent and the other views. (c-blosc2 fails
    // them half-way with -1 on a contiguous parent, whose frame its views write to without
    // updating its index; b2frame's succeed, see `freeing_the_parent_first_keeps_views_readable`.)
    if !contiguous {
        assert_eq!(
            write(api, ex, &[0, 3, 2, 0], &[1, 4, 6, 1], &[7, 8, 9, 10]),
            0
        );
        assert_eq!(write(api, sq, &[0, 5], &[1, 6], &[55]), 0);
        out.push(read(api, a, &[4, 1, 6]).unwrap());
        out.push(read(api, sqi, &[4, 6]).unwrap());
    }
    // Views freed first: the parent's data stays.
    // SAFETY: each view freed once, then the parent.
    unsafe {
        assert_eq!((api.free)(ex), 0);
        assert_eq!((api.free)(sq), 0);
        out.push(read(api, a, &[4, 1, 6]).unwrap());
        out.push(read(api, sqi, &[4, 6]).unwrap());
        assert_eq!((api.free)(sqi), 0);
        assert_eq!((api.free)(a), 0);
    }
    out
}

#[test]
fn views_share_data_as_in_cblosc2() {
    for contiguous in [false, true] {
        let (o, t) = (history(&ours(), contiguous), history(&theirs(), contiguous));
        assert_eq!(o, t, "contiguous={contiguous}");
        // The history is not trivial: the parent's writes show through the views, and the
        // views' through the parent.
        assert_eq!(o[0][6..12], [100, 101, 102, 103, 10, 11]);
        if !contiguous {
            assert_eq!((o[3][5], &o[3][22..24]), (55, &[9, 10][..]));
        }
    }
}

#[test]
fn freeing_the_parent_first_keeps_views_readable() {
    let api = ours();
    let a = build(&api, &[3, 1], &[2, 1], &[1, 1], true);
    let mut v = std::ptr::null_mut();
    // SAFETY: live array; valid out-pointer; the parent is freed once, then the view.
    unsafe {
        assert_eq!((api.squeeze)(a, &mut v), 0);
        assert_eq!(write(&api, a, &[2, 0], &[3, 1], &[42]), 0);
        assert_eq!((api.free)(a), 0);
        assert_eq!(read(&api, v, &[3]).unwrap(), vec![0, 1, 42]);
        assert_eq!(write(&api, v, &[0], &[1], &[9]), 0);
        assert_eq!(read(&api, v, &[3]).unwrap(), vec![9, 1, 42]);
        assert_eq!((api.free)(v), 0);
    }
}

#[test]
fn views_cannot_reshape_and_go_stale_after_the_parent_does() {
    let api = ours();
    let a = build(&api, &[4, 1], &[2, 1], &[2, 1], false);
    let mut v = std::ptr::null_mut();
    let grow = [6i64, 1];
    let vgrow = [6i64];
    // SAFETY: live arrays; shapes hold ndim values.
    unsafe {
        assert_eq!((api.squeeze)(a, &mut v), 0);
        assert_eq!(
            b2nd_resize(v, vgrow.as_ptr(), std::ptr::null()),
            BLOSC2_ERROR_INVALID_PARAM
        );
        assert_eq!(read(&api, v, &[4]).unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(b2nd_resize(a, grow.as_ptr(), std::ptr::null()), 0);
        assert_eq!(read(&api, v, &[4]), Err(BLOSC2_ERROR_INVALID_PARAM));
        assert_eq!((api.free)(v), 0);
        assert_eq!(read(&api, a, &[6, 1]).unwrap(), vec![0, 1, 2, 3, 0, 0]);
        assert_eq!((api.free)(a), 0);
    }
}

#[test]
fn a_view_serialises_with_its_own_shape() {
    let api = ours();
    let a = build(&api, &[2, 1, 3], &[1, 1, 3], &[1, 1, 1], true);
    let mut v = std::ptr::null_mut();
    // SAFETY: live array; valid out-pointers; the frame buffer is freed when `needs_free`.
    unsafe {
        assert_eq!((api.squeeze)(a, &mut v), 0);
        assert_eq!(write(&api, a, &[1, 0, 1], &[2, 1, 2], &[77]), 0);
        let (mut p, mut len, mut nf) = (std::ptr::null_mut(), 0i64, false);
        assert_eq!(b2nd_to_cframe(v, &mut p, &mut len, &mut nf), 0);
        let mut back = std::ptr::null_mut();
        assert_eq!(b2nd_from_cframe(p, len, true, &mut back), 0);
        if nf {
            libc::free(p as *mut c_void);
        }
        assert_eq!(((*back).ndim, &(&(*back).shape)[..2]), (2, &[2i64, 3][..]));
        assert_eq!(read(&api, back, &[2, 3]).unwrap(), vec![0, 1, 2, 3, 77, 5]);
        for x in [back, v, a] {
            assert_eq!((api.free)(x), 0);
        }
    }
}
