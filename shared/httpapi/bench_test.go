//go:build unix

package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// BenchmarkHTTPLifecycle runs job lifecycles (POST job, GET next, PATCH
// completed) over loopback HTTP through the whole handler, with the local
// server's logging: info-level text lines to a pipe that another goroutine
// drains, as a terminal or a log collector would. Profile the request path
// with
//
//	go test -run '^$' -bench HTTPLifecycle -cpuprofile cpu.out ./shared/httpapi
func BenchmarkHTTPLifecycle(b *testing.B) {
	b.Run("log=info", func(b *testing.B) { benchLifecycle(b, true) })
	b.Run("log=none", func(b *testing.B) { benchLifecycle(b, false) })
}

func benchLifecycle(b *testing.B, logging bool) {
	rdb := redistest.Shared(b).Client()
	store, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(b)})
	if err != nil {
		b.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	drained := make(chan int64)
	go func() {
		n, _ := io.Copy(io.Discard, pr)
		drained <- n
	}()
	log := slog.New(slog.NewTextHandler(pw, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if !logging {
		log = slog.New(slog.DiscardHandler)
	}
	srv := httptest.NewServer(New(store, Options{Logger: log}).Handler())
	defer srv.Close()
	client := srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	send := func(method, path, body string, want int) ([]byte, error) {
		var rd io.Reader
		if body != "" {
			rd = bytes.NewReader([]byte(body))
		}
		req, err := http.NewRequestWithContext(b.Context(), method, srv.URL+path, rd)
		if err != nil {
			return nil, err
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != want {
			err = fmt.Errorf("%s %s = %d %s", method, path, resp.StatusCode, out)
		}
		return out, err
	}
	if _, err := send(http.MethodPut, "/queue/bench", `{}`, http.StatusCreated); err != nil {
		b.Fatal(err)
	}
	lifecycle := func() error {
		if _, err := send(http.MethodPost, "/queue/bench/job", `{"input":{"n":1}}`, http.StatusCreated); err != nil {
			return err
		}
		next, err := send(http.MethodGet, "/queue/bench/job", "", http.StatusOK)
		if err != nil {
			return err
		}
		// {"id":<id>,"input":...}
		end := bytes.IndexByte(next, ',')
		if end < 6 {
			return fmt.Errorf("next job %q", next)
		}
		id, err := strconv.ParseUint(string(next[6:end]), 10, 64)
		if err != nil {
			return fmt.Errorf("next job %q: %w", next, err)
		}
		_, err = send(http.MethodPatch, "/job/"+strconv.FormatUint(id, 10), `{"status":"completed"}`, http.StatusNoContent)
		return err
	}
	const clients = 50
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	b.ReportAllocs()
	cpu0 := processCPU(b)
	b.ResetTimer()
	for range clients {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := lifecycle(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	// The process's CPU: the server's and the clients', both in process.
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(3*b.N), "cpu-us/request")
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	srv.Close()
	pw.Close()
	if n := <-drained; logging && n == 0 {
		b.Fatal("no log line was written")
	}
}

// processCPU is the user and system CPU time this process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHandlerOnly runs the lifecycle's three requests through the
// handler on a store that answers at once: what httpapi and wire cost per
// request, logging included (to a discarding text handler), without
// net/http's connection handling and without Redis.
func BenchmarkHandlerOnly(b *testing.B) {
	store := &fakeStore{
		TakeFunc: func(context.Context, ocypod.TakeRequest) ([]ocypod.NextJob, error) {
			return []ocypod.NextJob{{ID: 12345, Queue: "bench", Input: []byte(`{"n":1}`), Attempt: 1}}, nil
		},
		CreateJobFunc: func(context.Context, string, ocypod.JobSpec) (ocypod.Created, error) {
			return ocypod.Created{ID: 12345}, nil
		},
	}
	store.calls = make([]string, 0, 3*b.N+8)
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h := New(store, Options{Logger: log}).Handler()
	var reqs []*http.Request
	var bodies []*bytes.Reader
	for _, rq := range []struct{ method, path, body string }{
		{http.MethodPost, "/queue/bench/job", `{"input":{"n":1}}`},
		{http.MethodGet, "/queue/bench/job", ""},
		{http.MethodPatch, "/job/12345", `{"status":"completed"}`},
	} {
		r := newRequest(rq.method, rq.path, rq.body)
		body := bytes.NewReader([]byte(rq.body))
		r.Body = io.NopCloser(body)
		reqs, bodies = append(reqs, r), append(bodies, body)
	}
	w := &nullWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		for i, r := range reqs {
			_, _ = bodies[i].Seek(0, io.SeekStart)
			clear(w.h)
			h.ServeHTTP(w, r)
		}
	}
}

// nullWriter is a ResponseWriter that keeps nothing.
type nullWriter struct{ h http.Header }

func (w *nullWriter) Header() http.Header         { return w.h }
func (w *nullWriter) WriteHeader(int)             {}
func (w *nullWriter) Write(b []byte) (int, error) { return len(b), nil }
