/*
 * A minimal c-blosc2-style consumer: built at -O0 against include/ (so the header's static
 * print_error references blosc2_error_string) and linked with libb2frame. Checks that the
 * default getters return exactly the header's static defaults and that the version/error
 * functions answer like c-blosc2 3.3.5. Exit status 0 = pass.
 */
#include <blosc2.h>
#include <b2nd.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                              \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "link_smoke: FAILED: %s\n", #cond);        \
      failures++;                                                \
    }                                                            \
  } while (0)

int main(void) {
  blosc2_cparams cp = blosc2_get_blosc2_cparams_defaults();
  blosc2_dparams dp = blosc2_get_blosc2_dparams_defaults();
  blosc2_storage st = blosc2_get_blosc2_storage_defaults();
  blosc2_io io = blosc2_get_blosc2_io_defaults();
  blosc2_stdio_mmap mm = blosc2_get_blosc2_stdio_mmap_defaults();
  const char *name = NULL;

  CHECK(cp.compcode == BLOSC2_CPARAMS_DEFAULTS.compcode && cp.clevel == 5 && cp.typesize == 8);
  CHECK(memcmp(cp.filters, BLOSC2_CPARAMS_DEFAULTS.filters, BLOSC2_MAX_FILTERS) == 0);
  CHECK(cp.splitmode == BLOSC_FORWARD_COMPAT_SPLIT && cp.prefilter == NULL);
  CHECK(dp.nthreads == 1 && dp.typesize == 8 && dp.postfilter == NULL);
  CHECK(!st.contiguous && st.urlpath == NULL && st.io == NULL);
  CHECK(io.id == BLOSC2_IO_FILESYSTEM && strcmp(io.name, BLOSC2_IO_DEFAULTS.name) == 0);
  CHECK(strcmp(mm.mode, "r") == 0 && mm.initial_mapping_size == (size_t)1 << 30 && mm.fd == -1);
  CHECK(strcmp(blosc2_get_version_string(), BLOSC2_VERSION_STRING) == 0);
  CHECK(strcmp(print_error(BLOSC2_ERROR_LOCK), "Frame lock failure") == 0);
  CHECK(strcmp(blosc2_error_string(0), "Unknown error") == 0);
  CHECK(blosc2_compcode_to_compname(BLOSC_ZSTD, &name) == BLOSC_ZSTD &&
        strcmp(name, BLOSC_ZSTD_COMPNAME) == 0);
  CHECK(blosc2_compname_to_compcode(BLOSC_LZ4HC_COMPNAME) == BLOSC_LZ4HC);
  CHECK(blosc2_remove_urlpath(NULL) == BLOSC2_ERROR_SUCCESS);
  printf("link_smoke: %s (b2frame %s)\n", failures ? "FAILED" : "ok", b2frame_version_string());
  return failures != 0;
}
