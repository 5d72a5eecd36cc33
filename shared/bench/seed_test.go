package bench_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/bench"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// The sweep benchmark needs 10^6 stored jobs. They are made through the
// store's public methods only (CreateJob, NextJob, UpdateJob), so whatever
// the store keeps and however it keeps it, the seed is what its calls leave.
// What makes 10^6 affordable is the store's automatic pipelining
// (redisstore.Options.AutoPipeline) under many goroutines: redis-server
// runs the store's scripts back to back instead of paying a socket round
// trip for each.

// Seeding concurrency: goroutines calling the store, and pipelined round
// trips in flight.
const (
	seedWorkers = 512
	seedPipes   = 3
)

// seeder makes jobs through a store on e's namespace (same options, same
// clock) with seedPipes pipelined round trips in flight.
type seeder struct {
	store   *redisstore.Store
	rdb     redis.UniversalClient
	counter *bench.Counter // round trips and commands
}

func newSeeder(tb testing.TB, e *env, opts redisstore.Options) *seeder {
	tb.Helper()
	rdb, err := redisstore.NewClient(redisstore.ClientOptions{URL: e.url, DialTimeout: benchRedisTimeout, ReadTimeout: benchRedisTimeout, WriteTimeout: benchRedisTimeout})
	if err != nil {
		tb.Fatal(err)
	}
	counter := &bench.Counter{}
	rdb.AddHook(counter)
	opts.Namespace = e.ns
	opts.AutoPipeline = seedPipes
	store, err := redisstore.New(rdb, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return &seeder{store: store, rdb: rdb, counter: counter}
}

// close closes the seeder's client.
func (s *seeder) close() { _ = s.rdb.Close() }

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
