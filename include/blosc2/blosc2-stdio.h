/*
 * b2frame: the filesystem (stdio) and mmap I/O backends of c-blosc2's <blosc2/blosc2-stdio.h>.
 *
 * The struct types come from b2frame.h (generated from the Rust definitions); this header adds
 * their default values and the backend prototypes.
 */
#ifndef BLOSC_BLOSC2_BLOSC2_STDIO_H
#define BLOSC_BLOSC2_BLOSC2_STDIO_H

#include "blosc2-export.h"
#include "../b2frame.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#if defined(_MSC_VER)
#  include <io.h>
#else
#  include <unistd.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* No file locking unless asked for. */
static const blosc2_stdio_params BLOSC2_STDIO_PARAMS_DEFAULTS = {false};

/* Filesystem backend (I/O id BLOSC2_IO_FILESYSTEM); streams are blosc2_stdio_file handles. */
BLOSC_EXPORT void *blosc2_stdio_open(const char *urlpath, const char *mode, void *params);
BLOSC_EXPORT int blosc2_stdio_close(void *stream);
BLOSC_EXPORT int64_t blosc2_stdio_size(void *stream);
BLOSC_EXPORT int64_t blosc2_stdio_write(const void *ptr, int64_t size, int64_t nitems,
                                        int64_t position, void *stream);
BLOSC_EXPORT int64_t blosc2_stdio_read(void **ptr, int64_t size, int64_t nitems, int64_t position,
                                       void *stream);
BLOSC_EXPORT int blosc2_stdio_truncate(void *stream, int64_t size);
BLOSC_EXPORT int blosc2_stdio_destroy(void *params);

/*
 * Memory-mapped backend (I/O id BLOSC2_IO_FILESYSTEM_MMAP): read-only mode "r", a 1 GiB
 * initial mapping, nothing mapped or opened yet (fields in declaration order; on Windows no
 * mapping object either).
 */
static const blosc2_stdio_mmap BLOSC2_STDIO_MMAP_DEFAULTS = {
    "r",              /* mode */
    (size_t)1 << 30,  /* initial_mapping_size */
    false,            /* needs_free */
    NULL,             /* addr */
    NULL,             /* urlpath */
    0,                /* file_size */
    0,                /* mapping_size */
    false,            /* is_memory_only */
    NULL,             /* file */
    -1,               /* fd */
    -1,               /* access_flags */
    -1,               /* map_flags */
#if defined(_WIN32)
    INVALID_HANDLE_VALUE, /* mmap_handle (Windows only) */
#endif
};

BLOSC_EXPORT void *blosc2_stdio_mmap_open(const char *urlpath, const char *mode, void *params);
BLOSC_EXPORT int blosc2_stdio_mmap_close(void *stream);
BLOSC_EXPORT int64_t blosc2_stdio_mmap_size(void *stream);
BLOSC_EXPORT int64_t blosc2_stdio_mmap_write(const void *ptr, int64_t size, int64_t nitems,
                                             int64_t position, void *stream);
BLOSC_EXPORT int64_t blosc2_stdio_mmap_read(void **ptr, int64_t size, int64_t nitems,
                                            int64_t position, void *stream);
BLOSC_EXPORT int blosc2_stdio_mmap_truncate(void *stream, int64_t size);
BLOSC_EXPORT int blosc2_stdio_mmap_destroy(void *params);

#ifdef __cplusplus
}
#endif

#endif /* BLOSC_BLOSC2_BLOSC2_STDIO_H */
