//! Fingerprinted frames (docs/format/fingerprint.md), mutated: checking the fingerprint never
//! panics, and never passes a frame whose covered bytes changed where CRC-32 guarantees it.
//!
//! The input picks one of a few small frames b2frame wrote (in memory, and cframe files
//! written by the crash-consistent file commit, read back; the sframe forms are covered byte by
//! byte in tests/frame/unit_fingerprint.rs) and how to change it:
//!
//! * first byte even: one error burst of up to 32 bits (a 4-byte XOR mask at any position).
//!   CRC-32 detects every such burst in the covered bytes and the fingerprint word together, and
//!   the part words and the type byte are checked on their own, so a frame whose covered bytes
//!   (or slot) changed must be reported: its open fails, or the check does not pass. (Dead bytes,
//!   the payloads of deleted chunks, are not covered: a burst only there may pass.)
//! * first byte odd: up to 64 arbitrary byte writes. A CRC is no defence against a chosen
//!   change (a mutator that sees the comparison can write the matching CRC into the slot), so
//!   the property there is differential: whenever the check passes, an independent bitwise
//!   CRC-32 of the covered bytes (found by [`covered`], written apart from the library's code)
//!   equals the stored fingerprint.
//!
//! An untouched frame always passes.
use b2frame::chunk::{compress_vec, special, CParams, DParams};
use b2frame::frame::fingerprint::Verdict;
use b2frame::frame::meta::encode_vlmeta;
use b2frame::frame::offsets::SpecialKind;
use b2frame::frame::Frame;
use std::sync::OnceLock;

fn cparams() -> CParams {
    CParams {
        typesize: 4,
        blocksize: 512,
        ..CParams::default()
    }
}

fn chunk(k: u32, n: u32) -> Vec<u8> {
    let d: Vec<u8> = (0..n)
        .flat_map(|i| (i.wrapping_mul(k) ^ (i >> 2)).to_le_bytes())
        .collect();
    compress_vec(&cparams(), &d).unwrap()
}

/// The frames mutated (built once per process).
pub fn bases() -> &'static [Vec<u8>] {
    static B: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    B.get_or_init(|| {
        let cp = cparams();
        let dp = DParams::default();
        let mut out = Vec::new();
        // Metalayer, vlmetalayer, stored, special and deleted (dead) chunks.
        let mut f = Frame::new_memory(&cp, &dp).unwrap();
        f.add_metalayer("m", b"\x92\x01\x02").unwrap();
        f.add_vlmetalayer_raw("v", &encode_vlmeta(b"vl content", None).unwrap())
            .unwrap();
        f.append_chunk(&chunk(3, 128)).unwrap();
        let mut z = [0u8; 64];
        let n = special::zeros(&cp, 512, &mut z).unwrap();
        f.append_chunk(&z[..n]).unwrap();
        f.append_chunk(&chunk(5, 128)).unwrap();
        f.append_chunk(&chunk(9, 128)).unwrap();
        f.delete_chunk(2).unwrap();
        out.push(f.to_cframe().unwrap());
        // Variable chunk sizes.
        let mut f = Frame::new_memory(&cp, &dp).unwrap();
        f.append_chunk(&chunk(7, 100)).unwrap();
        f.append_chunk(&chunk(11, 40)).unwrap();
        f.append_chunk(&chunk(13, 128)).unwrap();
        out.push(f.to_cframe().unwrap());
        // fill_special: no data section, a one-chunk index.
        let mut f = Frame::new_memory(&cp, &dp).unwrap();
        f.fill_special(SpecialKind::Nan, 5, 2400, 512, 512).unwrap();
        out.push(f.to_cframe().unwrap());
        // Empty, with a metalayer.
        let mut f = Frame::new_memory(&cp, &dp).unwrap();
        f.add_metalayer("only", b"\xc0").unwrap();
        out.push(f.to_cframe().unwrap());
        // cframe files changed by the crash-consistent commit: appends, an update that moves
        // the data after it, a delete, a vlmetalayer (each commit relocates the old state).
        let dir = std::env::temp_dir().join(format!("b2f-fuzz-fp-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("f.b2frame");
        let _ = std::fs::remove_file(&path);
        let mut f = Frame::new_file(&path, &cp, &dp).unwrap();
        f.add_metalayer("m", b"\x92\x01\x02").unwrap();
        f.append_chunk(&chunk(3, 128)).unwrap();
        f.append_chunk(&z[..n]).unwrap();
        f.append_chunk(&chunk(5, 128)).unwrap();
        f.append_chunk(&chunk(9, 128)).unwrap();
        f.update_chunk(0, &chunk(17, 64)).unwrap();
        f.delete_chunk(2).unwrap();
        f.add_vlmetalayer_raw("v", &encode_vlmeta(b"vl content", None).unwrap())
            .unwrap();
        drop(f);
        out.push(std::fs::read(&path).unwrap());
        let _ = std::fs::remove_dir_all(&dir);
        out
    })
}

/// The byte ranges of the cframe `bytes` that its fingerprint covers, in order (header, the
/// stored chunks' bytes in file order with dead bytes left out, the index chunk, the trailer up
/// to the slot), or `None` when our open refuses it. Written from docs/format/fingerprint.md,
/// apart from the library's code (only the open's parsed header and offsets are taken).
pub fn covered(bytes: &[u8]) -> Option<Vec<(usize, usize)>> {
    let fr = Frame::from_bytes(bytes).ok()?;
    let h = fr.header();
    let n = h.frame_len as usize;
    let le = |p: usize| i32::from_le_bytes(bytes[p..p + 4].try_into().unwrap());
    let tl = u32::from_be_bytes(bytes[n - 22..n - 18].try_into().unwrap()) as usize;
    let ts = n - tl;
    let hl = h.header_len as usize;
    let mut out = vec![(0, hl)];
    if h.nbytes == 0 {
        out.push((ts, n - 16));
        return Some(out);
    }
    let cb = h.cbytes as usize;
    let mut live: Vec<(usize, usize)> = Vec::new();
    for l in fr.locs() {
        if let Some(v) = l.stored() {
            let v = v as usize;
            if v >= cb {
                continue;
            }
            let end = if cb - v >= 16 {
                (v + le(hl + v + 12).max(16) as usize).min(cb)
            } else {
                cb
            };
            live.push((hl + v, hl + end));
        }
    }
    live.sort();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (s, e) in live {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    out.extend(merged);
    let de = hl + cb;
    let region = ts - de;
    let icb = if region >= 16 { le(de + 12) } else { -1 };
    let ilen = if icb >= 16 && icb as usize <= region {
        icb as usize
    } else {
        region
    };
    out.push((de, de + ilen));
    out.push((ts, n - 16));
    Some(out)
}

/// Which bytes of `bytes` the fingerprint protects: the covered ones and the 17 bytes of the
/// type and slot.
pub fn protected(bytes: &[u8]) -> Vec<bool> {
    let mut m = vec![false; bytes.len()];
    for (s, e) in covered(bytes).expect("a base frame opens") {
        m[s..e].fill(true);
    }
    let n = m.len();
    m[n - 17..].fill(true);
    m
}

/// CRC-32 (IEEE, reflected), bit by bit: the oracle, independent of crc32fast.
pub fn crc32_bitwise(bytes: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

fn reported(bytes: &[u8]) -> bool {
    match Frame::from_bytes(bytes) {
        Err(_) => true,
        Ok(f) => !matches!(f.verify_fingerprint(), Ok(v) if v.is_sound()),
    }
}

/// The base frame an input picks, the frame after its changes, and whether the change is a
/// burst (see the module docs); `None` for an empty input.
pub fn mutate(data: &[u8]) -> Option<(&'static [u8], Vec<u8>, bool)> {
    let (&sel, ops) = data.split_first()?;
    let bases = bases();
    let base = &bases[(sel >> 1) as usize % bases.len()];
    let mut f = base.clone();
    let len = f.len();
    let burst = sel & 1 == 0;
    if burst {
        if ops.len() >= 6 {
            let pos = u16::from_le_bytes([ops[0], ops[1]]) as usize % len;
            for (k, &m) in ops[2..6].iter().enumerate() {
                if pos + k < len {
                    f[pos + k] ^= m;
                }
            }
        }
    } else {
        for e in ops.chunks_exact(3).take(64) {
            let pos = u16::from_le_bytes([e[0], e[1]]) as usize % len;
            f[pos] = e[2];
        }
    }
    Some((base, f, burst))
}

/// Runs one fuzz input; panics on a violated property.
pub fn run(data: &[u8]) {
    let Some((base, f, burst)) = mutate(data) else {
        return;
    };
    let len = f.len();
    let opened = Frame::from_bytes(&f);
    let verdict = opened.as_ref().ok().map(|fr| fr.verify_fingerprint());
    if f == base {
        assert_eq!(verdict, Some(Ok(Verdict::Match)), "untouched frame");
        return;
    }
    if burst {
        let prot = protected(base);
        let touched = (0..len).any(|i| f[i] != base[i] && prot[i]);
        assert!(
            !touched || reported(&f),
            "a burst of at most 32 bits in protected bytes passed the check"
        );
    }
    if let (Ok(fr), Some(Ok(Verdict::Match))) = (&opened, &verdict) {
        let n = fr.header().frame_len as usize;
        assert_eq!(f[n - 17], 1);
        let stored = u32::from_le_bytes(f[n - 16..n - 12].try_into().unwrap());
        let seq: Vec<u8> = covered(&f)
            .unwrap()
            .iter()
            .flat_map(|&(s, e)| f[s..e].iter().copied())
            .collect();
        assert_eq!(
            crc32_bitwise(&seq),
            stored,
            "check passed, oracle disagrees"
        );
    }
}
