package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/ocyless/ocyless/client"
)

// Batches (Options.BatchSize): each lane takes a batch, runs its handlers
// at once, then reports the batch and takes the next one in one request.

// pollBatches runs Concurrency batch lanes until Run's context ends.
func (r *run) pollBatches() {
	for range r.w.o.Concurrency {
		r.lanes.Add(1)
		go func() {
			defer r.lanes.Done()
			r.batchLane()
		}()
	}
	<-r.ctx.Done()
}

// batchLane takes batches and runs them until Run's context ends.
func (r *run) batchLane() {
	backoff := r.w.o.ErrorBackoff
	var jobs []client.TakenJob
	for {
		if len(jobs) == 0 {
			if r.ctx.Err() != nil {
				return
			}
			var err error
			if jobs, err = r.take(r.w.o.BatchSize); err != nil {
				if !r.takeFailed(err, &backoff) {
					return
				}
				continue
			}
			backoff = r.w.o.ErrorBackoff
			continue
		}
		jobs = r.runBatch(jobs)
	}
}

// batchOutcome is one job's result in a batch: its task, the handler's output
// (JSON) and error, and the update that reports it.
type batchOutcome struct {
	t    *task
	raw  json.RawMessage
	herr error
	u    client.JobUpdate
}

// runBatch runs the handlers of jobs at once, reports their outcomes
// together and returns the jobs taken with the report.
func (r *run) runBatch(jobs []client.TakenJob) []client.TakenJob {
	var tasks []*task
	for i := range jobs {
		t := r.newTask(&jobs[i])
		if !r.track(t) {
			t.claim()
			t.cancel(ErrShutdown)
			r.release(t)
			continue
		}
		tasks = append(tasks, t)
	}
	if len(tasks) == 0 {
		return nil
	}
	defer func() {
		for _, t := range tasks {
			t.cancel(nil)
			r.untrack(t)
		}
	}()
	beats := make(chan struct{})
	var hb sync.WaitGroup
	hb.Go(func() { r.batchHeartbeat(tasks, beats) })
	outs := make([]*batchOutcome, len(tasks))
	var wg sync.WaitGroup
	for i, t := range tasks {
		wg.Go(func() {
			out, err := r.call(t)
			close(t.done)
			outs[i] = &batchOutcome{t: t, herr: err}
			if err == nil && out != nil {
				if outs[i].raw, err = json.Marshal(out); err != nil {
					outs[i].herr = fmt.Errorf("worker: the handler's output: %w", err)
				}
			}
		})
	}
	wg.Wait()
	close(beats)
	hb.Wait()
	var mine []*batchOutcome
	for _, o := range outs {
		if !o.t.claim() {
			continue // released by shutdown: its result is dropped
		}
		if errors.Is(context.Cause(o.t.ctx), ErrJobLost) {
			o.t.log.Warn("job lost: its result is dropped")
			r.finished(o.t, ErrJobLost)
			close(o.t.reported)
			continue
		}
		if o.herr == nil {
			o.u = client.JobUpdate{Attempt: o.t.job.Attempt, Status: client.StatusCompleted}
			if o.raw != nil {
				o.u.Output = o.raw
			}
		} else {
			o.u = failUpdate(o.t, o.herr)
		}
		mine = append(mine, o)
	}
	if len(mine) == 0 {
		return nil
	}
	return r.reportBatch(mine)
}

// reportBatch reports the outcomes in one request, taking the next batch
// with it, and returns the jobs taken. A request that fails while the
// server is unavailable or unreachable is sent again without its take; an
// item refused on its own is handled as the single report would be.
func (r *run) reportBatch(outs []*batchOutcome) []client.TakenJob {
	ctx, cancel := context.WithTimeout(r.base, r.w.reportTimeout)
	defer cancel()
	items := make([]client.BatchUpdate, len(outs))
	for i, o := range outs {
		items[i] = client.BatchUpdate{ID: o.t.job.ID, JobUpdate: o.u}
	}
	queue := r.takeQueue()
	delay := 100 * time.Millisecond
	repeated := false
	var results []client.BatchResult
	var next []client.TakenJob
	for {
		var err error
		if queue != "" {
			results, next, err = r.w.c.UpdateJobsAndTake(ctx, items, queue,
				client.TakeOptions{Count: r.w.o.BatchSize, Worker: r.w.o.Name})
		} else {
			results, err = r.w.c.UpdateJobs(ctx, items)
		}
		if err == nil && len(results) == len(outs) {
			break
		}
		if err == nil {
			err = fmt.Errorf("worker: %d results for %d reports", len(results), len(outs))
		}
		switch {
		case client.IsNotFound(err) && queue != "":
			// The take's queue is gone: nothing was applied; report
			// without taking.
			queue = ""
			continue
		case ctx.Err() == nil && (client.IsUnavailable(err) || errors.As(err, new(*url.Error))):
			r.log.Warn("reporting a batch failed; trying again", slog.String("error", err.Error()))
			repeated, queue = true, ""
			tm := time.NewTimer(delay)
			select {
			case <-tm.C:
			case <-ctx.Done():
				tm.Stop()
			}
			delay = min(delay*2, 5*time.Second)
			continue
		}
		// Anything else: each job reported on its own.
		r.log.Error("reporting a batch failed; reporting its jobs one by one", slog.String("error", err.Error()))
		for _, o := range outs {
			if j := r.reportOne(o); j != nil {
				next = append(next, *j)
			}
		}
		return next
	}
	for i, o := range outs {
		r.settle(ctx, o, &results[i], repeated)
	}
	return next
}

// reportOne reports one batchOutcome with its own request, as a worker without
// batches does; it returns the job its completion took.
func (r *run) reportOne(o *batchOutcome) *client.TakenJob {
	defer close(o.t.reported)
	var out any
	if o.raw != nil {
		out = o.raw
	}
	next, rerr := r.report(o.t, out, o.herr)
	r.conclude(o, rerr)
	return next
}

// settle finishes an batchOutcome from its item's result.
func (r *run) settle(ctx context.Context, o *batchOutcome, res *client.BatchResult, repeated bool) {
	defer close(o.t.reported)
	err := res.Err()
	switch {
	case err == nil:
	case repeated && client.IsConflict(err) && !errors.Is(err, client.ErrStaleAttempt) && r.applied(ctx, o.t, o.u.Status):
		// The first request was applied before it failed.
		err = nil
	case o.herr == nil && (client.IsBadRequest(err) || errors.Is(err, client.ErrStorageFull)):
		// The server refused the output: the job cannot complete.
		err = r.fail(ctx, o.t, fmt.Errorf("worker: completing with the handler's output: %w", err))
	case o.herr != nil && client.IsBadRequest(err):
		// Something of the failure was refused: the failure itself must
		// still be recorded.
		_, err = r.send(ctx, o.t, client.JobUpdate{Attempt: o.t.job.Attempt, Status: client.StatusFailed, NoRetry: o.u.NoRetry})
	case client.IsUnavailable(err):
		_, err = r.send(ctx, o.t, o.u)
	}
	r.conclude(o, err)
}

// conclude logs an batchOutcome and calls OnFinish, as work does.
func (r *run) conclude(o *batchOutcome, rerr error) {
	t := o.t
	switch {
	case rerr != nil && (client.IsConflict(rerr) || client.IsNotFound(rerr)):
		t.log.Warn("job lost: its batchOutcome was refused", slog.String("error", rerr.Error()))
		rerr = fmt.Errorf("%w: %w", ErrJobLost, rerr)
	case rerr != nil:
		t.log.Error("reporting the job's batchOutcome failed", slog.String("error", rerr.Error()))
	case o.herr != nil:
		t.log.Warn("job failed", slog.String("error", firstLine(o.herr.Error())))
	}
	r.finished(t, errors.Join(o.herr, rerr))
}

// batchHeartbeat sends the heartbeats of a batch's running jobs in one
// request per beat until stop closes. A job whose heartbeat is refused
// (409, 404) is lost: its handler's context ends with ErrJobLost.
func (r *run) batchHeartbeat(tasks []*task, stop <-chan struct{}) {
	every := r.w.o.HeartbeatInterval
	if every < 0 {
		return
	}
	if every == 0 {
		wait := time.NewTimer(readHeartbeatAfter)
		select {
		case <-wait.C:
		case <-stop:
			wait.Stop()
			return
		}
		first := tasks[0]
		for _, t := range tasks {
			select {
			case <-t.done:
				continue
			default:
			}
			first = t
			break
		}
		hb, ok := r.heartbeatTimeout(first)
		if !ok || hb <= 0 {
			return
		}
		every = max(hb/3, time.Millisecond)
	}
	tick, stopTick := r.w.newTicker(every)
	defer stopTick()
	ctx, cancel := context.WithCancel(r.base)
	defer cancel()
	go func() {
		<-stop
		cancel()
	}()
	for {
		select {
		case <-stop:
			return
		case <-tick:
		}
		var items []client.BatchHeartbeat
		var beating []*task
		for _, t := range tasks {
			select {
			case <-t.done:
				continue
			default:
			}
			if t.ctx.Err() == nil {
				items = append(items, client.BatchHeartbeat{ID: t.job.ID, Attempt: t.job.Attempt})
				beating = append(beating, t)
			}
		}
		if len(items) == 0 {
			return
		}
		results, err := r.w.c.HeartbeatJobs(ctx, items)
		if err == nil && len(results) != len(items) {
			err = fmt.Errorf("worker: %d heartbeat results for %d jobs", len(results), len(items))
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			r.log.Warn("heartbeats failed", slog.String("error", err.Error()))
			continue
		}
		for i, t := range beating {
			if e := results[i].Err(); client.IsConflict(e) || client.IsNotFound(e) {
				t.log.Warn("heartbeat refused: the job is lost", slog.String("error", e.Error()))
				t.cancel(ErrJobLost)
			}
		}
	}
}
