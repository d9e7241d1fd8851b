/* Conformance gap found by running c-blosc2's own test programs against libb2frame (README,
 * "Conformance"): blosc2_schunk_get_lazychunk on a sparse frame whose chunk file was corrupted
 * on disk into a VL-block header claiming 2^32-1 blocks must fail (< 0), as c-blosc2 3.3.5 does,
 * instead of handing the caller a chunk whose block table runs past its end. The plain decoder
 * must reject it too. */
#include <blosc2.h>

#include "harness.h"

#define URL "conformance_lazy_vl.b2frame"

static void put_le32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static blosc2_schunk *make_sframe(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  cp.compcode = BLOSC_LZ4;
  blosc2_storage st = {.contiguous = false, .urlpath = URL, .cparams = &cp};
  blosc2_remove_urlpath(URL);
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  if (sc == NULL) return NULL;
  static uint8_t a[3000], b[500], c[7000];
  for (int i = 0; i < 3000; i++) a[i] = (uint8_t)(i / 7);
  for (int i = 0; i < 500; i++) b[i] = (uint8_t)i;
  for (int i = 0; i < 7000; i++) c[i] = (uint8_t)(i % 13);
  const void *srcs[3] = {a, b, c};
  int32_t sizes[3] = {3000, 500, 7000};
  blosc2_context *cctx = blosc2_create_cctx(cp);
  uint8_t chunk[11000];
  int cb = blosc2_vlcompress_ctx(cctx, srcs, sizes, 3, chunk, sizeof(chunk));
  blosc2_free_ctx(cctx);
  if (cb <= 0 || blosc2_schunk_append_chunk(sc, chunk, true) != 1 || blosc2_schunk_append_chunk(sc, chunk, true) != 2) {
    blosc2_schunk_free(sc);
    return NULL;
  }
  return sc;
}

static void test_intact_lazy_vlchunk_reads(void) {
  blosc2_schunk *sc = make_sframe();
  CHECK_NOT_NULL(sc);
  uint8_t *lazy = NULL;
  bool needs_free = false;
  int cb = blosc2_schunk_get_lazychunk(sc, 0, &lazy, &needs_free);
  CHECK(cb > 0);
  int32_t nblocks = -1;
  CHECK_EQ_INT(blosc2_vlchunk_get_nblocks(lazy, cb, &nblocks), 0);
  CHECK_EQ_INT(nblocks, 3);
  if (needs_free) free(lazy);
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath(URL);
}

static void test_corrupt_lazy_vlchunk_is_rejected(void) {
  blosc2_schunk *sc = make_sframe();
  CHECK_NOT_NULL(sc);
  FILE *fp = fopen(URL "/00000000.chunk", "rb+");
  CHECK_NOT_NULL(fp);
  uint8_t header[BLOSC_EXTENDED_HEADER_LENGTH];
  CHECK_EQ_INT(fread(header, 1, sizeof(header), fp), sizeof(header));
  header[BLOSC2_CHUNK_BLOSC2_FLAGS2] |= BLOSC2_VL_BLOCKS;
  put_le32(header + BLOSC2_CHUNK_BLOCKSIZE, UINT32_MAX); /* nblocks of a VL-block chunk */
  CHECK_EQ_INT(fseek(fp, 0, SEEK_SET), 0);
  CHECK_EQ_INT(fwrite(header, 1, sizeof(header), fp), sizeof(header));
  fclose(fp);

  uint8_t *lazy = NULL;
  bool needs_free = false;
  int cb = blosc2_schunk_get_lazychunk(sc, 0, &lazy, &needs_free);
  if (cb >= 0 && needs_free) free(lazy);
  CHECK(cb < 0);
  uint8_t out[20000];
  CHECK(blosc2_schunk_decompress_chunk(sc, 0, out, sizeof(out)) < 0);
  /* the intact second chunk still reads */
  CHECK(blosc2_schunk_get_lazychunk(sc, 1, &lazy, &needs_free) > 0);
  if (needs_free) free(lazy);
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath(URL);
}

int main(void) {
  blosc2_init();
  RUN(test_intact_lazy_vlchunk_reads);
  RUN(test_corrupt_lazy_vlchunk_is_rejected);
  blosc2_destroy();
  return harness_summary();
}
