package client

import (
	"encoding/json"
	"time"
)

// Status is a job's status.
type Status string

// The statuses. A worker moves a running job to completed, failed,
// timed_out or cancelled; scheduled and waiting come with run_at, delay,
// depends_on and keys and are never set directly.
const (
	StatusQueued    Status = "queued"
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
	StatusTimedOut  Status = "timed_out"
	StatusScheduled Status = "scheduled"
	StatusWaiting   Status = "waiting"
)

// Backoff is an exponential retry policy: the delay of retry n is
// min(Max, Min·Factorⁿ⁻¹), with full jitter unless NoJitter.
type Backoff struct {
	Min, Max time.Duration // Min at least 1s, Max at least Min
	Factor   float64       // at least 1; 0 sends none (the server's 2)
	NoJitter bool
}

func (b *Backoff) marshal() ([]byte, error) {
	var o object
	o.duration("min", b.Min)
	o.duration("max", b.Max)
	if b.Factor != 0 {
		o.value("factor", b.Factor)
	}
	o.value("jitter", !b.NoJitter)
	return o.bytes()
}

type wireBackoff struct {
	Min    duration `json:"min"`
	Max    duration `json:"max"`
	Factor float64  `json:"factor"`
	Jitter bool     `json:"jitter"`
}

func (w *wireBackoff) backoff() *Backoff {
	if w == nil {
		return nil
	}
	return &Backoff{Min: time.Duration(w.Min), Max: time.Duration(w.Max), Factor: w.Factor, NoJitter: !w.Jitter}
}

// JobError is the error a worker reported with a failure: Group names the
// failure group of a job failed for good (1 to 128 printable characters;
// empty for the server's "failed" or "timed_out"), Message is free text
// of at most 64 KiB.
type JobError struct {
	Group   string `json:"group,omitempty"`
	Message string `json:"message,omitempty"`
}

// Attempt is one entry of a job's history.
type Attempt struct {
	Attempt   uint64
	Worker    string // "" when the take named none
	StartedAt time.Time
	EndedAt   *time.Time
	Status    Status
	Error     *JobError
}

// Job is a job as GET /job/{id} shows it. With a field list, only the
// fields asked for are set; the others keep their zero values.
type Job struct {
	ID               uint64
	Queue            string
	Status           Status
	Tags             []string // nil when created without tags
	CreatedAt        time.Time
	StartedAt        *time.Time
	EndedAt          *time.Time
	LastHeartbeat    *time.Time
	Input            json.RawMessage // nil for null
	Output           json.RawMessage // nil for null (never set)
	Timeout          time.Duration   // 0: none
	HeartbeatTimeout time.Duration   // 0: none
	ExpiresAfter     time.Duration   // 0: never
	Retries          uint64
	RetriesAttempted uint64
	RetryDelays      []time.Duration
	Ended            bool

	// The extended job model's fields (zero when not set).
	Priority       int64
	RunAt          *time.Time
	Key            string
	DependsOn      []uint64
	Dependents     []uint64 // only with a field list naming it
	RetryBackoff   *Backoff
	TimeoutRetries *uint64
	Tracked        bool
	Attempt        uint64 // how many times the job was taken; only with a field list naming it
	Worker         string
	Error          *JobError
	History        []Attempt // the last 20 attempts; only with a field list naming it
}

type wireAttempt struct {
	Attempt   uint64     `json:"attempt"`
	Worker    *string    `json:"worker"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at"`
	Status    Status     `json:"status"`
	Error     *JobError  `json:"error"`
}

type wireJob struct {
	ID               uint64          `json:"id"`
	Queue            string          `json:"queue"`
	Status           Status          `json:"status"`
	Tags             []string        `json:"tags"`
	CreatedAt        time.Time       `json:"created_at"`
	StartedAt        *time.Time      `json:"started_at"`
	EndedAt          *time.Time      `json:"ended_at"`
	LastHeartbeat    *time.Time      `json:"last_heartbeat"`
	Input            json.RawMessage `json:"input"`
	Output           json.RawMessage `json:"output"`
	Timeout          duration        `json:"timeout"`
	HeartbeatTimeout duration        `json:"heartbeat_timeout"`
	ExpiresAfter     duration        `json:"expires_after"`
	Retries          uint64          `json:"retries"`
	RetriesAttempted uint64          `json:"retries_attempted"`
	RetryDelays      durationList    `json:"retry_delays"`
	Ended            bool            `json:"ended"`
	Priority         int64           `json:"priority"`
	RunAt            *time.Time      `json:"run_at"`
	Key              *string         `json:"key"`
	DependsOn        []uint64        `json:"depends_on"`
	Dependents       []uint64        `json:"dependents"`
	RetryBackoff     *wireBackoff    `json:"retry_backoff"`
	TimeoutRetries   *uint64         `json:"timeout_retries"`
	Tracked          bool            `json:"tracked"`
	Attempt          uint64          `json:"attempt"`
	Worker           *string         `json:"worker"`
	Error            *JobError       `json:"error"`
	History          []wireAttempt   `json:"history"`
}

// UnmarshalJSON reads a job object of the server (any subset of its
// fields).
func (j *Job) UnmarshalJSON(b []byte) error {
	var w wireJob
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*j = Job{
		ID: w.ID, Queue: w.Queue, Status: w.Status, Tags: w.Tags, CreatedAt: w.CreatedAt,
		StartedAt: w.StartedAt, EndedAt: w.EndedAt, LastHeartbeat: w.LastHeartbeat,
		Input: nullToNil(w.Input), Output: nullToNil(w.Output),
		Timeout: time.Duration(w.Timeout), HeartbeatTimeout: time.Duration(w.HeartbeatTimeout),
		ExpiresAfter: time.Duration(w.ExpiresAfter), Retries: w.Retries, RetriesAttempted: w.RetriesAttempted,
		RetryDelays: w.RetryDelays, Ended: w.Ended, Priority: w.Priority, RunAt: w.RunAt,
		Key: deref(w.Key), DependsOn: w.DependsOn, Dependents: w.Dependents,
		RetryBackoff: w.RetryBackoff.backoff(), TimeoutRetries: w.TimeoutRetries, Tracked: w.Tracked,
		Attempt: w.Attempt, Worker: deref(w.Worker), Error: w.Error,
	}
	for _, a := range w.History {
		j.History = append(j.History, Attempt{Attempt: a.Attempt, Worker: deref(a.Worker), StartedAt: a.StartedAt,
			EndedAt: a.EndedAt, Status: a.Status, Error: a.Error})
	}
	return nil
}

func nullToNil(raw json.RawMessage) json.RawMessage {
	if string(raw) == "null" {
		return nil
	}
	return raw
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// OnConflict is what a create does when a pending job of the queue holds
// its key.
type OnConflict string

// The conflict policies.
const (
	OnConflictKeep   OnConflict = "keep"   // answer the pending job's id, change nothing (the server's default)
	OnConflictUpdate OnConflict = "update" // change the pending job's given fields, keep the rest
	OnConflictError  OnConflict = "error"  // refuse: 409 (ErrConflict)
)

// UpdateRunAt is how an OnConflictUpdate create treats the pending job's
// run_at.
type UpdateRunAt string

// The run_at update policies.
const (
	UpdateRunAtAlways    UpdateRunAt = "always" // the server's default
	UpdateRunAtIfLater   UpdateRunAt = "if_later"
	UpdateRunAtIfEarlier UpdateRunAt = "if_earlier"
	UpdateRunAtNever     UpdateRunAt = "never"
)

// JobSpec is a create body. Zero and nil fields are left out, so the job
// takes its queue's settings and the server's defaults; pointer fields
// tell "not given" from zero (a zero Timeout disables the timeout, a nil
// one inherits the queue's). Go 1.26's new(expr) fills them:
// Timeout: new(10 * time.Minute). The server keeps a job's durations as
// whole seconds.
type JobSpec struct {
	// Input is the job's input: a json.RawMessage is sent as it is,
	// anything else as encoding/json writes it; nil sends none (null).
	Input            any
	Tags             []string // at most 64, none empty
	Timeout          *time.Duration
	HeartbeatTimeout *time.Duration
	ExpiresAfter     *time.Duration
	Retries          *uint64
	// RetryDelays: nil inherits the queue's; a non-nil empty slice sets
	// none.
	RetryDelays []time.Duration

	Priority    int64         // −1000000 to 1000000; higher is taken first
	RunAt       time.Time     // not taken before then (zero: now)
	Delay       time.Duration // not taken before this has passed; not with RunAt
	Key         string        // unique per queue among live jobs: an idempotency key
	OnConflict  OnConflict    // needs Key
	UpdateRunAt UpdateRunAt   // needs OnConflictUpdate
	DependsOn   []uint64      // waiting until every one is completed
	// RetryBackoff replaces RetryDelays with an exponential policy.
	RetryBackoff   *Backoff
	TimeoutRetries *uint64 // timed-out attempts count against this instead of Retries
	Tracked        bool
}

// fields adds the spec's fields to o.
func (s *JobSpec) fields(o *object) {
	if s.Input != nil {
		o.input("input", s.Input)
	}
	if s.Tags != nil {
		o.value("tags", s.Tags)
	}
	if s.Timeout != nil {
		o.duration("timeout", *s.Timeout)
	}
	if s.HeartbeatTimeout != nil {
		o.duration("heartbeat_timeout", *s.HeartbeatTimeout)
	}
	if s.ExpiresAfter != nil {
		o.duration("expires_after", *s.ExpiresAfter)
	}
	if s.Retries != nil {
		o.value("retries", *s.Retries)
	}
	if s.RetryDelays != nil {
		o.durations("retry_delays", s.RetryDelays)
	}
	if s.Priority != 0 {
		o.value("priority", s.Priority)
	}
	if !s.RunAt.IsZero() {
		o.time("run_at", s.RunAt)
	}
	if s.Delay != 0 {
		o.duration("delay", s.Delay)
	}
	if s.Key != "" {
		o.value("key", s.Key)
	}
	if s.OnConflict != "" {
		o.value("on_conflict", s.OnConflict)
	}
	if s.UpdateRunAt != "" {
		o.value("update_run_at", s.UpdateRunAt)
	}
	if s.DependsOn != nil {
		o.value("depends_on", s.DependsOn)
	}
	if s.RetryBackoff != nil {
		b, err := s.RetryBackoff.marshal()
		if err != nil {
			o.fail(err)
		}
		o.raw("retry_backoff", b)
	}
	if s.TimeoutRetries != nil {
		o.value("timeout_retries", *s.TimeoutRetries)
	}
	if s.Tracked {
		o.value("tracked", true)
	}
}

// MarshalJSON writes the create body.
func (s JobSpec) MarshalJSON() ([]byte, error) {
	var o object
	s.fields(&o)
	return o.bytes()
}
