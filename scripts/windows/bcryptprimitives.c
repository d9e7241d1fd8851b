/* A stand-in for Windows' bcryptprimitives.dll, for running tests under wine 8 (Debian 12), which
 * lacks that DLL: Rust's standard library (1.78+) imports ProcessPrng from it to seed its hash
 * maps. This one forwards to RtlGenRandom (advapi32's SystemFunction036), which wine has.
 * scripts/cross-windows.sh builds it with mingw-w64 and puts it into the test wine prefix only;
 * it is never part of what b2frame ships (real Windows has the DLL since Windows 10). */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG len);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG n = len > 0x40000000u ? 0x40000000u : (ULONG)len;
    if (!SystemFunction036(data, n)) return FALSE;
    data += n;
    len -= n;
  }
  return TRUE;
}
