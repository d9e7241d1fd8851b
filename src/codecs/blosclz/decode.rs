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
            ctrl = src[ip] as usize;
            ip += 1;
            copy_match(dst, op, back, len);
            op += len;
        } else {
            let run = ctrl + 1;
            if run > cap - op || run > n - ip {
                return Err(Error::Data);
            }
            copy_literals(dst, op, src, ip, run);
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

/// Copies `run` (1..=32) literal bytes; the caller checked both ranges.
#[inline(always)]
fn copy_literals(dst: &mut [u8], op: usize, src: &[u8], ip: usize, run: usize) {
    // A fixed 32-byte copy is two vector moves instead of a memcpy call; the bytes past `run`
    // are overwritten by the next instructions (or lie past the produced length).
    if let (Some(d), Some(s)) = (dst.get_mut(op..op + 32), src.get(ip..ip + 32)) {
        d.copy_from_slice(s);
    } else {
        dst[op..op + run].copy_from_slice(&src[ip..ip + run]);
    }
}

/// Copies `len` bytes from `back` bytes behind `op` to `op` (LZ77 semantics: the source may
/// overlap the destination, repeating the last `back` bytes). The caller checked
/// `back <= op` and `op + len <= dst.len()`.
#[inline(always)]
fn copy_match(dst: &mut [u8], op: usize, back: usize, len: usize) {
    let from = op - back;
    if back == 1 {
        let b = dst[from];
        dst[op..op + len].fill(b);
    } else if back >= 8 && dst.len() - op >= len + 8 {
        // Source at least 8 bytes behind: 8-byte steps read only bytes already in place.
        let mut i = 0;
        while i < len {
            let w: [u8; 8] = dst[from + i..from + i + 8].try_into().unwrap();
            dst[op + i..op + i + 8].copy_from_slice(&w);
            i += 8;
        }
    } else if back >= len {
        dst.copy_within(from..from + len, op);
    } else {
        // Short period: grow the copied prefix by doubling, keeping it a multiple of `back` so
        // every chunk starts at `from`.
        let mut done = 0;
        while done < len {
            let chunk = (done + back).min(len - done);
            dst.copy_within(from..from + chunk, op + done);
            done += chunk;
        }
    }
}
