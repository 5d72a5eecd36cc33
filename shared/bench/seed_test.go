package bench_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/bench"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// The sweep benchmark needs 10^6 stored jobs. They are made through the
// store's public methods only (CreateJob, NextJob, UpdateJob), so whatever
// the store keeps and however it keeps it, the seed is what its calls leave.
// What makes 10^6 affordable is the client under that store: autoPipe sends
// the single commands of many goroutines together as pipelines, so
// redis-server runs the store's scripts back to back instead of paying a
// socket round trip for each.

// Seeding concurrency: goroutines calling the store, pipelines in flight,
// and the most commands one pipeline carries.
const (
	seedWorkers  = 512
	seedPipes    = 3
	seedMaxBatch = 256
)

// autoPipe is a go-redis hook that never lets the client send a single
// command: it queues it, and one of a few sender goroutines writes whatever
// is queued as one pipeline on a client of its own, then hands each caller
// its reply. Pipelines and transactions the caller makes itself pass
// through unchanged.
type autoPipe struct {
	raw  *redis.Client // sends the pipelines
	reqs chan pipeReq
	stop chan struct{}
	wg   sync.WaitGroup
}

type pipeReq struct {
	ctx  context.Context
	cmd  redis.Cmder
	done chan struct{}
}

var _ redis.Hook = (*autoPipe)(nil)

func newAutoPipe(raw *redis.Client) *autoPipe {
	a := &autoPipe{raw: raw, reqs: make(chan pipeReq, seedWorkers), stop: make(chan struct{})}
	for range seedPipes {
		a.wg.Go(a.send)
	}
	return a
}

// close stops the senders; commands sent afterwards fail.
func (a *autoPipe) close() {
	close(a.stop)
	a.wg.Wait()
}

func (a *autoPipe) DialHook(next redis.DialHook) redis.DialHook { return next }

func (a *autoPipe) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (a *autoPipe) ProcessHook(redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		req := pipeReq{ctx: ctx, cmd: cmd, done: make(chan struct{})}
		select {
		case a.reqs <- req:
		case <-a.stop:
			return fmt.Errorf("autoPipe closed")
		case <-ctx.Done():
			return ctx.Err()
		}
		<-req.done
		return cmd.Err()
	}
}

// send writes queued commands as pipelines until close.
func (a *autoPipe) send() {
	batch := make([]pipeReq, 0, seedMaxBatch)
	for {
		select {
		case <-a.stop:
			return
		case req := <-a.reqs:
			batch = append(batch[:0], req)
		}
	more:
		for len(batch) < seedMaxBatch {
			select {
			case req := <-a.reqs:
				batch = append(batch, req)
			default:
				break more
			}
		}
		p := a.raw.Pipeline()
		for _, req := range batch {
			_ = p.Process(req.ctx, req.cmd)
		}
		_, _ = p.Exec(context.Background()) // each command carries its own error
		for _, req := range batch {
			close(req.done)
		}
	}
}

// seeder makes jobs through a store on e's namespace (same options, same
// clock) whose client pipelines (see autoPipe).
type seeder struct {
	store   *redisstore.Store
	pipe    *autoPipe
	counter *bench.Counter // round trips of the pipelines
}

func newSeeder(tb testing.TB, e *env, opts redisstore.Options) *seeder {
	tb.Helper()
	raw, err := redisstore.NewClient(redisstore.ClientOptions{URL: e.url, PoolSize: seedPipes})
	if err != nil {
		tb.Fatal(err)
	}
	rc, ok := raw.(*redis.Client)
	if !ok {
		tb.Fatalf("redisstore.NewClient gave a %T for %s, want a *redis.Client", raw, e.url)
	}
	counter := &bench.Counter{}
	rc.AddHook(counter)
	// The front client never dials: its hook hands every command to raw.
	o := *rc.Options()
	front := redis.NewClient(&o)
	pipe := newAutoPipe(rc)
	front.AddHook(pipe)
	opts.Namespace = e.ns
	store, err := redisstore.New(front, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return &seeder{store: store, pipe: pipe, counter: counter}
}

// close stops the seeder's senders and closes its clients.
func (s *seeder) close() {
	s.pipe.close()
	_ = s.pipe.raw.Close()
}

// jobs creates n jobs in queue and takes them (they run from the clock's
// time on); with end they are completed too. Each job is one goroutine's
// CreateJob then NextJob (then UpdateJob of the job it got): as many jobs
// are taken as were created, whichever goroutine took which.
func (s *seeder) jobs(ctx context.Context, queue string, n int, end bool) error {
	return parallel(seedWorkers, n, func() error {
		if _, err := s.store.CreateJob(ctx, queue, ocypod.JobSpec{}); err != nil {
			return err
		}
		next, err := s.store.NextJob(ctx, queue)
		if err != nil {
			return err
		}
		if next == nil {
			return fmt.Errorf("queue %s: no job to take after creating one", queue)
		}
		if end {
			_, _, err := s.store.UpdateJob(ctx, next.ID, ocypod.JobUpdate{Status: &completed}, nil)
			return err
		}
		return nil
	})
}
