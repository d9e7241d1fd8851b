//! Orthogonal selections: the outer product of one index list per dimension
//! (`b2nd_get_orthogonal_selection` / `b2nd_set_orthogonal_selection`).

use super::array::ChunkStore;
use super::geometry::{c_strides, Geometry};
use crate::error::{Error, Result};

/// Per dimension, the selected indices grouped by chunk: `(chunk index, [(in-chunk index,
/// position in the caller's list)])`, chunks ascending.
type Group = (i64, Vec<(i64, i64)>);
type Groups = Vec<Vec<Group>>;

fn group(g: &Geometry, selection: &[&[i64]]) -> Result<Groups> {
    let mut out = Vec::with_capacity(g.ndim());
    for (d, sel) in selection.iter().enumerate() {
        let c = i64::from(g.chunkshape()[d]);
        let mut v: Vec<(i64, i64)> = Vec::with_capacity(sel.len());
        for (k, &x) in sel.iter().enumerate() {
            if x < 0 || x >= g.shape()[d] {
                return Err(Error::InvalidIndex);
            }
            v.push((x, k as i64));
        }
        v.sort_unstable();
        let mut groups: Vec<Group> = Vec::new();
        for (x, k) in v {
            let ci = x / c;
            match groups.last_mut() {
                Some((gi, items)) if *gi == ci => items.push((x % c, k)),
                _ => groups.push((ci, vec![(x % c, k)])),
            }
        }
        out.push(groups);
    }
    Ok(out)
}

/// Calls `f` for each combination of one entry per list (row-major).
fn product<T>(lists: &[&[T]], mut f: impl FnMut(&[usize]) -> Result<()>) -> Result<()> {
    if lists.iter().any(|l| l.is_empty()) {
        return Ok(());
    }
    let n = lists.len();
    let mut idx = vec![0usize; n];
    loop {
        f(&idx)?;
        let mut j = n;
        loop {
            if j == 0 {
                return Ok(());
            }
            j -= 1;
            idx[j] += 1;
            if idx[j] < lists[j].len() {
                break;
            }
            idx[j] = 0;
        }
    }
}

/// A chunk access of [`walk`]: read chunk `n` into the buffer, or store it from the buffer.
enum Io<'x> {
    Read(i64, &'x mut [u8]),
    Write(i64, &'x [u8]),
}

/// Reads the orthogonal selection `selection` (one index list per dimension) into `buffer`,
/// a row-major array of shape `buffershape` whose item `(j0, j1, ...)` is array item
/// `(selection[0][j0], selection[1][j1], ...)`. An index outside the shape is
/// `InvalidIndex`; a buffer too small for an item it should hold is `InvalidParam`.
pub fn get_orthogonal(
    store: &dyn ChunkStore,
    g: &Geometry,
    selection: &[&[i64]],
    buffer: &mut [u8],
    buffershape: &[i64],
) -> Result<()> {
    let ts = store.typesize();
    let mut io = |a: Io| match a {
        Io::Read(n, d) => store.read_chunk(n, d),
        Io::Write(..) => Ok(0),
    };
    walk(
        &mut io,
        ts,
        g,
        selection,
        buffershape,
        &mut |data, bo, len| {
            buffer
                .get_mut(bo..bo + len)
                .ok_or(Error::InvalidParam)?
                .copy_from_slice(data);
            Ok(())
        },
    )
}

/// Writes `buffer` (laid out as in [`get_orthogonal`]) into the orthogonal selection; each
/// chunk it touches is read, patched and stored back.
pub fn set_orthogonal(
    store: &mut dyn ChunkStore,
    g: &Geometry,
    selection: &[&[i64]],
    buffer: &[u8],
    buffershape: &[i64],
) -> Result<()> {
    let ts = store.typesize();
    let mut io = |a: Io| match a {
        Io::Read(n, d) => store.read_chunk(n, d),
        Io::Write(n, d) => store.write_chunk(n, d).map(|_| 0),
    };
    walk(
        &mut io,
        ts,
        g,
        selection,
        buffershape,
        &mut |data, bo, len| {
            data.copy_from_slice(buffer.get(bo..bo + len).ok_or(Error::InvalidParam)?);
            Ok(())
        },
    )
}

/// What [`walk`] calls for each selected item: its bytes in the decoded chunk, its byte offset
/// in the caller's buffer and its length.
type ItemFn<'a> = dyn FnMut(&mut [u8], usize, usize) -> Result<()> + 'a;

/// Visits every selected item chunk by chunk: reads each chunk, calls `item(slot, at, len)`
/// with the item's bytes in the decoded chunk and its byte offset in the caller's buffer, and
/// (for writes) stores the chunk back.
fn walk(
    io: &mut dyn FnMut(Io) -> Result<usize>,
    typesize: i32,
    g: &Geometry,
    selection: &[&[i64]],
    buffershape: &[i64],
    item: &mut ItemFn<'_>,
) -> Result<()> {
    let n = g.ndim();
    if selection.len() != n || buffershape.len() != n || n == 0 {
        return Err(Error::InvalidParam);
    }
    let ts = usize::try_from(typesize).map_err(|_| Error::InvalidParam)?;
    let groups = group(g, selection)?;
    let chunk_bytes = g.chunk_nbytes(typesize)?;
    let bufstr = c_strides(buffershape);
    let cstr = c_strides(&g.chunks_in_array());
    let bstr = c_strides(&g.blocks_in_chunk());
    let istr = c_strides(
        &g.blockshape()
            .iter()
            .map(|&x| i64::from(x))
            .collect::<Vec<_>>(),
    );
    let mut data = vec![0u8; chunk_bytes];
    let lists: Vec<&[Group]> = groups.iter().map(|v| &v[..]).collect();
    product(&lists, |ci| {
        let nchunk: i64 = (0..n).map(|d| groups[d][ci[d]].0 * cstr[d]).sum();
        if io(Io::Read(nchunk, &mut data))? != chunk_bytes {
            return Err(Error::Data);
        }
        let items: Vec<&[(i64, i64)]> = (0..n).map(|d| &groups[d][ci[d]].1[..]).collect();
        product(&items, |ii| {
            let (mut nblock, mut it, mut at) = (0i64, 0i64, 0i64);
            for d in 0..n {
                let (x, k) = items[d][ii[d]];
                let b = i64::from(g.blockshape()[d]);
                nblock += x / b * bstr[d];
                it += x % b * istr[d];
                at = at
                    .checked_add(k.checked_mul(bufstr[d]).ok_or(Error::InvalidParam)?)
                    .ok_or(Error::InvalidParam)?;
            }
            let off = (nblock * i64::from(g.blocknitems()) + it) as usize * ts;
            let bo = usize::try_from(at)
                .map_err(|_| Error::InvalidParam)?
                .checked_mul(ts)
                .ok_or(Error::InvalidParam)?;
            item(&mut data[off..off + ts], bo, ts)
        })?;
        io(Io::Write(nchunk, &data)).map(|_| ())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::b2nd::array::{get_slice, set_slice};
    use crate::b2nd::shared::Shared;
    use crate::chunk::{CParams, DParams};
    use crate::schunk::{NewStorage, SChunk};

    #[test]
    fn selection_is_the_outer_product() {
        let g = Geometry::new(&[7, 9], &[3, 4], &[2, 3]).unwrap();
        let cp = CParams {
            typesize: 4,
            ..CParams::default()
        };
        let sh = Shared::new(SChunk::new(NewStorage::Plain, cp, DParams { nthreads: 1 }).unwrap());
        let mut st = sh.writing().unwrap();
        for i in 0..g.nchunks() {
            st.insert_zero_chunk(i, g.chunk_nbytes(4).unwrap() as i32)
                .unwrap();
        }
        let all: Vec<u8> = (0..63u32).flat_map(|x| x.to_ne_bytes()).collect();
        set_slice(&mut st, &g, &[0, 0], &[7, 9], &all, &[7, 9]).unwrap();
        let rows: &[i64] = &[6, 0, 3, 3];
        let cols: &[i64] = &[8, 1, 4];
        let mut buf = vec![0u8; 48];
        get_orthogonal(&st, &g, &[rows, cols], &mut buf, &[4, 3]).unwrap();
        let got: Vec<u32> = buf
            .chunks(4)
            .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        let want: Vec<u32> = rows
            .iter()
            .flat_map(|r| cols.iter().map(move |c| (r * 9 + c) as u32))
            .collect();
        assert_eq!(got, want);
        // Write back negated values and check through a plain slice read.
        let neg: Vec<u8> = want.iter().flat_map(|x| (1000 + x).to_ne_bytes()).collect();
        let nb = neg.clone();
        set_orthogonal(&mut st, &g, &[rows, cols], &nb, &[4, 3]).unwrap();
        let mut back = vec![0u8; 252];
        get_slice(&st, &g, &[0, 0], &[7, 9], &mut back, &[7, 9]).unwrap();
        let v: Vec<u32> = back
            .chunks(4)
            .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(v[6 * 9 + 8], 1000 + 62);
        assert_eq!(v[9 + 1], 10);
        assert_eq!(
            get_orthogonal(&st, &g, &[&[7], cols], &mut buf, &[1, 3]),
            Err(Error::InvalidIndex)
        );
        assert_eq!(
            get_orthogonal(&st, &g, &[rows, cols], &mut buf[..40], &[4, 3]),
            Err(Error::InvalidParam)
        );
    }
}
