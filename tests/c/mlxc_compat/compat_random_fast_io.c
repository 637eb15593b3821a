/* random.h, fast.h and io.h used the way mlx-c's examples use them (example.c,
 * example-safe-tensors.c): keys split and fed to samplers, fast.h layers, arrays saved to a
 * safetensors file with metadata, loaded back and walked with the map iterators.
 * Expected values were computed by real MLX 0.32 (noted next to each check). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "mlx/c/mlx.h"

static int failures = 0;

static void print_array(const char* msg, mlx_array arr) {
  mlx_string str = mlx_string_new();
  mlx_array_tostring(&str, arr);
  printf("%s\n%s\n", msg, mlx_string_data(str));
  mlx_string_free(str);
}

static void expect(const char* what, mlx_array arr, const float* want, size_t n) {
  mlx_array_eval(arr);
  const float* got = mlx_array_data_float32(arr);
  for (size_t i = 0; i < n; i++) {
    if (!got || fabsf(got[i] - want[i]) > 1e-5f * (1.0f + fabsf(want[i]))) {
      printf("%s: element %zu is %g, MLX gives %g\n", what, i, got ? got[i] : NAN, want[i]);
      failures++;
      return;
    }
  }
}

int main(void) {
  mlx_stream stream = mlx_default_cpu_stream_new();

  /* random: key(0) split in two; uniform from the first half, normal from the second */
  mlx_array key = mlx_array_new(), k1 = mlx_array_new(), k2 = mlx_array_new();
  mlx_random_key(&key, 0);
  mlx_random_split(&k1, &k2, key, stream);
  int shape[] = {4};
  mlx_array low = mlx_array_new_float(0.0f), high = mlx_array_new_float(1.0f);
  mlx_array u = mlx_array_new(), n = mlx_array_new();
  mlx_random_uniform(&u, low, high, shape, 1, MLX_FLOAT32, k1, stream);
  mlx_random_normal(&n, shape, 1, MLX_FLOAT32, 0.0f, 1.0f, k2, stream);
  print_array("uniform", u);
  print_array("normal", n);
  const float want_u[] = {0.555248f, 0.914761f, 0.297654f, 0.508113f};
  const float want_n[] = {1.137878f, -0.143314f, -0.591536f, 0.794662f};
  expect("uniform", u, want_u, 4);
  expect("normal", n, want_n, 4);

  /* fast: rms_norm and layer_norm without weights, rope at offset 1 */
  float xd[] = {1, 2, 3, 4};
  int xshape[] = {1, 4};
  mlx_array x = mlx_array_new_data(xd, xshape, 2, MLX_FLOAT32);
  mlx_array none = mlx_array_new();
  mlx_array rms = mlx_array_new(), ln = mlx_array_new(), r = mlx_array_new(), xr = mlx_array_new();
  mlx_fast_rms_norm(&rms, x, none, 1e-5f, stream);
  mlx_fast_layer_norm(&ln, x, none, none, 1e-5f, stream);
  const float want_rms[] = {0.365148f, 0.730296f, 1.095444f, 1.460593f};
  const float want_ln[] = {-1.341635f, -0.447212f, 0.447212f, 1.341635f};
  expect("rms_norm", rms, want_rms, 4);
  expect("layer_norm", ln, want_ln, 4);
  mlx_arange(&xr, 0, 8, 1, MLX_FLOAT32, stream);
  int rshape[] = {1, 1, 2, 4};
  mlx_reshape(&xr, xr, rshape, 4, stream);
  mlx_optional_float base = {10000.0f, true};
  mlx_fast_rope(&r, xr, 4, false, base, 1.0f, 1, none, stream);
  print_array("rope", r);
  const float want_rope[] = {-1.682942f, 0.969950f, 1.080605f, 3.009850f,
                             -7.120372f, 4.859009f, 1.140309f, 7.098593f};
  expect("rope", r, want_rope, 8);

  /* io: save to disk with metadata, load back, walk the maps */
  mlx_map_string_to_array data = mlx_map_string_to_array_new();
  mlx_map_string_to_string metadata = mlx_map_string_to_string_new();
  mlx_map_string_to_array_insert(data, "uniform", u);
  mlx_map_string_to_array_insert(data, "rope", r);
  mlx_map_string_to_string_insert(metadata, "source", "compat_random_fast_io");
  mlx_save_safetensors("compat.safetensors", data, metadata);
  mlx_map_string_to_array_free(data);
  mlx_map_string_to_string_free(metadata);

  data = mlx_map_string_to_array_new();
  metadata = mlx_map_string_to_string_new();
  printf("load data from disk:\n");
  if (mlx_load_safetensors(&data, &metadata, "compat.safetensors", stream) != 0) {
    failures++;
  }
  mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(data);
  const char* name;
  mlx_array value = mlx_array_new();
  int count = 0;
  while (!mlx_map_string_to_array_iterator_next(&name, &value, it)) {
    print_array(name, value);
    expect(name, value, strcmp(name, "rope") == 0 ? want_rope : want_u, strcmp(name, "rope") == 0 ? 8 : 4);
    count++;
  }
  mlx_map_string_to_string_iterator mit = mlx_map_string_to_string_iterator_new(metadata);
  const char *mk, *mv;
  while (!mlx_map_string_to_string_iterator_next(&mk, &mv, mit)) {
    printf("metadata %s = %s\n", mk, mv);
    if (strcmp(mk, "source") != 0 || strcmp(mv, "compat_random_fast_io") != 0) {
      failures++;
    }
  }
  if (count != 2) {
    failures++;
  }

  mlx_map_string_to_string_iterator_free(mit);
  mlx_map_string_to_array_iterator_free(it);
  mlx_array_free(value);
  mlx_map_string_to_array_free(data);
  mlx_map_string_to_string_free(metadata);
  mlx_array_free(key); mlx_array_free(k1); mlx_array_free(k2);
  mlx_array_free(low); mlx_array_free(high); mlx_array_free(u); mlx_array_free(n);
  mlx_array_free(x); mlx_array_free(none); mlx_array_free(rms); mlx_array_free(ln);
  mlx_array_free(r); mlx_array_free(xr);
  mlx_stream_free(stream);
  printf("failures: %d\n", failures);
  return failures != 0;
}
