/* mlx-arm C API (mlx-c compatible). Evaluation (closure-based transforms are not done yet). */

#ifndef MLX_TRANSFORMS_H
#define MLX_TRANSFORMS_H

#include "mlx/c/array.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup transforms Transform operations
 */
/**@{*/

/** Computes every array of `outputs` (CPU work completes before it returns). */
int mlx_async_eval(const mlx_vector_array outputs);
/** Computes every array of `outputs`. */
int mlx_eval(const mlx_vector_array outputs);

/**@}*/

#ifdef __cplusplus
}
#endif

#endif
