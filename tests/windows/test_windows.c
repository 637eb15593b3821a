/* Windows-specific checks of mlx_arm.dll (the path Steam/Proton titles take), run under wine:
 * - the DLL loads at run time with LoadLibrary/GetProcAddress, as engines load plugins, and
 *   its version matches the header;
 * - platform info reports os=windows;
 * - Win32 threads build and evaluate independent graphs sharing one read-only weight array,
 *   with results equal to the single-threaded run and to hand-computed values;
 * - a bad call returns non-zero with one message and does not end the process.
 * The portable tests in tests/c run under wine too; see run.sh. */
#include <windows.h>

#include "check.h"

typedef const char* (*version_fn)(void);
typedef mlx_array (*new_float_fn)(float);
typedef int (*add_fn)(mlx_array*, const mlx_array, const mlx_array, const mlx_stream);
typedef int (*item_fn)(float*, const mlx_array);
typedef int (*free_fn)(mlx_array);

static void test_dynamic_load(void) {
  HMODULE dll = LoadLibraryA("mlx_arm.dll");
  CHECK(dll != NULL);
  if (!dll) return;
  version_fn version = (version_fn)(void*)GetProcAddress(dll, "mlx_arm_version_string");
  new_float_fn new_float = (new_float_fn)(void*)GetProcAddress(dll, "mlx_array_new_float");
  add_fn add = (add_fn)(void*)GetProcAddress(dll, "mlx_add");
  item_fn item = (item_fn)(void*)GetProcAddress(dll, "mlx_array_item_float32");
  free_fn free_arr = (free_fn)(void*)GetProcAddress(dll, "mlx_array_free");
  CHECK(version && new_float && add && item && free_arr);
  if (version && new_float && add && item && free_arr) {
    CHECK_STR(version(), MLX_ARM_VERSION_STRING);
    mlx_stream s = mlx_default_cpu_stream_new();
    mlx_array a = new_float(1.5f), b = new_float(2.25f), c = mlx_array_new();
    float v = 0;
    CHECK_OK(add(&c, a, b, s));
    CHECK_OK(item(&v, c));
    CHECK(v == 3.75f);
    free_arr(c);
    free_arr(b);
    free_arr(a);
    mlx_stream_free(s);
  }
  /* The program also links the DLL, so this only drops the extra reference. */
  CHECK(FreeLibrary(dll));
}

static void test_platform(void) {
  mlx_string info = mlx_string_new();
  CHECK_OK(mlx_arm_platform_info(&info));
  CHECK(strstr(mlx_string_data(info), "os=windows") != NULL);
  CHECK(strstr(mlx_string_data(info), "arch=x86_64") != NULL);
  mlx_string_free(info);
}

/* --- threads: y_t = sum(tanh(W * (x + t)), axis=1) for t = 0..THREADS-1 ------------------- */
#define THREADS 4
#define ROWS 8
#define COLS 16

struct job {
  mlx_array w;         /* shared, read-only */
  int t;
  float out[ROWS];
  int rc;
};

static int run_job(struct job* j) {
  mlx_stream s = mlx_default_cpu_stream_new();
  int shape[1] = {COLS};
  float xs[COLS];
  for (int i = 0; i < COLS; i++) xs[i] = 0.05f * (float)i - 0.3f + (float)j->t;
  mlx_array x = mlx_array_new_data(xs, shape, 1, MLX_FLOAT32);
  mlx_array y = mlx_array_new();
  int rc = mlx_multiply(&y, j->w, x, s);
  if (rc == 0) rc = mlx_tanh(&y, y, s);
  if (rc == 0) rc = mlx_sum_axis(&y, y, 1, false, s);
  if (rc == 0) rc = mlx_array_eval(y);
  const float* d = rc == 0 ? mlx_array_data_float32(y) : NULL;
  if (d) memcpy(j->out, d, sizeof j->out); else rc = 1;
  mlx_array_free(y);
  mlx_array_free(x);
  mlx_stream_free(s);
  return rc;
}

static DWORD WINAPI job_thread(LPVOID arg) {
  struct job* j = (struct job*)arg;
  j->rc = run_job(j);
  return 0;
}

static void test_threads(void) {
  float ws[ROWS * COLS];
  int shape[2] = {ROWS, COLS};
  for (int i = 0; i < ROWS * COLS; i++) ws[i] = (float)((i * 7) % 11 - 5) * 0.1f;
  mlx_array w = mlx_array_new_data(ws, shape, 2, MLX_FLOAT32);
  struct job serial[THREADS], threaded[THREADS];
  HANDLE handles[THREADS];
  for (int t = 0; t < THREADS; t++) {
    serial[t].w = threaded[t].w = w;
    serial[t].t = threaded[t].t = t;
    CHECK(run_job(&serial[t]) == 0);
  }
  for (int t = 0; t < THREADS; t++) {
    handles[t] = CreateThread(NULL, 0, job_thread, &threaded[t], 0, NULL);
    CHECK(handles[t] != NULL);
  }
  for (int t = 0; t < THREADS; t++) {
    if (!handles[t]) continue;
    WaitForSingleObject(handles[t], INFINITE);
    CloseHandle(handles[t]);
    CHECK(threaded[t].rc == 0);
    CHECK(memcmp(threaded[t].out, serial[t].out, sizeof serial[t].out) == 0);
    /* Hand-computed oracle (double precision libm). */
    for (int r = 0; r < ROWS; r++) {
      double want = 0;
      for (int c = 0; c < COLS; c++)
        want += tanh((double)ws[r * COLS + c] * (double)(0.05f * (float)c - 0.3f + (float)t));
      CHECK(fabs(serial[t].out[r] - want) < 1e-5);
    }
  }
  mlx_array_free(w);
}

static void test_errors(void) {
  mlx_stream s = mlx_default_cpu_stream_new();
  float d[3] = {1, 2, 3};
  int shape[1] = {3}, bad[1] = {4};
  mlx_array a = mlx_array_new_data(d, shape, 1, MLX_FLOAT32), r = mlx_array_new();
  int before = g_errors;
  CHECK(mlx_reshape(&r, a, bad, 1, s) != 0);
  CHECK(g_errors == before + 1);
  CHECK(strstr(g_last_msg, "reshape") != NULL);
  CHECK(r.ctx == NULL);
  /* The default handler prints and returns: the process goes on. */
  mlx_set_error_handler(NULL, NULL, NULL);
  fprintf(stderr, "(an 'MLX error' line is expected next)\n");
  CHECK(mlx_reshape(&r, a, bad, 1, s) != 0);
  install_test_handler();
  mlx_array_free(a);
  mlx_stream_free(s);
}

int main(void) {
  install_test_handler();
  test_dynamic_load();
  test_platform();
  test_threads();
  test_errors();
  return finish("test_windows");
}
