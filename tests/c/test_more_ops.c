/* the more-ops C extensions: mlx_arm_unique, mlx_arm_fast_cross_entropy, mlx_arm_segmented_mm,
 * mlx_arm_block_masked_mm, mlx_arm_get_array_buffer_size. Expected values: MLX's own
 * docstring example for unique, and small hand-computed products / losses (real MLX agrees:
 * core/tests/data/more_ops holds its outputs for the wider cases). */
#include <stdint.h>

#include "check.h"

static mlx_array i32(const int32_t* v, int n) {
  int shape[1] = {n};
  return mlx_array_new_data(v, shape, 1, MLX_INT32);
}

static mlx_array f32(const float* v, const int* shape, int ndim) {
  return mlx_array_new_data(v, shape, ndim, MLX_FLOAT32);
}

int main(void) {
  install_test_handler();
  mlx_stream s = mlx_default_cpu_stream_new();

  /* unique: mx.unique([2, 1, 2, 3, 1], 4, True, True, True, fill_value=0). */
  const int32_t av[5] = {2, 1, 2, 3, 1};
  mlx_array a = i32(av, 5);
  const int32_t zero = 0;
  int scalar_shape[1] = {0};
  mlx_array fill = mlx_array_new_data(&zero, scalar_shape, 0, MLX_INT32);
  mlx_vector_array outs = mlx_vector_array_new();
  CHECK_OK(mlx_arm_unique(&outs, a, 4, true, true, true, fill, s));
  CHECK(mlx_vector_array_size(outs) == 4);
  const char* want[4] = {"array([1, 2, 3, 0], dtype=int32)", "array([1, 0, 3, 1], dtype=uint32)",
                         "array([1, 0, 1, 2, 0], dtype=uint32)", "array([2, 2, 1, 0], dtype=int32)"};
  for (size_t i = 0; i < 4 && i < mlx_vector_array_size(outs); i++) {
    mlx_array o = mlx_array_new();
    CHECK_OK(mlx_vector_array_get(&o, outs, i));
    CHECK_REPR(o, want[i]);
    mlx_array_free(o);
  }
  /* Without a fill value the padding is the first unique element; a negative size fails. */
  mlx_array nofill = mlx_array_new();
  CHECK_OK(mlx_arm_unique(&outs, a, 5, false, false, false, nofill, s));
  mlx_array v = mlx_array_new();
  CHECK_OK(mlx_vector_array_get(&v, outs, 0));
  CHECK_REPR(v, "array([1, 2, 3, 1, 1], dtype=int32)");
  CHECK_FAILS(mlx_arm_unique(&outs, a, -1, false, false, false, nofill, s), "Received negative size -1.");

  /* cross_entropy of logits [0, 0] (log 2 for either target) and [ln 3, 0] target 0:
   * log(4) - ln 3. */
  const float lv[4] = {0.0f, 0.0f, (float)log(3.0), 0.0f};
  int lshape[2] = {2, 2};
  mlx_array logits = f32(lv, lshape, 2);
  const int32_t tv[2] = {1, 0};
  mlx_array targets = i32(tv, 2);
  mlx_array loss = mlx_array_new();
  CHECK_OK(mlx_arm_fast_cross_entropy(&loss, logits, targets, s));
  CHECK_OK(mlx_array_eval(loss));
  const float* l = mlx_array_data_float32(loss);
  CHECK(l && fabs(l[0] - log(2.0)) < 1e-6 && fabs(l[1] - (log(4.0) - log(3.0))) < 1e-6);
  const float ftv[2] = {1, 0};
  int tshape[1] = {2};
  mlx_array ftargets = f32(ftv, tshape, 1);
  CHECK_FAILS(mlx_arm_fast_cross_entropy(&loss, logits, ftargets, s), "targets must be integer class indices");
  mlx_array_free(ftargets);

  /* segmented_mm: a = [[1, 2, 3]], b = [[1], [10], [100]], segments [0, 2) and [1, 3). */
  const float xv[3] = {1, 2, 3}, yv[3] = {1, 10, 100};
  int xshape[2] = {1, 3}, yshape[2] = {3, 1};
  mlx_array x = f32(xv, xshape, 2), y = f32(yv, yshape, 2);
  const int32_t sv[4] = {0, 2, 1, 3};
  int sshape[2] = {2, 2};
  mlx_array segs = mlx_array_new_data(sv, sshape, 2, MLX_INT32);
  mlx_array seg = mlx_array_new();
  CHECK_OK(mlx_arm_segmented_mm(&seg, x, y, segs, s));
  CHECK_REPR(seg, "array([[[21]],\n       [[320]]], dtype=float32)");
  CHECK_FAILS(mlx_arm_segmented_mm(&seg, x, y, a, s), "The segments should have shape (..., 2)");

  /* block_masked_mm: a false output block zeroes the product; block size 16 is rejected. */
  const bool off = false;
  int mshape[2] = {1, 1};
  mlx_array mask = mlx_array_new_data(&off, mshape, 2, MLX_BOOL);
  mlx_array bm = mlx_array_new();
  CHECK_OK(mlx_arm_block_masked_mm(&bm, x, y, 32, mask, nofill, nofill, s));
  CHECK_REPR(bm, "array([[0]], dtype=float32)");
  CHECK_FAILS(mlx_arm_block_masked_mm(&bm, x, y, 16, mask, nofill, nofill, s), "Only block_sizes 32, 64 are supported.");

  /* get_array_buffer_size: a (20 bytes) and loss (8 bytes), each buffer once. */
  CHECK_OK(mlx_array_eval(a));
  mlx_array arr3[3] = {a, loss, a};
  mlx_vector_array vec = mlx_vector_array_new_data(arr3, 3);
  size_t bytes = 0;
  CHECK_OK(mlx_arm_get_array_buffer_size(&bytes, vec));
  CHECK(bytes == 28);
  mlx_array lazy = mlx_array_new();
  CHECK_OK(mlx_add(&lazy, a, a, s));
  mlx_vector_array lazy_vec = mlx_vector_array_new_data(&lazy, 1);
  CHECK_FAILS(mlx_arm_get_array_buffer_size(&bytes, lazy_vec), "Arrays must be evaluated");

  mlx_vector_array_free(lazy_vec);
  mlx_vector_array_free(vec);
  mlx_array_free(lazy);
  mlx_array_free(bm);
  mlx_array_free(mask);
  mlx_array_free(seg);
  mlx_array_free(segs);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(loss);
  mlx_array_free(targets);
  mlx_array_free(logits);
  mlx_array_free(v);
  mlx_array_free(nofill);
  mlx_vector_array_free(outs);
  mlx_array_free(fill);
  mlx_array_free(a);
  mlx_stream_free(s);
  return finish("test_more_ops");
}
