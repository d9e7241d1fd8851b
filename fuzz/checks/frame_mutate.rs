//! An arbitrary (possibly hostile) in-memory cframe followed by a script of mutations with
//! arbitrary chunks: nothing may crash, whenever a mutation succeeds the frame must
//! serialise, reopen, and give the same chunks, and a mutation that fails must leave the
//! frame's bytes exactly as they were (issue 5).
//!
//! Input: 2 bytes (little-endian frame length), the frame, then ops of the form
//! `op, idx, len, <len bytes>` (op % 8: append, insert, update, delete, reorder (rotate),
//! add vlmetalayer "v", delete it, update metalayer "b2nd").
//!
//! Shared by the fuzz target and by tests/fuzz_regressions.rs (regression inputs).
use b2frame::frame::Frame;

/// Runs one fuzz input; panics on a violated property.
pub fn run(data: &[u8]) {
    if data.len() < 4 {
        return;
    }
    // First two bytes: frame length; then the frame; the rest is the op script.
    let flen = (u16::from_le_bytes([data[0], data[1]]) as usize).min(data.len() - 2);
    let (frame, mut script) = data[2..].split_at(flen);
    let Ok(mut f) = Frame::from_bytes(frame) else {
        return;
    };
    while script.len() >= 3 {
        let (op, idx, len) = (script[0], script[1] as i64, script[2] as usize);
        script = &script[3..];
        let len = len.min(script.len());
        let (chunk, rest) = script.split_at(len);
        script = rest;
        let n = f.nchunks().max(1);
        let before = f.to_cframe();
        let r = match op % 8 {
            0 => f.append_chunk(chunk).map(|_| ()),
            1 => f.insert_chunk(idx % (n + 1), chunk).map(|_| ()),
            2 => f.update_chunk(idx % n, chunk).map(|_| ()),
            3 => f.delete_chunk(idx % n).map(|_| ()),
            4 => {
                let mut order: Vec<i64> = (0..f.nchunks()).collect();
                let k = (idx as usize) % order.len().max(1);
                order.rotate_left(k);
                f.reorder(&order)
            }
            5 => f.add_vlmetalayer_raw("v", chunk).map(|_| ()),
            6 => f.delete_vlmetalayer("v").map(|_| ()),
            _ => f.update_metalayer("b2nd", chunk).map(|_| ()),
        };
        if r.is_err() {
            assert_eq!(
                f.to_cframe(),
                before,
                "a failed mutation (op {}) changed the frame",
                op % 8
            );
        } else {
            let bytes = f
                .to_cframe()
                .expect("serialise after a successful mutation");
            let g = Frame::from_bytes(&bytes).expect("reopen after a successful mutation");
            assert_eq!(g.nchunks(), f.nchunks());
            for i in 0..f.nchunks().min(64) {
                assert_eq!(g.chunk(i).ok(), f.chunk(i).ok());
            }
        }
    }
}
