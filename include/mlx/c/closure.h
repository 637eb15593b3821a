/* mlx-arm C API (mlx-c compatible). Closures: C functions as callable handles, which the
 * transforms (transforms.h) take and return. A function reports failure by returning
 * non-zero; the call that ran it then fails with status 1. A function must not free the
 * handles it is given; its results go into the (non-empty) result vectors it receives. */

#ifndef MLX_CLOSURE_H
#define MLX_CLOSURE_H

#include <stddef.h>

#include "mlx/c/array.h"
#include "mlx/c/map.h"
#include "mlx/c/optional.h"
#include "mlx/c/stream.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup mlx_closure Closures
 * MLX closure objects. `*_new()` gives the empty handle; `*_set` shares the function; a
 * payload's `dtor` (may be NULL) runs once, when the last handle holding it is freed.
 */
/**@{*/

/** A function of arrays to arrays. */
typedef struct mlx_closure_ {
  void* ctx;
} mlx_closure;
/** The empty closure handle. */
mlx_closure mlx_closure_new(void);
/** Frees a closure handle. */
int mlx_closure_free(mlx_closure cls);
/** A closure calling `fun(&res, inputs)`. */
mlx_closure mlx_closure_new_func(
    int (*fun)(mlx_vector_array* res, const mlx_vector_array input));
/** A closure calling `fun(&res, inputs, payload)`. */
mlx_closure mlx_closure_new_func_payload(
    int (*fun)(mlx_vector_array* res, const mlx_vector_array input, void* payload),
    void* payload,
    void (*dtor)(void*));
/** `*cls` shares `src`'s function. */
int mlx_closure_set(mlx_closure* cls, const mlx_closure src);
/** `*res` = `cls(input)`. */
int mlx_closure_apply(
    mlx_vector_array* res,
    mlx_closure cls,
    const mlx_vector_array input);
/** A closure of one array to one array. */
mlx_closure mlx_closure_new_unary(int (*fun)(mlx_array* res, const mlx_array input));

/** A function of arrays and named arrays to arrays. */
typedef struct mlx_closure_kwargs_ {
  void* ctx;
} mlx_closure_kwargs;
/** The empty handle. */
mlx_closure_kwargs mlx_closure_kwargs_new(void);
/** Frees the handle. */
int mlx_closure_kwargs_free(mlx_closure_kwargs cls);
/** A closure calling `fun(&res, inputs, kwargs)`. */
mlx_closure_kwargs mlx_closure_kwargs_new_func(
    int (*fun)(
        mlx_vector_array* res,
        const mlx_vector_array input,
        const mlx_map_string_to_array kwargs));
/** A closure calling `fun(&res, inputs, kwargs, payload)`. */
mlx_closure_kwargs mlx_closure_kwargs_new_func_payload(
    int (*fun)(
        mlx_vector_array* res,
        const mlx_vector_array input,
        const mlx_map_string_to_array kwargs,
        void* payload),
    void* payload,
    void (*dtor)(void*));
/** `*cls` shares `src`'s function. */
int mlx_closure_kwargs_set(
    mlx_closure_kwargs* cls,
    const mlx_closure_kwargs src);
/** `*res` = `cls(input_0, input_1)`. */
int mlx_closure_kwargs_apply(
    mlx_vector_array* res,
    mlx_closure_kwargs cls,
    const mlx_vector_array input_0,
    const mlx_map_string_to_array input_1);

/** A function of arrays to (values, gradients), as `mlx_value_and_grad` returns. */
typedef struct mlx_closure_value_and_grad_ {
  void* ctx;
} mlx_closure_value_and_grad;
/** The empty handle. */
mlx_closure_value_and_grad mlx_closure_value_and_grad_new(void);
/** Frees the handle. */
int mlx_closure_value_and_grad_free(mlx_closure_value_and_grad cls);
/** A closure calling `fun(&values, &grads, inputs)`. */
mlx_closure_value_and_grad mlx_closure_value_and_grad_new_func(
    int (*fun)(mlx_vector_array* values, mlx_vector_array* grads, const mlx_vector_array input));
/** A closure calling `fun(&values, &grads, inputs, payload)`. */
mlx_closure_value_and_grad mlx_closure_value_and_grad_new_func_payload(
    int (*fun)(
        mlx_vector_array* values,
        mlx_vector_array* grads,
        const mlx_vector_array input,
        void* payload),
    void* payload,
    void (*dtor)(void*));
/** `*cls` shares `src`'s function. */
int mlx_closure_value_and_grad_set(
    mlx_closure_value_and_grad* cls,
    const mlx_closure_value_and_grad src);
/** `(*res_0, *res_1)` = `cls(input)`. */
int mlx_closure_value_and_grad_apply(
    mlx_vector_array* res_0,
    mlx_vector_array* res_1,
    mlx_closure_value_and_grad cls,
    const mlx_vector_array input);

/** A custom vjp: (primals, cotangents, outputs) to one vjp per primal. */
typedef struct mlx_closure_custom_ {
  void* ctx;
} mlx_closure_custom;
/** The empty handle. */
mlx_closure_custom mlx_closure_custom_new(void);
/** Frees the handle. */
int mlx_closure_custom_free(mlx_closure_custom cls);
/** A closure calling `fun(&res, input_0, input_1, input_2)`. */
mlx_closure_custom mlx_closure_custom_new_func(
    int (*fun)(
        mlx_vector_array* res,
        const mlx_vector_array input_0,
        const mlx_vector_array input_1,
        const mlx_vector_array input_2));
/** A closure calling `fun(&res, input_0, input_1, input_2, payload)`. */
mlx_closure_custom mlx_closure_custom_new_func_payload(
    int (*fun)(
        mlx_vector_array* res,
        const mlx_vector_array input_0,
        const mlx_vector_array input_1,
        const mlx_vector_array input_2,
        void* payload),
    void* payload,
    void (*dtor)(void*));
/** `*cls` shares `src`'s function. */
int mlx_closure_custom_set(
    mlx_closure_custom* cls,
    const mlx_closure_custom src);
/** `*res` = `cls(input_0, input_1, input_2)`. */
int mlx_closure_custom_apply(
    mlx_vector_array* res,
    mlx_closure_custom cls,
    const mlx_vector_array input_0,
    const mlx_vector_array input_1,
    const mlx_vector_array input_2);

/** A custom jvp: (primals, tangents, argnums) to jvps. */
typedef struct mlx_closure_custom_jvp_ {
  void* ctx;
} mlx_closure_custom_jvp;
/** The empty handle. */
mlx_closure_custom_jvp mlx_closure_custom_jvp_new(void);
/** Frees the handle. */
int mlx_closure_custom_jvp_free(mlx_closure_custom_jvp cls);
/** A closure calling `fun(&res, input_0, input_1, ints, n)`. */
mlx_closure_custom_jvp mlx_closure_custom_jvp_new_func(
    int (*fun)(
        mlx_vector_array* res,
        const mlx_vector_array input_0,
        const mlx_vector_array input_1,
        const int* input_2,
        size_t _num));
/** A closure calling `fun(&res, input_0, input_1, ints, n, payload)`. */
mlx_closure_custom_jvp mlx_closure_custom_jvp_new_func_payload(
    int (*fun)(
        mlx_vector_array* res,
        const mlx_vector_array input_0,
        const mlx_vector_array input_1,
        const int* input_2,
        size_t _num,
        void* payload),
    void* payload,
    void (*dtor)(void*));
/** `*cls` shares `src`'s function. */
int mlx_closure_custom_jvp_set(
    mlx_closure_custom_jvp* cls,
    const mlx_closure_custom_jvp src);
/** `*res` = `cls(input_0, input_1, input_2[0..input_2_num])`. */
int mlx_closure_custom_jvp_apply(
    mlx_vector_array* res,
    mlx_closure_custom_jvp cls,
    const mlx_vector_array input_0,
    const mlx_vector_array input_1,
    const int* input_2,
    size_t input_2_num);

/** A custom vmap: (inputs, axes) to (outputs, output axes). */
typedef struct mlx_closure_custom_vmap_ {
  void* ctx;
} mlx_closure_custom_vmap;
/** The empty handle. */
mlx_closure_custom_vmap mlx_closure_custom_vmap_new(void);
/** Frees the handle. */
int mlx_closure_custom_vmap_free(mlx_closure_custom_vmap cls);
/** A closure calling `fun(&outputs, &axes, inputs, ints, n)`. */
mlx_closure_custom_vmap mlx_closure_custom_vmap_new_func(
    int (*fun)(
        mlx_vector_array* res_0,
        mlx_vector_int* res_1,
        const mlx_vector_array input_0,
        const int* input_1,
        size_t _num));
/** A closure calling `fun(&outputs, &axes, inputs, ints, n, payload)`. */
mlx_closure_custom_vmap mlx_closure_custom_vmap_new_func_payload(
    int (*fun)(
        mlx_vector_array* res_0,
        mlx_vector_int* res_1,
        const mlx_vector_array input_0,
        const int* input_1,
        size_t _num,
        void* payload),
    void* payload,
    void (*dtor)(void*));
/** `*cls` shares `src`'s function. */
int mlx_closure_custom_vmap_set(
    mlx_closure_custom_vmap* cls,
    const mlx_closure_custom_vmap src);
/** `(*res_0, *res_1)` = `cls(input_0, input_1[0..input_1_num])`. */
int mlx_closure_custom_vmap_apply(
    mlx_vector_array* res_0,
    mlx_vector_int* res_1,
    mlx_closure_custom_vmap cls,
    const mlx_vector_array input_0,
    const int* input_1,
    size_t input_1_num);

/**@}*/

#ifdef __cplusplus
}
#endif

#endif
