/* Test-only stand-in for bcryptprimitives.dll, which wine 8.0 (Debian 12) does not ship.
 *
 * Rust's std on x86_64-pc-windows-gnu imports bcryptprimitives.dll!ProcessPrng to seed its hash
 * maps, so without this DLL the Windows loader refuses to start any program that links
 * mlx_arm.dll (status c0000135). Real Windows 10+ and Proton have the DLL; this file is only
 * placed next to the test program under wine. ProcessPrng here fills the buffer from
 * bcrypt.dll's system-preferred RNG, which wine implements. */
#include <windows.h>
#include <bcrypt.h>

/* BCryptGenRandom takes a ULONG length: feed larger requests in pieces. */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE out, SIZE_T len) {
  const ULONG piece = 1u << 30;
  while (len > 0) {
    ULONG n = len > piece ? piece : (ULONG)len;
    if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, out, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG))) return FALSE;
    out += n;
    len -= n;
  }
  return TRUE;
}
