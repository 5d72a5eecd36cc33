package redisstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/redis/go-redis/v9"
	"log/slog"
	"math"
	"strconv"
	"time"
)

// SweepResult reports one sweep call over every partition. The id lists
// hold the jobs affected.
type SweepResult struct {
	TimedOut  []uint64 // running jobs failed as timed_out
	Retried   []uint64 // failed/timed-out jobs requeued
	Promoted  []uint64 // scheduled jobs that fell due
	Abandoned []uint64 // retries given up (queue deleted, key taken)
	Expired   []uint64 // ended jobs deleted
	Dropped   []uint64 // index entries without a job in that state, removed
	// Other counts work that is not about one job (pending jobs of deleted
	// queues dropped, outbox effects applied, schedules fired).
	Other int
	// More is true when a batch limit was reached: more is due now.
	More bool
	// NextDue is when the next entry of this sweep's kind becomes due, zero
	// if none is known.
	NextDue time.Time
}

// Jobs is the number of jobs the result changed.
func (r SweepResult) Jobs() int {
	return len(r.TimedOut) + len(r.Retried) + len(r.Promoted) + len(r.Abandoned) + len(r.Expired) + r.Other
}

func (r *SweepResult) add(o SweepResult) {
	r.TimedOut = append(r.TimedOut, o.TimedOut...)
	r.Retried = append(r.Retried, o.Retried...)
	r.Promoted = append(r.Promoted, o.Promoted...)
	r.Abandoned = append(r.Abandoned, o.Abandoned...)
	r.Expired = append(r.Expired, o.Expired...)
	r.Dropped = append(r.Dropped, o.Dropped...)
	r.Other += o.Other
	r.More = r.More || o.More
	if !o.NextDue.IsZero() && (r.NextDue.IsZero() || o.NextDue.Before(r.NextDue)) {
		r.NextDue = o.NextDue
	}
}

// sweepEvents names, for the log, what a sweep outcome did to a job.
var sweepEvents = map[string]string{
	"timed_out": "job timed out",
	"retried":   "job retried",
	"promoted":  "job due",
	"abandoned": "job retry abandoned",
	"expired":   "job expired",
}

// LogEvents writes one line per job the sweep changed, like Ocypod's
// "[job:3] timed out", each with the job_id attribute.
func (r SweepResult) LogEvents(ctx context.Context, log *slog.Logger) {
	for _, ev := range []struct {
		outcome string
		ids     []uint64
	}{
		{"timed_out", r.TimedOut}, {"retried", r.Retried}, {"promoted", r.Promoted},
		{"abandoned", r.Abandoned}, {"expired", r.Expired},
	} {
		for _, id := range ev.ids {
			log.InfoContext(ctx, sweepEvents[ev.outcome], slog.Uint64("job_id", id))
		}
	}
}

// SweepTimeouts fails, as timed_out, up to SweepBatch running jobs per
// partition whose timeout or heartbeat_timeout has passed (Ocypod's strict
// rule: more than the limit in whole seconds). Each goes on as after a
// client's timed_out: it waits for a retry, or ends. Safe to run
// concurrently with itself and every other operation.
func (s *Store) SweepTimeouts(ctx context.Context) (SweepResult, error) {
	return s.sweepKind(ctx, keyRunning, "timeouts")
}

// SweepRetries requeues up to SweepBatch failed jobs per partition whose
// retry is due (retries_attempted + 1, output and run timestamps cleared,
// back of the queue), and moves scheduled jobs that fell due to queued. A
// retry whose queue was deleted is abandoned: the job ends and expires.
func (s *Store) SweepRetries(ctx context.Context) (SweepResult, error) {
	return s.sweepKind(ctx, keyDue, "retries")
}

// SweepExpiry deletes up to SweepBatch ended jobs per partition whose
// expires_after passed, exactly as DeleteJob does; it also drops a slice of
// the pending jobs of deleted queues. Jobs with expires_after 0 never
// expire.
func (s *Store) SweepExpiry(ctx context.Context) (SweepResult, error) {
	r, err := s.sweepKind(ctx, keyExpiry, "expiry")
	if err != nil {
		return r, err
	}
	for p := range s.l.P {
		more, err := s.dropSlice(ctx, p)
		if err != nil {
			return r, fmt.Errorf("redisstore: sweep expiry: %w", err)
		}
		r.More = r.More || more
	}
	return r, nil
}

// sweepKind runs sweep.lua of kind on every partition (one pipelined
// round), then folds the pending statistics if a minute began since they
// were last folded (foldDue).
func (s *Store) sweepKind(ctx context.Context, kind, name string) (SweepResult, error) {
	type sweepReply struct {
		Done dict[list[idStr]] `json:"done"`
		More bool              `json:"more"`
		Next string            `json:"next"`
	}
	calls := make([]*call, s.l.P)
	outs := make([]any, s.l.P)
	for p := range s.l.P {
		args := &sweepArgs{Kind: kind, Limit: s.o.SweepBatch}
		if kind == keyExpiry {
			args.WorkerTTL = s.o.WorkerExpiry.Milliseconds()
		}
		calls[p] = &call{sc: scriptSweep, p: p, args: args}
		outs[p] = new(sweepReply)
	}
	replies, errs := s.runAll(ctx, calls, outs)
	var res SweepResult
	var failed []error
	for p := range s.l.P {
		if errs[p] != nil {
			failed = append(failed, errs[p])
			continue
		}
		s.afterCall(ctx, replies[p])
		r := outs[p].(*sweepReply)
		res.add(SweepResult{TimedOut: ids(r.Done["timed_out"]), Retried: ids(r.Done["retried"]),
			Promoted: ids(r.Done["promoted"]), Abandoned: ids(r.Done["abandoned"]),
			Expired: ids(r.Done["expired"]), Dropped: ids(r.Done["dropped"]), More: r.More,
			NextDue: scoreTime(r.Next)})
	}
	if len(failed) > 0 {
		// Partitions that answered were swept; report the others' trouble.
		return res, fmt.Errorf("redisstore: sweep %s: %w", name, errors.Join(failed...))
	}
	more, err := s.foldDue(ctx)
	if err != nil {
		// The statistics stay pending (every read counts them): the next
		// sweep folds them.
		s.log.WarnContext(ctx, "pending statistics not folded; the next sweep will", "error", err)
	}
	res.More = res.More || more
	return res, nil
}

// scoreTime reads a sorted-set score in ms; "" or infinite gives zero.
func scoreTime(score string) time.Time {
	if score == "" {
		return time.Time{}
	}
	ms, err := strconv.ParseFloat(score, 64)
	if err != nil || math.IsInf(ms, 0) || math.IsNaN(ms) {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms)).UTC()
}

// OldestDue is how long the oldest work that is due has waited for a
// sweep: a running job past its deadline, a scheduled job or retry past its
// due time, an ended job past its expiry, an outbox entry past its grace
// period. Zero when nothing is overdue. The sweepers report it as a
// metric, so an alarm can tell sweeps that stopped or fall behind. One
// pipelined round over partitions.
func (s *Store) OldestDue(ctx context.Context) (time.Duration, error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.rdb.Pipeline()
	var cmds []interface {
		Result() ([]redis.Z, error)
	}
	for p := range s.l.P {
		for _, idx := range []string{keyRunning, keyDue, keyExpiry, keyOutboxTimes} {
			cmds = append(cmds, pipe.ZRangeWithScores(ctx, s.l.key(p, idx), 0, 0))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("redisstore: oldest due: %w", translate(err))
	}
	now := s.now()
	var oldest time.Duration
	for i, c := range cmds {
		z, err := c.Result()
		if err != nil || len(z) == 0 {
			continue
		}
		due := time.UnixMilli(int64(z[0].Score))
		if i%4 == 3 { // outbox entries are due after their grace period
			due = due.Add(outboxGrace)
		}
		if age := now.Sub(due); age > oldest {
			oldest = age
		}
	}
	return oldest, nil
}

// sweepArgs is sweep.lua's argument: the kind of sweep, the most jobs it
// handles, and with kind exp how long (ms, > 0) a worker is listed after
// it was last seen.
type sweepArgs struct {
	Kind      string `json:"kind"`
	Limit     int    `json:"limit"`
	WorkerTTL int64  `json:"worker_ttl,omitempty"`
}
