package dashboard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// server is an API under test: an httpapi handler stack (on httptest or a
// local server process) over a private redis-server.
type server struct {
	t   *testing.T
	url string // http://host:port, no trailing slash

	mu    sync.Mutex
	paths []string // the escaped paths of the requests served (httptest only)
}

// newServer serves every route of the table, the dashboard's included, on
// httptest, over a store of its own namespace.
func newServer(t *testing.T) *server {
	t.Helper()
	return newServerClock(t, nil)
}

// newServerClock is newServer with the store and the API on clock (nil:
// the real one).
func newServerClock(t *testing.T, clock *redistest.Clock) *server {
	t.Helper()
	var now func() time.Time
	if clock != nil {
		now = clock.Now
	}
	store, err := redisstore.New(redistest.Shared(t).Client(), redisstore.Options{Namespace: redistest.Namespace(t), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t}
	api := httpapi.New(store, httpapi.Options{Now: now}).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.Method+" "+r.URL.EscapedPath())
		s.mu.Unlock()
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// requests returns the requests served so far, as "METHOD /escaped/path".
func (s *server) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// do sends a request as a client that is not a browser would, and
// returns the status and body.
func (s *server) do(method, path, body string) (int, string) {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(s.t.Context(), method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// must sends a request and fails the test unless it answers want.
func (s *server) must(method, path, body string, want int) string {
	s.t.Helper()
	code, got := s.do(method, path, body)
	if code != want {
		s.t.Fatalf("%s %s %s = %d %q, want %d", method, path, body, code, got, want)
	}
	return got
}

// status is a job's status as the API reports it ("" when it is gone).
func (s *server) status(id string) string {
	s.t.Helper()
	code, body := s.do(http.MethodGet, "/job/"+id+"/status", "")
	switch code {
	case http.StatusOK:
		return strings.Trim(body, `"`)
	case http.StatusNotFound:
		return ""
	}
	s.t.Fatalf("GET /job/%s/status = %d %q", id, code, body)
	return ""
}
