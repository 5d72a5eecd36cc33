package httpapi

import (
	"errors"
	"io"
	"log/slog"
	"net/http"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// statusOf maps err to its HTTP status and the text the client sees. This is
// the only place where error kinds become status codes.
func statusOf(err error) (int, string) {
	var we *wire.Error
	if errors.As(err, &we) {
		return we.Status, we.Msg
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
		return http.StatusInternalServerError, ocypod.InternalMessage
	}
}

// invalid is the 400 "Invalid <field>: <why>" of an extension field or
// parameter.
func invalid(field, why string) error { return ocypod.Invalid("Invalid " + field + ": " + why) }

// within prefixes a 400's text with "Invalid <what>: ", naming the part
// of the request it is about (a batch element, a follow-up job); other
// errors pass unchanged.
func within(what string, err error) error {
	if err == nil {
		return nil
	}
	if status, msg := statusOf(err); status == http.StatusBadRequest {
		return ocypod.Invalid("Invalid " + what + ": " + msg)
	}
	return err
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

var (
	textHeader = []string{"text/plain; charset=utf-8"}
	jsonHeader = []string{"application/json"}
)

// writeText writes an error body: plain text, the message alone.
func writeText(w http.ResponseWriter, status int, msg string) {
	w.Header()["Content-Type"] = textHeader
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg)
}

// writeJSON writes a success body: compact JSON.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header()["Content-Type"] = jsonHeader
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
