/* mlx-arm C API (mlx-c compatible). Streams. */

#ifndef MLX_STREAM_H
#define MLX_STREAM_H

#include <stdbool.h>

#include "mlx/c/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup mlx_stream Stream
 * Every op takes a stream last; it must be non-empty and on an available device. (Ops are
 * currently recorded on the default stream of their device; CPU work completes in eval.)
 */
/**@{*/

/** A stream handle. */
typedef struct mlx_stream_ {
  void* ctx;
} mlx_stream;

/** The empty stream handle. */
mlx_stream mlx_stream_new(void);
/** A new stream on `dev`. */
mlx_stream mlx_stream_new_device(mlx_device dev);
/** `*stream` becomes `src`. */
int mlx_stream_set(mlx_stream* stream, const mlx_stream src);
/** Frees a stream handle. */
int mlx_stream_free(mlx_stream stream);
/** "Stream(Device(cpu, 0), 0)". */
int mlx_stream_tostring(mlx_string* str, mlx_stream stream);
/** Same stream (false if either is empty). */
bool mlx_stream_equal(mlx_stream lhs, mlx_stream rhs);
/** The stream's device. */
int mlx_stream_get_device(mlx_device* dev, mlx_stream stream);
/** The stream's index. */
int mlx_stream_get_index(int* index, mlx_stream stream);
/** Waits for the stream's queued work. */
int mlx_synchronize(mlx_stream stream);
/** The default stream of `dev`. */
int mlx_get_default_stream(mlx_stream* stream, mlx_device dev);
/** Makes `stream` its device's default. */
int mlx_set_default_stream(mlx_stream stream);
/** The current default CPU stream. */
mlx_stream mlx_default_cpu_stream_new(void);
/** The current default GPU stream: the empty handle, after an error, without a GPU backend. */
mlx_stream mlx_default_gpu_stream_new(void);

/**@}*/

#ifdef __cplusplus
}
#endif

#endif
