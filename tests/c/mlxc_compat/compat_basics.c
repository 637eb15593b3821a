/* mlx-c style: arrays, ops with an explicit stream, printing, managed buffers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlx/c/mlx.h"

static int failures = 0;

static void show(const char* title, mlx_array arr, const char* expected) {
  mlx_string str = mlx_string_new();
  mlx_array_tostring(&str, arr);
  printf("%s\n%s\n", title, mlx_string_data(str));
  if (strcmp(mlx_string_data(str), expected) != 0) {
    printf("  MISMATCH, expected\n%s\n", expected);
    failures++;
  }
  mlx_string_free(str);
}

int main(void) {
  mlx_string version = mlx_string_new();
  mlx_version(&version);
  printf("version: %s\n", mlx_string_data(version));
  mlx_string_free(version);

  mlx_stream stream = mlx_default_cpu_stream_new();

  float values[] = {1, 2, 3, 4, 5, 6};
  int shape[] = {2, 3};
  mlx_array arr = mlx_array_new_data(values, shape, 2, MLX_FLOAT32);
  show("data", arr, "array([[1, 2, 3],\n       [4, 5, 6]], dtype=float32)");

  mlx_array two = mlx_array_new_int(2);
  mlx_divide(&arr, arr, two, stream); /* the result may replace an input */
  show("halved", arr, "array([[0.5, 1, 1.5],\n       [2, 2.5, 3]], dtype=float32)");

  mlx_array total = mlx_array_new();
  mlx_sum_axis(&total, arr, 1, false, stream);
  show("row sums", total, "array([3, 7.5], dtype=float32)");

  mlx_arange(&arr, 0, 3, 0.5, MLX_FLOAT32, stream);
  show("arange", arr, "array([0, 0.5, 1, 1.5, 2, 2.5], dtype=float32)");

  float* owned = malloc(6 * sizeof(float));
  for (int i = 0; i < 6; i++) {
    owned[i] = (float)(i * i);
  }
  mlx_array managed = mlx_array_new_data_managed(owned, shape, 2, MLX_FLOAT32, free);
  mlx_array t = mlx_array_new();
  mlx_transpose(&t, managed, stream);
  show("transposed squares", t, "array([[0, 9],\n       [1, 16],\n       [4, 25]], dtype=float32)");

  mlx_array flag = mlx_array_new();
  mlx_greater(&flag, t, two, stream);
  mlx_any(&flag, flag, false, stream);
  bool any = false;
  mlx_array_item_bool(&any, flag);
  printf("any > 2: %d\n", any);
  if (!any) {
    failures++;
  }

  mlx_array_free(arr);
  mlx_array_free(two);
  mlx_array_free(total);
  mlx_array_free(managed);
  mlx_array_free(t);
  mlx_array_free(flag);
  mlx_stream_free(stream);
  return failures;
}
