/* compile.h: a compiled closure gives the values of its function (checked against values
 * computed here), calls the C function once per input signature, mlx_detail_compile shares
 * one compiled function per id, the modes switch tracing off and on, and a bad mode fails. */
#include <math.h>

#include "check.h"

static mlx_stream S;
static int g_calls = 0;

/* f(x) = [exp(x * x) - x] (an elementwise chain the compiled form fuses). */
static int chain(mlx_vector_array* res, const mlx_vector_array in) {
  g_calls++;
  mlx_array x = mlx_array_new(), t = mlx_array_new();
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_multiply(&t, x, x, S) || mlx_exp(&t, t, S) ||
           mlx_subtract(&t, t, x, S) || mlx_vector_array_set_value(res, t);
  mlx_array_free(x);
  mlx_array_free(t);
  return rc;
}

/* Applies `f` to [v0 .. v0 + n - 1] / 4 and checks every element against exp(x*x) - x. */
static void check_call(mlx_closure f, int n) {
  float d[8];
  for (int i = 0; i < n; i++) d[i] = (float)i / 4.0f - 0.5f;
  int shape[1] = {n};
  mlx_array x = mlx_array_new_data(d, shape, 1, MLX_FLOAT32);
  mlx_vector_array in = mlx_vector_array_new_value(x), out = mlx_vector_array_new();
  mlx_array y = mlx_array_new();
  CHECK_OK(mlx_closure_apply(&out, f, in));
  CHECK_OK(mlx_vector_array_get(&y, out, 0));
  CHECK_OK(mlx_array_eval(y));
  const float* p = mlx_array_data_float32(y);
  CHECK(p != NULL);
  for (int i = 0; p && i < n; i++) CHECK(fabsf(p[i] - (expf(d[i] * d[i]) - d[i])) <= 1e-6f * (1.0f + fabsf(p[i])));
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_vector_array_free(in);
  mlx_vector_array_free(out);
}

int main(void) {
  install_test_handler();
  S = mlx_default_cpu_stream_new();
  mlx_closure f = mlx_closure_new_func(chain), c = mlx_closure_new();
  CHECK_OK(mlx_compile(&c, f, false));
  check_call(c, 8);
  check_call(c, 8);
  CHECK(g_calls == 1); /* traced once for shape [8] */
  check_call(c, 5);
  CHECK(g_calls == 2); /* a new shape traces again */

  /* mlx_detail_compile: one compiled function per id (and constants). */
  mlx_closure d1 = mlx_closure_new(), d2 = mlx_closure_new();
  uint64_t k[1] = {7};
  CHECK_OK(mlx_detail_compile(&d1, f, 42, false, k, 1));
  CHECK_OK(mlx_detail_compile(&d2, f, 42, false, k, 1));
  check_call(d1, 8);
  check_call(d2, 8);
  CHECK(g_calls == 3); /* d2 reuses d1's trace */
  CHECK_OK(mlx_detail_compile_erase(42));
  CHECK_OK(mlx_detail_compile_clear_cache());

  /* Disabled: the function runs on every call; enabled again: the cached trace serves. */
  CHECK_OK(mlx_disable_compile());
  check_call(c, 8);
  check_call(c, 8);
  CHECK(g_calls == 5);
  CHECK_OK(mlx_set_compile_mode(MLX_COMPILE_MODE_NO_FUSE));
  check_call(c, 8);
  CHECK_OK(mlx_enable_compile());
  check_call(c, 8);
  CHECK(g_calls == 5);
  CHECK_FAILS(mlx_set_compile_mode((mlx_compile_mode)9), "unknown compile mode");
  CHECK_FAILS(mlx_detail_compile(&d1, f, 1, false, NULL, 2), "constants is NULL");

  mlx_closure_free(f);
  mlx_closure_free(c);
  mlx_closure_free(d1);
  mlx_closure_free(d2);
  mlx_stream_free(S);
  return finish("test_compile");
}
