package dashboard_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/dashboard"
	"github.com/ocyless/ocyless/shared/httpapi"
)

func get(h http.Handler, method, path string, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// inline returns the text of the document's one element tag.
func inline(t *testing.T, doc, tag string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<`+tag+`>(.*?)</`+tag+`>`).FindAllStringSubmatch(doc, -1)
	if len(m) != 1 {
		t.Fatalf("%d <%s> elements, want 1", len(m), tag)
	}
	return m[0][1]
}

func TestServe(t *testing.T) {
	t.Parallel()
	w := get(http.HandlerFunc(dashboard.Serve), http.MethodGet, "/ui", nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET /ui = %d", w.Code)
	}
	doc := w.Body.String()
	if !strings.HasPrefix(doc, "<!doctype html>") || strings.Contains(doc, "/*STYLE*/") || strings.Contains(doc, "/*SCRIPT*/") {
		t.Errorf("the page is not the assembled document:\n%.300s", doc)
	}
	hdr := w.Header()
	for k, want := range map[string]string{
		"Content-Type":                 "text/html; charset=utf-8",
		"X-Content-Type-Options":       "nosniff",
		"Cache-Control":                "no-cache",
		"Referrer-Policy":              "no-referrer",
		"X-Frame-Options":              "DENY",
		"Cross-Origin-Opener-Policy":   "same-origin",
		"Cross-Origin-Resource-Policy": "same-origin",
	} {
		if got := hdr.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if got := hdr.Get("Content-Length"); got != strconv.Itoa(len(doc)) {
		t.Errorf("Content-Length = %q, body %d bytes", got, len(doc))
	}

	// The policy allows exactly the page's own inline style and script.
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	want := "default-src 'none'; script-src " + hash(inline(t, doc, "script")) + "; style-src " + hash(inline(t, doc, "style")) +
		"; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'" +
		"; require-trusted-types-for 'script'; trusted-types 'none'"
	if got := hdr.Get("Content-Security-Policy"); got != want {
		t.Errorf("Content-Security-Policy =\n%s\nwant\n%s", got, want)
	}

	// A browser holding this build's page gets a 304, with the same policy.
	etag := hdr.Get("ETag")
	if !regexp.MustCompile(`^"[0-9a-f]{24}"$`).MatchString(etag) {
		t.Fatalf("ETag = %q, want a strong tag", etag)
	}
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		w := get(http.HandlerFunc(dashboard.Serve), http.MethodGet, "/ui", map[string]string{"If-None-Match": inm})
		if w.Code != http.StatusNotModified || w.Body.Len() != 0 || w.Header().Get("ETag") != etag ||
			w.Header().Get("Content-Security-Policy") != want {
			t.Errorf("If-None-Match %s = %d (%d bytes), want 304 with the tag and the policy", inm, w.Code, w.Body.Len())
		}
	}
	if w := get(http.HandlerFunc(dashboard.Serve), http.MethodGet, "/ui", map[string]string{"If-None-Match": `"0123"`}); w.Code != http.StatusOK {
		t.Errorf("If-None-Match of another build = %d, want 200", w.Code)
	}
}

// TestRoute checks the route as the local server (every route) and as its
// Lambda function (one route) serve it: GET /ui only, no store needed.
func TestRoute(t *testing.T) {
	t.Parallel()
	api := httpapi.New(nil, httpapi.Options{}) // the page never touches the store
	one, err := api.RouteHandler("dashboard")
	if err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]http.Handler{"all routes": api.Handler(), "its function": one} {
		if w := get(h, http.MethodGet, "/ui", nil); w.Code != http.StatusOK || !strings.HasPrefix(w.Body.String(), "<!doctype html>") ||
			w.Header().Get("Content-Security-Policy") == "" {
			t.Errorf("%s: GET /ui = %d", name, w.Code)
		}
		// Like every path of the API, no trailing-slash variant, no
		// redirect.
		for _, path := range []string{"/ui/", "/ui/index.html", "//ui"} {
			if w := get(h, http.MethodGet, path, nil); w.Code != http.StatusNotFound || w.Body.Len() != 0 {
				t.Errorf("%s: GET %s = %d, want an empty 404", name, path, w.Code)
			}
		}
		for _, method := range []string{http.MethodHead, http.MethodPost, http.MethodDelete} {
			if w := get(h, method, "/ui", nil); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET" {
				t.Errorf("%s: %s /ui = %d Allow %q, want 405 Allow GET", name, method, w.Code, w.Header().Get("Allow"))
			}
		}
	}
}

// TestScriptWritesNoMarkup keeps HTML sinks out of the script: data must
// reach the page as text. (The policy's Trusted Types make such a call
// throw in the browser; this says where, before any browser runs.)
func TestScriptWritesNoMarkup(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("page.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "createContextualFragment",
		"DOMParser", "srcdoc", "eval(", "Function(", "setAttribute('on", "setAttribute(\"on", "javascript:"} {
		if strings.Contains(string(src), sink) {
			t.Errorf("page.js uses %s", sink)
		}
	}
}
