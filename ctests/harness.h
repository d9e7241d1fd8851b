/* ctests/harness.h: the smallest test harness that does the job.
 *
 *   static void test_something(void) { CHECK(x == 1); CHECK_EQ_INT(a, b); ... }
 *   int main(void) { RUN(test_something); return harness_summary(); }
 *
 * A failing CHECK prints file:line and what was compared, marks the test failed and returns from
 * the test function (later tests still run). harness_summary() prints the tally and returns the
 * process exit code (0 only if every check passed and at least one test ran).
 */
#ifndef B2FRAME_CTEST_HARNESS_H
#define B2FRAME_CTEST_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int harness_tests_run;
static int harness_tests_failed;
static int harness_current_failed;

static inline void harness_fail_at(const char *file, int line, const char *what) {
  fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what);
  harness_current_failed = 1;
}

#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      harness_fail_at(__FILE__, __LINE__, #cond);                                   \
      return;                                                                       \
    }                                                                               \
  } while (0)

#define CHECK_EQ_INT(actual, expected)                                              \
  do {                                                                              \
    long long harness_a_ = (long long)(actual);                                     \
    long long harness_e_ = (long long)(expected);                                   \
    if (harness_a_ != harness_e_) {                                                 \
      fprintf(stderr, "%s:%d: FAILED: %s == %s (got %lld, expected %lld)\n",        \
              __FILE__, __LINE__, #actual, #expected, harness_a_, harness_e_);      \
      harness_current_failed = 1;                                                   \
      return;                                                                       \
    }                                                                               \
  } while (0)

/* An int result that must be >= 0 (the c-blosc2 success convention). */
#define CHECK_OK(rc)                                                                \
  do {                                                                              \
    long long harness_rc_ = (long long)(rc);                                        \
    if (harness_rc_ < 0) {                                                          \
      fprintf(stderr, "%s:%d: FAILED: %s returned %lld\n", __FILE__, __LINE__, #rc,  \
              harness_rc_);                                                         \
      harness_current_failed = 1;                                                   \
      return;                                                                       \
    }                                                                               \
  } while (0)

#define CHECK_NOT_NULL(p) CHECK((p) != NULL)

#define CHECK_EQ_STR(actual, expected)                                              \
  do {                                                                              \
    const char *harness_a_ = (actual);                                              \
    const char *harness_e_ = (expected);                                            \
    if (harness_a_ == NULL || harness_e_ == NULL || strcmp(harness_a_, harness_e_) != 0) { \
      fprintf(stderr, "%s:%d: FAILED: %s == %s (got \"%s\", expected \"%s\")\n",    \
              __FILE__, __LINE__, #actual, #expected,                               \
              harness_a_ ? harness_a_ : "(null)", harness_e_ ? harness_e_ : "(null)"); \
      harness_current_failed = 1;                                                   \
      return;                                                                       \
    }                                                                               \
  } while (0)

#define CHECK_EQ_MEM(actual, expected, n)                                           \
  do {                                                                              \
    const unsigned char *harness_a_ = (const unsigned char *)(actual);              \
    const unsigned char *harness_e_ = (const unsigned char *)(expected);            \
    size_t harness_n_ = (size_t)(n);                                                \
    for (size_t harness_i_ = 0; harness_i_ < harness_n_; harness_i_++) {            \
      if (harness_a_[harness_i_] != harness_e_[harness_i_]) {                       \
        fprintf(stderr, "%s:%d: FAILED: %s == %s over %zu bytes (first difference " \
                "at byte %zu: 0x%02x vs 0x%02x)\n", __FILE__, __LINE__, #actual,    \
                #expected, harness_n_, harness_i_, harness_a_[harness_i_],          \
                harness_e_[harness_i_]);                                            \
        harness_current_failed = 1;                                                 \
        return;                                                                     \
      }                                                                             \
    }                                                                               \
  } while (0)

static inline void harness_run(const char *name, void (*fn)(void)) {
  harness_current_failed = 0;
  fn();
  harness_tests_run++;
  if (harness_current_failed) {
    harness_tests_failed++;
    fprintf(stderr, "[FAIL] %s\n", name);
  } else {
    printf("[ ok ] %s\n", name);
  }
  fflush(stdout);
}

#define RUN(fn) harness_run(#fn, fn)

static inline int harness_summary(void) {
  printf("%d tests, %d failed\n", harness_tests_run, harness_tests_failed);
  return (harness_tests_run == 0 || harness_tests_failed != 0) ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* B2FRAME_CTEST_HARNESS_H */
