/* mlx-arm on bare metal: runs a small GGUF-quantized layer (Q8_0 matmul, Q4_0 matmul,
 * rms_norm, softmax) through the C API under QEMU `-M virt`, compares every stage with
 * golden.h (numpy + gguf-py, see gen_golden.py) and exits 0 only if all of it matches.
 * Also checks that running out of arena memory is an ordinary error and that a second run
 * of the layer leaves the arena exactly as the first one did (no leaks). */
#include "mlx/c/error.h"
#include "mlx/c/memory.h"
#include "mlx/c/mlx_arm.h"
#include "mlx/c/ops.h"
#include "mlx/c/string.h"

#include "arena.h"
#include "golden.h"
#include "layer.h"
#include "semihost.h"

#define ATOL 1e-4f
#define RTOL 1e-4f

static int errors_seen;
static char last_error[160];

/* The library reports failures here; print them and keep the text for the OOM check. */
static void on_error(const char* msg, void* data) {
  (void)data;
  errors_seen++;
  size_t i = 0;
  for (; msg[i] && i + 1 < sizeof last_error; i++) last_error[i] = msg[i];
  last_error[i] = 0;
  sh_puts("fw: mlx error: ");
  sh_puts(msg);
  sh_puts("\n");
}

static int contains(const char* s, const char* word) {
  for (; *s; s++) {
    const char *a = s, *b = word;
    while (*a && *b && *a == *b) { a++; b++; }
    if (!*b) return 1;
  }
  return 0;
}

/* Prints `got` and checks it element-wise against `want` (|got - want| <= ATOL + RTOL*|want|). */
static int check(const char* name, mlx_array a, const float* want, int n) {
  if (mlx_array_eval(a) != 0 || (int)mlx_array_size(a) != n) {
    sh_puts("fw: ");
    sh_puts(name);
    sh_puts(": wrong size or failed evaluation\n");
    return 1;
  }
  const float* got = mlx_array_data_float32(a);
  if (!got) return 1;
  int bad = 0;
  float worst = 0;
  sh_puts("fw: ");
  sh_puts(name);
  sh_puts(" =");
  for (int i = 0; i < n; i++) {
    float err = got[i] > want[i] ? got[i] - want[i] : want[i] - got[i];
    float mag = want[i] < 0 ? -want[i] : want[i];
    if (!(err <= ATOL + RTOL * mag)) bad++;
    if (err > worst) worst = err;
    if (i < 8) { sh_puts(" "); sh_put_f32(got[i]); }
  }
  sh_puts(n > 8 ? " ..." : "");
  sh_puts("\nfw: ");
  sh_puts(name);
  sh_puts(bad ? ": MISMATCH" : ": ok");
  sh_puts(", max |err| = ");
  sh_put_f32(worst);
  sh_puts(" (");
  sh_put_int(n);
  sh_puts(" values)\n");
  return bad != 0;
}

/* Builds and checks the whole layer once. Returns the number of failed checks. */
static int run_layer(mlx_stream s) {
  int fails = 0;
  int x_shape[2] = {FW_B, FW_K}, g_shape[1] = {FW_N};
  mlx_array x = mlx_array_new_data(fw_x, x_shape, 2, MLX_FLOAT32);
  mlx_array g = mlx_array_new_data(fw_g, g_shape, 1, MLX_FLOAT32);
  mlx_array w1 = mlx_array_new(), w2 = mlx_array_new();
  mlx_array h = mlx_array_new(), y = mlx_array_new(), r = mlx_array_new(), p = mlx_array_new();
  if (dequant_q8_0(&w1, fw_w1_q8_0, FW_H, FW_K, s) || dequant_q4_0(&w2, fw_w2_q4_0, FW_N, FW_H, s) ||
      linear(&h, x, w1, s) || linear(&y, h, w2, s) || rms_norm(&r, y, g, FW_EPS, s) ||
      mlx_softmax_axis(&p, r, -1, false, s)) {
    sh_puts("fw: building the layer failed\n");
    fails++;
  } else {
    fails += check("h = x @ W1(q8_0).T", h, fw_want_h, FW_B * FW_H);
    fails += check("y = h @ W2(q4_0).T", y, fw_want_y, FW_B * FW_N);
    fails += check("rms_norm(y)", r, fw_want_r, FW_B * FW_N);
    fails += check("softmax", p, fw_want_p, FW_B * FW_N);
  }
  mlx_array_free(p);
  mlx_array_free(r);
  mlx_array_free(y);
  mlx_array_free(h);
  mlx_array_free(w2);
  mlx_array_free(w1);
  mlx_array_free(g);
  mlx_array_free(x);
  return fails;
}

/* An array larger than the whole arena must fail with status != 0 and one message, and the
 * library must stay usable. (arange allocates its output buffer directly; see README.md for
 * paths that still panic on out-of-memory.) */
static int check_out_of_memory(mlx_stream s) {
  mlx_array big = mlx_array_new();
  int before = errors_seen;
  /* 16 Mi float32 = 64 MiB > FW_ARENA_BYTES */
  int rc = mlx_arange(&big, 0.0, 16.0 * 1024 * 1024, 1.0, MLX_FLOAT32, s);
  if (rc == 0) rc = mlx_array_eval(big);
  mlx_array_free(big);
  int ok = rc != 0 && errors_seen == before + 1 && contains(last_error, "Unable to allocate");
  sh_puts(ok ? "fw: out-of-memory: ok (status != 0, one message)\n" : "fw: out-of-memory: MISMATCH\n");
  return !ok;
}

int main(void) {
  int fails = 0;
  mlx_set_error_handler(on_error, 0, 0);
  sh_puts("fw: mlx-arm ");
  sh_puts(mlx_arm_version_string());
  sh_puts(" bare-metal firmware example\n");
  mlx_string info = mlx_string_new();
  if (mlx_arm_platform_info(&info) == 0) {
    sh_puts(mlx_string_data(info));
    sh_puts("\n");
  }
  mlx_string_free(info);

  mlx_stream s = mlx_default_cpu_stream_new();
  fails += run_layer(s);
  /* Freed buffers wait in the library's cache, and the last error message is kept for
   * mlx_arm_last_error: release both so that only real leaks would show. */
  mlx_clear_cache();
  mlx_arm_clear_last_error();
  size_t after_first = arena_in_use();
  fails += check_out_of_memory(s);
  fails += run_layer(s);
  mlx_clear_cache();
  mlx_arm_clear_last_error();
  size_t after_second = arena_in_use();
  mlx_stream_free(s);

  int steady = after_first == after_second;
  sh_puts(steady ? "fw: no leak: ok" : "fw: no leak: MISMATCH");
  sh_puts(" (arena in use after run 1: ");
  sh_put_int((long)after_first);
  sh_puts(" B, after run 2: ");
  sh_put_int((long)after_second);
  sh_puts(" B, peak ");
  sh_put_int((long)arena_peak());
  sh_puts(" B of ");
  sh_put_int((long)FW_ARENA_BYTES);
  sh_puts(")\n");
  fails += !steady;

  sh_puts(fails == 0 ? "fw: OK\n" : "fw: FAILED\n");
  return fails == 0 ? 0 : 1;
}
