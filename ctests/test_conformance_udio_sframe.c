/* Conformance gap found by running c-blosc2's own test programs against libb2frame (README,
 * "Conformance"): a user-registered I/O backend must serve sparse frames (sframe directories:
 * the index file and every chunk file go through the backend), not only contiguous ones. c-blosc2
 * 3.3.5 appends, reopens with blosc2_schunk_open_udio and decodes both kinds. */
#include <blosc2.h>

#include "harness.h"

#define IO_ID 244
#define NITEMS 5000
#define NCHUNKS 6

typedef struct {
  int open, close, write, read, truncate, size;
} counts_t;

typedef struct {
  void *inner;
  counts_t *counts;
} handle_t;

static void *cb_open(const char *urlpath, const char *mode, void *params) {
  counts_t *c = params;
  void *inner = blosc2_stdio_open(urlpath, mode, NULL);
  if (inner == NULL) return NULL;
  handle_t *h = malloc(sizeof(*h));
  h->inner = inner;
  h->counts = c;
  c->open++;
  return h;
}
static int cb_close(void *stream) {
  handle_t *h = stream;
  h->counts->close++;
  int rc = blosc2_stdio_close(h->inner);
  free(h);
  return rc;
}
static int64_t cb_size(void *stream) {
  handle_t *h = stream;
  h->counts->size++;
  return blosc2_stdio_size(h->inner);
}
static int64_t cb_write(const void *ptr, int64_t size, int64_t nitems, int64_t position, void *stream) {
  handle_t *h = stream;
  h->counts->write++;
  return blosc2_stdio_write(ptr, size, nitems, position, h->inner);
}
static int64_t cb_read(void **ptr, int64_t size, int64_t nitems, int64_t position, void *stream) {
  handle_t *h = stream;
  h->counts->read++;
  return blosc2_stdio_read(ptr, size, nitems, position, h->inner);
}
static int cb_truncate(void *stream, int64_t size) {
  handle_t *h = stream;
  h->counts->truncate++;
  return blosc2_stdio_truncate(h->inner, size);
}
static int cb_destroy(void *params) {
  (void)params;
  return 0;
}

static void roundtrip(bool contiguous, const char *urlpath) {
  counts_t counts = {0};
  blosc2_io io = {.id = IO_ID, .name = "conformance-udio", .params = &counts};
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.clevel = 9;
  cp.nthreads = 2;
  blosc2_storage st = {.contiguous = contiguous, .urlpath = (char *)urlpath, .cparams = &cp, .io = &io};
  static int32_t data[NITEMS], back[NITEMS];
  for (int i = 0; i < NITEMS; i++) data[i] = i * 3;

  blosc2_remove_urlpath(urlpath);
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  CHECK_NOT_NULL(sc);
  for (int k = 0; k < NCHUNKS; k++) CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, data, sizeof(data)), k + 1);
  blosc2_schunk *again = blosc2_schunk_open_udio(urlpath, &io);
  CHECK_NOT_NULL(again);
  CHECK_EQ_INT(again->nchunks, NCHUNKS);
  for (int k = 0; k < NCHUNKS; k++) {
    CHECK_EQ_INT(blosc2_schunk_decompress_chunk(again, k, back, sizeof(back)), (int)sizeof(back));
    CHECK_EQ_MEM(back, data, sizeof(data));
  }
  CHECK(counts.open > 0);
  CHECK(counts.close > 0);
  CHECK(counts.write > 0);
  CHECK(counts.read > 0);
  CHECK(counts.truncate > 0); /* the index/trailer rewrite truncates through the backend */
  blosc2_schunk_free(again);
  blosc2_schunk_free(sc);
  CHECK_OK(blosc2_remove_urlpath(urlpath));
}

static void test_udio_cframe(void) { roundtrip(true, "conformance_udio.b2frame"); }
static void test_udio_sframe(void) { roundtrip(false, "conformance_udio_s.b2frame"); }

int main(void) {
  blosc2_init();
  blosc2_io_cb cb = {.id = IO_ID, .name = "conformance-udio", .is_allocation_necessary = true,
                     .open = cb_open, .close = cb_close, .size = cb_size, .write = cb_write,
                     .read = cb_read, .truncate = cb_truncate, .destroy = cb_destroy};
  if (blosc2_register_io_cb(&cb) < 0) {
    fprintf(stderr, "register_io_cb failed\n");
    return 1;
  }
  RUN(test_udio_cframe);
  RUN(test_udio_sframe);
  blosc2_destroy();
  return harness_summary();
}
