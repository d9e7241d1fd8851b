//! The codec, filter and tuner table against the headers: the constants of `blosc2.h` and
//! `blosc2/*-registry.h` are the ABI (ids, names, library codes), the table is what the library
//! runs on, and the two must say the same thing. Checked for our headers and for the reference
//! c-blosc2 3.3.5's.

use b2frame::codecs::table as codec_table;
use b2frame::codecs::Codec;
use b2frame::filters::table as filter_table;
use b2frame::filters::Filter;
use b2frame::registry::{self, Origin};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The integer constants (`NAME = value` inside enums, a number or another constant) and
/// the string macros (`#define NAME "value"`) of the headers under `dir`.
fn constants(dir: &Path) -> (HashMap<String, i64>, HashMap<String, String>) {
    let mut ints = HashMap::new();
    let mut strs = HashMap::new();
    for f in [
        "blosc2.h",
        "blosc2/codecs-registry.h",
        "blosc2/filters-registry.h",
        "blosc2/tuners-registry.h",
    ] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        for line in text.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("#").map(str::trim_start) {
                let rest = rest.strip_prefix("define").map(str::trim);
                if let Some((name, val)) = rest.and_then(|r| r.split_once(char::is_whitespace)) {
                    let val = val.trim();
                    if val.starts_with('"') && val.ends_with('"') && val.len() >= 2 {
                        strs.insert(name.to_string(), val[1..val.len() - 1].to_string());
                    }
                }
                continue;
            }
            let Some((name, val)) = line.split_once('=') else {
                continue;
            };
            let name = name.trim();
            let val = val.trim().trim_end_matches(',').trim();
            if !name.starts_with("BLOSC") || name.contains(' ') {
                continue;
            }
            let v = if let Some(h) = val.strip_prefix("0x") {
                i64::from_str_radix(h, 16).ok()
            } else {
                val.parse::<i64>().ok().or_else(|| ints.get(val).copied())
            };
            if let Some(v) = v {
                ints.insert(name.to_string(), v);
            }
        }
    }
    (ints, strs)
}

/// The header name of each named codec (`BLOSC_<X>` or `BLOSC_CODEC_<X>`).
const CODEC_NAMES: [(Codec, &str); 14] = [
    (Codec::BloscLz, "BLOSC_BLOSCLZ"),
    (Codec::Lz4, "BLOSC_LZ4"),
    (Codec::Lz4Hc, "BLOSC_LZ4HC"),
    (Codec::Zlib, "BLOSC_ZLIB"),
    (Codec::Zstd, "BLOSC_ZSTD"),
    (Codec::Ndlz, "BLOSC_CODEC_NDLZ"),
    (Codec::ZfpAccuracy, "BLOSC_CODEC_ZFP_FIXED_ACCURACY"),
    (Codec::ZfpPrecision, "BLOSC_CODEC_ZFP_FIXED_PRECISION"),
    (Codec::ZfpRate, "BLOSC_CODEC_ZFP_FIXED_RATE"),
    (Codec::OpenHtj2k, "BLOSC_CODEC_OPENHTJ2K"),
    (Codec::Grok, "BLOSC_CODEC_GROK"),
    (Codec::OpenZl, "BLOSC_CODEC_OPENZL"),
    (Codec::J2k, "BLOSC_CODEC_J2K"),
    (Codec::Htj2k, "BLOSC_CODEC_HTJ2K"),
];

/// The header name of each named filter.
const FILTER_NAMES: [(Filter, &str); 10] = [
    (Filter::NoFilter, "BLOSC_NOFILTER"),
    (Filter::Shuffle, "BLOSC_SHUFFLE"),
    (Filter::BitShuffle, "BLOSC_BITSHUFFLE"),
    (Filter::Delta, "BLOSC_DELTA"),
    (Filter::TruncPrec, "BLOSC_TRUNC_PREC"),
    (Filter::NdCell, "BLOSC_FILTER_NDCELL"),
    (Filter::NdMean, "BLOSC_FILTER_NDMEAN"),
    (Filter::ByteDeltaBuggy, "BLOSC_FILTER_BYTEDELTA_BUGGY"),
    (Filter::ByteDelta, "BLOSC_FILTER_BYTEDELTA"),
    (Filter::IntTrunc, "BLOSC_FILTER_INT_TRUNC"),
];

fn check_headers(dir: &Path) {
    let (ints, strs) = constants(dir);
    let int = |n: &str| {
        *ints
            .get(n)
            .unwrap_or_else(|| panic!("{}: no {n}", dir.display()))
    };
    for (codec, hname) in CODEC_NAMES {
        assert_eq!(
            int(hname),
            i64::from(codec.id()),
            "{hname} in {}",
            dir.display()
        );
        assert_eq!(Codec::from(codec.id()), codec);
        let Some(info) = codec.info() else {
            // Only ZFP may be missing (a build without the `zfp` feature).
            let zfp = matches!(
                codec,
                Codec::ZfpAccuracy | Codec::ZfpPrecision | Codec::ZfpRate
            );
            assert!(
                zfp && !cfg!(feature = "zfp"),
                "{codec:?} missing from the table"
            );
            continue;
        };
        if let Some(base) = hname
            .strip_prefix("BLOSC_")
            .filter(|_| info.origin == Origin::BuiltIn)
        {
            // Built-in codecs: the name, the library code and the library name macros.
            assert_eq!(
                strs[&format!("BLOSC_{base}_COMPNAME")],
                info.name,
                "{hname}"
            );
            let lib = if base == "LZ4HC" { "LZ4" } else { base };
            assert_eq!(
                int(&format!("BLOSC_{lib}_LIB")),
                i64::from(info.complib),
                "{hname}"
            );
            assert_eq!(
                int(&format!("BLOSC_{base}_FORMAT")),
                i64::from(info.complib)
            );
            assert_eq!(
                strs[&format!("BLOSC_{lib}_LIBNAME")],
                info.library,
                "{hname}"
            );
            assert!(i64::from(codec.id()) < int("BLOSC_LAST_CODEC"));
        } else {
            assert!(
                (int("BLOSC2_GLOBAL_REGISTERED_CODECS_START")
                    ..=int("BLOSC2_GLOBAL_REGISTERED_CODECS_STOP"))
                    .contains(&i64::from(codec.id())),
                "{hname}"
            );
            assert_eq!(
                info.complib,
                codec.id(),
                "a plugin's complib is its compcode"
            );
        }
    }
    // Every row of the table has its constant in the header.
    for info in codec_table::codecs() {
        assert!(
            CODEC_NAMES.iter().any(|&(c, _)| c == info.codec),
            "{} has no header constant",
            info.name
        );
    }
    for (filter, hname) in FILTER_NAMES {
        assert_eq!(
            int(hname),
            i64::from(filter.id()),
            "{hname} in {}",
            dir.display()
        );
        assert_eq!(Filter::from(filter.id()), filter);
        assert!(filter.info().is_some(), "{filter:?} missing from the table");
    }
    let plugins = filter_table::filters()
        .into_iter()
        .filter(|f| f.origin == Origin::Plugin)
        .count();
    assert_eq!(int("BLOSC2_GLOBAL_REGISTERED_FILTERS"), plugins as i64);
    assert_eq!(int("BLOSC_LAST_FILTER"), 5);
    for info in filter_table::filters() {
        assert!(FILTER_NAMES.iter().any(|&(f, _)| f == info.filter));
    }
    let stune = registry::tuner(int("BLOSC_STUNE") as i32).expect("stune");
    assert_eq!(stune.origin, Origin::BuiltIn);
    let btune = registry::tuner(int("BLOSC_BTUNE") as i32).expect("btune");
    assert_eq!(
        (btune.name.as_ref(), btune.origin),
        ("btune", Origin::Dynamic)
    );
    assert_eq!(
        int("BLOSC2_USER_REGISTERED_CODECS_START"),
        i64::from(registry::USER_START)
    );
}

#[test]
fn our_headers_match_the_table() {
    check_headers(&crate::common::project_root().join("include"));
}

#[test]
fn reference_headers_match_the_table() {
    let lib = crate::common::reference::reference_path();
    let include: PathBuf = lib
        .parent()
        .and_then(Path::parent)
        .expect("blosc2/lib/libblosc2.so.9")
        .join("include");
    check_headers(&include);
}

#[test]
fn names_and_ids_round_trip() {
    for info in codec_table::codecs() {
        assert_eq!(info.name.parse::<Codec>(), Ok(info.codec));
        assert_eq!(info.codec.to_string(), info.name);
        assert_eq!(
            codec_table::codec_id_by_name(info.name.as_bytes()),
            Some(info.codec.id())
        );
    }
    for info in filter_table::filters() {
        assert_eq!(info.name.parse::<Filter>(), Ok(info.filter));
    }
    assert_eq!(Codec::from(3), Codec::Other(3));
    assert_eq!(Codec::Other(3).to_string(), "codec3");
    assert!(
        "LZ4".parse::<Codec>().is_err(),
        "names are exact, as in c-blosc2"
    );
    assert_eq!(
        b2frame::codecs::list_compressors(),
        "blosclz,lz4,lz4hc,zlib,zstd"
    );
}
