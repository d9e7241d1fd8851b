//! `#[repr(C)]` mirrors of c-blosc2 3.3's public types and constants, byte-identical to
//! `blosc2.h` (checked here with `size_of`/`offset_of`, and against the reference header by
//! `scripts/abi-check.sh`).
//!
//! The structs and callback typedefs are the source of `include/b2frame.h` (cbindgen; C field
//! names and order; array lengths are literals so that the generated header needs no macros).
//! The constants are not exported by cbindgen (it would also export every other `pub const` of
//! the crate): `include/blosc2.h` spells them the way c-blosc2 does (enums and macros), and
//! `scripts/abi-check.sh` compares every one of them, and every struct layout, with the
//! reference header. The opaque `struct blosc2_context_s`/`blosc2_frame_s` tags and
//! `blosc_timestamp_t` are declared by hand in the cbindgen config.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_void};

// ---------------------------------------------------------------------------------------------
// Versions
// ---------------------------------------------------------------------------------------------

/// The c-blosc2 release whose ABI and behaviour b2frame reproduces (`BLOSC2_VERSION_*`).
pub const BLOSC2_VERSION_MAJOR: c_int = 3;
/// See [`BLOSC2_VERSION_MAJOR`].
pub const BLOSC2_VERSION_MINOR: c_int = 3;
/// See [`BLOSC2_VERSION_MAJOR`].
pub const BLOSC2_VERSION_RELEASE: c_int = 5;
/// `BLOSC2_VERSION_STRING` (what `blosc2_get_version_string` returns).
pub const BLOSC2_VERSION_STRING: &str = "3.3.5";
/// `BLOSC2_VERSION_DATE` of that release.
pub const BLOSC2_VERSION_DATE: &str = "$Date:: 2026-09-24 #$";

// Chunk format versions (header byte 0).
pub const BLOSC1_VERSION_FORMAT_PRE1: c_int = 1;
pub const BLOSC1_VERSION_FORMAT: c_int = 2;
pub const BLOSC2_VERSION_FORMAT_ALPHA: c_int = 3;
pub const BLOSC2_VERSION_FORMAT_BETA1: c_int = 4;
pub const BLOSC2_VERSION_FORMAT_STABLE: c_int = 5;
pub const BLOSC2_VERSION_FORMAT_VL_BLOCKS: c_int = 6;
pub const BLOSC2_VERSION_FORMAT: c_int = BLOSC2_VERSION_FORMAT_VL_BLOCKS;

// Frame format versions.
pub const BLOSC2_VERSION_FRAME_FORMAT_BETA2: c_int = 1;
pub const BLOSC2_VERSION_FRAME_FORMAT_RC1: c_int = 2;
pub const BLOSC2_VERSION_FRAME_FORMAT_VL_BLOCKS: c_int = 3;
pub const BLOSC2_VERSION_FRAME_FORMAT: c_int = BLOSC2_VERSION_FRAME_FORMAT_VL_BLOCKS;

// ---------------------------------------------------------------------------------------------
// Sizes and limits
// ---------------------------------------------------------------------------------------------

pub const BLOSC_MIN_HEADER_LENGTH: c_int = 16;
pub const BLOSC_EXTENDED_HEADER_LENGTH: c_int = 32;
pub const BLOSC2_MAX_OVERHEAD: c_int = BLOSC_EXTENDED_HEADER_LENGTH;
/// `INT_MAX - BLOSC2_MAX_OVERHEAD`.
pub const BLOSC2_MAX_BUFFERSIZE: c_int = 2147483615;
pub const BLOSC_MAX_TYPESIZE: c_int = 255;
pub const BLOSC_MIN_BUFFERSIZE: c_int = 32;
pub const BLOSC2_MAXDICTSIZE: c_int = 32768;
pub const BLOSC2_MINUSEFULDICT: c_int = 256;
pub const BLOSC2_MAXBLOCKSIZE: c_int = 536866816;
pub const BLOSC2_MAXTYPESIZE: c_int = BLOSC2_MAXBLOCKSIZE;

/// Filter slots of the pipeline (a `usize` so that it can size Rust arrays).
pub const BLOSC2_MAX_FILTERS: usize = 6;
pub const BLOSC2_MAX_UDFILTERS: c_int = 16;
/// Fixed-length metalayers a super-chunk holds.
pub const BLOSC2_MAX_METALAYERS: usize = 16;
pub const BLOSC2_METALAYER_NAME_MAXLEN: c_int = 31;
/// Variable-length metalayer slots of a super-chunk.
pub const BLOSC2_MAX_VLMETALAYERS: usize = 8192;
pub const BLOSC2_VLMETALAYERS_NAME_MAXLEN: c_int = BLOSC2_METALAYER_NAME_MAXLEN;

// The struct definitions below spell these lengths as literals (for cbindgen); keep them equal.
const _: () = assert!(
    BLOSC2_MAX_FILTERS == 6 && BLOSC2_MAX_METALAYERS == 16 && BLOSC2_MAX_VLMETALAYERS == 8192
);

// ---------------------------------------------------------------------------------------------
// Tuners, filters, codecs: id ranges and built-in ids
// ---------------------------------------------------------------------------------------------

pub const BLOSC2_DEFINED_TUNER_START: c_int = 0;
pub const BLOSC2_DEFINED_TUNER_STOP: c_int = 31;
pub const BLOSC2_GLOBAL_REGISTERED_TUNER_START: c_int = 32;
pub const BLOSC2_GLOBAL_REGISTERED_TUNER_STOP: c_int = 159;
pub const BLOSC2_GLOBAL_REGISTERED_TUNERS: c_int = 0;
pub const BLOSC2_USER_REGISTERED_TUNER_START: c_int = 160;
pub const BLOSC2_USER_REGISTERED_TUNER_STOP: c_int = 255;
pub const BLOSC_STUNE: c_int = 0;
pub const BLOSC_LAST_TUNER: c_int = 1;
/// Spelled `..._TUNE` (no R) in c-blosc2.
pub const BLOSC_LAST_REGISTERED_TUNE: c_int = 31;

pub const BLOSC2_DEFINED_FILTERS_START: c_int = 0;
pub const BLOSC2_DEFINED_FILTERS_STOP: c_int = 31;
pub const BLOSC2_GLOBAL_REGISTERED_FILTERS_START: c_int = 32;
pub const BLOSC2_GLOBAL_REGISTERED_FILTERS_STOP: c_int = 159;
pub const BLOSC2_GLOBAL_REGISTERED_FILTERS: c_int = 5;
pub const BLOSC2_USER_REGISTERED_FILTERS_START: c_int = 160;
pub const BLOSC2_USER_REGISTERED_FILTERS_STOP: c_int = 255;

pub const BLOSC_NOSHUFFLE: c_int = 0;
pub const BLOSC_NOFILTER: c_int = 0;
pub const BLOSC_SHUFFLE: c_int = 1;
pub const BLOSC_BITSHUFFLE: c_int = 2;
pub const BLOSC_DELTA: c_int = 3;
pub const BLOSC_TRUNC_PREC: c_int = 4;
pub const BLOSC_LAST_FILTER: c_int = 5;
pub const BLOSC_LAST_REGISTERED_FILTER: c_int = 36;

// Chunk header flag bits (byte 2) and blosc2 flags (byte 31), flags2 (byte 30).
pub const BLOSC_DOSHUFFLE: c_int = 0x1;
pub const BLOSC_MEMCPYED: c_int = 0x2;
pub const BLOSC_DOBITSHUFFLE: c_int = 0x4;
pub const BLOSC_DODELTA: c_int = 0x8;
pub const BLOSC2_USEDICT: c_int = 0x1;
pub const BLOSC2_BIGENDIAN: c_int = 0x2;
pub const BLOSC2_INSTR_CODEC: c_int = 0x80;
pub const BLOSC2_VL_BLOCKS: c_int = 0x1;

pub const BLOSC2_DEFINED_CODECS_START: c_int = 0;
pub const BLOSC2_DEFINED_CODECS_STOP: c_int = 31;
pub const BLOSC2_GLOBAL_REGISTERED_CODECS_START: c_int = 32;
pub const BLOSC2_GLOBAL_REGISTERED_CODECS_STOP: c_int = 159;
pub const BLOSC2_GLOBAL_REGISTERED_CODECS: c_int = 5;
pub const BLOSC2_USER_REGISTERED_CODECS_START: c_int = 160;
pub const BLOSC2_USER_REGISTERED_CODECS_STOP: c_int = 255;

pub const BLOSC_BLOSCLZ: c_int = 0;
pub const BLOSC_LZ4: c_int = 1;
pub const BLOSC_LZ4HC: c_int = 2;
pub const BLOSC_ZLIB: c_int = 4;
pub const BLOSC_ZSTD: c_int = 5;
pub const BLOSC_LAST_CODEC: c_int = 6;
pub const BLOSC_LAST_REGISTERED_CODEC: c_int = 36;

pub const BLOSC_BLOSCLZ_COMPNAME: &str = "blosclz";
pub const BLOSC_LZ4_COMPNAME: &str = "lz4";
pub const BLOSC_LZ4HC_COMPNAME: &str = "lz4hc";
pub const BLOSC_ZLIB_COMPNAME: &str = "zlib";
pub const BLOSC_ZSTD_COMPNAME: &str = "zstd";

// Codec library codes (what `blosc2_get_complib_info` returns) and their names.
pub const BLOSC_BLOSCLZ_LIB: c_int = 0;
pub const BLOSC_LZ4_LIB: c_int = 1;
pub const BLOSC_ZLIB_LIB: c_int = 3;
pub const BLOSC_ZSTD_LIB: c_int = 4;
pub const BLOSC_UDCODEC_LIB: c_int = 6;
pub const BLOSC_SCHUNK_LIB: c_int = 7;
pub const BLOSC_BLOSCLZ_LIBNAME: &str = "BloscLZ";
pub const BLOSC_LZ4_LIBNAME: &str = "LZ4";
pub const BLOSC_ZLIB_LIBNAME: &str = "Zlib";
pub const BLOSC_ZSTD_LIBNAME: &str = "Zstd";

// Codec format codes (chunk flags bits 5-7) and their format versions.
pub const BLOSC_BLOSCLZ_FORMAT: c_int = BLOSC_BLOSCLZ_LIB;
pub const BLOSC_LZ4_FORMAT: c_int = BLOSC_LZ4_LIB;
pub const BLOSC_LZ4HC_FORMAT: c_int = BLOSC_LZ4_LIB;
pub const BLOSC_ZLIB_FORMAT: c_int = BLOSC_ZLIB_LIB;
pub const BLOSC_ZSTD_FORMAT: c_int = BLOSC_ZSTD_LIB;
pub const BLOSC_UDCODEC_FORMAT: c_int = BLOSC_UDCODEC_LIB;
pub const BLOSC_BLOSCLZ_VERSION_FORMAT: c_int = 1;
pub const BLOSC_LZ4_VERSION_FORMAT: c_int = 1;
pub const BLOSC_LZ4HC_VERSION_FORMAT: c_int = 1;
pub const BLOSC_ZLIB_VERSION_FORMAT: c_int = 1;
pub const BLOSC_ZSTD_VERSION_FORMAT: c_int = 1;
pub const BLOSC_UDCODEC_VERSION_FORMAT: c_int = 1;

// Split modes.
pub const BLOSC_ALWAYS_SPLIT: c_int = 1;
pub const BLOSC_NEVER_SPLIT: c_int = 2;
pub const BLOSC_AUTO_SPLIT: c_int = 3;
pub const BLOSC_FORWARD_COMPAT_SPLIT: c_int = 4;

// Byte offsets of the chunk header fields.
pub const BLOSC2_CHUNK_VERSION: c_int = 0x0;
pub const BLOSC2_CHUNK_VERSIONLZ: c_int = 0x1;
pub const BLOSC2_CHUNK_FLAGS: c_int = 0x2;
pub const BLOSC2_CHUNK_TYPESIZE: c_int = 0x3;
pub const BLOSC2_CHUNK_NBYTES: c_int = 0x4;
pub const BLOSC2_CHUNK_BLOCKSIZE: c_int = 0x8;
pub const BLOSC2_CHUNK_CBYTES: c_int = 0xc;
pub const BLOSC2_CHUNK_FILTER_CODES: c_int = 0x10;
pub const BLOSC2_CHUNK_FILTER_META: c_int = 0x18;
pub const BLOSC2_CHUNK_BLOSC2_FLAGS2: c_int = 0x1e;
pub const BLOSC2_CHUNK_BLOSC2_FLAGS: c_int = 0x1f;

// Special-value chunk kinds (blosc2 flags bits 4-6).
pub const BLOSC2_NO_SPECIAL: c_int = 0x0;
pub const BLOSC2_SPECIAL_ZERO: c_int = 0x1;
pub const BLOSC2_SPECIAL_NAN: c_int = 0x2;
pub const BLOSC2_SPECIAL_VALUE: c_int = 0x3;
pub const BLOSC2_SPECIAL_UNINIT: c_int = 0x4;
pub const BLOSC2_SPECIAL_LASTID: c_int = 0x4;
pub const BLOSC2_SPECIAL_MASK: c_int = 0x7;

// Error codes (see `crate::error::Error` for the safe-core side).
pub const BLOSC2_ERROR_SUCCESS: c_int = 0;
pub const BLOSC2_ERROR_FAILURE: c_int = -1;
pub const BLOSC2_ERROR_STREAM: c_int = -2;
pub const BLOSC2_ERROR_DATA: c_int = -3;
pub const BLOSC2_ERROR_MEMORY_ALLOC: c_int = -4;
pub const BLOSC2_ERROR_READ_BUFFER: c_int = -5;
pub const BLOSC2_ERROR_WRITE_BUFFER: c_int = -6;
pub const BLOSC2_ERROR_CODEC_SUPPORT: c_int = -7;
pub const BLOSC2_ERROR_CODEC_PARAM: c_int = -8;
pub const BLOSC2_ERROR_CODEC_DICT: c_int = -9;
pub const BLOSC2_ERROR_VERSION_SUPPORT: c_int = -10;
pub const BLOSC2_ERROR_INVALID_HEADER: c_int = -11;
pub const BLOSC2_ERROR_INVALID_PARAM: c_int = -12;
pub const BLOSC2_ERROR_FILE_READ: c_int = -13;
pub const BLOSC2_ERROR_FILE_WRITE: c_int = -14;
pub const BLOSC2_ERROR_FILE_OPEN: c_int = -15;
pub const BLOSC2_ERROR_NOT_FOUND: c_int = -16;
pub const BLOSC2_ERROR_RUN_LENGTH: c_int = -17;
pub const BLOSC2_ERROR_FILTER_PIPELINE: c_int = -18;
pub const BLOSC2_ERROR_CHUNK_INSERT: c_int = -19;
pub const BLOSC2_ERROR_CHUNK_APPEND: c_int = -20;
pub const BLOSC2_ERROR_CHUNK_UPDATE: c_int = -21;
pub const BLOSC2_ERROR_2GB_LIMIT: c_int = -22;
pub const BLOSC2_ERROR_SCHUNK_COPY: c_int = -23;
pub const BLOSC2_ERROR_FRAME_TYPE: c_int = -24;
pub const BLOSC2_ERROR_FILE_TRUNCATE: c_int = -25;
pub const BLOSC2_ERROR_THREAD_CREATE: c_int = -26;
pub const BLOSC2_ERROR_POSTFILTER: c_int = -27;
pub const BLOSC2_ERROR_FRAME_SPECIAL: c_int = -28;
pub const BLOSC2_ERROR_SCHUNK_SPECIAL: c_int = -29;
pub const BLOSC2_ERROR_PLUGIN_IO: c_int = -30;
pub const BLOSC2_ERROR_FILE_REMOVE: c_int = -31;
pub const BLOSC2_ERROR_NULL_POINTER: c_int = -32;
pub const BLOSC2_ERROR_INVALID_INDEX: c_int = -33;
pub const BLOSC2_ERROR_METALAYER_NOT_FOUND: c_int = -34;
pub const BLOSC2_ERROR_MAX_BUFSIZE_EXCEEDED: c_int = -35;
pub const BLOSC2_ERROR_TUNER: c_int = -36;
pub const BLOSC2_ERROR_LOCK: c_int = -37;

// I/O backend ids.
pub const BLOSC2_IO_FILESYSTEM: c_int = 0;
pub const BLOSC2_IO_FILESYSTEM_MMAP: c_int = 1;
pub const BLOSC_IO_LAST_BLOSC_DEFINED: c_int = 2;
pub const BLOSC_IO_LAST_REGISTERED: c_int = 32;
pub const BLOSC2_IO_BLOSC_DEFINED: c_int = 32;
pub const BLOSC2_IO_REGISTERED: c_int = 160;
pub const BLOSC2_IO_USER_DEFINED: c_int = 256;

// Plugin ids of the registries (`blosc2/codecs-registry.h`, `filters-registry.h`,
// `tuners-registry.h`); b2frame ships none of these plugins but frames may name them.
pub const BLOSC_CODEC_NDLZ: c_int = 32;
pub const BLOSC_CODEC_ZFP_FIXED_ACCURACY: c_int = 33;
pub const BLOSC_CODEC_ZFP_FIXED_PRECISION: c_int = 34;
pub const BLOSC_CODEC_ZFP_FIXED_RATE: c_int = 35;
pub const BLOSC_CODEC_OPENHTJ2K: c_int = 36;
pub const BLOSC_CODEC_GROK: c_int = 37;
pub const BLOSC_CODEC_OPENZL: c_int = 38;
pub const BLOSC_CODEC_J2K: c_int = 39;
pub const BLOSC_CODEC_HTJ2K: c_int = 40;
pub const BLOSC_FILTER_NDCELL: c_int = 32;
pub const BLOSC_FILTER_NDMEAN: c_int = 33;
pub const BLOSC_FILTER_BYTEDELTA_BUGGY: c_int = 34;
pub const BLOSC_FILTER_BYTEDELTA: c_int = 35;
pub const BLOSC_FILTER_INT_TRUNC: c_int = 36;
pub const BLOSC_BTUNE: c_int = 32;

// ---------------------------------------------------------------------------------------------
// Opaque handles and platform types
// ---------------------------------------------------------------------------------------------

/// Opaque `blosc2_context` (C tag `struct blosc2_context_s`): a compression or decompression
/// context. Only ever handled through pointers; its owner casts them to its own Rust type.
pub struct blosc2_context {
    _private: [u8; 0],
}

/// Opaque `blosc2_frame` (C tag `struct blosc2_frame_s`), the frame behind a super-chunk.
pub struct blosc2_frame {
    _private: [u8; 0],
}

/// `blosc_timestamp_t`: `struct timespec` on POSIX (declared by hand in the headers).
#[cfg(not(windows))]
pub type blosc_timestamp_t = libc::timespec;
/// `blosc_timestamp_t`: `LARGE_INTEGER` (a 64-bit performance counter value) on Windows.
#[cfg(windows)]
pub type blosc_timestamp_t = i64;

/// `blosc_threads_callback`: runs `numjobs` calls of `dojob` on caller-owned threads.
pub type blosc_threads_callback = Option<
    unsafe extern "C" fn(
        callback_data: *mut c_void,
        dojob: Option<unsafe extern "C" fn(*mut c_void)>,
        numjobs: c_int,
        jobdata_elsize: usize,
        jobdata: *mut c_void,
    ),
>;

// ---------------------------------------------------------------------------------------------
// Instrumentation, pre/postfilters, parameters
// ---------------------------------------------------------------------------------------------

/// `blosc2_instr`: per-block instrumentation record (`BLOSC2_INSTR_CODEC` chunks).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct blosc2_instr {
    pub cratio: f32,
    pub cspeed: f32,
    pub filter_speed: f32,
    pub flags: [u8; 4],
}

/// `blosc2_prefilter_params`: what a prefilter callback receives for one block.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_prefilter_params {
    pub user_data: *mut c_void,
    pub input: *const u8,
    pub output: *mut u8,
    pub output_size: i32,
    pub output_typesize: i32,
    pub output_offset: i32,
    pub nchunk: i64,
    pub nblock: i32,
    pub tid: i32,
    pub ttmp: *mut u8,
    pub ttmp_nbytes: usize,
    pub ctx: *mut blosc2_context,
    pub output_is_disposable: bool,
}

/// `blosc2_postfilter_params`: what a postfilter callback receives for one block.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_postfilter_params {
    pub user_data: *mut c_void,
    pub input: *const u8,
    pub output: *mut u8,
    pub size: i32,
    pub typesize: i32,
    pub offset: i32,
    pub nchunk: i64,
    pub nblock: i32,
    pub tid: i32,
    pub ttmp: *mut u8,
    pub ttmp_nbytes: usize,
    pub ctx: *mut blosc2_context,
}

/// All fields zero or NULL, as a C `= {0}` initialiser leaves them.
impl Default for blosc2_prefilter_params {
    fn default() -> Self {
        blosc2_prefilter_params {
            user_data: std::ptr::null_mut(),
            input: std::ptr::null(),
            output: std::ptr::null_mut(),
            output_size: 0,
            output_typesize: 0,
            output_offset: 0,
            nchunk: 0,
            nblock: 0,
            tid: 0,
            ttmp: std::ptr::null_mut(),
            ttmp_nbytes: 0,
            ctx: std::ptr::null_mut(),
            output_is_disposable: false,
        }
    }
}

/// All fields zero or NULL, as a C `= {0}` initialiser leaves them.
impl Default for blosc2_postfilter_params {
    fn default() -> Self {
        blosc2_postfilter_params {
            user_data: std::ptr::null_mut(),
            input: std::ptr::null(),
            output: std::ptr::null_mut(),
            size: 0,
            typesize: 0,
            offset: 0,
            nchunk: 0,
            nblock: 0,
            tid: 0,
            ttmp: std::ptr::null_mut(),
            ttmp_nbytes: 0,
            ctx: std::ptr::null_mut(),
        }
    }
}

/// `blosc2_prefilter_fn`.
pub type blosc2_prefilter_fn =
    Option<unsafe extern "C" fn(params: *mut blosc2_prefilter_params) -> c_int>;
/// `blosc2_postfilter_fn`.
pub type blosc2_postfilter_fn =
    Option<unsafe extern "C" fn(params: *mut blosc2_postfilter_params) -> c_int>;

/// `blosc2_cparams`: compression parameters (136 bytes on x86-64).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_cparams {
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub use_dict: c_int,
    pub typesize: i32,
    pub nthreads: i16,
    pub blocksize: i32,
    pub splitmode: i32,
    pub schunk: *mut c_void,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub prefilter: blosc2_prefilter_fn,
    pub preparams: *mut blosc2_prefilter_params,
    pub tuner_params: *mut c_void,
    pub tuner_id: c_int,
    pub instr_codec: bool,
    pub codec_params: *mut c_void,
    pub filter_params: [*mut c_void; 6],
}

/// `blosc2_dparams`: decompression parameters (40 bytes on x86-64).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_dparams {
    pub nthreads: i16,
    pub schunk: *mut c_void,
    pub postfilter: blosc2_postfilter_fn,
    pub postparams: *mut blosc2_postfilter_params,
    pub typesize: i32,
}

// ---------------------------------------------------------------------------------------------
// I/O backends
// ---------------------------------------------------------------------------------------------

/// `blosc2_open_cb`: opens `urlpath` with an fopen-style `mode`; returns the stream or NULL.
pub type blosc2_open_cb = Option<
    unsafe extern "C" fn(
        urlpath: *const c_char,
        mode: *const c_char,
        params: *mut c_void,
    ) -> *mut c_void,
>;
/// `blosc2_close_cb`.
pub type blosc2_close_cb = Option<unsafe extern "C" fn(stream: *mut c_void) -> c_int>;
/// `blosc2_size_cb`.
pub type blosc2_size_cb = Option<unsafe extern "C" fn(stream: *mut c_void) -> i64>;
/// `blosc2_write_cb`: positional write; returns the number of items written.
pub type blosc2_write_cb = Option<
    unsafe extern "C" fn(
        ptr: *const c_void,
        size: i64,
        nitems: i64,
        position: i64,
        stream: *mut c_void,
    ) -> i64,
>;
/// `blosc2_read_cb`: positional read; returns the number of items read.
pub type blosc2_read_cb = Option<
    unsafe extern "C" fn(
        ptr: *mut *mut c_void,
        size: i64,
        nitems: i64,
        position: i64,
        stream: *mut c_void,
    ) -> i64,
>;
/// `blosc2_truncate_cb`.
pub type blosc2_truncate_cb = Option<unsafe extern "C" fn(stream: *mut c_void, size: i64) -> c_int>;
/// `blosc2_destroy_cb`: releases the backend's `params`.
pub type blosc2_destroy_cb = Option<unsafe extern "C" fn(params: *mut c_void) -> c_int>;

/// `blosc2_io_cb`: an I/O backend's callbacks (80 bytes on x86-64).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_io_cb {
    pub id: u8,
    pub name: *mut c_char,
    pub is_allocation_necessary: bool,
    pub open: blosc2_open_cb,
    pub close: blosc2_close_cb,
    pub size: blosc2_size_cb,
    pub write: blosc2_write_cb,
    pub read: blosc2_read_cb,
    pub truncate: blosc2_truncate_cb,
    pub destroy: blosc2_destroy_cb,
}

/// `blosc2_io`: selects a registered backend by id and passes it `params`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_io {
    pub id: u8,
    pub name: *const c_char,
    pub params: *mut c_void,
}

/// `blosc2_stdio_file`: the stream handle of the filesystem backend.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_stdio_file {
    pub file: *mut libc::FILE,
}

/// `blosc2_stdio_params`: filesystem backend parameters (3.2+).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct blosc2_stdio_params {
    pub locking: bool,
}

/// `blosc2_stdio_mmap`: parameters and state of the mmap backend (96 bytes, POSIX layout).
#[cfg(not(windows))]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_stdio_mmap {
    pub mode: *const c_char,
    pub initial_mapping_size: usize,
    pub needs_free: bool,
    pub addr: *mut c_char,
    pub urlpath: *mut c_char,
    pub file_size: usize,
    pub mapping_size: usize,
    pub is_memory_only: bool,
    pub file: *mut libc::FILE,
    pub fd: c_int,
    pub access_flags: i64,
    pub map_flags: i64,
}

/// `blosc2_stdio_mmap` on Windows (104 bytes): c-blosc2 adds the mapping object's `HANDLE`.
#[cfg(windows)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_stdio_mmap {
    pub mode: *const c_char,
    pub initial_mapping_size: usize,
    pub needs_free: bool,
    pub addr: *mut c_char,
    pub urlpath: *mut c_char,
    pub file_size: usize,
    pub mapping_size: usize,
    pub is_memory_only: bool,
    pub file: *mut libc::FILE,
    pub fd: c_int,
    pub access_flags: i64,
    pub map_flags: i64,
    pub mmap_handle: *mut c_void,
}

/// `blosc2_storage`: where and how a super-chunk lives.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_storage {
    pub contiguous: bool,
    pub urlpath: *mut c_char,
    pub cparams: *mut blosc2_cparams,
    pub dparams: *mut blosc2_dparams,
    pub io: *mut blosc2_io,
}

// ---------------------------------------------------------------------------------------------
// Super-chunk and metalayers
// ---------------------------------------------------------------------------------------------

/// `blosc2_metalayer`: a named content blob (uncompressed for metalayers, a compressed chunk
/// for vlmetalayers).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_metalayer {
    pub name: *mut c_char,
    pub content: *mut u8,
    pub content_len: i32,
}

/// `blosc2_schunk`: the super-chunk as C callers read it (65840 bytes on x86-64). Callers and
/// the header-inline `blosc2_meta_get/exists` read these fields directly.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_schunk {
    pub version: u8,
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub splitmode: u8,
    pub typesize: i32,
    pub blocksize: i32,
    pub chunksize: i32,
    pub flags2: u8,
    pub use_dict: u8,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub nchunks: i64,
    pub current_nchunk: i64,
    pub nbytes: i64,
    pub cbytes: i64,
    pub data: *mut *mut u8,
    pub data_len: usize,
    pub storage: *mut blosc2_storage,
    pub frame: *mut blosc2_frame,
    pub cctx: *mut blosc2_context,
    pub dctx: *mut blosc2_context,
    pub metalayers: [*mut blosc2_metalayer; 16],
    pub nmetalayers: u16,
    pub vlmetalayers: [*mut blosc2_metalayer; 8192],
    pub nvlmetalayers: i16,
    pub tuner_params: *mut c_void,
    pub tuner_id: c_int,
    pub ndim: i8,
    pub blockshape: *mut i64,
    pub view: bool,
    pub change_tick: i64,
}

// ---------------------------------------------------------------------------------------------
// Plugins: tuners, codecs, filters
// ---------------------------------------------------------------------------------------------

/// `blosc2_tuner`: a blocksize/cparams tuner plugin.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_tuner {
    pub init: Option<
        unsafe extern "C" fn(
            config: *mut c_void,
            cctx: *mut blosc2_context,
            dctx: *mut blosc2_context,
        ) -> c_int,
    >,
    pub next_blocksize: Option<unsafe extern "C" fn(context: *mut blosc2_context) -> c_int>,
    pub next_cparams: Option<unsafe extern "C" fn(context: *mut blosc2_context) -> c_int>,
    pub update: Option<unsafe extern "C" fn(context: *mut blosc2_context, ctime: f64) -> c_int>,
    pub free: Option<unsafe extern "C" fn(context: *mut blosc2_context) -> c_int>,
    pub id: c_int,
    pub name: *mut c_char,
}

/// `blosc2_codec_encoder_cb`: a user codec's encoder.
pub type blosc2_codec_encoder_cb = Option<
    unsafe extern "C" fn(
        input: *const u8,
        input_len: i32,
        output: *mut u8,
        output_len: i32,
        meta: u8,
        cparams: *mut blosc2_cparams,
        chunk: *const c_void,
    ) -> c_int,
>;
/// `blosc2_codec_decoder_cb`: a user codec's decoder.
pub type blosc2_codec_decoder_cb = Option<
    unsafe extern "C" fn(
        input: *const u8,
        input_len: i32,
        output: *mut u8,
        output_len: i32,
        meta: u8,
        dparams: *mut blosc2_dparams,
        chunk: *const c_void,
    ) -> c_int,
>;

/// `blosc2_codec`: a registered codec.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_codec {
    pub compcode: u8,
    pub compname: *mut c_char,
    pub complib: u8,
    pub version: u8,
    pub encoder: blosc2_codec_encoder_cb,
    pub decoder: blosc2_codec_decoder_cb,
}

/// `blosc2_filter_forward_cb`: (src, dest, size, meta, cparams, id).
pub type blosc2_filter_forward_cb =
    Option<unsafe extern "C" fn(*const u8, *mut u8, i32, u8, *mut blosc2_cparams, u8) -> c_int>;
/// `blosc2_filter_backward_cb`: (src, dest, size, meta, dparams, id).
pub type blosc2_filter_backward_cb =
    Option<unsafe extern "C" fn(*const u8, *mut u8, i32, u8, *mut blosc2_dparams, u8) -> c_int>;

/// `blosc2_filter`: a registered filter.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct blosc2_filter {
    pub id: u8,
    pub name: *mut c_char,
    pub version: u8,
    pub forward: blosc2_filter_forward_cb,
    pub backward: blosc2_filter_backward_cb,
}

// ---------------------------------------------------------------------------------------------
// Defaults (`static const` in the C headers; same values)
// ---------------------------------------------------------------------------------------------

/// `BLOSC2_CPARAMS_DEFAULTS`.
pub const BLOSC2_CPARAMS_DEFAULTS: blosc2_cparams = blosc2_cparams {
    compcode: BLOSC_BLOSCLZ as u8,
    compcode_meta: 0,
    clevel: 5,
    use_dict: 0,
    typesize: 8,
    nthreads: 1,
    blocksize: 0,
    splitmode: BLOSC_FORWARD_COMPAT_SPLIT,
    schunk: std::ptr::null_mut(),
    filters: [0, 0, 0, 0, 0, BLOSC_SHUFFLE as u8],
    filters_meta: [0; BLOSC2_MAX_FILTERS],
    prefilter: None,
    preparams: std::ptr::null_mut(),
    tuner_params: std::ptr::null_mut(),
    tuner_id: 0,
    instr_codec: false,
    codec_params: std::ptr::null_mut(),
    filter_params: [std::ptr::null_mut(); BLOSC2_MAX_FILTERS],
};

/// `BLOSC2_DPARAMS_DEFAULTS`.
pub const BLOSC2_DPARAMS_DEFAULTS: blosc2_dparams = blosc2_dparams {
    nthreads: 1,
    schunk: std::ptr::null_mut(),
    postfilter: None,
    postparams: std::ptr::null_mut(),
    typesize: 8,
};

/// `BLOSC2_STORAGE_DEFAULTS` (a NULL `io` means [`BLOSC2_IO_DEFAULTS`]).
pub const BLOSC2_STORAGE_DEFAULTS: blosc2_storage = blosc2_storage {
    contiguous: false,
    urlpath: std::ptr::null_mut(),
    cparams: std::ptr::null_mut(),
    dparams: std::ptr::null_mut(),
    io: std::ptr::null_mut(),
};

/// Name of the filesystem backend (`BLOSC2_IO_DEFAULTS.name`), NUL-terminated.
pub const BLOSC2_IO_FILESYSTEM_NAME: &std::ffi::CStr = c"filesystem";

/// `BLOSC2_IO_DEFAULTS`: the filesystem backend.
pub const BLOSC2_IO_DEFAULTS: blosc2_io = blosc2_io {
    id: BLOSC2_IO_FILESYSTEM as u8,
    name: BLOSC2_IO_FILESYSTEM_NAME.as_ptr(),
    params: std::ptr::null_mut(),
};

/// `BLOSC2_STDIO_PARAMS_DEFAULTS`: no file locking.
pub const BLOSC2_STDIO_PARAMS_DEFAULTS: blosc2_stdio_params =
    blosc2_stdio_params { locking: false };

/// Default mode of the mmap backend (`BLOSC2_STDIO_MMAP_DEFAULTS.mode`), NUL-terminated.
pub const BLOSC2_STDIO_MMAP_DEFAULT_MODE: &std::ffi::CStr = c"r";

/// `BLOSC2_STDIO_MMAP_DEFAULTS`: read-only, 1 GiB initial mapping, nothing opened yet.
pub const BLOSC2_STDIO_MMAP_DEFAULTS: blosc2_stdio_mmap = blosc2_stdio_mmap {
    mode: BLOSC2_STDIO_MMAP_DEFAULT_MODE.as_ptr(),
    initial_mapping_size: 1 << 30,
    needs_free: false,
    addr: std::ptr::null_mut(),
    urlpath: std::ptr::null_mut(),
    file_size: 0,
    mapping_size: 0,
    is_memory_only: false,
    file: std::ptr::null_mut(),
    fd: -1,
    access_flags: -1,
    map_flags: -1,
    // INVALID_HANDLE_VALUE, as c-blosc2's getter returns it on Windows (the static initializer
    // in blosc2-stdio.h leaves it NULL, as c-blosc2's does).
    #[cfg(windows)]
    mmap_handle: usize::MAX as *mut c_void,
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn cparams_layout() {
        assert_eq!(size_of::<blosc2_cparams>(), 136);
        assert_eq!(offset_of!(blosc2_cparams, compcode), 0);
        assert_eq!(offset_of!(blosc2_cparams, compcode_meta), 1);
        assert_eq!(offset_of!(blosc2_cparams, clevel), 2);
        assert_eq!(offset_of!(blosc2_cparams, use_dict), 4);
        assert_eq!(offset_of!(blosc2_cparams, typesize), 8);
        assert_eq!(offset_of!(blosc2_cparams, nthreads), 12);
        assert_eq!(offset_of!(blosc2_cparams, blocksize), 16);
        assert_eq!(offset_of!(blosc2_cparams, splitmode), 20);
        assert_eq!(offset_of!(blosc2_cparams, schunk), 24);
        assert_eq!(offset_of!(blosc2_cparams, filters), 32);
        assert_eq!(offset_of!(blosc2_cparams, filters_meta), 38);
        assert_eq!(offset_of!(blosc2_cparams, prefilter), 48);
        assert_eq!(offset_of!(blosc2_cparams, preparams), 56);
        assert_eq!(offset_of!(blosc2_cparams, tuner_params), 64);
        assert_eq!(offset_of!(blosc2_cparams, tuner_id), 72);
        assert_eq!(offset_of!(blosc2_cparams, instr_codec), 76);
        assert_eq!(offset_of!(blosc2_cparams, codec_params), 80);
        assert_eq!(offset_of!(blosc2_cparams, filter_params), 88);
    }

    #[test]
    fn dparams_layout() {
        assert_eq!(size_of::<blosc2_dparams>(), 40);
        assert_eq!(offset_of!(blosc2_dparams, nthreads), 0);
        assert_eq!(offset_of!(blosc2_dparams, schunk), 8);
        assert_eq!(offset_of!(blosc2_dparams, postfilter), 16);
        assert_eq!(offset_of!(blosc2_dparams, postparams), 24);
        assert_eq!(offset_of!(blosc2_dparams, typesize), 32);
    }

    #[test]
    fn storage_and_io_layouts() {
        assert_eq!(size_of::<blosc2_storage>(), 40);
        assert_eq!(offset_of!(blosc2_storage, contiguous), 0);
        assert_eq!(offset_of!(blosc2_storage, urlpath), 8);
        assert_eq!(offset_of!(blosc2_storage, cparams), 16);
        assert_eq!(offset_of!(blosc2_storage, dparams), 24);
        assert_eq!(offset_of!(blosc2_storage, io), 32);

        assert_eq!(size_of::<blosc2_io>(), 24);
        assert_eq!(offset_of!(blosc2_io, id), 0);
        assert_eq!(offset_of!(blosc2_io, name), 8);
        assert_eq!(offset_of!(blosc2_io, params), 16);

        assert_eq!(size_of::<blosc2_io_cb>(), 80);
        assert_eq!(offset_of!(blosc2_io_cb, id), 0);
        assert_eq!(offset_of!(blosc2_io_cb, name), 8);
        assert_eq!(offset_of!(blosc2_io_cb, is_allocation_necessary), 16);
        assert_eq!(offset_of!(blosc2_io_cb, open), 24);
        assert_eq!(offset_of!(blosc2_io_cb, close), 32);
        assert_eq!(offset_of!(blosc2_io_cb, size), 40);
        assert_eq!(offset_of!(blosc2_io_cb, write), 48);
        assert_eq!(offset_of!(blosc2_io_cb, read), 56);
        assert_eq!(offset_of!(blosc2_io_cb, truncate), 64);
        assert_eq!(offset_of!(blosc2_io_cb, destroy), 72);

        assert_eq!(size_of::<blosc2_stdio_file>(), 8);
        assert_eq!(offset_of!(blosc2_stdio_file, file), 0);
        assert_eq!(size_of::<blosc2_stdio_params>(), 1);
        assert_eq!(offset_of!(blosc2_stdio_params, locking), 0);
    }

    #[test]
    fn stdio_mmap_layout() {
        #[cfg(not(windows))]
        assert_eq!(size_of::<blosc2_stdio_mmap>(), 96);
        #[cfg(windows)]
        assert_eq!(size_of::<blosc2_stdio_mmap>(), 104);
        #[cfg(windows)]
        assert_eq!(offset_of!(blosc2_stdio_mmap, mmap_handle), 96);
        assert_eq!(offset_of!(blosc2_stdio_mmap, mode), 0);
        assert_eq!(offset_of!(blosc2_stdio_mmap, initial_mapping_size), 8);
        assert_eq!(offset_of!(blosc2_stdio_mmap, needs_free), 16);
        assert_eq!(offset_of!(blosc2_stdio_mmap, addr), 24);
        assert_eq!(offset_of!(blosc2_stdio_mmap, urlpath), 32);
        assert_eq!(offset_of!(blosc2_stdio_mmap, file_size), 40);
        assert_eq!(offset_of!(blosc2_stdio_mmap, mapping_size), 48);
        assert_eq!(offset_of!(blosc2_stdio_mmap, is_memory_only), 56);
        assert_eq!(offset_of!(blosc2_stdio_mmap, file), 64);
        assert_eq!(offset_of!(blosc2_stdio_mmap, fd), 72);
        assert_eq!(offset_of!(blosc2_stdio_mmap, access_flags), 80);
        assert_eq!(offset_of!(blosc2_stdio_mmap, map_flags), 88);
    }

    #[test]
    fn metalayer_and_schunk_layouts() {
        assert_eq!(size_of::<blosc2_metalayer>(), 24);
        assert_eq!(offset_of!(blosc2_metalayer, name), 0);
        assert_eq!(offset_of!(blosc2_metalayer, content), 8);
        assert_eq!(offset_of!(blosc2_metalayer, content_len), 16);

        assert_eq!(size_of::<blosc2_schunk>(), 65840);
        assert_eq!(align_of::<blosc2_schunk>(), 8);
        let expected = [
            (offset_of!(blosc2_schunk, version), 0),
            (offset_of!(blosc2_schunk, compcode), 1),
            (offset_of!(blosc2_schunk, compcode_meta), 2),
            (offset_of!(blosc2_schunk, clevel), 3),
            (offset_of!(blosc2_schunk, splitmode), 4),
            (offset_of!(blosc2_schunk, typesize), 8),
            (offset_of!(blosc2_schunk, blocksize), 12),
            (offset_of!(blosc2_schunk, chunksize), 16),
            (offset_of!(blosc2_schunk, flags2), 20),
            (offset_of!(blosc2_schunk, use_dict), 21),
            (offset_of!(blosc2_schunk, filters), 22),
            (offset_of!(blosc2_schunk, filters_meta), 28),
            (offset_of!(blosc2_schunk, nchunks), 40),
            (offset_of!(blosc2_schunk, current_nchunk), 48),
            (offset_of!(blosc2_schunk, nbytes), 56),
            (offset_of!(blosc2_schunk, cbytes), 64),
            (offset_of!(blosc2_schunk, data), 72),
            (offset_of!(blosc2_schunk, data_len), 80),
            (offset_of!(blosc2_schunk, storage), 88),
            (offset_of!(blosc2_schunk, frame), 96),
            (offset_of!(blosc2_schunk, cctx), 104),
            (offset_of!(blosc2_schunk, dctx), 112),
            (offset_of!(blosc2_schunk, metalayers), 120),
            (offset_of!(blosc2_schunk, nmetalayers), 248),
            (offset_of!(blosc2_schunk, vlmetalayers), 256),
            (offset_of!(blosc2_schunk, nvlmetalayers), 65792),
            (offset_of!(blosc2_schunk, tuner_params), 65800),
            (offset_of!(blosc2_schunk, tuner_id), 65808),
            (offset_of!(blosc2_schunk, ndim), 65812),
            (offset_of!(blosc2_schunk, blockshape), 65816),
            (offset_of!(blosc2_schunk, view), 65824),
            (offset_of!(blosc2_schunk, change_tick), 65832),
        ];
        for (i, (got, want)) in expected.iter().enumerate() {
            assert_eq!(got, want, "blosc2_schunk field #{i}");
        }
    }

    #[test]
    fn filter_params_layouts() {
        assert_eq!(size_of::<blosc2_prefilter_params>(), 88);
        assert_eq!(offset_of!(blosc2_prefilter_params, user_data), 0);
        assert_eq!(offset_of!(blosc2_prefilter_params, input), 8);
        assert_eq!(offset_of!(blosc2_prefilter_params, output), 16);
        assert_eq!(offset_of!(blosc2_prefilter_params, output_size), 24);
        assert_eq!(offset_of!(blosc2_prefilter_params, output_typesize), 28);
        assert_eq!(offset_of!(blosc2_prefilter_params, output_offset), 32);
        assert_eq!(offset_of!(blosc2_prefilter_params, nchunk), 40);
        assert_eq!(offset_of!(blosc2_prefilter_params, nblock), 48);
        assert_eq!(offset_of!(blosc2_prefilter_params, tid), 52);
        assert_eq!(offset_of!(blosc2_prefilter_params, ttmp), 56);
        assert_eq!(offset_of!(blosc2_prefilter_params, ttmp_nbytes), 64);
        assert_eq!(offset_of!(blosc2_prefilter_params, ctx), 72);
        assert_eq!(
            offset_of!(blosc2_prefilter_params, output_is_disposable),
            80
        );

        assert_eq!(size_of::<blosc2_postfilter_params>(), 80);
        assert_eq!(offset_of!(blosc2_postfilter_params, user_data), 0);
        assert_eq!(offset_of!(blosc2_postfilter_params, input), 8);
        assert_eq!(offset_of!(blosc2_postfilter_params, output), 16);
        assert_eq!(offset_of!(blosc2_postfilter_params, size), 24);
        assert_eq!(offset_of!(blosc2_postfilter_params, typesize), 28);
        assert_eq!(offset_of!(blosc2_postfilter_params, offset), 32);
        assert_eq!(offset_of!(blosc2_postfilter_params, nchunk), 40);
        assert_eq!(offset_of!(blosc2_postfilter_params, nblock), 48);
        assert_eq!(offset_of!(blosc2_postfilter_params, tid), 52);
        assert_eq!(offset_of!(blosc2_postfilter_params, ttmp), 56);
        assert_eq!(offset_of!(blosc2_postfilter_params, ttmp_nbytes), 64);
        assert_eq!(offset_of!(blosc2_postfilter_params, ctx), 72);
    }

    #[test]
    fn plugin_layouts() {
        assert_eq!(size_of::<blosc2_tuner>(), 56);
        assert_eq!(offset_of!(blosc2_tuner, init), 0);
        assert_eq!(offset_of!(blosc2_tuner, next_blocksize), 8);
        assert_eq!(offset_of!(blosc2_tuner, next_cparams), 16);
        assert_eq!(offset_of!(blosc2_tuner, update), 24);
        assert_eq!(offset_of!(blosc2_tuner, free), 32);
        assert_eq!(offset_of!(blosc2_tuner, id), 40);
        assert_eq!(offset_of!(blosc2_tuner, name), 48);

        assert_eq!(size_of::<blosc2_codec>(), 40);
        assert_eq!(offset_of!(blosc2_codec, compcode), 0);
        assert_eq!(offset_of!(blosc2_codec, compname), 8);
        assert_eq!(offset_of!(blosc2_codec, complib), 16);
        assert_eq!(offset_of!(blosc2_codec, version), 17);
        assert_eq!(offset_of!(blosc2_codec, encoder), 24);
        assert_eq!(offset_of!(blosc2_codec, decoder), 32);

        assert_eq!(size_of::<blosc2_filter>(), 40);
        assert_eq!(offset_of!(blosc2_filter, id), 0);
        assert_eq!(offset_of!(blosc2_filter, name), 8);
        assert_eq!(offset_of!(blosc2_filter, version), 16);
        assert_eq!(offset_of!(blosc2_filter, forward), 24);
        assert_eq!(offset_of!(blosc2_filter, backward), 32);

        assert_eq!(size_of::<blosc2_instr>(), 16);
        assert_eq!(offset_of!(blosc2_instr, cratio), 0);
        assert_eq!(offset_of!(blosc2_instr, cspeed), 4);
        assert_eq!(offset_of!(blosc2_instr, filter_speed), 8);
        assert_eq!(offset_of!(blosc2_instr, flags), 12);

        #[cfg(not(windows))]
        assert_eq!(size_of::<blosc_timestamp_t>(), 16);
        #[cfg(windows)]
        assert_eq!(size_of::<blosc_timestamp_t>(), 8);
    }

    #[test]
    fn derived_constants_match_their_c_definitions() {
        assert_eq!(BLOSC2_MAX_BUFFERSIZE, i32::MAX - BLOSC2_MAX_OVERHEAD);
        assert_eq!(BLOSC_MAX_TYPESIZE, u8::MAX as c_int);
        assert_eq!(
            BLOSC_LAST_REGISTERED_FILTER,
            BLOSC2_GLOBAL_REGISTERED_FILTERS_START + BLOSC2_GLOBAL_REGISTERED_FILTERS - 1
        );
        assert_eq!(
            BLOSC_LAST_REGISTERED_CODEC,
            BLOSC2_GLOBAL_REGISTERED_CODECS_START + BLOSC2_GLOBAL_REGISTERED_CODECS - 1
        );
        assert_eq!(
            BLOSC_LAST_REGISTERED_TUNE,
            BLOSC2_GLOBAL_REGISTERED_TUNER_START + BLOSC2_GLOBAL_REGISTERED_TUNERS - 1
        );
        assert_eq!(
            BLOSC2_VERSION_STRING,
            format!("{BLOSC2_VERSION_MAJOR}.{BLOSC2_VERSION_MINOR}.{BLOSC2_VERSION_RELEASE}")
        );
        // The safe core's own constants agree with the C ones.
        assert_eq!(crate::filters::MAX_FILTERS, BLOSC2_MAX_FILTERS);
        assert_eq!(crate::codecs::ZSTD as c_int, BLOSC_ZSTD);
        assert_eq!(crate::codecs::format::ZLIB as c_int, BLOSC_ZLIB_FORMAT);
    }

    #[test]
    fn defaults_have_the_c_values() {
        let c = BLOSC2_CPARAMS_DEFAULTS;
        assert_eq!((c.compcode, c.clevel, c.typesize, c.nthreads), (0, 5, 8, 1));
        assert_eq!((c.splitmode, c.filters), (4, [0, 0, 0, 0, 0, 1]));
        let d = BLOSC2_DPARAMS_DEFAULTS;
        assert_eq!((d.nthreads, d.typesize), (1, 8));
        assert!(!BLOSC2_STORAGE_DEFAULTS.contiguous && BLOSC2_STORAGE_DEFAULTS.io.is_null());
        // SAFETY: the name points to a 'static NUL-terminated literal.
        let name = unsafe { std::ffi::CStr::from_ptr(BLOSC2_IO_DEFAULTS.name) };
        assert_eq!(name.to_bytes(), b"filesystem");
        let m = BLOSC2_STDIO_MMAP_DEFAULTS;
        assert_eq!(
            (m.initial_mapping_size, m.fd, m.access_flags, m.map_flags),
            (1 << 30, -1, -1, -1)
        );
        let params = BLOSC2_STDIO_PARAMS_DEFAULTS;
        assert!(!params.locking);
    }
}
