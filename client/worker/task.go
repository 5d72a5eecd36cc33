package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ocyless/ocyless/client"
)

// Job is a job the worker took, handed to the Handler.
type Job struct {
	ID      uint64
	Queue   string
	Attempt uint64          // this attempt's number: it fences every call about the job
	Input   json.RawMessage // nil for null

	c *client.Client
}

// Decode decodes the job's input into v.
func (j *Job) Decode(v any) error {
	in := j.Input
	if in == nil {
		in = json.RawMessage("null")
	}
	return json.Unmarshal(in, v)
}

// SetOutput replaces the job's output while it runs (progress, partial
// results), fenced by its attempt: client.ErrStaleAttempt when the job was
// taken again since.
func (j *Job) SetOutput(ctx context.Context, output any) error {
	return j.c.SetJobOutput(ctx, j.ID, j.Attempt, output)
}

// Heartbeat sends a heartbeat now, fenced by the job's attempt. The worker
// sends them by itself (Options.HeartbeatInterval); this is for handlers
// that want one at a particular point.
func (j *Job) Heartbeat(ctx context.Context) error {
	return j.c.Heartbeat(ctx, j.ID, j.Attempt)
}

// task is one job in a worker: its handler's context and who reports its
// outcome.
type task struct {
	job      *Job
	ctx      context.Context
	cancel   context.CancelCauseFunc
	log      *slog.Logger
	claimed  atomic.Bool   // set by whoever reports: the lane, or shutdown's release
	done     chan struct{} // the handler returned: heartbeats stop
	reported chan struct{} // the outcome was reported (or dropped)
}

// claim makes the caller the one that reports the task's outcome.
func (t *task) claim() bool { return t.claimed.CompareAndSwap(false, true) }

// work runs the handler on one job and reports its outcome; it returns the
// job the completion took, if any.
func (r *run) work(tj *client.TakenJob) *client.TakenJob {
	t := r.newTask(tj)
	ctx, cancel := t.ctx, t.cancel
	defer cancel(nil)
	if !r.track(t) {
		t.claim()
		cancel(ErrShutdown)
		r.release(t)
		return nil
	}
	defer r.untrack(t)
	go r.heartbeat(t)
	out, err := r.call(t)
	close(t.done)
	if !t.claim() {
		return nil // released by shutdown: its result is dropped
	}
	defer close(t.reported)
	if errors.Is(context.Cause(ctx), ErrJobLost) {
		t.log.Warn("job lost: its result is dropped")
		r.finished(t, ErrJobLost)
		return nil
	}
	next, rerr := r.report(t, out, err)
	switch {
	case rerr != nil && (client.IsConflict(rerr) || client.IsNotFound(rerr)):
		t.log.Warn("job lost: its outcome was refused", slog.String("error", rerr.Error()))
		rerr = fmt.Errorf("%w: %w", ErrJobLost, rerr)
	case rerr != nil:
		t.log.Error("reporting the job's outcome failed", slog.String("error", rerr.Error()))
	case err != nil:
		t.log.Warn("job failed", slog.String("error", firstLine(err.Error())))
	}
	r.finished(t, errors.Join(err, rerr))
	return next
}

// newTask makes the task of a taken job.
func (r *run) newTask(tj *client.TakenJob) *task {
	ctx, cancel := context.WithCancelCause(r.base)
	return &task{
		job:    &Job{ID: tj.ID, Queue: tj.Queue, Attempt: tj.Attempt, Input: tj.Input, c: r.w.c},
		ctx:    ctx,
		cancel: cancel,
		log: r.log.With(slog.Uint64("job_id", tj.ID), slog.String("queue", tj.Queue),
			slog.Uint64("attempt", tj.Attempt)),
		done:     make(chan struct{}),
		reported: make(chan struct{}),
	}
}

// call runs the handler, turning a panic into a failure.
func (r *run) call(t *task) (out any, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, recovered(v)
		}
	}()
	return r.w.h(t.ctx, t.job)
}

func (r *run) finished(t *task, err error) {
	if r.w.o.OnFinish != nil {
		r.w.o.OnFinish(t.job, err)
	}
}

// report completes or fails the job and returns the job a completion took.
func (r *run) report(t *task, out any, herr error) (*client.TakenJob, error) {
	ctx, cancel := context.WithTimeout(r.base, r.w.reportTimeout)
	defer cancel()
	if herr == nil {
		var raw json.RawMessage
		var err error
		if out != nil {
			raw, err = json.Marshal(out)
		}
		if err != nil {
			herr = fmt.Errorf("worker: the handler's output: %w", err)
		} else {
			next, err := r.complete(ctx, t, raw)
			if !(client.IsBadRequest(err) || errors.Is(err, client.ErrTooLarge) || errors.Is(err, client.ErrStorageFull)) {
				return next, err
			}
			// The server refused the output: the job cannot complete.
			herr = fmt.Errorf("worker: completing with the handler's output: %w", err)
		}
	}
	return nil, r.fail(ctx, t, herr)
}

func (r *run) complete(ctx context.Context, t *task, output json.RawMessage) (*client.TakenJob, error) {
	u := client.JobUpdate{Attempt: t.job.Attempt, Status: client.StatusCompleted}
	if output != nil {
		u.Output = output
	}
	if q := r.takeQueue(); q != "" {
		u.Take = &client.TakeAfter{Queue: q, TakeOptions: client.TakeOptions{Worker: r.w.o.Name}}
	}
	res, err := r.send(ctx, t, u)
	if err != nil || len(res.Taken) == 0 {
		return nil, err
	}
	return &res.Taken[0], nil
}

// maxMessage is the longest error message the server keeps.
const maxMessage = 64 << 10

func (r *run) fail(ctx context.Context, t *task, herr error) error {
	u := failUpdate(t, herr)
	_, err := r.send(ctx, t, u)
	if client.IsBadRequest(err) {
		// Something of the failure was refused (a retry time, the error):
		// the failure itself must still be recorded.
		_, err = r.send(ctx, t, client.JobUpdate{Attempt: t.job.Attempt, Status: client.StatusFailed, NoRetry: u.NoRetry})
	}
	return err
}

// failUpdate is the update that fails t's attempt with the handler's
// error herr.
func failUpdate(t *task, herr error) client.JobUpdate {
	msg := strings.ToValidUTF8(herr.Error(), "\uFFFD")
	if len(msg) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut]
	}
	// The group is always sent: the server's own default, "failed", when
	// the handler named none (an error without a group is not kept in the
	// job's history once the job is retried).
	u := client.JobUpdate{Attempt: t.job.Attempt, Status: client.StatusFailed,
		Error: &client.JobError{Group: DefaultGroup, Message: msg}}
	var f *failure
	if errors.As(herr, &f) {
		if printable(f.group, 128) {
			u.Error.Group = f.group
		}
		u.NoRetry, u.RetryAt, u.RetryIn, u.RetryInSet = f.permanent, f.retryAt, f.retryIn, f.hasIn
	}
	return u
}

// release fails a job whose handler did not finish in time with a retry
// due at once, so another worker takes it while it has retries left.
func (r *run) release(t *task) {
	defer close(t.reported)
	ctx, cancel := context.WithTimeout(r.base, r.w.reportTimeout)
	defer cancel()
	_, err := r.send(ctx, t, client.JobUpdate{Attempt: t.job.Attempt, Status: client.StatusFailed,
		Error:      &client.JobError{Group: ShutdownGroup, Message: ErrShutdown.Error()},
		RetryInSet: true})
	if err != nil {
		t.log.Error("releasing the job failed", slog.String("error", err.Error()))
	} else {
		t.log.Warn("job released: its handler did not finish within the shutdown grace period")
	}
	r.finished(t, errors.Join(ErrShutdown, err))
}

// send applies an update, sending it again while the server is
// unavailable or unreachable. A repeat may find the first attempt
// applied: its 409 is then a success, once the job shows this attempt
// ended. A repeat never takes a job (the first may have). A 404 for the
// queue to take from (deleted meanwhile) is the take's failure, not the
// job's: the update is sent again without the take, as a repeat (a server
// that answered so after applying it then answers 409).
func (r *run) send(ctx context.Context, t *task, u client.JobUpdate) (client.UpdateResult, error) {
	delay := 100 * time.Millisecond
	repeated := false
	for {
		res, err := r.w.c.UpdateJob(ctx, t.job.ID, u)
		if u.Take != nil && takeQueueGone(err, u.Take.Queue) {
			t.log.Warn("the queue to take the next job from does not exist; reporting without the take",
				slog.String("error", err.Error()))
			repeated, u.Take = true, nil
			continue
		}
		switch {
		case err == nil:
			return res, nil
		case repeated && client.IsConflict(err) && !errors.Is(err, client.ErrStaleAttempt) && r.applied(ctx, t, u.Status):
			return client.UpdateResult{}, nil
		case ctx.Err() != nil || !(client.IsUnavailable(err) || errors.As(err, new(*url.Error))):
			return res, err
		}
		t.log.Warn("reporting the job's outcome failed; trying again", slog.String("error", err.Error()))
		repeated, u.Take = true, nil
		tm := time.NewTimer(delay)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return res, err
		}
		delay = min(delay*2, 5*time.Second)
	}
}

// takeQueueGone reports whether err is the 404 of a take queue that does
// not exist (rather than of the job).
func takeQueueGone(err error, queue string) bool {
	var ce *client.Error
	return errors.As(err, &ce) && ce.StatusCode == http.StatusNotFound &&
		ce.Message == "Queue '"+queue+"' does not exist"
}

// applied reports whether t's attempt ended with status want, as a repeated
// update that found it ended asks: ended some other way (timed out,
// cancelled), the update was not applied and the outcome is lost. The
// job's history holds every ended attempt, the current one included.
func (r *run) applied(ctx context.Context, t *task, want client.Status) bool {
	j, err := r.w.c.GetJob(ctx, t.job.ID, "history")
	if err != nil {
		return false
	}
	for _, a := range j.History {
		if a.Attempt == t.job.Attempt {
			return a.Status == want
		}
	}
	return false
}

// readHeartbeatAfter is how long a handler runs before its job's
// heartbeat_timeout is read (the first heartbeat is due at a third of it,
// at least 333ms).
const readHeartbeatAfter = 250 * time.Millisecond

// heartbeat sends the job's heartbeats until its handler returns. A
// heartbeat refused because the job is no longer this attempt's (409,
// 404) ends the handler's context with ErrJobLost.
func (r *run) heartbeat(t *task) {
	every := r.w.o.HeartbeatInterval
	if every < 0 {
		return
	}
	if every == 0 {
		// A heartbeat_timeout is at least a second: a handler done sooner
		// needs none, and its job costs no read of it.
		first := time.NewTimer(readHeartbeatAfter)
		select {
		case <-first.C:
		case <-t.done:
			first.Stop()
			return
		case <-t.ctx.Done():
			first.Stop()
			return
		}
		hb, ok := r.heartbeatTimeout(t)
		if !ok || hb <= 0 {
			return
		}
		every = max(hb/3, time.Millisecond)
	}
	tick, stop := r.w.newTicker(every)
	defer stop()
	for {
		select {
		case <-t.done:
			return
		case <-t.ctx.Done():
			return
		case <-tick:
		}
		err := r.w.c.Heartbeat(t.ctx, t.job.ID, t.job.Attempt)
		switch {
		case err == nil:
		case client.IsConflict(err) || client.IsNotFound(err):
			t.log.Warn("heartbeat refused: the job is lost", slog.String("error", err.Error()))
			t.cancel(ErrJobLost)
			return
		case t.ctx.Err() != nil:
			return
		default:
			t.log.Warn("heartbeat failed", slog.String("error", err.Error()))
		}
	}
}

// heartbeatTimeout reads the job's heartbeat_timeout, trying again each
// second while the server cannot answer; ok is false when the handler
// returned first or the job is gone.
func (r *run) heartbeatTimeout(t *task) (time.Duration, bool) {
	for {
		j, err := r.w.c.GetJob(t.ctx, t.job.ID, "heartbeat_timeout")
		if err == nil {
			return j.HeartbeatTimeout, true
		}
		if client.IsNotFound(err) {
			t.cancel(ErrJobLost)
			return 0, false
		}
		t.log.Warn("reading the job's heartbeat_timeout failed", slog.String("error", err.Error()))
		tm := time.NewTimer(time.Second)
		select {
		case <-tm.C:
		case <-t.done:
			tm.Stop()
			return 0, false
		case <-t.ctx.Done():
			tm.Stop()
			return 0, false
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
