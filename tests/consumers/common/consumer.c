/* A minimal c-blosc2 user: prints the library version and the file that provides the blosc2_*
 * functions, then round-trips a buffer through blosc2_compress / blosc2_decompress.
 * Exit code 0 only if the bytes come back identical. Used by every consumer build. */
#define _GNU_SOURCE
#include <blosc2.h>
#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  blosc2_init();
  printf("version: %s\n", blosc2_get_version_string());

#if defined(_WIN32)
  /* Without __declspec(dllimport), &blosc2_compress is the program's own import stub: ask for
   * the DLL by name instead. */
  char dll[MAX_PATH];
  HMODULE mod = GetModuleHandleA("b2frame.dll");
  if (mod != NULL && GetModuleFileNameA(mod, dll, sizeof(dll)) > 0) {
    printf("library: %s\n", dll);
  } else {
    printf("library: (linked statically)\n");
  }
#else
  Dl_info info;
  if (dladdr((void *)&blosc2_compress, &info) != 0 && info.dli_fname != NULL) {
    char *real = realpath(info.dli_fname, NULL);
    printf("library: %s\n", real != NULL ? real : info.dli_fname);
    free(real);
  } else {
    printf("library: (linked statically)\n");
  }
#endif

  enum { N = 100000 };
  int32_t *src = malloc(N * sizeof(int32_t));
  int32_t *back = malloc(N * sizeof(int32_t));
  const int32_t destsize = (int32_t)(N * sizeof(int32_t)) + BLOSC2_MAX_OVERHEAD;
  uint8_t *dest = malloc((size_t)destsize);
  if (src == NULL || back == NULL || dest == NULL) {
    return 2;
  }
  for (int32_t i = 0; i < N; i++) {
    src[i] = i / 4;
  }
  int csize = blosc2_compress(5, BLOSC_SHUFFLE, sizeof(int32_t), src, N * (int32_t)sizeof(int32_t), dest, destsize);
  int dsize = csize > 0 ? blosc2_decompress(dest, csize, back, N * (int32_t)sizeof(int32_t)) : -1;
  int ok = csize > 0 && dsize == N * (int32_t)sizeof(int32_t) && memcmp(src, back, (size_t)dsize) == 0;
  printf("roundtrip: %d -> %d -> %d bytes: %s\n", N * (int)sizeof(int32_t), csize, dsize, ok ? "ok" : "FAILED");
  free(src);
  free(back);
  free(dest);
  blosc2_destroy();
  return ok ? 0 : 1;
}
