package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// effectEntry is an effect recorded in a partition's outbox (lib.lua's
// effect): work a script could not do in its own partition, or that needs
// Go (a dead letter's job object).
type effectEntry struct {
	ID    string          `json:"id"`
	Op    string          `json:"op"` // depend, dep, create, dlq
	To    int             `json:"to"`
	Job   string          `json:"job"`
	Dep   string          `json:"dep"`
	Why   string          `json:"why"`
	Queue string          `json:"queue"`
	Spec  json.RawMessage `json:"spec"`
	From  string          `json:"from"`
	// The dead letter's snapshot: the job's stored parts when it ended.
	Meta   *string `json:"meta"`
	Input  *string `json:"input"`
	Output *string `json:"output"`
	Error  *string `json:"error"`

	created uint64 // the id a create effect made
}

// source is the partition whose outbox holds e (its id is "<p>-<n>").
func (e *effectEntry) source() (int, error) {
	p, _, ok := strings.Cut(e.ID, "-")
	if !ok {
		return 0, fmt.Errorf("invalid effect id %q", e.ID)
	}
	return strconv.Atoi(p)
}

// afterCall finishes a script call: it wakes the long-polling takers of the
// queues the call made ready, then applies the effects it recorded and
// deletes them from their outbox. A failure leaves an effect in the outbox
// for the outbox sweep (it is idempotent); it is logged, not returned: the
// call itself succeeded. It returns the effects, applied or not.
func (s *Store) afterCall(ctx context.Context, r *reply) []effectEntry {
	if r == nil || (len(r.Woken) == 0 && len(r.Effects) == 0) {
		return nil
	}
	if len(r.Woken) > 0 {
		s.wakeQueues(ctx, r.p, r.Woken)
	}
	if s.crashAfterCall {
		return r.Effects
	}
	for i := range r.Effects {
		if err := s.applyEffect(ctx, &r.Effects[i]); err != nil {
			s.log.WarnContext(ctx, "effect not applied yet; the outbox sweep will retry",
				"effect", r.Effects[i].ID, "op", r.Effects[i].Op, "error", ocypod.RedactSecrets(err.Error()))
		}
	}
	return r.Effects
}

// wakeQueues pushes a wake token for each queue of partition p.
func (s *Store) wakeQueues(ctx context.Context, p int, queues []string) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.rdb.Pipeline()
	for _, q := range queues {
		pipe.RPush(ctx, s.l.key(p, "wake:"+q), "1")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		s.log.WarnContext(ctx, "waking takers failed", "error", ocypod.RedactSecrets(err.Error()))
	}
}

// applyEffect applies e where it belongs, then deletes it from its outbox.
func (s *Store) applyEffect(ctx context.Context, e *effectEntry) error {
	var r *reply
	var err error
	switch e.Op {
	case "depend", "dep":
		arg, _ := json.Marshal(e)
		var eff map[string]any
		_ = json.Unmarshal(arg, &eff)
		r, err = s.run(ctx, &call{sc: scriptApply, p: e.To, args: map[string]any{"effect": eff}}, nil)
	case "create":
		var spec map[string]any
		if err := json.Unmarshal(e.Spec, &spec); err != nil {
			return fmt.Errorf("effect %s: unreadable spec: %w", e.ID, err)
		}
		e.created, r, err = s.createOnce(ctx, e.Queue, spec, e.ID)
	case "copy", "dlq":
		// A job copied into another queue: a failed job retried there, or a
		// dead letter. When that queue is gone, the copy is dropped.
		build, gone := copySpec, "queue to retry a failed job in does not exist any more; the job is dropped"
		if e.Op == "dlq" {
			build, gone = s.deadLetter, "dead letter queue does not exist; the dead letter is dropped"
		}
		spec, derr := build(e)
		if derr != nil {
			return derr
		}
		e.created, r, err = s.createOnce(ctx, e.Queue, spec, e.ID)
		if errors.Is(err, errQueueGone) {
			s.log.WarnContext(ctx, gone, "queue", e.Queue, "job_id", e.Job)
			err = nil
		}
	default:
		return fmt.Errorf("effect %s: unknown op %q", e.ID, e.Op)
	}
	if err != nil {
		return err
	}
	s.afterCall(ctx, r)
	return s.ack(ctx, e)
}

var errQueueGone = errors.New("queue does not exist")

// createOnce creates one job from an effect (once: applying it again
// answers the first result).
func (s *Store) createOnce(ctx context.Context, queue string, spec map[string]any, once string) (uint64, *reply, error) {
	p := s.l.home(queue)
	if k := s.shards(queue); k > 1 {
		key, _ := spec["key"].(string)
		p = s.l.shard(p, s.pickShard(queue, key, k))
	}
	var got struct {
		IDs    list[idStr] `json:"ids"`
		Shards list[int]   `json:"shards"`
	}
	r, err := s.run(ctx, &call{sc: scriptCreateJob, p: p, queue: queue,
		args: map[string]any{"specs": []map[string]any{spec}, "once": once}}, &got)
	if err != nil {
		return 0, nil, err
	}
	if r.Err == "queue_not_found" {
		return 0, r, errQueueGone
	}
	if r.Err != "" {
		return 0, r, refusal(r, 0, queue, nil)
	}
	s.noteShards(queue, got.Shards)
	if len(got.IDs) != 1 {
		return 0, r, ocypod.Internal(fmt.Errorf("effect create: %d ids", len(got.IDs)))
	}
	return uint64(got.IDs[0]), r, nil
}

// deadLetter is the create spec of a dead letter: input {"job": <the job
// object as GET /job/{id} shows it>, "error": <its last error or null>}.
func (s *Store) deadLetter(e *effectEntry) (map[string]any, error) {
	id, err := strconv.ParseUint(e.Job, 10, 64)
	if err != nil || e.Meta == nil {
		return nil, fmt.Errorf("effect %s: invalid dead letter", e.ID)
	}
	j, err := decodeJob(id, *e.Meta, e.Input, e.Output, e.Error)
	if err != nil {
		return nil, fmt.Errorf("effect %s: %w", e.ID, err)
	}
	b := append([]byte(`{"job":`), wire.AppendJob(nil, j, nil)...)
	b = append(b, `,"error":`...)
	if j.Error != nil {
		b = wire.AppendJobError(b, j.Error)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, '}')
	return map[string]any{"input": string(b), "inherit_delays": true, "inherit_backoff": true}, nil
}

// copySpec is the create spec of a failed job retried into a queue of
// another partition: its input, tags, priority and tracking; the rest
// comes from the queue.
func copySpec(e *effectEntry) (map[string]any, error) {
	id, err := strconv.ParseUint(e.Job, 10, 64)
	if err != nil || e.Meta == nil {
		return nil, fmt.Errorf("effect %s: invalid copy", e.ID)
	}
	j, err := decodeJob(id, *e.Meta, e.Input, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("effect %s: %w", e.ID, err)
	}
	spec := ocypod.JobSpec{Input: j.Input, Tags: j.Tags, Priority: &j.Priority, Tracked: &j.Tracked}
	return specArgs(&spec, time.Time{})
}

// ack deletes an applied effect from its outbox.
func (s *Store) ack(ctx context.Context, e *effectEntry) error {
	p, err := e.source()
	if err != nil {
		return err
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.rdb.Pipeline()
	pipe.HDel(ctx, s.l.key(p, "ob"), e.ID)
	pipe.ZRem(ctx, s.l.key(p, "obt"), e.ID)
	_, err = pipe.Exec(ctx)
	return translate(err)
}

// SweepOutbox applies the effects that their requests left in the outboxes
// (the process died, or Redis failed, between the change and its effect)
// once they are older than a grace period, and forgets applied-effect
// records older than a day. Applying is idempotent, so overlapping sweeps
// and a late original are harmless.
func (s *Store) SweepOutbox(ctx context.Context) (SweepResult, error) {
	var res SweepResult
	cutoff := s.now().Add(-outboxGrace).UnixMilli()
	forget := s.now().Add(-appliedKeep).UnixMilli()
	for p := range s.l.P {
		n, more, next, err := s.sweepOutboxPartition(ctx, p, cutoff, forget)
		res.Other += n
		res.More = res.More || more
		if !next.IsZero() && (res.NextDue.IsZero() || next.Before(res.NextDue)) {
			res.NextDue = next
		}
		if err != nil {
			return res, fmt.Errorf("redisstore: sweep outbox: %w", err)
		}
	}
	return res, nil
}

func (s *Store) sweepOutboxPartition(ctx context.Context, p int, cutoff, forget int64) (int, bool, time.Time, error) {
	octx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.rdb.Pipeline()
	due := pipe.ZRangeByScore(octx, s.l.key(p, "obt"), &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(cutoff, 10), Count: int64(s.o.SweepBatch)})
	first := pipe.ZRangeWithScores(octx, s.l.key(p, "obt"), 0, 0)
	old := pipe.ZRangeByScore(octx, s.l.key(p, "apt"), &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(forget, 10), Count: int64(s.o.SweepBatch)})
	if _, err := pipe.Exec(octx); err != nil {
		return 0, false, time.Time{}, translate(err)
	}
	if ids := old.Val(); len(ids) > 0 {
		pipe := s.rdb.Pipeline()
		pipe.HDel(octx, s.l.key(p, "ap"), ids...)
		pipe.ZRem(octx, s.l.key(p, "apt"), toAny(ids)...)
		if _, err := pipe.Exec(octx); err != nil {
			return 0, false, time.Time{}, translate(err)
		}
	}
	var next time.Time
	if f := first.Val(); len(f) == 1 {
		next = time.UnixMilli(int64(f[0].Score)).Add(outboxGrace)
	}
	ids := due.Val()
	if len(ids) == 0 {
		return 0, false, next, nil
	}
	vals, err := s.rdb.HMGet(octx, s.l.key(p, "ob"), ids...).Result()
	if err != nil {
		return 0, false, next, translate(err)
	}
	n := 0
	for i, v := range vals {
		text, ok := v.(string)
		if !ok { // applied and deleted meanwhile: drop its time entry
			s.rdb.ZRem(octx, s.l.key(p, "obt"), ids[i])
			continue
		}
		var e effectEntry
		if err := json.Unmarshal([]byte(text), &e); err != nil {
			return n, false, next, ocypod.Internal(fmt.Errorf("outbox entry %s: %v", ids[i], err))
		}
		if err := s.applyEffect(ctx, &e); err != nil {
			return n, false, next, err
		}
		n++
	}
	return n, len(ids) >= s.o.SweepBatch, next, nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// checkNoCycle refuses dependencies that would close a cycle: none of deps
// may be job id or one of its dependents, transitively (a walk over the
// dependents' graph, one pipelined round per level, bounded).
func (s *Store) checkNoCycle(ctx context.Context, id uint64, deps []uint64) error {
	if len(deps) == 0 {
		return nil
	}
	want := map[uint64]bool{}
	for _, d := range deps {
		want[d] = true
	}
	seen := map[uint64]bool{id: true}
	frontier := []uint64{id}
	const maxWalk = 10_000
	for len(frontier) > 0 {
		octx, cancel := s.opContext(ctx)
		pipe := s.rdb.Pipeline()
		cmds := make([]*redis.StringCmd, len(frontier))
		for i, f := range frontier {
			cmds[i] = pipe.HGet(octx, s.l.key(s.l.partitionOf(f), "deps"), strconv.FormatUint(f, 10))
		}
		_, err := pipe.Exec(octx)
		cancel()
		if err != nil && !errors.Is(err, redis.Nil) {
			return translate(err)
		}
		var next []uint64
		for _, c := range cmds {
			var ds list[idStr]
			if c.Err() != nil || json.Unmarshal([]byte(c.Val()), &ds) != nil {
				continue
			}
			for _, d := range ds {
				d := uint64(d)
				if want[d] {
					return ocypod.Invalid(fmt.Sprintf("Invalid depends_on: job %d depends on job %d", d, id))
				}
				if !seen[d] {
					seen[d] = true
					next = append(next, d)
				}
			}
		}
		if len(seen) > maxWalk {
			return ocypod.Invalid("Invalid depends_on: too many dependents to check for a cycle")
		}
		frontier = next
	}
	return nil
}

func isNil(err error) bool { return errors.Is(err, redis.Nil) }
