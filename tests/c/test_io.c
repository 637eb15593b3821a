/* io.h and the mlx_arm_ file extensions: files written by numpy, real MLX and gguf-py
 * (tests/c/data, made by gen_io_files.py, values in io_golden.h) read back identically;
 * files written through the C API read back identically; hostile files and bad arguments
 * give a non-zero status and one message. Scratch files go to the working directory. */
#include <stdio.h>

#include "golden_support.h"
#include "io_golden.h"

#ifndef MLX_ARM_TEST_DATA
#error "compile with -DMLX_ARM_TEST_DATA=\"<repo>/tests/c/data\""
#endif
#define DATA(name) MLX_ARM_TEST_DATA "/" name

/* The array at `key` of `m` equals `want` (dtype, shape, values). */
static void expect_entry(const char* what, mlx_map_string_to_array m, const char* key, mlx_dtype dtype,
                         const int* shape, int ndim, const double* want, size_t n) {
  mlx_array a = mlx_array_new();
  CHECK_OK(mlx_map_string_to_array_get(&a, m, key));
  expect_array(what, a, dtype, shape, ndim, want, n);
  mlx_array_free(a);
}

static void expect_string(mlx_map_string_to_string m, const char* key, const char* want) {
  const char* v = NULL;
  CHECK_OK(mlx_map_string_to_string_get(&v, m, key));
  CHECK_STR(v, want);
}

static void write_bytes(const char* path, const void* p, size_t n) {
  FILE* f = fopen(path, "wb");
  if (f) {
    fwrite(p, 1, n, f);
    fclose(f);
  }
}

/* The first `n` bytes of `src` copied to `dst` (a truncated file). */
static void truncate_copy(const char* src, const char* dst, size_t n) {
  char buf[4096];
  FILE* f = fopen(src, "rb");
  size_t got = f ? fread(buf, 1, n < sizeof buf ? n : sizeof buf, f) : 0;
  if (f) fclose(f);
  write_bytes(dst, buf, got);
}

static const int s23[] = {2, 3}, s4[] = {4}, s22[] = {2, 2};

static void reference_files(mlx_stream s) {
  /* numpy's .npy through mlx-c's mlx_load */
  mlx_array a = mlx_array_new();
  CHECK_OK(mlx_load(&a, DATA("mlx.npy"), s));
  expect_array("npy", a, MLX_FLOAT32, s23, 2, io_a, 6);
  mlx_array_free(a);

  /* real MLX's safetensors with metadata */
  mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
  mlx_map_string_to_string meta = mlx_map_string_to_string_new();
  CHECK_OK(mlx_load_safetensors(&arrays, &meta, DATA("mlx.safetensors"), s));
  expect_entry("st a", arrays, "a", MLX_FLOAT32, s23, 2, io_a, 6);
  expect_entry("st b", arrays, "b", MLX_INT32, s4, 1, io_b, 4);
  expect_entry("st c", arrays, "c", MLX_FLOAT16, s22, 2, io_c, 4);
  expect_string(meta, "format", "mlx");
  expect_string(meta, "note", "written by real MLX");
  /* iterate the metadata: two entries in key order */
  mlx_map_string_to_string_iterator it = mlx_map_string_to_string_iterator_new(meta);
  const char *k = NULL, *v = NULL;
  CHECK(mlx_map_string_to_string_iterator_next(&k, &v, it) == 0 && strcmp(k, "format") == 0);
  CHECK(mlx_map_string_to_string_iterator_next(&k, &v, it) == 0 && strcmp(k, "note") == 0);
  CHECK(mlx_map_string_to_string_iterator_next(&k, &v, it) == 2);
  mlx_map_string_to_string_iterator_free(it);
  mlx_map_string_to_array_free(arrays);
  mlx_map_string_to_string_free(meta);

  /* real MLX's .npz and .gguf through mx.load's any-format path */
  arrays = mlx_map_string_to_array_new();
  CHECK_OK(mlx_arm_load(&arrays, DATA("mlx.npz"), NULL, s));
  expect_entry("npz a", arrays, "a", MLX_FLOAT32, s23, 2, io_a, 6);
  expect_entry("npz b", arrays, "b", MLX_INT32, s4, 1, io_b, 4);
  CHECK_OK(mlx_arm_load(&arrays, DATA("mlx.gguf"), "gguf", s));
  expect_entry("gguf a", arrays, "a", MLX_FLOAT32, s23, 2, io_a, 6);
  mlx_map_string_to_array_free(arrays);

  /* the native GGUF path: real MLX's file, then gguf-py's Q4_0 file */
  mlx_map_string_to_array t = mlx_map_string_to_array_new(), sh = mlx_map_string_to_array_new(),
                          ma = mlx_map_string_to_array_new();
  mlx_map_string_to_string ty = mlx_map_string_to_string_new(), ms = mlx_map_string_to_string_new();
  CHECK_OK(mlx_arm_load_gguf(&t, &ty, &sh, &ma, &ms, DATA("mlx.gguf"), s));
  expect_string(ty, "a", "f32");
  expect_string(ty, "b", "i32");
  static const double sh_a[] = {2, 3};
  static const int s2[] = {2}, s1[] = {1}, s0[] = {0};
  expect_entry("gguf shape a", sh, "a", MLX_INT64, s2, 1, sh_a, 2);
  static const double n7[] = {7}, v2[] = {1.0, 2.5};
  expect_entry("gguf meta n", ma, "n", MLX_INT32, s0, 0, n7, 1);
  expect_entry("gguf meta v", ma, "v", MLX_FLOAT32, s2, 1, v2, 2);
  expect_string(ms, "name", "tiny");
  expect_string(ms, "tokens", "[\"x\",\"y\\\"z\"]");

  CHECK_OK(mlx_arm_load_gguf(&t, &ty, &sh, &ma, &ms, DATA("q4_0.gguf"), s));
  expect_string(ty, "w", "q4_0");
  static const double sh_w[] = {3, 64}, one[] = {1};
  expect_entry("q4 shape", sh, "w", MLX_INT64, s2, 1, sh_w, 2);
  expect_entry("q4 meta", ma, "tiny.block_count", MLX_UINT32, s0, 0, one, 1);
  expect_string(ms, "general.architecture", "tiny");
  mlx_array w = mlx_array_new(), deq = mlx_array_new();
  CHECK_OK(mlx_map_string_to_array_get(&w, t, "w"));
  CHECK(mlx_array_dtype(w) == MLX_UINT8 && mlx_array_ndim(w) == 2 && mlx_array_dim(w, 0) == 3 &&
        mlx_array_dim(w, 1) == io_q4_row_bytes);
  CHECK_OK(mlx_arm_ggml_dequantize(&deq, w, "q4_0", 64, s));
  static const int s3x64[] = {3, 64};
  expect_array("q4 dequantize vs gguf-py", deq, MLX_FLOAT32, s3x64, 2, io_q4_deq, 192);
  /* the block matmul against a one-hot x picks out dequantized rows' columns */
  mlx_array x = mlx_array_new(), y = mlx_array_new();
  CHECK_OK(mlx_zeros(&x, (int[]){1, 64}, 2, MLX_FLOAT32, s));
  CHECK_OK(mlx_arm_ggml_quantize(&y, x, "q8_0", s)); /* any float matrix quantizes */
  CHECK_FAILS(mlx_arm_ggml_dequantize(&deq, w, "q9_9", 64, s), "unknown GGML type");
  (void)s1;
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(w);
  mlx_array_free(deq);
  mlx_map_string_to_array_free(t);
  mlx_map_string_to_array_free(sh);
  mlx_map_string_to_array_free(ma);
  mlx_map_string_to_string_free(ty);
  mlx_map_string_to_string_free(ms);
}

static void round_trips(mlx_stream s) {
  float af[6];
  for (int i = 0; i < 6; i++) af[i] = (float)io_a[i];
  int32_t bi[4];
  for (int i = 0; i < 4; i++) bi[i] = (int32_t)io_b[i];
  mlx_array a = mlx_array_new_data(af, s23, 2, MLX_FLOAT32);
  mlx_array b = mlx_array_new_data(bi, s4, 1, MLX_INT32);
  mlx_array back = mlx_array_new();

  CHECK_OK(mlx_save("rt", a)); /* ".npy" is appended */
  CHECK_OK(mlx_load(&back, "rt.npy", s));
  expect_array("npy round trip", back, MLX_FLOAT32, s23, 2, io_a, 6);

  mlx_map_string_to_array m = mlx_map_string_to_array_new();
  mlx_map_string_to_array_insert(m, "a", a);
  mlx_map_string_to_array_insert(m, "b", b);
  mlx_map_string_to_string md = mlx_map_string_to_string_new();
  mlx_map_string_to_string_insert(md, "who", "mlx-arm C API");
  CHECK_OK(mlx_save_safetensors("rt.safetensors", m, md));
  mlx_map_string_to_array got = mlx_map_string_to_array_new();
  mlx_map_string_to_string gotmd = mlx_map_string_to_string_new();
  CHECK_OK(mlx_load_safetensors(&got, &gotmd, "rt.safetensors", s));
  expect_entry("st round trip a", got, "a", MLX_FLOAT32, s23, 2, io_a, 6);
  expect_entry("st round trip b", got, "b", MLX_INT32, s4, 1, io_b, 4);
  expect_string(gotmd, "who", "mlx-arm C API");
  /* no metadata: the empty handle */
  mlx_map_string_to_string none = {0};
  CHECK_OK(mlx_save_safetensors("rt2.safetensors", m, none));

  CHECK_OK(mlx_arm_savez("rt_z", m, true));
  CHECK_OK(mlx_arm_load(&got, "rt_z.npz", NULL, s));
  expect_entry("npz round trip", got, "b", MLX_INT32, s4, 1, io_b, 4);

  mlx_map_string_to_array ma = mlx_map_string_to_array_new();
  mlx_array n = mlx_array_new_int(42);
  mlx_map_string_to_array_insert(ma, "answer", n);
  CHECK_OK(mlx_arm_save_gguf("rt.gguf", m, ma, md));
  mlx_map_string_to_array t = mlx_map_string_to_array_new(), sh = mlx_map_string_to_array_new(),
                          ma2 = mlx_map_string_to_array_new();
  mlx_map_string_to_string ty = mlx_map_string_to_string_new(), ms = mlx_map_string_to_string_new();
  CHECK_OK(mlx_arm_load_gguf(&t, &ty, &sh, &ma2, &ms, "rt.gguf", s));
  static const int s0[] = {0};
  static const double d42[] = {42};
  expect_entry("gguf round trip meta", ma2, "answer", MLX_INT32, s0, 0, d42, 1);
  expect_string(ms, "who", "mlx-arm C API");
  expect_string(ty, "b", "i32");
  CHECK_OK(mlx_arm_load(&got, "rt.gguf", NULL, s));
  expect_entry("gguf round trip a", got, "a", MLX_FLOAT32, s23, 2, io_a, 6);

  /* errors: unsupported dtype, 2-D metadata array */
  mlx_array flag = mlx_array_new_bool(true);
  mlx_map_string_to_array bad = mlx_map_string_to_array_new();
  mlx_map_string_to_array_insert(bad, "flag", flag);
  CHECK_FAILS(mlx_arm_save_gguf("bad.gguf", bad, (mlx_map_string_to_array){0}, none), "not supported");
  CHECK_FAILS(mlx_arm_save_gguf("bad.gguf", m, m, none), "at most 1 dimension");

  mlx_map_string_to_array_free(bad);
  mlx_array_free(flag);
  mlx_map_string_to_array_free(t);
  mlx_map_string_to_array_free(sh);
  mlx_map_string_to_array_free(ma2);
  mlx_map_string_to_string_free(ty);
  mlx_map_string_to_string_free(ms);
  mlx_map_string_to_array_free(ma);
  mlx_array_free(n);
  mlx_map_string_to_array_free(got);
  mlx_map_string_to_string_free(gotmd);
  mlx_map_string_to_string_free(md);
  mlx_map_string_to_array_free(m);
  mlx_array_free(back);
  mlx_array_free(a);
  mlx_array_free(b);
}

static void hostile(mlx_stream s) {
  mlx_array a = mlx_array_new();
  mlx_map_string_to_array m = mlx_map_string_to_array_new();
  mlx_map_string_to_string md = mlx_map_string_to_string_new();
  mlx_map_string_to_array t = mlx_map_string_to_array_new(), sh = mlx_map_string_to_array_new(),
                          ma = mlx_map_string_to_array_new();
  mlx_map_string_to_string ty = mlx_map_string_to_string_new(), ms = mlx_map_string_to_string_new();

  CHECK_FAILS(mlx_load(&a, "no_such_file.npy", s), "no_such_file");
  CHECK_FAILS(mlx_load(&a, NULL, s), "file is NULL");
  truncate_copy(DATA("mlx.safetensors"), "trunc.safetensors", 20);
  CHECK_FAILS(mlx_load_safetensors(&m, &md, "trunc.safetensors", s), "trunc.safetensors");
  truncate_copy(DATA("mlx.npy"), "trunc.npy", 100);
  CHECK_FAILS(mlx_load(&a, "trunc.npy", s), "trunc.npy");
  write_bytes("magic.gguf", "GGUX\3\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24);
  CHECK_FAILS(mlx_arm_load_gguf(&t, &ty, &sh, &ma, &ms, "magic.gguf", s), "magic.gguf");
  truncate_copy(DATA("q4_0.gguf"), "trunc.gguf", 200);
  CHECK_FAILS(mlx_arm_load_gguf(&t, &ty, &sh, &ma, &ms, "trunc.gguf", s), "trunc.gguf");
  /* a safetensors header claiming 2^63 bytes */
  unsigned char huge[8] = {0, 0, 0, 0, 0, 0, 0, 0x80};
  write_bytes("huge.safetensors", huge, 8);
  CHECK_FAILS(mlx_load_safetensors(&m, &md, "huge.safetensors", s), "huge.safetensors");
  CHECK_FAILS(mlx_arm_load(&m, DATA("mlx.npy"), "xyz", s), "Unknown file format");
  CHECK_FAILS(mlx_load_safetensors(NULL, &md, DATA("mlx.safetensors"), s), "NULL");
  /* failures left the results empty */
  CHECK(a.ctx == NULL);

  mlx_map_string_to_array_free(t);
  mlx_map_string_to_array_free(sh);
  mlx_map_string_to_array_free(ma);
  mlx_map_string_to_string_free(ty);
  mlx_map_string_to_string_free(ms);
  mlx_map_string_to_array_free(m);
  mlx_map_string_to_string_free(md);
  mlx_array_free(a);
}

int main(void) {
  install_test_handler();
  mlx_stream s = mlx_default_cpu_stream_new();
  reference_files(s);
  round_trips(s);
  hostile(s);
  mlx_stream_free(s);
  return finish("test_io");
}
