/* Tiny test harness for the C API tests: counts failures, captures handler messages. */
#ifndef MLX_ARM_TEST_CHECK_H
#define MLX_ARM_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mlx/c/mlx.h"

static int g_failures = 0;
static int g_checks = 0;
static int g_errors = 0;       /* messages received by the handler */
static char g_last_msg[2048];  /* the last one */

static inline void test_handler(const char* msg, void* data) {
  int* counter = (int*)data;
  (*counter)++;
  snprintf(g_last_msg, sizeof g_last_msg, "%s", msg);
}

static inline void install_test_handler(void) {
  mlx_set_error_handler(test_handler, &g_errors, NULL);
}

#define CHECK(cond)                                                   \
  do {                                                                \
    g_checks++;                                                       \
    if (!(cond)) {                                                    \
      g_failures++;                                                   \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                 \
    }                                                                 \
  } while (0)

#define CHECK_OK(call)                                                      \
  do {                                                                      \
    int rc_ = (call);                                                       \
    g_checks++;                                                             \
    if (rc_ != 0) {                                                         \
      g_failures++;                                                         \
      fprintf(stderr, "%s:%d: %s returned %d (last error: %s)\n", __FILE__, \
              __LINE__, #call, rc_, g_last_msg);                            \
    }                                                                       \
  } while (0)

/* The call fails with a non-zero status and exactly one message reaching the handler,
 * containing `needle`. */
#define CHECK_FAILS(call, needle)                                              \
  do {                                                                         \
    int before_ = g_errors;                                                    \
    int rc_ = (call);                                                          \
    g_checks++;                                                                \
    if (rc_ == 0 || g_errors != before_ + 1 || !strstr(g_last_msg, needle)) {  \
      g_failures++;                                                            \
      fprintf(stderr,                                                          \
              "%s:%d: expected %s to fail with '%s': rc=%d, messages=%d, "    \
              "last='%s'\n",                                                   \
              __FILE__, __LINE__, #call, needle, rc_, g_errors - before_,      \
              g_last_msg);                                                     \
    }                                                                          \
  } while (0)

#define CHECK_STR(got, want)                                               \
  do {                                                                     \
    const char* g_ = (got);                                                \
    g_checks++;                                                            \
    if (!g_ || strcmp(g_, want) != 0) {                                    \
      g_failures++;                                                        \
      fprintf(stderr, "%s:%d: got\n%s\nwant\n%s\n", __FILE__, __LINE__,    \
              g_ ? g_ : "(null)", want);                                   \
    }                                                                      \
  } while (0)

/* Checks `a`'s printed form. */
static inline void check_repr(const char* file, int line, mlx_array a, const char* want) {
  mlx_string s = mlx_string_new();
  g_checks++;
  if (mlx_array_tostring(&s, a) != 0 || strcmp(mlx_string_data(s), want) != 0) {
    g_failures++;
    fprintf(stderr, "%s:%d: repr got\n%s\nwant\n%s\n", file, line,
            mlx_string_data(s) ? mlx_string_data(s) : "(null)", want);
  }
  mlx_string_free(s);
}
#define CHECK_REPR(a, want) check_repr(__FILE__, __LINE__, a, want)

static inline int finish(const char* name) {
  printf("%s: %d checks, %d failures\n", name, g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}

#endif
