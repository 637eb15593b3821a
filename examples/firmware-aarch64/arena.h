/* The firmware's memory for mlx-arm: a static arena handed out through the library's
 * bare-metal hooks (mlx_arm_platform_alloc / mlx_arm_platform_free), plus the panic hook. */
#ifndef FW_ARENA_H
#define FW_ARENA_H

#include <stddef.h>

/* Size of the static arena in bytes (a board with less RAM passes -DFW_ARENA_BYTES=...). */
#ifndef FW_ARENA_BYTES
#define FW_ARENA_BYTES (8u << 20)
#endif

/* Bytes handed out now, and the most ever handed out at once. */
size_t arena_in_use(void);
size_t arena_peak(void);
/* Number of allocation requests the arena refused (out of memory). */
size_t arena_failures(void);

#endif
