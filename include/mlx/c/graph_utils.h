/* mlx-arm C API (mlx-c compatible): graph utilities. A node namer names the arrays of a
 * graph (names set by the caller, else A, B, ... Z, AA, ... in the order asked), and
 * mlx_export_to_dot writes the graph behind some outputs as Graphviz dot text
 * (docs/COMPILE.md, "export_to_dot"). */

#ifndef MLX_GRAPH_UTILS_H
#define MLX_GRAPH_UTILS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mlx/c/array.h"
#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup graph_utils Graph Utils
 */
/**@{*/

typedef struct mlx_node_namer_ {
  void* ctx;
} mlx_node_namer;

mlx_node_namer mlx_node_namer_new();
int mlx_node_namer_free(mlx_node_namer namer);
int mlx_node_namer_set_name(
    mlx_node_namer namer,
    const mlx_array arr,
    const char* name);
/* *name stays valid while the namer lives. */
int mlx_node_namer_get_name(
    const char** name,
    mlx_node_namer namer,
    const mlx_array arr);

int mlx_export_to_dot(
    FILE* os,
    const mlx_node_namer namer,
    const mlx_vector_array outputs);

/* mlx-arm addition: the indices of the streams that evaluating outputs would run work on
 * (each once; empty when everything is evaluated). */
int mlx_arm_pending_streams(mlx_vector_int* res, const mlx_vector_array outputs);

/* mlx-arm addition: the dot text of mlx_export_to_dot into *res (for callers without a
 * FILE*, such as the Python package). */
int mlx_arm_export_to_dot_string(
    mlx_string* res,
    const mlx_node_namer namer,
    const mlx_vector_array outputs);

/**@}*/

#ifdef __cplusplus
}
#endif

#endif
