package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestDashboardPaths: GET /ui serves the dashboard; /ui/, which people
// type, redirects there; other methods on /ui/ get the router's 404.
func TestDashboardPaths(t *testing.T) {
	t.Parallel()
	s := start(t, e2eFile, backends(t)["miniredis"])
	for _, path := range []string{"/ui", "/ui/"} {
		code, body, h := s.send(t, "GET", path, "", nil)
		if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(body, "<html") {
			t.Errorf("GET %s = %d %s %.80q", path, code, h.Get("Content-Type"), body)
		}
	}
	noRedirect := *client
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(t.Context(), "GET", s.base+"/ui/", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != "/ui" {
		t.Errorf("GET /ui/ = %d Location %q, want 308 to /ui", resp.StatusCode, resp.Header.Get("Location"))
	}
	if code, _, _ := s.send(t, "DELETE", "/ui/", "", nil); code != http.StatusNotFound {
		t.Errorf("DELETE /ui/ = %d, want 404", code)
	}
}
