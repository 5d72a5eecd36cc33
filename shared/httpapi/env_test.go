package httpapi

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// t0 is the test clock's start: microseconds, as the store keeps them.
var t0 = time.Date(2024, 3, 1, 10, 0, 0, 123456000, time.UTC)

// testEnv is an API over the real store, on the shared private
// redis-server, in a namespace of its own.
type testEnv struct {
	api   *API
	h     http.Handler
	clock *redistest.Clock
	logs  *logRecorder
	// snapshot renders every key of the namespace (redistest.Snapshot).
	snapshot func(tb testing.TB) map[string]string
}

func newEnv(tb testing.TB, opts Options) *testEnv {
	tb.Helper()
	return newEnvWith(tb, opts, redisstore.Options{})
}

// newEnvWith is newEnv with store options (its namespace and clock are the
// environment's).
func newEnvWith(tb testing.TB, opts Options, so redisstore.Options) *testEnv {
	tb.Helper()
	rdb := redistest.Shared(tb).Client()
	ns := redistest.Namespace(tb)
	clock := redistest.NewClock(t0)
	so.Namespace, so.Now = ns, clock.Now
	store, err := redisstore.New(rdb, so)
	if err != nil {
		tb.Fatalf("redisstore.New: %v", err)
	}
	logs := &logRecorder{tb: tb}
	opts.Logger = slog.New(logs)
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	api := New(store, opts)
	snapshot := func(tb testing.TB) map[string]string {
		// Every key of a namespace starts with "{<ns>}:" with one
		// partition, "{<ns>:<p>:..." with more (redisstore's layout).
		return redistest.Snapshot(tb, rdb, "{"+ns+"}:*", "{"+ns+":*")
	}
	return &testEnv{api: api, h: api.Handler(), clock: clock, logs: logs, snapshot: snapshot}
}

// must sends a request and fails tb unless the status is want.
func (e *testEnv) must(tb testing.TB, method, target, body string, want int) string {
	tb.Helper()
	w := do(e.h, method, target, body)
	if w.Code != want {
		tb.Fatalf("%s %s %s = %d %q, want %d", method, target, body, w.Code, w.Body, want)
	}
	return w.Body.String()
}

// seedQueue creates queue name with the given settings body.
func (e *testEnv) seedQueue(tb testing.TB, name, settings string) {
	tb.Helper()
	e.must(tb, http.MethodPut, "/queue/"+name, settings, http.StatusCreated)
}

// seedJob creates a job on queue and returns its id as the body gave it.
func (e *testEnv) seedJob(tb testing.TB, queue, spec string) string {
	tb.Helper()
	return e.must(tb, http.MethodPost, "/queue/"+queue+"/job", spec, http.StatusCreated)
}

// take takes the next job of queue and returns the response body.
func (e *testEnv) take(tb testing.TB, queue string) string {
	tb.Helper()
	return e.must(tb, http.MethodGet, "/queue/"+queue+"/job", "", http.StatusOK)
}
