//! Shape changes over a [`ChunkStore`]: [`resize`] (shrinking and extending, at the end or
//! at a `start`), [`insert`] and [`delete`] along one axis, each returning the new geometry.

#![forbid(unsafe_code)]

use super::*;

/// The new geometry after `shrink`/`extend` (`start` as in [`resize`]).
pub(super) fn shrink(
    store: &mut dyn ChunkStore,
    g: &Geometry,
    new: &[i64],
    start: Option<&[i64]>,
) -> Result<Geometry> {
    if new == g.shape() {
        return Ok(g.clone());
    }
    let ng = g.with_shape(new)?;
    let old_cia = g.chunks_in_array();
    let start = start.unwrap_or(new);
    // The smaller shape first, then the chunks it no longer covers (see `commit_shape`).
    store.commit_shape(new)?;
    let mut idx = vec![0i64; g.ndim()];
    for i in (0..store.nchunks()).rev() {
        unravel(i, &old_cia, &mut idx);
        let gone = (0..g.ndim()).any(|j| {
            let pos = i64::from(g.chunkshape()[j]) * idx[j];
            start[j] <= pos && pos < start[j] + g.shape()[j] - new[j]
        });
        if gone {
            store.delete_chunk(i)?;
        }
    }
    Ok(ng)
}

pub(super) fn extend(
    store: &mut dyn ChunkStore,
    g: &Geometry,
    new: &[i64],
    start: Option<&[i64]>,
) -> Result<Geometry> {
    if new == g.shape() {
        return Ok(g.clone());
    }
    if g.shape().contains(&i64::MAX) {
        return Err(Error::InvalidParam);
    }
    let ng = g.with_shape(new)?;
    let nchunks = if ng.chunknitems() == 0 {
        0
    } else {
        ng.extnitems() / i64::from(ng.chunknitems())
    };
    if nchunks != store.nchunks() {
        let chunk_bytes = i32::try_from(ng.chunk_nbytes(store.typesize())?)
            .map_err(|_| Error::MaxBufsizeExceeded)?;
        let start = start.unwrap_or(g.shape());
        let cia = ng.chunks_in_array();
        let mut idx = vec![0i64; g.ndim()];
        for i in 0..nchunks {
            unravel(i, &cia, &mut idx);
            let added = (0..g.ndim()).any(|j| {
                let pos = i64::from(g.chunkshape()[j]) * idx[j];
                start[j] <= pos && pos < start[j] + new[j] - g.shape()[j]
            });
            if added {
                store.insert_zero_chunk(i, chunk_bytes)?;
            }
        }
    }
    Ok(ng)
}

/// Resizes the array to `new_shape`, adding zero chunks and deleting chunks as c-blosc2's
/// `b2nd_resize` does: `start` (default: the end of each dimension) is where items are added
/// or removed; away from the end it must be a multiple of the chunk shape, as must the change.
/// Items added inside a chunk that already exists (growing at the end into its padding) read
/// as what that padding holds: zeros for chunks written zero-padded, the fill value after
/// `full`, the items cut off by an earlier shrink. c-blosc2 3.3.5 reads the same; only new
/// chunks are zeros. Returns the new geometry.
pub fn resize(
    store: &mut dyn ChunkStore,
    g: &Geometry,
    new_shape: &[i64],
    start: Option<&[i64]>,
) -> Result<Geometry> {
    let n = g.ndim();
    if new_shape.len() != n || start.is_some_and(|s| s.len() != n) {
        return Err(Error::InvalidParam);
    }
    if new_shape.iter().any(|&s| s < 0) {
        return Err(Error::InvalidParam);
    }
    if let Some(st) = start {
        for i in 0..n {
            let (old, new, s) = (g.shape()[i], new_shape[i], st[i]);
            // The items removed must lie inside the array: c-blosc2 takes `s > new` and
            // deletes fewer chunks than the shape loses, leaving an array that holds more
            // chunks than its shape and reads shifted items after the next resize.
            if s < 0 || s > old || (new < old && s > new) {
                return Err(Error::InvalidParam);
            }
            let c = i64::from(g.chunkshape()[i]);
            let away_from_end = (new > old && s != old) || (new < old && s + old - new != old);
            if away_from_end && (c == 0 || s % c != 0 || (new - old) % c != 0) {
                return Err(Error::InvalidParam);
            }
        }
    }
    // Validate the final geometry before touching any chunk.
    g.with_shape(new_shape)?;
    let shrunk: Vec<i64> = (0..n).map(|i| new_shape[i].min(g.shape()[i])).collect();
    let g1 = shrink(store, g, &shrunk, start)?;
    extend(store, &g1, new_shape, start)
}

/// The shape and box of inserting `nbytes` of items along `axis` at `at`: the new shape, the
/// buffer's shape and the slice the buffer is written to.
#[allow(clippy::type_complexity)]
pub fn insert_plan(
    g: &Geometry,
    typesize: i32,
    nbytes: i64,
    axis: i8,
    at: i64,
) -> Result<(Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>)> {
    let n = g.ndim();
    let axis = usize::try_from(axis)
        .ok()
        .filter(|&a| a < n)
        .ok_or(Error::InvalidParam)?;
    let mut slab = i64::from(typesize);
    for i in (0..n).filter(|&i| i != axis) {
        slab = slab.checked_mul(g.shape()[i]).ok_or(Error::InvalidParam)?;
    }
    if slab <= 0 || nbytes < 0 || nbytes % slab != 0 {
        return Err(Error::InvalidParam);
    }
    let added = nbytes / slab;
    if at < 0 || at > g.shape()[axis] {
        return Err(Error::InvalidParam);
    }
    let mut new_shape = g.shape().to_vec();
    new_shape[axis] = new_shape[axis]
        .checked_add(added)
        .ok_or(Error::InvalidParam)?;
    let mut bufshape = g.shape().to_vec();
    bufshape[axis] = added;
    let mut start = vec![0i64; n];
    start[axis] = at;
    let mut stop = new_shape.clone();
    stop[axis] = at + added;
    Ok((new_shape, bufshape, start, stop))
}

/// Inserts `buffer` (items with the array's shape except `added` along `axis`) at `at` along
/// `axis` (`b2nd_insert`). Returns the new geometry.
pub fn insert(
    store: &mut dyn ChunkStore,
    g: &Geometry,
    buffer: &[u8],
    axis: i8,
    at: i64,
) -> Result<Geometry> {
    let (new_shape, bufshape, start, stop) =
        insert_plan(g, store.typesize(), buffer.len() as i64, axis, at)?;
    let ng = if at == g.shape()[axis as usize] {
        resize(store, g, &new_shape, None)?
    } else {
        resize(store, g, &new_shape, Some(&start))?
    };
    set_slice(store, &ng, &start, &stop, buffer, &bufshape)?;
    Ok(ng)
}

/// Deletes `len` items along `axis` from `at` (`b2nd_delete`). Returns the new geometry.
pub fn delete(
    store: &mut dyn ChunkStore,
    g: &Geometry,
    axis: i8,
    at: i64,
    len: i64,
) -> Result<Geometry> {
    let n = g.ndim();
    let a = usize::try_from(axis)
        .ok()
        .filter(|&a| a < n)
        .ok_or(Error::InvalidParam)?;
    if len < 0 || at < 0 || at.checked_add(len).is_none_or(|e| e > g.shape()[a]) {
        return Err(Error::InvalidParam);
    }
    let mut new_shape = g.shape().to_vec();
    new_shape[a] -= len;
    let mut start = vec![0i64; n];
    start[a] = at;
    if at == g.shape()[a] - len {
        resize(store, g, &new_shape, None)
    } else {
        resize(store, g, &new_shape, Some(&start))
    }
}
