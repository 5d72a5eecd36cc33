package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// httpError is a refusal decided by the HTTP layer itself (a bad path, query
// or body), with its exact status and text.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(msg string) error { return &httpError{http.StatusBadRequest, msg} }

// internalMessage is the only text a 500 ever carries.
const internalMessage = "Internal server error"

// statusOf maps err to its HTTP status and the text the client sees. This is
// the only place where error kinds become status codes.
func statusOf(err error) (int, string) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, he.msg
	}
	switch ocypod.ErrorKind(err) {
	case ocypod.KindInvalid:
		return http.StatusBadRequest, ocypod.ErrorMessage(err)
	case ocypod.KindNotFound:
		return http.StatusNotFound, ocypod.ErrorMessage(err)
	case ocypod.KindConflict:
		return http.StatusConflict, ocypod.ErrorMessage(err)
	case ocypod.KindUnavailable:
		// The store builds this text from a connection error; redact it
		// again in case it carries a URL with credentials.
		return http.StatusServiceUnavailable, ocypod.RedactSecrets(ocypod.ErrorMessage(err))
	case ocypod.KindStorageFull:
		return http.StatusInsufficientStorage, ocypod.ErrorMessage(err)
	default:
		return http.StatusInternalServerError, internalMessage
	}
}

// emptyNotFoundError marks an error whose 404 answer has an empty body, as
// upstream's DELETE /job/{id} and DELETE /queue/{name} answer. Any other
// status is answered as usual; the status and logged text are err's own.
type emptyNotFoundError struct{ err error }

func (e *emptyNotFoundError) Error() string { return e.err.Error() }
func (e *emptyNotFoundError) Unwrap() error { return e.err }

// emptyNotFound wraps a non-nil err in an emptyNotFoundError.
func emptyNotFound(err error) error { return &emptyNotFoundError{err} }

// writeError answers err, a handler's returned error, with Ocypod's status
// and text (a 404 marked by emptyNotFound has no body). 5xx are logged once,
// with the cause; clients never see internal error texts.
func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := statusOf(err)
	if status >= 500 {
		a.logFailure(r, status, err)
	}
	var enf *emptyNotFoundError
	if status == http.StatusNotFound && errors.As(err, &enf) {
		w.WriteHeader(status)
		return
	}
	writeText(w, status, msg)
}

func (a *API) logFailure(r *http.Request, status int, err error) {
	a.log.LogAttrs(r.Context(), slog.LevelError, "request failed",
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("route", r.Pattern),
		slog.Int("status", status),
		slog.String("error", ocypod.RedactSecrets(err.Error())))
}

// writeText writes an error body: plain text, the message alone.
func writeText(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg))
}

// writeJSON writes a success body: compact JSON.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// parseJobID parses an {id} path value as Rust's u64 parser does: decimal
// digits with an optional leading '+', leading zeros allowed. Anything else,
// including overflow, is upstream's 404 with the value quoted Rust-style.
func parseJobID(s string) (uint64, error) {
	digits := strings.TrimPrefix(s, "+")
	ok := digits != ""
	for i := 0; ok && i < len(digits); i++ {
		ok = digits[i] >= '0' && digits[i] <= '9'
	}
	if ok {
		if id, err := strconv.ParseUint(digits, 10, 64); err == nil {
			return id, nil
		}
	}
	return 0, &httpError{http.StatusNotFound, fmt.Sprintf("can not parse %s to a u64", wire.RustQuote(s))}
}
