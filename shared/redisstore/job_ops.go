package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// JobParts selects what GetJobParts reads besides the metadata.
type JobParts struct {
	Input, Output, Error, History, Dependents, Callback bool
}

// AllParts reads everything.
var AllParts = JobParts{true, true, true, true, true, true}

// GetJob returns every field of job id. Returns ocypod.JobNotFound when it
// does not exist, ocypod.Internal when stored data cannot be read.
func (s *Store) GetJob(ctx context.Context, id uint64) (*ocypod.Job, error) {
	return s.GetJobParts(ctx, id, AllParts)
}

// GetJobParts returns job id with the parts asked for (the others are
// left zero). One round trip.
func (s *Store) GetJobParts(ctx context.Context, id uint64, parts JobParts) (*ocypod.Job, error) {
	j, _, err := s.getJob(ctx, id, parts, 0)
	return j, err
}

// getJob reads job id with parts; with watch (ms on the store's clock) it
// also marks the job as waited for until then unless it has ended for good
// (get_job.lua), and reports whether it did.
func (s *Store) getJob(ctx context.Context, id uint64, parts JobParts, watch int64) (*ocypod.Job, bool, error) {
	fail := func(err error) (*ocypod.Job, bool, error) {
		return nil, false, fmt.Errorf("redisstore: get job %d: %w", id, err)
	}
	var names []string
	for _, p := range []struct {
		on   bool
		name string
	}{{parts.Input, "input"}, {parts.Output, "output"}, {parts.Error, "error"}, {parts.History, "history"}, {parts.Dependents, "dependents"}, {parts.Callback, "callback"}} {
		if p.on {
			names = append(names, p.name)
		}
	}
	var got struct {
		Meta       string  `json:"meta"`
		Input      *string `json:"input"`
		Output     *string `json:"output"`
		Error      *string `json:"error"`
		History    *string `json:"history"`
		Dependents *string `json:"dependents"`
		Callback   *string `json:"callback"`
		Watched    bool    `json:"watched"`
	}
	r, err := s.run(ctx, s.jobCall(scriptGetJob, id, &getJobArgs{Parts: stringList(names), Watch: watch}), &got)
	if err != nil {
		return fail(err)
	}
	if r.Err != "" {
		return fail(refusal(r, id, "", nil))
	}
	j, err := decodeJob(id, got.Meta, got.Input, got.Output, got.Error)
	if err != nil {
		return fail(ocypod.Internal(err))
	}
	if got.History != nil {
		if j.History, err = decodeHistory(*got.History); err != nil {
			return fail(ocypod.Internal(fmt.Errorf("job %d: history: %v", id, err)))
		}
	}
	if parts.History && j.StartedAt != nil {
		// The current (or last) attempt is the job's own fields.
		cur := ocypod.Attempt{Attempt: j.Attempt, Worker: j.Worker, StartedAt: *j.StartedAt, EndedAt: j.EndedAt, Status: j.Status}
		if j.Status != ocypod.StatusRunning && j.Error != nil && (j.Status == ocypod.StatusFailed || j.Status == ocypod.StatusTimedOut) {
			cur.Error = j.Error
		}
		j.History = append(j.History, cur)
		if len(j.History) > ocypod.MaxHistory {
			j.History = j.History[len(j.History)-ocypod.MaxHistory:]
		}
	}
	if got.Dependents != nil {
		var ds list[idStr]
		if err := json.Unmarshal([]byte(*got.Dependents), &ds); err != nil {
			return fail(ocypod.Internal(fmt.Errorf("job %d: dependents: %v", id, err)))
		}
		j.Dependents = ids(ds)
	}
	if parts.Callback {
		j.CallbackView = callbackView(j.Callback, got.Callback)
	}
	return j, got.Watched, nil
}

// stringList is a list that encodes as a JSON array even when empty (lib
// scripts iterate it with ipairs, which takes {} too).
func stringList(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

func decodeHistory(s string) ([]ocypod.Attempt, error) {
	var h list[struct {
		Attempt   flexNum `json:"attempt"`
		Worker    string  `json:"worker"`
		StartedAt flexNum `json:"started_at"`
		EndedAt   flexNum `json:"ended_at"`
		Status    string  `json:"status"`
		Error     *struct {
			Group   string `json:"group"`
			Message string `json:"message"`
		} `json:"error"`
	}]
	if err := json.Unmarshal([]byte(s), &h); err != nil {
		return nil, err
	}
	out := make([]ocypod.Attempt, len(h))
	var d numReader
	for i, a := range h {
		out[i] = ocypod.Attempt{Attempt: d.uint(a.Attempt), Worker: a.Worker, EndedAt: d.micros(a.EndedAt), Status: ocypod.Status(a.Status)}
		if t := d.micros(a.StartedAt); t != nil {
			out[i].StartedAt = *t
		}
		if a.Error != nil {
			out[i].Error = &ocypod.JobError{Group: a.Error.Group, Message: a.Error.Message}
		}
	}
	return out, d.err
}

// jobMeta reads job id's metadata alone: one HGET.
func (s *Store) jobMeta(ctx context.Context, id uint64) (*ocypod.Job, error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	meta, err := s.rdb.HGet(ctx, s.l.key(s.l.partitionOf(id), keyJob), strconv.FormatUint(id, 10)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, ocypod.JobNotFound(id)
	}
	if err != nil {
		return nil, translate(err)
	}
	j, err := decodeJob(id, meta, nil, nil, nil)
	if err != nil {
		return nil, ocypod.Internal(err)
	}
	return j, nil
}

// JobStatus returns the status of job id. Returns ocypod.JobNotFound when it
// does not exist, ocypod.Internal when its data is unreadable.
func (s *Store) JobStatus(ctx context.Context, id uint64) (ocypod.Status, error) {
	j, err := s.jobMeta(ctx, id)
	if err != nil {
		return "", fmt.Errorf("redisstore: status of job %d: %w", id, err)
	}
	return j.Status, nil
}

// JobOutput returns the output of job id, nil when none was set or it is
// JSON null. Returns ocypod.JobNotFound when the job does not exist.
func (s *Store) JobOutput(ctx context.Context, id uint64) (json.RawMessage, error) {
	fail := func(err error) (json.RawMessage, error) {
		return nil, fmt.Errorf("redisstore: output of job %d: %w", id, err)
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	p, sid := s.l.partitionOf(id), strconv.FormatUint(id, 10)
	pipe := s.rdb.Pipeline()
	exists := pipe.HExists(ctx, s.l.key(p, keyJob), sid)
	out := pipe.HGet(ctx, s.l.key(p, keyOutput), sid)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return fail(translate(err))
	}
	if !exists.Val() {
		return fail(ocypod.JobNotFound(id))
	}
	if errors.Is(out.Err(), redis.Nil) {
		return nil, nil
	}
	msg, err := rawJSON(out.Val())
	if err != nil {
		return fail(ocypod.Internal(fmt.Errorf("job %d: output: %v", id, err)))
	}
	return msg, nil
}

// getJobArgs is get_job.lua's argument.
type getJobArgs struct {
	jobArg
	Parts []string `json:"parts"` // of input, output, error, history, dependents, callback
	// Watch (ms, > 0) marks a waiting GET ?wait= until then.
	Watch int64 `json:"watch,omitempty"`
}

func (a *getJobArgs) appendArgs(b []byte) []byte {
	b = a.appendID(b)
	b = appendStrings(appendField(b, "parts"), a.Parts)
	if a.Watch != 0 {
		b = appendIntField(b, "watch", a.Watch)
	}
	return b
}

// heartbeatArgs is heartbeat.lua's argument.
type heartbeatArgs struct {
	jobArg
	// Attempt fences the call: it applies only to this attempt.
	Attempt *uint64 `json:"attempt,omitempty"`
}

func (a *heartbeatArgs) appendArgs(b []byte) []byte {
	b = a.appendID(b)
	if a.Attempt != nil {
		b = strconv.AppendUint(appendField(b, "attempt"), *a.Attempt, 10)
	}
	return b
}

// setOutputArgs is set_output.lua's argument.
type setOutputArgs struct {
	jobArg
	Output  string  `json:"output"` // JSON text
	Attempt *uint64 `json:"attempt,omitempty"`
}

func (a *setOutputArgs) appendArgs(b []byte) []byte {
	b = a.appendID(b)
	b = appendStringField(b, "output", a.Output)
	if a.Attempt != nil {
		b = strconv.AppendUint(appendField(b, "attempt"), *a.Attempt, 10)
	}
	return b
}

// deleteJobArgs is delete_job.lua's argument.
type deleteJobArgs struct{ jobArg }

// retryJobArgs is retry_job.lua's argument.
type retryJobArgs struct {
	jobArg
	RunAt string `json:"run_at,omitempty"` // microseconds; none: now
}

// SetJobOutput replaces the output of running job id (nil stores JSON
// null), for its attempt *attempt when given. Returns ocypod.JobNotFound,
// ocypod.OutputNotRunning, ocypod.StaleAttempt, ocypod.Invalid when output
// is not JSON.
func (s *Store) SetJobOutput(ctx context.Context, id uint64, output json.RawMessage, attempt *uint64) error {
	fail := func(err error) error { return fmt.Errorf("redisstore: set output of job %d: %w", id, err) }
	out, err := s.outputArg(ctx, output)
	if err != nil {
		return fail(err)
	}
	r, err := s.run(ctx, s.jobCall(scriptSetOutput, id, &setOutputArgs{Output: out, Attempt: attempt}), nil)
	if err == nil && r.Err != "" {
		err = refusal(r, id, "", nil, deref(attempt))
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// Heartbeat records a heartbeat of running job id (of attempt *attempt
// when given): last_heartbeat = now, which postpones its heartbeat timeout.
// Returns ocypod.JobNotFound, ocypod.HeartbeatNotRunning,
// ocypod.StaleAttempt.
func (s *Store) Heartbeat(ctx context.Context, id uint64, attempt *uint64) error {
	r, err := s.run(ctx, s.jobCall(scriptHeartbeat, id, &heartbeatArgs{Attempt: attempt}), nil)
	if err == nil && r.Err != "" {
		if r.Err == "not_running" {
			err = ocypod.HeartbeatNotRunning(id)
		} else {
			err = refusal(r, id, "", nil, deref(attempt))
		}
	}
	if err != nil {
		return fmt.Errorf("redisstore: heartbeat of job %d: %w", id, err)
	}
	return nil
}

// DeleteJob deletes job id whatever its state, with every index entry.
// Its waiting dependents are cancelled. Statistics are unchanged. Returns
// ocypod.JobNotFound when it does not exist.
func (s *Store) DeleteJob(ctx context.Context, id uint64) error {
	r, err := s.run(ctx, s.jobCall(scriptDeleteJob, id, &deleteJobArgs{}), nil)
	if err == nil && r.Err != "" {
		err = refusal(r, id, "", nil)
	}
	if err != nil {
		return fmt.Errorf("redisstore: delete job %d: %w", id, err)
	}
	s.afterCall(ctx, r)
	return nil
}

// RetryJob retries job id now (or at runAt), counting against its
// retries: from running (the attempt ends as failed), failed, timed_out or
// cancelled. With no retry left the job ends failed. Returns the new status
// and retries_attempted; ocypod.JobNotFound, ocypod.TransitionConflict (to
// queued) from another status, ocypod.QueueNotFound, ocypod.KeyPending.
func (s *Store) RetryJob(ctx context.Context, id uint64, runAt *time.Time) (ocypod.RetryResult, error) {
	args := &retryJobArgs{}
	if runAt != nil {
		args.RunAt = strconv.FormatInt(runAt.UnixMicro(), 10)
	}
	var got struct {
		Status           string  `json:"status"`
		RetriesAttempted flexNum `json:"retries_attempted"`
		PushDue          bool    `json:"pd"`
		Queue            string  `json:"queue"`
	}
	queued := ocypod.StatusQueued
	r, err := s.run(ctx, s.jobCall(scriptRetryJob, id, args), &got)
	if err == nil && r.Err != "" {
		err = refusal(r, id, "", &queued)
	}
	if err != nil {
		return ocypod.RetryResult{}, fmt.Errorf("redisstore: retry job %d: %w", id, err)
	}
	s.afterCall(ctx, r)
	if got.PushDue {
		s.pushDue.notify(got.Queue)
	}
	n, _ := got.RetriesAttempted.uint()
	return ocypod.RetryResult{Status: ocypod.Status(got.Status), RetriesAttempted: n}, nil
}

// TagJobIDs returns the ids of the jobs carrying tag, ascending; an unknown
// tag gives an empty (non-nil) slice. One pipelined round over partitions,
// and another while pending jobs of deleted queues (which it leaves out)
// are being dropped.
func (s *Store) TagJobIDs(ctx context.Context, tag string) ([]uint64, error) {
	lo, hi := lexRange(escLex(tag))
	out, gens, err := s.lexIDs(ctx, keyTags, lo, hi)
	if err == nil {
		out, err = s.withoutDropped(ctx, out, gens)
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: jobs tagged %q: %w", tag, err)
	}
	return out, nil
}

// outputArg is a new output as a script takes it: compact JSON text
// ("null" for none), once the store admits the write.
func (s *Store) outputArg(ctx context.Context, output json.RawMessage) (string, error) {
	out, err := compact(output, "output")
	if err != nil {
		return "", err
	}
	if out == "" {
		out = "null"
	}
	return out, s.admitWrite(ctx)
}
