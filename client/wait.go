package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// WaitJob returns job id once it has ended for good (GET /job/{id}?wait=),
// or when wait (at most MaxWait) is over, with the job as it is then:
// check Job.Ended (or the status) to tell the two apart. A failure that
// will be retried is not an ending. fields selects the fields as GetJob's
// do ("ended" among them when you name any). The request is held open up
// to wait: the client's http.Client must not time out sooner. A missing
// job, or one deleted during the wait, is ErrNotFound.
func (c *Client) WaitJob(ctx context.Context, id uint64, wait time.Duration, fields ...string) (*Job, error) {
	q, err := waitQuery(wait, fields)
	if err != nil {
		return nil, err
	}
	var j Job
	if err := c.get(ctx, jobPath(id, ""), q, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// WaitResult is the answer of CreateAndWait.
type WaitResult struct {
	// ID is the job's id, also when it did not end within the wait.
	ID uint64
	// Ended is set when the job ended for good within the wait; Job then
	// holds its id, status, output and error (or the fields named).
	// Otherwise Job is nil: wait again with WaitJob, or look later.
	Ended bool
	Job   *Job
}

// CreateAndWait creates a job in queue, then waits up to wait (at most
// MaxWait) for it to end for good (POST /queue/{name}/job?wait=): a remote
// call through the queue, answered by whichever worker takes the job. A
// failure that will be retried is not an ending. fields selects the fields
// of the ended job (default id, status, output, error). The request is
// held open up to wait: the client's http.Client must not time out sooner.
// Like CreateJob, it is sent again after a 429 only. A bad wait is
// ErrBadRequest and creates nothing; a job deleted during the wait is
// ErrNotFound.
func (c *Client) CreateAndWait(ctx context.Context, queue string, spec JobSpec, wait time.Duration, fields ...string) (WaitResult, error) {
	body, err := spec.MarshalJSON()
	if err != nil {
		return WaitResult{}, err
	}
	q, err := waitQuery(wait, fields)
	if err != nil {
		return WaitResult{}, err
	}
	cl := call{method: http.MethodPost, path: "/queue/" + esc(queue) + "/job", query: q, body: body, safety: notIdempotent}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return WaitResult{}, err
	}
	if resp.status == http.StatusAccepted {
		var id uint64
		if err := decode(cl, resp, &id); err != nil {
			return WaitResult{}, err
		}
		return WaitResult{ID: id}, nil
	}
	var j Job
	if err := decode(cl, resp, &j); err != nil {
		return WaitResult{}, err
	}
	// The fields named may leave out the id: Location has it.
	id, err := strconv.ParseUint(strings.TrimPrefix(resp.header.Get("Location"), "/job/"), 10, 64)
	if err != nil {
		id = j.ID
	}
	return WaitResult{ID: id, Ended: true, Job: &j}, nil
}

// waitQuery is ?wait= (and fields=) of a wait.
func waitQuery(wait time.Duration, fields []string) (url.Values, error) {
	s, err := formatDuration(max(wait, 0))
	if err != nil {
		return nil, err
	}
	q := url.Values{"wait": {s}}
	if len(fields) > 0 {
		q.Set("fields", strings.Join(fields, ","))
	}
	return q, nil
}
