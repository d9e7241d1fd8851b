/* Frames through I/O backends: a user-registered backend that counts its calls (wrapping the
 * stdio one) writes and reopens a cframe (also at an offset inside a larger file), the mmap
 * backend writes frames byte-identical to the filesystem backend's in every mode c-blosc2
 * supports ("w+", "r", "c", "r+", also with a 1-byte initial mapping that forces remaps), and
 * a failed open destroys the backend params as c-blosc2 does. */
#include "harness.h"

#include <blosc2.h>
#include <blosc2/blosc2-stdio.h>

#include "udio_forward.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_ITEMS 5000
#define NCHUNKS 10
#define COUNTING_ID 244

typedef struct {
  int open, destroy;
  char last_mode[8];
  udio_calls_t calls;
} counters;

static void *c_open(const char *urlpath, const char *mode, void *params) {
  counters *c = params;
  c->open++;
  snprintf(c->last_mode, sizeof(c->last_mode), "%s", mode);
  void *inner = blosc2_stdio_open(urlpath, mode, NULL);
  if (inner == NULL) return NULL;
  return udio_wrap(inner, &c->calls);
}
static int c_destroy(void *params) {
  ((counters *)params)->destroy++;
  return 0;
}

static void register_counting(void) {
  blosc2_io_cb cb = udio_forward_cb(COUNTING_ID, "counting", c_open);
  cb.destroy = c_destroy; /* counts the destroys too */
  blosc2_register_io_cb(&cb);
}

static uint8_t *read_file(const char *path, long *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  *len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc((size_t)*len + 1);
  if (fread(buf, 1, (size_t)*len, f) != (size_t)*len) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}

static int files_identical(const char *a, const char *b) {
  long la = -1, lb = -2;
  uint8_t *ba = read_file(a, &la);
  uint8_t *bb = read_file(b, &lb);
  int same = ba != NULL && bb != NULL && la == lb && memcmp(ba, bb, (size_t)la) == 0;
  free(ba);
  free(bb);
  return same;
}

static blosc2_cparams cparams4(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.clevel = 9;
  return cp;
}

/* Writes the reference content (NCHUNKS chunks, one deleted, one vlmeta) through `io`. */
static int write_frame(const char *path, blosc2_io *io) {
  blosc2_cparams cp = cparams4();
  blosc2_storage st = {.contiguous = true, .urlpath = (char *)path, .cparams = &cp, .io = io};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  if (sc == NULL) return -1;
  int32_t buf[CHUNK_ITEMS];
  for (int c = 0; c < NCHUNKS; c++) {
    for (int i = 0; i < CHUNK_ITEMS; i++) buf[i] = c * CHUNK_ITEMS + i;
    if (blosc2_schunk_append_buffer(sc, buf, sizeof(buf)) != c + 1) return -2;
  }
  if (blosc2_schunk_delete_chunk(sc, 3) != NCHUNKS - 1) return -3;
  uint8_t meta[5] = {1, 2, 3, 4, 5};
  if (blosc2_vlmeta_add(sc, "tag", meta, 5, NULL) < 0) return -4;
  return blosc2_schunk_free(sc);
}

/* Checks the content written by write_frame. */
static int check_frame(blosc2_schunk *sc) {
  if (sc == NULL || sc->nchunks != NCHUNKS - 1) return 0;
  int32_t buf[CHUNK_ITEMS];
  for (int c = 0; c < NCHUNKS - 1; c++) {
    int orig = c < 3 ? c : c + 1;
    if (blosc2_schunk_decompress_chunk(sc, c, buf, sizeof(buf)) != (int)sizeof(buf)) return 0;
    for (int i = 0; i < CHUNK_ITEMS; i++)
      if (buf[i] != orig * CHUNK_ITEMS + i) return 0;
  }
  uint8_t *content = NULL;
  int32_t len = 0;
  if (blosc2_vlmeta_get(sc, "tag", &content, &len) < 0 || len != 5 || content[4] != 5) return 0;
  free(content);
  return 1;
}

static void test_counting_backend(void) {
  const char *plain = "udio_plain.b2frame", *counted = "udio_counted.b2frame";
  blosc2_remove_urlpath(plain);
  blosc2_remove_urlpath(counted);
  CHECK_EQ_INT(write_frame(plain, NULL), 0);

  counters c = {0};
  blosc2_io io = {.id = COUNTING_ID, .name = "counting", .params = &c};
  CHECK_EQ_INT(write_frame(counted, &io), 0);
  CHECK(c.open > 0 && c.open == c.calls.close); /* every stream is closed */
  CHECK(c.calls.write > 0);
  CHECK(c.calls.truncate > 0);
  CHECK_EQ_INT(c.destroy, 1); /* by blosc2_schunk_free */
  CHECK(files_identical(plain, counted));

  /* The frame exists now: creating it again fails, as in c-blosc2. */
  blosc2_cparams cp = cparams4();
  blosc2_storage st = {.contiguous = true, .urlpath = (char *)counted, .cparams = &cp, .io = &io};
  CHECK(blosc2_schunk_new(&st) == NULL);

  counters r = {0};
  io.params = &r;
  blosc2_schunk *sc = blosc2_schunk_open_udio(counted, &io);
  CHECK_NOT_NULL(sc);
  CHECK(sc->storage->io->id == COUNTING_ID);
  CHECK(sc->storage->io->params == &r);
  CHECK(check_frame(sc));
  CHECK(r.calls.read > 0);
  CHECK_EQ_INT(r.calls.write, 0); /* reading writes nothing */
  CHECK_EQ_STR(r.last_mode, "rb");
  CHECK_EQ_INT(r.open, r.calls.close);
  CHECK_EQ_INT(blosc2_schunk_free(sc), 0);
  CHECK_EQ_INT(r.destroy, 1);

  /* Unknown backend id: no schunk. */
  blosc2_io unknown = {.id = 250, .name = "none", .params = NULL};
  CHECK(blosc2_schunk_open_udio(counted, &unknown) == NULL);
  /* Missing file: NULL, and the backend params are destroyed. */
  counters m = {0};
  io.params = &m;
  CHECK(blosc2_schunk_open_udio("udio_missing.b2frame", &io) == NULL);
  CHECK_EQ_INT(m.destroy, 1);
  CHECK(blosc2_schunk_open_udio(NULL, &io) == NULL);

  blosc2_remove_urlpath(plain);
  blosc2_remove_urlpath(counted);
}

static void test_open_offset_udio(void) {
  const char *src = "udio_off_src.b2frame", *big = "udio_off_big.bin";
  blosc2_remove_urlpath(src);
  blosc2_remove_urlpath(big);
  CHECK_EQ_INT(write_frame(src, NULL), 0);
  long len = 0;
  uint8_t *frame = read_file(src, &len);
  CHECK_NOT_NULL(frame);
  FILE *f = fopen(big, "wb");
  CHECK_NOT_NULL(f);
  uint8_t prefix[100];
  memset(prefix, 0xEE, sizeof(prefix));
  CHECK_EQ_INT(fwrite(prefix, 1, 100, f), 100);
  CHECK_EQ_INT(fwrite(frame, 1, (size_t)len, f), len);
  fclose(f);
  free(frame);

  counters c = {0};
  blosc2_io io = {.id = COUNTING_ID, .name = "counting", .params = &c};
  blosc2_schunk *sc = blosc2_schunk_open_offset_udio(big, 100, &io);
  CHECK_NOT_NULL(sc);
  CHECK(check_frame(sc));
  CHECK(c.calls.read > 0);
  CHECK_EQ_INT(blosc2_schunk_free(sc), 0);
  CHECK(blosc2_schunk_open_offset_udio(big, 1, &io) == NULL);
  CHECK(blosc2_schunk_open_offset_udio(big, -1, &io) == NULL);
  blosc2_remove_urlpath(src);
  blosc2_remove_urlpath(big);
}

static void mmap_roundtrip(size_t initial) {
  const char *def = "udio_mm_default.b2frame", *mm = "udio_mm_mmap.b2frame";
  blosc2_remove_urlpath(def);
  blosc2_remove_urlpath(mm);
  CHECK_EQ_INT(write_frame(def, NULL), 0);

  blosc2_stdio_mmap p = BLOSC2_STDIO_MMAP_DEFAULTS;
  p.mode = "w+";
  p.initial_mapping_size = initial;
  blosc2_io io = {.id = BLOSC2_IO_FILESYSTEM_MMAP, .name = "filesystem_mmap", .params = &p};
  CHECK_EQ_INT(write_frame(mm, &io), 0);
  CHECK(p.addr == NULL); /* destroyed by blosc2_schunk_free */
  CHECK(files_identical(def, mm));

  for (int rep = 0; rep < 2; rep++) {
    p = BLOSC2_STDIO_MMAP_DEFAULTS;
    p.mode = "r";
    p.initial_mapping_size = initial;
    io.params = &p;
    blosc2_schunk *sc = blosc2_schunk_open_udio(mm, &io);
    CHECK(check_frame(sc));
#ifndef B2FRAME_VS_REFERENCE
    /* A read-only mapping refuses mutations instead of faulting (c-blosc2 faults). */
    int32_t extra[4] = {1, 2, 3, 4};
    CHECK(blosc2_schunk_append_buffer(sc, extra, sizeof(extra)) < 0);
#endif
    CHECK_EQ_INT(blosc2_schunk_free(sc), 0);
  }
  CHECK(files_identical(def, mm));

  /* "c": appends live in memory only. On Windows (as in c-blosc2 there) the copy-on-write view
   * maps the file's size and cannot grow: the append fails and the frame stays readable. */
  p = BLOSC2_STDIO_MMAP_DEFAULTS;
  p.mode = "c";
  p.initial_mapping_size = initial;
  io.params = &p;
  blosc2_schunk *sc = blosc2_schunk_open_udio(mm, &io);
  CHECK_NOT_NULL(sc);
  int32_t extra[CHUNK_ITEMS];
  for (int i = 0; i < CHUNK_ITEMS; i++) extra[i] = -i;
#if defined(_WIN32)
  CHECK(blosc2_schunk_append_buffer(sc, extra, sizeof(extra)) < 0);
  CHECK(check_frame(sc));
#else
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, extra, sizeof(extra)), NCHUNKS);
  int32_t back[CHUNK_ITEMS];
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, NCHUNKS - 1, back, sizeof(back)), sizeof(back));
  CHECK_EQ_MEM(back, extra, sizeof(back));
#endif
  CHECK_EQ_INT(blosc2_schunk_free(sc), 0);
  CHECK(files_identical(def, mm));

  /* "r+": appends reach the file, identically to the filesystem backend. */
  p = BLOSC2_STDIO_MMAP_DEFAULTS;
  p.mode = "r+";
  p.initial_mapping_size = initial;
  io.params = &p;
  sc = blosc2_schunk_open_udio(mm, &io);
  CHECK_NOT_NULL(sc);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, extra, sizeof(extra)), NCHUNKS);
  CHECK_EQ_INT(blosc2_schunk_free(sc), 0);
  sc = blosc2_schunk_open(def);
  CHECK_NOT_NULL(sc);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, extra, sizeof(extra)), NCHUNKS);
  CHECK_EQ_INT(blosc2_schunk_free(sc), 0);
  CHECK(files_identical(def, mm));

#ifndef B2FRAME_VS_REFERENCE
  /* mmap cannot hold sframes (c-blosc2 3.3.5 sometimes creates one anyway). */
  p = BLOSC2_STDIO_MMAP_DEFAULTS;
  p.mode = "w+";
  io.params = &p;
  blosc2_cparams cp = cparams4();
  blosc2_storage st = {.contiguous = false, .urlpath = "udio_mm_sparse.b2frame", .cparams = &cp,
                       .io = &io};
  CHECK(blosc2_schunk_new(&st) == NULL);
  blosc2_remove_urlpath("udio_mm_sparse.b2frame");
#endif

  blosc2_remove_urlpath(def);
  blosc2_remove_urlpath(mm);
}

static void test_mmap_default_mapping(void) { mmap_roundtrip((size_t)1 << 30); }
static void test_mmap_remapping(void) { mmap_roundtrip(1); }

int main(void) {
  blosc2_init();
  register_counting();
  RUN(test_counting_backend);
  RUN(test_open_offset_udio);
  RUN(test_mmap_default_mapping);
  RUN(test_mmap_remapping);
  blosc2_destroy();
  return harness_summary();
}
