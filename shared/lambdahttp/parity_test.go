package lambdahttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ocyless/ocyless/shared/lambdahttp"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// TestSilentHandlerSameAnswer: a handler that writes nothing gets the same
// answer from the local server (net/http) as through the adapter. A route
// handler is answered by the route table's router, which turns silence into
// its 500 on both paths (the local server mounts the whole table, a function
// one route of it); a bare http.Handler gets net/http's empty 200 on both.
func TestSilentHandlerSameAnswer(t *testing.T) {
	t.Parallel()
	silent := func(http.ResponseWriter, *http.Request) error { return nil }
	fail := func(w http.ResponseWriter, _ *http.Request, _ error) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, ocypod.InternalMessage)
	}
	table := []wire.Route{{Method: http.MethodGet, Pattern: "/queue/{name}/size", Handler: silent}}
	bare := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	tests := []struct {
		name          string
		local, lambda http.Handler
		status        int
		body          string
	}{
		{"route", wire.NewRouter(table, fail), wire.NewRouteRouter(table, 0, fail), http.StatusInternalServerError, ocypod.InternalMessage},
		{"bare handler", bare, bare, http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.local)
			t.Cleanup(srv.Close)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/queue/q/size", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status || string(body) != tt.body {
				t.Errorf("local server: %d %q, want %d %q", resp.StatusCode, body, tt.status, tt.body)
			}
			got := invoke(t, lambdahttp.New(tt.lambda, nil), v2Event(t, http.MethodGet, "/queue/q/size", map[string]string{"name": "q"}))
			if got.StatusCode != resp.StatusCode || got.Body != string(body) {
				t.Errorf("adapter: %d %q, local server: %d %q; want the same answer", got.StatusCode, got.Body, resp.StatusCode, body)
			}
		})
	}
}
