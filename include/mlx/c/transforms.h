/* mlx-arm C API (mlx-c compatible). Evaluation and the autodiff transforms over closures.
 * mlx_arm_vmap is an mlx-arm extension. */

#ifndef MLX_TRANSFORMS_H
#define MLX_TRANSFORMS_H

#include <stddef.h>

#include "mlx/c/array.h"
#include "mlx/c/closure.h"
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
/** `*res` = `fun`, whose vjp runs `fun` again on its inputs instead of keeping the
 * intermediates of the forward pass (gradient checkpointing). */
int mlx_checkpoint(mlx_closure* res, const mlx_closure fun);
/** `*res` = `fun` with custom transforms: `fun_vjp(primals, cotangents, outputs)` gives one
 * cotangent per primal, `fun_jvp(primals, tangents, argnums)` one tangent per output
 * (`tangents[i]` belongs to `primals[argnums[i]]`), `fun_vmap(inputs, axes)` the batched
 * outputs and their axes (-1: not mapped). An empty rule handle (`*_new()`) keeps the
 * default: the transform of `fun`. */
int mlx_custom_function(
    mlx_closure* res,
    const mlx_closure fun,
    const mlx_closure_custom fun_vjp /* may be null */,
    const mlx_closure_custom_jvp fun_jvp /* may be null */,
    const mlx_closure_custom_vmap fun_vmap /* may be null */);
/** `*res` = `fun` with the custom vjp `fun_vjp` (as `mlx_custom_function`). */
int mlx_custom_vjp(
    mlx_closure* res,
    const mlx_closure fun,
    const mlx_closure_custom fun_vjp);
/** Computes every array of `outputs`. */
int mlx_eval(const mlx_vector_array outputs);
/** `*res_0` = `fun(primals)`; `*res_1` = the Jacobian-vector products with `tangents`
 * (one tangent per primal, one result per output). */
int mlx_jvp(
    mlx_vector_array* res_0,
    mlx_vector_array* res_1,
    const mlx_closure fun,
    const mlx_vector_array primals,
    const mlx_vector_array tangents);
/** `*res` becomes a closure returning `fun`'s outputs and the gradients of its first output
 * (a scalar) with respect to the inputs `argnums` (negative counts from the end; gradients
 * come in sorted order). Outputs after the first are returned, not differentiated. */
int mlx_value_and_grad(
    mlx_closure_value_and_grad* res,
    const mlx_closure fun,
    const int* argnums,
    size_t argnums_num);
/** `*res_0` = `fun(primals)`; `*res_1` = the vector-Jacobian products with `cotangents`
 * (one cotangent per output, one result per primal). */
int mlx_vjp(
    mlx_vector_array* res_0,
    mlx_vector_array* res_1,
    const mlx_closure fun,
    const mlx_vector_array primals,
    const mlx_vector_array cotangents);

/** mlx-arm extension: `*res` = `fun` vectorized over axis `in_axes[i]` of input `i` (-1: not
 * mapped), the mapped axis of output `j` placed at `out_axes[j]`; empty lists mean 0 for all.
 * A primitive without a batching rule is an error naming it (docs/GRAD.md lists the rules). */
int mlx_arm_vmap(
    mlx_vector_array* res,
    const mlx_closure fun,
    const mlx_vector_array inputs,
    const int* in_axes,
    size_t in_axes_num,
    const int* out_axes,
    size_t out_axes_num);

/**@}*/

#ifdef __cplusplus
}
#endif

#endif
