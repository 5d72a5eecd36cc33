package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MaxWait is the longest long-poll wait the server accepts.
const MaxWait = 20 * time.Second

// TakeOptions are the parameters of a take.
type TakeOptions struct {
	// Count is how many jobs to take at most, 1 to 100 (0 means 1).
	Count int
	// Worker names the taker (1 to 128 printable characters): recorded on
	// the job and listed by Workers.
	Worker string
	// Wait long-polls: the answer comes as soon as a job can be taken, or
	// empty after Wait (at most MaxWait). 0 answers at once.
	Wait time.Duration
}

func (t *TakeOptions) query(q url.Values) {
	if t.Count > 0 {
		q.Set("count", strconv.Itoa(t.Count))
	}
	if t.Worker != "" {
		q.Set("worker", t.Worker)
	}
	if t.Wait > 0 {
		s, _ := formatDuration(t.Wait)
		q.Set("wait", s)
	}
}

// TakenJob is a job a take handed over: it is now running, and this
// attempt's number fences the worker's heartbeats and updates.
type TakenJob struct {
	ID      uint64          `json:"id"`
	Input   json.RawMessage `json:"input"` // nil for null
	Attempt uint64          `json:"attempt"`
	Queue   string          `json:"queue"`
}

// Order is how a take from several queues picks among them.
type Order string

// The orders.
const (
	// OrderOrdered takes from the first queue that has a job (the
	// server's default).
	OrderOrdered Order = "ordered"
	// OrderRoundRobin starts at a different queue each call.
	OrderRoundRobin Order = "round_robin"
)

// Take takes up to opts.Count jobs (at least one) from queue (GET
// /queue/{name}/job); the jobs are running when it returns. It returns no
// job and no error when none was ready (after opts.Wait). A missing queue
// is ErrNotFound.
//
// A take is not sent again after a 503 (it may have handed a job to
// nobody: that job times out and is retried by its policy), nor after its
// context ends mid-request.
func (c *Client) Take(ctx context.Context, queue string, opts TakeOptions) ([]TakenJob, error) {
	// count is always sent, so the answer always has the four keys.
	opts.Count = max(opts.Count, 1)
	q := url.Values{}
	opts.query(q)
	return c.take(ctx, call{method: http.MethodGet, path: "/queue/" + esc(queue) + "/job", query: q})
}

// TakeOne is Take of one job: nil when none was ready.
func (c *Client) TakeOne(ctx context.Context, queue string, opts TakeOptions) (*TakenJob, error) {
	opts.Count = 1
	jobs, err := c.Take(ctx, queue, opts)
	if err != nil || len(jobs) == 0 {
		return nil, err
	}
	return &jobs[0], nil
}

// TakeFrom takes up to opts.Count jobs from several queues in one request
// (GET /job?queues=...), picking among them by order ("" is the server's
// OrderOrdered). A missing queue is ErrNotFound. It is retried as Take is.
func (c *Client) TakeFrom(ctx context.Context, queues []string, order Order, opts TakeOptions) ([]TakenJob, error) {
	if len(queues) == 0 {
		return nil, errors.New("ocyless: TakeFrom: no queue")
	}
	opts.Count = max(opts.Count, 1)
	q := url.Values{"queues": {strings.Join(queues, ",")}}
	if order != "" {
		q.Set("order", string(order))
	}
	opts.query(q)
	return c.take(ctx, call{method: http.MethodGet, path: "/job", query: q})
}

func (c *Client) take(ctx context.Context, cl call) ([]TakenJob, error) {
	resp, err := c.do(ctx, cl)
	if err != nil {
		return nil, err
	}
	return takenJobs(cl, resp)
}

// takenJobs reads a take's answer: 204 for none, else an array of take
// objects or one of them.
func takenJobs(cl call, resp *response) ([]TakenJob, error) {
	if resp.status == http.StatusNoContent || len(resp.body) == 0 {
		return nil, nil
	}
	var jobs []TakenJob
	if len(resp.body) > 0 && resp.body[0] == '{' {
		jobs = make([]TakenJob, 1)
		if err := decode(cl, resp, &jobs[0]); err != nil {
			return nil, err
		}
	} else if err := decode(cl, resp, &jobs); err != nil {
		return nil, err
	}
	for i := range jobs {
		jobs[i].Input = nullToNil(jobs[i].Input)
		if jobs[i].Attempt == 0 || jobs[i].Queue == "" {
			return nil, fmt.Errorf("ocyless: %s %s: take object without attempt or queue: %.200q", cl.method, cl.where(), resp.body)
		}
	}
	return jobs, nil
}
