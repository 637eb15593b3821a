/* mlx-arm C API (mlx-c compatible). String-to-array maps. */

#ifndef MLX_MAP_H
#define MLX_MAP_H

#include "mlx/c/array.h"
#include "mlx/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup mlx_map Maps
 * Named arrays. Iteration is in sorted key order.
 */
/**@{*/

/** A string-to-array map. */
typedef struct mlx_map_string_to_array_ {
  void* ctx;
} mlx_map_string_to_array;

/** A new map with no entries. */
mlx_map_string_to_array mlx_map_string_to_array_new(void);
/** `*map` becomes a copy of `src`. */
int mlx_map_string_to_array_set(
    mlx_map_string_to_array* map,
    const mlx_map_string_to_array src);
/** Frees a map. */
int mlx_map_string_to_array_free(mlx_map_string_to_array map);
/** Sets `key` to `value`. */
int mlx_map_string_to_array_insert(
    mlx_map_string_to_array map,
    const char* key,
    const mlx_array value);
/** `*value` becomes the array at `key` (an error if absent). */
int mlx_map_string_to_array_get(
    mlx_array* value,
    const mlx_map_string_to_array map,
    const char* key);

/** An iterator over a map (the map must outlive it). */
typedef struct mlx_map_string_to_array_iterator_ {
  void* ctx;
  void* map_ctx;
} mlx_map_string_to_array_iterator;
/** A new iterator over `map`. */
mlx_map_string_to_array_iterator mlx_map_string_to_array_iterator_new(
    mlx_map_string_to_array map);
/** Frees an iterator. */
int mlx_map_string_to_array_iterator_free(mlx_map_string_to_array_iterator it);
/** The next entry: 0, 2 at the end, 1 on error. */
int mlx_map_string_to_array_iterator_next(
    const char** key,
    mlx_array* value,
    mlx_map_string_to_array_iterator it);

/**@}*/

#ifdef __cplusplus
}
#endif

#endif
