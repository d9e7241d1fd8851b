//! Human names for the numeric codes a frame stores (blosc2.h's `BLOSC_*` constants).

use blosc2_frame::{Codec, Filter, Origin};

/// Codec name for a Blosc2 compcode, from the codec table (`codec<ID>` for an unknown id).
pub fn codec(code: u8) -> String {
    Codec::from(code).to_string()
}

/// The compcode for a codec name given on the command line (any case): the built-in codecs,
/// which need nothing but the data.
pub fn codec_code(name: &str) -> Option<u8> {
    let c: Codec = name.to_ascii_lowercase().parse().ok()?;
    (c.info()?.origin == Origin::BuiltIn).then_some(c.id())
}

/// Filter name for a filter id, from the filter table (`filter<ID>` for an unknown id).
pub fn filter(id: u8) -> String {
    Filter::from(id).to_string()
}

/// The filter id for a filter name given on the command line (any case; `none` too): the
/// built-in filters.
pub fn filter_code(name: &str) -> Option<u8> {
    let name = name.to_ascii_lowercase();
    if name == "none" {
        return Some(Filter::NoFilter.id());
    }
    let f: Filter = name.parse().ok()?;
    (f.info()?.origin == Origin::BuiltIn).then_some(f.id())
}

/// A `--filter` item, `NAME` or `NAME:META` (e.g. `trunc_prec:12` keeps 12 mantissa bits,
/// `delta`): its filter id and meta byte.
pub fn filter_spec(item: &str) -> Option<(u8, u8)> {
    let (name, meta) = match item.split_once(':') {
        Some((n, m)) => (n, m.trim().parse::<u8>().ok()?),
        None => (item, 0),
    };
    Some((filter_code(name.trim())?, meta))
}

/// The active filters of a pipeline (slots holding 0 are skipped), e.g. `shuffle`.
pub fn pipeline(filters: &[u8; 6], meta: &[u8; 6]) -> Vec<String> {
    filters
        .iter()
        .zip(meta)
        .filter(|(f, _)| **f != 0)
        .map(|(f, m)| match (*f, *m) {
            (4, m) | (3, m) if m != 0 => format!("{}({m})", filter(*f)),
            (f, _) => filter(f),
        })
        .collect()
}

/// Name of a chunk header special code (bits 4-6 of byte 31).
pub fn special(code: u8) -> &'static str {
    match code {
        0 => "-",
        1 => "zeros",
        2 => "nan",
        3 => "value",
        4 => "uninit",
        _ => "invalid",
    }
}

/// Codec name for a chunk header's codec format (flags bits 5-7): the library, since LZ4 and
/// LZ4HC share a format; format 6 means a user codec named by the `udcompcode` byte.
pub fn chunk_codec(format: u8, udcompcode: u8) -> String {
    match format {
        6 => codec(udcompcode),
        f => blosc2_frame::chunk::header::complib_name(f)
            .map(|n| n.to_ascii_lowercase())
            .unwrap_or_else(|| format!("format{f}")),
    }
}
