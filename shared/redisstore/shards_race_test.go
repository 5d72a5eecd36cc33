package redisstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// shardBackends are the Redis deployments the shard race tests run on,
// each with a store of four partitions: one redis-server, and a real
// three-node cluster.
func shardBackends(t *testing.T) map[string]redis.UniversalClient {
	return map[string]redis.UniversalClient{
		"redis":    redistest.Shared(t).Client(),
		"cluster3": redistest.SharedCluster3(t).Client(),
	}
}

func openP4(t *testing.T, rdb redis.UniversalClient, ns string) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestKeysRaceShardChanges: two processes create jobs of one key at once
// while one of them changes the queue's shards and the other still
// believes it unsharded: every create answers the same job, so one job of
// the key is pending; and while a job of the key runs, one job waits for
// it, whatever the shards.
func TestKeysRaceShardChanges(t *testing.T) {
	t.Parallel()
	for name, rdb := range shardBackends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			ns := redistest.Namespace(t)
			for try := range 8 {
				q := fmt.Sprint("q", try)
				a, b := openP4(t, rdb, ns), openP4(t, rdb, ns)
				if _, err := a.PutQueue(ctx, q, ocypod.DefaultQueueSettings()); err != nil {
					t.Fatal(err)
				}
				if _, err := a.CreateJob(ctx, q, ocypod.JobSpec{}); err != nil { // a learns one shard
					t.Fatal(err)
				}
				key := fmt.Sprint("key", try)
				ids := make(chan uint64, 64)
				var wg sync.WaitGroup
				wg.Go(func() {
					if err := b.PatchQueue(ctx, q, ocypod.QueuePatch{Shards: u64(4)}); err != nil {
						t.Error(err)
					}
				})
				for g := range 8 {
					s := []*redisstore.Store{a, b}[g%2]
					wg.Go(func() {
						for range 4 {
							c, err := s.CreateJob(ctx, q, ocypod.JobSpec{Key: key})
							if err != nil {
								t.Error(err)
								return
							}
							ids <- c.ID
						}
					})
				}
				wg.Wait()
				close(ids)
				seen := map[uint64]bool{}
				for id := range ids {
					seen[id] = true
				}
				if len(seen) != 1 {
					t.Fatalf("try %d: the creates of one key made jobs %v", try, seen)
				}
				// The key's job runs: creates from both make one that waits.
				if _, err := b.Take(ctx, ocypod.TakeRequest{Queues: []string{q}, Count: 10}); err != nil {
					t.Fatal(err)
				}
				waiting := map[uint64]bool{}
				for _, s := range []*redisstore.Store{a, b, a, b} {
					c, err := s.CreateJob(ctx, q, ocypod.JobSpec{Key: key})
					if err != nil {
						t.Fatal(err)
					}
					waiting[c.ID] = true
				}
				if len(waiting) != 1 {
					t.Fatalf("try %d: creates of a running key made jobs %v", try, waiting)
				}
				if got, err := a.Take(ctx, ocypod.TakeRequest{Queues: []string{q}, Count: 10}); err != nil || len(got) != 0 {
					t.Fatalf("try %d: took %+v, %v while the key's job runs", try, got, err)
				}
			}
		})
	}
}

// TestLimitsRaceShardChanges: 16 workers take and complete the jobs of a
// queue whose concurrency is 4 while its shards go down and up: never more
// than 4 jobs run at once, and every job is done once.
func TestLimitsRaceShardChanges(t *testing.T) {
	t.Parallel()
	for name, rdb := range shardBackends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const limit, jobs = 4, 300
			ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
			defer cancel()
			ns := redistest.Namespace(t)
			s := openP4(t, rdb, ns)
			if _, err := s.PutQueue(ctx, "q", ocypod.QueueSettings{Timeout: ocypod.Seconds(600),
				ExpiresAfter: ocypod.Seconds(600)}); err != nil {
				t.Fatal(err)
			}
			if err := s.PatchQueue(ctx, "q", ocypod.QueuePatch{Shards: u64(4), Concurrency: u64(limit)}); err != nil {
				t.Fatal(err)
			}
			for range jobs { // one at a time: each lands in a random shard
				if _, err := s.CreateJob(ctx, "q", ocypod.JobSpec{}); err != nil {
					t.Fatal(err)
				}
			}
			var running, most, done atomic.Int64
			seen := sync.Map{}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() { // another process changes the shards
				p := openP4(t, rdb, ns)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
					k := []uint64{2, 1, 3, 4}[i%4]
					if err := p.PatchQueue(ctx, "q", ocypod.QueuePatch{Shards: &k}); err != nil {
						t.Error(err)
						return
					}
				}
			})
			var workers sync.WaitGroup
			for range 16 {
				workers.Go(func() {
					w := openP4(t, rdb, ns)
					for done.Load() < jobs && ctx.Err() == nil {
						got, err := w.Take(ctx, ocypod.TakeRequest{Queues: []string{"q"}, Count: 2})
						if err != nil {
							t.Error(err)
							return
						}
						n := running.Add(int64(len(got)))
						for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
						}
						for _, j := range got {
							if _, dup := seen.LoadOrStore(j.ID, true); dup {
								t.Errorf("job %d taken twice", j.ID)
							}
							running.Add(-1)
							if _, _, err := w.UpdateJob(ctx, j.ID, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted)}, nil); err != nil {
								t.Error(err)
							}
							done.Add(1)
						}
					}
				})
			}
			workers.Wait()
			close(stop)
			wg.Wait()
			if most.Load() > limit {
				t.Errorf("%d jobs ran at once, concurrency %d", most.Load(), limit)
			}
			if done.Load() != jobs {
				t.Fatalf("%d of %d jobs done in 40 s", done.Load(), jobs)
			}
		})
	}
}

// TestBatchAllOrNothingSharded: on a queue sharded over partitions on
// different nodes, a batch of 41 whose last job's key is held (on_conflict
// error) answers 409 and creates nothing, try after try; corrected, it
// creates 41.
func TestBatchAllOrNothingSharded(t *testing.T) {
	t.Parallel()
	for name, rdb := range shardBackends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			s := openP4(t, rdb, redistest.Namespace(t))
			if _, err := s.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
				t.Fatal(err)
			}
			if err := s.PatchQueue(ctx, "q", ocypod.QueuePatch{Shards: u64(4)}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CreateJob(ctx, "q", ocypod.JobSpec{Key: "held"}); err != nil {
				t.Fatal(err)
			}
			batch := func(last string) []ocypod.JobSpec {
				specs := make([]ocypod.JobSpec, 41)
				for i := range 40 {
					if i%2 == 0 {
						specs[i].Key = fmt.Sprint("k", i)
					}
				}
				specs[40] = ocypod.JobSpec{Key: last, OnConflict: ocypod.OnConflictError}
				return specs
			}
			for range 8 {
				_, err := s.CreateJobs(ctx, "q", batch("held"))
				wantKind(t, "CreateJobs(a held key)", err, ocypod.KindConflict, "")
				if n, err := s.QueueSize(ctx, "q"); err != nil || n != 1 {
					t.Fatalf("queue size after a refused batch = %d, %v, want 1", n, err)
				}
			}
			if cs, err := s.CreateJobs(ctx, "q", batch("new")); err != nil || len(cs) != 41 {
				t.Fatalf("CreateJobs = %d, %v", len(cs), err)
			}
			if n, err := s.QueueSize(ctx, "q"); err != nil || n != 42 {
				t.Fatalf("queue size = %d, %v, want 42", n, err)
			}
		})
	}
}
