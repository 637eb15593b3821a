/* random.h, fast.h, linalg.h and the later ops.h families (products, convolution,
 * quantization, joining/splitting, padding, diagonals, comparisons) through the C API, against
 * values computed by real MLX (family_golden.inc, made by gen_family_golden.py), plus error
 * cases: each must return non-zero and send one message to the error handler. */
#include "golden_support.h"

#include "family_golden.inc"

int main(void) {
  install_test_handler();
  mlx_stream s = mlx_default_cpu_stream_new();
  for (int i = 0; i < golden_count; i++) {
    golden_cases[i](s);
  }
  mlx_stream_free(s);
  printf("%d golden cases\n", golden_count);
  return finish("test_family");
}
