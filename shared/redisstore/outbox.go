package redisstore

import (
	"cmp"
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

// effectEntry is an effect recorded in a partition's outbox (outbox.lua's
// effect): work a script could not do in its own partition, or that needs
// Go (a dead letter's job object).
type effectEntry struct {
	ID    string          `json:"id"`
	Op    string          `json:"op"` // depend, dep, release, create, dlq
	To    int             `json:"to"`
	Job   string          `json:"job"`
	Dep   string          `json:"dep"`
	Why   string          `json:"why"`
	Queue string          `json:"queue"`
	Spec  json.RawMessage `json:"spec"`
	From  string          `json:"from"`
	// Part is the partition a create, copy or dead letter makes its job
	// in: chosen once, when the effect is recorded or first applied
	// (pinEffect), so that applying it again finds the record of the
	// first application there.
	Part *int `json:"part"`
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
		s.publishWake(ctx, r.Woken)
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

// applyEffect applies e where it belongs, then deletes it from its outbox.
func (s *Store) applyEffect(ctx context.Context, e *effectEntry) error {
	var r *reply
	var err error
	switch e.Op {
	case "depend", "dep", "release":
		r, err = s.run(ctx, &call{sc: scriptApply, p: e.To, args: &applyArgs{Effect: e}}, nil)
	case "create", "copy", "dlq":
		// A job created in a queue: a follow-up or a schedule's job, a
		// failed job retried in another queue, or a dead letter. When that
		// queue is gone, it is dropped.
		var spec json.RawMessage
		gone := "queue of a follow-up or scheduled job does not exist any more; the job is dropped"
		switch e.Op {
		case "create":
			// As the script recorded it: a JSON object (or null).
			if err := json.Unmarshal(e.Spec, new(map[string]json.RawMessage)); err != nil {
				return fmt.Errorf("effect %s: unreadable spec: %w", e.ID, err)
			}
			spec = e.Spec
		case "copy":
			spec, err = copySpec(e)
			gone = "queue to retry a failed job in does not exist any more; the job is dropped"
		default:
			spec, err = s.deadLetter(e)
			gone = "dead letter queue does not exist; the dead letter is skipped and the job stays failed"
		}
		if err != nil {
			return err
		}
		if e.Part == nil {
			ok, err := s.pinEffect(ctx, e)
			if err != nil || !ok {
				return err // !ok: applied and acknowledged by another
			}
		}
		e.created, r, err = s.createOnce(ctx, e, spec)
		var refused *refusedCreate
		switch {
		case errors.Is(err, errQueueGone):
			s.log.WarnContext(ctx, gone, "queue", e.Queue, "job_id", e.Job, "effect", e.ID)
			err = nil
		case errors.As(err, &refused):
			// The queue refuses the job as it would refuse the same create
			// through the API (a key held with on_conflict "error"): it
			// will refuse it again, so the effect is done, not retried
			// (left in the outbox, it would be retried for ever).
			s.log.WarnContext(ctx, "a follow-up or scheduled job was refused by its queue and is dropped",
				"queue", e.Queue, "job_id", e.Job, "effect", e.ID, "reason", refused.err.Error())
			err = nil
		}
	default:
		return fmt.Errorf("effect %s: unknown op %q", e.ID, e.Op)
	}
	if err != nil {
		return err
	}
	s.afterCall(ctx, r)
	if s.lostAck {
		return nil
	}
	return s.ack(ctx, e)
}

// applyArgs is apply.lua's argument: an effect of another partition's
// outbox.
type applyArgs struct {
	Effect *effectEntry `json:"effect"`
}

var errQueueGone = errors.New("queue does not exist")

// refusedCreate is a create effect's job refused by its queue's script:
// the same create would be refused every time.
type refusedCreate struct{ err error }

func (r *refusedCreate) Error() string { return r.err.Error() }
func (r *refusedCreate) Unwrap() error { return r.err }

// createOnce creates the job of effect e from spec, in the partition the
// effect names (once: applying it again answers the first result). When
// the queue does not exist there (the shards a process knew of were
// stale), that partition remembers it and the job goes to the queue's home
// partition instead, every time.
func (s *Store) createOnce(ctx context.Context, e *effectEntry, spec json.RawMessage) (uint64, *reply, error) {
	home := s.l.home(e.Queue)
	p := home
	if e.Part != nil && *e.Part >= 0 && *e.Part < s.l.P {
		p = *e.Part
	}
	var got struct {
		IDs    list[idStr] `json:"ids"`
		Shards list[int]   `json:"shards"`
	}
	for {
		r, err := s.run(ctx, &call{sc: scriptCreateJob, p: p, queue: e.Queue,
			args: &createOnceArgs{Specs: []json.RawMessage{spec}, Once: e.ID, Home: p == home, DeadLetter: e.Op == "dlq"}}, &got)
		if err != nil {
			return 0, nil, err
		}
		switch {
		case r.Err == "moved" && p != home:
			p = home
			continue
		case r.Err == "queue_not_found":
			return 0, r, errQueueGone
		case r.Err != "":
			return 0, r, &refusedCreate{refusal(r, 0, e.Queue, nil)}
		}
		s.noteShards(e.Queue, got.Shards)
		if len(got.IDs) != 1 {
			return 0, r, ocypod.Internal(fmt.Errorf("effect create: %d ids", len(got.IDs)))
		}
		return uint64(got.IDs[0]), r, nil
	}
}

// createOnceArgs is create_job.lua's argument for the create of an
// effect: its one spec as jobSpecArg's JSON (as recorded), the effect's id
// (the create is answered with its first result when applied again),
// whether this is the queue's home, and whether it is a dead letter.
type createOnceArgs struct {
	Specs      []json.RawMessage `json:"specs"`
	Once       string            `json:"once"`
	Home       bool              `json:"home"`
	DeadLetter bool              `json:"dead_letter"`
}

// effectPart is the partition a job that an effect creates in queue goes
// to, as this process knows the queue's shards: a keyed job's home (see
// keys.go), another one a shard at random.
// It is chosen when the effect is recorded and kept in it (Part).
func (s *Store) effectPart(queue, key string) int {
	home := s.l.home(queue)
	if k := s.shards(queue); k > 1 {
		return s.l.shard(home, s.pickShard(key, k))
	}
	return home
}

// pinEffect fixes e.Part for an effect recorded without one (a dead
// letter: the script that records it cannot know the shards of its
// queue): the first to ask chooses, in e's outbox entry. It reports false
// when the entry is gone (already applied and acknowledged).
func (s *Store) pinEffect(ctx context.Context, e *effectEntry) (bool, error) {
	src, err := e.source()
	if err != nil {
		return false, err
	}
	key := specKey(e)
	var got struct {
		Part *int `json:"part"`
		Gone bool `json:"gone"`
	}
	r, err := s.run(ctx, &call{sc: scriptPinEffect, p: src,
		args: &pinEffectArgs{ID: e.ID, Part: s.effectPart(e.Queue, key)}}, &got)
	if err == nil && r.Err != "" {
		err = ocypod.Internal(fmt.Errorf("outbox entry %s: %s", e.ID, r.Err))
	}
	if err != nil || got.Gone {
		return false, err
	}
	if got.Part == nil {
		return false, ocypod.Internal(fmt.Errorf("outbox entry %s: no partition", e.ID))
	}
	e.Part = got.Part
	return true, nil
}

// pinEffectArgs is pin_effect.lua's argument: the outbox entry ID gets
// partition Part unless it has one.
type pinEffectArgs struct {
	ID   string `json:"id"`
	Part int    `json:"part"`
}

// specKey is the job key of a create effect's spec ("" for none).
func specKey(e *effectEntry) string {
	var spec struct {
		Key string `json:"key"`
	}
	if e.Op != "create" || json.Unmarshal(e.Spec, &spec) != nil {
		return ""
	}
	return spec.Key
}

// deadLetter is the create spec of a dead letter: input {"job": <the job
// object as GET /job/{id} shows it>, "error": <its last error or null>}.
func (s *Store) deadLetter(e *effectEntry) (json.RawMessage, error) {
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
	return json.Marshal(jobSpecArg{Input: string(b), InheritDelays: true, InheritBackoff: true})
}

// copySpec is the create spec of a failed job retried into a queue of
// another partition: its input, tags, priority and tracking; the rest
// comes from the queue.
func copySpec(e *effectEntry) (json.RawMessage, error) {
	id, err := strconv.ParseUint(e.Job, 10, 64)
	if err != nil || e.Meta == nil {
		return nil, fmt.Errorf("effect %s: invalid copy", e.ID)
	}
	j, err := decodeJob(id, *e.Meta, e.Input, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("effect %s: %w", e.ID, err)
	}
	spec := ocypod.JobSpec{Input: j.Input, Tags: j.Tags, Priority: &j.Priority, Tracked: &j.Tracked}
	a, err := specArgs(&spec, time.Time{})
	if err != nil {
		return nil, err
	}
	return json.Marshal(&a)
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
	pipe.HDel(ctx, s.l.key(p, keyOutbox), e.ID)
	pipe.ZRem(ctx, s.l.key(p, keyOutboxTimes), e.ID)
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
	// A partition whose entries fail does not keep the others from being
	// swept; Redis unreachable ends the pass.
	var errs []error
	for p := range s.l.P {
		n, more, next, err := s.sweepOutboxPartition(ctx, p, cutoff, forget)
		res.Other += n
		res.More = res.More || more
		if !next.IsZero() && (res.NextDue.IsZero() || next.Before(res.NextDue)) {
			res.NextDue = next
		}
		if err != nil {
			errs = append(errs, err)
			if ocypod.ErrorKind(err) == ocypod.KindUnavailable {
				break
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("redisstore: sweep outbox: %w", err)
	}
	return res, nil
}

func (s *Store) sweepOutboxPartition(ctx context.Context, p int, cutoff, forget int64) (int, bool, time.Time, error) {
	octx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.rdb.Pipeline()
	due := pipe.ZRangeByScore(octx, s.l.key(p, keyOutboxTimes), &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(cutoff, 10), Count: int64(s.o.SweepBatch)})
	first := pipe.ZRangeWithScores(octx, s.l.key(p, keyOutboxTimes), 0, 0)
	old := pipe.ZRangeByScore(octx, s.l.key(p, keyAppliedAt), &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(forget, 10), Count: int64(s.o.SweepBatch)})
	if _, err := pipe.Exec(octx); err != nil {
		return 0, false, time.Time{}, translate(err)
	}
	if ids := old.Val(); len(ids) > 0 {
		pipe := s.rdb.Pipeline()
		pipe.HDel(octx, s.l.key(p, keyApplied), ids...)
		pipe.ZRem(octx, s.l.key(p, keyAppliedAt), toAny(ids)...)
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
	vals, err := s.rdb.HMGet(octx, s.l.key(p, keyOutbox), ids...).Result()
	if err != nil {
		return 0, false, next, translate(err)
	}
	// An entry that fails is tried again later and does not hold up the
	// others: it goes to the back of the outbox (its time becomes now, so
	// the next sweeps reach the entries behind it first; XX: not for an
	// entry applied and removed meanwhile). The first failure is returned
	// once all were tried; Redis unreachable ends the pass at once.
	n := 0
	var failed error
	for i, v := range vals {
		text, ok := v.(string)
		if !ok { // applied and deleted meanwhile: drop its time entry
			s.rdb.ZRem(octx, s.l.key(p, keyOutboxTimes), ids[i])
			continue
		}
		var e effectEntry
		err := json.Unmarshal([]byte(text), &e)
		if err != nil {
			err = ocypod.Internal(fmt.Errorf("outbox entry %s: %v", ids[i], err))
		} else {
			err = s.applyEffect(ctx, &e)
		}
		if err != nil {
			failed = cmp.Or(failed, err)
			if ocypod.ErrorKind(err) == ocypod.KindUnavailable {
				return n, false, next, failed
			}
			s.log.WarnContext(ctx, "outbox entry not applied; it is tried again later",
				"effect", ids[i], "error", ocypod.RedactSecrets(err.Error()))
			zctx, cancel := s.opContext(ctx)
			s.rdb.ZAddXX(zctx, s.l.key(p, keyOutboxTimes), redis.Z{Score: float64(s.now().UnixMilli()), Member: ids[i]})
			cancel()
			continue
		}
		n++
	}
	return n, len(ids) >= s.o.SweepBatch, next, failed
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func isNil(err error) bool { return errors.Is(err, redis.Nil) }
