/* unixrun.exe: lets a Windows test program running under wine start a Linux program (the
 * Python of .venv with python-blosc2) and get its stdout, stderr and exit status, as
 * std::process::Command::output() expects them. Built by scripts/cross-windows.sh, which
 * points the tests' B2FRAME_PYTHON and the target's C compiler at copies of it.
 *
 * Copied under the name of what it stands for ("python.exe", "cc.exe"): it runs the Linux
 * program named by B2FRAME_UNIX_<NAME> ("B2FRAME_UNIX_PYTHON", "B2FRAME_UNIX_CC").
 *
 * Why: wine starts a Linux executable named in CreateProcess (it forks and execs it), but the
 * process handle it returns is signalled at once with exit code 0, and the pipe handles given
 * as standard handles do not reach the Linux process. So this program starts
 *   /bin/sh -c '"$@" >OUT 2>ERR </dev/null; echo $? >RC.tmp; mv RC.tmp RC' ... PROGRAM ARGS
 * with OUT/ERR/RC files of its own, waits (with a deadline: B2FRAME_UNIXRUN_TIMEOUT seconds,
 * default 900) until RC appears, copies OUT and ERR to its own stdout and stderr and exits
 * with the status in RC (125 if it could not run the program, 124 at the deadline).
 * Arguments that are absolute Windows paths ("C:\..." or "C:/...") are passed as the Unix
 * paths wine maps them to, with its dosdevices links resolved; arguments that start with "/"
 * (Unix paths the test extended with Windows' Path::join) get their backslashes turned into
 * slashes; the rest are passed unchanged. */
#include <ctype.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

typedef char *(CDECL *unix_name_fn)(const WCHAR *);

static unix_name_fn unix_name;

/* The Unix path of a Windows path (malloc'ed by wine's heap: never freed here), or NULL. */
static char *to_unix(const char *win) {
  WCHAR w[4096];
  if (!MultiByteToWideChar(CP_UTF8, 0, win, -1, w, 4096)) return NULL;
  return unix_name(w);
}

static int is_windows_abs(const char *a) {
  return ((a[0] >= 'A' && a[0] <= 'Z') || (a[0] >= 'a' && a[0] <= 'z')) && a[1] == ':' &&
         (a[2] == '\\' || a[2] == '/');
}

/* Appends `arg` to `cmd` quoted for the Windows command-line rules (which wine's argv
 * builder for Linux programs follows): in double quotes, backslashes before a quote doubled. */
static void append_quoted(char **cmd, size_t *len, size_t *cap, const char *arg) {
  size_t need = *len + 2 * strlen(arg) + 4;
  if (need > *cap) {
    *cap = need * 2;
    *cmd = realloc(*cmd, *cap);
  }
  char *p = *cmd + *len;
  if (*len) *p++ = ' ';
  *p++ = '"';
  size_t slashes = 0;
  for (const char *s = arg; *s; s++) {
    if (*s == '\\') {
      slashes++;
    } else if (*s == '"') {
      for (size_t i = 0; i < slashes + 1; i++) *p++ = '\\';
      slashes = 0;
    } else {
      slashes = 0;
    }
    *p++ = *s;
  }
  for (size_t i = 0; i < slashes; i++) *p++ = '\\';
  *p++ = '"';
  *p = 0;
  *len = (size_t)(p - *cmd);
}

static void copy_file_to(const char *path, FILE *to) {
  FILE *f = fopen(path, "rb");
  if (!f) return;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, to);
  fclose(f);
  fflush(to);
}

int main(int argc, char **argv) {
  /* The Linux program: B2FRAME_UNIX_<NAME>, NAME this executable's name without ".exe",
   * upper-cased ("python.exe": B2FRAME_UNIX_PYTHON). */
  char self[MAX_PATH], var[MAX_PATH + 16] = "B2FRAME_UNIX_";
  if (!GetModuleFileNameA(NULL, self, MAX_PATH)) return 125;
  const char *name = self;
  for (const char *s = self; *s; s++)
    if (*s == '\\' || *s == '/') name = s + 1;
  size_t v = strlen(var);
  for (const char *s = name; *s && *s != '.' && v < sizeof var - 1; s++)
    var[v++] = (char)((*s >= 'a' && *s <= 'z') ? *s - 32 : (isalnum((unsigned char)*s) ? *s : '_'));
  var[v] = 0;
  const char *program = getenv(var);
  if (!program || !*program) {
    fprintf(stderr, "unixrun: %s is not set\n", var);
    return 125;
  }
  unix_name = (unix_name_fn)(void (*)(void))GetProcAddress(GetModuleHandleA("kernel32.dll"),
                                                            "wine_get_unix_file_name");
  if (!unix_name) {
    fprintf(stderr, "unixrun: not running under wine\n");
    return 125;
  }
  const char *t = getenv("B2FRAME_UNIXRUN_TIMEOUT");
  DWORD timeout_ms = (DWORD)((t && atoi(t) > 0 ? atoi(t) : 900) * 1000);

  /* OUT, ERR and RC: fresh names in the Windows temp directory. */
  char tmp[MAX_PATH], base[MAX_PATH], out[MAX_PATH + 8], err[MAX_PATH + 8], rc[MAX_PATH + 8];
  if (!GetTempPathA(MAX_PATH, tmp) || !GetTempFileNameA(tmp, "urn", 0, base)) {
    fprintf(stderr, "unixrun: no temporary file\n");
    return 125;
  }
  snprintf(out, sizeof out, "%s.out", base);
  snprintf(err, sizeof err, "%s.err", base);
  snprintf(rc, sizeof rc, "%s.rc", base);
  char *u_out = to_unix(out), *u_err = to_unix(err), *u_rc = to_unix(rc);
  if (!u_out || !u_err || !u_rc) {
    fprintf(stderr, "unixrun: no Unix name for %s\n", base);
    return 125;
  }

  size_t len = 0, cap = 0;
  char *cmd = NULL;
  const char *fixed[] = {
      "sh", "-c",
      /* Paths wine names through its dosdevices links become the real paths (the Windows test
       * opens what the program prints, and the real path is reachable from drive Z:). */
      "o=$1; e=$2; r=$3; shift 3; "
      "for a do shift; case $a in */dosdevices/?:*) a=$(realpath -m -- \"$a\");; esac; "
      "set -- \"$@\" \"$a\"; done; "
      "\"$@\" >\"$o\" 2>\"$e\" </dev/null; echo $? >\"$r.tmp\"; mv \"$r.tmp\" \"$r\"",
      "sh", u_out, u_err, u_rc, program};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) append_quoted(&cmd, &len, &cap, fixed[i]);
  for (int i = 1; i < argc; i++) {
    char *u = is_windows_abs(argv[i]) ? to_unix(argv[i]) : NULL;
    if (!u && argv[i][0] == '/') {
      /* A Unix path (from the build machine, e.g. CARGO_MANIFEST_DIR) that the Windows test
       * extended with Path::join, which adds a backslash. */
      u = _strdup(argv[i]);
      for (char *c = u; *c; c++)
        if (*c == '\\') *c = '/';
    }
    append_quoted(&cmd, &len, &cap, u ? u : argv[i]);
  }

  STARTUPINFOA si;
  memset(&si, 0, sizeof si);
  si.cb = sizeof si;
  PROCESS_INFORMATION pi;
  if (!CreateProcessA("Z:\\bin\\sh", cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) {
    fprintf(stderr, "unixrun: starting /bin/sh failed (%lu)\n", GetLastError());
    return 125;
  }
  CloseHandle(pi.hThread);
  CloseHandle(pi.hProcess);

  ULONGLONG start = GetTickCount64();
  while (GetFileAttributesA(rc) == INVALID_FILE_ATTRIBUTES) {
    if (GetTickCount64() - start >= timeout_ms) {
      fprintf(stderr, "unixrun: %s did not finish within %lu s\n", program, timeout_ms / 1000);
      return 124;
    }
    Sleep(20);
  }
  int status = 125;
  FILE *f = fopen(rc, "rb");
  if (f) {
    if (fscanf(f, "%d", &status) != 1) status = 125;
    fclose(f);
  }
  /* The program's bytes as they are (no CRLF translation). */
  _setmode(_fileno(stdout), _O_BINARY);
  _setmode(_fileno(stderr), _O_BINARY);
  copy_file_to(out, stdout);
  copy_file_to(err, stderr);
  DeleteFileA(out);
  DeleteFileA(err);
  DeleteFileA(rc);
  DeleteFileA(base);
  free(cmd);
  return status;
}
