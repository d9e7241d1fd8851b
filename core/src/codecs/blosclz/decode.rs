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
            if let Some(step) = short_match(src, ip, dst, op, ctrl) {
                // The common match, copied by one or two fixed-size words.
                (ip, op, ctrl) = (ip + step.ip, op + step.len, step.next);
                continue;
            }
            // Match: 3-bit length code, 13-bit distance (high 5 bits here).
            let mut len = (ctrl >> 5) - 1;
            let hi = (ctrl & 31) << 8;
            let code = if len == 6 {
                loop {
                    // Each extension byte must be followed by at least one more byte.
                    let Some(&[ext, _]) = src.get(ip..).and_then(|s| s.first_chunk::<2>()) else {
                        return Err(Error::Data);
                    };
                    ip += 1;
                    len += ext as usize;
                    if ext != 255 {
                        break;
                    }
                }
                let Some(&code) = src.get(ip) else {
                    return Err(Error::Data);
                };
                code as usize
            } else {
                let Some(&[code, _]) = src.get(ip..).and_then(|s| s.first_chunk::<2>()) else {
                    return Err(Error::Data);
                };
                code as usize
            };
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
            let Some(&next) = src.get(ip) else {
                break;
            };
            copy_match(dst, op, back, len);
            op += len;
            ctrl = next as usize;
            ip += 1;
        } else {
            let run = ctrl + 1;
            if let (Some(out), Some(lit)) = (
                dst.get_mut(op..).and_then(|d| d.first_chunk_mut::<32>()),
                src.get(ip..).and_then(|s| s.first_chunk::<33>()),
            ) {
                // Fast path: a fixed 32-byte copy (two vector moves, no memcpy call) surely
                // fits, and the next control byte exists. The bytes copied past `run` are
                // overwritten by the next instructions (or lie past the produced length).
                out.copy_from_slice(&lit[..32]);
                ctrl = lit[run] as usize;
                op += run;
                ip += run + 1;
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

/// What [`short_match`] consumed and produced.
struct Step {
    /// Input bytes consumed after the control byte, including the next control byte.
    ip: usize,
    /// Bytes output.
    len: usize,
    /// The next control byte.
    next: usize,
}

/// Copies the match of control byte `ctrl` (`>= 32`, already consumed; `ip` points past it) when
/// it is one of the common shapes that a fixed-size word copy handles with the output having
/// room for the whole word: a 3..=8-byte match at distance 8..8191 (one 8-byte word), or a
/// 9..=32-byte match (one extension byte) at distance 16..8191 (two 16-byte words). Anything
/// else (long, near, far, invalid, close to either end) returns `None` with nothing written,
/// for the general path, which also reports errors.
///
/// A word covers the match and may write past it, up to the end of the window sliced once
/// here: those bytes are overwritten by the next instructions or lie past the produced length.
#[inline(always)]
fn short_match(src: &[u8], ip: usize, dst: &mut [u8], op: usize, ctrl: usize) -> Option<Step> {
    let hi = (ctrl & 31) << 8;
    if ctrl < 7 << 5 {
        // Length code 1..=6: no extension byte; the next control byte must follow.
        let &[code, next] = src.get(ip..)?.first_chunk::<2>()?;
        let back = hi + code as usize + 1;
        // 8..=8191 (8192 is the far-distance escape).
        if back.wrapping_sub(8) > MAX_DISTANCE - 8 || back > op {
            return None;
        }
        let win = dst.get_mut(op - back..op + 8)?;
        let w = *win.first_chunk::<8>()?;
        *win.last_chunk_mut::<8>()? = w;
        Some(Step {
            ip: 2,
            len: (ctrl >> 5) + 2,
            next: next as usize,
        })
    } else {
        let &[ext, code, next] = src.get(ip..)?.first_chunk::<3>()?;
        let len = ext as usize + 9;
        let back = hi + code as usize + 1;
        if len > 32 || back.wrapping_sub(16) > MAX_DISTANCE - 16 || back > op {
            return None;
        }
        let win = dst.get_mut(op - back..op + 32)?;
        // In order: when `back < 32` the second word reads bytes the first one wrote.
        let w = *win.first_chunk::<16>()?;
        *win.get_mut(back..back + 16)?.first_chunk_mut::<16>()? = w;
        let w = *win.get(16..)?.first_chunk::<16>()?;
        *win.last_chunk_mut::<16>()? = w;
        Some(Step {
            ip: 3,
            len,
            next: next as usize,
        })
    }
}

/// Copies `len` bytes from `back` bytes behind `op` to `op` (LZ77 semantics: the source may
/// overlap the destination, repeating the last `back` bytes). The caller checked
/// `back <= op` and `op + len <= dst.len()`.
///
/// The common cases are inline and call-free; the rest is out of line, so the decoding loop
/// keeps its state in registers.
#[inline(always)]
fn copy_match(dst: &mut [u8], op: usize, back: usize, len: usize) {
    // Room for whole-word steps that may write up to 31 bytes past the match (they are
    // overwritten by the next instructions, or lie past the produced length).
    let room = dst.len() - op >= len + 32;
    if back == 1 {
        // A run of the byte before `op`: most matches in streams of slowly varying bytes.
        if len < 64 && room {
            short_run(dst, op, len);
        } else {
            fill_run(dst, op, len);
        }
    } else if room {
        if len <= 16 && back >= 16 {
            // Most matches in text-like data: one word, no loop.
            copy_word::<16>(dst, op - back, op);
        } else if back >= 32 {
            copy_far::<32>(dst, op, back, len);
        } else if back >= 16 {
            copy_far::<16>(dst, op, back, len);
        } else if back >= 8 {
            copy_far::<8>(dst, op, back, len);
        } else {
            copy_near(dst, op, back, len);
        }
    } else {
        copy_match_exact(dst, op, back, len);
    }
}

/// A run of the byte before `op`, written exactly (memset): long runs, and runs near the end of
/// the output.
#[inline(never)]
fn fill_run(dst: &mut [u8], op: usize, len: usize) {
    let b = dst[op - 1];
    dst[op..op + len].fill(b);
}

/// A run of the byte before `op` shorter than 64 bytes, in one or two 32-byte stores of that
/// byte (up to 31 bytes past the match; the caller checked `op + len + 32 <= dst.len()`). The
/// byte is one load that the store which wrote it can forward, where [`copy_near`]'s 8-byte
/// period load spans several earlier stores and waits for them.
#[inline(always)]
fn short_run(dst: &mut [u8], op: usize, len: usize) {
    let w = [dst[op - 1]; 32];
    dst[op..op + 32].copy_from_slice(&w);
    if len > 32 {
        dst[op + 32..op + 64].copy_from_slice(&w);
    }
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

/// Copies a match whose source lies at least `S` bytes back in `S`-byte words, writing up to
/// `S - 1` bytes past it. The caller checked `S <= back <= op` and `op + len + S <= dst.len()`.
///
/// The match is copied in rounds of `back` rounded down to whole words: within a round every
/// source word lies before the round's start, so one split there separates source and
/// destination and the word loop runs over two chunk iterators with no per-word bounds checks.
/// A later round reads what earlier rounds wrote (LZ77 repetition). Most matches take one
/// round; a long match with a short period (under 4 words) goes word by word instead, where a
/// round would cost more than it copies.
#[inline(always)]
fn copy_far<const S: usize>(dst: &mut [u8], op: usize, back: usize, len: usize) {
    let step = back / S * S;
    if len >= LONG_MATCH && len <= back {
        // Source and destination are disjoint: libc's memcpy moves a long match in fewer
        // instructions than the word loop (f64_series runs of exponent bytes).
        long_copy(dst, op, back, len);
    } else if len <= step {
        copy_round::<S>(dst, op, back, len);
    } else if step < 4 * S {
        step_copy::<S>(dst, op - back, op, len);
    } else {
        let mut done = 0;
        while done < len {
            copy_round::<S>(dst, op + done, back, (len - done).min(step));
            done += step;
        }
    }
}

/// Length from which [`copy_far`] hands a non-overlapping match to memcpy.
const LONG_MATCH: usize = 64;

/// A match of `len <= back` bytes (source and destination disjoint), copied exactly.
#[inline(never)]
fn long_copy(dst: &mut [u8], op: usize, back: usize, len: usize) {
    let (head, tail) = dst.split_at_mut(op);
    tail[..len].copy_from_slice(&head[op - back..op - back + len]);
}

/// One round of [`copy_far`]: `n <= back / S * S` bytes, so every source word lies before `op`.
/// Out of line: inlined into the decoding loop its word loop was compiled into memcpy calls.
#[inline(never)]
fn copy_round<const S: usize>(dst: &mut [u8], op: usize, back: usize, n: usize) {
    let (head, tail) = dst.split_at_mut(op);
    let src = &head[op - back..];
    for (d, s) in tail
        .chunks_exact_mut(S)
        .zip(src.chunks_exact(S))
        .take(n.div_ceil(S))
    {
        d.copy_from_slice(s);
    }
}

/// One `S`-byte word from `from` to `op` (`op - from >= S`, `op + S <= dst.len()`).
#[inline(always)]
fn copy_word<const S: usize>(dst: &mut [u8], from: usize, op: usize) {
    let mut w = [0u8; S];
    w.copy_from_slice(&dst[from..from + S]);
    dst[op..op + S].copy_from_slice(&w);
}

/// Copies `len` bytes from `from` to `op` in `S`-byte words (`op - from >= S`, so every word
/// read is already in place; `op + len + S <= dst.len()`).
#[inline(always)]
fn step_copy<const S: usize>(dst: &mut [u8], from: usize, op: usize, len: usize) {
    let mut s = from;
    let mut d = op;
    let end = op + len;
    while d < end {
        let w: [u8; S] = dst[s..s + S].try_into().unwrap_or([0; S]);
        dst[d..d + S].copy_from_slice(&w);
        s += S;
        d += S;
    }
}

/// A match with a period `back` < 8 (1..=7): the period is replicated into one 8-byte word,
/// stored every `STEP[back]` bytes (the largest multiple of the period <= 8, so every store
/// starts at phase 0), writing up to 7 bytes past the match. The caller checked `back <= op`
/// and `op + len + 32 <= dst.len()`.
#[inline(always)]
fn copy_near(dst: &mut [u8], op: usize, back: usize, len: usize) {
    /// Largest multiple of the period that is <= 8, by period.
    const STEP: [usize; 8] = [8, 8, 8, 6, 8, 5, 6, 7];
    /// Multiplying a period of `b` bytes (`b` in 1..=7) by `REPEAT[b]` places copies of it at
    /// every multiple of `b` bytes; the copies occupy disjoint bytes, so there are no carries.
    const REPEAT: [u64; 8] = [
        0,
        0x0101_0101_0101_0101,
        0x0001_0001_0001_0001,
        0x0001_0000_0100_0001,
        0x0000_0001_0000_0001,
        0x0000_0100_0000_0001,
        0x0001_0000_0000_0001,
        0x0100_0000_0000_0001,
    ];
    let from = op - back;
    let Some(first) = dst.get(from..).and_then(|s| s.first_chunk::<8>()) else {
        return;
    };
    // The first `back` bytes of `first` are the period; the rest is not yet output.
    let b = back & 7;
    let period = u64::from_le_bytes(*first) & (u64::MAX >> (64 - 8 * b.max(1)));
    let pat = period.wrapping_mul(REPEAT[b]).to_le_bytes();
    let step = STEP[b];
    // A store at `i` fits in `out` exactly when `i < len`.
    let Some(out) = dst.get_mut(op..op + len + 7) else {
        return;
    };
    let mut i = 0;
    while let Some(w) = out.get_mut(i..i + 8) {
        w.copy_from_slice(&pat);
        i += step;
    }
}
