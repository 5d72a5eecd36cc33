package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ocyless/ocyless/shared/ocypod"
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
	return 0, &httpError{http.StatusNotFound, fmt.Sprintf("can not parse %s to a u64", rustQuote(s))}
}

// rustQuote quotes s as Rust's Debug formatting of a str does, which is how
// upstream's messages show user text: backslash escapes for quotes,
// backslashes, \t \r \n \0, and \u{..} for other non-printable characters.
// Invalid UTF-8 shows as U+FFFD, as upstream's lossy decoding produced.
func rustQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\n':
			b.WriteString(`\n`)
		case 0:
			b.WriteString(`\0`)
		default:
			if r == ' ' || unicode.IsPrint(r) {
				b.WriteRune(r)
			} else {
				fmt.Fprintf(&b, `\u{%x}`, r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// percentDecode decodes %XX escapes in a path segment. Like upstream's
// router, it leaves malformed escapes as they are and does not turn '+' into
// a space.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// formDecode decodes an application/x-www-form-urlencoded query component:
// '+' is a space and %XX escapes are decoded; malformed escapes stay as they
// are and invalid UTF-8 becomes U+FFFD, as upstream's query parser did.
func formDecode(s string) string {
	s = percentDecode(strings.ReplaceAll(s, "+", " "))
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
