/* Exact chunk sizes and header bytes that c-blosc2 users (and upstream tests) rely on:
 * special-value chunks, memcpyed fallbacks, the 1-byte and empty inputs, and the cbuffer_*
 * inspectors. Every expectation here was checked against c-blosc2 3.3.5. */
#include "blosc2.h"
#include "harness.h"

static void fill_seq(uint8_t *p, int32_t n) {
  for (int32_t i = 0; i < n; i++) p[i] = (uint8_t)(i * 7 + (i >> 8));
}

/* xorshift: incompressible bytes, deterministic. */
static void fill_random(uint8_t *p, int32_t n) {
  uint32_t s = 2463534242u;
  for (int32_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    p[i] = (uint8_t)s;
  }
}

static int32_t rd32(const uint8_t *p) {
  return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

static void test_special_chunks_are_header_only(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  uint8_t chunk[64];
  memset(chunk, 0xAA, sizeof chunk);
  CHECK_EQ_INT(blosc2_chunk_zeros(cp, 4000, chunk, sizeof chunk), 32);
  /* version 5, versionlz 1, flags 0x05, typesize, nbytes, blocksize 4000, cbytes 32 */
  const uint8_t head[16] = {5, 1, 5, 4, 0xa0, 0x0f, 0, 0, 0xa0, 0x0f, 0, 0, 32, 0, 0, 0};
  CHECK_EQ_MEM(chunk, head, 16);
  for (int i = 16; i < 31; i++) CHECK_EQ_INT(chunk[i], 0);
  CHECK_EQ_INT(chunk[31], BLOSC2_SPECIAL_ZERO << 4);

  CHECK_EQ_INT(blosc2_chunk_nans(cp, 4000, chunk, sizeof chunk), 32);
  CHECK_EQ_INT(chunk[31], BLOSC2_SPECIAL_NAN << 4);
  CHECK_EQ_INT(blosc2_chunk_uninit(cp, 4000, chunk, sizeof chunk), 32);
  CHECK_EQ_INT(chunk[31], BLOSC2_SPECIAL_UNINIT << 4);

  float v = 3.5f;
  CHECK_EQ_INT(blosc2_chunk_repeatval(cp, 4000, chunk, sizeof chunk, &v), 36);
  CHECK_EQ_INT(chunk[31], BLOSC2_SPECIAL_VALUE << 4);
  CHECK_EQ_INT(rd32(chunk + 12), 36);
  CHECK_EQ_MEM(chunk + 32, &v, 4);

  /* A repeated 8-byte value decodes everywhere. */
  cp.typesize = 8;
  double d = -1.25, out[100];
  CHECK_EQ_INT(blosc2_chunk_repeatval(cp, sizeof out, chunk, sizeof chunk, &d), 40);
  CHECK_EQ_INT(blosc2_decompress(chunk, 40, out, sizeof out), (int)sizeof out);
  for (int i = 0; i < 100; i++) CHECK(out[i] == d);
}

static void test_special_chunk_errors(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  uint8_t chunk[64];
  int32_t v = 1;
  /* dest too small */
  CHECK_EQ_INT(blosc2_chunk_zeros(cp, 4000, chunk, 31), BLOSC2_ERROR_DATA);
  CHECK_EQ_INT(blosc2_chunk_repeatval(cp, 4000, chunk, 35, &v), BLOSC2_ERROR_DATA);
  /* nbytes not a multiple of typesize: an error except for zeros */
  CHECK_EQ_INT(blosc2_chunk_nans(cp, 4001, chunk, sizeof chunk), BLOSC2_ERROR_DATA);
  CHECK_EQ_INT(blosc2_chunk_uninit(cp, 4001, chunk, sizeof chunk), BLOSC2_ERROR_DATA);
  CHECK_EQ_INT(blosc2_chunk_repeatval(cp, 4001, chunk, sizeof chunk, &v), BLOSC2_ERROR_DATA);
  CHECK_EQ_INT(blosc2_chunk_zeros(cp, 4001, chunk, sizeof chunk), BLOSC2_ERROR_DATA);
  /* bad clevel is caught by the context checks */
  cp.clevel = 10;
  CHECK_EQ_INT(blosc2_chunk_zeros(cp, 4000, chunk, sizeof chunk), BLOSC2_ERROR_CODEC_PARAM);
}

static void test_zeros_decode_and_nonmultiple(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  uint8_t chunk[32];
  CHECK_EQ_INT(blosc2_chunk_zeros(cp, 1001, chunk, sizeof chunk), 32);
  uint8_t out[1001];
  memset(out, 0x55, sizeof out);
  CHECK_EQ_INT(blosc2_decompress(chunk, 32, out, sizeof out), 1001);
  for (int i = 0; i < 1001; i++) CHECK_EQ_INT(out[i], 0);
}

static void test_tiny_and_empty_inputs(void) {
  uint8_t dest[256];
  uint8_t one = 42;
  blosc2_init();
  CHECK_EQ_INT(blosc2_compress(5, BLOSC_SHUFFLE, 4, NULL, 0, dest, sizeof dest), 32);
  int32_t nbytes, cbytes, blocksize;
  CHECK_EQ_INT(blosc2_cbuffer_sizes(dest, &nbytes, &cbytes, &blocksize), 0);
  CHECK_EQ_INT(nbytes, 0);
  CHECK_EQ_INT(cbytes, 32);
  CHECK_EQ_INT(blosc2_compress(5, BLOSC_SHUFFLE, 4, &one, 1, dest, sizeof dest), 33);
  CHECK(dest[2] & BLOSC_MEMCPYED);
  uint8_t back = 0;
  CHECK_EQ_INT(blosc2_decompress(dest, 33, &back, 1), 1);
  CHECK_EQ_INT(back, 42);
  /* no room for header + 1 byte: 0 means "does not fit" */
  CHECK_EQ_INT(blosc2_compress(5, BLOSC_SHUFFLE, 4, &one, 1, dest, 32), 0);
  blosc2_destroy();
}

static void test_memcpyed_sizes(void) {
  enum { N = 10000 };
  static uint8_t src[N], dest[N + 32], back[N];
  fill_seq(src, N);
  blosc2_init();
  /* clevel 0 stores raw */
  CHECK_EQ_INT(blosc2_compress(0, BLOSC_SHUFFLE, 4, src, N, dest, sizeof dest), N + 32);
  CHECK(dest[2] & BLOSC_MEMCPYED);
  CHECK_EQ_INT(blosc2_decompress(dest, N + 32, back, N), N);
  CHECK_EQ_MEM(back, src, N);
  /* incompressible data falls back to memcpy */
  fill_random(src, N);
  CHECK_EQ_INT(blosc2_compress(9, BLOSC_SHUFFLE, 1, src, N, dest, sizeof dest), N + 32);
  CHECK_EQ_INT(blosc2_decompress(dest, N + 32, back, N), N);
  CHECK_EQ_MEM(back, src, N);
  /* ... and reports 0 when even that does not fit */
  CHECK_EQ_INT(blosc2_compress(9, BLOSC_SHUFFLE, 1, src, N, dest, N + 31), 0);
  blosc2_destroy();
}

static void test_compressible_data_compresses(void) {
  enum { N = 40000 };
  static int32_t src[N / 4];
  static uint8_t dest[N + 32];
  for (int i = 0; i < N / 4; i++) src[i] = i;
  blosc2_init();
  int cbytes = blosc2_compress(5, BLOSC_SHUFFLE, 4, src, N, dest, sizeof dest);
  CHECK(cbytes > 32);
  CHECK(cbytes * 10 < N);
  int32_t nb, cb, bs;
  CHECK_EQ_INT(blosc2_cbuffer_sizes(dest, &nb, &cb, &bs), 0);
  CHECK_EQ_INT(nb, N);
  CHECK_EQ_INT(cb, cbytes);
  CHECK(bs > 0 && bs <= N);
  blosc2_destroy();
}

static void test_all_zero_input_becomes_special(void) {
  enum { N = 1 << 16 };
  static uint8_t src[N], dest[N + 32];
  memset(src, 0, N);
  blosc2_init();
  CHECK_EQ_INT(blosc2_compress(5, BLOSC_SHUFFLE, 8, src, N, dest, sizeof dest), 32);
  CHECK_EQ_INT((dest[31] >> 4) & 7, BLOSC2_SPECIAL_ZERO);
  blosc2_destroy();
}

static void test_cbuffer_inspectors(void) {
  enum { N = 4000 };
  static int32_t src[N / 4];
  static uint8_t dest[N + 32];
  for (int i = 0; i < N / 4; i++) src[i] = i * 3;
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.compcode = BLOSC_ZSTD;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  CHECK_NOT_NULL(cctx);
  int csize = blosc2_compress_ctx(cctx, src, N, dest, sizeof dest);
  blosc2_free_ctx(cctx);
  CHECK(csize > 32);

  int version, versionlz;
  blosc2_cbuffer_versions(dest, &version, &versionlz);
  CHECK_EQ_INT(version, BLOSC2_VERSION_FORMAT_STABLE);
  CHECK_EQ_INT(versionlz, 1);
  CHECK_EQ_STR(blosc2_cbuffer_complib(dest), "Zstd");

  size_t typesize;
  int flags;
  blosc1_cbuffer_metainfo(dest, &typesize, &flags);
  CHECK_EQ_INT(typesize, 4);
  CHECK_EQ_INT(flags & 0x05, 0x05);
  CHECK_EQ_INT(flags >> 5, BLOSC_ZSTD_FORMAT);

  size_t nbytes, cbytes, blocksize;
  blosc1_cbuffer_sizes(dest, &nbytes, &cbytes, &blocksize);
  CHECK_EQ_INT(nbytes, N);
  CHECK_EQ_INT(cbytes, csize);

  CHECK_EQ_INT(blosc1_cbuffer_validate(dest, (size_t)csize, &nbytes), 0);
  CHECK_EQ_INT(nbytes, N);
  CHECK_EQ_INT(blosc1_cbuffer_validate(dest, (size_t)csize + 1, &nbytes), BLOSC2_ERROR_INVALID_HEADER);
  CHECK_EQ_INT(nbytes, 0);
  CHECK_EQ_INT(blosc1_cbuffer_validate(dest, 15, &nbytes), BLOSC2_ERROR_WRITE_BUFFER);

  /* NULL out-pointers are allowed for blosc2_cbuffer_sizes */
  CHECK_EQ_INT(blosc2_cbuffer_sizes(dest, NULL, NULL, NULL), 0);

  /* A forged header (blocksize 0) reads as zeros and an error */
  uint8_t bad[32];
  memcpy(bad, dest, 32);
  memset(bad + 8, 0, 4);
  int32_t nb = -1, cb = -1, bs = -1;
  CHECK_EQ_INT(blosc2_cbuffer_sizes(bad, &nb, &cb, &bs), BLOSC2_ERROR_INVALID_HEADER);
  CHECK_EQ_INT(nb, 0);
  CHECK_EQ_INT(cb, 0);
  CHECK_EQ_INT(bs, 0);
  CHECK(blosc2_cbuffer_complib(bad) == NULL);
  blosc2_cbuffer_versions(bad, &version, &versionlz);
  CHECK_EQ_INT(version, 0);
  CHECK_EQ_INT(versionlz, 0);
}

static void test_complib_names(void) {
  const char *names[] = {"blosclz", "lz4", "lz4hc", "zlib", "zstd"};
  const char *libs[] = {"BloscLZ", "LZ4", "LZ4", "Zlib", "Zstd"};
  static int32_t src[1000];
  static uint8_t dest[4000 + 32];
  for (int i = 0; i < 1000; i++) src[i] = i;
  for (int k = 0; k < 5; k++) {
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.compcode = (uint8_t)blosc2_compname_to_compcode(names[k]);
    blosc2_context *cctx = blosc2_create_cctx(cp);
    CHECK_NOT_NULL(cctx);
    int csize = blosc2_compress_ctx(cctx, src, sizeof src, dest, sizeof dest);
    blosc2_free_ctx(cctx);
    CHECK(csize > 32);
    CHECK_EQ_STR(blosc2_cbuffer_complib(dest), libs[k]);
    CHECK_EQ_INT(dest[22], cp.compcode);
  }
}

int main(void) {
  RUN(test_special_chunks_are_header_only);
  RUN(test_special_chunk_errors);
  RUN(test_zeros_decode_and_nonmultiple);
  RUN(test_tiny_and_empty_inputs);
  RUN(test_memcpyed_sizes);
  RUN(test_compressible_data_compresses);
  RUN(test_all_zero_input_becomes_special);
  RUN(test_cbuffer_inspectors);
  RUN(test_complib_names);
  return harness_summary();
}
