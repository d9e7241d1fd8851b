//! Throughput of the chunk engine next to c-blosc2 (run on demand, prints only):
//! `cargo test --release --test chunk_perf -- --ignored --nocapture`
mod common;

use b2frame::capi::types::{BLOSC2_CPARAMS_DEFAULTS, BLOSC2_DPARAMS_DEFAULTS};
use b2frame::chunk::{no_hooks, CParams, Compressor, DParams, Decompressor};
use common::data_kind;
use common::reference::reference;
use std::ffi::c_void;
use std::time::Instant;

fn mbps(bytes: usize, reps: usize, secs: f64) -> f64 {
    (bytes * reps) as f64 / secs / 1e6
}

#[test]
#[ignore]
fn throughput_vs_reference() {
    let r = reference();
    for &(size, reps) in &[(4usize << 20, 30usize), (16 << 10, 3000)] {
        let data = data_kind("f64_series", size, 1);
        for &(codec, clevel) in &[(0u8, 5u8), (1, 5), (5, 1)] {
            for &nt in &[1i16, 2] {
                let cp = CParams {
                    compcode: codec,
                    clevel,
                    nthreads: nt,
                    ..Default::default()
                };
                let mut c = Compressor::new(cp, no_hooks()).unwrap();
                let mut d = Decompressor::new(DParams { nthreads: nt }, no_hooks()).unwrap();
                let mut chunk = vec![0u8; size + 32];
                let mut out = vec![0u8; size];
                let mut n = 0;
                let t = Instant::now();
                for _ in 0..reps {
                    n = c.compress(&data, &mut chunk).unwrap();
                }
                let ours_c = t.elapsed().as_secs_f64();
                let t = Instant::now();
                for _ in 0..reps {
                    d.decompress(&chunk[..n], &mut out).unwrap();
                }
                let ours_d = t.elapsed().as_secs_f64();
                let mut cpr = BLOSC2_CPARAMS_DEFAULTS;
                cpr.compcode = codec;
                cpr.clevel = clevel;
                cpr.nthreads = nt;
                let mut dpr = BLOSC2_DPARAMS_DEFAULTS;
                dpr.nthreads = nt;
                let (ref_c, ref_d, rn);
                // SAFETY: reference calls with buffers sized as declared; contexts freed.
                unsafe {
                    let cc = (r.create_cctx)(cpr);
                    let dc = (r.create_dctx)(dpr);
                    let mut k = 0;
                    let t = Instant::now();
                    for _ in 0..reps {
                        k = (r.compress_ctx)(
                            cc,
                            data.as_ptr() as *const c_void,
                            size as i32,
                            chunk.as_mut_ptr() as *mut c_void,
                            chunk.len() as i32,
                        );
                    }
                    ref_c = t.elapsed().as_secs_f64();
                    rn = k;
                    let t = Instant::now();
                    for _ in 0..reps {
                        let got = (r.decompress_ctx)(
                            dc,
                            chunk.as_ptr() as *const c_void,
                            k,
                            out.as_mut_ptr() as *mut c_void,
                            size as i32,
                        );
                        assert_eq!(got, size as i32, "reference decompress");
                    }
                    ref_d = t.elapsed().as_secs_f64();
                    (r.free_ctx)(cc);
                    (r.free_ctx)(dc);
                }
                println!(
                    "size {size:>8} codec {codec} clevel {clevel} nthreads {nt}: compress ours {:7.0} MB/s ref {:7.0} MB/s | decompress ours {:7.0} MB/s ref {:7.0} MB/s | cbytes ours {n} ref {rn}",
                    mbps(size, reps, ours_c),
                    mbps(size, reps, ref_c),
                    mbps(size, reps, ours_d),
                    mbps(size, reps, ref_d),
                );
            }
        }
    }
}
