/* Helpers for ops_golden.inc: compare a result with MLX's values, expect an error. */
#ifndef MLX_ARM_GOLDEN_SUPPORT_H
#define MLX_ARM_GOLDEN_SUPPORT_H

#include "check.h"

/* Tolerance by result dtype: exact for integers/bool, relative for floats. */
static inline double golden_tol(mlx_dtype d) {
  switch (d) {
    case MLX_FLOAT16:
      return 2e-3;
    case MLX_BFLOAT16:
      return 1e-2;
    case MLX_FLOAT32:
    case MLX_COMPLEX64:
      return 2e-6;
    case MLX_FLOAT64:
      return 1e-12;
    default:
      return 0.0;
  }
}

static inline void expect_array(const char* name, mlx_array res, mlx_dtype dtype, const int* shape, int ndim,
                         const double* want, size_t n) {
  g_checks++;
  if (res.ctx == NULL) {
    g_failures++;
    fprintf(stderr, "[%s] no result (last error: %s)\n", name, g_last_msg);
    return;
  }
  if (mlx_array_dtype(res) != dtype) {
    g_failures++;
    fprintf(stderr, "[%s] dtype %d, want %d\n", name, (int)mlx_array_dtype(res), (int)dtype);
    return;
  }
  if ((int)mlx_array_ndim(res) != ndim || mlx_array_size(res) != n) {
    g_failures++;
    fprintf(stderr, "[%s] ndim %zu size %zu, want %d / %zu\n", name, mlx_array_ndim(res), mlx_array_size(res), ndim, n);
    return;
  }
  for (int i = 0; i < ndim; i++) {
    if (mlx_array_shape(res)[i] != shape[i]) {
      g_failures++;
      fprintf(stderr, "[%s] axis %d has size %d, want %d\n", name, i, mlx_array_shape(res)[i], shape[i]);
      return;
    }
  }
  mlx_stream s = mlx_default_cpu_stream_new();
  mlx_array as64 = mlx_array_new();
  if (dtype == MLX_COMPLEX64) {
    mlx_array re = mlx_array_new();
    mlx_real(&re, res, s);
    mlx_astype(&as64, re, MLX_FLOAT64, s);
    mlx_array_free(re);
  } else {
    mlx_astype(&as64, res, MLX_FLOAT64, s);
  }
  const double* got = mlx_array_data_float64(as64);
  double tol = golden_tol(dtype);
  int bad = 0;
  for (size_t i = 0; got && i < n && !bad; i++) {
    double g = got[i], w = want[i];
    int same = (isnan(g) && isnan(w)) || g == w || fabs(g - w) <= tol * (1.0 + fabs(w));
    if (!same) {
      bad = 1;
      fprintf(stderr, "[%s] element %zu: got %.17g want %.17g\n", name, i, g, w);
    }
  }
  if (!got || bad) {
    g_failures++;
  }
  mlx_array_free(as64);
  mlx_stream_free(s);
}

static inline void expect_error_impl(const char* name, int rc, int before) {
  g_checks++;
  if (rc == 0 || g_errors != before + 1 || g_last_msg[0] == '\0') {
    g_failures++;
    fprintf(stderr, "[%s] expected an error: rc=%d, handler messages=%d\n", name, rc, g_errors - before);
  }
}
#define expect_error(name, call)              \
  do {                                        \
    int before_ = g_errors;                   \
    g_last_msg[0] = '\0';                     \
    int rc_ = (call);                         \
    expect_error_impl(name, rc_, before_);    \
  } while (0)

/* The whole program of a golden-case test: every case of the generated table on the default
 * CPU stream, then the summary (exit status 1 on any failure). */
static inline int run_golden_cases(const char* name, void (*const cases[])(mlx_stream), int count) {
  install_test_handler();
  mlx_stream s = mlx_default_cpu_stream_new();
  for (int i = 0; i < count; i++) {
    cases[i](s);
  }
  mlx_stream_free(s);
  printf("%d golden cases\n", count);
  return finish(name);
}

#endif
