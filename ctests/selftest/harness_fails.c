/* Self-test of harness.h: a failing CHECK must make the program exit non-zero (registered with
 * WILL_FAIL, so CTest passes only if this program fails). */
#include "harness.h"

static void test_passes(void) { CHECK_EQ_INT(1 + 1, 2); }
static void test_fails(void) { CHECK_EQ_STR("abc", "abd"); }

int main(void) {
  RUN(test_passes);
  RUN(test_fails);
  return harness_summary();
}
