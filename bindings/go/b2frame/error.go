package b2frame

/*
#cgo pkg-config: b2frame
#include <blosc2.h>
*/
import "C"

import "fmt"

// Error is a failure reported by libb2frame: a BLOSC2_ERROR_* code and its message.
type Error struct {
	// Op is the C function (or binding operation) that failed.
	Op string
	// Code is the negative BLOSC2_ERROR_* value.
	Code int
	// Message is blosc2_error_string(Code).
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%d)", e.Op, e.Message, e.Code)
}

// Is makes errors.Is(err, ErrInvalidIndex) and friends match on the code alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Op == "" && t.Code == e.Code
}

// Sentinels for errors.Is.
var (
	ErrFailure           = &Error{Code: -1}
	ErrData              = &Error{Code: -3}
	ErrReadBuffer        = &Error{Code: -5}
	ErrInvalidHeader     = &Error{Code: -11}
	ErrInvalidParam      = &Error{Code: -12}
	ErrFileOpen          = &Error{Code: -15}
	ErrNotFound          = &Error{Code: -16}
	ErrNullPointer       = &Error{Code: -32}
	ErrInvalidIndex      = &Error{Code: -33}
	ErrMetalayerNotFound = &Error{Code: -34}
)

func newError(op string, code int) error {
	return &Error{Op: op, Code: code, Message: C.GoString(C.blosc2_error_string(C.int(code)))}
}

// check turns a negative C return value into an *Error.
func check(op string, rc int64) error {
	if rc < 0 {
		return newError(op, int(rc))
	}
	return nil
}
