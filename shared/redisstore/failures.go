package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Failures counts the jobs that failed for good, by failure group: the
// group a worker reported with the failure, else "failed" or "timed_out".
// Groups without jobs are left out. One pipelined round over partitions.
func (s *Store) Failures(ctx context.Context) (map[string]uint64, error) {
	counts, err := s.groupCounts(ctx)
	if err != nil {
		return nil, fmt.Errorf("redisstore: failures: %w", err)
	}
	out := map[string]uint64{}
	for _, m := range counts {
		for g, n := range m {
			if n > 0 {
				out[g] += n
			}
		}
	}
	return out, nil
}

// groupCounts reads every partition's failure group counts.
func (s *Store) groupCounts(ctx context.Context) ([]map[string]uint64, error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, s.l.P)
	for p := range s.l.P {
		cmds[p] = pipe.HGetAll(ctx, s.l.key(p, keyFailCounts))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, translate(err)
	}
	out := make([]map[string]uint64, s.l.P)
	for p, c := range cmds {
		out[p] = map[string]uint64{}
		for g, v := range c.Val() {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, ocypod.Internal(fmt.Errorf("failure group %q: unreadable count %q", g, truncate(v)))
			}
			if n > 0 {
				out[p][g] = uint64(n)
			}
		}
	}
	return out, nil
}

// FailureJobs returns one page of failure group group (by id) and its size.
// An unknown group is an empty page.
func (s *Store) FailureJobs(ctx context.Context, group string, limit int, cur string) (ocypod.FailurePage, error) {
	fail := func(err error) (ocypod.FailurePage, error) {
		return ocypod.FailurePage{}, fmt.Errorf("redisstore: failures of %q: %w", group, err)
	}
	limit = cmp.Or(limit, ocypod.DefaultListLimit)
	if limit < 1 || limit > ocypod.MaxListLimit {
		return fail(ocypod.Invalid(fmt.Sprintf("Invalid limit: must be 1 to %d", ocypod.MaxListLimit)))
	}
	lo, hi := lexRange(escLex(group))
	args := &listArgs{Limit: limit, Scan: limit, Parts: partsFor(nil), CountGroup: &group,
		Sources: []listSource{{Index: keyFailures, Lo: lo, Hi: hi}}}
	page, total, err := s.listPageTotal(ctx, ocypod.ListRequest{Limit: limit, Cursor: cur}, args)
	if err != nil {
		return fail(err)
	}
	return ocypod.FailurePage{Total: total, Jobs: page.Jobs, NextCursor: page.NextCursor}, nil
}

// RetryFailures requeues up to limit jobs of failure group group (qless's
// unfail), into queue when it is not "", and returns how many it requeued.
// Partitions get their share of limit from their counts, so the total never
// exceeds it. Returns ocypod.QueueNotFound for a missing queue.
func (s *Store) RetryFailures(ctx context.Context, group string, limit int, queue string) (int, error) {
	fail := func(err error) (int, error) { return 0, fmt.Errorf("redisstore: retry failures of %q: %w", group, err) }
	limit = cmp.Or(limit, ocypod.DefaultListLimit)
	if limit < 1 || limit > ocypod.MaxListLimit {
		return fail(ocypod.Invalid(fmt.Sprintf("Invalid limit: must be 1 to %d", ocypod.MaxListLimit)))
	}
	if queue != "" && !ocypod.ValidQueueName(queue) {
		return fail(ocypod.InvalidQueueName())
	}
	var calls []*call
	if s.l.P == 1 {
		// One partition: the whole limit, and the queue checked in the
		// same script.
		args := &retryGroupArgs{Group: group, Limit: limit}
		if queue != "" {
			args.MustExist = queue
		}
		calls = append(calls, &call{sc: scriptRetryGroup, queue: queue, args: args})
	} else {
		if queue != "" {
			if err := s.checkQueueExists(ctx, queue); err != nil {
				return fail(err)
			}
		}
		counts, err := s.groupCounts(ctx)
		if err != nil {
			return fail(err)
		}
		left := limit
		for p, m := range counts {
			n := min(int(m[group]), left)
			if n == 0 {
				continue
			}
			left -= n
			args := &retryGroupArgs{Group: group, Limit: n}
			if queue != "" {
				part := s.effectPart(queue, "")
				args.Part = &part
			}
			calls = append(calls, &call{sc: scriptRetryGroup, p: p, queue: queue, args: args})
		}
	}
	outs := make([]any, len(calls))
	for i := range outs {
		outs[i] = new(struct {
			Retried int `json:"retried"`
		})
	}
	replies, errs := s.runAll(ctx, calls, outs)
	total := 0
	for i := range calls {
		if errs[i] != nil {
			return total, fmt.Errorf("redisstore: retry failures of %q: %w", group, errs[i])
		}
		if replies[i].Err == "queue_not_found" {
			return fail(ocypod.QueueNotFound(queue))
		}
		s.afterCall(ctx, replies[i])
		total += outs[i].(*struct {
			Retried int `json:"retried"`
		}).Retried
	}
	return total, nil
}

// retryGroupArgs is retry_group.lua's argument: requeue up to Limit jobs
// of failure group Group, into the call's queue when it names one (A.queue;
// MustExist: checked in this call; Part: the partition a job of another
// partition is copied to).
type retryGroupArgs struct {
	Group     string `json:"group"`
	Limit     int    `json:"limit"`
	MustExist string `json:"must_exist,omitempty"`
	Part      *int   `json:"part,omitempty"`
}
