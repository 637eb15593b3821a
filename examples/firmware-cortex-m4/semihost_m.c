/* semihost.h for Armv7-M: `bkpt 0xab` with the operation in r0 and its argument in r1.
 * The exit status travels through SYS_EXIT_EXTENDED (plain SYS_EXIT on 32-bit Arm carries
 * only a reason code). The printing helpers are shared with the AArch64 example. */
#include "semihost.h"

#define SYS_WRITE0 0x04
#define SYS_EXIT_EXTENDED 0x20
#define ADP_STOPPED_APPLICATION_EXIT 0x20026

static long semihost_call(long op, const void* arg) {
  register long r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void sh_puts(const char* s) { semihost_call(SYS_WRITE0, s); }

void semihost_exit(int status) {
  long block[2] = {ADP_STOPPED_APPLICATION_EXIT, status};
  semihost_call(SYS_EXIT_EXTENDED, block);
  for (;;) __asm__ volatile("wfi");
}
