//! Shuffle and bitshuffle: every SIMD level against the portable kernels, round trips, exact
//! bytes, the c-blosc2 reference (bytes and inverses), the C entry points' argument checks, and
//! the `B2FRAME_SIMD` override.

use crate::common;

use b2frame::filters::{self, Simd};
use common::{reference::reference, Rng};
use std::ffi::c_void;

/// Element counts that exercise every kind of leftover: partial SIMD steps (16/32 elements),
/// partial groups of 8, partial bit-transpose steps (128/256 bytes), several tiles.
fn element_counts(ts: usize, rng: &mut Rng) -> Vec<usize> {
    let mut v = vec![
        0, 1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47, 48, 63, 64, 65, 127, 128,
    ];
    v.extend([129, 136, 255, 256, 257, 264, 511, 520, 1000]);
    let cap = (1 << 16) / ts;
    v.push(cap / 2 + rng.below(64) as usize);
    // Larger than the 16 KiB staging threshold, with a partial stage tile.
    v.push((1 << 17) / ts - 1 - rng.below(40) as usize);
    if ts <= 8 {
        // Several bitshuffle tiles (16 KiB each).
        v.push(3 * 16384 / ts + 8 * rng.below(40) as usize + rng.below(8) as usize);
    }
    v.retain(|&n| n * ts <= 1 << 17);
    v
}

/// Tail bytes after the last whole element.
fn tails(ts: usize, rng: &mut Rng) -> Vec<usize> {
    let mut t = vec![0];
    if ts > 1 {
        t.push(ts - 1);
        t.push(1 + rng.below(ts as u64 - 1) as usize);
    }
    t.dedup();
    t
}

fn for_all_shapes(mut f: impl FnMut(usize, &[u8])) {
    let mut rng = Rng::new(0x5EED);
    for ts in 1..=256usize {
        let counts = element_counts(ts, &mut rng);
        // Keep the run short: every size for small typesizes, a sample for large ones.
        let counts: Vec<usize> = if ts <= 32 {
            counts
        } else {
            let last = *counts.last().unwrap();
            let mut c: Vec<usize> = counts.into_iter().filter(|_| rng.below(3) == 0).collect();
            c.push(last);
            c
        };
        for n in counts {
            for tail in tails(ts, &mut rng) {
                let mut data = vec![0u8; n * ts + tail];
                rng.fill(&mut data);
                f(ts, &data);
            }
        }
    }
}

type Op = fn(Simd, usize, &[u8], &mut [u8]);

fn apply(s: Simd, op: Op, ts: usize, src: &[u8]) -> Vec<u8> {
    let mut out = vec![0xA5u8; src.len()];
    op(s, ts, src, &mut out);
    out
}

const OPS: [(&str, Op); 5] = [
    ("shuffle", |s, t, a, b| s.shuffle(t, a, b)),
    ("unshuffle", |s, t, a, b| s.unshuffle(t, a, b)),
    ("bitshuffle", |s, t, a, b| s.bitshuffle(t, a, b)),
    ("bitunshuffle", |s, t, a, b| s.bitunshuffle(t, a, b)),
    ("bitunshuffle_legacy", |s, t, a, b| {
        s.bitunshuffle_legacy(t, a, b)
    }),
];

#[test]
fn every_simd_level_equals_the_portable_kernels() {
    let generic = Simd::get("generic").unwrap();
    let levels: Vec<Simd> = Simd::available()
        .into_iter()
        .filter(|s| s.name() != "generic")
        .collect();
    #[cfg(target_arch = "x86_64")]
    assert!(
        levels.iter().any(|s| s.name() == "sse2"),
        "SSE2 must be available on x86-64"
    );
    #[cfg(target_arch = "aarch64")]
    assert!(
        levels.iter().any(|s| s.name() == "neon"),
        "NEON must be available on aarch64"
    );
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
    {
        assert!(levels.iter().any(|s| s.name() == "avx512"));
    }
    let mut cases = 0;
    for_all_shapes(|ts, data| {
        for (name, op) in OPS {
            let want = apply(generic, op, ts, data);
            for &s in &levels {
                let got = apply(s, op, ts, data);
                assert!(
                    got == want,
                    "{name} {} ts {ts} len {}",
                    s.name(),
                    data.len()
                );
            }
        }
        cases += 1;
    });
    assert!(cases > 5000, "only {cases} shapes");
    // Named in the output (`--nocapture`), so a cross-run shows which kernels it exercised.
    let names: Vec<&str> = levels.iter().map(|s| s.name()).collect();
    println!("SIMD levels checked against the portable kernels: {names:?} ({cases} shapes)");
}

/// The AVX-512 kernels place their steps by the address of `dst` (the second step starts where
/// the stores become 64-byte aligned, the last one ends at the last element): every level on
/// sub-slices at every offset, for the element sizes those kernels take.
#[test]
fn every_level_at_every_buffer_offset() {
    let generic = Simd::get("generic").unwrap();
    let mut rng = Rng::new(99);
    let mut big = vec![0u8; 16 * 1100 + 128];
    rng.fill(&mut big);
    for es in [2usize, 4, 8, 16] {
        for n in [63usize, 64, 65, 100, 127, 128, 129, 191, 200, 1000, 1087] {
            for off in 0..64 {
                let src = &big[(off * 7) % 64..][..n * es + 3];
                for (name, op) in &OPS[..2] {
                    let mut want = vec![0u8; src.len() + 64];
                    op(generic, es, src, &mut want[off..off + src.len()]);
                    for s in Simd::available() {
                        let mut got = vec![0u8; src.len() + 64];
                        op(s, es, src, &mut got[off..off + src.len()]);
                        assert!(got == want, "{name} {} es {es} n {n} off {off}", s.name());
                    }
                }
            }
        }
    }
}

#[test]
fn every_level_round_trips() {
    for s in Simd::available() {
        for_all_shapes(|ts, data| {
            let sh = apply(s, OPS[0].1, ts, data);
            assert_eq!(apply(s, OPS[1].1, ts, &sh), data, "{} ts {ts}", s.name());
            let bs = apply(s, OPS[2].1, ts, data);
            assert_eq!(apply(s, OPS[3].1, ts, &bs), data, "{} ts {ts}", s.name());
        });
    }
}

#[test]
fn shuffle_exact_bytes() {
    let src: Vec<u8> = (0..11).collect();
    let mut out = vec![0u8; 11];
    // 3 elements of 3 bytes, 2 tail bytes copied verbatim.
    filters::shuffle(3, &src[..11], &mut out);
    assert_eq!(out, [0, 3, 6, 1, 4, 7, 2, 5, 8, 9, 10]);
    filters::shuffle(4, &src[..11], &mut out);
    assert_eq!(out, [0, 4, 1, 5, 2, 6, 3, 7, 8, 9, 10]);
    // typesize 1 (and a typesize larger than the buffer) copy.
    filters::shuffle(1, &src, &mut out);
    assert_eq!(out, src);
    filters::shuffle(12, &src, &mut out);
    assert_eq!(out, src);
}

#[test]
fn bitshuffle_exact_bytes() {
    // 16 elements of 2 bytes: rows 8b+k of 2 bytes each; element i sits at bit i%8 of byte i/8.
    let mut src = vec![0u8; 32 + 3];
    src[0] = 0x01; // element 0, byte 0, bit 0 -> row 0, byte 0, bit 0
    src[2 * 9 + 1] = 0x80; // element 9, byte 1, bit 7 -> row 15, byte 1, bit 1
    src[32..].copy_from_slice(&[7, 8, 9]); // leftover bytes
    let mut out = vec![0u8; src.len()];
    filters::bitshuffle(2, &src, &mut out);
    let mut want = vec![0u8; 35];
    want[0] = 0x01;
    want[15 * 2 + 1] = 0x02;
    want[32..].copy_from_slice(&[7, 8, 9]);
    assert_eq!(out, want);
    // 12 elements: only the first 8 are transformed, the 4 others are copied.
    let src: Vec<u8> = (0..12).map(|i| if i == 3 { 0xFF } else { 0 }).collect();
    let mut out = vec![0u8; 12];
    filters::bitshuffle(1, &src, &mut out);
    assert_eq!(out, [8, 8, 8, 8, 8, 8, 8, 8, 0, 0, 0, 0]);
}

#[test]
fn large_blocks_take_the_staged_paths() {
    // Bit rows >= 4 KiB apart (typesize >= 16) and rows of a 16+ KiB shuffle are staged.
    let mut rng = Rng::new(21);
    let generic = Simd::get("generic").unwrap();
    for (ts, n) in [(16usize, 32768 + 24), (24, 40000), (32, 32768), (8, 9000)] {
        let mut data = vec![0u8; n * ts + 5];
        rng.fill(&mut data);
        for (name, op) in OPS {
            let want = apply(generic, op, ts, &data);
            for s in Simd::available() {
                assert!(
                    apply(s, op, ts, &data) == want,
                    "{name} {} ts {ts}",
                    s.name()
                );
            }
        }
        let (_, theirs) = call(theirs()[2], ts as i32, &data);
        assert!(
            apply(Simd::active(), OPS[2].1, ts, &data) == theirs,
            "ts {ts}"
        );
    }
}

#[test]
fn legacy_bitunshuffle_copies_blocks_with_partial_groups() {
    let mut rng = Rng::new(7);
    let mut data = vec![0u8; 4 * 13 + 2];
    rng.fill(&mut data);
    let mut out = vec![0u8; data.len()];
    filters::bitunshuffle_legacy(4, &data, &mut out);
    assert_eq!(
        out, data,
        "13 elements: stored verbatim in version-2 chunks"
    );
    let mut modern = vec![0u8; data.len()];
    filters::bitunshuffle(4, &data, &mut modern);
    assert_ne!(modern, data);
    // 8 elements and 2 bytes: the elements as today; the bytes after them are left as the
    // destination held them, as c-blosc2 leaves them (Blosc 1.x never wrote them).
    let data = &data[..4 * 8 + 2];
    let (mut a, mut b) = (vec![0xEEu8; data.len()], vec![0u8; data.len()]);
    filters::bitunshuffle_legacy(4, data, &mut a);
    filters::bitunshuffle(4, data, &mut b);
    assert_eq!(a[..32], b[..32], "8 elements: the same transform as today");
    assert_eq!(
        a[32..],
        [0xEE, 0xEE],
        "the bytes after the elements are not written"
    );
}

type CFn = unsafe extern "C" fn(i32, i32, *const c_void, *mut c_void) -> i32;

fn call(f: CFn, ts: i32, src: &[u8]) -> (i32, Vec<u8>) {
    let mut out = vec![0x5Au8; src.len()];
    // SAFETY: both buffers hold src.len() bytes.
    let rc = unsafe {
        f(
            ts,
            src.len() as i32,
            src.as_ptr() as *const c_void,
            out.as_mut_ptr() as *mut c_void,
        )
    };
    (rc, out)
}

const OURS: [CFn; 4] = [
    b2frame::capi::filters::blosc2_shuffle,
    b2frame::capi::filters::blosc2_unshuffle,
    b2frame::capi::filters::blosc2_bitshuffle,
    b2frame::capi::filters::blosc2_bitunshuffle,
];

fn theirs() -> [CFn; 4] {
    let r = reference();
    [r.shuffle, r.unshuffle, r.bitshuffle, r.bitunshuffle]
}

#[test]
fn same_bytes_as_the_reference_and_mutual_inverses() {
    let refs = theirs();
    let mut rng = Rng::new(99);
    let mut cases = 0;
    for ts in 1..=256usize {
        for n in element_counts(ts, &mut rng) {
            for tail in tails(ts, &mut rng) {
                let mut data = vec![0u8; n * ts + tail];
                rng.fill(&mut data);
                for fwd in [0, 2] {
                    let (rc, ours) = call(OURS[fwd], ts as i32, &data);
                    let (rrc, theirs) = call(refs[fwd], ts as i32, &data);
                    assert_eq!((rc, rrc), (data.len() as i32, data.len() as i32));
                    assert!(ours == theirs, "fn {fwd} ts {ts} len {}", data.len());
                    // Each side inverts the other.
                    assert_eq!(call(refs[fwd + 1], ts as i32, &ours).1, data);
                    assert_eq!(call(OURS[fwd + 1], ts as i32, &theirs).1, data);
                }
                cases += 1;
            }
        }
    }
    assert!(cases > 10000, "only {cases} cases");
    println!(
        "shuffle/bitshuffle level compared with the reference: {} ({cases} cases)",
        b2frame::filters::simd_level()
    );
}

#[test]
fn bitunshuffle_accepts_typesizes_above_256_like_the_reference() {
    let mut rng = Rng::new(3);
    for ts in [257, 300, 1000] {
        for n in [8, 9, 16, 24] {
            let mut data = vec![0u8; n * ts + 5];
            rng.fill(&mut data);
            let ours = call(OURS[3], ts as i32, &data);
            let theirs = call(theirs()[3], ts as i32, &data);
            assert_eq!(ours.0, data.len() as i32);
            assert!(ours == theirs, "ts {ts} n {n}");
        }
    }
}

#[test]
fn argument_checks_match_the_reference() {
    let data = [1u8; 64];
    let refs = theirs();
    for (i, &ours) in OURS.iter().enumerate() {
        // Cases the reference survives (it crashes on bitshuffle/bitunshuffle typesize <= 0).
        // Cases the reference survives: its bitshuffle dies on typesize 0, its bitunshuffle on
        // typesize <= 0 and (depending on memory layout) on negative blocksizes.
        let mut cases = vec![(1, 64), (255, 64), (256, 64), (4, 0), (4, 3), (257, 64)];
        if i != 3 {
            cases.extend([(-1, 64), (300, 64), (4, -1), (4, -100)]);
        }
        if i < 2 {
            cases.push((0, 64));
        }
        for (ts, bs) in cases {
            let mut a = [0u8; 64];
            let mut b = [0u8; 64];
            // SAFETY: 64-byte buffers; negative blocksizes are rejected before any access.
            let (x, y) = unsafe {
                (
                    ours(
                        ts,
                        bs,
                        data.as_ptr() as *const c_void,
                        a.as_mut_ptr() as *mut c_void,
                    ),
                    refs[i](
                        ts,
                        bs,
                        data.as_ptr() as *const c_void,
                        b.as_mut_ptr() as *mut c_void,
                    ),
                )
            };
            assert_eq!(x, y, "fn {i} typesize {ts} blocksize {bs}");
        }
        // Where the reference crashes we return an error instead (bitunshuffle: the -1 the
        // reference returns when it survives a negative blocksize).
        if i == 3 {
            let mut a = [0u8; 64];
            // SAFETY: negative blocksize: rejected before any access.
            let rc = unsafe {
                ours(
                    4,
                    -1,
                    data.as_ptr() as *const c_void,
                    a.as_mut_ptr() as *mut c_void,
                )
            };
            assert_eq!(rc, -1);
        }
        let (rc, _) = call(ours, 0, &data);
        assert_eq!(rc, -12, "fn {i} typesize 0");
        let (rc, _) = call(ours, -5, &data);
        assert_eq!(rc, -12, "fn {i} typesize -5");
        // SAFETY: NULL pointers must be rejected without being dereferenced.
        let rc = unsafe { ours(4, 64, std::ptr::null(), std::ptr::null_mut()) };
        assert_eq!(rc, -32);
    }
}

#[test]
fn in_place_c_calls_work() {
    let mut rng = Rng::new(11);
    let mut data = vec![0u8; 4 * 100 + 3];
    rng.fill(&mut data);
    let (_, want) = call(OURS[2], 4, &data);
    let mut buf = data.clone();
    let p = buf.as_mut_ptr();
    // SAFETY: src and dest are the same valid buffer of buf.len() bytes.
    let rc = unsafe { OURS[2](4, buf.len() as i32, p as *const c_void, p as *mut c_void) };
    assert_eq!(rc, buf.len() as i32);
    assert_eq!(buf, want);
}

/// Child half of `simd_override_is_honoured`: checks the level chosen under the environment the
/// parent set. Without that environment it only checks that the level is a known one.
#[test]
fn simd_override_child() {
    let level = filters::simd_level();
    assert!(filters::shuffle::LEVELS.contains(&level));
    if let Ok(want) = std::env::var("B2FRAME_SIMD_EXPECT") {
        assert_eq!(level, want);
    }
}

#[test]
fn simd_override_is_honoured() {
    let best = Simd::available().last().unwrap().name();
    let mut cases = vec![("generic", "generic"), ("bogus", best), ("", best)];
    for l in ["sse2", "avx2", "avx512", "neon"] {
        cases.push((l, if Simd::get(l).is_some() { l } else { best }));
    }
    for (set, expect) in cases {
        let status = common::target_command(std::env::current_exe().unwrap())
            .args([
                "--exact",
                common::test_name(module_path!(), "simd_override_child").as_str(),
                "--test-threads=1",
            ])
            .env("B2FRAME_SIMD", set)
            .env("B2FRAME_SIMD_EXPECT", expect)
            .output()
            .unwrap();
        assert!(
            status.status.success() && String::from_utf8_lossy(&status.stdout).contains("1 passed"),
            "B2FRAME_SIMD={set}: {}",
            String::from_utf8_lossy(&status.stdout)
        );
    }
}
