/* Every op family through the C API, against values computed by real MLX (ops_golden.inc,
 * made by gen_ops_golden.py), plus the error cases MLX also rejects. */
#include "golden_support.h"

#include "ops_golden.inc"

int main(void) {
  install_test_handler();
  mlx_stream s = mlx_default_cpu_stream_new();
  for (int i = 0; i < golden_count; i++) {
    golden_cases[i](s);
  }
  mlx_stream_free(s);
  printf("%d golden cases\n", golden_count);
  return finish("test_ops");
}
