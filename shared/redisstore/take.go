package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Take takes up to req.Count jobs (at least one; 0 means 1) from
// req.Queues in order (or starting at a rotating queue with RoundRobin);
// they become running for req.Worker. A paused queue, one at its
// concurrency or over its rate limit gives nothing. With req.Wait it waits
// up to that long for a job to become ready — woken by the events that may
// let it take one (a job made ready, a concurrency slot freed, a settings
// change such as a resume; see waiters.go), and by the earliest due time
// of the queues' scheduled jobs, retries and rate limit tokens — never
// polling Redis in a loop.
// It returns no job and no error when none could be taken.
//
// Before taking, each call also times out up to Options.InlineSweep
// overdue running jobs of its partition and promotes the due scheduled
// jobs and retries of its queues, so a take never misses a due job and
// workers see timeouts between scheduled sweeps.
//
// Returns ocypod.QueueNotFound for a queue that does not exist (nothing is
// taken), ocypod.InvalidQueueName for a bad name.
func (s *Store) Take(ctx context.Context, req ocypod.TakeRequest) ([]ocypod.NextJob, error) {
	t, err := s.newTake(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("redisstore: take: %w", err)
	}
	jobs, err := t.run(ctx)
	if err != nil {
		return nil, fmt.Errorf("redisstore: take from %v: %w", req.Queues, err)
	}
	return jobs, nil
}

// NextJob takes the next job of queue (Ocypod's GET /queue/{name}/job):
// nil, nil when the queue has none.
func (s *Store) NextJob(ctx context.Context, queue string) (*ocypod.NextJob, error) {
	jobs, err := s.Take(ctx, ocypod.TakeRequest{Queues: []string{queue}, Count: 1})
	if err != nil || len(jobs) == 0 {
		return nil, err
	}
	return &jobs[0], nil
}

// takeGroup is the queues of one take call: consecutive queues (or shards)
// of one partition.
type takeGroup struct {
	p      int
	queues []string
}

// takeCall is one take request in progress.
type takeCall struct {
	s      *Store
	req    ocypod.TakeRequest
	count  int
	groups []takeGroup
	// checked is set when newTake made sure every queue exists.
	checked bool
}

var rotation atomic.Uint64 // round-robin starts

// newTake checks a take and places its queues in partitions.
func (s *Store) newTake(ctx context.Context, req ocypod.TakeRequest) (*takeCall, error) {
	if len(req.Queues) == 0 {
		return nil, ocypod.Invalid("Invalid queues: none given")
	}
	for _, q := range req.Queues {
		if !ocypod.ValidQueueName(q) {
			return nil, ocypod.InvalidQueueName()
		}
	}
	t := &takeCall{s: s, req: req, count: max(req.Count, 1)}
	queues := req.Queues
	if req.RoundRobin && len(queues) > 1 {
		i := int(rotation.Add(1) % uint64(len(queues)))
		queues = append(append([]string(nil), queues[i:]...), queues[:i]...)
	}
	for _, q := range queues {
		home, span := s.l.home(q), s.freshSpan(ctx, q)
		off := 0
		if span > 1 {
			off = rand.IntN(span)
		}
		for i := range span {
			p := s.l.shard(home, (off+i)%span)
			if n := len(t.groups); n > 0 && t.groups[n-1].p == p {
				t.groups[n-1].queues = append(t.groups[n-1].queues, q)
			} else {
				t.groups = append(t.groups, takeGroup{p: p, queues: []string{q}})
			}
		}
	}
	if len(t.groups) > 1 && len(req.Queues) > 1 {
		if err := s.checkTakeable(ctx, req); err != nil {
			return nil, err
		}
		t.checked = true
	}
	return t, nil
}

func (t *takeCall) first() takeGroup { return t.groups[0] }

// takeReply is take.lua's reply.
type takeReply struct {
	Jobs    list[takenJob]    `json:"jobs"`
	Missing list[string]      `json:"missing"`
	NextDue *int64            `json:"next_due"`
	Swept   dict[list[idStr]] `json:"swept"`
	Spans   dict[list[int]]   `json:"spans"`
	// Rebalance names the sharded queues whose limit shares held this take
	// back and may move (limits.go).
	Rebalance list[string] `json:"rebalance"`
	// Full: the answer's byte budget is used up (Options.MaxAnswerBytes).
	Full bool `json:"full"`
	// Held says why nothing was taken when a limit held queued jobs back:
	// paused, concurrency or rate_limit.
	Held string `json:"held"`
	// Dropping: the call stopped early, having dropped many pending jobs
	// of a deleted queue of the same name; calling again goes on.
	Dropping bool `json:"dropping"`
}

// takeArgs is take.lua's argument.
type takeArgs struct {
	Queues   []string `json:"queues"`
	Count    int      `json:"count"`
	Worker   string   `json:"worker"` // '' for nobody named
	Inline   int      `json:"inline"`
	MaxBytes int      `json:"max_bytes"`
	// WorkerTTL is how long (ms) a worker is listed after it last took a
	// job.
	WorkerTTL int64 `json:"worker_ttl"`
	// Any: the answer already holds jobs.
	Any bool `json:"any,omitempty"`
	// Push and MinTimeout (seconds): the push dispatcher's take.
	Push       bool   `json:"push,omitempty"`
	MinTimeout *int64 `json:"min_timeout,omitempty"`
	// Wait is how long (ms) the taker waits when nothing is taken.
	Wait *int64 `json:"wait,omitempty"`
}

func (a *takeArgs) appendArgs(b []byte) []byte {
	b = appendStrings(appendField(b, "queues"), a.Queues)
	b = appendIntField(b, "count", int64(a.Count))
	b = appendStringField(b, "worker", a.Worker)
	b = appendIntField(b, "inline", int64(a.Inline))
	b = appendIntField(b, "max_bytes", int64(a.MaxBytes))
	b = appendIntField(b, "worker_ttl", a.WorkerTTL)
	if a.Any {
		b = appendBoolField(b, "any", true)
	}
	if a.Push {
		b = appendBoolField(b, "push", true)
	}
	if a.MinTimeout != nil {
		b = appendIntField(b, "min_timeout", *a.MinTimeout)
	}
	if a.Wait != nil {
		b = appendIntField(b, "wait", *a.Wait)
	}
	return b
}

// maxDropRounds bounds the calls one take makes to one partition while
// they keep dropping jobs of deleted queues (take.lua's TAKE_DROPS each).
const maxDropRounds = 40

// takeSize is what take_from counts of a taken job against
// Options.MaxAnswerBytes: more than its take object's JSON.
func takeSize(j *ocypod.NextJob) int { return len(j.Input) + len(j.Queue) + 96 }

type takenJob struct {
	ID      idStr           `json:"id"`
	Queue   string          `json:"queue"`
	Attempt uint64          `json:"attempt"`
	Input   json.RawMessage `json:"input"`
}

// collect turns a take reply from partition p into jobs (and the error of a
// queue missing from its home).
func (t *takeCall) collect(ctx context.Context, p int, r *takeReply) ([]ocypod.NextJob, error) {
	t.s.logSwept(ctx, r.Swept)
	for q, sp := range r.Spans {
		t.s.noteShards(q, sp)
	}
	for _, q := range r.Rebalance {
		t.s.maybeRebalance(ctx, q)
	}
	if r.Held != "" && t.req.Why != nil && *t.req.Why == "" {
		*t.req.Why = r.Held
	}
	for _, q := range r.Missing {
		if t.s.l.home(q) == p {
			return nil, ocypod.QueueNotFound(q)
		}
		// Only the queue's home says whether it exists: this process
		// thought it sharded wider (it was deleted and created again, or
		// its shards are still being copied). Read its shards again next
		// time.
		t.s.shardCache.Delete(q)
	}
	jobs := make([]ocypod.NextJob, 0, len(r.Jobs))
	for _, j := range r.Jobs {
		in := j.Input
		if string(in) == "null" {
			in = nil
		}
		jobs = append(jobs, ocypod.NextJob{ID: uint64(j.ID), Queue: j.Queue, Input: in, Attempt: j.Attempt})
	}
	return jobs, nil
}

// once runs one take call per group until count jobs are taken. wait marks
// the queues as waited on (see take.lua). It returns the jobs and the
// earliest due time the calls reported (0 for none).
func (t *takeCall) once(ctx context.Context, wait time.Duration) ([]ocypod.NextJob, int64, error) {
	var jobs []ocypod.NextJob
	var nextDue int64
	left := t.s.o.MaxAnswerBytes
groups:
	for _, g := range t.groups {
		for round := 0; len(jobs) < t.count && left > 0; round++ {
			args := &takeArgs{Queues: g.queues, Count: t.count - len(jobs), Worker: t.req.Worker,
				Inline: t.s.o.InlineSweep, MaxBytes: left, WorkerTTL: t.s.o.WorkerExpiry.Milliseconds(), Any: len(jobs) > 0}
			if t.req.Push {
				floor := int64((t.req.PushTimeout + time.Second - 1) / time.Second)
				args.Push, args.MinTimeout = true, &floor
			}
			if wait > 0 {
				w := wait.Milliseconds()
				args.Wait = &w
			}
			var got takeReply
			r, err := t.s.run(ctx, &call{sc: scriptTake, p: g.p, args: args}, &got)
			if err != nil {
				return nil, 0, err
			}
			if r.Err != "" {
				return nil, 0, refusal(r, 0, g.queues[0], nil)
			}
			t.s.afterCall(ctx, r)
			got1, err := t.collect(ctx, g.p, &got)
			if err != nil {
				return nil, 0, err
			}
			jobs = append(jobs, got1...)
			for _, j := range got1 {
				left -= takeSize(&j)
			}
			if got.NextDue != nil && (nextDue == 0 || *got.NextDue < nextDue) {
				nextDue = *got.NextDue
			}
			if got.Full {
				break groups
			}
			if !got.Dropping {
				break
			}
			if round+1 >= maxDropRounds {
				// Still dropping: a waiting take looks again at once rather
				// than sleep on jobs that may be ready behind them.
				nextDue = t.s.now().UnixMilli()
				break
			}
		}
	}
	return jobs, nextDue, nil
}

// run takes jobs, waiting for them up to req.Wait when none is ready: in
// the store's hub (waiters.go), which needs no Redis connection while it
// waits. It looks again when woken, and at the earliest time the attempt
// reported (a due job, a rate limit's next token). A take past the hub's
// capacity answers at once.
func (t *takeCall) run(ctx context.Context) (jobs []ocypod.NextJob, err error) {
	var w *waiter
	if t.req.Wait > 0 {
		w = t.s.hub.join(t.req.Queues)
	}
	if w == nil {
		jobs, _, err = t.once(ctx, 0)
		return jobs, err
	}
	defer func() { t.s.hub.leave(w, len(jobs) >= t.count || err != nil || ctx.Err() != nil) }()
	// The wait also ends when req.Stop closes; the attempts keep ctx, so
	// one under way when the server shuts down still answers its job.
	waitCtx := ctx
	if t.req.Stop != nil {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-t.req.Stop:
				cancel()
			case <-waitCtx.Done():
			}
		}()
	}
	deadline := time.Now().Add(t.req.Wait)
	for {
		left := time.Until(deadline)
		var nextDue int64
		jobs, nextDue, err = t.once(ctx, max(left, 0))
		if err != nil || len(jobs) > 0 || left <= 0 {
			return jobs, err
		}
		d := left
		if nextDue > 0 {
			// Due times are on the store's clock.
			d = min(d, max(time.UnixMilli(nextDue).Sub(t.s.now())+time.Millisecond, minRecheck))
		}
		if !t.s.hub.wait(waitCtx, w, d) {
			return nil, nil
		}
	}
}

// minRecheck is the shortest pause before a waiting take looks again for
// a due time it was told of.
const minRecheck = 5 * time.Millisecond

// logSwept logs the jobs an inline sweep changed, one line each.
func (s *Store) logSwept(ctx context.Context, swept dict[list[idStr]]) {
	for outcome, l := range swept {
		msg, ok := sweepEvents[outcome]
		if !ok {
			continue
		}
		for _, id := range l {
			s.log.LogAttrs(ctx, slog.LevelInfo, msg, slog.Uint64("job_id", uint64(id)))
		}
	}
}
