/* Text generation with mlx-arm's C API: loads a model (a .gguf file or a model directory),
 * streams the reply to a prompt as it is generated, then prints the speed figures.
 *
 *   generate [-m MODEL] [-n MAX_TOKENS] [--temp T] [--seed S] [--raw] [PROMPT]
 *
 * Without -m it uses the default model that scripts/setup.sh installs
 * ($MLX_ARM_MODEL_DIR or ~/.cache/mlx-arm/models/SmolLM2-135M-Instruct.Q4_1.gguf). The
 * model's chat template is applied to the prompt unless --raw is given.
 *
 * Build (from the repository root):
 *   cargo build -p mlx-arm-capi --release
 *   gcc -std=c11 -Iinclude examples/c/generate.c target/release/libmlx_arm.a -lpthread -ldl -lm -o generate
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlx/c/mlx.h"

/* Called for every generated token with the text it completes ("" while a character is
 * still incomplete); token is -1 for the text flushed at the end. Returning false stops. */
static bool print_piece(const char* piece, int token, void* user) {
  (void)token;
  (void)user;
  fputs(piece, stdout);
  fflush(stdout);
  return true;
}

int main(int argc, char** argv) {
  const char* model_path = NULL;
  const char* prompt = "The capital of France is";
  bool raw = false;
  mlx_arm_generate_config cfg = mlx_arm_generate_config_default();
  cfg.max_tokens = 64;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    int has_value = i + 1 < argc;
    if ((!strcmp(a, "-m") || !strcmp(a, "--model")) && has_value) {
      model_path = argv[++i];
    } else if ((!strcmp(a, "-n") || !strcmp(a, "--max-tokens")) && has_value) {
      cfg.max_tokens = atoi(argv[++i]);
    } else if (!strcmp(a, "--temp") && has_value) {
      cfg.temperature = (float)atof(argv[++i]);
    } else if (!strcmp(a, "--seed") && has_value) {
      cfg.seed = strtoull(argv[++i], NULL, 10);
    } else if (!strcmp(a, "--raw")) {
      raw = true;
    } else if (a[0] == '-') {
      fprintf(stderr, "usage: %s [-m MODEL] [-n MAX_TOKENS] [--temp T] [--seed S] [--raw] [PROMPT]\n", argv[0]);
      return 2;
    } else {
      prompt = a;
    }
  }

  char default_path[4096];
  if (!model_path) {
    const char* dir = getenv("MLX_ARM_MODEL_DIR");
    const char* home = getenv("HOME");
    if (dir && *dir) {
      snprintf(default_path, sizeof default_path, "%s/SmolLM2-135M-Instruct.Q4_1.gguf", dir);
    } else {
      snprintf(default_path, sizeof default_path, "%s/.cache/mlx-arm/models/SmolLM2-135M-Instruct.Q4_1.gguf",
               home ? home : ".");
    }
    model_path = default_path;
  }

  /* Failures reach the error handler (the default one prints to stderr) and return non-zero. */
  mlx_arm_model model = mlx_arm_model_new();
  if (mlx_arm_model_load(&model, model_path) != 0) {
    fprintf(stderr, "could not load %s\n", model_path);
    return 1;
  }
  mlx_string info = mlx_string_new();
  if (mlx_arm_model_info(&info, model) == 0) {
    fprintf(stderr, "%s:\n%s", model_path, mlx_string_data(info));
  }
  mlx_string_free(info);

  if (raw) {
    fputs(prompt, stdout); /* a raw prompt is continued: show it first */
  }
  mlx_string text = mlx_string_new();
  int rc = mlx_arm_generate(&text, model, prompt, !raw, &cfg, print_piece, NULL);
  putchar('\n');
  if (rc == 0) {
    mlx_arm_generation_stats st;
    mlx_arm_generate_stats(&st, model);
    fprintf(stderr, "[prompt: %zu tokens, %.1f tok/s | generation: %zu tokens, %.1f tok/s]\n", st.prompt_tokens,
            st.prompt_tps, st.generation_tokens, st.generation_tps);
  }
  mlx_string_free(text);
  mlx_arm_model_free(model);
  return rc == 0 ? 0 : 1;
}
