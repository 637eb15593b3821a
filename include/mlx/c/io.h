/* mlx-arm C API (mlx-c compatible). Loading and saving arrays (mlx-c io.h).
 * Hosted builds only (files need an OS). Loaded arrays view the memory-mapped file.
 * A malformed file gives a non-zero status and a message naming the file and the defect.
 * mlx-c's reader/writer variants (mlx_io_reader, mlx_io_writer) and mlx_io_gguf are not
 * provided; GGUF goes through mlx_arm_load_gguf / mlx_arm_save_gguf (mlx_arm.h). */
#ifndef MLX_IO_H
#define MLX_IO_H

#include "mlx/c/array.h"
#include "mlx/c/map.h"
#include "mlx/c/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup io File IO
 */
/**@{*/

/** Loads one array from a `.npy` file (MLX's C++ `load(file)`). */
int mlx_load(mlx_array* res, const char* file, const mlx_stream s);
/** Saves `a` as `.npy` (".npy" is appended when the name lacks it). */
int mlx_save(const char* file, const mlx_array a);
/** Loads a safetensors file: the arrays (`res_0`) and its `__metadata__` strings (`res_1`). */
int mlx_load_safetensors(
    mlx_map_string_to_array* res_0,
    mlx_map_string_to_string* res_1,
    const char* file,
    const mlx_stream s);
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
