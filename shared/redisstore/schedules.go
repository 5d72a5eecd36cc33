package redisstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

var scheduleIDRE = namespaceRE // the same characters and length

// storedSchedule is a schedule as kept in its queue's home partition.
type storedSchedule struct {
	Cron  string          `json:"cron,omitempty"`
	Every uint64          `json:"every,omitempty"` // seconds
	Job   json.RawMessage `json:"job"`             // the create body, canonical
	Spec  json.RawMessage `json:"spec"`            // the same, as create_job.lua takes it (jobSpecArg)
}

// PutSchedule creates or replaces schedule sc of its queue: a job made from
// sc.Job at every firing of sc.Cron (5 fields, UTC) or every sc.Every.
// The first firing is the first after now. Returns created, or
// ocypod.QueueNotFound, ocypod.Invalid.
func (s *Store) PutSchedule(ctx context.Context, sc ocypod.Schedule) (bool, error) {
	spec := sc.Spec
	fail := func(err error) (bool, error) { return false, fmt.Errorf("redisstore: put schedule %q: %w", sc.ID, err) }
	if !ocypod.ValidQueueName(sc.Queue) {
		return fail(ocypod.InvalidQueueName())
	}
	if !scheduleIDRE.MatchString(sc.ID) {
		return fail(ocypod.Invalid("Invalid schedule id: want 1 to 64 of [A-Za-z0-9_.-]"))
	}
	rec, err := ocypod.ParseRecurrence(sc.Cron, sc.Every)
	if err != nil {
		return fail(err)
	}
	if err := validateSpec(&spec); err != nil {
		return fail(err)
	}
	now := s.now()
	args, err := specArgs(&spec, now)
	if err != nil {
		return fail(err)
	}
	if spec.RunAt != nil || spec.Delay != nil {
		return fail(ocypod.Invalid("Invalid job: a schedule's job cannot have run_at or delay"))
	}
	var job bytes.Buffer
	if err := json.Compact(&job, sc.Job); err != nil {
		return fail(ocypod.Invalid("Invalid job: not JSON"))
	}
	specJSON, _ := json.Marshal(&args)
	doc, _ := json.Marshal(storedSchedule{Cron: sc.Cron, Every: sc.Every.Secs, Job: job.Bytes(), Spec: specJSON})
	var got struct {
		Created bool `json:"created"`
	}
	r, err := s.run(ctx, &call{sc: scriptSchedule, p: s.l.home(sc.Queue), queue: sc.Queue, now: now,
		args: &schedulePutArgs{Op: "put", ID: sc.ID, Doc: string(doc), Next: rec.Next(now).UnixMilli()}}, &got)
	if err == nil && r.Err != "" {
		err = refusal(r, 0, sc.Queue, nil)
	}
	if err != nil {
		return fail(err)
	}
	return got.Created, nil
}

// GetSchedule returns schedule id of queue. Returns
// ocypod.ScheduleNotFound.
func (s *Store) GetSchedule(ctx context.Context, queue, id string) (ocypod.Schedule, error) {
	list, err := s.schedules(ctx, queue, id)
	if err == nil && len(list) == 0 {
		err = ocypod.ScheduleNotFound(queue, id)
	}
	if err != nil {
		return ocypod.Schedule{}, fmt.Errorf("redisstore: get schedule %q: %w", id, err)
	}
	return list[0], nil
}

// ListSchedules returns every schedule of queue, by id. Returns
// ocypod.QueueNotFound.
func (s *Store) ListSchedules(ctx context.Context, queue string) ([]ocypod.Schedule, error) {
	list, err := s.schedules(ctx, queue, "")
	if err != nil {
		return nil, fmt.Errorf("redisstore: list schedules: %w", err)
	}
	return list, nil
}

func (s *Store) schedules(ctx context.Context, queue, id string) ([]ocypod.Schedule, error) {
	if !ocypod.ValidQueueName(queue) {
		return nil, ocypod.InvalidQueueName()
	}
	args := &scheduleArgs{Op: "get", ID: id} // no id: every schedule
	var got struct {
		Schedules list[struct {
			ID   string  `json:"id"`
			Doc  string  `json:"doc"`
			Next flexNum `json:"next"`
		}] `json:"schedules"`
	}
	r, err := s.run(ctx, &call{sc: scriptSchedule, p: s.l.home(queue), queue: queue, args: args}, &got)
	if err != nil {
		return nil, err
	}
	if r.Err == "queue_not_found" {
		return nil, ocypod.QueueNotFound(queue)
	}
	out := []ocypod.Schedule{}
	for _, e := range got.Schedules {
		var st storedSchedule
		if err := json.Unmarshal([]byte(e.Doc), &st); err != nil {
			return nil, ocypod.Internal(fmt.Errorf("schedule %q: unreadable: %v", e.ID, err))
		}
		ms, _ := strconv.ParseFloat(string(e.Next), 64)
		out = append(out, ocypod.Schedule{ID: e.ID, Queue: queue, Cron: st.Cron, Every: ocypod.Seconds(st.Every),
			Job: st.Job, NextRun: time.UnixMilli(int64(ms)).UTC()})
	}
	return out, nil
}

// DeleteSchedule deletes schedule id of queue. Returns
// ocypod.ScheduleNotFound.
func (s *Store) DeleteSchedule(ctx context.Context, queue, id string) error {
	if !ocypod.ValidQueueName(queue) {
		return fmt.Errorf("redisstore: delete schedule: %w", ocypod.InvalidQueueName())
	}
	r, err := s.run(ctx, &call{sc: scriptSchedule, p: s.l.home(queue), queue: queue, args: &scheduleArgs{Op: "delete", ID: id}}, nil)
	if err == nil && r.Err == "schedule_not_found" {
		err = ocypod.ScheduleNotFound(queue, id)
	}
	if err != nil {
		return fmt.Errorf("redisstore: delete schedule %q: %w", id, err)
	}
	return nil
}

// SweepSchedules fires the schedules that fell due: each creates its job
// (through the outbox, so exactly once) and moves to its next firing after
// now — a sweep that runs late catches up once per schedule, not once per
// missed firing. Overlapping sweeps fire each due time once (the firing is
// a compare-and-set on the due time).
func (s *Store) SweepSchedules(ctx context.Context) (SweepResult, error) {
	var res SweepResult
	now := s.now()
	for p := range s.l.P {
		octx, cancel := s.opContext(ctx)
		due, err := s.rdb.ZRangeByScoreWithScores(octx, s.l.key(p, keySchedTimes), &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: int64(s.o.SweepBatch)}).Result()
		var next []redis.Z
		if err == nil {
			next, err = s.rdb.ZRangeWithScores(octx, s.l.key(p, keySchedTimes), 0, 0).Result()
		}
		var docs []any
		if err == nil && len(due) > 0 {
			members := make([]string, len(due))
			for i, z := range due {
				members[i] = z.Member.(string)
			}
			docs, err = s.rdb.HMGet(octx, s.l.key(p, keySchedules), members...).Result()
		}
		cancel()
		if err != nil {
			return res, fmt.Errorf("redisstore: sweep schedules: %w", translate(err))
		}
		if len(next) == 1 && next[0].Score > float64(now.UnixMilli()) {
			t := time.UnixMilli(int64(next[0].Score)).UTC()
			if res.NextDue.IsZero() || t.Before(res.NextDue) {
				res.NextDue = t
			}
		}
		res.More = res.More || len(due) >= s.o.SweepBatch
		for i, z := range due {
			doc, _ := docs[i].(string)
			if doc == "" {
				continue
			}
			var st storedSchedule
			if err := json.Unmarshal([]byte(doc), &st); err != nil {
				return res, fmt.Errorf("redisstore: sweep schedules: %w", ocypod.Internal(err))
			}
			rec, err := ocypod.ParseRecurrence(st.Cron, ocypod.Seconds(st.Every))
			if err != nil {
				return res, fmt.Errorf("redisstore: sweep schedules: %w", ocypod.Internal(err))
			}
			member := z.Member.(string)
			queue, id := member, ""
			if i := bytes.IndexByte([]byte(member), ' '); i > 0 {
				queue, id = member[:i], member[i+1:]
			}
			prev := time.UnixMilli(int64(z.Score)).UTC()
			var got struct {
				Fired bool `json:"fired"`
			}
			r, err := s.run(ctx, &call{sc: scriptSchedule, p: p, queue: queue, now: now, args: &scheduleFireArgs{
				Op: "fire", ID: id, Due: int64(z.Score), Next: rec.NextAfter(prev, now).UnixMilli(),
				Spec: st.Spec, Part: s.effectPart(queue, specKeyOf(st.Spec))}}, &got)
			if err != nil {
				return res, fmt.Errorf("redisstore: sweep schedules: %w", err)
			}
			if got.Fired {
				res.Other++
				s.afterCall(ctx, r)
			}
		}
	}
	return res, nil
}

// specKeyOf is the job key of a create spec as create_job.lua takes it.
func specKeyOf(spec json.RawMessage) string {
	var s struct {
		Key string `json:"key"`
	}
	_ = json.Unmarshal(spec, &s)
	return s.Key
}

// scheduleArgs is schedule.lua's argument to read (Op "get": ID, or
// every schedule of the queue without one) or delete (Op "delete")
// schedules of the call's queue. An ID "" is left out: a get then reads
// every schedule, and a delete's member (the queue, a space and A.id or
// an empty string) is the same either way.
type scheduleArgs struct {
	Op string `json:"op"`
	ID string `json:"id,omitempty"`
}

// schedulePutArgs is schedule.lua's argument to store a schedule: its
// document (storedSchedule's JSON) and next firing (ms).
type schedulePutArgs struct {
	Op   string `json:"op"` // put
	ID   string `json:"id"`
	Doc  string `json:"doc"`
	Next int64  `json:"next"`
}

// scheduleFireArgs is schedule.lua's argument to fire a schedule that was
// due at Due (ms): its job (spec) goes to partition Part, and it moves to
// Next (ms).
type scheduleFireArgs struct {
	Op   string          `json:"op"` // fire
	ID   string          `json:"id"`
	Due  int64           `json:"due"`
	Next int64           `json:"next"`
	Spec json.RawMessage `json:"spec"`
	Part int             `json:"part"`
}
