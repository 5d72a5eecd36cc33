package wire

import (
	"fmt"
	"net/http"
)

// Error is a refusal decided from the request's wire form alone (its path,
// query or body), with Ocypod's exact status and text.
type Error struct {
	Status int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// BadRequest is a 400 with msg.
func BadRequest(msg string) *Error { return &Error{http.StatusBadRequest, msg} }

// The texts of Ocypod's framework (actix-web 4 and serde) for a malformed
// request, word for word.

// ContentTypeError is the 400 of a JSON body without a JSON content type.
func ContentTypeError() *Error { return BadRequest("Content type error") }

// JSONError is the 400 of a body serde could not deserialize.
func JSONError(err error) *Error { return BadRequest("Json deserialize error: " + err.Error()) }

// TooLarge is the 413 of a body whose declared length exceeds limit.
func TooLarge(length, limit int64) *Error {
	return &Error{http.StatusRequestEntityTooLarge,
		fmt.Sprintf("JSON payload (%d bytes) is larger than allowed (limit: %d bytes).", length, limit)}
}

// TooLargeStream is the 413 of a body of unknown length that went past
// limit.
func TooLargeStream(limit int64) *Error {
	return &Error{http.StatusRequestEntityTooLarge, fmt.Sprintf("JSON payload has exceeded limit (%d bytes).", limit)}
}

// ReadError is the 400 of a body that could not be read.
func ReadError(err error) *Error {
	return BadRequest("Error that occur during reading payload: " + err.Error())
}

// DuplicateQueryField is the 400 of a query parameter given twice.
func DuplicateQueryField(key string) *Error {
	return BadRequest("Query deserialize error: duplicate field `" + key + "`")
}

// UnrecognisedField is the 400 of an unknown name in ?fields=.
func UnrecognisedField(name string) *Error { return BadRequest("Unrecognised field: " + name) }

// BadU64 is the 404 of an {id} path segment that is not a u64.
func BadU64(segment string) *Error {
	return &Error{http.StatusNotFound, fmt.Sprintf("can not parse %s to a u64", RustQuote(segment))}
}
