/* Shared by the transform tests (test_transforms.c, test_custom.c): the CPU stream, a
 * 3-vector maker, reading an element of a vector of arrays, and a near-equality check. */
#ifndef MLX_ARM_TEST_TRANSFORMS_SUPPORT_H
#define MLX_ARM_TEST_TRANSFORMS_SUPPORT_H

#include "check.h"

static mlx_stream S;

static mlx_array vec3(float a, float b, float c) {
  float d[3] = {a, b, c};
  int shape[1] = {3};
  return mlx_array_new_data(d, shape, 1, MLX_FLOAT32);
}

/* Element i of `vec[idx]` (evaluated) as a float. */
static float elem(mlx_vector_array vec, size_t idx, int i) {
  mlx_array a = mlx_array_new();
  float v = NAN;
  if (mlx_vector_array_get(&a, vec, idx) == 0 && mlx_array_eval(a) == 0) {
    mlx_array f = mlx_array_new();
    mlx_astype(&f, a, MLX_FLOAT32, S);
    mlx_array_eval(f);
    const float* p = mlx_array_data_float32(f);
    if (p) v = p[i];
    mlx_array_free(f);
  }
  mlx_array_free(a);
  return v;
}

#define CHECK_NEAR(got, want) CHECK(fabsf((got) - (want)) <= 1e-5f * (1.0f + fabsf(want)))

#endif
