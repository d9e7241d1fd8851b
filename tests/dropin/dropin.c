/* Binary drop-in check: a c-blosc2 program built ONCE against the reference libblosc2.so.9 and run
 * unchanged on libb2frame (LD_LIBRARY_PATH -> a libblosc2.so.9 that is libb2frame).
 *
 *   dropin write DIR   builds every kind of frame in DIR (cframe file, sframe dir, in-memory cframe
 *                      saved with to_buffer, cframe appended at an offset of a file, a raw chunk)
 *                      through a history of appends/inserts/updates/deletes, meta and vlmeta
 *                      edits, and verifies each one after reopening it;
 *   dropin read DIR    opens what another run (possibly the other library) wrote and verifies the
 *                      same logical content.
 * Both modes print `library: <real path of the libblosc2 loaded> (as <name>)` and end with `dropin: ok`.
 * The logical content is a pure function of the chunk index, so writer and reader agree without
 * sharing anything but the files. */
#define _GNU_SOURCE
#include <blosc2.h>
#if defined(_WIN32)
#include <direct.h>
#include <windows.h>
#define mkdir(path, mode) _mkdir(path)
#else
#include <dlfcn.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CHUNK_ITEMS 1000
#define TYPESIZE 4
#define CHUNK_NBYTES (CHUNK_ITEMS * TYPESIZE)
#define SHORT_ITEMS 357
#define OFFSET_PREFIX 123

static int failures = 0;
#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);     \
      fprintf(stderr, __VA_ARGS__);                                       \
      fprintf(stderr, "\n");                                              \
      failures++;                                                         \
      return -1;                                                          \
    }                                                                     \
  } while (0)

/* Final logical chunk sequence after the history in build(): chunk ids of the original appends,
 * -1 = the inserted chunk, -2 = the chunk updated to zeros, 100 = short last chunk. */
static const int FINAL_IDS[] = {0, 1, 2, -1, 3, -2, 5, 6, 8, 9, 100};
#define FINAL_N ((int)(sizeof(FINAL_IDS) / sizeof(FINAL_IDS[0])))
static const char META_NAME[] = "dropin-meta";
static const uint8_t META_V1[] = "meta-v1:0123456789";
static const uint8_t META_V2[] = "META-V2:9876543210"; /* same length: meta_update allows it */

static int32_t item_value(int id, int j) {
  if (id == -1) return 7777777 + j % 3;
  if (id == -2) return 0;
  return id * 100003 + j * (id % 3 + 1);
}
static int chunk_items(int id) { return id == 100 ? SHORT_ITEMS : CHUNK_ITEMS; }
static void fill(int id, int32_t *buf) {
  for (int j = 0; j < chunk_items(id); j++) buf[j] = item_value(id, j);
}
static void vlmeta_big(uint8_t *buf, int n) {
  for (int i = 0; i < n; i++) buf[i] = (uint8_t)((i * 7) ^ (i >> 3));
}

typedef struct {
  const char *file;
  int codec;
  int filter;
  int clevel;
} kind_t;

static int verify(blosc2_schunk *sc, const kind_t *k) {
  CHECK(sc != NULL, "%s: open failed", k->file);
  CHECK(sc->typesize == TYPESIZE, "typesize %d", sc->typesize);
  CHECK(sc->chunksize == CHUNK_NBYTES, "chunksize %d", sc->chunksize);
  CHECK(sc->nchunks == FINAL_N, "nchunks %lld", (long long)sc->nchunks);
  int64_t total = (int64_t)(FINAL_N - 1) * CHUNK_ITEMS + SHORT_ITEMS;
  CHECK(sc->nbytes == total * TYPESIZE, "nbytes %lld", (long long)sc->nbytes);
  CHECK(sc->cbytes > 0 && sc->cbytes < sc->nbytes, "cbytes %lld", (long long)sc->cbytes);
  blosc2_cparams *cp = NULL;
  CHECK(blosc2_schunk_get_cparams(sc, &cp) == 0, "get_cparams");
  CHECK(cp->compcode == k->codec && cp->clevel == k->clevel && cp->typesize == TYPESIZE,
        "cparams %d/%d/%d", cp->compcode, cp->clevel, cp->typesize);
  CHECK(cp->filters[BLOSC2_MAX_FILTERS - 1] == k->filter, "filter %d", cp->filters[BLOSC2_MAX_FILTERS - 1]);
  free(cp);

  int32_t want[CHUNK_ITEMS], got[CHUNK_ITEMS];
  for (int i = 0; i < FINAL_N; i++) {
    int id = FINAL_IDS[i];
    fill(id, want);
    int n = blosc2_schunk_decompress_chunk(sc, i, got, sizeof(got));
    CHECK(n == chunk_items(id) * TYPESIZE, "%s chunk %d: decompress -> %d", k->file, i, n);
    CHECK(memcmp(want, got, (size_t)n) == 0, "%s chunk %d differs", k->file, i);
    uint8_t *chunk = NULL;
    bool needs_free = false;
    int cb = blosc2_schunk_get_chunk(sc, i, &chunk, &needs_free);
    CHECK(cb >= BLOSC2_MAX_OVERHEAD, "get_chunk %d -> %d", i, cb);
    int32_t nb, cbytes, bs;
    CHECK(blosc2_cbuffer_sizes(chunk, &nb, &cbytes, &bs) == 0 && nb == n && cbytes == cb,
          "cbuffer_sizes %d %d", nb, cbytes);
    int32_t items[10];
    int start = chunk_items(id) / 2;
    CHECK(blosc2_getitem_ctx(sc->dctx, chunk, cb, start, 10, items, sizeof(items)) == 40, "getitem");
    CHECK(memcmp(items, want + start, 40) == 0, "getitem %d differs", i);
    if (needs_free) free(chunk);
    uint8_t *lazy = NULL;
    int lb = blosc2_schunk_get_lazychunk(sc, i, &lazy, &needs_free);
    CHECK(lb >= BLOSC2_MAX_OVERHEAD, "get_lazychunk %d -> %d", i, lb);
    if (needs_free) free(lazy);
  }
  /* An item range spanning several chunks, incl. the inserted and zero ones. */
  int64_t a = 2 * CHUNK_ITEMS + 17, b = 6 * CHUNK_ITEMS + 5;
  int32_t *slice = malloc((size_t)(b - a) * TYPESIZE);
  CHECK(blosc2_schunk_get_slice_buffer(sc, a, b, slice) == 0, "get_slice_buffer");
  for (int64_t x = a; x < b; x++) {
    int32_t w = item_value(FINAL_IDS[x / CHUNK_ITEMS], (int)(x % CHUNK_ITEMS));
    if (slice[x - a] != w) {
      free(slice);
      CHECK(0, "slice item %lld: %d != %d", (long long)x, slice[x - a], w);
    }
  }
  free(slice);

  uint8_t *content = NULL;
  int32_t len = 0;
  CHECK(blosc2_meta_exists(sc, META_NAME) == 0, "meta_exists");
  CHECK(blosc2_meta_get(sc, META_NAME, &content, &len) >= 0, "meta_get");
  CHECK(len == sizeof(META_V2) && memcmp(content, META_V2, sizeof(META_V2)) == 0, "meta content");
  free(content);
  CHECK(sc->nvlmetalayers == 2, "nvlmetalayers %d", sc->nvlmetalayers);
  CHECK(blosc2_vlmeta_get(sc, "small", &content, &len) >= 0, "vlmeta_get small");
  CHECK(len == 13 && memcmp(content, "hello vlmeta", 13) == 0, "vlmeta small content");
  free(content);
  CHECK(blosc2_vlmeta_get(sc, "big", &content, &len) >= 0, "vlmeta_get big");
  uint8_t big[5000];
  vlmeta_big(big, sizeof(big));
  CHECK(len == sizeof(big) && memcmp(content, big, sizeof(big)) == 0, "vlmeta big content (len %d)", len);
  free(content);
  CHECK(blosc2_vlmeta_exists(sc, "deleted") < 0, "deleted vlmeta is gone");
  char *names[16];
  CHECK(blosc2_vlmeta_get_names(sc, names) == 2, "vlmeta_get_names");
  return 0;
}

/* Writes the history into a fresh schunk with the given storage. */
static blosc2_schunk *build(blosc2_storage *st, const kind_t *k) {
  blosc2_schunk *sc = blosc2_schunk_new(st);
  if (sc == NULL) return NULL;
  int32_t buf[CHUNK_ITEMS];
  uint8_t chunk[CHUNK_NBYTES + BLOSC2_MAX_OVERHEAD];
  if (blosc2_meta_add(sc, META_NAME, (uint8_t *)META_V1, sizeof(META_V1)) < 0) goto fail;
  for (int id = 0; id < 10; id++) {
    fill(id, buf);
    if (blosc2_schunk_append_buffer(sc, buf, CHUNK_NBYTES) != id + 1) goto fail;
  }
  fill(-1, buf);
  int cb = blosc2_compress_ctx(sc->cctx, buf, CHUNK_NBYTES, chunk, sizeof(chunk));
  if (cb <= 0 || blosc2_schunk_insert_chunk(sc, 3, chunk, true) != 11) goto fail;
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = TYPESIZE;
  cb = blosc2_chunk_zeros(cp, CHUNK_NBYTES, chunk, sizeof(chunk));
  if (cb != BLOSC_EXTENDED_HEADER_LENGTH || blosc2_schunk_update_chunk(sc, 5, chunk, true) != 11) goto fail;
  if (blosc2_schunk_delete_chunk(sc, 8) != 10) goto fail;
  fill(100, buf);
  if (blosc2_schunk_append_buffer(sc, buf, SHORT_ITEMS * TYPESIZE) != 11) goto fail;
  if (blosc2_meta_update(sc, META_NAME, (uint8_t *)META_V2, sizeof(META_V2)) < 0) goto fail;
  uint8_t big[5000];
  vlmeta_big(big, sizeof(big));
  if (blosc2_vlmeta_add(sc, "small", (uint8_t *)"hello vlmeta", 13, NULL) < 0) goto fail;
  if (blosc2_vlmeta_add(sc, "deleted", (uint8_t *)"x", 1, NULL) < 0) goto fail;
  if (blosc2_vlmeta_add(sc, "big", (uint8_t *)"placeholder", 11, NULL) < 0) goto fail;
  if (blosc2_vlmeta_update(sc, "big", big, sizeof(big), NULL) < 0) goto fail;
  if (blosc2_vlmeta_delete(sc, "deleted") != 2) goto fail;
  return sc;
fail:
  fprintf(stderr, "FAIL: building %s\n", k->file);
  failures++;
  blosc2_schunk_free(sc);
  return NULL;
}

static const kind_t KINDS[] = {
    {"cframe.b2frame", BLOSC_LZ4, BLOSC_SHUFFLE, 5},
    {"sframe.b2frame", BLOSC_ZSTD, BLOSC_BITSHUFFLE, 3},
    {"memory.b2frame", BLOSC_BLOSCLZ, BLOSC_SHUFFLE, 9},
    {"offset.bin", BLOSC_ZLIB, BLOSC_NOSHUFFLE, 1},
};

static int write_all(const char *dir) {
  char path[4096];
  for (int i = 0; i < 4; i++) {
    const kind_t *k = &KINDS[i];
    snprintf(path, sizeof(path), "%s/%s", dir, k->file);
    blosc2_remove_urlpath(path);
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = TYPESIZE;
    cp.compcode = (uint8_t)k->codec;
    cp.clevel = (uint8_t)k->clevel;
    cp.filters[BLOSC2_MAX_FILTERS - 1] = (uint8_t)k->filter;
    cp.nthreads = 2;
    blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
    blosc2_storage st = {.contiguous = i != 1, .urlpath = (i <= 1) ? path : NULL, .cparams = &cp, .dparams = &dp};
    blosc2_schunk *sc = build(&st, k);
    if (sc == NULL) return -1;
    if (verify(sc, k) < 0) return -1;
    if (i == 2) { /* in-memory cframe -> to_buffer -> file; from_buffer both ways */
      uint8_t *cframe = NULL;
      bool needs_free = false;
      int64_t len = blosc2_schunk_to_buffer(sc, &cframe, &needs_free);
      CHECK(len > 0, "to_buffer -> %lld", (long long)len);
      FILE *f = fopen(path, "wb");
      CHECK(f && fwrite(cframe, 1, (size_t)len, f) == (size_t)len && fclose(f) == 0, "write %s", path);
      blosc2_schunk *copy = blosc2_schunk_from_buffer(cframe, len, true);
      if (needs_free) free(cframe);
      if (verify(copy, k) < 0) return -1;
      blosc2_schunk_free(copy);
    }
    if (i == 3) { /* a cframe appended after OFFSET_PREFIX bytes of something else */
      FILE *f = fopen(path, "wb");
      for (int j = 0; j < OFFSET_PREFIX; j++) fputc('#', f);
      fclose(f);
      int64_t off = blosc2_schunk_append_file(sc, path);
      CHECK(off == OFFSET_PREFIX, "append_file -> %lld", (long long)off);
    }
    blosc2_schunk_free(sc);
  }
  /* A raw chunk with a 2-byte typesize and a delta+shuffle pipeline, for the chunk API. */
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 2;
  cp.compcode = BLOSC_LZ4HC;
  cp.filters[BLOSC2_MAX_FILTERS - 2] = BLOSC_DELTA;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int16_t src[30001];
  for (int j = 0; j < 30001; j++) src[j] = (int16_t)(j / 5);
  uint8_t dst[sizeof(src) + BLOSC2_MAX_OVERHEAD];
  int cb = blosc2_compress_ctx(cctx, src, sizeof(src), dst, sizeof(dst));
  blosc2_free_ctx(cctx);
  CHECK(cb > 0 && cb < (int)sizeof(src) / 4, "compress_ctx -> %d", cb);
  snprintf(path, sizeof(path), "%s/chunk.bin", dir);
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(dst, 1, (size_t)cb, f) == (size_t)cb && fclose(f) == 0, "write chunk");
  return 0;
}

static int read_all(const char *dir) {
  char path[4096];
  for (int i = 0; i < 4; i++) {
    const kind_t *k = &KINDS[i];
    snprintf(path, sizeof(path), "%s/%s", dir, k->file);
    blosc2_schunk *sc = (i == 3) ? blosc2_schunk_open_offset(path, OFFSET_PREFIX) : blosc2_schunk_open(path);
    if (verify(sc, k) < 0) return -1;
    blosc2_schunk_free(sc);
    if (i == 2) { /* and from a buffer, without copying */
      FILE *f = fopen(path, "rb");
      CHECK(f != NULL, "open %s", path);
      fseek(f, 0, SEEK_END);
      long len = ftell(f);
      fseek(f, 0, SEEK_SET);
      uint8_t *buf = malloc((size_t)len);
      CHECK(fread(buf, 1, (size_t)len, f) == (size_t)len, "read");
      fclose(f);
      sc = blosc2_schunk_from_buffer(buf, len, false);
      int rc = verify(sc, k);
      blosc2_schunk_free(sc);
      free(buf);
      if (rc < 0) return -1;
    }
  }
  snprintf(path, sizeof(path), "%s/chunk.bin", dir);
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL, "open chunk");
  uint8_t chunk[70000];
  int cb = (int)fread(chunk, 1, sizeof(chunk), f);
  fclose(f);
  int32_t nbytes, cbytes, blocksize;
  CHECK(blosc2_cbuffer_sizes(chunk, &nbytes, &cbytes, &blocksize) == 0 && cbytes == cb && nbytes == 60002,
        "chunk sizes %d %d", nbytes, cbytes);
  int16_t out[30001], items[50];
  CHECK(blosc2_decompress(chunk, cb, out, sizeof(out)) == 60002, "decompress");
  for (int j = 0; j < 30001; j++) CHECK(out[j] == (int16_t)(j / 5), "chunk item %d", j);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  int n = blosc2_getitem_ctx(dctx, chunk, cb, 29960, 41, items, sizeof(items));
  blosc2_free_ctx(dctx);
  CHECK(n == 82, "getitem -> %d", n);
  for (int j = 0; j < 41; j++) CHECK(items[j] == (int16_t)((29960 + j) / 5), "getitem item %d", j);
  CHECK(blosc2_decompress(chunk, cb, out, 100) < 0, "a too small destination is an error");
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "write") && strcmp(argv[1], "read"))) {
    fprintf(stderr, "usage: %s write|read DIR\n", argv[0]);
    return 2;
  }
#if defined(_WIN32)
  HMODULE mod = NULL;
  char name[MAX_PATH];
  if (GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                         (LPCSTR)(void *)&blosc2_schunk_open, &mod) &&
      GetModuleFileNameA(mod, name, sizeof(name)) > 0) {
    printf("library: %s (as %s)\n", name, name);
  }
#else
  Dl_info info;
  if (dladdr((void *)&blosc2_schunk_open, &info) && info.dli_fname) {
    char *real = realpath(info.dli_fname, NULL); /* the file behind a libblosc2.so.9 link */
    printf("library: %s (as %s)\n", real ? real : info.dli_fname, info.dli_fname);
    free(real);
  }
#endif
  blosc2_init();
  mkdir(argv[2], 0755);
  int rc = strcmp(argv[1], "write") == 0 ? write_all(argv[2]) : read_all(argv[2]);
  blosc2_destroy();
  if (rc < 0 || failures) {
    printf("dropin %s %s: FAILED\n", argv[1], argv[2]);
    return 1;
  }
  printf("dropin %s %s: ok\n", argv[1], argv[2]);
  return 0;
}
