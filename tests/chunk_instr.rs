//! Instrumented-codec chunks (`cparams.instr_codec`): structure checked exactly against
//! c-blosc2 3.3.5 (header fields, sizes, cratio values, run flags), both directions of
//! decoding. Speeds depend on timing, so only their presence (> 0) is checked.

mod common;

use b2frame::capi::chunk::{blosc2_compress_ctx, blosc2_create_cctx, blosc2_free_ctx};
use b2frame::capi::types::{blosc2_cparams, BLOSC2_CPARAMS_DEFAULTS};
use b2frame::chunk::instr::{Record, RECORD_LEN};
use b2frame::chunk::{decompress_vec, header::ChunkHeader};
use common::reference::{ref_decompress, reference};
use std::ffi::c_void;

/// Compresses through our C layer (where `instr_codec` is honoured).
fn ours(cp: blosc2_cparams, src: &[u8]) -> Vec<u8> {
    let mut dst = vec![0u8; src.len() + 32];
    let ctx = blosc2_create_cctx(cp);
    assert!(!ctx.is_null());
    // SAFETY: buffers sized as declared; the context is freed right after.
    let n = unsafe {
        let n = blosc2_compress_ctx(
            ctx,
            src.as_ptr() as *const c_void,
            src.len() as i32,
            dst.as_mut_ptr() as *mut c_void,
            dst.len() as i32,
        );
        blosc2_free_ctx(ctx);
        n
    };
    assert!(n > 0, "compress failed: {n}");
    dst.truncate(n as usize);
    dst
}

/// Compresses with the reference. Its instrumented writer lets a codec write a whole stream
/// past the records it keeps, so it gets generous room.
fn ref_compress(cp: blosc2_cparams, src: &[u8]) -> Vec<u8> {
    let r = reference();
    let mut dst = vec![0u8; 2 * src.len() + 4096];
    // SAFETY: buffers sized as declared; the context is freed right after.
    let n = unsafe {
        let ctx = (r.create_cctx)(cp);
        assert!(!ctx.is_null());
        let n = (r.compress_ctx)(
            ctx,
            src.as_ptr() as *const c_void,
            src.len() as i32,
            dst.as_mut_ptr() as *mut c_void,
            dst.len() as i32,
        );
        (r.free_ctx)(ctx);
        n
    };
    assert!(n > 0, "reference compress failed: {n}");
    dst.truncate(n as usize);
    dst
}

fn records(b: &[u8]) -> Vec<Record> {
    assert_eq!(b.len() % RECORD_LEN, 0);
    b.chunks(RECORD_LEN)
        .map(|c| Record::from_bytes(c).unwrap())
        .collect()
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

fn cases() -> Vec<blosc2_cparams> {
    let mut v = Vec::new();
    for (compcode, splitmode, typesize, blocksize, filters) in [
        (0u8, 2, 4, 40000, [0, 0, 0, 0, 0, 1]),
        (0, 1, 4, 8000, [0, 0, 0, 0, 0, 1]),
        (1, 1, 8, 0, [0, 0, 0, 0, 0, 2]),
        (5, 4, 4, 10000, [0, 0, 0, 0, 3, 1]),
        (4, 2, 2, 0, [0; 6]),
    ] {
        let mut cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.compcode = compcode;
        cp.splitmode = splitmode;
        cp.typesize = typesize;
        cp.blocksize = blocksize;
        cp.filters = filters;
        cp.instr_codec = true;
        v.push(cp);
    }
    v
}

#[test]
fn structure_matches_the_reference() {
    for len in [100_000usize, 65_536 + 12, 1000] {
        let src = data(len);
        for cp in cases() {
            let a = ours(cp, &src);
            let b = ref_compress(cp, &src);
            let ha = ChunkHeader::parse(&a).unwrap();
            let hb = ChunkHeader::parse(&b).unwrap();
            // Everything but timing is determined: header, sizes, bstarts, csizes, cratios.
            assert_eq!(a.len(), b.len(), "cbytes, cp {:?} len {len}", cp.compcode);
            assert_eq!(ha, hb, "header, len {len}");
            assert!(hb.is_instr());
            let ra = records(&decompress_vec(&a).unwrap());
            let rb = records(&ref_decompress(&b, hb.nbytes as usize, 1).unwrap());
            assert_eq!(ra.len(), rb.len());
            assert_eq!(ra.len() * RECORD_LEN, ha.nbytes as usize);
            for (x, y) in ra.iter().zip(&rb) {
                assert_eq!(x.cratio, y.cratio, "len {len} compcode {}", cp.compcode);
                assert_eq!(x.flags, y.flags);
                assert!(x.cspeed > 0.0 && x.filter_speed > 0.0);
            }
        }
    }
}

#[test]
fn each_library_decodes_the_others_chunks() {
    let src = data(100_000);
    for cp in cases() {
        let a = ours(cp, &src);
        let b = ref_compress(cp, &src);
        let h = ChunkHeader::parse(&a).unwrap();
        // The reference reads our records back byte for byte, and we read its records.
        assert_eq!(
            ref_decompress(&a, h.nbytes as usize, 1).unwrap(),
            decompress_vec(&a).unwrap()
        );
        assert_eq!(
            ref_decompress(&b, h.nbytes as usize, 1).unwrap(),
            decompress_vec(&b).unwrap()
        );
        // Streams are stored as 16-byte raw records: 4 + 16 bytes each after the bstarts.
        let nblocks = h.nblocks() as usize;
        assert_eq!(a.len(), 32 + 4 * nblocks + h.nbytes as usize / 16 * 20);
    }
}

#[test]
fn float_ramp_one_record_per_block() {
    // The C conformance test's case: 10 unsplit blocks of 40000 bytes.
    let src: Vec<u8> = (0..100_000)
        .flat_map(|i| (i as f32).to_le_bytes())
        .collect();
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.splitmode = 2;
    cp.blocksize = 40_000;
    cp.instr_codec = true;
    let a = ours(cp, &src);
    let h = ChunkHeader::parse(&a).unwrap();
    assert_eq!((h.nbytes, h.blocksize, h.cbytes), (160, 16, 32 + 40 + 200));
    let r = records(&decompress_vec(&a).unwrap());
    assert_eq!(r.len(), 10);
    assert!(r.iter().all(|x| x.cratio > 1.0 && x.flags == [0; 4]));
    // Without the flag the same input compresses to data again.
    cp.instr_codec = false;
    assert_eq!(decompress_vec(&ours(cp, &src)).unwrap(), src);
}
