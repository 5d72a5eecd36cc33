package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Created is the answer of a create.
type Created struct {
	ID uint64
	// Existing is set when a pending job of the queue held the create's
	// key: ID is that job's (updated with OnConflictUpdate), and no job
	// was added.
	Existing bool
}

// CreateJob creates a job in queue (POST /queue/{name}/job). A missing
// queue is ErrNotFound; a bad spec is ErrBadRequest and creates nothing;
// OnConflictError with a key a pending job holds is ErrConflict.
//
// A create is sent again after a 429 only, never after a 503 (which may
// have been applied): to retry it yourself without a second job, give it a
// Key, and retry while the first job can still be pending (see the package
// documentation).
func (c *Client) CreateJob(ctx context.Context, queue string, spec JobSpec) (Created, error) {
	body, err := spec.MarshalJSON()
	if err != nil {
		return Created{}, err
	}
	cl := call{method: http.MethodPost, path: "/queue/" + esc(queue) + "/job", body: body, safety: notIdempotent}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return Created{}, err
	}
	var id uint64
	if err := decode(cl, resp, &id); err != nil {
		return Created{}, err
	}
	return Created{ID: id, Existing: resp.status == http.StatusOK}, nil
}

// CreateJobs creates 1 to 1000 jobs in queue in one request (POST
// /queue/{name}/jobs) and returns their ids in order (a pending job's id
// for a create whose key it holds). The batch is checked whole: one bad
// spec is ErrBadRequest naming its index ("Invalid jobs[3]: ...") and
// creates nothing. Like CreateJob, it is sent again after a 429 only.
func (c *Client) CreateJobs(ctx context.Context, queue string, specs []JobSpec) ([]uint64, error) {
	body := []byte{'['}
	for i := range specs {
		if i > 0 {
			body = append(body, ',')
		}
		b, err := specs[i].MarshalJSON()
		if err != nil {
			return nil, err
		}
		body = append(body, b...)
	}
	body = append(body, ']')
	cl := call{method: http.MethodPost, path: "/queue/" + esc(queue) + "/jobs", body: body, safety: notIdempotent}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return nil, err
	}
	var ids []uint64
	return ids, decode(cl, resp, &ids)
}

// GetJob returns a job (GET /job/{id}): all its fields, or only those
// named (such as "status", "attempt", "history"; an unknown name is
// ErrBadRequest). A missing job is ErrNotFound.
func (c *Client) GetJob(ctx context.Context, id uint64, fields ...string) (*Job, error) {
	var q url.Values
	if len(fields) > 0 {
		q = url.Values{"fields": {strings.Join(fields, ",")}}
	}
	var j Job
	if err := c.get(ctx, jobPath(id, ""), q, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// JobStatus returns a job's status (GET /job/{id}/status).
func (c *Client) JobStatus(ctx context.Context, id uint64) (Status, error) {
	var st Status
	return st, c.get(ctx, jobPath(id, "/status"), nil, &st)
}

// JobOutput returns a job's output (GET /job/{id}/output), nil when it was
// never set.
func (c *Client) JobOutput(ctx context.Context, id uint64) (json.RawMessage, error) {
	var out json.RawMessage
	if err := c.get(ctx, jobPath(id, "/output"), nil, &out); err != nil {
		return nil, err
	}
	return nullToNil(out), nil
}

// SetJobOutput replaces a running job's output (PUT /job/{id}/output)
// with output: a json.RawMessage as it is, anything else through
// encoding/json. attempt fences the write (0: not fenced): a job taken
// again since is ErrStaleAttempt. A job that is not running is
// ErrConflict.
func (c *Client) SetJobOutput(ctx context.Context, id, attempt uint64, output any) error {
	var o object
	o.input("output", output)
	b, err := o.bytes()
	if err != nil {
		return err
	}
	// The value alone: the object's only member, without its key.
	body := b[len(`{"output":`) : len(b)-1]
	_, err = c.do(ctx, call{method: http.MethodPut, path: jobPath(id, "/output"), query: attemptQuery(attempt),
		body: body, safety: idempotent})
	return err
}

// Heartbeat records a heartbeat of a running job (PUT
// /job/{id}/heartbeat). attempt fences it (0: not fenced): a job taken
// again since is ErrStaleAttempt; a job that is not running any more is
// ErrConflict, a deleted one ErrNotFound.
func (c *Client) Heartbeat(ctx context.Context, id, attempt uint64) error {
	_, err := c.do(ctx, call{method: http.MethodPut, path: jobPath(id, "/heartbeat"), query: attemptQuery(attempt),
		safety: idempotent})
	return err
}

// DeleteJob deletes a job in any state (DELETE /job/{id}); a missing job
// is ErrNotFound. It is not sent again after a 503, which may have been
// applied (the repeat would answer 404).
func (c *Client) DeleteJob(ctx context.Context, id uint64) error {
	_, err := c.do(ctx, call{method: http.MethodDelete, path: jobPath(id, "")})
	return err
}

// RetryOptions is when an explicit retry is due: now when both are zero.
type RetryOptions struct {
	RunAt time.Time
	Delay time.Duration
}

// RetryResult is the answer of RetryJob.
type RetryResult struct {
	Status           Status `json:"status"` // queued, scheduled, or failed when no retry was left
	RetriesAttempted uint64 `json:"retries_attempted"`
}

// RetryJob retries a running, failed, timed-out or cancelled job (POST
// /job/{id}/retry), counting against its retries. Other statuses are
// ErrConflict.
func (c *Client) RetryJob(ctx context.Context, id uint64, opts RetryOptions) (RetryResult, error) {
	cl := call{method: http.MethodPost, path: jobPath(id, "/retry")}
	if !opts.RunAt.IsZero() || opts.Delay != 0 {
		var o object
		if !opts.RunAt.IsZero() {
			o.time("run_at", opts.RunAt)
		}
		if opts.Delay != 0 {
			o.duration("delay", opts.Delay)
		}
		b, err := o.bytes()
		if err != nil {
			return RetryResult{}, err
		}
		cl.body = b
	}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return RetryResult{}, err
	}
	var r RetryResult
	return r, decode(cl, resp, &r)
}

// JobIDsByTag returns the ids of the jobs carrying tag, ascending (GET
// /tag/{name}).
func (c *Client) JobIDsByTag(ctx context.Context, tag string) ([]uint64, error) {
	var ids []uint64
	return ids, c.get(ctx, "/tag/"+esc(tag), nil, &ids)
}
