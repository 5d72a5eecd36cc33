package worker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/client"
	"github.com/ocyless/ocyless/shared/sweep"
)

// TestFencing: a job that timed out and was taken again by another worker
// cannot be completed by the first one; its result is dropped.
func TestFencing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue(t, "q", client.QueueSpec{Timeout: new(time.Second), Retries: new(uint64(1)), RetryDelays: []time.Duration{0}})
	id := e.create(t, "q", client.JobSpec{})
	started, finish := make(chan struct{}), make(chan struct{})
	onFinish, outcomes := finishes()
	w, err := New(e.c, func(context.Context, *Job) (any, error) {
		close(started)
		<-finish
		return "stale result", nil
	}, Options{Queues: []string{"q"}, Wait: time.Second, HeartbeatInterval: -1, OnFinish: onFinish})
	if err != nil {
		t.Fatal(err)
	}
	start(t, w)
	await(t, started, "handler start")
	e.srv.Advance(3 * time.Second)
	if err := e.srv.Sweep(t.Context(), sweep.Timeouts); err != nil {
		t.Fatal(err)
	}
	again, err := e.c.TakeOne(t.Context(), "q", client.TakeOptions{Worker: "other"})
	if err != nil || again == nil || again.ID != id || again.Attempt != 2 {
		t.Fatalf("take of the timed-out job = %+v, %v; want job %d attempt 2", again, err, id)
	}
	close(finish)
	o := await(t, outcomes, "finished job")
	if !errors.Is(o.err, ErrJobLost) || !errors.Is(o.err, client.ErrStaleAttempt) {
		t.Errorf("OnFinish err = %v, want ErrJobLost and client.ErrStaleAttempt", o.err)
	}
	j := e.job(t, id, "status", "attempt", "worker", "output")
	if j.Status != client.StatusRunning || j.Attempt != 2 || j.Worker != "other" || j.Output != nil {
		t.Errorf("job = %s attempt %d by %q output %s, want running attempt 2 by other, no output", j.Status, j.Attempt, j.Worker, j.Output)
	}
	if err := e.c.Complete(t.Context(), id, 2, "fresh"); err != nil {
		t.Errorf("the current attempt's completion: %v", err)
	}
}

// TestQueues: ordered queues are taken first one first, a completion takes
// from the first queue only; round-robin completions take nothing.
func TestQueues(t *testing.T) {
	t.Parallel()
	for _, order := range []client.Order{"", client.OrderRoundRobin} {
		t.Run(string(order), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.queue(t, "a", client.QueueSpec{})
			e.queue(t, "b", client.QueueSpec{})
			b1 := e.create(t, "b", client.JobSpec{})
			b2 := e.create(t, "b", client.JobSpec{})
			a1 := e.create(t, "a", client.JobSpec{})
			onFinish, outcomes := finishes()
			w, err := New(e.c, func(context.Context, *Job) (any, error) { return nil, nil },
				Options{Queues: []string{"a", "b"}, Order: order, Wait: time.Second, HeartbeatInterval: -1, OnFinish: onFinish})
			if err != nil {
				t.Fatal(err)
			}
			stop := start(t, w)
			var got []uint64
			for range 3 {
				o := await(t, outcomes, "finished job")
				if o.err != nil {
					t.Errorf("job %d: %v", o.job.ID, o.err)
				}
				got = append(got, o.job.ID)
			}
			_ = stop()
			if order == "" && (got[0] != a1 || got[1] != b1 || got[2] != b2) {
				t.Errorf("ordered: jobs ran in order %v, want %v", got, []uint64{a1, b1, b2})
			}
			takes := e.rec.count("PATCH /job/", "take=")
			if order == "" && takes != 3 || order != "" && takes != 0 {
				t.Errorf("%d completions took a job, want %d", takes, map[client.Order]int{"": 3}[order])
			}
			if n := e.rec.count("GET /job?", "queues=a%2Cb", " 200"); n < 1 {
				t.Errorf("no take over both queues answered a job")
			}
		})
	}
}

// TestTakeErrors: a take that fails (a missing queue) is logged and tried
// again after the backoff, until it works.
func TestTakeErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var logs syncBuffer
	onFinish, outcomes := finishes()
	w, err := New(e.c, func(context.Context, *Job) (any, error) { return "ok", nil },
		Options{Queues: []string{"later"}, Wait: time.Second, HeartbeatInterval: -1, ErrorBackoff: 10 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(&logs, nil)), OnFinish: onFinish})
	if err != nil {
		t.Fatal(err)
	}
	lines := e.rec.watch()
	start(t, w)
	for n := 0; n < 2; {
		if strings.HasPrefix(await(t, lines, "take"), "GET /queue/later/job?") {
			n++
		}
	}
	e.queue(t, "later", client.QueueSpec{})
	id := e.create(t, "later", client.JobSpec{})
	if o := await(t, outcomes, "finished job"); o.job.ID != id || o.err != nil {
		t.Errorf("OnFinish(%d, %v), want job %d completed", o.job.ID, o.err, id)
	}
	if !strings.Contains(logs.String(), `msg="take failed"`) || !strings.Contains(logs.String(), "Queue 'later' does not exist") {
		t.Errorf("logs do not tell the take failed:\n%s", logs.String())
	}
}

// TestOutputs: SetOutput writes progress (a nil output keeps it); an
// output that cannot be encoded, or that the server refuses, fails the
// job with the reason.
func TestOutputs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue(t, "q", client.QueueSpec{})
	progress := e.create(t, "q", client.JobSpec{Input: "progress"})
	unencodable := e.create(t, "q", client.JobSpec{Input: "unencodable"})
	huge := e.create(t, "q", client.JobSpec{Input: "huge"})
	onFinish, outcomes := finishes()
	w, err := New(e.c, func(ctx context.Context, job *Job) (any, error) {
		var which string
		_ = job.Decode(&which)
		switch which {
		case "progress":
			return nil, job.SetOutput(ctx, map[string]int{"progress": 50})
		case "unencodable":
			return make(chan int), nil
		}
		return strings.Repeat("x", 300<<10), nil
	}, Options{Queues: []string{"q"}, Wait: time.Second, HeartbeatInterval: -1, OnFinish: onFinish})
	if err != nil {
		t.Fatal(err)
	}
	stop := start(t, w)
	for range 3 {
		await(t, outcomes, "finished job")
	}
	_ = stop()
	if j := e.job(t, progress, "status", "output"); j.Status != client.StatusCompleted || string(j.Output) != `{"progress":50}` {
		t.Errorf("progress job = %s %s, want completed {\"progress\":50}", j.Status, j.Output)
	}
	for id, want := range map[uint64]string{unencodable: "json: unsupported type", huge: "413 Request Entity Too Large"} {
		j := e.job(t, id, "status", "error")
		if j.Status != client.StatusFailed || j.Error == nil || !strings.Contains(j.Error.Message, want) {
			t.Errorf("job %d = %s %+v, want failed with %q", id, j.Status, j.Error, want)
		}
	}
}

// TestReportRetried: a completion that meets an unreachable Redis, or
// that could not be sent, is sent again until it succeeds; one whose 503
// came after it was applied is a success once the job shows it completed;
// one whose job was cancelled meanwhile is a lost job.
func TestReportRetried(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"unavailable", "applied", "unreachable", "cancelled meanwhile"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.queue(t, "q", client.QueueSpec{})
			id := e.create(t, "q", client.JobSpec{})
			returning, proceed := make(chan struct{}), make(chan struct{})
			onFinish, outcomes := finishes()
			w, err := New(e.c, func(context.Context, *Job) (any, error) {
				close(returning)
				<-proceed
				return "ok", nil
			}, Options{Queues: []string{"q"}, Wait: time.Second, HeartbeatInterval: -1, OnFinish: onFinish})
			if err != nil {
				t.Fatal(err)
			}
			var once sync.Once
			switch mode {
			case "cancelled meanwhile":
				plain, err := client.New(e.srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				e.rec.before = func(req *http.Request) (err error) {
					if req.Method == http.MethodPatch {
						once.Do(func() {
							if cerr := plain.Cancel(req.Context(), id); cerr != nil {
								t.Error(cerr)
							}
							err = errors.New("connection reset")
						})
					}
					return err
				}
			case "unreachable":
				e.rec.before = func(req *http.Request) (err error) {
					if req.Method == http.MethodPatch {
						once.Do(func() { err = errors.New("connection reset") })
					}
					return err
				}
			case "applied":
				e.rec.after = func(req *http.Request, resp *http.Response) *http.Response {
					if req.Method != http.MethodPatch {
						return resp
					}
					replaced := resp
					once.Do(func() {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						replaced = &http.Response{StatusCode: 503, Status: "503 Service Unavailable", Header: http.Header{},
							Body: io.NopCloser(strings.NewReader("Failed to connect to Redis: timed out")), Request: req}
					})
					return replaced
				}
			}
			lines := e.rec.watch()
			start(t, w)
			await(t, returning, "handler")
			if mode == "unavailable" {
				e.srv.SetDown(true)
			}
			close(proceed)
			for {
				line := await(t, lines, "completion")
				if strings.HasPrefix(line, "PATCH /job/") && (strings.HasSuffix(line, " 503") || strings.HasSuffix(line, " unsent")) {
					break
				}
			}
			e.srv.SetDown(false)
			if mode == "cancelled meanwhile" {
				if o := await(t, outcomes, "finished job"); !errors.Is(o.err, ErrJobLost) {
					t.Errorf("OnFinish err = %v, want ErrJobLost", o.err)
				}
				if j := e.job(t, id, "status"); j.Status != client.StatusCancelled {
					t.Errorf("job = %s, want cancelled", j.Status)
				}
				return
			}
			if o := await(t, outcomes, "finished job"); o.err != nil {
				t.Errorf("OnFinish err = %v, want nil", o.err)
			}
			if j := e.job(t, id, "status", "output"); j.Status != client.StatusCompleted || string(j.Output) != `"ok"` {
				t.Errorf("job = %s %s, want completed \"ok\"", j.Status, j.Output)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	c, err := client.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	h := func(context.Context, *Job) (any, error) { return nil, nil }
	for name, o := range map[string]Options{
		"no queue":         {},
		"long name":        {Queues: []string{"q"}, Name: strings.Repeat("n", 129)},
		"unprintable name": {Queues: []string{"q"}, Name: "a\nb"},
		"wait over 20s":    {Queues: []string{"q"}, Wait: 21 * time.Second},
		"negative":         {Queues: []string{"q"}, Concurrency: -1},
	} {
		if _, err := New(c, h, o); err == nil {
			t.Errorf("%s: New accepted %+v", name, o)
		}
	}
	if _, err := New(c, nil, Options{Queues: []string{"q"}}); err == nil {
		t.Error("New accepted a nil handler")
	}
	w, err := New(c, h, Options{Queues: []string{"q"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := w.Name(); !printable(n, 128) || !strings.Contains(n, "-") {
		t.Errorf("default name %q", n)
	}
}

// TestRunOnce: a second Run while one runs is refused.
func TestRunOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue(t, "q", client.QueueSpec{})
	w, err := New(e.c, func(context.Context, *Job) (any, error) { return nil, nil },
		Options{Queues: []string{"q"}, Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lines := e.rec.watch()
	stop := start(t, w)
	await(t, lines, "first take") // Run is under way
	if err := w.Run(t.Context()); err == nil {
		t.Error("a second Run was accepted")
	}
	if err := stop(); err != nil {
		t.Errorf("Run = %v", err)
	}
}

// TestFailureHelpers checks how the helpers combine.
func TestFailureHelpers(t *testing.T) {
	t.Parallel()
	base := errors.New("x")
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for name, tc := range map[string]struct {
		err  error
		want failure
	}{
		"permanent in a group": {Permanent(WithGroup(base, "io")), failure{group: "io", permanent: true}},
		"retry at":             {RetryAt(Permanent(base), at), failure{retryAt: at}},
		"retry in":             {WithGroup(RetryIn(base, time.Minute), "g"), failure{group: "g", retryIn: time.Minute, hasIn: true}},
		"wrapped":              {Permanent(errors.Join(errors.New("ctx"), WithGroup(base, "io"))), failure{group: "io", permanent: true}},
	} {
		var f *failure
		if !errors.As(tc.err, &f) || !errors.Is(tc.err, base) {
			t.Errorf("%s: %v is no failure around the error", name, tc.err)
			continue
		}
		f.err = nil
		if *f != tc.want {
			t.Errorf("%s: %+v, want %+v", name, *f, tc.want)
		}
	}
	if Permanent(nil) != nil || RetryIn(nil, time.Second) != nil {
		t.Error("a helper turned a nil error into a failure")
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
