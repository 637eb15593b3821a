/* mlx-arm C API (mlx-c compatible). Version. */

#ifndef MLX_VERSION_H
#define MLX_VERSION_H

#include "mlx/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

/** This library's version ("0.1.0"; see mlx_arm.h for numeric macros). */
int mlx_version(mlx_string* str_);

#ifdef __cplusplus
}
#endif

#endif
