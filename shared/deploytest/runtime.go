package deploytest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Runtime implements the part of the Lambda Runtime API
// (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html) that
// aws-lambda-go uses, so a real bootstrap can run under a test:
//
//	GET  /2018-06-01/runtime/invocation/next
//	POST /2018-06-01/runtime/invocation/{id}/response
//	POST /2018-06-01/runtime/invocation/{id}/error
//	POST /2018-06-01/runtime/init/error
//
// A GET .../next waits until Invoke hands it an event, as Lambda freezes
// an idle environment.
type Runtime struct {
	srv     *httptest.Server
	queue   chan *invocation
	initErr chan InitError
	served  atomic.Int64 // GET .../next requests answered with an event
	seq     atomic.Int64

	mu        sync.Mutex
	pending   map[string]*invocation
	firstNext time.Time // when the function first asked for an event: its init was over
}

type invocation struct {
	id       string
	payload  []byte
	deadline time.Time
	done     chan Result
}

// Result is what the function posted back for one event.
type Result struct {
	Body      []byte
	IsError   bool      // posted to .../error rather than .../response
	ErrorType string    // Lambda-Runtime-Function-Error-Type of an error
	At        time.Time // when the answer arrived
}

// InitError is what the function posted to .../init/error.
type InitError struct {
	Body      []byte
	ErrorType string
}

// NewRuntime starts a fake Runtime API, closed when the test ends.
func NewRuntime(tb testing.TB) *Runtime {
	tb.Helper()
	rt := &Runtime{
		queue:   make(chan *invocation),
		initErr: make(chan InitError, 1),
		pending: map[string]*invocation{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", rt.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", rt.respond(false))
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", rt.respond(true))
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case rt.initErr <- InitError{body, r.Header.Get("Lambda-Runtime-Function-Error-Type")}:
		default:
		}
		w.WriteHeader(http.StatusAccepted)
	})
	rt.srv = httptest.NewServer(mux)
	tb.Cleanup(rt.srv.Close)
	return rt
}

// Addr is the value of AWS_LAMBDA_RUNTIME_API.
func (rt *Runtime) Addr() string { return strings.TrimPrefix(rt.srv.URL, "http://") }

// Served is how many events the function has been handed.
func (rt *Runtime) Served() int64 { return rt.served.Load() }

// InitErrors delivers the first init error the function reports.
func (rt *Runtime) InitErrors() <-chan InitError { return rt.initErr }

// FirstNext is when the function first asked for an event (zero if it has
// not yet): the end of its init.
func (rt *Runtime) FirstNext() time.Time {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.firstNext
}

func (rt *Runtime) next(w http.ResponseWriter, r *http.Request) {
	rt.mu.Lock()
	if rt.firstNext.IsZero() {
		rt.firstNext = time.Now()
	}
	rt.mu.Unlock()
	var inv *invocation
	select {
	case inv = <-rt.queue:
	case <-r.Context().Done(): // the process went away
		return
	}
	rt.served.Add(1)
	h := w.Header()
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:eu-west-1:123456789012:function:ocyless-test")
	h.Set("Lambda-Runtime-Trace-Id", "Root=1-6740a8c0-5f3b2c1d4e5f6a7b8c9d0e1f;Sampled=0")
	h.Set("Content-Type", "application/json")
	_, _ = w.Write(inv.payload)
}

func (rt *Runtime) respond(isError bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		at := time.Now()
		rt.mu.Lock()
		inv := rt.pending[r.PathValue("id")]
		delete(rt.pending, r.PathValue("id"))
		rt.mu.Unlock()
		if inv == nil {
			http.Error(w, "unknown request id", http.StatusBadRequest)
			return
		}
		inv.done <- Result{Body: body, IsError: isError, ErrorType: r.Header.Get("Lambda-Runtime-Function-Error-Type"), At: at}
		w.WriteHeader(http.StatusAccepted)
	}
}

// Invoke hands payload to the function with an invocation deadline of
// timeout, and waits for its answer (at most timeout plus 5 s, or until
// ctx ends).
func (rt *Runtime) Invoke(ctx context.Context, payload []byte, timeout time.Duration) (Result, error) {
	return rt.invoke(ctx, payload, timeout, nil)
}

// invoke is Invoke that also gives up when gone is closed (the process
// running the function exited).
func (rt *Runtime) invoke(ctx context.Context, payload []byte, timeout time.Duration, gone <-chan struct{}) (Result, error) {
	inv := &invocation{
		id:       fmt.Sprintf("req-%d", rt.seq.Add(1)),
		payload:  payload,
		deadline: time.Now().Add(timeout),
		done:     make(chan Result, 1),
	}
	rt.mu.Lock()
	rt.pending[inv.id] = inv
	rt.mu.Unlock()
	defer func() {
		rt.mu.Lock()
		delete(rt.pending, inv.id)
		rt.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	select {
	case rt.queue <- inv:
	case <-gone:
		return Result{}, fmt.Errorf("the function exited before asking for %s", inv.id)
	case <-ctx.Done():
		return Result{}, fmt.Errorf("the function never asked for the next event: %w", ctx.Err())
	}
	select {
	case res := <-inv.done:
		return res, nil
	case <-gone:
		return Result{}, fmt.Errorf("the function exited without answering %s", inv.id)
	case <-ctx.Done():
		return Result{}, fmt.Errorf("no answer to %s: %w", inv.id, ctx.Err())
	}
}
