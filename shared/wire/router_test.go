package wire

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// echo answers "<route> <path values>".
func echo(route string, names ...string) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		out := route
		for _, n := range names {
			out += " " + n + "=" + r.PathValue(n)
		}
		_, _ = io.WriteString(w, out)
		return nil
	}
}

func testTable() []Route {
	return []Route{
		{http.MethodGet, "/a", echo("get-a")},
		{http.MethodGet, "/a/{x}", echo("get-ax", "x")},
		{http.MethodDelete, "/a/{x}", echo("delete-ax", "x")},
		{http.MethodGet, "/a/{x}/b/{y}", echo("get-axby", "x", "y")},
		{http.MethodPost, "/a/{x}/fail", func(http.ResponseWriter, *http.Request) error { return errors.New("refused") }},
		{http.MethodPut, "/a/{x}/panic", func(w http.ResponseWriter, r *http.Request) error {
			if r.PathValue("x") == "late" {
				_, _ = io.WriteString(w, "partial")
			}
			panic("boom")
		}},
		{http.MethodGet, "/silent", func(http.ResponseWriter, *http.Request) error { return nil }},
	}
}

// failures records what the router hands its ErrorFunc.
type failures struct{ got []string }

func (f *failures) answer(w http.ResponseWriter, r *http.Request, err error) {
	f.got = append(f.got, r.Pattern+": "+err.Error())
	w.WriteHeader(http.StatusTeapot)
	_, _ = io.WriteString(w, err.Error())
}

func get(h http.Handler, method, target string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, target, nil))
	return w
}

func TestRouter(t *testing.T) {
	t.Parallel()
	f := &failures{}
	h := NewRouter(testTable(), f.answer)
	for target, want := range map[string]string{
		"GET /a":              "200 get-a",
		"GET /a/1":            "200 get-ax x=1",
		"DELETE /a/%2F%41":    "200 delete-ax x=/A",
		"GET /a/x+y/b/%C3%A9": "200 get-axby x=x+y y=é",
		"GET /a/":             "404 ",
		"GET //a":             "404 ",
		"GET /a/./b/c":        "200 get-axby x=. y=c",
		"GET /a/1/b/":         "404 ",
		"GET /b":              "404 ",
		"POST /a/1":           "405 ",
		"POST /a":             "405 ",
		"POST /a/1/fail":      "418 refused",
		"PUT /a/1/panic":      "418 panic: boom",
		"PUT /a/late/panic":   "200 partial",
		"GET /silent":         "418 handler wrote no response",
	} {
		method, path, _ := strings.Cut(target, " ")
		w := get(h, method, path)
		if got := itoa(w.Code) + " " + w.Body.String(); got != want {
			t.Errorf("%s = %q, want %q", target, got, want)
		}
		if w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff header", target)
		}
	}
	if w := get(h, http.MethodPut, "/a/1"); w.Header().Get("Allow") != "GET, DELETE" {
		t.Errorf("PUT /a/1: Allow = %q, want GET, DELETE", w.Header().Get("Allow"))
	}
	want := []string{"POST /a/{x}/fail: refused", "PUT /a/{x}/panic: panic: boom", "PUT /a/{x}/panic: panic: boom", "GET /silent: handler wrote no response"}
	if strings.Join(sortedCopy(f.got), "|") != strings.Join(sortedCopy(want), "|") {
		t.Errorf("failures %q, want %q (the late panic too, though its answer had started)", f.got, want)
	}
}

func TestRouteRouter(t *testing.T) {
	t.Parallel()
	f := &failures{}
	h := NewRouteRouter(testTable(), 2, f.answer) // DELETE /a/{x}
	if w := get(h, http.MethodDelete, "/a/7"); w.Body.String() != "delete-ax x=7" {
		t.Errorf("DELETE /a/7 = %q", w.Body)
	}
	if w := get(h, http.MethodGet, "/a/7"); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, DELETE" {
		t.Errorf("GET /a/7 = %d Allow %q, want 405 with the table's methods", w.Code, w.Header().Get("Allow"))
	}
	if w := get(h, http.MethodGet, "/a"); w.Code != http.StatusNotFound {
		t.Errorf("GET /a = %d, want 404 (another route)", w.Code)
	}
	// Path values set beforehand are used as they are.
	r := httptest.NewRequest(http.MethodDelete, "/stage/whatever", nil)
	r.SetPathValue("x", "%41")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Body.String() != "delete-ax x=%41" {
		t.Errorf("preset path value: %q", w.Body)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func sortedCopy(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return out
}

// TestSingleRouter: a route served alone, given its Allow, answers as
// NewRouteRouter of the table does.
func TestSingleRouter(t *testing.T) {
	t.Parallel()
	f := &failures{}
	table := testTable()
	if got := Allow(table, "/a/{x}"); got != "GET, DELETE" {
		t.Errorf("Allow(/a/{x}) = %q, want GET, DELETE", got)
	}
	one, all := NewSingleRouter(table[2], "GET, DELETE", f.answer), NewRouteRouter(table, 2, f.answer)
	for _, c := range []struct{ method, path string }{
		{http.MethodDelete, "/a/7"}, {http.MethodGet, "/a/7"}, {http.MethodGet, "/a"}, {http.MethodPut, "/a/7"},
	} {
		a, b := get(one, c.method, c.path), get(all, c.method, c.path)
		if a.Code != b.Code || a.Header().Get("Allow") != b.Header().Get("Allow") || a.Body.String() != b.Body.String() {
			t.Errorf("%s %s = %d %q %q alone, %d %q %q from the table", c.method, c.path,
				a.Code, a.Header().Get("Allow"), a.Body, b.Code, b.Header().Get("Allow"), b.Body)
		}
	}
}
