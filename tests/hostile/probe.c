/*
 * Hostile-frame probe: deterministic mutants of a corpus of frames, each opened and read in a
 * child process under an address-space limit and a CPU-time limit.
 *
 * Built against either library (it uses only blosc2.h and b2nd.h, so the same source links with
 * libb2frame or with the reference c-blosc2); scripts/hostile-probe.sh builds and runs it.
 *
 * Usage: probe [options] BASELIST
 *   BASELIST: one base a line, "cframe PATH OFFSET" (a frame at OFFSET of a file) or
 *             "sframe DIR" (an sframe directory: chunks.b2frame and %08X.chunk files).
 *   --per-base N   mutants of each base (default 100)
 *   --seed S       seed of the mutant generator (default 1)
 *   --as-mib M     RLIMIT_AS of each child in MiB (default 256; 0: no limit)
 *   --cpu S        RLIMIT_CPU of each child in seconds (default 1)
 *   --work DIR     scratch directory (files and sframes of the mutants), must exist
 *   --tsv FILE     one line per mutant: id, mode, outcome, peak RSS growth (KiB), CPU
 *                  ms, mutated file, edits, frames opened, chunks read, lazy chunks read
 *   --keep DIR     writes each failing mutant there (its bytes and what was mutated)
 *   --only B:K     runs only mutant K of base B (and keeps it when --keep is given)
 *   --shard I/N    runs only the bases whose number is I modulo N (for parallel runs)
 *
 * What a mutant is: a base's bytes (a cframe at its offset, or one file of an sframe: the index
 * or a chunk file) with one to three edits: bit flips, random bytes, interesting 32-bit values at
 * random places, at the frame header's fields, at the chunk headers' fields and in the trailer,
 * truncation, splicing. Mutant 0 is the base itself; mutants 1-16 forge a chunk's claims
 * (nbytes just under 2 GiB in blocks of 1 byte to 2 GiB, memcpyed or not; for sframes a chunk
 * file cut to its 32-byte header too). Which reading path it goes through depends on its number: an in-memory
 * frame (blosc2_schunk_from_buffer, copy or not), a cframe file (blosc2_schunk_open), a frame at
 * an offset of a file (blosc2_schunk_open_offset), an sframe (blosc2_schunk_open on the
 * directory); each also as a b2nd array. Every opened frame is read whole: every chunk through
 * get_chunk, get_lazychunk (which is lazy for frames on storage), decompress_ctx and getitem_ctx
 * on both, VL blocks, decompress_chunk, a slice, every metalayer and vlmetalayer, to_buffer.
 *
 * A child that exits 0 passed; a signal (SIGSEGV, SIGABRT from an allocation failure, SIGXCPU
 * from the CPU limit, SIGALRM from the 20 s wall-clock watchdog) or another exit code is a
 * failure. Exit status of the probe: 0 when every mutant passed, 1 otherwise.
 */
#define _GNU_SOURCE
#include <blosc2.h>
#include <b2nd.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* Largest destination the probe allocates for one decode: chunks claiming more are decoded into
 * this much (their decode must then fail cleanly), so the probe's own allocations stay small. */
#define DEST_CAP (8 << 20)
#define MAX_FILES 4096

typedef struct {
  char name[64];
  uint8_t *bytes;
  size_t len;
} file_t;

typedef struct {
  int sparse;
  char path[4096];
  int64_t offset;     /* cframe: where the frame starts in the file */
  uint8_t *prefix;    /* cframe: the file's bytes before the frame */
  file_t frame;       /* cframe: the frame's bytes */
  file_t *files;      /* sframe: index (files[0]) and chunk files */
  int nfiles;
  int64_t chunk_at[512]; /* chunk positions in the cframe (from an in-memory open) */
  int nchunk_at;
} base_t;

/* splitmix64 */
static uint64_t rng_state;
static uint64_t rnd(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }

static const uint32_t interesting[] = {
    0u,          1u,          2u,          4u,          16u,         31u,         32u,
    33u,         255u,        256u,        4096u,       65535u,      65536u,      0x7fffu,
    0x8000u,     0x00ffffffu, 0x3fffffffu, 0x40000000u, 0x7fffffe0u, 0x7ffffff0u, 0x7fffffffu,
    0x80000000u, 0x80000001u, 0xfffffff0u, 0xfffffffeu, 0xffffffffu, 0x10000000u, 0x01000000u,
};
#define NINTERESTING (sizeof(interesting) / sizeof(interesting[0]))

static uint32_t pick_interesting(size_t len) {
  switch (below(8)) {
    case 0: return (uint32_t)len;
    case 1: return (uint32_t)len + 1 + (uint32_t)below(64);
    case 2: return (uint32_t)below(len + 1);
    default: return interesting[below(NINTERESTING)];
  }
}

static void put32le(uint8_t *p, uint32_t v) {
  p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}
static void put32be(uint8_t *p, uint32_t v) {
  p[3] = v; p[2] = v >> 8; p[1] = v >> 16; p[0] = v >> 24;
}

/* Frame header fields (big-endian msgpack payloads): header_len, frame_len (high, low word),
 * nbytes (high, low), cbytes (high, low), typesize, blocksize, chunksize. */
static const int frame_fields[] = {11, 16, 20, 30, 34, 39, 43, 48, 53, 58};
/* Chunk header fields (little-endian): nbytes, blocksize, cbytes; then byte fields. */
static const int chunk_fields32[] = {4, 8, 12, 16, 20};
static const int chunk_bytes[] = {0, 1, 2, 3, 31, 30, 29, 28};

/* The claims of the hostile cases, written over the chunk header at `c`: a chunk that
 * claims nbytes just under 2 GiB in small blocks, memcpyed (so cbytes = nbytes + 32) or not,
 * with a file cut after its 32-byte header when `cut` (a 32-byte sframe chunk file). Variant
 * `v` picks the blocksize and the flags. */
static void forge_claims(uint8_t *buf, size_t *len, int64_t c, int v, int cut, char *w,
                         size_t wsz) {
  static const uint32_t bsizes[] = {1, 16, 4096, 0x7fffffdf};
  uint32_t bs = bsizes[v % 4];
  int memcpyed = (v / 4) % 2 == 0;
  if ((size_t)c + 32 > *len) return;
  put32le(buf + c + 4, 0x7fffffdfu);        /* nbytes */
  put32le(buf + c + 8, bs);                 /* blocksize */
  put32le(buf + c + 12, memcpyed ? 0x7fffffffu : 0x7fffff00u); /* cbytes */
  if (memcpyed) buf[c + 2] |= 0x02;         /* flags: memcpyed */
  else buf[c + 2] &= (uint8_t)~0x02;
  if (cut) *len = (size_t)c + 32;
  snprintf(w, wsz, "forge%d%s@%lld", v, cut ? "cut" : "", (long long)c);
}

/* One edit of buf (len may shrink: truncation); `chunks` are chunk positions in buf. */
static void edit(uint8_t *buf, size_t *len, const int64_t *chunks, int nchunks, char *what,
                 size_t whatsz) {
  size_t n = *len;
  char w[96];
  if (n == 0) return;
  int kind = (int)below(12);
  switch (kind) {
    case 0: { /* bit flips */
      int k = 1 + (int)below(4);
      for (int i = 0; i < k; i++) buf[below(n)] ^= (uint8_t)(1u << below(8));
      snprintf(w, sizeof w, "flip%d", k);
      break;
    }
    case 1: { /* random bytes */
      int k = 1 + (int)below(8);
      for (int i = 0; i < k; i++) buf[below(n)] = (uint8_t)rnd();
      snprintf(w, sizeof w, "bytes%d", k);
      break;
    }
    case 2: { /* an interesting int32 anywhere, either byte order */
      size_t at = below(n > 4 ? n - 3 : 1);
      uint32_t v = pick_interesting(n);
      if (at + 4 <= n) (rnd() & 1 ? put32le : put32be)(buf + at, v);
      snprintf(w, sizeof w, "int@%zu=%u", at, v);
      break;
    }
    case 3:
    case 4: { /* a frame header field */
      int f = frame_fields[below(sizeof frame_fields / sizeof frame_fields[0])];
      uint32_t v = pick_interesting(n);
      if ((size_t)f + 4 <= n) put32be(buf + f, v);
      snprintf(w, sizeof w, "fhdr@%d=%u", f, v);
      break;
    }
    case 5:
    case 6:
    case 7: { /* a chunk header field (or the chunk-file header of an sframe chunk) */
      int64_t c = nchunks ? chunks[below(nchunks)] : 0;
      if (below(3) == 0) {
        int f = chunk_bytes[below(sizeof chunk_bytes / sizeof chunk_bytes[0])];
        if ((size_t)(c + f) < n) buf[c + f] = (uint8_t)rnd();
        snprintf(w, sizeof w, "cbyte@%lld+%d", (long long)c, f);
      } else {
        int f = chunk_fields32[below(sizeof chunk_fields32 / sizeof chunk_fields32[0])];
        uint32_t v = pick_interesting(n);
        if ((size_t)(c + f + 4) <= n) put32le(buf + c + f, v);
        snprintf(w, sizeof w, "chdr@%lld+%d=%u", (long long)c, f, v);
      }
      break;
    }
    case 8: { /* the trailer and the offsets index before it: the last 160 bytes */
      size_t from = n > 160 ? n - 160 : 0;
      size_t at = from + below(n - from);
      if (rnd() & 1) {
        buf[at] = (uint8_t)rnd();
        snprintf(w, sizeof w, "tail@%zu", at);
      } else {
        uint32_t v = pick_interesting(n);
        if (at + 4 <= n) (rnd() & 1 ? put32le : put32be)(buf + at, v);
        snprintf(w, sizeof w, "tailint@%zu=%u", at, v);
      }
      break;
    }
    case 9: { /* truncation */
      size_t to = below(n);
      *len = to;
      snprintf(w, sizeof w, "trunc%zu", to);
      break;
    }
    case 10: { /* splice: copy a range over another */
      size_t a = below(n), b = below(n);
      size_t k = 1 + below(64);
      if (a + k > n) k = n - a;
      if (b + k > n) k = n - b;
      memmove(buf + b, buf + a, k);
      snprintf(w, sizeof w, "splice%zu>%zu+%zu", a, b, k);
      break;
    }
    default: { /* int64 high word: sign bits of offsets in the index */
      size_t at = below(n > 8 ? n - 7 : 1);
      if (at + 8 <= n) {
        buf[at + 7] = (uint8_t)(0x80 | below(16));
      }
      snprintf(w, sizeof w, "hi@%zu", at);
      break;
    }
  }
  size_t used = strlen(what);
  snprintf(what + used, whatsz - used, "%s%s", used ? "," : "", w);
}

/* ----------------------------------------------------------------------------------------- */
/* The reads every opened frame gets. */

static unsigned long long stat_opened, stat_chunks, stat_lazy;

static void decode_chunk(blosc2_schunk *s, uint8_t *c, int32_t cb, uint8_t *dest) {
  int32_t nbytes = 0, cbytes = 0, bs = 0;
  if (blosc2_cbuffer_sizes(c, &nbytes, &cbytes, &bs) < 0) return;
  int32_t size = nbytes < 0 ? 0 : nbytes > DEST_CAP ? DEST_CAP : nbytes;
  blosc2_decompress_ctx(s->dctx, c, cb, dest, size);
  int32_t ts = s->typesize > 0 ? s->typesize : 1;
  int32_t nitems = size / ts;
  if (nitems > 0) {
    int32_t start = (int32_t)below((uint64_t)nitems);
    int32_t k = nitems - start < 100 ? nitems - start : 100;
    blosc2_getitem_ctx(s->dctx, c, cb, start, k, dest, DEST_CAP);
    blosc2_getitem_ctx(s->dctx, c, cb, 0, 1, dest, DEST_CAP);
  }
  int32_t nblocks = 0;
  if (blosc2_vlchunk_get_nblocks(c, cb, &nblocks) >= 0 && nblocks > 0) {
    uint8_t **blocks = NULL;
    int32_t *sizes = NULL;
    int32_t nb = nblocks > 64 ? 64 : nblocks;
    blocks = calloc((size_t)nblocks, sizeof *blocks);
    sizes = calloc((size_t)nblocks, sizeof *sizes);
    if (blocks && sizes && nblocks <= 4096) {
      int r = blosc2_vldecompress_ctx(s->dctx, c, cb, (void **)blocks, sizes, nblocks);
      if (r > 0)
        for (int j = 0; j < nblocks; j++) free(blocks[j]);
    }
    free(blocks);
    free(sizes);
    (void)nb;
  }
}

static void read_schunk(blosc2_schunk *s) {
  stat_opened++;
  uint8_t *dest = malloc(DEST_CAP);
  if (!dest) _exit(90);
  int64_t n = s->nchunks > 256 ? 256 : s->nchunks;
  for (int64_t i = 0; i < n; i++) {
    uint8_t *c = NULL;
    bool nf = false;
    int cb = blosc2_schunk_get_chunk(s, i, &c, &nf);
    if (cb > 0 && c) {
      stat_chunks++;
      decode_chunk(s, c, cb, dest);
    }
    if (nf) free(c);
    c = NULL;
    nf = false;
    cb = blosc2_schunk_get_lazychunk(s, i, &c, &nf);
    if (cb > 0 && c) {
      stat_lazy++;
      decode_chunk(s, c, cb, dest);
      int32_t nblocks = 0;
      if (blosc2_vlchunk_get_nblocks(c, cb, &nblocks) >= 0) {
        for (int32_t j = 0; j < nblocks && j < 4; j++) {
          uint8_t *b = NULL;
          int32_t blen = 0;
          if (blosc2_schunk_get_vlblock(s, i, j, &b, &blen) >= 0) free(b);
        }
      }
    }
    if (nf) free(c);
    int32_t want = s->chunksize > 0 && s->chunksize <= DEST_CAP ? s->chunksize : DEST_CAP;
    blosc2_schunk_decompress_chunk(s, i, dest, want);
  }
  if (s->typesize > 0 && s->nbytes > 0) {
    int64_t items = s->nbytes / s->typesize;
    int64_t cap = DEST_CAP / s->typesize;
    int64_t stop = items < cap ? items : cap;
    int64_t start = stop > 0 ? (int64_t)below((uint64_t)stop) : 0;
    blosc2_schunk_get_slice_buffer(s, start, stop, dest);
  }
  for (int j = 0; j < s->nmetalayers && j < 16; j++) {
    if (!s->metalayers[j] || !s->metalayers[j]->name) continue;
    uint8_t *content = NULL;
    int32_t len = 0;
    if (blosc2_meta_get(s, s->metalayers[j]->name, &content, &len) >= 0) free(content);
  }
  int nv = s->nvlmetalayers;
  if (nv > 0 && nv <= 8192) {
    char **names = calloc((size_t)nv, sizeof *names);
    if (names) {
      int got = blosc2_vlmeta_get_names(s, names);
      for (int j = 0; j < got && j < nv; j++) {
        uint8_t *content = NULL;
        int32_t len = 0;
        if (names[j] && blosc2_vlmeta_get(s, names[j], &content, &len) >= 0) free(content);
      }
      free(names);
    }
  }
  uint8_t *cframe = NULL;
  bool nf = false;
  int64_t len = blosc2_schunk_to_buffer(s, &cframe, &nf);
  if (len > 0 && nf) free(cframe);
  free(dest);
}

static void read_b2nd(b2nd_array_t *a) {
  if (!a || a->ndim < 0 || a->ndim > B2ND_MAX_DIM) return;
  int64_t start[B2ND_MAX_DIM], stop[B2ND_MAX_DIM], shape[B2ND_MAX_DIM];
  int64_t items = 1;
  for (int d = 0; d < a->ndim; d++) {
    start[d] = 0;
    stop[d] = a->shape[d] < 4 ? a->shape[d] : 4;
    shape[d] = stop[d] - start[d];
    if (shape[d] < 0) return;
    items *= shape[d];
  }
  int64_t isz = a->sc ? a->sc->typesize : 1;
  if (isz <= 0 || items * isz > DEST_CAP) return;
  uint8_t *buf = malloc(DEST_CAP);
  if (!buf) _exit(90);
  b2nd_get_slice_cbuffer(a, start, stop, buf, shape, items * isz);
  if (a->nitems > 0 && a->nitems * isz <= DEST_CAP) b2nd_to_cbuffer(a, buf, a->nitems * isz);
  free(buf);
}

/* ----------------------------------------------------------------------------------------- */

enum { MODE_BUF_NOCOPY, MODE_BUF_COPY, MODE_FILE, MODE_OFFSET, MODE_SFRAME };
static const char *mode_names[] = {"buffer", "buffer-copy", "cframe-file", "offset", "sframe"};

static int write_file(const char *path, const uint8_t *a, size_t alen, const uint8_t *b,
                      size_t blen) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  int ok = (alen == 0 || fwrite(a, 1, alen, f) == alen) && (blen == 0 || fwrite(b, 1, blen, f) == blen);
  return fclose(f) == 0 && ok ? 0 : -1;
}

static long rss_kib(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long size = 0, res = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &size, &res) != 2) res = 0;
    fclose(f);
  }
  return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static void child(int mode, const char *path, int64_t offset, uint8_t *buf, size_t len,
                  long as_mib, long cpu) {
  if (as_mib > 0) {
    struct rlimit rl = {(rlim_t)as_mib << 20, (rlim_t)as_mib << 20};
    setrlimit(RLIMIT_AS, &rl);
  }
  if (cpu > 0) {
    struct rlimit rl = {(rlim_t)cpu, (rlim_t)cpu + 1};
    setrlimit(RLIMIT_CPU, &rl);
  }
  alarm(20);
  blosc2_init();
  long start_rss = rss_kib();
  blosc2_schunk *s = NULL;
  b2nd_array_t *a = NULL;
  switch (mode) {
    case MODE_BUF_NOCOPY:
    case MODE_BUF_COPY:
      s = blosc2_schunk_from_buffer(buf, (int64_t)len, mode == MODE_BUF_COPY);
      if (s) read_schunk(s);
      if (s) blosc2_schunk_free(s);
      if (b2nd_from_cframe(buf, (int64_t)len, mode == MODE_BUF_COPY, &a) >= 0 && a) {
        read_b2nd(a);
        b2nd_free(a);
      }
      break;
    case MODE_FILE:
    case MODE_SFRAME:
      s = blosc2_schunk_open(path);
      if (s) read_schunk(s);
      if (s) blosc2_schunk_free(s);
      if (b2nd_open(path, &a) >= 0 && a) {
        read_b2nd(a);
        b2nd_free(a);
      }
      break;
    case MODE_OFFSET:
      s = blosc2_schunk_open_offset(path, offset);
      if (s) read_schunk(s);
      if (s) blosc2_schunk_free(s);
      if (b2nd_open_offset(path, &a, offset) >= 0 && a) {
        read_b2nd(a);
        b2nd_free(a);
      }
      break;
  }
  /* What was reached, and the resident size the child started from (its peak is measured from
   * there), go back to the parent by a pipe (fd 3). */
  unsigned long long st[4] = {stat_opened, stat_chunks, stat_lazy, (unsigned long long)start_rss};
  if (write(3, st, sizeof st) < 0) { /* no pipe: fine */ }
  _exit(0);
}

static uint8_t *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
  if (b && n > 0 && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *len = (size_t)(n > 0 ? n : 0);
  return b;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const file_t *)a)->name, ((const file_t *)b)->name);
}

static int load_base(base_t *b) {
  if (b->sparse) {
    DIR *d = opendir(b->path);
    if (!d) return -1;
    struct dirent *e;
    b->files = calloc(MAX_FILES, sizeof(file_t));
    while ((e = readdir(d)) && b->nfiles < MAX_FILES) {
      if (e->d_name[0] == '.') continue;
      file_t *f = &b->files[b->nfiles];
      snprintf(f->name, sizeof f->name, "%s", e->d_name);
      char p[8192];
      snprintf(p, sizeof p, "%s/%s", b->path, e->d_name);
      f->bytes = read_all(p, &f->len);
      if (!f->bytes) continue;
      b->nfiles++;
    }
    closedir(d);
    /* the index first ("chunks.b2frame" sorts after the hex ids; move it) */
    qsort(b->files, (size_t)b->nfiles, sizeof(file_t), by_name);
    for (int i = 0; i < b->nfiles; i++)
      if (!strcmp(b->files[i].name, "chunks.b2frame") && i > 0) {
        file_t t = b->files[0];
        b->files[0] = b->files[i];
        b->files[i] = t;
      }
    return b->nfiles > 0 && !strcmp(b->files[0].name, "chunks.b2frame") ? 0 : -1;
  }
  size_t len;
  uint8_t *all = read_all(b->path, &len);
  if (!all || (size_t)b->offset > len) return -1;
  b->prefix = all;
  b->frame.bytes = all + b->offset;
  b->frame.len = len - (size_t)b->offset;
  /* Chunk positions, from an in-memory open without copy: get_chunk points into the buffer. */
  blosc2_schunk *s = blosc2_schunk_from_buffer(b->frame.bytes, (int64_t)b->frame.len, false);
  if (s) {
    for (int64_t i = 0; i < s->nchunks && b->nchunk_at < 512; i++) {
      uint8_t *c;
      bool nf;
      if (blosc2_schunk_get_chunk(s, i, &c, &nf) > 0) {
        if (!nf && c >= b->frame.bytes && c < b->frame.bytes + b->frame.len)
          b->chunk_at[b->nchunk_at++] = c - b->frame.bytes;
        if (nf) free(c);
      }
    }
    blosc2_schunk_free(s);
  }
  return 0;
}

static int rm_tree(const char *path) {
  DIR *d = opendir(path);
  if (!d) return unlink(path);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", path, e->d_name);
    rm_tree(p);
  }
  closedir(d);
  return rmdir(path);
}

static void keep_mutant(const char *dir, int bi, int k, const char *what, const file_t *f,
                        const uint8_t *bytes, size_t len, const char *outcome) {
  char p[8192];
  snprintf(p, sizeof p, "%s/b%d-m%d.bin", dir, bi, k);
  write_file(p, bytes, len, NULL, 0);
  snprintf(p, sizeof p, "%s/b%d-m%d.txt", dir, bi, k);
  FILE *t = fopen(p, "w");
  if (t) {
    fprintf(t, "base %d mutant %d file %s edits %s outcome %s\n", bi, k, f ? f->name : "-", what,
            outcome);
    fclose(t);
  }
}

int main(int argc, char **argv) {
  long per_base = 100, seed = 1, as_mib = 256, cpu = 1;
  const char *work = NULL, *tsv = NULL, *keep = NULL, *list = NULL;
  int only_b = -1, only_k = -1, shard = 0, nshards = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--per-base") && i + 1 < argc) per_base = atol(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = atol(argv[++i]);
    else if (!strcmp(argv[i], "--as-mib") && i + 1 < argc) as_mib = atol(argv[++i]);
    else if (!strcmp(argv[i], "--cpu") && i + 1 < argc) cpu = atol(argv[++i]);
    else if (!strcmp(argv[i], "--work") && i + 1 < argc) work = argv[++i];
    else if (!strcmp(argv[i], "--tsv") && i + 1 < argc) tsv = argv[++i];
    else if (!strcmp(argv[i], "--keep") && i + 1 < argc) keep = argv[++i];
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
      if (sscanf(argv[++i], "%d:%d", &only_b, &only_k) != 2) return 2;
    } else if (!strcmp(argv[i], "--shard") && i + 1 < argc) {
      if (sscanf(argv[++i], "%d/%d", &shard, &nshards) != 2 || nshards < 1) return 2;
    } else list = argv[i];
  }
  if (!list || !work) {
    fprintf(stderr, "usage: probe [--per-base N] [--seed S] [--as-mib M] [--cpu S] --work DIR "
                    "[--tsv FILE] [--keep DIR] [--only B:K] BASELIST\n");
    return 2;
  }
  FILE *lf = fopen(list, "r");
  if (!lf) { perror(list); return 2; }
  static base_t bases[1024];
  int nb = 0;
  char kind[16], path[4096];
  long long off;
  char line[8192];
  while (fgets(line, sizeof line, lf) && nb < 1024) {
    off = 0;
    if (sscanf(line, "%15s %4095s %lld", kind, path, &off) < 2) continue;
    base_t *b = &bases[nb];
    b->sparse = !strcmp(kind, "sframe");
    snprintf(b->path, sizeof b->path, "%s", path);
    b->offset = off;
    if (load_base(b) != 0) {
      fprintf(stderr, "cannot load base %s\n", path);
      return 2;
    }
    nb++;
  }
  fclose(lf);
  FILE *out = tsv ? fopen(tsv, "w") : NULL;
  char fpath[8192], spath[8192];
  snprintf(fpath, sizeof fpath, "%s/m.b2frame", work);
  snprintf(spath, sizeof spath, "%s/m.b2sframe", work);
  unsigned long long total = 0, failed = 0, opened = 0, chunks = 0, lazy = 0;
  unsigned long long per_mode[5] = {0};
  long max_rss = 0, max_cpu = 0;
  char max_rss_id[64] = "", max_cpu_id[64] = "";
  uint8_t *mbuf = NULL;
  size_t mcap = 0;
  for (int bi = 0; bi < nb; bi++) {
    base_t *b = &bases[bi];
    if (only_b >= 0 && bi != only_b) continue;
    if (bi % nshards != shard) continue;
    if (b->sparse) { /* a pristine copy of the sframe; each mutant changes one file and restores it */
      rm_tree(spath);
      mkdir(spath, 0755);
      for (int i = 0; i < b->nfiles; i++) {
        char p[8192];
        snprintf(p, sizeof p, "%s/%s", spath, b->files[i].name);
        write_file(p, b->files[i].bytes, b->files[i].len, NULL, 0);
      }
    }
    for (int k = 0; k < per_base; k++) {
      if (only_k >= 0 && k != only_k) continue;
      rng_state = ((uint64_t)seed << 40) ^ ((uint64_t)bi << 20) ^ (uint64_t)k;
      rnd();
      /* sframes: the index or a chunk file (always a chunk file for the forged claims) */
      int fi = below(2) == 0 ? 0 : (int)below((uint64_t)b->nfiles);
      if (k >= 1 && k <= 16 && b->nfiles > 1) fi = 1 + (int)below((uint64_t)b->nfiles - 1);
      file_t *f = b->sparse ? &b->files[fi] : &b->frame;
      if (mcap < f->len + 64) {
        mcap = f->len + 64;
        mbuf = realloc(mbuf, mcap);
      }
      memcpy(mbuf, f->bytes, f->len);
      size_t mlen = f->len;
      char what[512] = "";
      int64_t chunk0 = 0;
      const int64_t *cat = b->sparse ? &chunk0 : b->chunk_at;
      int ncat = b->sparse ? (f == &b->files[0] ? 0 : 1) : b->nchunk_at;
      int nedits = 1 + (int)(below(4) == 0) + (int)(below(8) == 0);
      if (k >= 1 && k <= 16 && ncat > 0) {
        /* mutants 1-16: the forged claims at a chunk (every variant, each reading path) */
        forge_claims(mbuf, &mlen, cat[below((uint64_t)ncat)], (k - 1) % 8, b->sparse && k > 8,
                     what, sizeof what);
      } else if (k > 0 || per_base == 1) { /* mutant 0 of every base is the base itself */
        for (int e = 0; e < nedits; e++) edit(mbuf, &mlen, cat, ncat, what, sizeof what);
      }
      int mode;
      if (b->sparse) {
        mode = MODE_SFRAME;
        char p[8192];
        snprintf(p, sizeof p, "%s/%s", spath, f->name);
        write_file(p, mbuf, mlen, NULL, 0);
      } else {
        mode = (int)(k % 4);
        if (mode == MODE_FILE) write_file(fpath, mbuf, mlen, NULL, 0);
        if (mode == MODE_OFFSET) {
          if (b->offset == 0) { /* put it behind 1000 bytes of another file */
            static uint8_t pad[1000];
            memset(pad, 0x5a, sizeof pad);
            write_file(fpath, pad, sizeof pad, mbuf, mlen);
          } else {
            write_file(fpath, b->prefix, (size_t)b->offset, mbuf, mlen);
          }
        }
      }
      int64_t off = mode == MODE_OFFSET ? (b->offset == 0 ? 1000 : b->offset) : 0;
      int pfd[2];
      if (pipe(pfd) != 0) { perror("pipe"); return 2; }
      fflush(NULL);
      pid_t pid = fork();
      if (pid < 0) { perror("fork"); return 2; }
      if (pid == 0) {
        close(pfd[0]);
        if (pfd[1] != 3) { dup2(pfd[1], 3); close(pfd[1]); }
        child(mode, mode == MODE_SFRAME ? spath : fpath, off, mbuf, mlen, as_mib, cpu);
      }
      close(pfd[1]);
      int status = 0;
      struct rusage ru;
      while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {}
      unsigned long long st[4] = {0, 0, 0, 0};
      if (read(pfd[0], st, sizeof st) != sizeof st) memset(st, 0, sizeof st);
      close(pfd[0]);
      long rss = ru.ru_maxrss - (long)st[3];
      long cpu_ms = ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000 +
                    ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
      char outcome[32];
      int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (ok) snprintf(outcome, sizeof outcome, "ok");
      else if (WIFSIGNALED(status)) snprintf(outcome, sizeof outcome, "signal%d", WTERMSIG(status));
      else snprintf(outcome, sizeof outcome, "exit%d", WEXITSTATUS(status));
      total++;
      per_mode[mode]++;
      opened += st[0];
      chunks += st[1];
      lazy += st[2];
      if (rss > max_rss) { max_rss = rss; snprintf(max_rss_id, sizeof max_rss_id, "%d:%d", bi, k); }
      if (cpu_ms > max_cpu) { max_cpu = cpu_ms; snprintf(max_cpu_id, sizeof max_cpu_id, "%d:%d", bi, k); }
      if (out)
        fprintf(out, "%d:%d\t%s\t%s\t%ld\t%ld\t%s\t%s\t%llu\t%llu\t%llu\n", bi, k, mode_names[mode],
                outcome, rss, cpu_ms, f->name[0] ? f->name : "-", what[0] ? what : "none", st[0],
                st[1], st[2]);
      if (!ok) {
        failed++;
        fprintf(stderr, "FAIL %d:%d %s %s (%s, file %s, edits %s)\n", bi, k, b->path,
                mode_names[mode], outcome, f->name[0] ? f->name : "-", what);
      }
      if (keep && (!ok || only_b >= 0)) keep_mutant(keep, bi, k, what, f, mbuf, mlen, outcome);
      if (b->sparse) { /* restore the file */
        char p[8192];
        snprintf(p, sizeof p, "%s/%s", spath, f->name);
        write_file(p, f->bytes, f->len, NULL, 0);
      }
    }
  }
  if (out) fclose(out);
  printf("mutants %llu (buffer %llu, buffer-copy %llu, cframe-file %llu, offset %llu, sframe %llu)\n",
         total, per_mode[0], per_mode[1], per_mode[2], per_mode[3], per_mode[4]);
  printf("reached: %llu frames opened, %llu chunks read, %llu lazy chunks read\n", opened, chunks,
         lazy);
  printf("largest peak RSS growth: %ld KiB (mutant %s); most CPU: %ld ms (mutant %s)\n",
         max_rss, max_rss_id, max_cpu, max_cpu_id);
  printf("failed: %llu\n", failed);
  rm_tree(spath);
  unlink(fpath);
  return failed ? 1 : 0;
}
