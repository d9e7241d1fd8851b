/* Library information API: version, error strings, codec names and codes.
 * Expected values are those of c-blosc2 3.3.5 (checked against the reference library). */
#include <blosc2.h>

#include "harness.h"

static void test_version_string_matches_header(void) {
  const char *v = blosc2_get_version_string();
  CHECK_NOT_NULL(v);
  CHECK_EQ_STR(v, BLOSC2_VERSION_STRING);
  CHECK_EQ_INT(BLOSC2_VERSION_MAJOR, 3);
}

static void test_error_strings(void) {
  CHECK_EQ_STR(blosc2_error_string(BLOSC2_ERROR_FAILURE), "Generic failure");
  CHECK_EQ_STR(blosc2_error_string(BLOSC2_ERROR_DATA), "Invalid data");
  CHECK_EQ_STR(blosc2_error_string(BLOSC2_ERROR_READ_BUFFER), "Not enough space to read");
  CHECK_EQ_STR(blosc2_error_string(BLOSC2_ERROR_INVALID_PARAM), "Invalid parameter supplied to function");
  CHECK_EQ_STR(blosc2_error_string(BLOSC2_ERROR_NULL_POINTER), "Pointer is null");
  CHECK_EQ_STR(blosc2_error_string(BLOSC2_ERROR_LOCK), "Frame lock failure");
}

static void test_unknown_error_codes(void) {
  /* Success is not an error: c-blosc2 answers "Unknown error" for it, as for anything unlisted. */
  CHECK_EQ_STR(blosc2_error_string(BLOSC2_ERROR_SUCCESS), "Unknown error");
  CHECK_EQ_STR(blosc2_error_string(BLOSC2_ERROR_LOCK - 1), "Unknown error");
  CHECK_EQ_STR(blosc2_error_string(1), "Unknown error");
  CHECK_EQ_STR(blosc2_error_string(-100000), "Unknown error");
}

static void test_every_error_code_has_a_string(void) {
  for (int code = BLOSC2_ERROR_FAILURE; code >= BLOSC2_ERROR_LOCK; code--) {
    const char *s = blosc2_error_string(code);
    CHECK_NOT_NULL(s);
    CHECK(strlen(s) > 0);
    CHECK(strcmp(s, "Unknown error") != 0);
  }
}

static void test_list_compressors(void) {
  CHECK_EQ_STR(blosc2_list_compressors(), "blosclz,lz4,lz4hc,zlib,zstd");
}

static void test_compcode_to_compname(void) {
  const char *name = NULL;
  CHECK_EQ_INT(blosc2_compcode_to_compname(BLOSC_BLOSCLZ, &name), BLOSC_BLOSCLZ);
  CHECK_EQ_STR(name, "blosclz");
  CHECK_EQ_INT(blosc2_compcode_to_compname(BLOSC_LZ4, &name), BLOSC_LZ4);
  CHECK_EQ_STR(name, "lz4");
  CHECK_EQ_INT(blosc2_compcode_to_compname(BLOSC_LZ4HC, &name), BLOSC_LZ4HC);
  CHECK_EQ_STR(name, "lz4hc");
  CHECK_EQ_INT(blosc2_compcode_to_compname(BLOSC_ZLIB, &name), BLOSC_ZLIB);
  CHECK_EQ_STR(name, "zlib");
  CHECK_EQ_INT(blosc2_compcode_to_compname(BLOSC_ZSTD, &name), BLOSC_ZSTD);
  CHECK_EQ_STR(name, "zstd");
  CHECK_EQ_INT(blosc2_compcode_to_compname(32, &name), 32);
  CHECK_EQ_STR(name, "ndlz");
  CHECK_EQ_INT(blosc2_compcode_to_compname(35, &name), 35);
  CHECK_EQ_STR(name, "zfp_rate");
}

static void test_unknown_compcodes(void) {
  /* 32-40 are the plugin codecs c-blosc2 registers by default (NDLZ, ZFP, ...): known. */
  const int unknown[] = {3, BLOSC_LAST_CODEC, 31, 41, 255, -1};
  for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
    const char *name = "sentinel";
    CHECK_EQ_INT(blosc2_compcode_to_compname(unknown[i], &name), -1);
    CHECK(name == NULL);
  }
}

static void test_compname_to_compcode(void) {
  CHECK_EQ_INT(blosc2_compname_to_compcode("blosclz"), BLOSC_BLOSCLZ);
  CHECK_EQ_INT(blosc2_compname_to_compcode("lz4"), BLOSC_LZ4);
  CHECK_EQ_INT(blosc2_compname_to_compcode("lz4hc"), BLOSC_LZ4HC);
  CHECK_EQ_INT(blosc2_compname_to_compcode("zlib"), BLOSC_ZLIB);
  CHECK_EQ_INT(blosc2_compname_to_compcode("zstd"), BLOSC_ZSTD);
  /* Names are case sensitive; the built-in and default plugin codecs are known. */
  CHECK_EQ_INT(blosc2_compname_to_compcode("LZ4"), -1);
  CHECK_EQ_INT(blosc2_compname_to_compcode("snappy"), -1);
  CHECK_EQ_INT(blosc2_compname_to_compcode(""), -1);
  CHECK_EQ_INT(blosc2_compname_to_compcode("ndlz"), 32);
  CHECK_EQ_INT(blosc2_compname_to_compcode("zfp_acc"), 33);
}

static void test_complib_info(void) {
  static const struct {
    const char *compname;
    int libcode;
    const char *libname;
  } cases[] = {
      {"blosclz", BLOSC_BLOSCLZ_LIB, "BloscLZ"}, {"lz4", BLOSC_LZ4_LIB, "LZ4"},
      {"lz4hc", BLOSC_LZ4_LIB, "LZ4"},           {"zlib", BLOSC_ZLIB_LIB, "Zlib"},
      {"zstd", BLOSC_ZSTD_LIB, "Zstd"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *complib = NULL;
    char *version = NULL;
    int rc = blosc2_get_complib_info(cases[i].compname, &complib, &version);
    /* Both strings are malloc'ed for the caller: free them before any check can return. */
    int lib_ok = complib != NULL && strcmp(complib, cases[i].libname) == 0;
    int version_ok = version != NULL && strlen(version) > 0;
    free(complib);
    free(version);
    CHECK_EQ_INT(rc, cases[i].libcode);
    CHECK(lib_ok);
    CHECK(version_ok);
  }
}

int main(void) {
  RUN(test_version_string_matches_header);
  RUN(test_error_strings);
  RUN(test_unknown_error_codes);
  RUN(test_every_error_code_has_a_string);
  RUN(test_list_compressors);
  RUN(test_compcode_to_compname);
  RUN(test_unknown_compcodes);
  RUN(test_compname_to_compcode);
  RUN(test_complib_info);
  return harness_summary();
}
