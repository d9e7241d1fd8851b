/* Conformance gap found by running c-blosc2's own test programs against libb2frame (README,
 * "Conformance"): a user-registered I/O backend must serve sparse frames (sframe directories:
 * the index file and every chunk file go through the backend), not only contiguous ones. c-blosc2
 * 3.3.5 appends, reopens with blosc2_schunk_open_udio and decodes both kinds. */
#include <blosc2.h>

#include "harness.h"
#include "udio_forward.h"

#define IO_ID 244
#define NITEMS 5000
#define NCHUNKS 6

typedef struct {
  int open;
  udio_calls_t calls;
} counts_t;

static void *cb_open(const char *urlpath, const char *mode, void *params) {
  counts_t *c = params;
  void *inner = blosc2_stdio_open(urlpath, mode, NULL);
  if (inner == NULL) return NULL;
  c->open++;
  return udio_wrap(inner, &c->calls);
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
  CHECK(counts.calls.close > 0);
  CHECK(counts.calls.write > 0);
  CHECK(counts.calls.read > 0);
  CHECK(counts.calls.truncate > 0); /* the index/trailer rewrite truncates through the backend */
  blosc2_schunk_free(again);
  blosc2_schunk_free(sc);
  CHECK_OK(blosc2_remove_urlpath(urlpath));
}

static void test_udio_cframe(void) { roundtrip(true, "conformance_udio.b2frame"); }
static void test_udio_sframe(void) { roundtrip(false, "conformance_udio_s.b2frame"); }

int main(void) {
  blosc2_init();
  blosc2_io_cb cb = udio_forward_cb(IO_ID, "conformance-udio", cb_open);
  if (blosc2_register_io_cb(&cb) < 0) {
    fprintf(stderr, "register_io_cb failed\n");
    return 1;
  }
  RUN(test_udio_cframe);
  RUN(test_udio_sframe);
  blosc2_destroy();
  return harness_summary();
}
