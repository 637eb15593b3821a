/* mlx-arm C API (mlx-c compatible). String handle. */

#ifndef MLX_STRING_H
#define MLX_STRING_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup mlx_string String
 * An owned string. Free with mlx_string_free().
 */
/**@{*/

/** A string handle (`ctx == NULL` is the empty handle). */
typedef struct mlx_string_ {
  void* ctx;
} mlx_string;

/** The empty string handle. */
mlx_string mlx_string_new(void);
/** A copy of the NUL-terminated `str`. */
mlx_string mlx_string_new_data(const char* str);
/** `*str` becomes a copy of `src`. */
int mlx_string_set(mlx_string* str, const mlx_string src);
/** The contents, valid until the handle is changed or freed (NULL for the empty handle). */
const char* mlx_string_data(mlx_string str);
/** Frees the string. */
int mlx_string_free(mlx_string str);

/**@}*/

#ifdef __cplusplus
}
#endif

#endif
