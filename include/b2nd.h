/*
 * b2frame: the b2nd metalayer helpers of c-blosc2's b2nd.h.
 *
 * b2frame reads and writes the "b2nd" metalayer that describes an N-dimensional array stored in
 * a super-chunk (shape, chunk shape, block shape, dtype); the b2nd array API itself
 * (b2nd_array_t and its operations) is not part of b2frame.
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

#ifdef __cplusplus
}
#endif

#endif /* BLOSC_B2ND_H */
