package ocypod

import (
	"encoding/json"
	"time"
)

// TakeRequest is a take: GET /queue/{name}/job and GET /job?queues=.
type TakeRequest struct {
	Queues []string      // in order of preference
	Count  int           // most jobs to take; 0 means 1
	Worker string        // recorded on the job and in the worker registry; "" none
	Wait   time.Duration // long-poll: how long to wait for a job when none is ready
	// RoundRobin starts at a different queue each call (order=round_robin)
	// instead of the first (order=ordered).
	RoundRobin bool
	// Stop, when closed, ends a long-poll's wait at once: the take answers
	// with what it has (a server shutting down). Redis calls under way
	// finish: a job taken is never dropped.
	Stop <-chan struct{}
	// Why, when not nil, is set to why a take that finds nothing found
	// nothing, when a queue's limit held its queued jobs back: "paused",
	// "concurrency" or "rate_limit" (left as it is otherwise).
	Why *string
	// Push is the push dispatcher's take: the only one a push queue
	// allows (others are ocypod.PushQueue refusals), and refused by a
	// queue without push.
	Push bool
	// PushTimeout, with Push, raises each taken job's timeout and
	// heartbeat timeout (when set) to at least this many whole seconds,
	// so the store never times a job out while it is being delivered.
	PushTimeout time.Duration
}

// Limits of takes.
const (
	MaxTakeCount = 100
	MaxWait      = 20 * time.Second
)

// MaxAnswerBytes bounds the body of a listing page or a take with count
// (under Lambda's 6 MB response limit): a page stops early with a next
// cursor, a take takes only the jobs that fit (at least one, whatever its
// size).
const MaxAnswerBytes = 5 << 20

// ListRequest selects jobs for GET /queue/{name}/jobs (Queue set) and
// GET /jobs (Queue empty). Empty filters select everything.
type ListRequest struct {
	Queue   string
	Status  Status
	Tag     string
	HasTag  bool // Tag was given (tags are never empty, but keep it explicit)
	Key     string
	Worker  string
	Tracked *bool
	Limit   int    // 1..MaxListLimit; 0 means DefaultListLimit
	Cursor  string // opaque, from a previous page's NextCursor
	// Fields are the job fields the page shows (nil: the default ones);
	// the store reads only the parts they need.
	Fields []string
}

// Listing limits.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// JobPage is one page of a listing. NextCursor is "" on the last page.
type JobPage struct {
	Jobs       []*Job
	NextCursor string
}

// FailurePage is one page of a failure group.
type FailurePage struct {
	Total      uint64
	Jobs       []*Job
	NextCursor string
}

// Worker is one entry of GET /workers.
type Worker struct {
	Name     string
	LastSeen time.Time
	Running  uint64
	TimedOut uint64
}

// WorkerJobs is GET /workers/{name}.
type WorkerJobs struct {
	Running, TimedOut []uint64
}

// HistogramBuckets is the number of buckets of a stats histogram, qless's
// layout: 60 one-second, 59 one-minute, 23 one-hour and 30 one-day buckets,
// the last of them open-ended.
const HistogramBuckets = 172

// HistogramBucket returns the bucket of a duration of secs seconds.
func HistogramBucket(secs float64) int {
	switch s := int64(secs); {
	case s < 60:
		return int(max(s, 0))
	case s < 3600:
		return 59 + int(s/60)
	case s < 86400:
		return 118 + int(s/3600)
	default:
		return min(141+int(s/86400), HistogramBuckets-1)
	}
}

// BucketValue is the duration, in seconds, that stands for bucket b in
// means and variances: the middle of its range (the last, open-ended
// bucket: its start).
func BucketValue(b int) float64 {
	switch {
	case b < 60:
		return float64(b) + 0.5
	case b < 119:
		return float64(b-59)*60 + 30
	case b < 142:
		return float64(b-118)*3600 + 1800
	case b < HistogramBuckets-1:
		return float64(b-141)*86400 + 43200
	}
	return 30 * 86400
}

// DurationStats are the wait or run times of one day: how many, their mean
// and variance in seconds, and the histogram.
type DurationStats struct {
	Count     uint64
	Mean      float64
	Variance  float64
	Histogram [HistogramBuckets]uint64
}

// QueueStats is GET /queue/{name}/stats for one UTC day.
type QueueStats struct {
	Created, Completed, Failed, Retries uint64
	Wait, Run                           DurationStats
}

// MinuteCount is how many minutes MinuteStats covers: the last hour.
const MinuteCount = 60

// MinuteStats is GET /queue/{name}/stats?by=minute's "minutes": a queue's
// jobs created, completed and failed (timed out included) in each minute
// of the last hour, oldest first; Start is the first minute, the last is
// the one under way.
type MinuteStats struct {
	Start                      time.Time
	Created, Completed, Failed [MinuteCount]uint64
}

// QueueMetrics are a queue's figures on GET /metrics: its jobs created,
// completed, failed and timed out today (UTC), and how long its job queued
// longest has been queued (0 when none is).
type QueueMetrics struct {
	Created, Completed, Failed, TimedOut uint64
	OldestQueued                         time.Duration
}

// Schedule is a recurring job: PUT /queue/{name}/schedules/{id}.
type Schedule struct {
	ID    string
	Queue string
	Cron  string   // 5-field cron in UTC, or ""
	Every Duration // or a fixed period
	// Job is the create body of every job the schedule makes, as canonical
	// JSON, and Spec the same decoded (the HTTP layer decodes and validates
	// it as a create body; the store keeps both).
	Job  json.RawMessage
	Spec JobSpec
	// NextRun is when it fires next (set by the store).
	NextRun time.Time
}

// MaxScheduleID bounds schedule ids (1..64 of [A-Za-z0-9_.-]).
const MaxScheduleID = 64
