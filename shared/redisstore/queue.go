package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// PutQueue creates the queue name or replaces all of its settings (missing
// fields are not merged: s is the whole new setting). Durations are stored
// in whole seconds. created reports whether the queue is new. Jobs already
// created keep their settings. Returns ocypod.InvalidQueueName for a bad
// name.
func (s *Store) PutQueue(ctx context.Context, name string, qs ocypod.QueueSettings) (created bool, err error) {
	fail := func(err error) (bool, error) { return false, fmt.Errorf("redisstore: put queue %q: %w", name, err) }
	if !ocypod.ValidQueueName(name) {
		return fail(ocypod.InvalidQueueName())
	}
	delays, err := encodeDelays(qs.RetryDelays)
	if err != nil {
		return fail(ocypod.Internal(err))
	}
	arr, err := s.runQueue(ctx, scriptPutQueue, name,
		secs(qs.Timeout), secs(qs.HeartbeatTimeout), secs(qs.ExpiresAfter),
		strconv.FormatUint(qs.Retries, 10), delays)
	if err != nil {
		return fail(err)
	}
	n, err := replyInt(arr, 1)
	if err != nil {
		return fail(err)
	}
	return n == 1, nil
}

// GetQueue returns the settings of queue name. Returns ocypod.QueueNotFound
// when it does not exist, ocypod.InvalidQueueName for a bad name. Missing
// settings read as zero; unreadable ones give ocypod.Internal.
func (s *Store) GetQueue(ctx context.Context, name string) (ocypod.QueueSettings, error) {
	if !ocypod.ValidQueueName(name) {
		return ocypod.QueueSettings{}, fmt.Errorf("redisstore: get queue %q: %w", name, ocypod.InvalidQueueName())
	}
	m, err := s.rdb.HGetAll(ctx, s.keys.Queue(name)).Result()
	if err != nil {
		return ocypod.QueueSettings{}, fmt.Errorf("redisstore: get queue %q: %w", name, translate(err))
	}
	if len(m) == 0 {
		return ocypod.QueueSettings{}, fmt.Errorf("redisstore: get queue %q: %w", name, ocypod.QueueNotFound(name))
	}
	qs, err := decodeQueue(m)
	if err != nil {
		return ocypod.QueueSettings{}, fmt.Errorf("redisstore: get queue %q: %w", name, ocypod.Internal(err))
	}
	return qs, nil
}

func decodeQueue(m map[string]string) (ocypod.QueueSettings, error) {
	var d decoder
	qs := ocypod.QueueSettings{
		Timeout:          d.duration(m, "timeout"),
		HeartbeatTimeout: d.duration(m, "heartbeat_timeout"),
		ExpiresAfter:     d.duration(m, "expires_after"),
		Retries:          d.uint(m, "retries"),
		RetryDelays:      d.delays(m, "retry_delays"),
	}
	return qs, d.err
}

// ListQueues returns the names of every queue, sorted byte-wise.
func (s *Store) ListQueues(ctx context.Context) ([]string, error) {
	names, err := s.rdb.SMembers(ctx, s.keys.Queues()).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: list queues: %w", translate(err))
	}
	if names == nil {
		names = []string{}
	}
	slices.Sort(names)
	return names, nil
}

// DeleteQueue deletes queue name: its settings, its pending list and every
// job still queued in it (hash and tag memberships). Its running, failed
// and ended jobs stay and can still finish, fail, be cancelled, expire and be
// deleted. Returns ocypod.QueueNotFound when it does not exist,
// ocypod.InvalidQueueName for a bad name. Costs O(queued jobs).
func (s *Store) DeleteQueue(ctx context.Context, name string) error {
	fail := func(err error) error { return fmt.Errorf("redisstore: delete queue %q: %w", name, err) }
	if !ocypod.ValidQueueName(name) {
		return fail(ocypod.InvalidQueueName())
	}
	if _, err := s.runQueue(ctx, scriptDeleteQueue, name); err != nil {
		return fail(err)
	}
	return nil
}

// runQueue runs a script on queue name: KEYS[1] is the queue's settings
// hash, the name is the first argument after the key prefix, and the reply's
// code is mapped (ocypod.QueueNotFound when the queue does not exist).
func (s *Store) runQueue(ctx context.Context, sc *script, name string, args ...any) ([]any, error) {
	arr, err := s.run(ctx, sc, s.keys.Queue(name), append([]any{name}, args...)...)
	if err != nil {
		return nil, err
	}
	if err := queueResult(arr, name); err != nil {
		return nil, err
	}
	return arr, nil
}

// queueResult maps the result code of a queue script.
func queueResult(arr []any, name string) error {
	c, err := replyCode(arr)
	switch {
	case err != nil:
		return err
	case c == codeOK:
		return nil
	case c == codeQueueNotFound:
		return ocypod.QueueNotFound(name)
	}
	return unexpectedCode(c)
}

// QueueSize returns the number of queued jobs of queue name (running and
// ended jobs are not counted). Returns ocypod.QueueNotFound when it does not
// exist, ocypod.InvalidQueueName for a bad name.
func (s *Store) QueueSize(ctx context.Context, name string) (uint64, error) {
	fail := func(err error) (uint64, error) { return 0, fmt.Errorf("redisstore: size of queue %q: %w", name, err) }
	if !ocypod.ValidQueueName(name) {
		return fail(ocypod.InvalidQueueName())
	}
	arr, err := s.runQueue(ctx, scriptQueueSize, name)
	if err != nil {
		return fail(err)
	}
	n, err := replyInt(arr, 1)
	if err != nil {
		return fail(err)
	}
	return uint64(n), nil
}

// QueueJobIDs returns the ids of queue name's jobs grouped by status: queued
// ones in the order they will be taken, the others ascending. Every slice is
// non-nil. Returns ocypod.QueueNotFound when the queue is not registered (a
// deliberate difference: Ocypod answered with leftovers), and
// ocypod.InvalidQueueName for a bad name.
func (s *Store) QueueJobIDs(ctx context.Context, name string) (ocypod.JobIDs, error) {
	fail := func(err error) (ocypod.JobIDs, error) {
		return ocypod.JobIDs{}, fmt.Errorf("redisstore: job ids of queue %q: %w", name, err)
	}
	if !ocypod.ValidQueueName(name) {
		return fail(ocypod.InvalidQueueName())
	}
	arr, err := s.runQueue(ctx, scriptQueueJobIDs, name)
	if err != nil {
		return fail(err)
	}
	var ids ocypod.JobIDs
	for i, dst := range []*[]uint64{&ids.Queued, &ids.Running, &ids.Failed, &ids.Completed, &ids.Cancelled, &ids.TimedOut} {
		if *dst, err = replyIDs(arr, i+1); err != nil {
			return fail(err)
		}
	}
	return ids, nil
}

// secs formats the whole seconds of d, as settings are stored.
func secs(d ocypod.Duration) string { return strconv.FormatUint(d.Secs, 10) }

// encodeDelays is the stored form of retry delays: a JSON array of duration
// strings in whole seconds, or "" when there are none.
func encodeDelays(ds []ocypod.Duration) (string, error) {
	if len(ds) == 0 {
		return "", nil
	}
	secs := make([]uint64, len(ds))
	for i, d := range ds {
		secs[i] = d.Secs
	}
	b, err := json.Marshal(secs)
	return string(b), err
}
