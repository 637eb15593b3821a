/* mlx-arm C API (mlx-c compatible). Version. */

#ifndef MLX_VERSION_H
#define MLX_VERSION_H

#include "mlx/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The MLX version this API matches ("0.32.4"), as mlx-c reports MLX's; mlx-arm's own version
 * is mlx_arm_version_string() (see mlx_arm.h for numeric macros). */
int mlx_version(mlx_string* str_);

#ifdef __cplusplus
}
#endif

#endif
