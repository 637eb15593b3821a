/* mlx-c style: vectors, maps, eval, devices, error handler, data access. */
#include <stdio.h>
#include <string.h>

#include "mlx/c/mlx.h"

static int errors_seen = 0;
static void on_error(const char* msg, void* data) {
  (void)data;
  errors_seen++;
  printf("handler: %s\n", msg);
}

int main(void) {
  int failures = 0;
  mlx_set_error_handler(on_error, NULL, NULL);
  mlx_stream s = mlx_default_cpu_stream_new();

  mlx_device dev = mlx_device_new();
  mlx_get_default_device(&dev);
  mlx_string name = mlx_string_new();
  mlx_device_tostring(&name, dev);
  printf("default device: %s\n", mlx_string_data(name));

  int shape_x[] = {3};
  float xs[] = {1, 2, 3};
  int shape_y[] = {2};
  float ys[] = {10, 20};
  mlx_array x = mlx_array_new_data(xs, shape_x, 1, MLX_FLOAT32);
  mlx_array y = mlx_array_new_data(ys, shape_y, 1, MLX_FLOAT32);

  mlx_vector_array inputs = mlx_vector_array_new();
  mlx_vector_array_append_value(inputs, x);
  mlx_vector_array_append_value(inputs, y);
  mlx_vector_array grids = mlx_vector_array_new();
  mlx_meshgrid(&grids, inputs, false, "xy", s);
  mlx_eval(grids);

  mlx_array gx = mlx_array_new(), gy = mlx_array_new(), sum = mlx_array_new();
  mlx_vector_array_get(&gx, grids, 0);
  mlx_vector_array_get(&gy, grids, 1);
  mlx_add(&sum, gx, gy, s);
  mlx_array_eval(sum);
  /* numpy/MLX: meshgrid(x, y) sums to [[11, 12, 13], [21, 22, 23]] */
  const float* d = mlx_array_data_float32(sum);
  const float want[] = {11, 12, 13, 21, 22, 23};
  for (int i = 0; i < 6; i++) {
    if (d[i] != want[i]) failures++;
  }
  printf("shape %d x %d, sum[5] = %g\n", mlx_array_shape(sum)[0], mlx_array_shape(sum)[1], d[5]);

  mlx_map_string_to_array weights = mlx_map_string_to_array_new();
  mlx_map_string_to_array_insert(weights, "x", x);
  mlx_map_string_to_array_insert(weights, "sum", sum);
  mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(weights);
  const char* key;
  mlx_array value = mlx_array_new();
  int entries = 0;
  while (mlx_map_string_to_array_iterator_next(&key, &value, it) == 0) {
    printf("entry %s: %zu elements\n", key, mlx_array_size(value));
    entries++;
  }
  if (entries != 2) failures++;
  mlx_map_string_to_array_iterator_free(it);

  /* a bad reshape reports through the handler and returns non-zero */
  int bad_shape[] = {4};
  mlx_array r = mlx_array_new();
  if (mlx_reshape(&r, x, bad_shape, 1, s) == 0 || errors_seen != 1) failures++;

  mlx_array_free(r);
  mlx_array_free(value);
  mlx_map_string_to_array_free(weights);
  mlx_array_free(gx);
  mlx_array_free(gy);
  mlx_array_free(sum);
  mlx_vector_array_free(grids);
  mlx_vector_array_free(inputs);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_string_free(name);
  mlx_device_free(dev);
  mlx_stream_free(s);
  printf("failures: %d\n", failures);
  return failures;
}
