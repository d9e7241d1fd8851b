/* Self-test of the ASan configuration: writing one byte past a buffer that libb2frame malloc'ed
 * for the caller (blosc2_get_complib_info's strings) must be caught. Registered with WILL_FAIL,
 * so CTest passes only if AddressSanitizer stops the program. */
#include <blosc2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  char *complib = NULL;
  char *version = NULL;
  if (blosc2_get_complib_info("zstd", &complib, &version) < 0 || complib == NULL) {
    fprintf(stderr, "blosc2_get_complib_info failed: nothing to overflow\n");
    return 0; /* exit 0 = "ASan did not fire" = this WILL_FAIL test fails */
  }
  volatile char *p = complib;
  size_t n = strlen(complib);
  p[n + 16] = 'x'; /* past the allocation (malloc'ed sizes are rounded up to at most 16) */
  printf("ASan did not catch the overflow\n");
  free(complib);
  free(version);
  return 0;
}
