//! Compression and decompression parameters, built with chained setters:
//!
//! ```
//! use blosc2_frame::{CParams, Codec, Filter, SplitMode};
//!
//! let cparams = CParams::default()
//!     .codec(Codec::Zstd)
//!     .clevel(5)
//!     .typesize(8)
//!     .filters(&[Filter::Shuffle])
//!     .split_mode(SplitMode::Never)
//!     .nthreads(2);
//! assert_eq!(cparams.get_codec(), Codec::Zstd);
//! assert_eq!(cparams.get_filters()[0], Filter::Shuffle);
//! ```

use crate::codecs::Codec;
use crate::filters::{Filter, MAX_FILTERS};

/// Whether a block's bytes are split into one stream per byte of the item before the codec
/// runs (`BLOSC_*_SPLIT`).
///
/// ```
/// use blosc2_frame::SplitMode;
///
/// assert_eq!(SplitMode::default(), SplitMode::ForwardCompat);
/// assert_eq!(SplitMode::from_id(2), Some(SplitMode::Never));
/// assert_eq!(SplitMode::Auto.id(), 3);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SplitMode {
    /// Always split (1).
    Always,
    /// Never split (2).
    Never,
    /// Split when the codec and filters are known to gain from it (3).
    Auto,
    /// As [`SplitMode::Auto`], in the way readers of older Blosc2 versions expect (4); the
    /// default.
    #[default]
    ForwardCompat,
}

impl SplitMode {
    /// The `BLOSC_*_SPLIT` code (1..=4).
    pub const fn id(self) -> i32 {
        match self {
            SplitMode::Always => 1,
            SplitMode::Never => 2,
            SplitMode::Auto => 3,
            SplitMode::ForwardCompat => 4,
        }
    }

    /// The split mode of a `BLOSC_*_SPLIT` code, `None` outside 1..=4.
    pub const fn from_id(id: i32) -> Option<SplitMode> {
        match id {
            1 => Some(SplitMode::Always),
            2 => Some(SplitMode::Never),
            3 => Some(SplitMode::Auto),
            4 => Some(SplitMode::ForwardCompat),
            _ => None,
        }
    }
}

/// Compression parameters: the codec, its level, the item size, the filter pipeline, the
/// block size and the number of threads that compress one chunk.
///
/// The default is c-blosc2's `BLOSC2_CPARAMS_DEFAULTS`: BloscLZ at level 5, 8-byte items,
/// shuffle in the last filter slot, automatic block size, one thread. Parameters are checked
/// when a chunk is compressed, as c-blosc2 does (a level above 9 is
/// [`Error::CodecParam`](crate::Error::CodecParam) then).
///
/// ```
/// use blosc2_frame::{CParams, Codec};
///
/// let cp = CParams::default();
/// assert_eq!((cp.get_codec(), cp.get_clevel(), cp.get_typesize()), (Codec::BloscLz, 5, 8));
/// ```
///
/// The fields hold the values as the format stores them (compcode, filter ids); they stay
/// public, hidden from these docs, for the C facade, which must keep every value a C caller
/// gives (invalid ones included, which fail only when used). Rust code uses the setters and
/// the `get_*` getters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CParams {
    #[doc(hidden)]
    /// Blosc2 compcode (`BLOSC_BLOSCLZ` ...).
    pub compcode: u8,
    #[doc(hidden)]
    /// Codec-specific meta byte (header byte 23).
    pub compcode_meta: u8,
    #[doc(hidden)]
    /// 0 (store) ..= 9.
    pub clevel: u8,
    #[doc(hidden)]
    /// Train and embed a dictionary (Zstd, LZ4, LZ4HC only).
    pub use_dict: bool,
    #[doc(hidden)]
    /// Element size in bytes; > 255 is stored as 1 in the header.
    pub typesize: i32,
    #[doc(hidden)]
    /// Worker threads for one chunk.
    pub nthreads: i16,
    #[doc(hidden)]
    /// Requested blocksize in bytes; 0 = automatic.
    pub blocksize: i32,
    #[doc(hidden)]
    /// `BLOSC_ALWAYS_SPLIT` (1) .. `BLOSC_FORWARD_COMPAT_SPLIT` (4).
    pub splitmode: i32,
    #[doc(hidden)]
    /// Filter ids of the 6 pipeline slots.
    pub filters: [u8; 6],
    #[doc(hidden)]
    /// Per-slot filter meta bytes.
    pub filters_meta: [u8; 6],
}

impl Default for CParams {
    /// `BLOSC2_CPARAMS_DEFAULTS`: BloscLZ, clevel 5, typesize 8, shuffle in slot 5.
    fn default() -> Self {
        CParams {
            compcode: 0,
            compcode_meta: 0,
            clevel: 5,
            use_dict: false,
            typesize: 8,
            nthreads: 1,
            blocksize: 0,
            splitmode: 4,
            filters: [0, 0, 0, 0, 0, 1],
            filters_meta: [0; 6],
        }
    }
}

/// A count as the `i16` thread count of the format's parameters (at least 1).
fn thread_count(n: usize) -> i16 {
    i16::try_from(n.max(1)).unwrap_or(i16::MAX)
}

impl CParams {
    /// Compresses with `codec`.
    pub fn codec(mut self, codec: Codec) -> Self {
        self.compcode = codec.id();
        self
    }

    /// Sets the codec's meta byte (ZFP: the accuracy, precision or rate; NDLZ: the cell
    /// size), stored in each chunk's header.
    pub fn codec_meta(mut self, meta: u8) -> Self {
        self.compcode_meta = meta;
        self
    }

    /// Sets the compression level, 0 (store the data as it is) to 9 (smallest output).
    pub fn clevel(mut self, clevel: u8) -> Self {
        self.clevel = clevel;
        self
    }

    /// Sets the size in bytes of one item of the data (what shuffle groups by).
    ///
    /// ```
    /// use blosc2_frame::CParams;
    ///
    /// assert_eq!(CParams::default().typesize(4).get_typesize(), 4);
    /// ```
    pub fn typesize(mut self, typesize: usize) -> Self {
        self.typesize = i32::try_from(typesize).unwrap_or(i32::MAX);
        self
    }

    /// Sets the filter pipeline: `filters` fill the slots from the first one on, and the
    /// remaining slots are empty; their meta bytes are reset to 0 (see
    /// [`CParams::filters_meta`]).
    ///
    /// # Panics
    /// With more than 6 filters (the pipeline has 6 slots).
    ///
    /// ```
    /// use blosc2_frame::{CParams, Filter};
    ///
    /// let cp = CParams::default().filters(&[Filter::Delta, Filter::BitShuffle]);
    /// assert_eq!(
    ///     cp.get_filters(),
    ///     [Filter::Delta, Filter::BitShuffle, Filter::NoFilter, Filter::NoFilter,
    ///      Filter::NoFilter, Filter::NoFilter]
    /// );
    /// ```
    pub fn filters(mut self, filters: &[Filter]) -> Self {
        assert!(
            filters.len() <= MAX_FILTERS,
            "a filter pipeline has {MAX_FILTERS} slots, {} filters given",
            filters.len()
        );
        self.filters = [0; MAX_FILTERS];
        self.filters_meta = [0; MAX_FILTERS];
        for (slot, f) in self.filters.iter_mut().zip(filters) {
            *slot = f.id();
        }
        self
    }

    /// Sets the meta bytes of the filter slots, from the first one on (what each filter
    /// reads: the precision in bits for [`Filter::TruncPrec`], the item size for
    /// [`Filter::Shuffle`] and [`Filter::ByteDelta`] when not 0).
    ///
    /// # Panics
    /// With more than 6 values.
    ///
    /// ```
    /// use blosc2_frame::{CParams, Filter};
    ///
    /// let cp = CParams::default().filters(&[Filter::TruncPrec, Filter::Shuffle]).filters_meta(&[10]);
    /// assert_eq!(cp.get_filters_meta(), [10, 0, 0, 0, 0, 0]);
    /// ```
    pub fn filters_meta(mut self, meta: &[u8]) -> Self {
        assert!(
            meta.len() <= MAX_FILTERS,
            "a filter pipeline has {MAX_FILTERS} slots, {} meta bytes given",
            meta.len()
        );
        self.filters_meta = [0; MAX_FILTERS];
        self.filters_meta[..meta.len()].copy_from_slice(meta);
        self
    }

    /// Sets the number of threads that compress the blocks of one chunk (0 counts as 1).
    pub fn nthreads(mut self, nthreads: usize) -> Self {
        self.nthreads = thread_count(nthreads);
        self
    }

    /// Sets the block size in bytes (0, the default, lets the library choose).
    pub fn blocksize(mut self, blocksize: usize) -> Self {
        self.blocksize = i32::try_from(blocksize).unwrap_or(i32::MAX);
        self
    }

    /// Sets the split mode.
    pub fn split_mode(mut self, mode: SplitMode) -> Self {
        self.splitmode = mode.id();
        self
    }

    /// Trains a dictionary on each chunk and embeds it (Zstd, LZ4 and LZ4HC only).
    pub fn use_dict(mut self, on: bool) -> Self {
        self.use_dict = on;
        self
    }

    /// The codec.
    pub fn get_codec(&self) -> Codec {
        Codec::from(self.compcode)
    }

    /// The codec's meta byte.
    pub fn get_codec_meta(&self) -> u8 {
        self.compcode_meta
    }

    /// Whether a dictionary is trained and embedded.
    pub fn get_use_dict(&self) -> bool {
        self.use_dict
    }

    /// The compression level.
    pub fn get_clevel(&self) -> u8 {
        self.clevel
    }

    /// The item size in bytes.
    pub fn get_typesize(&self) -> usize {
        usize::try_from(self.typesize).unwrap_or(0)
    }

    /// The six filter slots, in pipeline order.
    pub fn get_filters(&self) -> [Filter; MAX_FILTERS] {
        self.filters.map(Filter::from)
    }

    /// The meta bytes of the six filter slots.
    pub fn get_filters_meta(&self) -> [u8; MAX_FILTERS] {
        self.filters_meta
    }

    /// The number of threads per chunk.
    pub fn get_nthreads(&self) -> usize {
        usize::try_from(self.nthreads).unwrap_or(0).max(1)
    }

    /// The requested block size (0: automatic).
    pub fn get_blocksize(&self) -> usize {
        usize::try_from(self.blocksize).unwrap_or(0)
    }

    /// The split mode (`None` for a code outside 1..=4, which splits as
    /// [`SplitMode::Auto`] does).
    pub fn get_split_mode(&self) -> Option<SplitMode> {
        SplitMode::from_id(self.splitmode)
    }
}

/// Decompression parameters: the number of threads that decompress the blocks of one chunk.
///
/// ```
/// use blosc2_frame::DParams;
///
/// assert_eq!(DParams::default().nthreads(4).get_nthreads(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DParams {
    #[doc(hidden)]
    /// Worker threads for one chunk (the C value; use the setter and getter).
    pub nthreads: i16,
}

impl Default for DParams {
    /// One thread (`BLOSC2_DPARAMS_DEFAULTS`).
    fn default() -> Self {
        DParams { nthreads: 1 }
    }
}

impl DParams {
    /// Sets the number of threads per chunk (0 counts as 1).
    pub fn nthreads(mut self, nthreads: usize) -> Self {
        self.nthreads = thread_count(nthreads);
        self
    }

    /// The number of threads per chunk.
    pub fn get_nthreads(&self) -> usize {
        usize::try_from(self.nthreads).unwrap_or(0).max(1)
    }
}
