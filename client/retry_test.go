package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/client/internal/testserver"
)

// flaky is a proxy in front of a test server that answers the next
// statuses it was given itself (without forwarding), then forwards.
type flaky struct {
	mu       sync.Mutex
	statuses []int
	header   http.Header // added to each answer of its own
	seen     []string    // "METHOD /path" of every request
	proxy    http.Handler
}

func newFlaky(t *testing.T) (*flaky, *httptest.Server) {
	t.Helper()
	srv := testserver.New(t)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	f := &flaky{proxy: httputil.NewSingleHostReverseProxy(u)}
	front := httptest.NewServer(f)
	t.Cleanup(front.Close)
	return f, front
}

func (f *flaky) fail(statuses ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses = append(f.statuses, statuses...)
}

func (f *flaky) requests(method, path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range f.seen {
		if s == method+" "+path {
			n++
		}
	}
	return n
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.seen = append(f.seen, r.Method+" "+r.URL.Path)
	status := 0
	if len(f.statuses) > 0 {
		status, f.statuses = f.statuses[0], f.statuses[1:]
	}
	header := f.header
	f.mu.Unlock()
	if status == 0 {
		f.proxy.ServeHTTP(w, r)
		return
	}
	for k, v := range header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, "Failed to connect to Redis: timed out")
}

// recordSleeps makes c record its backoff waits instead of sleeping.
func recordSleeps(c *Client) *[]time.Duration {
	var mu sync.Mutex
	var sleeps []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		sleeps = append(sleeps, d)
		return ctx.Err()
	}
	return &sleeps
}

func newTestClient(t *testing.T, base string, opts ...Option) *Client {
	t.Helper()
	c, err := New(base, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRetries(t *testing.T) {
	t.Parallel()
	f, front := newFlaky(t)
	c := newTestClient(t, front.URL, WithRetries(3, 100*time.Millisecond))
	sleeps := recordSleeps(c)
	ctx := t.Context()
	if _, err := c.PutQueue(ctx, "q", QueueSpec{}); err != nil {
		t.Fatal(err)
	}

	// An idempotent call goes again after 503s, with growing waits.
	f.fail(503, 502, 504)
	if _, err := c.GetQueue(ctx, "q"); err != nil {
		t.Errorf("GetQueue after three failures = %v, want success", err)
	}
	if n := f.requests("GET", "/queue/q"); n != 4 {
		t.Errorf("GetQueue sent %d times, want 4", n)
	}
	if len(*sleeps) != 3 || (*sleeps)[0] < 50*time.Millisecond || (*sleeps)[0] >= 100*time.Millisecond ||
		(*sleeps)[2] < 200*time.Millisecond || (*sleeps)[2] >= 400*time.Millisecond {
		t.Errorf("backoff waits = %v, want 3 in [50ms,100ms), [100ms,200ms), [200ms,400ms)", *sleeps)
	}
	// Then it gives up with the last answer.
	f.fail(503, 503, 503, 503)
	_, err := c.GetQueue(ctx, "q")
	if !IsUnavailable(err) || f.requests("GET", "/queue/q") != 8 {
		t.Errorf("GetQueue after four failures = %v after %d requests, want a 503 after 4 more", err, f.requests("GET", "/queue/q"))
	}

	// A create is sent once, with a key or not: the 503 may have been
	// applied, and a worker may have taken the job before a repeat.
	for i, spec := range []JobSpec{{}, {Key: "k"}} {
		f.fail(503)
		if _, err := c.CreateJob(ctx, "q", spec); !IsUnavailable(err) || f.requests("POST", "/queue/q/job") != i+1 {
			t.Errorf("CreateJob(%+v) = %v after %d requests, want one 503", spec, err, f.requests("POST", "/queue/q/job"))
		}
	}
	f.fail(503)
	if _, err := c.CreateJobs(ctx, "q", []JobSpec{{Key: "b1"}, {Key: "b2"}}); !IsUnavailable(err) || f.requests("POST", "/queue/q/jobs") != 1 {
		t.Errorf("CreateJobs with keys = %v after %d requests, want one 503", err, f.requests("POST", "/queue/q/jobs"))
	}
	// Takes and updates are not sent again.
	f.fail(503)
	if _, err := c.Take(ctx, "q", TakeOptions{}); !IsUnavailable(err) || f.requests("GET", "/queue/q/job") != 1 {
		t.Errorf("Take = %v after %d requests, want one 503", err, f.requests("GET", "/queue/q/job"))
	}
	f.fail(503)
	if err := c.Cancel(ctx, 1); !IsUnavailable(err) || f.requests("PATCH", "/job/1") != 1 {
		t.Errorf("Cancel = %v after %d requests, want one 503", err, f.requests("PATCH", "/job/1"))
	}
	f.fail(503)
	if err := c.DeleteJob(ctx, 1); !IsUnavailable(err) || f.requests("DELETE", "/job/1") != 1 {
		t.Errorf("DeleteJob = %v after %d requests, want one 503", err, f.requests("DELETE", "/job/1"))
	}
	// A 429 refused the request before anything ran: anything goes again,
	// after at least the Retry-After the server asked for.
	f.mu.Lock()
	f.header = http.Header{"Retry-After": {"2"}}
	f.mu.Unlock()
	*sleeps = nil
	f.fail(429)
	if cr, err := c.CreateJob(ctx, "q", JobSpec{}); err != nil || cr.ID == 0 {
		t.Errorf("CreateJob after a 429 = %+v, %v", cr, err)
	}
	if len(*sleeps) != 1 || (*sleeps)[0] != 2*time.Second {
		t.Errorf("wait after a 429 with Retry-After: 2 = %v, want 2s", *sleeps)
	}
}

func TestRetriesOff(t *testing.T) {
	t.Parallel()
	f, front := newFlaky(t)
	c := newTestClient(t, front.URL, WithRetries(0, 0))
	f.fail(503)
	if _, err := c.ListQueues(t.Context()); !IsUnavailable(err) || f.requests("GET", "/queue") != 1 {
		t.Errorf("ListQueues without retries = %v after %d requests", err, f.requests("GET", "/queue"))
	}
}

// TestRetryStopsWithContext: a context that ends during the backoff ends
// the call.
func TestRetryStopsWithContext(t *testing.T) {
	t.Parallel()
	f, front := newFlaky(t)
	c := newTestClient(t, front.URL, WithRetries(5, time.Hour))
	ctx, cancel := context.WithCancel(t.Context())
	c.sleep = func(ctx context.Context, d time.Duration) error {
		cancel()
		return sleepCtx(ctx, d)
	}
	f.fail(503, 503)
	if _, err := c.ListQueues(ctx); !errors.Is(err, context.Canceled) || f.requests("GET", "/queue") != 1 {
		t.Errorf("ListQueues cancelled in its backoff = %v after %d requests", err, f.requests("GET", "/queue"))
	}
}

// TestConnectionFailures: a call that cannot reach the server goes again
// when it is idempotent, once otherwise.
func TestConnectionFailures(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var mu sync.Mutex
	sent := 0
	count := roundTripper(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		sent++
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	})
	c := newTestClient(t, "http://"+addr, WithTransport(count), WithRetries(2, time.Millisecond))
	recordSleeps(c)
	if err := c.Heartbeat(t.Context(), 1, 1); err == nil || StatusCode(err) != 0 {
		t.Errorf("Heartbeat to nowhere = %v", err)
	}
	if _, err := c.CreateJob(t.Context(), "q", JobSpec{}); err == nil {
		t.Error("CreateJob to nowhere succeeded")
	}
	if sent != 4 {
		t.Errorf("%d requests sent, want 3 heartbeats and 1 create", sent)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestSigningHook: a RoundTripper given with WithTransport sees every
// request with its body readable through GetBody, and can add headers; a
// base URL's path prefix is kept.
func TestSigningHook(t *testing.T) {
	t.Parallel()
	srv := testserver.New(t)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	var mu sync.Mutex
	var refused []string
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sum := sha256.Sum256(body)
		path, ok := strings.CutPrefix(r.URL.Path, "/prod")
		if !ok || r.Header.Get("X-Signature") != hex.EncodeToString(sum[:]) || r.Header.Get("User-Agent") != "tests/1" {
			mu.Lock()
			refused = append(refused, r.Method+" "+r.URL.Path)
			mu.Unlock()
			http.Error(w, `{"message":"Forbidden"}`, http.StatusForbidden)
			return
		}
		r.URL.Path, r.URL.RawPath = path, ""
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(gateway.Close)
	sign := roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		h := sha256.New()
		if r.GetBody != nil {
			b, err := r.GetBody()
			if err != nil {
				return nil, err
			}
			_, _ = io.Copy(h, b)
		}
		r.Header.Set("X-Signature", hex.EncodeToString(h.Sum(nil)))
		return http.DefaultTransport.RoundTrip(r)
	})
	hc := &http.Client{Timeout: 30 * time.Second}
	c := newTestClient(t, gateway.URL+"/prod/", WithHTTPClient(hc), WithTransport(sign), WithUserAgent("tests/1"))
	ctx := t.Context()
	if _, err := c.PutQueue(ctx, "q", QueueSpec{Retries: new(uint64(1))}); err != nil {
		t.Fatal(err)
	}
	if cr, err := c.CreateJob(ctx, "q", JobSpec{Input: "signed"}); err != nil || cr.ID != 1 {
		t.Fatalf("CreateJob through the gateway = %+v, %v", cr, err)
	}
	if j, err := c.GetJob(ctx, 1, "input"); err != nil || string(j.Input) != `"signed"` {
		t.Errorf("GetJob through the gateway = %+v, %v", j, err)
	}
	if hc.Transport != nil {
		t.Error("WithTransport changed the caller's http.Client")
	}
	unsigned := newTestClient(t, gateway.URL+"/prod")
	if _, err := unsigned.ListQueues(ctx); !errors.Is(err, ErrForbidden) {
		t.Errorf("an unsigned call = %v, want ErrForbidden", err)
	}
	if len(refused) != 1 {
		t.Errorf("the gateway refused %q, want only the unsigned call", refused)
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"", "127.0.0.1:8023", "ftp://host", "http://", "http://h/?q=1", "http://h/#f", "http://h/%zz"} {
		if _, err := New(base); err == nil {
			t.Errorf("New(%q) accepted", base)
		}
	}
	if _, err := New("http://h", WithRetries(-1, 0)); err == nil {
		t.Error("New accepted a negative retry count")
	}
}
