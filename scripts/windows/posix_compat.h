/* Force-included (gcc -include) into the C test programs when scripts/cross-windows.sh builds
 * them with mingw-w64: the few POSIX calls the tests use for their own scaffolding (environment
 * variables, directories), mapped to the Windows C runtime. Nothing here touches the API under
 * test. */
#ifndef B2FRAME_POSIX_COMPAT_H
#define B2FRAME_POSIX_COMPAT_H
#include <direct.h>
#include <io.h>
#include <stdlib.h>
#include <sys/stat.h>

static inline int b2f_setenv(const char *name, const char *value, int overwrite) {
  if (!overwrite && getenv(name) != NULL) return 0;
  return _putenv_s(name, value);
}
static inline int b2f_unsetenv(const char *name) { return _putenv_s(name, ""); }
#define setenv b2f_setenv
#define unsetenv b2f_unsetenv
#define mkdir(path, mode) _mkdir(path)
#endif
