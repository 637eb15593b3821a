// llama.cpp's own CPU matmul (ggml_mul_mat, f32 activations, quantized weights) at the decode
// shapes of SmolLM2-135M, timed the way bench_ggml times ours: the same weights every call,
// a persistent thread pool (as llama-bench has), median of many calls. test-backend-ops' perf
// table has no 576-wide shapes, hence this program. Build against a llama.cpp build tree:
//   cc -O2 benchmarks/ggml_gemv_anchor.c -I$L/ggml/include $L/build/ggml/src/libggml.a \
//      $L/build/ggml/src/libggml-cpu.a $L/build/ggml/src/libggml-base.a -lstdc++ -lm -fopenmp \
//      -o /tmp/ggml_gemv_anchor       (L=/tmp/llama/src)
// Run: /tmp/ggml_gemv_anchor THREADS TYPE N K [M] ...  (TYPE q4_0|q4_1|q8_0|q4_K|q5_K|q6_K;
// weights N rows of K; M activation rows, default 1). Prints one line per shape, in ms.
#include "ggml.h"
#include "ggml-cpu.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static enum ggml_type type_of(const char *s) {
    if (!strcmp(s, "q4_0")) return GGML_TYPE_Q4_0;
    if (!strcmp(s, "q4_1")) return GGML_TYPE_Q4_1;
    if (!strcmp(s, "q8_0")) return GGML_TYPE_Q8_0;
    if (!strcmp(s, "q4_K")) return GGML_TYPE_Q4_K;
    if (!strcmp(s, "q5_K")) return GGML_TYPE_Q5_K;
    if (!strcmp(s, "q6_K")) return GGML_TYPE_Q6_K;
    fprintf(stderr, "unknown type %s\n", s);
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s THREADS TYPE N K [M]\n", argv[0]);
        return 2;
    }
    int threads = atoi(argv[1]);
    enum ggml_type ty = type_of(argv[2]);
    int64_t n = atoll(argv[3]), k = atoll(argv[4]), m = argc > 5 ? atoll(argv[5]) : 1;
    size_t wbytes = ggml_row_size(ty, k) * n;
    struct ggml_init_params ip = { wbytes + m * k * 4 + m * n * 4 + (64 << 20), NULL, false };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *w = ggml_new_tensor_2d(ctx, ty, k, n);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m);
    float *src = malloc(sizeof(float) * k * 16);
    unsigned s = 12345;
    for (int64_t i = 0; i < k * 16; i++) {
        s = s * 1664525u + 1013904223u;
        src[i] = ((s >> 9) % 2001) / 1000.0f - 1.0f;
    }
    // 16 distinct rows repeated, as bench_ggml does.
    size_t rb = ggml_row_size(ty, k);
    char *tmp = malloc(rb * 16);
    ggml_quantize_chunk(ty, src, tmp, 0, 16, k, NULL);
    for (int64_t r = 0; r < n; r++) memcpy((char *)w->data + r * rb, tmp + (r % 16) * rb, rb);
    for (int64_t i = 0; i < k * m; i++) ((float *)x->data)[i] = src[i % (k * 16)];
    struct ggml_tensor *y = ggml_mul_mat(ctx, w, x);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, y);
    struct ggml_threadpool_params tp = ggml_threadpool_params_default(threads);
    struct ggml_threadpool *pool = ggml_threadpool_new(&tp);
    struct ggml_cplan plan = ggml_graph_plan(g, threads, pool);
    plan.work_data = malloc(plan.work_size + 64);
    enum { RUNS = 41 };
    double t[RUNS];
    int reps = (int)(2e7 / (double)(wbytes + 1)) + 1; // ~20 MB of weights per sample
    for (int i = 0; i < 3; i++) ggml_graph_compute(g, &plan);
    for (int r = 0; r < RUNS; r++) {
        double t0 = now();
        for (int i = 0; i < reps; i++) ggml_graph_compute(g, &plan);
        t[r] = (now() - t0) / reps;
    }
    qsort(t, RUNS, sizeof t[0], cmp);
    printf("ggml %s %lldx%lld m=%lld thr=%d: %.4f ms (%.2f GB/s of weights)\n", argv[2], (long long)n, (long long)k,
           (long long)m, threads, t[RUNS / 2] * 1e3, wbytes / t[RUNS / 2] / 1e9);
    ggml_threadpool_free(pool);
    return 0;
}
