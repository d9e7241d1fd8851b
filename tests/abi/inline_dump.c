/*
 * Exercises the header-only helpers of whichever blosc2.h it is compiled against
 * (blosc2_meta_exists, blosc2_meta_get, swap_store, BLOSC_ERROR, print_error) on a hand-built
 * super-chunk and prints the results. scripts/abi-check.sh builds it against the reference
 * headers and against b2frame's and diffs the outputs. No library is linked: the one external
 * function the helpers reach, blosc2_error_string, is stubbed here.
 */
#include <blosc2.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *blosc2_error_string(int error_code) {
  return error_code == BLOSC2_ERROR_DATA ? "stub: data" : "stub: other";
}

static int fails_with(int rc) {
  BLOSC_ERROR(rc);
  return 7;
}

static int check_null(const void *p) {
  BLOSC_ERROR_NULL(p, BLOSC2_ERROR_NULL_POINTER);
  return 0;
}

static void get(blosc2_schunk *sc, const char *name) {
  uint8_t *content = (uint8_t *)1;
  int32_t len = -99;
  int rc = blosc2_meta_get(sc, name, &content, &len);
  printf("meta_get(%s) = %d len=%d content=", name, rc, (int)len);
  if (content == NULL) {
    printf("NULL\n");
  } else if (content == (uint8_t *)1) {
    printf("untouched\n");
  } else {
    int i;
    for (i = 0; i < len; i++) printf("%02x", content[i]);
    printf("\n");
    free(content);
  }
}

int main(void) {
  static blosc2_schunk sc; /* zeroed; 65840 bytes, too big for some stacks */
  blosc2_metalayer m0, m1, m2, m3;
  uint8_t payload[5] = {1, 2, 3, 4, 5};
  char name0[] = "b2nd", name1[] = "empty", name2[] = "negative", name3[] = "nullcontent";
  uint8_t out[8];
  uint64_t v64 = 0x0102030405060708ull;
  uint32_t v32 = 0x0a0b0c0d;
  uint16_t v16 = 0x1122;
  int i;

  m0.name = name0; m0.content = payload; m0.content_len = 5;
  m1.name = name1; m1.content = NULL; m1.content_len = 0;
  m2.name = name2; m2.content = payload; m2.content_len = -1;
  m3.name = name3; m3.content = NULL; m3.content_len = 3;
  sc.metalayers[0] = &m0;
  sc.metalayers[1] = &m1;
  sc.metalayers[2] = &m2;
  sc.metalayers[3] = &m3;
  sc.nmetalayers = 4;

  printf("exists(b2nd) = %d\n", blosc2_meta_exists(&sc, "b2nd"));
  printf("exists(nullcontent) = %d\n", blosc2_meta_exists(&sc, "nullcontent"));
  printf("exists(missing) = %d\n", blosc2_meta_exists(&sc, "missing"));
  printf("exists(B2ND) = %d\n", blosc2_meta_exists(&sc, "B2ND"));
  printf("exists(32 chars) = %d\n", blosc2_meta_exists(&sc, "abcdefghijklmnopqrstuvwxyz012345"));
  printf("exists(31 chars) = %d\n", blosc2_meta_exists(&sc, "abcdefghijklmnopqrstuvwxyz01234"));
  printf("exists(NULL schunk) = %d\n", blosc2_meta_exists(NULL, "b2nd"));
  sc.nmetalayers = 0;
  printf("exists(b2nd, none) = %d\n", blosc2_meta_exists(&sc, "b2nd"));
  sc.nmetalayers = 4;

  get(&sc, "b2nd");
  get(&sc, "empty");
  get(&sc, "negative");
  get(&sc, "nullcontent");
  get(&sc, "missing");
  {
    uint8_t *c = NULL;
    int32_t l = 0;
    printf("meta_get(NULL schunk) = %d\n", blosc2_meta_get(NULL, "b2nd", &c, &l));
    printf("meta_get(NULL content) = %d\n", blosc2_meta_get(&sc, "b2nd", NULL, &l));
    printf("meta_get(NULL len) = %d\n", blosc2_meta_get(&sc, "b2nd", &c, NULL));
  }

  memset(out, 0, sizeof(out));
  swap_store(out, &v64, 8);
  printf("swap_store 8:");
  for (i = 0; i < 8; i++) printf(" %02x", out[i]);
  memset(out, 0, sizeof(out));
  swap_store(out, &v32, 4);
  printf("\nswap_store 4:");
  for (i = 0; i < 4; i++) printf(" %02x", out[i]);
  memset(out, 0, sizeof(out));
  swap_store(out, &v16, 2);
  printf("\nswap_store 2:");
  for (i = 0; i < 2; i++) printf(" %02x", out[i]);
  memset(out, 0, sizeof(out));
  swap_store(out, payload, 1);
  printf("\nswap_store 1: %02x\n", out[0]);

  printf("BLOSC_ERROR(-3) = %d, BLOSC_ERROR(0) = %d\n", fails_with(-3), fails_with(0));
  printf("BLOSC_ERROR_NULL = %d / %d\n", check_null(NULL), check_null(&sc));
  printf("print_error(-3) = %s\n", print_error(-3));
  return 0;
}
