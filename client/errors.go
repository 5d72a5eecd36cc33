package client

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// Error is a request the server refused: its HTTP status and the server's
// message (the plain-text body, such as "Job with ID 7 does not exist").
// Test it with errors.Is against ErrNotFound, ErrConflict, ErrBadRequest,
// ErrUnavailable, ErrStaleAttempt and the other sentinels, or with
// IsNotFound, IsConflict and IsUnavailable.
type Error struct {
	StatusCode int    // the HTTP status, such as 404
	Message    string // the server's text; empty for a bare 404 (DELETE of a missing job or queue)
	Method     string // the request's method
	Path       string // the request's path and query, without the base URL
}

func (e *Error) Error() string {
	s := "ocyless: " + e.Method + " " + e.Path + ": " + strconv.Itoa(e.StatusCode) + " " + http.StatusText(e.StatusCode)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is reports whether target is the sentinel of e's status (ErrNotFound for
// a 404...), or ErrStaleAttempt for a 409 of a fenced call whose attempt is
// no longer the job's.
func (e *Error) Is(target error) bool {
	if target == ErrStaleAttempt {
		return e.StatusCode == http.StatusConflict && strings.HasSuffix(e.Message, " is not current")
	}
	s, ok := target.(*statusError)
	return ok && s.matches(e.StatusCode)
}

// statusError is a sentinel matching one or more HTTP statuses.
type statusError struct {
	text     string
	statuses []int
}

func (s *statusError) Error() string { return s.text }

func (s *statusError) matches(code int) bool {
	for _, c := range s.statuses {
		if c == code {
			return true
		}
	}
	return false
}

// Sentinels for errors.Is. An *Error matches the one of its status.
var (
	// ErrBadRequest: 400, the request was refused as invalid and changed
	// nothing.
	ErrBadRequest error = &statusError{"ocyless: bad request", []int{http.StatusBadRequest}}
	// ErrNotFound: 404, the job, queue, worker or schedule does not exist.
	ErrNotFound error = &statusError{"ocyless: not found", []int{http.StatusNotFound}}
	// ErrConflict: 409, the job is not in a state that allows the change
	// (or a key is taken, or a fenced attempt is not current).
	ErrConflict error = &statusError{"ocyless: conflict", []int{http.StatusConflict}}
	// ErrTooLarge: 413, the body is over the server's limit.
	ErrTooLarge error = &statusError{"ocyless: request too large", []int{http.StatusRequestEntityTooLarge}}
	// ErrStorageFull: 507, the server refuses new data.
	ErrStorageFull error = &statusError{"ocyless: storage full", []int{http.StatusInsufficientStorage}}
	// ErrUnavailable: 503 (Redis cannot serve), and 502, 504 and 429 that
	// a gateway in front of the API answers. A 503 may have been applied:
	// see the package documentation.
	ErrUnavailable error = &statusError{"ocyless: unavailable", []int{
		http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout, http.StatusTooManyRequests}}
	// ErrForbidden: 403, refused by the local server's Host or Origin
	// check, or by API Gateway's IAM authorisation (an unsigned or badly
	// signed request).
	ErrForbidden error = &statusError{"ocyless: forbidden", []int{http.StatusForbidden}}
	// ErrStaleAttempt: 409 "Job <id> attempt <n> is not current", a fenced
	// heartbeat, output or update of a job taken again since.
	ErrStaleAttempt = errors.New("ocyless: attempt is not current")
)

// IsNotFound reports whether err is a 404.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsConflict reports whether err is a 409.
func IsConflict(err error) bool { return errors.Is(err, ErrConflict) }

// IsUnavailable reports whether err is a 503 or a gateway's 502, 504 or 429.
func IsUnavailable(err error) bool { return errors.Is(err, ErrUnavailable) }

// IsBadRequest reports whether err is a 400.
func IsBadRequest(err error) bool { return errors.Is(err, ErrBadRequest) }

// StatusCode returns the HTTP status of an *Error in err's chain, or 0.
func StatusCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}
