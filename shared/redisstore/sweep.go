package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// SweepResult reports one sweep call. The id lists hold the jobs affected.
type SweepResult struct {
	TimedOut  []uint64 // running jobs failed as timed_out
	Retried   []uint64 // failed/timed-out jobs requeued
	Abandoned []uint64 // retries given up because the job's queue was deleted
	Expired   []uint64 // ended jobs deleted
	// Dropped are ids removed from the swept index without touching a job:
	// their hash vanished (or holds no usable job), or the job was no longer
	// in the state the index is for. Normally empty.
	Dropped []uint64
	// More is true when the batch limit was reached: more jobs are due now.
	More bool
	// NextDue is when the next job of this sweep's kind becomes due, zero if
	// none is scheduled.
	NextDue time.Time
}

// SweepTimeouts fails, as timed_out, up to SweepBatch running jobs whose
// timeout or heartbeat_timeout has passed (Ocypod's strict rule: more than
// the limit in whole seconds, give or take a millisecond). Each job goes on
// as after a client's timed_out: it waits for a retry, or ends. Safe to run
// concurrently with itself and every other operation. Errors are
// ocypod.Unavailable or ocypod.Internal.
func (s *Store) SweepTimeouts(ctx context.Context) (SweepResult, error) {
	r, err := s.sweep(ctx, scriptSweepTimeout, s.keys.Running())
	if err != nil {
		return SweepResult{}, fmt.Errorf("redisstore: sweep timeouts: %w", err)
	}
	return r, nil
}

// SweepRetries requeues up to SweepBatch failed jobs whose retry is due (the
// retry delay for the attempt has passed): retries_attempted + 1, output and
// run timestamps cleared, back of the queue. A job whose queue was deleted
// has its retry abandoned instead: it ends (RetryAbandoned, ended) and
// expires like any ended job. Errors are ocypod.Unavailable or
// ocypod.Internal.
func (s *Store) SweepRetries(ctx context.Context) (SweepResult, error) {
	r, err := s.sweep(ctx, scriptSweepRetries, s.keys.Failed())
	if err != nil {
		return SweepResult{}, fmt.Errorf("redisstore: sweep retries: %w", err)
	}
	return r, nil
}

// SweepExpiry deletes up to SweepBatch ended jobs whose expires_after passed,
// exactly as DeleteJob does. Jobs with expires_after 0 never expire. Errors
// are ocypod.Unavailable or ocypod.Internal.
func (s *Store) SweepExpiry(ctx context.Context) (SweepResult, error) {
	r, err := s.sweep(ctx, scriptSweepExpiry, s.keys.Ended())
	if err != nil {
		return SweepResult{}, fmt.Errorf("redisstore: sweep expiry: %w", err)
	}
	return r, nil
}

// sweep runs one sweep script and decodes its reply
// {first_ids, second_ids, dropped_ids, more, next}.
func (s *Store) sweep(ctx context.Context, sc *script, index string) (SweepResult, error) {
	arr, err := s.run(ctx, sc, index, s.nowMicros(), s.sweepBatch)
	if err != nil {
		return SweepResult{}, err
	}
	if len(arr) != 5 {
		return SweepResult{}, ocypod.Internal(fmt.Errorf("unexpected sweep reply %v", arr))
	}
	var lists [3][]uint64
	for i := range lists {
		if lists[i], err = replyIDs(arr, i); err != nil {
			return SweepResult{}, err
		}
	}
	more, err := replyInt(arr, 3)
	if err != nil {
		return SweepResult{}, err
	}
	r := SweepResult{Dropped: lists[2], More: more == 1}
	switch sc {
	case scriptSweepTimeout:
		r.TimedOut = lists[0]
	case scriptSweepRetries:
		r.Retried, r.Abandoned = lists[0], lists[1]
	case scriptSweepExpiry:
		r.Expired = lists[0]
	}
	if next := replyString(arr, 4); next != "" {
		ms, err := strconv.ParseFloat(next, 64)
		if err != nil {
			return SweepResult{}, ocypod.Internal(fmt.Errorf("unexpected score %q", next))
		}
		if !math.IsInf(ms, 0) && !math.IsNaN(ms) {
			r.NextDue = time.UnixMilli(int64(ms)).UTC()
		}
	}
	return r, nil
}

// LogEvents writes one line per job the sweep changed, like Ocypod's
// "[job:3] timed out": "job timed out", "job retried", "job retry abandoned,
// queue deleted", "job expired", each with the job_id attribute.
func (r SweepResult) LogEvents(ctx context.Context, log *slog.Logger) {
	for _, ev := range []struct {
		msg string
		ids []uint64
	}{
		{"job timed out", r.TimedOut},
		{"job retried", r.Retried},
		{"job retry abandoned, queue deleted", r.Abandoned},
		{"job expired", r.Expired},
	} {
		for _, id := range ev.ids {
			log.InfoContext(ctx, ev.msg, slog.Uint64("job_id", id))
		}
	}
}
