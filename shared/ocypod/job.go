package ocypod

import (
	"encoding/json"
	"time"
)

// Job is everything Ocypod reports about a job: the 17 fields of
// GET /job/{id}, with Ended derived from the others.
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
	// RetryAbandoned is set when an automatic retry found the job's queue
	// deleted; the job then ends instead of waiting forever.
	RetryAbandoned bool
}

// Ended is Ocypod's derived "ended" flag (see IsEnded).
func (j *Job) Ended() bool {
	return IsEnded(j.Status, j.Retries, j.RetriesAttempted, j.RetryAbandoned)
}

// JobFields are the 17 job field names, in the default order of GET /job/{id}.
var JobFields = []string{
	"id", "queue", "status", "tags", "created_at", "started_at", "ended_at",
	"last_heartbeat", "input", "output", "timeout", "heartbeat_timeout",
	"expires_after", "retries", "retries_attempted", "retry_delays", "ended",
}

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
}

// Validate checks what the store cannot: tags must not be empty strings.
func (s *JobSpec) Validate() error {
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

// JobUpdate is a PATCH /job/{id}: a status change, an output, or both.
type JobUpdate struct {
	Status *Status
	Output json.RawMessage // nil: leave the output alone
}

// NextJob is what a worker receives when it takes a job.
type NextJob struct {
	ID    uint64
	Input json.RawMessage // nil for JSON null
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
