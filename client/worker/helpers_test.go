package worker

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/client"
	"github.com/ocyless/ocyless/client/internal/testserver"
)

// recorder is a RoundTripper that keeps "METHOD /path?query STATUS" of
// every answered request and tells waiters about each.
type recorder struct {
	mu    sync.Mutex
	lines []string
	subs  []chan string
	// before, when set, may fail a request before it is sent; after may
	// replace a response the server gave.
	before func(req *http.Request) error
	after  func(req *http.Request, resp *http.Response) *http.Response
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	before := r.before
	r.mu.Unlock()
	if before != nil {
		if err := before(req); err != nil {
			r.record(req.Method + " " + req.URL.RequestURI() + " unsent")
			return nil, err
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	after := r.after
	r.mu.Unlock()
	if after != nil {
		resp = after(req, resp)
	}
	r.record(req.Method + " " + req.URL.RequestURI() + " " + resp.Status[:3])
	return resp, nil
}

func (r *recorder) record(line string) {
	r.mu.Lock()
	r.lines = append(r.lines, line)
	subs := append([]chan string(nil), r.subs...)
	r.mu.Unlock()
	for _, c := range subs {
		select {
		case c <- line:
		default:
		}
	}
}

// watch returns a channel receiving the lines answered from now on.
func (r *recorder) watch() <-chan string {
	c := make(chan string, 1000)
	r.mu.Lock()
	r.subs = append(r.subs, c)
	r.mu.Unlock()
	return c
}

// count returns how many recorded lines start with prefix and contain
// each of parts.
func (r *recorder) count(prefix string, parts ...string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
lines:
	for _, l := range r.lines {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		for _, p := range parts {
			if !strings.Contains(l, p) {
				continue lines
			}
		}
		n++
	}
	return n
}

// env is a server, a client of it through a recorder, and a queue.
type env struct {
	srv *testserver.Server
	c   *client.Client
	rec *recorder
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := testserver.New(t)
	rec := &recorder{}
	c, err := client.New(srv.URL, client.WithTransport(rec))
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, c: c, rec: rec}
}

func (e *env) queue(t *testing.T, name string, spec client.QueueSpec) {
	t.Helper()
	if _, err := e.c.PutQueue(t.Context(), name, spec); err != nil {
		t.Fatal(err)
	}
}

func (e *env) create(t *testing.T, queue string, spec client.JobSpec) uint64 {
	t.Helper()
	cr, err := e.c.CreateJob(t.Context(), queue, spec)
	if err != nil {
		t.Fatal(err)
	}
	return cr.ID
}

func (e *env) job(t *testing.T, id uint64, fields ...string) *client.Job {
	t.Helper()
	j, err := e.c.GetJob(t.Context(), id, fields...)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// outcome is one OnFinish call.
type outcome struct {
	job *Job
	err error
}

// start runs a worker until the test ends (or stop is called) and returns
// its outcomes channel and the function that stops it and returns Run's
// result.
func start(t *testing.T, w *Worker) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Error("Run did not return within a minute of its context's end")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// finishes returns an OnFinish sending to the returned channel.
func finishes() (func(*Job, error), chan outcome) {
	c := make(chan outcome, 100)
	return func(j *Job, err error) { c <- outcome{j, err} }, c
}

// await receives one value or fails the test after a generous limit.
func await[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s within 30s", what)
		panic("unreachable")
	}
}

// fakeTicker replaces a worker's heartbeat ticker: each ticker made
// reports its interval on made, and ticks when the test sends on tick.
type fakeTicker struct {
	made chan time.Duration
	tick chan time.Time
}

func useFakeTicker(w *Worker) *fakeTicker {
	f := &fakeTicker{made: make(chan time.Duration, 10), tick: make(chan time.Time)}
	w.newTicker = func(d time.Duration) (<-chan time.Time, func()) {
		f.made <- d
		return f.tick, func() {}
	}
	return f
}
