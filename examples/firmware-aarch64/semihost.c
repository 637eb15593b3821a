/* Arm semihosting on AArch64: `hlt #0xf000` with the operation in w0 and its argument in x1.
 * Only SYS_WRITE0 (print a C string) and SYS_EXIT (stop with a status) are used; the number
 * printing built on sh_puts is in print.c (shared with the Cortex-M4 example). */
#include "semihost.h"

#define SYS_WRITE0 0x04
#define SYS_EXIT 0x18
#define ADP_STOPPED_APPLICATION_EXIT 0x20026

static long semihost_call(long op, const void* arg) {
  register long w0 __asm__("x0") = op;
  register const void* x1 __asm__("x1") = arg;
  __asm__ volatile("hlt #0xf000" : "+r"(w0) : "r"(x1) : "memory");
  return w0;
}

void sh_puts(const char* s) { semihost_call(SYS_WRITE0, s); }

void semihost_exit(int status) {
  /* AArch64 SYS_EXIT takes a two-word block: the reason and the exit status. */
  long block[2] = {ADP_STOPPED_APPLICATION_EXIT, status};
  semihost_call(SYS_EXIT, block);
  for (;;) __asm__ volatile("wfi");
}
