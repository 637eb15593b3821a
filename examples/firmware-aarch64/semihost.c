/* Arm semihosting for both firmware examples: the operation goes in the first argument
 * register and its argument in the second, then a trap the debugger (qemu) catches:
 * - AArch64: `hlt #0xf000` (x0, x1); SYS_EXIT takes a block {reason, status}.
 * - Armv7-M: `bkpt 0xab` (r0, r1); plain SYS_EXIT carries only a reason on 32-bit Arm, so the
 *   status travels through SYS_EXIT_EXTENDED with the same block.
 * Only SYS_WRITE0 (print a C string) and the exit are used; number printing is in print.c. */
#include "semihost.h"

#define SYS_WRITE0 0x04
#define ADP_STOPPED_APPLICATION_EXIT 0x20026

#if defined(__aarch64__)
#define SYS_EXIT_WITH_STATUS 0x18 /* SYS_EXIT */
#define REG0 "x0"
#define REG1 "x1"
#define TRAP "hlt #0xf000"
#else
#define SYS_EXIT_WITH_STATUS 0x20 /* SYS_EXIT_EXTENDED */
#define REG0 "r0"
#define REG1 "r1"
#define TRAP "bkpt 0xab"
#endif

static long semihost_call(long op, const void* arg) {
  register long r0 __asm__(REG0) = op;
  register const void* r1 __asm__(REG1) = arg;
  __asm__ volatile(TRAP : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void sh_puts(const char* s) { semihost_call(SYS_WRITE0, s); }

void semihost_exit(int status) {
  long block[2] = {ADP_STOPPED_APPLICATION_EXIT, status};
  semihost_call(SYS_EXIT_WITH_STATUS, block);
  for (;;) __asm__ volatile("wfi");
}
