/* mlx-arm C API: extensions beyond mlx-c (all names start with mlx_arm_ / MLX_ARM_). */

#ifndef MLX_ARM_H
#define MLX_ARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mlx/c/array.h"
#include "mlx/c/io_types.h"
#include "mlx/c/map.h"
#include "mlx/c/stream.h"
#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup mlx_arm mlx-arm extensions
 */
/**@{*/

/** Version of the headers; compare with the run-time queries below. */
#define MLX_ARM_VERSION_MAJOR 0
#define MLX_ARM_VERSION_MINOR 1
#define MLX_ARM_VERSION_PATCH 0
#define MLX_ARM_VERSION_STRING "0.1.0"
/** MAJOR * 10000 + MINOR * 100 + PATCH. */
#define MLX_ARM_VERSION \
  (MLX_ARM_VERSION_MAJOR * 10000 + MLX_ARM_VERSION_MINOR * 100 + MLX_ARM_VERSION_PATCH)
/** Bumped whenever a handle layout, enum value or existing signature changes. */
#define MLX_ARM_ABI_VERSION 1

/** The library's version, "MAJOR.MINOR.PATCH" (static storage). */
const char* mlx_arm_version_string(void);
/** The library's MLX_ARM_VERSION. */
int mlx_arm_version_number(void);
/** The library's MLX_ARM_ABI_VERSION: differs from the header's when mismatched. */
int mlx_arm_abi_version(void);

/** "key=value" lines: version, abi, arch, os, pointer_width, cpu_cores, backends. */
int mlx_arm_platform_info(mlx_string* res);

/** Memory figures in bytes. */
typedef struct mlx_arm_memory_stats_ {
  size_t active; /**< held by live buffers */
  size_t peak;   /**< highest `active` since start or mlx_reset_peak_memory() */
  size_t limit;  /**< allocations beyond it fail (SIZE_MAX: unlimited) */
} mlx_arm_memory_stats;
/** All memory figures at once. */
int mlx_arm_get_memory_stats(mlx_arm_memory_stats* res);
/** `mx.get_array_buffer_size`: bytes of the distinct buffers behind the evaluated `arrays`
 *  (an unevaluated one is an error; nothing is evaluated). */
int mlx_arm_get_array_buffer_size(size_t* res, const mlx_vector_array arrays);

/** Basic indexing in one call: `a[index]` for an index of ints, slices, None and one `...`,
 *  given as `index_num` int64 values, entry after entry: `0, i` an int; `1` None (new axis);
 *  `2` the ellipsis; `8 | flags, start, stop, step` a slice, where `flags` bit 0/1/2 says
 *  start/stop/step is given (Python's default otherwise; the value is then ignored). Values
 *  must be 32-bit; an int out of range, too many entries or a zero step is an error. The
 *  result is what `mlx_slice` then `mlx_reshape` give (a view). */
int mlx_arm_index_basic(mlx_array* res, const mlx_array a, const int64_t* index, size_t index_num,
                        const mlx_stream s);
/** `src` with `src[index]` set from `update` (same index form; `update` broadcasts by MLX's
 *  rule and is cast to `src`'s dtype): one `mlx_slice_update`; `src` itself when the window is
 *  empty. */
int mlx_arm_index_basic_update(mlx_array* res, const mlx_array src, const mlx_array update, const int64_t* index,
                               size_t index_num, const mlx_stream s);

/** `a.item()` in one call for an array already computed (no evaluation): writes the element
 *  to `res` as its C type (bool, the integer types, float, double; `res` must hold 8 bytes,
 *  aligned for 8) and its dtype to `*dtype`, returning 0. Returns -1, with nothing written or
 *  reported, when the array is not computed yet or its dtype has no direct read (float16,
 *  bfloat16, complex64): use `mlx_array_item_*` then. Returns 1 (error reported) for an empty
 *  handle or a size other than 1. */
int mlx_arm_array_item_computed(void* res, mlx_dtype* dtype, const mlx_array arr);
/** `mx.fast.metal_kernel(...)(...)` in one call: MLX's `CustomKernel` node with the Metal
 *  source MLX generates. There is no Metal back-end: outside an export trace (the C export
 *  functions' closures) this fails with "[metal_kernel] No Metal back-end." (a runtime error),
 *  as MLX's CPU build; inside one the kernel is recorded for the file, and evaluating it fails
 *  the same way. `input_names`/`output_names` name the kernel's buffers; `math_mode` is MLX's
 *  (0 safe, 1 relaxed, 2 fast). `output_shapes` holds every output's dims back to back,
 *  `output_ndims` how many each (`outputs_num` shapes and `output_dtypes_num` dtypes, each
 *  checked against the output names). Template argument `i` is `template_names[i]` of kind
 *  `template_kinds[i]` (0 int, 1 bool, 2 dtype: the value an `mlx_dtype`). `device_type` is -1
 *  when no stream was asked for, else an `mlx_device_type` (only the GPU is accepted).
 *  `source_out`, when not NULL, receives the generated source. */
int mlx_arm_fast_metal_kernel(mlx_vector_array* res, mlx_string* source_out, const char* name,
                              const char* const* input_names, size_t input_names_num,
                              const char* const* output_names, size_t output_names_num, const char* source,
                              const char* header, bool ensure_row_contiguous, bool atomic_outputs, int math_mode,
                              const mlx_vector_array inputs, const int* output_shapes, const size_t* output_ndims,
                              const mlx_dtype* output_dtypes, size_t output_dtypes_num, size_t outputs_num,
                              const int* grid,
                              const int* threadgroup, const char* const* template_names, const int* template_kinds,
                              const int* template_values, size_t template_num, bool has_init_value,
                              float init_value, int device_type);
/** `mx.fast.cuda_kernel(...)`: MLX's CUDA kernel object. There is no CUDA back-end, so, as
 *  MLX's CPU build, this always fails with "[cuda_kernel] No CUDA back-end." (a runtime error),
 *  inside an export trace too; the arguments are read (pointers checked) and otherwise unused. */
int mlx_arm_fast_cuda_kernel(const char* name, const char* const* input_names, size_t input_names_num,
                             const char* const* output_names, size_t output_names_num, const char* source,
                             const char* header, bool ensure_row_contiguous, int shared_memory);
/** `mx.fast.precompiled_cuda_kernel(...)`: always the error of `mlx_arm_fast_cuda_kernel`
 *  (MLX's CPU build); nothing is written to `res`. Arguments as MLX's, which it does not check
 *  before the error: `output_shapes` holds every output's dims back to back, `output_ndims` how
 *  many each (`output_shapes_num` shapes, `output_dtypes_num` dtypes); scalar `i` is
 *  `scalar_values[i]` of kind `scalar_kinds[i]` (0 bool, 1 int32, 2 float32); `device_type` is
 *  -1 when no stream was asked for, else an `mlx_device_type`. */
int mlx_arm_fast_precompiled_cuda_kernel(mlx_vector_array* res, const char* name, const uint8_t* compiled_source,
                                         size_t compiled_source_len, const mlx_vector_array inputs,
                                         const int* output_shapes, const size_t* output_ndims,
                                         size_t output_shapes_num, const mlx_dtype* output_dtypes,
                                         size_t output_dtypes_num, const int* scalar_kinds,
                                         const double* scalar_values, size_t scalars_num, const int* grid,
                                         const int* threadgroup, int shared_memory, bool has_init_value,
                                         float init_value, bool ensure_row_contiguous, int device_type);

/** Returns `size` bytes aligned to `align`, or NULL. */
typedef void* (*mlx_arm_alloc_fn)(size_t size, size_t align, void* user);
/** Releases memory from the matching alloc (same size and align). */
typedef void (*mlx_arm_free_fn)(void* ptr, size_t size, size_t align, void* user);
/**
 * Every later array buffer comes from `alloc_fn` and returns to `free_fn` (buffers made
 * before keep their allocator). Both NULL restores the default. Call once at start-up; the
 * functions must be thread-safe and stay valid for the life of the process.
 */
int mlx_arm_set_allocator(mlx_arm_alloc_fn alloc_fn, mlx_arm_free_fn free_fn, void* user);

/** A slice of kernel work: run it over [begin, end). */
typedef void (*mlx_arm_parallel_task)(size_t begin, size_t end, void* task_ctx);
/**
 * A parallel-for: call `task(begin, end, task_ctx)` on ranges covering [0, n) exactly once
 * (ranges of at least `grain` items, from any threads) and return when all are done.
 */
typedef void (*mlx_arm_parallel_for_fn)(
    size_t n,
    size_t grain,
    mlx_arm_parallel_task task,
    void* task_ctx,
    void* user);
/** Kernels split work through `hook` (an RTOS task pool...); NULL restores the built-in pool. */
int mlx_arm_set_parallel_for(mlx_arm_parallel_for_fn hook, void* user);

/**@}*/

/**
 * \defgroup mlx_arm_io File formats beyond mlx-c's io.h (hosted builds only)
 */
/**@{*/

/**
 * `mx.load` for any format: "npy", "npz", "safetensors" or "gguf" (`format` NULL infers it
 * from the extension). A .npy file gives one entry named "". GGUF tensors are converted as
 * MLX converts them (Q4_0/Q4_1/Q8_0 to affine weight/scales/biases, other types to float16).
 */
int mlx_arm_load(mlx_map_string_to_array* res, const char* file, const char* format, const mlx_stream s);
/** `mx.savez` (compressed = false) / `mx.savez_compressed`. */
int mlx_arm_savez(const char* file, const mlx_map_string_to_array arrays, bool compressed);
/**
 * Every GGUF tensor exactly as stored, without conversion:
 * - `tensors[name]`: uint8 array (rows, row_bytes) viewing the GGML blocks in the file;
 * - `types[name]`: the GGML type name ("q4_0", "q8_0", "f32", ...);
 * - `shapes[name]`: the logical shape in elements (int64);
 * - `metadata`: a GGUF object (io_types.h) holding the metadata only, in its GGUF types
 *   (float64 kept; strings as strings, lists of strings as vector strings).
 * Pass tensors[name] to mlx_arm_ggml_matmul / mlx_arm_ggml_dequantize with its type.
 */
int mlx_arm_load_gguf(
    mlx_map_string_to_array* tensors,
    mlx_map_string_to_string* types,
    mlx_map_string_to_array* shapes,
    mlx_io_gguf* metadata,
    const char* file,
    const mlx_stream s);
/**
 * Printing precision for mlx_array_tostring (MLX's set_printoptions): -1 (the default) prints
 * floats as MLX does by default (6 significant digits); p >= 0 prints them fixed-point with p
 * digits after the point. Process-wide. Values below -1 are an error.
 */
int mlx_arm_set_print_precision(int precision);
/** The metadata keys of a GGUF object, sorted (mlx-c lists only its tensor keys; any build). */
int mlx_arm_io_gguf_get_metadata_keys(mlx_vector_string* keys, mlx_io_gguf io);

/**@}*/

/**
 * \defgroup mlx_arm_model Language models (Llama family: Llama 2/3, Mistral, SmolLM, Qwen2)
 *
 * A model handle owns the weights (GGUF blocks viewed in place, never expanded) and the
 * tokenizer. Each generation makes its own KV cache, so calls are independent and several
 * threads may generate with one model at once. Handles are checked: an empty, freed or
 * made-up handle gives a non-zero status and a message. File loading and chat templates
 * need an OS; the rest works in the bare-metal build too.
 */
/**@{*/

/** A loaded model (`ctx == NULL` is the empty handle). */
typedef struct mlx_arm_model_ {
  void* ctx;
} mlx_arm_model;

/** The empty model handle (load into it; freeing it does nothing). */
mlx_arm_model mlx_arm_model_new(void);
/** Releases a model. A handle that is not live (freed already) is an error, not a crash. */
int mlx_arm_model_free(mlx_arm_model model);
/**
 * A model from a `.gguf` file or a model directory (config.json, *.safetensors, tokenizer.json;
 * MLX-quantized or not). Weights keep the file's format: read into huge-page memory where the
 * kernel offers it and they take at most half the available memory, memory-mapped otherwise
 * (docs/MODELS.md, "Memory"). A model already in `*res` is freed. Hosted builds only.
 */
int mlx_arm_model_load(mlx_arm_model* res, const char* path);
/**
 * A model from GGUF bytes in memory (e.g. flash on firmware). The weights are viewed in
 * place: `data` must stay valid and unchanged until the model is freed. A model already in
 * `*res` is freed.
 */
int mlx_arm_model_load_gguf_bytes(mlx_arm_model* res, const void* data, size_t size);
/** "key=value" lines: arch, layers, hidden, ffn, heads, kv_heads, head_dim, vocab, context,
 *  rope_theta, tied_embeddings. */
int mlx_arm_model_info(mlx_string* res, const mlx_arm_model model);

/** Settings of one generation; start from mlx_arm_generate_config_default(). */
typedef struct mlx_arm_generate_config_ {
  int max_tokens;           /**< most tokens to generate (default 256) */
  float temperature;        /**< 0: greedy (the default) */
  int top_k;                /**< keep the k most likely tokens (0: all) */
  float top_p;              /**< nucleus threshold in (0, 1] (1: off) */
  float min_p;              /**< drop tokens below min_p times the best one (0: off) */
  float repetition_penalty; /**< 1: off */
  int repetition_context;   /**< recent tokens the penalty looks at (default 64) */
  uint64_t seed;            /**< seed of the sampler's random stream */
} mlx_arm_generate_config;
/** Greedy decoding of up to 256 tokens. */
mlx_arm_generate_config mlx_arm_generate_config_default(void);

/** Figures of a generation. Without a clock (bare metal) the times and rates are 0. */
typedef struct mlx_arm_generation_stats_ {
  size_t prompt_tokens;      /**< prompt tokens run */
  size_t generation_tokens;  /**< tokens generated (a final stop token included) */
  double prompt_tps;         /**< prompt tokens per second */
  double generation_tps;     /**< generated tokens per second after the first */
  double prompt_seconds;     /**< time to the first generated token */
  double generation_seconds; /**< time from the first generated token to the last */
  int stop_reason;           /**< 0 stop token, 1 max_tokens, 2 callback, 3 context full */
} mlx_arm_generation_stats;
/** The figures of the model's last finished generation (zeros before the first). */
int mlx_arm_generate_stats(mlx_arm_generation_stats* res, const mlx_arm_model model);

/**
 * Generates after the token ids `prompt` (`cfg` may be NULL: the defaults); `*res` receives
 * the generated ids (the model's end-of-generation tokens stop it and are not included).
 * Negative ids and ids outside the vocabulary are errors.
 */
int mlx_arm_generate_ids(
    mlx_vector_int* res,
    const mlx_arm_model model,
    const int* prompt,
    size_t prompt_num,
    const mlx_arm_generate_config* cfg);

/** The ids of `text` (`add_special`: the tokenizer's BOS rule). Special tokens written in
 *  the text (`<|im_start|>`) become their ids. */
int mlx_arm_model_tokenize(mlx_vector_int* res, const mlx_arm_model model, const char* text, bool add_special);
/** The text of `ids` (special tokens kept; broken UTF-8 becomes U+FFFD). Negative ids and
 *  ids outside the vocabulary are errors. */
int mlx_arm_model_detokenize(mlx_string* res, const mlx_arm_model model, const int* ids, size_t ids_num);
/**
 * The prompt text for `num` messages (`roles[i]`: "system", "user", "assistant";
 * `contents[i]`), rendered with the model's Jinja chat template as Hugging Face's
 * apply_chat_template renders it; `add_generation_prompt` opens the assistant's turn. An
 * error when the model has no template. Hosted builds only.
 */
int mlx_arm_model_apply_chat_template(
    mlx_string* res,
    const mlx_arm_model model,
    const char* const* roles,
    const char* const* contents,
    size_t num,
    bool add_generation_prompt);

/**
 * Called for each generated token with the text it completes (`piece`, "" while a UTF-8
 * character is incomplete; valid only during the call); `token` is -1 for text flushed at
 * the end. Return false to stop.
 */
typedef bool (*mlx_arm_generate_callback)(const char* piece, int token, void* user);
/**
 * Generates a reply to `prompt`: with `apply_chat_template`, the model's template is applied
 * to it as one user message (an error on bare metal); otherwise the text is continued.
 * `callback` (may be NULL) streams the text; `*res` receives all of it. `cfg` may be NULL.
 */
int mlx_arm_generate(
    mlx_string* res,
    const mlx_arm_model model,
    const char* prompt,
    bool apply_chat_template,
    const mlx_arm_generate_config* cfg,
    mlx_arm_generate_callback callback,
    void* user);

/**@}*/

#ifdef __cplusplus
}
#endif

#endif
