package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// UpdateJob applies a PATCH to job id: the output (only while running), a
// status change allowed by ocypod.AllowedFrom, and the extension fields,
// atomically; nothing is written unless every check passes. With take set
// it then takes jobs as Take would (in the same call when the queue lives
// in the job's partition) and returns them.
//
// Returns ocypod.JobNotFound (even for an empty update),
// ocypod.StaleAttempt, ocypod.OutputNotRunning, ocypod.TransitionConflict,
// ocypod.NotPending, ocypod.QueueNotFound (a requeue into a deleted queue,
// or a next or take queue that does not exist: nothing is applied),
// ocypod.KeyPending. A take queue deleted once the change is applied takes
// nothing: no job, no error.
func (s *Store) UpdateJob(ctx context.Context, id uint64, u ocypod.JobUpdate, take *ocypod.TakeRequest) (ocypod.UpdateResult, []ocypod.NextJob, error) {
	fail := func(err error) (ocypod.UpdateResult, []ocypod.NextJob, error) {
		return ocypod.UpdateResult{}, nil, fmt.Errorf("redisstore: update job %d: %w", id, err)
	}
	now := s.now()
	args, err := s.updateArgs(ctx, id, &u, now)
	if err != nil {
		return fail(err)
	}
	c := s.jobCall(scriptUpdateJob, id, args)
	c.now = now
	var tk *takeCall
	if take != nil {
		if tk, err = s.newTake(ctx, *take); err != nil {
			return fail(err)
		}
		if first := tk.first(); first.p == c.p && len(tk.groups) == 1 {
			// The next job's queue lives here: one call does both.
			args["take"] = map[string]any{"queues": first.queues, "count": tk.count, "worker": tk.req.Worker,
				"max_bytes": s.o.MaxAnswerBytes}
			args["worker_ttl"] = s.o.WorkerExpiry.Milliseconds()
		} else if !tk.checked {
			// Elsewhere: a missing queue must refuse the PATCH too.
			if err := s.checkTakeable(ctx, *take); err != nil {
				return fail(err)
			}
		}
	}
	var got struct {
		Status string `json:"status"`
		takeReply
	}
	release := func() {}
	if u.DependsOnSet && len(u.DependsOn) > 0 {
		// Last, just before the change: it holds the dependency lock.
		fence, rel, err := s.guardDependsOn(ctx, id, u.DependsOn)
		if err != nil {
			return fail(err)
		}
		args["fence"], release = fence, rel
	}
	r, err := s.run(ctx, c, &got)
	release()
	if err == nil && r.Err != "" {
		err = refusal(r, id, "", u.Status, deref(u.Attempt))
	}
	if err != nil {
		return fail(err)
	}
	var res ocypod.UpdateResult
	for _, e := range s.afterCall(ctx, r) {
		if e.Op == "create" && e.From == strconv.FormatUint(id, 10) {
			res.NextID = e.created
		}
	}
	if u.Next != nil && res.NextID == 0 {
		// The follow-up job is in the outbox; the sweep will create it.
		s.log.WarnContext(ctx, "follow-up job not created yet; the outbox sweep will", "job_id", id)
	}
	if tk == nil {
		return res, nil, nil
	}
	// The change is applied: from here on, a take queue deleted meanwhile
	// (after the checks above) takes nothing; the answer stays the
	// change's.
	takeFailed := func(err error) (ocypod.UpdateResult, []ocypod.NextJob, error) {
		if ocypod.ErrorKind(err) == ocypod.KindNotFound {
			return res, nil, nil
		}
		return fail(err)
	}
	if _, ok := args["take"]; ok {
		jobs, err := tk.collect(ctx, c.p, &got.takeReply)
		if err != nil {
			return takeFailed(err)
		}
		if len(jobs) > 0 || tk.req.Wait <= 0 {
			return res, jobs, nil
		}
	}
	jobs, err := tk.run(ctx)
	if err != nil {
		return takeFailed(err)
	}
	return res, jobs, nil
}

// updateArgs validates u, a PATCH of job id, and builds its update_job
// script's argument. The checks of a next job's queue and of dependencies
// read Redis (only when u has them).
func (s *Store) updateArgs(ctx context.Context, id uint64, u *ocypod.JobUpdate, now time.Time) (map[string]any, error) {
	args := attemptArg(map[string]any{}, u.Attempt)
	if u.Output != nil {
		out, err := s.outputArg(ctx, u.Output)
		if err != nil {
			return nil, err
		}
		args["output"] = out
	}
	if u.Status != nil {
		args["status"] = string(*u.Status)
		from := ocypod.AllowedFrom(*u.Status)
		allowed := make([]string, len(from))
		for i, st := range from {
			allowed[i] = string(st)
		}
		args["allowed"] = allowed
	}
	if u.Error != nil {
		// No group means the status's own group (failed, timed_out): an
		// empty one must not reach the script, where "" is a group name.
		e := map[string]string{"message": u.Error.Message}
		if u.Error.Group != "" {
			e["group"] = u.Error.Group
		}
		args["error"] = e
	}
	if u.Retry != nil && !*u.Retry {
		args["retry"] = false
	}
	switch {
	case u.RetryAt != nil:
		args["retry_at"] = u.RetryAt.UnixMilli()
	case u.RetryIn != nil:
		args["retry_at"] = now.Add(u.RetryIn.Std()).UnixMilli()
	}
	if u.Priority != nil {
		args["priority"] = *u.Priority
	}
	if u.RunAt != nil || u.Delay != nil {
		args["run_at"] = runAt(u.RunAt, u.Delay, now)
	}
	if u.DependsOnSet {
		for _, d := range u.DependsOn {
			if d == id {
				return nil, ocypod.Invalid("Invalid depends_on: a job cannot depend on itself")
			}
		}
		if err := s.checkJobsExist(ctx, u.DependsOn); err != nil {
			return nil, err
		}
		args["depends_on"] = idStrings(u.DependsOn)
	}
	if u.TagsSet {
		if len(u.Tags) > ocypod.MaxTags {
			return nil, ocypod.Invalid("Invalid tags: at most 64 tags per job")
		}
		spec := ocypod.JobSpec{Tags: u.Tags}
		if err := spec.Validate(); err != nil {
			return nil, err
		}
		args["tags"] = ""
		if u.Tags != nil {
			raw, back, err := encodeTags(u.Tags)
			if err != nil {
				return nil, ocypod.Internal(err)
			}
			args["tags"], args["tag_list"] = raw, back
		}
	}
	if u.Tracked != nil {
		args["tracked"] = *u.Tracked
	}
	if u.Next != nil {
		if !ocypod.ValidQueueName(u.Next.Queue) {
			return nil, ocypod.InvalidQueueName()
		}
		if err := validateSpec(&u.Next.Spec); err != nil {
			return nil, err
		}
		spec, err := specArgs(&u.Next.Spec, now)
		if err != nil {
			return nil, err
		}
		if err := s.checkExist(ctx, []string{u.Next.Queue}, u.Next.Spec.DependsOn); err != nil {
			return nil, err
		}
		args["next"] = map[string]any{"queue": u.Next.Queue, "spec": spec,
			"part": s.effectPart(u.Next.Queue, u.Next.Spec.Key)}
	}
	return args, nil
}

// checkQueueExists answers ocypod.QueueNotFound unless queue is registered.
func (s *Store) checkQueueExists(ctx context.Context, queue string) error {
	return s.checkExist(ctx, []string{queue}, nil)
}

// checkJobsExist answers ocypod.Invalid for the first of ids that is not a
// job (a dependency).
func (s *Store) checkJobsExist(ctx context.Context, ids []uint64) error {
	return s.checkExist(ctx, nil, ids)
}

// checkTakeable checks, in one pipelined round, that every queue of a
// take is registered (else ocypod.QueueNotFound) and, unless it is the
// push dispatcher's, that none delivers its jobs by push (else
// ocypod.PushQueue).
func (s *Store) checkTakeable(ctx context.Context, req ocypod.TakeRequest) error {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.rdb.Pipeline()
	qs := make([]*redis.StringCmd, len(req.Queues))
	for i, q := range req.Queues {
		qs[i] = pipe.HGet(ctx, s.l.key(s.l.home(q), "q"), q)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return translate(err)
	}
	for i, c := range qs {
		text, err := c.Result()
		if errors.Is(err, redis.Nil) {
			return ocypod.QueueNotFound(req.Queues[i])
		}
		var st storedQueue
		if err != nil || json.Unmarshal([]byte(text), &st) != nil {
			return ocypod.Internal(fmt.Errorf("queue %q: unreadable settings", req.Queues[i]))
		}
		if st.Push != "" && !req.Push {
			return ocypod.PushQueue(req.Queues[i])
		}
	}
	return nil
}

// checkExist checks, in one pipelined round, that every queue of queues
// is registered (else ocypod.QueueNotFound) and every job of jobs exists
// (else ocypod.Invalid, for a dependency). Nothing to check costs nothing.
func (s *Store) checkExist(ctx context.Context, queues []string, jobs []uint64) error {
	if len(queues) == 0 && len(jobs) == 0 {
		return nil
	}
	jobs = slices.Compact(slices.Sorted(slices.Values(jobs)))
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.rdb.Pipeline()
	qs := make([]*redis.BoolCmd, len(queues))
	for i, q := range queues {
		qs[i] = pipe.HExists(ctx, s.l.key(s.l.home(q), keyQueues), q)
	}
	js := make([]*redis.BoolCmd, len(jobs))
	for i, id := range jobs {
		js[i] = pipe.HExists(ctx, s.l.key(s.l.partitionOf(id), keyJob), strconv.FormatUint(id, 10))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return translate(err)
	}
	for i, c := range qs {
		if !c.Val() {
			return ocypod.QueueNotFound(queues[i])
		}
	}
	for i, c := range js {
		if !c.Val() {
			return ocypod.Invalid(fmt.Sprintf("Invalid depends_on: job %d does not exist", jobs[i]))
		}
	}
	return nil
}
