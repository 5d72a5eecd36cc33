package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// MaxBatch is the most items of one UpdateJobs, UpdateJobsAndTake or
// HeartbeatJobs call.
const MaxBatch = 1000

// BatchUpdate is one item of UpdateJobs: a JobUpdate of job ID. Its
// Attempt fences it as in UpdateJob; Take must be nil (UpdateJobsAndTake
// takes for the whole batch).
type BatchUpdate struct {
	ID uint64
	JobUpdate
}

// BatchHeartbeat is one item of HeartbeatJobs: a running job and, to
// fence it, its attempt (0: not fenced).
type BatchHeartbeat struct {
	ID      uint64
	Attempt uint64
}

// BatchResult is one item's outcome in a batch, in the order of the
// items: Status 204 when applied (201 with NextID when its update created
// a follow-up job), else the status and Error text the single call would
// have answered (Err returns it as an *Error).
type BatchResult struct {
	ID     uint64 `json:"id"`
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
	NextID uint64 `json:"next,omitempty"`
}

// OK reports whether the item was applied.
func (r *BatchResult) OK() bool { return r.Status/100 == 2 }

// Err is nil for an applied item, else the item's refusal as an *Error
// (errors.Is works as for the single call: ErrStaleAttempt, ErrConflict,
// ErrNotFound...).
func (r *BatchResult) Err() error {
	if r.OK() {
		return nil
	}
	return &Error{StatusCode: r.Status, Message: r.Error, Method: http.MethodPatch,
		Path: "/jobs (job " + strconv.FormatUint(r.ID, 10) + ")"}
}

// UpdateJobs applies 1 to MaxBatch job updates in one request (PATCH
// /jobs), each checked and applied on its own: one refused item does not
// stop the others. It returns one result per item, in order; the error is
// the request's (a malformed batch, or Redis failing it as a whole).
//
// It is never sent again after a 503, which may have applied some items
// (a repeated status change answers 409 for those).
func (c *Client) UpdateJobs(ctx context.Context, items []BatchUpdate) ([]BatchResult, error) {
	body, err := marshalUpdates(items)
	if err != nil {
		return nil, err
	}
	cl := call{method: http.MethodPatch, path: "/jobs", body: body}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return nil, err
	}
	var out []BatchResult
	return out, decode(cl, resp, &out)
}

// UpdateJobsAndTake is UpdateJobs, then takes up to opts.Count jobs (at
// least one) from queue in the same request (PATCH /jobs?take=): a worker
// reports a batch of finished jobs and gets its next ones in one request.
// It returns the items' results and the jobs taken (none when none was
// ready, after opts.Wait). A missing queue is ErrNotFound, and then no
// item was applied. It is not sent again after a 503.
func (c *Client) UpdateJobsAndTake(ctx context.Context, items []BatchUpdate, queue string, opts TakeOptions) ([]BatchResult, []TakenJob, error) {
	body, err := marshalUpdates(items)
	if err != nil {
		return nil, nil, err
	}
	q := url.Values{"take": {queue}}
	opts.query(q)
	cl := call{method: http.MethodPatch, path: "/jobs", query: q, body: body}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return nil, nil, err
	}
	var out struct {
		Results []BatchResult `json:"results"`
		Jobs    []TakenJob    `json:"jobs"`
	}
	if err := decode(cl, resp, &out); err != nil {
		return nil, nil, err
	}
	for i := range out.Jobs {
		out.Jobs[i].Input = nullToNil(out.Jobs[i].Input)
	}
	return out.Results, out.Jobs, nil
}

// HeartbeatJobs records heartbeats of 1 to MaxBatch running jobs in one
// request (POST /jobs/heartbeat), each on its own; one result per item,
// in order. It is sent again after a 503, as Heartbeat is.
func (c *Client) HeartbeatJobs(ctx context.Context, items []BatchHeartbeat) ([]BatchResult, error) {
	if err := batchSize(len(items)); err != nil {
		return nil, err
	}
	body := make([]byte, 0, 32*len(items))
	body = append(body, '[')
	for i, it := range items {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, `{"id":`...)
		body = strconv.AppendUint(body, it.ID, 10)
		if it.Attempt != 0 {
			body = append(body, `,"attempt":`...)
			body = strconv.AppendUint(body, it.Attempt, 10)
		}
		body = append(body, '}')
	}
	body = append(body, ']')
	cl := call{method: http.MethodPost, path: "/jobs/heartbeat", body: body, safety: idempotent}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return nil, err
	}
	var out []BatchResult
	return out, decode(cl, resp, &out)
}

func batchSize(n int) error {
	if n < 1 || n > MaxBatch {
		return fmt.Errorf("ocyless: a batch has 1 to %d items, not %d", MaxBatch, n)
	}
	return nil
}

// marshalUpdates writes the body of PATCH /jobs: each item's PATCH body
// with its "id" and "attempt" first.
func marshalUpdates(items []BatchUpdate) ([]byte, error) {
	if err := batchSize(len(items)); err != nil {
		return nil, err
	}
	body := make([]byte, 0, 64*len(items))
	body = append(body, '[')
	for i := range items {
		it := &items[i]
		if it.Take != nil {
			return nil, errors.New("ocyless: a batch item has no Take: use UpdateJobsAndTake")
		}
		u, err := it.marshal()
		if err != nil {
			return nil, err
		}
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, `{"id":`...)
		body = strconv.AppendUint(body, it.ID, 10)
		if it.Attempt != 0 {
			body = append(body, `,"attempt":`...)
			body = strconv.AppendUint(body, it.Attempt, 10)
		}
		if len(u) > 2 { // not {}
			body = append(body, ',')
			body = append(body, u[1:len(u)-1]...)
		}
		body = append(body, '}')
	}
	return append(body, ']'), nil
}
