/* Super-chunk operations on each storage kind (plain, in-memory cframe, cframe file, sframe
 * directory), with reopen: append/insert/update/delete/reorder, get_chunk/get_lazychunk through
 * schunk->dctx, counters read from the struct, metalayers and vlmetalayers (header-inline
 * meta_get, compressed vlmeta contents), fill_special, slices, copies and negative indices. */
#include "blosc2.h"
#include "harness.h"

enum { CHUNKITEMS = 5000, CHUNKBYTES = CHUNKITEMS * 4, NCHUNKS = 8 };

static const char *KIND_NAMES[4] = {"plain", "memory", "file", "sparse"};
static const char *PATHS[4] = {NULL, NULL, "ct_schunk_storage.b2frame", "ct_schunk_storage_dir.b2frame"};
static int kind;

static int32_t buf[CHUNKITEMS];
static int32_t out[CHUNKITEMS];

static void fill(int32_t *b, int seed) {
  for (int i = 0; i < CHUNKITEMS; i++) b[i] = seed * CHUNKITEMS + i;
}

static blosc2_schunk *make(int k) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.nthreads = 2;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 2;
  blosc2_storage st = {.contiguous = (k == 1 || k == 2), .urlpath = (char *)PATHS[k],
                       .cparams = &cp, .dparams = &dp};
  blosc2_remove_urlpath(PATHS[k]);
  return blosc2_schunk_new(&st);
}

/* The chunk at position i must decode to seed s. */
static int chunk_is(blosc2_schunk *sc, int64_t i, int s) {
  fill(buf, s);
  int rc = blosc2_schunk_decompress_chunk(sc, i, out, CHUNKBYTES);
  return rc == CHUNKBYTES && memcmp(buf, out, CHUNKBYTES) == 0;
}

static void test_chunk_ops(void) {
  blosc2_schunk *sc = make(kind);
  CHECK_NOT_NULL(sc);
  CHECK(kind == 0 ? sc->frame == NULL : sc->frame != NULL);
  CHECK_EQ_INT(sc->storage->contiguous, kind == 1 || kind == 2);
  CHECK_EQ_INT(sc->typesize, 4);
  CHECK_EQ_INT(sc->chunksize, -1);
  CHECK_EQ_INT(sc->nchunks, 0);
  CHECK((sc->storage->urlpath == NULL) == (PATHS[kind] == NULL));
  for (int i = 0; i < NCHUNKS; i++) {
    fill(buf, i);
    CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, CHUNKBYTES), i + 1);
  }
  CHECK_EQ_INT(sc->nchunks, NCHUNKS);
  CHECK_EQ_INT(sc->nbytes, (int64_t)NCHUNKS * CHUNKBYTES);
  CHECK_EQ_INT(sc->chunksize, CHUNKBYTES);
  CHECK(sc->cbytes > 0 && sc->nbytes > 10 * sc->cbytes);
  for (int i = 0; i < NCHUNKS; i++) CHECK(chunk_is(sc, i, i));

  /* get_chunk / get_lazychunk give sizes that schunk->dctx accepts. */
  uint8_t *c;
  bool nf;
  int cb = blosc2_schunk_get_chunk(sc, 3, &c, &nf);
  CHECK(cb > BLOSC_EXTENDED_HEADER_LENGTH);
  CHECK_EQ_INT(blosc2_decompress_ctx(sc->dctx, c, cb, out, CHUNKBYTES), CHUNKBYTES);
  fill(buf, 3);
  CHECK_EQ_MEM(out, buf, CHUNKBYTES);
  if (kind == 0) CHECK(sc->data[3] == c && !nf);
  if (nf) free(c);
  int lb = blosc2_schunk_get_lazychunk(sc, 4, &c, &nf);
  CHECK(lb >= BLOSC_EXTENDED_HEADER_LENGTH);
  CHECK_EQ_INT(blosc2_decompress_ctx(sc->dctx, c, lb, out, CHUNKBYTES), CHUNKBYTES);
  int32_t item;
  CHECK_EQ_INT(blosc2_getitem_ctx(sc->dctx, c, lb, 7, 1, &item, 4), 4);
  CHECK_EQ_INT(item, 4 * CHUNKITEMS + 7);
  if (nf) free(c);

  /* insert (copy=false: the library takes the malloc'ed chunk) */
  fill(buf, 100);
  uint8_t *owned = malloc(CHUNKBYTES + BLOSC2_MAX_OVERHEAD);
  int csize = blosc2_compress_ctx(sc->cctx, buf, CHUNKBYTES, owned, CHUNKBYTES + BLOSC2_MAX_OVERHEAD);
  CHECK(csize > 0);
  CHECK_EQ_INT(blosc2_schunk_insert_chunk(sc, 0, owned, false), NCHUNKS + 1);
  CHECK(chunk_is(sc, 0, 100));
  CHECK(chunk_is(sc, 1, 0));

  /* update with a special zero chunk (copy=true) */
  uint8_t zeros[BLOSC_EXTENDED_HEADER_LENGTH];
  blosc2_cparams zcp = BLOSC2_CPARAMS_DEFAULTS;
  zcp.typesize = 4;
  CHECK_EQ_INT(blosc2_chunk_zeros(zcp, CHUNKBYTES, zeros, sizeof zeros), 32);
  CHECK_EQ_INT(blosc2_schunk_update_chunk(sc, 5, zeros, true), NCHUNKS + 1);
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 5, out, CHUNKBYTES), CHUNKBYTES);
  for (int i = 0; i < CHUNKITEMS; i++) CHECK(out[i] == 0);
  CHECK_EQ_INT(blosc2_schunk_get_chunk(sc, 5, &c, &nf), 32);
  if (nf) free(c);

  /* delete, then reorder (reverse) */
  CHECK_EQ_INT(blosc2_schunk_delete_chunk(sc, 0), NCHUNKS);
  CHECK_EQ_INT(sc->nchunks, NCHUNKS);
  CHECK_EQ_INT(sc->nbytes, (int64_t)NCHUNKS * CHUNKBYTES);
  int64_t order[NCHUNKS];
  for (int i = 0; i < NCHUNKS; i++) order[i] = NCHUNKS - 1 - i;
  CHECK_EQ_INT(blosc2_schunk_reorder_offsets(sc, order), 0);
  CHECK(chunk_is(sc, 0, NCHUNKS - 1));
  CHECK(chunk_is(sc, NCHUNKS - 1, 0));
  order[0] = order[1];
  CHECK(blosc2_schunk_reorder_offsets(sc, order) < 0);
  order[0] = -1;
  CHECK(blosc2_schunk_reorder_offsets(sc, order) < 0);
  CHECK(chunk_is(sc, 0, NCHUNKS - 1));

  /* negative and out-of-range indices never crash and change nothing */
  int64_t nb = sc->nbytes;
  CHECK(blosc2_schunk_get_chunk(sc, -1, &c, &nf) < 0);
  CHECK(blosc2_schunk_get_lazychunk(sc, -1, &c, &nf) < 0);
  CHECK(blosc2_schunk_get_chunk(sc, NCHUNKS, &c, &nf) < 0);
  CHECK(blosc2_schunk_decompress_chunk(sc, -1, out, CHUNKBYTES) < 0);
  CHECK(blosc2_schunk_decompress_chunk(sc, NCHUNKS, out, CHUNKBYTES) < 0);
  CHECK(blosc2_schunk_decompress_chunk(sc, 0, out, CHUNKBYTES - 1) < 0);
  CHECK(blosc2_schunk_insert_chunk(sc, -1, zeros, true) < 0);
  CHECK(blosc2_schunk_insert_chunk(sc, NCHUNKS + 1, zeros, true) < 0);
  CHECK(blosc2_schunk_update_chunk(sc, -1, zeros, true) < 0);
  CHECK(blosc2_schunk_update_chunk(sc, NCHUNKS, zeros, true) < 0);
  CHECK(blosc2_schunk_delete_chunk(sc, -1) < 0);
  CHECK(blosc2_schunk_delete_chunk(sc, NCHUNKS) < 0);
  CHECK_EQ_INT(sc->nchunks, NCHUNKS);
  CHECK_EQ_INT(sc->nbytes, nb);

  /* reopen */
  if (kind >= 2) {
    blosc2_schunk_free(sc);
    sc = blosc2_schunk_open(PATHS[kind]);
    CHECK_NOT_NULL(sc);
    CHECK_EQ_INT(sc->nchunks, NCHUNKS);
    CHECK_EQ_INT(sc->typesize, 4);
    CHECK_EQ_INT(sc->chunksize, CHUNKBYTES);
    CHECK(chunk_is(sc, 0, NCHUNKS - 1));
    CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, NCHUNKS - 1 - 4, out, CHUNKBYTES), CHUNKBYTES);
    CHECK(out[0] == 0 && out[CHUNKITEMS - 1] == 0);
    CHECK_EQ_STR(sc->storage->urlpath, PATHS[kind]);
  }
  CHECK_EQ_INT(blosc2_schunk_free(sc), 0);
  blosc2_remove_urlpath(PATHS[kind]);
}

static void test_metalayers(void) {
  blosc2_schunk *sc = make(kind);
  CHECK_NOT_NULL(sc);
  uint8_t m1[3] = {1, 2, 3};
  CHECK_EQ_INT(blosc2_meta_add(sc, "m1", m1, 3), 0);
  CHECK_EQ_INT(blosc2_meta_add(sc, "m2", (uint8_t *)"abcdef", 6), 1);
  CHECK_EQ_INT(blosc2_meta_add(sc, "m1", m1, 3), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(sc->nmetalayers, 2);
  CHECK_EQ_INT(blosc2_meta_exists(sc, "m2"), 1);
  CHECK_EQ_INT(blosc2_meta_exists(sc, "nope"), BLOSC2_ERROR_NOT_FOUND);
  CHECK_EQ_INT(blosc2_meta_update(sc, "m2", (uint8_t *)"XY", 2), 1);
  CHECK_EQ_INT(blosc2_meta_update(sc, "none", (uint8_t *)"XY", 2), BLOSC2_ERROR_NOT_FOUND);
  fill(buf, 1);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, CHUNKBYTES), 1);
  /* after data: frames refuse new metalayers, and the failure changes nothing */
  int rc = blosc2_meta_add(sc, "late", m1, 3);
  if (kind == 0) {
    CHECK_EQ_INT(rc, 2);
  } else {
    CHECK_EQ_INT(rc, BLOSC2_ERROR_INVALID_PARAM);
    CHECK_EQ_INT(sc->nmetalayers, 2);
  }
  CHECK(blosc2_meta_update(sc, "m1", (uint8_t *)"longer", 6) < 0);
  CHECK_EQ_INT(blosc2_meta_update(sc, "m1", (uint8_t *)"\x09", 1), 0);

  /* vlmetalayers: stored compressed */
  const char *vl = "a variable-length metalayer, somewhat long for the sake of it";
  CHECK_EQ_INT(blosc2_vlmeta_add(sc, "vl1", (uint8_t *)vl, (int32_t)strlen(vl), NULL), 0);
  blosc2_cparams vcp = BLOSC2_CPARAMS_DEFAULTS;
  vcp.compcode = BLOSC_ZSTD;
  CHECK_EQ_INT(blosc2_vlmeta_add(sc, "vl2", (uint8_t *)"x", 1, &vcp), 1);
  CHECK_EQ_INT(blosc2_vlmeta_add(sc, "vl1", (uint8_t *)"x", 1, NULL), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(sc->nvlmetalayers, 2);
  int32_t vnb, vcb, vbs;
  CHECK_EQ_INT(blosc2_cbuffer_sizes(sc->vlmetalayers[0]->content, &vnb, &vcb, &vbs), 0);
  CHECK_EQ_INT(vnb, (int32_t)strlen(vl));
  CHECK_EQ_INT(vcb, sc->vlmetalayers[0]->content_len);
  CHECK_EQ_INT(blosc2_vlmeta_exists(sc, "vl2"), 1);
  CHECK_EQ_INT(blosc2_vlmeta_exists(sc, "zz"), BLOSC2_ERROR_NOT_FOUND);
  CHECK_EQ_INT(blosc2_vlmeta_update(sc, "vl2", (uint8_t *)"updated!", 8, NULL), 1);
  char *names[8];
  CHECK_EQ_INT(blosc2_vlmeta_get_names(sc, names), 2);
  CHECK_EQ_STR(names[0], "vl1");
  CHECK_EQ_STR(names[1], "vl2");
  int64_t tick = sc->change_tick;
  CHECK_EQ_INT(blosc2_vlmeta_add(sc, "vl3", (uint8_t *)"3", 1, NULL), 2);
  CHECK(sc->change_tick > tick);
  CHECK_EQ_INT(blosc2_vlmeta_delete(sc, "vl3"), 2);
  CHECK_EQ_INT(blosc2_vlmeta_delete(sc, "vl3"), BLOSC2_ERROR_NOT_FOUND);

  if (kind >= 2) {
    blosc2_schunk_free(sc);
    sc = blosc2_schunk_open(PATHS[kind]);
    CHECK_NOT_NULL(sc);
  }
  uint8_t *content;
  int32_t len;
  CHECK_EQ_INT(blosc2_meta_get(sc, "m1", &content, &len), 0);
  CHECK_EQ_INT(len, 3);
  CHECK_EQ_INT(content[0], 9);
  CHECK_EQ_INT(content[1], 2);
  free(content);
  CHECK_EQ_INT(blosc2_meta_get(sc, "m2", &content, &len), 1);
  CHECK_EQ_MEM(content, "XYcdef", 6);
  free(content);
  CHECK_EQ_INT(blosc2_vlmeta_get(sc, "vl1", &content, &len), 0);
  CHECK_EQ_INT(len, (int32_t)strlen(vl));
  CHECK_EQ_MEM(content, vl, len);
  free(content);
  CHECK_EQ_INT(blosc2_vlmeta_get(sc, "vl2", &content, &len), 1);
  CHECK_EQ_MEM(content, "updated!", 8);
  free(content);
  CHECK_EQ_INT(blosc2_vlmeta_get(sc, "vl3", &content, &len), BLOSC2_ERROR_NOT_FOUND);
  CHECK(chunk_is(sc, 0, 1));
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath(PATHS[kind]);
}

static void test_vlmeta_limits(void) {
  blosc2_schunk *sc = make(kind);
  CHECK_NOT_NULL(sc);
  char name[16];
  for (int i = 0; i < 16; i++) {
    snprintf(name, sizeof name, "v%d", i);
    CHECK_EQ_INT(blosc2_vlmeta_add(sc, name, (uint8_t *)"x", 1, NULL), i);
  }
  int rc = blosc2_vlmeta_add(sc, "v16", (uint8_t *)"x", 1, NULL);
  if (kind == 0) {
    CHECK_EQ_INT(rc, 16);
  } else {
    CHECK(rc < 0);
    CHECK_EQ_INT(sc->nvlmetalayers, 16);
  }
  for (int i = 0; i < 16; i++) {
    snprintf(name, sizeof name, "m%d", i);
    CHECK_EQ_INT(blosc2_meta_add(sc, name, (uint8_t *)"x", 1), i);
  }
  CHECK(blosc2_meta_add(sc, "m16", (uint8_t *)"x", 1) < 0);
  CHECK_EQ_INT(sc->nmetalayers, 16);
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath(PATHS[kind]);
}

static void test_fill_special_and_slices(void) {
  blosc2_schunk *sc = make(kind);
  CHECK_NOT_NULL(sc);
  /* 3.5 chunks of zeros */
  int64_t nitems = 3 * CHUNKITEMS + CHUNKITEMS / 2;
  CHECK_EQ_INT(blosc2_schunk_fill_special(sc, nitems, BLOSC2_SPECIAL_ZERO, CHUNKBYTES), 4);
  CHECK_EQ_INT(sc->nbytes, nitems * 4);
  CHECK_EQ_INT(sc->chunksize, CHUNKBYTES);
  CHECK(blosc2_schunk_fill_special(sc, nitems, BLOSC2_SPECIAL_ZERO, CHUNKBYTES) < 0);
  uint8_t *c;
  bool nf;
  CHECK_EQ_INT(blosc2_schunk_get_chunk(sc, 3, &c, &nf), 32);
  int32_t nbytes;
  CHECK_EQ_INT(blosc2_cbuffer_sizes(c, &nbytes, NULL, NULL), 0);
  CHECK_EQ_INT(nbytes, CHUNKBYTES / 2);
  if (nf) free(c);
  int32_t *big = malloc(nitems * 4);
  int32_t *back = malloc(nitems * 4);
  for (int64_t i = 0; i < nitems; i++) big[i] = (int32_t)(i * 3);
  CHECK_EQ_INT(blosc2_schunk_set_slice_buffer(sc, 1000, 12000, big), 0);
  CHECK_EQ_INT(blosc2_schunk_get_slice_buffer(sc, 0, nitems, back), 0);
  for (int64_t i = 0; i < nitems; i++) {
    int32_t want = (i >= 1000 && i < 12000) ? big[i - 1000] : 0;
    if (back[i] != want) {
      fprintf(stderr, "item %lld: %d != %d\n", (long long)i, back[i], want);
      CHECK(0);
    }
  }
  CHECK(blosc2_schunk_get_slice_buffer(sc, 0, nitems + 1, back) < 0);
  CHECK(blosc2_schunk_get_slice_buffer(sc, 10, 5, back) < 0);
  CHECK(blosc2_schunk_get_slice_buffer(sc, -1, 5, back) < 0);
  int64_t coords[3] = {1000, 0, 11999};
  int32_t sparse[3];
  CHECK_EQ_INT(blosc2_schunk_get_sparse_buffer(sc, 3, coords, sparse), 0);
  CHECK_EQ_INT(sparse[0], big[0]);
  CHECK_EQ_INT(sparse[1], 0);
  CHECK_EQ_INT(sparse[2], big[10999]);
  int64_t start = 4999, stop = 10001;
  int64_t *idx = NULL;
  CHECK_EQ_INT(blosc2_get_slice_nchunks(sc, &start, &stop, &idx), 3);
  CHECK(idx[0] == 0 && idx[1] == 1 && idx[2] == 2);
  free(idx);
  free(big);
  free(back);
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath(PATHS[kind]);
}

static void test_copies(void) {
  blosc2_schunk *sc = make(kind);
  CHECK_NOT_NULL(sc);
  CHECK_EQ_INT(blosc2_meta_add(sc, "m", (uint8_t *)"meta", 4), 0);
  for (int i = 0; i < 4; i++) {
    fill(buf, i);
    CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, CHUNKBYTES), i + 1);
  }
  CHECK_EQ_INT(blosc2_vlmeta_add(sc, "v", (uint8_t *)"vl", 2, NULL), 0);
  for (int k = 0; k < 4; k++) {
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.compcode = (k % 2) ? BLOSC_LZ4 : BLOSC_BLOSCLZ;
    cp.blocksize = (k % 2) ? 4096 : 0;
    const char *p = k == 2 ? "ct_schunk_copy.b2frame" : k == 3 ? "ct_schunk_copy_dir.b2frame" : NULL;
    blosc2_remove_urlpath(p);
    blosc2_storage st = {.contiguous = (k == 1 || k == 2), .urlpath = (char *)p, .cparams = &cp};
    blosc2_schunk *cc = blosc2_schunk_copy(sc, &st);
    CHECK_NOT_NULL(cc);
    CHECK(k == 0 ? cc->frame == NULL : cc->frame != NULL);
    CHECK_EQ_INT(cc->nchunks, 4);
    CHECK_EQ_INT(cc->nbytes, sc->nbytes);
    CHECK_EQ_INT(cc->compcode, cp.compcode);
    for (int i = 0; i < 4; i++) CHECK(chunk_is(cc, i, i));
    uint8_t *content;
    int32_t len;
    CHECK_EQ_INT(blosc2_meta_get(cc, "m", &content, &len), 0);
    CHECK_EQ_MEM(content, "meta", 4);
    free(content);
    CHECK_EQ_INT(blosc2_vlmeta_get(cc, "v", &content, &len), 0);
    CHECK_EQ_MEM(content, "vl", 2);
    free(content);
    blosc2_schunk_free(cc);
    /* the destination exists now: c-blosc2 refuses to overwrite it */
    if (p != NULL) {
      CHECK(blosc2_schunk_copy(sc, &st) == NULL);
      blosc2_remove_urlpath(p);
    }
  }
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath(PATHS[kind]);
}

static void test_frame_offsets(void) {
  blosc2_schunk *sc = make(kind);
  CHECK_NOT_NULL(sc);
  for (int i = 0; i < 3; i++) {
    fill(buf, i);
    CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, CHUNKBYTES), i + 1);
  }
  int64_t *offs = blosc2_frame_get_offsets(sc);
  if (kind == 0) {
    CHECK(offs == NULL);
  } else {
    CHECK_NOT_NULL(offs);
    int64_t acc = 0;
    for (int i = 0; i < 3; i++) {
      if (kind == 3) {
        CHECK_EQ_INT(offs[i], i);
      } else {
        CHECK_EQ_INT(offs[i], acc);
        uint8_t *c;
        bool nf;
        int cb = blosc2_schunk_get_chunk(sc, i, &c, &nf);
        acc += cb;
        if (nf) free(c);
      }
    }
    free(offs);
  }
  if (kind == 1 || kind == 2) CHECK(blosc2_schunk_frame_len(sc) > sc->cbytes);
  if (kind == 3) CHECK(blosc2_schunk_frame_len(sc) > 0);
  blosc2_cparams *cp;
  blosc2_dparams *dp;
  CHECK_EQ_INT(blosc2_schunk_get_cparams(sc, &cp), 0);
  CHECK_EQ_INT(cp->typesize, 4);
  CHECK(cp->schunk == sc);
  free(cp);
  CHECK_EQ_INT(blosc2_schunk_get_dparams(sc, &dp), 0);
  CHECK(dp->schunk == sc);
  free(dp);
  CHECK_EQ_INT(blosc2_schunk_lock(sc), 0);
  CHECK_EQ_INT(blosc2_schunk_unlock(sc), 0);
  CHECK_EQ_INT(blosc2_schunk_refresh(sc), 0);
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath(PATHS[kind]);
}

int main(void) {
  blosc2_init();
  for (kind = 0; kind < 4; kind++) {
    printf("-- %s\n", KIND_NAMES[kind]);
    fflush(stdout);
    RUN(test_chunk_ops);
    RUN(test_metalayers);
    RUN(test_vlmeta_limits);
    RUN(test_fill_special_and_slices);
    RUN(test_copies);
    RUN(test_frame_offsets);
  }
  blosc2_destroy();
  return harness_summary();
}
