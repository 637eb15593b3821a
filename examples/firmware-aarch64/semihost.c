/* Arm semihosting on AArch64: `hlt #0xf000` with the operation in w0 and its argument in x1.
 * Only SYS_WRITE0 (print a C string) and SYS_EXIT (stop with a status) are used. */
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

void sh_write(const char* s, size_t len) {
  char chunk[65];
  while (len > 0) {
    size_t n = len < 64 ? len : 64;
    for (size_t i = 0; i < n; i++) chunk[i] = s[i];
    chunk[n] = 0;
    sh_puts(chunk);
    s += n;
    len -= n;
  }
}

void sh_put_int(long v) {
  char buf[24];
  int i = 23;
  unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
  buf[i] = 0;
  do {
    buf[--i] = (char)('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0) buf[--i] = '-';
  sh_puts(&buf[i]);
}

void sh_put_f32(float v) {
  if (v != v) { sh_puts("nan"); return; }
  if (v < 0) { sh_puts("-"); v = -v; }
  if (v > 1e15f) { sh_puts("inf"); return; }
  unsigned long micros = (unsigned long)((double)v * 1e6 + 0.5);
  sh_put_int((long)(micros / 1000000));
  char frac[8] = {'.', 0, 0, 0, 0, 0, 0, 0};
  unsigned long f = micros % 1000000;
  for (int i = 6; i >= 1; i--) {
    frac[i] = (char)('0' + f % 10);
    f /= 10;
  }
  sh_puts(frac);
}

void semihost_exit(int status) {
  /* AArch64 SYS_EXIT takes a two-word block: the reason and the exit status. */
  long block[2] = {ADP_STOPPED_APPLICATION_EXIT, status};
  semihost_call(SYS_EXIT, block);
  for (;;) __asm__ volatile("wfi");
}
