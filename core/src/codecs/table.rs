//! The codec table: one entry per compcode, with its name, library, format version and where
//! its code comes from. Everything that names a codec reads it: the chunk writer (which
//! codecs run in-process), the C registries and `blosc2_compname_to_compcode`,
//! `blosc2_list_compressors`, `blosc2_get_complib_info`, the command-line tool.
//!
//! The ids are c-blosc2's (`BLOSC_BLOSCLZ` ... in `blosc2.h`, `BLOSC_CODEC_*` in
//! `blosc2/codecs-registry.h`): 0..=31 built in, 32..=159 registered by the library at init
//! (the plugins), 160..=255 registered at run time by the program.

#![forbid(unsafe_code)]

use super::{lz4, zstd};
use crate::registry::{self, Origin};
use std::fmt;
use std::str::FromStr;

/// A Blosc2 codec: the compressor a chunk's streams are encoded with.
///
/// Named variants are the codecs c-blosc2 3.3 knows; [`Codec::Other`] holds any other id, one
/// registered at run time (160..=255) or one this library does not know (compressing with it
/// fails with [`Error::CodecSupport`](crate::error::Error::CodecSupport)). Ids convert both ways
/// without loss, and [`Codec::from`] always gives the named variant when there is one.
///
/// ```
/// use blosc2_frame::Codec;
///
/// assert_eq!(Codec::Zstd.id(), 5);
/// assert_eq!(Codec::from(1), Codec::Lz4);
/// assert_eq!(Codec::from(200), Codec::Other(200));
/// assert_eq!("lz4hc".parse::<Codec>(), Ok(Codec::Lz4Hc));
/// assert_eq!(Codec::Zlib.to_string(), "zlib");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Codec {
    /// BloscLZ (0), Blosc's own LZ77 codec; the default.
    #[default]
    BloscLz,
    /// LZ4 (1).
    Lz4,
    /// LZ4 in high-compression mode (2); read by the LZ4 decoder.
    Lz4Hc,
    /// zlib (4): deflate with the zlib wrapper.
    Zlib,
    /// Zstandard (5).
    Zstd,
    /// NDLZ (32): Lempel-Ziv over the cells of an N-dimensional block (reads the `b2nd`
    /// metalayer).
    Ndlz,
    /// ZFP in fixed-accuracy mode (33; the codec meta byte holds the accuracy).
    ZfpAccuracy,
    /// ZFP in fixed-precision mode (34).
    ZfpPrecision,
    /// ZFP in fixed-rate mode (35).
    ZfpRate,
    /// OpenHTJ2K (36), loaded from the `blosc2_openhtj2k` plugin package.
    OpenHtj2k,
    /// Grok JPEG 2000 (37), loaded from the `blosc2_grok` plugin package.
    Grok,
    /// OpenZL (38), loaded from the `blosc2_openzl` plugin package.
    OpenZl,
    /// JPEG 2000 (39), loaded from the `blosc2_j2k` plugin package.
    J2k,
    /// High-throughput JPEG 2000 (40), loaded from the `blosc2_htj2k` plugin package.
    Htj2k,
    /// Any other compcode.
    Other(u8),
}

/// The named codecs and their ids, in id order.
const IDS: [(Codec, u8); 14] = [
    (Codec::BloscLz, 0),
    (Codec::Lz4, 1),
    (Codec::Lz4Hc, 2),
    (Codec::Zlib, 4),
    (Codec::Zstd, 5),
    (Codec::Ndlz, 32),
    (Codec::ZfpAccuracy, 33),
    (Codec::ZfpPrecision, 34),
    (Codec::ZfpRate, 35),
    (Codec::OpenHtj2k, 36),
    (Codec::Grok, 37),
    (Codec::OpenZl, 38),
    (Codec::J2k, 39),
    (Codec::Htj2k, 40),
];

impl Codec {
    /// The compcode stored in chunk headers and frames.
    pub const fn id(self) -> u8 {
        match self {
            Codec::BloscLz => 0,
            Codec::Lz4 => 1,
            Codec::Lz4Hc => 2,
            Codec::Zlib => 4,
            Codec::Zstd => 5,
            Codec::Ndlz => 32,
            Codec::ZfpAccuracy => 33,
            Codec::ZfpPrecision => 34,
            Codec::ZfpRate => 35,
            Codec::OpenHtj2k => 36,
            Codec::Grok => 37,
            Codec::OpenZl => 38,
            Codec::J2k => 39,
            Codec::Htj2k => 40,
            Codec::Other(id) => id,
        }
    }

    /// What the table says about this codec, `None` when it is neither one this build knows
    /// nor one registered at run time.
    ///
    /// ```
    /// use blosc2_frame::{Codec, Origin};
    ///
    /// let info = Codec::Lz4Hc.info().unwrap();
    /// assert_eq!((info.name.as_ref(), info.library.as_ref()), ("lz4hc", "LZ4"));
    /// assert_eq!(info.origin, Origin::BuiltIn);
    /// assert!(Codec::Other(3).info().is_none());
    /// ```
    pub fn info(self) -> Option<CodecInfo> {
        codec(self.id())
    }

    /// Whether this build compresses and decompresses with the codec itself (the built-in
    /// codecs and the compiled-in plugins), without anything registered or loaded.
    ///
    /// ```
    /// use blosc2_frame::Codec;
    ///
    /// assert!(Codec::Zstd.is_builtin() && Codec::Ndlz.is_builtin());
    /// assert!(!Codec::Htj2k.is_builtin());
    /// ```
    pub fn is_builtin(self) -> bool {
        matches!(
            static_entry(self.id()).map(|e| e.origin),
            Some(Origin::BuiltIn | Origin::Plugin)
        )
    }
}

impl From<u8> for Codec {
    fn from(id: u8) -> Codec {
        IDS.iter()
            .find(|&&(_, i)| i == id)
            .map_or(Codec::Other(id), |&(c, _)| c)
    }
}

impl From<Codec> for u8 {
    fn from(c: Codec) -> u8 {
        c.id()
    }
}

impl fmt::Display for Codec {
    /// The codec's name (`zstd`), or `codec<ID>` for an id nothing names.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.info() {
            Some(info) => f.write_str(&info.name),
            None => write!(f, "codec{}", self.id()),
        }
    }
}

impl FromStr for Codec {
    type Err = crate::error::Error;

    /// The codec with this exact name (as `blosc2_compname_to_compcode` matches it), among
    /// the table's and the registered ones; [`Error::NotFound`](crate::error::Error::NotFound)
    /// otherwise.
    fn from_str(name: &str) -> crate::error::Result<Codec> {
        codec_id_by_name(name.as_bytes())
            .map(Codec::from)
            .ok_or(crate::error::Error::NotFound)
    }
}

/// What the codec table holds for one codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodecInfo {
    /// The codec.
    pub codec: Codec,
    /// Its name, as `blosc2_compcode_to_compname` gives it (`"zstd"`).
    pub name: std::borrow::Cow<'static, str>,
    /// The library code `blosc2_get_complib_info` returns: the chunk format code for the
    /// built-in codecs (LZ4 and LZ4HC share 1), the compcode for the plugins, the registered
    /// value for codecs registered at run time.
    pub complib: u8,
    /// The library name (`"LZ4"`); plugins and registered codecs give their own name.
    pub library: std::borrow::Cow<'static, str>,
    /// The codec format version written in chunk headers (byte 1).
    pub version: u8,
    /// Where its code comes from.
    pub origin: Origin,
}

impl CodecInfo {
    /// The version of the library behind the codec, as `blosc2_get_complib_info` reports it
    /// (`"unknown"` for plugins and registered codecs, like c-blosc2).
    pub fn library_version(&self) -> String {
        match self.codec {
            Codec::BloscLz => BLOSCLZ_VERSION.to_string(),
            Codec::Lz4 | Codec::Lz4Hc => lz4::version(),
            Codec::Zlib => ZLIB_RS_VERSION.to_string(),
            Codec::Zstd => zstd::version(),
            _ => "unknown".to_string(),
        }
    }
}

/// The BloscLZ stream format release our BloscLZ codec reads and writes.
const BLOSCLZ_VERSION: &str = "2.5.3";
/// The zlib-rs release line our deflate comes from (Cargo.toml pins `zlib-rs = "0.6"`).
const ZLIB_RS_VERSION: &str = "0.6";

/// One row of the static table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StaticCodec {
    pub(crate) id: u8,
    pub(crate) name: &'static str,
    pub(crate) complib: u8,
    pub(crate) library: &'static str,
    pub(crate) origin: Origin,
}

const fn row(
    id: u8,
    name: &'static str,
    complib: u8,
    library: &'static str,
    origin: Origin,
) -> StaticCodec {
    StaticCodec {
        id,
        name,
        complib,
        library,
        origin,
    }
}

/// The codecs of this build, in c-blosc2's order: the built-in ones, then the plugins it
/// registers in `blosc2_init` (ZFP only with the `zfp` feature, like a c-blosc2 built
/// without zfp, which does not register them).
pub(crate) const CODECS: &[StaticCodec] = &[
    row(0, "blosclz", 0, "BloscLZ", Origin::BuiltIn),
    row(1, "lz4", 1, "LZ4", Origin::BuiltIn),
    row(2, "lz4hc", 1, "LZ4", Origin::BuiltIn),
    row(4, "zlib", 3, "Zlib", Origin::BuiltIn),
    row(5, "zstd", 4, "Zstd", Origin::BuiltIn),
    row(32, "ndlz", 32, "ndlz", Origin::Plugin),
    #[cfg(feature = "zfp")]
    row(33, "zfp_acc", 33, "zfp_acc", Origin::Plugin),
    #[cfg(feature = "zfp")]
    row(34, "zfp_prec", 34, "zfp_prec", Origin::Plugin),
    #[cfg(feature = "zfp")]
    row(35, "zfp_rate", 35, "zfp_rate", Origin::Plugin),
    row(36, "openhtj2k", 36, "openhtj2k", Origin::Dynamic),
    row(37, "grok", 37, "grok", Origin::Dynamic),
    row(38, "openzl", 38, "openzl", Origin::Dynamic),
    row(39, "j2k", 39, "j2k", Origin::Dynamic),
    row(40, "htj2k", 40, "htj2k", Origin::Dynamic),
];

/// The static row of compcode `id`.
pub(crate) fn static_entry(id: u8) -> Option<&'static StaticCodec> {
    CODECS.iter().find(|c| c.id == id)
}

impl StaticCodec {
    pub(crate) fn info(&self) -> CodecInfo {
        CodecInfo {
            codec: Codec::from(self.id),
            name: self.name.into(),
            complib: self.complib,
            library: self.library.into(),
            version: 1,
            origin: self.origin,
        }
    }
}

/// The names of the built-in codecs, comma-separated (`blosc2_list_compressors`).
///
/// ```
/// assert_eq!(blosc2_frame::codecs::list_compressors(), "blosclz,lz4,lz4hc,zlib,zstd");
/// ```
pub fn list_compressors() -> String {
    CODECS
        .iter()
        .filter(|c| c.origin == Origin::BuiltIn)
        .map(|c| c.name)
        .collect::<Vec<_>>()
        .join(",")
}

/// The library name of a chunk format code (flags bits 5-7), as `blosc2_cbuffer_complib`
/// reports it: `"BloscLZ"`, `"LZ4"`, `"Zlib"`, `"Zstd"`; `None` for the others.
pub fn format_library(format: u8) -> Option<&'static str> {
    CODECS
        .iter()
        .find(|c| c.origin == Origin::BuiltIn && c.complib == format)
        .map(|c| c.library)
}

/// What the table says about codec `id`: this build's row, else the registered codec.
pub fn codec(id: u8) -> Option<CodecInfo> {
    static_entry(id)
        .map(StaticCodec::info)
        .or_else(|| registry::registered_codec(id).map(|r| registered_info(&r)))
}

/// Every codec of the table: this build's, then the registered ones.
pub fn codecs() -> Vec<CodecInfo> {
    let mut v: Vec<CodecInfo> = CODECS.iter().map(StaticCodec::info).collect();
    v.extend(registry::registered_codecs().iter().map(registered_info));
    v
}

/// The compcode of the codec named exactly `name` (`blosc2_compname_to_compcode`; bytes, as
/// C names are): this build's codecs, then the registered ones.
pub fn codec_id_by_name(name: &[u8]) -> Option<u8> {
    if let Some(c) = CODECS.iter().find(|c| c.name.as_bytes() == name) {
        return Some(c.id);
    }
    registry::registered_codec_named(name).map(|r| r.id as u8)
}

/// The table's entry for a registered codec.
fn registered_info(r: &registry::Registration) -> CodecInfo {
    CodecInfo {
        codec: Codec::from(r.id as u8),
        name: r.display_name().into(),
        complib: r.complib,
        library: complib_name(r.complib).unwrap_or_default().into(),
        version: r.version,
        origin: Origin::Registered,
    }
}

/// The library name of complib (or chunk format) code `code`, as `blosc2_cbuffer_complib`
/// and `blosc2_get_complib_info` report it: a built-in library (`"Zstd"`), a plugin's name
/// (its compcode is its complib), or the name of the first codec registered with it.
pub fn complib_name(code: u8) -> Option<String> {
    if let Some(lib) = format_library(code) {
        return Some(lib.to_string());
    }
    if let Some(p) = static_entry(code).filter(|c| c.origin != Origin::BuiltIn) {
        return Some(p.name.to_string());
    }
    registry::registered_codecs()
        .iter()
        .find(|r| r.complib == code)
        .map(registry::Registration::display_name)
}
