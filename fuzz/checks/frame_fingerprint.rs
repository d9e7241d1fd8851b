//! Fingerprinted frames (docs/format/fingerprint.md), mutated: checking the fingerprint never
//! panics, and never passes a frame whose covered bytes changed where CRC-32 guarantees it.
//!
//! The input picks one of a few small frames b2frame wrote (in memory; the sframe and file
//! forms are covered byte by byte in tests/frame/unit_fingerprint.rs) and how to change it:
//!
//! * first byte even: one error burst of up to 32 bits (a 4-byte XOR mask at any position).
//!   CRC-32 detects every such burst in the covered bytes and the fingerprint word together, and
//!   the part words and the type byte are checked on their own, so a changed frame must be
//!   reported: its open fails, or the check does not pass.
//! * first byte odd: up to 64 arbitrary byte writes. A CRC is no defence against a chosen
//!   change (a mutator that sees the comparison can write the matching CRC into the slot), so
//!   the property there is differential: whenever the check passes, an independent bitwise
//!   CRC-32 of the covered bytes equals the stored fingerprint.
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
        out
    })
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

/// Runs one fuzz input; panics on a violated property.
pub fn run(data: &[u8]) {
    let Some((&sel, ops)) = data.split_first() else {
        return;
    };
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
    let opened = Frame::from_bytes(&f);
    let verdict = opened.as_ref().ok().map(|fr| fr.verify_fingerprint());
    if f == *base {
        assert_eq!(verdict, Some(Ok(Verdict::Match)), "untouched frame");
        return;
    }
    if burst {
        assert!(reported(&f), "a burst of at most 32 bits passed the check");
    }
    if let (Ok(fr), Some(Ok(Verdict::Match))) = (&opened, &verdict) {
        let n = fr.header().frame_len as usize;
        assert_eq!(f[n - 17], 1);
        let stored = u32::from_le_bytes(f[n - 16..n - 12].try_into().unwrap());
        assert_eq!(
            crc32_bitwise(&f[..n - 16]),
            stored,
            "check passed, oracle disagrees"
        );
    }
}
