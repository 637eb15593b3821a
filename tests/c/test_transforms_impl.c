/* transforms_impl.h: mlx_detail_vmap_trace / mlx_detail_vmap_replace, the two halves of vmap
 * as mlx-c exposes them. Values are hand-computed and compared with mlx_arm_vmap (the one-call
 * form); the traced inputs/outputs have one example's shape; errors are MLX's messages. */
#include <math.h>
#include <stdlib.h>

#include "mlx/c/transforms_impl.h"
#include "transforms_support.h"

/* f(x, y) = [sum(x * y)] */
static int sum_xy(mlx_vector_array* res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), y = mlx_array_new(), p = mlx_array_new();
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_vector_array_get(&y, in, 1) ||
           mlx_multiply(&p, x, y, S) || mlx_sum(&p, p, false, S) ||
           mlx_vector_array_set_value(res, p);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(p);
  return rc;
}

/* f(x, y) = [x * y, 2 * y]: the second output does not depend on the mapped x. */
static int prod_and_twice_y(mlx_vector_array* res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), y = mlx_array_new(), p = mlx_array_new(), t = mlx_array_new();
  mlx_array two = mlx_array_new_float(2.0f);
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_vector_array_get(&y, in, 1) ||
           mlx_multiply(&p, x, y, S) || mlx_multiply(&t, y, two, S) ||
           mlx_vector_array_set_data(res, (mlx_array[]){p, t}, 2);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(p);
  mlx_array_free(t);
  mlx_array_free(two);
  return rc;
}

static int ndim_of(mlx_vector_array v, size_t i) {
  mlx_array a = mlx_array_new();
  int nd = mlx_vector_array_get(&a, v, i) == 0 ? (int)mlx_array_ndim(a) : -1;
  mlx_array_free(a);
  return nd;
}

static int dim_of(mlx_vector_array v, size_t i, int axis) {
  mlx_array a = mlx_array_new();
  int d = mlx_vector_array_get(&a, v, i) == 0 ? mlx_array_dim(a, axis) : -1;
  mlx_array_free(a);
  return d;
}

static void test_trace_then_replace(void) {
  mlx_closure f = mlx_closure_new_func(sum_xy);
  float xd[6] = {1, 2, 3, 4, 5, 6};
  int shape[2] = {2, 3};
  mlx_array x = mlx_array_new_data(xd, shape, 2, MLX_FLOAT32), y = vec3(1, 10, 100);
  mlx_vector_array in = mlx_vector_array_new_data((mlx_array[]){x, y}, 2);
  mlx_vector_array s_in = mlx_vector_array_new(), s_out = mlx_vector_array_new();
  mlx_vector_array out = mlx_vector_array_new(), ref = mlx_vector_array_new();
  int rows[2] = {0, -1};
  CHECK_OK(mlx_detail_vmap_trace(&s_in, &s_out, f, in, rows, 2));
  /* The tracer of x has one row's shape; y (not mapped) is passed as it is; the output is
   * the function on one example: a scalar. */
  CHECK(mlx_vector_array_size(s_in) == 2);
  CHECK(ndim_of(s_in, 0) == 1 && dim_of(s_in, 0, 0) == 3);
  CHECK_NEAR(elem(s_in, 1, 2), 100.0f);
  CHECK(mlx_vector_array_size(s_out) == 1);
  CHECK(ndim_of(s_out, 0) == 0);
  int out0[1] = {0};
  CHECK_OK(mlx_detail_vmap_replace(&out, in, s_in, s_out, rows, 2, out0, 1));
  CHECK_OK(mlx_arm_vmap(&ref, f, in, rows, 2, NULL, 0));
  CHECK(ndim_of(out, 0) == 1 && dim_of(out, 0, 0) == 2);
  CHECK_NEAR(elem(out, 0, 0), 321.0f); /* 1 + 20 + 300 */
  CHECK_NEAR(elem(out, 0, 1), 654.0f); /* 4 + 50 + 600 */
  CHECK_NEAR(elem(out, 0, 0), elem(ref, 0, 0));
  CHECK_NEAR(elem(out, 0, 1), elem(ref, 0, 1));

  /* The same trace replayed on other inputs of the same example shape (4 rows now). */
  float x4d[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
  int shape4[2] = {4, 3};
  mlx_array x4 = mlx_array_new_data(x4d, shape4, 2, MLX_FLOAT32);
  mlx_vector_array in4 = mlx_vector_array_new_data((mlx_array[]){x4, y}, 2);
  CHECK_OK(mlx_detail_vmap_replace(&out, in4, s_in, s_out, rows, 2, out0, 1));
  CHECK(dim_of(out, 0, 0) == 4);
  CHECK_NEAR(elem(out, 0, 0), 1.0f);
  CHECK_NEAR(elem(out, 0, 1), 10.0f);
  CHECK_NEAR(elem(out, 0, 2), 100.0f);
  CHECK_NEAR(elem(out, 0, 3), 111.0f);

  /* Errors, with MLX's messages. */
  int out_two[2] = {0, 0};
  CHECK_FAILS(mlx_detail_vmap_replace(&out, in, s_in, s_out, rows, 2, out_two, 2),
              "The number of out axes (2) must match the number of outputs (1)");
  CHECK_FAILS(mlx_detail_vmap_trace(&s_in, &s_out, f, in, rows, 1),
              "The number of in axes (1) must match the number of inputs (2)");
  int none[2] = {-1, -1};
  CHECK_FAILS(mlx_detail_vmap_trace(&s_in, &s_out, f, in, none, 2), "At least one of in_axes must be non-None");
  /* Inputs of another example shape than the trace's: an error, not a wrong result. */
  int cols[2] = {1, -1};
  CHECK_FAILS(mlx_detail_vmap_replace(&out, in, s_in, s_out, cols, 2, out0, 1), "does not match its traced input");
  CHECK_FAILS(mlx_detail_vmap_trace(NULL, &s_out, f, in, rows, 2), "NULL");
  CHECK_FAILS(mlx_detail_vmap_replace(NULL, in, s_in, s_out, rows, 2, out0, 1), "NULL");

  mlx_closure_free(f);
  mlx_array_free(x);
  mlx_array_free(x4);
  mlx_array_free(y);
  mlx_vector_array_free(in);
  mlx_vector_array_free(in4);
  mlx_vector_array_free(s_in);
  mlx_vector_array_free(s_out);
  mlx_vector_array_free(out);
  mlx_vector_array_free(ref);
}

static void test_out_axes_and_unmapped_output(void) {
  /* x (3, 2) mapped on axis 1 (2 examples of 3), y (3) shared: outputs x[:, j] * y placed on
   * axis 1 (so (3, 2), equal to x * y[:, None]) and 2 * y repeated along axis 0 (2, 3). */
  mlx_closure f = mlx_closure_new_func(prod_and_twice_y);
  float xd[6] = {1, 2, 3, 4, 5, 6};
  int shape[2] = {3, 2};
  mlx_array x = mlx_array_new_data(xd, shape, 2, MLX_FLOAT32), y = vec3(1, 10, 100);
  mlx_vector_array in = mlx_vector_array_new_data((mlx_array[]){x, y}, 2);
  mlx_vector_array s_in = mlx_vector_array_new(), s_out = mlx_vector_array_new();
  mlx_vector_array out = mlx_vector_array_new(), ref = mlx_vector_array_new();
  int in_axes[2] = {1, -1};
  int out_axes[2] = {1, 0};
  CHECK_OK(mlx_detail_vmap_trace(&s_in, &s_out, f, in, in_axes, 2));
  CHECK(mlx_vector_array_size(s_out) == 2);
  CHECK_OK(mlx_detail_vmap_replace(&out, in, s_in, s_out, in_axes, 2, out_axes, 2));
  CHECK_OK(mlx_arm_vmap(&ref, f, in, in_axes, 2, out_axes, 2));
  CHECK(dim_of(out, 0, 0) == 3 && dim_of(out, 0, 1) == 2);
  const float want0[6] = {1, 2, 30, 40, 500, 600};
  for (int i = 0; i < 6; i++) {
    CHECK_NEAR(elem(out, 0, i), want0[i]);
    CHECK_NEAR(elem(ref, 0, i), want0[i]);
  }
  CHECK(dim_of(out, 1, 0) == 2 && dim_of(out, 1, 1) == 3);
  const float want1[6] = {2, 20, 200, 2, 20, 200};
  for (int i = 0; i < 6; i++) {
    CHECK_NEAR(elem(out, 1, i), want1[i]);
  }
  int far[2] = {2, 0};
  CHECK_FAILS(mlx_detail_vmap_replace(&out, in, s_in, s_out, in_axes, 2, far, 2),
              "Axis 2 invalid for output with 2 dimensions");
  mlx_closure_free(f);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_vector_array_free(in);
  mlx_vector_array_free(s_in);
  mlx_vector_array_free(s_out);
  mlx_vector_array_free(out);
  mlx_vector_array_free(ref);
}

int main(void) {
  install_test_handler();
  S = mlx_default_cpu_stream_new();
  test_trace_then_replace();
  test_out_axes_and_unmapped_output();
  mlx_stream_free(S);
  return finish("test_transforms_impl");
}
