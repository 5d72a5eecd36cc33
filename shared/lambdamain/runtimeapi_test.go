package lambdamain_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeRuntime implements the part of the Lambda Runtime API
// (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html) that
// aws-lambda-go uses, so a real bootstrap can run under a test:
// GET  /2018-06-01/runtime/invocation/next
// POST /2018-06-01/runtime/invocation/{id}/response
// POST /2018-06-01/runtime/invocation/{id}/error
// POST /2018-06-01/runtime/init/error
type fakeRuntime struct {
	srv     *httptest.Server
	queue   chan *invocation
	initErr chan initError
	nexts   atomic.Int64 // GET .../next requests served with an event
	seq     atomic.Int64

	mu        sync.Mutex
	pending   map[string]*invocation
	firstNext time.Time // when the function first asked for an event: init is over
}

// invocation is one event in flight.
type invocation struct {
	id       string
	payload  []byte
	deadline time.Time
	done     chan invokeResult
}

// invokeResult is what the function posted back.
type invokeResult struct {
	Body      []byte
	IsError   bool
	ErrorType string // Lambda-Runtime-Function-Error-Type of an error
}

type initError struct {
	Body      []byte
	ErrorType string
}

func newFakeRuntime(t *testing.T) *fakeRuntime {
	f := &fakeRuntime{
		queue:   make(chan *invocation),
		initErr: make(chan initError, 1),
		pending: map[string]*invocation{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", f.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", f.respond(false))
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", f.respond(true))
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case f.initErr <- initError{body, r.Header.Get("Lambda-Runtime-Function-Error-Type")}:
		default:
		}
		w.WriteHeader(http.StatusAccepted)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// addr is the value of AWS_LAMBDA_RUNTIME_API.
func (f *fakeRuntime) addr() string { return strings.TrimPrefix(f.srv.URL, "http://") }

func (f *fakeRuntime) next(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if f.firstNext.IsZero() {
		f.firstNext = time.Now()
	}
	f.mu.Unlock()
	var inv *invocation
	select {
	case inv = <-f.queue:
	case <-r.Context().Done(): // the process went away
		return
	}
	f.nexts.Add(1)
	h := w.Header()
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:eu-west-1:123456789012:function:ocyless-test")
	h.Set("Lambda-Runtime-Trace-Id", "Root=1-6740a8c0-5f3b2c1d4e5f6a7b8c9d0e1f;Sampled=0")
	h.Set("Content-Type", "application/json")
	_, _ = w.Write(inv.payload)
}

func (f *fakeRuntime) respond(isError bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		inv := f.pending[r.PathValue("id")]
		delete(f.pending, r.PathValue("id"))
		f.mu.Unlock()
		if inv == nil {
			http.Error(w, "unknown request id", http.StatusBadRequest)
			return
		}
		inv.done <- invokeResult{Body: body, IsError: isError, ErrorType: r.Header.Get("Lambda-Runtime-Function-Error-Type")}
		w.WriteHeader(http.StatusAccepted)
	}
}

// invoke hands payload to the function, with an invocation deadline of
// timeout, and waits for its result.
func (f *fakeRuntime) invoke(ctx context.Context, payload []byte, timeout time.Duration) (invokeResult, error) {
	inv := &invocation{
		id:       fmt.Sprintf("req-%d", f.seq.Add(1)),
		payload:  payload,
		deadline: time.Now().Add(timeout),
		done:     make(chan invokeResult, 1),
	}
	f.mu.Lock()
	f.pending[inv.id] = inv
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	select {
	case f.queue <- inv:
	case <-ctx.Done():
		return invokeResult{}, fmt.Errorf("the function never asked for the next event: %w", ctx.Err())
	}
	select {
	case res := <-inv.done:
		return res, nil
	case <-ctx.Done():
		return invokeResult{}, fmt.Errorf("no result for %s: %w", inv.id, ctx.Err())
	}
}

// process is a bootstrap running under a fakeRuntime.
type process struct {
	name    string
	rt      *fakeRuntime
	cmd     *exec.Cmd
	out     *lockedBuffer
	exited  chan struct{}
	err     error // Wait's result, once exited is closed
	started time.Time
}

// initDuration is how long the process took from exec to its first request
// for an event (zero if it has not asked yet).
func (p *process) initDuration() time.Duration {
	p.rt.mu.Lock()
	defer p.rt.mu.Unlock()
	if p.rt.firstNext.IsZero() {
		return 0
	}
	return p.rt.firstNext.Sub(p.started)
}

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startProcess runs the bootstrap bin with env (plus the Runtime API's
// address) against a new fakeRuntime. The process is killed when the test
// ends; its output is logged if the test failed.
func startProcess(t *testing.T, name, bin string, env []string) *process {
	t.Helper()
	rt := newFakeRuntime(t)
	p := &process{name: name, rt: rt, out: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin)
	p.cmd.Env = append(env, "AWS_LAMBDA_RUNTIME_API="+rt.addr(), "AWS_LAMBDA_FUNCTION_NAME=ocyless-"+name)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, p.out)
		}
	})
	return p
}

// running reports whether the process is still alive.
func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}
