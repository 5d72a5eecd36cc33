package redisstore

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Automatic pipelining: the script calls of concurrent requests share
// round trips. A call is queued; while fewer than Options.AutoPipeline
// flushes are in flight, a flush starts and sends everything queued (up to
// maxPipeBatch calls) as one go-redis pipeline, and goes on with whatever
// was queued meanwhile until the queue is empty. So with one call at a time
// each call is its own round trip as before, and under load the calls that
// arrive while a round trip is in flight go together in the next one, as
// ioredis does for BullMQ: redis-server then reads and answers them in one
// go instead of one socket event each.
//
// The rules:
//
//   - A call is sent at most once. A flush is one pipeline of commands
//     go-redis may not retry (onceCmd, whatever the client's MaxRetries): a
//     connection that fails fails every call of that flush, whether its
//     script ran or not, as a single call's would.
//     Only a command Redis refused without running it is sent again, by the
//     caller and never by this layer: NOSCRIPT for an EVALSHA (then EVAL,
//     which loads it), a missing function library (loaded, then FCALL
//     again), and a cluster's MOVED or ASK, which go-redis's cluster
//     pipeline follows to the right node.
//   - Each call keeps its context and its deadline (the operation's, see
//     Options.OpTimeout, which the caller passes rather than a context of
//     its own: cheaper): one whose context ends or deadline passes while it
//     is queued returns at once and is never sent; one whose context ends
//     or deadline passes while its flush is in flight returns at once too,
//     but its command has been written and may still run (exactly as when a
//     single call's read times out). A flush's own deadline is the latest
//     of its calls', bounded by NewClient's read timeout (its pipeline
//     hook).
//   - On a cluster client the pipeline is split by node: every call names
//     one partition's keys, all under one hash tag, so each call goes whole
//     to the node of its slot.
//   - Only script calls go through here. Pipelines the store builds itself
//     (reads over every partition) and the long-poll subscription
//     (waiters.go: a dedicated pub/sub connection) do not; flushes use
//     go-redis's pipeline connections, so a slow flush never holds a
//     connection a plain command needs.
//   - A call waits for its whole flush: behind a slow script of another
//     request in the same flush (a large listing), as a command waits
//     behind it in redis-server anyway. A flush carries at most
//     maxPipeBatch calls and about maxPipeBytes.
//
// There is no goroutine while nothing is queued, so a Store needs no Close.

// maxPipeBatch is the most calls one flush carries, and maxPipeBytes about
// the most bytes of arguments (a flush takes at least one call, however
// large): a script call of a single job is a few hundred bytes, a batch
// create's up to the request body limit.
const (
	maxPipeBatch = 256
	maxPipeBytes = 1 << 20
)

// defaultAutoPipeline is how many flushes may be in flight at once when
// Options.AutoPipeline is 0.
const defaultAutoPipeline = 2

// autoPipe queues script calls and sends them in pipelines (see above).
type autoPipe struct {
	rdb      redis.UniversalClient
	maxBatch int
	maxLive  int

	mu    sync.Mutex
	queue []*pipeCall
	live  int // flushes running

	// beforeTake, when set, runs before a flush takes its batch, and
	// afterQueue after a call is queued (tests).
	beforeTake, afterQueue atomic.Pointer[func()]
	// flushes counts the pipelines sent (tests and the benchmark).
	flushes atomic.Int64
}

// onceCmd is a command go-redis must not send again after a failure that
// may have come after it reached Redis: a cluster pipeline otherwise sends
// a broken connection's commands again, up to MaxRedirects times (the
// per-node noResendHook does not see inside it). MOVED and ASK, after
// which Redis ran nothing, are still followed.
type onceCmd struct{ *redis.Cmd }

func (onceCmd) NoRetry() bool { return true }

// pipeCall is one queued call; done is closed once cmd holds its answer.
type pipeCall struct {
	ctx context.Context
	// deadline is when the call gives up: its context's or its own,
	// whichever is first (zero: none).
	deadline time.Time
	cmd      *redis.Cmd
	size     int // bytes of its arguments, about
	state    atomic.Int32
	done     chan struct{}
}

// pipeCall states: queued, taken by a flush, abandoned by its caller.
const (
	callQueued int32 = iota
	callTaken
	callAbandoned
)

func newAutoPipe(rdb redis.UniversalClient, live int) *autoPipe {
	return &autoPipe{rdb: rdb, maxBatch: maxPipeBatch, maxLive: live}
}

// do sends cmd (a new command, see scriptCmd) and returns its text reply,
// giving up (context.DeadlineExceeded) at deadline unless it is zero, or
// when ctx ends. cmd is read only once it holds its answer; a call that
// returns early leaves it to the flush.
func (a *autoPipe) do(ctx context.Context, deadline time.Time, cmd *redis.Cmd) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	c := &pipeCall{ctx: ctx, deadline: deadline, cmd: cmd, done: make(chan struct{})}
	// A timer only for a deadline before the context's (ctx.Done covers
	// the other): a pooled one, as one per call costs allocations.
	var expired <-chan time.Time
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || !d.After(deadline)) {
		c.deadline = d
	} else if !deadline.IsZero() {
		left := time.Until(deadline)
		if left <= 0 {
			return "", context.DeadlineExceeded
		}
		t := pipeTimers.Get().(*time.Timer)
		t.Reset(left)
		defer func() {
			t.Stop()
			pipeTimers.Put(t)
		}()
		expired = t.C
	}
	for _, a := range cmd.Args() {
		if s, ok := a.(string); ok {
			c.size += len(s)
		}
	}
	a.mu.Lock()
	a.queue = append(a.queue, c)
	start := a.live < a.maxLive
	if start {
		a.live++
	}
	a.mu.Unlock()
	if f := a.afterQueue.Load(); f != nil {
		(*f)()
	}
	if start {
		go a.flushLoop()
	}
	var err error
	select {
	case <-c.done:
		return cmd.Text()
	case <-ctx.Done():
		err = ctx.Err()
	case <-expired:
		err = context.DeadlineExceeded
	}
	if !c.state.CompareAndSwap(callQueued, callAbandoned) {
		// Taken: prefer an answer that is already there.
		select {
		case <-c.done:
			return cmd.Text()
		default:
		}
	}
	return "", err
}

// pipeTimers are stopped timers for autoPipe.do. (Since Go 1.23 a stopped
// or reset timer never delivers a stale time.)
var pipeTimers = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

// flushLoop sends what is queued, in batches, until the queue is empty.
func (a *autoPipe) flushLoop() {
	for {
		if f := a.beforeTake.Load(); f != nil {
			(*f)()
		}
		a.mu.Lock()
		n, size := 0, 0
		for n < len(a.queue) && n < a.maxBatch && (n == 0 || size+a.queue[n].size <= maxPipeBytes) {
			size += a.queue[n].size
			n++
		}
		if n == 0 {
			a.live--
			a.queue = nil
			a.mu.Unlock()
			return
		}
		batch := a.queue[:n:n]
		a.queue = a.queue[n:]
		a.mu.Unlock()
		a.flush(batch)
	}
}

// flush sends the batch's calls that are still wanted as one pipeline and
// hands each its answer.
func (a *autoPipe) flush(batch []*pipeCall) {
	send := batch[:0]
	var last time.Time
	bounded := true
	now := time.Now()
	for _, c := range batch {
		if !c.state.CompareAndSwap(callQueued, callTaken) {
			continue // abandoned while queued: never sent
		}
		if err := c.ctx.Err(); err != nil {
			c.cmd.SetErr(err)
			close(c.done)
			continue
		}
		if d := c.deadline; d.IsZero() {
			bounded = false
		} else if !now.Before(d) {
			c.cmd.SetErr(context.DeadlineExceeded)
			close(c.done)
			continue
		} else if d.After(last) {
			last = d
		}
		send = append(send, c)
	}
	if len(send) == 0 {
		return
	}
	ctx := context.Background()
	if bounded {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, last)
		defer cancel()
	}
	pipe := a.rdb.Pipeline()
	for _, c := range send {
		_ = pipe.Process(ctx, onceCmd{c.cmd})
	}
	a.flushes.Add(1)
	// Every answered command holds its own reply or error. A failure before
	// any reply (a connection whose AUTH Redis refused) is the pipeline's
	// alone: it becomes the error of every command left without an answer.
	if _, err := pipe.Exec(ctx); err != nil {
		for _, c := range send {
			if c.cmd.Err() == nil && c.cmd.Val() == nil {
				c.cmd.SetErr(err)
			}
		}
	}
	for _, c := range send {
		close(c.done)
	}
}
