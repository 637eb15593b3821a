/* io.h and the mlx_arm_ file extensions: files written by numpy, real MLX and gguf-py
 * (tests/c/data, made by gen_io_files.py, values in io_golden.h) read back identically;
 * files written through the C API read back identically; hostile files and bad arguments
 * give a non-zero status and one message. Scratch files go to the working directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  mlx_map_string_to_array t = mlx_map_string_to_array_new(), sh = mlx_map_string_to_array_new();
  mlx_map_string_to_string ty = mlx_map_string_to_string_new();
  mlx_io_gguf md = mlx_io_gguf_new();
  CHECK_OK(mlx_arm_load_gguf(&t, &ty, &sh, &md, DATA("mlx.gguf"), s));
  expect_string(ty, "a", "f32");
  expect_string(ty, "b", "i32");
  static const double sh_a[] = {2, 3};
  static const int s2[] = {2}, s1[] = {1}, s0[] = {0};
  expect_entry("gguf shape a", sh, "a", MLX_INT64, s2, 1, sh_a, 2);
  static const double n7[] = {7}, v2[] = {1.0, 2.5};
  mlx_array m = mlx_array_new();
  CHECK_OK(mlx_io_gguf_get_metadata_array(&m, md, "n"));
  expect_array("gguf meta n", m, MLX_INT32, s0, 0, n7, 1);
  CHECK_OK(mlx_io_gguf_get_metadata_array(&m, md, "v"));
  expect_array("gguf meta v", m, MLX_FLOAT32, s2, 1, v2, 2);
  mlx_string name = mlx_string_new();
  CHECK_OK(mlx_io_gguf_get_metadata_string(&name, md, "name"));
  CHECK_STR(mlx_string_data(name), "tiny");
  bool has_list = false;
  CHECK_OK(mlx_io_gguf_has_metadata_vector_string(&has_list, md, "tokens"));
  CHECK(has_list);
  mlx_vector_string no_tensors = mlx_vector_string_new();
  CHECK_OK(mlx_io_gguf_get_keys(&no_tensors, md));
  CHECK(mlx_vector_string_size(no_tensors) == 0);

  CHECK_OK(mlx_arm_load_gguf(&t, &ty, &sh, &md, DATA("q4_0.gguf"), s));
  expect_string(ty, "w", "q4_0");
  static const double sh_w[] = {3, 64}, one[] = {1};
  expect_entry("q4 shape", sh, "w", MLX_INT64, s2, 1, sh_w, 2);
  CHECK_OK(mlx_io_gguf_get_metadata_array(&m, md, "tiny.block_count"));
  expect_array("q4 meta", m, MLX_UINT32, s0, 0, one, 1);
  CHECK_OK(mlx_io_gguf_get_metadata_string(&name, md, "general.architecture"));
  CHECK_STR(mlx_string_data(name), "tiny");
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
  mlx_map_string_to_string_free(ty);
  mlx_io_gguf_free(md);
  mlx_array_free(m);
  mlx_string_free(name);
  mlx_vector_string_free(no_tensors);
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

  mlx_io_gguf gw = mlx_io_gguf_new();
  CHECK_OK(mlx_io_gguf_set_array(gw, "a", a));
  CHECK_OK(mlx_io_gguf_set_array(gw, "b", b));
  mlx_array n = mlx_array_new_int(42);
  CHECK_OK(mlx_io_gguf_set_metadata_array(gw, "answer", n));
  CHECK_OK(mlx_io_gguf_set_metadata_string(gw, "who", "mlx-arm C API"));
  CHECK_OK(mlx_save_gguf("rt.gguf", gw));
  mlx_map_string_to_array t = mlx_map_string_to_array_new(), sh = mlx_map_string_to_array_new();
  mlx_map_string_to_string ty = mlx_map_string_to_string_new();
  mlx_io_gguf gmd = mlx_io_gguf_new();
  CHECK_OK(mlx_arm_load_gguf(&t, &ty, &sh, &gmd, "rt.gguf", s));
  static const int s0[] = {0};
  static const double d42[] = {42};
  mlx_array gm = mlx_array_new();
  CHECK_OK(mlx_io_gguf_get_metadata_array(&gm, gmd, "answer"));
  expect_array("gguf round trip meta", gm, MLX_INT32, s0, 0, d42, 1);
  mlx_string who = mlx_string_new();
  CHECK_OK(mlx_io_gguf_get_metadata_string(&who, gmd, "who"));
  CHECK_STR(mlx_string_data(who), "mlx-arm C API");
  expect_string(ty, "b", "i32");
  CHECK_OK(mlx_arm_load(&got, "rt.gguf", NULL, s));
  expect_entry("gguf round trip a", got, "a", MLX_FLOAT32, s23, 2, io_a, 6);

  /* errors: unsupported dtype, 2-D metadata array */
  mlx_array flag = mlx_array_new_bool(true);
  mlx_io_gguf bad = mlx_io_gguf_new();
  CHECK_OK(mlx_io_gguf_set_array(bad, "flag", flag));
  CHECK_FAILS(mlx_save_gguf("bad.gguf", bad), "not supported");
  CHECK_OK(mlx_io_gguf_set_array(bad, "flag", a));
  CHECK_OK(mlx_io_gguf_set_metadata_array(bad, "m", a));
  CHECK_FAILS(mlx_save_gguf("bad.gguf", bad), "at most 1 dimension");

  mlx_io_gguf_free(bad);
  mlx_io_gguf_free(gw);
  mlx_array_free(flag);
  mlx_map_string_to_array_free(t);
  mlx_map_string_to_array_free(sh);
  mlx_io_gguf_free(gmd);
  mlx_array_free(gm);
  mlx_string_free(who);
  mlx_map_string_to_string_free(ty);
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
  mlx_map_string_to_array t = mlx_map_string_to_array_new(), sh = mlx_map_string_to_array_new();
  mlx_map_string_to_string ty = mlx_map_string_to_string_new();
  mlx_io_gguf gmd = mlx_io_gguf_new();

  CHECK_FAILS(mlx_load(&a, "no_such_file.npy", s), "no_such_file");
  CHECK_FAILS(mlx_load(&a, NULL, s), "file is NULL");
  truncate_copy(DATA("mlx.safetensors"), "trunc.safetensors", 20);
  CHECK_FAILS(mlx_load_safetensors(&m, &md, "trunc.safetensors", s), "trunc.safetensors");
  truncate_copy(DATA("mlx.npy"), "trunc.npy", 100);
  CHECK_FAILS(mlx_load(&a, "trunc.npy", s), "trunc.npy");
  write_bytes("magic.gguf", "GGUX\3\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24);
  CHECK_FAILS(mlx_arm_load_gguf(&t, &ty, &sh, &gmd, "magic.gguf", s), "magic.gguf");
  truncate_copy(DATA("q4_0.gguf"), "trunc.gguf", 200);
  CHECK_FAILS(mlx_arm_load_gguf(&t, &ty, &sh, &gmd, "trunc.gguf", s), "trunc.gguf");
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
  mlx_io_gguf_free(gmd);
  mlx_map_string_to_string_free(ty);
  mlx_map_string_to_array_free(m);
  mlx_map_string_to_string_free(md);
  mlx_array_free(a);
}

/* mlx-c's GGUF object: real MLX's file (tensors, a string, a number, a float list and a list
 * of strings), then a round trip through mlx_save_gguf, then the errors. */
static void gguf_object(mlx_stream s) {
  mlx_io_gguf g = mlx_io_gguf_new();
  CHECK_OK(mlx_load_gguf(&g, DATA("mlx.gguf"), s));
  mlx_vector_string keys = mlx_vector_string_new();
  CHECK_OK(mlx_io_gguf_get_keys(&keys, g));
  CHECK(mlx_vector_string_size(keys) == 2);
  mlx_array a = mlx_array_new();
  CHECK_OK(mlx_io_gguf_get_array(&a, g, "a"));
  expect_array("gguf a", a, MLX_FLOAT32, s23, 2, io_a, 6);
  CHECK_OK(mlx_io_gguf_get_array(&a, g, "b"));
  expect_array("gguf b", a, MLX_INT32, s4, 1, io_b, 4);
  mlx_string str = mlx_string_new();
  CHECK_OK(mlx_io_gguf_get_metadata_string(&str, g, "name"));
  CHECK_STR(mlx_string_data(str), "tiny");
  const double seven[] = {7.0}, v[] = {1.0, 2.5};
  const int s2[] = {2};
  CHECK_OK(mlx_io_gguf_get_metadata_array(&a, g, "n"));
  expect_array("gguf n", a, MLX_INT32, NULL, 0, seven, 1);
  CHECK_OK(mlx_io_gguf_get_metadata_array(&a, g, "v"));
  expect_array("gguf v", a, MLX_FLOAT32, s2, 1, v, 2);
  mlx_vector_string toks = mlx_vector_string_new();
  CHECK_OK(mlx_io_gguf_get_metadata_vector_string(&toks, g, "tokens"));
  char* t = NULL;
  CHECK(mlx_vector_string_size(toks) == 2);
  CHECK_OK(mlx_vector_string_get(&t, toks, 0));
  CHECK_STR(t, "x");
  CHECK_OK(mlx_vector_string_get(&t, toks, 1));
  CHECK_STR(t, "y\"z");
  bool flag = true;
  CHECK_OK(mlx_io_gguf_has_metadata_string(&flag, g, "tokens"));
  CHECK(!flag);
  CHECK_OK(mlx_io_gguf_has_metadata_vector_string(&flag, g, "tokens"));
  CHECK(flag);
  CHECK_OK(mlx_io_gguf_has_metadata_array(&flag, g, "n"));
  CHECK(flag);
  mlx_vector_string mkeys = mlx_vector_string_new();
  CHECK_OK(mlx_arm_io_gguf_get_metadata_keys(&mkeys, g));
  CHECK(mlx_vector_string_size(mkeys) == 4);
  CHECK_FAILS(mlx_io_gguf_get_metadata_string(&str, g, "n"), "not a string");
  CHECK_FAILS(mlx_io_gguf_get_array(&a, g, "zzz"), "zzz");

  /* our writer: add a list of strings and read everything back */
  const char* words[] = {"data1", "data2", "data345"};
  mlx_vector_string w = mlx_vector_string_new_data(words, 3);
  CHECK_OK(mlx_io_gguf_set_metadata_vector_string(g, "words", w));
  CHECK_OK(mlx_io_gguf_set_metadata_string(g, "name", "renamed"));
  CHECK_OK(mlx_save_gguf("obj.gguf", g));
  mlx_io_gguf back = mlx_io_gguf_new();
  CHECK_OK(mlx_load_gguf(&back, "obj.gguf", s));
  CHECK_OK(mlx_io_gguf_get_array(&a, back, "a"));
  expect_array("gguf a back", a, MLX_FLOAT32, s23, 2, io_a, 6);
  CHECK_OK(mlx_io_gguf_get_metadata_string(&str, back, "name"));
  CHECK_STR(mlx_string_data(str), "renamed");
  CHECK_OK(mlx_io_gguf_get_metadata_vector_string(&toks, back, "words"));
  CHECK(mlx_vector_string_size(toks) == 3);
  CHECK_OK(mlx_vector_string_get(&t, toks, 2));
  CHECK_STR(t, "data345");

  /* MLX's save rules: no 2-D or empty metadata arrays */
  const float m22[] = {1, 2, 3, 4};
  mlx_array two_d = mlx_array_new_data(m22, s22, 2, MLX_FLOAT32);
  CHECK_OK(mlx_io_gguf_set_metadata_array(back, "bad", two_d));
  CHECK_FAILS(mlx_save_gguf("bad.gguf", back), "at most 1 dimension");
  CHECK_FAILS(mlx_load_gguf(&back, "no_such.gguf", s), "no_such.gguf");
  CHECK_FAILS(mlx_io_gguf_get_keys(&keys, (mlx_io_gguf){0}), "mlx_io_gguf");

  mlx_array_free(two_d);
  mlx_vector_string_free(w);
  mlx_vector_string_free(mkeys);
  mlx_vector_string_free(toks);
  mlx_vector_string_free(keys);
  mlx_string_free(str);
  mlx_array_free(a);
  mlx_io_gguf_free(back);
  mlx_io_gguf_free(g);
}

/* A growable in-memory stream for mlx_io_vtable: what a game engine or firmware supplies. */
typedef struct {
  char* data;
  size_t len, cap, pos;
  int frees;
  bool fail_reads;
} mem_stream;

static bool mem_good(void* d) { return !((mem_stream*)d)->fail_reads; }
static size_t mem_tell(void* d) { return ((mem_stream*)d)->pos; }
static void mem_seek(void* d, int64_t off, int whence) {
  mem_stream* m = d;
  m->pos = (size_t)(whence == 0 ? off : whence == 1 ? (int64_t)m->pos + off : (int64_t)m->len + off);
}
static void mem_read(void* d, char* out, size_t n) {
  mem_stream* m = d;
  if (m->pos + n > m->len) {
    m->fail_reads = true;
    return;
  }
  memcpy(out, m->data + m->pos, n);
  m->pos += n;
}
static void mem_write(void* d, const char* in, size_t n) {
  mem_stream* m = d;
  if (m->len + n > m->cap) {
    m->cap = (m->len + n) * 2;
    m->data = realloc(m->data, m->cap);
  }
  memcpy(m->data + m->len, in, n);
  m->len += n;
}
static const char* mem_label(void* d) { (void)d; return "memory"; }
static void mem_free(void* d) { ((mem_stream*)d)->frees++; }

static const mlx_io_vtable mem_vtable = {NULL, mem_good, mem_tell, mem_seek, mem_read, NULL, mem_write, mem_label, mem_free};

/* The bytes of a file, as a readable memory stream. */
static mem_stream file_stream(const char* path) {
  mem_stream m = {0};
  FILE* f = fopen(path, "rb");
  char buf[4096];
  size_t n;
  while (f && (n = fread(buf, 1, sizeof buf, f)) > 0) mem_write(&m, buf, n);
  if (f) fclose(f);
  return m;
}

/* mlx-c's reader/writer variants over caller callbacks. */
static void streams(mlx_stream s) {
  /* numpy's .npy and real MLX's safetensors, served from memory */
  mem_stream npy = file_stream(DATA("mlx.npy"));
  mlx_io_reader r = mlx_io_reader_new(&npy, mem_vtable);
  mlx_array a = mlx_array_new();
  CHECK_OK(mlx_load_reader(&a, r, s));
  expect_array("reader npy", a, MLX_FLOAT32, s23, 2, io_a, 6);
  mlx_string label = mlx_string_new();
  CHECK_OK(mlx_io_reader_tostring(&label, r));
  CHECK_STR(mlx_string_data(label), "memory");
  void* desc = NULL;
  CHECK_OK(mlx_io_reader_descriptor(&desc, r));
  CHECK(desc == &npy);
  mlx_io_reader_free(r);
  CHECK(npy.frees == 1);

  mem_stream st = file_stream(DATA("mlx.safetensors"));
  r = mlx_io_reader_new(&st, mem_vtable);
  mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
  mlx_map_string_to_string meta = mlx_map_string_to_string_new();
  CHECK_OK(mlx_load_safetensors_reader(&arrays, &meta, r, s));
  expect_entry("reader st a", arrays, "a", MLX_FLOAT32, s23, 2, io_a, 6);
  expect_entry("reader st c", arrays, "c", MLX_FLOAT16, s22, 2, io_c, 4);
  expect_string(meta, "note", "written by real MLX");
  mlx_io_reader_free(r);

  /* a fixed-size memory stream: the file, then zero bytes up to the buffer's size (real MLX
     0.32.4 ignores bytes after the last tensor, so this loads the same) */
  mem_stream fixed = file_stream(DATA("mlx.safetensors"));
  fixed.data = realloc(fixed.data, fixed.len + 64);
  memset(fixed.data + fixed.len, 0, 64);
  fixed.len += 64;
  fixed.cap = fixed.len;
  r = mlx_io_reader_new(&fixed, mem_vtable);
  mlx_map_string_to_array fixed_arrays = mlx_map_string_to_array_new();
  mlx_map_string_to_string fixed_meta = mlx_map_string_to_string_new();
  CHECK_OK(mlx_load_safetensors_reader(&fixed_arrays, &fixed_meta, r, s));
  expect_entry("fixed-size st a", fixed_arrays, "a", MLX_FLOAT32, s23, 2, io_a, 6);
  expect_string(fixed_meta, "note", "written by real MLX");
  mlx_io_reader_free(r);
  mlx_map_string_to_array_free(fixed_arrays);
  mlx_map_string_to_string_free(fixed_meta);
  free(fixed.data);

  /* our writers, read back through our readers and compared with the file functions' bytes */
  mem_stream out = {0};
  mlx_io_writer w = mlx_io_writer_new(&out, mem_vtable);
  CHECK_OK(mlx_save_writer(w, a));
  mlx_io_writer_free(w);
  CHECK(out.frees == 1);
  CHECK_OK(mlx_save("ref.npy", a));
  mem_stream ref = file_stream("ref.npy");
  CHECK(out.len == ref.len && memcmp(out.data, ref.data, ref.len) == 0);
  r = mlx_io_reader_new(&out, mem_vtable);
  mlx_array b = mlx_array_new();
  CHECK_OK(mlx_load_reader(&b, r, s));
  expect_array("writer npy back", b, MLX_FLOAT32, s23, 2, io_a, 6);
  mlx_io_reader_free(r);

  mem_stream out_st = {0};
  w = mlx_io_writer_new(&out_st, mem_vtable);
  CHECK_OK(mlx_save_safetensors_writer(w, arrays, meta));
  mlx_io_writer_free(w);
  r = mlx_io_reader_new(&out_st, mem_vtable);
  mlx_map_string_to_array arrays2 = mlx_map_string_to_array_new();
  mlx_map_string_to_string meta2 = mlx_map_string_to_string_new();
  CHECK_OK(mlx_load_safetensors_reader(&arrays2, &meta2, r, s));
  expect_entry("writer st b", arrays2, "b", MLX_INT32, s4, 1, io_b, 4);
  expect_string(meta2, "format", "mlx");
  mlx_io_reader_free(r);

  /* errors: a truncated stream, a stream without the callbacks a load needs, empty handles */
  mem_stream cut = file_stream(DATA("mlx.npy"));
  cut.len = 100;
  r = mlx_io_reader_new(&cut, mem_vtable);
  CHECK_FAILS(mlx_load_reader(&b, r, s), "memory");
  mlx_io_reader_free(r);
  mlx_io_vtable no_read = mem_vtable;
  no_read.read = NULL;
  r = mlx_io_reader_new(&npy, no_read);
  CHECK_FAILS(mlx_load_reader(&b, r, s), "no read callback");
  mlx_io_reader_free(r);
  mlx_io_vtable no_write = mem_vtable;
  no_write.write = NULL;
  w = mlx_io_writer_new(&out, no_write);
  CHECK_FAILS(mlx_save_writer(w, a), "no write callback");
  mlx_io_writer_free(w);
  CHECK_FAILS(mlx_load_reader(&b, (mlx_io_reader){0}, s), "mlx_io_reader");

  free(npy.data);
  free(st.data);
  free(out.data);
  free(ref.data);
  free(out_st.data);
  free(cut.data);
  mlx_string_free(label);
  mlx_map_string_to_array_free(arrays);
  mlx_map_string_to_string_free(meta);
  mlx_map_string_to_array_free(arrays2);
  mlx_map_string_to_string_free(meta2);
  mlx_array_free(a);
  mlx_array_free(b);
}

int main(void) {
  install_test_handler();
  mlx_stream s = mlx_default_cpu_stream_new();
  reference_files(s);
  round_trips(s);
  hostile(s);
  gguf_object(s);
  streams(s);
  mlx_stream_free(s);
  return finish("test_io");
}
