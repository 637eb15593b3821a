/* Handles, creation, metadata, element access, printing, vectors, maps, devices, streams,
 * memory, versions, hooks and every error path of the non-op API.
 * Expected printed forms are real MLX's `repr` output (MLX 0.x, C++ formatter: bools print
 * true/false in C++, True/False only in Python). */
#include <stdint.h>
#include <stdlib.h>
#ifdef _WIN32
#include <malloc.h>
#endif

#include "check.h"

static int g_dtor_calls = 0;
static void counting_free(void* p) {
  g_dtor_calls++;
  free(p);
}
static void counting_dtor(void* p) {
  (void)p;
  g_dtor_calls++;
}

static void test_scalars_and_items(void) {
  mlx_array a = mlx_array_new_float(2.5f);
  float f = 0;
  CHECK_OK(mlx_array_item_float32(&f, a));
  CHECK(f == 2.5f);
  CHECK(mlx_array_ndim(a) == 0 && mlx_array_size(a) == 1 && mlx_array_dtype(a) == MLX_FLOAT32);
  CHECK(mlx_array_itemsize(a) == 4 && mlx_array_nbytes(a) == 4);
  CHECK_REPR(a, "array(2.5, dtype=float32)");
  int32_t i = 0;
  CHECK_FAILS(mlx_array_item_int32(&i, a), "float32");
  CHECK_OK(mlx_array_set_int(&a, 3));
  CHECK_OK(mlx_array_item_int32(&i, a));
  CHECK(i == 3 && mlx_array_dtype(a) == MLX_INT32);
  CHECK_REPR(a, "array(3, dtype=int32)");
  CHECK_OK(mlx_array_set_bool(&a, true));
  CHECK_REPR(a, "array(true, dtype=bool)");
  CHECK_OK(mlx_array_set_double(&a, 0.1));
  double d = 0;
  CHECK_OK(mlx_array_item_float64(&d, a));
  CHECK(d == 0.1 && mlx_array_dtype(a) == MLX_FLOAT64);
  CHECK_OK(mlx_array_set_complex(&a, 1.0f, -2.5f));
  CHECK_REPR(a, "array(1-2.5j, dtype=complex64)");
  mlx_complex64_t c;
  CHECK_OK(mlx_array_item_complex64(&c, a));
  const float* parts = (const float*)&c;
  CHECK(parts[0] == 1.0f && parts[1] == -2.5f);
  mlx_array_free(a);

  mlx_array b = mlx_array_new_bool(false);
  bool bv = true;
  CHECK_OK(mlx_array_item_bool(&bv, b));
  CHECK(!bv);
  mlx_array_free(b);

  /* item of more than one element */
  int shape[] = {2};
  float data[] = {1, 2};
  mlx_array two = mlx_array_new_data(data, shape, 1, MLX_FLOAT32);
  CHECK_FAILS(mlx_array_item_float32(&f, two), "size 1");
  CHECK_FAILS(mlx_array_item_float32(NULL, two), "NULL");
  mlx_array_free(two);
}

static void test_new_data_and_printing(void) {
  float data[] = {1, 2, 3, 4, 5, 6};
  int shape[] = {2, 3};
  mlx_array a = mlx_array_new_data(data, shape, 2, MLX_FLOAT32);
  CHECK(mlx_array_ndim(a) == 2 && mlx_array_shape(a)[0] == 2 && mlx_array_shape(a)[1] == 3);
  CHECK(mlx_array_dim(a, -1) == 3);
  CHECK(mlx_array_strides(a)[0] == 3 && mlx_array_strides(a)[1] == 1);
  CHECK_REPR(a, "array([[1, 2, 3],\n       [4, 5, 6]], dtype=float32)");
  const float* p = mlx_array_data_float32(a);
  CHECK(p && p[5] == 6.0f);
  CHECK(mlx_array_data_int32(a) == NULL);
  CHECK(strstr(g_last_msg, "float32") != NULL);

  /* a transposed view: data_* gives a dense copy in row-major order */
  mlx_stream s = mlx_default_cpu_stream_new();
  mlx_array t = mlx_array_new();
  CHECK_OK(mlx_transpose(&t, a, s));
  bool contiguous = true;
  CHECK_OK(mlx_array_eval(t));
  CHECK_OK(_mlx_array_is_row_contiguous(&contiguous, t));
  CHECK(!contiguous);
  const float* tp = mlx_array_data_float32(t);
  CHECK(tp && tp[0] == 1 && tp[1] == 4 && tp[2] == 2 && tp[5] == 6);
  CHECK_REPR(t, "array([[1, 4],\n       [2, 5],\n       [3, 6]], dtype=float32)");

  /* printing: %g floats, summarization of axes longer than 6, empty, bool, int8 */
  mlx_array r = mlx_array_new();
  CHECK_OK(mlx_arange(&r, 0, 2000, 1, MLX_INT32, s));
  CHECK_REPR(r, "array([0, 1, 2, ..., 1997, 1998, 1999], dtype=int32)");
  float odd[] = {1e10f, 1e-7f, 3.14159265f, NAN, INFINITY, -INFINITY};
  int six[] = {6};
  CHECK_OK(mlx_array_set_data(&r, odd, six, 1, MLX_FLOAT32));
  CHECK_REPR(r, "array([1e+10, 1e-07, 3.14159, nan, inf, -inf], dtype=float32)");
  int empty_shape[] = {2, 0};
  CHECK_OK(mlx_array_set_data(&r, NULL, empty_shape, 2, MLX_FLOAT32));
  CHECK_REPR(r, "array([[],\n       []], dtype=float32)");
  bool bools[] = {true, false};
  int two[] = {2};
  CHECK_OK(mlx_array_set_data(&r, bools, two, 1, MLX_BOOL));
  CHECK_REPR(r, "array([true, false], dtype=bool)");
  int8_t i8[] = {-1, 100};
  CHECK_OK(mlx_array_set_data(&r, i8, two, 1, MLX_INT8));
  CHECK_REPR(r, "array([-1, 100], dtype=int8)");
  mlx_array z = mlx_array_new();
  CHECK_OK(mlx_zeros(&z, (int[]){2, 2, 2}, 3, MLX_INT8, s));
  CHECK_REPR(z, "array([[[0, 0],\n        [0, 0]],\n       [[0, 0],\n        [0, 0]]], dtype=int8)");
  mlx_array big = mlx_array_new();
  CHECK_OK(mlx_arange(&big, 0, 1001, 1, MLX_INT32, s));
  CHECK_OK(mlx_reshape(&big, big, (int[]){7, 143}, 2, s));
  CHECK_REPR(big,
             "array([[0, 1, 2, ..., 140, 141, 142],\n"
             "       [143, 144, 145, ..., 283, 284, 285],\n"
             "       [286, 287, 288, ..., 426, 427, 428],\n"
             "       ...,\n"
             "       [572, 573, 574, ..., 712, 713, 714],\n"
             "       [715, 716, 717, ..., 855, 856, 857],\n"
             "       [858, 859, 860, ..., 998, 999, 1000]], dtype=int32)");

  /* bad input to mlx_array_new_data: each returns the empty handle after one message */
  int before = g_errors;
  mlx_array bad = mlx_array_new_data(data, shape, -1, MLX_FLOAT32);
  CHECK(bad.ctx == NULL && g_errors == before + 1);
  bad = mlx_array_new_data(data, (int[]){2, -3}, 2, MLX_FLOAT32);
  CHECK(bad.ctx == NULL && g_errors == before + 2 && strstr(g_last_msg, "negative"));
  bad = mlx_array_new_data(NULL, shape, 2, MLX_FLOAT32);
  CHECK(bad.ctx == NULL && g_errors == before + 3 && strstr(g_last_msg, "NULL"));
  bad = mlx_array_new_data(data, NULL, 2, MLX_FLOAT32);
  CHECK(bad.ctx == NULL && g_errors == before + 4);
  bad = mlx_array_new_data(data, shape, 2, (mlx_dtype)99);
  CHECK(bad.ctx == NULL && g_errors == before + 5 && strstr(g_last_msg, "mlx_dtype"));
  CHECK(mlx_dtype_size(MLX_BFLOAT16) == 2 && mlx_dtype_size(MLX_COMPLEX64) == 8);

  mlx_array_free(a);
  mlx_array_free(t);
  mlx_array_free(r);
  mlx_array_free(z);
  mlx_array_free(big);
  mlx_stream_free(s);
}

static void test_managed_and_set(void) {
  int shape[] = {2, 2};
  float* buf = (float*)malloc(4 * sizeof(float));
  for (int i = 0; i < 4; i++) buf[i] = (float)i;
  g_dtor_calls = 0;
  mlx_array m = mlx_array_new_data_managed(buf, shape, 2, MLX_FLOAT32, counting_free);
  CHECK_REPR(m, "array([[0, 1],\n       [2, 3]], dtype=float32)");
  CHECK(mlx_array_data_float32(m) == buf); /* no copy */
  mlx_array alias = mlx_array_new();
  CHECK_OK(mlx_array_set(&alias, m));
  mlx_array_free(m);
  CHECK(g_dtor_calls == 0); /* alias still holds it */
  mlx_array_free(alias);
  CHECK(g_dtor_calls == 1);

  static int payload = 42;
  static float fixed[3] = {1, 2, 3};
  mlx_array p = mlx_array_new_data_managed_payload(fixed, (int[]){3}, 1, MLX_FLOAT32, &payload, counting_dtor);
  mlx_array_free(p);
  CHECK(g_dtor_calls == 2);
  /* a failing managed creation still releases the buffer */
  p = mlx_array_new_data_managed_payload(fixed, (int[]){-3}, 1, MLX_FLOAT32, &payload, counting_dtor);
  CHECK(p.ctx == NULL && g_dtor_calls == 3);
}

static void test_handles_and_errors(void) {
  mlx_stream s = mlx_default_cpu_stream_new();
  mlx_array empty = mlx_array_new();
  mlx_array res = mlx_array_new();
  mlx_array one = mlx_array_new_float(1.0f);
  CHECK_FAILS(mlx_exp(&res, empty, s), "non-empty mlx_array");
  CHECK(res.ctx == NULL);
  CHECK_FAILS(mlx_add(NULL, one, one, s), "NULL");
  CHECK_FAILS(mlx_exp(&res, one, mlx_stream_new()), "non-empty mlx_stream");
  CHECK_FAILS(mlx_astype(&res, one, (mlx_dtype)14, s), "mlx_dtype");
  CHECK_FAILS(mlx_sum_axes(&res, one, NULL, 2, false, s), "NULL");
  CHECK_FAILS(mlx_array_eval(empty), "non-empty");
  CHECK(mlx_array_size(empty) == 0 && mlx_array_shape(empty) == NULL);
  CHECK_OK(mlx_array_free(empty)); /* freeing the empty handle is fine */

  /* a failed op leaves an existing result untouched */
  CHECK_OK(mlx_exp(&res, one, s));
  CHECK_FAILS(mlx_reshape(&res, one, (int[]){2}, 1, s), "reshape");
  float v = 0;
  CHECK_OK(mlx_array_item_float32(&v, res));
  CHECK(fabsf(v - 2.7182817f) < 1e-6f);

  /* mlx_error (the mlx-c macro) reaches the handler with file:line */
  mlx_error("custom %d", 7);
  CHECK(strstr(g_last_msg, "custom 7 at ") != NULL && strstr(g_last_msg, "test_api.c") != NULL);
  CHECK(strcmp(mlx_arm_last_error(), g_last_msg) == 0);
  mlx_arm_clear_last_error();
  CHECK(strcmp(mlx_arm_last_error(), "") == 0);

  /* the default handler prints and returns: the program goes on */
  mlx_set_error_handler(NULL, NULL, NULL);
  fprintf(stderr, "(an 'MLX error' line is expected next)\n");
  CHECK(mlx_exp(&res, mlx_array_new(), s) != 0);
  /* replacing a handler runs the previous data's destructor */
  g_dtor_calls = 0;
  mlx_set_error_handler(test_handler, &g_errors, counting_dtor);
  install_test_handler();
  CHECK(g_dtor_calls == 1);

  mlx_array_free(res);
  mlx_array_free(one);
  mlx_stream_free(s);
}

static void test_devices_streams(void) {
  mlx_device dev = mlx_device_new();
  CHECK_OK(mlx_get_default_device(&dev));
  mlx_device_type t = MLX_GPU;
  CHECK_OK(mlx_device_get_type(&t, dev));
  CHECK(t == MLX_CPU);
  mlx_string str = mlx_string_new();
  CHECK_OK(mlx_device_tostring(&str, dev));
  CHECK_STR(mlx_string_data(str), "Device(cpu, 0)");
  int count = -1;
  CHECK_OK(mlx_device_count(&count, MLX_GPU));
  CHECK(count == 0);
  CHECK_OK(mlx_device_count(&count, MLX_CPU));
  CHECK(count == 1);

  mlx_stream s = mlx_default_cpu_stream_new();
  CHECK(s.ctx != NULL);
  CHECK_OK(mlx_stream_tostring(&str, s));
  CHECK_STR(mlx_string_data(str), "Stream(Device(cpu, 0), 0)");
  CHECK_OK(mlx_synchronize(s));
  mlx_stream s2 = mlx_stream_new_device(dev);
  CHECK(s2.ctx != NULL && !mlx_stream_equal(s, s2));
  mlx_stream s3 = mlx_stream_new();
  CHECK_OK(mlx_get_default_stream(&s3, dev));
  CHECK(mlx_stream_equal(s, s3));
  mlx_device d2 = mlx_device_new();
  CHECK_OK(mlx_stream_get_device(&d2, s2));
  CHECK(mlx_device_equal(dev, d2));

  /* the GPU: no backend, so clean errors */
  int before = g_errors;
  mlx_stream gpu = mlx_default_gpu_stream_new();
  CHECK(gpu.ctx == NULL && g_errors == before + 1 && strstr(g_last_msg, "GPU"));
  mlx_device gdev = mlx_device_new_type(MLX_GPU, 0);
  bool avail = true;
  CHECK_OK(mlx_device_is_available(&avail, gdev));
  CHECK(!avail);
  CHECK_FAILS(mlx_set_default_device(gdev), "GPU");
  mlx_stream gs = mlx_stream_new_device(gdev);
  CHECK(gs.ctx == NULL);
  mlx_device bad = mlx_device_new_type((mlx_device_type)7, 0);
  CHECK(bad.ctx == NULL && strstr(g_last_msg, "mlx_device_type"));

  /* device info */
  mlx_device_info info = mlx_device_info_new();
  CHECK_OK(mlx_device_info_get(&info, dev));
  mlx_vector_string keys = mlx_vector_string_new();
  CHECK_OK(mlx_device_info_get_keys(&keys, info));
  CHECK(mlx_vector_string_size(keys) == 3);
  const char* name = NULL;
  CHECK(mlx_device_info_get_string(&name, info, "device_name") == 0);
  CHECK_STR(name, "cpu");
  size_t cores = 0;
  CHECK(mlx_device_info_get_size(&cores, info, "num_cores") == 0 && cores >= 1);
  CHECK(mlx_device_info_get_size(&cores, info, "nope") == 2);
  mlx_vector_string_free(keys);
  mlx_device_info_free(info);

  mlx_string_free(str);
  mlx_stream_free(s);
  mlx_stream_free(s2);
  mlx_stream_free(s3);
  mlx_device_free(dev);
  mlx_device_free(d2);
  mlx_device_free(gdev);
}

static void test_vectors_maps_strings(void) {
  mlx_stream s = mlx_default_cpu_stream_new();
  mlx_array a = mlx_array_new_float(1.0f), b = mlx_array_new_int(2);
  mlx_vector_array v = mlx_vector_array_new();
  CHECK(mlx_vector_array_size(v) == 0);
  CHECK_OK(mlx_vector_array_append_value(v, a));
  mlx_array both[] = {a, b};
  CHECK_OK(mlx_vector_array_append_data(v, both, 2));
  CHECK(mlx_vector_array_size(v) == 3);
  mlx_array got = mlx_array_new();
  CHECK_OK(mlx_vector_array_get(&got, v, 2));
  CHECK(mlx_array_dtype(got) == MLX_INT32);
  CHECK_FAILS(mlx_vector_array_get(&got, v, 3), "out of range");
  CHECK_OK(mlx_eval(v));
  mlx_vector_array w = mlx_vector_array_new_data(both, 2);
  mlx_vector_array out = mlx_vector_array_new();
  CHECK_OK(mlx_broadcast_arrays(&out, w, s));
  CHECK(mlx_vector_array_size(out) == 2);
  mlx_vector_array none = {NULL};
  CHECK_FAILS(mlx_eval(none), "non-empty mlx_vector_array");
  int before = g_errors;
  none = mlx_vector_array_new_data(NULL, 1);
  CHECK(none.ctx == NULL && g_errors == before + 1);

  mlx_vector_int vi = mlx_vector_int_new_value(5);
  int x = 0;
  CHECK_OK(mlx_vector_int_append_value(vi, 6));
  CHECK_OK(mlx_vector_int_get(&x, vi, 1));
  CHECK(x == 6 && mlx_vector_int_size(vi) == 2);

  mlx_map_string_to_array m = mlx_map_string_to_array_new();
  CHECK_OK(mlx_map_string_to_array_insert(m, "weight", a));
  CHECK_OK(mlx_map_string_to_array_insert(m, "bias", b));
  CHECK_OK(mlx_map_string_to_array_get(&got, m, "weight"));
  CHECK(mlx_array_dtype(got) == MLX_FLOAT32);
  CHECK_FAILS(mlx_map_string_to_array_get(&got, m, "missing"), "missing");
  mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(m);
  const char* key = NULL;
  int n = 0;
  while (mlx_map_string_to_array_iterator_next(&key, &got, it) == 0) {
    CHECK_STR(key, n == 0 ? "bias" : "weight");
    n++;
  }
  CHECK(n == 2);
  mlx_map_string_to_array_iterator_free(it);

  mlx_string str = mlx_string_new_data("hello");
  mlx_string copy = mlx_string_new();
  CHECK_OK(mlx_string_set(&copy, str));
  CHECK_STR(mlx_string_data(copy), "hello");
  CHECK(mlx_string_data(mlx_string_new()) == NULL);

  mlx_string_free(str);
  mlx_string_free(copy);
  mlx_map_string_to_array_free(m);
  mlx_vector_int_free(vi);
  mlx_vector_array_free(v);
  mlx_vector_array_free(w);
  mlx_vector_array_free(out);
  mlx_array_free(got);
  mlx_array_free(a);
  mlx_array_free(b);
  mlx_stream_free(s);
}

/* Vectors of vectors of arrays: elements are copied in (a later change to the source vector
 * does not reach them) and `get` hands out a vector of its own, sharing the arrays. */
static void test_vector_vector_array(void) {
  mlx_array a = mlx_array_new_float(1.5f), b = mlx_array_new_int(7);
  mlx_array ab[] = {a, b};
  mlx_vector_array one = mlx_vector_array_new_value(a), two = mlx_vector_array_new_data(ab, 2);
  mlx_vector_vector_array vv = mlx_vector_vector_array_new();
  CHECK(mlx_vector_vector_array_size(vv) == 0);
  CHECK_OK(mlx_vector_vector_array_append_value(vv, one));
  mlx_vector_array pair[] = {two, one};
  CHECK_OK(mlx_vector_vector_array_append_data(vv, pair, 2));
  CHECK(mlx_vector_vector_array_size(vv) == 3);
  CHECK_OK(mlx_vector_array_append_value(one, b)); /* after the copy: not seen by vv */

  mlx_vector_array got = mlx_vector_array_new();
  CHECK_OK(mlx_vector_vector_array_get(&got, vv, 1));
  CHECK(mlx_vector_array_size(got) == 2);
  mlx_array x = mlx_array_new();
  CHECK_OK(mlx_vector_array_get(&x, got, 1));
  int32_t seven = 0;
  CHECK_OK(mlx_array_item_int32(&seven, x));
  CHECK(seven == 7);
  CHECK_OK(mlx_vector_vector_array_get(&got, vv, 2));
  CHECK(mlx_vector_array_size(got) == 1);
  CHECK_FAILS(mlx_vector_vector_array_get(&got, vv, 3), "out of range");

  mlx_vector_vector_array copy = mlx_vector_vector_array_new();
  CHECK_OK(mlx_vector_vector_array_set(&copy, vv));
  CHECK_OK(mlx_vector_vector_array_set_value(&vv, two));
  CHECK(mlx_vector_vector_array_size(vv) == 1 && mlx_vector_vector_array_size(copy) == 3);
  CHECK_OK(mlx_vector_vector_array_set_data(&vv, pair, 2));
  CHECK(mlx_vector_vector_array_size(vv) == 2);
  mlx_vector_vector_array from_data = mlx_vector_vector_array_new_data(pair, 2);
  mlx_vector_vector_array from_value = mlx_vector_vector_array_new_value(two);
  CHECK(mlx_vector_vector_array_size(from_data) == 2 && mlx_vector_vector_array_size(from_value) == 1);

  mlx_vector_array none = {NULL};
  CHECK_FAILS(mlx_vector_vector_array_append_value(vv, none), "mlx_vector_array");
  mlx_vector_vector_array empty = {NULL};
  CHECK(mlx_vector_vector_array_size(empty) == 0);
  int before = g_errors;
  empty = mlx_vector_vector_array_new_data(NULL, 1);
  CHECK(empty.ctx == NULL && g_errors == before + 1);

  mlx_vector_vector_array_free(from_value);
  mlx_vector_vector_array_free(from_data);
  mlx_vector_vector_array_free(copy);
  mlx_vector_vector_array_free(vv);
  mlx_vector_array_free(got);
  mlx_vector_array_free(two);
  mlx_vector_array_free(one);
  mlx_array_free(x);
  mlx_array_free(a);
  mlx_array_free(b);
}

static void test_memory(void) {
  mlx_stream s = mlx_default_cpu_stream_new();
  size_t active0 = 0, peak = 0, prev = 0, limit = 0;
  CHECK_OK(mlx_get_active_memory(&active0));
  float data[1000] = {0};
  mlx_array a = mlx_array_new_data(data, (int[]){1000}, 1, MLX_FLOAT32);
  size_t active1 = 0;
  CHECK_OK(mlx_get_active_memory(&active1));
  CHECK(active1 >= active0 + 4000);
  CHECK_OK(mlx_get_peak_memory(&peak));
  CHECK(peak >= active1);
  mlx_arm_memory_stats st;
  CHECK_OK(mlx_arm_get_memory_stats(&st));
  CHECK(st.active == active1 && st.peak >= st.active);

  /* allocation failure: creation and evaluation both fail cleanly */
  CHECK_OK(mlx_set_memory_limit(&prev, active1 + 1024));
  CHECK_OK(mlx_get_memory_limit(&limit));
  CHECK(limit == active1 + 1024);
  int before = g_errors;
  mlx_array big = mlx_array_new_data(data, (int[]){1000}, 1, MLX_FLOAT32);
  CHECK(big.ctx == NULL && g_errors == before + 1 && strstr(g_last_msg, "allocate"));
  mlx_array lazy = mlx_array_new();
  CHECK_OK(mlx_zeros(&lazy, (int[]){100000}, 1, MLX_FLOAT32, s)); /* lazy: no memory until evaluated */
  CHECK_OK(mlx_exp(&lazy, lazy, s));
  CHECK_FAILS(mlx_array_eval(lazy), "allocate");
  CHECK_OK(mlx_set_memory_limit(&prev, prev));
  mlx_array_free(lazy);
  mlx_array_free(a);
  size_t active2 = 0;
  CHECK_OK(mlx_get_active_memory(&active2));
  CHECK(active2 == active0);
  CHECK_OK(mlx_reset_peak_memory());
  CHECK_OK(mlx_clear_cache());
  mlx_stream_free(s);
}

static int g_hook_calls = 0;
static void serial_parallel_for(size_t n, size_t grain, mlx_arm_parallel_task task, void* ctx, void* user) {
  (*(int*)user)++;
  for (size_t b = 0; b < n; b += grain) {
    task(b, b + grain < n ? b + grain : n, ctx);
  }
}

static size_t g_allocs = 0, g_frees = 0;
static void* counting_alloc(size_t size, size_t align, void* user) {
  (void)user;
  g_allocs++;
#ifdef _WIN32 /* the Windows CRT has no aligned_alloc (tests/windows runs this file) */
  return _aligned_malloc((size + align - 1) / align * align, align);
#else
  return aligned_alloc(align, (size + align - 1) / align * align);
#endif
}
static void counting_release(void* p, size_t size, size_t align, void* user) {
  (void)size;
  (void)align;
  (void)user;
  g_frees++;
#ifdef _WIN32
  _aligned_free(p);
#else
  free(p);
#endif
}

static void test_hooks_and_versions(void) {
  mlx_stream s = mlx_default_cpu_stream_new();
  CHECK_OK(mlx_arm_set_parallel_for(serial_parallel_for, &g_hook_calls));
  CHECK_OK(mlx_arm_set_allocator(counting_alloc, counting_release, NULL));
  mlx_array x = mlx_array_new();
  CHECK_OK(mlx_arange(&x, 0, 200000, 1, MLX_FLOAT32, s));
  CHECK_OK(mlx_multiply(&x, x, x, s));
  CHECK_OK(mlx_sqrt(&x, x, s));
  const float* p = mlx_array_data_float32(x);
  CHECK(p && p[199999] == 199999.0f && p[7] == 7.0f);
  CHECK(g_hook_calls > 0);
  CHECK(g_allocs > 0);
  mlx_array_free(x);
  CHECK_OK(mlx_clear_cache()); /* freed blocks may sit in the cache until now */
  size_t cached = 1;
  CHECK_OK(mlx_get_cache_memory(&cached));
  CHECK(cached == 0);
  CHECK(g_frees == g_allocs);
  CHECK_OK(mlx_arm_set_allocator(NULL, NULL, NULL));
  CHECK_OK(mlx_arm_set_parallel_for(NULL, NULL));
  CHECK_FAILS(mlx_arm_set_allocator(counting_alloc, NULL, NULL), "both");

  CHECK(mlx_arm_abi_version() == MLX_ARM_ABI_VERSION);
  CHECK(mlx_arm_version_number() == MLX_ARM_VERSION);
  CHECK_STR(mlx_arm_version_string(), MLX_ARM_VERSION_STRING);
  mlx_string v = mlx_string_new();
  CHECK_OK(mlx_version(&v));
  CHECK_STR(mlx_string_data(v), "0.32.4"); /* the MLX version the API matches, as mlx-c */
  CHECK_OK(mlx_arm_platform_info(&v));
  CHECK(strstr(mlx_string_data(v), "arch=") != NULL);
  mlx_string_free(v);
  mlx_stream_free(s);
}

/* mlx_arm_index_basic(_update): a whole basic index in one call (values hand-computed from
 * a = arange(24).reshape(2, 3, 4), as numpy gives them). */
static void test_index_basic(void) {
  mlx_stream s = mlx_default_cpu_stream_new();
  int32_t data[24];
  for (int i = 0; i < 24; i++) data[i] = i;
  int shape[] = {2, 3, 4};
  mlx_array a = mlx_array_new_data(data, shape, 3, MLX_INT32);
  mlx_array r = mlx_array_new();
  /* a[..., 1:3, -1] -> [[7, 11], [19, 23]] */
  const int64_t idx[] = {2, 8 | 3, 1, 3, 0, 0, -1};
  CHECK_OK(mlx_arm_index_basic(&r, a, idx, 7, s));
  CHECK_OK(mlx_array_eval(r));
  CHECK(mlx_array_ndim(r) == 2 && mlx_array_shape(r)[0] == 2 && mlx_array_shape(r)[1] == 2);
  const int32_t* v = mlx_array_data_int32(r);
  CHECK(v && v[0] == 7 && v[1] == 11 && v[2] == 19 && v[3] == 23);
  /* a[1, None, ::-2, 0] -> [[20, 12]] (start 2 then 0; the new axis keeps a 1) */
  const int64_t idx2[] = {0, 1, 1, 8 | 4, 0, 0, -2, 0, 0};
  CHECK_OK(mlx_arm_index_basic(&r, a, idx2, 9, s));
  CHECK_OK(mlx_array_eval(r));
  CHECK(mlx_array_ndim(r) == 2 && mlx_array_shape(r)[0] == 1 && mlx_array_shape(r)[1] == 2);
  v = mlx_array_data_int32(r);
  CHECK(v && v[0] == 20 && v[1] == 12);
  /* a[0, ::2] = [100, 101, 102, 103]: rows 0 and 2 of block 0, broadcast */
  int ushape[] = {4};
  int32_t udata[] = {100, 101, 102, 103};
  mlx_array u = mlx_array_new_data(udata, ushape, 1, MLX_INT32);
  const int64_t idx3[] = {0, 0, 8 | 4, 0, 0, 2};
  CHECK_OK(mlx_arm_index_basic_update(&r, a, u, idx3, 6, s));
  CHECK_OK(mlx_array_eval(r));
  v = mlx_array_data_int32(r);
  CHECK(v && mlx_array_size(r) == 24 && v[0] == 100 && v[3] == 103 && v[4] == 4 && v[8] == 100 && v[11] == 103 &&
        v[12] == 12);
  /* errors: out of range, too many entries, zero step, not 32-bit, a bad code, an update that
   * does not broadcast */
  const int64_t oob[] = {0, 2};
  CHECK_FAILS(mlx_arm_index_basic(&r, a, oob, 2, s), "out of range");
  const int64_t many[] = {0, 0, 0, 0, 0, 0, 0, 0};
  CHECK_FAILS(mlx_arm_index_basic(&r, a, many, 8, s), "too many");
  const int64_t zero[] = {8 | 4, 0, 0, 0};
  CHECK_FAILS(mlx_arm_index_basic(&r, a, zero, 4, s), "zero");
  const int64_t wide[] = {0, (int64_t)1 << 40};
  CHECK_FAILS(mlx_arm_index_basic(&r, a, wide, 2, s), "32-bit");
  const int64_t code[] = {5};
  CHECK_FAILS(mlx_arm_index_basic(&r, a, code, 1, s), "unknown");
  CHECK_FAILS(mlx_arm_index_basic(&r, a, NULL, 2, s), "NULL");
  const int64_t rows[] = {8 | 3, 0, 1};
  CHECK_FAILS(mlx_arm_index_basic_update(&r, a, u, rows, 3, s), "slice entry");
  const int64_t idx4[] = {2, 8 | 3, 0, 2, 0, 8, 0, 0, 0}; /* a[..., 0:2, :]: window (2, 2, 4) */
  mlx_array big = mlx_array_new_data(data, shape, 3, MLX_INT32);
  CHECK_FAILS(mlx_arm_index_basic_update(&r, a, big, idx4, 9, s), "broadcast");
  mlx_array_free(big);
  mlx_array_free(u);
  mlx_array_free(r);
  mlx_array_free(a);
  mlx_stream_free(s);
}

int main(void) {
  install_test_handler();
  test_scalars_and_items();
  test_new_data_and_printing();
  test_managed_and_set();
  test_handles_and_errors();
  test_devices_streams();
  test_vectors_maps_strings();
  test_vector_vector_array();
  test_memory();
  test_hooks_and_versions();
  test_index_basic();
  return finish("test_api");
}
