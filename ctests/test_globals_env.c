/* Global state: init/destroy nesting, the Blosc1-style settings, and the BLOSC_* environment
 * variables honoured by blosc2_compress / blosc2_decompress / blosc2_create_cctx / _dctx.
 * Every expectation here was checked against c-blosc2 3.3.5. */
#include "blosc2.h"
#include "harness.h"

enum { N = 100000, NITEMS = N / 4 };
static int32_t src[NITEMS];
static uint8_t chunk[N + BLOSC2_MAX_OVERHEAD];
static int32_t out[NITEMS];

static void fill(void) {
  for (int i = 0; i < NITEMS; i++) src[i] = i * 3;
}

static int32_t rd32(const uint8_t *p) {
  return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* The global compressor settings some variables change persistently, back to defaults. */
static void reset_globals(void) {
  blosc1_set_compressor("blosclz");
  blosc2_set_delta(0);
  blosc1_set_blocksize(0);
  blosc1_set_splitmode(BLOSC_FORWARD_COMPAT_SPLIT);
  blosc2_set_nthreads(1);
}

static int roundtrip_ok(int csize) {
  memset(out, 0, N);
  return csize > 0 && blosc2_decompress(chunk, csize, out, N) == N && memcmp(out, src, N) == 0;
}

static void test_init_destroy_nesting(void) {
  blosc2_init();
  blosc2_init();
  CHECK_EQ_INT(blosc2_free_resources(), 0);
  blosc2_destroy();
  CHECK_EQ_INT(blosc2_free_resources(), BLOSC2_ERROR_FAILURE);
  blosc2_destroy(); /* a second destroy is harmless */
  /* the global API initialises on demand */
  fill();
  int csize = blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, chunk, sizeof chunk);
  CHECK(roundtrip_ok(csize));
  for (int i = 0; i < 3; i++) {
    blosc2_init();
    blosc2_init();
    CHECK(roundtrip_ok(blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, chunk, sizeof chunk)));
    blosc2_destroy();
    blosc2_destroy();
  }
}

static int dummy_encoder(const uint8_t *in, int32_t il, uint8_t *o, int32_t ol, uint8_t m, blosc2_cparams *cp,
                         const void *c) {
  (void)in; (void)il; (void)o; (void)ol; (void)m; (void)cp; (void)c;
  return 0;
}

static int dummy_decoder(const uint8_t *in, int32_t il, uint8_t *o, int32_t ol, uint8_t m, blosc2_dparams *dp,
                         const void *c) {
  (void)in; (void)il; (void)o; (void)ol; (void)m; (void)dp; (void)c;
  return 0;
}

static void test_settings_survive_destroy_registries_do_not(void) {
  blosc2_init();
  CHECK_EQ_INT(blosc2_set_nthreads(3), 1);
  blosc2_codec codec = {0};
  codec.compcode = 250;
  codec.compname = "dummy250";
  codec.encoder = dummy_encoder;
  codec.decoder = dummy_decoder;
  CHECK_EQ_INT(blosc2_register_codec(&codec), 0);
  CHECK_EQ_INT(blosc2_compname_to_compcode("dummy250"), 250);
  blosc2_destroy();
  blosc2_init();
  CHECK_EQ_INT(blosc2_get_nthreads(), 3);
  CHECK_EQ_INT(blosc2_compname_to_compcode("dummy250"), -1);
  CHECK_EQ_INT(blosc2_set_nthreads(0), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_set_nthreads(-2), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_get_nthreads(), 3);
  CHECK_EQ_INT(blosc2_set_nthreads(1), 3);
  blosc2_destroy();
}

static void test_env_global_compress(void) {
  fill();
  blosc2_init();
  int32_t nb, cb, bs;

  setenv("BLOSC_CLEVEL", "0", 1);
  CHECK_EQ_INT(blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, chunk, sizeof chunk), N + 32);
  unsetenv("BLOSC_CLEVEL");

  setenv("BLOSC_COMPRESSOR", "zstd", 1);
  int csize = blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, chunk, sizeof chunk);
  unsetenv("BLOSC_COMPRESSOR");
  CHECK(roundtrip_ok(csize));
  CHECK_EQ_STR(blosc2_cbuffer_complib(chunk), "Zstd");
  CHECK_EQ_STR(blosc1_get_compressor(), "zstd"); /* it sticks, as in c-blosc2 */
  reset_globals();

  setenv("BLOSC_SHUFFLE", "BITSHUFFLE", 1);
  csize = blosc2_compress(5, BLOSC_NOSHUFFLE, 4, src, N, chunk, sizeof chunk);
  unsetenv("BLOSC_SHUFFLE");
  CHECK(roundtrip_ok(csize));
  CHECK_EQ_INT(chunk[16 + 5], BLOSC_BITSHUFFLE);

  setenv("BLOSC_DELTA", "1", 1);
  csize = blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, chunk, sizeof chunk);
  unsetenv("BLOSC_DELTA");
  CHECK(roundtrip_ok(csize));
  CHECK_EQ_INT(chunk[16 + 4], BLOSC_DELTA);
  reset_globals();

  setenv("BLOSC_TYPESIZE", "2", 1);
  csize = blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, chunk, sizeof chunk);
  unsetenv("BLOSC_TYPESIZE");
  CHECK(roundtrip_ok(csize));
  CHECK_EQ_INT(chunk[3], 2);

  setenv("BLOSC_BLOCKSIZE", "4096", 1);
  csize = blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, chunk, sizeof chunk);
  unsetenv("BLOSC_BLOCKSIZE");
  CHECK(roundtrip_ok(csize));
  CHECK_EQ_INT(blosc2_cbuffer_sizes(chunk, &nb, &cb, &bs), 0);
  CHECK_EQ_INT(bs, 4096);
  CHECK_EQ_INT(blosc1_get_blocksize(), 4096);
  reset_globals();

  setenv("BLOSC_NTHREADS", "2", 1);
  csize = blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, chunk, sizeof chunk);
  unsetenv("BLOSC_NTHREADS");
  CHECK(roundtrip_ok(csize));
  CHECK_EQ_INT(blosc2_get_nthreads(), 2);
  reset_globals();

  setenv("BLOSC_SPLITMODE", "NEVER", 1);
  csize = blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, chunk, sizeof chunk);
  unsetenv("BLOSC_SPLITMODE");
  CHECK(roundtrip_ok(csize));
  CHECK_EQ_INT(chunk[2] & 0x10, 0x10);
  reset_globals();

  /* unrecognised values are ignored */
  setenv("BLOSC_SHUFFLE", "bitshuffle", 1);
  setenv("BLOSC_SPLITMODE", "sometimes", 1);
  setenv("BLOSC_TYPESIZE", "-4", 1);
  csize = blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, chunk, sizeof chunk);
  unsetenv("BLOSC_SHUFFLE");
  unsetenv("BLOSC_SPLITMODE");
  unsetenv("BLOSC_TYPESIZE");
  CHECK(roundtrip_ok(csize));
  CHECK_EQ_INT(chunk[3], 4);
  CHECK_EQ_INT(chunk[16 + 5], BLOSC_SHUFFLE);

  /* a 16-byte Blosc1 header */
  setenv("BLOSC_BLOSC1_COMPAT", "1", 1);
  csize = blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, chunk, sizeof chunk);
  unsetenv("BLOSC_BLOSC1_COMPAT");
  CHECK(roundtrip_ok(csize));
  CHECK((chunk[2] & 0x05) != 0x05);
  CHECK_EQ_INT(chunk[2] & BLOSC_DOSHUFFLE, BLOSC_DOSHUFFLE);
  CHECK_EQ_INT(rd32(chunk + 12), csize);
  /* all zeros: no special chunk in a Blosc1 header, but still compressed */
  static int32_t zeros[NITEMS];
  setenv("BLOSC_BLOSC1_COMPAT", "1", 1);
  csize = blosc2_compress(5, BLOSC_SHUFFLE, 4, zeros, N, chunk, sizeof chunk);
  unsetenv("BLOSC_BLOSC1_COMPAT");
  CHECK(csize > 16 && csize < N / 10);
  CHECK((chunk[2] & 0x05) != 0x05);
  CHECK_EQ_INT(blosc2_decompress(chunk, csize, out, N), N);
  CHECK_EQ_MEM(out, zeros, N);

  /* a private context per call: same format */
  setenv("BLOSC_NOLOCK", "1", 1);
  csize = blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, chunk, sizeof chunk);
  CHECK(roundtrip_ok(csize));
  unsetenv("BLOSC_NOLOCK");
  CHECK_EQ_INT(chunk[2] & 0x05, 0x05);
  blosc2_destroy();
}

static void test_env_global_decompress(void) {
  fill();
  blosc2_init();
  int csize = blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, chunk, sizeof chunk);
  CHECK(csize > 0);
  setenv("BLOSC_NTHREADS", "0", 1);
  CHECK_EQ_INT(blosc2_decompress(chunk, csize, out, N), BLOSC2_ERROR_INVALID_PARAM);
  setenv("BLOSC_NTHREADS", "40000", 1);
  CHECK_EQ_INT(blosc2_decompress(chunk, csize, out, N), BLOSC2_ERROR_INVALID_PARAM);
  setenv("BLOSC_NTHREADS", "3", 1);
  CHECK(roundtrip_ok(csize));
  unsetenv("BLOSC_NTHREADS");
  CHECK_EQ_INT(blosc2_get_nthreads(), 3);
  reset_globals();
  blosc2_destroy();
}

static void test_env_contexts(void) {
  setenv("BLOSC_CLEVEL", "9", 1);
  setenv("BLOSC_COMPRESSOR", "lz4", 1);
  setenv("BLOSC_TYPESIZE", "2", 1);
  setenv("BLOSC_BLOCKSIZE", "2048", 1);
  setenv("BLOSC_NTHREADS", "3", 1);
  setenv("BLOSC_SPLITMODE", "ALWAYS", 1);
  setenv("BLOSC_SHUFFLE", "NOSHUFFLE", 1);
  setenv("BLOSC_DELTA", "1", 1);
  blosc2_context *cctx = blosc2_create_cctx(BLOSC2_CPARAMS_DEFAULTS);
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  unsetenv("BLOSC_CLEVEL");
  unsetenv("BLOSC_COMPRESSOR");
  unsetenv("BLOSC_TYPESIZE");
  unsetenv("BLOSC_BLOCKSIZE");
  unsetenv("BLOSC_NTHREADS");
  unsetenv("BLOSC_SPLITMODE");
  unsetenv("BLOSC_SHUFFLE");
  unsetenv("BLOSC_DELTA");
  CHECK_NOT_NULL(cctx);
  CHECK_NOT_NULL(dctx);
  blosc2_cparams cp;
  CHECK_EQ_INT(blosc2_ctx_get_cparams(cctx, &cp), 0);
  CHECK_EQ_INT(cp.clevel, 9);
  CHECK_EQ_INT(cp.compcode, BLOSC_LZ4);
  CHECK_EQ_INT(cp.typesize, 2);
  CHECK_EQ_INT(cp.blocksize, 2048);
  CHECK_EQ_INT(cp.nthreads, 3);
  CHECK_EQ_INT(cp.splitmode, BLOSC_ALWAYS_SPLIT);
  CHECK_EQ_INT(cp.filters[5], BLOSC_NOSHUFFLE);
  CHECK_EQ_INT(cp.filters[4], BLOSC_DELTA);
  blosc2_dparams dp;
  CHECK_EQ_INT(blosc2_ctx_get_dparams(dctx, &dp), 0);
  CHECK_EQ_INT(dp.nthreads, 3);

  fill();
  int csize = blosc2_compress_ctx(cctx, src, N, chunk, sizeof chunk);
  CHECK(csize > 32);
  CHECK_EQ_INT(chunk[3], 2);
  CHECK_EQ_STR(blosc2_cbuffer_complib(chunk), "LZ4");
  memset(out, 0, N);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, N), N);
  CHECK_EQ_MEM(out, src, N);
  blosc2_free_ctx(cctx);
  blosc2_free_ctx(dctx);

  /* an unknown codec name still yields a context, whose compressions then fail */
  setenv("BLOSC_COMPRESSOR", "no-such-codec", 1);
  cctx = blosc2_create_cctx(BLOSC2_CPARAMS_DEFAULTS);
  unsetenv("BLOSC_COMPRESSOR");
  CHECK_NOT_NULL(cctx);
  CHECK(blosc2_compress_ctx(cctx, src, N, chunk, sizeof chunk) < 0);
  blosc2_free_ctx(cctx);
}

int main(void) {
  RUN(test_init_destroy_nesting);
  RUN(test_settings_survive_destroy_registries_do_not);
  RUN(test_env_global_compress);
  RUN(test_env_global_decompress);
  RUN(test_env_contexts);
  return harness_summary();
}
