/* the more-ops C extensions: mlx_arm_unique, mlx_arm_fast_cross_entropy, mlx_segmented_mm,
 * mlx_block_masked_mm, mlx_arm_get_array_buffer_size. Expected values: MLX's own
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
  CHECK_OK(mlx_segmented_mm(&seg, x, y, segs, s));
  CHECK_REPR(seg, "array([[[21]],\n       [[320]]], dtype=float32)");
  CHECK_FAILS(mlx_segmented_mm(&seg, x, y, a, s), "The segments should have shape (..., 2)");

  /* block_masked_mm: a false output block zeroes the product; block size 16 is rejected. */
  const bool off = false;
  int mshape[2] = {1, 1};
  mlx_array mask = mlx_array_new_data(&off, mshape, 2, MLX_BOOL);
  mlx_array bm = mlx_array_new();
  CHECK_OK(mlx_block_masked_mm(&bm, x, y, 32, mask, nofill, nofill, s));
  CHECK_REPR(bm, "array([[0]], dtype=float32)");
  CHECK_FAILS(mlx_block_masked_mm(&bm, x, y, 16, mask, nofill, nofill, s), "Only block_sizes 32, 64 are supported.");

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
  /* mlx-c's ops that MLX's Python does not name (hand-computed values). */
  int five[1] = {5};
  const float zv[5] = {0, 0, 0, 0, 0};
  mlx_array z5 = mlx_array_new_data(zv, five, 1, MLX_FLOAT32);
  const bool mv[5] = {true, false, true, false, true};
  mlx_array m5 = mlx_array_new_data(mv, five, 1, MLX_BOOL);
  const float srcv[3] = {7, 8, 9};
  int three[1] = {3};
  mlx_array src3 = mlx_array_new_data(srcv, three, 1, MLX_FLOAT32);
  mlx_array r = mlx_array_new();
  CHECK_OK(mlx_masked_scatter(&r, z5, m5, src3, s));
  CHECK_REPR(r, "array([7, 0, 8, 0, 9], dtype=float32)");
  /* A mask selecting more positions than the source holds fails when evaluated. */
  int two[1] = {2};
  mlx_array src2 = mlx_array_new_data(srcv, two, 1, MLX_FLOAT32);
  CHECK_OK(mlx_masked_scatter(&r, z5, m5, src2, s));
  CHECK_FAILS(mlx_array_eval(r), "out of bounds");
  CHECK_FAILS(mlx_masked_scatter(&r, z5, z5, src3, s), "boolean");

  CHECK_OK(mlx_copy(&r, src3, s));
  CHECK_REPR(r, "array([7, 8, 9], dtype=float32)");

  int s234[3] = {2, 3, 4};
  mlx_array big = mlx_array_new();
  CHECK_OK(mlx_zeros(&big, s234, 3, MLX_FLOAT32, s));
  const int ax02[2] = {0, 2};
  CHECK_OK(mlx_number_of_elements(&r, big, ax02, 2, false, MLX_INT32, s));
  CHECK_REPR(r, "array(8, dtype=int32)");
  CHECK_OK(mlx_number_of_elements(&r, big, ax02, 2, true, MLX_INT32, s));
  CHECK_REPR(r, "array(3, dtype=int32)");
  const int bad_axis[1] = {3};
  CHECK_FAILS(mlx_number_of_elements(&r, big, bad_axis, 1, false, MLX_INT32, s), "out of bounds");

  const int32_t iv[3] = {1, 1, 3};
  mlx_array idx = i32(iv, 3);
  const float av4[4] = {0, 0, 0, 0};
  int four[1] = {4};
  mlx_array z4 = mlx_array_new_data(av4, four, 1, MLX_FLOAT32);
  const float addv[3] = {1, 2, 3};
  mlx_array vals = mlx_array_new_data(addv, three, 1, MLX_FLOAT32);
  CHECK_OK(mlx_scatter_add_axis(&r, z4, idx, vals, 0, s)); /* repeated index 1 accumulates */
  CHECK_REPR(r, "array([0, 3, 0, 3], dtype=float32)");

  /* slice_update_{add,max,min,prod} on positions 1 and 3 of [1, 2, 3, 4, 5]. */
  const float base[5] = {1, 2, 3, 4, 5};
  mlx_array b5 = mlx_array_new_data(base, five, 1, MLX_FLOAT32);
  const int start[1] = {1}, stop[1] = {5}, step[1] = {2};
  const float u1[2] = {10, 20}, u2[2] = {0, 100}, u3[2] = {2, 3};
  mlx_array up1 = mlx_array_new_data(u1, two, 1, MLX_FLOAT32);
  mlx_array up2 = mlx_array_new_data(u2, two, 1, MLX_FLOAT32);
  mlx_array up3 = mlx_array_new_data(u3, two, 1, MLX_FLOAT32);
  CHECK_OK(mlx_slice_update_add(&r, b5, up1, start, 1, stop, 1, step, 1, s));
  CHECK_REPR(r, "array([1, 12, 3, 24, 5], dtype=float32)");
  CHECK_OK(mlx_slice_update_max(&r, b5, up2, start, 1, stop, 1, step, 1, s));
  CHECK_REPR(r, "array([1, 2, 3, 100, 5], dtype=float32)");
  CHECK_OK(mlx_slice_update_min(&r, b5, up2, start, 1, stop, 1, step, 1, s));
  CHECK_REPR(r, "array([1, 0, 3, 4, 5], dtype=float32)");
  CHECK_OK(mlx_slice_update_prod(&r, b5, up3, start, 1, stop, 1, step, 1, s));
  CHECK_REPR(r, "array([1, 4, 3, 12, 5], dtype=float32)");
  const float u5[5] = {1, 1, 1, 1, 1};
  mlx_array up5 = mlx_array_new_data(u5, five, 1, MLX_FLOAT32);
  CHECK_FAILS(mlx_slice_update_add(&r, b5, up5, start, 1, stop, 1, step, 1, s), "broadcast");

  mlx_array frees[] = {z5, m5, src3, src2, r, big, idx, z4, vals, b5, up1, up2, up3, up5};
  for (size_t i = 0; i < sizeof frees / sizeof frees[0]; i++) mlx_array_free(frees[i]);

  mlx_stream_free(s);
  return finish("test_more_ops");
}
