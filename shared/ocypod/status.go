package ocypod

import "slices"

// Status is the state of a job. Its string form is Ocypod's snake_case name.
type Status string

// The job statuses: Ocypod's six, then the two of the extended job model
// (a job reaches them only through an extension: run_at/delay, depends_on,
// or a client key whose job is running).
const (
	StatusQueued    Status = "queued"
	StatusRunning   Status = "running"
	StatusFailed    Status = "failed"
	StatusCompleted Status = "completed"
	StatusCancelled Status = "cancelled"
	StatusTimedOut  Status = "timed_out"
	StatusScheduled Status = "scheduled" // has a run_at in the future
	StatusWaiting   Status = "waiting"   // waits on dependencies or on the running job with its key
)

// Statuses lists Ocypod's six statuses in the order Ocypod's JSON objects use
// for per-status groups (info counts, job ids of a queue).
var Statuses = []Status{StatusQueued, StatusRunning, StatusFailed, StatusCompleted, StatusCancelled, StatusTimedOut}

// AllStatuses is Statuses followed by the extension statuses, the order in
// which per-status groups are written when the extension ones are present.
var AllStatuses = []Status{StatusQueued, StatusRunning, StatusFailed, StatusCompleted, StatusCancelled,
	StatusTimedOut, StatusScheduled, StatusWaiting}

// ParseStatus returns the status named s and whether s names one.
func ParseStatus(s string) (Status, bool) {
	st := Status(s)
	return st, slices.Contains(AllStatuses, st)
}

// Pending reports whether a job in status st waits to run: queued,
// scheduled or waiting.
func (st Status) Pending() bool {
	return st == StatusQueued || st == StatusScheduled || st == StatusWaiting
}

// transitions is the table of status changes a client may request with
// PATCH /job/{id}: current status -> statuses it may move to. It is Ocypod's
// table plus the cancellation of scheduled and waiting jobs. queued ->
// running happens only by taking the job, and scheduled/waiting -> queued
// only when the job falls due or stops waiting, so they are absent here.
var transitions = map[Status][]Status{
	StatusQueued:    {StatusCancelled},
	StatusRunning:   {StatusCompleted, StatusFailed, StatusTimedOut, StatusCancelled},
	StatusFailed:    {StatusQueued, StatusCancelled},
	StatusTimedOut:  {StatusQueued},
	StatusCancelled: {StatusQueued},
	StatusCompleted: nil,
	StatusScheduled: {StatusCancelled},
	StatusWaiting:   {StatusCancelled},
}

// CanTransition reports whether a client may change a job from status from to
// status to.
func CanTransition(from, to Status) bool {
	return slices.Contains(transitions[from], to)
}

// AllowedFrom returns the statuses from which a client may move a job to
// status to, in AllStatuses order. The store checks the job's current status
// against this list inside the same atomic operation that applies the change.
func AllowedFrom(to Status) []Status {
	var from []Status
	for _, s := range AllStatuses {
		if CanTransition(s, to) {
			from = append(from, s)
		}
	}
	return from
}

// IsEnded reports Ocypod's derived "ended" flag. Completed and cancelled jobs
// have ended; pending and running ones have not; a failed or timed-out job has
// ended when it will not be retried automatically: it has no retries, it has
// used them all, or its retry was abandoned (its queue was deleted, or the
// failure was permanent).
func IsEnded(status Status, retries, retriesAttempted uint64, retryAbandoned bool) bool {
	switch status {
	case StatusCompleted, StatusCancelled:
		return true
	case StatusFailed, StatusTimedOut:
		return retries == 0 || retriesAttempted >= retries || retryAbandoned
	default:
		return false
	}
}
