/* Exact peak resident memory of a process, for benches/memory/run.sh (B2_MEM_EXACT=1):
 * preloaded (LD_PRELOAD), it reads /proc/self/statm before every free() of a block that glibc
 * may give back to the kernel (mmapped, or 64 KiB and more: a heap trim) and before every
 * munmap() called through the PLT, and once at exit, and appends the largest resident size seen
 * (KiB) to the file named by B2_PEAK_OUT.
 *
 * Why: the kernel samples a process's high-water mark (`ru_maxrss`, VmHWM) at those same points
 * (unmapping) and at exit, but since Linux 6.2 it reads its per-CPU RSS counters there without
 * summing them (each CPU may hold up to 31 pages of each counter not yet added), so
 * `/usr/bin/time`'s maximum RSS can lag the true value by up to ~250 KiB on a 2-CPU machine,
 * differently for two programs whose resident sizes differ by a few pages. /proc/self/statm
 * sums them (Linux 6.16 and later; the kernel here matches smaps' page walk exactly). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long peak_kib, page_kib = 4;
static void (*real_free)(void *);
static int (*real_munmap)(void *, size_t);

__attribute__((constructor)) static void init(void) {
  page_kib = sysconf(_SC_PAGESIZE) / 1024;
  real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
  real_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
}

static void sample(void) {
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char b[128];
  ssize_t n = read(fd, b, sizeof b - 1);
  close(fd);
  if (n <= 0) return;
  b[n] = 0;
  long size = 0, resident = 0;
  if (sscanf(b, "%ld %ld", &size, &resident) == 2 && resident * page_kib > peak_kib) {
    peak_kib = resident * page_kib;
  }
}

void free(void *p) {
  if (!real_free) real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
  /* glibc's chunk header: the size word before the block, bit 1 = mmapped. */
  if (p) {
    size_t head = ((size_t *)p)[-1];
    if ((head & 2) || (head & ~(size_t)7) >= 65536) sample();
  }
  real_free(p);
}

int munmap(void *addr, size_t len) {
  if (!real_munmap) real_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
  sample();
  return real_munmap(addr, len);
}

__attribute__((destructor)) static void report(void) {
  sample();
  const char *path = getenv("B2_PEAK_OUT");
  if (!path) return;
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char line[32];
  int k = snprintf(line, sizeof line, "%ld\n", peak_kib);
  if (write(fd, line, k) != k) { /* nothing to do */ }
  close(fd);
}
