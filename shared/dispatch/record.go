package dispatch

import (
	"context"
	"log/slog"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/push"
	"github.com/ocyless/ocyless/shared/wire"
)

// GroupOutput is the failure group of a job whose target answered 2xx
// with an output the store refused (too large for it, or the store full).
const GroupOutput = "push_output"

// record applies the outcomes to their jobs, each fenced by its attempt
// (one pipelined round): a job that moved on meanwhile (cancelled, timed
// out) keeps its state. A completion whose output the store refuses fails
// the attempt instead, with GroupOutput.
func record(ctx context.Context, store Store, log *slog.Logger, outs []push.Outcome) error {
	items := make([]ocypod.BatchUpdate, len(outs))
	for i, o := range outs {
		items[i] = ocypod.BatchUpdate{ID: o.JobID, Update: update(o)}
	}
	res, _, err := store.UpdateJobs(ctx, items, nil)
	if err != nil {
		return err
	}
	var again []ocypod.BatchUpdate
	for i, r := range res {
		if r.Err == nil {
			logEnd(ctx, log, items[i])
			continue
		}
		o := outs[i]
		kind := ocypod.ErrorKind(r.Err)
		if o.Result == push.Completed && (kind == ocypod.KindInvalid || kind == ocypod.KindStorageFull) {
			u := update(push.Outcome{JobID: o.JobID, Attempt: o.Attempt, Result: push.Failed,
				Error: &push.Failure{Group: GroupOutput, Message: "the output was refused: " + ocypod.ErrorMessage(r.Err)}})
			again = append(again, ocypod.BatchUpdate{ID: o.JobID, Update: u})
			continue
		}
		log.Info("push: outcome not recorded, the job moved on", slog.Uint64("job_id", o.JobID),
			slog.Int("attempt", o.Attempt), slog.String("outcome", o.Result.String()), slog.String("reason", ocypod.ErrorMessage(r.Err)))
	}
	if len(again) > 0 {
		res, _, err := store.UpdateJobs(ctx, again, nil)
		if err != nil {
			return err
		}
		for i, r := range res {
			if r.Err == nil {
				logEnd(ctx, log, again[i])
			}
		}
	}
	return nil
}

// logEnd logs a recorded outcome as the API logs a worker's PATCH.
func logEnd(ctx context.Context, log *slog.Logger, it ocypod.BatchUpdate) {
	log.LogAttrs(ctx, slog.LevelInfo, "job "+string(*it.Update.Status), slog.Uint64("job_id", it.ID), slog.String("worker", Worker))
}

// update is the PATCH of one outcome, fenced by its attempt.
func update(o push.Outcome) ocypod.JobUpdate {
	att := uint64(o.Attempt)
	u := ocypod.JobUpdate{Attempt: &att}
	st := ocypod.StatusFailed
	switch o.Result {
	case push.Completed:
		st = ocypod.StatusCompleted
		u.Output = canonical(o.Output)
	case push.TimedOut:
		st = ocypod.StatusTimedOut
	}
	u.Status = &st
	if st != ocypod.StatusCompleted && o.Error != nil {
		u.Error = &ocypod.JobError{Group: o.Error.Group, Message: o.Error.Message}
	}
	if st == ocypod.StatusFailed && !o.RetryAt.IsZero() {
		t := o.RetryAt
		u.RetryAt = &t
	}
	return u
}

// canonical is an output as the API stores user JSON (object keys
// sorted); nil for none.
func canonical(raw []byte) []byte {
	if len(raw) == 0 {
		return nil
	}
	v, err := wire.Parse(raw)
	if err != nil {
		return raw // the store refuses it, and the attempt fails
	}
	return wire.Canonical(&v)
}
