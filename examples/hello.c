/* hello.c: the smallest b2frame program. Compresses a buffer with blosc2_compress, decompresses
 * it and checks the bytes. Build against an installed b2frame:
 *   cc hello.c $(pkg-config --cflags --libs b2frame) -o hello
 */
#include <blosc2.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  static float data[10000];
  static float back[10000];
  static char compressed[sizeof(data) + BLOSC2_MAX_OVERHEAD];
  for (int i = 0; i < 10000; i++) {
    data[i] = (float)i * 0.5f;
  }

  blosc2_init();
  printf("blosc2 API version %s\n", blosc2_get_version_string());

  int csize = blosc2_compress(5, BLOSC_SHUFFLE, sizeof(float), data, sizeof(data), compressed, sizeof(compressed));
  if (csize <= 0) {
    fprintf(stderr, "compression failed: %d (%s)\n", csize, csize < 0 ? blosc2_error_string(csize) : "did not fit");
    return 1;
  }
  int dsize = blosc2_decompress(compressed, csize, back, sizeof(back));
  if (dsize < 0) {
    fprintf(stderr, "decompression failed: %d (%s)\n", dsize, blosc2_error_string(dsize));
    return 1;
  }
  if (dsize != (int)sizeof(data) || memcmp(data, back, sizeof(data)) != 0) {
    fprintf(stderr, "round trip changed the data\n");
    return 1;
  }
  printf("Compressed %d bytes into %d (ratio %.1fx) and back: ok\n", (int)sizeof(data), csize,
         (double)sizeof(data) / csize);
  blosc2_destroy();
  return 0;
}
