//! Differential tests of the chunk engine against the real c-blosc2 (both directions): over a
//! seeded sample of codec x clevel x pipeline x typesize x size x data kind x nthreads x
//! splitmode x blocksize, chunks written by either library decode (and getitem) correctly with
//! the other, header bytes agree, and our compressed sizes stay within 2% of the reference's.
//! Special-value constructors are compared byte for byte; dictionaries are checked both ways.
use crate::common;

use b2frame::capi::types::{blosc2_cparams, BLOSC2_CPARAMS_DEFAULTS, BLOSC2_DPARAMS_DEFAULTS};
use b2frame::chunk::{no_hooks, special, CParams, Compressor, DParams, Decompressor};
use common::reference::{ref_compress, ref_decompress, reference};
use common::{data_kind, Rng};
use std::ffi::c_void;

const PIPELINES: [([u8; 6], [u8; 6], &str); 5] = [
    ([0; 6], [0; 6], "none"),
    ([0, 0, 0, 0, 0, 1], [0; 6], "shuffle"),
    ([0, 0, 0, 0, 0, 2], [0; 6], "bitshuffle"),
    ([0, 0, 0, 0, 3, 1], [0; 6], "delta+shuffle"),
    (
        [0, 0, 0, 0, 4, 1],
        [0, 0, 0, 0, 10, 0],
        "trunc_prec+shuffle",
    ),
];
const CODECS: [u8; 5] = [0, 1, 2, 4, 5];
const CLEVELS: [u8; 4] = [0, 1, 5, 9];
const TYPESIZES: [i32; 7] = [1, 2, 3, 4, 8, 16, 300];
const SIZES: [usize; 7] = [0, 1, 31, 32, 4099, 64 * 1024 + 13, 1 << 20];
const KINDS: [&str; 7] = [
    "random",
    "zeros",
    "constant",
    "seq_i32",
    "small_int",
    "f64_series",
    "text",
];

#[derive(Clone, Copy, Debug)]
struct Case {
    codec: u8,
    clevel: u8,
    pipe: usize,
    typesize: i32,
    size: usize,
    kind: &'static str,
    nthreads: i16,
    splitmode: i32,
    blocksize: i32,
    use_dict: bool,
}

impl Case {
    fn ours(&self) -> CParams {
        CParams {
            compcode: self.codec,
            compcode_meta: 0,
            clevel: self.clevel,
            use_dict: self.use_dict,
            typesize: self.typesize,
            nthreads: self.nthreads,
            blocksize: self.blocksize,
            splitmode: self.splitmode,
            filters: PIPELINES[self.pipe].0,
            filters_meta: PIPELINES[self.pipe].1,
        }
    }
    fn theirs(&self) -> blosc2_cparams {
        let mut c = BLOSC2_CPARAMS_DEFAULTS;
        c.compcode = self.codec;
        c.clevel = self.clevel;
        c.use_dict = self.use_dict as i32;
        c.typesize = self.typesize;
        c.nthreads = self.nthreads;
        c.blocksize = self.blocksize;
        c.splitmode = self.splitmode;
        c.filters = PIPELINES[self.pipe].0;
        c.filters_meta = PIPELINES[self.pipe].1;
        c
    }
}

fn pick<T: Copy>(rng: &mut Rng, v: &[T]) -> T {
    v[rng.below(v.len() as u64) as usize]
}

fn our_compress(cp: CParams, src: &[u8]) -> Vec<u8> {
    let mut c = Compressor::new(cp, no_hooks()).unwrap();
    let mut dst = vec![0u8; src.len() + 32];
    let n = c.compress(src, &mut dst).unwrap();
    assert!(n > 0);
    dst.truncate(n);
    dst
}

fn our_decompress(chunk: &[u8], nbytes: usize, nthreads: i16) -> Result<Vec<u8>, i32> {
    let mut d = Decompressor::new(DParams { nthreads }, no_hooks()).unwrap();
    let mut out = vec![0u8; nbytes];
    let n = d.decompress(chunk, &mut out).map_err(|e| e.code())?;
    out.truncate(n);
    Ok(out)
}

fn ref_getitem(chunk: &[u8], start: i32, nitems: i32, itemsize: usize) -> Result<Vec<u8>, i32> {
    let r = reference();
    let mut out = vec![0u8; nitems as usize * itemsize];
    // SAFETY: buffers sized as declared; the context is freed before returning.
    unsafe {
        let ctx = (r.create_dctx)(BLOSC2_DPARAMS_DEFAULTS);
        let n = (r.getitem_ctx)(
            ctx,
            chunk.as_ptr() as *const c_void,
            chunk.len() as i32,
            start,
            nitems,
            out.as_mut_ptr() as *mut c_void,
            out.len() as i32,
        );
        (r.free_ctx)(ctx);
        if n < 0 {
            return Err(n);
        }
        out.truncate(n as usize);
    }
    Ok(out)
}

/// A sampled case is valid input for the reference: it must not hit its header/effective
/// blocksize bug (docs/divergences.md#1-the-header-records-the-effective-blocksize) nor the
/// DELTA trailing-bytes bug (docs/divergences.md#2-delta-and-trunc_prec-encode-the-trailing-bytes), and TRUNC_PREC needs
/// typesize 4 or 8.
fn valid(c: &Case) -> bool {
    // TRUNC_PREC: typesize 4 or 8 only; and like DELTA the reference leaves the trailing bytes
    // after the last whole item unwritten.
    if c.pipe == 4
        && (!(c.typesize == 4 || c.typesize == 8) || !c.size.is_multiple_of(c.typesize as usize))
    {
        return false;
    }
    if c.pipe == 3 {
        let w = match c.typesize {
            1 | 2 | 4 | 8 => c.typesize as usize,
            t if t % 8 == 0 => 8,
            _ => 1,
        };
        if !c.size.is_multiple_of(w)
            || (c.blocksize > 0 && !(c.blocksize as usize).is_multiple_of(w))
        {
            return false;
        }
    }
    if c.blocksize > 0 {
        let bs = c.blocksize as usize;
        let ts = c.typesize as usize;
        if !bs.is_multiple_of(ts) || (bs > c.size && !c.size.is_multiple_of(ts)) {
            return false;
        }
    }
    true
}

/// Asserts `got == Ok(want)`, reporting sizes and the first differing byte (not the buffers).
fn same(got: Result<Vec<u8>, i32>, want: &[u8], ctx: &str) {
    match got {
        Err(e) => panic!("error {e}: {ctx}"),
        Ok(v) => {
            if v != want {
                let at = v.iter().zip(want).position(|(a, b)| a != b);
                panic!(
                    "mismatch: {} vs {} bytes, first difference at {:?}: {ctx}",
                    v.len(),
                    want.len(),
                    at
                );
            }
        }
    }
}

#[derive(Default)]
struct Stats {
    cases: usize,
    header_mismatch: usize,
    ours: u64,
    theirs: u64,
    ratio_sum: f64,
    ratio_n: usize,
    worst: f64,
    getitems: usize,
    memcpy_dict: usize,
    memcpy_dict_ref_own_ok: usize,
    identical: usize,
}

fn run_case(c: &Case, seed: u64, st: &mut Stats) {
    let data = data_kind(c.kind, c.size, seed);
    let ours = our_compress(c.ours(), &data);
    let theirs = ref_compress(c.theirs(), &data);
    let n = data.len();
    // What a correct decoder must produce: the data, except that TRUNC_PREC is lossy; then the
    // reference's own decoding of its own chunk is the truth.
    let expect = if c.pipe == 4 {
        ref_decompress(&theirs, n, 1).unwrap()
    } else {
        data.clone()
    };
    let ctx = format!("{c:?}");
    same(
        ref_decompress(&ours, n, c.nthreads),
        &expect,
        &format!("reference decoding our chunk: {ctx}"),
    );
    same(
        our_decompress(&theirs, n, c.nthreads),
        &expect,
        &format!("our decoding of the reference chunk: {ctx}"),
    );
    same(
        our_decompress(&ours, n, 1),
        &expect,
        &format!("round trip: {ctx}"),
    );
    // Header bytes other than cbytes.
    let hl = 32.min(ours.len()).min(theirs.len());
    let mut a = ours[..hl].to_vec();
    let mut b = theirs[..hl].to_vec();
    a[12..16].fill(0);
    b[12..16].fill(0);
    // A dict chunk that fell back to memcpy keeps USEDICT in the reference (whose own reader then
    // takes the first raw bytes for a dictionary size); we clear it. Tolerate only that.
    if hl == 32 && b[2] & 0x02 != 0 && b[31] & 1 != 0 && c.use_dict {
        b[31] &= !1;
        st.memcpy_dict += 1;
        st.memcpy_dict_ref_own_ok += ref_decompress(&theirs, n, 1).is_ok() as usize;
    }
    if a != b {
        st.header_mismatch += 1;
        eprintln!(
            "header differs ({} vs {} bytes) {ctx}\n ours   {:02x?}\n theirs {:02x?}",
            ours.len(),
            theirs.len(),
            a,
            b
        );
    }
    st.cases += 1;
    st.identical += (ours == theirs) as usize;
    st.ours += ours.len() as u64;
    st.theirs += theirs.len() as u64;
    let r = ours.len() as f64 / theirs.len() as f64;
    st.ratio_sum += r;
    st.ratio_n += 1;
    if (r - 1.0).abs() > (st.worst - 1.0).abs() {
        st.worst = r;
    }
    // getitem both ways on a random range.
    let ts = if c.typesize > 255 {
        1
    } else {
        c.typesize as usize
    };
    let nitems = n / ts;
    if nitems > 0 {
        let mut rng = Rng::new(seed ^ 0x5eed);
        let start = rng.below(nitems as u64) as usize;
        let count = 1 + rng.below((nitems - start) as u64) as usize;
        let want = &expect[start * ts..(start + count) * ts];
        let mut d = Decompressor::new(DParams::default(), no_hooks()).unwrap();
        let mut out = vec![0u8; count * ts];
        for chunk in [&ours, &theirs] {
            let k = d
                .getitem(chunk, start as i32, count as i32, &mut out)
                .unwrap_or_else(|e| panic!("our getitem {e}: {ctx}"));
            assert_eq!(k, out.len());
            same(Ok(out.clone()), want, &format!("our getitem: {ctx}"));
        }
        // The reference getitem decodes DELTA blocks after the first one wrongly (it treats each
        // block as block 0), and does not load a chunk's dictionary (it fails on dict-coded
        // streams, its own included), so only compare it without those.
        if c.pipe != 3 && !c.use_dict {
            same(
                ref_getitem(&ours, start as i32, count as i32, ts),
                want,
                &format!("reference getitem on our chunk: {ctx}"),
            );
        }
        st.getitems += 1;
    }
}

#[test]
fn differential_matrix() {
    let mut rng = Rng::new(20_261_121);
    let mut st = Stats {
        worst: 1.0,
        ..Default::default()
    };
    let mut tried = 0;
    while st.cases < 1500 && tried < 10000 {
        tried += 1;
        let size = pick(&mut rng, &SIZES);
        let clevel = pick(&mut rng, &CLEVELS);
        let codec = pick(&mut rng, &CODECS);
        // Keep the run short: the slowest codec settings only on smaller inputs.
        if size == 1 << 20 && (clevel == 9 || codec == 4 || codec == 2) && rng.below(4) != 0 {
            continue;
        }
        let typesize = pick(&mut rng, &TYPESIZES);
        let blocksize = match rng.below(4) {
            0 => 256 * typesize,
            1 => 1000 * typesize,
            _ => 0,
        };
        let c = Case {
            codec,
            clevel,
            pipe: rng.below(PIPELINES.len() as u64) as usize,
            typesize,
            size,
            kind: pick(&mut rng, &KINDS),
            nthreads: pick(&mut rng, &[1i16, 2]),
            splitmode: pick(&mut rng, &[1, 2, 3, 4, 4, 4]),
            blocksize,
            use_dict: false,
        };
        if !valid(&c) {
            continue;
        }
        run_case(&c, tried as u64, &mut st);
    }
    let avg = st.ratio_sum / st.ratio_n as f64;
    println!(
        "chunk differential: {} cases ({} byte-identical to the reference, {} getitem checks), header mismatches {}, total bytes ours {} vs reference {} (ratio {:.4}), mean per-chunk ratio {:.4}, worst {:.4}",
        st.cases,
        st.identical,
        st.getitems,
        st.header_mismatch,
        st.ours,
        st.theirs,
        st.ours as f64 / st.theirs as f64,
        avg,
        st.worst
    );
    assert!(st.cases >= 500, "too few valid cases: {}", st.cases);
    assert_eq!(
        st.header_mismatch, 0,
        "header bytes differ from the reference"
    );
    assert!((avg - 1.0).abs() < 0.02, "mean size ratio {avg}");
}

/// Dictionary chunks. ZSTD ones come out byte-identical; LZ4/LZ4HC ones differ by a few bytes
/// because c-blosc2 writes the dict size into its own sample buffer (at offset 4*nblocks)
/// before copying the samples out as the dictionary, so its dictionary has 4 bytes replaced;
/// we use the samples as they are.
#[test]
fn dictionaries_both_ways() {
    let mut st = Stats::default();
    for (i, &codec) in [1u8, 2, 5].iter().enumerate() {
        for &kind in &["text", "small_int", "f64_series"] {
            for &size in &[10_000usize, 300_000] {
                for &nthreads in &[1i16, 2] {
                    let c = Case {
                        codec,
                        clevel: 5,
                        pipe: 1,
                        typesize: 4,
                        size,
                        kind,
                        nthreads,
                        splitmode: 4,
                        blocksize: 0,
                        use_dict: true,
                    };
                    run_case(&c, i as u64 + size as u64, &mut st);
                }
            }
        }
    }
    println!(
        "dict chunks: {} cases, bytes ours {} vs reference {}, header mismatches {}, \
         memcpyed fallbacks with USEDICT left set by the reference {} (of which it decodes {})",
        st.cases, st.ours, st.theirs, st.header_mismatch, st.memcpy_dict, st.memcpy_dict_ref_own_ok
    );
    assert_eq!(st.header_mismatch, 0);
    assert!((st.ours as f64 / st.theirs as f64 - 1.0).abs() < 0.02);
}

type SpecialFn = unsafe extern "C" fn(blosc2_cparams, i32, *mut c_void, i32) -> i32;
type RepeatFn = unsafe extern "C" fn(blosc2_cparams, i32, *mut c_void, i32, *const c_void) -> i32;

#[test]
fn special_constructors_match_reference_bytes() {
    let r = reference();
    for &(name, kind) in &[
        ("blosc2_chunk_zeros", 0),
        ("blosc2_chunk_nans", 1),
        ("blosc2_chunk_uninit", 2),
        ("blosc2_chunk_repeatval", 3),
    ] {
        for &ts in &[1, 4, 8, 300] {
            for &nbytes in &[0i32, 8 * 300, 1 << 20] {
                for &(clevel, codec, bs) in &[(5u8, 0u8, 0), (9, 5, 0), (0, 1, 0), (5, 0, 4800)] {
                    let c = Case {
                        codec,
                        clevel,
                        pipe: 1,
                        typesize: ts,
                        size: nbytes as usize,
                        kind: "zeros",
                        nthreads: 1,
                        splitmode: 4,
                        blocksize: bs,
                        use_dict: false,
                    };
                    let value: Vec<u8> = (0..ts as usize).map(|i| (i % 250) as u8 + 1).collect();
                    let mut theirs = vec![0u8; 32 + ts as usize];
                    let mut ours = vec![0u8; 32 + ts as usize];
                    // SAFETY: the symbol has the declared blosc2.h signature; buffers are sized.
                    let rn = unsafe {
                        let p = r.sym(name);
                        if kind == 3 {
                            let f: RepeatFn = std::mem::transmute(p);
                            f(
                                c.theirs(),
                                nbytes,
                                theirs.as_mut_ptr() as *mut c_void,
                                theirs.len() as i32,
                                value.as_ptr() as *const c_void,
                            )
                        } else {
                            let f: SpecialFn = std::mem::transmute(p);
                            f(
                                c.theirs(),
                                nbytes,
                                theirs.as_mut_ptr() as *mut c_void,
                                theirs.len() as i32,
                            )
                        }
                    };
                    let cp = c.ours();
                    let on = match kind {
                        0 => special::zeros(&cp, nbytes, &mut ours),
                        1 => special::nans(&cp, nbytes, &mut ours),
                        2 => special::uninit(&cp, nbytes, &mut ours),
                        _ => special::repeatval(&cp, nbytes, &mut ours, &value),
                    };
                    let ctx = format!("{name} ts {ts} nbytes {nbytes} {c:?}");
                    match on {
                        Ok(n) => {
                            assert_eq!(n as i32, rn, "{ctx}");
                            assert_eq!(ours[..n], theirs[..n], "{ctx}");
                            if nbytes > 0 && (kind != 1 || ts == 4 || ts == 8) {
                                let want = ref_decompress(&theirs[..n], nbytes as usize, 1);
                                if kind != 2 {
                                    assert_eq!(
                                        our_decompress(&ours[..n], nbytes as usize, 1)
                                            .map(|v| v.iter().map(|&b| b as u64).sum::<u64>()),
                                        want.map(|v| v.iter().map(|&b| b as u64).sum::<u64>()),
                                        "{ctx}"
                                    );
                                }
                            }
                        }
                        Err(e) => assert_eq!(e.code(), rn, "{ctx}"),
                    }
                }
            }
        }
    }
}

/// Forged chunks: every single-field corruption below gets the same outcome (error code, or
/// success with the same bytes) from both libraries.
#[test]
fn forged_chunks_get_reference_error_codes() {
    let data = data_kind("f64_series", 100_000, 9);
    let mut bases = Vec::new();
    for (codec, pipe, bs) in [(0u8, 1usize, 16384), (5, 3, 0), (1, 2, 8000)] {
        let c = Case {
            codec,
            clevel: 5,
            pipe,
            typesize: 8,
            size: data.len(),
            kind: "f64_series",
            nthreads: 1,
            splitmode: 4,
            blocksize: bs,
            use_dict: false,
        };
        bases.push(ref_compress(c.theirs(), &data));
    }
    let c0 = CParams {
        clevel: 0,
        ..Default::default()
    };
    bases.push(our_compress(c0, &data)); // memcpyed
    let mut buf = [0u8; 64];
    let cpz = CParams::default();
    let n = special::repeatval(&cpz, 800, &mut buf, &[3; 8]).unwrap();
    bases.push(buf[..n].to_vec());

    let mut rng = Rng::new(77);
    let mut compared = 0;
    let mut errors = std::collections::BTreeMap::new();
    for base in &bases {
        let nb = i32::from_le_bytes(base[4..8].try_into().unwrap()) as usize;
        let mut forgeries: Vec<Vec<u8>> = Vec::new();
        // Header fields set to edge values.
        let fields: [(usize, usize); 8] = [
            (0, 1),
            (2, 1),
            (3, 1),
            (4, 4),
            (8, 4),
            (12, 4),
            (30, 1),
            (31, 1),
        ];
        for &(at, len) in &fields {
            for v in [
                0i64,
                1,
                -1,
                2,
                7,
                16,
                31,
                32,
                255,
                0x7fff_ffff,
                nb as i64 + 1,
                base.len() as i64 + 1,
            ] {
                let mut f = base.clone();
                let b = v.to_le_bytes();
                f[at..at + len].copy_from_slice(&b[..len]);
                forgeries.push(f);
            }
        }
        // bstarts / stream sizes, and truncations.
        for _ in 0..40 {
            let mut f = base.clone();
            let at = 32 + rng.below((base.len() - 32).min(64) as u64) as usize;
            f[at] = rng.next_u64() as u8;
            forgeries.push(f);
        }
        for cut in [16, 31, 32, 33, base.len() / 2, base.len() - 1] {
            forgeries.push(base[..cut.min(base.len())].to_vec());
        }
        for f in forgeries {
            // Deliberate difference: memcpyed chunks flagged USEDICT (what c-blosc2's dict
            // writer emits when it falls back to memcpy) are read, not rejected.
            if f.len() >= 32 && f[2] & 0x07 == 0x07 && f[31] & 1 == 1 {
                continue;
            }
            let theirs = ref_decompress(&f, nb, 1);
            let ours = our_decompress(&f, nb, 1);
            match (&theirs, &ours) {
                (Err(a), Err(b)) => {
                    assert_eq!(
                        a,
                        b,
                        "error codes differ for forged chunk {:02x?}",
                        &f[..32.min(f.len())]
                    );
                    *errors.entry(*a).or_insert(0) += 1;
                }
                (Ok(a), Ok(b)) => {
                    // Uninitialised/garbage-tolerant cases decode to the same bytes.
                    assert_eq!(a.len(), b.len());
                    assert!(
                        a == b,
                        "different bytes for forged chunk {:02x?}",
                        &f[..32.min(f.len())]
                    );
                }
                _ => panic!(
                    "outcomes differ: reference {:?} ours {:?} for {:02x?}",
                    theirs.as_ref().map(|v| v.len()),
                    ours.as_ref().map(|v| v.len()),
                    &f[..32.min(f.len())]
                ),
            }
            compared += 1;
        }
    }
    println!("forged chunks: {compared} compared, error codes seen {errors:?}");
}

type VlCompress = unsafe extern "C" fn(
    *mut c_void,
    *const *const c_void,
    *const i32,
    i32,
    *mut c_void,
    i32,
) -> i32;
type VlDecompress =
    unsafe extern "C" fn(*mut c_void, *const c_void, i32, *mut *mut c_void, *mut i32, i32) -> i32;

/// VL-block chunks: same bytes as the reference (serial), and each side decodes the other's.
#[test]
fn vl_chunks_both_ways() {
    let r = reference();
    let mut cases = 0;
    for &(codec, pipe, ts) in &[
        (0u8, 1usize, 4),
        (5, 3, 8),
        (1, 0, 1),
        (4, 2, 2),
        (2, 1, 300),
    ] {
        for &use_dict in &[false, true] {
            if use_dict && !matches!(codec, 1 | 2 | 5) {
                continue;
            }
            let blocks: Vec<Vec<u8>> = (0..12)
                .map(|i| {
                    data_kind(
                        ["text", "f64_series", "small_int"][i % 3],
                        800 + 1331 * i,
                        i as u64,
                    )
                })
                .map(|mut b| {
                    let w = if ts > 8 { 8 } else { ts as usize };
                    b.truncate(b.len() / w * w);
                    b
                })
                .collect();
            let c = Case {
                codec,
                clevel: 5,
                pipe,
                typesize: ts,
                size: 0,
                kind: "text",
                nthreads: 1,
                splitmode: 4,
                blocksize: 0,
                use_dict,
            };
            let ptrs: Vec<*const c_void> =
                blocks.iter().map(|b| b.as_ptr() as *const c_void).collect();
            let sizes: Vec<i32> = blocks.iter().map(|b| b.len() as i32).collect();
            let total: usize = blocks.iter().map(|b| b.len()).sum();
            let mut theirs = vec![0u8; total + 1024];
            // SAFETY: signatures from blosc2.h; buffers sized as declared; context freed.
            let tn = unsafe {
                let f: VlCompress = std::mem::transmute(r.sym("blosc2_vlcompress_ctx"));
                let ctx = (r.create_cctx)(c.theirs());
                let n = f(
                    ctx,
                    ptrs.as_ptr(),
                    sizes.as_ptr(),
                    blocks.len() as i32,
                    theirs.as_mut_ptr() as *mut c_void,
                    theirs.len() as i32,
                );
                (r.free_ctx)(ctx);
                n
            };
            assert!(tn > 0, "reference vlcompress {tn}");
            theirs.truncate(tn as usize);
            let refs: Vec<&[u8]> = blocks.iter().map(|b| &b[..]).collect();
            let mut comp = Compressor::new(c.ours(), no_hooks()).unwrap();
            let mut ours = vec![0u8; total + 1024];
            let on = comp.vlcompress(&refs, &mut ours).unwrap();
            ours.truncate(on);
            let ctx = format!("{c:?}");
            let mut a = ours[..32].to_vec();
            let mut b = theirs[..32].to_vec();
            a[12..16].fill(0);
            b[12..16].fill(0);
            assert_eq!(a, b, "VL header: {ctx}");
            if !use_dict {
                assert!(ours == theirs, "VL bytes differ ({on} vs {tn}): {ctx}");
            } else {
                // Dictionaries: the two builds of c-blosc2 3.3.5 do not agree with each other.
                // For these inputs (bytes, measured with this test): zstd 43471 from ours, the
                // x86-64 and the aarch64 reference alike; LZ4 55902 from ours and the x86-64
                // reference, 63581 (+13.7%) from the aarch64 one; LZ4HC 50362 from ours, 50366
                // from the x86-64 reference, 57802 (+14.8%) from the aarch64 one. Ours are the
                // same on both machines. So the check is one-sided for LZ4/LZ4HC: ours may be at most 5%
                // larger than the reference in use, never the 14% the aarch64 reference would
                // need the other way; that each side decodes the other's is checked below.
                println!("VL dict chunk: ours {on} bytes, reference {tn} bytes: {ctx}");
                assert!(on as f64 <= tn as f64 * 1.05, "{on} vs {tn}: {ctx}");
                if codec == 5 {
                    // Zstd, where both builds agree: within 5% either way.
                    assert!(on as f64 >= tn as f64 * 0.95, "{on} vs {tn}: {ctx}");
                }
            }
            // Each side decodes the other's, block by block.
            let mut d = Decompressor::new(DParams::default(), no_hooks()).unwrap();
            assert!(
                d.vldecompress(&theirs).unwrap() == blocks,
                "ours on theirs: {ctx}"
            );
            let mut dests = vec![std::ptr::null_mut::<c_void>(); blocks.len()];
            let mut dsizes = vec![0i32; blocks.len()];
            // SAFETY: as above; the reference mallocs each block, freed here with libc::free.
            unsafe {
                let f: VlDecompress = std::mem::transmute(r.sym("blosc2_vldecompress_ctx"));
                let ctx2 = (r.create_dctx)(BLOSC2_DPARAMS_DEFAULTS);
                let k = f(
                    ctx2,
                    ours.as_ptr() as *const c_void,
                    ours.len() as i32,
                    dests.as_mut_ptr(),
                    dsizes.as_mut_ptr(),
                    blocks.len() as i32,
                );
                (r.free_ctx)(ctx2);
                assert_eq!(k, blocks.len() as i32, "reference vldecompress: {ctx}");
                for (i, p) in dests.iter().enumerate() {
                    let got = std::slice::from_raw_parts(*p as *const u8, dsizes[i] as usize);
                    assert!(got == &blocks[i][..], "reference block {i}: {ctx}");
                    common::reference::free_ref(*p);
                }
            }
            cases += 1;
        }
    }
    println!("VL chunks: {cases} cases checked both ways");
}

type SetMaskout = unsafe extern "C" fn(*mut c_void, *const bool, i32) -> i32;
type GetitemBytes =
    unsafe extern "C" fn(*mut c_void, *const c_void, i32, i32, i32, *mut c_void, i32) -> i32;

/// Maskout, single-block decoding and byte-range getitem agree with the reference.
#[test]
fn maskout_block_and_byte_ranges_match_reference() {
    let r = reference();
    let data = data_kind("small_int", 100_003, 3);
    for &(codec, pipe, bs) in &[(0u8, 1usize, 16_384i32), (1, 2, 8_000), (5, 0, 32_768)] {
        let c = Case {
            codec,
            clevel: 5,
            pipe,
            typesize: 1,
            size: data.len(),
            kind: "small_int",
            nthreads: 1,
            splitmode: 4,
            blocksize: bs,
            use_dict: false,
        };
        let chunk = our_compress(c.ours(), &data);
        let nblocks = data.len().div_ceil(bs as usize);
        let mask: Vec<bool> = (0..nblocks).map(|i| i % 3 == 1).collect();
        let mut theirs = vec![0xABu8; data.len()];
        let mut ours = vec![0xABu8; data.len()];
        let mut d = Decompressor::new(DParams::default(), no_hooks()).unwrap();
        d.set_maskout(&mask);
        d.decompress(&chunk, &mut ours).unwrap();
        let mut bad_mask_ours = d.decompress(&chunk, &mut vec![0u8; data.len()]).is_ok();
        d.set_maskout(&mask[1..]);
        bad_mask_ours &= d.decompress(&chunk, &mut vec![0u8; data.len()]).is_err();
        // SAFETY: signatures from blosc2.h; buffers sized as declared; contexts freed.
        unsafe {
            let ctx = (r.create_dctx)(BLOSC2_DPARAMS_DEFAULTS);
            let sm: SetMaskout = std::mem::transmute(r.sym("blosc2_set_maskout"));
            sm(ctx, mask.as_ptr(), mask.len() as i32);
            let n = (r.decompress_ctx)(
                ctx,
                chunk.as_ptr() as *const c_void,
                chunk.len() as i32,
                theirs.as_mut_ptr() as *mut c_void,
                theirs.len() as i32,
            );
            assert_eq!(n, data.len() as i32);
            sm(ctx, mask[1..].as_ptr(), mask.len() as i32 - 1);
            let mut tmp = vec![0u8; data.len()];
            let e = (r.decompress_ctx)(
                ctx,
                chunk.as_ptr() as *const c_void,
                chunk.len() as i32,
                tmp.as_mut_ptr() as *mut c_void,
                tmp.len() as i32,
            );
            assert_eq!(e, b2frame::Error::Data.code(), "wrong-length mask");
            let gb: GetitemBytes = std::mem::transmute(r.sym("blosc2_getitem_bytes_ctx"));
            // (blosc2_decompress_block_ctx is not exported by the 3.3.5 binary: check ours
            // against a full decode instead.)
            for j in 0..=nblocks {
                let mut b = vec![0u8; bs as usize];
                let got = d.decompress_block(&chunk, j as i32, &mut b);
                if j == nblocks {
                    assert_eq!(got, Err(b2frame::Error::InvalidParam));
                } else {
                    let k = got.unwrap();
                    let from = j * bs as usize;
                    assert!(b[..k] == data[from..from + k], "decompress_block {j}");
                }
            }
            for (start, len) in [(0, 10), (16_380, 10), (100_000, 3), (99_999, 5), (-1, 2)] {
                let mut a = vec![0u8; 16];
                let mut b = vec![0u8; 16];
                let ra = gb(
                    ctx,
                    chunk.as_ptr() as *const c_void,
                    chunk.len() as i32,
                    start,
                    len,
                    a.as_mut_ptr() as *mut c_void,
                    a.len() as i32,
                );
                let rb = d
                    .getitem_bytes(&chunk, start, len, &mut b)
                    .map(|n| n as i32)
                    .unwrap_or_else(|e| e.code());
                assert_eq!(ra, rb, "getitem_bytes {start} {len}");
                assert!(a == b);
            }
            (r.free_ctx)(ctx);
        }
        assert!(ours == theirs, "maskout result differs: {c:?}");
        assert!(bad_mask_ours, "mask is one-shot and length-checked");
    }
}

/// Output buffers of every size around the compressed size and around `nbytes + 32`: both
/// libraries make the same choice (compressed, memcpyed, or 0 = does not fit), byte for byte.
#[test]
fn tight_output_buffers_match_reference() {
    let r = reference();
    let mut checked = 0;
    for &(codec, clevel, kind, size, ts) in &[
        (0u8, 5u8, "text", 3000usize, 4i32),
        (5, 9, "small_int", 5000, 4),
        (1, 5, "random", 2000, 8),
        (4, 5, "f64_series", 40_000, 8),
        (2, 9, "constant", 64, 2),
        (5, 1, "random", 100, 1),
    ] {
        let data = data_kind(kind, size, 11);
        let c = Case {
            codec,
            clevel,
            pipe: 1,
            typesize: ts,
            size,
            kind,
            nthreads: 1,
            splitmode: 4,
            blocksize: 1024 * ts,
            use_dict: false,
        };
        let full = our_compress(c.ours(), &data).len();
        let mut sizes: Vec<usize> = (full.saturating_sub(64)..full + 8).collect();
        sizes.extend(size + 24..size + 40);
        sizes.retain(|&d| d >= 32);
        for dsize in sizes {
            let mut theirs = vec![0u8; dsize];
            // SAFETY: buffers sized as declared; the context is freed.
            let tn = unsafe {
                let ctx = (r.create_cctx)(c.theirs());
                let n = (r.compress_ctx)(
                    ctx,
                    data.as_ptr() as *const c_void,
                    data.len() as i32,
                    theirs.as_mut_ptr() as *mut c_void,
                    dsize as i32,
                );
                (r.free_ctx)(ctx);
                n
            };
            let mut ours = vec![0u8; dsize];
            let on = Compressor::new(c.ours(), no_hooks())
                .unwrap()
                .compress(&data, &mut ours)
                .unwrap();
            assert_eq!(on as i32, tn, "destsize {dsize}: {c:?}");
            assert!(ours[..on] == theirs[..on], "destsize {dsize}: {c:?}");
            checked += 1;
        }
    }
    println!("tight output buffers: {checked} destsizes, same outcome and bytes");
}

/// TRUNC_PREC that turns a chunk into zeros: c-blosc2 stores a ZERO special chunk (header only,
/// byte 31 = 0x10) also when a short last block has bytes after its last whole element (which it
/// leaves unwritten, so they are the earlier blocks' zeros); ours writes the same 32 bytes.
#[test]
fn trunc_prec_to_zeros_is_a_zero_chunk() {
    let mut checked = 0;
    for (typesize, prec) in [(4, 10i8), (4, 3), (8, 20), (8, -40)] {
        for size in [65549usize, 65548, 3 * 65536 + 7, 131072] {
            // Small non-negative integers: denormal floats, all truncated to zero.
            let mut rng = Rng::new(size as u64);
            let mut data = vec![0u8; size];
            for c in data.chunks_mut(typesize) {
                let b = rng.below(100).to_le_bytes();
                c.copy_from_slice(&b[..c.len()]);
            }
            for (codec, clevel) in [(4u8, 1u8), (5, 1), (0, 5), (1, 9)] {
                let c = Case {
                    codec,
                    clevel,
                    pipe: 0,
                    typesize: typesize as i32,
                    size,
                    kind: "small_int",
                    nthreads: 1,
                    splitmode: 4, // BLOSC_FORWARD_COMPAT_SPLIT
                    blocksize: 0,
                    use_dict: false,
                };
                let mut cp = c.ours();
                cp.filters = [0, 0, 0, 0, 0, 4];
                cp.filters_meta = [0, 0, 0, 0, 0, prec as u8];
                let mut tp = c.theirs();
                tp.filters = cp.filters;
                tp.filters_meta = cp.filters_meta;
                let theirs = ref_compress(tp, &data);
                let ours = our_compress(cp, &data);
                assert_eq!(theirs.len(), 32, "{c:?} prec {prec}");
                assert_eq!(theirs[31], 0x10, "{c:?} prec {prec}");
                assert_eq!(ours, theirs, "{c:?} prec {prec}");
                assert_eq!(our_decompress(&ours, size, 1).unwrap(), vec![0u8; size]);
                checked += 1;
            }
        }
    }
    println!("trunc_prec to zeros: {checked} chunks, ZERO special chunks identical to c-blosc2's");
}
