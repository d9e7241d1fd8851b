/* Error codes for bad arguments and forged chunk headers, and getitem at the edges of a chunk.
 * Every expectation here was checked against c-blosc2 3.3.5. */
#include "blosc2.h"
#include "harness.h"

enum { N = 40000, NITEMS = N / 4 };
static int32_t src[NITEMS];
static uint8_t chunk[N + BLOSC2_MAX_OVERHEAD];
static int csize;

static int make_chunk(int nthreads) {
  for (int i = 0; i < NITEMS; i++) src[i] = i * 5 + (i % 7);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.blocksize = 4096;
  cp.nthreads = (int16_t)nthreads;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  if (cctx == NULL) return -1;
  csize = blosc2_compress_ctx(cctx, src, N, chunk, sizeof chunk);
  blosc2_free_ctx(cctx);
  return csize;
}

static void test_compress_argument_errors(void) {
  uint8_t dest[N + 32];
  blosc2_init();
  CHECK_EQ_INT(blosc2_compress(10, 1, 4, src, N, dest, sizeof dest), BLOSC2_ERROR_CODEC_PARAM);
  CHECK_EQ_INT(blosc2_compress(-1, 1, 4, src, N, dest, sizeof dest), BLOSC2_ERROR_CODEC_PARAM);
  CHECK_EQ_INT(blosc2_compress(5, 1, 4, src, N, dest, 31), BLOSC2_ERROR_MAX_BUFSIZE_EXCEEDED);
  CHECK_EQ_INT(blosc2_compress(5, 1, 4, src, N, dest, 0), BLOSC2_ERROR_MAX_BUFSIZE_EXCEEDED);
  blosc2_destroy();

  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.clevel = 12;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  CHECK_NOT_NULL(cctx);
  CHECK_EQ_INT(blosc2_compress_ctx(cctx, src, N, dest, sizeof dest), BLOSC2_ERROR_CODEC_PARAM);
  blosc2_free_ctx(cctx);

  /* use_dict is only for ZSTD / LZ4 / LZ4HC */
  cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.use_dict = 1;
  cctx = blosc2_create_cctx(cp);
  CHECK_NOT_NULL(cctx);
  CHECK_EQ_INT(blosc2_compress_ctx(cctx, src, N, dest, sizeof dest), BLOSC2_ERROR_CODEC_PARAM);
  blosc2_free_ctx(cctx);
}

static void test_undefined_filters_refuse_a_context(void) {
  const uint8_t bad[] = {5, 20, 31, 37, 100, 159};
  for (size_t i = 0; i < sizeof bad; i++) {
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.filters[2] = bad[i];
    CHECK(blosc2_create_cctx(cp) == NULL);
  }
  /* registered-plugin ids 32..36 and user ids >= 160 are accepted at creation */
  const uint8_t ok[] = {0, 1, 2, 3, 4, 32, 36, 160, 255};
  for (size_t i = 0; i < sizeof ok; i++) {
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.filters[2] = ok[i];
    blosc2_context *cctx = blosc2_create_cctx(cp);
    CHECK_NOT_NULL(cctx);
    blosc2_free_ctx(cctx);
  }
}

static void test_wrong_context_kind(void) {
  CHECK(make_chunk(1) > 0);
  uint8_t out[N];
  blosc2_context *cctx = blosc2_create_cctx(BLOSC2_CPARAMS_DEFAULTS);
  CHECK_NOT_NULL(cctx);
  CHECK_EQ_INT(blosc2_decompress_ctx(cctx, chunk, csize, out, N), BLOSC2_ERROR_INVALID_PARAM);
  blosc2_free_ctx(cctx);
}

static void test_decompress_errors(void) {
  CHECK(make_chunk(1) > 0);
  static uint8_t out[N];
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  CHECK_NOT_NULL(dctx);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, N), N);
  CHECK_EQ_MEM(out, src, N);
  /* destination too small */
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, N - 1), BLOSC2_ERROR_WRITE_BUFFER);
  /* source shorter than a header */
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, 15, out, N), BLOSC2_ERROR_READ_BUFFER);
  /* source shorter than cbytes */
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize - 1, out, N), BLOSC2_ERROR_INVALID_HEADER);

  static uint8_t forged[N + 32];
  /* blocksize 0 */
  memcpy(forged, chunk, csize);
  memset(forged + 8, 0, 4);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, forged, csize, out, N), BLOSC2_ERROR_INVALID_HEADER);
  /* typesize 0 */
  memcpy(forged, chunk, csize);
  forged[3] = 0;
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, forged, csize, out, N), BLOSC2_ERROR_INVALID_HEADER);
  /* cbytes below the header size */
  memcpy(forged, chunk, csize);
  forged[12] = 8;
  forged[13] = forged[14] = forged[15] = 0;
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, forged, csize, out, N), BLOSC2_ERROR_INVALID_HEADER);
  /* special kind 5 does not exist */
  memcpy(forged, chunk, csize);
  forged[31] = (uint8_t)(5 << 4);
  CHECK(blosc2_decompress_ctx(dctx, forged, csize, out, N) < 0);
  /* a corrupted stream never decodes silently to the original */
  memcpy(forged, chunk, csize);
  for (int i = 200; i < csize; i += 97) forged[i] ^= 0x5a;
  int rc = blosc2_decompress_ctx(dctx, forged, csize, out, N);
  CHECK(rc < 0 || rc == N);
  blosc2_free_ctx(dctx);
}

static void test_getitem_edges(void) {
  CHECK(make_chunk(1) > 0);
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  CHECK_NOT_NULL(dctx);
  int32_t items[NITEMS];
  /* first and last item, a range across a block boundary (4096-byte blocks = 1024 items) */
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, csize, 0, 1, items, sizeof items), 4);
  CHECK_EQ_INT(items[0], src[0]);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, csize, NITEMS - 1, 1, items, sizeof items), 4);
  CHECK_EQ_INT(items[0], src[NITEMS - 1]);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, csize, 1000, 100, items, sizeof items), 400);
  CHECK_EQ_MEM(items, src + 1000, 400);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, csize, 0, NITEMS, items, sizeof items), N);
  CHECK_EQ_MEM(items, src, N);
  /* nothing to do */
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, csize, 5, 0, items, sizeof items), 0);
  /* out of range */
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, csize, NITEMS, 1, items, sizeof items), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, csize, -1, 1, items, sizeof items), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, csize, 0, -1, items, sizeof items), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, csize, NITEMS - 1, 2, items, sizeof items), BLOSC2_ERROR_INVALID_PARAM);
  /* start*typesize overflowing int32 */
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, csize, 0x40000000, 1, items, sizeof items), BLOSC2_ERROR_INVALID_PARAM);
  /* destination too small */
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, csize, 0, 2, items, 7), BLOSC2_ERROR_WRITE_BUFFER);

  /* byte-addressed variant: start and nbytes must be multiples of the typesize */
  CHECK_EQ_INT(blosc2_getitem_bytes_ctx(dctx, chunk, csize, 4096 - 8, 16, items, sizeof items), 16);
  CHECK_EQ_MEM(items, src + 1022, 16);
  CHECK_EQ_INT(blosc2_getitem_bytes_ctx(dctx, chunk, csize, 2, 4, items, sizeof items), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_getitem_bytes_ctx(dctx, chunk, csize, 4, 6, items, sizeof items), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_getitem_bytes_ctx(dctx, chunk, csize, -4, 4, items, sizeof items), BLOSC2_ERROR_INVALID_PARAM);
  blosc2_free_ctx(dctx);

  /* the global and Blosc1 variants */
  blosc2_init();
  CHECK_EQ_INT(blosc2_getitem(chunk, csize, 3, 2, items, sizeof items), 8);
  CHECK_EQ_MEM(items, src + 3, 8);
  CHECK_EQ_INT(blosc1_getitem(chunk, NITEMS - 2, 2, items), 8);
  CHECK_EQ_MEM(items, src + NITEMS - 2, 8);
  blosc2_destroy();
}

static void test_getitem_special_and_memcpyed(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  uint8_t sp[64];
  int32_t v = 0x01020304, items[10];
  CHECK_EQ_INT(blosc2_chunk_repeatval(cp, 4000, sp, sizeof sp, &v), 36);
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  CHECK_NOT_NULL(dctx);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, sp, 36, 990, 10, items, sizeof items), 40);
  for (int i = 0; i < 10; i++) CHECK_EQ_INT(items[i], v);
  CHECK_EQ_INT(blosc2_chunk_zeros(cp, 4000, sp, sizeof sp), 32);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, sp, 32, 0, 10, items, sizeof items), 40);
  for (int i = 0; i < 10; i++) CHECK_EQ_INT(items[i], 0);

  cp.clevel = 0;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  CHECK_NOT_NULL(cctx);
  uint8_t mc[400 + 32];
  int32_t vals[100];
  for (int i = 0; i < 100; i++) vals[i] = -i;
  CHECK_EQ_INT(blosc2_compress_ctx(cctx, vals, 400, mc, sizeof mc), 432);
  blosc2_free_ctx(cctx);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, mc, 432, 95, 5, items, sizeof items), 20);
  CHECK_EQ_MEM(items, vals + 95, 20);
  blosc2_free_ctx(dctx);
}

static void test_more_invalid_inputs(void) {
  /* NaN chunks only exist for 4- and 8-byte items: writing works, decoding fails */
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 3;
  uint8_t sp[40];
  uint8_t out[300];
  CHECK_EQ_INT(blosc2_chunk_nans(cp, 300, sp, sizeof sp), 32);
  blosc2_init();
  CHECK_EQ_INT(blosc2_decompress(sp, 32, out, sizeof out), BLOSC2_ERROR_DATA);
  CHECK_EQ_INT(blosc2_getitem(sp, 32, 0, 5, out, sizeof out), BLOSC2_ERROR_DATA);
  blosc2_destroy();

  /* nbytes above BLOSC2_MAX_BUFFERSIZE */
  const uint8_t head[16] = {2, 1, 1, 4, 0xff, 0xff, 0xff, 0x7f, 0, 1, 0, 0, 16, 0, 0, 0};
  size_t nbytes = 1;
  CHECK_EQ_INT(blosc1_cbuffer_validate(head, 16, &nbytes), BLOSC2_ERROR_MEMORY_ALLOC);
  CHECK_EQ_INT(nbytes, 0);

  /* a block mask of the wrong length */
  CHECK(make_chunk(1) > 0);
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  CHECK_NOT_NULL(dctx);
  bool mask[3] = {false, false, false};
  CHECK_EQ_INT(blosc2_set_maskout(dctx, mask, 3), 0);
  static uint8_t big[N];
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, big, N), BLOSC2_ERROR_DATA);
  /* ... which is dropped by that failed call */
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, big, N), N);
  blosc2_free_ctx(dctx);
}

int main(void) {
  RUN(test_compress_argument_errors);
  RUN(test_undefined_filters_refuse_a_context);
  RUN(test_wrong_context_kind);
  RUN(test_decompress_errors);
  RUN(test_getitem_edges);
  RUN(test_getitem_special_and_memcpyed);
  RUN(test_more_invalid_inputs);
  return harness_summary();
}
