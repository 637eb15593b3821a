/* Console helpers over sh_puts (semihost.h): no libc on bare metal, so numbers are formatted
 * here. Shared by the AArch64 and Cortex-M4 examples. */
#include "semihost.h"

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
  if (v > 1e12f) { sh_puts("inf"); return; } /* (or too large to print in fixed point) */
  unsigned long long micros = (unsigned long long)((double)v * 1e6 + 0.5);
  sh_put_int((long)(micros / 1000000));
  char frac[8] = {'.', 0, 0, 0, 0, 0, 0, 0};
  unsigned long f = (unsigned long)(micros % 1000000);
  for (int i = 6; i >= 1; i--) {
    frac[i] = (char)('0' + f % 10);
    f /= 10;
  }
  sh_puts(frac);
}
