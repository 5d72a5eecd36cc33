package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/client"
	"github.com/ocyless/ocyless/shared/sweep"
)

// TestCompletesWithinConcurrency runs 12 jobs on 3 handler slots: every
// job completes with its handler's output, exactly 3 handlers run at once
// (the first three wait for each other), never more.
func TestCompletesWithinConcurrency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue(t, "q", client.QueueSpec{})
	const n, slots = 12, 3
	ids := map[uint64]int{}
	for i := range n {
		ids[e.create(t, "q", client.JobSpec{Input: map[string]int{"n": i}})] = i
	}
	var mu sync.Mutex
	running, most, started := 0, 0, 0
	firstThree := make(chan struct{})
	onFinish, outcomes := finishes()
	w, err := New(e.c, func(ctx context.Context, job *Job) (any, error) {
		mu.Lock()
		running++
		most = max(most, running)
		started++
		if started == slots {
			close(firstThree)
		}
		mu.Unlock()
		defer func() {
			mu.Lock()
			running--
			mu.Unlock()
		}()
		select {
		case <-firstThree:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		var in struct{ N int }
		if err := job.Decode(&in); err != nil {
			return nil, err
		}
		return map[string]int{"double": 2 * in.N}, nil
	}, Options{Queues: []string{"q"}, Wait: time.Second, Concurrency: slots, HeartbeatInterval: -1, OnFinish: onFinish})
	if err != nil {
		t.Fatal(err)
	}
	stop := start(t, w)
	for range n {
		if o := await(t, outcomes, "finished job"); o.err != nil {
			t.Errorf("job %d: %v", o.job.ID, o.err)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if most != slots {
		t.Errorf("at most %d handlers ran at once, want %d", most, slots)
	}
	for id, i := range ids {
		j := e.job(t, id, "status", "output", "worker")
		if j.Status != client.StatusCompleted || string(j.Output) != fmt.Sprintf(`{"double":%d}`, 2*i) || j.Worker != w.Name() {
			t.Errorf("job %d = %s %s by %q, want completed {\"double\":%d} by %q", id, j.Status, j.Output, j.Worker, 2*i, w.Name())
		}
	}
}

// TestCompleteTakesNext: with one slot and five queued jobs, the long poll
// hands over the first job and each completion takes the next one in the
// same request.
func TestCompleteTakesNext(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue(t, "q", client.QueueSpec{})
	for range 5 {
		e.create(t, "q", client.JobSpec{})
	}
	onFinish, outcomes := finishes()
	w, err := New(e.c, func(context.Context, *Job) (any, error) { return nil, nil },
		Options{Queues: []string{"q"}, Wait: time.Second, OnFinish: onFinish})
	if err != nil {
		t.Fatal(err)
	}
	stop := start(t, w)
	for range 5 {
		await(t, outcomes, "finished job")
	}
	_ = stop()
	// Handlers this quick never need the job's heartbeat_timeout.
	if got := e.rec.count("GET /job/"); got != 0 {
		t.Errorf("%d reads of a job, want none", got)
	}
	if got := e.rec.count("GET /queue/q/job?", " 200"); got != 1 {
		t.Errorf("%d takes answered a job, want 1", got)
	}
	if got := e.rec.count("PATCH /job/", ""); got != 5 {
		t.Errorf("%d PATCH requests, want 5", got)
	}
	if got := e.rec.count("PATCH /job/", "take=q", " 200"); got != 4 {
		t.Errorf("%d completions took the next job, want 4", got)
	}
	if got := e.rec.count("PATCH /job/", "take=q", " 204"); got != 1 {
		t.Errorf("%d completions found nothing to take, want 1", got)
	}
}

// TestHeartbeats: the worker heartbeats every third of the job's
// heartbeat_timeout, which keeps the job running past it; once the job
// timed out anyway, the next heartbeat ends the handler's context with
// ErrJobLost and its result is dropped.
func TestHeartbeats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue(t, "q", client.QueueSpec{HeartbeatTimeout: new(3 * time.Second)})
	id := e.create(t, "q", client.JobSpec{})
	inHandler := make(chan struct{})
	cause := make(chan error, 1)
	onFinish, outcomes := finishes()
	w, err := New(e.c, func(ctx context.Context, job *Job) (any, error) {
		close(inHandler)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return "too late", nil
	}, Options{Queues: []string{"q"}, Wait: time.Second, OnFinish: onFinish})
	if err != nil {
		t.Fatal(err)
	}
	ticker := useFakeTicker(w)
	beats := e.rec.watch()
	start(t, w)
	await(t, inHandler, "handler start")
	if d := await(t, ticker.made, "heartbeat ticker"); d != time.Second {
		t.Fatalf("heartbeat interval = %s, want 1s (heartbeat_timeout 3s / 3)", d)
	}
	beat := func(want string) {
		t.Helper()
		ticker.tick <- time.Now()
		for {
			line := await(t, beats, "heartbeat")
			if strings.HasPrefix(line, fmt.Sprintf("PUT /job/%d/heartbeat?attempt=1 ", id)) {
				if !strings.HasSuffix(line, want) {
					t.Fatalf("%s, want status %s", line, want)
				}
				return
			}
		}
	}
	for range 3 { // 7.5s in all, never 2.5s without a heartbeat
		e.srv.Advance(2500 * time.Millisecond)
		beat("204")
	}
	if err := e.srv.Sweep(t.Context(), sweep.Timeouts); err != nil {
		t.Fatal(err)
	}
	if j := e.job(t, id, "status"); j.Status != client.StatusRunning {
		t.Fatalf("after 7.5s with heartbeats every 2.5s the job is %s, want running", j.Status)
	}
	e.srv.Advance(10 * time.Second)
	if err := e.srv.Sweep(t.Context(), sweep.Timeouts); err != nil {
		t.Fatal(err)
	}
	beat("409")
	if c := await(t, cause, "handler cancellation"); !errors.Is(c, ErrJobLost) {
		t.Errorf("handler context cause = %v, want ErrJobLost", c)
	}
	if o := await(t, outcomes, "finished job"); !errors.Is(o.err, ErrJobLost) {
		t.Errorf("OnFinish err = %v, want ErrJobLost", o.err)
	}
	if j := e.job(t, id, "status", "output"); j.Status != client.StatusTimedOut || j.Output != nil {
		t.Errorf("job = %s %s, want timed_out without output", j.Status, j.Output)
	}
}

// TestHeartbeatInterval: an explicit interval is used as it is, a job
// without heartbeat_timeout gets no heartbeats, a negative interval none.
func TestHeartbeatInterval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		interval time.Duration
		jobHB    time.Duration
		want     time.Duration // 0: no ticker
	}{
		{"explicit", 250 * time.Millisecond, 30 * time.Second, 250 * time.Millisecond},
		{"from the job", 0, 90 * time.Second, 30 * time.Second},
		{"job without heartbeat_timeout", 0, 0, 0},
		{"off", -1, 30 * time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.queue(t, "q", client.QueueSpec{})
			e.create(t, "q", client.JobSpec{HeartbeatTimeout: new(tc.jobHB)})
			onFinish, outcomes := finishes()
			var ticker *fakeTicker
			got := make(chan time.Duration, 1)
			lines := e.rec.watch()
			w, err := New(e.c, func(context.Context, *Job) (any, error) {
				// Heartbeats start while the handler runs: wait for the
				// ticker, or for the worker to have read the job's
				// heartbeat_timeout.
				timeout := time.After(30 * time.Second)
				switch {
				case tc.want != 0:
					select {
					case d := <-ticker.made:
						got <- d
					case <-timeout:
						got <- 0
					}
				case tc.interval == 0:
					for {
						select {
						case line := <-lines:
							if !strings.HasPrefix(line, "GET /job/1?fields=heartbeat_timeout ") {
								continue
							}
						case <-timeout:
						}
						break
					}
				}
				return nil, nil
			}, Options{Queues: []string{"q"}, Wait: time.Second, HeartbeatInterval: tc.interval, OnFinish: onFinish})
			if err != nil {
				t.Fatal(err)
			}
			ticker = useFakeTicker(w)
			stop := start(t, w)
			await(t, outcomes, "finished job")
			if tc.want != 0 {
				if d := <-got; d != tc.want {
					t.Errorf("interval = %s, want %s", d, tc.want)
				}
			}
			_ = stop()
			select {
			case d := <-ticker.made:
				t.Errorf("a ticker of %s was made, want none", d)
			default:
			}
		})
	}
}

// TestShutdown: once Run's context ends, no job is taken; a handler that
// finishes within the grace period completes its job, one still running
// after it is released (failed with an immediate retry) and its context
// ends with ErrShutdown.
func TestShutdown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue(t, "q", client.QueueSpec{Retries: new(uint64(1))})
	quick := e.create(t, "q", client.JobSpec{Input: "quick"})
	slow := e.create(t, "q", client.JobSpec{Input: "slow"})
	started := make(chan string, 2)
	finishQuick := make(chan struct{})
	slowCause := make(chan error, 1)
	onFinish, outcomes := finishes()
	w, err := New(e.c, func(ctx context.Context, job *Job) (any, error) {
		var which string
		_ = job.Decode(&which)
		started <- which
		if which == "quick" {
			<-finishQuick
			return "done", nil
		}
		<-ctx.Done()
		slowCause <- context.Cause(ctx)
		return "too late", nil
	}, Options{Queues: []string{"q"}, Wait: time.Second, Concurrency: 2, HeartbeatInterval: -1, ShutdownGrace: 2 * time.Second, OnFinish: onFinish})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- w.Run(ctx) }()
	await(t, started, "handler start")
	await(t, started, "handler start")
	// Stopping comes before the job created next and before the quick
	// handler returns, so its completion takes nothing.
	cancel()
	later := e.create(t, "q", client.JobSpec{Input: "later"})
	close(finishQuick)
	if err := await(t, stopped, "Run's return"); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if c := await(t, slowCause, "slow handler's cancellation"); !errors.Is(c, ErrShutdown) {
		t.Errorf("slow handler's context cause = %v, want ErrShutdown", c)
	}
	got := map[uint64]error{}
	for range 2 {
		o := await(t, outcomes, "finished job")
		got[o.job.ID] = o.err
	}
	if got[quick] != nil || !errors.Is(got[slow], ErrShutdown) {
		t.Errorf("OnFinish: quick %v, slow %v; want nil and ErrShutdown", got[quick], got[slow])
	}
	if j := e.job(t, quick, "status", "output"); j.Status != client.StatusCompleted || string(j.Output) != `"done"` {
		t.Errorf("quick job = %s %s, want completed \"done\"", j.Status, j.Output)
	}
	j := e.job(t, slow, "status", "ended", "history")
	if j.Status != client.StatusFailed || j.Ended || len(j.History) != 1 || j.History[0].Error == nil ||
		j.History[0].Error.Group != ShutdownGroup {
		t.Errorf("slow job = %s ended=%v history %+v, want failed for a retry with a %s error", j.Status, j.Ended, j.History, ShutdownGroup)
	}
	if st, _ := e.c.JobStatus(t.Context(), later); st != client.StatusQueued {
		t.Errorf("job created while stopping is %s, want queued", st)
	}
	// The released job is due at once: the next take gets it.
	jobs, err := e.c.Take(t.Context(), "q", client.TakeOptions{Count: 2})
	attempts := map[uint64]uint64{}
	for _, j := range jobs {
		attempts[j.ID] = j.Attempt
	}
	if err != nil || len(jobs) != 2 || attempts[slow] != 2 || attempts[later] != 1 {
		t.Errorf("take after shutdown = %+v, %v; want job %d (attempt 2) and %d", jobs, err, slow, later)
	}
}

// TestPanic: a panicking handler fails its job in the panic group, with
// the panic's value and stack in the message.
func TestPanic(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue(t, "q", client.QueueSpec{})
	id := e.create(t, "q", client.JobSpec{})
	onFinish, outcomes := finishes()
	w, err := New(e.c, func(context.Context, *Job) (any, error) { panic("boom") },
		Options{Queues: []string{"q"}, Wait: time.Second, HeartbeatInterval: -1, OnFinish: onFinish})
	if err != nil {
		t.Fatal(err)
	}
	stop := start(t, w)
	if o := await(t, outcomes, "finished job"); o.err == nil || !strings.HasPrefix(o.err.Error(), "panic: boom") {
		t.Errorf("OnFinish err = %v, want the panic", o.err)
	}
	_ = stop()
	j := e.job(t, id, "status", "ended", "error")
	if j.Status != client.StatusFailed || !j.Ended || j.Error == nil || j.Error.Group != PanicGroup ||
		!strings.HasPrefix(j.Error.Message, "panic: boom\n") || !strings.Contains(j.Error.Message, "worker_test.go") {
		t.Errorf("job = %s ended=%v error %+v, want failed for good in group panic with the stack", j.Status, j.Ended, j.Error)
	}
	if counts, err := e.c.Failures(t.Context()); err != nil || counts[PanicGroup] != 1 {
		t.Errorf("Failures = %v, %v; want panic: 1", counts, err)
	}
}

// TestFailures: a plain error is retried by the job's policy, Permanent
// fails for good in the group WithGroup names, RetryIn delays the retry.
func TestFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue(t, "q", client.QueueSpec{Retries: new(uint64(3)), RetryDelays: []time.Duration{0}})
	plain := e.create(t, "q", client.JobSpec{Input: "plain"})
	permanent := e.create(t, "q", client.JobSpec{Input: "permanent"})
	later := e.create(t, "q", client.JobSpec{Input: "later"})
	onFinish, outcomes := finishes()
	var mu sync.Mutex
	seen := map[string]int{}
	w, err := New(e.c, func(_ context.Context, job *Job) (any, error) {
		var which string
		_ = job.Decode(&which)
		mu.Lock()
		seen[which]++
		n := seen[which]
		mu.Unlock()
		switch {
		case which == "plain" && n == 1:
			return nil, errors.New("flaky")
		case which == "permanent":
			return nil, Permanent(WithGroup(errors.New("bad input"), "validation"))
		case which == "later":
			return nil, RetryIn(errors.New("rate limited"), time.Hour)
		}
		return "ok", nil
	}, Options{Queues: []string{"q"}, Wait: time.Second, HeartbeatInterval: -1, OnFinish: onFinish})
	if err != nil {
		t.Fatal(err)
	}
	stop := start(t, w)
	for range 4 { // plain twice, permanent and later once
		await(t, outcomes, "finished job")
	}
	_ = stop()
	if j := e.job(t, plain, "status", "retries_attempted", "history"); j.Status != client.StatusCompleted ||
		j.RetriesAttempted != 1 || len(j.History) != 2 || j.History[0].Error == nil ||
		*j.History[0].Error != (client.JobError{Group: DefaultGroup, Message: "flaky"}) {
		t.Errorf("plain job = %s after %d retries, history %+v; want completed after 1, first attempt failed \"flaky\"",
			j.Status, j.RetriesAttempted, j.History)
	}
	if j := e.job(t, permanent, "status", "ended", "error"); j.Status != client.StatusFailed || !j.Ended ||
		*j.Error != (client.JobError{Group: "validation", Message: "bad input"}) {
		t.Errorf("permanent job = %s ended=%v error %+v, want failed for good in group validation", j.Status, j.Ended, j.Error)
	}
	if j := e.job(t, later, "status", "ended"); j.Status != client.StatusFailed || j.Ended {
		t.Errorf("later job = %s ended=%v, want failed waiting for its retry", j.Status, j.Ended)
	}
	for _, step := range []struct {
		advance time.Duration
		want    client.Status
	}{{59 * time.Minute, client.StatusFailed}, {2 * time.Minute, client.StatusQueued}} {
		e.srv.Advance(step.advance)
		if err := e.srv.Sweep(t.Context(), sweep.Retries); err != nil {
			t.Fatal(err)
		}
		if st, err := e.c.JobStatus(t.Context(), later); st != step.want || err != nil {
			t.Errorf("RetryIn 1h job after a further %s = %s, %v; want %s", step.advance, st, err, step.want)
		}
	}
}
