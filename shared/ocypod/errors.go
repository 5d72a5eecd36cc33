package ocypod

import (
	"errors"
	"fmt"
)

// Kind classifies an Error; the HTTP layer maps each kind to one status code.
type Kind int

// The error kinds.
const (
	KindInternal    Kind = iota // 500: a broken invariant or an unexpected Redis reply
	KindInvalid                 // 400: the request is malformed
	KindNotFound                // 404: the job or queue does not exist
	KindConflict                // 409: the job is not in a state that allows the change
	KindUnavailable             // 503: Redis cannot be reached
	KindStorageFull             // 507: the store refuses to hold more data
)

// Error is an application error. Message is the exact text a client sees;
// Err, when set, is the underlying cause and is never shown to clients.
type Error struct {
	Kind    Kind
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// InternalMessage is the only text a 500 carries, whichever layer answers
// it: causes are logged, never sent.
const InternalMessage = "Internal server error"

// ErrorKind returns the kind of err: the kind of the first *Error in its
// chain, or KindInternal for anything else.
func ErrorKind(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// ErrorMessage returns the client-facing text of err. Errors that are not
// application errors give a generic text, so internals never leak.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return InternalMessage
}

// JobNotFound is Ocypod's 404 for a missing job.
func JobNotFound(id uint64) *Error {
	return &Error{Kind: KindNotFound, Message: fmt.Sprintf("Job with ID %d does not exist", id)}
}

// QueueNotFound is Ocypod's 404 for a missing queue.
func QueueNotFound(name string) *Error {
	return &Error{Kind: KindNotFound, Message: fmt.Sprintf("Queue '%s' does not exist", name)}
}

// PushQueue is the 409 of a take from a queue whose jobs the server
// delivers by push: only its dispatcher takes them.
func PushQueue(name string) *Error {
	return &Error{Kind: KindConflict, Message: fmt.Sprintf("Queue '%s' delivers its jobs by push", name)}
}

// WorkerNotFound is the 404 of a worker the registry does not know (never
// seen, or forgotten after worker_expiry).
func WorkerNotFound(name string) *Error {
	return &Error{Kind: KindNotFound, Message: fmt.Sprintf("Worker '%s' does not exist", name)}
}

// ScheduleNotFound is the 404 of a missing schedule.
func ScheduleNotFound(queue, id string) *Error {
	return &Error{Kind: KindNotFound, Message: fmt.Sprintf("Schedule '%s' of queue '%s' does not exist", id, queue)}
}

// InvalidQueueName is Ocypod's 400 for a queue name outside [A-Za-z0-9_.-]+.
func InvalidQueueName() *Error {
	return &Error{Kind: KindInvalid, Message: "Invalid queue name, valid characters: a-zA-Z0-9_.-"}
}

// EmptyTag is the 400 for a job created with an empty-string tag. Upstream
// accepted such tags and then failed every delete and expiry of the job; we
// refuse them at creation instead.
func EmptyTag() *Error {
	return &Error{Kind: KindInvalid, Message: "tags cannot be empty"}
}

// TransitionConflict is Ocypod's 409 for a status change the transition
// table does not allow.
func TransitionConflict(from, to Status) *Error {
	return &Error{Kind: KindConflict, Message: fmt.Sprintf("Cannot change status from %s to %s", from, to)}
}

// OutputNotRunning is Ocypod's 409 for writing the output of a job that is
// not running.
func OutputNotRunning() *Error {
	return &Error{Kind: KindConflict, Message: "Can only set output for running jobs"}
}

// HeartbeatNotRunning is Ocypod's 409 for a heartbeat on a job that is not
// running.
func HeartbeatNotRunning(id uint64) *Error {
	return &Error{Kind: KindConflict, Message: fmt.Sprintf("Cannot heartbeat job %d, job is not running", id)}
}

// StaleAttempt is the 409 of a fenced change (?attempt=n) on a job whose
// current attempt is another.
func StaleAttempt(id, attempt uint64) *Error {
	return &Error{Kind: KindConflict, Message: fmt.Sprintf("Job %d attempt %d is not current", id, attempt)}
}

// NotPending is the 409 of an in-place change (priority, run_at,
// depends_on) of a job that is not pending.
func NotPending(id uint64, st Status) *Error {
	return &Error{Kind: KindConflict, Message: fmt.Sprintf("Job %d is %s: only queued, scheduled or waiting jobs can be changed", id, st)}
}

// KeyExists is the 409 of a create with on_conflict "error" whose key a
// pending job holds.
func KeyExists(key string, id uint64) *Error {
	return &Error{Kind: KindConflict, Message: fmt.Sprintf("Job with key '%s' already exists: %d", key, id)}
}

// KeyPending is the 409 of a requeue or retry of a job whose key another
// pending job holds.
func KeyPending(id, other uint64) *Error {
	return &Error{Kind: KindConflict, Message: fmt.Sprintf("Job %d cannot be requeued: job %d with the same key is pending", id, other)}
}

// KeyMoved is the 409 of a requeue or retry of a keyed job that an earlier
// version placed outside its sharded queue's first shard, where that
// queue's keys now live.
func KeyMoved(id uint64) *Error {
	return &Error{Kind: KindConflict, Message: fmt.Sprintf("Job %d cannot be requeued: its key is now kept in its queue's first shard; create a new job with it", id)}
}

// Invalid is a 400 with the given message.
func Invalid(msg string) *Error { return &Error{Kind: KindInvalid, Message: msg} }

// UnavailableBecause is Ocypod's 503 for a Redis failure. The client reads
// "Failed to connect to Redis: " and reason, a short fixed phrase such as
// "timed out"; err, the cause, is kept for the log and never shown, since
// its text may carry addresses or the server's own words.
func UnavailableBecause(reason string, err error) *Error {
	return &Error{Kind: KindUnavailable, Message: "Failed to connect to Redis: " + reason, Err: err}
}

// Unavailable is UnavailableBecause("connection failed", err).
func Unavailable(err error) *Error { return UnavailableBecause("connection failed", err) }

// StorageFull is a 507: the store refuses new data (the embedded store's
// memory bound, or the id space exhausted). msg is the client's text.
func StorageFull(msg string) *Error { return &Error{Kind: KindStorageFull, Message: msg} }

// Internal wraps an unexpected failure. Its message stays generic.
func Internal(err error) *Error {
	return &Error{Kind: KindInternal, Message: InternalMessage, Err: err}
}
