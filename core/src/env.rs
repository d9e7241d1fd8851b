//! The `BLOSC_*` environment variables c-blosc2 reads, parsed safely.
//!
//! c-blosc2 reads these with `getenv` + `strtol(s, NULL, 10)` or `strcmp`, and ignores values it
//! does not recognise. To behave the same way for every input (leading blanks, trailing garbage,
//! overflow), the numeric ones go through [`strtol`], a bounds-checked model of glibc's `strtol`
//! in base 10, and callers then apply the same casts and range checks as the reference.
//!
//! Every reader takes a lookup function so that the parsing is testable without touching the
//! process environment; [`from_process`] is the real one.

#![forbid(unsafe_code)]

use std::ffi::OsString;

/// `BLOSC_*` variable names (kept together so grep finds every use).
pub mod names {
    /// Compression level for the global API and new compression contexts.
    pub const CLEVEL: &str = "BLOSC_CLEVEL";
    /// `NOSHUFFLE` | `SHUFFLE` | `BITSHUFFLE`.
    pub const SHUFFLE: &str = "BLOSC_SHUFFLE";
    /// `1` | `0`: add DELTA to the pipeline.
    pub const DELTA: &str = "BLOSC_DELTA";
    /// Element size in bytes.
    pub const TYPESIZE: &str = "BLOSC_TYPESIZE";
    /// Codec name (`blosclz`, `lz4`, ...).
    pub const COMPRESSOR: &str = "BLOSC_COMPRESSOR";
    /// Forced blocksize in bytes.
    pub const BLOCKSIZE: &str = "BLOSC_BLOCKSIZE";
    /// Number of worker threads.
    pub const NTHREADS: &str = "BLOSC_NTHREADS";
    /// `ALWAYS` | `NEVER` | `AUTO` | `FORWARD_COMPAT`.
    pub const SPLITMODE: &str = "BLOSC_SPLITMODE";
    /// Present (any value): the global API uses a private context per call.
    pub const NOLOCK: &str = "BLOSC_NOLOCK";
    /// Present (any value): the global API writes 16-byte Blosc1 headers.
    pub const BLOSC1_COMPAT: &str = "BLOSC_BLOSC1_COMPAT";
    /// Present (any value): informational `[INFO] - ...` lines on stderr (c-blosc2's
    /// `BLOSC_INFO` macro; only the memory-mapped file open prints one here).
    pub const INFO: &str = "BLOSC_INFO";
    /// Present (any value): c-blosc2's `[error] - ...` / `[info] - ...` trace lines on stderr
    /// (here: what loading a dynamic plugin tried and why it failed).
    pub const TRACE: &str = "BLOSC_TRACE";
}

/// Prints a `BLOSC_TRACE` line (`[level] - message (b2frame)`, c-blosc2's layout) on stderr
/// when the variable is set.
pub fn trace(level: &str, msg: &str) {
    if std::env::var_os(names::TRACE).is_some() {
        eprintln!("[{level}] - {msg} (b2frame)");
    }
}

/// Looks a variable up in the process environment (non-UTF-8 values are kept lossily, which only
/// matters for names, where a lossy value can never match a valid name anyway).
pub fn from_process(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v: OsString| v.to_string_lossy().into_owned())
}

/// glibc `strtol(s, NULL, 10)`: skips leading white space, reads an optional sign and the longest
/// run of decimal digits, saturating at `i64::MIN`/`i64::MAX` (`LONG_MIN`/`LONG_MAX` on LP64).
/// Returns `None` when no digit was read (C returns 0 then, without `EINVAL` in glibc; callers
/// treat `None` as 0 where that matters).
pub fn strtol(s: &str) -> Option<i64> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let negative = match bytes.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let start = i;
    // Accumulate as a negative number so that i64::MIN is representable.
    let mut acc: i64 = 0;
    let mut overflow = false;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        let d = i64::from(bytes[i] - b'0');
        match acc.checked_mul(10).and_then(|v| v.checked_sub(d)) {
            Some(v) => acc = v,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start {
        return None;
    }
    Some(match (negative, overflow) {
        (true, true) => i64::MIN,
        (false, true) => i64::MAX,
        (true, false) => acc,
        (false, false) => acc.checked_neg().unwrap_or(i64::MAX),
    })
}

/// The shuffle filter id named by `BLOSC_SHUFFLE` (`None` when unset or not recognised).
pub fn shuffle(lookup: impl Fn(&str) -> Option<String>) -> Option<u8> {
    match lookup(names::SHUFFLE)?.as_str() {
        "NOSHUFFLE" => Some(0),
        "SHUFFLE" => Some(1),
        "BITSHUFFLE" => Some(2),
        _ => None,
    }
}

/// `BLOSC_DELTA`: `Some(true)` for "1", `Some(false)` for "0", else `None`.
pub fn delta(lookup: impl Fn(&str) -> Option<String>) -> Option<bool> {
    match lookup(names::DELTA)?.as_str() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

/// `BLOSC_SPLITMODE` as a `BLOSC_*_SPLIT` value (`None` when unset or not recognised).
pub fn splitmode(lookup: impl Fn(&str) -> Option<String>) -> Option<i32> {
    match lookup(names::SPLITMODE)?.as_str() {
        "ALWAYS" => Some(1),
        "NEVER" => Some(2),
        "AUTO" => Some(3),
        "FORWARD_COMPAT" => Some(4),
        _ => None,
    }
}

/// The raw `strtol` value of a numeric variable: `None` when unset, `Some(0)` when set without
/// digits (what C's `strtol` returns then).
pub fn number(lookup: impl Fn(&str) -> Option<String>, name: &str) -> Option<i64> {
    lookup(name).map(|v| strtol(&v).unwrap_or(0))
}

/// A numeric variable accepted only when `> 0` after the reference's cast to `i32`
/// (`(int32_t) strtol(...)`), as for `BLOSC_TYPESIZE` and `BLOSC_BLOCKSIZE` in contexts.
pub fn positive_i32(lookup: impl Fn(&str) -> Option<String>, name: &str) -> Option<i32> {
    let v = number(lookup, name)? as i32;
    (v > 0).then_some(v)
}

/// A numeric variable accepted when the `long` value is `> 0`, then cast to `i32` as the global
/// API does (`typesize = (int32_t)value`; the cast may wrap, as in C).
pub fn positive_long_as_i32(lookup: impl Fn(&str) -> Option<String>, name: &str) -> Option<i32> {
    let v = number(lookup, name)?;
    (v > 0).then_some(v as i32)
}

/// `BLOSC_CLEVEL`: accepted when `>= 0` (no upper bound here; the compressor validates it).
pub fn clevel(lookup: impl Fn(&str) -> Option<String>) -> Option<i64> {
    let v = number(lookup, names::CLEVEL)?;
    (v >= 0).then_some(v)
}

/// `BLOSC_NTHREADS` for a new context: `(int16_t) strtol(...)`, accepted when `> 0`.
pub fn nthreads_for_context(lookup: impl Fn(&str) -> Option<String>) -> Option<i16> {
    let v = number(lookup, names::NTHREADS)? as i16;
    (v > 0).then_some(v)
}

/// `BLOSC_NTHREADS` as `blosc2_decompress` reads it: unset → `None`; set but `<= 0` or
/// `> i16::MAX` → `Some(Err(()))` (the call fails with `INVALID_PARAM`); else `Some(Ok(n))`.
pub fn nthreads_for_decompress(
    lookup: impl Fn(&str) -> Option<String>,
) -> Option<std::result::Result<i16, ()>> {
    let v = number(lookup, names::NTHREADS)?;
    Some(if v <= 0 || v > i64::from(i16::MAX) {
        Err(())
    } else {
        Ok(v as i16)
    })
}

/// Whether a presence-only flag (`BLOSC_NOLOCK`, `BLOSC_BLOSC1_COMPAT`) is set, whatever its value.
pub fn is_set(lookup: impl Fn(&str) -> Option<String>, name: &str) -> bool {
    lookup(name).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn strtol_follows_glibc() {
        assert_eq!(strtol("12"), Some(12));
        assert_eq!(strtol("  -7xyz"), Some(-7));
        assert_eq!(strtol("+3"), Some(3));
        assert_eq!(strtol("abc"), None);
        assert_eq!(strtol(""), None);
        assert_eq!(strtol("-"), None);
        assert_eq!(strtol("99999999999999999999999"), Some(i64::MAX));
        assert_eq!(strtol("-99999999999999999999999"), Some(i64::MIN));
        assert_eq!(strtol("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(strtol("9223372036854775807"), Some(i64::MAX));
    }

    #[test]
    fn names_are_matched_exactly() {
        assert_eq!(shuffle(env(&[("BLOSC_SHUFFLE", "BITSHUFFLE")])), Some(2));
        assert_eq!(shuffle(env(&[("BLOSC_SHUFFLE", "bitshuffle")])), None);
        assert_eq!(shuffle(env(&[])), None);
        assert_eq!(delta(env(&[("BLOSC_DELTA", "1")])), Some(true));
        assert_eq!(delta(env(&[("BLOSC_DELTA", "yes")])), None);
        assert_eq!(splitmode(env(&[("BLOSC_SPLITMODE", "NEVER")])), Some(2));
        assert_eq!(
            splitmode(env(&[("BLOSC_SPLITMODE", "FORWARD_COMPAT")])),
            Some(4)
        );
        assert_eq!(splitmode(env(&[("BLOSC_SPLITMODE", "always")])), None);
    }

    #[test]
    fn numbers_apply_the_reference_casts() {
        let e = env(&[("BLOSC_TYPESIZE", "4294967304"), ("BLOSC_BLOCKSIZE", "0")]);
        // (int32_t) 4294967304 == 8 in both readings; the context reader casts first.
        assert_eq!(positive_i32(&e, names::TYPESIZE), Some(8));
        assert_eq!(positive_long_as_i32(&e, names::TYPESIZE), Some(8));
        assert_eq!(positive_i32(&e, names::BLOCKSIZE), None);
        assert_eq!(clevel(env(&[("BLOSC_CLEVEL", "0")])), Some(0));
        assert_eq!(clevel(env(&[("BLOSC_CLEVEL", "-1")])), None);
        assert_eq!(clevel(env(&[("BLOSC_CLEVEL", "junk")])), Some(0));
        assert_eq!(
            nthreads_for_context(env(&[("BLOSC_NTHREADS", "65537")])),
            Some(1)
        );
        assert_eq!(
            nthreads_for_context(env(&[("BLOSC_NTHREADS", "65536")])),
            None
        );
        assert_eq!(
            nthreads_for_decompress(env(&[("BLOSC_NTHREADS", "40000")])),
            Some(Err(()))
        );
        assert_eq!(
            nthreads_for_decompress(env(&[("BLOSC_NTHREADS", "x")])),
            Some(Err(()))
        );
        assert_eq!(
            nthreads_for_decompress(env(&[("BLOSC_NTHREADS", "3")])),
            Some(Ok(3))
        );
        assert_eq!(nthreads_for_decompress(env(&[])), None);
        assert!(is_set(env(&[("BLOSC_NOLOCK", "")]), names::NOLOCK));
        assert!(!is_set(env(&[]), names::NOLOCK));
    }
}
