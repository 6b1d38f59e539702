// Package apperr is Weft's one application error type. Domain packages
// return *Error values with a Code; the HTTP layer maps each Code to a status
// in one table (httpx.WriteError). Anything that is not an *Error is an
// internal failure: logged in full, reported to the client as a bare 500.
package apperr

import (
	"errors"
	"fmt"
)

// Code classifies an application error.
type Code string

// Codes, each mapped to one HTTP status by the HTTP layer.
const (
	NotFound   Code = "not_found"   // 404: an id that does not exist
	Conflict   Code = "conflict"    // 409: state forbids it (exists, busy, has children)
	Invalid    Code = "invalid"     // 422: malformed id or body, broken rule
	BadRequest Code = "bad_request" // 400: well-formed but not applicable
	TooLarge   Code = "too_large"   // 413: body over the size limit
	// Unavailable is a 503 with Retry-After: a service the request needs
	// (the store's embeddings endpoint) failed; retrying later may work.
	Unavailable Code = "unavailable"
)

// Error is a client-visible error: its Message is safe to show.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns err's Code, or "" when err is not (and wraps no) *Error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
