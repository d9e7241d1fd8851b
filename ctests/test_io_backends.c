/* I/O backend registry and the two built-in backends (stdio, mmap): argument validation as in
 * c-blosc2 3.3.5's test_stdio_validation.c, positional transfers counted in items, registry
 * rules (ids < 160 rejected, same id + name accepted, another name refused, NULL before init),
 * and the mmap modes "r", "r+", "w+" and "c". Expected values were checked against c-blosc2
 * 3.3.5 with ctypes. */
#include "harness.h"

#include <blosc2.h>
#include <blosc2/blosc2-stdio.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int64_t file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

/* The address of an exported function as the library itself has it. On Windows a program's
 * &function of a DLL import is its own import stub (the headers have no __declspec(dllimport),
 * as c-blosc2's have none), so the DLL's address is asked for by name. */
#if defined(_WIN32)
#define LIB_FN(name) ((void *)GetProcAddress(GetModuleHandleA("b2frame.dll"), #name))
#else
#define LIB_FN(name) ((void *)&name)
#endif

static void test_registry(void) {
  blosc2_destroy();
  CHECK(blosc2_get_io_cb(0) == NULL); /* not initialised */
  blosc2_init();
  blosc2_io_cb *fs = blosc2_get_io_cb(BLOSC2_IO_FILESYSTEM);
  blosc2_io_cb *mm = blosc2_get_io_cb(BLOSC2_IO_FILESYSTEM_MMAP);
  CHECK_NOT_NULL(fs);
  CHECK_NOT_NULL(mm);
  CHECK_EQ_STR(fs->name, "filesystem");
  CHECK_EQ_STR(mm->name, "filesystem_mmap");
  CHECK(fs->is_allocation_necessary);
  CHECK(!mm->is_allocation_necessary);
  CHECK((void *)fs->open == LIB_FN(blosc2_stdio_open));
  CHECK((void *)mm->read == LIB_FN(blosc2_stdio_mmap_read));
  CHECK(blosc2_get_io_cb(2) == NULL);
  CHECK(blosc2_get_io_cb(161) == NULL);

  blosc2_io_cb cb = *fs;
  cb.id = 100;
  CHECK_EQ_INT(blosc2_register_io_cb(&cb), BLOSC2_ERROR_PLUGIN_IO);
  CHECK_EQ_INT(blosc2_register_io_cb(NULL), BLOSC2_ERROR_INVALID_PARAM);
  char name[] = "x", other[] = "y";
  cb.id = 200;
  cb.name = name;
  CHECK_EQ_INT(blosc2_register_io_cb(&cb), 0);
  cb.name = other;
  CHECK_EQ_INT(blosc2_register_io_cb(&cb), BLOSC2_ERROR_PLUGIN_IO);
  cb.name = name;
  cb.is_allocation_necessary = false;
  CHECK_EQ_INT(blosc2_register_io_cb(&cb), 0); /* same id + name: nothing changes */
  blosc2_io_cb *got = blosc2_get_io_cb(200);
  CHECK_NOT_NULL(got);
  CHECK(got != &cb);
  CHECK(got->is_allocation_necessary);
  /* Registrations survive a destroy/init cycle (but are hidden while not initialised). */
  blosc2_destroy();
  CHECK(blosc2_get_io_cb(200) == NULL);
  blosc2_init();
  CHECK(blosc2_get_io_cb(200) == got);
}

static void test_stdio_validation(void) {
  CHECK(blosc2_stdio_open(NULL, "rb", NULL) == NULL);
  CHECK(blosc2_stdio_open("io_validation.tmp", NULL, NULL) == NULL);
  CHECK(blosc2_stdio_open("no/such/dir/file", "rb", NULL) == NULL);
  CHECK_EQ_INT(blosc2_stdio_close(NULL), -1);
  CHECK_EQ_INT(blosc2_stdio_size(NULL), -1);
  CHECK_EQ_INT(blosc2_stdio_truncate(NULL, 0), -1);
  blosc2_stdio_file bad = {NULL};
  CHECK_EQ_INT(blosc2_stdio_truncate(&bad, -1), -1);
  CHECK_EQ_INT(blosc2_stdio_size(&bad), -1);
  CHECK_EQ_INT(blosc2_stdio_close(&bad), -1);

  blosc2_stdio_file fp = {tmpfile()};
  CHECK_NOT_NULL(fp.file);
  uint8_t src[12] = {'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'};
  /* Positional, counted in items. */
  CHECK_EQ_INT(blosc2_stdio_write(src, 4, 3, 10, &fp), 3);
  CHECK_EQ_INT(blosc2_stdio_size(&fp), 22);
  CHECK_EQ_INT(blosc2_stdio_write(src, 0, 5, 0, &fp), 0);
  uint8_t dst[20] = {0};
  void *p = dst;
  CHECK_EQ_INT(blosc2_stdio_read(&p, 4, 5, 10, &fp), 3); /* short read: whole items only */
  CHECK(p == (void *)dst);
  CHECK_EQ_MEM(dst, src, 12);
  CHECK_EQ_INT(blosc2_stdio_read(&p, 1, 4, 100, &fp), 0);
  /* size() keeps the stream position. */
  CHECK_EQ_INT(fseek(fp.file, 3, SEEK_SET), 0);
  CHECK_EQ_INT(blosc2_stdio_size(&fp), 22);
  CHECK_EQ_INT(ftell(fp.file), 3);

  CHECK_EQ_INT(blosc2_stdio_write(src, 1, 1, 0, NULL), 0);
  CHECK_EQ_INT(blosc2_stdio_write(src, 1, 1, 0, &bad), 0);
  CHECK_EQ_INT(blosc2_stdio_write(NULL, 1, 1, 0, &fp), 0);
  CHECK_EQ_INT(blosc2_stdio_write(src, -1, 1, 0, &fp), 0);
  CHECK_EQ_INT(blosc2_stdio_write(src, 1, -1, 0, &fp), 0);
  CHECK_EQ_INT(blosc2_stdio_write(src, 1, 1, -1, &fp), 0);
  CHECK_EQ_INT(blosc2_stdio_write(src, INT64_MAX, 2, 0, &fp), 0);

  CHECK_EQ_INT(blosc2_stdio_read(&p, 1, 1, 0, NULL), 0);
  CHECK_EQ_INT(blosc2_stdio_read(&p, 1, 1, 0, &bad), 0);
  CHECK_EQ_INT(blosc2_stdio_read(NULL, 1, 1, 0, &fp), 0);
  void *null_buf = NULL;
  CHECK_EQ_INT(blosc2_stdio_read(&null_buf, 1, 1, 0, &fp), 0);
  CHECK(null_buf == NULL);
  void *sentinel = (void *)(uintptr_t)0xDEADBEEF;
  p = sentinel;
  CHECK_EQ_INT(blosc2_stdio_read(&p, -1, 1, 0, &fp), 0);
  CHECK(p == sentinel);
  CHECK_EQ_INT(blosc2_stdio_read(&p, 1, -1, 0, &fp), 0);
  CHECK(p == sentinel);
  CHECK_EQ_INT(blosc2_stdio_read(&p, 1, 1, -1, &fp), 0);
  CHECK(p == sentinel);
  CHECK_EQ_INT(blosc2_stdio_read(&p, INT64_MAX, 2, 0, &fp), 0);
  CHECK(p == sentinel);

  CHECK_EQ_INT(blosc2_stdio_truncate(&fp, -1), -1);
  CHECK_EQ_INT(blosc2_stdio_truncate(&fp, 5), 0);
  CHECK_EQ_INT(blosc2_stdio_size(&fp), 5);
  CHECK_EQ_INT(blosc2_stdio_destroy(NULL), 0);
  fclose(fp.file);

  /* open/close through the malloc'ed handle. */
  void *h = blosc2_stdio_open("io_validation.tmp", "wb", NULL);
  CHECK_NOT_NULL(h);
  CHECK(((blosc2_stdio_file *)h)->file != NULL);
  CHECK_EQ_INT(blosc2_stdio_write(src, 1, 12, 0, h), 12);
  CHECK_EQ_INT(blosc2_stdio_close(h), 0);
  CHECK_EQ_INT(file_size("io_validation.tmp"), 12);
  CHECK_EQ_INT(blosc2_remove_urlpath("io_validation.tmp"), 0);
}

static void test_mmap_modes(void) {
  const char *path = "io_mmap.tmp";
  blosc2_remove_urlpath(path);
  blosc2_stdio_mmap mm = BLOSC2_STDIO_MMAP_DEFAULTS;
  CHECK(blosc2_stdio_mmap_open(NULL, "wb", &mm) == NULL);
  CHECK(blosc2_stdio_mmap_open(path, "wb", NULL) == NULL);
  mm.mode = "x";
  CHECK(blosc2_stdio_mmap_open(path, "wb", &mm) == NULL);
  CHECK(mm.urlpath == NULL && mm.addr == NULL);
  mm.mode = "r"; /* missing file */
  CHECK(blosc2_stdio_mmap_open(path, "rb", &mm) == NULL);
  CHECK_EQ_INT(blosc2_stdio_mmap_destroy(NULL), -1);
  CHECK_EQ_INT(blosc2_stdio_mmap_close(NULL), 0);

  /* w+: a small initial mapping forces remaps as the file grows. */
  mm = BLOSC2_STDIO_MMAP_DEFAULTS;
  mm.mode = "w+";
  mm.initial_mapping_size = 100;
  void *s = blosc2_stdio_mmap_open(path, "wb", &mm);
  CHECK(s == (void *)&mm);
  CHECK(mm.mode == NULL); /* the caller's string is not kept */
  CHECK(blosc2_stdio_mmap_open(path, "rb", &mm) == s); /* reopen = same mapping */
  CHECK(blosc2_stdio_mmap_open("other", "rb", &mm) == NULL);
  CHECK_EQ_INT(mm.mapping_size, 100);
  uint8_t buf[1000];
  for (int i = 0; i < 1000; i++) buf[i] = (uint8_t)(i * 7);
  CHECK_EQ_INT(blosc2_stdio_mmap_write(buf, 10, 100, 0, s), 100);
  CHECK_EQ_INT(blosc2_stdio_mmap_size(s), 1000);
  CHECK_EQ_INT(mm.mapping_size, 2000);
  CHECK_EQ_INT(blosc2_stdio_mmap_write(buf, 1, 0, 0, s), 0);
  CHECK_EQ_INT(blosc2_stdio_mmap_write(NULL, 1, 1, 0, s), 0);
  CHECK_EQ_INT(blosc2_stdio_mmap_write(buf, -1, 1, 0, s), 0);
  CHECK_EQ_INT(blosc2_stdio_mmap_write(buf, 1, 1, -1, s), 0);
  CHECK_EQ_INT(blosc2_stdio_mmap_write(buf, INT64_MAX, 2, 0, s), 0);
  CHECK_EQ_INT(blosc2_stdio_mmap_write(buf, 1, 2, INT64_MAX, s), 0);
  void *p = NULL;
  CHECK_EQ_INT(blosc2_stdio_mmap_read(&p, 1, 10, 990, s), 10);
  CHECK(p == mm.addr + 990);
  CHECK_EQ_MEM(p, buf + 990, 10);
  CHECK_EQ_INT(blosc2_stdio_mmap_read(NULL, 1, 1, 0, s), 0);
  p = buf;
  CHECK_EQ_INT(blosc2_stdio_mmap_read(&p, 1, 11, 990, s), 0); /* past the end */
  CHECK(p == NULL);
  p = buf;
  CHECK_EQ_INT(blosc2_stdio_mmap_read(&p, -1, 1, 0, s), 0);
  CHECK(p == NULL);
  p = buf;
  CHECK_EQ_INT(blosc2_stdio_mmap_read(&p, INT64_MAX, 2, 0, s), 0);
  CHECK(p == NULL);
  CHECK_EQ_INT(blosc2_stdio_mmap_truncate(s, -1), -1);
  CHECK_EQ_INT(blosc2_stdio_mmap_truncate(s, 600), 0);
  CHECK_EQ_INT(blosc2_stdio_mmap_size(s), 600);
  CHECK_EQ_INT(blosc2_stdio_mmap_destroy(&mm), 0);
  CHECK(mm.addr == NULL && mm.file == NULL && mm.urlpath == NULL);
  CHECK_EQ_INT(file_size(path), 600);
  FILE *f = fopen(path, "rb");
  CHECK_NOT_NULL(f);
  uint8_t back[600];
  CHECK_EQ_INT(fread(back, 1, 600, f), 600);
  fclose(f);
  CHECK_EQ_MEM(back, buf, 600);

  /* r: read-only; writes fail instead of faulting (c-blosc2 faults). */
  mm = BLOSC2_STDIO_MMAP_DEFAULTS;
  s = blosc2_stdio_mmap_open(path, "rb", &mm);
  CHECK_NOT_NULL(s);
  CHECK_EQ_INT(mm.mapping_size, 600);
#ifndef B2FRAME_VS_REFERENCE
  CHECK_EQ_INT(blosc2_stdio_mmap_write(buf, 1, 1, 0, s), 0);
#endif
  CHECK_EQ_INT(blosc2_stdio_mmap_read(&p, 1, 600, 0, s), 600);
  CHECK_EQ_MEM(p, buf, 600);
  CHECK_EQ_INT(blosc2_stdio_mmap_destroy(&mm), 0);

  /* c: copy-on-write; the file never changes. */
  mm = BLOSC2_STDIO_MMAP_DEFAULTS;
  mm.mode = "c";
  mm.initial_mapping_size = 64;
  s = blosc2_stdio_mmap_open(path, "rb", &mm);
  CHECK_NOT_NULL(s);
  CHECK(mm.is_memory_only);
  uint8_t z[700] = {0};
#if defined(_WIN32)
  /* Windows (as c-blosc2 there): the copy-on-write view maps the file's size and cannot grow;
   * a refused write leaves the stream as it was. */
  CHECK_EQ_INT(mm.mapping_size, 600);
  CHECK_EQ_INT(blosc2_stdio_mmap_write(z, 1, 700, 0, s), 0);
  CHECK_EQ_INT(blosc2_stdio_mmap_size(s), 600);
  CHECK_EQ_INT(blosc2_stdio_mmap_write(z, 1, 600, 0, s), 600);
  CHECK_EQ_INT(blosc2_stdio_mmap_read(&p, 1, 600, 0, s), 600);
  CHECK_EQ_MEM(p, z, 600);
#else
  CHECK_EQ_INT(blosc2_stdio_mmap_write(z, 1, 700, 0, s), 700);
  CHECK_EQ_INT(blosc2_stdio_mmap_size(s), 700);
  CHECK_EQ_INT(blosc2_stdio_mmap_read(&p, 1, 700, 0, s), 700);
  CHECK_EQ_MEM(p, z, 700);
#endif
  CHECK_EQ_INT(blosc2_stdio_mmap_truncate(s, 10), 0);
  CHECK_EQ_INT(blosc2_stdio_mmap_destroy(&mm), 0);
  CHECK_EQ_INT(file_size(path), 600);

  /* r+ with needs_free: destroy frees the malloc'ed struct. */
  blosc2_stdio_mmap *heap = malloc(sizeof(*heap));
  CHECK_NOT_NULL(heap);
  *heap = BLOSC2_STDIO_MMAP_DEFAULTS;
  heap->mode = "r+";
  heap->needs_free = true;
  s = blosc2_stdio_mmap_open(path, "rb+", heap);
  CHECK_NOT_NULL(s);
  CHECK_EQ_INT(blosc2_stdio_mmap_write(z, 1, 4, 596, s), 4);
  CHECK_EQ_INT(blosc2_stdio_mmap_destroy(heap), 0);
  f = fopen(path, "rb");
  CHECK_NOT_NULL(f);
  CHECK_EQ_INT(fread(back, 1, 600, f), 600);
  fclose(f);
  CHECK_EQ_MEM(back, buf, 596);
  CHECK_EQ_MEM(back + 596, z, 4);
  CHECK_EQ_INT(blosc2_remove_urlpath(path), 0);
}

int main(void) {
  blosc2_init();
  RUN(test_registry);
  RUN(test_stdio_validation);
  RUN(test_mmap_modes);
  blosc2_destroy();
  return harness_summary();
}
