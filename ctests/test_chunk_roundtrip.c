/* Round trips through the context API: every codec and filter, several thread counts (the
 * decoded bytes must not depend on them), block masks, VL-block chunks and the parameters a
 * context reports back. */
#include "blosc2.h"
#include "harness.h"

enum { N = 200000, NITEMS = N / 4 };
static int32_t src[NITEMS];
static uint8_t chunk[N + BLOSC2_MAX_OVERHEAD];
static uint8_t out[N];

static void fill(void) {
  for (int i = 0; i < NITEMS; i++) src[i] = (i / 3) * 17 + (i % 11);
}

static int compress_with(blosc2_cparams cp) {
  blosc2_context *cctx = blosc2_create_cctx(cp);
  if (cctx == NULL) return -1000;
  int rc = blosc2_compress_ctx(cctx, src, N, chunk, sizeof chunk);
  blosc2_free_ctx(cctx);
  return rc;
}

static int decompress_with(int nthreads, int csize) {
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = (int16_t)nthreads;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  if (dctx == NULL) return -1000;
  memset(out, 0xEE, N);
  int rc = blosc2_decompress_ctx(dctx, chunk, csize, out, N);
  blosc2_free_ctx(dctx);
  return rc;
}

static void test_codecs_and_filters(void) {
  const uint8_t codecs[] = {BLOSC_BLOSCLZ, BLOSC_LZ4, BLOSC_LZ4HC, BLOSC_ZLIB, BLOSC_ZSTD};
  const uint8_t filters[] = {BLOSC_NOFILTER, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE};
  fill();
  for (size_t c = 0; c < sizeof codecs; c++) {
    for (size_t f = 0; f < sizeof filters; f++) {
      for (int delta = 0; delta < 2; delta++) {
        blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.typesize = 4;
        cp.compcode = codecs[c];
        cp.filters[5] = filters[f];
        cp.filters[4] = delta ? BLOSC_DELTA : 0;
        int csize = compress_with(cp);
        CHECK(csize > 32);
        CHECK(csize <= N + 32);
        /* with a shuffle the sequence compresses well whatever the codec */
        if (filters[f] != BLOSC_NOFILTER) CHECK(csize < N / 4);
        CHECK_EQ_INT(decompress_with(1, csize), N);
        CHECK_EQ_MEM(out, src, N);
      }
    }
  }
}

static void test_thread_counts_decode_identically(void) {
  const int counts[] = {1, 2, 4};
  fill();
  for (int c = 0; c < 3; c++) {
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.blocksize = 16384;
    cp.nthreads = (int16_t)counts[c];
    cp.filters[4] = BLOSC_DELTA; /* DELTA makes every block depend on block 0 */
    int csize = compress_with(cp);
    CHECK(csize > 32);
    for (int d = 0; d < 3; d++) {
      CHECK_EQ_INT(decompress_with(counts[d], csize), N);
      CHECK_EQ_MEM(out, src, N);
    }
  }
}

static void test_global_api_threads(void) {
  fill();
  blosc2_init();
  int16_t prev = blosc2_set_nthreads(4);
  CHECK_EQ_INT(prev, 1);
  CHECK_EQ_INT(blosc2_get_nthreads(), 4);
  int csize = blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, chunk, sizeof chunk);
  CHECK(csize > 32);
  memset(out, 0, N);
  CHECK_EQ_INT(blosc2_decompress(chunk, csize, out, N), N);
  CHECK_EQ_MEM(out, src, N);
  CHECK_EQ_INT(blosc2_set_nthreads(1), 4);
  memset(out, 0, N);
  CHECK_EQ_INT(blosc2_decompress(chunk, csize, out, N), N);
  CHECK_EQ_MEM(out, src, N);
  blosc2_destroy();
}

static void test_maskout_is_one_shot(void) {
  fill();
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.blocksize = N / 4; /* four blocks */
  int csize = compress_with(cp);
  CHECK(csize > 32);
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  CHECK_NOT_NULL(dctx);
  bool mask[4] = {false, true, false, true};
  CHECK_EQ_INT(blosc2_set_maskout(dctx, mask, 4), 0);
  memset(out, 0xEE, N);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, N), N);
  CHECK_EQ_MEM(out, src, N / 4);
  CHECK_EQ_MEM(out + N / 2, (uint8_t *)src + N / 2, N / 4);
  for (int i = N / 4; i < N / 2; i++) CHECK_EQ_INT(out[i], 0xEE);
  for (int i = 3 * N / 4; i < N; i++) CHECK_EQ_INT(out[i], 0xEE);
  /* the mask applies to one call only */
  memset(out, 0xEE, N);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, N), N);
  CHECK_EQ_MEM(out, src, N);
  blosc2_free_ctx(dctx);
}

static void test_ctx_get_params(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 2;
  cp.clevel = 7;
  cp.compcode = BLOSC_LZ4;
  cp.blocksize = 8192;
  cp.nthreads = 3;
  cp.splitmode = BLOSC_NEVER_SPLIT;
  cp.filters[0] = BLOSC_DELTA;
  cp.filters_meta[0] = 9;
  cp.schunk = (void *)&cp;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  CHECK_NOT_NULL(cctx);
  blosc2_cparams got;
  memset(&got, 0, sizeof got);
  CHECK_EQ_INT(blosc2_ctx_get_cparams(cctx, &got), 0);
  CHECK_EQ_INT(got.typesize, 2);
  CHECK_EQ_INT(got.clevel, 7);
  CHECK_EQ_INT(got.compcode, BLOSC_LZ4);
  CHECK_EQ_INT(got.blocksize, 8192);
  CHECK_EQ_INT(got.nthreads, 3);
  CHECK_EQ_INT(got.splitmode, BLOSC_NEVER_SPLIT);
  CHECK_EQ_INT(got.filters[0], BLOSC_DELTA);
  CHECK_EQ_INT(got.filters_meta[0], 9);
  CHECK_EQ_INT(got.filters[5], BLOSC_SHUFFLE);
  CHECK(got.schunk == (void *)&cp);
  CHECK(got.prefilter == NULL);
  blosc2_free_ctx(cctx);

  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 2;
  dp.schunk = (void *)&dp;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  CHECK_NOT_NULL(dctx);
  blosc2_dparams dgot;
  memset(&dgot, 0, sizeof dgot);
  CHECK_EQ_INT(blosc2_ctx_get_dparams(dctx, &dgot), 0);
  CHECK_EQ_INT(dgot.nthreads, 2);
  CHECK(dgot.schunk == (void *)&dp);
  CHECK(dgot.postfilter == NULL);
  blosc2_free_ctx(dctx);
}

static void test_vlblocks(void) {
  enum { NB = 5 };
  static uint8_t blocks[NB][3000];
  const void *srcs[NB];
  int32_t sizes[NB];
  for (int b = 0; b < NB; b++) {
    sizes[b] = 100 + b * 600;
    for (int i = 0; i < sizes[b]; i++) blocks[b][i] = (uint8_t)(b * 31 + i / 5);
    srcs[b] = blocks[b];
  }
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  cp.compcode = BLOSC_ZSTD;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  CHECK_NOT_NULL(cctx);
  int csize = blosc2_vlcompress_ctx(cctx, srcs, sizes, NB, chunk, sizeof chunk);
  blosc2_free_ctx(cctx);
  CHECK(csize > 32);
  CHECK_EQ_INT(chunk[0], BLOSC2_VERSION_FORMAT_VL_BLOCKS);

  int32_t nblocks = 0;
  CHECK_EQ_INT(blosc2_vlchunk_get_nblocks(chunk, csize, &nblocks), 0);
  CHECK_EQ_INT(nblocks, NB);

  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  CHECK_NOT_NULL(dctx);
  void *dests[NB];
  int32_t dsizes[NB];
  CHECK_EQ_INT(blosc2_vldecompress_ctx(dctx, chunk, csize, dests, dsizes, NB), NB);
  for (int b = 0; b < NB; b++) {
    CHECK_EQ_INT(dsizes[b], sizes[b]);
    CHECK_EQ_MEM(dests[b], blocks[b], sizes[b]);
    free(dests[b]);
  }
  uint8_t *one = NULL;
  int32_t onesize = 0;
  CHECK_EQ_INT(blosc2_vldecompress_block_ctx(dctx, chunk, csize, 3, &one, &onesize), sizes[3]);
  CHECK_EQ_INT(onesize, sizes[3]);
  CHECK_EQ_MEM(one, blocks[3], sizes[3]);
  free(one);
  CHECK(blosc2_vldecompress_block_ctx(dctx, chunk, csize, NB, &one, &onesize) < 0);
  /* flat decompression gives the concatenation */
  int total = 0;
  for (int b = 0; b < NB; b++) total += sizes[b];
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, N), total);
  CHECK_EQ_MEM(out, blocks[0], sizes[0]);
  /* getitem refuses VL-block chunks */
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, csize, 0, 1, out, N), BLOSC2_ERROR_INVALID_PARAM);
  blosc2_free_ctx(dctx);

  /* a regular chunk is not a VL chunk */
  fill();
  int rcsize = compress_with(BLOSC2_CPARAMS_DEFAULTS);
  CHECK(rcsize > 0);
  CHECK(blosc2_vlchunk_get_nblocks(chunk, rcsize, &nblocks) < 0);
}

static void test_blosc1_api(void) {
  fill();
  blosc2_init();
  CHECK_EQ_INT(blosc1_set_compressor("lz4"), BLOSC_LZ4);
  CHECK_EQ_STR(blosc1_get_compressor(), "lz4");
  blosc1_set_blocksize(8192);
  CHECK_EQ_INT(blosc1_get_blocksize(), 8192);
  blosc1_set_splitmode(BLOSC_ALWAYS_SPLIT);
  blosc2_set_delta(1);
  int csize = blosc1_compress(5, BLOSC_SHUFFLE, 4, N, src, chunk, sizeof chunk);
  CHECK(csize > 32);
  CHECK_EQ_STR(blosc2_cbuffer_complib(chunk), "LZ4");
  int32_t nb, cb, bs;
  CHECK_EQ_INT(blosc2_cbuffer_sizes(chunk, &nb, &cb, &bs), 0);
  CHECK_EQ_INT(bs, 8192);
  CHECK_EQ_INT(chunk[2] & BLOSC_DODELTA, BLOSC_DODELTA);
  CHECK_EQ_INT(chunk[2] & 0x10, 0); /* split */
  memset(out, 0, N);
  CHECK_EQ_INT(blosc1_decompress(chunk, out, N), N);
  CHECK_EQ_MEM(out, src, N);
  /* restore the defaults for later tests */
  blosc2_set_delta(0);
  blosc1_set_blocksize(0);
  blosc1_set_splitmode(BLOSC_FORWARD_COMPAT_SPLIT);
  CHECK_EQ_INT(blosc1_set_compressor("blosclz"), BLOSC_BLOSCLZ);
  /* unknown names are reported and leave no compressor */
  CHECK_EQ_INT(blosc1_set_compressor("nonexistent"), -1);
  CHECK(blosc1_get_compressor() == NULL);
  CHECK_EQ_INT(blosc2_compress(5, 1, 4, src, N, chunk, sizeof chunk), BLOSC2_ERROR_CODEC_SUPPORT);
  CHECK_EQ_INT(blosc1_set_compressor("blosclz"), BLOSC_BLOSCLZ);
  blosc2_destroy();
}

int main(void) {
  RUN(test_codecs_and_filters);
  RUN(test_thread_counts_decode_identically);
  RUN(test_global_api_threads);
  RUN(test_maskout_is_one_shot);
  RUN(test_ctx_get_params);
  RUN(test_vlblocks);
  RUN(test_blosc1_api);
  return harness_summary();
}
