package worker

import (
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// ErrJobLost is the cause of a handler's context ending because the job
// is no longer this worker's: a heartbeat found it timed out, cancelled,
// deleted or taken again (a newer attempt). The handler's result is then
// dropped: the server would refuse it.
var ErrJobLost = errors.New("worker: the job is no longer this worker's")

// ErrShutdown is the cause of a handler's context ending at the end of
// the shutdown grace period. The job has been released: failed with a
// retry due at once, so another worker takes it while retries are left.
var ErrShutdown = errors.New("worker: shut down before the handler finished")

// failure is a handler error with instructions for the failure report.
type failure struct {
	err       error
	group     string
	permanent bool
	retryAt   time.Time
	retryIn   time.Duration
	hasIn     bool
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// with returns a copy of the failure in err's chain (or a new one around
// err) changed by set; nil stays nil.
func with(err error, set func(*failure)) error {
	if err == nil {
		return nil
	}
	var f failure
	if prev := (*failure)(nil); errors.As(err, &prev) {
		f = *prev
		f.err = err
	} else {
		f.err = err
	}
	set(&f)
	return &f
}

// Permanent marks a handler error as final: the job fails for good,
// whatever retries it has left, and joins its failure group.
func Permanent(err error) error {
	return with(err, func(f *failure) { f.permanent, f.retryAt, f.retryIn, f.hasIn = true, time.Time{}, 0, false })
}

// RetryAt asks for the job's retry at t instead of its policy's delay
// (the retry still counts against its retries; with none left the job
// fails for good).
func RetryAt(err error, t time.Time) error {
	return with(err, func(f *failure) { f.permanent, f.retryAt, f.retryIn, f.hasIn = false, t, 0, false })
}

// RetryIn asks for the job's retry after d instead of its policy's delay
// (0: at once).
func RetryIn(err error, d time.Duration) error {
	return with(err, func(f *failure) { f.permanent, f.retryAt, f.retryIn, f.hasIn = false, time.Time{}, max(d, 0), true })
}

// WithGroup names the failure group the job joins if it fails for good
// (1 to 128 printable characters; anything else is left out, and
// DefaultGroup applies).
func WithGroup(err error, group string) error {
	return with(err, func(f *failure) { f.group = group })
}

// DefaultGroup is the failure group of a job whose handler's error named
// none: the server's own default.
const DefaultGroup = "failed"

// PanicGroup is the failure group of a job whose handler panicked.
const PanicGroup = "panic"

// ShutdownGroup is the failure group of a job released at shutdown when
// it had no retry left.
const ShutdownGroup = "worker_shutdown"

// panicError is a recovered panic of a handler.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string {
	return fmt.Sprintf("panic: %v\n\n%s", p.value, p.stack)
}

// recovered turns a recovered panic value into a failure of PanicGroup.
func recovered(v any) error {
	return WithGroup(&panicError{value: v, stack: debug.Stack()}, PanicGroup)
}
