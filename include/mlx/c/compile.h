/* mlx-arm C API (mlx-c compatible): compile. A compiled closure traces its function once per
 * input signature (dtypes and shapes; with `shapeless`, the number of axes), keeps the
 * simplified graph, and replays it with chains of elementwise ops fused into one kernel
 * (docs/COMPILE.md). Constants the function captures are frozen at trace time. */

#ifndef MLX_COMPILE_H
#define MLX_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mlx/c/array.h"
#include "mlx/c/closure.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup compile Compilation operations
 */
/**@{*/
typedef enum mlx_compile_mode_ {
  MLX_COMPILE_MODE_DISABLED,
  MLX_COMPILE_MODE_NO_SIMPLIFY,
  MLX_COMPILE_MODE_NO_FUSE,
  MLX_COMPILE_MODE_ENABLED
} mlx_compile_mode;
/** `*res` becomes the compiled form of `fun`. */
int mlx_compile(mlx_closure* res, const mlx_closure fun, bool shapeless);
/** Like `mlx_compile`, with the compiled function kept in a process-wide cache under
 * `fun_id` and the scalar `constants` (the same id and constants give the same traces). */
int mlx_detail_compile(
    mlx_closure* res,
    const mlx_closure fun,
    uintptr_t fun_id,
    bool shapeless,
    const uint64_t* constants,
    size_t constants_num);
/** Forgets every function kept by `mlx_detail_compile`. */
int mlx_detail_compile_clear_cache(void);
/** Forgets the functions kept under `fun_id`. */
int mlx_detail_compile_erase(uintptr_t fun_id);
/** Compiled closures call their function directly from now on. */
int mlx_disable_compile(void);
/** Compiled closures trace and fuse again. */
int mlx_enable_compile(void);
/** Sets how compiled closures run (disabled, no simplification, no fusion, or enabled). */
int mlx_set_compile_mode(mlx_compile_mode mode);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif
