//! Views sharing data, stale views, re-chunked serialisations, many readers at once.

use super::*;
use crate::b2nd::Array;
use std::ops::Range;

fn cp(ts: i32) -> CParams {
    CParams {
        typesize: ts,
        ..CParams::default()
    }
}

/// A `u32` array whose items are their own row-major index.
fn iota(shape: &[usize], chunks: &[usize], blocks: &[usize]) -> Array<u32> {
    let n: usize = shape.iter().product();
    let data: Vec<u32> = (0..n as u32).collect();
    Array::from_slice(NewStorage::Memory, shape, chunks, blocks, &cp(4), &data).unwrap()
}

fn all(shape: &[usize]) -> Vec<Range<usize>> {
    shape.iter().map(|&s| 0..s).collect()
}

#[test]
fn views_see_later_writes_both_ways() {
    let a = iota(&[3, 1, 4], &[2, 1, 3], &[1, 1, 2]);
    let v = a.squeeze().unwrap();
    let e = v.expand_dims(&[0, 3]).unwrap();
    assert_eq!(v.shape(), vec![3, 4]);
    assert_eq!(e.shape(), vec![1, 3, 4, 1]);
    assert!(v.is_view() && e.is_view() && a.shares_data_with(&e));
    a.set_slice(&[1..2, 0..1, 0..4], &[50, 51, 52, 53]).unwrap();
    assert_eq!(v.slice(&[1..2, 0..4]).unwrap(), vec![50, 51, 52, 53]);
    assert_eq!(e.slice(&[0..1, 1..2, 1..3, 0..1]).unwrap(), vec![51, 52]);
    e.set(&[0, 2, 3, 0], 99).unwrap();
    assert_eq!(a.get(&[2, 0, 3]).unwrap(), 99);
    assert_eq!(v.get(&[2, 3]).unwrap(), 99);
    // Orthogonal selections and sparse items through views.
    assert_eq!(
        v.orthogonal(&[&[2, 0], &[3, 0]]).unwrap(),
        vec![99, 8, 3, 0]
    );
    assert_eq!(
        e.orthogonal(&[&[0, 0], &[2], &[3], &[0]]).unwrap(),
        vec![99, 99]
    );
    assert_eq!(e.sparse(&[11, 4]).unwrap(), vec![99, 50]);
    v.set_orthogonal(&[&[0], &[1, 2]], &[7, 8]).unwrap();
    assert_eq!(a.slice(&[0..1, 0..1, 0..4]).unwrap(), vec![0, 7, 8, 3]);
    assert_eq!(
        e.orthogonal(&[&[1], &[0], &[0], &[0]]),
        Err(Error::InvalidIndex)
    );
}

#[test]
fn views_whose_chunks_pad_differently_still_read_right() {
    // Squeezing a dimension of extent 1 whose chunk extent is 4: the view's own geometry
    // would pad chunks to 5 items, the stored chunks hold 4 x 5.
    let a = iota(&[1, 10], &[4, 5], &[2, 5]);
    let v = a.squeeze().unwrap();
    assert_eq!(v.to_vec().unwrap(), (0..10).collect::<Vec<u32>>());
    a.set(&[0, 7], 70).unwrap();
    assert_eq!(v.get(&[7]).unwrap(), 70);
    // Serialised as an array of its own, re-chunked.
    let back = Array::<u32>::from_cframe(&v.to_cframe().unwrap()).unwrap();
    assert_eq!(back.shape(), vec![10]);
    assert_eq!(back.get(&[7]).unwrap(), 70);
    assert!(!back.is_view());
    // A buffer with more room along an added dimension than the slice takes.
    let e = v.expand_dims(&[1]).unwrap();
    let mut buf = vec![0xffu8; 10 * 3 * 4];
    e.read_slice_into(&[0, 0], &[10, 1], &mut buf, &[10, 3])
        .unwrap();
    let got: Vec<u32> = buf
        .chunks(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    for i in 0..10 {
        assert_eq!(got[i * 3], if i == 7 { 70 } else { i as u32 });
        assert_eq!((got[i * 3 + 1], got[i * 3 + 2]), (0, 0));
    }
}

#[test]
fn views_go_stale_after_a_shape_change_and_cannot_change_shape() {
    let mut a = iota(&[4, 1], &[2, 1], &[2, 1]);
    let mut v = a.squeeze().unwrap();
    assert_eq!(v.resize(&[6]), Err(Error::InvalidParam));
    assert_eq!(v.to_vec().unwrap(), vec![0, 1, 2, 3]);
    a.resize(&[6, 1]).unwrap();
    assert_eq!(v.to_vec(), Err(Error::InvalidParam));
    assert_eq!(a.squeeze().unwrap().shape(), vec![6]);
}

#[test]
fn dropping_the_parent_keeps_the_data_of_its_views() {
    let a = iota(&[2, 1, 2], &[1, 1, 2], &[1, 1, 1]);
    let v = a.squeeze_axes(&[1]).unwrap();
    drop(a);
    assert_eq!(v.to_vec().unwrap(), vec![0, 1, 2, 3]);
    assert_eq!(v.squeeze_axes(&[0]).map(|_| ()), Err(Error::InvalidIndex));
    assert_eq!(v.squeeze_axes(&[5]).map(|_| ()), Err(Error::InvalidParam));
    assert_eq!(v.expand_dims(&[0, 0]).map(|_| ()), Err(Error::InvalidParam));
    assert_eq!(v.expand_dims(&[3]).map(|_| ()), Err(Error::InvalidParam));
}

#[test]
fn views_of_arrays_with_other_metalayers_are_refused() {
    let p = ArrayParams::new(&[1, 2], &[1, 2], &[1, 2]).metalayer("extra", b"x");
    let a = RawArray::new(NewStorage::Memory, &p, &cp(1), Fill::Zeros).unwrap();
    assert_eq!(a.squeeze().map(|_| ()), Err(Error::InvalidParam));
}

#[test]
fn many_threads_read_one_array() {
    let a = iota(&[64, 48], &[16, 12], &[4, 6]);
    let v = a.expand_dims(&[1]).unwrap();
    std::thread::scope(|s| {
        for t in 0..8usize {
            let (a, v) = (&a, &v);
            s.spawn(move || {
                for k in 0..20usize {
                    let r0 = (t * 7 + k) % 60;
                    let c0 = (t * 5 + k * 3) % 40;
                    let got = a.slice(&[r0..r0 + 4, c0..c0 + 8]).unwrap();
                    let via = v.slice(&[r0..r0 + 4, 0..1, c0..c0 + 8]).unwrap();
                    for (j, x) in got.iter().enumerate() {
                        let want = ((r0 + j / 8) * 48 + c0 + j % 8) as u32;
                        assert_eq!(*x, want);
                    }
                    assert_eq!(got, via);
                }
            });
        }
    });
}

#[test]
fn copies_concatenations_and_slices_into_arrays() {
    let a = iota(&[5, 4], &[2, 2], &[1, 2]);
    let b = a.copy(NewStorage::Plain, &[3, 3], &[3, 1], &cp(4)).unwrap();
    assert_eq!(b.chunkshape(), vec![3, 3]);
    assert_eq!(b.to_vec().unwrap(), a.to_vec().unwrap());
    let c = a
        .concatenate(
            &b,
            1,
            NewStorage::Memory,
            &ArrayParams::new(&[], &[2, 2], &[1, 2]),
            &cp(4),
        )
        .unwrap();
    assert_eq!(c.shape(), vec![5, 8]);
    let c = Array::<u32>::from_raw(c).unwrap();
    assert_eq!(
        c.slice(&[4..5, 0..8]).unwrap(),
        vec![16, 17, 18, 19, 16, 17, 18, 19]
    );
    let mut d = iota(&[4, 4], &[2, 2], &[1, 2]);
    d.extend(&iota(&[2, 4], &[2, 2], &[1, 2]), 0).unwrap();
    assert_eq!(d.slice(&[4..6, 3..4]).unwrap(), vec![3, 7]);
    assert_eq!(d.shape(), vec![6, 4]);
    let full = all(&d.shape());
    assert_eq!(d.slice(&full).unwrap().len(), 24);
    // A slice past the shape reads as zeros in the new array.
    let e = RawArray::slice_to_array(
        &d,
        &[5, 3],
        &[7, 5],
        NewStorage::Plain,
        &ArrayParams::new(&[], &[2, 2], &[1, 1]),
        &cp(4),
    )
    .unwrap();
    assert_eq!(e.to_bytes().unwrap().len(), 16);
    assert_eq!(
        Array::<u32>::from_raw(e).unwrap().to_vec().unwrap(),
        vec![7, 0, 0, 0]
    );
}

#[test]
#[allow(clippy::reversed_empty_ranges, clippy::single_range_in_vec_init)]
fn bad_arguments_are_errors() {
    let a = iota(&[4, 4], &[2, 2], &[1, 2]);
    assert_eq!(a.slice(&[0..5, 0..1]), Err(Error::InvalidParam));
    assert_eq!(a.slice(&[2..1, 0..1]), Err(Error::InvalidParam));
    assert_eq!(a.slice(&[0..1]), Err(Error::InvalidParam));
    assert_eq!(
        a.set_slice(&[0..2, 0..2], &[1, 2, 3]),
        Err(Error::InvalidParam)
    );
    assert_eq!(a.orthogonal(&[&[4], &[0]]), Err(Error::InvalidIndex));
    assert_eq!(a.sparse(&[16]), Err(Error::InvalidParam));
    assert_eq!(
        Array::<u64>::from_raw(a.into_raw()).map(|_| ()),
        Err(Error::InvalidParam)
    );
    let bad = ArrayParams::new(&[4], &[2, 2], &[2]);
    assert_eq!(
        RawArray::new(NewStorage::Plain, &bad, &cp(1), Fill::Zeros).map(|_| ()),
        Err(Error::InvalidParam)
    );
    let p = ArrayParams::new(&[4], &[2], &[2]);
    assert_eq!(
        RawArray::new(NewStorage::Plain, &p, &cp(2), Fill::Nans).map(|_| ()),
        Err(Error::Data)
    );
    assert_eq!(
        RawArray::new(NewStorage::Plain, &p, &cp(2), Fill::Value(&[1])).map(|_| ()),
        Err(Error::InvalidParam)
    );
}
