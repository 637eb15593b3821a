/* mlx-arm C API (mlx-c compatible). Loading and saving arrays (mlx-c io.h).
 * Hosted builds only (files need an OS). Loaded arrays view the memory-mapped file.
 * A malformed file gives a non-zero status and a message naming the file and the defect.
 * The _reader and _writer variants read or write through caller callbacks (io_types.h) and
 * also exist in the bare-metal build; the file functions need an OS. */
#ifndef MLX_IO_H
#define MLX_IO_H

#include "mlx/c/array.h"
#include "mlx/c/io_types.h"
#include "mlx/c/map.h"
#include "mlx/c/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup io File IO
 */
/**@{*/

/** Loads one array from `.npy` bytes read from a custom reader (position to end). */
int mlx_load_reader(
    mlx_array* res,
    mlx_io_reader in_stream,
    const mlx_stream s);
/** Loads one array from a `.npy` file (MLX's C++ `load(file)`). */
int mlx_load(mlx_array* res, const char* file, const mlx_stream s);
/**
 * Loads a GGUF file as MLX does: Q4_0/Q4_1/Q8_0 tensors become affine group-32
 * `weight`/`scales`/`biases`, other block types float16; metadata numbers and numeric lists
 * become arrays (float64 as float32), strings strings, lists of strings vector strings.
 * (mlx_arm_load_gguf keeps the GGML blocks instead.) Hosted builds only.
 */
int mlx_load_gguf(mlx_io_gguf* gguf, const char* file, const mlx_stream s);
/** As mlx_load_safetensors, from a custom reader. */
int mlx_load_safetensors_reader(
    mlx_map_string_to_array* res_0,
    mlx_map_string_to_string* res_1,
    mlx_io_reader in_stream,
    const mlx_stream s);
/** Writes `a` as `.npy` bytes to a custom writer. */
int mlx_save_writer(mlx_io_writer out_stream, const mlx_array a);
/** Saves `a` as `.npy` (".npy" is appended when the name lacks it). */
int mlx_save(const char* file, const mlx_array a);
/** `mx.save_gguf` of the object's tensors and metadata. Hosted builds only. */
int mlx_save_gguf(const char* file, mlx_io_gguf gguf);
/** Loads a safetensors file: the arrays (`res_0`) and its `__metadata__` strings (`res_1`). */
int mlx_load_safetensors(
    mlx_map_string_to_array* res_0,
    mlx_map_string_to_string* res_1,
    const char* file,
    const mlx_stream s);
/** As mlx_save_safetensors, to a custom writer (mlx-c names it in_stream). */
int mlx_save_safetensors_writer(
    mlx_io_writer in_stream,
    const mlx_map_string_to_array param,
    const mlx_map_string_to_string metadata);
/** Saves arrays as safetensors; `metadata` may be the empty handle. */
int mlx_save_safetensors(
    const char* file,
    const mlx_map_string_to_array param,
    const mlx_map_string_to_string metadata);

/**@}*/

#ifdef __cplusplus
}
#endif

#endif
