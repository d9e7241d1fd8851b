/* hello.c: a frame from C. Creates a cframe file holding a 4 x 1000 array of doubles, with the
 * b2nd metalayer that makes it an array for b2nd and python-blosc2 (blosc2.open gives an
 * NDArray), appends the rows as chunks and a vlmetalayer, closes the frame, reopens it and reads
 * everything back. The same calls work on c-blosc2. Build against an installed b2frame:
 *   cc hello.c $(pkg-config --cflags --libs b2frame) -o hello && ./hello [PATH]
 * PATH defaults to hello.b2frame; the file is left there for `b2frame info PATH`.
 */
#include <b2nd.h>
#include <blosc2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 4
#define COLS 1000

static int fail(const char *what, int rc) {
  fprintf(stderr, "%s failed: %d (%s)\n", what, rc, blosc2_error_string(rc));
  return 1;
}

static double value(int row, int col) { return row * 1000.0 + col * 0.5; }

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "hello.b2frame";
  blosc2_init();
  printf("blosc2 API version %s\n", blosc2_get_version_string());

  /* Zstd with shuffle; blocks of 250 doubles, the block shape the metalayer gives. */
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.compcode = BLOSC_ZSTD;
  cparams.clevel = 5;
  cparams.typesize = sizeof(double);
  cparams.blocksize = 250 * sizeof(double);
  blosc2_storage storage = BLOSC2_STORAGE_DEFAULTS;
  storage.contiguous = true; /* one file; false makes an sframe directory */
  storage.urlpath = (char *)path;
  storage.cparams = &cparams;
  blosc2_remove_urlpath(path);
  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  if (sc == NULL) {
    fprintf(stderr, "cannot create %s\n", path);
    return 1;
  }

  /* The b2nd metalayer: shape 4 x 1000, one row per chunk, blocks of 250 items, NumPy "<f8". */
  int64_t shape[2] = {ROWS, COLS};
  int32_t chunkshape[2] = {1, COLS};
  int32_t blockshape[2] = {1, 250};
  uint8_t *smeta = NULL;
  int slen = b2nd_serialize_meta(2, shape, chunkshape, blockshape, "<f8", DTYPE_NUMPY_FORMAT, &smeta);
  if (slen < 0) {
    return fail("b2nd_serialize_meta", slen);
  }
  int rc = blosc2_meta_add(sc, "b2nd", smeta, slen);
  free(smeta);
  if (rc < 0) {
    return fail("blosc2_meta_add", rc);
  }

  static double row[COLS];
  for (int r = 0; r < ROWS; r++) {
    for (int c = 0; c < COLS; c++) {
      row[c] = value(r, c);
    }
    int64_t nchunks = blosc2_schunk_append_buffer(sc, row, sizeof(row));
    if (nchunks < 0) {
      return fail("blosc2_schunk_append_buffer", (int)nchunks);
    }
  }
  /* A vlmetalayer's content is any bytes; python-blosc2 reads them as msgpack: here the string "m". */
  uint8_t unit_msgpack[2] = {0xa1, 'm'};
  rc = blosc2_vlmeta_add(sc, "unit", unit_msgpack, sizeof(unit_msgpack), NULL);
  if (rc < 0) {
    return fail("blosc2_vlmeta_add", rc);
  }
  printf("Wrote %s: %lld chunks, %lld bytes compressed into %lld (ratio %.1fx)\n", path,
         (long long)sc->nchunks, (long long)sc->nbytes, (long long)sc->cbytes,
         (double)sc->nbytes / (double)sc->cbytes);
  blosc2_schunk_free(sc);

  /* Reopen and read back: the metalayer, the vlmetalayer and every row. */
  sc = blosc2_schunk_open(path);
  if (sc == NULL) {
    fprintf(stderr, "cannot reopen %s\n", path);
    return 1;
  }
  uint8_t *content = NULL;
  int32_t content_len = 0;
  rc = blosc2_meta_get(sc, "b2nd", &content, &content_len);
  if (rc < 0) {
    return fail("blosc2_meta_get", rc);
  }
  int8_t ndim = 0;
  int8_t dtype_format = 0;
  int64_t got_shape[B2ND_MAX_DIM];
  int32_t got_chunkshape[B2ND_MAX_DIM];
  int32_t got_blockshape[B2ND_MAX_DIM];
  char *dtype = NULL;
  rc = b2nd_deserialize_meta(content, content_len, &ndim, got_shape, got_chunkshape, got_blockshape,
                             &dtype, &dtype_format);
  free(content);
  if (rc < 0) {
    return fail("b2nd_deserialize_meta", rc);
  }
  printf("Reopened it: a %d-D b2nd array of shape %lld x %lld, dtype %s\n", ndim,
         (long long)got_shape[0], (long long)got_shape[1], dtype);
  if (ndim != 2 || got_shape[0] != ROWS || got_shape[1] != COLS || strcmp(dtype, "<f8") != 0) {
    fprintf(stderr, "the b2nd metalayer came back changed\n");
    return 1;
  }
  free(dtype);

  uint8_t *unit = NULL;
  rc = blosc2_vlmeta_get(sc, "unit", &unit, &content_len);
  if (rc < 0) {
    return fail("blosc2_vlmeta_get", rc);
  }
  if (content_len != 2 || memcmp(unit, unit_msgpack, 2) != 0) {
    fprintf(stderr, "the vlmetalayer came back changed\n");
    return 1;
  }
  free(unit);

  if (sc->nchunks != ROWS) {
    fprintf(stderr, "%lld chunks, not %d\n", (long long)sc->nchunks, ROWS);
    return 1;
  }
  for (int r = 0; r < ROWS; r++) {
    int n = blosc2_schunk_decompress_chunk(sc, r, row, sizeof(row));
    if (n < 0) {
      return fail("blosc2_schunk_decompress_chunk", n);
    }
    for (int c = 0; c < COLS; c++) {
      if (n != (int)sizeof(row) || row[c] != value(r, c)) {
        fprintf(stderr, "row %d came back changed\n", r);
        return 1;
      }
    }
  }
  printf("Read back %d rows, unit \"m\": ok\n", ROWS);
  blosc2_schunk_free(sc);
  blosc2_destroy();
  return 0;
}
