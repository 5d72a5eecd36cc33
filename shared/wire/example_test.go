package wire_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/ocyless/ocyless/shared/wire"
)

// A route table on a Router: handlers write their success and return their
// failure, which the one ErrorFunc answers. Paths are matched as sent, and
// wildcard segments arrive percent-decoded.
func ExampleNewRouter() {
	getQueue := func(w http.ResponseWriter, r *http.Request) error {
		if r.PathValue("name") == "missing" {
			return errors.New("no such queue")
		}
		_, err := fmt.Fprintf(w, "queue %q", r.PathValue("name"))
		return err
	}
	putQueue := func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	fail := func(w http.ResponseWriter, r *http.Request, err error) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, err.Error())
	}
	rt := wire.NewRouter([]wire.Route{
		{Method: http.MethodGet, Pattern: "/queue/{name}", Handler: getQueue},
		{Method: http.MethodPut, Pattern: "/queue/{name}", Handler: putQueue},
	}, fail)

	for _, req := range []struct{ method, target string }{
		{"GET", "/queue/a%20b"},
		{"GET", "/queue/missing"},
		{"DELETE", "/queue/a"},
		{"GET", "/queue/a/"},
		{"GET", "/queue/../queue/a"},
	} {
		w := httptest.NewRecorder()
		rt.ServeHTTP(w, httptest.NewRequest(req.method, req.target, nil))
		fmt.Printf("%s %s: %d %q Allow=%q\n", req.method, req.target, w.Code, w.Body, w.Header().Get("Allow"))
	}
	// Output:
	// GET /queue/a%20b: 200 "queue \"a b\"" Allow=""
	// GET /queue/missing: 404 "no such queue" Allow=""
	// DELETE /queue/a: 405 "" Allow="GET, PUT"
	// GET /queue/a/: 404 "" Allow=""
	// GET /queue/../queue/a: 404 "" Allow=""
}
