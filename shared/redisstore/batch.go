package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// UpdateJobs applies each item as UpdateJob would, each on its own (one
// refused item does not stop the others) and each one atomic script call;
// the calls of every partition go in one pipelined round (an item that
// sets depends_on runs on its own, as UpdateJob). With take set it
// then takes jobs as Take would. The take's queue is checked first: a
// missing one is ocypod.QueueNotFound and nothing is applied.
//
// outcomes[i] is item i's: its refusal (the error UpdateJob gives) or its
// result. The returned error is for the whole batch: the take's queue, a
// take that failed, or Redis failing every item (ocypod.Unavailable or
// ocypod.Internal; some may have been applied, as with any call that fails
// after it was sent).
func (s *Store) UpdateJobs(ctx context.Context, items []ocypod.BatchUpdate, take *ocypod.TakeRequest) ([]ocypod.BatchOutcome, []ocypod.NextJob, error) {
	fail := func(err error) ([]ocypod.BatchOutcome, []ocypod.NextJob, error) {
		return nil, nil, fmt.Errorf("redisstore: update %d jobs: %w", len(items), err)
	}
	if len(items) == 0 || len(items) > ocypod.MaxBatch {
		return fail(ocypod.Invalid(fmt.Sprintf("a batch has 1 to %d items", ocypod.MaxBatch)))
	}
	var tk *takeCall
	if take != nil {
		var err error
		if tk, err = s.newTake(ctx, *take); err != nil {
			return fail(err)
		}
		if !tk.checked {
			if err := s.checkTakeable(ctx, *take); err != nil {
				return fail(err)
			}
		}
	}
	now := s.now()
	out := make([]ocypod.BatchOutcome, len(items))
	calls := make([]*call, 0, len(items))
	idx := make([]int, 0, len(items)) // calls[k] is items[idx[k]]
	var alone []int                   // items that change dependencies: UpdateJob's lock
	for i := range items {
		it := &items[i]
		if it.Update.DependsOnSet && len(it.Update.DependsOn) > 0 {
			alone = append(alone, i)
			continue
		}
		args, err := s.updateArgs(ctx, it.ID, &it.Update, now)
		if err != nil {
			out[i].Err = err
			continue
		}
		c := s.jobCall(scriptUpdateJob, it.ID, args)
		c.now = now
		calls = append(calls, c)
		idx = append(idx, i)
	}
	replies, errs := s.runAll(ctx, calls, make([]any, len(calls)))
	for k, i := range idx {
		it := &items[i]
		err := errs[k]
		if err == nil && replies[k].Err != "" {
			err = refusal(replies[k], it.ID, "", it.Update.Status, deref(it.Update.Attempt))
			replies[k] = nil
		}
		out[i].Err = err
	}
	for _, i := range alone {
		// A change of dependencies holds the dependency lock around its
		// script (guardDependsOn): such an item runs as UpdateJob.
		out[i].Result, _, out[i].Err = s.UpdateJob(ctx, items[i].ID, items[i].Update, nil)
	}
	if err := allFailed(out); err != nil {
		return fail(err)
	}
	for _, e := range s.afterCalls(ctx, replies) {
		if e.Op != "create" {
			continue
		}
		for _, i := range idx {
			if out[i].Err == nil && e.From == strconv.FormatUint(items[i].ID, 10) && items[i].Update.Next != nil {
				out[i].Result.NextID = e.created
			}
		}
	}
	for i := range items {
		if out[i].Err == nil && items[i].Update.Next != nil && out[i].Result.NextID == 0 {
			s.log.WarnContext(ctx, "follow-up job not created yet; the outbox sweep will", "job_id", items[i].ID)
		}
	}
	if tk == nil {
		return out, nil, nil
	}
	jobs, err := tk.run(ctx)
	switch {
	case ocypod.ErrorKind(err) == ocypod.KindNotFound:
		// The batch is applied: a take queue deleted since its check
		// takes nothing, as in UpdateJob.
		return out, nil, nil
	case err != nil:
		return fail(err)
	}
	return out, jobs, nil
}

// HeartbeatJobs records a heartbeat of each item's job as Heartbeat would,
// each on its own, in one pipelined round. outcomes[i].Err is item i's
// refusal; the returned error is Redis failing every item.
func (s *Store) HeartbeatJobs(ctx context.Context, items []ocypod.BatchUpdate) ([]ocypod.BatchOutcome, error) {
	if len(items) == 0 || len(items) > ocypod.MaxBatch {
		return nil, fmt.Errorf("redisstore: heartbeat of %d jobs: %w", len(items), ocypod.Invalid(fmt.Sprintf("a batch has 1 to %d items", ocypod.MaxBatch)))
	}
	calls := make([]*call, len(items))
	for i := range items {
		calls[i] = s.jobCall(scriptHeartbeat, items[i].ID, &heartbeatArgs{Attempt: items[i].Update.Attempt})
	}
	replies, errs := s.runAll(ctx, calls, make([]any, len(calls)))
	out := make([]ocypod.BatchOutcome, len(items))
	for i := range items {
		err := errs[i]
		if r := replies[i]; err == nil && r.Err != "" {
			if r.Err == "not_running" {
				err = ocypod.HeartbeatNotRunning(items[i].ID)
			} else {
				err = refusal(r, items[i].ID, "", nil, deref(items[i].Update.Attempt))
			}
		}
		out[i].Err = err
	}
	if err := allFailed(out); err != nil {
		return nil, fmt.Errorf("redisstore: heartbeat of %d jobs: %w", len(items), err)
	}
	return out, nil
}

// allFailed returns the error of the outcomes when every one is Redis
// failing (ocypod.Unavailable or ocypod.Internal): the batch as a whole
// could not be served, and answers as a single call would.
func allFailed(out []ocypod.BatchOutcome) error {
	for i := range out {
		if k := ocypod.ErrorKind(out[i].Err); out[i].Err == nil || (k != ocypod.KindUnavailable && k != ocypod.KindInternal) {
			return nil
		}
	}
	var e *ocypod.Error
	if errors.As(out[0].Err, &e) {
		return e
	}
	return out[0].Err
}

// afterCalls finishes the script calls of a batch as afterCall does one:
// one wake message for the queues every call made ready, then each call's
// effects. It returns the effects, applied or not.
func (s *Store) afterCalls(ctx context.Context, replies []*reply) []effectEntry {
	var woken []string
	var effects []effectEntry
	for _, r := range replies {
		if r == nil {
			continue
		}
		woken = append(woken, r.Woken...)
		effects = append(effects, r.Effects...)
	}
	if len(woken) > 0 {
		s.publishWake(ctx, woken)
	}
	if len(effects) == 0 || s.crashAfterCall {
		return effects
	}
	for i := range effects {
		if err := s.applyEffect(ctx, &effects[i]); err != nil {
			s.log.WarnContext(ctx, "effect not applied yet; the outbox sweep will retry",
				"effect", effects[i].ID, "op", effects[i].Op, "error", ocypod.RedactSecrets(err.Error()))
		}
	}
	return effects
}
