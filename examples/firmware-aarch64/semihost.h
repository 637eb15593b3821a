/* Console output and exit through Arm semihosting (QEMU `-semihosting`). */
#ifndef FW_SEMIHOST_H
#define FW_SEMIHOST_H

#include <stddef.h>

/* Writes a NUL-terminated string to the host console. */
void sh_puts(const char* s);
/* Writes `len` bytes (need not be NUL-terminated). */
void sh_write(const char* s, size_t len);
/* Writes a signed integer in decimal. */
void sh_put_int(long v);
/* Writes `v` as [-]d.dddddd (six decimals; nan/inf spelled out). */
void sh_put_f32(float v);
/* Ends the emulation with `status` as QEMU's exit code. */
void semihost_exit(int status) __attribute__((noreturn));

#endif
