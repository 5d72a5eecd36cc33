package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// newRequest builds a request; a non-empty body is sent as application/json.
func newRequest(method, target, body string) *http.Request {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, target, rd)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

// serve runs r through h and returns the recorded response.
func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// do is serve(h, newRequest(method, target, body)).
func do(h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	return serve(h, newRequest(method, target, body))
}

// wantResponse checks a response's status, body and Content-Type.
func wantResponse(tb testing.TB, w *httptest.ResponseRecorder, status int, body, contentType string) {
	tb.Helper()
	if msg := mismatch(w, status, body, contentType); msg != "" {
		tb.Error(msg)
	}
}

func mismatch(w *httptest.ResponseRecorder, status int, body, contentType string) string {
	if w.Code == status && w.Body.String() == body && w.Header().Get("Content-Type") == contentType {
		return ""
	}
	return fmt.Sprintf("response = %d %q (Content-Type %q), want %d %q (Content-Type %q)",
		w.Code, w.Body.String(), w.Header().Get("Content-Type"), status, body, contentType)
}

// wantTextNamed is wantText for the case called name of a table.
func wantTextNamed(tb testing.TB, name string, w *httptest.ResponseRecorder, status int, body string) {
	tb.Helper()
	if msg := mismatch(w, status, body, textType); msg != "" {
		tb.Error(name + ": " + msg)
	}
}

const (
	jsonType = "application/json"
	textType = "text/plain; charset=utf-8"
)

// wantJSON checks a 2xx JSON response byte for byte.
func wantJSON(tb testing.TB, w *httptest.ResponseRecorder, status int, body string) {
	tb.Helper()
	wantResponse(tb, w, status, body, jsonType)
}

// wantText checks an error response: status and exact text.
func wantText(tb testing.TB, w *httptest.ResponseRecorder, status int, body string) {
	tb.Helper()
	wantResponse(tb, w, status, body, textType)
}

// wantEmpty checks a response with no body and no Content-Type.
func wantEmpty(tb testing.TB, w *httptest.ResponseRecorder, status int) {
	tb.Helper()
	wantResponse(tb, w, status, "", "")
}

// logRecorder is a slog.Handler keeping every record, and sending each to
// tb.Log when tb is set.
type logRecorder struct {
	tb      testing.TB
	mu      sync.Mutex
	records []slog.Record
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	if l.tb != nil {
		var b strings.Builder
		b.WriteString(r.Level.String() + " " + r.Message)
		r.Attrs(func(a slog.Attr) bool {
			b.WriteString(" " + a.String())
			return true
		})
		l.tb.Log(b.String())
	}
	return nil
}

func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

// lines returns each record as "LEVEL message k=v k=v".
func (l *logRecorder) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.records {
		var b strings.Builder
		b.WriteString(r.Level.String() + " " + r.Message)
		r.Attrs(func(a slog.Attr) bool {
			b.WriteString(" " + a.String())
			return true
		})
		out = append(out, b.String())
	}
	return out
}

// equalSnapshots reports whether two snapshots of Redis hold the same keys
// with the same values.
func equalSnapshots(a, b map[string]string) bool { return maps.Equal(a, b) }

func itoa(n int) string { return strconv.Itoa(n) }

// mustUnmarshal decodes JSON into v or fails tb.
func mustUnmarshal(tb testing.TB, data []byte, v any) {
	tb.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		tb.Fatalf("%s: %v", data, err)
	}
}

func sortedStrings(ss []string) []string {
	out := slices.Clone(ss)
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b)) })
	return out
}
