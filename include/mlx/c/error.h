/* mlx-arm C API (mlx-c compatible). Error handling. */

#ifndef MLX_ERROR_H
#define MLX_ERROR_H

#include <stdarg.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup mlx_error Error management
 * Every function returning `int` returns 0 on success and non-zero on failure, after sending
 * one message to the error handler. DEVIATION from mlx-c: the default handler prints
 * "MLX error: <msg>" to stderr and RETURNS (mlx-c's default calls exit(-1)).
 */
/**@{*/

typedef void (*mlx_error_handler_func)(const char* msg, void* data);

/**
 * Installs `handler` (NULL restores the default) with `data`, passed to every call; `dtor`
 * (may be NULL) is called on `data` when the handler is replaced. Install it before other
 * threads use the library.
 */
void mlx_set_error_handler(
    mlx_error_handler_func handler,
    void* data,
    void (*dtor)(void*));

/** Reports `msg` through the error handler (mlx-arm extension; `mlx_error` uses it). */
void mlx_arm_raise_error(const char* msg);
/** The last message reported on this thread ("" if none); valid until the next error here. */
const char* mlx_arm_last_error(void);
/** Forgets this thread's last error message. */
void mlx_arm_clear_last_error(void);
/**
 * The category of this thread's last error (mlx-arm extension, for bindings that map errors
 * to exception types): 0 none, 1 invalid argument, 2 index, 3 type, 4 unsupported,
 * 5 out of memory, 6 runtime, 7 format, 8 other (a caller's message or an internal error),
 * 9 overflow (a dimension beyond 32 bits).
 */
int mlx_arm_last_error_kind(void);

/** Formats a message, appends " at file:line", and reports it (as mlx-c's _mlx_error). */
static inline void _mlx_error(const char* file, const int line, const char* fmt, ...) {
  char msg[1024];
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(msg, sizeof msg, fmt, args);
  va_end(args);
  if (n >= 0 && (size_t)n < sizeof msg) {
    snprintf(msg + n, sizeof msg - (size_t)n, " at %s:%d", file, line);
  }
  mlx_arm_raise_error(msg);
}

/** Reports a printf-style message with the caller's file and line. */
#define mlx_error(...) _mlx_error(__FILE__, __LINE__, __VA_ARGS__)

/**@}*/

#ifdef __cplusplus
}
#endif

#endif
