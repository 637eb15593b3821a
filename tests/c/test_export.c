/* export.h: a function exported to a file and imported back gives the values computed here
 * (x * w + y with a captured w), keyword arrays arrive after the positional ones, an
 * exporter keeps several signatures in one file, a call that fits no signature fails, and a
 * missing, foreign (Apple MLX) or corrupt file gives the empty handle and one error. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

static mlx_stream S;
static mlx_array W; /* captured constant: [1, 2, 3] */

/* f(x, y) = [x * W + y] */
static int fxy(mlx_vector_array* res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), y = mlx_array_new(), t = mlx_array_new();
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_vector_array_get(&y, in, 1) || mlx_multiply(&t, x, W, S) ||
           mlx_add(&t, t, y, S) || mlx_vector_array_set_value(res, t);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(t);
  return rc;
}

/* The same with y by keyword. */
static int fkw(mlx_vector_array* res, const mlx_vector_array in, const mlx_map_string_to_array kw) {
  mlx_array y = mlx_array_new();
  mlx_vector_array both = mlx_vector_array_new();
  int rc = mlx_map_string_to_array_get(&y, kw, "y") || mlx_vector_array_set(&both, in) || mlx_vector_array_append_value(both, y) || fxy(res, both);
  mlx_array_free(y);
  mlx_vector_array_free(both);
  return rc;
}

static mlx_array vec3(float a, float b, float c) {
  float d[3] = {a, b, c};
  int shape[1] = {3};
  return mlx_array_new_data(d, shape, 1, MLX_FLOAT32);
}

/* Calls `f` on (x, y) (y by keyword when `kw`) and checks x * W + y. */
static void check_apply(mlx_imported_function f, int kw) {
  mlx_array x = vec3(1, 1, 2), y = vec3(0.5f, 0, -1), r = mlx_array_new();
  mlx_vector_array args = kw ? mlx_vector_array_new_value(x) : mlx_vector_array_new(), out = mlx_vector_array_new();
  mlx_map_string_to_array m = mlx_map_string_to_array_new();
  if (kw) {
    CHECK_OK(mlx_map_string_to_array_insert(m, "y", y));
    CHECK_OK(mlx_imported_function_apply_kwargs(&out, f, args, m));
  } else {
    CHECK_OK(mlx_vector_array_append_value(args, x));
    CHECK_OK(mlx_vector_array_append_value(args, y));
    CHECK_OK(mlx_imported_function_apply(&out, f, args));
  }
  CHECK(mlx_vector_array_size(out) == 1);
  CHECK_OK(mlx_vector_array_get(&r, out, 0));
  CHECK_OK(mlx_array_eval(r));
  const float* p = mlx_array_data_float32(r);
  float want[3] = {1.5f, 2.0f, 5.0f};
  for (int i = 0; p && i < 3; i++) CHECK(p[i] == want[i]);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(r);
  mlx_vector_array_free(args);
  mlx_vector_array_free(out);
  mlx_map_string_to_array_free(m);
}

static void write_file(const char* path, const void* data, size_t n) {
  FILE* f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f) {
    fwrite(data, 1, n, f);
    fclose(f);
  }
}

int main(void) {
  install_test_handler();
  S = mlx_default_cpu_stream_new();
  W = vec3(1, 2, 3);
  char path[256];
  snprintf(path, sizeof path, "/tmp/mlx_arm_test_export_%d.mlxfn", (int)getpid());

  /* Positional. */
  mlx_closure f = mlx_closure_new_func(fxy);
  mlx_array x = vec3(0, 0, 0), y = vec3(0, 0, 0);
  mlx_vector_array args = mlx_vector_array_new_value(x);
  CHECK_OK(mlx_vector_array_append_value(args, y));
  CHECK_OK(mlx_export_function(path, f, args, false));
  mlx_imported_function imp = mlx_imported_function_new(path);
  CHECK(imp.ctx != NULL);
  check_apply(imp, 0);
  mlx_vector_array one = mlx_vector_array_new_value(x), out = mlx_vector_array_new();
  CHECK_FAILS(mlx_imported_function_apply(&out, imp, one), "No imported function found");
  mlx_imported_function_free(imp);

  /* Keywords. */
  mlx_closure_kwargs fk = mlx_closure_kwargs_new_func(fkw);
  mlx_map_string_to_array kw = mlx_map_string_to_array_new();
  CHECK_OK(mlx_map_string_to_array_insert(kw, "y", y));
  CHECK_OK(mlx_export_function_kwargs(path, fk, one, kw, false));
  imp = mlx_imported_function_new(path);
  check_apply(imp, 1);
  mlx_imported_function_free(imp);

  /* An exporter: two signatures in one file. */
  mlx_function_exporter ex = mlx_function_exporter_new(path, f, false);
  CHECK(ex.ctx != NULL);
  CHECK_OK(mlx_function_exporter_apply(ex, args));
  CHECK_OK(mlx_function_exporter_apply_kwargs(ex, one, kw)); /* y arrives second, by name order */
  mlx_function_exporter_free(ex);
  imp = mlx_imported_function_new(path);
  check_apply(imp, 0);
  check_apply(imp, 1);
  mlx_imported_function_free(imp);

  /* Files that are not ours. */
  int before = g_errors;
  imp = mlx_imported_function_new("/nonexistent/fn.mlxfn");
  CHECK(imp.ctx == NULL && g_errors == before + 1 && strstr(g_last_msg, "Failed to open"));
  unsigned char apple[24] = {6, 0, 0, 0, 0, 0, 0, 0, '0', '.', '3', '2', '.', '4', 1};
  write_file(path, apple, sizeof apple);
  imp = mlx_imported_function_new(path);
  CHECK(imp.ctx == NULL && g_errors == before + 2 && strstr(g_last_msg, "Apple's MLX 0.32.4"));
  write_file(path, "MLXARMFN\1\0\0\0\7", 13);
  imp = mlx_imported_function_new(path);
  CHECK(imp.ctx == NULL && g_errors == before + 3 && strstr(g_last_msg, "truncated"));
  remove(path);

  mlx_vector_array_free(one);
  mlx_vector_array_free(out);
  mlx_vector_array_free(args);
  mlx_map_string_to_array_free(kw);
  mlx_closure_kwargs_free(fk);
  mlx_closure_free(f);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(W);
  mlx_stream_free(S);
  return finish("test_export");
}
