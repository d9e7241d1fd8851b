/*
 * b2frame: the b2nd N-dimensional array API of c-blosc2 3.3's b2nd.h (same names, signatures,
 * struct layouts, error codes and ownership), kept by hand (cbindgen does not write it).
 *
 * An array is a b2nd_array_t around a super-chunk (sc) whose "b2nd" metalayer records the
 * shape, chunk shape, block shape and dtype. Arrays come from b2nd_create_ctx + a constructor,
 * from a super-chunk, a cframe or a file, and are released with b2nd_free. Functions return 0
 * (or a non-negative value) on success and a negative BLOSC2_ERROR_* code on failure.
 *
 * Views (b2nd_squeeze, b2nd_squeeze_index, b2nd_expand_dims) share the parent's data, as in
 * c-blosc2: each sees the other's writes. The data lives until the last of them is freed, in
 * either order, and a view fails with BLOSC2_ERROR_INVALID_PARAM once the parent's shape changes
 * (docs/divergences.md, 14).
 */
#ifndef BLOSC_B2ND_H
#define BLOSC_B2ND_H

#include "blosc2/blosc2-export.h"
#include "blosc2.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the metalayer layout written by b2nd_serialize_meta. */
#define B2ND_METALAYER_VERSION 0
/* Largest number of dimensions. */
#define B2ND_MAX_DIM 16
/* Metalayers left for users once "b2nd" is stored. */
#define B2ND_MAX_METALAYERS (BLOSC2_MAX_METALAYERS - 1)
/* The dtype string follows NumPy's array-protocol typestr convention. */
#define DTYPE_NUMPY_FORMAT 0
/* Unsigned bytes, used when no dtype is given. */
#define B2ND_DEFAULT_DTYPE "|u1"
#define B2ND_DEFAULT_DTYPE_FORMAT DTYPE_NUMPY_FORMAT

#if defined(_MSC_VER)
#define B2ND_DEPRECATED(msg) __declspec(deprecated(msg))
#elif defined(__GNUC__) || defined(__clang__)
#define B2ND_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define B2ND_DEPRECATED(msg)
#endif

/* A one-chunk cache callers may use; b2frame initialises it empty and otherwise leaves it. */
struct chunk_cache_s {
  uint8_t *data;
  int64_t nchunk; /* -1 when empty */
};

/* Creation parameters (opaque; made by b2nd_create_ctx, freed by b2nd_free_ctx). */
typedef struct b2nd_context_s b2nd_context_t;

/* An N-dimensional array. The geometry fields are kept up to date by every call. */
typedef struct {
  blosc2_schunk *sc;                          /* the super-chunk holding the chunks */
  int64_t shape[B2ND_MAX_DIM];                /* items per dimension */
  int32_t chunkshape[B2ND_MAX_DIM];           /* items per chunk and dimension */
  int64_t extshape[B2ND_MAX_DIM];             /* shape rounded up to whole chunks */
  int32_t blockshape[B2ND_MAX_DIM];           /* items per block and dimension */
  int64_t extchunkshape[B2ND_MAX_DIM];        /* chunk shape rounded up to whole blocks */
  int64_t nitems;                             /* items in the array */
  int32_t chunknitems;                        /* items in a chunk */
  int64_t extnitems;                          /* items in the padded array */
  int32_t blocknitems;                        /* items in a block */
  int64_t extchunknitems;                     /* items in a padded chunk */
  int8_t ndim;                                /* number of dimensions */
  struct chunk_cache_s chunk_cache;           /* see struct chunk_cache_s */
  int64_t item_array_strides[B2ND_MAX_DIM];   /* item strides in the array */
  int64_t item_chunk_strides[B2ND_MAX_DIM];   /* item strides in a chunk */
  int64_t item_extchunk_strides[B2ND_MAX_DIM];/* item strides in a padded chunk */
  int64_t item_block_strides[B2ND_MAX_DIM];   /* item strides in a block */
  int64_t block_chunk_strides[B2ND_MAX_DIM];  /* block strides in a padded chunk */
  int64_t chunk_array_strides[B2ND_MAX_DIM];  /* chunk strides (c-blosc2's formula) */
  char *dtype;                                /* dtype string (see dtype_format) */
  int8_t dtype_format;                        /* DTYPE_NUMPY_FORMAT for NumPy typestrs */
  int64_t last_tick;                          /* sc->change_tick when last synced */
} b2nd_array_t;

/* A context: storage and cparams are copied (cparams.blocksize set from blockshape); urlpath,
 * dparams, io and the metalayers are referenced and must outlive the context. NULL on error. */
BLOSC_EXPORT b2nd_context_t *
b2nd_create_ctx(const blosc2_storage *b2_storage, int8_t ndim, const int64_t *shape,
                const int32_t *chunkshape, const int32_t *blockshape, const char *dtype,
                int8_t dtype_format, const blosc2_metalayer *metalayers, int32_t nmetalayers);
BLOSC_EXPORT int b2nd_free_ctx(b2nd_context_t *ctx);

/* Constructors: *array is set on success (free it with b2nd_free). */
BLOSC_EXPORT int b2nd_uninit(b2nd_context_t *ctx, b2nd_array_t **array);
BLOSC_EXPORT int b2nd_empty(b2nd_context_t *ctx, b2nd_array_t **array);
BLOSC_EXPORT int b2nd_zeros(b2nd_context_t *ctx, b2nd_array_t **array);
BLOSC_EXPORT int b2nd_nans(b2nd_context_t *ctx, b2nd_array_t **array);
BLOSC_EXPORT int b2nd_full(b2nd_context_t *ctx, b2nd_array_t **array, const void *fill_value);
BLOSC_EXPORT int b2nd_free(b2nd_array_t *array);
/* The array takes over the super-chunk (b2nd_free frees it). */
BLOSC_EXPORT int b2nd_from_schunk(blosc2_schunk *schunk, b2nd_array_t **array);
BLOSC_EXPORT int b2nd_to_cframe(const b2nd_array_t *array, uint8_t **cframe,
                                int64_t *cframe_len, bool *needs_free);
BLOSC_EXPORT int b2nd_from_cframe(uint8_t *cframe, int64_t cframe_len, bool copy,
                                  b2nd_array_t **array);
BLOSC_EXPORT int b2nd_open(const char *urlpath, b2nd_array_t **array);
BLOSC_EXPORT int b2nd_open_offset(const char *urlpath, b2nd_array_t **array, int64_t offset);
BLOSC_EXPORT int b2nd_save(const b2nd_array_t *array, char *urlpath);
BLOSC_EXPORT int64_t b2nd_save_append(const b2nd_array_t *array, const char *urlpath);
BLOSC_EXPORT int b2nd_from_cbuffer(b2nd_context_t *ctx, b2nd_array_t **array, const void *buffer,
                                   int64_t buffersize);
BLOSC_EXPORT int b2nd_to_cbuffer(const b2nd_array_t *array, void *buffer, int64_t buffersize);
/* coords are row-major linear item indices. */
BLOSC_EXPORT int b2nd_get_sparse_cbuffer(const b2nd_array_t *array, int64_t ncoords,
                                         const int64_t *coords, void *buffer, int64_t buffersize);
/* A new array (per ctx, whose ndim and shape are overwritten) holding src[start:stop]. */
BLOSC_EXPORT int b2nd_get_slice(b2nd_context_t *ctx, b2nd_array_t **array, const b2nd_array_t *src,
                                const int64_t *start, const int64_t *stop);
BLOSC_EXPORT int b2nd_squeeze_index(b2nd_array_t *array, b2nd_array_t **view, const bool *index);
BLOSC_EXPORT int b2nd_squeeze(b2nd_array_t *array, b2nd_array_t **view);
BLOSC_EXPORT int b2nd_expand_dims(const b2nd_array_t *array, b2nd_array_t **view, const bool *axis,
                                  const uint8_t final_dims);
/* buffer is a row-major array of shape buffershape; the slice is at its origin. */
BLOSC_EXPORT int b2nd_get_slice_cbuffer(const b2nd_array_t *array, const int64_t *start,
                                        const int64_t *stop, void *buffer,
                                        const int64_t *buffershape, int64_t buffersize);
BLOSC_EXPORT int b2nd_set_slice_cbuffer(const void *buffer, const int64_t *buffershape,
                                        int64_t buffersize, const int64_t *start,
                                        const int64_t *stop, b2nd_array_t *array);
BLOSC_EXPORT int b2nd_copy(b2nd_context_t *ctx, const b2nd_array_t *src, b2nd_array_t **array);
BLOSC_EXPORT int b2nd_concatenate(b2nd_context_t *ctx, const b2nd_array_t *src1,
                                  const b2nd_array_t *src2, int8_t axis, bool copy,
                                  b2nd_array_t **array);
BLOSC_EXPORT int b2nd_print_meta(const b2nd_array_t *array);
BLOSC_EXPORT int b2nd_resize(b2nd_array_t *array, const int64_t *new_shape, const int64_t *start);
/* Re-reads the geometry another handle changed: 1 if re-synced, 0 if current. */
BLOSC_EXPORT int b2nd_refresh(b2nd_array_t *array);
BLOSC_EXPORT int b2nd_insert(b2nd_array_t *array, const void *buffer, int64_t buffersize,
                             int8_t axis, int64_t insert_start);
BLOSC_EXPORT int b2nd_append(b2nd_array_t *array, const void *buffer, int64_t buffersize,
                             int8_t axis);
BLOSC_EXPORT int b2nd_delete(b2nd_array_t *array, int8_t axis, int64_t delete_start,
                             int64_t delete_len);
/* selection[i] holds selection_size[i] indices of dimension i; buffer is row-major. */
BLOSC_EXPORT int b2nd_get_orthogonal_selection(const b2nd_array_t *array, int64_t **selection,
                                               int64_t *selection_size, void *buffer,
                                               int64_t *buffershape, int64_t buffersize);
BLOSC_EXPORT int b2nd_set_orthogonal_selection(b2nd_array_t *array, int64_t **selection,
                                               int64_t *selection_size, const void *buffer,
                                               int64_t *buffershape, int64_t buffersize);

/*
 * Serialises the array geometry into a new malloc'ed msgpack buffer (*smeta, freed by the
 * caller). Returns its length or a negative error code. A NULL dtype means B2ND_DEFAULT_DTYPE.
 */
BLOSC_EXPORT int b2nd_serialize_meta(int8_t ndim, const int64_t *shape, const int32_t *chunkshape,
                                     const int32_t *blockshape, const char *dtype,
                                     int8_t dtype_format, uint8_t **smeta);

/*
 * Parses a "b2nd" metalayer. Returns the number of bytes consumed or a negative error code.
 * *dtype is malloc'ed (freed by the caller) or NULL when the metalayer carries no dtype.
 */
BLOSC_EXPORT int b2nd_deserialize_meta(const uint8_t *smeta, int32_t smeta_len, int8_t *ndim,
                                       int64_t *shape, int32_t *chunkshape, int32_t *blockshape,
                                       char **dtype, int8_t *dtype_format);

/* c-blosc2 also offers the parser as a header function; here it calls the library's. */
static inline int b2nd_deserialize_meta_inline(const uint8_t *smeta, int32_t smeta_len,
                                               int8_t *ndim, int64_t *shape, int32_t *chunkshape,
                                               int32_t *blockshape, char **dtype,
                                               int8_t *dtype_format) {
  return b2nd_deserialize_meta(smeta, smeta_len, ndim, shape, chunkshape, blockshape, dtype,
                               dtype_format);
}

/* Copies the box src_start..src_stop of the row-major src (shape src_pad_shape) to dst_start
 * of the row-major dst (shape dst_pad_shape). */
B2ND_DEPRECATED("Use b2nd_copy_buffer2 instead.")
BLOSC_EXPORT int b2nd_copy_buffer(int8_t ndim, uint8_t itemsize, const void *src,
                                  const int64_t *src_pad_shape, const int64_t *src_start,
                                  const int64_t *src_stop, void *dst,
                                  const int64_t *dst_pad_shape, const int64_t *dst_start);
BLOSC_EXPORT int b2nd_copy_buffer2(int8_t ndim, int32_t itemsize, const void *src,
                                   const int64_t *src_pad_shape, const int64_t *src_start,
                                   const int64_t *src_stop, void *dst,
                                   const int64_t *dst_pad_shape, const int64_t *dst_start);

#ifdef __cplusplus
}
#endif

#endif /* BLOSC_B2ND_H */
