/* Writes and reads b2nd frames through the C API, for the dynamic-plugin stage
 * (scripts/plugins-test.sh). Built against libb2frame, or against the reference c-blosc2.
 *
 *   plugin_frames write CODEC ROWS COLS TYPESIZE RAW OUT   a ROWS x COLS array of the items in
 *                                                         RAW as one chunk and block, written
 *                                                         with codec CODEC into cframe OUT
 *   plugin_frames read FRAME...                           decodes every chunk of each FRAME, in
 *                                                         order, in this one process, into
 *                                                         FRAME.out; exit 1 at the first failure
 */
#include <blosc2.h>
#include <b2nd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *slurp(const char *path, long *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  *len = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *buf = malloc(*len > 0 ? *len : 1);
  if (fread(buf, 1, *len, f) != (size_t)*len) { free(buf); buf = NULL; }
  fclose(f);
  return buf;
}

static int write_frame(int codec, int64_t rows, int64_t cols, int typesize, const char *raw,
                       const char *out) {
  long len = 0;
  void *data = slurp(raw, &len);
  if (data == NULL || len != rows * cols * typesize) {
    fprintf(stderr, "write: %s is not %lld items of %d bytes\n", raw, (long long)(rows * cols), typesize);
    return 1;
  }
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = (uint8_t)codec;
  cp.typesize = typesize;
  cp.splitmode = BLOSC_NEVER_SPLIT;
  cp.filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_NOFILTER;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage st = {.contiguous = true, .urlpath = (char *)out, .cparams = &cp, .dparams = &dp};
  int64_t shape[2] = {rows, cols};
  int32_t chunk[2] = {(int32_t)rows, (int32_t)cols};
  const char *dtype = typesize == 1 ? "|u1" : "<u2";
  blosc2_remove_urlpath(out);
  b2nd_context_t *ctx = b2nd_create_ctx(&st, 2, shape, chunk, chunk, dtype, DTYPE_NUMPY_FORMAT, NULL, 0);
  if (ctx == NULL) { fprintf(stderr, "write: no context\n"); return 1; }
  b2nd_array_t *arr = NULL;
  int rc = b2nd_from_cbuffer(ctx, &arr, data, len);
  if (rc < 0) {
    fprintf(stderr, "write: b2nd_from_cbuffer with codec %d: %d (%s)\n", codec, rc, blosc2_error_string(rc));
    b2nd_free_ctx(ctx);
    return 1;
  }
  b2nd_free(arr);
  b2nd_free_ctx(ctx);
  free(data);
  return 0;
}

static int read_frame(const char *path) {
  blosc2_schunk *sc = blosc2_schunk_open(path);
  if (sc == NULL) { fprintf(stderr, "read: cannot open %s\n", path); return 1; }
  char out[4096];
  snprintf(out, sizeof out, "%s.out", path);
  FILE *f = fopen(out, "wb");
  int status = 0;
  for (int64_t i = 0; i < sc->nchunks && status == 0; i++) {
    int32_t n = sc->chunksize > 0 ? sc->chunksize : 1 << 26;
    void *buf = malloc(n);
    int rc = blosc2_schunk_decompress_chunk(sc, i, buf, n);
    if (rc < 0) {
      fprintf(stderr, "read: %s chunk %lld: %d (%s)\n", path, (long long)i, rc, blosc2_error_string(rc));
      status = 1;
    } else {
      fwrite(buf, 1, rc, f);
    }
    free(buf);
  }
  fclose(f);
  blosc2_schunk_free(sc);
  return status;
}

int main(int argc, char **argv) {
  blosc2_init();
  int status = 2;
  if (argc == 8 && strcmp(argv[1], "write") == 0) {
    status = write_frame(atoi(argv[2]), atoll(argv[3]), atoll(argv[4]), atoi(argv[5]), argv[6], argv[7]);
  } else if (argc >= 3 && strcmp(argv[1], "read") == 0) {
    status = 0;
    for (int i = 2; i < argc && status == 0; i++) status = read_frame(argv[i]);
  } else {
    fprintf(stderr, "usage: plugin_frames write CODEC ROWS COLS TYPESIZE RAW OUT | read FRAME...\n");
  }
  blosc2_destroy();
  return status;
}
