/* Several threads build and evaluate independent graphs, each on its own mlx_stream, all
 * reading one shared weight array (read-only: only passed as an input). Every thread's
 * results must equal the same graphs evaluated by a single thread beforehand, bit for bit.
 * The graphs cover a matmul, rms_norm, softmax, a quantized matmul and keyed random draws. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

#define THREADS 4
#define ROUNDS 3
#define N 16
#define K 64

static mlx_array g_weight; /* shared, read-only */

/* One graph for item `id`: a keyed random input, matmul with the shared weight, rms_norm,
 * softmax, plus a quantized matmul of the same weight. Returns the flattened result (N*2
 * floats) in `out`; 0 on success. */
static int run_graph(int id, mlx_stream s, float* out) {
  int rc = 0;
  mlx_array key = mlx_array_new(), x = mlx_array_new(), lo = mlx_array_new_float(-1.0f),
            hi = mlx_array_new_float(1.0f), y = mlx_array_new(), z = mlx_array_new(),
            q = mlx_array_new(), scales = mlx_array_new(), biases = mlx_array_new(),
            yq = mlx_array_new(), both = mlx_array_new();
  mlx_vector_array parts = mlx_vector_array_new(), cat = mlx_vector_array_new();
  mlx_optional_int g = {32, true}, b = {4, true};
  rc |= mlx_random_key(&key, (uint64_t)(1000 + id));
  rc |= mlx_random_uniform(&x, lo, hi, (int[]){2, K}, 2, MLX_FLOAT32, key, s);
  rc |= mlx_matmul(&y, x, g_weight, s);                       /* (2, N) */
  rc |= mlx_fast_rms_norm(&y, y, (mlx_array){0}, 1e-5f, s);
  rc |= mlx_softmax_axis(&y, y, -1, true, s);
  rc |= mlx_transpose(&z, g_weight, s);                        /* (N, K) */
  rc |= mlx_quantize(&parts, z, g, b, "affine", (mlx_array){0}, s);
  rc |= mlx_vector_array_get(&q, parts, 0);
  rc |= mlx_vector_array_get(&scales, parts, 1);
  rc |= mlx_vector_array_get(&biases, parts, 2);
  rc |= mlx_quantized_matmul(&yq, x, q, scales, biases, true, g, b, "affine", s);
  rc |= mlx_vector_array_append_value(cat, y);
  rc |= mlx_vector_array_append_value(cat, yq);
  rc |= mlx_concatenate_axis(&both, cat, 0, s);                /* (4, N) */
  rc |= mlx_array_eval(both);
  const float* d = rc == 0 ? mlx_array_data_float32(both) : NULL;
  if (d) {
    memcpy(out, d, sizeof(float) * 4 * N);
  } else {
    rc = 1;
  }
  mlx_vector_array_free(parts);
  mlx_vector_array_free(cat);
  mlx_array_free(key); mlx_array_free(x); mlx_array_free(lo); mlx_array_free(hi);
  mlx_array_free(y); mlx_array_free(z); mlx_array_free(q); mlx_array_free(scales);
  mlx_array_free(biases); mlx_array_free(yq); mlx_array_free(both);
  return rc;
}

static float g_expected[THREADS][4 * N];
static int g_thread_failures[THREADS];

static void* worker(void* arg) {
  int id = (int)(intptr_t)arg;
  mlx_device dev = mlx_device_new_type(MLX_CPU, 0);
  mlx_stream s = mlx_stream_new_device(dev); /* this thread's own stream */
  float got[4 * N];
  for (int r = 0; r < ROUNDS; r++) {
    if (run_graph(id, s, got) != 0 || memcmp(got, g_expected[id], sizeof got) != 0) {
      g_thread_failures[id]++;
    }
  }
  mlx_stream_free(s);
  mlx_device_free(dev);
  return NULL;
}

int main(void) {
  install_test_handler();
  float w[K * N];
  for (int i = 0; i < K * N; i++) {
    w[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
  }
  g_weight = mlx_array_new_data(w, (int[]){K, N}, 2, MLX_FLOAT32);
  CHECK_OK(mlx_array_eval(g_weight));

  /* single-threaded reference */
  mlx_stream s = mlx_default_cpu_stream_new();
  for (int id = 0; id < THREADS; id++) {
    CHECK_OK(run_graph(id, s, g_expected[id]));
  }
  mlx_stream_free(s);
  /* distinct inputs give distinct outputs (the comparison below is not vacuous) */
  CHECK(memcmp(g_expected[0], g_expected[1], sizeof g_expected[0]) != 0);

  pthread_t th[THREADS];
  for (int id = 0; id < THREADS; id++) {
    CHECK(pthread_create(&th[id], NULL, worker, (void*)(intptr_t)id) == 0);
  }
  for (int id = 0; id < THREADS; id++) {
    pthread_join(th[id], NULL);
    g_checks++;
    if (g_thread_failures[id]) {
      g_failures++;
      fprintf(stderr, "thread %d: %d of %d rounds differed from the single-threaded run\n", id,
              g_thread_failures[id], ROUNDS);
    }
  }
  mlx_array_free(g_weight);
  printf("%d threads x %d rounds matched the single-threaded results\n", THREADS, ROUNDS);
  return finish("test_threads");
}
