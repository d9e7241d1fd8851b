//! Special-value chunks: header-only chunks that stand for all zeros, all NaNs, one repeated
//! value, or undefined contents (`blosc2_chunk_zeros/nans/repeatval/uninit`).
//!
//! Exact bytes written (matching c-blosc2): version 5, versionlz 1, flags 0x05 (extended header,
//! no codec bits), the capped typesize, nbytes, the block size c-blosc2 would use for that nbytes
//! and cparams, cbytes 32 (32 + typesize for a repeated value, whose bytes follow the header),
//! filters/codec bytes all 0, `blosc2_flags = kind << 4`.

use super::blocksize::compute_blocksize;
use super::header::{
    self, ChunkHeader, SpecialKind, EXTENDED_HEADER_LEN, MAX_BUFFERSIZE, MAX_HEADER_TYPESIZE,
    MAX_TYPESIZE,
};
use super::CParams;
use crate::error::{Error, Result};

/// Builds the header of a special chunk after c-blosc2's argument checks.
fn special_header(
    cp: &CParams,
    nbytes: i32,
    kind: SpecialKind,
    dstlen: usize,
) -> Result<ChunkHeader> {
    let extra = if kind == SpecialKind::Value {
        cp.typesize.max(0) as usize
    } else {
        0
    };
    if dstlen < EXTENDED_HEADER_LEN + extra {
        return Err(Error::Data);
    }
    if cp.typesize <= 0 || nbytes < 0 {
        return Err(Error::InvalidParam);
    }
    let misaligned = nbytes % cp.typesize != 0;
    if misaligned && !(kind == SpecialKind::Zero && nbytes == 0) {
        return Err(Error::Data);
    }
    if nbytes > MAX_BUFFERSIZE {
        return Err(Error::MaxBufsizeExceeded);
    }
    if cp.clevel > 9 {
        return Err(Error::CodecParam);
    }
    if cp.typesize > MAX_TYPESIZE {
        return Err(Error::InvalidParam);
    }
    let blocksize = compute_blocksize(
        cp.compcode,
        cp.clevel,
        cp.typesize,
        cp.splitmode,
        &cp.filters,
        nbytes,
        cp.blocksize.max(0),
    );
    Ok(ChunkHeader {
        version: header::version::STABLE,
        versionlz: 1,
        flags: header::flags::EXTENDED,
        typesize: if cp.typesize > MAX_HEADER_TYPESIZE {
            1
        } else {
            cp.typesize as u8
        },
        nbytes,
        blocksize,
        cbytes: (EXTENDED_HEADER_LEN + extra) as i32,
        blosc2_flags: (kind as u8) << 4,
        ..Default::default()
    })
}

/// Writes an all-zeros chunk into `dst`; returns 32. `nbytes` need not be a multiple of the
/// typesize.
pub fn zeros(cp: &CParams, nbytes: i32, dst: &mut [u8]) -> Result<usize> {
    let h = special_header(cp, nbytes, SpecialKind::Zero, dst.len())?;
    h.write(dst);
    Ok(EXTENDED_HEADER_LEN)
}

/// Writes an all-NaN chunk (float32 for typesize 4, float64 for 8; other typesizes fail when
/// decoded); returns 32.
pub fn nans(cp: &CParams, nbytes: i32, dst: &mut [u8]) -> Result<usize> {
    let h = special_header(cp, nbytes, SpecialKind::Nan, dst.len())?;
    h.write(dst);
    Ok(EXTENDED_HEADER_LEN)
}

/// Writes an uninitialized chunk (decoding leaves the destination as it is); returns 32.
pub fn uninit(cp: &CParams, nbytes: i32, dst: &mut [u8]) -> Result<usize> {
    let h = special_header(cp, nbytes, SpecialKind::Uninit, dst.len())?;
    h.write(dst);
    Ok(EXTENDED_HEADER_LEN)
}

/// Writes a chunk of `value` (its first `typesize` bytes) repeated; returns 32 + typesize.
/// `value` shorter than the typesize is an `InvalidParam` error.
pub fn repeatval(cp: &CParams, nbytes: i32, dst: &mut [u8], value: &[u8]) -> Result<usize> {
    let h = special_header(cp, nbytes, SpecialKind::Value, dst.len())?;
    let ts = cp.typesize as usize;
    if value.len() < ts {
        return Err(Error::InvalidParam);
    }
    h.write(dst);
    dst[EXTENDED_HEADER_LEN..EXTENDED_HEADER_LEN + ts].copy_from_slice(&value[..ts]);
    Ok(EXTENDED_HEADER_LEN + ts)
}

/// Fills `dst` (a region of the decoded chunk, `dst.len()` a multiple of the item width) with
/// the special value of a chunk. `chunk` is the whole chunk (the repeated value follows the
/// header); `typesize` is the header typesize.
pub fn fill(kind: SpecialKind, chunk: &[u8], h: &ChunkHeader, dst: &mut [u8]) -> Result<()> {
    match kind {
        SpecialKind::None => Err(Error::Failure),
        SpecialKind::Zero => {
            dst.fill(0);
            Ok(())
        }
        SpecialKind::Uninit => Ok(()),
        SpecialKind::Nan => {
            let ts = h.typesize as usize;
            if !dst.len().is_multiple_of(ts) {
                return Err(Error::Data);
            }
            match ts {
                4 => dst
                    .chunks_exact_mut(4)
                    .for_each(|c| c.copy_from_slice(&f32::NAN.to_le_bytes())),
                8 => dst
                    .chunks_exact_mut(8)
                    .for_each(|c| c.copy_from_slice(&f64::NAN.to_le_bytes())),
                _ => {
                    if !dst.is_empty() {
                        return Err(Error::Data);
                    }
                }
            }
            Ok(())
        }
        SpecialKind::Value => {
            let width = (h.cbytes as usize).saturating_sub(EXTENDED_HEADER_LEN);
            let value = chunk
                .get(EXTENDED_HEADER_LEN..EXTENDED_HEADER_LEN + width)
                .ok_or(Error::ReadBuffer)?;
            if width == 0 || !dst.len().is_multiple_of(width) {
                return Err(Error::Data);
            }
            dst.chunks_exact_mut(width)
                .for_each(|c| c.copy_from_slice(value));
            Ok(())
        }
    }
}

/// The special values a header-only chunk can stand for.
///
/// ```
/// use blosc2_frame::{CParams, Special};
///
/// let cp = CParams::default().typesize(4);
/// let chunk = Special::Value(7u32.to_le_bytes().to_vec()).chunk(4000, &cp)?;
/// assert_eq!(chunk.len(), 36);
/// assert_eq!(Special::of(&chunk)?, Some(Special::Value(7u32.to_le_bytes().to_vec())));
/// let back = blosc2_frame::decompress(&chunk)?;
/// assert_eq!(&back[..8], &[7, 0, 0, 0, 7, 0, 0, 0]);
/// # Ok::<(), blosc2_frame::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    /// All bytes zero.
    Zeros,
    /// All items NaN (4- or 8-byte floats).
    Nans,
    /// One item, these `typesize` bytes, repeated.
    Value(Vec<u8>),
    /// Undefined contents: decoding leaves the destination as it was.
    Uninit,
}

impl Special {
    /// A chunk of `nbytes` bytes holding this value, for items of `cparams`' typesize
    /// (`blosc2_chunk_zeros`, `_nans`, `_repeatval`, `_uninit`). `nbytes` must be a multiple
    /// of the typesize ([`Error::Data`] otherwise, except for zeros); a repeated value shorter
    /// than the typesize is [`Error::InvalidParam`].
    pub fn chunk(&self, nbytes: usize, cparams: &CParams) -> Result<Vec<u8>> {
        let n = i32::try_from(nbytes).map_err(|_| Error::MaxBufsizeExceeded)?;
        let mut dst = vec![0u8; EXTENDED_HEADER_LEN + cparams.typesize.max(0) as usize];
        let len = match self {
            Special::Zeros => zeros(cparams, n, &mut dst)?,
            Special::Nans => nans(cparams, n, &mut dst)?,
            Special::Uninit => uninit(cparams, n, &mut dst)?,
            Special::Value(v) => repeatval(cparams, n, &mut dst, v)?,
        };
        dst.truncate(len);
        Ok(dst)
    }

    /// The special value `chunk` stands for, `None` for a regular chunk.
    pub fn of(chunk: &[u8]) -> Result<Option<Special>> {
        let h = ChunkHeader::parse(chunk)?;
        Ok(match h.special().ok_or(Error::InvalidHeader)? {
            SpecialKind::None => None,
            SpecialKind::Zero => Some(Special::Zeros),
            SpecialKind::Nan => Some(Special::Nans),
            SpecialKind::Uninit => Some(Special::Uninit),
            SpecialKind::Value => {
                let width = (h.cbytes as usize).saturating_sub(EXTENDED_HEADER_LEN);
                let v = chunk
                    .get(EXTENDED_HEADER_LEN..EXTENDED_HEADER_LEN + width)
                    .ok_or(Error::ReadBuffer)?;
                Some(Special::Value(v.to_vec()))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_bytes() {
        let cp = CParams {
            typesize: 4,
            ..Default::default()
        };
        let mut d = [0u8; 40];
        assert_eq!(zeros(&cp, 4000, &mut d).unwrap(), 32);
        assert_eq!(
            &d[..16],
            &[5, 1, 5, 4, 0xa0, 0x0f, 0, 0, 0xa0, 0x0f, 0, 0, 32, 0, 0, 0]
        );
        assert_eq!(&d[16..31], &[0u8; 15]);
        assert_eq!(d[31], 0x10);
        assert_eq!(repeatval(&cp, 4000, &mut d, &[1, 2, 3, 4]).unwrap(), 36);
        assert_eq!(d[31], 0x30);
        assert_eq!(&d[32..36], &[1, 2, 3, 4]);
        assert_eq!(nans(&cp, 4001, &mut d), Err(Error::Data));
        assert_eq!(zeros(&cp, 4001, &mut d), Err(Error::Data));
        assert_eq!(zeros(&cp, 4000, &mut d[..31]), Err(Error::Data));
        assert_eq!(
            repeatval(&cp, 4000, &mut d[..35], &[0; 4]),
            Err(Error::Data)
        );
    }
}
