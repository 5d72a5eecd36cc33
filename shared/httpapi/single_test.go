package httpapi

import (
	"net/http"
	"testing"
)

// TestSingleHandler: a route variable served alone, with the Allow its
// Lambda function's generated main passes, answers as RouteHandler of its
// name does: its own route served, another path 404, another method 405
// with the table's methods.
func TestSingleHandler(t *testing.T) {
	t.Parallel()
	api := New(&fakeStore{}, Options{})
	if _, err := api.SingleHandler(Route{Name: "made-up", Method: http.MethodGet, Pattern: "/x"}, "GET"); err == nil {
		t.Error("SingleHandler of a Route that is no route variable: error = nil, want an error")
	}
	for _, rt := range Routes() {
		single, err := api.SingleHandler(rt, Allow(rt.Pattern))
		if err != nil {
			t.Fatalf("SingleHandler(%s): %v", rt.Name, err)
		}
		named, err := api.RouteHandler(rt.Name)
		if err != nil {
			t.Fatalf("RouteHandler(%s): %v", rt.Name, err)
		}
		path := concrete(rt.Pattern)
		for _, method := range []string{rt.Method, http.MethodPost, http.MethodOptions} {
			a, b := do(single, method, path, "{}"), do(named, method, path, "{}")
			if a.Code != b.Code || a.Header().Get("Allow") != b.Header().Get("Allow") || a.Body.String() != b.Body.String() {
				t.Errorf("%s: %s %s = %d Allow %q %q alone, %d Allow %q %q by name", rt.Name, method, path,
					a.Code, a.Header().Get("Allow"), a.Body, b.Code, b.Header().Get("Allow"), b.Body)
			}
		}
		if rt.Pattern != "/health" {
			wantEmpty(t, do(single, http.MethodGet, "/health", ""), http.StatusNotFound)
		}
	}
	for pattern, want := range map[string]string{"/job/{id}": "GET, PATCH, DELETE", "/queue/{name}/job": "GET, POST", "/health": "GET", "/nowhere": ""} {
		if got := Allow(pattern); got != want {
			t.Errorf("Allow(%q) = %q, want %q", pattern, got, want)
		}
	}
}
