//! The one error type of the safe core, and its mapping to c-blosc2's `BLOSC2_ERROR_*` codes.
//!
//! Every failure inside b2frame is an [`Error`]; the C facade turns it into the negative code a
//! c-blosc2 caller expects with [`Error::code`]. Variant names follow the C names so that the
//! mapping is easy to audit against `blosc2.h`.

#![forbid(unsafe_code)]

use std::fmt;

/// A b2frame failure. Each variant corresponds to exactly one `BLOSC2_ERROR_*` code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Error {
    /// Generic failure (-1).
    Failure,
    /// Bad stream (-2).
    Stream,
    /// Invalid data (-3).
    Data,
    /// Memory allocation failed (-4).
    MemoryAlloc,
    /// Not enough space to read (-5).
    ReadBuffer,
    /// Not enough space to write (-6).
    WriteBuffer,
    /// Codec not supported (-7).
    CodecSupport,
    /// Invalid codec parameter (-8).
    CodecParam,
    /// Codec dictionary error (-9).
    CodecDict,
    /// Version not supported (-10).
    VersionSupport,
    /// Invalid header (-11).
    InvalidHeader,
    /// Invalid parameter (-12).
    InvalidParam,
    /// File read failure (-13).
    FileRead,
    /// File write failure (-14).
    FileWrite,
    /// File open failure (-15).
    FileOpen,
    /// Not found (-16).
    NotFound,
    /// Bad run length encoding (-17).
    RunLength,
    /// Filter pipeline error (-18).
    FilterPipeline,
    /// Chunk insert failure (-19).
    ChunkInsert,
    /// Chunk append failure (-20).
    ChunkAppend,
    /// Chunk update failure (-21).
    ChunkUpdate,
    /// Sizes larger than 2 GB not supported (-22).
    TwoGbLimit,
    /// Super-chunk copy failure (-23).
    SchunkCopy,
    /// Wrong type for frame (-24).
    FrameType,
    /// File truncate failure (-25).
    FileTruncate,
    /// Thread or thread context creation failure (-26).
    ThreadCreate,
    /// Postfilter failure (-27).
    Postfilter,
    /// Special frame failure (-28).
    FrameSpecial,
    /// Special super-chunk failure (-29).
    SchunkSpecial,
    /// IO plugin error (-30).
    PluginIo,
    /// Remove file failure (-31).
    FileRemove,
    /// Pointer is NULL (-32).
    NullPointer,
    /// Invalid index (-33).
    InvalidIndex,
    /// Metalayer has not been found (-34).
    MetalayerNotFound,
    /// Maximum buffersize exceeded (-35).
    MaxBufsizeExceeded,
    /// Tuner failure (-36).
    Tuner,
    /// File lock failure (-37).
    Lock,
}

/// Result alias used throughout the safe core.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Every variant, in code order (code = -(index + 1)).
    pub const ALL: [Error; 37] = [
        Error::Failure,
        Error::Stream,
        Error::Data,
        Error::MemoryAlloc,
        Error::ReadBuffer,
        Error::WriteBuffer,
        Error::CodecSupport,
        Error::CodecParam,
        Error::CodecDict,
        Error::VersionSupport,
        Error::InvalidHeader,
        Error::InvalidParam,
        Error::FileRead,
        Error::FileWrite,
        Error::FileOpen,
        Error::NotFound,
        Error::RunLength,
        Error::FilterPipeline,
        Error::ChunkInsert,
        Error::ChunkAppend,
        Error::ChunkUpdate,
        Error::TwoGbLimit,
        Error::SchunkCopy,
        Error::FrameType,
        Error::FileTruncate,
        Error::ThreadCreate,
        Error::Postfilter,
        Error::FrameSpecial,
        Error::SchunkSpecial,
        Error::PluginIo,
        Error::FileRemove,
        Error::NullPointer,
        Error::InvalidIndex,
        Error::MetalayerNotFound,
        Error::MaxBufsizeExceeded,
        Error::Tuner,
        Error::Lock,
    ];

    /// The `BLOSC2_ERROR_*` code (always negative).
    pub fn code(self) -> i32 {
        // The discriminants follow declaration order, which is the C code order.
        -(self as i32) - 1
    }

    /// The error for a `BLOSC2_ERROR_*` code, if it is one.
    pub fn from_code(code: i32) -> Option<Error> {
        if (-37..=-1).contains(&code) {
            Some(Error::ALL[(-code - 1) as usize])
        } else {
            None
        }
    }

    /// The message `blosc2_error_string` returns for this code (c-blosc2's wording).
    pub fn message(self) -> &'static str {
        match self {
            Error::Failure => "Generic failure",
            Error::Stream => "Bad stream",
            Error::Data => "Invalid data",
            Error::MemoryAlloc => "Memory alloc/realloc failure",
            Error::ReadBuffer => "Not enough space to read",
            Error::WriteBuffer => "Not enough space to write",
            Error::CodecSupport => "Codec not supported",
            Error::CodecParam => "Invalid parameter supplied to codec",
            Error::CodecDict => "Codec dictionary error",
            Error::VersionSupport => "Version not supported",
            Error::InvalidHeader => "Invalid value in header",
            Error::InvalidParam => "Invalid parameter supplied to function",
            Error::FileRead => "File read failure",
            Error::FileWrite => "File write failure",
            Error::FileOpen => "File open failure",
            Error::NotFound => "Not found",
            Error::RunLength => "Bad run length encoding",
            Error::FilterPipeline => "Filter pipeline error",
            Error::ChunkInsert => "Chunk insert failure",
            Error::ChunkAppend => "Chunk append failure",
            Error::ChunkUpdate => "Chunk update failure",
            Error::TwoGbLimit => "Sizes larger than 2gb not supported",
            Error::SchunkCopy => "Super-chunk copy failure",
            Error::FrameType => "Wrong type for frame",
            Error::FileTruncate => "File truncate failure",
            Error::ThreadCreate => "Thread or thread context creation failure",
            Error::Postfilter => "Postfilter failure",
            Error::FrameSpecial => "Special frame failure",
            Error::SchunkSpecial => "Special super-chunk failure",
            Error::PluginIo => "IO plugin error",
            Error::FileRemove => "Remove file failure",
            Error::NullPointer => "Pointer is null",
            Error::InvalidIndex => "Invalid index",
            Error::MetalayerNotFound => "Metalayer has not been found",
            Error::MaxBufsizeExceeded => "Maximum buffersize exceeded",
            Error::Tuner => "Tuner failure",
            Error::Lock => "Frame lock failure",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message(), self.code())
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_c_values() {
        assert_eq!(Error::Failure.code(), -1);
        assert_eq!(Error::Data.code(), -3);
        assert_eq!(Error::InvalidParam.code(), -12);
        assert_eq!(Error::TwoGbLimit.code(), -22);
        assert_eq!(Error::NullPointer.code(), -32);
        assert_eq!(Error::Lock.code(), -37);
    }

    #[test]
    fn from_code_round_trips() {
        for e in Error::ALL {
            assert_eq!(Error::from_code(e.code()), Some(e));
        }
        assert_eq!(Error::from_code(0), None);
        assert_eq!(Error::from_code(-38), None);
    }
}
