/* mlx-arm C API (mlx-c compatible): export. A function traced once per call signature and
 * written to a file with the constants it captured, then loaded back and called without the
 * code that made it (docs/EXPORT.md). Files use mlx-arm's own format: files written by
 * Apple's MLX are recognized and refused with an error. Keyword arrays reach an exporter's
 * closure after the positional ones, in name order. Hosted builds only. */

#ifndef MLX_EXPORT_H
#define MLX_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mlx/c/array.h"
#include "mlx/c/closure.h"
#include "mlx/c/map.h"
#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup export Function serialization
 */
/**@{*/
int mlx_export_function(
    const char* file,
    const mlx_closure fun,
    const mlx_vector_array args,
    bool shapeless);
int mlx_export_function_kwargs(
    const char* file,
    const mlx_closure_kwargs fun,
    const mlx_vector_array args,
    const mlx_map_string_to_array kwargs,
    bool shapeless);

typedef struct mlx_function_exporter_ {
  void* ctx;
} mlx_function_exporter;
/* The empty handle (ctx == NULL) on error. */
mlx_function_exporter mlx_function_exporter_new(
    const char* file,
    const mlx_closure fun,
    bool shapeless);
int mlx_function_exporter_free(mlx_function_exporter xfunc);
/* Traces one more call signature and rewrites the file with every trace so far. */
int mlx_function_exporter_apply(
    const mlx_function_exporter xfunc,
    const mlx_vector_array args);
int mlx_function_exporter_apply_kwargs(
    const mlx_function_exporter xfunc,
    const mlx_vector_array args,
    const mlx_map_string_to_array kwargs);

typedef struct mlx_imported_function_ {
  void* ctx;
} mlx_imported_function;
/* The empty handle (ctx == NULL) when the file is missing or malformed. */
mlx_imported_function mlx_imported_function_new(const char* file);
int mlx_imported_function_free(mlx_imported_function xfunc);
int mlx_imported_function_apply(
    mlx_vector_array* res,
    const mlx_imported_function xfunc,
    const mlx_vector_array args);
int mlx_imported_function_apply_kwargs(
    mlx_vector_array* res,
    const mlx_imported_function xfunc,
    const mlx_vector_array args,
    const mlx_map_string_to_array kwargs);

/* mlx-arm additions. An exporter whose file also keeps the string `metadata` (MLX's
 * `metadata=`); the empty handle on error. */
mlx_function_exporter mlx_arm_function_exporter_new_metadata(
    const char* file,
    const mlx_closure fun,
    bool shapeless,
    const char* metadata);
/* *res = the metadata string an imported file keeps (empty when none). */
int mlx_arm_imported_function_metadata(
    mlx_string* res,
    const mlx_imported_function xfunc);
/* Traces `fun` (positional arrays, then keyword arrays in name order) and describes the
 * trace as MLX's export to a callback: *json = a JSON list of events (inputs,
 * keyword_inputs, outputs, constants, then each primitive), *constants = the captured arrays
 * the "constants" event indexes (docs/EXPORT.md). */
int mlx_arm_export_listing(
    mlx_string* json,
    mlx_vector_array* constants,
    const mlx_closure fun,
    const mlx_vector_array args,
    const mlx_map_string_to_array kwargs,
    bool shapeless);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif
