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
)

// TestBatches: a worker with BatchSize takes a batch in one request, then
// reports each batch and takes the next in one request: 200 jobs in
// batches of 10 cost one take and 20 reports, each job fenced by its
// attempt and completed or failed as its handler said.
func TestBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue(t, "q", client.QueueSpec{})
	const n, size = 200, 10
	ids := map[uint64]int{}
	for i := range n {
		ids[e.create(t, "q", client.JobSpec{Input: map[string]int{"n": i}})] = i
	}
	onFinish, outcomes := finishes()
	w, err := New(e.c, func(_ context.Context, job *Job) (any, error) {
		var in struct{ N int }
		if err := job.Decode(&in); err != nil {
			return nil, err
		}
		if in.N%7 == 0 {
			return nil, Permanent(fmt.Errorf("job %d: seven", in.N))
		}
		return map[string]int{"double": 2 * in.N}, nil
	}, Options{Queues: []string{"q"}, Wait: time.Second, BatchSize: size, HeartbeatInterval: -1, OnFinish: onFinish})
	if err != nil {
		t.Fatal(err)
	}
	stop := start(t, w)
	t.Cleanup(func() {
		if t.Failed() {
			e.rec.mu.Lock()
			t.Logf("requests:\n%s", strings.Join(e.rec.lines, "\n"))
			e.rec.mu.Unlock()
		}
	})
	for range n {
		o := await(t, outcomes, "finished job")
		if i := ids[o.job.ID]; (i%7 == 0) != (o.err != nil) {
			t.Errorf("job %d (n %d) finished with %v", o.job.ID, i, o.err)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if got := e.rec.count("GET /queue/q/job?", "count=10", " 200"); got != 1 {
		t.Errorf("%d takes answered jobs, want 1", got)
	}
	if got := e.rec.count("PATCH /jobs?", "take=q", "count=10", " 200"); got != n/size {
		t.Errorf("%d batch reports, want %d", got, n/size)
	}
	if got := e.rec.count("PATCH /job/") + e.rec.count("PUT /job/") + e.rec.count("GET /job/") + e.rec.count("POST /jobs/"); got != 0 {
		t.Errorf("%d requests about single jobs, want none:\n%s", got, strings.Join(e.rec.lines, "\n"))
	}
	for id, i := range ids {
		j := e.job(t, id, "status", "output", "worker")
		want, out := client.StatusCompleted, fmt.Sprintf(`{"double":%d}`, 2*i)
		if i%7 == 0 {
			want, out = client.StatusFailed, ""
		}
		if j.Status != want || string(j.Output) != out || j.Worker != w.Name() {
			t.Errorf("job %d = %s %s by %q, want %s %s", id, j.Status, j.Output, j.Worker, want, out)
		}
	}
}

// TestBatchHeartbeats: a batch's running jobs get their heartbeats in one
// request per beat; a job taken again since its attempt is lost (its
// handler's context ends with ErrJobLost) while the others go on.
func TestBatchHeartbeats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue(t, "q", client.QueueSpec{Retries: new(uint64(1))})
	for range 3 {
		e.create(t, "q", client.JobSpec{})
	}
	release := make(chan struct{})
	started, lostCh := make(chan uint64, 3), make(chan uint64, 3)
	var mu sync.Mutex
	lost := map[uint64]bool{}
	onFinish, outcomes := finishes()
	w, err := New(e.c, func(ctx context.Context, job *Job) (any, error) {
		started <- job.ID
		select {
		case <-release:
			return "done", nil
		case <-ctx.Done():
			mu.Lock()
			lost[job.ID] = errors.Is(context.Cause(ctx), ErrJobLost)
			mu.Unlock()
			lostCh <- job.ID
			return nil, ctx.Err()
		}
	}, Options{Queues: []string{"q"}, Wait: time.Second, BatchSize: 5, HeartbeatInterval: time.Hour, OnFinish: onFinish})
	if err != nil {
		t.Fatal(err)
	}
	ticker := useFakeTicker(w)
	start(t, w)
	var first uint64
	for i := range 3 {
		id := await(t, started, "started handler")
		if i == 0 {
			first = id
		}
	}
	await(t, ticker.made, "heartbeat ticker")
	// The first job is failed and taken again behind the worker's back:
	// its attempt 1 is no longer current.
	if _, err := e.c.UpdateJob(t.Context(), first, client.JobUpdate{Status: client.StatusFailed, RetryInSet: true}); err != nil {
		t.Fatal(err)
	}
	if j, err := e.c.TakeOne(t.Context(), "q", client.TakeOptions{}); err != nil || j == nil || j.ID != first {
		t.Fatalf("take again = %+v, %v", j, err)
	}
	watch := e.rec.watch()
	ticker.tick <- time.Now()
	for l := range watch {
		if strings.HasPrefix(l, "POST /jobs/heartbeat") {
			break
		}
	}
	if got := await(t, lostCh, "the lost job's handler"); got != first {
		t.Fatalf("handler of job %d ended, want job %d", got, first)
	}
	// The batch is reported once its other handlers return.
	close(release)
	for range 3 {
		o := await(t, outcomes, "finished job")
		if lostJob := o.job.ID == first; lostJob != errors.Is(o.err, ErrJobLost) || (!lostJob && o.err != nil) {
			t.Errorf("job %d: %v", o.job.ID, o.err)
		}
	}
	if got := e.rec.count("POST /jobs/heartbeat", " 200"); got != 1 {
		t.Errorf("%d heartbeat requests, want 1", got)
	}
	if got := e.rec.count("PUT /job/"); got != 0 {
		t.Errorf("%d single heartbeats, want none", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !lost[first] {
		t.Errorf("the first job's handler did not see ErrJobLost: %v", lost)
	}
}
