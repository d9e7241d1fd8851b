/* ctests/udio_forward.h: a user I/O backend for tests that forwards every call to the stdio
 * backend and counts the calls, so a test can tell that the library went through the backend.
 *
 * A test keeps a `udio_calls_t` (usually inside its own counts struct, passed as the io params),
 * writes its own open callback (where it may rename the path or count modes) that ends with
 * `return udio_wrap(inner, &counts->calls);`, and registers `udio_forward_cb(id, name, open)`.
 */
#ifndef B2FRAME_CTEST_UDIO_FORWARD_H
#define B2FRAME_CTEST_UDIO_FORWARD_H

#include <blosc2.h>
#include <stdlib.h>

typedef struct {
  int close, write, read, truncate, size;
} udio_calls_t;

typedef struct {
  void *inner; /* the stdio backend's stream */
  udio_calls_t *calls;
} udio_handle_t;

/* The stream handed to the library for an opened stdio stream `inner`. */
static void *udio_wrap(void *inner, udio_calls_t *calls) {
  udio_handle_t *h = malloc(sizeof(*h));
  h->inner = inner;
  h->calls = calls;
  return h;
}
static int udio_close(void *stream) {
  udio_handle_t *h = stream;
  h->calls->close++;
  int rc = blosc2_stdio_close(h->inner);
  free(h);
  return rc;
}
static int64_t udio_size(void *stream) {
  udio_handle_t *h = stream;
  h->calls->size++;
  return blosc2_stdio_size(h->inner);
}
static int64_t udio_write(const void *ptr, int64_t size, int64_t nitems, int64_t position, void *stream) {
  udio_handle_t *h = stream;
  h->calls->write++;
  return blosc2_stdio_write(ptr, size, nitems, position, h->inner);
}
static int64_t udio_read(void **ptr, int64_t size, int64_t nitems, int64_t position, void *stream) {
  udio_handle_t *h = stream;
  h->calls->read++;
  return blosc2_stdio_read(ptr, size, nitems, position, h->inner);
}
static int udio_truncate(void *stream, int64_t size) {
  udio_handle_t *h = stream;
  h->calls->truncate++;
  return blosc2_stdio_truncate(h->inner, size);
}
static int udio_destroy(void *params) {
  (void)params;
  return 0;
}

/* The backend's callbacks, with the test's own `open`. */
static blosc2_io_cb udio_forward_cb(uint8_t id, char *name, blosc2_open_cb open) {
  blosc2_io_cb cb = {.id = id, .name = name, .is_allocation_necessary = true,
                     .open = open, .close = udio_close, .size = udio_size, .write = udio_write,
                     .read = udio_read, .truncate = udio_truncate, .destroy = udio_destroy};
  return cb;
}

#endif
