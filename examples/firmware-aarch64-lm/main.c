/* A language model on bare metal: loads the GGUF that QEMU placed in RAM (the weights stay
 * there, viewed in place, never copied), then continues a fixed prompt twice, greedily and
 * with a seeded temperature sampler, streaming the text over the UART exactly as
 * `mlx-arm generate --raw` prints it on Linux. run.sh compares the two.
 *
 * Settings come from run.sh as -D macros: FW_PROMPT, FW_MAX_TOKENS, FW_TEMP, FW_SEED. The GGUF's
 * place comes from the linker (--defsym fw_gguf_addr, fw_gguf_size_addr).
 *
 * Exit status: 0 when both generations ran, the weights were not copied (the arena's peak stays
 * under half the file) and the second generation left the arena as the first did. */
#include <stdbool.h>
#include <stdint.h>

#include "mlx/c/error.h"
#include "mlx/c/memory.h"
#include "mlx/c/mlx_arm.h"
#include "mlx/c/string.h"

#include "arena.h"
#include "uart.h"

#if !defined(FW_PROMPT) || !defined(FW_MAX_TOKENS) || !defined(FW_TEMP) || !defined(FW_SEED)
#error "build with -DFW_PROMPT=... -DFW_MAX_TOKENS=... -DFW_TEMP=... -DFW_SEED=... (see run.sh)"
#endif

/* Placed by QEMU (-device loader): the GGUF image and, before it, its size in bytes. */
extern const unsigned char fw_gguf_addr[];
extern const volatile uint64_t fw_gguf_size_addr;

static int errors_seen;

static void on_error(const char* msg, void* data) {
  (void)data;
  errors_seen++;
  uart_puts("fw: mlx error: ");
  uart_puts(msg);
  uart_puts("\n");
}

/* The generic timer: ticks and ticks per second (QEMU's virtual counter follows host time). */
static uint64_t ticks(void) {
  uint64_t v;
  __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
  return v;
}
static uint64_t tick_hz(void) {
  uint64_t v;
  __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(v));
  return v;
}
static uint64_t ms(uint64_t t) { return t * 1000 / tick_hz(); }

static void put_label(const char* label, uint64_t v, const char* unit) {
  uart_puts(label);
  uart_put_u64(v);
  uart_puts(unit);
}

/* When each generated token arrived. */
struct timing {
  uint64_t start, first, last;
  uint64_t tokens;
};

/* Streams each piece of text as it is generated. */
static bool on_piece(const char* piece, int token, void* user) {
  struct timing* t = user;
  if (token >= 0) {
    uint64_t now = ticks();
    if (t->tokens == 0) t->first = now;
    t->last = now;
    t->tokens++;
  }
  uart_puts(piece);
  return true;
}

/* One generation, printed between "fw: text begin/end" lines as the CLI prints it: the prompt,
 * the continuation, a newline. Returns 0 on success. */
static int generate(mlx_arm_model model, const char* name, float temperature, uint64_t seed) {
  mlx_arm_generate_config cfg = mlx_arm_generate_config_default();
  cfg.max_tokens = FW_MAX_TOKENS;
  cfg.temperature = temperature;
  cfg.seed = seed;
  mlx_string out = mlx_string_new();
  struct timing t = {0, 0, 0, 0};
  uart_puts("fw: text begin (");
  uart_puts(name);
  uart_puts(")\n");
  uart_puts(FW_PROMPT);
  t.start = ticks();
  int rc = mlx_arm_generate(&out, model, FW_PROMPT, false, &cfg, on_piece, &t);
  uart_puts("\nfw: text end (");
  uart_puts(name);
  uart_puts(")\n");
  mlx_string_free(out);
  if (rc != 0) return 1;
  mlx_arm_generation_stats st;
  if (mlx_arm_generate_stats(&st, model) != 0) return 1;
  uart_puts("fw: ");
  uart_puts(name);
  put_label(": prompt ", st.prompt_tokens, " tokens, ");
  put_label("generated ", t.tokens, " tokens; ");
  put_label("first token after ", ms(t.first - t.start), " ms, ");
  put_label("then ", t.tokens > 1 ? ms(t.last - t.first) / (t.tokens - 1) : 0, " ms/token\n");
  return 0;
}

int main(void) {
  mlx_set_error_handler(on_error, 0, 0);
  const unsigned char* gguf = fw_gguf_addr;
  const uint64_t size = fw_gguf_size_addr;
  uart_puts("fw: GGUF at 0x");
  uart_put_hex((uintptr_t)gguf);
  put_label(", ", size, " bytes\n");
  if (size < 4 || gguf[0] != 'G' || gguf[1] != 'G' || gguf[2] != 'U' || gguf[3] != 'F') {
    uart_puts("fw: FAIL: no GGUF image in memory (run.sh places it with -device loader)\n");
    return 2;
  }

  uint64_t t0 = ticks();
  mlx_arm_model model = mlx_arm_model_new();
  if (mlx_arm_model_load_gguf_bytes(&model, gguf, (size_t)size) != 0) {
    uart_puts("fw: FAIL: loading the model\n");
    return 1;
  }
  put_label("fw: model loaded in ", ms(ticks() - t0), " ms; ");
  put_label("arena in use ", arena_in_use() >> 10, " KiB\n");

  int fails = 0;
  fails += generate(model, "greedy", 0.0f, FW_SEED);
  mlx_clear_cache();
  size_t after_first = arena_in_use();
  fails += generate(model, "sampled", FW_TEMP, FW_SEED);
  mlx_clear_cache();
  size_t after_second = arena_in_use();

  put_label("fw: arena peak ", arena_peak() >> 10, " KiB (");
  put_label("", FW_ARENA_BYTES >> 20, " MiB arena, ");
  put_label("GGUF ", size >> 10, " KiB)\n");
  /* Copying the weights would need about the file's size: the peak shows they stayed put. */
  if ((uint64_t)arena_peak() * 2 >= size) {
    uart_puts("fw: FAIL: the arena's peak is not far below the file's size (weights copied?)\n");
    fails++;
  } else {
    uart_puts("fw: weights in place: ok\n");
  }
  if (after_first != after_second) {
    put_label("fw: FAIL: arena in use after the first generation ", after_first, "");
    put_label(" bytes, after the second ", after_second, " bytes\n");
    fails++;
  } else {
    uart_puts("fw: no leak: ok\n");
  }
  if (mlx_arm_model_free(model) != 0) fails++;
  if (errors_seen) fails++;
  uart_puts(fails ? "fw: FAILED\n" : "fw: OK\n");
  return fails ? 1 : 0;
}
