package client_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ocyless/ocyless/client"
)

// waitBound tells an answer woken by the job's end from one at the end of
// the 8 s waits below (generous: a loaded machine).
const waitBound = 3 * time.Second

// TestCreateAndWait: a job created and waited for is answered with its
// result when a worker completes it within the wait, with its id alone
// when nobody takes it; a bad wait is refused and creates nothing.
func TestCreateAndWait(t *testing.T) {
	t.Parallel()
	_, c := newClient(t)
	ctx := t.Context()
	for _, q := range []string{"sum", "idle"} {
		must(c.PutQueue(ctx, q, client.QueueSpec{}))(t)
	}
	worker := make(chan error, 1)
	go func() {
		j, err := c.TakeOne(ctx, "sum", client.TakeOptions{Wait: 8 * time.Second})
		if err == nil && j == nil {
			err = errors.New("nothing taken")
		}
		if err == nil {
			var in []int
			_ = json.Unmarshal(j.Input, &in)
			err = c.Complete(ctx, j.ID, j.Attempt, map[string]int{"sum": in[0] + in[1]})
		}
		worker <- err
	}()
	start := time.Now()
	r, err := c.CreateAndWait(ctx, "sum", client.JobSpec{Input: []int{1, 2}}, 8*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-worker; err != nil {
		t.Fatalf("worker: %v", err)
	}
	if el := time.Since(start); el > waitBound {
		t.Errorf("CreateAndWait answered after %v", el)
	}
	if !r.Ended || r.ID != 1 || r.Job == nil || r.Job.ID != 1 || r.Job.Status != client.StatusCompleted ||
		string(r.Job.Output) != `{"sum":3}` || r.Job.Error != nil {
		t.Fatalf("CreateAndWait = %+v (job %+v), want job 1 completed with its sum", r, r.Job)
	}

	// Nobody takes from idle: the id alone after the wait.
	start = time.Now()
	r = must(c.CreateAndWait(ctx, "idle", client.JobSpec{}, 300*time.Millisecond, "status"))(t)
	if el := time.Since(start); el < 300*time.Millisecond || el > waitBound {
		t.Errorf("a 300ms wait answered after %v", el)
	}
	if r.Ended || r.ID != 2 || r.Job != nil {
		t.Fatalf("CreateAndWait on a queue nobody takes from = %+v, want job 2 not ended", r)
	}

	_, err = c.CreateAndWait(ctx, "idle", client.JobSpec{}, 21*time.Second)
	wantError(t, "CreateAndWait(21s)", err, http.StatusBadRequest, "Invalid wait: must be at most 20s", client.ErrBadRequest)
	if n := must(c.QueueSize(ctx, "idle"))(t); n != 1 {
		t.Errorf("queue size after a refused create = %d, want 1", n)
	}
}

// TestWaitJob: WaitJob answers a job's end for good (not a failure that
// will be retried), the job as it is when the wait is over, and
// ErrNotFound for a missing job.
func TestWaitJob(t *testing.T) {
	t.Parallel()
	_, c := newClient(t)
	ctx := t.Context()
	must(c.PutQueue(ctx, "q", client.QueueSpec{Retries: new(uint64(1)), RetryDelays: []time.Duration{}}))(t)
	id := must(c.CreateJob(ctx, "q", client.JobSpec{}))(t).ID

	start := time.Now()
	j := must(c.WaitJob(ctx, id, 300*time.Millisecond, "status", "ended"))(t)
	if el := time.Since(start); el < 300*time.Millisecond || el > waitBound {
		t.Errorf("a 300ms wait answered after %v", el)
	}
	if j.Status != client.StatusQueued || j.Ended {
		t.Fatalf("WaitJob of a queued job = %+v", j)
	}

	got := make(chan *client.Job, 1)
	go func() {
		j, err := c.WaitJob(ctx, id, 8*time.Second, "status", "retries_attempted", "ended")
		if err != nil {
			t.Error(err)
		}
		got <- j
	}()
	tk := must(c.TakeOne(ctx, "q", client.TakeOptions{}))(t)
	if err := c.Fail(ctx, id, tk.Attempt, client.Failure{}); err != nil {
		t.Fatal(err)
	}
	tk = must(c.TakeOne(ctx, "q", client.TakeOptions{}))(t)
	start = time.Now()
	if err := c.Fail(ctx, id, tk.Attempt, client.Failure{}); err != nil {
		t.Fatal(err)
	}
	j = <-got
	if el := time.Since(start); el > waitBound {
		t.Errorf("WaitJob answered %v after the final failure", el)
	}
	if j == nil || j.Status != client.StatusFailed || j.RetriesAttempted != 1 || !j.Ended {
		t.Fatalf("WaitJob = %+v, want the job failed for good", j)
	}

	_, err := c.WaitJob(ctx, 99, time.Second)
	wantError(t, "WaitJob(99)", err, http.StatusNotFound, "Job with ID 99 does not exist", client.ErrNotFound)
}
