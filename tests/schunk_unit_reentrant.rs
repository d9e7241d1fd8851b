//! Callbacks that run while a chunk is compressed (a user codec registered with
//! `blosc2_register_codec`, a prefilter) read the super-chunk they compress for, as c-blosc2
//! allows and its test_urcodecs does: `blosc2_vlmeta_get`, the metalayers in the C struct (what
//! the inline `blosc2_meta_get` reads), `blosc2_schunk_decompress_chunk` of an earlier chunk
//! (which runs the codec's decoder, which reads the vlmetalayer again) and
//! `blosc2_schunk_get_cparams`, during `append_buffer` and `set_slice_buffer`, with 1 and 2
//! threads (callbacks then also run on pool workers). Every value they read is checked, and
//! the prefilter sees the number of the chunk being written. A mutation from such a callback
//! fails with `BLOSC2_ERROR_FAILURE` instead of deadlocking, and the outer call still works.

use b2frame::capi::globals::blosc2_init;
use b2frame::capi::meta::*;
use b2frame::capi::registry::blosc2_register_codec;
use b2frame::capi::schunk::*;
use b2frame::capi::types::*;
use std::ffi::{c_int, c_void, CStr, CString};
use std::sync::atomic::{AtomicI64, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};

mod common;

const ITEMS: usize = 16 * 1024;
const CHUNK_BYTES: usize = ITEMS * 4;
const BLOCK_BYTES: i32 = 4096;
const NCHUNKS: usize = 4;
const CODEC: u8 = 250;
const CODEC_META: u8 = 111;

extern "C" {
    #[link_name = "free"]
    fn libc_free(p: *mut c_void);
}

/// What the callbacks check and record (one super-chunk at a time: the test runs the cases
/// one after the other).
struct Probe {
    sc: AtomicPtr<blosc2_schunk>,
    /// The chunk being written (what the prefilter's `nchunk` must be).
    expect_nchunk: AtomicI64,
    encoder_calls: AtomicUsize,
    decoder_calls: AtomicUsize,
    prefilter_calls: AtomicUsize,
    /// Result of a `vlmeta_update` from the prefilter (`i64::MIN`: not tried).
    mutation_rc: AtomicI64,
    /// The thread making the outer calls (a mutation from a worker thread would wait for the
    /// outer mutation forever, so only this one tries).
    main: Mutex<Option<std::thread::ThreadId>>,
    errors: Mutex<Vec<String>>,
}

static PROBE: Probe = Probe {
    sc: AtomicPtr::new(std::ptr::null_mut()),
    expect_nchunk: AtomicI64::new(0),
    encoder_calls: AtomicUsize::new(0),
    decoder_calls: AtomicUsize::new(0),
    prefilter_calls: AtomicUsize::new(0),
    mutation_rc: AtomicI64::new(i64::MIN),
    main: Mutex::new(None),
    errors: Mutex::new(Vec::new()),
};

fn fail(msg: String) {
    PROBE.errors.lock().unwrap().push(msg);
}

/// Item `j` of chunk `i` (version `v`): an arange, which the codec below stores as 8 bytes.
fn chunk_data(i: usize, v: i32) -> Vec<u8> {
    (0..ITEMS)
        .flat_map(|j| ((i * ITEMS + j) as i32 + v * 1_000_000).to_le_bytes())
        .collect()
}

/// `blosc2_vlmeta_get(sc, "codec_arange")` must give `[222]`.
///
/// # Safety
/// `sc` live.
unsafe fn check_vlmeta(sc: *mut blosc2_schunk, who: &str) {
    let name = c"codec_arange";
    let (mut content, mut len) = (std::ptr::null_mut(), 0i32);
    // SAFETY: live schunk, valid name and out-pointers.
    let rc = unsafe { blosc2_vlmeta_get(sc, name.as_ptr(), &mut content, &mut len) };
    if rc < 0 || content.is_null() {
        fail(format!("{who}: vlmeta_get -> {rc}"));
        return;
    }
    // SAFETY: `content` holds `len` malloc'ed bytes, ours to free.
    unsafe {
        let got = std::slice::from_raw_parts(content, len as usize).to_vec();
        libc_free(content as *mut c_void);
        if got != [222] {
            fail(format!("{who}: vlmeta content {got:?}"));
        }
    }
}

/// Metalayer "m" read from the C struct, as the inline `blosc2_meta_get` does: `b"meta!"`.
///
/// # Safety
/// `sc` live.
unsafe fn check_meta(sc: *mut blosc2_schunk, who: &str) {
    // SAFETY: the mirrors are written only under the exclusive lock, which no one holds while
    // a chunk is compressed.
    unsafe {
        let n = (*sc).nmetalayers as usize;
        let found = (0..n)
            .map(|i| &*(*sc).metalayers[i])
            .find(|m| CStr::from_ptr(m.name).to_bytes() == b"m");
        match found {
            Some(m) => {
                let c = std::slice::from_raw_parts(m.content, m.content_len as usize);
                if c != b"meta!" {
                    fail(format!("{who}: metalayer content {c:?}"));
                }
            }
            None => fail(format!("{who}: metalayer m missing ({n} metalayers)")),
        }
    }
}

/// Stores an arange block as (start, step).
unsafe extern "C" fn arange_encoder(
    input: *const u8,
    input_len: i32,
    output: *mut u8,
    output_len: i32,
    meta: u8,
    cparams: *mut blosc2_cparams,
    _chunk: *const c_void,
) -> c_int {
    PROBE.encoder_calls.fetch_add(1, Ordering::Relaxed);
    // SAFETY: the library passes valid buffers of the stated lengths and a live cparams.
    unsafe {
        let sc = (*cparams).schunk as *mut blosc2_schunk;
        if sc.is_null() || meta != CODEC_META || output_len < 8 || input_len < 8 {
            fail(format!(
                "encoder: schunk {sc:?} meta {meta} out {output_len}"
            ));
            return BLOSC2_ERROR_FAILURE;
        }
        check_vlmeta(sc, "encoder");
        check_meta(sc, "encoder");
        let items = std::slice::from_raw_parts(input, input_len as usize)
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
            .collect::<Vec<_>>();
        let step = items[1].wrapping_sub(items[0]);
        if items.windows(2).any(|w| w[1].wrapping_sub(w[0]) != step) {
            fail("encoder: not an arange".into());
            return BLOSC2_ERROR_FAILURE;
        }
        let out = std::slice::from_raw_parts_mut(output, 8);
        out[..4].copy_from_slice(&items[0].to_le_bytes());
        out[4..].copy_from_slice(&step.to_le_bytes());
    }
    8
}

unsafe extern "C" fn arange_decoder(
    input: *const u8,
    input_len: i32,
    output: *mut u8,
    output_len: i32,
    meta: u8,
    dparams: *mut blosc2_dparams,
    _chunk: *const c_void,
) -> c_int {
    PROBE.decoder_calls.fetch_add(1, Ordering::Relaxed);
    // SAFETY: as for the encoder.
    unsafe {
        let sc = (*dparams).schunk as *mut blosc2_schunk;
        if sc.is_null() || meta != CODEC_META || input_len < 8 {
            fail(format!("decoder: schunk {sc:?} meta {meta} in {input_len}"));
            return BLOSC2_ERROR_FAILURE;
        }
        check_vlmeta(sc, "decoder");
        let inp = std::slice::from_raw_parts(input, 8);
        let start = i32::from_le_bytes(inp[..4].try_into().unwrap());
        let step = i32::from_le_bytes(inp[4..].try_into().unwrap());
        let out = std::slice::from_raw_parts_mut(output, output_len as usize);
        for (j, o) in out.chunks_exact_mut(4).enumerate() {
            o.copy_from_slice(
                &start
                    .wrapping_add(step.wrapping_mul(j as i32))
                    .to_le_bytes(),
            );
        }
    }
    output_len
}

/// Copies its block after reading the super-chunk: vlmeta, metalayer, cparams and the chunk
/// before the one being written (decoded through the codec above).
unsafe extern "C" fn reading_prefilter(p: *mut blosc2_prefilter_params) -> c_int {
    PROBE.prefilter_calls.fetch_add(1, Ordering::Relaxed);
    // SAFETY: the library passes a valid parameter block with `output_size` bytes of room.
    unsafe {
        let p = &mut *p;
        let sc = PROBE.sc.load(Ordering::Acquire);
        let want = PROBE.expect_nchunk.load(Ordering::Acquire);
        if p.nchunk != want {
            fail(format!("prefilter: nchunk {} instead of {want}", p.nchunk));
        }
        check_vlmeta(sc, "prefilter");
        check_meta(sc, "prefilter");
        let mut cp = std::ptr::null_mut();
        let rc = blosc2_schunk_get_cparams(sc, &mut cp);
        if rc != 0 || (*cp).typesize != 4 || (*cp).compcode != CODEC {
            fail(format!("prefilter: get_cparams -> {rc}"));
        }
        if rc == 0 {
            libc_free(cp as *mut c_void);
        }
        let other = if want > 0 { want - 1 } else { 1 };
        if other < (*sc).nchunks {
            let mut tmp = vec![0u8; CHUNK_BYTES];
            let rc = blosc2_schunk_decompress_chunk(
                sc,
                other,
                tmp.as_mut_ptr() as *mut c_void,
                CHUNK_BYTES as i32,
            );
            if rc != CHUNK_BYTES as c_int {
                fail(format!("prefilter: decompress_chunk({other}) -> {rc}"));
            } else if tmp[..4] != ((other as usize * ITEMS) as i32).to_le_bytes()
                && tmp[..4] != ((other as usize * ITEMS) as i32 + 1_000_000).to_le_bytes()
            {
                fail(format!(
                    "prefilter: chunk {other} starts with {:?}",
                    &tmp[..4]
                ));
            }
        }
        let on_main = *PROBE.main.lock().unwrap() == Some(std::thread::current().id());
        if on_main && PROBE.mutation_rc.load(Ordering::Acquire) == i64::MIN {
            let name = c"codec_arange";
            let mut v = [7u8];
            let rc =
                blosc2_vlmeta_update(sc, name.as_ptr(), v.as_mut_ptr(), 1, std::ptr::null_mut());
            PROBE.mutation_rc.store(i64::from(rc), Ordering::Release);
        }
        std::ptr::copy_nonoverlapping(p.input, p.output, p.output_size as usize);
    }
    0
}

fn register_codec() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        blosc2_init();
        let name = CString::new("arange_probe").unwrap();
        let mut codec = blosc2_codec {
            compcode: CODEC,
            compname: name.into_raw(),
            complib: CODEC,
            version: 1,
            encoder: Some(arange_encoder),
            decoder: Some(arange_decoder),
        };
        // SAFETY: a valid codec description (its name is leaked on purpose: the registry
        // keeps it).
        assert_eq!(unsafe { blosc2_register_codec(&mut codec) }, 0);
    });
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Plain,
    Memory,
    File,
}

fn run_case(kind: Kind, nthreads: i16) {
    register_codec();
    PROBE.errors.lock().unwrap().clear();
    PROBE.encoder_calls.store(0, Ordering::Relaxed);
    PROBE.prefilter_calls.store(0, Ordering::Relaxed);
    PROBE.decoder_calls.store(0, Ordering::Relaxed);
    PROBE.mutation_rc.store(i64::MIN, Ordering::Release);
    *PROBE.main.lock().unwrap() = Some(std::thread::current().id());
    // Removed when the case passes (see `common::scratch`).
    let dir = common::scratch::dir(&format!("b2frame-reentrant-{kind:?}-{nthreads}-"));
    let path = dir.join("f.b2frame");
    let url = CString::new(path.to_str().unwrap()).unwrap();
    let mut pp = blosc2_prefilter_params::default();
    let mut cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.compcode = CODEC;
    cp.compcode_meta = CODEC_META;
    cp.filters = [0; 6];
    cp.blocksize = BLOCK_BYTES;
    cp.nthreads = nthreads;
    cp.prefilter = Some(reading_prefilter);
    cp.preparams = &mut pp;
    let mut dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.nthreads = nthreads;
    let mut st = common::storage(
        !matches!(kind, Kind::Plain),
        matches!(kind, Kind::File).then_some(url.as_c_str()),
        &mut cp,
        &mut dp,
    );
    // SAFETY: a valid storage description whose pointers outlive the call.
    let sc = unsafe { blosc2_schunk_new(&mut st) };
    assert!(!sc.is_null());
    let (m, vl) = (c"m", c"codec_arange");
    let (mut mc, mut vc) = (*b"meta!", [222u8]);
    // SAFETY: live schunk; valid names and contents.
    unsafe {
        assert!(blosc2_meta_add(sc, m.as_ptr(), mc.as_mut_ptr(), 5) >= 0);
        assert!(blosc2_vlmeta_add(sc, vl.as_ptr(), vc.as_mut_ptr(), 1, std::ptr::null_mut()) >= 0);
    }
    PROBE.sc.store(sc, Ordering::Release);
    for i in 0..NCHUNKS {
        PROBE.expect_nchunk.store(i as i64, Ordering::Release);
        let d = chunk_data(i, 0);
        // SAFETY: live schunk; `d` holds CHUNK_BYTES bytes.
        let n = unsafe {
            blosc2_schunk_append_buffer(sc, d.as_ptr() as *const c_void, CHUNK_BYTES as i32)
        };
        assert_eq!(n, i as i64 + 1, "{kind:?} nthreads {nthreads}: append {i}");
    }
    // Items of chunk 2 only: the prefilter must see nchunk 2.
    PROBE.expect_nchunk.store(2, Ordering::Release);
    let new: Vec<u8> = chunk_data(2, 1);
    let (start, stop) = ((2 * ITEMS) as i64, (3 * ITEMS) as i64);
    // SAFETY: live schunk; `new` holds (stop - start) * 4 bytes.
    let rc =
        unsafe { blosc2_schunk_set_slice_buffer(sc, start, stop, new.as_ptr() as *mut c_void) };
    assert_eq!(rc, 0, "{kind:?} nthreads {nthreads}: set_slice_buffer");
    let errors = PROBE.errors.lock().unwrap().clone();
    assert!(
        errors.is_empty(),
        "{kind:?} nthreads {nthreads}: {errors:?}"
    );
    assert!(PROBE.prefilter_calls.load(Ordering::Relaxed) >= (NCHUNKS + 1) * 16);
    assert!(PROBE.encoder_calls.load(Ordering::Relaxed) >= (NCHUNKS + 1) * 16);
    assert!(PROBE.decoder_calls.load(Ordering::Relaxed) > 0);
    // The vlmetalayer update from inside the prefilter failed cleanly; the value is intact.
    let mrc = PROBE.mutation_rc.load(Ordering::Acquire);
    if nthreads == 1 {
        assert_eq!(mrc, i64::from(BLOSC2_ERROR_FAILURE), "{kind:?}");
    } else {
        // Blocks may all have gone to the workers, where the prefilter does not try.
        assert!(
            mrc == i64::MIN || mrc == i64::from(BLOSC2_ERROR_FAILURE),
            "{mrc}"
        );
    }
    PROBE.sc.store(std::ptr::null_mut(), Ordering::Release);
    // SAFETY: live schunk (no callback reads it any more: decoding runs only the decoder).
    unsafe {
        check_vlmeta(sc, "after");
        assert_eq!((*sc).nchunks, NCHUNKS as i64);
        for i in 0..NCHUNKS {
            let mut out = vec![0u8; CHUNK_BYTES];
            let rc = blosc2_schunk_decompress_chunk(
                sc,
                i as i64,
                out.as_mut_ptr() as *mut c_void,
                CHUNK_BYTES as i32,
            );
            assert_eq!(rc, CHUNK_BYTES as c_int);
            let want = chunk_data(i, i32::from(i == 2));
            assert!(out == want, "{kind:?} nthreads {nthreads}: chunk {i}");
            let (mut c, mut nf) = (std::ptr::null_mut(), false);
            let cb = blosc2_schunk_get_chunk(sc, i as i64, &mut c, &mut nf);
            // 32-byte header, 16 block starts, 16 streams of 8 bytes (+ 4-byte csizes).
            assert!(
                cb > 0 && cb < 400,
                "chunk {i} is {cb} bytes: the codec was not used"
            );
            if nf {
                libc_free(c as *mut c_void);
            }
        }
        let errors = PROBE.errors.lock().unwrap().clone();
        assert!(errors.is_empty(), "{errors:?}");
        blosc2_schunk_free(sc);
    }
}

#[test]
fn codec_and_prefilter_read_the_schunk_they_compress_for() {
    for nthreads in [1, 2] {
        for kind in [Kind::Plain, Kind::Memory, Kind::File] {
            run_case(kind, nthreads);
        }
    }
}
