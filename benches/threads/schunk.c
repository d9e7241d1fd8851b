/* Super-chunk compression and decompression through the public C API, as a C program written
 * for c-blosc2 calls it; compiled unchanged against b2frame and against c-blosc2 3.3.5 and run
 * one process per library (benches/threads/run.sh).
 *
 *   schunk DATA CODEC CLEVEL FILTER ROUNDS
 *     DATA   f64_smooth (sin series), i32_small (pseudo-random int32 below 100),
 *            f64_random (random 64-bit patterns: incompressible, stored as copies)
 *     CODEC  blosclz, lz4, lz4hc, zstd, zlib;  FILTER shuffle, bitshuffle, none
 *
 * 64 MiB of DATA are appended in 4 MiB chunks (`blosc2_schunk_append_buffer`) to a new
 * in-memory super-chunk, then every chunk is decompressed (`blosc2_schunk_decompress_chunk`)
 * into one 4 MiB buffer, with cparams and dparams nthreads 1 and with nthreads 2, alternating
 * in each of ROUNDS rounds; every round also times, on the calling thread, a memcpy of the
 * same bytes (each memcpyed chunk's payload, else the input, into the same buffer) and, for LZ4 and zstd, the
 * codec alone (see load_codecs) decoding every stream of every chunk into the same buffer. One line out, the best wall time of each
 * in seconds per 64 MiB:
 *
 *   comp_t1 comp_t2 decomp_t1 decomp_t2 memcpy codec nblocks cbytes
 *
 * (codec is 0 where the chunks hold no LZ4/zstd streams: BloscLZ, memcpyed chunks). The
 * output is checked against the input after every round; the chunks written at nthreads 1 and
 * 2 must be the same bytes (c-blosc2: same sizes). */
#include <blosc2.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The codec alone: LZ4 1.10.0 and zstd 1.5.7, which both libraries bundle, as c-blosc2's
 * library exports them (b2frame exports only the blosc2 API), loaded from B2_CODEC_LIB. */
static int (*LZ4_decompress_safe)(const char *src, char *dst, int srcsize, int dstcap);
static void *(*ZSTD_createDCtx)(void);
static size_t (*ZSTD_freeDCtx)(void *dctx);
static size_t (*ZSTD_decompressDCtx)(void *dctx, void *dst, size_t cap, const void *src,
                                     size_t n);
static unsigned (*ZSTD_isError)(size_t code);

static int load_codecs(void) {
  const char *path = getenv("B2_CODEC_LIB");
  void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (!h)
    return 0;
  *(void **)&LZ4_decompress_safe = dlsym(h, "LZ4_decompress_safe");
  *(void **)&ZSTD_createDCtx = dlsym(h, "ZSTD_createDCtx");
  *(void **)&ZSTD_freeDCtx = dlsym(h, "ZSTD_freeDCtx");
  *(void **)&ZSTD_decompressDCtx = dlsym(h, "ZSTD_decompressDCtx");
  *(void **)&ZSTD_isError = dlsym(h, "ZSTD_isError");
  return LZ4_decompress_safe && ZSTD_createDCtx && ZSTD_freeDCtx && ZSTD_decompressDCtx &&
         ZSTD_isError;
}

#define CHUNK (4 << 20)
#define MAXCHUNKS 256
/* B2_THR_CHUNKS: how many 4 MiB chunks (default 16: 64 MiB; 2 keeps everything in cache). */
static int NCHUNKS = 16;

/* B2_THR_CLOCK=process times with the process's CPU clock (all threads) instead of the wall
 * clock: on a loaded machine it tells the work done, not the time it took. */
static clockid_t clock_id = CLOCK_MONOTONIC;

static double now(void) {
  struct timespec t;
  clock_gettime(clock_id, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int32_t rd32(const uint8_t *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}

static void fill(const char *kind, uint8_t *dst, size_t n, int *typesize) {
  uint64_t x = 42;
  if (!strcmp(kind, "f64_smooth")) {
    *typesize = 8;
    for (size_t i = 0; i < n / 8; i++) {
      double v = sin(i * 0.001) * 1000;
      memcpy(dst + 8 * i, &v, 8);
    }
  } else if (!strcmp(kind, "i32_small")) {
    *typesize = 4;
    for (size_t i = 0; i < n / 4; i++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      int32_t v = (int32_t)((x >> 33) % 100);
      memcpy(dst + 4 * i, &v, 4);
    }
  } else if (!strcmp(kind, "f64_random")) {
    *typesize = 8;
    for (size_t i = 0; i < n / 8; i++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      uint64_t y = x ^ (x >> 29) ^ ((x >> 11) << 32);
      memcpy(dst + 8 * i, &y, 8);
    }
  } else {
    fprintf(stderr, "unknown data %s\n", kind);
    exit(2);
  }
}

/* Decodes every LZ4/zstd stream of a regular chunk with the codec alone, into dst (the
 * streams in their places of the shuffled block); returns 0 if the chunk has none. */
static int codec_alone(const uint8_t *c, uint8_t *dst, void *zctx) {
  uint8_t flags = c[2];
  int typesize = c[3];
  int32_t nbytes = rd32(c + 4), blocksize = rd32(c + 8);
  int format = flags >> 5;
  if ((flags & 0x02) || ((c[31] >> 4) & 7) || (format != 1 && format != 4) || (c[31] & 1))
    return 0;
  int nblocks = nbytes / blocksize + (nbytes % blocksize ? 1 : 0);
  for (int j = 0; j < nblocks; j++) {
    int bsize = j == nblocks - 1 && nbytes % blocksize ? nbytes % blocksize : blocksize;
    int leftover = bsize != blocksize;
    int nstreams = (flags & 0x10) || leftover ? 1 : typesize;
    int neblock = bsize / nstreams;
    const uint8_t *p = c + rd32(c + 32 + 4 * j);
    uint8_t *d = dst + (size_t)j * blocksize;
    for (int s = 0; s < nstreams; s++, d += neblock) {
      int32_t cs = rd32(p);
      p += 4;
      if (cs == 0)
        continue;
      if (cs < 0) {
        p++;
        continue;
      }
      if (cs == neblock) {
        memcpy(d, p, cs);
      } else if (format == 1) {
        if (LZ4_decompress_safe((const char *)p, (char *)d, cs, neblock) != neblock)
          return -1;
      } else {
        size_t r = ZSTD_decompressDCtx(zctx, d, neblock, p, cs);
        if (ZSTD_isError(r) || r != (size_t)neblock)
          return -1;
      }
      p += cs;
    }
  }
  return 1;
}

static blosc2_schunk *make(int t, int codec, int clevel, int filter, int typesize) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = codec;
  cp.clevel = clevel;
  cp.typesize = typesize;
  cp.nthreads = t;
  cp.filters[BLOSC2_MAX_FILTERS - 1] = filter;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = t;
  blosc2_storage st = {.contiguous = false, .cparams = &cp, .dparams = &dp};
  return blosc2_schunk_new(&st);
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: schunk DATA CODEC CLEVEL FILTER ROUNDS\n");
    return 2;
  }
  int typesize;
  if (getenv("B2_THR_CHUNKS"))
    NCHUNKS = atoi(getenv("B2_THR_CHUNKS"));
  if (NCHUNKS < 1 || NCHUNKS > MAXCHUNKS) {
    fprintf(stderr, "B2_THR_CHUNKS out of 1..%d\n", MAXCHUNKS);
    return 2;
  }
  size_t total = (size_t)CHUNK * NCHUNKS;
  uint8_t *src = malloc(total), *out = malloc(CHUNK);
  fill(argv[1], src, total, &typesize);
  blosc2_init();
  int codec = blosc2_compname_to_compcode(argv[2]);
  int clevel = atoi(argv[3]);
  int filter = !strcmp(argv[4], "shuffle") ? BLOSC_SHUFFLE
               : !strcmp(argv[4], "bitshuffle") ? BLOSC_BITSHUFFLE
                                                  : BLOSC_NOFILTER;
  int rounds = atoi(argv[5]);
  if (codec < 0 || rounds < 1) {
    fprintf(stderr, "bad codec or rounds\n");
    return 2;
  }
  /* B2_THR_T=1 or 2: that thread count only (for profilers). */
  if (getenv("B2_THR_CLOCK") && !strcmp(getenv("B2_THR_CLOCK"), "process"))
    clock_id = CLOCK_PROCESS_CPUTIME_ID;
  int tmin = getenv("B2_THR_T") ? atoi(getenv("B2_THR_T")) : 1;
  int tmax = getenv("B2_THR_T") ? tmin : 2;
  double comp[3] = {1e9, 1e9, 1e9}, dec[3] = {1e9, 1e9, 1e9}, mem = 1e9, alone = 1e9;
  int nblocks = 0, has_codec = load_codecs();
  int64_t cbytes[3] = {0};
  void *zctx = has_codec ? ZSTD_createDCtx() : NULL;
  for (int r = 0; r < rounds; r++) {
    for (int t = tmin; t <= tmax; t++) {
      blosc2_schunk *sc = make(t, codec, clevel, filter, typesize);
      if (!sc) {
        fprintf(stderr, "blosc2_schunk_new failed\n");
        return 1;
      }
      double w = now();
      for (int i = 0; i < NCHUNKS; i++) {
        if (blosc2_schunk_append_buffer(sc, src + (size_t)i * CHUNK, CHUNK) != i + 1) {
          fprintf(stderr, "append failed\n");
          return 1;
        }
      }
      w = now() - w;
      if (w < comp[t])
        comp[t] = w;
      cbytes[t] = sc->cbytes;
      /* Three passes over the 16 chunks; the best counts. */
      for (int pass = 0; pass < 3; pass++) {
        w = now();
        for (int i = 0; i < NCHUNKS; i++) {
          if (blosc2_schunk_decompress_chunk(sc, i, out, CHUNK) != CHUNK) {
            fprintf(stderr, "decompress failed\n");
            return 1;
          }
        }
        w = now() - w;
        if (w < dec[t])
          dec[t] = w;
      }
      for (int i = 0; i < NCHUNKS; i++) {
        blosc2_schunk_decompress_chunk(sc, i, out, CHUNK);
        if (memcmp(out, src + (size_t)i * CHUNK, CHUNK)) {
          fprintf(stderr, "MISMATCH chunk %d nthreads %d\n", i, t);
          return 1;
        }
      }
      if (t == tmin) {
        /* memcpy of the same bytes, and the codec alone on the same streams. */
        uint8_t *chunks[MAXCHUNKS];
        bool nf[MAXCHUNKS];
        for (int i = 0; i < NCHUNKS; i++)
          if (blosc2_schunk_get_chunk(sc, i, &chunks[i], &nf[i]) < 0) {
            fprintf(stderr, "get_chunk failed\n");
            return 1;
          }
        nblocks = CHUNK / rd32(chunks[0] + 8) + (CHUNK % rd32(chunks[0] + 8) ? 1 : 0);
        for (int pass = 0; pass < 3; pass++) {
          w = now();
          for (int i = 0; i < NCHUNKS; i++) {
            /* A memcpyed chunk's payload; the input for the others. */
            const uint8_t *from = rd32(chunks[i] + 12) == CHUNK + BLOSC_EXTENDED_HEADER_LENGTH
                                      ? chunks[i] + BLOSC_EXTENDED_HEADER_LENGTH
                                      : src + (size_t)i * CHUNK;
            memcpy(out, from, CHUNK);
          }
          w = now() - w;
          if (w < mem)
            mem = w;
          if (!has_codec)
            continue;
          w = now();
          for (int i = 0; i < NCHUNKS; i++) {
            int k = codec_alone(chunks[i], out, zctx);
            if (k < 0) {
              fprintf(stderr, "codec alone failed\n");
              return 1;
            }
            has_codec &= k;
          }
          w = now() - w;
          if (w < alone)
            alone = w;
        }
        for (int i = 0; i < NCHUNKS; i++)
          if (nf[i])
            free(chunks[i]);
      }
      blosc2_schunk_free(sc);
    }
  }
  if (tmin == 1 && tmax == 2 && cbytes[1] != cbytes[2]) {
    fprintf(stderr, "cbytes differ with nthreads: %lld %lld\n", (long long)cbytes[1],
            (long long)cbytes[2]);
    return 1;
  }
  if (zctx)
    ZSTD_freeDCtx(zctx);
  blosc2_destroy();
  printf("%.6f %.6f %.6f %.6f %.6f %.6f %d %lld\n", comp[1], comp[2], dec[1], dec[2], mem,
         has_codec ? alone : 0.0, nblocks, (long long)cbytes[tmin]);
  free(src);
  free(out);
  return 0;
}
