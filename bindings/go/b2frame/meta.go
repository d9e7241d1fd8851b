package b2frame

/*
#cgo pkg-config: b2frame
#include <stdlib.h>
#include <blosc2.h>
#include "helpers.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

func contentPtr(b []byte) *C.uint8_t {
	if len(b) == 0 {
		return nil
	}
	return (*C.uint8_t)(unsafe.Pointer(&b[0]))
}

// withName calls call with the frame's super-chunk and name as a C string (freed after the
// call); op names the method in the error for a closed frame.
func (f *Frame) withName(op, name string, call func(s *C.blosc2_schunk, cname *C.char) error) error {
	s, err := f.ptr(op)
	// The finalizer must not free the super-chunk while C uses it.
	defer runtime.KeepAlive(f)
	if err != nil {
		return err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return call(s, cname)
}

// getContent returns the content that get (blosc2_meta_get or blosc2_vlmeta_get, fn in errors)
// hands out in a malloc'ed buffer, copied into Go memory; the buffer is freed.
func (f *Frame) getContent(op, fn, name string,
	get func(s *C.blosc2_schunk, cname *C.char, p **C.uint8_t, n *C.int32_t) C.int) ([]byte, error) {
	var out []byte
	err := f.withName(op, name, func(s *C.blosc2_schunk, cname *C.char) error {
		var p *C.uint8_t
		var n C.int32_t
		if err := check(fn, int64(get(s, cname, &p, &n))); err != nil {
			return err
		}
		defer C.free(unsafe.Pointer(p))
		out = C.GoBytes(unsafe.Pointer(p), C.int(n))
		return nil
	})
	return out, err
}

// AddMeta adds a fixed-size metalayer (only while the frame has no chunks).
func (f *Frame) AddMeta(name string, content []byte) error {
	return f.withName("AddMeta", name, func(s *C.blosc2_schunk, cname *C.char) error {
		rc := C.blosc2_meta_add(s, cname, contentPtr(content), C.int32_t(len(content)))
		runtime.KeepAlive(content)
		return check("blosc2_meta_add", int64(rc))
	})
}

// UpdateMeta replaces a metalayer's content with one of the same length.
func (f *Frame) UpdateMeta(name string, content []byte) error {
	return f.withName("UpdateMeta", name, func(s *C.blosc2_schunk, cname *C.char) error {
		rc := C.blosc2_meta_update(s, cname, contentPtr(content), C.int32_t(len(content)))
		runtime.KeepAlive(content)
		return check("blosc2_meta_update", int64(rc))
	})
}

// Meta returns a metalayer's content.
func (f *Frame) Meta(name string) ([]byte, error) {
	return f.getContent("Meta", "blosc2_meta_get", name,
		func(s *C.blosc2_schunk, cname *C.char, p **C.uint8_t, n *C.int32_t) C.int {
			return C.blosc2_meta_get(s, cname, p, n)
		})
}

// MetaNames lists the metalayers in frame order.
func (f *Frame) MetaNames() []string {
	if f == nil || f.s == nil {
		return nil
	}
	defer runtime.KeepAlive(f)
	names := make([]string, 0, int(f.s.nmetalayers))
	for i := 0; i < int(f.s.nmetalayers); i++ {
		if p := C.b2f_meta_name(f.s, C.int(i)); p != nil {
			names = append(names, C.GoString(p))
		}
	}
	return names
}

// SetVLMeta adds or replaces a variable-length metalayer (stored compressed).
func (f *Frame) SetVLMeta(name string, content []byte) error {
	return f.withName("SetVLMeta", name, func(s *C.blosc2_schunk, cname *C.char) error {
		var rc C.int
		if C.blosc2_vlmeta_exists(s, cname) >= 0 {
			rc = C.blosc2_vlmeta_update(s, cname, contentPtr(content), C.int32_t(len(content)), nil)
		} else {
			rc = C.blosc2_vlmeta_add(s, cname, contentPtr(content), C.int32_t(len(content)), nil)
		}
		runtime.KeepAlive(content)
		return check("blosc2_vlmeta_add/update", int64(rc))
	})
}

// VLMeta returns a variable-length metalayer's content (decompressed).
func (f *Frame) VLMeta(name string) ([]byte, error) {
	return f.getContent("VLMeta", "blosc2_vlmeta_get", name,
		func(s *C.blosc2_schunk, cname *C.char, p **C.uint8_t, n *C.int32_t) C.int {
			return C.blosc2_vlmeta_get(s, cname, p, n)
		})
}

// DeleteVLMeta removes a variable-length metalayer.
func (f *Frame) DeleteVLMeta(name string) error {
	return f.withName("DeleteVLMeta", name, func(s *C.blosc2_schunk, cname *C.char) error {
		return check("blosc2_vlmeta_delete", int64(C.blosc2_vlmeta_delete(s, cname)))
	})
}

// VLMetaNames lists the variable-length metalayers in frame order.
func (f *Frame) VLMetaNames() []string {
	if f == nil || f.s == nil {
		return nil
	}
	defer runtime.KeepAlive(f)
	names := make([]string, 0, int(f.s.nvlmetalayers))
	for i := 0; i < int(f.s.nvlmetalayers); i++ {
		if p := C.b2f_vlmeta_name(f.s, C.int(i)); p != nil {
			names = append(names, C.GoString(p))
		}
	}
	return names
}
