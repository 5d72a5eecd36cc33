package redisstore_test

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestConcurrencyLimitUnderLoad has 50 takers work a queue whose
// concurrency is limited, unsharded and sharded over four partitions: the
// jobs taken and not yet completed never exceed the limit, and every job is
// done exactly once.
func TestConcurrencyLimitUnderLoad(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		partitions    int
		shards, limit uint64
	}{
		{"one partition", 1, 1, 5},
		{"four shards", 4, 4, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, redistest.Shared(t).Client(), tc.partitions, redisstore.Options{})
			h.putQueue("q", settings(300, 0, 600, 0))
			if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Shards: &tc.shards, Concurrency: &tc.limit}); err != nil {
				t.Fatal(err)
			}
			const jobs = 400
			for range jobs / 10 { // a batch goes to one shard: many spread
				if _, err := h.s.CreateJobs(h.ctx, "q", make([]ocypod.JobSpec, 10)); err != nil {
					t.Fatal(err)
				}
			}
			var running, most, done atomic.Int64
			seen := sync.Map{}
			var wg sync.WaitGroup
			for range 50 {
				wg.Go(func() {
					for idle := 0; done.Load() < jobs && idle < 2000; {
						got, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"q"}, Count: 2})
						if err != nil {
							t.Error(err)
							return
						}
						if len(got) == 0 {
							idle++
							continue
						}
						n := running.Add(int64(len(got)))
						for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
						}
						for _, j := range got {
							if _, dup := seen.LoadOrStore(j.ID, true); dup {
								t.Errorf("job %d taken twice", j.ID)
							}
							running.Add(-1)
							if err := h.update(j.ID, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted)}); err != nil {
								t.Error(err)
							}
							done.Add(1)
						}
					}
				})
			}
			wg.Wait()
			if done.Load() != jobs {
				t.Fatalf("%d of %d jobs done", done.Load(), jobs)
			}
			if most.Load() > int64(tc.limit) {
				t.Fatalf("%d jobs ran at once, limit %d", most.Load(), tc.limit)
			}
			if tc.shards > 1 {
				parts := map[int]bool{}
				seen.Range(func(k, _ any) bool { parts[h.lay.PartitionOf(k.(uint64))] = true; return true })
				if len(parts) < 2 {
					t.Fatalf("a queue of %d shards used partitions %v", tc.shards, parts)
				}
			}
		})
	}
}

// TestRateLimitAcrossShards: a sharded queue's bucket is split over its
// shards, so all of them together never give more than the burst at once.
func TestRateLimitAcrossShards(t *testing.T) {
	t.Parallel()
	h := newHarness(t, redistest.Shared(t).Client(), 4, redisstore.Options{})
	h.putQueue("q", settings(300, 0, 600, 0))
	shards := uint64(4)
	if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Shards: &shards,
		RateLimit: &ocypod.RateLimit{PerSecond: 4, Burst: 4}}); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		h.create("q", ocypod.JobSpec{})
	}
	taken := 0
	for range 40 {
		taken += len(h.takeIDs("q", 10))
	}
	if taken != 4 {
		t.Fatalf("took %d jobs at once, burst 4", taken)
	}
	h.clock.Advance(time.Second)
	for range 40 {
		taken += len(h.takeIDs("q", 10))
	}
	if taken != 8 {
		t.Fatalf("took %d after a second, want 8", taken)
	}
	err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Concurrency: u64(2)})
	wantKind(t, "PatchQueue(concurrency below shards)", err, ocypod.KindInvalid, "Invalid concurrency: must be 0 or at least shards (4)")
}

// TestLongPollWakes: a waiting take returns as soon as a job is created (a
// wake token, not the end of its wait), a scheduled job's due time wakes it
// too, and an empty wait ends with nothing.
func TestLongPollWakes(t *testing.T) {
	t.Parallel()
	rdb := redistest.Shared(t).Client()
	for _, partitions := range []int{1, 4} {
		ns := redistest.Namespace(t)
		s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Partitions: partitions})
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		if _, err := s.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
			t.Fatal(err)
		}
		got := make(chan []ocypod.NextJob, 1)
		start := time.Now()
		go func() {
			jobs, err := s.Take(ctx, ocypod.TakeRequest{Queues: []string{"q"}, Wait: 15 * time.Second})
			if err != nil {
				t.Error(err)
			}
			got <- jobs
		}()
		// Readiness: the take has marked the queue as waited on.
		lay := redisstore.LayoutOf(ns, partitions)
		for rdb.HGet(ctx, lay.Key(lay.Home("q"), "q"), "q w").Val() == "" {
			if time.Since(start) > 10*time.Second {
				t.Fatal("the take never started waiting")
			}
			time.Sleep(5 * time.Millisecond)
		}
		c, err := s.CreateJob(ctx, "q", ocypod.JobSpec{})
		if err != nil {
			t.Fatal(err)
		}
		jobs := <-got
		if len(jobs) != 1 || jobs[0].ID != c.ID {
			t.Fatalf("P=%d: waiting take = %+v, want job %d", partitions, jobs, c.ID)
		}
		if el := time.Since(start); el > 10*time.Second {
			t.Fatalf("P=%d: the waiting take returned after %v: not woken by the create", partitions, el)
		}
		// Woken by a due time.
		if _, err := s.CreateJob(ctx, "q", ocypod.JobSpec{RunAt: ptime(time.Now().Add(300 * time.Millisecond))}); err != nil {
			t.Fatal(err)
		}
		jobs, err = s.Take(ctx, ocypod.TakeRequest{Queues: []string{"q"}, Wait: 15 * time.Second})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("P=%d: take waiting for a due job = %+v, %v", partitions, jobs, err)
		}
		// Woken by a job scheduled while it waits: it then waits for that
		// job's due time, not for the end of its wait.
		until := rdb.HGet(ctx, lay.Key(lay.Home("q"), "q"), "q w").Val()
		go func() {
			jobs, err := s.Take(ctx, ocypod.TakeRequest{Queues: []string{"q"}, Wait: 15 * time.Second})
			if err != nil {
				t.Error(err)
			}
			got <- jobs
		}()
		waitingSince := time.Now()
		for rdb.HGet(ctx, lay.Key(lay.Home("q"), "q"), "q w").Val() == until {
			if time.Since(waitingSince) > 10*time.Second {
				t.Fatal("the second take never started waiting")
			}
			time.Sleep(5 * time.Millisecond)
		}
		start = time.Now()
		sc, err := s.CreateJob(ctx, "q", ocypod.JobSpec{Delay: &ocypod.Duration{Nanos: 300_000_000}})
		if err != nil {
			t.Fatal(err)
		}
		jobs = <-got
		if el := time.Since(start); len(jobs) != 1 || jobs[0].ID != sc.ID || el > 10*time.Second {
			t.Fatalf("P=%d: take waiting when a job was scheduled = %+v after %v, want job %d at its due time", partitions, jobs, el, sc.ID)
		}
		start = time.Now()
		jobs, err = s.Take(ctx, ocypod.TakeRequest{Queues: []string{"q"}, Wait: 200 * time.Millisecond})
		if err != nil || len(jobs) != 0 || time.Since(start) < 200*time.Millisecond {
			t.Fatalf("P=%d: empty wait = %+v, %v after %v", partitions, jobs, err, time.Since(start))
		}
	}
}

// TestDeleteQueueInSlices: deleting a big queue removes it at once for
// clients, drops its pending jobs in bounded slices (the request's first,
// then the sweeps'), and leaves alone the jobs of a queue created again
// under the same name meanwhile.
func TestDeleteQueueInSlices(t *testing.T) {
	t.Parallel()
	for _, partitions := range []int{1, 4} {
		h := newHarness(t, redistest.Shared(t).Client(), partitions, redisstore.Options{})
		h.putQueue("q", settings(60, 0, 60, 0))
		if _, err := h.s.CreateJobs(h.ctx, "q", make([]ocypod.JobSpec, 1000)); err != nil {
			t.Fatal(err)
		}
		if _, err := h.s.CreateJobs(h.ctx, "q", []ocypod.JobSpec{{Delay: dur(60)}}); err != nil {
			t.Fatal(err)
		}
		running := h.takeIDs("q", 1)[0]
		if err := h.s.DeleteQueue(h.ctx, "q"); err != nil {
			t.Fatal(err)
		}
		_, err := h.s.GetQueue(h.ctx, "q")
		wantKind(t, "GetQueue(deleted)", err, ocypod.KindNotFound, "")
		h.putQueue("q", settings(60, 0, 60, 0))
		fresh := h.create("q", ocypod.JobSpec{})
		for i := 0; ; i++ {
			if i > 20 {
				t.Fatal("the sweeps never finished dropping the queue")
			}
			r := h.sweepExpiry()
			if !r.More {
				break
			}
		}
		ids := h.queueIDs("q")
		if !slices.Equal(ids.Queued, []uint64{fresh}) || !slices.Equal(ids.Running, []uint64{running}) || len(ids.Scheduled) != 0 {
			t.Fatalf("after the drop: %+v", ids)
		}
	}
}

// TestLongPollOutlastsReadTimeout: a take may wait far longer than the
// client's read timeout (20 s against 2 s by default): it answers nothing
// after its wait, not a timeout error.
func TestLongPollOutlastsReadTimeout(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	ns := redistest.Namespace(t)
	// The queue is made (and the scripts loaded) through a client with the
	// usual timeouts; the take runs through one whose read timeout is 1s.
	setup, err := redisstore.New(srv.Client(), redisstore.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.PutQueue(t.Context(), "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	rdb := mustClient(t, redisstore.ClientOptions{URL: srv.URL(), ReadTimeout: time.Second})
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	jobs, err := s.Take(t.Context(), ocypod.TakeRequest{Queues: []string{"q"}, Wait: 2500 * time.Millisecond})
	if el := time.Since(start); err != nil || len(jobs) != 0 || el < 2500*time.Millisecond {
		t.Fatalf("take waiting 2.5s with a 1s read timeout = %+v, %v after %v", jobs, err, el)
	}
}

// TestShardedQueueSeenByAFreshProcess: a process that never created or
// took a job of a sharded queue (a cold Lambda answering its size) still
// reads and takes from every one of its partitions.
func TestShardedQueueSeenByAFreshProcess(t *testing.T) {
	t.Parallel()
	rdb := redistest.Shared(t).Client()
	ns := redistest.Namespace(t)
	open := func() *redisstore.Store {
		s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Partitions: 4})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ctx := t.Context()
	a := open()
	if _, err := a.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	shards := uint64(4)
	if err := a.PatchQueue(ctx, "q", ocypod.QueuePatch{Shards: &shards}); err != nil {
		t.Fatal(err)
	}
	specs := make([]ocypod.JobSpec, 40)
	if _, err := a.CreateJobs(ctx, "q", specs); err != nil {
		t.Fatal(err)
	}
	if n, err := open().QueueSize(ctx, "q"); err != nil || n != 40 {
		t.Errorf("QueueSize in a fresh process = %d, %v, want 40", n, err)
	}
	if ids, err := open().QueueJobIDs(ctx, "q"); err != nil || len(ids.Queued) != 40 {
		t.Errorf("QueueJobIDs in a fresh process = %d queued, %v, want 40", len(ids.Queued), err)
	}
	if page, err := open().ListJobs(ctx, ocypod.ListRequest{Queue: "q", Limit: 100}); err != nil || len(page.Jobs) != 40 {
		t.Errorf("ListJobs in a fresh process = %d jobs, %v, want 40", len(page.Jobs), err)
	}
	if jobs, err := open().Take(ctx, ocypod.TakeRequest{Queues: []string{"q"}, Count: 100}); err != nil || len(jobs) != 40 {
		t.Errorf("Take(count 100) in a fresh process = %d jobs, %v, want 40", len(jobs), err)
	}
}
