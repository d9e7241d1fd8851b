/*
 * b2frame: the c-blosc2 3.3 compatible API header.
 *
 * A program written for c-blosc2's frame I/O includes this file instead of c-blosc2's blosc2.h
 * and links against libb2frame. It provides the same names, values, struct layouts and
 * prototypes (the b2nd array API excepted; see b2nd.h for the metalayer helpers).
 *
 * Layout of this header:
 *   - b2frame.h (generated from the Rust sources): the struct types, callback typedefs and the
 *     prototypes of every function libb2frame implements;
 *   - here: the constants (as c-blosc2 spells them: enums and macros), the default-parameter
 *     constants, the header-only helpers (blosc2_meta_exists, blosc2_meta_get, print_error,
 *     swap_store), the tracing macros, and the prototypes of the whole c-blosc2 API. A function
 *     declared both here and in b2frame.h is declared with identical types (checked by
 *     scripts/abi-check.sh against the reference header).
 */
#ifndef BLOSC_BLOSC2_H
#define BLOSC_BLOSC2_H

#include "blosc2/blosc2-export.h"
#include "blosc2/blosc2-common.h"
#include "blosc2/blosc2-stdio.h"
#include "b2frame.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Blosc1 names mapped onto the Blosc2 API (opt in with -DBLOSC1_COMPAT).                     */
/* ------------------------------------------------------------------------------------------ */

#ifdef BLOSC1_COMPAT
#  define BLOSC_VERSION_MAJOR BLOSC2_VERSION_MAJOR
#  define BLOSC_VERSION_MINOR BLOSC2_VERSION_MINOR
#  define BLOSC_VERSION_RELEASE BLOSC2_VERSION_RELEASE
#  define BLOSC_VERSION_STRING BLOSC2_VERSION_STRING
#  define BLOSC_VERSION_DATE BLOSC2_VERSION_DATE
#  define BLOSC_MAX_OVERHEAD BLOSC2_MAX_OVERHEAD
#  define BLOSC_MAX_BUFFERSIZE BLOSC2_MAX_BUFFERSIZE

#  define blosc_compress blosc1_compress
#  define blosc_decompress blosc1_decompress
#  define blosc_getitem blosc1_getitem
#  define blosc_get_compressor blosc1_get_compressor
#  define blosc_set_compressor blosc1_set_compressor
#  define blosc_cbuffer_sizes blosc1_cbuffer_sizes
#  define blosc_cbuffer_validate blosc1_cbuffer_validate
#  define blosc_cbuffer_metainfo blosc1_cbuffer_metainfo
#  define blosc_get_blocksize blosc1_get_blocksize
#  define blosc_set_blocksize blosc1_set_blocksize
#  define blosc_set_splitmode blosc1_set_splitmode

#  define blosc_init blosc2_init
#  define blosc_destroy blosc2_destroy
#  define blosc_free_resources blosc2_free_resources
#  define blosc_get_nthreads blosc2_get_nthreads
#  define blosc_set_nthreads blosc2_set_nthreads
#  define blosc_compcode_to_compname blosc2_compcode_to_compname
#  define blosc_compname_to_compcode blosc2_compname_to_compcode
#  define blosc_list_compressors blosc2_list_compressors
#  define blosc_get_version_string blosc2_get_version_string
#  define blosc_get_complib_info blosc2_get_complib_info
#  define blosc_cbuffer_versions blosc2_cbuffer_versions
#  define blosc_cbuffer_complib blosc2_cbuffer_complib
#endif

/* ------------------------------------------------------------------------------------------ */
/* Version of the c-blosc2 API and behaviour this library reproduces.                         */
/* (b2frame's own version: b2frame_version_string().)                                         */
/* ------------------------------------------------------------------------------------------ */

#define BLOSC2_VERSION_MAJOR 3
#define BLOSC2_VERSION_MINOR 3
#define BLOSC2_VERSION_RELEASE 5
#define BLOSC2_VERSION_STRING "3.3.5"
#define BLOSC2_VERSION_DATE "$Date:: 2026-09-24 #$"

/* ------------------------------------------------------------------------------------------ */
/* Tracing: messages go to stderr only when the BLOSC_TRACE (or BLOSC_INFO) variable is set.   */
/* ------------------------------------------------------------------------------------------ */

#define BLOSC_TRACE_ERROR(msg, ...) BLOSC_TRACE(error, msg, ##__VA_ARGS__)
#define BLOSC_TRACE_WARNING(msg, ...) BLOSC_TRACE(warning, msg, ##__VA_ARGS__)
#define BLOSC_TRACE_INFO(msg, ...) BLOSC_TRACE(info, msg, ##__VA_ARGS__)

#define BLOSC_TRACE(cat, msg, ...)                                                      \
  do {                                                                                  \
    if (getenv("BLOSC_TRACE") != NULL) {                                                \
      fprintf(stderr, "[%s] - " msg " (%s:%d)\n", #cat, ##__VA_ARGS__, __FILE__,        \
              __LINE__);                                                                \
    }                                                                                   \
  } while (0)

/* Returns `rc` from the calling function when `pointer` is NULL. */
#define BLOSC_ERROR_NULL(pointer, rc)                                                   \
  do {                                                                                  \
    if ((pointer) == NULL) {                                                            \
      BLOSC_TRACE_ERROR("Pointer is null");                                             \
      return (rc);                                                                      \
    }                                                                                   \
  } while (0)

/* Returns `rc` from the calling function when it is a (negative) error code. */
#define BLOSC_ERROR(rc)                                                                 \
  do {                                                                                  \
    int blosc_error_rc_ = (rc);                                                         \
    if (blosc_error_rc_ < BLOSC2_ERROR_SUCCESS) {                                       \
      BLOSC_TRACE_ERROR("%s", print_error(blosc_error_rc_));                            \
      return blosc_error_rc_;                                                           \
    }                                                                                   \
  } while (0)

#define BLOSC_INFO(msg, ...)                                                            \
  do {                                                                                  \
    if (getenv("BLOSC_INFO") != NULL) {                                                 \
      fprintf(stderr, "[INFO] - " msg "\n", ##__VA_ARGS__);                             \
    }                                                                                   \
  } while (0)

/* ------------------------------------------------------------------------------------------ */
/* Format versions.                                                                           */
/* ------------------------------------------------------------------------------------------ */

/* Chunk format version (chunk header byte 0). */
enum {
  BLOSC1_VERSION_FORMAT_PRE1 = 1,
  BLOSC1_VERSION_FORMAT = 2,
  BLOSC2_VERSION_FORMAT_ALPHA = 3,
  BLOSC2_VERSION_FORMAT_BETA1 = 4,
  BLOSC2_VERSION_FORMAT_STABLE = 5,
  BLOSC2_VERSION_FORMAT_VL_BLOCKS = 6,
  BLOSC2_VERSION_FORMAT = BLOSC2_VERSION_FORMAT_VL_BLOCKS,
};

/* Contiguous/sparse frame format version. */
enum {
  BLOSC2_VERSION_FRAME_FORMAT_BETA2 = 1,
  BLOSC2_VERSION_FRAME_FORMAT_RC1 = 2,
  BLOSC2_VERSION_FRAME_FORMAT_VL_BLOCKS = 3,
  BLOSC2_VERSION_FRAME_FORMAT = BLOSC2_VERSION_FRAME_FORMAT_VL_BLOCKS,
};

/* ------------------------------------------------------------------------------------------ */
/* Sizes and limits. The names also defined by c-blosc 1.x's blosc.h are skipped when that     */
/* header was included first (BLOSC_H).                                                        */
/* ------------------------------------------------------------------------------------------ */

enum {
#ifndef BLOSC_H
  BLOSC_MIN_HEADER_LENGTH = 16,
#endif
  BLOSC_EXTENDED_HEADER_LENGTH = 32,
  BLOSC2_MAX_OVERHEAD = BLOSC_EXTENDED_HEADER_LENGTH,
  BLOSC2_MAX_BUFFERSIZE = (INT_MAX - BLOSC2_MAX_OVERHEAD),
#ifndef BLOSC_H
  BLOSC_MAX_TYPESIZE = UINT8_MAX,
#endif
  BLOSC_MIN_BUFFERSIZE = 32,
};

/* Tuner ids. */
enum {
  BLOSC2_DEFINED_TUNER_START = 0,
  BLOSC2_DEFINED_TUNER_STOP = 31,
  BLOSC2_GLOBAL_REGISTERED_TUNER_START = 32,
  BLOSC2_GLOBAL_REGISTERED_TUNER_STOP = 159,
  BLOSC2_GLOBAL_REGISTERED_TUNERS = 0,
  BLOSC2_USER_REGISTERED_TUNER_START = 160,
  BLOSC2_USER_REGISTERED_TUNER_STOP = 255,
};

enum {
  BLOSC_STUNE = 0,
  BLOSC_LAST_TUNER = 1,
  BLOSC_LAST_REGISTERED_TUNE =
      BLOSC2_GLOBAL_REGISTERED_TUNER_START + BLOSC2_GLOBAL_REGISTERED_TUNERS - 1,
};

/* Filter ids and pipeline size. */
enum {
  BLOSC2_DEFINED_FILTERS_START = 0,
  BLOSC2_DEFINED_FILTERS_STOP = 31,
  BLOSC2_GLOBAL_REGISTERED_FILTERS_START = 32,
  BLOSC2_GLOBAL_REGISTERED_FILTERS_STOP = 159,
  BLOSC2_GLOBAL_REGISTERED_FILTERS = 5,
  BLOSC2_USER_REGISTERED_FILTERS_START = 160,
  BLOSC2_USER_REGISTERED_FILTERS_STOP = 255,
  BLOSC2_MAX_FILTERS = 6,
  BLOSC2_MAX_UDFILTERS = 16,
};

enum {
#ifndef BLOSC_H
  BLOSC_NOSHUFFLE = 0,
  BLOSC_NOFILTER = 0,
  BLOSC_SHUFFLE = 1,
  BLOSC_BITSHUFFLE = 2,
#endif
  BLOSC_DELTA = 3,
  BLOSC_TRUNC_PREC = 4,
  BLOSC_LAST_FILTER = 5,
  BLOSC_LAST_REGISTERED_FILTER =
      BLOSC2_GLOBAL_REGISTERED_FILTERS_START + BLOSC2_GLOBAL_REGISTERED_FILTERS - 1,
};

/* Chunk header flags (byte 2). */
enum {
#ifndef BLOSC_H
  BLOSC_DOSHUFFLE = 0x1,
  BLOSC_MEMCPYED = 0x2,
  BLOSC_DOBITSHUFFLE = 0x4,
#endif
  BLOSC_DODELTA = 0x8,
};

/* Chunk header blosc2 flags (byte 31). */
enum {
  BLOSC2_USEDICT = 0x1,
  BLOSC2_BIGENDIAN = 0x2,
  BLOSC2_INSTR_CODEC = 0x80,
};

/* Chunk header flags2 (byte 30). */
enum {
  BLOSC2_VL_BLOCKS = 0x1,
};

enum {
  BLOSC2_MAXDICTSIZE = 32 * 1024,
  BLOSC2_MINUSEFULDICT = 256,
  BLOSC2_MAXBLOCKSIZE = 536866816,
  BLOSC2_MAXTYPESIZE = BLOSC2_MAXBLOCKSIZE,
};

/* Codec ids. */
enum {
  BLOSC2_DEFINED_CODECS_START = 0,
  BLOSC2_DEFINED_CODECS_STOP = 31,
  BLOSC2_GLOBAL_REGISTERED_CODECS_START = 32,
  BLOSC2_GLOBAL_REGISTERED_CODECS_STOP = 159,
  BLOSC2_GLOBAL_REGISTERED_CODECS = 5,
  BLOSC2_USER_REGISTERED_CODECS_START = 160,
  BLOSC2_USER_REGISTERED_CODECS_STOP = 255,
};

enum {
#ifndef BLOSC_H
  BLOSC_BLOSCLZ = 0,
  BLOSC_LZ4 = 1,
  BLOSC_LZ4HC = 2,
  BLOSC_ZLIB = 4,
  BLOSC_ZSTD = 5,
#endif
  BLOSC_LAST_CODEC = 6,
  BLOSC_LAST_REGISTERED_CODEC =
      BLOSC2_GLOBAL_REGISTERED_CODECS_START + BLOSC2_GLOBAL_REGISTERED_CODECS - 1,
};

#ifndef BLOSC_H
#  define BLOSC_BLOSCLZ_COMPNAME "blosclz"
#  define BLOSC_LZ4_COMPNAME "lz4"
#  define BLOSC_LZ4HC_COMPNAME "lz4hc"
#  define BLOSC_ZLIB_COMPNAME "zlib"
#  define BLOSC_ZSTD_COMPNAME "zstd"
#endif

/* Codec library codes (what blosc2_get_complib_info returns). */
enum {
#ifndef BLOSC_H
  BLOSC_BLOSCLZ_LIB = 0,
  BLOSC_LZ4_LIB = 1,
  BLOSC_ZLIB_LIB = 3,
  BLOSC_ZSTD_LIB = 4,
#endif
  BLOSC_UDCODEC_LIB = 6,
  BLOSC_SCHUNK_LIB = 7,
};

#ifndef BLOSC_H
#  define BLOSC_BLOSCLZ_LIBNAME "BloscLZ"
#  define BLOSC_LZ4_LIBNAME "LZ4"
#  define BLOSC_ZLIB_LIBNAME "Zlib"
#  define BLOSC_ZSTD_LIBNAME "Zstd"
#endif

/* Codec format codes (chunk flags bits 5-7). */
enum {
#ifndef BLOSC_H
  BLOSC_BLOSCLZ_FORMAT = BLOSC_BLOSCLZ_LIB,
  BLOSC_LZ4_FORMAT = BLOSC_LZ4_LIB,
  BLOSC_LZ4HC_FORMAT = BLOSC_LZ4_LIB,
  BLOSC_ZLIB_FORMAT = BLOSC_ZLIB_LIB,
  BLOSC_ZSTD_FORMAT = BLOSC_ZSTD_LIB,
#endif
  BLOSC_UDCODEC_FORMAT = BLOSC_UDCODEC_LIB,
};

/* Per-codec stream format versions (chunk header byte 1). */
enum {
#ifndef BLOSC_H
  BLOSC_BLOSCLZ_VERSION_FORMAT = 1,
  BLOSC_LZ4_VERSION_FORMAT = 1,
  BLOSC_LZ4HC_VERSION_FORMAT = 1,
  BLOSC_ZLIB_VERSION_FORMAT = 1,
  BLOSC_ZSTD_VERSION_FORMAT = 1,
#endif
  BLOSC_UDCODEC_VERSION_FORMAT = 1,
};

/* Whether blocks are split into one stream per byte of the type. */
#ifndef BLOSC_H
enum {
  BLOSC_ALWAYS_SPLIT = 1,
  BLOSC_NEVER_SPLIT = 2,
  BLOSC_AUTO_SPLIT = 3,
  BLOSC_FORWARD_COMPAT_SPLIT = 4,
};
#endif

/* Byte offsets of the chunk header fields. */
enum {
  BLOSC2_CHUNK_VERSION = 0x0,
  BLOSC2_CHUNK_VERSIONLZ = 0x1,
  BLOSC2_CHUNK_FLAGS = 0x2,
  BLOSC2_CHUNK_TYPESIZE = 0x3,
  BLOSC2_CHUNK_NBYTES = 0x4,
  BLOSC2_CHUNK_BLOCKSIZE = 0x8,
  BLOSC2_CHUNK_CBYTES = 0xc,
  BLOSC2_CHUNK_FILTER_CODES = 0x10,
  BLOSC2_CHUNK_FILTER_META = 0x18,
  BLOSC2_CHUNK_BLOSC2_FLAGS2 = 0x1e,
  BLOSC2_CHUNK_BLOSC2_FLAGS = 0x1f,
};

/* Special-value chunks (blosc2 flags bits 4-6). */
enum {
  BLOSC2_NO_SPECIAL = 0x0,
  BLOSC2_SPECIAL_ZERO = 0x1,
  BLOSC2_SPECIAL_NAN = 0x2,
  BLOSC2_SPECIAL_VALUE = 0x3,
  BLOSC2_SPECIAL_UNINIT = 0x4,
  BLOSC2_SPECIAL_LASTID = 0x4,
  BLOSC2_SPECIAL_MASK = 0x7,
};

/* Error codes: functions return them negated; blosc2_error_string describes them. */
enum {
  BLOSC2_ERROR_SUCCESS = 0,
  BLOSC2_ERROR_FAILURE = -1,
  BLOSC2_ERROR_STREAM = -2,
  BLOSC2_ERROR_DATA = -3,
  BLOSC2_ERROR_MEMORY_ALLOC = -4,
  BLOSC2_ERROR_READ_BUFFER = -5,
  BLOSC2_ERROR_WRITE_BUFFER = -6,
  BLOSC2_ERROR_CODEC_SUPPORT = -7,
  BLOSC2_ERROR_CODEC_PARAM = -8,
  BLOSC2_ERROR_CODEC_DICT = -9,
  BLOSC2_ERROR_VERSION_SUPPORT = -10,
  BLOSC2_ERROR_INVALID_HEADER = -11,
  BLOSC2_ERROR_INVALID_PARAM = -12,
  BLOSC2_ERROR_FILE_READ = -13,
  BLOSC2_ERROR_FILE_WRITE = -14,
  BLOSC2_ERROR_FILE_OPEN = -15,
  BLOSC2_ERROR_NOT_FOUND = -16,
  BLOSC2_ERROR_RUN_LENGTH = -17,
  BLOSC2_ERROR_FILTER_PIPELINE = -18,
  BLOSC2_ERROR_CHUNK_INSERT = -19,
  BLOSC2_ERROR_CHUNK_APPEND = -20,
  BLOSC2_ERROR_CHUNK_UPDATE = -21,
  BLOSC2_ERROR_2GB_LIMIT = -22,
  BLOSC2_ERROR_SCHUNK_COPY = -23,
  BLOSC2_ERROR_FRAME_TYPE = -24,
  BLOSC2_ERROR_FILE_TRUNCATE = -25,
  BLOSC2_ERROR_THREAD_CREATE = -26,
  BLOSC2_ERROR_POSTFILTER = -27,
  BLOSC2_ERROR_FRAME_SPECIAL = -28,
  BLOSC2_ERROR_SCHUNK_SPECIAL = -29,
  BLOSC2_ERROR_PLUGIN_IO = -30,
  BLOSC2_ERROR_FILE_REMOVE = -31,
  BLOSC2_ERROR_NULL_POINTER = -32,
  BLOSC2_ERROR_INVALID_INDEX = -33,
  BLOSC2_ERROR_METALAYER_NOT_FOUND = -34,
  BLOSC2_ERROR_MAX_BUFSIZE_EXCEEDED = -35,
  BLOSC2_ERROR_TUNER = -36,
  BLOSC2_ERROR_LOCK = -37,
};

/* I/O backend ids. */
enum {
  BLOSC2_IO_FILESYSTEM = 0,
  BLOSC2_IO_FILESYSTEM_MMAP = 1,
  BLOSC_IO_LAST_BLOSC_DEFINED = 2,
  BLOSC_IO_LAST_REGISTERED = 32,
};

enum {
  BLOSC2_IO_BLOSC_DEFINED = 32,
  BLOSC2_IO_REGISTERED = 160,
  BLOSC2_IO_USER_DEFINED = 256,
};

/* Metalayer limits of a super-chunk. */
#define BLOSC2_MAX_METALAYERS 16
#define BLOSC2_METALAYER_NAME_MAXLEN 31
#define BLOSC2_MAX_VLMETALAYERS (8 * 1024)
#define BLOSC2_VLMETALAYERS_NAME_MAXLEN BLOSC2_METALAYER_NAME_MAXLEN

#if defined(__GNUC__)
#  define BLOSC_ATTRIBUTE_UNUSED __attribute__((unused))
#else
#  define BLOSC_ATTRIBUTE_UNUSED
#endif

/* ------------------------------------------------------------------------------------------ */
/* Default parameters (one copy per translation unit, as in c-blosc2; fields in order).       */
/* ------------------------------------------------------------------------------------------ */

/* BloscLZ at clevel 5, typesize 8, one thread, automatic blocksize, shuffle in the last slot. */
static const blosc2_cparams BLOSC2_CPARAMS_DEFAULTS = {
    BLOSC_BLOSCLZ,              /* compcode */
    0,                          /* compcode_meta */
    5,                          /* clevel */
    0,                          /* use_dict */
    8,                          /* typesize */
    1,                          /* nthreads */
    0,                          /* blocksize */
    BLOSC_FORWARD_COMPAT_SPLIT, /* splitmode */
    NULL,                       /* schunk */
    {0, 0, 0, 0, 0, BLOSC_SHUFFLE},       /* filters */
    {0, 0, 0, 0, 0, 0},                   /* filters_meta */
    NULL,                                 /* prefilter */
    NULL,                                 /* preparams */
    NULL,                                 /* tuner_params */
    0,                                    /* tuner_id */
    false,                                /* instr_codec */
    NULL,                                 /* codec_params */
    {NULL, NULL, NULL, NULL, NULL, NULL}, /* filter_params */
};

/* One thread, no postfilter, typesize 8. */
static const blosc2_dparams BLOSC2_DPARAMS_DEFAULTS = {1, NULL, NULL, NULL, 8};

/* The filesystem backend. */
static const blosc2_io BLOSC2_IO_DEFAULTS = {BLOSC2_IO_FILESYSTEM, "filesystem", NULL};

/* An in-memory, non-contiguous super-chunk with default parameters and I/O. */
static const blosc2_storage BLOSC2_STORAGE_DEFAULTS = {false, NULL, NULL, NULL, NULL};

/* ------------------------------------------------------------------------------------------ */
/* Library state, errors, versions, codec names.                                               */
/* ------------------------------------------------------------------------------------------ */

BLOSC_EXPORT const char *blosc2_error_string(int error_code);

/* The message of an error code (for the BLOSC_ERROR macro). */
static char *print_error(int rc) BLOSC_ATTRIBUTE_UNUSED;
static char *print_error(int rc) { return (char *)blosc2_error_string(rc); }

BLOSC_EXPORT void blosc2_init(void);
BLOSC_EXPORT void blosc2_destroy(void);
BLOSC_EXPORT int blosc2_free_resources(void);

BLOSC_EXPORT void blosc2_set_threads_callback(blosc_threads_callback callback,
                                              void *callback_data);
BLOSC_EXPORT int16_t blosc2_get_nthreads(void);
BLOSC_EXPORT int16_t blosc2_set_nthreads(int16_t nthreads);

BLOSC_EXPORT const char *blosc1_get_compressor(void);
BLOSC_EXPORT int blosc1_set_compressor(const char *compname);
BLOSC_EXPORT void blosc2_set_delta(int dodelta);
BLOSC_EXPORT int blosc1_get_blocksize(void);
BLOSC_EXPORT void blosc1_set_blocksize(size_t blocksize);
BLOSC_EXPORT void blosc1_set_splitmode(int splitmode);

BLOSC_EXPORT int blosc2_compcode_to_compname(int compcode, const char **compname);
BLOSC_EXPORT int blosc2_compname_to_compcode(const char *compname);
BLOSC_EXPORT const char *blosc2_list_compressors(void);
BLOSC_EXPORT const char *blosc2_get_version_string(void);
BLOSC_EXPORT int blosc2_get_complib_info(const char *compname, char **complib, char **version);

BLOSC_EXPORT blosc2_cparams blosc2_get_blosc2_cparams_defaults(void);
BLOSC_EXPORT blosc2_dparams blosc2_get_blosc2_dparams_defaults(void);
BLOSC_EXPORT blosc2_storage blosc2_get_blosc2_storage_defaults(void);
BLOSC_EXPORT blosc2_io blosc2_get_blosc2_io_defaults(void);
BLOSC_EXPORT blosc2_stdio_mmap blosc2_get_blosc2_stdio_mmap_defaults(void);

/* ------------------------------------------------------------------------------------------ */
/* One-shot compression with global state (Blosc1 and Blosc2 flavours).                       */
/* ------------------------------------------------------------------------------------------ */

BLOSC_EXPORT int blosc1_compress(int clevel, int doshuffle, size_t typesize, size_t nbytes,
                                 const void *src, void *dest, size_t destsize);
BLOSC_EXPORT int blosc1_decompress(const void *src, void *dest, size_t destsize);
BLOSC_EXPORT int blosc1_getitem(const void *src, int start, int nitems, void *dest);

BLOSC_EXPORT int blosc2_compress(int clevel, int doshuffle, int32_t typesize, const void *src,
                                 int32_t srcsize, void *dest, int32_t destsize);
BLOSC_EXPORT int blosc2_decompress(const void *src, int32_t srcsize, void *dest,
                                   int32_t destsize);
BLOSC_EXPORT int blosc2_getitem(const void *src, int32_t srcsize, int start, int nitems,
                                void *dest, int32_t destsize);

/* Inspecting compressed buffers. */
BLOSC_EXPORT void blosc1_cbuffer_sizes(const void *cbuffer, size_t *nbytes, size_t *cbytes,
                                       size_t *blocksize);
BLOSC_EXPORT int blosc2_cbuffer_sizes(const void *cbuffer, int32_t *nbytes, int32_t *cbytes,
                                      int32_t *blocksize);
BLOSC_EXPORT int blosc1_cbuffer_validate(const void *cbuffer, size_t cbytes, size_t *nbytes);
BLOSC_EXPORT void blosc1_cbuffer_metainfo(const void *cbuffer, size_t *typesize, int *flags);
BLOSC_EXPORT void blosc2_cbuffer_versions(const void *cbuffer, int *version, int *versionlz);
BLOSC_EXPORT const char *blosc2_cbuffer_complib(const void *cbuffer);

/* ------------------------------------------------------------------------------------------ */
/* I/O backends and plugins.                                                                  */
/* ------------------------------------------------------------------------------------------ */

BLOSC_EXPORT int blosc2_register_io_cb(const blosc2_io_cb *io);
BLOSC_EXPORT blosc2_io_cb *blosc2_get_io_cb(uint8_t id);
BLOSC_EXPORT int blosc2_register_tuner(blosc2_tuner *tuner);
BLOSC_EXPORT int blosc2_register_codec(blosc2_codec *codec);
BLOSC_EXPORT int blosc2_register_filter(blosc2_filter *filter);

/* ------------------------------------------------------------------------------------------ */
/* Contexts.                                                                                  */
/* ------------------------------------------------------------------------------------------ */

BLOSC_EXPORT blosc2_context *blosc2_create_cctx(blosc2_cparams cparams);
BLOSC_EXPORT blosc2_context *blosc2_create_dctx(blosc2_dparams dparams);
BLOSC_EXPORT void blosc2_free_ctx(blosc2_context *context);
BLOSC_EXPORT int blosc2_ctx_get_cparams(blosc2_context *ctx, blosc2_cparams *cparams);
BLOSC_EXPORT int blosc2_ctx_get_dparams(blosc2_context *ctx, blosc2_dparams *dparams);
BLOSC_EXPORT int blosc2_set_maskout(blosc2_context *ctx, bool *maskout, int nblocks);

BLOSC_EXPORT int blosc2_compress_ctx(blosc2_context *context, const void *src, int32_t srcsize,
                                     void *dest, int32_t destsize);
BLOSC_EXPORT int blosc2_decompress_ctx(blosc2_context *context, const void *src,
                                       int32_t srcsize, void *dest, int32_t destsize);
BLOSC_EXPORT int blosc2_getitem_ctx(blosc2_context *context, const void *src, int32_t srcsize,
                                    int start, int nitems, void *dest, int32_t destsize);
BLOSC_EXPORT int blosc2_getitem_bytes_ctx(blosc2_context *context, const void *src,
                                          int32_t srcsize, int32_t start, int32_t nbytes,
                                          void *dest, int32_t destsize);

/* Chunks made of variable-length blocks. */
BLOSC_EXPORT int blosc2_vlcompress_ctx(blosc2_context *context, const void *const *srcs,
                                       const int32_t *srcsizes, int32_t nblocks, void *dest,
                                       int32_t destsize);
BLOSC_EXPORT int blosc2_vldecompress_ctx(blosc2_context *context, const void *src,
                                         int32_t srcsize, void **dests, int32_t *destsizes,
                                         int32_t maxblocks);
BLOSC_EXPORT int blosc2_vlchunk_get_nblocks(const void *src, int32_t srcsize, int32_t *nblocks);
BLOSC_EXPORT int blosc2_vldecompress_block_ctx(blosc2_context *context, const void *src,
                                               int32_t srcsize, int32_t nblock, uint8_t **dest,
                                               int32_t *destsize);

/* Header-only chunks holding one repeated value. */
BLOSC_EXPORT int blosc2_chunk_zeros(blosc2_cparams cparams, int32_t nbytes, void *dest,
                                    int32_t destsize);
BLOSC_EXPORT int blosc2_chunk_nans(blosc2_cparams cparams, int32_t nbytes, void *dest,
                                   int32_t destsize);
BLOSC_EXPORT int blosc2_chunk_repeatval(blosc2_cparams cparams, int32_t nbytes, void *dest,
                                        int32_t destsize, const void *repeatval);
BLOSC_EXPORT int blosc2_chunk_uninit(blosc2_cparams cparams, int32_t nbytes, void *dest,
                                     int32_t destsize);

/* ------------------------------------------------------------------------------------------ */
/* Super-chunks.                                                                              */
/* ------------------------------------------------------------------------------------------ */

BLOSC_EXPORT blosc2_schunk *blosc2_schunk_new(blosc2_storage *storage);
BLOSC_EXPORT blosc2_schunk *blosc2_schunk_copy(blosc2_schunk *schunk, blosc2_storage *storage);
BLOSC_EXPORT blosc2_schunk *blosc2_schunk_from_buffer(uint8_t *cframe, int64_t len, bool copy);
BLOSC_EXPORT void blosc2_schunk_avoid_cframe_free(blosc2_schunk *schunk, bool avoid_cframe_free);
BLOSC_EXPORT int blosc2_schunk_lock(blosc2_schunk *schunk);
BLOSC_EXPORT int blosc2_schunk_unlock(blosc2_schunk *schunk);
BLOSC_EXPORT int blosc2_schunk_refresh(blosc2_schunk *schunk);
BLOSC_EXPORT blosc2_schunk *blosc2_schunk_open(const char *urlpath);
BLOSC_EXPORT blosc2_schunk *blosc2_schunk_open_offset(const char *urlpath, int64_t offset);
BLOSC_EXPORT blosc2_schunk *blosc2_schunk_open_udio(const char *urlpath, const blosc2_io *udio);
BLOSC_EXPORT blosc2_schunk *blosc2_schunk_open_offset_udio(const char *urlpath, int64_t offset,
                                                           const blosc2_io *udio);
BLOSC_EXPORT int64_t blosc2_schunk_to_buffer(blosc2_schunk *schunk, uint8_t **cframe,
                                             bool *needs_free);
BLOSC_EXPORT int64_t blosc2_schunk_to_file(blosc2_schunk *schunk, const char *urlpath);
BLOSC_EXPORT int64_t blosc2_schunk_append_file(blosc2_schunk *schunk, const char *urlpath);
BLOSC_EXPORT int blosc2_schunk_free(blosc2_schunk *schunk);

BLOSC_EXPORT int64_t blosc2_schunk_append_chunk(blosc2_schunk *schunk, uint8_t *chunk,
                                                bool copy);
BLOSC_EXPORT int64_t blosc2_schunk_update_chunk(blosc2_schunk *schunk, int64_t nchunk,
                                                uint8_t *chunk, bool copy);
BLOSC_EXPORT int64_t blosc2_schunk_insert_chunk(blosc2_schunk *schunk, int64_t nchunk,
                                                uint8_t *chunk, bool copy);
BLOSC_EXPORT int64_t blosc2_schunk_delete_chunk(blosc2_schunk *schunk, int64_t nchunk);
BLOSC_EXPORT int64_t blosc2_schunk_append_buffer(blosc2_schunk *schunk, const void *src,
                                                 int32_t nbytes);
BLOSC_EXPORT int blosc2_schunk_decompress_chunk(blosc2_schunk *schunk, int64_t nchunk,
                                                void *dest, int32_t nbytes);
BLOSC_EXPORT int blosc2_schunk_get_chunk(blosc2_schunk *schunk, int64_t nchunk,
                                         uint8_t **chunk, bool *needs_free);
BLOSC_EXPORT int blosc2_schunk_get_lazychunk(blosc2_schunk *schunk, int64_t nchunk,
                                             uint8_t **chunk, bool *needs_free);
BLOSC_EXPORT int blosc2_schunk_get_vlblock(blosc2_schunk *schunk, int64_t nchunk,
                                           int32_t nblock, uint8_t **dest, int32_t *destsize);
BLOSC_EXPORT int blosc2_schunk_get_slice_buffer(blosc2_schunk *schunk, int64_t start,
                                                int64_t stop, void *buffer);
BLOSC_EXPORT int blosc2_schunk_get_sparse_buffer(blosc2_schunk *schunk, int64_t ncoords,
                                                 const int64_t *coords, void *buffer);
BLOSC_EXPORT int blosc2_schunk_set_slice_buffer(blosc2_schunk *schunk, int64_t start,
                                                int64_t stop, void *buffer);
BLOSC_EXPORT int blosc2_schunk_get_cparams(blosc2_schunk *schunk, blosc2_cparams **cparams);
BLOSC_EXPORT int blosc2_schunk_get_dparams(blosc2_schunk *schunk, blosc2_dparams **dparams);
BLOSC_EXPORT int blosc2_schunk_reorder_offsets(blosc2_schunk *schunk, int64_t *offsets_order);
BLOSC_EXPORT int64_t blosc2_schunk_frame_len(blosc2_schunk *schunk);
BLOSC_EXPORT int64_t blosc2_schunk_fill_special(blosc2_schunk *schunk, int64_t nitems,
                                                int special_value, int32_t chunksize);
BLOSC_EXPORT int64_t *blosc2_frame_get_offsets(blosc2_schunk *schunk);
BLOSC_EXPORT int64_t blosc2_get_slice_nchunks(blosc2_schunk *schunk, int64_t *start,
                                              int64_t *stop, int64_t **chunks_idx);

/* ------------------------------------------------------------------------------------------ */
/* Fixed-length metalayers (stored in the frame header, read through schunk->metalayers).      */
/* ------------------------------------------------------------------------------------------ */

/* Index of the metalayer called `name`, or BLOSC2_ERROR_NOT_FOUND. */
static inline int blosc2_meta_exists(blosc2_schunk *schunk, const char *name) {
  int i;
  if (name == NULL || strlen(name) > BLOSC2_METALAYER_NAME_MAXLEN) {
    BLOSC_TRACE_ERROR("Metalayer names are at most %d chars long.",
                      BLOSC2_METALAYER_NAME_MAXLEN);
    return BLOSC2_ERROR_INVALID_PARAM;
  }
  if (schunk == NULL) {
    BLOSC_TRACE_ERROR("The super-chunk is NULL.");
    return BLOSC2_ERROR_INVALID_PARAM;
  }
  for (i = 0; i < (int)schunk->nmetalayers; i++) {
    const blosc2_metalayer *meta = schunk->metalayers[i];
    if (meta != NULL && meta->name != NULL && strcmp(name, meta->name) == 0) {
      return i;
    }
  }
  return BLOSC2_ERROR_NOT_FOUND;
}

BLOSC_EXPORT int blosc2_meta_add(blosc2_schunk *schunk, const char *name, uint8_t *content,
                                 int32_t content_len);
BLOSC_EXPORT int blosc2_meta_update(blosc2_schunk *schunk, const char *name, uint8_t *content,
                                    int32_t content_len);

/*
 * Copies the content of metalayer `name` into a new malloc'ed buffer (*content, NULL when the
 * content is empty; the caller frees it) and returns the metalayer index, or a negative error.
 */
static inline int blosc2_meta_get(blosc2_schunk *schunk, const char *name, uint8_t **content,
                                  int32_t *content_len) {
  int index;
  const blosc2_metalayer *meta;
  if (schunk == NULL || name == NULL || content == NULL || content_len == NULL) {
    BLOSC_TRACE_ERROR("blosc2_meta_get: NULL argument.");
    return BLOSC2_ERROR_INVALID_PARAM;
  }
  index = blosc2_meta_exists(schunk, name);
  if (index < 0) {
    BLOSC_TRACE_WARNING("No metalayer called \"%s\".", name);
    return index;
  }
  meta = schunk->metalayers[index];
  if (meta->content_len < 0) {
    BLOSC_TRACE_ERROR("Metalayer \"%s\" has a negative length.", name);
    return BLOSC2_ERROR_DATA;
  }
  if (meta->content_len > 0 && meta->content == NULL) {
    *content = NULL;
    *content_len = 0;
    BLOSC_TRACE_ERROR("Metalayer \"%s\" has no content.", name);
    return BLOSC2_ERROR_DATA;
  }
  *content_len = meta->content_len;
  if (meta->content_len == 0) {
    *content = NULL;
    return index;
  }
  *content = (uint8_t *)malloc((size_t)meta->content_len);
  if (*content == NULL) {
    *content_len = 0;
    BLOSC_TRACE_ERROR("Cannot allocate %d bytes for metalayer \"%s\".", (int)meta->content_len,
                      name);
    return BLOSC2_ERROR_MEMORY_ALLOC;
  }
  memcpy(*content, meta->content, (size_t)meta->content_len);
  return index;
}

/* ------------------------------------------------------------------------------------------ */
/* Variable-length metalayers (stored compressed in the frame trailer).                        */
/* ------------------------------------------------------------------------------------------ */

BLOSC_EXPORT int blosc2_vlmeta_exists(blosc2_schunk *schunk, const char *name);
BLOSC_EXPORT int blosc2_vlmeta_add(blosc2_schunk *schunk, const char *name, uint8_t *content,
                                   int32_t content_len, blosc2_cparams *cparams);
BLOSC_EXPORT int blosc2_vlmeta_update(blosc2_schunk *schunk, const char *name, uint8_t *content,
                                      int32_t content_len, blosc2_cparams *cparams);
BLOSC_EXPORT int blosc2_vlmeta_get(blosc2_schunk *schunk, const char *name, uint8_t **content,
                                   int32_t *content_len);
BLOSC_EXPORT int blosc2_vlmeta_delete(blosc2_schunk *schunk, const char *name);
BLOSC_EXPORT int blosc2_vlmeta_get_names(blosc2_schunk *schunk, char **names);

/* ------------------------------------------------------------------------------------------ */
/* Timing, paths, index arithmetic, shuffles.                                                 */
/* ------------------------------------------------------------------------------------------ */

BLOSC_EXPORT void blosc_set_timestamp(blosc_timestamp_t *timestamp);
BLOSC_EXPORT double blosc_elapsed_nsecs(blosc_timestamp_t start_time,
                                        blosc_timestamp_t end_time);
BLOSC_EXPORT double blosc_elapsed_secs(blosc_timestamp_t start_time, blosc_timestamp_t end_time);

BLOSC_EXPORT int blosc2_remove_dir(const char *path);
BLOSC_EXPORT int blosc2_remove_urlpath(const char *path);
BLOSC_EXPORT int blosc2_rename_urlpath(char *old_urlpath, char *new_path);

BLOSC_EXPORT void blosc2_unidim_to_multidim(uint8_t ndim, int64_t *shape, int64_t i,
                                            int64_t *index);
BLOSC_EXPORT void blosc2_multidim_to_unidim(const int64_t *index, int8_t ndim,
                                            const int64_t *strides, int64_t *i);

BLOSC_EXPORT int32_t blosc2_shuffle(int32_t typesize, int32_t blocksize, const void *src,
                                    void *dest);
BLOSC_EXPORT int32_t blosc2_unshuffle(int32_t typesize, int32_t blocksize, const void *src,
                                      void *dest);
BLOSC_EXPORT int32_t blosc2_bitshuffle(int32_t typesize, int32_t blocksize, const void *src,
                                       void *dest);
BLOSC_EXPORT int32_t blosc2_bitunshuffle(int32_t typesize, int32_t blocksize, const void *src,
                                         void *dest);

/*
 * Stores the `size` (1, 2, 4 or 8) bytes at `pa` into `dest` in big-endian order (the order
 * msgpack and the b2nd metalayer use); on a big-endian host this is a plain copy.
 */
static inline void swap_store(void *dest, const void *pa, int size) {
  const uint8_t *src = (const uint8_t *)pa;
  uint8_t tmp[8];
  const uint16_t probe = 1;
  int k;
  if (size != 1 && size != 2 && size != 4 && size != 8) {
    fprintf(stderr, "Unhandled nitems: %d\n", size);
    return;
  }
  if (*(const uint8_t *)&probe == 1) {
    for (k = 0; k < size; k++) {
      tmp[k] = src[size - 1 - k];
    }
  } else {
    memcpy(tmp, src, (size_t)size);
  }
  memcpy(dest, tmp, (size_t)size);
}

#ifdef __cplusplus
}
#endif

#endif /* BLOSC_BLOSC2_H */
