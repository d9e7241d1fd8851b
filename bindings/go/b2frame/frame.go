package b2frame

/*
#cgo pkg-config: b2frame
#include <stdlib.h>
#include <blosc2.h>
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"
)

func init() {
	C.blosc2_init()
}

// Codec is a Blosc2 compressor code (BLOSC_BLOSCLZ ...).
type Codec uint8

// Codecs.
const (
	BloscLZ Codec = 0
	LZ4     Codec = 1
	LZ4HC   Codec = 2
	Zlib    Codec = 4
	Zstd    Codec = 5
)

// Filter is a Blosc2 filter id.
type Filter uint8

// Filters.
const (
	NoFilter   Filter = 0
	Shuffle    Filter = 1
	BitShuffle Filter = 2
	Delta      Filter = 3
	TruncPrec  Filter = 4
)

// Options describe a new frame. The zero value is not useful: start from DefaultOptions().
type Options struct {
	// Path of the frame: "" keeps it in memory.
	Path string
	// Contiguous selects a cframe (one file or buffer); false with a Path makes an sframe
	// directory.
	Contiguous bool
	Codec      Codec
	Clevel     int
	// Typesize is the item size in bytes (shuffle granularity, slice units).
	Typesize int
	// Filters are applied in order; at most 6. nil means {Shuffle}.
	Filters  []Filter
	Nthreads int
}

// DefaultOptions are c-blosc2's defaults: an in-memory cframe, BloscLZ level 5, typesize 8,
// shuffle.
func DefaultOptions() Options {
	return Options{Contiguous: true, Codec: BloscLZ, Clevel: 5, Typesize: 8, Nthreads: 1}
}

// Frame is an open Blosc2 super-chunk backed by a frame.
type Frame struct {
	s *C.blosc2_schunk
}

func wrap(s *C.blosc2_schunk) *Frame {
	f := &Frame{s: s}
	runtime.SetFinalizer(f, (*Frame).finalize)
	return f
}

func (f *Frame) finalize() {
	if f.s != nil {
		C.blosc2_schunk_free(f.s)
		f.s = nil
	}
}

// Close frees the super-chunk (files are complete after every mutation; Close releases memory
// and handles). Closing twice is harmless.
func (f *Frame) Close() error {
	if f.s == nil {
		return nil
	}
	rc := C.blosc2_schunk_free(f.s)
	f.s = nil
	runtime.SetFinalizer(f, nil)
	return check("blosc2_schunk_free", int64(rc))
}

func (f *Frame) ptr(op string) (*C.blosc2_schunk, error) {
	if f == nil || f.s == nil {
		return nil, &Error{Op: op, Code: -32, Message: "frame is closed"}
	}
	return f.s, nil
}

// New creates an empty frame.
func New(o Options) (*Frame, error) {
	if len(o.Filters) > 6 {
		return nil, &Error{Op: "New", Code: -12, Message: "at most 6 filters"}
	}
	cp := C.blosc2_get_blosc2_cparams_defaults()
	cp.compcode = C.uint8_t(o.Codec)
	cp.clevel = C.uint8_t(o.Clevel)
	cp.typesize = C.int32_t(o.Typesize)
	if o.Nthreads > 0 {
		cp.nthreads = C.int16_t(o.Nthreads)
	}
	if o.Filters != nil {
		for i := range cp.filters {
			cp.filters[i] = 0
		}
		start := 6 - len(o.Filters)
		for i, fl := range o.Filters {
			cp.filters[start+i] = C.uint8_t(fl)
		}
	}
	dp := C.blosc2_get_blosc2_dparams_defaults()
	storage := C.blosc2_get_blosc2_storage_defaults()
	storage.contiguous = C.bool(o.Contiguous)
	// The storage struct points at these C copies; blosc2_schunk_new copies what it keeps.
	ccp := (*C.blosc2_cparams)(C.malloc(C.size_t(unsafe.Sizeof(cp))))
	cdp := (*C.blosc2_dparams)(C.malloc(C.size_t(unsafe.Sizeof(dp))))
	defer C.free(unsafe.Pointer(ccp))
	defer C.free(unsafe.Pointer(cdp))
	*ccp, *cdp = cp, dp
	storage.cparams, storage.dparams = ccp, cdp
	if o.Path != "" {
		cpath := C.CString(o.Path)
		defer C.free(unsafe.Pointer(cpath))
		storage.urlpath = cpath
	}
	s := C.blosc2_schunk_new(&storage)
	if s == nil {
		return nil, &Error{Op: fmt.Sprintf("blosc2_schunk_new(%q)", o.Path), Code: -1,
			Message: "cannot create the frame (bad parameters or unwritable path)"}
	}
	return wrap(s), nil
}

// Open opens a frame file (cframe) or directory (sframe).
func Open(path string) (*Frame, error) {
	return OpenOffset(path, 0)
}

// OpenOffset opens a cframe stored at byte offset inside a file.
func OpenOffset(path string, offset int64) (*Frame, error) {
	op := fmt.Sprintf("blosc2_schunk_open_offset(%q, %d)", path, offset)
	if _, err := os.Stat(path); err != nil {
		return nil, &Error{Op: op, Code: -15, Message: C.GoString(C.blosc2_error_string(-15)) + ": " + err.Error()}
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	s := C.blosc2_schunk_open_offset(cpath, C.int64_t(offset))
	if s == nil {
		return nil, &Error{Op: op, Code: -11, Message: "not a valid Blosc2 frame"}
	}
	return wrap(s), nil
}

// FromBytes opens an in-memory cframe (the bytes are copied).
func FromBytes(b []byte) (*Frame, error) {
	if len(b) == 0 {
		return nil, &Error{Op: "blosc2_schunk_from_buffer", Code: -5, Message: C.GoString(C.blosc2_error_string(-5))}
	}
	s := C.blosc2_schunk_from_buffer((*C.uint8_t)(unsafe.Pointer(&b[0])), C.int64_t(len(b)), C.bool(true))
	runtime.KeepAlive(b)
	if s == nil {
		return nil, &Error{Op: "blosc2_schunk_from_buffer", Code: -11, Message: "not a valid Blosc2 cframe"}
	}
	return wrap(s), nil
}

// Bytes serialises the frame as a contiguous cframe.
func (f *Frame) Bytes() ([]byte, error) {
	s, err := f.ptr("Bytes")
	// The finalizer must not free the super-chunk while C uses it.
	defer runtime.KeepAlive(f)
	if err != nil {
		return nil, err
	}
	var buf *C.uint8_t
	var needsFree C.bool
	n := C.blosc2_schunk_to_buffer(s, &buf, &needsFree)
	if err := check("blosc2_schunk_to_buffer", int64(n)); err != nil {
		return nil, err
	}
	out := C.GoBytes(unsafe.Pointer(buf), C.int(n))
	if needsFree {
		C.free(unsafe.Pointer(buf))
	}
	return out, nil
}

// ToFile writes the frame as a cframe file.
func (f *Frame) ToFile(path string) error {
	s, err := f.ptr("ToFile")
	// The finalizer must not free the super-chunk while C uses it.
	defer runtime.KeepAlive(f)
	if err != nil {
		return err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	return check("blosc2_schunk_to_file", int64(C.blosc2_schunk_to_file(s, cpath)))
}

// NChunks is the number of chunks.
func (f *Frame) NChunks() int64 {
	return f.field(func(s *C.blosc2_schunk) int64 { return int64(s.nchunks) })
}

// NBytes is the uncompressed size.
func (f *Frame) NBytes() int64 {
	return f.field(func(s *C.blosc2_schunk) int64 { return int64(s.nbytes) })
}

// CBytes is the compressed size.
func (f *Frame) CBytes() int64 {
	return f.field(func(s *C.blosc2_schunk) int64 { return int64(s.cbytes) })
}

// Typesize is the item size in bytes.
func (f *Frame) Typesize() int {
	return int(f.field(func(s *C.blosc2_schunk) int64 { return int64(s.typesize) }))
}

// Chunksize is the common chunk size in bytes (0 when chunks differ, -1 before the first).
func (f *Frame) Chunksize() int {
	return int(f.field(func(s *C.blosc2_schunk) int64 { return int64(s.chunksize) }))
}

func (f *Frame) field(get func(*C.blosc2_schunk) int64) int64 {
	if f == nil || f.s == nil {
		return -1
	}
	defer runtime.KeepAlive(f)
	return get(f.s)
}

// Append compresses data as a new chunk; returns the new number of chunks.
func (f *Frame) Append(data []byte) (int64, error) {
	s, err := f.ptr("Append")
	// The finalizer must not free the super-chunk while C uses it.
	defer runtime.KeepAlive(f)
	if err != nil {
		return 0, err
	}
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	n := C.blosc2_schunk_append_buffer(s, p, C.int32_t(len(data)))
	runtime.KeepAlive(data)
	return int64(n), check("blosc2_schunk_append_buffer", int64(n))
}

// Compress makes a chunk from data with the frame's compression parameters (for InsertChunk,
// UpdateChunk and AppendChunk).
func (f *Frame) Compress(data []byte) ([]byte, error) {
	s, err := f.ptr("Compress")
	// The finalizer must not free the super-chunk while C uses it.
	defer runtime.KeepAlive(f)
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(data)+C.BLOSC2_MAX_OVERHEAD)
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	n := C.blosc2_compress_ctx(s.cctx, p, C.int32_t(len(data)), unsafe.Pointer(&out[0]), C.int32_t(len(out)))
	runtime.KeepAlive(data)
	if err := check("blosc2_compress_ctx", int64(n)); err != nil {
		return nil, err
	}
	return out[:n], nil
}

func chunkPtr(chunk []byte) *C.uint8_t {
	if len(chunk) == 0 {
		return nil
	}
	return (*C.uint8_t)(unsafe.Pointer(&chunk[0]))
}

// validChunk checks that chunk holds a whole chunk, so C never reads past the slice.
func validChunk(op string, chunk []byte) error {
	if len(chunk) < 16 {
		return &Error{Op: op, Code: -5, Message: C.GoString(C.blosc2_error_string(-5))}
	}
	var nbytes, cbytes, blocksize C.int32_t
	rc := C.blosc2_cbuffer_sizes(unsafe.Pointer(&chunk[0]), &nbytes, &cbytes, &blocksize)
	if err := check(op, int64(rc)); err != nil {
		return err
	}
	if int(cbytes) > len(chunk) {
		return &Error{Op: op, Code: -5, Message: C.GoString(C.blosc2_error_string(-5))}
	}
	return nil
}

// AppendChunk appends an already compressed chunk (copied); returns the new number of chunks.
func (f *Frame) AppendChunk(chunk []byte) (int64, error) {
	s, err := f.ptr("AppendChunk")
	// The finalizer must not free the super-chunk while C uses it.
	defer runtime.KeepAlive(f)
	if err != nil {
		return 0, err
	}
	if err := validChunk("blosc2_schunk_append_chunk", chunk); err != nil {
		return 0, err
	}
	n := C.blosc2_schunk_append_chunk(s, chunkPtr(chunk), C.bool(true))
	runtime.KeepAlive(chunk)
	return int64(n), check("blosc2_schunk_append_chunk", int64(n))
}

// InsertChunk inserts a compressed chunk at position i; returns the new number of chunks.
func (f *Frame) InsertChunk(i int64, chunk []byte) (int64, error) {
	s, err := f.ptr("InsertChunk")
	// The finalizer must not free the super-chunk while C uses it.
	defer runtime.KeepAlive(f)
	if err != nil {
		return 0, err
	}
	if err := validChunk("blosc2_schunk_insert_chunk", chunk); err != nil {
		return 0, err
	}
	n := C.blosc2_schunk_insert_chunk(s, C.int64_t(i), chunkPtr(chunk), C.bool(true))
	runtime.KeepAlive(chunk)
	return int64(n), check("blosc2_schunk_insert_chunk", int64(n))
}

// UpdateChunk replaces chunk i with a compressed chunk.
func (f *Frame) UpdateChunk(i int64, chunk []byte) error {
	s, err := f.ptr("UpdateChunk")
	// The finalizer must not free the super-chunk while C uses it.
	defer runtime.KeepAlive(f)
	if err != nil {
		return err
	}
	if err := validChunk("blosc2_schunk_update_chunk", chunk); err != nil {
		return err
	}
	n := C.blosc2_schunk_update_chunk(s, C.int64_t(i), chunkPtr(chunk), C.bool(true))
	runtime.KeepAlive(chunk)
	return check("blosc2_schunk_update_chunk", int64(n))
}

// DeleteChunk removes chunk i; returns the new number of chunks.
func (f *Frame) DeleteChunk(i int64) (int64, error) {
	s, err := f.ptr("DeleteChunk")
	// The finalizer must not free the super-chunk while C uses it.
	defer runtime.KeepAlive(f)
	if err != nil {
		return 0, err
	}
	n := C.blosc2_schunk_delete_chunk(s, C.int64_t(i))
	return int64(n), check("blosc2_schunk_delete_chunk", int64(n))
}

// RawChunk returns chunk i as stored (compressed).
func (f *Frame) RawChunk(i int64) ([]byte, error) {
	s, err := f.ptr("RawChunk")
	// The finalizer must not free the super-chunk while C uses it.
	defer runtime.KeepAlive(f)
	if err != nil {
		return nil, err
	}
	var p *C.uint8_t
	var needsFree C.bool
	n := C.blosc2_schunk_get_chunk(s, C.int64_t(i), &p, &needsFree)
	if err := check("blosc2_schunk_get_chunk", int64(n)); err != nil {
		return nil, err
	}
	out := C.GoBytes(unsafe.Pointer(p), C.int(n))
	if needsFree {
		C.free(unsafe.Pointer(p))
	}
	return out, nil
}

// Chunk returns chunk i decompressed.
func (f *Frame) Chunk(i int64) ([]byte, error) {
	defer runtime.KeepAlive(f)
	raw, err := f.RawChunk(i)
	if err != nil {
		return nil, err
	}
	var nbytes, cbytes, blocksize C.int32_t
	rc := C.blosc2_cbuffer_sizes(unsafe.Pointer(&raw[0]), &nbytes, &cbytes, &blocksize)
	if err := check("blosc2_cbuffer_sizes", int64(rc)); err != nil {
		return nil, err
	}
	out := make([]byte, int(nbytes))
	var p unsafe.Pointer
	if len(out) > 0 {
		p = unsafe.Pointer(&out[0])
	}
	n := C.blosc2_schunk_decompress_chunk(f.s, C.int64_t(i), p, nbytes)
	if err := check("blosc2_schunk_decompress_chunk", int64(n)); err != nil {
		return nil, err
	}
	return out[:n], nil
}

// GetSlice returns items [start, stop) (in units of Typesize) across chunk boundaries.
func (f *Frame) GetSlice(start, stop int64) ([]byte, error) {
	s, err := f.ptr("GetSlice")
	// The finalizer must not free the super-chunk while C uses it.
	defer runtime.KeepAlive(f)
	if err != nil {
		return nil, err
	}
	ts := int64(s.typesize)
	if start < 0 || stop < start || stop*ts > int64(s.nbytes) {
		return nil, &Error{Op: "blosc2_schunk_get_slice_buffer", Code: -12,
			Message: fmt.Sprintf("slice [%d, %d) outside the %d items", start, stop, int64(s.nbytes)/ts)}
	}
	out := make([]byte, (stop-start)*ts)
	if len(out) == 0 {
		return out, nil
	}
	rc := C.blosc2_schunk_get_slice_buffer(s, C.int64_t(start), C.int64_t(stop), unsafe.Pointer(&out[0]))
	return out, check("blosc2_schunk_get_slice_buffer", int64(rc))
}

// SetSlice overwrites items starting at start with data (len(data) a multiple of Typesize).
func (f *Frame) SetSlice(start int64, data []byte) error {
	s, err := f.ptr("SetSlice")
	// The finalizer must not free the super-chunk while C uses it.
	defer runtime.KeepAlive(f)
	if err != nil {
		return err
	}
	ts := int64(s.typesize)
	if int64(len(data))%ts != 0 {
		return &Error{Op: "blosc2_schunk_set_slice_buffer", Code: -12, Message: "data is not a whole number of items"}
	}
	stop := start + int64(len(data))/ts
	if start < 0 || stop*ts > int64(s.nbytes) {
		return &Error{Op: "blosc2_schunk_set_slice_buffer", Code: -12,
			Message: fmt.Sprintf("slice [%d, %d) outside the %d items", start, stop, int64(s.nbytes)/ts)}
	}
	if len(data) == 0 {
		return nil
	}
	rc := C.blosc2_schunk_set_slice_buffer(s, C.int64_t(start), C.int64_t(stop), unsafe.Pointer(&data[0]))
	runtime.KeepAlive(data)
	return check("blosc2_schunk_set_slice_buffer", int64(rc))
}
