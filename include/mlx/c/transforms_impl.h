/* mlx-arm C API (mlx-c compatible): the two halves of vmap that mlx-c exposes as
 * implementation details. mlx_detail_vmap_trace runs a closure once on tracers of one
 * example's shape (an input with in_axes[i] == -1 is passed as it is) and returns the tracers
 * (res_0) and the closure's outputs on them (res_1); mlx_detail_vmap_replace replays that
 * graph on the batched inputs with each primitive's batching rule and moves output i's mapped
 * axis to out_axes[i]. Both together are mlx_arm_vmap (transforms.h). docs/C-API.md. */

#ifndef MLX_TRANSFORMS_IMPL_H
#define MLX_TRANSFORMS_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mlx/c/array.h"
#include "mlx/c/closure.h"
#include "mlx/c/stream.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup transforms_impl Implementation detail operations
 */
/**@{*/

int mlx_detail_vmap_replace(
    mlx_vector_array* res,
    const mlx_vector_array inputs,
    const mlx_vector_array s_inputs,
    const mlx_vector_array s_outputs,
    const int* in_axes,
    size_t in_axes_num,
    const int* out_axes,
    size_t out_axes_num);
int mlx_detail_vmap_trace(
    mlx_vector_array* res_0,
    mlx_vector_array* res_1,
    const mlx_closure fun,
    const mlx_vector_array inputs,
    const int* in_axes,
    size_t in_axes_num);

/**@}*/

#ifdef __cplusplus
}
#endif

#endif
