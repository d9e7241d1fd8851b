/* Concurrent readers on ONE blosc2_schunk through the C API (c-blosc2 cannot, its issue #147):
 * READERS pthreads calling decompress_chunk, get_chunk, get_lazychunk, get_slice_buffer,
 * frame_get_offsets, vlmeta_get and get_cparams at the same time on every storage kind, every
 * byte checked; then readers while a writer thread updates and appends chunks (a reader sees the
 * old or the new content of a chunk, never anything else), on the same handle, with and without
 * `.b2lock` locking; then, with locking, readers each on a handle of its own while the writer
 * commits through another (each read must see a committed state: the chunks the writer has
 * acknowledged, whole, at a version it stored). Every phase runs with the super-chunk's dparams
 * nthreads 1 and 2. Borrowed chunks (needs_free false) are only valid until the next mutation, so
 * with a writer only copies are looked into. scripts/tsan.sh also runs this program under
 * ThreadSanitizer (with fewer operations: -DOPS). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "blosc2.h"
#include "harness.h"

#ifndef OPS
#define OPS 1500
#endif
enum { ITEMS = 4096, CHUNKBYTES = ITEMS * 4, NCHUNKS = 16, READERS = 8, MAXCHUNKS = 64 };

static const char *KIND_NAMES[4] = {"plain", "memory", "file", "sparse"};
static const char *PATHS[4] = {NULL, NULL, "ct_threads.b2frame", "ct_threads_dir.b2frame"};
/* The super-chunk's dparams nthreads of the phase being run. */
static int dthreads = 1;

static uint32_t item(int i, int v, int j) { return ((uint32_t)i << 20) ^ ((uint32_t)v << 12) ^ (uint32_t)(j / 8); }
static int version_of(int i, uint32_t x) { return (int)(((x ^ ((uint32_t)i << 20)) >> 12) & 0xff); }

static void fill(uint32_t *b, int i, int v) {
  for (int j = 0; j < ITEMS; j++) b[j] = item(i, v, j);
}

/* Whole-chunk content of chunk i at some version <= newest. */
static int chunk_ok(const uint32_t *b, int i, int newest) {
  int v = version_of(i, b[0]);
  if (v > newest) return 0;
  for (int j = 0; j < ITEMS; j++)
    if (b[j] != item(i, v, j)) return 0;
  return 1;
}

static uint32_t next(uint32_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s;
}

struct shared {
  blosc2_schunk *sc;
  int kind;
  uint8_t *chunks[NCHUNKS]; /* snapshot of the stored chunks (readers-only test) */
  int chunklen[NCHUNKS];
  int64_t offsets[NCHUNKS];
  atomic_int failures;
  atomic_int nchunks;  /* chunks readers may touch */
  atomic_int version;  /* newest chunk version the writer may have stored */
  atomic_int done;
  atomic_int writing;  /* the writer is about to take the exclusive lock (own handles) */
  int own_handles;     /* readers open handles of their own (files, with locking) */
};

#define FAIL_IF(cond)                                                              \
  do {                                                                             \
    if (cond) {                                                                    \
      fprintf(stderr, "%s:%d: thread check failed: %s\n", __FILE__, __LINE__, #cond); \
      atomic_fetch_add(&sh->failures, 1);                                          \
      goto out;                                                                    \
    }                                                                              \
  } while (0)

static blosc2_schunk *make(int k) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.nthreads = 1;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = (int16_t)dthreads;
  blosc2_storage st = {.contiguous = (k == 1 || k == 2), .urlpath = (char *)PATHS[k],
                       .cparams = &cp, .dparams = &dp};
  blosc2_remove_urlpath(PATHS[k]);
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  if (sc == NULL) return NULL;
  uint32_t *b = malloc(CHUNKBYTES);
  for (int i = 0; i < NCHUNKS; i++) {
    fill(b, i, 0);
    if (blosc2_schunk_append_buffer(sc, b, CHUNKBYTES) != i + 1) sc = NULL;
    if (sc == NULL) break;
  }
  free(b);
  if (sc != NULL && blosc2_vlmeta_add(sc, "vl", (uint8_t *)"v0", 2, NULL) < 0) return NULL;
  return sc;
}

static void *reader(void *arg) {
  struct shared *sh = arg;
  uint32_t seed = (uint32_t)(uintptr_t)pthread_self() | 1u;
  uint32_t *out = malloc(CHUNKBYTES * 3);
  for (int op = 0; op < OPS; op++) {
    int i = (int)(next(&seed) % NCHUNKS);
    switch (next(&seed) % 6) {
      case 0: {
        FAIL_IF(blosc2_schunk_decompress_chunk(sh->sc, i, out, CHUNKBYTES) != CHUNKBYTES);
        for (int j = 0; j < ITEMS; j++) FAIL_IF(out[j] != item(i, 0, j));
        break;
      }
      case 1:
      case 2: {
        uint8_t *c;
        bool nf;
        int n = (op & 1) ? blosc2_schunk_get_lazychunk(sh->sc, i, &c, &nf)
                         : blosc2_schunk_get_chunk(sh->sc, i, &c, &nf);
        if (n > BLOSC_EXTENDED_HEADER_LENGTH && (c[BLOSC2_CHUNK_BLOSC2_FLAGS] & 0x08)) {
          /* A lazy chunk (frames on storage): header, block starts and trailer; its blocks are
             read through a context bound to the super-chunk. */
          blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
          dp.schunk = sh->sc;
          blosc2_context *dctx = blosc2_create_dctx(dp);
          int got = blosc2_decompress_ctx(dctx, c, n, out, CHUNKBYTES);
          blosc2_free_ctx(dctx);
          if (nf) free(c);
          FAIL_IF(got != CHUNKBYTES);
          for (int j = 0; j < ITEMS; j++) FAIL_IF(out[j] != item(i, 0, j));
          break;
        }
        FAIL_IF(n != sh->chunklen[i]);
        int same = memcmp(c, sh->chunks[i], (size_t)n) == 0;
        if (nf) free(c);
        FAIL_IF(!same);
        break;
      }
      case 3: {
        int64_t start = (int64_t)(next(&seed) % (NCHUNKS * ITEMS));
        int64_t stop = start + (int64_t)(next(&seed) % (2 * ITEMS));
        if (stop > NCHUNKS * ITEMS) stop = NCHUNKS * ITEMS;
        FAIL_IF(blosc2_schunk_get_slice_buffer(sh->sc, start, stop, out) != 0);
        for (int64_t g = start; g < stop; g++)
          FAIL_IF(out[g - start] != item((int)(g / ITEMS), 0, (int)(g % ITEMS)));
        break;
      }
      case 4: {
        int64_t *offs = blosc2_frame_get_offsets(sh->sc);
        if (sh->kind == 0) {
          FAIL_IF(offs != NULL);
        } else {
          FAIL_IF(offs == NULL);
          int same = memcmp(offs, sh->offsets, sizeof(sh->offsets)) == 0;
          free(offs);
          FAIL_IF(!same);
        }
        break;
      }
      default: {
        uint8_t *content;
        int32_t len;
        FAIL_IF(blosc2_vlmeta_get(sh->sc, "vl", &content, &len) < 0);
        int same = len == 2 && memcmp(content, "v0", 2) == 0;
        free(content);
        FAIL_IF(!same);
        blosc2_cparams *cp;
        FAIL_IF(blosc2_schunk_get_cparams(sh->sc, &cp) != 0);
        int ok = cp->typesize == 4 && cp->schunk == sh->sc;
        free(cp);
        FAIL_IF(!ok);
      }
    }
  }
out:
  free(out);
  return NULL;
}

/* The one `struct shared` of the tests (they run one after the other), cleared, with a new
   super-chunk of kind `k` (NULL if make failed). */
static struct shared *fresh_shared(int k) {
  static struct shared s;
  memset(&s, 0, sizeof(s));
  s.kind = k;
  s.sc = make(k);
  return &s;
}

static void test_readers(void) {
  for (int k = 0; k < 4; k++) {
    struct shared *sh = fresh_shared(k);
    CHECK_NOT_NULL(sh->sc);
    for (int i = 0; i < NCHUNKS; i++) {
      uint8_t *c;
      bool nf;
      int n = blosc2_schunk_get_chunk(sh->sc, i, &c, &nf);
      CHECK(n > 0);
      sh->chunks[i] = malloc((size_t)n);
      memcpy(sh->chunks[i], c, (size_t)n);
      sh->chunklen[i] = n;
      if (nf) free(c);
    }
    if (k != 0) {
      int64_t *offs = blosc2_frame_get_offsets(sh->sc);
      CHECK_NOT_NULL(offs);
      memcpy(sh->offsets, offs, sizeof(sh->offsets));
      free(offs);
    }
    pthread_t t[READERS];
    for (int r = 0; r < READERS; r++) CHECK_EQ_INT(pthread_create(&t[r], NULL, reader, sh), 0);
    for (int r = 0; r < READERS; r++) pthread_join(t[r], NULL);
    if (atomic_load(&sh->failures) != 0) fprintf(stderr, "kind %s\n", KIND_NAMES[k]);
    CHECK_EQ_INT(atomic_load(&sh->failures), 0);
    for (int i = 0; i < NCHUNKS; i++) free(sh->chunks[i]);
    CHECK_EQ_INT(blosc2_schunk_free(sh->sc), 0);
    blosc2_remove_urlpath(PATHS[k]);
  }
}

static void *checker(void *arg) {
  struct shared *sh = arg;
  uint32_t seed = (uint32_t)(uintptr_t)pthread_self() | 1u;
  uint32_t *out = malloc(CHUNKBYTES);
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  /* A handle of this reader's own (opened while the writer may be committing), or the shared one. */
  blosc2_schunk *sc = sh->own_handles ? blosc2_schunk_open(PATHS[sh->kind]) : sh->sc;
  int reads = 0;
  FAIL_IF(sc == NULL);
  while (!atomic_load(&sh->done) || reads < 200) {
    reads++;
    /* The chunks the writer acknowledged before this read: the read must see them. */
    int n = atomic_load(&sh->nchunks);
    int i = (int)(next(&seed) % (uint32_t)n);
    /* flock queues no one: while readers of other handles keep a shared lock taken, the
     * writer's exclusive one waits. Readers of their own handles pause between reads so that
     * the writer gets its turns (c-blosc2's processes share the same protocol). */
    if (sh->own_handles && !atomic_load(&sh->done)) {
      usleep(1000);
      /* And hold back while the writer waits for its turn: under wine every lock is a round trip
       * to wineserver and a reader's read takes longer than the pause, so the writer starved. */
      for (int w = 0; w < 1000 && atomic_load(&sh->writing); w++) usleep(1000);
    }
    if (sh->own_handles && next(&seed) % 8 == 0) {
      FAIL_IF(blosc2_schunk_refresh(sc) < 0);
      FAIL_IF(sc->nchunks < n);
    }
    switch (next(&seed) % 3) {
      case 0: {
        FAIL_IF(blosc2_schunk_decompress_chunk(sc, i, out, CHUNKBYTES) != CHUNKBYTES);
        FAIL_IF(!chunk_ok(out, i, atomic_load(&sh->version)));
        break;
      }
      case 1: {
        /* One whole chunk through the slice API. */
        FAIL_IF(blosc2_schunk_get_slice_buffer(sc, (int64_t)i * ITEMS, (int64_t)(i + 1) * ITEMS, out) != 0);
        FAIL_IF(!chunk_ok(out, i, atomic_load(&sh->version)));
        break;
      }
      default: {
        uint8_t *c;
        bool nf;
        int len = blosc2_schunk_get_chunk(sc, i, &c, &nf);
        FAIL_IF(len <= 0);
        if (nf) {
          int got = blosc2_decompress_ctx(dctx, c, len, out, CHUNKBYTES);
          free(c);
          FAIL_IF(got != CHUNKBYTES);
          FAIL_IF(!chunk_ok(out, i, atomic_load(&sh->version)));
        }
      }
    }
  }
out:
  if (sh->own_handles && sc != NULL) blosc2_schunk_free(sc);
  blosc2_free_ctx(dctx);
  free(out);
  return NULL;
}

static void *writer(void *arg) {
  struct shared *sh = arg;
  uint32_t seed = 12345;
  uint32_t *b = malloc(CHUNKBYTES);
  uint8_t *c = malloc(CHUNKBYTES + BLOSC2_MAX_OVERHEAD);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  for (int round = 1; round <= 30; round++) {
    atomic_store(&sh->version, round);
    for (int u = 0; u < 3; u++) {
      int i = (int)(next(&seed) % (uint32_t)atomic_load(&sh->nchunks));
      fill(b, i, round);
      int n = blosc2_compress_ctx(cctx, b, CHUNKBYTES, c, CHUNKBYTES + BLOSC2_MAX_OVERHEAD);
      FAIL_IF(n <= 0);
      atomic_store(&sh->writing, 1);
      int rc = blosc2_schunk_update_chunk(sh->sc, i, c, true);
      atomic_store(&sh->writing, 0);
      FAIL_IF(rc < 0);
    }
    if (round % 3 == 0 && atomic_load(&sh->nchunks) < MAXCHUNKS) {
      int i = atomic_load(&sh->nchunks);
      fill(b, i, 0);
      atomic_store(&sh->writing, 1);
      int rc = blosc2_schunk_append_buffer(sh->sc, b, CHUNKBYTES);
      atomic_store(&sh->writing, 0);
      FAIL_IF(rc != i + 1);
      atomic_store(&sh->nchunks, i + 1);
    }
  }
out:
  atomic_store(&sh->done, 1);
  blosc2_free_ctx(cctx);
  free(b);
  free(c);
  return NULL;
}

/* Readers and one writer on kind k: on the writer's handle, or (own_handles) each reader on a
 * handle of its own; `locking`: BLOSC_LOCKING set while the handles are made. */
static void readers_and_writer(int k, int locking, int own_handles) {
  {
    if (locking) setenv("BLOSC_LOCKING", "1", 1);
    struct shared *sh = fresh_shared(k);
    CHECK_NOT_NULL(sh->sc);
    sh->own_handles = own_handles;
    atomic_store(&sh->nchunks, NCHUNKS);
    pthread_t t[READERS + 1];
    for (int r = 0; r < READERS; r++) CHECK_EQ_INT(pthread_create(&t[r], NULL, checker, sh), 0);
    CHECK_EQ_INT(pthread_create(&t[READERS], NULL, writer, sh), 0);
    for (int r = 0; r <= READERS; r++) pthread_join(t[r], NULL);
    if (locking) unsetenv("BLOSC_LOCKING");
    if (atomic_load(&sh->failures) != 0)
      fprintf(stderr, "kind %s, locking %d, own handles %d, dparams nthreads %d\n", KIND_NAMES[k],
              locking, own_handles, dthreads);
    CHECK_EQ_INT(atomic_load(&sh->failures), 0);
    CHECK_EQ_INT(sh->sc->nchunks, atomic_load(&sh->nchunks));
    uint32_t *out = malloc(CHUNKBYTES);
    int ok = 1;
    for (int i = 0; i < atomic_load(&sh->nchunks) && ok; i++)
      ok = blosc2_schunk_decompress_chunk(sh->sc, i, out, CHUNKBYTES) == CHUNKBYTES && chunk_ok(out, i, 30);
    free(out);
    CHECK(ok);
    CHECK_EQ_INT(blosc2_schunk_free(sh->sc), 0);
    blosc2_remove_urlpath(PATHS[k]);
  }
}

static void test_readers_and_writer(void) {
  for (int k = 0; k < 4; k++) readers_and_writer(k, 0, 0);
}

/* `.b2lock` locking on: the writer's handle shared by the readers, then a handle per reader. */
static void test_readers_and_writer_locking(void) {
  for (int k = 2; k < 4; k++) {
    readers_and_writer(k, 1, 0);
    readers_and_writer(k, 1, 1);
  }
}

int main(void) {
  blosc2_init();
  for (dthreads = 1; dthreads <= 2; dthreads++) {
    printf("dparams nthreads %d\n", dthreads);
    RUN(test_readers);
    RUN(test_readers_and_writer);
    RUN(test_readers_and_writer_locking);
  }
  blosc2_destroy();
  return harness_summary();
}
