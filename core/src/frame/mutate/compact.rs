//! [`Frame::compacted`] and [`Frame::write_compacted`]: a fresh cframe with the same contents,
//! without dead space, planned and checked before anything is written.

#![forbid(unsafe_code)]

use super::*;
use crate::frame::cframe::Fetched;

impl Frame {
    /// A fresh in-memory cframe with the same parameters, metalayers, vlmetalayers and chunks
    /// (in logical order, no dead space). Deterministic.
    pub fn compacted(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write_compacted(&mut out)?;
        Ok(out)
    }

    /// Writes [`Frame::compacted`] to `out`, chunk by chunk (one chunk in memory at a time
    /// for a frame on disk); returns its length. Header, offsets index and trailer are
    /// planned and checked before anything is written.
    pub fn write_compacted(&self, out: &mut dyn std::io::Write) -> Result<u64> {
        let h = &self.header;
        let cparams = CParams {
            compcode: h.compcode,
            compcode_meta: h.compcode_meta,
            clevel: h.clevel,
            use_dict: h.use_dict,
            typesize: h.typesize,
            nthreads: h.nthreads_comp,
            blocksize: h.blocksize,
            splitmode: i32::from(h.splitmode),
            filters: h.filters,
            filters_meta: h.filters_meta,
        };
        let dparams = DParams {
            nthreads: h.nthreads_decomp,
        };
        let mut header = crate::frame::new_header(FrameType::Contiguous, &cparams, &dparams);
        header.user_type = h.user_type;
        header.metalayers = h.metalayers.clone();
        header.chunksize = h.chunksize;
        let infos = (0..self.nchunks())
            .map(|i| self.chunk_info(i))
            .collect::<Result<Vec<_>>>()?;
        let plan = crate::frame::build::CframePlan::from_header(header, &infos, &self.vlmeta)?;
        plan.emit(out, |i, buf| self.fetch(i as i64, buf))?;
        Ok(plan.len())
    }

    /// Writes a compact cframe of this frame's chunks (in logical order) and vlmetalayers with
    /// the parameters and metalayers of `header` (a header of this frame, changed as wanted;
    /// its chunksize is the one the first chunk meets, -1 for none yet) to `out`, streamed: one
    /// chunk in memory at a time, the header written last over a placeholder (`out` seeks
    /// back). `recode(i, chunk)` may replace chunk `i` (`Some`): the new chunk must hold the
    /// same number of uncompressed bytes and VL-block layout (a recompressed chunk; one that
    /// comes out special becomes a special offset where an append would make it one).
    /// What a frame made with [`Frame::new_like`]`(header)` and filled by appending the chunks
    /// and adding the vlmetalayers holds, byte for byte, without building it in memory.
    /// Returns the frame's length.
    pub fn write_converted(
        &self,
        header: &crate::frame::header::FrameHeader,
        out: &mut dyn crate::frame::record::WriteSeek,
        mut recode: impl FnMut(i64, &[u8]) -> Result<Option<Vec<u8>>>,
    ) -> Result<u64> {
        let mut header = header.clone();
        header.frame_type = FrameType::Contiguous;
        let infos = (0..self.nchunks())
            .map(|i| self.chunk_info(i))
            .collect::<Result<Vec<_>>>()?;
        crate::frame::build::stream_cframe(header, &infos, &self.vlmeta, true, out, |i, buf| {
            let i = i as i64;
            let fetched = self.fetch(i, buf)?;
            let c = fetched.bytes(buf);
            match recode(i, c)? {
                Some(new) => {
                    *buf = new;
                    Ok(Fetched::Read(buf.len()))
                }
                None => Ok(fetched),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::{compress_vec, special};
    use crate::frame::{FrameHeader, Target};
    use std::borrow::Cow;

    fn cp(clevel: u8) -> CParams {
        CParams {
            typesize: 4,
            clevel,
            ..CParams::default()
        }
    }

    fn data(n: usize, seed: u32) -> Vec<u8> {
        (0..n as u32)
            .map(|k| (k.wrapping_mul(2654435761) ^ seed) as u8 % 7)
            .collect()
    }

    fn zeros(nbytes: i32) -> Vec<u8> {
        let mut buf = [0u8; 64];
        let n = special::zeros(&cp(5), nbytes, &mut buf).unwrap();
        buf[..n].to_vec()
    }

    /// A recompressed chunk: same data, clevel 1.
    fn recoded(c: &[u8]) -> Vec<u8> {
        compress_vec(&cp(1), &crate::chunk::decompress_vec(c).unwrap()).unwrap()
    }

    /// What the CLI's convert built before it streamed: a frame made by `new_like` in memory,
    /// filled by appends.
    fn by_appends(src: &Frame, header: &FrameHeader, recode: bool) -> Vec<u8> {
        let mut out = Frame::new_like(header, Target::Memory).unwrap();
        if header.chunksize >= 0 {
            out.set_chunksize(header.chunksize).unwrap();
        }
        for i in 0..src.nchunks() {
            let c = src.chunk(i).unwrap();
            let special = ChunkInfo::parse(&c).unwrap().special != 0;
            if recode && !special {
                out.append_chunk(&recoded(&c)).unwrap();
            } else {
                out.append_chunk(&c).unwrap();
            }
        }
        for (name, stored) in src.vlmetalayers() {
            out.add_vlmetalayer_raw(name, stored).unwrap();
        }
        out.to_cframe().unwrap()
    }

    #[test]
    fn write_converted_matches_a_frame_filled_by_appends() {
        // (chunk sizes, 0 = a zeros chunk of 4000 bytes)
        // (chunk sizes; 0 = a zeros chunk of 4000 bytes, 1 = 4000 zero bytes stored at clevel
        // 0, which comes out of the recompression as a special chunk)
        let layouts: [&[usize]; 6] = [
            &[],
            &[4000, 0, 4000, 4000],
            &[4000, 0, 4000, 1000],
            &[4000, 2000, 0, 4000, 3000],
            &[0, 0, 4000],
            &[4000, 1, 4000, 1, 2000],
        ];
        for (k, sizes) in layouts.iter().enumerate() {
            let mut src = Frame::new_memory(&cp(5), &DParams::default()).unwrap();
            src.add_metalayer("m", b"abc").unwrap();
            for (j, &n) in sizes.iter().enumerate() {
                let c = match n {
                    0 => zeros(4000),
                    1 => compress_vec(&cp(0), &[0; 4000]).unwrap(),
                    n => compress_vec(&cp(5), &data(n, j as u32)).unwrap(),
                };
                src.append_chunk(&c).unwrap();
            }
            src.add_vlmetalayer_raw("v", &[1, 2, 3, 4]).unwrap();
            for recode in [false, true] {
                let mut header = src.header().clone();
                if recode {
                    header.clevel = 1;
                }
                let want = by_appends(&src, &header, recode);
                let mut got = std::io::Cursor::new(b"prefix".to_vec());
                got.set_position(6);
                let len = src
                    .write_converted(&header, &mut got, |_, c| {
                        let special = ChunkInfo::parse(c)?.special != 0;
                        Ok((recode && !special).then(|| recoded(c)))
                    })
                    .unwrap_or_else(|e| panic!("layout {k}, recode {recode}: {e:?}"));
                let got = got.into_inner();
                assert_eq!(&got[..6], b"prefix");
                assert_eq!(len as usize, got.len() - 6, "layout {k}");
                let at = got[6..].iter().zip(&want).position(|(a, b)| a != b);
                assert!(
                    got[6..] == want[..],
                    "layout {k}, recode {recode}: {} vs {} bytes, first difference at {at:?}",
                    got.len() - 6,
                    want.len()
                );
            }
        }
    }

    /// A frame of 1-byte items whose variable chunks include stored 32-byte NaN chunks of 8-
    /// and 4-byte items (as c-blosc2's copies store special chunks in variable frames): the
    /// conversion stores them as their regular equivalents in their own typesize, as appends
    /// do (NaNs of the frame's 1-byte items do not exist), and every chunk reads back as its
    /// own bytes.
    #[test]
    fn write_converted_stores_nan_chunks_of_other_items_in_their_own_typesize() {
        let cp1 = CParams {
            typesize: 1,
            ..cp(5)
        };
        let nan = |typesize: i32| {
            let mut buf = [0u8; 64];
            let n = special::nans(&CParams { typesize, ..cp1 }, 4000, &mut buf).unwrap();
            buf[..n].to_vec()
        };
        let chunks = [
            compress_vec(&cp1, &data(4000, 1)).unwrap(),
            nan(8),
            compress_vec(&cp1, &data(1000, 2)).unwrap(),
            nan(4),
        ];
        let tpl = crate::frame::build::HeaderTemplate::plain(&cp1);
        let bytes = crate::frame::build::build_cframe(&tpl, &[], &chunks, &[]).unwrap();
        let src = Frame::from_bytes(&bytes).unwrap();
        assert_eq!(src.header().chunksize, 0);
        let want_chunks = [
            data(4000, 1),
            [0, 0, 0, 0, 0, 0, 0xf8, 0x7f].repeat(500),
            data(1000, 2),
            [0, 0, 0xc0, 0x7f].repeat(1000),
        ];
        let header = src.header().clone();
        let want = by_appends(&src, &header, false);
        let mut got = std::io::Cursor::new(Vec::new());
        src.write_converted(&header, &mut got, |_, _| Ok(None))
            .unwrap();
        let got = got.into_inner();
        assert!(got == want, "the bytes of a frame filled by appends");
        let f = Frame::from_bytes(&got).unwrap();
        for (i, w) in want_chunks.iter().enumerate() {
            let c = f.chunk(i as i64).unwrap();
            assert!(ChunkInfo::parse(&c).unwrap().special == 0, "chunk {i}");
            assert!(
                crate::chunk::decompress_vec(&c).unwrap() == *w,
                "chunk {i} reads back"
            );
        }
    }

    /// Every file of directory `dir` (name, bytes), sorted.
    fn files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read(e.path()).unwrap())
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn append_chunks_ends_as_appends_one_by_one() {
        let layouts: [&[usize]; 3] = [
            &[4000, 0, 4000, 1000],
            &[4000, 2000, 0, 4000, 3000],
            &[0, 0, 4000],
        ];
        for (k, sizes) in layouts.iter().enumerate() {
            let chunks: Vec<Vec<u8>> = sizes
                .iter()
                .enumerate()
                .map(|(j, &n)| match n {
                    0 => zeros(4000),
                    n => compress_vec(&cp(5), &data(n, j as u32)).unwrap(),
                })
                .collect();
            let tmp = crate::test_util::temp_dir("b2frame-compact-");
            let (one, all) = (tmp.path().join("one"), tmp.path().join("all"));
            let mut a = Frame::new_sframe(&one, &cp(5), &DParams::default()).unwrap();
            let mut b = Frame::new_sframe(&all, &cp(5), &DParams::default()).unwrap();
            let mut m = Frame::new_memory(&cp(5), &DParams::default()).unwrap();
            for c in &chunks {
                a.append_chunk(c).unwrap();
            }
            let n = chunks.len() as i64;
            let lend = |i: i64| Ok(Cow::Borrowed(&chunks[i as usize][..]));
            assert_eq!(b.append_chunks(n, lend).unwrap(), n);
            assert_eq!(m.append_chunks(n, lend).unwrap(), n);
            drop((a, b));
            assert!(files(&one) == files(&all), "layout {k}");
            let mut mm = Frame::new_memory(&cp(5), &DParams::default()).unwrap();
            for c in &chunks {
                mm.append_chunk(c).unwrap();
            }
            assert!(
                m.to_cframe().unwrap() == mm.to_cframe().unwrap(),
                "layout {k}"
            );
            // A failure part-way leaves the frame as it was.
            let before = m.to_cframe().unwrap();
            let r = m.append_chunks(n, |i| if i == 2 { Err(Error::Failure) } else { lend(i) });
            assert_eq!(r, Err(Error::Failure));
            assert_eq!(m.nchunks(), n);
            assert!(m.to_cframe().unwrap() == before, "layout {k}");
        }
    }
}
