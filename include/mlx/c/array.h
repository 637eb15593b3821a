/* mlx-arm C API (mlx-c compatible). N-dimensional arrays. */

#ifndef MLX_ARRAY_H
#define MLX_ARRAY_H

#include "mlx/c/string.h"

#include <float.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef _MSC_VER
#define _CRT_USE_C_COMPLEX_H
#include <complex.h>
typedef _Fcomplex mlx_complex64_t;
#else
#include <complex.h>
typedef float _Complex mlx_complex64_t;
#endif

#include "mlx/c/half.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup mlx_array Array
 * A lazy N-dimensional array. Handles are passed by value; `ctx == NULL` is the empty
 * handle. Every `mlx_array_new*` (and every array written through a `mlx_array*` result
 * into an empty handle) is released with exactly one mlx_array_free().
 */
/**@{*/

/** An array handle. */
typedef struct mlx_array_ {
  void* ctx;
} mlx_array;

#if defined(__GNUC__) || defined(__clang__)
__attribute__((unused))
#endif
static mlx_array mlx_array_empty;

/** Element type (values as in mlx-c). */
typedef enum mlx_dtype_ {
  MLX_BOOL,
  MLX_UINT8,
  MLX_UINT16,
  MLX_UINT32,
  MLX_UINT64,
  MLX_INT8,
  MLX_INT16,
  MLX_INT32,
  MLX_INT64,
  MLX_FLOAT16,
  MLX_FLOAT32,
  MLX_FLOAT64,
  MLX_BFLOAT16,
  MLX_COMPLEX64,
} mlx_dtype;

/** Bytes per element of `dtype` (0 and an error for an invalid value). */
size_t mlx_dtype_size(mlx_dtype dtype);

/** MLX's printed form, e.g. "array([1, 2], dtype=int32)" (evaluates the array). */
int mlx_array_tostring(mlx_string* str, const mlx_array arr);
/** The empty array handle. */
mlx_array mlx_array_new(void);
/** Frees an array handle (the empty handle is a no-op). */
int mlx_array_free(mlx_array arr);
/** A 0-d bool array. */
mlx_array mlx_array_new_bool(bool val);
/** A 0-d int32 array. */
mlx_array mlx_array_new_int(int val);
/** A 0-d float32 array. */
mlx_array mlx_array_new_float32(float val);
/** A 0-d float32 array. */
mlx_array mlx_array_new_float(float val);
/** A 0-d float64 array. */
mlx_array mlx_array_new_float64(double val);
/** A 0-d float64 array. */
mlx_array mlx_array_new_double(double val);
/** A 0-d complex64 array. */
mlx_array mlx_array_new_complex(float real_val, float imag_val);
/**
 * An array holding a copy of `data` (row-major).
 * @param shape `dim` non-negative sizes (may be NULL when `dim` is 0).
 * @return the empty handle (after reporting an error) on bad input.
 */
mlx_array mlx_array_new_data(
    const void* data,
    const int* shape,
    int dim,
    mlx_dtype dtype);
/** An array viewing `data` without a copy; `dtor(data)` runs when it is released. */
mlx_array mlx_array_new_data_managed(
    void* data,
    const int* shape,
    int dim,
    mlx_dtype dtype,
    void (*dtor)(void*));
/** As mlx_array_new_data_managed(), calling `dtor(payload)`. */
mlx_array mlx_array_new_data_managed_payload(
    void* data,
    const int* shape,
    int dim,
    mlx_dtype dtype,
    void* payload,
    void (*dtor)(void*));
/** `*arr` refers to `src`'s array. */
int mlx_array_set(mlx_array* arr, const mlx_array src);
/** `*arr` becomes a 0-d bool array. */
int mlx_array_set_bool(mlx_array* arr, bool val);
/** `*arr` becomes a 0-d int32 array. */
int mlx_array_set_int(mlx_array* arr, int val);
/** `*arr` becomes a 0-d float32 array. */
int mlx_array_set_float32(mlx_array* arr, float val);
/** `*arr` becomes a 0-d float32 array. */
int mlx_array_set_float(mlx_array* arr, float val);
/** `*arr` becomes a 0-d float64 array. */
int mlx_array_set_float64(mlx_array* arr, double val);
/** `*arr` becomes a 0-d float64 array. */
int mlx_array_set_double(mlx_array* arr, double val);
/** `*arr` becomes a 0-d complex64 array. */
int mlx_array_set_complex(mlx_array* arr, float real_val, float imag_val);
/** `*arr` becomes a copy of `data`. */
int mlx_array_set_data(
    mlx_array* arr,
    const void* data,
    const int* shape,
    int dim,
    mlx_dtype dtype);

/** Bytes per element. */
size_t mlx_array_itemsize(const mlx_array arr);
/** Number of elements. */
size_t mlx_array_size(const mlx_array arr);
/** Bytes of all elements. */
size_t mlx_array_nbytes(const mlx_array arr);
/** Number of dimensions. */
size_t mlx_array_ndim(const mlx_array arr);
/** The dimensions, owned by the handle. */
const int* mlx_array_shape(const mlx_array arr);
/** Element strides (row-major until evaluated), owned by the handle. */
const size_t* mlx_array_strides(const mlx_array arr);
/** The size of axis `dim` (negative counts from the end). */
int mlx_array_dim(const mlx_array arr, int dim);
/** The element type. */
mlx_dtype mlx_array_dtype(const mlx_array arr);
/** Computes the array. */
int mlx_array_eval(mlx_array arr);

/** The value of a size-1 array whose dtype is exactly the accessor's (else an error). */
int mlx_array_item_bool(bool* res, const mlx_array arr);
int mlx_array_item_uint8(uint8_t* res, const mlx_array arr);
int mlx_array_item_uint16(uint16_t* res, const mlx_array arr);
int mlx_array_item_uint32(uint32_t* res, const mlx_array arr);
int mlx_array_item_uint64(uint64_t* res, const mlx_array arr);
int mlx_array_item_int8(int8_t* res, const mlx_array arr);
int mlx_array_item_int16(int16_t* res, const mlx_array arr);
int mlx_array_item_int32(int32_t* res, const mlx_array arr);
int mlx_array_item_int64(int64_t* res, const mlx_array arr);
int mlx_array_item_float32(float* res, const mlx_array arr);
int mlx_array_item_float64(double* res, const mlx_array arr);
int mlx_array_item_complex64(mlx_complex64_t* res, const mlx_array arr);
#ifdef HAS_FLOAT16
int mlx_array_item_float16(float16_t* res, const mlx_array arr);
#endif
#ifdef HAS_BFLOAT16
int mlx_array_item_bfloat16(bfloat16_t* res, const mlx_array arr);
#endif

/**
 * Dense row-major elements. DIFFERENCE from mlx-c: the array is evaluated first (mlx-c
 * returns NULL for an unevaluated array), and a view is copied into memory owned by the
 * handle. The pointer stays valid until the handle is changed or freed. NULL (after an
 * error) when the dtype differs from the accessor's.
 */
const bool* mlx_array_data_bool(const mlx_array arr);
const uint8_t* mlx_array_data_uint8(const mlx_array arr);
const uint16_t* mlx_array_data_uint16(const mlx_array arr);
const uint32_t* mlx_array_data_uint32(const mlx_array arr);
const uint64_t* mlx_array_data_uint64(const mlx_array arr);
const int8_t* mlx_array_data_int8(const mlx_array arr);
const int16_t* mlx_array_data_int16(const mlx_array arr);
const int32_t* mlx_array_data_int32(const mlx_array arr);
const int64_t* mlx_array_data_int64(const mlx_array arr);
const float* mlx_array_data_float32(const mlx_array arr);
const double* mlx_array_data_float64(const mlx_array arr);
const mlx_complex64_t* mlx_array_data_complex64(const mlx_array arr);
#ifdef HAS_FLOAT16
const float16_t* mlx_array_data_float16(const mlx_array arr);
#endif
#ifdef HAS_BFLOAT16
const bfloat16_t* mlx_array_data_bfloat16(const mlx_array arr);
#endif
/** mlx-arm extension: the dense elements as raw bytes, for any dtype (float16 on x86...). */
const void* mlx_arm_array_data(const mlx_array arr);
/**
 * mlx-arm extension: the address of element [0, 0, ...] of the array's own (possibly strided)
 * memory, with its ndim element strides written to `strides` (0 on broadcast axes): no copy
 * for views. NULL on error.
 */
const void* mlx_arm_array_data_strided(const mlx_array arr, int64_t* strides);

/** Whether the array has been computed. Internal. */
int _mlx_array_is_available(bool* res, const mlx_array arr);
/** Computes the array. Internal. */
int _mlx_array_wait(const mlx_array arr);
/** Evaluated and dense (row- or column-major). Internal. */
int _mlx_array_is_contiguous(bool* res, const mlx_array arr);
/** Evaluated and dense row-major. Internal. */
int _mlx_array_is_row_contiguous(bool* res, const mlx_array arr);
/** Evaluated and dense column-major. Internal. */
int _mlx_array_is_col_contiguous(bool* res, const mlx_array arr);

/**@}*/

#ifdef __cplusplus
}
#endif

#endif
