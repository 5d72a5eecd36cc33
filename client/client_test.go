package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ocyless/ocyless/client"
	"github.com/ocyless/ocyless/client/internal/testserver"
)

// newClient starts a server and returns it with a client of it.
func newClient(t *testing.T) (*testserver.Server, *client.Client) {
	t.Helper()
	srv := testserver.New(t)
	c, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// must returns v, or fails the test given to the function it returns:
// must(c.Call(...))(t).
func must[T any](v T, err error) func(testing.TB) T {
	return func(tb testing.TB) T {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
}

// wantError checks that err is an *Error of status with text msg that
// matches sentinel.
func wantError(t *testing.T, what string, err error, status int, msg string, sentinel error) {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) || e.StatusCode != status || e.Message != msg || !errors.Is(err, sentinel) {
		t.Errorf("%s: error %v, want %d %q (%v)", what, err, status, msg, sentinel)
	}
}

func TestQueues(t *testing.T) {
	t.Parallel()
	_, c := newClient(t)
	ctx := t.Context()
	spec := client.QueueSpec{Timeout: new(10 * time.Minute), HeartbeatTimeout: new(time.Minute),
		ExpiresAfter: new(24 * time.Hour), Retries: new(uint64(3)), RetryDelays: []time.Duration{10 * time.Second, 90 * time.Second}}
	if created := must(c.PutQueue(ctx, "q", spec))(t); !created {
		t.Error("PutQueue of a new queue: created = false")
	}
	if created := must(c.PutQueue(ctx, "q", spec))(t); created {
		t.Error("PutQueue of an existing queue: created = true")
	}
	want := client.QueueSettings{Timeout: 10 * time.Minute, HeartbeatTimeout: time.Minute, ExpiresAfter: 24 * time.Hour,
		Retries: 3, RetryDelays: []time.Duration{10 * time.Second, 90 * time.Second}}
	if got := must(c.GetQueue(ctx, "q"))(t); !reflect.DeepEqual(*got, want) {
		t.Errorf("GetQueue = %+v, want %+v", *got, want)
	}
	must(c.PutQueue(ctx, "dlq", client.QueueSpec{}))(t)
	if got := must(c.GetQueue(ctx, "dlq"))(t); !reflect.DeepEqual(*got, client.QueueSettings{Timeout: 5 * time.Minute,
		ExpiresAfter: 5 * time.Minute, RetryDelays: []time.Duration{}}) {
		t.Errorf("a queue put without settings = %+v, want Ocypod's defaults", *got)
	}
	patch := client.QueuePatch{Retries: new(uint64(5)), Paused: new(true), Concurrency: new(uint64(2)),
		RateLimit:      &client.RateLimit{PerSecond: 2.5, Burst: 10},
		RetryBackoff:   &client.Backoff{Min: time.Second, Max: time.Minute, Factor: 3, NoJitter: true},
		TimeoutRetries: new(uint64(2)), DeadLetterQueue: "dlq"}
	if err := c.PatchQueue(ctx, "q", patch); err != nil {
		t.Fatal(err)
	}
	// A queue's retry_backoff replaces its retry_delays.
	want.Retries, want.Paused, want.Concurrency, want.RetryDelays = 5, true, 2, []time.Duration{}
	want.RateLimit = &client.RateLimit{PerSecond: 2.5, Burst: 10}
	want.RetryBackoff = &client.Backoff{Min: time.Second, Max: time.Minute, Factor: 3, NoJitter: true}
	want.TimeoutRetries, want.DeadLetterQueue = new(uint64(2)), "dlq"
	got := must(c.GetQueue(ctx, "q"))(t)
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("GetQueue after PatchQueue = %+v, want %+v", *got, want)
	}
	// PUT of the settings read back changes nothing.
	if created := must(c.PutQueue(ctx, "q", got.Spec()))(t); created {
		t.Error("PutQueue(Spec()) created the queue again")
	}
	if again := must(c.GetQueue(ctx, "q"))(t); !reflect.DeepEqual(again, got) {
		t.Errorf("after PutQueue(Spec()) = %+v, want %+v", *again, *got)
	}
	err := c.PatchQueue(ctx, "q", client.QueuePatch{Paused: new(false), Concurrency: new(uint64(0)), ClearRateLimit: true,
		ClearRetryBackoff: true, ClearTimeoutRetries: true, ClearDeadLetterQueue: true})
	if err != nil {
		t.Fatal(err)
	}
	want.Paused, want.Concurrency, want.RateLimit, want.RetryBackoff, want.TimeoutRetries, want.DeadLetterQueue = false, 0, nil, nil, nil, ""
	if got := must(c.GetQueue(ctx, "q"))(t); !reflect.DeepEqual(*got, want) {
		t.Errorf("GetQueue after clearing = %+v, want %+v", *got, want)
	}
	if names := must(c.ListQueues(ctx))(t); !slices.Equal(names, []string{"dlq", "q"}) {
		t.Errorf("ListQueues = %q", names)
	}
	if n := must(c.QueueSize(ctx, "q"))(t); n != 0 {
		t.Errorf("QueueSize = %d", n)
	}
	if ids := must(c.QueueJobIDs(ctx, "q"))(t); len(ids.Queued)+len(ids.Completed) != 0 || ids.Queued == nil {
		t.Errorf("QueueJobIDs of an empty queue = %+v", ids)
	}

	wantError(t, "PatchQueue of a missing queue", c.PatchQueue(ctx, "missing", client.QueuePatch{Paused: new(true)}),
		404, "Queue 'missing' does not exist", client.ErrNotFound)
	_, err = c.PutQueue(ctx, "bad name", client.QueueSpec{})
	wantError(t, "PutQueue with a bad name", err, 400, "Invalid queue name, valid characters: a-zA-Z0-9_.-", client.ErrBadRequest)
	_, err = c.PutQueue(ctx, "q", client.QueueSpec{Timeout: new(-time.Second)})
	if err == nil || client.StatusCode(err) != 0 {
		t.Errorf("PutQueue with a negative timeout = %v, want an error before any request", err)
	}
	if err := c.DeleteQueue(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	wantError(t, "DeleteQueue of a missing queue", c.DeleteQueue(ctx, "q"), 404, "", client.ErrNotFound)
	_, err = c.GetQueue(ctx, "q")
	wantError(t, "GetQueue of a missing queue", err, 404, "Queue 'q' does not exist", client.ErrNotFound)
	_, err = c.QueueJobIDs(ctx, "q")
	wantError(t, "QueueJobIDs of a missing queue", err, 404, "Queue 'q' does not exist", client.ErrNotFound)
}

func TestJobLifecycle(t *testing.T) {
	t.Parallel()
	_, c := newClient(t)
	ctx := t.Context()
	must(c.PutQueue(ctx, "q", client.QueueSpec{}))(t)
	spec := client.JobSpec{
		Input: json.RawMessage(`{"n":123456789012345678901234567890,"s":"x"}`), Tags: []string{"a", "b"},
		Timeout: new(time.Hour), HeartbeatTimeout: new(30 * time.Second), ExpiresAfter: new(48 * time.Hour),
		Retries: new(uint64(2)), RetryDelays: []time.Duration{5 * time.Second}, Priority: 7, Key: "k1",
		TimeoutRetries: new(uint64(1)), Tracked: true,
	}
	cr := must(c.CreateJob(ctx, "q", spec))(t)
	if cr.ID == 0 || cr.Existing {
		t.Fatalf("CreateJob = %+v", cr)
	}
	id := cr.ID
	j := must(c.GetJob(ctx, id))(t)
	if j.ID != id || j.Queue != "q" || j.Status != client.StatusQueued || !slices.Equal(j.Tags, []string{"a", "b"}) ||
		string(j.Input) != `{"n":123456789012345678901234567890,"s":"x"}` || j.Output != nil ||
		j.Timeout != time.Hour || j.HeartbeatTimeout != 30*time.Second || j.ExpiresAfter != 48*time.Hour ||
		j.Retries != 2 || !slices.Equal(j.RetryDelays, []time.Duration{5 * time.Second}) || j.Ended ||
		j.Priority != 7 || j.Key != "k1" || j.TimeoutRetries == nil || *j.TimeoutRetries != 1 || !j.Tracked ||
		j.CreatedAt.IsZero() || j.StartedAt != nil {
		t.Errorf("GetJob = %+v", j)
	}
	if st := must(c.JobStatus(ctx, id))(t); st != client.StatusQueued {
		t.Errorf("JobStatus = %s", st)
	}
	if ids := must(c.JobIDsByTag(ctx, "b"))(t); !slices.Equal(ids, []uint64{id}) {
		t.Errorf("JobIDsByTag = %v", ids)
	}
	if ids := must(c.QueueJobIDs(ctx, "q"))(t); !slices.Equal(ids.Queued, []uint64{id}) {
		t.Errorf("QueueJobIDs.Queued = %v", ids.Queued)
	}
	taken := must(c.TakeOne(ctx, "q", client.TakeOptions{Worker: "w1"}))(t)
	if taken == nil || taken.ID != id || taken.Attempt != 1 || taken.Queue != "q" || string(taken.Input) != string(j.Input) {
		t.Fatalf("TakeOne = %+v", taken)
	}
	if err := c.Heartbeat(ctx, id, 1); err != nil {
		t.Errorf("Heartbeat: %v", err)
	}
	if err := c.Heartbeat(ctx, id, 0); err != nil {
		t.Errorf("Heartbeat without fencing: %v", err)
	}
	wantError(t, "Heartbeat of another attempt", c.Heartbeat(ctx, id, 2), 409, "Job 1 attempt 2 is not current", client.ErrStaleAttempt)
	if err := c.SetJobOutput(ctx, id, 1, map[string]float64{"progress": 0.5}); err != nil {
		t.Errorf("SetJobOutput: %v", err)
	}
	if out := must(c.JobOutput(ctx, id))(t); string(out) != `{"progress":0.5}` {
		t.Errorf("JobOutput = %s", out)
	}
	wantError(t, "SetJobOutput of another attempt", c.SetJobOutput(ctx, id, 3, 1), 409, "Job 1 attempt 3 is not current", client.ErrStaleAttempt)
	if err := c.Complete(ctx, id, 1, map[string]bool{"done": true}); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	j = must(c.GetJob(ctx, id, "status", "output", "ended", "attempt", "worker", "history"))(t)
	if j.Status != client.StatusCompleted || string(j.Output) != `{"done":true}` || !j.Ended || j.Attempt != 1 ||
		j.Worker != "w1" || len(j.History) != 1 || j.History[0].Status != client.StatusCompleted || j.History[0].Worker != "w1" ||
		j.History[0].EndedAt == nil || j.Queue != "" {
		t.Errorf("GetJob(fields) after Complete = %+v", j)
	}
	err := c.Complete(ctx, id, 1, nil)
	wantError(t, "Complete twice", err, 409, "Cannot change status from completed to completed", client.ErrConflict)
	if errors.Is(err, client.ErrStaleAttempt) {
		t.Error("a transition conflict matches ErrStaleAttempt")
	}
	wantError(t, "Heartbeat of a completed job", c.Heartbeat(ctx, id, 0), 409, "Cannot heartbeat job 1, job is not running", client.ErrConflict)
	wantError(t, "SetJobOutput of a completed job", c.SetJobOutput(ctx, id, 0, 1), 409, "Can only set output for running jobs", client.ErrConflict)
	_, err = c.GetJob(ctx, id, "nope")
	wantError(t, "GetJob with an unknown field", err, 400, "Unrecognised field: nope", client.ErrBadRequest)
	info := must(c.Info(ctx))(t)
	if info.Queues["q"] != (client.QueueCounts{Completed: 1}) || info.Statistics.TotalJobsCreated != 1 || info.Statistics.TotalJobsCompleted != 1 {
		t.Errorf("Info = %+v", info)
	}
	if err := c.DeleteJob(ctx, id); err != nil {
		t.Fatal(err)
	}
	wantError(t, "DeleteJob twice", c.DeleteJob(ctx, id), 404, "", client.ErrNotFound)
	_, err = c.GetJob(ctx, id)
	wantError(t, "GetJob of a deleted job", err, 404, "Job with ID 1 does not exist", client.ErrNotFound)
	_, err = c.JobOutput(ctx, id)
	wantError(t, "JobOutput of a deleted job", err, 404, "Job with ID 1 does not exist", client.ErrNotFound)
	_, err = c.CreateJob(ctx, "missing", client.JobSpec{})
	wantError(t, "CreateJob in a missing queue", err, 404, "Queue 'missing' does not exist", client.ErrNotFound)
}

func TestCreateJobs(t *testing.T) {
	t.Parallel()
	_, c := newClient(t)
	ctx := t.Context()
	must(c.PutQueue(ctx, "q", client.QueueSpec{}))(t)
	ids := must(c.CreateJobs(ctx, "q", []client.JobSpec{{Input: 1}, {Input: 2, Priority: 5}, {Input: 3}}))(t)
	if !slices.Equal(ids, []uint64{1, 2, 3}) {
		t.Errorf("CreateJobs = %v", ids)
	}
	_, err := c.CreateJobs(ctx, "q", []client.JobSpec{{}, {Priority: 2000000}})
	wantError(t, "CreateJobs with a bad element", err, 400,
		"Invalid jobs[1]: Invalid priority: must be an integer from -1000000 to 1000000", client.ErrBadRequest)
	if n := must(c.QueueSize(ctx, "q"))(t); n != 3 {
		t.Errorf("QueueSize after a refused batch = %d, want 3", n)
	}
	jobs := must(c.Take(ctx, "q", client.TakeOptions{Count: 3}))(t)
	var inputs []string
	for _, j := range jobs {
		inputs = append(inputs, string(j.Input))
	}
	if !slices.Equal(inputs, []string{"2", "1", "3"}) {
		t.Errorf("taken inputs = %q, want the priority 5 job first", inputs)
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	_, c := newClient(t)
	ctx := t.Context()
	must(c.PutQueue(ctx, "q", client.QueueSpec{}))(t)
	first := must(c.CreateJob(ctx, "q", client.JobSpec{Key: "k", Input: "a"}))(t)
	if again := must(c.CreateJob(ctx, "q", client.JobSpec{Key: "k", Input: "b"}))(t); again != (client.Created{ID: first.ID, Existing: true}) {
		t.Errorf("a create with a pending job's key = %+v, want %d existing", again, first.ID)
	}
	upd := must(c.CreateJob(ctx, "q", client.JobSpec{Key: "k", Input: "c", OnConflict: client.OnConflictUpdate,
		UpdateRunAt: client.UpdateRunAtNever}))(t)
	if upd != (client.Created{ID: first.ID, Existing: true}) {
		t.Errorf("OnConflictUpdate = %+v", upd)
	}
	if j := must(c.GetJob(ctx, first.ID, "input"))(t); string(j.Input) != `"c"` {
		t.Errorf("input after OnConflictUpdate = %s", j.Input)
	}
	_, err := c.CreateJob(ctx, "q", client.JobSpec{Key: "k", OnConflict: client.OnConflictError})
	wantError(t, "OnConflictError", err, 409, "Job with key 'k' already exists: 1", client.ErrConflict)
	if page := must(c.ListQueueJobs(ctx, "q", client.ListOptions{Key: "k"}))(t); len(page.Jobs) != 1 || page.Jobs[0].ID != first.ID {
		t.Errorf("ListQueueJobs(key) = %+v", page)
	}
}

func TestTakes(t *testing.T) {
	t.Parallel()
	_, c := newClient(t)
	ctx := t.Context()
	must(c.PutQueue(ctx, "q", client.QueueSpec{}))(t)
	must(c.PutQueue(ctx, "empty", client.QueueSpec{}))(t)
	if jobs := must(c.Take(ctx, "q", client.TakeOptions{}))(t); jobs != nil {
		t.Errorf("Take of an empty queue = %+v", jobs)
	}
	if j := must(c.TakeOne(ctx, "q", client.TakeOptions{Wait: 200 * time.Millisecond}))(t); j != nil {
		t.Errorf("TakeOne with a wait on an empty queue = %+v", j)
	}
	must(c.CreateJobs(ctx, "q", []client.JobSpec{{Input: 1}, {Input: 2}, {Input: 3}}))(t)
	if jobs := must(c.Take(ctx, "q", client.TakeOptions{Count: 2, Worker: "w1"}))(t); len(jobs) != 2 || jobs[0].ID != 1 || jobs[1].ID != 2 {
		t.Errorf("Take(count 2) = %+v", jobs)
	}
	jobs := must(c.TakeFrom(ctx, []string{"empty", "q"}, client.OrderOrdered, client.TakeOptions{Count: 5, Worker: "w2"}))(t)
	if len(jobs) != 1 || jobs[0].ID != 3 || jobs[0].Queue != "q" || jobs[0].Attempt != 1 {
		t.Errorf("TakeFrom = %+v", jobs)
	}
	if jobs := must(c.TakeFrom(ctx, []string{"q", "empty"}, client.OrderRoundRobin, client.TakeOptions{}))(t); jobs != nil {
		t.Errorf("TakeFrom of empty queues = %+v", jobs)
	}
	_, err := c.TakeFrom(ctx, []string{"q", "missing"}, "", client.TakeOptions{})
	wantError(t, "TakeFrom with a missing queue", err, 404, "Queue 'missing' does not exist", client.ErrNotFound)
	_, err = c.Take(ctx, "q", client.TakeOptions{Count: 101})
	wantError(t, "Take of 101", err, 400, "Invalid count: must be an integer from 1 to 100", client.ErrBadRequest)
	_, err = c.Take(ctx, "q", client.TakeOptions{Wait: 21 * time.Second})
	wantError(t, "Take with a 21s wait", err, 400, "Invalid wait: must be at most 20s", client.ErrBadRequest)

	// A long poll answers with the job created while it waits.
	got := make(chan []client.TakenJob, 1)
	go func() {
		jobs, err := c.Take(ctx, "empty", client.TakeOptions{Wait: 1500 * time.Millisecond})
		if err != nil {
			t.Error(err)
		}
		got <- jobs
	}()
	id := must(c.CreateJob(ctx, "empty", client.JobSpec{Input: "late"}))(t).ID
	if jobs := <-got; len(jobs) != 1 || jobs[0].ID != id {
		t.Errorf("long poll = %+v, want job %d", jobs, id)
	}

	ws := must(c.Workers(ctx))(t)
	names := map[string]uint64{}
	for _, w := range ws {
		names[w.Name] = w.Running
		if w.LastSeen.IsZero() {
			t.Errorf("worker %q without last_seen", w.Name)
		}
	}
	if len(ws) != 2 || names["w1"] != 2 || names["w2"] != 1 {
		t.Errorf("Workers = %+v", ws)
	}
	if wj := must(c.WorkerJobs(ctx, "w1"))(t); !slices.Equal(wj.Running, []uint64{1, 2}) || len(wj.TimedOut) != 0 {
		t.Errorf("WorkerJobs(w1) = %+v", wj)
	}
	_, err = c.WorkerJobs(ctx, "nobody")
	wantError(t, "WorkerJobs of an unknown worker", err, 404, "Worker 'nobody' does not exist", client.ErrNotFound)
}

// TestCancelledTake: a take whose context ends returns the context's
// error.
func TestCancelledTake(t *testing.T) {
	t.Parallel()
	_, c := newClient(t)
	must(c.PutQueue(t.Context(), "q", client.QueueSpec{}))(t)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Take(ctx, "q", client.TakeOptions{Wait: 1500 * time.Millisecond}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Take past its deadline = %v, want context.DeadlineExceeded", err)
	}
}
