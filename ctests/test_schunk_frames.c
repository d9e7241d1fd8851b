/* Super-chunks as frames: to_buffer/from_buffer (copy and no-copy), to_file, append_file +
 * open_offset, deterministic serialisation whatever the source storage, forged frames refused
 * by from_buffer/open, variable chunk sizes, and NULL arguments everywhere. */
#include "blosc2.h"
#include "harness.h"

enum { ITEMS = 4000, BYTES = ITEMS * 4 };
static int32_t buf[ITEMS];
static int32_t out[ITEMS];

static void fill(int seed) {
  for (int i = 0; i < ITEMS; i++) buf[i] = seed * 1000 + i / 7;
}

static blosc2_schunk *make(bool contiguous, const char *path) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.clevel = 7;
  cp.compcode = BLOSC_LZ4;
  blosc2_storage st = {.contiguous = contiguous, .urlpath = (char *)path, .cparams = &cp};
  blosc2_remove_urlpath(path);
  return blosc2_schunk_new(&st);
}

/* A plain schunk with metalayers, 5 chunks (one all-zero, one short last) and a vlmetalayer. */
static blosc2_schunk *populated(bool contiguous, const char *path) {
  blosc2_schunk *sc = make(contiguous, path);
  if (sc == NULL) return NULL;
  if (blosc2_meta_add(sc, "shape", (uint8_t *)"\x01\x02\x03", 3) < 0) return NULL;
  for (int i = 0; i < 4; i++) {
    fill(i);
    if (i == 2) memset(buf, 0, BYTES);
    if (blosc2_schunk_append_buffer(sc, buf, BYTES) != i + 1) return NULL;
  }
  fill(9);
  if (blosc2_schunk_append_buffer(sc, buf, BYTES / 2) != 5) return NULL;
  if (blosc2_vlmeta_add(sc, "info", (uint8_t *)"{\"a\": 1}", 8, NULL) < 0) return NULL;
  return sc;
}

static int same_data(blosc2_schunk *a, blosc2_schunk *b) {
  if (a->nchunks != b->nchunks || a->nbytes != b->nbytes) return 0;
  for (int64_t i = 0; i < a->nchunks; i++) {
    int n1 = blosc2_schunk_decompress_chunk(a, i, buf, BYTES);
    int n2 = blosc2_schunk_decompress_chunk(b, i, out, BYTES);
    if (n1 < 0 || n1 != n2 || memcmp(buf, out, n1) != 0) return 0;
  }
  return 1;
}

static void test_buffers(void) {
  blosc2_schunk *sc = populated(false, NULL);
  CHECK_NOT_NULL(sc);
  CHECK_EQ_INT(sc->chunksize, BYTES);
  uint8_t *cframe;
  bool nf;
  int64_t len = blosc2_schunk_to_buffer(sc, &cframe, &nf);
  CHECK(len > 0 && nf);
  /* copy = true: plain */
  blosc2_schunk *c1 = blosc2_schunk_from_buffer(cframe, len, true);
  CHECK_NOT_NULL(c1);
  CHECK(c1->frame == NULL);
  CHECK(same_data(sc, c1));
  /* copy = false: frame-backed; the caller keeps (and frees) the buffer */
  blosc2_schunk *c2 = blosc2_schunk_from_buffer(cframe, len, false);
  CHECK_NOT_NULL(c2);
  CHECK(c2->frame != NULL);
  blosc2_schunk_avoid_cframe_free(c2, true);
  CHECK(same_data(sc, c2));
  uint8_t *m;
  int32_t mlen;
  CHECK_EQ_INT(blosc2_meta_get(c2, "shape", &m, &mlen), 0);
  CHECK_EQ_INT(mlen, 3);
  free(m);
  CHECK_EQ_INT(blosc2_vlmeta_get(c1, "info", &m, &mlen), 0);
  CHECK_EQ_MEM(m, "{\"a\": 1}", 8);
  free(m);
  /* the all-zero chunk is a 32-byte special chunk everywhere */
  uint8_t *c;
  bool cnf;
  CHECK_EQ_INT(blosc2_schunk_get_chunk(c1, 2, &c, &cnf), 32);
  if (cnf) free(c);
  CHECK_EQ_INT(blosc2_schunk_get_chunk(c2, 2, &c, &cnf), 32);
  if (cnf) free(c);
  /* mutating the no-copy schunk leaves the caller's buffer alone */
  uint8_t *before = malloc(len);
  memcpy(before, cframe, len);
  fill(5);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(c2, buf, BYTES / 2), 6);
  CHECK_EQ_MEM(cframe, before, len);
  /* serialisation is deterministic across storages */
  uint8_t *again;
  bool nf2;
  CHECK_EQ_INT(blosc2_schunk_to_buffer(c1, &again, &nf2), len);
  CHECK_EQ_MEM(again, cframe, len);
  free(again);
  blosc2_schunk_free(c1);
  blosc2_schunk_free(c2);
  free(before);
  free(cframe);
  blosc2_schunk_free(sc);
}

static void test_files_and_offsets(void) {
  const char *f = "ct_schunk_frames.b2frame";
  const char *multi = "ct_schunk_multi.b2frame";
  blosc2_schunk *sc = populated(false, NULL);
  CHECK_NOT_NULL(sc);
  uint8_t *ref;
  bool nf;
  int64_t len = blosc2_schunk_to_buffer(sc, &ref, &nf);
  CHECK(len > 0);
  blosc2_remove_urlpath(f);
  CHECK_EQ_INT(blosc2_schunk_to_file(sc, f), len);
  blosc2_schunk *o = blosc2_schunk_open("file:///ct_schunk_frames.b2frame");
  CHECK_NOT_NULL(o);
  CHECK_EQ_STR(o->storage->urlpath, "file:///ct_schunk_frames.b2frame");
  CHECK(o->storage->contiguous);
  CHECK_EQ_INT(o->compcode, BLOSC_LZ4);
  CHECK_EQ_INT(o->clevel, 7);
  CHECK(same_data(sc, o));
  uint8_t *b2;
  CHECK_EQ_INT(blosc2_schunk_to_buffer(o, &b2, &nf), len);
  CHECK_EQ_MEM(b2, ref, len);
  free(b2);
  blosc2_schunk_free(o);

  /* several frames in one file */
  blosc2_remove_urlpath(multi);
  CHECK_EQ_INT(blosc2_schunk_append_file(sc, multi), 0);
  blosc2_schunk *small = make(false, NULL);
  fill(3);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(small, buf, BYTES), 1);
  CHECK_EQ_INT(blosc2_schunk_append_file(small, multi), len);
  int64_t third = blosc2_schunk_append_file(sc, multi);
  CHECK(third > len);
  blosc2_schunk *o2 = blosc2_schunk_open_offset(multi, len);
  CHECK_NOT_NULL(o2);
  CHECK(same_data(small, o2));
  blosc2_schunk_free(o2);
  o2 = blosc2_schunk_open_offset(multi, third);
  CHECK_NOT_NULL(o2);
  CHECK(same_data(sc, o2));
  blosc2_schunk_free(o2);
  CHECK(blosc2_schunk_open_offset(multi, 1) == NULL);
  CHECK(blosc2_schunk_open_offset(multi, -1) == NULL);
  CHECK(blosc2_schunk_open("ct_no_such_file.b2frame") == NULL);
  blosc2_schunk_free(small);
  free(ref);
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath(f);
  blosc2_remove_urlpath(multi);
}

static void test_new_refuses_existing(void) {
  const char *f = "ct_schunk_exists.b2frame";
  blosc2_schunk *sc = make(true, f);
  CHECK_NOT_NULL(sc);
  blosc2_schunk_free(sc);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  blosc2_storage st = {.contiguous = true, .urlpath = (char *)f, .cparams = &cp};
  CHECK(blosc2_schunk_new(&st) == NULL);
  blosc2_remove_urlpath(f);
}

static void test_forged_frames(void) {
  blosc2_schunk *sc = populated(true, NULL);
  CHECK_NOT_NULL(sc);
  uint8_t *cf;
  bool nf;
  int64_t len = blosc2_schunk_to_buffer(sc, &cf, &nf);
  CHECK(len > 0);
  uint8_t *bad = malloc(len);
  /* bad magic */
  memcpy(bad, cf, len);
  bad[3] ^= 0xFF;
  CHECK(blosc2_schunk_from_buffer(bad, len, true) == NULL);
  CHECK(blosc2_schunk_from_buffer(bad, len, false) == NULL);
  /* too short, wrong length */
  CHECK(blosc2_schunk_from_buffer(cf, 86, false) == NULL);
  CHECK(blosc2_schunk_from_buffer(cf, len - 1, false) == NULL);
  CHECK(blosc2_schunk_from_buffer(cf, 0, false) == NULL);
  CHECK(blosc2_schunk_from_buffer(cf, -5, false) == NULL);
  /* trailer_len pointing before the header (big-endian u32 at len - 22) */
  memcpy(bad, cf, len);
  uint32_t tl = (uint32_t)(len - 87 + 1);
  bad[len - 22] = (uint8_t)(tl >> 24);
  bad[len - 21] = (uint8_t)(tl >> 16);
  bad[len - 20] = (uint8_t)(tl >> 8);
  bad[len - 19] = (uint8_t)tl;
  CHECK(blosc2_schunk_from_buffer(bad, len, true) == NULL);
  /* every single-byte corruption either opens or fails cleanly, never crashes */
  for (int64_t i = 0; i < len; i += 3) {
    memcpy(bad, cf, len);
    bad[i] ^= 0x5A;
    blosc2_schunk *x = blosc2_schunk_from_buffer(bad, len, i % 2 == 0);
    if (x != NULL) {
      for (int64_t k = 0; k < x->nchunks; k++) blosc2_schunk_decompress_chunk(x, k, out, BYTES);
      blosc2_schunk_free(x);
    }
  }
  /* a forged file is refused by open */
  const char *f = "ct_schunk_forged.b2frame";
  memcpy(bad, cf, len);
  bad[20] ^= 0x40; /* frame_len */
  FILE *fp = fopen(f, "wb");
  CHECK_NOT_NULL(fp);
  fwrite(bad, 1, len, fp);
  fclose(fp);
  CHECK(blosc2_schunk_open(f) == NULL);
  blosc2_remove_urlpath(f);
  free(bad);
  free(cf);
  blosc2_schunk_free(sc);
}

static void test_variable_chunks(void) {
  for (int contiguous = 0; contiguous < 2; contiguous++) {
    blosc2_schunk *sc = make(contiguous, NULL);
    CHECK_NOT_NULL(sc);
    fill(1);
    CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, BYTES), 1);
    CHECK_EQ_INT(sc->chunksize, BYTES);
    CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, BYTES / 4), 2);
    CHECK_EQ_INT(sc->chunksize, BYTES);
    CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, BYTES), 3);
    CHECK_EQ_INT(sc->chunksize, 0);
    CHECK_EQ_INT(sc->nbytes, BYTES * 2 + BYTES / 4);
    CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 1, out, BYTES), BYTES / 4);
    CHECK_EQ_MEM(out, buf, BYTES / 4);
    int32_t *all = malloc(sc->nbytes);
    CHECK_EQ_INT(blosc2_schunk_get_slice_buffer(sc, 0, sc->nbytes / 4, all), 0);
    CHECK_EQ_MEM(all + ITEMS, buf, BYTES / 4);
    free(all);
    uint8_t *cf;
    bool nf;
    int64_t len = blosc2_schunk_to_buffer(sc, &cf, &nf);
    CHECK(len > 0);
    CHECK_EQ_INT(cf[25] & 0x0F, 3); /* frame format version 3: variable chunks */
    CHECK(cf[25] & 0x40);
    blosc2_schunk *b = blosc2_schunk_from_buffer(cf, len, false);
    CHECK_NOT_NULL(b);
    CHECK_EQ_INT(b->chunksize, 0);
    CHECK(same_data(sc, b));
    blosc2_schunk_free(b);
    free(cf);
    blosc2_schunk_free(sc);
  }
}

static void test_vlblock_chunks(void) {
  const char *paths[4] = {NULL, NULL, "ct_schunk_vl.b2frame", "ct_schunk_vl_dir.b2frame"};
  for (int k = 0; k < 4; k++) {
    blosc2_schunk *sc = make(k == 1 || k == 2, paths[k]);
    CHECK_NOT_NULL(sc);
    const char *b0 = "first block", *b1 = "the second, longer block of bytes", *b2 = "3";
    const void *srcs[3] = {b0, b1, b2};
    int32_t sizes[3] = {(int32_t)strlen(b0), (int32_t)strlen(b1), (int32_t)strlen(b2)};
    uint8_t vl[512];
    int cb = blosc2_vlcompress_ctx(sc->cctx, srcs, sizes, 3, vl, sizeof vl);
    CHECK(cb > 0);
    CHECK_EQ_INT(blosc2_schunk_append_chunk(sc, vl, true), 1);
    CHECK_EQ_INT(blosc2_schunk_append_chunk(sc, vl, true), 2);
    CHECK_EQ_INT(sc->flags2 & BLOSC2_VL_BLOCKS, BLOSC2_VL_BLOCKS);
    /* regular chunks cannot join VL-block chunks */
    fill(1);
    CHECK(blosc2_schunk_append_buffer(sc, buf, BYTES) < 0);
    CHECK_EQ_INT(sc->nchunks, 2);
    if (paths[k] != NULL) {
      blosc2_schunk_free(sc);
      sc = blosc2_schunk_open(paths[k]);
      CHECK_NOT_NULL(sc);
      CHECK_EQ_INT(sc->flags2 & BLOSC2_VL_BLOCKS, BLOSC2_VL_BLOCKS);
    }
    uint8_t *blk = NULL;
    int32_t bsize = 0;
    CHECK_EQ_INT(blosc2_schunk_get_vlblock(sc, 1, 1, &blk, &bsize), sizes[1]);
    CHECK_EQ_INT(bsize, sizes[1]);
    CHECK_EQ_MEM(blk, b1, sizes[1]);
    free(blk);
    CHECK(blosc2_schunk_get_vlblock(sc, 1, 3, &blk, &bsize) < 0);
    CHECK(blosc2_schunk_get_vlblock(sc, -1, 0, &blk, &bsize) < 0);
    CHECK(blosc2_schunk_get_vlblock(sc, 2, 0, &blk, &bsize) < 0);
    blosc2_schunk_free(sc);
    blosc2_remove_urlpath(paths[k]);
  }
}

static void test_null_arguments(void) {
  uint8_t *c = NULL;
  bool nf;
  int32_t x = 0;
  int64_t i64 = 0;
  CHECK_EQ_INT(blosc2_schunk_append_buffer(NULL, &x, 4), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_append_chunk(NULL, c, true), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_insert_chunk(NULL, 0, c, true), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_update_chunk(NULL, 0, c, true), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_delete_chunk(NULL, 0), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(NULL, 0, &x, 4), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_get_chunk(NULL, 0, &c, &nf), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_get_lazychunk(NULL, 0, &c, &nf), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_to_buffer(NULL, &c, &nf), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_frame_len(NULL), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_fill_special(NULL, 1, BLOSC2_SPECIAL_ZERO, 4), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_reorder_offsets(NULL, &i64), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_meta_add(NULL, "a", (uint8_t *)"b", 1), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_vlmeta_add(NULL, "a", (uint8_t *)"b", 1, NULL), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_vlmeta_exists(NULL, "a"), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_free(NULL), 0);
  CHECK(blosc2_schunk_open(NULL) == NULL);
  CHECK(blosc2_schunk_from_buffer(NULL, 100, true) == NULL);
  CHECK(blosc2_frame_get_offsets(NULL) == NULL);
  CHECK(blosc2_schunk_copy(NULL, NULL) == NULL);

  blosc2_schunk *sc = make(true, NULL);
  CHECK_NOT_NULL(sc);
  CHECK_EQ_INT(blosc2_schunk_append_chunk(sc, NULL, true), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, NULL, 4), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_get_chunk(sc, 0, NULL, &nf), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_meta_add(sc, NULL, (uint8_t *)"b", 1), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_meta_add(sc, "a", NULL, 1), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_meta_add(sc, "a", (uint8_t *)"b", -1), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_meta_add(sc, "a-name-that-is-much-longer-than-31-chars", (uint8_t *)"b", 1),
               BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_vlmeta_get(sc, "a", NULL, &x), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_to_buffer(sc, NULL, &nf), BLOSC2_ERROR_NULL_POINTER);
  CHECK(blosc2_schunk_fill_special(sc, 10, 3, 40) < 0); /* VALUE is not fillable */
  CHECK(blosc2_schunk_fill_special(sc, 10, BLOSC2_SPECIAL_ZERO, 41) < 0);
  CHECK_EQ_INT(sc->nchunks, 0);
  blosc2_schunk_free(sc);
}

int main(void) {
  blosc2_init();
  RUN(test_buffers);
  RUN(test_files_and_offsets);
  RUN(test_new_refuses_existing);
  RUN(test_forged_frames);
  RUN(test_variable_chunks);
  RUN(test_vlblock_chunks);
  RUN(test_null_arguments);
  blosc2_destroy();
  return harness_summary();
}
