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
			args.Take = &takeAfterArg{Queues: first.queues, Count: tk.count, Worker: tk.req.Worker,
				MaxBytes: s.o.MaxAnswerBytes}
			args.WorkerTTL = s.o.WorkerExpiry.Milliseconds()
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
		args.Fence, release = fence, rel
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
	if args.Take != nil {
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
func (s *Store) updateArgs(ctx context.Context, id uint64, u *ocypod.JobUpdate, now time.Time) (*updateJobArgs, error) {
	args := &updateJobArgs{Attempt: u.Attempt}
	if u.Output != nil {
		out, err := s.outputArg(ctx, u.Output)
		if err != nil {
			return nil, err
		}
		args.Output = out
	}
	if u.Status != nil {
		args.Status = string(*u.Status)
		from := ocypod.AllowedFrom(*u.Status)
		args.Allowed = make([]string, len(from))
		for i, st := range from {
			args.Allowed[i] = string(st)
		}
	}
	if u.Error != nil {
		// No group means the status's own group (failed, timed_out): an
		// empty one must not reach the script, where "" is a group name.
		args.Error = &jobErrorArg{Message: u.Error.Message, Group: u.Error.Group}
	}
	if u.Retry != nil && !*u.Retry {
		args.Retry = new(bool)
	}
	switch {
	case u.RetryAt != nil:
		at := u.RetryAt.UnixMilli()
		args.RetryAt = &at
	case u.RetryIn != nil:
		at := now.Add(u.RetryIn.Std()).UnixMilli()
		args.RetryAt = &at
	}
	args.Priority = u.Priority
	if u.RunAt != nil || u.Delay != nil {
		args.RunAt = runAt(u.RunAt, u.Delay, now)
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
		args.DependsOn = idStrings(u.DependsOn)
	}
	if u.TagsSet {
		if len(u.Tags) > ocypod.MaxTags {
			return nil, ocypod.Invalid("Invalid tags: at most 64 tags per job")
		}
		spec := ocypod.JobSpec{Tags: u.Tags}
		if err := spec.Validate(); err != nil {
			return nil, err
		}
		// The script reads the tags back from this text (tags_of).
		tags := "" // none
		if u.Tags != nil {
			raw, _, err := encodeTags(u.Tags)
			if err != nil {
				return nil, ocypod.Internal(err)
			}
			tags = raw
		}
		args.Tags = &tags
	}
	args.Tracked = u.Tracked
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
		args.Next = &nextArg{Queue: u.Next.Queue, Spec: &spec, Part: s.effectPart(u.Next.Queue, u.Next.Spec.Key)}
	}
	return args, nil
}

// updateJobArgs is update_job.lua's argument: every field but the job is
// optional.
type updateJobArgs struct {
	jobArg
	Attempt *uint64      `json:"attempt,omitempty"`
	Output  string       `json:"output,omitempty"` // JSON text, "null" for none
	Status  string       `json:"status,omitempty"`
	Allowed []string     `json:"allowed,omitzero"` // with Status
	Error   *jobErrorArg `json:"error,omitempty"`
	// Retry is false for a permanent failure (never true).
	Retry     *bool    `json:"retry,omitempty"`
	RetryAt   *int64   `json:"retry_at,omitempty"` // ms
	Priority  *int64   `json:"priority,omitempty"`
	RunAt     string   `json:"run_at,omitempty"` // microseconds
	DependsOn []string `json:"depends_on,omitzero"`
	// Fence is the dependency lock's fence of a change of DependsOn.
	Fence int64 `json:"fence,omitempty"`
	// Tags is the JSON text of the new tags, "" for none.
	Tags      *string       `json:"tags,omitempty"`
	Tracked   *bool         `json:"tracked,omitempty"`
	Next      *nextArg      `json:"next,omitempty"`
	Take      *takeAfterArg `json:"take,omitempty"`
	WorkerTTL int64         `json:"worker_ttl,omitempty"` // with Take, as takeArgs'
}

// jobErrorArg is a job's error as the scripts take it: a group is never
// "" (absent means the status's own).
type jobErrorArg struct {
	Message string `json:"message"`
	Group   string `json:"group,omitempty"`
}

// nextArg is a job that completing another creates (through the outbox).
type nextArg struct {
	Queue string      `json:"queue"`
	Spec  *jobSpecArg `json:"spec"`
	Part  int         `json:"part"` // the partition it goes to
}

// takeAfterArg is the take that follows a change (PATCH ?take=).
type takeAfterArg struct {
	Queues   []string `json:"queues"`
	Count    int      `json:"count"`
	Worker   string   `json:"worker"`
	MaxBytes int      `json:"max_bytes"`
}

func (a *updateJobArgs) appendArgs(b []byte) []byte {
	b = a.appendID(b)
	if a.Attempt != nil {
		b = strconv.AppendUint(appendField(b, "attempt"), *a.Attempt, 10)
	}
	if a.Output != "" {
		b = appendStringField(b, "output", a.Output)
	}
	if a.Status != "" {
		b = appendStringField(b, "status", a.Status)
	}
	if a.Allowed != nil {
		b = appendStrings(appendField(b, "allowed"), a.Allowed)
	}
	if e := a.Error; e != nil {
		b = append(b, `,"error":{"message":`...)
		b = appendJSONString(b, e.Message)
		if e.Group != "" {
			b = appendStringField(b, "group", e.Group)
		}
		b = append(b, '}')
	}
	if a.Retry != nil {
		b = appendBoolField(b, "retry", *a.Retry)
	}
	if a.RetryAt != nil {
		b = appendIntField(b, "retry_at", *a.RetryAt)
	}
	if a.Priority != nil {
		b = appendIntField(b, "priority", *a.Priority)
	}
	if a.RunAt != "" {
		b = appendStringField(b, "run_at", a.RunAt)
	}
	if a.DependsOn != nil {
		b = appendStrings(appendField(b, "depends_on"), a.DependsOn)
	}
	if a.Fence != 0 {
		b = appendIntField(b, "fence", a.Fence)
	}
	if a.Tags != nil {
		b = appendStringField(b, "tags", *a.Tags)
	}
	if a.Tracked != nil {
		b = appendBoolField(b, "tracked", *a.Tracked)
	}
	if n := a.Next; n != nil {
		b = append(b, `,"next":{"queue":`...)
		b = appendJSONString(b, n.Queue)
		b = append(b, `,"spec":`...)
		if n.Spec == nil {
			b = append(b, "null"...)
		} else {
			b = n.Spec.appendJSON(b)
		}
		b = append(b, `,"part":`...)
		b = strconv.AppendInt(b, int64(n.Part), 10)
		b = append(b, '}')
	}
	if t := a.Take; t != nil {
		b = append(b, `,"take":{"queues":`...)
		b = appendStrings(b, t.Queues)
		b = appendIntField(b, "count", int64(t.Count))
		b = appendStringField(b, "worker", t.Worker)
		b = appendIntField(b, "max_bytes", int64(t.MaxBytes))
		b = append(b, '}')
	}
	if a.WorkerTTL != 0 {
		b = appendIntField(b, "worker_ttl", a.WorkerTTL)
	}
	return b
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
