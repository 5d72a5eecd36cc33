package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// ErrNotPush is the refusal of a push dispatcher's take (TakeRequest.Push)
// from a queue that has no push setting (any more): the dispatcher stops
// serving it.
var ErrNotPush = errors.New("redisstore: the queue does not deliver its jobs by push")

// PushQueues returns the settings of every queue with a push setting, by
// name (one pipelined round over the partitions).
func (s *Store) PushQueues(ctx context.Context) (map[string]ocypod.QueueSettings, error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, s.l.P)
	for p := range s.l.P {
		cmds[p] = pipe.HGetAll(ctx, s.l.key(p, "q"))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("redisstore: push queues: %w", translate(err))
	}
	out := map[string]ocypod.QueueSettings{}
	for p, c := range cmds {
		for name, text := range c.Val() {
			if !ocypod.ValidQueueName(name) || s.l.home(name) != p {
				continue // a waiter mark, or a shard's copy
			}
			var st storedQueue
			if json.Unmarshal([]byte(text), &st) != nil || st.Push == "" {
				continue
			}
			qs, err := st.settings()
			if err != nil {
				continue
			}
			out[name] = qs
		}
	}
	return out, nil
}

// queueWatchers are the functions called in this process after a queue's
// settings changed or it was deleted (OnQueueChange).
type queueWatchers struct {
	mu  sync.Mutex
	fns []func(queue string)
}

// OnQueueChange registers fn to be called, in this process, after a PATCH
// (or PUT) of a queue's settings or its deletion: the local push
// dispatcher starts or stops serving it at once.
func (s *Store) OnQueueChange(fn func(queue string)) {
	s.watchers.mu.Lock()
	defer s.watchers.mu.Unlock()
	s.watchers.fns = append(s.watchers.fns, fn)
}

func (s *Store) queueChanged(name string) { s.watchers.notify(name) }

// OnPushDue registers fn to be called, in this process, after a create
// (CreateJob, CreateJobs, and the creates of outbox effects applied here)
// or a RetryJob made a job of a push queue queued at once, not scheduled
// for later: a
// Lambda function then wakes the push dispatcher. The store learns it
// from the operation's own script, at no extra cost. fn must return at once.
func (s *Store) OnPushDue(fn func(queue string)) {
	s.pushDue.mu.Lock()
	defer s.pushDue.mu.Unlock()
	s.pushDue.fns = append(s.pushDue.fns, fn)
}

func (w *queueWatchers) notify(name string) {
	w.mu.Lock()
	fns := append([]func(string){}, w.fns...)
	w.mu.Unlock()
	for _, fn := range fns {
		fn(name)
	}
}
