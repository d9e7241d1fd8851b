//! Lazy chunks of a frame on storage: the fuzz input is a cframe written to a file (byte 0
//! onwards) and, optionally, bytes that forge the lazy chunks. For every chunk, `lazy_chunk`
//! (header and block starts read from the file, c-blosc2's trailer added) is decoded through
//! the frame (whole, by `getitem`, block by block, with a block mask), once as built and once
//! with bytes of the input written over it (the trailer's nchunk, offset and csizes, the block
//! starts: a holder's changes). Nothing may crash or read outside the stored chunk; where the
//! lazy decode and the ordinary decode of the stored chunk both succeed, they give the same
//! bytes.
//!
//! Input: `u16 LE frame length | frame | forging bytes`.
use b2frame::chunk::header::ChunkHeader;
use b2frame::chunk::{no_hooks, DParams, Decompressor};
use b2frame::frame::Frame;

/// The largest chunk this check decodes (as in `frame_open`).
pub const MAX_CHUNK_NBYTES: i32 = 16 << 20;

/// A scratch file per process (the fuzzer runs inputs one after another).
fn scratch_file() -> std::path::PathBuf {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let t = std::thread::current().id();
    dir.join(format!(
        "b2f-fuzz-lazy-{}-{t:?}.b2frame",
        std::process::id()
    ))
}

/// Runs one input; panics on a violated property. Returns how many lazy decodes succeeded.
pub fn run(data: &[u8]) -> usize {
    run_with(data, false)
}

/// [`run`] for intact frames (the seeds): every lazy decode of a chunk whose stored bytes
/// decode must succeed too.
pub fn run_strict(data: &[u8]) -> usize {
    run_with(data, true)
}

fn run_with(data: &[u8], strict: bool) -> usize {
    if data.len() < 2 {
        return 0;
    }
    let n = (u16::from_le_bytes([data[0], data[1]]) as usize).min(data.len() - 2);
    let (frame, forge) = data[2..].split_at(n);
    let path = scratch_file();
    if std::fs::write(&path, frame).is_err() {
        return 0;
    }
    let ok = check(&path, forge, strict);
    let _ = std::fs::remove_file(&path);
    ok
}

fn check(path: &std::path::Path, forge: &[u8], strict: bool) -> usize {
    let Ok(f) = Frame::open(path) else {
        return 0;
    };
    let mut d = Decompressor::new(DParams { nthreads: 1 }, no_hooks()).expect("decompressor");
    let mut plain = Decompressor::new(DParams { nthreads: 1 }, no_hooks()).expect("decompressor");
    let mut ok = 0;
    for i in 0..f.nchunks().min(64) {
        let Ok(Some(lazy)) = f.lazy_chunk(i) else {
            continue;
        };
        let Ok(h) = ChunkHeader::read(&lazy, true) else {
            continue;
        };
        assert!(h.is_lazy(), "lazy_chunk hands out lazy chunks");
        if h.nbytes <= 0 || h.nbytes > MAX_CHUNK_NBYTES {
            continue;
        }
        let nbytes = h.nbytes as usize;
        // The stored chunk, decoded the ordinary way (None when that fails).
        let want = f.chunk(i).ok().and_then(|c| {
            let mut out = vec![0u8; nbytes];
            plain.decompress(&c, &mut out).ok().map(|_| out)
        });
        ok += decode_all_ways(&f, &mut d, &lazy, nbytes, want.as_deref(), strict);
        if !forge.is_empty() {
            let mut bad = lazy.clone();
            for (k, w) in forge.chunks(5).enumerate().take(8) {
                if w.len() < 5 {
                    break;
                }
                let at = u16::from_le_bytes([w[0], w[1]]) as usize % bad.len();
                let end = (at + 3).min(bad.len());
                bad[at..end].copy_from_slice(&w[2..2 + (end - at)]);
                let _ = k;
            }
            // A forged chunk may decode to anything, but never crash.
            decode_all_ways(&f, &mut d, &bad, nbytes, None, false);
        }
    }
    ok
}

/// Decodes `lazy` whole, by getitem, block by block and masked; checks against `want` where
/// given. Returns how many decodes succeeded.
fn decode_all_ways(
    f: &Frame,
    d: &mut Decompressor,
    lazy: &[u8],
    nbytes: usize,
    want: Option<&[u8]>,
    strict: bool,
) -> usize {
    let mut ok = 0;
    // In strict mode a failed decode of a chunk whose stored bytes decode is a violation.
    let must = |r: bool, what: &str| {
        assert!(r || !strict || want.is_none(), "lazy {what} failed");
    };
    let mut out = vec![0u8; nbytes];
    let same = |got: &[u8], at: usize| {
        if let Some(w) = want {
            assert!(got == &w[at..at + got.len()], "lazy decode differs at {at}");
        }
    };
    let r = d.with_source(f).decompress(lazy, &mut out);
    must(r.is_ok(), "decompress");
    if r.is_ok() {
        same(&out, 0);
        ok += 1;
    }
    let Ok(h) = ChunkHeader::read(lazy, true) else {
        return ok;
    };
    let ts = h.typesize as usize;
    if !h.is_vl() && ts > 0 {
        let items = nbytes / ts;
        for start in [0, items / 2, items.saturating_sub(3)] {
            let k = 3.min(items - start);
            let mut buf = vec![0u8; k * ts];
            let r = d
                .with_source(f)
                .getitem(lazy, start as i32, k as i32, &mut buf);
            must(r.is_ok(), "getitem");
            if let Ok(n) = r {
                same(&buf[..n], start * ts);
                ok += 1;
            }
        }
        let nblocks = h.nblocks().clamp(0, 256) as usize;
        let bs = h.blocksize.max(1) as usize;
        let mut block = vec![0u8; bs];
        for j in 0..nblocks {
            let r = d
                .with_source(f)
                .decompress_block(lazy, j as i32, &mut block);
            must(r.is_ok(), "decompress_block");
            if let Ok(n) = r {
                same(&block[..n], j * bs);
                ok += 1;
            }
        }
        if nblocks > 0 && nblocks == h.nblocks() as usize {
            let mask: Vec<bool> = (0..nblocks).map(|j| j % 2 == 1).collect();
            out.fill(0);
            d.set_maskout(&mask);
            let r = d.with_source(f).decompress(lazy, &mut out);
            must(r.is_ok(), "masked decompress");
            if r.is_ok() {
                for j in (0..nblocks).step_by(2) {
                    let a = j * bs;
                    let b = (a + bs).min(nbytes);
                    same(&out[a..b], a);
                }
                ok += 1;
            }
        }
    } else if h.is_vl() {
        for j in 0..h.blocksize.clamp(0, 64) {
            let r = d.with_source(f).vldecompress_block(lazy, j);
            must(r.is_ok(), "vldecompress_block");
            ok += r.is_ok() as usize;
        }
        must(d.with_source(f).vldecompress(lazy).is_ok(), "vldecompress");
    }
    ok
}
