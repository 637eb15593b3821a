/* Language models through the C API (mlx_arm.h "Language models"): the default model's
 * greedy ids against llama.cpp's (lm/tests/data/llamacpp/llamacpp_goldens.json, first case,
 * first 16 ids: ours agree with llama.cpp's there), loading from bytes, and the error paths
 * (missing file, empty and freed handles, bad ids, bad settings).
 *
 * The model is the one scripts/setup.sh installs ($MLX_ARM_MODEL_DIR, else
 * $HOME/.cache/mlx-arm/models). Without it the model checks print SKIPPED, and fail when
 * CI=true. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MODEL_FILE "SmolLM2-135M-Instruct.Q4_1.gguf"

/* llama.cpp's tokenization of "The capital of France is" (no BOS: SmolLM2 adds none) and its
 * greedy continuation, from llamacpp_goldens.json case 1. */
static const int PROMPT_IDS[] = {504, 3575, 282, 4649, 314};
static const int GREEDY_IDS[16] = {7042, 30, 198, 198, 504, 2988, 314, 42, 216, 34, 32, 33, 40, 29, 32, 33};

static int model_path(char* buf, size_t n) {
  const char* dir = getenv("MLX_ARM_MODEL_DIR");
  const char* home = getenv("HOME");
  if (dir && *dir) {
    snprintf(buf, n, "%s/%s", dir, MODEL_FILE);
  } else {
    snprintf(buf, n, "%s/.cache/mlx-arm/models/%s", home ? home : ".", MODEL_FILE);
  }
  FILE* f = fopen(buf, "rb");
  if (!f) return 0;
  fclose(f);
  return 1;
}

static void check_ids(mlx_vector_int v, const int* want, size_t n) {
  CHECK(mlx_vector_int_size(v) == n);
  for (size_t i = 0; i < n && i < mlx_vector_int_size(v); i++) {
    int got = -1;
    mlx_vector_int_get(&got, v, i);
    g_checks++;
    if (got != want[i]) {
      g_failures++;
      fprintf(stderr, "token %zu: got %d, want %d\n", i, got, want[i]);
    }
  }
}

/* Errors that need no model file. */
static void without_model(void) {
  mlx_arm_model m = mlx_arm_model_new();
  CHECK(m.ctx == NULL);
  CHECK_OK(mlx_arm_model_free(m)); /* the empty handle */
  CHECK_FAILS(mlx_arm_model_load(&m, "/nonexistent/model.gguf"), "/nonexistent/model.gguf");
  CHECK(m.ctx == NULL);
  CHECK_FAILS(mlx_arm_model_load(&m, NULL), "path is NULL");
  CHECK_FAILS(mlx_arm_model_load(NULL, "x.gguf"), "NULL");
  CHECK_FAILS(mlx_arm_model_load_gguf_bytes(&m, NULL, 10), "NULL");
  static const char junk[64] = "not a gguf file";
  CHECK_FAILS(mlx_arm_model_load_gguf_bytes(&m, junk, sizeof junk), "gguf");
  CHECK(m.ctx == NULL);

  mlx_string s = mlx_string_new();
  CHECK_FAILS(mlx_arm_model_info(&s, m), "non-empty mlx_arm_model");
  mlx_vector_int ids = mlx_vector_int_new();
  CHECK_FAILS(mlx_arm_generate_ids(&ids, m, PROMPT_IDS, 5, NULL), "non-empty mlx_arm_model");
  /* A handle that was never a model. */
  int dummy = 0;
  mlx_arm_model fake = {&dummy};
  CHECK_FAILS(mlx_arm_generate_ids(&ids, fake, PROMPT_IDS, 5, NULL), "not a live model");
  CHECK_FAILS(mlx_arm_model_free(fake), "not a live model");
  mlx_arm_generation_stats st;
  CHECK_FAILS(mlx_arm_generate_stats(&st, m), "non-empty");
  mlx_vector_int_free(ids);
  mlx_string_free(s);

  mlx_arm_generate_config c = mlx_arm_generate_config_default();
  CHECK(c.max_tokens == 256 && c.temperature == 0.0f && c.top_k == 0 && c.top_p == 1.0f);
  CHECK(c.min_p == 0.0f && c.repetition_penalty == 1.0f && c.seed == 0);
}

/* Reads a whole file into memory (for mlx_arm_model_load_gguf_bytes). */
static void* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void* buf = n > 0 ? malloc((size_t)n) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

/* Collects what mlx_arm_generate streams. */
typedef struct {
  char text[4096];
  int ids[64];
  int n_ids;
  int stop_after; /* return false after this many tokens (0: never) */
} Collected;

static bool collect(const char* piece, int token, void* user) {
  Collected* c = (Collected*)user;
  strncat(c->text, piece, sizeof c->text - strlen(c->text) - 1);
  if (token >= 0 && c->n_ids < 64) c->ids[c->n_ids++] = token;
  return c->stop_after == 0 || c->n_ids < c->stop_after;
}

/* Tokenizer, chat template and streamed text generation. */
static void text_api(mlx_arm_model m) {
  mlx_vector_int ids = mlx_vector_int_new();
  CHECK_OK(mlx_arm_model_tokenize(&ids, m, "The capital of France is", true));
  check_ids(ids, PROMPT_IDS, 5);
  /* Special tokens written in the text are parsed (llama.cpp's ids for the chat prompt of
   * the goldens' third case). */
  static const int chat_ids[] = {1, 4093, 198, 1780, 314, 260, 3995, 3925, 281, 260, 3693, 817, 47, 2, 198, 1, 520, 9531, 198};
  CHECK_OK(mlx_arm_model_tokenize(&ids, m,
      "<|im_start|>user\nWhat is the largest planet in the solar system?<|im_end|>\n<|im_start|>assistant\n", true));
  check_ids(ids, chat_ids, sizeof chat_ids / sizeof chat_ids[0]);

  mlx_string want = mlx_string_new();
  CHECK_OK(mlx_arm_model_detokenize(&want, m, GREEDY_IDS, 5));
  mlx_string s = mlx_string_new();
  CHECK_OK(mlx_arm_model_detokenize(&s, m, PROMPT_IDS, 5));
  CHECK_STR(mlx_string_data(s), "The capital of France is");

  /* The text API streams the same greedy tokens, and their text. */
  mlx_arm_generate_config cfg = mlx_arm_generate_config_default();
  cfg.max_tokens = 5;
  Collected c;
  memset(&c, 0, sizeof c);
  CHECK_OK(mlx_arm_generate(&s, m, "The capital of France is", false, &cfg, collect, &c));
  CHECK(c.n_ids == 5);
  for (int i = 0; i < 5 && i < c.n_ids; i++) CHECK(c.ids[i] == GREEDY_IDS[i]);
  CHECK_STR(c.text, mlx_string_data(want));
  CHECK_STR(mlx_string_data(s), mlx_string_data(want));
  CHECK_OK(mlx_arm_generate(&s, m, "The capital of France is", false, &cfg, NULL, NULL));
  CHECK_STR(mlx_string_data(s), mlx_string_data(want));

  /* A callback returning false stops at once. */
  memset(&c, 0, sizeof c);
  c.stop_after = 3;
  CHECK_OK(mlx_arm_generate(&s, m, "The capital of France is", false, &cfg, collect, &c));
  CHECK(c.n_ids == 3);
  mlx_arm_generation_stats st;
  CHECK_OK(mlx_arm_generate_stats(&st, m));
  CHECK(st.stop_reason == 2 && st.generation_tokens == 3);

  /* The chat template, as transformers' Jinja2 renders it
   * (tests/python/golden/lm/chat_template.json, second case). */
  const char* roles[] = {"system", "user"};
  const char* contents[] = {"You are terse.", "Hi"};
  CHECK_OK(mlx_arm_model_apply_chat_template(&s, m, roles, contents, 2, true));
  CHECK_STR(mlx_string_data(s),
            "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  /* A chat reply stops at the model's end-of-turn token: fewer than max_tokens. */
  cfg.max_tokens = 200;
  CHECK_OK(mlx_arm_generate(&s, m, "Hi", true, &cfg, NULL, NULL));
  CHECK_OK(mlx_arm_generate_stats(&st, m));
  CHECK(st.stop_reason == 0 && st.generation_tokens < 200 && st.prompt_tokens > 10);

  /* Bad input. */
  const int bad_ids[] = {504, 49152};
  const int neg_ids[] = {-7};
  CHECK_FAILS(mlx_arm_model_detokenize(&s, m, bad_ids, 2), "out of range");
  CHECK_FAILS(mlx_arm_model_detokenize(&s, m, neg_ids, 1), "negative");
  CHECK_FAILS(mlx_arm_model_detokenize(&s, m, NULL, 2), "NULL");
  CHECK_FAILS(mlx_arm_model_tokenize(&ids, m, NULL, true), "text is NULL");
  CHECK_FAILS(mlx_arm_model_tokenize(&ids, m, "\xff\xfe", true), "UTF-8");
  CHECK_FAILS(mlx_arm_generate(&s, m, NULL, false, &cfg, NULL, NULL), "prompt is NULL");
  CHECK_FAILS(mlx_arm_generate(&s, m, "\xc3", false, &cfg, NULL, NULL), "UTF-8");
  CHECK_FAILS(mlx_arm_generate(NULL, m, "Hi", false, &cfg, NULL, NULL), "NULL");
  CHECK_FAILS(mlx_arm_generate(&s, m, "", false, &cfg, NULL, NULL), "no tokens");
  CHECK_FAILS(mlx_arm_model_apply_chat_template(&s, m, NULL, contents, 2, true), "roles is NULL");
  const char* null_role[] = {NULL};
  CHECK_FAILS(mlx_arm_model_apply_chat_template(&s, m, null_role, contents, 1, true), "role is NULL");
  mlx_arm_model empty = mlx_arm_model_new();
  CHECK_FAILS(mlx_arm_model_tokenize(&ids, empty, "x", true), "non-empty mlx_arm_model");
  CHECK_FAILS(mlx_arm_generate(&s, empty, "x", false, &cfg, NULL, NULL), "non-empty mlx_arm_model");
  CHECK_STR(mlx_string_data(want), mlx_string_data(want));
  mlx_string_free(want);
  mlx_string_free(s);
  mlx_vector_int_free(ids);
}

static void with_model(const char* path) {
  mlx_arm_model m = mlx_arm_model_new();
  CHECK_OK(mlx_arm_model_load(&m, path));
  if (!m.ctx) return;

  mlx_string info = mlx_string_new();
  CHECK_OK(mlx_arm_model_info(&info, m));
  const char* text = mlx_string_data(info);
  /* SmolLM2-135M: 30 blocks of width 576, 9 query and 3 key/value heads, 49152 tokens. */
  CHECK(text && strstr(text, "arch=llama\n") && strstr(text, "layers=30\n") && strstr(text, "hidden=576\n"));
  CHECK(text && strstr(text, "heads=9\n") && strstr(text, "kv_heads=3\n") && strstr(text, "vocab=49152\n"));
  CHECK(text && strstr(text, "context=8192\n"));
  mlx_string_free(info);

  /* Greedy ids equal llama.cpp's. */
  mlx_arm_generate_config cfg = mlx_arm_generate_config_default();
  cfg.max_tokens = 5;
  mlx_vector_int out = mlx_vector_int_new();
  CHECK_OK(mlx_arm_generate_ids(&out, m, PROMPT_IDS, 5, &cfg));
  check_ids(out, GREEDY_IDS, 5);
  mlx_arm_generation_stats st;
  CHECK_OK(mlx_arm_generate_stats(&st, m));
  CHECK(st.prompt_tokens == 5 && st.generation_tokens == 5 && st.stop_reason == 1);
  CHECK(st.prompt_tps > 0 && st.generation_tps > 0);

  /* Bad input: negative ids, ids past the vocabulary, an empty prompt, NULL with a count,
   * settings with no meaning. None may change *res. */
  const int negative[] = {504, -1};
  const int too_big[] = {504, 49152};
  CHECK_FAILS(mlx_arm_generate_ids(&out, m, negative, 2, &cfg), "negative");
  CHECK_FAILS(mlx_arm_generate_ids(&out, m, too_big, 2, &cfg), "outside the vocabulary");
  CHECK_FAILS(mlx_arm_generate_ids(&out, m, PROMPT_IDS, 0, &cfg), "no tokens");
  CHECK_FAILS(mlx_arm_generate_ids(&out, m, NULL, 3, &cfg), "NULL");
  CHECK_FAILS(mlx_arm_generate_ids(NULL, m, PROMPT_IDS, 5, &cfg), "NULL");
  mlx_arm_generate_config bad = cfg;
  bad.temperature = -1.0f;
  CHECK_FAILS(mlx_arm_generate_ids(&out, m, PROMPT_IDS, 5, &bad), "temperature");
  bad = cfg;
  bad.top_p = 0.0f;
  CHECK_FAILS(mlx_arm_generate_ids(&out, m, PROMPT_IDS, 5, &bad), "top_p");
  bad = cfg;
  bad.max_tokens = -3;
  CHECK_FAILS(mlx_arm_generate_ids(&out, m, PROMPT_IDS, 5, &bad), "max_tokens");
  check_ids(out, GREEDY_IDS, 5);

  /* Sampling is deterministic for a seed. */
  mlx_arm_generate_config samp = cfg;
  samp.max_tokens = 4;
  samp.temperature = 0.8f;
  samp.top_k = 40;
  samp.seed = 7;
  mlx_vector_int s1 = mlx_vector_int_new(), s2 = mlx_vector_int_new();
  CHECK_OK(mlx_arm_generate_ids(&s1, m, PROMPT_IDS, 5, &samp));
  CHECK_OK(mlx_arm_generate_ids(&s2, m, PROMPT_IDS, 5, &samp));
  CHECK(mlx_vector_int_size(s1) == 4 && mlx_vector_int_size(s2) == 4);
  for (size_t i = 0; i < mlx_vector_int_size(s1) && i < mlx_vector_int_size(s2); i++) {
    int a = -1, b = -2;
    mlx_vector_int_get(&a, s1, i);
    mlx_vector_int_get(&b, s2, i);
    CHECK(a == b);
  }
  mlx_vector_int_free(s1);
  mlx_vector_int_free(s2);

  text_api(m);

  /* The same model from bytes in memory gives the same ids. */
  size_t size = 0;
  void* bytes = read_file(path, &size);
  CHECK(bytes != NULL);
  if (bytes) {
    mlx_arm_model mb = mlx_arm_model_new();
    CHECK_OK(mlx_arm_model_load_gguf_bytes(&mb, bytes, size));
    mlx_vector_int ob = mlx_vector_int_new();
    cfg.max_tokens = 5;
    CHECK_OK(mlx_arm_generate_ids(&ob, mb, PROMPT_IDS, 5, &cfg));
    check_ids(ob, GREEDY_IDS, 5);
    mlx_vector_int_free(ob);
    /* Loading again into a live handle replaces (and frees) the model it held. */
    CHECK_OK(mlx_arm_model_load_gguf_bytes(&mb, bytes, size));
    CHECK_OK(mlx_arm_model_free(mb));
    /* Freed: every later use is an error, a second free too. */
    CHECK_FAILS(mlx_arm_model_free(mb), "not a live model");
    CHECK_FAILS(mlx_arm_generate_stats(&st, mb), "not a live model");
    free(bytes); /* only now: the model viewed these bytes */
  }

  mlx_vector_int_free(out);
  CHECK_OK(mlx_arm_model_free(m));
  CHECK_FAILS(mlx_arm_generate_ids(&out, m, PROMPT_IDS, 5, &cfg), "not a live model");
}

int main(void) {
  install_test_handler();
  without_model();
  char path[4096];
  if (getenv("MLX_ARM_TEST_NO_MODEL")) {
    /* tests/c/run.sh runs the model checks natively and only the rest under valgrind (the
     * generations take minutes there; example_generate covers a model's lifetime under it). */
    printf("model checks not run (MLX_ARM_TEST_NO_MODEL is set)\n");
  } else if (model_path(path, sizeof path)) {
    with_model(path);
  } else {
    const char* ci = getenv("CI");
    printf("SKIPPED: test_model model checks (%s is not installed: run scripts/setup.sh)\n", path);
    if (ci && strcmp(ci, "true") == 0) {
      fprintf(stderr, "FAILED: the default model is required under CI=true\n");
      g_failures++;
    }
  }
  return finish("test_model");
}
