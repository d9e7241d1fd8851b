// Package b2frame wraps the super-chunk C API of libb2frame (a Rust drop-in replacement for
// c-blosc2's frame I/O): create and open Blosc2 frames (contiguous files, sparse directories,
// in-memory buffers), append, read, update, insert and delete chunks, read and write slices of
// items, metalayers and vlmetalayers, and serialise to cframe bytes.
//
// It builds with cgo against an installed libb2frame found through pkg-config
// (PKG_CONFIG_PATH=PREFIX/lib/pkgconfig).
//
// A Frame owns a C super-chunk: call Close when done. A finalizer frees forgotten frames, but
// only when the garbage collector runs, so do not rely on it for files that must be flushed or
// closed promptly. A Frame is not safe for concurrent use.
package b2frame
