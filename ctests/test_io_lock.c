/* Opt-in file locking (c-blosc2 3.2+ protocol: `<path>.b2lock` sidecar, flock, uint64
 * generation counter at byte 8) and stale-handle re-sync:
 *  - two handles in one process: growth and same-length mutations are noticed (change_tick),
 *    the counter moves at every exclusive acquisition, blosc2_schunk_lock excludes a reader
 *    running in another thread until the unlock, BLOSC_LOCKING enables it for plain opens,
 *    blosc2_remove_urlpath removes the sidecar;
 *  - fork()ed writer and readers: readers under shared locks never see a torn frame (POSIX
 *    only: Windows has no fork(); there the cross-library lock test of the Rust suite covers
 *    the sidecar protocol).
 * Ordering is checked with flags, never with timings. */
#include "harness.h"

#include <blosc2.h>
#include <blosc2/blosc2-stdio.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#if !defined(_WIN32)
#include <sys/wait.h>
#include <unistd.h>
#endif

#define ITEMS 2000

static blosc2_stdio_params lock_params = {true};

static int path_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

static uint64_t generation(const char *sidecar) {
  uint64_t seq = 0;
  FILE *f = fopen(sidecar, "rb");
  if (f == NULL) return UINT64_MAX;
  if (fseek(f, 8, SEEK_SET) != 0 || fread(&seq, sizeof(seq), 1, f) != 1) seq = 0;
  fclose(f);
  return seq;
}

static void fill(int32_t *buf, int tag) {
  for (int i = 0; i < ITEMS; i++) buf[i] = tag * 1000003 + i;
}

static int chunk_ok(blosc2_schunk *sc, int64_t n, int tag) {
  int32_t buf[ITEMS], want[ITEMS];
  fill(want, tag);
  if (blosc2_schunk_decompress_chunk(sc, n, buf, sizeof(buf)) != (int)sizeof(buf)) return 0;
  return memcmp(buf, want, sizeof(buf)) == 0;
}

/* clevel 0: every chunk is stored memcpyed, ITEMS * 4 + 32 bytes, so updates keep the frame
 * length. */
static blosc2_schunk *new_locked(const char *path) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.clevel = 0;
  blosc2_io io = {.id = BLOSC2_IO_FILESYSTEM, .name = "filesystem", .params = &lock_params};
  blosc2_storage st = {.contiguous = true, .urlpath = (char *)path, .cparams = &cp, .io = &io};
  return blosc2_schunk_new(&st);
}

static blosc2_schunk *open_locked(const char *path) {
  blosc2_io io = {.id = BLOSC2_IO_FILESYSTEM, .name = "filesystem", .params = &lock_params};
  return blosc2_schunk_open_udio(path, &io);
}

static int append_tag(blosc2_schunk *sc, int tag) {
  int32_t buf[ITEMS];
  fill(buf, tag);
  return blosc2_schunk_append_buffer(sc, buf, sizeof(buf)) > 0;
}

static void test_two_handles(void) {
  const char *path = "lock_two.b2frame", *side = "lock_two.b2frame.b2lock";
  blosc2_remove_urlpath(path);
  blosc2_schunk *w = new_locked(path);
  CHECK_NOT_NULL(w);
  CHECK(append_tag(w, 0));
  CHECK(path_exists(side));
  uint64_t g0 = generation(side);
  CHECK(g0 >= 1);
  CHECK(append_tag(w, 1));
  CHECK(generation(side) > g0); /* every exclusive acquisition bumps the counter */

  blosc2_schunk *r = open_locked(path);
  CHECK_NOT_NULL(r);
  CHECK_EQ_INT(r->nchunks, 2);
  int64_t tick = r->change_tick;
  uint64_t g1 = generation(side);
  CHECK(chunk_ok(r, 1, 1));
  CHECK_EQ_INT(generation(side), g1); /* shared acquisitions do not */

  /* Growth through the writer is noticed on the reader's next access. */
  CHECK(append_tag(w, 2));
  CHECK(chunk_ok(r, 0, 0));
  CHECK_EQ_INT(r->nchunks, 3);
  CHECK(r->change_tick > tick);
  CHECK(chunk_ok(r, 2, 2));

  /* A same-length mutation (update with an equally sized chunk) is noticed through the
   * generation counter although frame_len does not change. */
  int32_t buf[ITEMS];
  fill(buf, 7);
  uint8_t *c7 = malloc(ITEMS * 4 + BLOSC2_MAX_OVERHEAD);
  uint8_t *c1 = malloc(ITEMS * 4 + BLOSC2_MAX_OVERHEAD);
  CHECK(c7 != NULL && c1 != NULL);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.clevel = 0;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int n7 = blosc2_compress_ctx(cctx, buf, sizeof(buf), c7, ITEMS * 4 + BLOSC2_MAX_OVERHEAD);
  fill(buf, 1);
  int n1 = blosc2_compress_ctx(cctx, buf, sizeof(buf), c1, ITEMS * 4 + BLOSC2_MAX_OVERHEAD);
  blosc2_free_ctx(cctx);
  CHECK(n7 == ITEMS * 4 + BLOSC2_MAX_OVERHEAD && n7 == n1);
  int64_t len_before = blosc2_schunk_frame_len(w);
  tick = r->change_tick;
  CHECK_EQ_INT(blosc2_schunk_update_chunk(w, 1, c7, true), 3);
  CHECK_EQ_INT(blosc2_schunk_frame_len(w), len_before);
  CHECK(chunk_ok(r, 1, 7));
  CHECK(r->change_tick > tick);
  free(c7);
  free(c1);

  /* blosc2_schunk_refresh is 0 when nothing changed. */
  CHECK_EQ_INT(blosc2_schunk_refresh(r), 0);
  CHECK(append_tag(w, 3));
  CHECK_EQ_INT(blosc2_schunk_refresh(r), 1);
  CHECK_EQ_INT(r->nchunks, 4);

  CHECK_EQ_INT(blosc2_schunk_free(r), 0);
  CHECK_EQ_INT(blosc2_schunk_free(w), 0);
  CHECK_EQ_INT(blosc2_remove_urlpath(path), 0);
  CHECK(!path_exists(side));
  CHECK(!path_exists(path));
}

static void test_sframe_locking(void) {
  const char *dir = "lock_sparse.b2frame", *side = "lock_sparse.b2frame/.b2lock";
  blosc2_remove_urlpath(dir);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_io io = {.id = BLOSC2_IO_FILESYSTEM, .name = "filesystem", .params = &lock_params};
  blosc2_storage st = {.contiguous = false, .urlpath = (char *)dir, .cparams = &cp, .io = &io};
  blosc2_schunk *w = blosc2_schunk_new(&st);
  CHECK_NOT_NULL(w);
  CHECK(append_tag(w, 0));
  CHECK(path_exists(side)); /* the sidecar lives inside the directory */
  uint64_t g = generation(side);
  blosc2_schunk *r = open_locked(dir);
  CHECK_NOT_NULL(r);
  CHECK_EQ_INT(r->nchunks, 1);
  CHECK(append_tag(w, 1));
  CHECK(generation(side) > g);
  CHECK_EQ_INT(blosc2_schunk_refresh(r), 1);
  CHECK_EQ_INT(r->nchunks, 2);
  CHECK(chunk_ok(r, 1, 1));
  blosc2_schunk_free(r);
  blosc2_schunk_free(w);
  CHECK_EQ_INT(blosc2_remove_urlpath(dir), 0);
  CHECK(!path_exists(dir));
  /* Opening a missing frame under locking creates no sidecar. */
  CHECK(open_locked("lock_missing.b2frame") == NULL);
  CHECK(!path_exists("lock_missing.b2frame.b2lock"));
}

typedef struct {
  blosc2_schunk *reader;
  volatile int unlocked; /* set by the holder right before blosc2_schunk_unlock */
  int read_ok;
  int saw_unlock;
} waiter;

static void *read_while_locked(void *arg) {
  waiter *w = arg;
  w->read_ok = chunk_ok(w->reader, 0, 0);
  w->saw_unlock = __atomic_load_n(&w->unlocked, __ATOMIC_SEQ_CST);
  return NULL;
}

static void test_schunk_lock_excludes_readers(void) {
  const char *path = "lock_hold.b2frame";
  blosc2_remove_urlpath(path);
  blosc2_schunk *w = new_locked(path);
  CHECK_NOT_NULL(w);
  CHECK(append_tag(w, 0));
  blosc2_schunk *r = open_locked(path);
  CHECK_NOT_NULL(r);

  CHECK_EQ_INT(blosc2_schunk_lock(w), 0);
  CHECK_EQ_INT(blosc2_schunk_lock(w), 0); /* re-entrant */
  CHECK(append_tag(w, 1));                 /* nested operations reuse the lock */
  waiter wt = {.reader = r};
  pthread_t t;
  CHECK_EQ_INT(pthread_create(&t, NULL, read_while_locked, &wt), 0);
  for (int i = 0; i < 1000; i++) sched_yield();
  CHECK(append_tag(w, 2));
  CHECK_EQ_INT(blosc2_schunk_unlock(w), 0);
  __atomic_store_n(&wt.unlocked, 1, __ATOMIC_SEQ_CST);
  CHECK_EQ_INT(blosc2_schunk_unlock(w), 0);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);
  CHECK(wt.read_ok);
  CHECK(wt.saw_unlock); /* the reader only got in after the outermost unlock */
  CHECK_EQ_INT(r->nchunks, 3);
  CHECK_EQ_INT(blosc2_schunk_unlock(w), 0); /* not held: no-op */

  /* Without locking, lock/unlock are no-ops returning 0. */
  blosc2_storage mst = BLOSC2_STORAGE_DEFAULTS;
  blosc2_schunk *mem = blosc2_schunk_new(&mst);
  CHECK_NOT_NULL(mem);
  CHECK_EQ_INT(blosc2_schunk_lock(mem), 0);
  CHECK_EQ_INT(blosc2_schunk_unlock(mem), 0);
  blosc2_schunk_free(mem);
  blosc2_schunk *plain = blosc2_schunk_open(path);
  CHECK_NOT_NULL(plain);
  CHECK_EQ_INT(blosc2_schunk_lock(plain), 0);
  CHECK_EQ_INT(blosc2_schunk_unlock(plain), 0);
  blosc2_schunk_free(plain);

  blosc2_schunk_free(r);
  blosc2_schunk_free(w);
  blosc2_remove_urlpath(path);
}

static void test_env_locking(void) {
  const char *path = "lock_env.b2frame", *side = "lock_env.b2frame.b2lock";
  blosc2_remove_urlpath(path);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_storage st = {.contiguous = true, .urlpath = (char *)path, .cparams = &cp};
  blosc2_schunk *w = blosc2_schunk_new(&st);
  CHECK_NOT_NULL(w);
  CHECK(append_tag(w, 0));
  CHECK(!path_exists(side)); /* no locking asked for */
  blosc2_schunk_free(w);

  setenv("BLOSC_LOCKING", "0", 1);
  w = blosc2_schunk_open(path);
  CHECK(append_tag(w, 1));
  CHECK(!path_exists(side)); /* "0" leaves it off */
  blosc2_schunk_free(w);

  setenv("BLOSC_LOCKING", "1", 1);
  w = blosc2_schunk_open(path);
  CHECK_NOT_NULL(w);
  CHECK(append_tag(w, 2));
  unsetenv("BLOSC_LOCKING");
  CHECK(path_exists(side));
  CHECK(generation(side) >= 1);
  blosc2_schunk_free(w);
  CHECK_EQ_INT(blosc2_remove_urlpath(path), 0);
  CHECK(!path_exists(side));
}

#if !defined(_WIN32)
#define FORK_APPENDS 60
#define FORK_READERS 2

/* Child reader: follows the frame until it holds every chunk; all reads must succeed. */
static int reader_process(const char *path) {
  blosc2_schunk *r = open_locked(path);
  if (r == NULL) return 10;
  int64_t seen = 0;
  for (long spins = 0; spins < 100000000L; spins++) {
    if (blosc2_schunk_refresh(r) < 0) return 11;
    int64_t n = r->nchunks;
    if (n < seen) return 12;
    for (int64_t i = 0; i < n; i++) {
      int ok = chunk_ok(r, i, (int)i);
      if (!ok) return 13;
    }
    seen = n;
    if (n == FORK_APPENDS + 1) break;
  }
  blosc2_schunk_free(r);
  return seen == FORK_APPENDS + 1 ? 0 : 14;
}

static int writer_process(const char *path) {
  blosc2_schunk *w = open_locked(path);
  if (w == NULL) return 20;
  for (int i = 1; i <= FORK_APPENDS; i++) {
    if (!append_tag(w, i)) return 21;
    if (i % 10 == 0) {
      /* A multi-step mutation made atomic for readers. */
      if (blosc2_schunk_lock(w) != 0) return 22;
      int32_t buf[ITEMS];
      fill(buf, 999);
      if (blosc2_schunk_append_buffer(w, buf, sizeof(buf)) != i + 2) return 23;
      if (blosc2_schunk_delete_chunk(w, i + 1) != i + 1) return 24;
      if (blosc2_schunk_unlock(w) != 0) return 25;
    }
  }
  blosc2_schunk_free(w);
  return 0;
}

static void test_forked_writer_and_readers(void) {
  const char *path = "lock_fork.b2frame";
  blosc2_remove_urlpath(path);
  blosc2_schunk *w = new_locked(path);
  CHECK_NOT_NULL(w);
  CHECK(append_tag(w, 0));
  blosc2_schunk_free(w);
  fflush(stdout);
  fflush(stderr);

  pid_t pids[FORK_READERS + 1];
  for (int k = 0; k <= FORK_READERS; k++) {
    pids[k] = fork();
    CHECK(pids[k] >= 0);
    if (pids[k] == 0) {
      int rc = k == 0 ? writer_process(path) : reader_process(path);
      _exit(rc);
    }
  }
  for (int k = 0; k <= FORK_READERS; k++) {
    int status = 0;
    CHECK_EQ_INT(waitpid(pids[k], &status, 0), pids[k]);
    CHECK(WIFEXITED(status));
    CHECK_EQ_INT(WEXITSTATUS(status), 0);
  }
  blosc2_schunk *r = blosc2_schunk_open(path);
  CHECK_NOT_NULL(r);
  CHECK_EQ_INT(r->nchunks, FORK_APPENDS + 1);
  for (int i = 0; i <= FORK_APPENDS; i++) CHECK(chunk_ok(r, i, i));
  blosc2_schunk_free(r);
  blosc2_remove_urlpath(path);
}
#endif

int main(void) {
  blosc2_init();
  RUN(test_two_handles);
  RUN(test_sframe_locking);
  RUN(test_schunk_lock_excludes_readers);
  RUN(test_env_locking);
#if !defined(_WIN32)
  RUN(test_forked_writer_and_readers);
#endif
  blosc2_destroy();
  return harness_summary();
}
