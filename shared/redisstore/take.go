package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Take takes up to req.Count jobs (at least one; 0 means 1) from
// req.Queues in order (or starting at a rotating queue with RoundRobin);
// they become running for req.Worker. A paused queue, one at its
// concurrency or over its rate limit gives nothing. With req.Wait it waits
// up to that long for a job to become ready — woken by creates and
// requeues (a wake list per queue, BLPOP), and by the earliest due time of
// the queues' scheduled jobs and retries — never polling Redis in a loop.
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
		if err := s.checkExist(ctx, req.Queues, nil); err != nil {
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
}

type takenJob struct {
	ID      idStr           `json:"id"`
	Queue   string          `json:"queue"`
	Attempt uint64          `json:"attempt"`
	Input   json.RawMessage `json:"input"`
}

// collect turns a take reply into jobs (and the error of a missing queue).
func (t *takeCall) collect(ctx context.Context, r *takeReply) ([]ocypod.NextJob, error) {
	t.s.logSwept(ctx, r.Swept)
	for q, sp := range r.Spans {
		t.s.noteShards(q, sp)
	}
	if len(r.Missing) > 0 {
		return nil, ocypod.QueueNotFound(r.Missing[0])
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
	for _, g := range t.groups {
		if len(jobs) >= t.count {
			break
		}
		args := map[string]any{"queues": g.queues, "count": t.count - len(jobs), "worker": t.req.Worker,
			"inline": t.s.o.InlineSweep}
		if wait > 0 {
			args["wait"] = wait.Milliseconds()
		}
		var got takeReply
		r, err := t.s.run(ctx, &call{sc: scriptTake, p: g.p, queues: g.queues, args: args}, &got)
		if err != nil {
			return nil, 0, err
		}
		if r.Err != "" {
			return nil, 0, refusal(r, 0, g.queues[0], nil)
		}
		t.s.afterCall(ctx, r)
		got1, err := t.collect(ctx, &got)
		if err != nil {
			return nil, 0, err
		}
		jobs = append(jobs, got1...)
		if got.NextDue != nil && (nextDue == 0 || *got.NextDue < nextDue) {
			nextDue = *got.NextDue
		}
	}
	return jobs, nextDue, nil
}

// run takes jobs, waiting for them up to req.Wait when none is ready.
func (t *takeCall) run(ctx context.Context) ([]ocypod.NextJob, error) {
	deadline := time.Now().Add(t.req.Wait)
	for {
		left := time.Until(deadline)
		jobs, nextDue, err := t.once(ctx, max(left, 0))
		if err != nil || len(jobs) > 0 || left <= 0 {
			return jobs, err
		}
		wait := left
		if nextDue > 0 {
			wait = min(wait, time.Until(time.UnixMilli(nextDue))+time.Millisecond)
		}
		if wait > 0 {
			if err := t.block(ctx, wait); err != nil {
				return nil, err
			}
		}
		if ctx.Err() != nil {
			return nil, nil
		}
	}
}

// block waits up to d for a wake token on any of the take's queues: one
// BLPOP per partition, the first to return ends the others.
func (t *takeCall) block(ctx context.Context, d time.Duration) error {
	byPart := map[int][]string{}
	for _, g := range t.groups {
		for _, q := range g.queues {
			byPart[g.p] = append(byPart[g.p], t.s.l.key(g.p, "wake:"+q))
		}
	}
	// Whole seconds through go-redis's BLPop, which lets the connection's
	// read deadline wait that long; less than a second by hand (BLPop
	// rounds it up to a second), in pieces the client's read timeout
	// allows. The caller's loop waits whatever is left.
	if d >= time.Second {
		d = d.Truncate(time.Second)
	} else {
		d = min(d, t.s.blockPiece)
	}
	ctx, cancel := context.WithTimeout(ctx, d+time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, len(byPart))
	secs := strconv.FormatFloat(max(d.Seconds(), 0.001), 'f', 3, 64)
	for _, keys := range byPart {
		wg.Go(func() {
			var err error
			if d >= time.Second {
				err = t.s.rdb.BLPop(ctx, d, keys...).Err()
			} else {
				args := append([]any{"blpop"}, toAny(keys)...)
				err = t.s.rdb.Do(ctx, append(args, secs)...).Err()
			}
			if err == nil || isNil(err) {
				cancel()
				return
			}
			if ctx.Err() == nil {
				errs <- err
			}
			cancel()
		})
	}
	wg.Wait()
	close(errs)
	if err, ok := <-errs; ok {
		return translate(err)
	}
	return nil
}

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
