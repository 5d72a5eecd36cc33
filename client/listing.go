package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// ListOptions filter and page a job listing.
type ListOptions struct {
	Status  Status // one status; "" for all
	Tag     string
	Key     string
	Worker  string
	Tracked *bool
	// Fields names the job fields to show (nil: each job's default
	// fields).
	Fields []string
	Limit  int    // 1 to 1000; 0 means the server's 100
	Cursor string // the previous page's NextCursor; "" for the first page
}

func (o *ListOptions) query() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("status", string(o.Status))
	set("tag", o.Tag)
	set("key", o.Key)
	set("worker", o.Worker)
	if o.Tracked != nil {
		q.Set("tracked", strconv.FormatBool(*o.Tracked))
	}
	if len(o.Fields) > 0 {
		q.Set("fields", strings.Join(o.Fields, ","))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	set("cursor", o.Cursor)
	return q
}

// JobPage is one page of a listing.
type JobPage struct {
	Jobs []Job `json:"jobs"`
	// NextCursor is the next page's cursor, "" on the last page.
	NextCursor string `json:"next_cursor"`
}

// ListJobs lists the jobs of every queue (GET /jobs): queued jobs in take
// order with Status queued, the others by id. A bad filter or cursor is
// ErrBadRequest.
func (c *Client) ListJobs(ctx context.Context, opts ListOptions) (*JobPage, error) {
	var p JobPage
	if err := c.get(ctx, "/jobs", opts.query(), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// ListQueueJobs lists one queue's jobs (GET /queue/{name}/jobs).
func (c *Client) ListQueueJobs(ctx context.Context, queue string, opts ListOptions) (*JobPage, error) {
	var p JobPage
	if err := c.get(ctx, "/queue/"+esc(queue)+"/jobs", opts.query(), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// AllJobs iterates over every job ListJobs (queue "") or ListQueueJobs
// (another queue) finds with opts, page after page from opts.Cursor. It
// stops at the first error, which it yields.
func (c *Client) AllJobs(ctx context.Context, queue string, opts ListOptions) iter.Seq2[*Job, error] {
	return pages(opts.Cursor, func(cursor string) ([]Job, string, error) {
		opts.Cursor = cursor
		var p *JobPage
		var err error
		if queue == "" {
			p, err = c.ListJobs(ctx, opts)
		} else {
			p, err = c.ListQueueJobs(ctx, queue, opts)
		}
		if err != nil {
			return nil, "", err
		}
		return p.Jobs, p.NextCursor, nil
	})
}

// pages iterates over the items of a paged listing.
func pages(cursor string, page func(cursor string) ([]Job, string, error)) iter.Seq2[*Job, error] {
	return func(yield func(*Job, error) bool) {
		for {
			jobs, next, err := page(cursor)
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range jobs {
				if !yield(&jobs[i], nil) {
					return
				}
			}
			if next == "" {
				return
			}
			cursor = next
		}
	}
}

// Failures counts the jobs failed for good by failure group (GET
// /failures).
func (c *Client) Failures(ctx context.Context) (map[string]uint64, error) {
	var counts map[string]uint64
	return counts, c.get(ctx, "/failures", nil, &counts)
}

// FailureOptions page a failure group.
type FailureOptions struct {
	Limit  int // 1 to 1000; 0 means the server's 100
	Cursor string
	Fields []string
}

// FailurePage is one page of a failure group.
type FailurePage struct {
	Total      uint64 `json:"total"`
	Jobs       []Job  `json:"jobs"` // each with its Error (unless Fields leaves it out)
	NextCursor string `json:"next_cursor"`
}

func (o *FailureOptions) query() url.Values {
	q := url.Values{}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	if len(o.Fields) > 0 {
		q.Set("fields", strings.Join(o.Fields, ","))
	}
	return q
}

// FailureJobs returns one page of a failure group's jobs (GET
// /failures/{group}); an unknown group is an empty page.
func (c *Client) FailureJobs(ctx context.Context, group string, opts FailureOptions) (*FailurePage, error) {
	var p FailurePage
	if err := c.get(ctx, "/failures/"+esc(group), opts.query(), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// AllFailureJobs iterates over a failure group's jobs, page after page.
func (c *Client) AllFailureJobs(ctx context.Context, group string, opts FailureOptions) iter.Seq2[*Job, error] {
	return pages(opts.Cursor, func(cursor string) ([]Job, string, error) {
		opts.Cursor = cursor
		p, err := c.FailureJobs(ctx, group, opts)
		if err != nil {
			return nil, "", err
		}
		return p.Jobs, p.NextCursor, nil
	})
}

// RetryFailures requeues up to limit jobs of a failure group (POST
// /failures/{group}/retry; limit 0 means the server's 100), into queue
// when it is not "" (a missing queue is ErrNotFound), and returns how
// many it requeued. It is not sent again after a 503.
func (c *Client) RetryFailures(ctx context.Context, group string, limit int, queue string) (int, error) {
	cl := call{method: http.MethodPost, path: "/failures/" + esc(group) + "/retry"}
	if limit > 0 {
		cl.query = url.Values{"limit": {strconv.Itoa(limit)}}
	}
	if queue != "" {
		var o object
		o.value("queue", queue)
		b, err := o.bytes()
		if err != nil {
			return 0, err
		}
		cl.body = b
	}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return 0, err
	}
	var r struct {
		Retried int `json:"retried"`
	}
	return r.Retried, decode(cl, resp, &r)
}
