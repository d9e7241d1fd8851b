package b2frame

import (
	"unsafe"
)

// Number is an element type whose in-memory bytes are what the frame stores (little-endian
// machines, as Blosc2 assumes).
type Number interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

func asBytes[T Number](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

func fromBytes[T Number](op string, b []byte) ([]T, error) {
	var z T
	size := int(unsafe.Sizeof(z))
	if len(b)%size != 0 {
		return nil, &Error{Op: op, Code: -12, Message: "byte length is not a multiple of the element size"}
	}
	out := make([]T, len(b)/size)
	copy(asBytes(out), b)
	return out, nil
}

func checkItem[T Number](op string, f *Frame) error {
	var z T
	if ts := f.Typesize(); ts != int(unsafe.Sizeof(z)) {
		return &Error{Op: op, Code: -12, Message: "element size differs from the frame's typesize"}
	}
	return nil
}

// AppendSlice appends s as one chunk; the element size must equal the frame's typesize.
func AppendSlice[T Number](f *Frame, s []T) (int64, error) {
	if err := checkItem[T]("AppendSlice", f); err != nil {
		return 0, err
	}
	return f.Append(asBytes(s))
}

// ChunkOf returns chunk i decompressed as elements of T.
func ChunkOf[T Number](f *Frame, i int64) ([]T, error) {
	b, err := f.Chunk(i)
	if err != nil {
		return nil, err
	}
	return fromBytes[T]("ChunkOf", b)
}

// SliceOf returns items [start, stop) as elements of T.
func SliceOf[T Number](f *Frame, start, stop int64) ([]T, error) {
	if err := checkItem[T]("SliceOf", f); err != nil {
		return nil, err
	}
	b, err := f.GetSlice(start, stop)
	if err != nil {
		return nil, err
	}
	return fromBytes[T]("SliceOf", b)
}

// SetSliceOf overwrites items from start with s.
func SetSliceOf[T Number](f *Frame, start int64, s []T) error {
	if err := checkItem[T]("SetSliceOf", f); err != nil {
		return err
	}
	return f.SetSlice(start, asBytes(s))
}
