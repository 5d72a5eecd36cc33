package client_test

import (
	"slices"
	"testing"
	"time"

	"github.com/ocyless/ocyless/client"
)

func TestCompleteAndTake(t *testing.T) {
	t.Parallel()
	_, c := newClient(t)
	ctx := t.Context()
	must(c.PutQueue(ctx, "q", client.QueueSpec{}))(t)
	must(c.PutQueue(ctx, "next", client.QueueSpec{}))(t)
	must(c.CreateJobs(ctx, "q", []client.JobSpec{{Input: "a"}, {Input: "b"}}))(t)
	first := must(c.TakeOne(ctx, "q", client.TakeOptions{Worker: "w"}))(t)
	second := must(c.CompleteAndTake(ctx, first.ID, first.Attempt, "A", "q", client.TakeOptions{Worker: "w"}))(t)
	if second == nil || second.ID != 2 || string(second.Input) != `"b"` || second.Attempt != 1 || second.Queue != "q" {
		t.Fatalf("CompleteAndTake = %+v, want job 2", second)
	}
	if none := must(c.CompleteAndTake(ctx, second.ID, second.Attempt, nil, "q", client.TakeOptions{}))(t); none != nil {
		t.Errorf("CompleteAndTake on an empty queue = %+v", none)
	}
	if j := must(c.GetJob(ctx, 1, "status", "output"))(t); j.Status != client.StatusCompleted || string(j.Output) != `"A"` {
		t.Errorf("job 1 = %s %s", j.Status, j.Output)
	}

	// A completion with a follow-up job, and one that also takes.
	id := must(c.CreateJob(ctx, "q", client.JobSpec{Input: "c"}))(t).ID
	must(c.TakeOne(ctx, "q", client.TakeOptions{}))(t)
	res := must(c.UpdateJob(ctx, id, client.JobUpdate{Status: client.StatusCompleted,
		Next: &client.NextJob{Queue: "next", JobSpec: client.JobSpec{Input: "follow-up", Tags: []string{"chain"}}}}))(t)
	if res.NextID == 0 || res.Taken != nil {
		t.Fatalf("UpdateJob with next = %+v", res)
	}
	if j := must(c.GetJob(ctx, res.NextID, "queue", "input", "tags"))(t); j.Queue != "next" || string(j.Input) != `"follow-up"` ||
		!slices.Equal(j.Tags, []string{"chain"}) {
		t.Errorf("follow-up job = %+v", j)
	}
	followUp := res.NextID
	id = must(c.CreateJob(ctx, "q", client.JobSpec{}))(t).ID
	must(c.TakeOne(ctx, "q", client.TakeOptions{}))(t)
	res = must(c.UpdateJob(ctx, id, client.JobUpdate{Status: client.StatusCompleted, Next: &client.NextJob{Queue: "next"},
		Take: &client.TakeAfter{Queue: "next", TakeOptions: client.TakeOptions{Count: 5}}}))(t)
	if res.NextID == 0 || res.NextID == followUp || len(res.Taken) == 0 || res.Taken[0].ID != followUp {
		t.Errorf("UpdateJob with next and take = %+v, want a new job's id and job %d taken", res, followUp)
	}
	_, err := c.UpdateJob(ctx, 999, client.JobUpdate{Status: client.StatusCompleted})
	wantError(t, "UpdateJob of a missing job", err, 404, "Job with ID 999 does not exist", client.ErrNotFound)
	_, err = c.UpdateJob(ctx, id, client.JobUpdate{Status: client.StatusCancelled, Error: &client.JobError{Message: "x"}})
	wantError(t, "UpdateJob with an error and no failure", err, 400, "Invalid error: only with status failed or timed_out", client.ErrBadRequest)
}

func TestFailures(t *testing.T) {
	t.Parallel()
	srv, c := newClient(t)
	ctx := t.Context()
	must(c.PutQueue(ctx, "q", client.QueueSpec{Retries: new(uint64(2))}))(t)
	must(c.PutQueue(ctx, "other", client.QueueSpec{}))(t)
	ids := must(c.CreateJobs(ctx, "q", []client.JobSpec{{Input: 1}, {Input: 2}, {Input: 3}, {Input: 4}}))(t)
	must(c.Take(ctx, "q", client.TakeOptions{Count: 4}))(t)
	for _, id := range ids[:3] {
		if err := c.Fail(ctx, id, 1, client.Failure{Error: &client.JobError{Group: "io", Message: "disk"}, NoRetry: true}); err != nil {
			t.Fatal(err)
		}
	}
	at := srv.Now().Add(time.Hour).Truncate(time.Second)
	if err := c.Fail(ctx, ids[3], 1, client.Failure{RetryAt: at}); err != nil {
		t.Fatal(err)
	}
	if j := must(c.GetJob(ctx, ids[3], "status", "ended"))(t); j.Status != client.StatusFailed || j.Ended {
		t.Errorf("a failure with a retry time = %s ended=%v", j.Status, j.Ended)
	}
	if counts := must(c.Failures(ctx))(t); len(counts) != 1 || counts["io"] != 3 {
		t.Errorf("Failures = %v", counts)
	}
	page := must(c.FailureJobs(ctx, "io", client.FailureOptions{Limit: 2}))(t)
	if page.Total != 3 || len(page.Jobs) != 2 || page.NextCursor == "" || page.Jobs[0].Error == nil ||
		*page.Jobs[0].Error != (client.JobError{Group: "io", Message: "disk"}) {
		t.Errorf("FailureJobs = %+v", page)
	}
	var all []uint64
	for j, err := range c.AllFailureJobs(ctx, "io", client.FailureOptions{Limit: 1, Fields: []string{"id"}}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, j.ID)
	}
	if !slices.Equal(all, ids[:3]) {
		t.Errorf("AllFailureJobs = %v, want %v", all, ids[:3])
	}
	if page := must(c.FailureJobs(ctx, "unknown", client.FailureOptions{}))(t); page.Total != 0 || len(page.Jobs) != 0 || page.NextCursor != "" {
		t.Errorf("FailureJobs of an unknown group = %+v", page)
	}
	if n := must(c.RetryFailures(ctx, "io", 1, "other"))(t); n != 1 {
		t.Errorf("RetryFailures(limit 1) = %d", n)
	}
	if n := must(c.RetryFailures(ctx, "io", 0, ""))(t); n != 2 {
		t.Errorf("RetryFailures = %d", n)
	}
	if n := must(c.QueueSize(ctx, "other"))(t); n != 1 {
		t.Errorf("queue other holds %d jobs, want the one retried into it", n)
	}
	_, err := c.RetryFailures(ctx, "io", 0, "missing")
	wantError(t, "RetryFailures into a missing queue", err, 404, "Queue 'missing' does not exist", client.ErrNotFound)
}

func TestRetryJob(t *testing.T) {
	t.Parallel()
	_, c := newClient(t)
	ctx := t.Context()
	must(c.PutQueue(ctx, "q", client.QueueSpec{Retries: new(uint64(2))}))(t)
	id := must(c.CreateJob(ctx, "q", client.JobSpec{}))(t).ID
	_, err := c.RetryJob(ctx, id, client.RetryOptions{})
	wantError(t, "RetryJob of a queued job", err, 409, "Cannot change status from queued to queued", client.ErrConflict)
	must(c.TakeOne(ctx, "q", client.TakeOptions{}))(t)
	if r := must(c.RetryJob(ctx, id, client.RetryOptions{}))(t); r != (client.RetryResult{Status: client.StatusQueued, RetriesAttempted: 1}) {
		t.Errorf("RetryJob = %+v", r)
	}
	must(c.TakeOne(ctx, "q", client.TakeOptions{}))(t)
	if r := must(c.RetryJob(ctx, id, client.RetryOptions{Delay: time.Hour}))(t); r != (client.RetryResult{Status: client.StatusScheduled, RetriesAttempted: 2}) {
		t.Errorf("RetryJob with a delay = %+v", r)
	}
	if j := must(c.GetJob(ctx, id, "run_at"))(t); j.RunAt == nil {
		t.Error("a retry with a delay has no run_at")
	}
	if err := c.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	if r := must(c.RetryJob(ctx, id, client.RetryOptions{RunAt: time.Now().Add(time.Hour)}))(t); r.Status != client.StatusFailed {
		t.Errorf("RetryJob with no retry left = %+v, want failed", r)
	}
}

func TestPendingChanges(t *testing.T) {
	t.Parallel()
	srv, c := newClient(t)
	ctx := t.Context()
	must(c.PutQueue(ctx, "q", client.QueueSpec{}))(t)
	dep := must(c.CreateJob(ctx, "q", client.JobSpec{Input: "dep"}))(t).ID
	waiting := must(c.CreateJob(ctx, "q", client.JobSpec{DependsOn: []uint64{dep}}))(t).ID
	later := must(c.CreateJob(ctx, "q", client.JobSpec{RunAt: srv.Now().Add(time.Hour)}))(t).ID
	delayed := must(c.CreateJob(ctx, "q", client.JobSpec{Delay: time.Hour}))(t).ID
	for id, want := range map[uint64]client.Status{waiting: client.StatusWaiting, later: client.StatusScheduled, delayed: client.StatusScheduled} {
		if st := must(c.JobStatus(ctx, id))(t); st != want {
			t.Errorf("job %d = %s, want %s", id, st, want)
		}
	}
	if _, err := c.UpdateJob(ctx, later, client.JobUpdate{Priority: new(int64(9)), Delay: time.Minute, Tags: []string{"x"},
		Tracked: new(true)}); err != nil {
		t.Fatal(err)
	}
	j := must(c.GetJob(ctx, later, "priority", "run_at", "tags", "tracked"))(t)
	if j.Priority != 9 || j.RunAt == nil || j.RunAt.After(srv.Now().Add(2*time.Minute)) || !slices.Equal(j.Tags, []string{"x"}) || !j.Tracked {
		t.Errorf("changed job = %+v", j)
	}
	if page := must(c.ListJobs(ctx, client.ListOptions{Tracked: new(true), Fields: []string{"id"}}))(t); len(page.Jobs) != 1 || page.Jobs[0].ID != later {
		t.Errorf("ListJobs(tracked) = %+v", page)
	}
	if _, err := c.UpdateJob(ctx, waiting, client.JobUpdate{DependsOn: []uint64{}}); err != nil {
		t.Fatal(err)
	}
	if st := must(c.JobStatus(ctx, waiting))(t); st != client.StatusQueued {
		t.Errorf("a job whose dependencies were cleared is %s, want queued", st)
	}
	if err := c.Cancel(ctx, delayed); err != nil {
		t.Fatal(err)
	}
	if st := must(c.JobStatus(ctx, delayed))(t); st != client.StatusCancelled {
		t.Errorf("a cancelled job is %s", st)
	}
	if err := c.Requeue(ctx, delayed); err != nil {
		t.Fatal(err)
	}
	// Its delay still runs.
	if st := must(c.JobStatus(ctx, delayed))(t); st != client.StatusScheduled {
		t.Errorf("a requeued job with a delay is %s, want scheduled", st)
	}
	must(c.TakeOne(ctx, "q", client.TakeOptions{}))(t)
	if err := c.Complete(ctx, dep, 0, nil); err != nil {
		t.Fatal(err)
	}
	_, err := c.UpdateJob(ctx, dep, client.JobUpdate{Priority: new(int64(1))})
	wantError(t, "a priority change of a completed job", err, 409,
		"Job 1 is completed: only queued, scheduled or waiting jobs can be changed", client.ErrConflict)
	_, err = c.CreateJob(ctx, "q", client.JobSpec{DependsOn: []uint64{999}})
	wantError(t, "a dependency on a missing job", err, 400, "Invalid depends_on: job 999 does not exist", client.ErrBadRequest)
}
