// Package sweep runs the store's maintenance sweeps (Kinds: timeouts, retries
// and expiry as Ocypod's background monitors did, plus recurring schedules
// and the cross-partition outbox) as bounded calls that fit both a local
// ticker and a scheduled Lambda invocation.
//
// Each store sweep handles at most one batch of due jobs. Once repeats it
// until nothing more is due now. Run keeps an invocation alive for a time
// budget while jobs are about to become due, so a sweeper scheduled once a
// minute still notices a timeout within MaxWait of its deadline; when nothing
// is due within its budget it returns at once, so an idle deployment (or
// one whose jobs have long timeouts) costs next to nothing.
package sweep

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ocyless/ocyless/shared/redisstore"
)

// Kind names a sweep.
type Kind string

// The sweeps.
const (
	Timeouts  Kind = "timeouts"  // running jobs past timeout or heartbeat_timeout -> timed_out
	Retries   Kind = "retries"   // failed jobs whose retry delay passed -> queued; due scheduled jobs -> queued
	Expiry    Kind = "expiry"    // ended jobs past expires_after -> deleted; deleted queues' pending jobs dropped
	Schedules Kind = "schedules" // recurring jobs whose time came -> created
	Outbox    Kind = "outbox"    // effects across partitions that their request left behind -> applied
)

// Kinds lists every sweep.
var Kinds = []Kind{Timeouts, Retries, Expiry, Schedules, Outbox}

// ParseKind returns the kind named s.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("sweep: unknown kind %q (want timeouts, retries, expiry, schedules or outbox)", s)
}

// Store is the part of *redisstore.Store the sweeps use.
type Store interface {
	SweepTimeouts(ctx context.Context) (redisstore.SweepResult, error)
	SweepRetries(ctx context.Context) (redisstore.SweepResult, error)
	SweepExpiry(ctx context.Context) (redisstore.SweepResult, error)
	SweepSchedules(ctx context.Context) (redisstore.SweepResult, error)
	SweepOutbox(ctx context.Context) (redisstore.SweepResult, error)
}

var _ Store = (*redisstore.Store)(nil)

// Totals count what a Once or Run call did.
type Totals struct {
	Batches   int `json:"batches"`
	TimedOut  int `json:"timed_out"`
	Retried   int `json:"retried"`
	Promoted  int `json:"promoted"`
	Abandoned int `json:"abandoned"`
	Expired   int `json:"expired"`
	// Other counts what is not about one job: schedules fired, outbox
	// effects applied, pending jobs of deleted queues dropped.
	Other int `json:"other"`
}

func (t *Totals) add(r redisstore.SweepResult) {
	t.Batches++
	t.TimedOut += len(r.TimedOut)
	t.Retried += len(r.Retried)
	t.Promoted += len(r.Promoted)
	t.Abandoned += len(r.Abandoned)
	t.Expired += len(r.Expired)
	t.Other += r.Other
}

// Jobs is the number of jobs (and other items) the sweeps changed.
func (t Totals) Jobs() int {
	return t.TimedOut + t.Retried + t.Promoted + t.Abandoned + t.Expired + t.Other
}

// DefaultMaxWait is how long Run sleeps at most between passes.
const DefaultMaxWait = 5 * time.Second

// Runner runs sweeps. The zero value of each optional field picks a default.
type Runner struct {
	Store  Store
	Logger *slog.Logger // nil discards
	// Now and Sleep are the clock; tests replace them.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// MaxWait bounds each sleep of Run, so jobs that start running while it
	// waits are still checked promptly. Default DefaultMaxWait.
	MaxWait time.Duration
}

// Once sweeps kind until nothing more is due now, logging one line per job.
func Once(ctx context.Context, s Store, kind Kind, log *slog.Logger) (Totals, error) {
	return Runner{Store: s, Logger: log}.Run(ctx, kind, 0)
}

// Run sweeps kind until nothing more is due now and then, while a job is
// known to fall due before the budget ends, sleeps until it does (at most
// MaxWait at a time, so jobs started meanwhile are seen too) and sweeps
// again. It returns as soon as nothing is due within the budget, when the
// budget is spent, or on the first error. A budget <= 0 makes it a single
// Once.
func (r Runner) Run(ctx context.Context, kind Kind, budget time.Duration) (Totals, error) {
	now, sleep, log := r.Now, r.Sleep, r.Logger
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = sleepCtx
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	maxWait := r.MaxWait
	if maxWait <= 0 {
		maxWait = DefaultMaxWait
	}
	sweepFn, err := r.sweepFunc(kind)
	if err != nil {
		return Totals{}, err
	}
	var tot Totals
	end := now().Add(budget)
	for {
		res, err := sweepFn(ctx)
		if err != nil {
			return tot, fmt.Errorf("sweep %s: %w", kind, err)
		}
		tot.add(res)
		res.LogEvents(ctx, log)
		if res.More {
			if budget > 0 && !now().Before(end) {
				break
			}
			continue
		}
		// Stay only for jobs known to fall due within the budget: an
		// invocation with nothing due soon ends at once and costs nothing.
		if budget <= 0 || res.NextDue.IsZero() || !res.NextDue.Before(end) {
			break
		}
		wait := min(max(res.NextDue.Sub(now()), 0), maxWait)
		if wait > 0 {
			if err := sleep(ctx, wait); err != nil {
				break // cancelled: report what was done
			}
		}
	}
	if tot.Jobs() > 0 {
		log.InfoContext(ctx, "sweep finished", slog.String("sweep", string(kind)),
			slog.Int("batches", tot.Batches), slog.Int("timed_out", tot.TimedOut),
			slog.Int("retried", tot.Retried), slog.Int("promoted", tot.Promoted), slog.Int("abandoned", tot.Abandoned),
			slog.Int("expired", tot.Expired), slog.Int("other", tot.Other))
	}
	return tot, nil
}

func (r Runner) sweepFunc(kind Kind) (func(context.Context) (redisstore.SweepResult, error), error) {
	switch kind {
	case Timeouts:
		return r.Store.SweepTimeouts, nil
	case Retries:
		return r.Store.SweepRetries, nil
	case Expiry:
		return r.Store.SweepExpiry, nil
	case Schedules:
		return r.Store.SweepSchedules, nil
	case Outbox:
		return r.Store.SweepOutbox, nil
	}
	_, err := ParseKind(string(kind))
	return nil, err
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
