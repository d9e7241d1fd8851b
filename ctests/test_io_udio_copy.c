/* blosc2_schunk_copy into a storage whose io names a user backend, and blosc2_schunk_refresh of a
 * second handle on a backend sframe: everything must go through the backend's callbacks, as in
 * c-blosc2 3.3.5. The backend here stores the file the library calls P on disk as "P.mem"
 * (through the stdio backend), so a bypass with plain file I/O shows up as a file P on disk, and
 * a read that bypasses it finds nothing. It also counts the open modes. */
#include <blosc2.h>
#include <sys/stat.h>

#include "harness.h"
#include "udio_forward.h"

#define IO_ID 217
#define NITEMS 4000

typedef struct {
  int wb, rb, rbplus, other;
  udio_calls_t calls;
} counts_t;

/* Counts the opens that return a stream (each must be closed exactly once); a failed "rb"
   open (a file that does not exist yet, e.g. the undo copy of a new chunk file) is no stream. */
static void *cb_open(const char *urlpath, const char *mode, void *params) {
  counts_t *c = params;
  char path[4096];
  snprintf(path, sizeof(path), "%s.mem", urlpath);
  void *inner = blosc2_stdio_open(path, mode, NULL);
  if (inner == NULL) return NULL;
  if (strcmp(mode, "wb") == 0) c->wb++;
  else if (strcmp(mode, "rb") == 0) c->rb++;
  else if (strcmp(mode, "rb+") == 0) c->rbplus++;
  else c->other++;
  return udio_wrap(inner, &c->calls);
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static int32_t data[NITEMS], back[NITEMS];

static void fill(int tag) {
  for (int i = 0; i < NITEMS; i++) data[i] = tag * 100003 + i / 7;
}

/* A plain in-memory super-chunk with `n` chunks, a metalayer and a vlmetalayer. */
static blosc2_schunk *source(int n) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_storage st = {.contiguous = false, .cparams = &cp};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  if (sc == NULL) return NULL;
  uint8_t meta[3] = {0x93, 1, 2};
  if (blosc2_meta_add(sc, "m", meta, 3) < 0) return NULL;
  for (int k = 0; k < n; k++) {
    fill(k);
    if (blosc2_schunk_append_buffer(sc, data, sizeof(data)) != k + 1) return NULL;
  }
  uint8_t vl[4] = {'a', 't', 't', 'r'};
  if (blosc2_vlmeta_add(sc, "v", vl, 4, NULL) < 0) return NULL;
  return sc;
}

/* Checks that `sc` holds the chunks and metadata of source(n). */
static int same_content(blosc2_schunk *sc, int n) {
  if (sc->nchunks != n) return 0;
  for (int k = 0; k < n; k++) {
    fill(k);
    if (blosc2_schunk_decompress_chunk(sc, k, back, sizeof(back)) != (int)sizeof(back)) return 0;
    if (memcmp(back, data, sizeof(data)) != 0) return 0;
  }
  uint8_t *content;
  int32_t len;
  if (blosc2_meta_get(sc, "m", &content, &len) < 0 || len != 3 || content[2] != 2) return 0;
  free(content);
  if (blosc2_vlmeta_get(sc, "v", &content, &len) < 0 || len != 4 || memcmp(content, "attr", 4) != 0) return 0;
  free(content);
  return 1;
}

static void copy_into(bool contiguous, const char *urlpath, const char *index_mem) {
  counts_t counts = {0};
  blosc2_io io = {.id = IO_ID, .name = "udio-copy", .params = &counts};
  blosc2_remove_urlpath(urlpath);
  remove(index_mem);
  blosc2_schunk *src = source(3);
  CHECK_NOT_NULL(src);
  blosc2_storage st = {.contiguous = contiguous, .urlpath = (char *)urlpath, .io = &io};
  blosc2_schunk *copy = blosc2_schunk_copy(src, &st);
  CHECK_NOT_NULL(copy);
  CHECK(same_content(copy, 3));
  CHECK(counts.wb > 0);
  CHECK(counts.calls.write > 0);
  CHECK_EQ_INT(counts.calls.close, counts.wb + counts.rb + counts.rbplus + counts.other);
  CHECK(exists(index_mem));
  blosc2_schunk_free(copy);
  blosc2_schunk_free(src);
  /* Reopened through the backend. */
  blosc2_schunk *again = blosc2_schunk_open_udio(urlpath, &io);
  CHECK_NOT_NULL(again);
  CHECK(same_content(again, 3));
  blosc2_schunk_free(again);
}

static void test_copy_into_backend_cframe(void) {
  copy_into(true, "copy_udio.b2frame", "copy_udio.b2frame.mem");
  CHECK(!exists("copy_udio.b2frame")); /* nothing written past the backend */
  remove("copy_udio.b2frame.mem");
}

static void test_copy_into_backend_sframe(void) {
  copy_into(false, "copy_udio_s.b2frame", "copy_udio_s.b2frame/chunks.b2frame.mem");
  CHECK(!exists("copy_udio_s.b2frame/chunks.b2frame"));
  CHECK(!exists("copy_udio_s.b2frame/00000000.chunk"));
  CHECK(exists("copy_udio_s.b2frame/00000002.chunk.mem"));
  blosc2_remove_urlpath("copy_udio_s.b2frame");
}

static void test_refresh_backend_sframe(void) {
  counts_t counts = {0};
  blosc2_io io = {.id = IO_ID, .name = "udio-copy", .params = &counts};
  const char *urlpath = "refresh_udio_s.b2frame";
  blosc2_remove_urlpath(urlpath);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_storage st = {.contiguous = false, .urlpath = (char *)urlpath, .cparams = &cp, .io = &io};
  blosc2_schunk *w = blosc2_schunk_new(&st);
  CHECK_NOT_NULL(w);
  fill(0);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(w, data, sizeof(data)), 1);
  blosc2_schunk *r = blosc2_schunk_open_udio(urlpath, &io);
  CHECK_NOT_NULL(r);
  CHECK_EQ_INT(blosc2_schunk_refresh(r), 0);
  fill(1);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(w, data, sizeof(data)), 2);
  int reads = counts.rb;
  CHECK_EQ_INT(blosc2_schunk_refresh(r), 1);
  CHECK(counts.rb > reads); /* the index was read through the backend */
  CHECK_EQ_INT(r->nchunks, 2);
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(r, 1, back, sizeof(back)), (int)sizeof(back));
  CHECK_EQ_MEM(back, data, sizeof(data));
  CHECK(!exists("refresh_udio_s.b2frame/chunks.b2frame"));
  blosc2_schunk_free(r);
  blosc2_schunk_free(w);
  blosc2_remove_urlpath(urlpath);
}

int main(void) {
  blosc2_init();
  blosc2_io_cb cb = udio_forward_cb(IO_ID, "udio-copy", cb_open);
  if (blosc2_register_io_cb(&cb) < 0) {
    fprintf(stderr, "register_io_cb failed\n");
    return 1;
  }
  RUN(test_copy_into_backend_cframe);
  RUN(test_copy_into_backend_sframe);
  RUN(test_refresh_backend_sframe);
  blosc2_destroy();
  return harness_summary();
}
