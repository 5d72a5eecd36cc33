package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// JobUpdate is a PATCH /job/{id}. Zero and nil fields are left out.
type JobUpdate struct {
	// Attempt fences the update (?attempt=n; 0: not fenced): when the job
	// was taken again since attempt n, the update is ErrStaleAttempt and
	// changes nothing.
	Attempt uint64
	// Status is the new status: completed, failed, timed_out or cancelled
	// for a running job, cancelled for a pending or failed one, queued to
	// requeue a failed, timed-out or cancelled job.
	Status Status
	// Output replaces the output (a json.RawMessage as it is, anything
	// else through encoding/json); nil leaves it.
	Output any
	// Error goes with StatusFailed or StatusTimedOut: kept in the
	// attempt's history, and the failure group of a job failed for good.
	Error *JobError
	// NoRetry, with StatusFailed, fails the job for good whatever retries
	// it has left.
	NoRetry bool
	// RetryAt or RetryIn, with StatusFailed, is when this retry is due
	// instead of the policy's delay (RetryIn 0 with RetryInSet: now).
	RetryAt    time.Time
	RetryIn    time.Duration
	RetryInSet bool
	// Next, with StatusCompleted, creates a follow-up job in Next.Queue
	// with the completion; its id is UpdateResult.NextID.
	Next *NextJob
	// Priority, RunAt, Delay and DependsOn change a pending job in place
	// (not with Status; ErrConflict for a job that is not pending).
	Priority  *int64
	RunAt     time.Time
	Delay     time.Duration
	DependsOn []uint64 // nil leaves them; a non-nil empty slice clears them
	// Tags replaces the tags (nil leaves them, a non-nil empty slice
	// removes them); Tracked tracks or untracks.
	Tags    []string
	Tracked *bool
	// Take, when set, takes the next job(s) from Take.Queue after the
	// update succeeded, in the same request: UpdateResult.Taken.
	Take *TakeAfter
}

// NextJob is a follow-up job: a create body and its queue.
type NextJob struct {
	Queue string
	JobSpec
}

// TakeAfter is the take of a JobUpdate: the queue and the take options.
type TakeAfter struct {
	Queue string
	TakeOptions
}

// UpdateResult is the answer of UpdateJob.
type UpdateResult struct {
	NextID uint64     // the job JobUpdate.Next created, 0 for none
	Taken  []TakenJob // with JobUpdate.Take: the jobs taken, empty when none was ready
}

func (u *JobUpdate) marshal() ([]byte, error) {
	var o object
	if u.Status != "" {
		o.value("status", u.Status)
	}
	if u.Output != nil {
		o.input("output", u.Output)
	}
	if u.Error != nil {
		o.value("error", u.Error)
	}
	if u.NoRetry {
		o.value("retry", false)
	}
	if !u.RetryAt.IsZero() {
		o.time("retry_at", u.RetryAt)
	}
	if u.RetryInSet || u.RetryIn != 0 {
		o.duration("retry_in", u.RetryIn)
	}
	if u.Next != nil {
		var n object
		n.value("queue", u.Next.Queue)
		u.Next.fields(&n)
		b, err := n.bytes()
		if err != nil {
			return nil, err
		}
		o.raw("next", b)
	}
	if u.Priority != nil {
		o.value("priority", *u.Priority)
	}
	if !u.RunAt.IsZero() {
		o.time("run_at", u.RunAt)
	}
	if u.Delay != 0 {
		o.duration("delay", u.Delay)
	}
	if u.DependsOn != nil {
		o.value("depends_on", u.DependsOn)
	}
	if u.Tags != nil {
		o.value("tags", u.Tags)
	}
	if u.Tracked != nil {
		o.value("tracked", *u.Tracked)
	}
	return o.bytes()
}

// UpdateJob applies a PATCH /job/{id}: a status change, output, the
// extended model's fields, and optionally a take. A missing job is
// ErrNotFound; a transition the job's status does not allow is
// ErrConflict ("Cannot change status from completed to queued"), a
// fenced update of an attempt taken again since ErrStaleAttempt.
//
// With Take, a take queue that does not exist is ErrNotFound ("Queue 'q'
// does not exist") and nothing is applied; one deleted once the update is
// applied takes nothing: no error, UpdateResult.Taken empty.
//
// It is never sent again after a 503, which may have been applied: a
// status change that was applied answers ErrConflict when repeated, so
// read the job's status before taking such an answer as a failure.
func (c *Client) UpdateJob(ctx context.Context, id uint64, u JobUpdate) (UpdateResult, error) {
	body, err := u.marshal()
	if err != nil {
		return UpdateResult{}, err
	}
	q := attemptQuery(u.Attempt)
	if u.Take != nil {
		if q == nil {
			q = url.Values{}
		}
		q.Set("take", u.Take.Queue)
		u.Take.query(q)
	}
	cl := call{method: http.MethodPatch, path: jobPath(id, ""), query: q, body: body}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return UpdateResult{}, err
	}
	var r UpdateResult
	if loc := resp.header.Get("Location"); strings.HasPrefix(loc, "/job/") {
		r.NextID, _ = strconv.ParseUint(strings.TrimPrefix(loc, "/job/"), 10, 64)
	}
	if u.Take != nil {
		r.Taken, err = takenJobs(cl, resp)
	}
	return r, err
}

// Complete completes a running job with output (nil: the output stays
// as it is). attempt fences it (0: not fenced).
func (c *Client) Complete(ctx context.Context, id, attempt uint64, output any) error {
	_, err := c.UpdateJob(ctx, id, JobUpdate{Attempt: attempt, Status: StatusCompleted, Output: output})
	return err
}

// CompleteAndTake completes a running job and takes the next one from
// queue in the same request. It returns nil when none was ready.
func (c *Client) CompleteAndTake(ctx context.Context, id, attempt uint64, output any, queue string, opts TakeOptions) (*TakenJob, error) {
	opts.Count = 0
	r, err := c.UpdateJob(ctx, id, JobUpdate{Attempt: attempt, Status: StatusCompleted, Output: output,
		Take: &TakeAfter{Queue: queue, TakeOptions: opts}})
	if err != nil || len(r.Taken) == 0 {
		return nil, err
	}
	return &r.Taken[0], nil
}

// Failure is how a job failed, for Fail.
type Failure struct {
	Error   *JobError     // kept in the history; its group is the failure group
	NoRetry bool          // fail for good, whatever retries are left
	RetryAt time.Time     // this retry's due time instead of the policy's
	RetryIn time.Duration // or its delay (when RetryAt is zero and RetryIn > 0)
}

// Fail fails a running job: it is retried by its policy (or at RetryAt /
// after RetryIn) while retries are left, else it fails for good and joins
// its failure group. attempt fences it (0: not fenced).
func (c *Client) Fail(ctx context.Context, id, attempt uint64, f Failure) error {
	_, err := c.UpdateJob(ctx, id, JobUpdate{Attempt: attempt, Status: StatusFailed, Error: f.Error,
		NoRetry: f.NoRetry, RetryAt: f.RetryAt, RetryIn: f.RetryIn})
	return err
}

// Cancel cancels a job that is running, pending or failed.
func (c *Client) Cancel(ctx context.Context, id uint64) error {
	_, err := c.UpdateJob(ctx, id, JobUpdate{Status: StatusCancelled})
	return err
}

// Requeue puts a failed, timed-out or cancelled job back in its queue,
// clearing its output and timestamps (it does not count as a retry).
func (c *Client) Requeue(ctx context.Context, id uint64) error {
	_, err := c.UpdateJob(ctx, id, JobUpdate{Status: StatusQueued})
	return err
}
