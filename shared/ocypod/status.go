package ocypod

import "slices"

// Status is the state of a job. Its string form is Ocypod's snake_case name.
type Status string

// The six job statuses.
const (
	StatusQueued    Status = "queued"
	StatusRunning   Status = "running"
	StatusFailed    Status = "failed"
	StatusCompleted Status = "completed"
	StatusCancelled Status = "cancelled"
	StatusTimedOut  Status = "timed_out"
)

// Statuses lists every status in the order Ocypod's JSON objects use for
// per-status groups (info counts, job ids of a queue).
var Statuses = []Status{StatusQueued, StatusRunning, StatusFailed, StatusCompleted, StatusCancelled, StatusTimedOut}

// ParseStatus returns the status named s and whether s names one.
func ParseStatus(s string) (Status, bool) {
	st := Status(s)
	return st, slices.Contains(Statuses, st)
}

// transitions is Ocypod's table of status changes a client may request with
// PATCH /job/{id}: current status -> statuses it may move to. queued -> running
// happens only by taking the job, so it is absent here.
var transitions = map[Status][]Status{
	StatusQueued:    {StatusCancelled},
	StatusRunning:   {StatusCompleted, StatusFailed, StatusTimedOut, StatusCancelled},
	StatusFailed:    {StatusQueued, StatusCancelled},
	StatusTimedOut:  {StatusQueued},
	StatusCancelled: {StatusQueued},
	StatusCompleted: nil,
}

// CanTransition reports whether a client may change a job from status from to
// status to.
func CanTransition(from, to Status) bool {
	return slices.Contains(transitions[from], to)
}

// AllowedFrom returns the statuses from which a client may move a job to
// status to, in Statuses order. The store checks the job's current status
// against this list inside the same atomic operation that applies the change.
func AllowedFrom(to Status) []Status {
	var from []Status
	for _, s := range Statuses {
		if CanTransition(s, to) {
			from = append(from, s)
		}
	}
	return from
}

// IsEnded reports Ocypod's derived "ended" flag. Completed and cancelled jobs
// have ended; queued and running ones have not; a failed or timed-out job has
// ended when it will not be retried automatically: it has no retries, it has
// used them all, or its retry was abandoned because its queue was deleted.
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
