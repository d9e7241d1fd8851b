/* b2nd.c: an N-dimensional array from C with b2nd.h. Creates a 300 x 200 array of doubles in a
 * cframe file (chunks of 100 x 100, blocks of 25 x 50) from a buffer, overwrites a slice that
 * crosses chunks, appends 100 rows, reopens the file and reads a slice back. The same calls work
 * on c-blosc2; python-blosc2 opens the file as an NDArray. Build against an installed b2frame:
 *   cc b2nd.c $(pkg-config --cflags --libs b2frame) -o b2nd && ./b2nd [PATH]
 * PATH defaults to array.b2nd; the file is left there.
 */
#include <b2nd.h>
#include <blosc2.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 300
#define COLS 200

static int check(const char *what, int rc) {
  if (rc < 0) {
    fprintf(stderr, "%s failed: %d (%s)\n", what, rc, blosc2_error_string(rc));
    exit(1);
  }
  return rc;
}

int main(int argc, char **argv) {
  char *path = argc > 1 ? argv[1] : "array.b2nd";
  blosc2_init();
  blosc2_remove_urlpath(path);

  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.compcode = BLOSC_ZSTD;
  cparams.typesize = sizeof(double);
  blosc2_storage storage = BLOSC2_STORAGE_DEFAULTS;
  storage.contiguous = true;
  storage.urlpath = path;
  storage.cparams = &cparams;
  int64_t shape[2] = {ROWS, COLS};
  int32_t chunkshape[2] = {100, 100};
  int32_t blockshape[2] = {25, 50};
  b2nd_context_t *ctx =
      b2nd_create_ctx(&storage, 2, shape, chunkshape, blockshape, "<f8", DTYPE_NUMPY_FORMAT, NULL, 0);
  if (ctx == NULL) {
    fprintf(stderr, "b2nd_create_ctx failed\n");
    return 1;
  }

  /* The whole array from a row-major buffer: item (i, j) = i * 1000 + j. */
  double *data = malloc(sizeof(double) * ROWS * COLS);
  for (int i = 0; i < ROWS; i++) {
    for (int j = 0; j < COLS; j++) {
      data[i * COLS + j] = i * 1000.0 + j;
    }
  }
  b2nd_array_t *arr = NULL;
  check("b2nd_from_cbuffer", b2nd_from_cbuffer(ctx, &arr, data, sizeof(double) * ROWS * COLS));

  /* Overwrite rows 90..110, columns 90..110 (four chunks) with -1. */
  double patch[20 * 20];
  for (int k = 0; k < 20 * 20; k++) {
    patch[k] = -1.0;
  }
  int64_t pstart[2] = {90, 90}, pstop[2] = {110, 110}, pshape[2] = {20, 20};
  check("b2nd_set_slice_cbuffer",
        b2nd_set_slice_cbuffer(patch, pshape, sizeof(patch), pstart, pstop, arr));

  /* Append 100 rows along axis 0: the array becomes 400 x 200. */
  check("b2nd_append", b2nd_append(arr, data, sizeof(double) * 100 * COLS, 0));
  printf("Wrote %s: %lld x %lld doubles in %lld chunks, %lld bytes compressed into %lld\n", path,
         (long long)arr->shape[0], (long long)arr->shape[1], (long long)arr->sc->nchunks,
         (long long)arr->sc->nbytes, (long long)arr->sc->cbytes);
  b2nd_free(arr);
  b2nd_free_ctx(ctx);

  /* Reopen and read rows 85..115, columns 105..115: the patch's corner and the data around it. */
  check("b2nd_open", b2nd_open(path, &arr));
  int64_t start[2] = {85, 105}, stop[2] = {115, 115}, bshape[2] = {30, 10};
  double part[30 * 10];
  check("b2nd_get_slice_cbuffer", b2nd_get_slice_cbuffer(arr, start, stop, part, bshape, sizeof(part)));
  for (int i = 0; i < 30; i++) {
    for (int j = 0; j < 10; j++) {
      int r = 85 + i, c = 105 + j;
      double want = (r >= 90 && r < 110 && c < 110) ? -1.0 : r * 1000.0 + c;
      if (part[i * 10 + j] != want) {
        fprintf(stderr, "item (%d, %d) is %g, not %g\n", r, c, part[i * 10 + j], want);
        return 1;
      }
    }
  }
  double last;
  int64_t lstart[2] = {399, 199}, lstop[2] = {400, 200}, lshape[2] = {1, 1};
  check("b2nd_get_slice_cbuffer", b2nd_get_slice_cbuffer(arr, lstart, lstop, &last, lshape, sizeof(last)));
  if (arr->shape[0] != 400 || last != 99 * 1000.0 + 199) {
    fprintf(stderr, "the appended rows came back changed\n");
    return 1;
  }
  printf("Reopened it: %d-D, shape %lld x %lld, the slice and the appended rows read back: ok\n",
         arr->ndim, (long long)arr->shape[0], (long long)arr->shape[1]);
  b2nd_free(arr);
  free(data);
  blosc2_destroy();
  return 0;
}
