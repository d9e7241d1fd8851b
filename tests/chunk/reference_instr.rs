//! Instrumented-codec chunks (`cparams.instr_codec`) against c-blosc2 3.3.5 (dlopened):
//! header, sizes, bstarts layout, csizes, cratio values and run flags must be identical; the
//! speeds depend on timing, so only their presence is checked. Covered: codecs, splitmodes,
//! typesize > 255, special-value inputs, nthreads 2, prefilters (plain, failing, disposable
//! output), dictionaries, and the memcpyed cases, where c-blosc2 writes a chunk it cannot
//! decode itself and we deliberately write the plain memcpyed chunk (core/src/chunk/instr.rs docs);
//! those tests pin both the fields we share and the reference's broken ones, so a change on
//! either side shows up here.

use crate::common;

use b2frame::capi::chunk::{blosc2_create_cctx, blosc2_free_ctx};
use b2frame::capi::codec::blosc2_compress_ctx;
use b2frame::capi::types::{
    blosc2_cparams, blosc2_prefilter_params, BLOSC2_CPARAMS_DEFAULTS, BLOSC_ALWAYS_SPLIT,
    BLOSC_NEVER_SPLIT,
};
use b2frame::chunk::instr::{Record, RECORD_LEN};
use b2frame::chunk::{decompress_vec, header::ChunkHeader};
use common::reference::{ref_decompress, reference};
use std::ffi::{c_int, c_void};

const INSTR: u8 = 0x80;
const USEDICT: u8 = 0x01;

/// Compresses through our C layer (where `instr_codec` is honoured) into `destsize` bytes:
/// the chunk (empty for "does not fit") or the error code.
fn ours(cp: blosc2_cparams, src: &[u8], destsize: usize) -> Result<Vec<u8>, i32> {
    let mut dst = vec![0u8; destsize];
    let ctx = blosc2_create_cctx(cp);
    assert!(!ctx.is_null());
    // SAFETY: buffers sized as declared; the context is freed right after.
    let n = unsafe {
        let n = blosc2_compress_ctx(
            ctx,
            src.as_ptr() as *const c_void,
            src.len() as i32,
            dst.as_mut_ptr() as *mut c_void,
            destsize as i32,
        );
        blosc2_free_ctx(ctx);
        n
    };
    if n < 0 {
        return Err(n);
    }
    dst.truncate(n as usize);
    Ok(dst)
}

/// The same with the reference. Its instrumented writer lets a codec write a whole stream
/// past the room it was given, so the buffer has slack beyond `destsize`.
fn theirs(cp: blosc2_cparams, src: &[u8], destsize: usize) -> Result<Vec<u8>, i32> {
    let r = reference();
    let mut dst = vec![0u8; destsize + src.len() + 4096];
    // SAFETY: buffers sized as declared (with slack); the context is freed right after.
    let n = unsafe {
        let ctx = (r.create_cctx)(cp);
        assert!(!ctx.is_null());
        let n = (r.compress_ctx)(
            ctx,
            src.as_ptr() as *const c_void,
            src.len() as i32,
            dst.as_mut_ptr() as *mut c_void,
            destsize as i32,
        );
        (r.free_ctx)(ctx);
        n
    };
    if n < 0 {
        return Err(n);
    }
    dst.truncate(n as usize);
    Ok(dst)
}

fn roomy(src: &[u8]) -> usize {
    2 * src.len() + 4096
}

/// One stream as stored: its csize and, for csize 16, the record.
#[derive(Debug, PartialEq)]
struct Stream {
    csize: i32,
    record: Option<Record>,
}

/// Walks an instrumented chunk block by block through its bstarts (so the reference's
/// completion-order layout with nthreads > 1 reads in block order too).
fn streams(chunk: &[u8]) -> Vec<Stream> {
    let h = ChunkHeader::parse(chunk).unwrap();
    let rd = |at: usize| i32::from_le_bytes(chunk[at..at + 4].try_into().unwrap());
    let mut v = Vec::new();
    for j in 0..h.nblocks() as usize {
        let bytes = (h.nbytes as usize - j * h.blocksize as usize).min(h.blocksize as usize);
        let mut pos = rd(32 + 4 * j) as usize;
        for _ in 0..bytes / RECORD_LEN {
            let csize = rd(pos);
            let record = match csize {
                16 => Some(Record::from_bytes(&chunk[pos + 4..pos + 20]).unwrap()),
                0 => None,
                c => panic!("stream of {c} bytes in an instrumented chunk"),
            };
            pos += 4 + record.map_or(0, |_| RECORD_LEN);
            v.push(Stream { csize, record });
        }
    }
    v
}

/// The deterministic part of a record.
fn fixed(s: &Stream) -> (i32, Option<(f32, [u8; 4])>) {
    (s.csize, s.record.map(|r| (r.cratio, r.flags)))
}

/// Both libraries give the same outcome for `cp`/`src`/`destsize`; for instrumented chunks
/// the same 32 header bytes, size and streams. Returns our chunk.
fn same(cp: blosc2_cparams, src: &[u8], destsize: usize, what: &str) -> Vec<u8> {
    let (a, b) = (ours(cp, src, destsize), theirs(cp, src, destsize));
    let (a, b) = match (a, b) {
        (Err(x), Err(y)) => {
            assert_eq!(x, y, "{what}: error codes");
            return Vec::new();
        }
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => panic!(
            "{what}: ours {:?} vs reference {:?}",
            a.map(|v| v.len()),
            b.map(|v| v.len())
        ),
    };
    assert_eq!(a.len(), b.len(), "{what}: cbytes");
    if b.is_empty() {
        return a;
    }
    assert_eq!(a[..32], b[..32], "{what}: header");
    let h = ChunkHeader::parse(&a).unwrap();
    assert!(h.is_instr(), "{what}");
    if h.special().is_none() {
        let (sa, sb) = (streams(&a), streams(&b));
        assert_eq!(sa.len() * RECORD_LEN, h.nbytes as usize, "{what}");
        let fa: Vec<_> = sa.iter().map(fixed).collect();
        let fb: Vec<_> = sb.iter().map(fixed).collect();
        assert_eq!(fa, fb, "{what}: csizes, cratios, run flags");
        for r in sa.iter().filter_map(|s| s.record) {
            assert!(r.cspeed > 0.0 && r.filter_speed > 0.0, "{what}: speeds");
        }
    }
    // Each library reads the other's chunk as it reads its own.
    let n = h.nbytes as usize;
    assert_eq!(
        ref_decompress(&a, n, 1).unwrap(),
        decompress_vec(&a).unwrap(),
        "{what}"
    );
    assert_eq!(
        ref_decompress(&b, n, 1).unwrap(),
        decompress_vec(&b).unwrap(),
        "{what}"
    );
    a
}

/// Data with a mix of compressible, incompressible and run streams.
fn data(n: usize) -> Vec<u8> {
    let mut x: u32 = 12345;
    (0..n)
        .map(|i| match (i / 5000) % 3 {
            0 => (i / 4) as u8,
            1 => {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (x >> 24) as u8
            }
            _ => 0,
        })
        .collect()
}

fn instr(
    compcode: u8,
    typesize: i32,
    splitmode: i32,
    blocksize: i32,
    filters: [u8; 6],
) -> blosc2_cparams {
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = compcode;
    cp.splitmode = splitmode;
    cp.typesize = typesize;
    cp.blocksize = blocksize;
    cp.filters = filters;
    cp.instr_codec = true;
    cp
}

const SHUF: [u8; 6] = [0, 0, 0, 0, 0, 1];
const BITSHUF: [u8; 6] = [0, 0, 0, 0, 0, 2];
const NOFILT: [u8; 6] = [0; 6];

fn cases() -> Vec<blosc2_cparams> {
    vec![
        instr(0, 4, 2, 40000, SHUF),
        instr(0, 4, 1, 8000, SHUF),
        instr(1, 8, 1, 0, BITSHUF),
        instr(5, 4, 4, 10000, [0, 0, 0, 0, 3, 1]),
        instr(4, 2, 2, 0, NOFILT),
        instr(2, 4, 3, 0, SHUF),
    ]
}

#[test]
fn structure_matches_the_reference() {
    for len in [100_000usize, 65_536 + 12, 1000, 32, 33] {
        let src = data(len);
        for cp in cases() {
            same(
                cp,
                &src,
                roomy(&src),
                &format!("len {len} compcode {}", cp.compcode),
            );
        }
    }
}

#[test]
fn splitmodes_codecs_and_wide_types() {
    let src = data(100_000);
    for compcode in [0u8, 1, 2, 4, 5] {
        for splitmode in 1..=4 {
            for (ts, bs) in [(4, 16_384), (4, 0), (8, 0), (300, 0), (300, 30_000)] {
                let cp = instr(compcode, ts, splitmode, bs, SHUF);
                same(
                    cp,
                    &src,
                    roomy(&src),
                    &format!("cc {compcode} split {splitmode} ts {ts} bs {bs}"),
                );
            }
        }
    }
}

#[test]
fn two_threads_give_the_same_records() {
    let src = data(100_000);
    for bs in [0, 8000] {
        for cp in cases() {
            let mut cp = cp;
            cp.nthreads = 2;
            cp.blocksize = bs;
            same(cp, &src, roomy(&src), &format!("nthreads 2 bs {bs}"));
        }
    }
}

#[test]
fn special_value_inputs_are_records_of_runs() {
    let n = 100_000;
    let nan: Vec<u8> = (0..n / 4).flat_map(|_| f32::NAN.to_le_bytes()).collect();
    let value: Vec<u8> = (0..n).map(|i| (i % 4 + 1) as u8).collect();
    for (what, src) in [
        ("zeros", vec![0u8; n]),
        ("0xff", vec![0xffu8; n]),
        ("nan", nan),
        ("value", value),
    ] {
        for filters in [SHUF, BITSHUF, NOFILT] {
            for bs in [0, 4096] {
                let a = same(instr(0, 4, 4, bs, filters), &src, roomy(&src), what);
                // No special-value chunk: every stream is there, as a run record.
                let s = streams(&a);
                assert!(s.iter().all(|s| s.record.is_some_and(|r| r.flags[0] <= 1)));
            }
        }
    }
    // All-zero streams: run records with cratio neblock / 4.
    let a = same(
        instr(0, 4, 2, 10_000, NOFILT),
        &vec![0u8; n],
        roomy(&[0u8; 100_000]),
        "zeros",
    );
    let s = streams(&a);
    assert_eq!(s.len(), 10);
    assert!(s
        .iter()
        .all(|s| s.record.unwrap().cratio == 2500.0 && s.record.unwrap().flags == [1, 0, 0, 0]));
}

/// Prefilter: output = input + block number (so a wrong `nblock` shows in the cratios).
unsafe extern "C" fn add_nblock(p: *mut blosc2_prefilter_params) -> c_int {
    // SAFETY: both libraries pass a valid params struct.
    let p = unsafe { &mut *p };
    let n = p.output_size as usize;
    // SAFETY: both libraries pass `output_size` writable bytes at `output` and, with the output
    // typesize equal to the chunk's, as many readable bytes at `input`.
    let (inp, out) = unsafe {
        (
            std::slice::from_raw_parts(p.input, n),
            std::slice::from_raw_parts_mut(p.output, n),
        )
    };
    for (o, i) in out.iter_mut().zip(inp) {
        *o = i.wrapping_add(p.nblock as u8);
    }
    0
}

unsafe extern "C" fn failing(_: *mut blosc2_prefilter_params) -> c_int {
    -1
}

fn preparams(disposable: bool) -> blosc2_prefilter_params {
    blosc2_prefilter_params {
        output_is_disposable: disposable,
        ..Default::default()
    }
}

#[test]
fn prefilters_run_before_the_measurement() {
    let src = data(100_000);
    let mut pp = preparams(false);
    for mut cp in cases() {
        cp.prefilter = Some(add_nblock);
        cp.preparams = &mut pp;
        same(cp, &src, roomy(&src), "prefilter");
        // DELTA references the original (not prefiltered) bytes of block 0.
        cp.filters = [0, 0, 0, 0, 3, 1];
        same(cp, &src, roomy(&src), "prefilter + delta");
        cp.nthreads = 2;
        same(cp, &src, roomy(&src), "prefilter, 2 threads");
    }
    // A failing prefilter fails the chunk (FILTER_PIPELINE) in both.
    let mut cp = cases()[0];
    cp.prefilter = Some(failing);
    cp.preparams = &mut pp;
    assert_eq!(ours(cp, &src, roomy(&src)), Err(-18));
    same(cp, &src, roomy(&src), "failing prefilter");
}

#[test]
fn disposable_output_is_a_zero_special_chunk() {
    let src = data(100_000);
    let mut pp = preparams(true);
    for mut cp in cases() {
        cp.prefilter = Some(add_nblock);
        cp.preparams = &mut pp;
        // Every stream is a zero run without a record: a 32-byte zero chunk, flags 0x90,
        // whose nbytes/blocksize still count the records.
        let a = same(cp, &src, roomy(&src), "disposable");
        assert_eq!(a.len(), 32);
        assert_eq!(a[31], INSTR | 0x10);
        // A failing prefilter does not matter when the output is disposable.
        cp.prefilter = Some(failing);
        assert_eq!(same(cp, &src, roomy(&src), "disposable, failing"), a);
    }
}

/// What c-blosc2 writes for inputs it stores memcpyed: the raw input, with the header's
/// nbytes/blocksize rewritten to the record counts and the instr flag set. It cannot
/// decode that (-3); we write the plain memcpyed chunk instead. Everything else agrees.
fn memcpyed_case(cp: blosc2_cparams, src: &[u8], destsize: usize, body: &[u8], what: &str) {
    let a = ours(cp, src, destsize).unwrap();
    let b = theirs(cp, src, destsize).unwrap();
    assert_eq!(a.len(), b.len(), "{what}: cbytes");
    assert_eq!(a.len(), src.len() + 32, "{what}");
    assert_eq!(a[32..], *body, "{what}: body");
    assert_eq!(b[32..], *body, "{what}: reference body");
    // Shared fields: versions, flags byte, typesize, cbytes, filters, codec, metas, flags2.
    assert_eq!(
        (&a[..4], &a[12..31]),
        (&b[..4], &b[12..31]),
        "{what}: header"
    );
    assert_eq!(a[2] & 0x02, 0x02, "{what}: memcpyed");
    // Ours is a regular memcpyed chunk that decodes to what it holds, in both libraries.
    let h = ChunkHeader::parse(&a).unwrap();
    assert_eq!((h.nbytes as usize, a[31]), (src.len(), 0), "{what}");
    assert_eq!(decompress_vec(&a).unwrap(), body, "{what}");
    assert_eq!(ref_decompress(&a, src.len(), 1).unwrap(), body, "{what}");
    // The reference's: instr flag, record-count nbytes (a multiple of 16, blocksize 16 or
    // 16 * typesize), undecodable by itself and by us with the same code.
    let hb = ChunkHeader::parse(&b).unwrap();
    assert_eq!(b[31], INSTR, "{what}");
    assert_eq!(hb.nbytes % 16, 0, "{what}");
    assert!(
        hb.blocksize == 16 || hb.blocksize == 16 * b[3] as i32,
        "{what}"
    );
    if hb.nbytes > 0 && hb.nbytes as usize != src.len() {
        let code = ref_decompress(&b, hb.nbytes as usize, 1).unwrap_err();
        assert_eq!(code, -3, "{what}");
        assert_eq!(decompress_vec(&b).unwrap_err().code(), code, "{what}");
    }
}

#[test]
fn memcpyed_inputs_keep_a_decodable_header() {
    let src = data(100_000);
    let mut clevel0 = cases()[0];
    clevel0.clevel = 0;
    memcpyed_case(clevel0, &src, src.len() + 64, &src, "clevel 0");
    let mut zstd0 = cases()[3];
    zstd0.clevel = 0;
    memcpyed_case(zstd0, &src, src.len() + 32, &src, "zstd clevel 0");
    let mut dict0 = zstd0;
    dict0.use_dict = 1;
    memcpyed_case(dict0, &src, src.len() + 32, &src, "zstd dict clevel 0");
    let mut wide0 = instr(0, 300, 4, 0, SHUF);
    wide0.clevel = 0;
    memcpyed_case(wide0, &src, src.len() + 32, &src, "typesize 300 clevel 0");
    for n in [0, 1, 20, 31] {
        for cp in cases() {
            memcpyed_case(cp, &src[..n], 64, &src[..n], &format!("{n} bytes"));
        }
    }
    // 33 bytes as two blocks need 80 bytes of records: with room for 65 both fall back to a
    // memcpyed chunk (flags keep the dont-split bit), with 64 neither fits.
    let cp = instr(0, 4, 4, 0, SHUF);
    assert_eq!(same(cp, &src[..33], 80, "records fit").len(), 80);
    memcpyed_case(cp, &src[..33], 70, &src[..33], "records do not fit");
    assert_eq!(ours(cp, &src[..33], 64), Ok(Vec::new()));
    assert_eq!(theirs(cp, &src[..33], 64), Ok(Vec::new()));
    assert_eq!(ours(clevel0, &src, src.len() + 31), Ok(Vec::new()));
    assert_eq!(theirs(clevel0, &src, src.len() + 31), Ok(Vec::new()));
    // A prefilter's output is what a memcpyed chunk holds.
    let mut pp = preparams(false);
    let mut pre = clevel0;
    pre.prefilter = Some(add_nblock);
    pre.preparams = &mut pp;
    pre.blocksize = 10_000;
    let body: Vec<u8> = src
        .iter()
        .enumerate()
        .map(|(i, &b)| b.wrapping_add((i / 10_000) as u8))
        .collect();
    memcpyed_case(pre, &src, src.len() + 32, &body, "prefilter, clevel 0");
}

#[test]
fn dictionaries_are_trained_and_kept_with_the_records() {
    let src = data(100_000);
    for (compcode, bs) in [(5u8, 0), (5, 8000), (1, 0), (1, 8000), (2, 8000)] {
        let mut cp = instr(compcode, 4, 4, bs, SHUF);
        cp.use_dict = 1;
        let what = format!("dict cc {compcode} bs {bs}");
        let a = ours(cp, &src, roomy(&src)).unwrap();
        let b = theirs(cp, &src, roomy(&src)).unwrap();
        let h = ChunkHeader::parse(&a).unwrap();
        // Layout: header, bstarts, dict size, dict, one 20-byte stream per record.
        let nblocks = (src.len()).div_ceil(if bs == 0 { src.len() } else { bs as usize });
        let dsize = i32::from_le_bytes(a[32 + 4 * nblocks..36 + 4 * nblocks].try_into().unwrap());
        assert!(dsize > 0, "{what}");
        let nrec = h.nbytes as usize / RECORD_LEN;
        assert_eq!(
            a.len(),
            36 + 4 * nblocks + dsize as usize + 20 * nrec,
            "{what}"
        );
        assert_eq!(a[31], INSTR | USEDICT, "{what}");
        // Same header as the reference but for bytes 28..31, which its training pass
        // overwrites with a csize (so it loses the instr and dictionary flags).
        assert_eq!(
            (&a[..12], &a[16..28]),
            (&b[..12], &b[16..28]),
            "{what}: header"
        );
        assert_eq!(
            b[28..32],
            [16, 0, 0, 0],
            "{what}: the reference's clobbered bytes"
        );
        let (sa, sb) = (streams(&a), streams(&b));
        assert_eq!(sa.len(), sb.len(), "{what}");
        for (x, y) in sa.iter().zip(&sb) {
            let (x, y) = (x.record.unwrap(), y.record.unwrap());
            assert_eq!(
                (x.flags, x.flags[0] == 1),
                (y.flags, y.flags[0] == 1),
                "{what}: runs"
            );
            if x.flags[0] == 1 {
                assert_eq!(x.cratio, y.cratio, "{what}");
            }
        }
        if compcode != 5 {
            // LZ4's dictionary is the samples themselves: its size is fixed by the input.
            assert_eq!(a.len(), b.len(), "{what}: cbytes");
        }
        // The reference reads our chunk like we do (the records, unfiltered).
        let n = h.nbytes as usize;
        let ra = decompress_vec(&a).unwrap();
        assert_eq!(ref_decompress(&a, n, 1).unwrap(), ra, "{what}");
        let recs: Vec<u8> = sa
            .iter()
            .flat_map(|s| s.record.unwrap().to_bytes())
            .collect();
        assert_eq!(ra, recs, "{what}");
    }
    // Too little data for a dictionary: the records without one (the reference's header
    // bytes 28..31 are clobbered all the same).
    let mut cp = instr(5, 4, 4, 0, SHUF);
    cp.use_dict = 1;
    let small = &src[..2000];
    let a = ours(cp, small, roomy(small)).unwrap();
    let b = theirs(cp, small, roomy(small)).unwrap();
    assert_eq!((a.len(), a[31]), (b.len(), INSTR));
    assert_eq!((&a[..28], &b[28..32]), (&b[..28], &[16u8, 0, 0, 0][..]));
    let fa: Vec<_> = streams(&a).iter().map(fixed).collect();
    let fb: Vec<_> = streams(&b).iter().map(fixed).collect();
    assert_eq!(fa, fb);
    // Dictionaries only with ZSTD and LZ4/LZ4HC: CODEC_PARAM in both.
    let mut cp = instr(0, 4, 4, 0, SHUF);
    cp.use_dict = 1;
    assert_eq!(ours(cp, &src, roomy(&src)), Err(-8));
    same(cp, &src, roomy(&src), "blosclz dict");
}

#[test]
fn float_ramp_one_record_per_block() {
    // The C conformance test's case: 10 unsplit blocks of 40000 bytes.
    let src: Vec<u8> = (0..100_000)
        .flat_map(|i| (i as f32).to_le_bytes())
        .collect();
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.splitmode = BLOSC_NEVER_SPLIT;
    cp.blocksize = 40_000;
    cp.instr_codec = true;
    let a = same(cp, &src, roomy(&src), "float ramp");
    let h = ChunkHeader::parse(&a).unwrap();
    assert_eq!((h.nbytes, h.blocksize, h.cbytes), (160, 16, 32 + 40 + 200));
    let r = streams(&a);
    assert_eq!(r.len(), 10);
    assert!(r
        .iter()
        .all(|x| x.record.unwrap().cratio > 1.0 && x.record.unwrap().flags == [0; 4]));
    // Without the flag the same input compresses to data again.
    cp.instr_codec = false;
    assert_eq!(
        decompress_vec(&ours(cp, &src, roomy(&src)).unwrap()).unwrap(),
        src
    );
    cp.splitmode = BLOSC_ALWAYS_SPLIT;
    cp.instr_codec = true;
    let a = same(cp, &src, roomy(&src), "float ramp split");
    assert_eq!(streams(&a).len(), 40);
}

type VlCompress = unsafe extern "C" fn(
    *mut c_void,
    *const *const c_void,
    *const i32,
    i32,
    *mut c_void,
    i32,
) -> c_int;

/// VL-block chunks: c-blosc2 3.3.5 sets the instr flag but stores each 16-byte record behind a
/// csize of the block's *data* size, a chunk it cannot decode itself. We keep VL-block chunks
/// regular (the flag is ignored), so they decode to their blocks in both libraries.
#[test]
fn vl_block_chunks_are_not_instrumented() {
    let blocks: Vec<Vec<u8>> = [5000usize, 7000, 20]
        .iter()
        .enumerate()
        .map(|(k, &n)| (0..n).map(|i| (i / 3 + k) as u8).collect())
        .collect();
    let ptrs: Vec<*const c_void> = blocks.iter().map(|b| b.as_ptr() as *const c_void).collect();
    let sizes: Vec<i32> = blocks.iter().map(|b| b.len() as i32).collect();
    let flat = blocks.concat();
    let cp = instr(0, 4, 4, 0, SHUF);
    let r = reference();
    // SAFETY: dlsym of the reference's own entry point with its C signature.
    let ref_vlcompress: VlCompress = unsafe { std::mem::transmute(r.sym("blosc2_vlcompress_ctx")) };
    let ctxs = [
        blosc2_create_cctx(cp) as *mut c_void,
        // SAFETY: plain constructor call.
        unsafe { (r.create_cctx)(cp) },
    ];
    let mut out = Vec::new();
    for (k, ctx) in ctxs.into_iter().enumerate() {
        let mut dst = vec![0u8; 4 * flat.len() + 4096];
        // SAFETY: 3 blocks with their sizes; the destination has room (and slack for the
        // reference's writer); each context is freed by its own library.
        let n = unsafe {
            let n = if k == 0 {
                b2frame::capi::codec::blosc2_vlcompress_ctx(
                    ctx as *mut _,
                    ptrs.as_ptr(),
                    sizes.as_ptr(),
                    3,
                    dst.as_mut_ptr() as *mut c_void,
                    flat.len() as i32 + 4096,
                )
            } else {
                ref_vlcompress(
                    ctx,
                    ptrs.as_ptr(),
                    sizes.as_ptr(),
                    3,
                    dst.as_mut_ptr() as *mut c_void,
                    flat.len() as i32 + 4096,
                )
            };
            if k == 0 {
                blosc2_free_ctx(ctx as *mut _);
            } else {
                (r.free_ctx)(ctx);
            }
            n
        };
        assert!(n > 0, "library {k}: {n}");
        dst.truncate(n as usize);
        out.push(dst);
    }
    let (a, b) = (&out[0], &out[1]);
    assert_eq!(
        (a[0], a[30], a[31]),
        (6, 1, 0),
        "ours: a regular VL-block chunk"
    );
    assert_eq!(decompress_vec(a).unwrap(), flat);
    assert_eq!(ref_decompress(a, flat.len(), 1).unwrap(), flat);
    assert_eq!(
        (b[0], b[30], b[31]),
        (6, 1, INSTR),
        "reference: VL blocks + instr flag"
    );
    let rd = |at: usize| i32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    assert_eq!(
        (rd(4), rd(8)),
        (48, 16),
        "reference: record-count nbytes/blocksize"
    );
    assert_eq!(
        rd(rd(32) as usize),
        5000,
        "reference: a csize of 5000 before a 16-byte record"
    );
    assert!(ref_decompress(b, flat.len(), 1).is_err());
}
