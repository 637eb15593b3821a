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

/** A string-to-string map (safetensors metadata). Keys iterate in sorted order. */
typedef struct mlx_map_string_to_string_ {
  void* ctx;
} mlx_map_string_to_string;

/** A new map with no entries (a valid handle; free it). */
mlx_map_string_to_string mlx_map_string_to_string_new(void);
/** `*map` becomes a copy of `src`. */
int mlx_map_string_to_string_set(
    mlx_map_string_to_string* map,
    const mlx_map_string_to_string src);
/** Frees the map. */
int mlx_map_string_to_string_free(mlx_map_string_to_string map);
/** Sets `key` to a copy of `value`. */
int mlx_map_string_to_string_insert(
    mlx_map_string_to_string map,
    const char* key,
    const char* value);
/** `*value` points at the string stored for `key` (valid while the entry exists). */
int mlx_map_string_to_string_get(
    const char** value,
    const mlx_map_string_to_string map,
    const char* key);

/** An iterator over a string-to-string map (the map must outlive it). */
typedef struct mlx_map_string_to_string_iterator_ {
  void* ctx;
  void* map_ctx;
} mlx_map_string_to_string_iterator;

/** A new iterator at the first key. */
mlx_map_string_to_string_iterator mlx_map_string_to_string_iterator_new(
    mlx_map_string_to_string map);
/** Frees the iterator. */
int mlx_map_string_to_string_iterator_free(
    mlx_map_string_to_string_iterator it);
/** The next entry: 0, or 2 at the end; `*key`/`*value` point into the map. */
int mlx_map_string_to_string_iterator_next(
    const char** key,
    const char** value,
    mlx_map_string_to_string_iterator it);

#ifdef __cplusplus
}
#endif

#endif
