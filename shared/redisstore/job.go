package redisstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// CreateJob creates a job at the back of queue and returns its id (ids start
// at 1, are shared by all queues and never reused). Fields absent from spec
// inherit the queue's settings, retry_delays included (unlike Ocypod).
// Durations are stored in whole seconds. Returns ocypod.QueueNotFound when
// the queue does not exist, ocypod.InvalidQueueName for a bad name, and the
// 400 of spec.Validate (empty tags) or for an input that is not JSON.
func (s *Store) CreateJob(ctx context.Context, queue string, spec ocypod.JobSpec) (uint64, error) {
	fail := func(err error) (uint64, error) {
		return 0, fmt.Errorf("redisstore: create job in %q: %w", queue, err)
	}
	if !ocypod.ValidQueueName(queue) {
		return fail(ocypod.InvalidQueueName())
	}
	if err := spec.Validate(); err != nil {
		return fail(err)
	}
	if err := s.admitWrite(ctx); err != nil {
		return fail(err)
	}
	args, err := createArgs(spec)
	if err != nil {
		return fail(err)
	}
	arr, err := s.runQueue(ctx, scriptCreateJob, queue, append([]any{s.nowMicros()}, args...)...)
	if err != nil {
		return fail(err)
	}
	id, err := replyInt(arr, 1)
	if err != nil {
		return fail(err)
	}
	return uint64(id), nil
}

// createArgs are ARGV[4..] of create_job.lua for spec.
func createArgs(spec ocypod.JobSpec) ([]any, error) {
	input := ""
	if spec.Input != nil {
		var buf bytes.Buffer
		if err := json.Compact(&buf, spec.Input); err != nil {
			return nil, ocypod.Invalid("input is not valid JSON")
		}
		if buf.String() != "null" {
			input = buf.String()
		}
	}
	tagsJSON, tags, err := encodeTags(spec.Tags)
	if err != nil {
		return nil, ocypod.Internal(err)
	}
	opt := func(d *ocypod.Duration) string {
		if d == nil {
			return ""
		}
		return secs(*d)
	}
	retries := ""
	if spec.Retries != nil {
		retries = strconv.FormatUint(*spec.Retries, 10)
	}
	mode := "set"
	if spec.RetryDelays == nil && !spec.RetryDelaysSet {
		mode = "inherit"
	}
	delays, err := encodeDelays(spec.RetryDelays)
	if err != nil {
		return nil, ocypod.Internal(err)
	}
	args := []any{input, tagsJSON, opt(spec.Timeout), opt(spec.HeartbeatTimeout),
		opt(spec.ExpiresAfter), retries, mode, delays}
	for _, t := range tags {
		args = append(args, t)
	}
	return args, nil
}

// encodeTags is the stored JSON of tags ("" for none) and the tags as that
// JSON reads back, which name the tag sets: JSON cannot hold invalid UTF-8,
// so such bytes read back as U+FFFD and the index must use the same string.
func encodeTags(tags []string) (string, []string, error) {
	if tags == nil {
		return "", nil, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tags); err != nil {
		return "", nil, err
	}
	raw := strings.TrimSuffix(buf.String(), "\n")
	var back []string
	if err := json.Unmarshal([]byte(raw), &back); err != nil {
		return "", nil, err
	}
	return raw, back, nil
}

// NextJob takes the oldest queued job of queue: it becomes running with
// started_at = now. Returns nil, nil when the queue has no queued job,
// ocypod.QueueNotFound when it does not exist, ocypod.InvalidQueueName for a
// bad name.
//
// Before taking a job it also times out up to Options.InlineSweep overdue
// running jobs and requeues up to as many due retries, of any queue, so
// polling workers see timeouts and retries without waiting for the next
// scheduled sweep.
func (s *Store) NextJob(ctx context.Context, queue string) (*ocypod.NextJob, error) {
	fail := func(err error) (*ocypod.NextJob, error) {
		return nil, fmt.Errorf("redisstore: next job from %q: %w", queue, err)
	}
	if !ocypod.ValidQueueName(queue) {
		return fail(ocypod.InvalidQueueName())
	}
	arr, err := s.runQueue(ctx, scriptNextJob, queue, s.nowMicros(), s.inlineSweep)
	if err != nil {
		return fail(err)
	}
	var swept SweepResult
	if swept.TimedOut, err = replyIDs(arr, 3); err != nil {
		return fail(err)
	}
	if swept.Retried, err = replyIDs(arr, 4); err != nil {
		return fail(err)
	}
	if swept.Abandoned, err = replyIDs(arr, 5); err != nil {
		return fail(err)
	}
	swept.LogEvents(ctx, s.log)
	if replyString(arr, 1) == "" {
		return nil, nil // no queued job
	}
	id, err := strconv.ParseUint(replyString(arr, 1), 10, 64)
	if err != nil {
		return fail(ocypod.Internal(fmt.Errorf("invalid job id in reply %v", arr)))
	}
	next := &ocypod.NextJob{ID: id}
	if input := replyString(arr, 2); input != "" {
		var d decoder
		if next.Input = d.jsonValue("input", input); d.err != nil {
			// The job is running now, but its stored input is unreadable.
			return fail(ocypod.Internal(fmt.Errorf("job %d: %w", id, d.err)))
		}
	}
	return next, nil
}

// GetJob returns every field of job id. Returns ocypod.JobNotFound when it
// does not exist (or its hash has no status), ocypod.Internal when a stored
// field cannot be read; missing fields read as zero.
func (s *Store) GetJob(ctx context.Context, id uint64) (*ocypod.Job, error) {
	m, err := s.rdb.HGetAll(ctx, s.keys.Job(id)).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: get job %d: %w", id, translate(err))
	}
	if _, ok := m["status"]; !ok {
		return nil, fmt.Errorf("redisstore: get job %d: %w", id, ocypod.JobNotFound(id))
	}
	j, err := decodeJob(id, m)
	if err != nil {
		return nil, fmt.Errorf("redisstore: get job %d: %w", id, ocypod.Internal(err))
	}
	return j, nil
}

// JobStatus returns the status of job id. Returns ocypod.JobNotFound when it
// does not exist, ocypod.Internal when its status is unreadable.
func (s *Store) JobStatus(ctx context.Context, id uint64) (ocypod.Status, error) {
	v, err := s.rdb.HGet(ctx, s.keys.Job(id), "status").Result()
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("redisstore: status of job %d: %w", id, ocypod.JobNotFound(id))
	}
	if err != nil {
		return "", fmt.Errorf("redisstore: status of job %d: %w", id, translate(err))
	}
	st, ok := ocypod.ParseStatus(v)
	if !ok {
		return "", fmt.Errorf("redisstore: status of job %d: %w", id, ocypod.Internal(fmt.Errorf("invalid status %q", truncate(v))))
	}
	return st, nil
}

// JobOutput returns the output of job id, nil when none was set or it is
// JSON null. Returns ocypod.JobNotFound when the job does not exist,
// ocypod.Internal when the stored output is not JSON.
func (s *Store) JobOutput(ctx context.Context, id uint64) (json.RawMessage, error) {
	fail := func(err error) (json.RawMessage, error) {
		return nil, fmt.Errorf("redisstore: output of job %d: %w", id, err)
	}
	vals, err := s.rdb.HMGet(ctx, s.keys.Job(id), "status", "output").Result()
	if err != nil {
		return fail(translate(err))
	}
	if len(vals) != 2 || vals[0] == nil {
		return fail(ocypod.JobNotFound(id))
	}
	out, ok := vals[1].(string)
	if !ok {
		return nil, nil // never set
	}
	var d decoder
	msg := d.jsonValue("output", out)
	if d.err != nil {
		return fail(ocypod.Internal(d.err))
	}
	return msg, nil
}

// SetJobOutput replaces the output of running job id (nil stores JSON
// null). Returns ocypod.JobNotFound when the job does not exist,
// ocypod.OutputNotRunning when it is not running, ocypod.Invalid when output
// is not JSON.
func (s *Store) SetJobOutput(ctx context.Context, id uint64, output json.RawMessage) error {
	fail := func(err error) error { return fmt.Errorf("redisstore: set output of job %d: %w", id, err) }
	out, err := compactJSON(output)
	if err != nil {
		return fail(err)
	}
	if err := s.admitWrite(ctx); err != nil {
		return fail(err)
	}
	arr, err := s.run(ctx, scriptSetJobOutput, s.keys.Job(id), formatID(id), out)
	if err != nil {
		return fail(err)
	}
	if err := jobResult(arr, id, func() error { return ocypod.OutputNotRunning() }); err != nil {
		return fail(err)
	}
	return nil
}

func compactJSON(msg json.RawMessage) (string, error) {
	if msg == nil {
		return "null", nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, msg); err != nil {
		return "", ocypod.Invalid("output is not valid JSON")
	}
	return buf.String(), nil
}

// jobResult maps the result code of a job script; notRunning gives the
// error for codeNotRunning.
func jobResult(arr []any, id uint64, notRunning func() error) error {
	c, err := replyCode(arr)
	if err != nil {
		return err
	}
	switch c {
	case codeOK:
		return nil
	case codeJobNotFound:
		return ocypod.JobNotFound(id)
	case codeNotRunning:
		if notRunning != nil {
			return notRunning()
		}
	case codeCorrupt:
		return corrupt(arr)
	}
	return unexpectedCode(c)
}

// UpdateJob applies a PATCH to job id: the output (only while running) and
// a status change allowed by ocypod.AllowedFrom, atomically; nothing is
// written unless every check passes. Returns ocypod.JobNotFound when the job
// does not exist (even for an empty update), ocypod.OutputNotRunning when an
// output is given for a job that is not running,
// ocypod.TransitionConflict for a change the table forbids,
// ocypod.QueueNotFound when a requeue finds the job's queue deleted.
//
// Effects: completed and cancelled end the job; failed and timed_out wait for
// an automatic retry, or end when none is left; queued puts the job at the
// back of its queue and clears started_at, ended_at, last_heartbeat and the
// output (retries_attempted unchanged).
func (s *Store) UpdateJob(ctx context.Context, id uint64, u ocypod.JobUpdate) error {
	hasOutput, out := "0", ""
	if u.Output != nil {
		var err error
		if out, err = compactJSON(u.Output); err != nil {
			return fmt.Errorf("redisstore: update job %d: %w", id, err)
		}
		if err := s.admitWrite(ctx); err != nil {
			return fmt.Errorf("redisstore: update job %d: %w", id, err)
		}
		hasOutput = "1"
	}
	target, allowed := "", ""
	if u.Status != nil {
		target = string(*u.Status)
		from := ocypod.AllowedFrom(*u.Status)
		strs := make([]string, len(from))
		for i, st := range from {
			strs[i] = string(st)
		}
		allowed = strings.Join(strs, ",")
	}
	arr, err := s.run(ctx, scriptUpdateJob, s.keys.Job(id), formatID(id),
		s.nowMicros(), hasOutput, out, target, allowed)
	if err == nil {
		err = updateResult(arr, id, u)
	}
	if err != nil {
		return fmt.Errorf("redisstore: update job %d: %w", id, err)
	}
	return nil
}

func updateResult(arr []any, id uint64, u ocypod.JobUpdate) error {
	c, err := replyCode(arr)
	if err != nil {
		return err
	}
	switch {
	case c == codeConflict && u.Status != nil:
		cur, ok := ocypod.ParseStatus(replyString(arr, 1))
		if !ok {
			return ocypod.Internal(fmt.Errorf("job %d: invalid status %q", id, truncate(replyString(arr, 1))))
		}
		return ocypod.TransitionConflict(cur, *u.Status)
	case c == codeQueueNotFound:
		return ocypod.QueueNotFound(replyString(arr, 1))
	}
	return jobResult(arr, id, func() error { return ocypod.OutputNotRunning() })
}

// Heartbeat records a heartbeat of running job id: last_heartbeat = now,
// which postpones its heartbeat timeout. Returns ocypod.JobNotFound when the
// job does not exist, ocypod.HeartbeatNotRunning when it is not running.
func (s *Store) Heartbeat(ctx context.Context, id uint64) error {
	arr, err := s.run(ctx, scriptHeartbeat, s.keys.Job(id), formatID(id), s.nowMicros())
	if err == nil {
		err = jobResult(arr, id, func() error { return ocypod.HeartbeatNotRunning(id) })
	}
	if err != nil {
		return fmt.Errorf("redisstore: heartbeat of job %d: %w", id, err)
	}
	return nil
}

// DeleteJob deletes job id whatever its state, with every index entry
// (queue, running, failed, ended, tags). Statistics are unchanged. Returns
// ocypod.JobNotFound when it does not exist.
func (s *Store) DeleteJob(ctx context.Context, id uint64) error {
	arr, err := s.run(ctx, scriptDeleteJob, s.keys.Job(id), formatID(id))
	if err == nil {
		err = jobResult(arr, id, nil)
	}
	if err != nil {
		return fmt.Errorf("redisstore: delete job %d: %w", id, err)
	}
	return nil
}

// TagJobIDs returns the ids of the jobs created with tag, ascending; an
// unknown tag gives an empty (non-nil) slice.
func (s *Store) TagJobIDs(ctx context.Context, tag string) ([]uint64, error) {
	members, err := s.rdb.ZRange(ctx, s.keys.Tag(tag), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: jobs tagged %q: %w", tag, translate(err))
	}
	ids, err := parseIDs(members)
	if err != nil {
		return nil, fmt.Errorf("redisstore: jobs tagged %q: %w", tag, err)
	}
	return ids, nil
}
