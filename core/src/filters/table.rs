//! The filter table: one entry per filter id, with its name, version and where its code comes
//! from (see [`crate::registry`]). Ids are c-blosc2's: `BLOSC_NOFILTER` ... `BLOSC_TRUNC_PREC`
//! (0..=4) built in, 5..=31 reserved, `BLOSC_FILTER_*` (32..=36) the plugins c-blosc2
//! registers at init, 160..=255 registered at run time.

#![forbid(unsafe_code)]

use crate::registry::{self, Origin};
use std::fmt;
use std::str::FromStr;

/// A Blosc2 filter: a transform applied to each block before its codec, in one of the six
/// slots of the pipeline.
///
/// [`Filter::Other`] holds any id without a name here (one registered at run time, 160..=255,
/// or an unknown one); ids convert both ways without loss.
///
/// ```
/// use blosc2_frame::Filter;
///
/// assert_eq!(Filter::Shuffle.id(), 1);
/// assert_eq!(Filter::from(35), Filter::ByteDelta);
/// assert_eq!("bitshuffle".parse::<Filter>(), Ok(Filter::BitShuffle));
/// assert_eq!(Filter::TruncPrec.to_string(), "trunc_prec");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Filter {
    /// An empty slot (0).
    #[default]
    NoFilter,
    /// Byte shuffle (1): groups the n-th bytes of all items; the slot's meta byte, if not
    /// 0, is the item size to shuffle with.
    Shuffle,
    /// Bit shuffle (2): groups the n-th bits of all items.
    BitShuffle,
    /// Delta against the chunk's first block (3).
    Delta,
    /// Truncates the mantissa of floats to the slot's meta byte of bits (4); lossy.
    TruncPrec,
    /// Groups the cells of an N-dimensional block (32; reads the `b2nd` metalayer).
    NdCell,
    /// Replaces each N-dimensional cell by its mean (33); lossy.
    NdMean,
    /// Byte-wise delta as c-blosc2 2.8 wrote it (34), kept to read old chunks.
    ByteDeltaBuggy,
    /// Byte-wise delta of shuffled streams (35).
    ByteDelta,
    /// Truncates the precision of integers (36); lossy.
    IntTrunc,
    /// Any other id.
    Other(u8),
}

const IDS: [(Filter, u8); 10] = [
    (Filter::NoFilter, 0),
    (Filter::Shuffle, 1),
    (Filter::BitShuffle, 2),
    (Filter::Delta, 3),
    (Filter::TruncPrec, 4),
    (Filter::NdCell, 32),
    (Filter::NdMean, 33),
    (Filter::ByteDeltaBuggy, 34),
    (Filter::ByteDelta, 35),
    (Filter::IntTrunc, 36),
];

impl Filter {
    /// The filter id stored in chunk headers.
    pub const fn id(self) -> u8 {
        match self {
            Filter::NoFilter => 0,
            Filter::Shuffle => 1,
            Filter::BitShuffle => 2,
            Filter::Delta => 3,
            Filter::TruncPrec => 4,
            Filter::NdCell => 32,
            Filter::NdMean => 33,
            Filter::ByteDeltaBuggy => 34,
            Filter::ByteDelta => 35,
            Filter::IntTrunc => 36,
            Filter::Other(id) => id,
        }
    }

    /// What the table says about this filter (`None` for an id nothing names).
    ///
    /// ```
    /// use blosc2_frame::{Filter, Origin};
    ///
    /// assert_eq!(Filter::ByteDelta.info().unwrap().origin, Origin::Plugin);
    /// assert!(Filter::Other(7).info().is_none());
    /// ```
    pub fn info(self) -> Option<FilterInfo> {
        filter(self.id())
    }
}

impl From<u8> for Filter {
    fn from(id: u8) -> Filter {
        IDS.iter()
            .find(|&&(_, i)| i == id)
            .map_or(Filter::Other(id), |&(f, _)| f)
    }
}

impl From<Filter> for u8 {
    fn from(f: Filter) -> u8 {
        f.id()
    }
}

impl fmt::Display for Filter {
    /// The filter's name (`shuffle`), or `filter<ID>` for an id nothing names.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.info() {
            Some(info) => f.write_str(&info.name),
            None => write!(f, "filter{}", self.id()),
        }
    }
}

impl FromStr for Filter {
    type Err = crate::error::Error;

    /// The filter with this exact name; [`Error::NotFound`](crate::error::Error::NotFound) otherwise.
    fn from_str(name: &str) -> crate::error::Result<Filter> {
        filter_id_by_name(name.as_bytes())
            .map(Filter::from)
            .ok_or(crate::error::Error::NotFound)
    }
}

/// What the filter table holds for one filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterInfo {
    /// The filter.
    pub filter: Filter,
    /// Its name (`"bytedelta"`).
    pub name: std::borrow::Cow<'static, str>,
    /// Its version.
    pub version: u8,
    /// Where its code comes from.
    pub origin: Origin,
}

/// One row of the static table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StaticFilter {
    pub(crate) id: u8,
    pub(crate) name: &'static str,
    pub(crate) origin: Origin,
}

impl StaticFilter {
    pub(crate) fn info(&self) -> FilterInfo {
        FilterInfo {
            filter: Filter::from(self.id),
            name: self.name.into(),
            version: 1,
            origin: self.origin,
        }
    }
}

const fn row(id: u8, name: &'static str, origin: Origin) -> StaticFilter {
    StaticFilter { id, name, origin }
}

/// The filters of this build: the built-in ones, then the plugins in c-blosc2's
/// registration order.
pub(crate) const FILTERS: &[StaticFilter] = &[
    row(0, "nofilter", Origin::BuiltIn),
    row(1, "shuffle", Origin::BuiltIn),
    row(2, "bitshuffle", Origin::BuiltIn),
    row(3, "delta", Origin::BuiltIn),
    row(4, "trunc_prec", Origin::BuiltIn),
    row(32, "ndcell", Origin::Plugin),
    row(33, "ndmean", Origin::Plugin),
    row(34, "bytedelta_buggy", Origin::Plugin),
    row(35, "bytedelta", Origin::Plugin),
    row(36, "int_trunc", Origin::Plugin),
];

/// The static row of filter `id`.
pub(crate) fn static_entry(id: u8) -> Option<&'static StaticFilter> {
    FILTERS.iter().find(|f| f.id == id)
}

/// Whether filter `id` is one of the plugins compiled in here.
pub(crate) fn is_plugin(id: u8) -> bool {
    static_entry(id).is_some_and(|f| f.origin == Origin::Plugin)
}

/// What the table says about filter `id`: this build's row, else the registered filter.
pub fn filter(id: u8) -> Option<FilterInfo> {
    static_entry(id)
        .map(StaticFilter::info)
        .or_else(|| registry::registered_filter(id).map(|r| registered_info(&r)))
}

/// Every filter of the table: this build's, then the registered ones.
pub fn filters() -> Vec<FilterInfo> {
    let mut v: Vec<FilterInfo> = FILTERS.iter().map(StaticFilter::info).collect();
    v.extend(registry::registered_filters().iter().map(registered_info));
    v
}

/// The id of the filter named exactly `name`.
pub fn filter_id_by_name(name: &[u8]) -> Option<u8> {
    if let Some(f) = FILTERS.iter().find(|f| f.name.as_bytes() == name) {
        return Some(f.id);
    }
    registry::registered_filter_named(name).map(|r| r.id as u8)
}

fn registered_info(r: &registry::Registration) -> FilterInfo {
    FilterInfo {
        filter: Filter::from(r.id as u8),
        name: r.display_name().into(),
        version: r.version,
        origin: Origin::Registered,
    }
}
