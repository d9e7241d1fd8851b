//! Human names for the numeric codes a frame stores (blosc2.h's `BLOSC_*` constants).

/// Codec name for a Blosc2 compcode.
pub fn codec(code: u8) -> String {
    match code {
        0 => "blosclz".into(),
        1 => "lz4".into(),
        2 => "lz4hc".into(),
        4 => "zlib".into(),
        5 => "zstd".into(),
        c => format!("codec{c}"),
    }
}

/// The compcode for a codec name given on the command line.
pub fn codec_code(name: &str) -> Option<u8> {
    Some(match name.to_ascii_lowercase().as_str() {
        "blosclz" => 0,
        "lz4" => 1,
        "lz4hc" => 2,
        "zlib" => 4,
        "zstd" => 5,
        _ => return None,
    })
}

/// Filter name for a filter id.
pub fn filter(id: u8) -> String {
    match id {
        0 => "nofilter".into(),
        1 => "shuffle".into(),
        2 => "bitshuffle".into(),
        3 => "delta".into(),
        4 => "trunc_prec".into(),
        f => format!("filter{f}"),
    }
}

/// The filter id for a filter name given on the command line.
pub fn filter_code(name: &str) -> Option<u8> {
    Some(match name.to_ascii_lowercase().as_str() {
        "nofilter" | "none" => 0,
        "shuffle" => 1,
        "bitshuffle" => 2,
        "delta" => 3,
        "trunc_prec" => 4,
        _ => return None,
    })
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
        f => b2frame_core::chunk::header::complib_name(f)
            .map(|n| n.to_ascii_lowercase())
            .unwrap_or_else(|| format!("format{f}")),
    }
}
