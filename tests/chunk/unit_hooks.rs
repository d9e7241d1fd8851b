//! The chunk engine's hooks: user codecs and filters, prefilter, postfilter and a custom
//! parallel runner, as the C layer plugs them in.
use crate::common;

use b2frame::chunk::{
    CParams, Compressor, DParams, Decompressor, Hooks, PostfilterArgs, PrefilterArgs,
};
use b2frame::pool::Runner;
use b2frame::{Error, Result};
use common::data_kind;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A toy user codec (id 200): stores `len` as 4 bytes then the bytes XOR 0x55 with every 4th
/// byte dropped (so it "compresses") — and a user filter (id 170) that adds 1 to each byte.
#[derive(Default)]
struct Toy {
    pre_calls: AtomicUsize,
    post_calls: AtomicUsize,
}

/// A threads callback that runs each worker on a thread of its own, counting them.
#[derive(Default)]
struct Spawning(AtomicUsize);

impl Runner for Spawning {
    fn run(&self, nworkers: usize, worker: &(dyn Fn(usize) + Sync)) {
        self.0.fetch_add(nworkers, Ordering::Relaxed);
        std::thread::scope(|s| {
            for tid in 0..nworkers {
                s.spawn(move || worker(tid));
            }
        });
    }
}

impl Hooks for Toy {
    fn codec_version(&self, compcode: u8) -> Option<u8> {
        (compcode == 200).then_some(3)
    }
    fn encode(
        &self,
        compcode: u8,
        meta: u8,
        src: &[u8],
        dst: &mut [u8],
        _chunk: &[u8],
    ) -> Option<Result<usize>> {
        if compcode != 200 {
            return None;
        }
        assert_eq!(meta, 7);
        // Run-length encode (value, count) pairs; give up (0) when it does not fit.
        let mut n = 0;
        let mut i = 0;
        while i < src.len() {
            let v = src[i];
            let mut k = 1;
            while i + k < src.len() && src[i + k] == v && k < 255 {
                k += 1;
            }
            if n + 2 > dst.len() {
                return Some(Ok(0));
            }
            dst[n] = v;
            dst[n + 1] = k as u8;
            n += 2;
            i += k;
        }
        Some(Ok(n))
    }
    fn decode(
        &self,
        compcode: u8,
        _meta: u8,
        src: &[u8],
        dst: &mut [u8],
        _chunk: &[u8],
    ) -> Option<Result<usize>> {
        if compcode != 200 {
            return None;
        }
        let mut o = 0;
        for p in src.chunks(2) {
            if p.len() < 2 || o + p[1] as usize > dst.len() {
                return Some(Err(Error::Data));
            }
            dst[o..o + p[1] as usize].fill(p[0]);
            o += p[1] as usize;
        }
        Some(Ok(o))
    }
    fn filter_forward(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Option<Result<()>> {
        (id == 170).then(|| {
            dst.iter_mut()
                .zip(src)
                .for_each(|(d, s)| *d = s.wrapping_add(meta));
            Ok(())
        })
    }
    fn filter_backward(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Option<Result<()>> {
        (id == 170).then(|| {
            dst.iter_mut()
                .zip(src)
                .for_each(|(d, s)| *d = s.wrapping_sub(meta));
            Ok(())
        })
    }
    fn has_prefilter(&self) -> bool {
        true
    }
    fn prefilter(&self, a: &mut PrefilterArgs<'_>) -> Result<()> {
        self.pre_calls.fetch_add(1, Ordering::Relaxed);
        assert_eq!(a.output_offset as usize % 4096, 0);
        assert_eq!(a.nblock as usize, a.output_offset as usize / 4096);
        // output = input / 2 (integer items of 1 byte)
        a.output
            .iter_mut()
            .zip(a.input)
            .for_each(|(o, i)| *o = i / 2);
        Ok(())
    }
    fn has_postfilter(&self) -> bool {
        true
    }
    fn postfilter(&self, a: &mut PostfilterArgs<'_>) -> Result<()> {
        self.post_calls.fetch_add(1, Ordering::Relaxed);
        assert_eq!(a.offset, a.nblock * 4096);
        a.output
            .iter_mut()
            .zip(a.input)
            .for_each(|(o, i)| *o = i.wrapping_mul(2));
        Ok(())
    }
}

fn params(nthreads: i16) -> CParams {
    CParams {
        compcode: 200,
        compcode_meta: 7,
        clevel: 5,
        typesize: 1,
        nthreads,
        blocksize: 4096,
        filters: [0, 0, 0, 0, 170, 1],
        filters_meta: [0, 0, 0, 0, 3, 0],
        ..Default::default()
    }
}

#[test]
fn user_codec_filter_and_pre_postfilters_round_trip() {
    let data: Vec<u8> = (0..40_000u32).map(|i| ((i / 64) % 100) as u8 * 2).collect();
    for (nthreads, runner) in [(1i16, false), (2, false), (2, true)] {
        let hooks = Arc::new(Toy::default());
        let spawning = Arc::new(Spawning::default());
        let mut c = Compressor::new(params(nthreads), hooks.clone()).unwrap();
        if runner {
            c.set_runner(spawning.clone());
        }
        let mut chunk = vec![0u8; data.len() + 32];
        let n = c.compress(&data, &mut chunk).unwrap();
        chunk.truncate(n);
        assert!(n < data.len() / 4, "user codec compresses: {n}");
        assert_eq!(chunk[1], 3, "versionlz from the codec registry");
        assert_eq!(chunk[2] >> 5, 6, "user codec format");
        assert_eq!(chunk[22], 200);
        assert_eq!(chunk[23], 7);
        assert_eq!(hooks.pre_calls.load(Ordering::Relaxed), 10);
        let mut d = Decompressor::new(DParams { nthreads }, hooks.clone()).unwrap();
        if runner {
            d.set_runner(spawning.clone());
        }
        let mut out = vec![0u8; data.len()];
        assert_eq!(d.decompress(&chunk, &mut out).unwrap(), data.len());
        // prefilter halves, postfilter doubles: the even input comes back.
        assert!(out == data, "nthreads {nthreads} runner {runner}");
        assert_eq!(hooks.post_calls.load(Ordering::Relaxed), 10);
        // One compression and one decompression, two workers each.
        assert_eq!(
            spawning.0.load(Ordering::Relaxed),
            if runner { 4 } else { 0 }
        );
        assert_eq!(
            c.pool_started() || d.pool_started(),
            nthreads > 1 && !runner
        );
        // getitem goes through the same hooks.
        let mut part = vec![0u8; 100];
        assert_eq!(d.getitem(&chunk, 4090, 100, &mut part).unwrap(), 100);
        assert_eq!(part, data[4090..4190]);
    }
}

#[test]
fn unknown_user_codec_and_filter_fail_cleanly() {
    struct Nothing;
    impl Hooks for Nothing {}
    let data = data_kind("text", 10_000, 1);
    let mut c = Compressor::new(params(1), Arc::new(Nothing)).unwrap();
    let mut dst = vec![0u8; 20_000];
    assert_eq!(c.compress(&data, &mut dst), Err(Error::CodecSupport));
    let mut p = CParams {
        filters: [0, 0, 0, 0, 0, 170],
        ..Default::default()
    };
    let mut c = Compressor::new(p, Arc::new(Nothing)).unwrap();
    assert_eq!(c.compress(&data, &mut dst), Err(Error::FilterPipeline));
    // A chunk written with the user filter cannot be read without it.
    let toy = Arc::new(Toy::default());
    p.filters_meta = [0, 0, 0, 0, 0, 1];
    struct OnlyFilter(Arc<Toy>);
    impl Hooks for OnlyFilter {
        fn filter_forward(&self, id: u8, m: u8, s: &[u8], d: &mut [u8]) -> Option<Result<()>> {
            self.0.filter_forward(id, m, s, d)
        }
    }
    let mut c = Compressor::new(p, Arc::new(OnlyFilter(toy))).unwrap();
    let n = c.compress(&data, &mut dst).unwrap();
    let mut d = Decompressor::new(DParams::default(), Arc::new(Nothing)).unwrap();
    let mut out = vec![0u8; data.len()];
    assert_eq!(
        d.decompress(&dst[..n], &mut out),
        Err(Error::FilterPipeline)
    );
}
