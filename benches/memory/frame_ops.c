/* One whole-frame operation per process, for peak-memory and time measurements of b2frame
 * against c-blosc2 3.3.5: the same source compiled twice, linked against each library
 * (benches/memory/run.sh). Prints the operation's wall time (from blosc2_init to
 * blosc2_destroy, process start-up excluded); the caller reads the peak RSS from
 * `/usr/bin/time -v`.
 *
 *   frame_ops make N CHUNK_BYTES DST      write a cframe of N chunks (pseudo-random int32 below
 *                                         1000: ratio ~2.3 with blosclz 5 + shuffle) through a
 *                                         plain super-chunk + to_file
 *   frame_ops OP SRC DST                  OP one of: to_file to_buffer append_file
 *                                         copy_memory copy_plain copy_cframe copy_sframe
 *                                         copy_recode (to a cframe file with clevel 1: every
 *                                         chunk recompressed)
 *                                         from_buffer (SRC read into memory, copy=true)
 *                                         to_file_mem (SRC read into an in-memory frame)
 *                                         open slice (1000 chunks from the middle)
 *                                         append1 (open, append one chunk of chunksize
 *                                         bytes, free)
 *   frame_ops fill N DST                  write a cframe file of N special zero chunks of one
 *                                         float64 each with blosc2_schunk_fill_special (a
 *                                         few hundred bytes whatever N)
 */
#include <blosc2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void die(const char *what, long long code) {
  fprintf(stderr, "frame_ops: %s failed (%lld)\n", what, code);
  exit(1);
}

static uint8_t *read_file(const char *path, int64_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) die("fopen", 0);
  fseek(f, 0, SEEK_END);
  *len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(*len);
  if (fread(buf, 1, *len, f) != (size_t)*len) die("fread", 0);
  fclose(f);
  return buf;
}

/* The clevel of copies; -1: the source's. */
static int copy_clevel = -1;

static blosc2_schunk *copy_to(blosc2_schunk *sc, int contiguous, const char *urlpath) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = sc->typesize;
  cp.compcode = sc->compcode;
  cp.clevel = copy_clevel >= 0 ? copy_clevel : sc->clevel;
  cp.blocksize = sc->blocksize;
  memcpy(cp.filters, sc->filters, sizeof cp.filters);
  memcpy(cp.filters_meta, sc->filters_meta, sizeof cp.filters_meta);
  cp.nthreads = 1;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.contiguous = contiguous;
  st.urlpath = (char *)urlpath;
  st.cparams = &cp;
  st.dparams = &dp;
  blosc2_schunk *c = blosc2_schunk_copy(sc, &st);
  if (!c) die("copy", 0);
  return c;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: frame_ops OP SRC DST | make N CHUNK_BYTES DST\n");
    return 2;
  }
  const char *op = argv[1];
  blosc2_init();
  double t0 = now();
  if (!strcmp(op, "make")) {
    long n = atol(argv[2]);
    int chunk = atoi(argv[3]);
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.compcode = BLOSC_BLOSCLZ;
    cp.clevel = 5;
    cp.nthreads = 1;
    blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
    st.cparams = &cp;
    blosc2_schunk *sc = blosc2_schunk_new(&st);
    int32_t *buf = malloc(chunk);
    uint64_t x = 42;
    for (long i = 0; i < n; i++) {
      for (int k = 0; k < chunk / 4; k++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        buf[k] = (int32_t)((x >> 33) % 1000);
      }
      if (blosc2_schunk_append_buffer(sc, buf, chunk) != i + 1) die("append_buffer", i);
    }
    remove(argv[4]);
    int64_t r = blosc2_schunk_to_file(sc, argv[4]);
    if (r < 0) die("to_file", r);
    blosc2_schunk_free(sc);
    free(buf);
  } else if (!strcmp(op, "fill")) {
    int64_t n = atoll(argv[2]);
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 8;
    blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
    st.contiguous = true;
    st.urlpath = argv[3];
    st.cparams = &cp;
    remove(argv[3]);
    blosc2_schunk *sc = blosc2_schunk_new(&st);
    if (!sc) die("schunk_new", 0);
    int64_t r = blosc2_schunk_fill_special(sc, n, BLOSC2_SPECIAL_ZERO, 8);
    if (r != n) die("fill_special", r);
    blosc2_schunk_free(sc);
  } else if (!strcmp(op, "from_buffer") || !strcmp(op, "to_file_mem")) {
    int64_t len;
    uint8_t *buf = read_file(argv[2], &len);
    int copy = !strcmp(op, "from_buffer");
    blosc2_schunk *sc = blosc2_schunk_from_buffer(buf, len, copy);
    if (!sc) die("from_buffer", 0);
    if (copy) {
      free(buf);
      buf = NULL;
    } else {
      remove(argv[3]);
      int64_t r = blosc2_schunk_to_file(sc, argv[3]);
      if (r < 0) die("to_file", r);
    }
    blosc2_schunk_free(sc);
    free(buf);
  } else {
    blosc2_schunk *sc = blosc2_schunk_open(argv[2]);
    if (!sc) die("open", 0);
    const char *dst = argv[3];
    if (!strcmp(op, "open")) {
    } else if (!strcmp(op, "to_file")) {
      remove(dst);
      int64_t r = blosc2_schunk_to_file(sc, dst);
      if (r < 0) die("to_file", r);
    } else if (!strcmp(op, "append_file")) {
      remove(dst);
      int64_t r = blosc2_schunk_append_file(sc, dst);
      if (r < 0) die("append_file", r);
    } else if (!strcmp(op, "to_buffer")) {
      uint8_t *p;
      bool needs_free;
      int64_t r = blosc2_schunk_to_buffer(sc, &p, &needs_free);
      if (r < 0) die("to_buffer", r);
      if (needs_free) free(p);
    } else if (!strncmp(op, "copy_", 5)) {
      const char *k = op + 5;
      char cmd[4096];
      snprintf(cmd, sizeof cmd, "rm -rf '%s'", dst);
      if (system(cmd) != 0) die("rm", 0);
      int recode = !strcmp(k, "recode");
      if (recode) copy_clevel = 1;
      int contiguous = !strcmp(k, "memory") || !strcmp(k, "cframe") || recode;
      int on_disk = !strcmp(k, "cframe") || !strcmp(k, "sframe") || recode;
      blosc2_schunk_free(copy_to(sc, contiguous, on_disk ? dst : NULL));
    } else if (!strcmp(op, "append1")) {
      void *one = calloc(1, sc->chunksize);
      int64_t r = blosc2_schunk_append_buffer(sc, one, sc->chunksize);
      if (r != sc->nchunks) die("append_buffer", r);
      free(one);
    } else if (!strcmp(op, "slice")) {
      int64_t n = sc->nchunks, cs = sc->chunksize;
      int64_t start = (n / 2) * cs / sc->typesize;
      int64_t stop = start + 1000 * cs / sc->typesize;
      void *out = malloc(1000 * cs);
      int r = blosc2_schunk_get_slice_buffer(sc, start, stop, out);
      if (r < 0) die("get_slice_buffer", r);
      free(out);
    } else {
      die(op, 0);
    }
    blosc2_schunk_free(sc);
  }
  printf("%.6f\n", now() - t0);
  blosc2_destroy();
  return 0;
}
