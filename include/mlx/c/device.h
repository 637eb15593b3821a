/* mlx-arm C API (mlx-c compatible). Devices. */

#ifndef MLX_DEVICE_H
#define MLX_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup mlx_device Device
 * The CPU always exists; a GPU exists only when a GPU backend is registered. Asking for an
 * unavailable device is an error, not an abort.
 */
/**@{*/

/** A device handle. */
typedef struct mlx_device_ {
  void* ctx;
} mlx_device;

/** Device type. */
typedef enum mlx_device_type_ { MLX_CPU, MLX_GPU } mlx_device_type;

/** The empty device handle. */
mlx_device mlx_device_new(void);
/** A device value of `type` and `index` (it need not be available). */
mlx_device mlx_device_new_type(mlx_device_type type, int index);
/** Frees a device handle. */
int mlx_device_free(mlx_device dev);
/** `*dev` becomes `src`. */
int mlx_device_set(mlx_device* dev, const mlx_device src);
/** "Device(cpu, 0)". */
int mlx_device_tostring(mlx_string* str, mlx_device dev);
/** Same type and index (false if either is empty). */
bool mlx_device_equal(mlx_device lhs, mlx_device rhs);
/** The device index. */
int mlx_device_get_index(int* index, mlx_device dev);
/** The device type. */
int mlx_device_get_type(mlx_device_type* type, mlx_device dev);
/** The default device. */
int mlx_get_default_device(mlx_device* dev);
/** Sets the default device (an error for an unavailable one). */
int mlx_set_default_device(mlx_device dev);
/** Whether a backend provides `dev`. */
int mlx_device_is_available(bool* avail, mlx_device dev);
/** Number of available devices of `type`. */
int mlx_device_count(int* count, mlx_device_type type);

/** Key/value properties of a device ("device_name", "architecture", ...). */
typedef struct mlx_device_info_ {
  void* ctx;
} mlx_device_info;

/** The empty device-info handle. */
mlx_device_info mlx_device_info_new(void);
/** Properties of `dev`. */
int mlx_device_info_get(mlx_device_info* info, mlx_device dev);
/** Frees a device-info handle. */
int mlx_device_info_free(mlx_device_info info);
/** Whether `key` exists. */
int mlx_device_info_has_key(
    bool* exists,
    mlx_device_info info,
    const char* key);
/** Whether `key` holds a string (else a size). */
int mlx_device_info_is_string(
    bool* is_string,
    mlx_device_info info,
    const char* key);
/** A string value: 0, 1 on error, 2 if absent or not a string. */
int mlx_device_info_get_string(
    const char** value,
    mlx_device_info info,
    const char* key);
/** A size value: 0, 1 on error, 2 if absent or not a size. */
int mlx_device_info_get_size(
    size_t* value,
    mlx_device_info info,
    const char* key);
/** All keys. */
int mlx_device_info_get_keys(mlx_vector_string* keys, mlx_device_info info);

/**@}*/

#ifdef __cplusplus
}
#endif

#endif
