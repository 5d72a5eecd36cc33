package client

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// RateLimit bounds how fast a queue's jobs are taken.
type RateLimit struct {
	PerSecond float64 `json:"per_second"` // above 0
	Burst     uint64  `json:"burst"`      // at least 1
}

// QueueSettings are a queue's settings as GET /queue/{name} shows them.
type QueueSettings struct {
	Timeout          time.Duration // 0: none
	HeartbeatTimeout time.Duration // 0: none
	ExpiresAfter     time.Duration // 0: never
	Retries          uint64
	RetryDelays      []time.Duration

	// The extended model's settings (zero: the default).
	Paused          bool
	Concurrency     uint64 // most running jobs; 0: no limit
	RateLimit       *RateLimit
	RetryBackoff    *Backoff
	TimeoutRetries  *uint64
	DeadLetterQueue string
	Shards          uint64 // 0 or 1: one
}

type wireQueue struct {
	Timeout          duration     `json:"timeout"`
	HeartbeatTimeout duration     `json:"heartbeat_timeout"`
	ExpiresAfter     duration     `json:"expires_after"`
	Retries          uint64       `json:"retries"`
	RetryDelays      durationList `json:"retry_delays"`
	Paused           bool         `json:"paused"`
	Concurrency      uint64       `json:"concurrency"`
	RateLimit        *RateLimit   `json:"rate_limit"`
	RetryBackoff     *wireBackoff `json:"retry_backoff"`
	TimeoutRetries   *uint64      `json:"timeout_retries"`
	DeadLetterQueue  string       `json:"dead_letter_queue"`
	Shards           uint64       `json:"shards"`
}

// UnmarshalJSON reads the server's queue object.
func (s *QueueSettings) UnmarshalJSON(b []byte) error {
	var w wireQueue
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = QueueSettings{
		Timeout: time.Duration(w.Timeout), HeartbeatTimeout: time.Duration(w.HeartbeatTimeout),
		ExpiresAfter: time.Duration(w.ExpiresAfter), Retries: w.Retries, RetryDelays: w.RetryDelays,
		Paused: w.Paused, Concurrency: w.Concurrency, RateLimit: w.RateLimit, RetryBackoff: w.RetryBackoff.backoff(),
		TimeoutRetries: w.TimeoutRetries, DeadLetterQueue: w.DeadLetterQueue, Shards: w.Shards,
	}
	return nil
}

// QueueSpec is a PUT /queue/{name} body: Ocypod's five settings. A nil
// field takes the server's default (timeout 5m, heartbeat_timeout 0s,
// expires_after 5m, retries 0, no retry delays), as a missing field does
// in Ocypod; a zero duration disables that timeout or expiry. The server
// keeps whole seconds.
type QueueSpec struct {
	Timeout          *time.Duration
	HeartbeatTimeout *time.Duration
	ExpiresAfter     *time.Duration
	Retries          *uint64
	RetryDelays      []time.Duration

	// The extension's settings: a PUT replaces every setting, so those
	// left at their zero value return to their defaults (no limit, not
	// paused), Shards excepted (0 leaves it).
	Paused          bool
	Concurrency     uint64
	RateLimit       *RateLimit
	RetryBackoff    *Backoff
	TimeoutRetries  *uint64
	DeadLetterQueue string
	Shards          uint64
}

// Spec returns the QueueSpec that puts s's settings back.
func (s *QueueSettings) Spec() QueueSpec {
	delays := s.RetryDelays
	if s.RetryBackoff != nil {
		delays = nil // the backoff replaces them; the two do not go together
	}
	return QueueSpec{Timeout: new(s.Timeout), HeartbeatTimeout: new(s.HeartbeatTimeout),
		ExpiresAfter: new(s.ExpiresAfter), Retries: new(s.Retries), RetryDelays: delays,
		Paused: s.Paused, Concurrency: s.Concurrency, RateLimit: s.RateLimit, RetryBackoff: s.RetryBackoff,
		TimeoutRetries: s.TimeoutRetries, DeadLetterQueue: s.DeadLetterQueue, Shards: s.Shards}
}

// QueuePatch is a PATCH /queue/{name} body: the settings given change,
// the others stay. The Clear flags remove an optional setting.
type QueuePatch struct {
	Timeout          *time.Duration
	HeartbeatTimeout *time.Duration
	ExpiresAfter     *time.Duration
	Retries          *uint64
	RetryDelays      []time.Duration // nil leaves them; a non-nil empty slice clears them

	Paused               *bool
	Concurrency          *uint64
	RateLimit            *RateLimit
	ClearRateLimit       bool
	RetryBackoff         *Backoff
	ClearRetryBackoff    bool
	TimeoutRetries       *uint64
	ClearTimeoutRetries  bool
	DeadLetterQueue      string
	ClearDeadLetterQueue bool
	Shards               uint64 // 0 leaves it
}

func (p *QueuePatch) marshal() ([]byte, error) {
	var o object
	ocypodSettings(&o, p.Timeout, p.HeartbeatTimeout, p.ExpiresAfter, p.Retries, p.RetryDelays)
	if p.Paused != nil {
		o.value("paused", *p.Paused)
	}
	if p.Concurrency != nil {
		o.value("concurrency", *p.Concurrency)
	}
	switch {
	case p.RateLimit != nil:
		o.value("rate_limit", p.RateLimit)
	case p.ClearRateLimit:
		o.null("rate_limit")
	}
	switch {
	case p.RetryBackoff != nil:
		b, err := p.RetryBackoff.marshal()
		if err != nil {
			return nil, err
		}
		o.raw("retry_backoff", b)
	case p.ClearRetryBackoff:
		o.null("retry_backoff")
	}
	switch {
	case p.TimeoutRetries != nil:
		o.value("timeout_retries", *p.TimeoutRetries)
	case p.ClearTimeoutRetries:
		o.null("timeout_retries")
	}
	switch {
	case p.DeadLetterQueue != "":
		o.value("dead_letter_queue", p.DeadLetterQueue)
	case p.ClearDeadLetterQueue:
		o.null("dead_letter_queue")
	}
	if p.Shards != 0 {
		o.value("shards", p.Shards)
	}
	return o.bytes()
}

func ocypodSettings(o *object, timeout, hbTimeout, expires *time.Duration, retries *uint64, delays []time.Duration) {
	if timeout != nil {
		o.duration("timeout", *timeout)
	}
	if hbTimeout != nil {
		o.duration("heartbeat_timeout", *hbTimeout)
	}
	if expires != nil {
		o.duration("expires_after", *expires)
	}
	if retries != nil {
		o.value("retries", *retries)
	}
	if delays != nil {
		o.durations("retry_delays", delays)
	}
}

// ListQueues returns the queue names, sorted (GET /queue).
func (c *Client) ListQueues(ctx context.Context) ([]string, error) {
	var names []string
	return names, c.get(ctx, "/queue", nil, &names)
}

// GetQueue returns a queue's settings (GET /queue/{name}); a missing
// queue is ErrNotFound.
func (c *Client) GetQueue(ctx context.Context, name string) (*QueueSettings, error) {
	var s QueueSettings
	if err := c.get(ctx, "/queue/"+esc(name), nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// PutQueue creates a queue or replaces all its settings (PUT
// /queue/{name}): those spec leaves out return to their defaults, Shards
// excepted. created reports a new queue. An invalid name (outside
// [A-Za-z0-9_.-]) is ErrBadRequest; a DeadLetterQueue that does not exist
// is ErrNotFound, and nothing is written.
func (c *Client) PutQueue(ctx context.Context, name string, spec QueueSpec) (created bool, err error) {
	p := QueuePatch{Timeout: spec.Timeout, HeartbeatTimeout: spec.HeartbeatTimeout, ExpiresAfter: spec.ExpiresAfter,
		Retries: spec.Retries, RetryDelays: spec.RetryDelays, RateLimit: spec.RateLimit, RetryBackoff: spec.RetryBackoff,
		TimeoutRetries: spec.TimeoutRetries, DeadLetterQueue: spec.DeadLetterQueue, Shards: spec.Shards}
	if spec.Paused {
		p.Paused = new(true)
	}
	if spec.Concurrency != 0 {
		p.Concurrency = new(spec.Concurrency)
	}
	body, err := p.marshal()
	if err != nil {
		return false, err
	}
	resp, err := c.do(ctx, call{method: http.MethodPut, path: "/queue/" + esc(name), body: body, safety: idempotent})
	if err != nil {
		return false, err
	}
	return resp.status == http.StatusCreated, nil
}

// PatchQueue merges settings into a queue's (PATCH /queue/{name}); a
// missing queue is ErrNotFound.
func (c *Client) PatchQueue(ctx context.Context, name string, p QueuePatch) error {
	body, err := p.marshal()
	if err != nil {
		return err
	}
	_, err = c.do(ctx, call{method: http.MethodPatch, path: "/queue/" + esc(name), body: body, safety: idempotent})
	return err
}

// DeleteQueue deletes a queue and its pending jobs (DELETE
// /queue/{name}); running and ended jobs stay. A missing queue is
// ErrNotFound. It is not sent again after a 503.
func (c *Client) DeleteQueue(ctx context.Context, name string) error {
	_, err := c.do(ctx, call{method: http.MethodDelete, path: "/queue/" + esc(name)})
	return err
}

// QueueSize returns the number of queued jobs (GET /queue/{name}/size).
func (c *Client) QueueSize(ctx context.Context, name string) (uint64, error) {
	var n uint64
	return n, c.get(ctx, "/queue/"+esc(name)+"/size", nil, &n)
}

// QueueJobIDs are a queue's job ids by status; queued ids in take order,
// the others ascending.
type QueueJobIDs struct {
	Queued    []uint64 `json:"queued"`
	Running   []uint64 `json:"running"`
	Failed    []uint64 `json:"failed"`
	Completed []uint64 `json:"completed"`
	Cancelled []uint64 `json:"cancelled"`
	TimedOut  []uint64 `json:"timed_out"`
	Scheduled []uint64 `json:"scheduled"`
	Waiting   []uint64 `json:"waiting"`
}

// QueueJobIDs returns a queue's job ids by status (GET
// /queue/{name}/job_ids); a missing queue is ErrNotFound.
func (c *Client) QueueJobIDs(ctx context.Context, name string) (*QueueJobIDs, error) {
	var ids QueueJobIDs
	if err := c.get(ctx, "/queue/"+esc(name)+"/job_ids", nil, &ids); err != nil {
		return nil, err
	}
	return &ids, nil
}
