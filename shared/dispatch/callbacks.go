package dispatch

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/push"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/wire"
)

// CallbackStore is what sending callbacks needs of the store.
type CallbackStore interface {
	DueCallbacks(ctx context.Context, limit int) ([]redisstore.DueCallback, time.Time, error)
	CallbackDone(ctx context.Context, id uint64, endedAt time.Time, try redisstore.CallbackTry) error
	GetJob(ctx context.Context, id uint64) (*ocypod.Job, error)
}

// Bounds of the callback loop.
const (
	callbackBatch = 100
	// callbackPoll is the longest the loop sleeps: a callback recorded by
	// another process is sent within it.
	callbackPoll = time.Second
)

// callbackLoop sends the due callbacks until the dispatcher stops: each
// round claims what is due, sends it concurrently, records each try, and
// sleeps until the next due time (at most callbackPoll).
func (d *Dispatcher) callbackLoop(cs CallbackStore) {
	defer d.loops.Done()
	for {
		select {
		case <-d.stop:
			return
		default:
		}
		wait := callbackPoll
		n, next := d.CallbacksOnce(d.deliver, cs)
		if n == callbackBatch {
			wait = 0
		} else if !next.IsZero() {
			wait = min(wait, max(time.Until(next), 10*time.Millisecond))
		}
		select {
		case <-d.stop:
			return
		case <-time.After(wait):
		}
	}
}

// CallbacksOnce sends the callbacks due now (at most one batch) and
// returns how many it claimed and when the next one is due (zero: none
// known). A Lambda runs it within its budget; the local server in a loop.
func (d *Dispatcher) CallbacksOnce(ctx context.Context, cs CallbackStore) (int, time.Time) {
	due, next, err := cs.DueCallbacks(ctx, callbackBatch)
	if err != nil {
		d.log.Warn("push: cannot read the due callbacks", slog.String("error", err.Error()))
		return 0, time.Time{}
	}
	var wg sync.WaitGroup
	for _, dc := range due {
		wg.Go(func() { d.sendCallback(ctx, cs, dc) })
	}
	wg.Wait()
	return len(due), next
}

// sendCallback POSTs one job's callback and records the try: delivered,
// retried with push.CallbackBackoff (or the answer's Retry-After), or
// given up 24 hours after the ending.
func (d *Dispatcher) sendCallback(ctx context.Context, cs CallbackStore, dc redisstore.DueCallback) {
	record := func(try redisstore.CallbackTry) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), push.ReportTimeout)
		defer cancel()
		if err := cs.CallbackDone(rctx, dc.JobID, dc.EndedAt, try); err != nil {
			d.log.Warn("push: callback try not recorded; it is sent again after its lease",
				slog.Uint64("job_id", dc.JobID), slog.String("error", err.Error()))
		}
	}
	cb, err := push.UnmarshalStoredCallback(dc.Callback)
	if err != nil {
		d.log.Error("push: unreadable callback setting", slog.Uint64("job_id", dc.JobID), slog.String("error", err.Error()))
		record(redisstore.CallbackTry{GiveUp: true})
		return
	}
	j, err := cs.GetJob(ctx, dc.JobID)
	if ocypod.ErrorKind(err) == ocypod.KindNotFound {
		record(redisstore.CallbackTry{GiveUp: true})
		return
	}
	if err != nil {
		return // sent again after its lease
	}
	res := d.o.Deliverer.SendCallback(ctx, &cb, j.ID, CallbackBody(j))
	if res.Delivered {
		record(redisstore.CallbackTry{Delivered: true})
		return
	}
	now := time.Now()
	if now.Sub(dc.EndedAt) >= push.CallbackGiveUpAfter {
		d.log.Warn("push: callback given up", slog.Uint64("job_id", j.ID), slog.Int("tries", dc.Tries+1), slog.Any("callback", cb))
		record(redisstore.CallbackTry{GiveUp: true})
		return
	}
	at := now.Add(push.CallbackBackoff(dc.Tries + 1))
	if !res.RetryAt.IsZero() {
		at = res.RetryAt
	}
	record(redisstore.CallbackTry{RetryAt: at})
}

// CallbackBody is what a callback POSTs: the job object as GET /job/{id}
// shows it, with its error, attempt and worker, and without its input.
func CallbackBody(j *ocypod.Job) []byte {
	fields := slices.DeleteFunc(slices.Clone(wire.DefaultJobFields(j)), func(f string) bool { return f == "input" })
	for _, f := range []string{"worker", "error", "attempt"} {
		if !slices.Contains(fields, f) {
			fields = append(fields, f)
		}
	}
	return wire.AppendJob(nil, j, fields)
}
