/* Many threads reading ONE b2nd array at once, every element checked against its pattern.
 *
 * The case python-blosc2's users hit (and c-blosc2 crashes on: its issue #147, python-blosc2
 * #713 and #555): a 2-D f64 array, chunks 250x250, blocks 50x50, zstd 1 + shuffle, read by
 * THREADS pthreads at once, each doing ROUNDS pseudo-random operations:
 *   - b2nd_get_slice_cbuffer of a random box;
 *   - b2nd_get_orthogonal_selection of random row and column lists;
 *   - blosc2_schunk_decompress_chunk of a random chunk;
 *   - blosc2_getitem_ctx on the super-chunk's own dctx, over a chunk from blosc2_schunk_get_chunk;
 *   - blosc2_schunk_get_lazychunk, then blosc2_decompress_ctx or blosc2_getitem_ctx of it on the
 *     super-chunk's dctx (a lazy chunk reads its blocks through that context's super-chunk);
 *   - blosc2_set_maskout on the super-chunk's dctx with a random mask, then
 *     blosc2_schunk_decompress_chunk: the blocks the mask skips stay as they were, the others are
 *     decoded (in b2frame a mask belongs to the thread that set it; in c-blosc2 this races).
 * Every phase runs with dparams nthreads 1, 2 and 4 (the super-chunk's dctx), on an array in
 * memory, in a cframe file and in an sframe directory, with the operations mixed in one phase and
 * with slices only. Then a phase of THREADS readers (slices, orthogonal selections, chunk
 * decompressions) while one writer thread overwrites whole chunks with b2nd_set_slice_cbuffer,
 * each time with a new version of the pattern, `.b2lock` locking on for the files: every element
 * read must be the pattern at some version the writer has begun to store, and a chunk read whole
 * must hold one version throughout (a chunk update is atomic). A wrong element, a failed call or
 * a crash fails the test: return codes alone prove nothing, the bytes are compared.
 * scripts/tsan.sh also runs this program under ThreadSanitizer (-DROUNDS fewer). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "b2nd.h"
#include "blosc2.h"
#include "harness.h"

/* Threads per phase: slices with THREADS, mixed operations with THREADS + 4. */
#ifndef THREADS
#define THREADS 8
#endif
#ifndef ROUNDS
#define ROUNDS 150
#endif
enum { N = 1000, CHUNK = 250, BLOCK = 50, MAXSEL = 64, WRITES = 40 };
/* The array's chunks. Not read from `sc->nchunks`: a mutation on another thread rewrites the
 * struct's fields (reading them meanwhile is a data race, in c-blosc2 too). */
enum { NCHUNKS = (N / CHUNK) * (N / CHUNK) };

static double pattern(int64_t i, int64_t j) { return (double)(i * 1000003 + j) + 0.25; }

/* Version v of the pattern (what the writer phase stores; pattern values stay below 1.1e9, so
 * every version is exact in a double). */
#define VERSION_STEP 4e12
static double versioned(int64_t i, int64_t j, int v) { return pattern(i, j) + v * VERSION_STEP; }

/* In the writer phase: the newest version the writer has begun to store; -1 otherwise (then
 * every element must be the pattern itself). */
static atomic_int newest = -1;

/* The version element (i, j) holds, or -1 when it is no version the writer may have stored. */
static int version_at(double x, int64_t i, int64_t j) {
  int top = atomic_load(&newest);
  if (top < 0) return x == pattern(i, j) ? 0 : -1;
  double v = (x - pattern(i, j)) / VERSION_STEP;
  int iv = (int)v;
  return (double)iv == v && iv >= 0 && iv <= top && x == versioned(i, j, iv) ? iv : -1;
}

static uint32_t next(uint32_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s;
}

/* Where item k of chunk nchunk's decompressed buffer lives in the array: b2nd chunks are laid out
 * block after block, each block in C order. */
static void chunk_item_coords(int64_t nchunk, int64_t k, int64_t *i, int64_t *j) {
  const int64_t bpc = CHUNK / BLOCK, cpa = N / CHUNK, bn = BLOCK * BLOCK;
  int64_t b = k / bn, in = k % bn;
  *i = (nchunk / cpa) * CHUNK + (b / bpc) * BLOCK + in / BLOCK;
  *j = (nchunk % cpa) * CHUNK + (b % bpc) * BLOCK + in % BLOCK;
}

enum { OPS_MIXED, OPS_SLICES, OPS_WRITER };

struct shared {
  b2nd_array_t *arr;
  int ops;
  atomic_long wrong;     /* elements that differ from the pattern */
  atomic_long failed;    /* calls that returned an error */
  atomic_long checked;   /* elements compared */
  atomic_int writer_done;
};

struct worker {
  struct shared *sh;
  uint32_t seed;
};

static void note_call(struct shared *sh, long long rc, const char *what) {
  if (rc < 0) {
    if (atomic_fetch_add(&sh->failed, 1) < 5) fprintf(stderr, "  %s failed: %lld\n", what, rc);
  }
}

static void count(struct shared *sh, long wrong, long checked) {
  if (wrong && atomic_load(&sh->wrong) == 0) fprintf(stderr, "  first wrong elements seen\n");
  atomic_fetch_add(&sh->wrong, wrong);
  atomic_fetch_add(&sh->checked, checked);
}

static void op_slice(struct shared *sh, uint32_t *s, double *buf) {
  int64_t start[2], stop[2], bshape[2];
  for (int d = 0; d < 2; d++) {
    int64_t a = next(s) % N, len = 1 + next(s) % 300;
    start[d] = a;
    stop[d] = a + len > N ? N : a + len;
    bshape[d] = stop[d] - start[d];
  }
  int64_t n = bshape[0] * bshape[1];
  int rc = b2nd_get_slice_cbuffer(sh->arr, start, stop, buf, bshape, n * 8);
  note_call(sh, rc, "b2nd_get_slice_cbuffer");
  if (rc < 0) return;
  long wrong = 0;
  for (int64_t i = 0; i < bshape[0]; i++)
    for (int64_t j = 0; j < bshape[1]; j++)
      wrong += version_at(buf[i * bshape[1] + j], start[0] + i, start[1] + j) < 0;
  count(sh, wrong, n);
}

static void op_orthogonal(struct shared *sh, uint32_t *s, double *buf) {
  int64_t rows[MAXSEL], cols[MAXSEL];
  int64_t sizes[2] = {1 + next(s) % MAXSEL, 1 + next(s) % MAXSEL};
  for (int64_t k = 0; k < sizes[0]; k++) rows[k] = next(s) % N;
  for (int64_t k = 0; k < sizes[1]; k++) cols[k] = next(s) % N;
  int64_t *sel[2] = {rows, cols};
  int64_t n = sizes[0] * sizes[1];
  int rc = b2nd_get_orthogonal_selection(sh->arr, sel, sizes, buf, sizes, n * 8);
  note_call(sh, rc, "b2nd_get_orthogonal_selection");
  if (rc < 0) return;
  long wrong = 0;
  for (int64_t a = 0; a < sizes[0]; a++)
    for (int64_t b = 0; b < sizes[1]; b++) wrong += version_at(buf[a * sizes[1] + b], rows[a], cols[b]) < 0;
  count(sh, wrong, n);
}

/* Compares items [first, first + n) of chunk nchunk's buffer: all of one version. */
static long chunk_wrong(int64_t nchunk, const double *buf, int64_t first, int64_t n) {
  long wrong = 0;
  int v0 = -2;
  for (int64_t k = 0; k < n; k++) {
    int64_t i, j;
    chunk_item_coords(nchunk, first + k, &i, &j);
    int v = version_at(buf[k], i, j);
    if (v0 == -2) v0 = v;
    wrong += v < 0 || v != v0;
  }
  return wrong;
}

static void op_chunk(struct shared *sh, uint32_t *s, double *buf) {
  blosc2_schunk *sc = sh->arr->sc;
  int64_t nchunk = next(s) % NCHUNKS;
  int rc = blosc2_schunk_decompress_chunk(sc, nchunk, buf, CHUNK * CHUNK * 8);
  note_call(sh, rc, "blosc2_schunk_decompress_chunk");
  if (rc < 0) return;
  count(sh, chunk_wrong(nchunk, buf, 0, CHUNK * CHUNK), CHUNK * CHUNK);
}

/* getitem (or a whole decompression, for lazy chunks) with the super-chunk's own dctx. */
static void op_ctx(struct shared *sh, uint32_t *s, double *buf, int lazy, int whole) {
  blosc2_schunk *sc = sh->arr->sc;
  int64_t nchunk = next(s) % NCHUNKS;
  uint8_t *chunk = NULL;
  bool needs_free = false;
  int cbytes = lazy ? blosc2_schunk_get_lazychunk(sc, nchunk, &chunk, &needs_free)
                    : blosc2_schunk_get_chunk(sc, nchunk, &chunk, &needs_free);
  note_call(sh, cbytes, lazy ? "blosc2_schunk_get_lazychunk" : "blosc2_schunk_get_chunk");
  if (cbytes < 0) return;
  if (whole) {
    int rc = blosc2_decompress_ctx(sc->dctx, chunk, cbytes, buf, CHUNK * CHUNK * 8);
    note_call(sh, rc, "blosc2_decompress_ctx");
    if (rc >= 0) count(sh, chunk_wrong(nchunk, buf, 0, CHUNK * CHUNK), CHUNK * CHUNK);
  } else {
    int first = (int)(next(s) % (CHUNK * CHUNK));
    int nitems = 1 + (int)(next(s) % 7000);
    if (first + nitems > CHUNK * CHUNK) nitems = CHUNK * CHUNK - first;
    int rc = blosc2_getitem_ctx(sc->dctx, chunk, cbytes, first, nitems, buf, nitems * 8);
    note_call(sh, rc, "blosc2_getitem_ctx");
    if (rc >= 0) count(sh, chunk_wrong(nchunk, buf, first, nitems), nitems);
  }
  if (needs_free) free(chunk);
}

static void op_masked(struct shared *sh, uint32_t *s, double *buf) {
  enum { NBLOCKS = (CHUNK / BLOCK) * (CHUNK / BLOCK), BLOCKITEMS = BLOCK * BLOCK };
  blosc2_schunk *sc = sh->arr->sc;
  int64_t nchunk = next(s) % NCHUNKS;
  bool mask[NBLOCKS];
  for (int b = 0; b < NBLOCKS; b++) mask[b] = next(s) % 3 == 0;
  for (int k = 0; k < CHUNK * CHUNK; k++) buf[k] = -1.0;
  int rc = blosc2_set_maskout(sc->dctx, mask, NBLOCKS);
  note_call(sh, rc, "blosc2_set_maskout");
  if (rc < 0) return;
  rc = blosc2_schunk_decompress_chunk(sc, nchunk, buf, CHUNK * CHUNK * 8);
  note_call(sh, rc, "blosc2_schunk_decompress_chunk (masked)");
  if (rc < 0) return;
  long wrong = 0;
  for (int b = 0; b < NBLOCKS; b++) {
    const double *blk = buf + (int64_t)b * BLOCKITEMS;
    if (mask[b]) {
      for (int k = 0; k < BLOCKITEMS; k++) wrong += blk[k] != -1.0;
    } else {
      wrong += chunk_wrong(nchunk, blk, (int64_t)b * BLOCKITEMS, BLOCKITEMS);
    }
  }
  count(sh, wrong, CHUNK * CHUNK);
}

static void *reader(void *arg) {
  struct worker *w = arg;
  struct shared *sh = w->sh;
  double *buf = malloc((size_t)N * 300 * 8 + CHUNK * CHUNK * 8);
  if (buf == NULL) {
    atomic_fetch_add(&sh->failed, 1);
    return NULL;
  }
  for (int r = 0; r < ROUNDS || (sh->ops == OPS_WRITER && !atomic_load(&sh->writer_done)); r++) {
    /* With a writer, only reads that copy (borrowed chunks die at the next mutation). */
    uint32_t op = sh->ops == OPS_SLICES ? 0 : next(&w->seed) % (sh->ops == OPS_WRITER ? 3 : 8);
    switch (op) {
      case 0: op_slice(sh, &w->seed, buf); break;
      case 1: op_orthogonal(sh, &w->seed, buf); break;
      case 2: op_chunk(sh, &w->seed, buf); break;
      case 3: op_ctx(sh, &w->seed, buf, 0, 0); break;
      case 4: op_ctx(sh, &w->seed, buf, 1, 0); break;
      case 5: op_ctx(sh, &w->seed, buf, 1, 1); break;
      case 6: op_masked(sh, &w->seed, buf); break;
      default: op_slice(sh, &w->seed, buf); break;
    }
  }
  free(buf);
  return NULL;
}

/* Overwrites WRITES random whole chunks, each with the next version of the pattern. */
static void *writer(void *arg) {
  struct worker *w = arg;
  struct shared *sh = w->sh;
  double *box = malloc((size_t)CHUNK * CHUNK * 8);
  for (int v = 1; box != NULL && v <= WRITES; v++) {
    int64_t ci = next(&w->seed) % (N / CHUNK), cj = next(&w->seed) % (N / CHUNK);
    int64_t start[2] = {ci * CHUNK, cj * CHUNK}, stop[2] = {start[0] + CHUNK, start[1] + CHUNK};
    int64_t shape[2] = {CHUNK, CHUNK};
    for (int64_t i = 0; i < CHUNK; i++)
      for (int64_t j = 0; j < CHUNK; j++) box[i * CHUNK + j] = versioned(start[0] + i, start[1] + j, v);
    atomic_store(&newest, v);
    int rc = b2nd_set_slice_cbuffer(box, shape, (int64_t)CHUNK * CHUNK * 8, start, stop, sh->arr);
    note_call(sh, rc, "b2nd_set_slice_cbuffer");
  }
  if (box == NULL) atomic_fetch_add(&sh->failed, 1);
  free(box);
  atomic_store(&sh->writer_done, 1);
  return NULL;
}

static const char *STORAGE_NAMES[3] = {"memory", "cframe", "sframe"};
static const char *PATHS[3] = {NULL, "ct_b2nd_threads.b2nd", "ct_b2nd_threads_dir.b2nd"};

/* The array on storage kind k, its dctx made with dparams nthreads dthreads. */
static b2nd_array_t *make_array(int k, int dthreads, const double *data) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 8;
  cp.compcode = BLOSC_ZSTD;
  cp.clevel = 1;
  cp.nthreads = 2;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = (int16_t)dthreads;
  blosc2_storage st = {.contiguous = k != 2, .urlpath = (char *)PATHS[k], .cparams = &cp,
                       .dparams = &dp};
  blosc2_remove_urlpath(PATHS[k]);
  int64_t shape[2] = {N, N};
  int32_t chunkshape[2] = {CHUNK, CHUNK}, blockshape[2] = {BLOCK, BLOCK};
  b2nd_context_t *ctx = b2nd_create_ctx(&st, 2, shape, chunkshape, blockshape, "<f8",
                                        DTYPE_NUMPY_FORMAT, NULL, 0);
  if (ctx == NULL) return NULL;
  b2nd_array_t *arr = NULL;
  int rc = b2nd_from_cbuffer(ctx, &arr, data, (int64_t)N * N * 8);
  b2nd_free_ctx(ctx);
  return rc < 0 ? NULL : arr;
}

static void run_phase(int k, int dthreads, int ops, const double *data, int *bad) {
  b2nd_array_t *arr = make_array(k, dthreads, data);
  if (arr == NULL) {
    fprintf(stderr, "  %s: could not build the array\n", STORAGE_NAMES[k]);
    *bad = 1;
    return;
  }
  struct shared sh = {.arr = arr, .ops = ops};
  /* slices: THREADS readers; mixed: THREADS + 4; with a writer: THREADS readers and the writer */
  const int nthreads = ops == OPS_MIXED ? THREADS + 4 : ops == OPS_WRITER ? THREADS + 1 : THREADS;
  pthread_t t[THREADS + 4];
  struct worker w[THREADS + 4];
  if (ops == OPS_WRITER) atomic_store(&newest, 0);
  for (int i = 0; i < nthreads; i++) {
    w[i] = (struct worker){.sh = &sh, .seed = 0x9e3779b9u * (uint32_t)(i + 1) + (uint32_t)dthreads};
    int is_writer = ops == OPS_WRITER && i == THREADS;
    if (pthread_create(&t[i], NULL, is_writer ? writer : reader, &w[i]) != 0) {
      *bad = 1;
      return;
    }
  }
  for (int i = 0; i < nthreads; i++) pthread_join(t[i], NULL);
  atomic_store(&newest, -1);
  long wrong = atomic_load(&sh.wrong), failed = atomic_load(&sh.failed);
  printf("  %-6s dparams nthreads %d, %2d threads, %s: %ld elements checked, %ld wrong, "
         "%ld failed calls\n", STORAGE_NAMES[k], dthreads, nthreads,
         ops == OPS_SLICES ? "slices" : ops == OPS_MIXED ? "mixed " : "writer",
         atomic_load(&sh.checked), wrong, failed);
  fflush(stdout);
  if (wrong != 0 || failed != 0 || atomic_load(&sh.checked) == 0) *bad = 1;
  b2nd_free(arr);
  blosc2_remove_urlpath(PATHS[k]);
}

static void run_storage(int k) {
  double *data = malloc((size_t)N * N * 8);
  CHECK_NOT_NULL(data);
  for (int64_t i = 0; i < N; i++)
    for (int64_t j = 0; j < N; j++) data[i * N + j] = pattern(i, j);
  int bad = 0;
  const int dthreads[3] = {1, 2, 4};
  for (int d = 0; d < 3; d++) {
    run_phase(k, dthreads[d], OPS_SLICES, data, &bad);
    run_phase(k, dthreads[d], OPS_MIXED, data, &bad);
  }
  /* Readers and a writer, with `.b2lock` locking for the files (BLOSC_LOCKING while the array
   * is made and used). */
  if (k != 0) setenv("BLOSC_LOCKING", "1", 1);
  for (int d = 0; d < 2; d++) run_phase(k, dthreads[d], OPS_WRITER, data, &bad);
  unsetenv("BLOSC_LOCKING");
  free(data);
  CHECK(bad == 0);
}

static void test_in_memory(void) { run_storage(0); }
static void test_cframe_file(void) { run_storage(1); }
static void test_sframe_dir(void) { run_storage(2); }

int main(void) {
  blosc2_init();
  RUN(test_in_memory);
  RUN(test_cframe_file);
  RUN(test_sframe_dir);
  blosc2_destroy();
  return harness_summary();
}
