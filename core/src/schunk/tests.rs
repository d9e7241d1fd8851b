use super::*;

fn data(n: usize, seed: u32) -> Vec<u8> {
    (0..n as u32)
        .flat_map(|i| (i.wrapping_mul(7).wrapping_add(seed)).to_le_bytes())
        .collect()
}

fn cp() -> CParams {
    CParams {
        typesize: 4,
        ..CParams::default()
    }
}

fn each_kind(mut f: impl FnMut(SChunk, &str)) {
    // One directory per call (tests run in parallel), removed with everything in it when
    // `dir` is dropped.
    let dir = crate::test_util::temp_dir("b2f-schunk-unit-");
    for kind in ["plain", "memory", "file", "sparse"] {
        let p = dir.path().join(kind);
        let st = match kind {
            "plain" => NewStorage::Plain,
            "memory" => NewStorage::Memory,
            "file" => NewStorage::File(&p),
            _ => NewStorage::Sparse(&p),
        };
        let sc = SChunk::new(st, cp(), DParams::default()).unwrap();
        f(sc, kind);
    }
}

#[test]
fn chunk_ops_round_trip_on_every_storage() {
    each_kind(|mut sc, kind| {
        for k in 0..4 {
            assert_eq!(
                sc.append_buffer(&data(1000, k)).unwrap(),
                i64::from(k) + 1,
                "{kind}"
            );
        }
        assert_eq!(sc.counters().chunksize, 4000);
        assert_eq!(sc.counters().nbytes, 16000);
        let c = sc.chunk(3).unwrap().into_owned();
        sc.insert_chunk(0, &c).unwrap();
        assert_eq!(sc.decompress_chunk(0).unwrap(), data(1000, 3));
        sc.delete_chunk(1).unwrap();
        assert_eq!(sc.decompress_chunk(1).unwrap(), data(1000, 1));
        let z = crate::chunk::compress_vec(&cp(), &vec![0u8; 4000]).unwrap();
        assert_eq!(z.len(), 32);
        sc.update_chunk(2, &z).unwrap();
        assert_eq!(sc.decompress_chunk(2).unwrap(), vec![0u8; 4000]);
        sc.reorder(&[3, 2, 1, 0]).unwrap();
        assert_eq!(sc.decompress_chunk(0).unwrap(), data(1000, 3));
        assert_eq!(sc.nchunks(), 4);
        assert_eq!(sc.counters().nbytes, 16000);
        // Errors change nothing.
        let before = sc.counters();
        assert_eq!(sc.delete_chunk(-1), Err(Error::InvalidParam));
        assert_eq!(sc.insert_chunk(5, &z), Err(Error::InvalidParam));
        assert_eq!(sc.update_chunk(4, &z), Err(Error::InvalidParam));
        assert_eq!(sc.reorder(&[0, 0, 1, 2]), Err(Error::Data));
        assert_eq!(sc.append_chunk(&z[..20]), Err(Error::ReadBuffer));
        assert_eq!(sc.append_chunk(&c[..c.len() - 1]), Err(Error::InvalidParam));
        assert_eq!(sc.counters(), before);
        let mut small = vec![0u8; 10];
        assert!(sc.decompress_chunk_into(0, &mut small).is_err());
    });
}

#[test]
fn to_cframe_is_the_same_for_every_storage() {
    let mut outs = Vec::new();
    each_kind(|mut sc, kind| {
        sc.add_metalayer("m", b"abc").unwrap();
        for k in 0..3 {
            sc.append_buffer(&data(500, k)).unwrap();
        }
        sc.append_buffer(&data(100, 9)).unwrap();
        sc.vlmeta_add("v", b"hello", None).unwrap();
        let bytes = sc.to_cframe().unwrap();
        if kind == "memory" {
            // An in-memory frame is its own bytes (as in c-blosc2); the same frame, copied.
            let own = sc.frame().unwrap().to_cframe().unwrap();
            assert_eq!(bytes, own);
            let copy = SChunk::from_cframe(&own, true, 1).unwrap();
            outs.push(copy.to_cframe().unwrap());
        } else {
            outs.push(bytes);
        }
    });
    assert!(outs.windows(2).all(|w| w[0] == w[1]));
    let back = SChunk::from_cframe(&outs[0], true, 1).unwrap();
    assert!(back.frame().is_none());
    assert_eq!(back.decompress_chunk(3).unwrap(), data(100, 9));
    assert_eq!(back.vlmeta_get("v").unwrap(), b"hello");
    assert_eq!(back.to_cframe().unwrap(), outs[0]);
    let nocopy = SChunk::from_cframe(&outs[0], false, 1).unwrap();
    assert!(nocopy.frame().is_some());
    assert_eq!(nocopy.metalayers()[0].1, b"abc");
}

/// Every way of serialising a super-chunk writes the bytes of `to_cframe`: `to_cframe_in`,
/// `to_file`, `append_file` (at the old end of the file), copies into memory and into a cframe
/// file (also recompressed), from every storage; with a ZERO special chunk (an index entry in
/// a fixed-chunksize frame) and, in a second round, a shorter last chunk then one more chunk
/// (variable chunksize: the special chunk stored as 32 bytes).
#[test]
fn every_serialisation_streams_the_same_bytes() {
    let dir = crate::test_util::temp_dir("b2f-schunk-stream-");
    for variable in [false, true] {
        each_kind(|mut sc, kind| {
            sc.add_metalayer("m", b"abc").unwrap();
            sc.append_buffer(&data(500, 1)).unwrap();
            let z = crate::chunk::compress_vec(&cp(), &vec![0u8; 2000]).unwrap();
            sc.append_chunk(&z).unwrap();
            sc.append_buffer(&data(500, 2)).unwrap();
            if variable {
                sc.append_buffer(&data(100, 3)).unwrap();
                sc.append_buffer(&data(500, 4)).unwrap();
            }
            sc.vlmeta_add("v", b"hello", None).unwrap();
            let want = sc.to_cframe().unwrap();
            let f = Frame::from_bytes(&want).unwrap();
            assert_eq!(f.header().chunksize == 0, variable, "{kind}");
            assert_eq!(f.nchunks(), sc.nchunks());
            assert_eq!(!f.locs().at(1).is_stored(), !variable, "{kind}");

            let mut buf = vec![0xEEu8; want.len()];
            let mut asked = 0;
            let tpl = sc.copy_template(*sc.cparams());
            let n = sc
                .to_cframe_in(&tpl, |len| {
                    asked = len;
                    Ok(&mut buf[..len])
                })
                .unwrap();
            assert_eq!((n, asked), (want.len(), want.len()), "{kind}");
            assert_eq!(buf, want, "{kind}");

            let out = dir.path().join(format!("{kind}-{variable}.b2frame"));
            std::fs::write(&out, b"stale content, longer than nothing").unwrap();
            assert_eq!(sc.to_file(&out).unwrap(), want.len() as i64);
            assert_eq!(std::fs::read(&out).unwrap(), want, "{kind}");
            assert_eq!(sc.append_file(&out).unwrap(), want.len() as i64);
            assert_eq!(
                std::fs::read(&out).unwrap(),
                [&want[..], &want[..]].concat()
            );

            // An in-memory frame serialises as its own bytes; its copies are built, like the
            // serialisations of every other storage.
            let copied = if kind == "memory" {
                SChunk::from_cframe(&want, true, 1)
                    .unwrap()
                    .to_cframe()
                    .unwrap()
            } else {
                want.clone()
            };
            let copy = sc.copy_to(NewStorage::Memory, None, None).unwrap();
            assert_eq!(copy.to_cframe().unwrap(), copied, "{kind}");
            let cfile = dir.path().join(format!("{kind}-{variable}-copy.b2frame"));
            let copy = sc.copy_to(NewStorage::File(&cfile), None, None).unwrap();
            assert_eq!(copy.to_cframe().unwrap(), copied, "{kind}");
            assert_eq!(std::fs::read(&cfile).unwrap(), copied, "{kind}");
            drop(copy);
            // An existing destination is refused and left alone.
            assert_eq!(
                sc.copy_to(NewStorage::File(&cfile), None, None).err(),
                Some(Error::FileOpen)
            );
            assert_eq!(std::fs::read(&cfile).unwrap(), copied, "{kind}");
            std::fs::remove_file(&cfile).unwrap();

            // Recompressed: other bytes, same data.
            let lz4 = CParams {
                compcode: 1,
                ..cp()
            };
            let re = sc
                .copy_to(NewStorage::File(&cfile), Some(lz4), None)
                .unwrap();
            assert_ne!(std::fs::read(&cfile).unwrap(), want, "{kind}");
            for i in 0..sc.nchunks() {
                assert_eq!(
                    re.decompress_chunk(i).unwrap(),
                    sc.decompress_chunk(i).unwrap(),
                    "{kind} chunk {i}"
                );
            }
            std::fs::remove_file(&cfile).unwrap();

            // Back from the bytes (copied out chunk by chunk), then serialised again.
            let back = SChunk::from_cframe(&want, true, 1).unwrap();
            assert_eq!(back.to_cframe().unwrap(), copied, "{kind}");
        });
    }
}

#[test]
fn metalayers_follow_the_storage_rules() {
    each_kind(|mut sc, kind| {
        for i in 0..16 {
            sc.add_metalayer(&format!("m{i}"), &[i as u8]).unwrap();
        }
        assert_eq!(sc.add_metalayer("m16", b"x"), Err(Error::InvalidParam));
        assert_eq!(sc.add_metalayer("m0", b"x"), Err(Error::InvalidParam));
        assert_eq!(sc.metalayers().len(), 16);
        sc.append_buffer(&data(100, 0)).unwrap();
        assert_eq!(sc.update_metalayer("m3", b"z").unwrap(), 3);
        assert_eq!(sc.update_metalayer("m3", b"zz"), Err(Error::InvalidParam));
        assert_eq!(sc.update_metalayer("nope", b"z"), Err(Error::NotFound));
        sc.delete_chunk(0).unwrap();
        let frame = kind != "plain";
        // Frames keep the header fixed once data was written; plain storage has no header.
        let r = sc.vlmeta_add("a", b"1", None);
        assert!(r.is_ok());
        let _ = frame;
        for i in 1..16 {
            sc.vlmeta_add(&format!("v{i}"), b"x", None).unwrap();
        }
        let r = sc.vlmeta_add("v16", b"x", None);
        if kind == "plain" {
            assert!(r.is_ok());
        } else {
            assert_eq!(r, Err(Error::Failure));
            assert_eq!(sc.vlmetalayers().len(), 16);
        }
        assert_eq!(sc.vlmeta_update("a", b"longer content", None).unwrap(), 0);
        assert_eq!(sc.vlmeta_get("a").unwrap(), b"longer content");
        assert_eq!(sc.vlmeta_get("zz"), Err(Error::NotFound));
        let left = sc.vlmeta_delete("a").unwrap();
        assert_eq!(left, sc.vlmetalayers().len());
    });
}

#[test]
fn metalayers_after_data_fail_on_frames_only() {
    each_kind(|mut sc, kind| {
        sc.append_buffer(&data(100, 0)).unwrap();
        let r = sc.add_metalayer("late", b"1");
        if kind == "plain" {
            assert_eq!(r, Ok(0));
        } else {
            assert_eq!(r, Err(Error::InvalidParam));
            assert!(sc.metalayers().is_empty());
        }
    });
}

#[test]
fn fill_special_and_slices() {
    each_kind(|mut sc, kind| {
        assert_eq!(
            sc.fill_special(2500, special::ZERO, 4000).unwrap(),
            3,
            "{kind}"
        );
        assert_eq!(sc.counters().nbytes, 10000);
        assert_eq!(sc.chunk_nbytes(2).unwrap(), 2000);
        // Only an empty super-chunk can be filled (c-blosc2's -28 on every storage).
        assert_eq!(
            sc.fill_special(10, special::ZERO, 4000),
            Err(Error::FrameSpecial)
        );
        let src = data(1200, 5);
        sc.set_slice(500, 1700, &src).unwrap();
        let mut out = vec![0u8; 1200 * 4];
        sc.get_slice(500, 1700, &mut out).unwrap();
        assert_eq!(out, src);
        let mut all = vec![1u8; 10000];
        sc.get_slice(0, 2500, &mut all).unwrap();
        assert!(all[..2000].iter().all(|&b| b == 0));
        assert!(all[6800..].iter().all(|&b| b == 0));
        assert_eq!(sc.get_slice(0, 2501, &mut all), Err(Error::InvalidParam));
        let mut one = vec![0u8; 8];
        let mut e = Engines::new(sc.cparams(), sc.dparams()).unwrap();
        sc.get_sparse_with(&mut e, &[500, 0], &mut one).unwrap();
        assert_eq!(&one[..4], &src[..4]);
        assert_eq!(&one[4..], &[0; 4]);
        assert_eq!(sc.slice_nchunks(&[0], &[1001]).unwrap(), vec![0, 1]);
    });
}

/// A recompressing copy into a cframe (file or memory) is streamed chunk by chunk, with the
/// header written last; its bytes are those of the frame planned from all the recompressed
/// chunks at once (what the copy built before it streamed): for several parameter changes,
/// every storage, ZERO/NaN/UNINIT special chunks (index entries in fixed-chunksize frames,
/// stored 32-byte chunks in variable ones) and a regular chunk of zeros.
#[test]
fn recompressed_copies_stream_the_bytes_of_a_frame_planned_at_once() {
    let dir = crate::test_util::temp_dir("b2f-schunk-recode-");
    let changes = [
        CParams { clevel: 1, ..cp() },
        CParams {
            compcode: 1,
            nthreads: 2,
            ..cp()
        },
        CParams {
            compcode: 5,
            clevel: 9,
            filters: [0, 0, 0, 0, 0, 2],
            ..cp()
        },
        CParams {
            typesize: 8,
            blocksize: 1024,
            ..cp()
        },
    ];
    let special = |f: fn(&CParams, i32, &mut [u8]) -> Result<usize>| {
        let mut buf = [0u8; 64];
        let n = f(&cp(), 2000, &mut buf).unwrap();
        buf[..n].to_vec()
    };
    for variable in [false, true] {
        each_kind(|mut sc, kind| {
            sc.add_metalayer("m", b"abc").unwrap();
            sc.append_buffer(&data(500, 1)).unwrap();
            sc.append_chunk(&special(crate::chunk::special::zeros))
                .unwrap();
            sc.append_buffer(&data(500, 2)).unwrap();
            sc.append_chunk(&special(crate::chunk::special::nans))
                .unwrap();
            sc.append_buffer(&vec![0u8; 2000]).unwrap();
            sc.append_chunk(&special(crate::chunk::special::uninit))
                .unwrap();
            if variable {
                sc.append_buffer(&data(100, 3)).unwrap();
                sc.append_buffer(&data(500, 4)).unwrap();
            }
            sc.vlmeta_add("v", b"hello", None).unwrap();
            for (k, to) in changes.iter().enumerate() {
                let chunks = (0..sc.nchunks())
                    .map(|i| {
                        let c = sc.chunk(i).unwrap().into_owned();
                        if ChunkInfo::parse(&c).unwrap().special != 0 {
                            return c;
                        }
                        let raw = crate::chunk::decompress_vec(&c).unwrap();
                        crate::chunk::compress_vec(&CParams { nthreads: 1, ..*to }, &raw).unwrap()
                    })
                    .collect::<Vec<_>>();
                let tpl = build::HeaderTemplate {
                    cparams: *to,
                    threads: (to.nthreads, 1),
                    chunksize: sc.counters().chunksize,
                };
                let want =
                    build::build_cframe(&tpl, sc.metalayers(), &chunks, sc.vlmetalayers()).unwrap();
                let f = Frame::from_bytes(&want).unwrap();
                assert_eq!(f.header().chunksize == 0, variable, "{kind}");

                let cfile = dir.path().join(format!("{kind}-{variable}-{k}.b2frame"));
                let copy = sc
                    .copy_to(NewStorage::File(&cfile), Some(*to), None)
                    .unwrap();
                assert_eq!(
                    std::fs::read(&cfile).unwrap(),
                    want,
                    "{kind} {variable} {k}"
                );
                drop(copy);
                std::fs::remove_file(&cfile).unwrap();
                let copy = sc.copy_to(NewStorage::Memory, Some(*to), None).unwrap();
                assert_eq!(copy.to_cframe().unwrap(), want, "{kind} {variable} {k}");
            }
        });
    }
    // Nothing but the copies was left next to them (no temporary files).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn variable_chunks_and_copies() {
    each_kind(|mut sc, kind| {
        sc.append_buffer(&data(1000, 0)).unwrap();
        sc.append_buffer(&data(300, 1)).unwrap();
        sc.append_buffer(&data(1000, 2)).unwrap();
        assert_eq!(sc.counters().chunksize, 0, "{kind}");
        let mut out = vec![0u8; 400 * 4];
        sc.get_slice(1000, 1400, &mut out).unwrap();
        assert_eq!(&out[..1200], &data(300, 1)[..]);
        let other = CParams {
            clevel: 9,
            compcode: 1,
            ..cp()
        };
        let c = sc.copy_to(NewStorage::Plain, Some(other), None).unwrap();
        assert_eq!(c.decompress_chunk(2).unwrap(), data(1000, 2));
        assert_eq!(c.counters().nbytes, sc.counters().nbytes);
    });
}

/// The one-pass builder writes the bytes a frame receiving the same chunks one by one has.
#[test]
fn one_pass_cframe_matches_sequential_appends() {
    let cp0 = CParams {
        nthreads: 0,
        ..cp()
    };
    let zeros = crate::chunk::compress_vec(&cp(), &vec![0u8; 4000]).unwrap();
    let seqs: Vec<Vec<Vec<u8>>> = vec![
        vec![],
        (0..5)
            .map(|k| crate::chunk::compress_vec(&cp(), &data(1000, k)).unwrap())
            .collect(),
        vec![
            crate::chunk::compress_vec(&cp(), &data(1000, 1)).unwrap(),
            zeros.clone(),
            crate::chunk::compress_vec(&cp(), &data(300, 2)).unwrap(),
        ],
        vec![
            crate::chunk::compress_vec(&cp(), &data(1000, 1)).unwrap(),
            crate::chunk::compress_vec(&cp(), &data(300, 2)).unwrap(),
            crate::chunk::compress_vec(&cp(), &data(1000, 3)).unwrap(),
        ],
    ];
    let metas = vec![("m".to_string(), b"xyz".to_vec())];
    let vl = vec![(
        "v".to_string(),
        crate::frame::meta::encode_vlmeta(b"hello", None).unwrap(),
    )];
    for chunks in seqs {
        let mut f = Frame::create(Target::Memory, &cp0, &DParams { nthreads: 0 }).unwrap();
        f.add_metalayer("m", b"xyz").unwrap();
        for c in &chunks {
            f.append_chunk(c).unwrap();
        }
        f.add_vlmetalayer_raw("v", &vl[0].1).unwrap();
        let built =
            build::build_cframe(&build::HeaderTemplate::plain(&cp0), &metas, &chunks, &vl).unwrap();
        assert_eq!(built, f.to_cframe().unwrap(), "{} chunks", chunks.len());
    }
    // Chunks a frame cannot hold are refused.
    let empty = crate::chunk::compress_vec(&cp(), &[]).unwrap();
    assert_eq!(
        build::build_cframe(&build::HeaderTemplate::plain(&cp0), &[], &[empty], &[]),
        Err(Error::InvalidParam)
    );
}

/// Pseudo-random bytes (incompressible: chunks longer than their neighbours).
fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn reads_into_one_reused_buffer_match_fresh_reads_in_any_layout() {
    // Chunks of very different cbytes, then mutations that leave the data section out of
    // index order (inserted/updated chunks go to its end, deleted ones leave holes): every
    // read through one reused buffer (read-ahead by the span to the next entry, or header
    // first) must equal a fresh read, with nothing of a longer earlier chunk left over.
    each_kind(|mut sc, kind| {
        for k in 0..6u32 {
            let d = if k % 2 == 0 {
                noise(4000, k.into())
            } else {
                data(1000, k)
            };
            sc.append_buffer(&d).unwrap();
        }
        let big = crate::chunk::compress_vec(&cp(), &noise(4000, 99)).unwrap();
        let small = crate::chunk::compress_vec(&cp(), &data(1000, 7)).unwrap();
        let steps: [&dyn Fn(&mut SChunk); 5] = [
            &|_| {},
            &|s| assert_eq!(s.update_chunk(1, &big).unwrap(), 6),
            &|s| assert_eq!(s.insert_chunk(2, &small).unwrap(), 7),
            &|s| assert_eq!(s.delete_chunk(4).unwrap(), 6),
            &|s| s.reorder(&[5, 0, 3, 1, 4, 2]).unwrap(),
        ];
        let mut buf = Vec::new();
        let mut out = vec![0u8; 4000];
        for (n, step) in steps.iter().enumerate() {
            step(&mut sc);
            // Big and small chunks alternately, each twice.
            let order: Vec<i64> = (0..sc.nchunks()).chain((0..sc.nchunks()).rev()).collect();
            for &i in &order {
                let fresh = sc.chunk(i).unwrap().into_owned();
                assert_eq!(
                    sc.chunk_in(i, &mut buf).unwrap(),
                    &fresh[..],
                    "{kind} {n} {i}"
                );
                let want = crate::chunk::decompress_vec(&fresh).unwrap();
                let mut e = Engines::new(&cp(), &DParams::default()).unwrap();
                let got = sc
                    .decompress_chunk_in(&mut e, i, &mut out, &mut buf)
                    .unwrap();
                assert_eq!(&out[..got], &want[..], "{kind} {n} {i}");
            }
        }
    });
}

// Replacing a file another handle has open needs POSIX rename semantics on Windows (std asks for
// them, Windows 10 1607 and later grant them); wine refuses with "access denied".
#[cfg_attr(windows, ignore = "wine cannot rename over an open file")]
#[test]
fn a_cframe_file_renamed_over_is_noticed_and_reopened() {
    // Removed with everything in it when `dir` is dropped.
    let dir = crate::test_util::temp_dir("b2f-replaced-");
    let (a, b) = (dir.path().join("a.b2frame"), dir.path().join("b.b2frame"));
    let make = |p: &Path, k: u32, n: u32| {
        let mut s = SChunk::new(NewStorage::File(p), cp(), DParams::default()).unwrap();
        for _ in 0..n {
            s.append_buffer(&data(1000, k)).unwrap();
        }
    };
    make(&a, 1, 2);
    let mut sc = SChunk::open(&a).unwrap();
    assert!(!sc.is_replaced());
    // Grown through another handle (same file): not replaced.
    let mut other = SChunk::open(&a).unwrap();
    other.append_buffer(&data(1000, 2)).unwrap();
    drop(other);
    assert!(!sc.is_replaced());
    make(&b, 3, 3);
    std::fs::rename(&b, &a).unwrap();
    assert!(sc.is_replaced());
    assert!(sc.reopen_if_replaced().unwrap());
    assert!(!sc.is_replaced());
    assert_eq!(sc.nchunks(), 3);
    assert_eq!(sc.decompress_chunk(2).unwrap(), data(1000, 3));
}

/// A NaN chunk of other items than the super-chunk's (8- or 4-byte NaNs in a super-chunk of
/// 1-byte items) cannot be a NaN index entry of the cframe a plain super-chunk serialises to:
/// an entry reads back with the frame's typesize (1-byte NaNs do not decode). Every
/// serialisation of a plain super-chunk stores it as its regular equivalent in its own
/// typesize, as a frame's append does, and every chunk reads back as its own bytes.
#[test]
fn serialised_nan_chunks_of_other_items_read_back_as_their_own_bytes() {
    let dir = crate::test_util::temp_dir("b2f-schunk-nan-retyped-");
    let cp1 = CParams {
        typesize: 1,
        ..CParams::default()
    };
    let nan = |typesize: i32| {
        let mut buf = [0u8; 64];
        let n = crate::chunk::special::nans(&CParams { typesize, ..cp1 }, 4000, &mut buf).unwrap();
        buf[..n].to_vec()
    };
    let nans = |pattern: &[u8]| pattern.repeat(4000 / pattern.len());
    let mut sc = SChunk::new(NewStorage::Plain, cp1, DParams::default()).unwrap();
    sc.append_buffer(&data(1000, 1)).unwrap();
    sc.append_chunk(&nan(8)).unwrap();
    sc.insert_chunk(1, &nan(4)).unwrap();
    sc.append_buffer(&data(1000, 2)).unwrap();
    let want = [
        data(1000, 1),
        nans(&[0, 0, 0xc0, 0x7f]),
        nans(&[0, 0, 0, 0, 0, 0, 0xf8, 0x7f]),
        data(1000, 2),
    ];
    for (i, w) in want.iter().enumerate() {
        assert_eq!(
            &sc.decompress_chunk(i as i64).unwrap(),
            w,
            "plain chunk {i}"
        );
    }
    // Every way a serialisation goes wrong, reported together (not the frames' bytes).
    let failed = std::cell::RefCell::new(Vec::new());
    let check = |out: &SChunk, what: &str| {
        assert_eq!(out.nchunks(), 4, "{what}");
        assert_eq!(out.counters().chunksize, 4000, "{what}: fixed chunksize");
        for (i, w) in want.iter().enumerate() {
            match out.decompress_chunk(i as i64) {
                Ok(got) if got == *w => {}
                Ok(_) => failed
                    .borrow_mut()
                    .push(format!("{what}: chunk {i} has other bytes")),
                Err(e) => failed
                    .borrow_mut()
                    .push(format!("{what}: chunk {i}: {e:?}")),
            }
        }
    };
    let same = |a: &[u8], b: &[u8], what: &str| {
        if a != b {
            failed.borrow_mut().push(format!("{what}: other bytes"));
        }
    };
    // A frame receiving the same chunks one by one holds the same bytes.
    let cp0 = CParams { nthreads: 0, ..cp1 };
    let mut f = Frame::create(Target::Memory, &cp0, &DParams { nthreads: 0 }).unwrap();
    for i in 0..sc.nchunks() {
        f.append_chunk(&sc.chunk(i).unwrap()).unwrap();
    }
    let chunks = (0..sc.nchunks())
        .map(|i| sc.chunk(i).unwrap().into_owned())
        .collect::<Vec<_>>();
    let built =
        build::build_cframe(&build::HeaderTemplate::plain(&cp0), &[], &chunks, &[]).unwrap();
    same(&built, &f.to_cframe().unwrap(), "build_cframe and appends");
    check(&SChunk::from_bytes(&built).unwrap(), "build_cframe");

    let cframe = sc.to_cframe().unwrap();
    check(&SChunk::from_bytes(&cframe).unwrap(), "to_cframe");
    let mut into = Vec::new();
    let n = sc
        .to_cframe_in(&sc.copy_template(sc.cparams), |len| {
            into.resize(len, 0);
            Ok(&mut into[..])
        })
        .unwrap();
    assert_eq!(n, cframe.len());
    same(&into, &cframe, "to_cframe_in and to_cframe");
    let p = dir.path().join("to_file.b2frame");
    sc.to_file(&p).unwrap();
    same(
        &std::fs::read(&p).unwrap(),
        &cframe,
        "to_file and to_cframe",
    );
    check(&SChunk::open(&p).unwrap(), "to_file");
    let p = dir.path().join("append_file.b2frame");
    std::fs::write(&p, b"0123456789").unwrap();
    let at = sc.append_file(&p).unwrap();
    assert_eq!(at, 10);
    check(&SChunk::open_offset(&p, 10, 1).unwrap(), "append_file");
    // Copies into frames, with the parameters (chunks as they are) and recompressed.
    for (k, to) in [cp1, CParams { clevel: 1, ..cp1 }].into_iter().enumerate() {
        check(
            &sc.copy_to(NewStorage::Memory, Some(to), None).unwrap(),
            &format!("copy {k} to memory"),
        );
        let p = dir.path().join(format!("copy-{k}.b2frame"));
        check(
            &sc.copy_to(NewStorage::File(&p), Some(to), None).unwrap(),
            &format!("copy {k} to a file"),
        );
        check(&SChunk::open(&p).unwrap(), &format!("copy {k}, reopened"));
    }
    let failed = failed.into_inner();
    assert!(failed.is_empty(), "{failed:#?}");
}
