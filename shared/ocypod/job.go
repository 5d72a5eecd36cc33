package ocypod

import (
	"encoding/json"
	"time"
)

// Job is everything the server reports about a job: Ocypod's 17 fields of
// GET /job/{id} (Ended derived from the others), then the fields of the
// extended job model, which appear on the wire only when asked for or when
// they hold a value an extension set (see ExtJobFields).
type Job struct {
	ID               uint64
	Queue            string
	Status           Status
	Tags             []string // nil when the job was created without tags
	CreatedAt        time.Time
	StartedAt        *time.Time
	EndedAt          *time.Time
	LastHeartbeat    *time.Time
	Input            json.RawMessage // nil for JSON null
	Output           json.RawMessage // nil for JSON null
	Timeout          Duration
	HeartbeatTimeout Duration
	ExpiresAfter     Duration
	Retries          uint64
	RetriesAttempted uint64
	RetryDelays      []Duration // nil when the job has none
	// RetryAbandoned is set when the job will not be retried automatically
	// although retries are left: its queue was deleted when the retry fell
	// due, its failure was permanent (retry: false), or the budget it drew
	// from (timeout_retries) is spent. The job has then ended.
	RetryAbandoned bool
	// RetryDue is when a pending automatic retry of a failed or timed-out
	// job falls due (nil when none is pending). It decides "ended" when
	// the job draws on another budget than retries (timeout_retries).
	RetryDue *time.Time

	Priority       int64
	RunAt          *time.Time
	Key            string
	DependsOn      []uint64 // nil when created without dependencies
	Dependents     []uint64
	RetryBackoff   *Backoff
	TimeoutRetries *uint64
	Tracked        bool
	Attempt        uint64 // how many times the job was taken
	Worker         string // who took it last ("" when not given)
	Error          *JobError
	History        []Attempt // the last MaxHistory attempts, oldest first
	// Callback is the job's callback (package push's stored form, secret
	// included): never written to an answer as it is. CallbackView is
	// what ?fields=callback shows of it (nil: the job has none, or it was
	// not read).
	Callback     Sealed
	CallbackView *JobCallback
}

// JobCallback is the public view of a job's callback: where it goes, for
// which endings, and what became of the current ending's.
type JobCallback struct {
	URL         string
	On          []Status
	DeliveredAt *time.Time // nil until delivered
	Attempts    uint64     // tries made for the current ending
}

// Ended is Ocypod's derived "ended" flag (see IsEnded); a failed or
// timed-out job with a retry pending has not ended.
func (j *Job) Ended() bool {
	if j.RetryDue != nil && (j.Status == StatusFailed || j.Status == StatusTimedOut) {
		return false
	}
	return IsEnded(j.Status, j.Retries, j.RetriesAttempted, j.RetryAbandoned)
}

// JobFields are Ocypod's 17 job field names, in the default order of
// GET /job/{id}.
var JobFields = []string{
	"id", "queue", "status", "tags", "created_at", "started_at", "ended_at",
	"last_heartbeat", "input", "output", "timeout", "heartbeat_timeout",
	"expires_after", "retries", "retries_attempted", "retry_delays", "ended",
}

// ExtJobFields are the job fields of the extended job model, in the order
// they follow Ocypod's. GET /job/{id} without ?fields= adds the first eight
// when they hold a non-default value; the last four (attempt, dependents,
// history and — unless an extension set them — worker and error) only when
// named in ?fields=.
var ExtJobFields = []string{
	"priority", "run_at", "key", "depends_on", "retry_backoff", "timeout_retries",
	"tracked", "worker", "error", "attempt", "dependents", "history", "callback",
}

// MaxHistory is how many attempts a job's history keeps.
const MaxHistory = 20

// Attempt is one ended attempt of a job, as GET /job/{id}?fields=history
// shows it.
type Attempt struct {
	Attempt   uint64
	Worker    string
	StartedAt time.Time
	EndedAt   *time.Time
	Status    Status
	Error     *JobError
}

// JobError is what a worker reports with a failure (PATCH error): the
// failure group it joins and a message.
type JobError struct {
	Group   string
	Message string
}

// Backoff is an exponential retry policy (retry_backoff): the delay of retry
// n is min(Max, Min·Factor^(n-1)), with full jitter (a uniform random delay
// between 0 and that) when Jitter is set.
type Backoff struct {
	Min, Max Duration
	Factor   float64
	Jitter   bool
}

// DefaultBackoffFactor and the default of Jitter apply when a retry_backoff
// leaves them out.
const DefaultBackoffFactor = 2

// Limits of the extended job model.
const (
	MinPriority     = -1_000_000
	MaxPriority     = 1_000_000
	MaxKeyLength    = 256
	MaxDependencies = 100
	MaxTags         = 64 // tags per job: a request's tags each cost an index entry
	MaxBatch        = 1000
	MaxGroupLength  = 128
	MaxErrorMessage = 64 << 10
	MaxWorkerName   = 128
)

// JobSpec is a request to create a job. Nil or absent fields inherit the
// queue's settings (RetryDelays included, unlike upstream Ocypod).
type JobSpec struct {
	Input            json.RawMessage // canonical JSON; nil for none
	Tags             []string        // nil: no tags (reported as null)
	Timeout          *Duration
	HeartbeatTimeout *Duration
	ExpiresAfter     *Duration
	Retries          *uint64
	RetryDelays      []Duration // nil: inherit; empty after inheriting: none
	// RetryDelaysSet distinguishes an explicit empty list (no delays) from an
	// absent one (inherit the queue's).
	RetryDelaysSet bool

	Priority       *int64
	RunAt          *time.Time // not taken before; exclusive with Delay
	Delay          *Duration  // run_at = now + Delay, computed by the store
	Key            string
	OnConflict     OnConflict
	UpdateRunAt    UpdateRunAt
	DependsOn      []uint64
	RetryBackoff   *Backoff // exclusive with RetryDelays
	TimeoutRetries *uint64
	Tracked        *bool
	// Callback is the job's callback (package push's stored form); nil:
	// the queue's, if it has one, is copied when the job is created.
	Callback Sealed
}

// OnConflict says what a create with the key of a pending job does.
type OnConflict string

// The on_conflict values; "" means OnConflictKeep.
const (
	OnConflictKeep   OnConflict = "keep"
	OnConflictUpdate OnConflict = "update"
	OnConflictError  OnConflict = "error"
)

// UpdateRunAt says how an on_conflict "update" treats run_at.
type UpdateRunAt string

// The update_run_at values; "" means UpdateRunAtAlways.
const (
	UpdateRunAtAlways    UpdateRunAt = "always"
	UpdateRunAtIfLater   UpdateRunAt = "if_later"
	UpdateRunAtIfEarlier UpdateRunAt = "if_earlier"
	UpdateRunAtNever     UpdateRunAt = "never"
)

// Validate checks what the store cannot: tags must be non-empty strings of
// at most MaxNameLength bytes, at most MaxTags of them.
func (s *JobSpec) Validate() error {
	if len(s.Tags) > MaxTags {
		return Invalid("Invalid tags: at most 64 tags per job")
	}
	for _, t := range s.Tags {
		if t == "" {
			return EmptyTag()
		}
		if len(t) > MaxNameLength {
			return Invalid("tags cannot be longer than 1024 bytes")
		}
	}
	return nil
}

// Created is the outcome of a create: the job's id, and whether an existing
// pending job with the same key answered instead (on_conflict keep or
// update: 200 instead of 201).
type Created struct {
	ID       uint64
	Existing bool
}

// JobUpdate is a PATCH /job/{id}: a status change, an output, and the
// extension fields.
type JobUpdate struct {
	Status *Status
	Output json.RawMessage // nil: leave the output alone

	Attempt   *uint64    // ?attempt=: the change applies only to this attempt
	Error     *JobError  // with failed or timed_out
	Retry     *bool      // false: a permanent failure (with failed)
	RetryAt   *time.Time // this retry's due time (with failed); exclusive with RetryIn
	RetryIn   *Duration
	Next      *NextJobSpec // with completed: the follow-up job
	Priority  *int64       // pending jobs only
	RunAt     *time.Time   // pending jobs only; exclusive with Delay
	Delay     *Duration
	DependsOn []uint64 // pending jobs only; DependsOnSet tells an empty list from none
	// DependsOnSet distinguishes "depends_on": [] (no dependencies left)
	// from an absent field.
	DependsOnSet bool
	Tags         []string // any status; TagsSet tells [] from absent
	TagsSet      bool
	Tracked      *bool
}

// NextJobSpec is the follow-up job of a PATCH "next": a create body plus
// its queue.
type NextJobSpec struct {
	Queue string
	Spec  JobSpec
}

// UpdateResult is what a PATCH did beyond its status code: the id of the
// job created by "next" (0 when none).
type UpdateResult struct {
	NextID uint64
}

// BatchUpdate is one item of PATCH /jobs: a PATCH /job/{id} of job ID
// (Update.Attempt fences it as ?attempt= does).
type BatchUpdate struct {
	ID     uint64
	Update JobUpdate
}

// BatchOutcome is what one item of a batch (PATCH /jobs, POST
// /jobs/heartbeat) did: Err, as the single call would have answered it,
// or, when nil, the update's result.
type BatchOutcome struct {
	Err    error
	Result UpdateResult
}

// RetryResult is the answer of POST /job/{id}/retry.
type RetryResult struct {
	Status           Status
	RetriesAttempted uint64
}

// NextJob is what a worker receives when it takes a job.
type NextJob struct {
	ID      uint64
	Queue   string
	Input   json.RawMessage // nil for JSON null
	Attempt uint64
}

// FormatTime formats t as Ocypod does: RFC 3339 in UTC with a "Z" and as many
// fractional digits as the value needs (0, 3, 6 or 9).
func FormatTime(t time.Time) string {
	t = t.UTC()
	ns := t.Nanosecond()
	switch {
	case ns == 0:
		return t.Format("2006-01-02T15:04:05Z")
	case ns%1_000_000 == 0:
		return t.Format("2006-01-02T15:04:05.000Z")
	case ns%1000 == 0:
		return t.Format("2006-01-02T15:04:05.000000Z")
	default:
		return t.Format("2006-01-02T15:04:05.000000000Z")
	}
}
