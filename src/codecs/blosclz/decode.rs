//! BloscLZ decoder. Accepts exactly what c-blosc2's decoder accepts; never reads or writes out
//! of bounds and never panics, whatever the input.

use super::MAX_DISTANCE;
use crate::error::{Error, Result};

/// Decodes a BloscLZ stream into `dst`; returns the number of bytes produced.
///
/// `Err(Error::Data)` when the stream is malformed (truncated instruction, match before the
/// start of the output, output larger than `dst`). As in c-blosc2, a stream may legally stop
/// early (the result is then shorter than `dst`), and a match that is the very last
/// instruction is dropped rather than copied; callers compare the result with the size they
/// expect.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let Some((&first, _)) = src.split_first() else {
        return Ok(0);
    };
    let n = src.len();
    let cap = dst.len();
    let mut ip = 1usize;
    let mut op = 0usize;
    // Bit 5 of the first byte is the format marker; the first instruction is a literal run.
    let mut ctrl = (first & 31) as usize;
    loop {
        if ctrl >= 32 {
            // Match: 3-bit length code, 13-bit distance (high 5 bits here).
            let mut len = (ctrl >> 5) - 1;
            let hi = (ctrl & 31) << 8;
            if len == 6 {
                loop {
                    if ip + 1 >= n {
                        return Err(Error::Data);
                    }
                    let code = src[ip];
                    ip += 1;
                    len += code as usize;
                    if code != 255 {
                        break;
                    }
                }
            } else if ip + 1 >= n {
                return Err(Error::Data);
            }
            let code = src[ip] as usize;
            ip += 1;
            len += 3;
            // `back` = how far behind the output position the match source starts.
            let mut back = hi + code + 1;
            if code == 255 && hi == 31 << 8 {
                if ip + 1 >= n {
                    return Err(Error::Data);
                }
                let ofs = ((src[ip] as usize) << 8) | src[ip + 1] as usize;
                ip += 2;
                back = ofs + MAX_DISTANCE + 1;
            }
            if len > cap - op || back > op {
                return Err(Error::Data);
            }
            // c-blosc2 stops *before* copying a match that ends the input.
            if ip >= n {
                break;
            }
            copy_match(dst, op, back, len);
            op += len;
            ctrl = src[ip] as usize;
            ip += 1;
        } else {
            let run = ctrl + 1;
            if cap - op >= 32 && n - ip > 32 {
                // Fast path: a fixed 32-byte copy (two vector moves, no memcpy call) surely
                // fits, and the next control byte exists. The bytes copied past `run` are
                // overwritten by the next instructions (or lie past the produced length).
                dst[op..][..32].copy_from_slice(&src[ip..][..32]);
                op += run;
                ip += run;
                ctrl = src[ip] as usize;
                ip += 1;
                continue;
            }
            if run > cap - op || run > n - ip {
                return Err(Error::Data);
            }
            copy_literals_exact(dst, op, src, ip, run);
            op += run;
            ip += run;
            if ip >= n {
                break;
            }
            ctrl = src[ip] as usize;
            ip += 1;
        }
    }
    Ok(op)
}

/// Copies `len` bytes from `back` bytes behind `op` to `op` (LZ77 semantics: the source may
/// overlap the destination, repeating the last `back` bytes). The caller checked
/// `back <= op` and `op + len <= dst.len()`.
///
/// The common cases are inline and call-free; the rest is out of line, so the decoding loop
/// keeps its state in registers.
#[inline(always)]
fn copy_match(dst: &mut [u8], op: usize, back: usize, len: usize) {
    if len >= 64 && back == 1 {
        fill_run(dst, op, len);
    } else if dst.len() - op >= len + 16 {
        // Room for whole-word steps that may write up to 15 bytes past the match (they are
        // overwritten by the next instructions, or lie past the produced length).
        let from = op - back;
        if back >= 16 {
            step_copy::<16>(dst, from, op, len);
        } else if back >= 8 {
            step_copy::<8>(dst, from, op, len);
        } else {
            // Period < 8: one 8-byte pattern word, stored every `step` bytes (the largest
            // multiple of the period that is <= 8, so every store starts at phase 0).
            let mut pat = [0u8; 8];
            let mut k = 0;
            for p in pat.iter_mut() {
                *p = dst[from + k];
                k += 1;
                if k == back {
                    k = 0;
                }
            }
            const STEP: [usize; 8] = [8, 8, 8, 6, 8, 5, 6, 7];
            let step = STEP[back];
            let out = &mut dst[op..op + len + 8];
            let mut i = 0;
            while i < len {
                out[i..i + 8].copy_from_slice(&pat);
                i += step;
            }
        }
    } else {
        copy_match_exact(dst, op, back, len);
    }
}

/// A long run of the byte before `op` (memset).
#[inline(never)]
fn fill_run(dst: &mut [u8], op: usize, len: usize) {
    let b = dst[op - 1];
    dst[op..op + len].fill(b);
}

/// [`copy_match`] writing nothing past the match (near the end of the output).
#[cold]
#[inline(never)]
fn copy_match_exact(dst: &mut [u8], op: usize, back: usize, len: usize) {
    let from = op - back;
    if back >= len {
        dst.copy_within(from..from + len, op);
    } else {
        // Grow the copied prefix by doubling, keeping it a multiple of `back` so every chunk
        // starts at `from`.
        let mut done = 0;
        while done < len {
            let chunk = (done + back).min(len - done);
            dst.copy_within(from..from + chunk, op + done);
            done += chunk;
        }
    }
}

/// A literal run near the end of the input or output, copied exactly.
#[cold]
#[inline(never)]
fn copy_literals_exact(dst: &mut [u8], op: usize, src: &[u8], ip: usize, run: usize) {
    dst[op..op + run].copy_from_slice(&src[ip..ip + run]);
}

/// Copies `len` bytes from `from` to `op` in `S`-byte words (`op - from >= S`, so every word
/// read is already in place; `op + len + S <= dst.len()`).
#[inline(always)]
fn step_copy<const S: usize>(dst: &mut [u8], from: usize, op: usize, len: usize) {
    let mut s = from;
    let mut d = op;
    let end = op + len;
    while d < end {
        let w: [u8; S] = dst[s..s + S].try_into().unwrap();
        dst[d..d + S].copy_from_slice(&w);
        s += S;
        d += S;
    }
}
