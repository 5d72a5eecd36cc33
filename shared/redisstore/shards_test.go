package redisstore_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// patchShards sets queue's shards, capped at the store's partitions.
func (h *harness) patchShards(queue string, k int) {
	h.t.Helper()
	if err := h.s.PatchQueue(h.ctx, queue, ocypod.QueuePatch{Shards: u64(uint64(min(k, h.P)))}); err != nil {
		h.t.Fatalf("PatchQueue(%q, shards %d) = %v", queue, k, err)
	}
}

// sameNamespace is a second store on h's namespace: another process.
func (h *harness) sameNamespace() *redisstore.Store {
	h.t.Helper()
	s, err := redisstore.New(h.rdb, redisstore.Options{Namespace: h.ns, Partitions: h.P, Now: h.clock.Now})
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// pendingByKey counts queue's pending jobs (queued, scheduled, waiting)
// of each key.
func (h *harness) pendingByKey(queue string) map[string]int {
	h.t.Helper()
	ids := h.queueIDs(queue)
	n := map[string]int{}
	for _, l := range [][]uint64{ids.Queued, ids.Scheduled, ids.Waiting} {
		for _, id := range l {
			n[h.job(id).Key]++
		}
	}
	return n
}

var shardCases = []conformanceCase{
	{name: "a key keeps one pending job across a change of shards and a stale process", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		// b learns the queue unsharded and keeps believing it.
		b := h.sameNamespace()
		if _, err := b.CreateJob(h.ctx, "q", ocypod.JobSpec{}); err != nil {
			t.Fatal(err)
		}
		const keys = 16
		first := map[string]uint64{}
		for i := range keys {
			k := fmt.Sprint("k", i)
			first[k] = h.create("q", ocypod.JobSpec{Key: k})
		}
		for _, shards := range []int{4, 2, 1, 3} {
			h.patchShards("q", shards)
			for i := range keys {
				k := fmt.Sprint("k", i)
				for _, s := range []*redisstore.Store{h.s, b} {
					c, err := s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: k})
					if err != nil || !c.Existing || c.ID != first[k] {
						t.Fatalf("shards %d: create of key %s = %+v, %v, want existing job %d", shards, k, c, err, first[k])
					}
				}
			}
		}
		for k, n := range h.pendingByKey("q") {
			if k != "" && n != 1 {
				t.Errorf("key %s has %d pending jobs", k, n)
			}
		}
	}},
	{name: "a singleton keeps one running and one pending job across a change of shards", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		b := h.sameNamespace()
		if _, err := b.CreateJob(h.ctx, "q", ocypod.JobSpec{}); err != nil { // b believes one shard
			t.Fatal(err)
		}
		h.takeIDs("q", 1)
		const keys = 8
		running := map[string]uint64{}
		for i := range keys {
			k := fmt.Sprint("k", i)
			running[k] = h.create("q", ocypod.JobSpec{Key: k})
		}
		if got := h.takeIDs("q", keys); len(got) != keys {
			t.Fatalf("took %d of %d keyed jobs", len(got), keys)
		}
		h.patchShards("q", 4)
		waiting := map[string]uint64{}
		for i := range keys {
			k := fmt.Sprint("k", i)
			waiting[k] = h.create("q", ocypod.JobSpec{Key: k})
			if c, err := b.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: k}); err != nil || c.ID != waiting[k] {
				t.Fatalf("stale process's create of key %s = %+v, %v, want job %d", k, c, err, waiting[k])
			}
			h.wantStatus(waiting[k], ocypod.StatusWaiting)
		}
		if got := h.takeIDs("q", 2*keys); len(got) != 0 {
			t.Fatalf("took %v while every key's job runs", got)
		}
		for i := range keys {
			k := fmt.Sprint("k", i)
			h.complete(running[k])
			h.wantStatus(waiting[k], ocypod.StatusQueued)
		}
		if got := h.takeIDs("q", 2*keys); len(got) != keys {
			t.Fatalf("took %d jobs once the singletons ended, want %d", len(got), keys)
		}
	}},
	{name: "a batch on a sharded queue is all or nothing", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		h.patchShards("q", 4)
		held := h.create("q", ocypod.JobSpec{Key: "held"})
		before := h.snapshot()
		batch := func(last ocypod.JobSpec) []ocypod.JobSpec {
			specs := make([]ocypod.JobSpec, 40, 41)
			for i := range specs {
				specs[i].Input = json.RawMessage(fmt.Sprint(i))
				if i%3 == 0 {
					specs[i].Key = fmt.Sprint("b", i)
				}
			}
			return append(specs, last)
		}
		for range 8 {
			_, err := h.s.CreateJobs(h.ctx, "q", batch(ocypod.JobSpec{Key: "held", OnConflict: ocypod.OnConflictError}))
			wantKind(t, "CreateJobs(a key held, on_conflict error)", err, ocypod.KindConflict,
				fmt.Sprintf("Job with key 'held' already exists: %d", held))
			h.wantUnchanged("a refused batch", before)
		}
		// A missing dependency (in the next partition).
		_, err := h.s.CreateJobs(h.ctx, "q", batch(ocypod.JobSpec{DependsOn: []uint64{held + uint64(h.P)*1000 + 1}}))
		if err == nil {
			t.Fatal("CreateJobs with a missing dependency succeeded")
		}
		h.wantUnchanged("a refused batch", before)
		cs, err := h.s.CreateJobs(h.ctx, "q", batch(ocypod.JobSpec{Key: "new"}))
		if err != nil || len(cs) != 41 {
			t.Fatalf("CreateJobs = %d, %v", len(cs), err)
		}
		if n := len(h.queueIDs("q").Queued); n != 42 {
			t.Fatalf("%d jobs queued, want 42", n)
		}
	}},
	{name: "keyed jobs an earlier version placed in other shards keep their keys", run: func(t *testing.T, h *harness) {
		if h.P < 4 {
			t.Skip("needs 4 partitions: keys outside a queue's home exist only with shards")
		}
		h.putQueue("q", settings(60, 0, 60, 0))
		// b learns the queue unsharded, and believes so for a while.
		b := h.sameNamespace()
		if c, err := b.CreateJob(h.ctx, "q", ocypod.JobSpec{}); err != nil {
			t.Fatal(err)
		} else {
			h.take("q", c.ID)
			h.complete(c.ID)
		}
		h.patchShards("q", 4)
		// The queue as an earlier version sharded it: its settings do not
		// say that its keys are all at its home.
		for i := range 4 {
			key := h.lay.Key(h.lay.Shard(h.lay.Home("q"), i), "q")
			var st map[string]any
			if err := json.Unmarshal([]byte(h.do("HGET", key, "q").Val().(string)), &st); err != nil {
				t.Fatal(err)
			}
			delete(st, "kh")
			text, _ := json.Marshal(st)
			h.do("HSET", key, "q", string(text))
		}
		legacy := func(i int, spec ocypod.JobSpec) uint64 {
			t.Helper()
			id, err := redisstore.CreateInShard(h.ctx, h.s, "q", i, spec)
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		// run: a running job of key r in shard 2; pend: a pending one of
		// key p in shard 1; done: a failed job of key f in shard 3.
		run := legacy(2, ocypod.JobSpec{Key: "r"})
		if got := h.takeIDs("q", 1); len(got) != 1 || got[0] != run {
			t.Fatalf("took %v, want %d", got, run)
		}
		done := legacy(3, ocypod.JobSpec{Key: "f", Retries: u64(1), RetryDelays: durs(10), RetryDelaysSet: true})
		if got := h.takeIDs("q", 1); len(got) != 1 || got[0] != done {
			t.Fatalf("took %v, want %d", got, done)
		}
		h.setStatus(done, ocypod.StatusFailed)
		pend := legacy(1, ocypod.JobSpec{Key: "p"})
		for _, s := range []*redisstore.Store{h.s, b, h.sameNamespace()} {
			if c, err := s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "p"}); err != nil || c.ID != pend || !c.Existing {
				t.Fatalf("create of key p = %+v, %v, want existing %d", c, err, pend)
			}
		}
		_, err := h.s.CreateJobs(h.ctx, "q", []ocypod.JobSpec{{}, {Key: "p", OnConflict: ocypod.OnConflictError}})
		wantKind(t, "create of key p, on_conflict error", err, ocypod.KindConflict, fmt.Sprintf("Job with key 'p' already exists: %d", pend))
		if c, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "p", OnConflict: ocypod.OnConflictUpdate, Priority: i64(7)}); err != nil || c.ID != pend {
			t.Fatalf("update of key p = %+v, %v", c, err)
		}
		if j := h.job(pend); j.Priority != 7 {
			t.Fatalf("priority of %d = %d after update, want 7", pend, j.Priority)
		}
		// Key r runs in shard 2: a new job of it waits there for it.
		next := h.create("q", ocypod.JobSpec{Key: "r"})
		if h.lay.PartitionOf(next) != h.lay.PartitionOf(run) {
			t.Fatalf("job %d of key r is in partition %d, its running job in %d", next, h.lay.PartitionOf(next), h.lay.PartitionOf(run))
		}
		h.wantStatus(next, ocypod.StatusWaiting)
		if c, err := b.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "r"}); err != nil || c.ID != next {
			t.Fatalf("second create of key r = %+v, %v, want %d", c, err, next)
		}
		h.complete(run)
		h.wantStatus(next, ocypod.StatusQueued)
		// Once a key's jobs there have ended, it lives at the home.
		h.setStatus(pend, ocypod.StatusCancelled)
		home := h.create("q", ocypod.JobSpec{Key: "p"})
		if h.lay.PartitionOf(home) != h.lay.Home("q") {
			t.Fatalf("job %d of key p is in partition %d, not the queue's home %d", home, h.lay.PartitionOf(home), h.lay.Home("q"))
		}
		// A job there whose key is free may not come back: the home may
		// hold its key.
		fresh := h.create("q", ocypod.JobSpec{Key: "f"})
		_, err = h.s.RetryJob(h.ctx, done, nil)
		wantKind(t, "RetryJob(a failed job of key f outside the home)", err, ocypod.KindConflict,
			fmt.Sprintf("Job %d cannot be requeued: its key is now kept in its queue's first shard; create a new job with it", done))
		h.clock.Advance(time.Minute) // its automatic retry falls due: given up
		h.sweepRetries()
		h.wantStatus(done, ocypod.StatusFailed)
		for k, n := range h.pendingByKey("q") {
			if n != 1 {
				t.Errorf("key %q has %d pending jobs", k, n)
			}
		}
		h.wantStatus(fresh, ocypod.StatusQueued)
	}},
}

// running tracks the jobs a test took and has not ended.
type running map[uint64]bool

func (h *harness) takeInto(r running, queue string, n int) int {
	h.t.Helper()
	got := h.takeIDs(queue, n)
	for _, id := range got {
		r[id] = true
	}
	return len(got)
}

func (h *harness) endAll(r running) {
	h.t.Helper()
	for id := range r {
		h.complete(id)
		delete(r, id)
	}
}

var shardLimitCases = []conformanceCase{
	{name: "concurrency holds across a change of shards, down and up", run: func(t *testing.T, h *harness) {
		if h.P < 4 {
			t.Skip("needs 4 partitions: a queue has at most P shards")
		}
		const limit = 4
		h.putQueue("q", settings(86400, 0, 86400, 0)) // no job times out while the clock moves
		if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Shards: u64(4), Concurrency: u64(limit)}); err != nil {
			t.Fatal(err)
		}
		created := 0
		spread := func(n int) { // one at a time: each lands in a random shard
			for range n {
				h.create("q", ocypod.JobSpec{})
				created++
			}
		}
		spread(60)
		r := running{}
		takeAll := func() {
			t.Helper()
			for range 3 { // the first takes may move shares (at most once a second)
				h.clock.Advance(2 * time.Second)
				h.takeInto(r, "q", 100)
				dump := func() {
					for i := range 4 {
						p := h.lay.Shard(h.lay.Home("q"), i)
						a, _ := h.rdb.HGet(h.ctx, h.lay.Key(p, "q"), "q a").Result()
						st, _ := h.rdb.HGet(h.ctx, h.lay.Key(p, "q"), "q").Result()
						n := 0
						for id := range r {
							if h.lay.PartitionOf(id) == p {
								n++
							}
						}
						t.Logf("shard %d: running %d, allowance %s, settings %s", i, n, a, st)
					}
				}
				if len(r) > limit {
					dump()
					t.Fatalf("%d jobs running, concurrency %d", len(r), limit)
				}
			}
		}
		takeAll()
		if len(r) != limit {
			t.Fatalf("%d jobs running, want %d", len(r), limit)
		}
		h.patchShards("q", 2)
		takeAll() // the old shards keep no more than their share
		// Every job is served, those of shards 2 and 3 included, never more
		// than the limit at once.
		done := 0
		for done < created {
			if len(r) == 0 {
				t.Fatalf("%d of %d jobs done, none can be taken", done, created)
			}
			done += len(r)
			h.endAll(r)
			takeAll()
		}
		// Shards 2 and 3 are empty: the limit comes back whole to 0 and 1.
		spread(40)
		takeAll()
		if len(r) != limit {
			t.Fatalf("after the old shards drained, %d jobs running, want %d", len(r), limit)
		}
		// Up again while every slot is busy: the new shards wait for the
		// old ones to come within their new shares, then take their own.
		h.patchShards("q", 4)
		spread(40)
		takeAll()
		parts := map[int]bool{}
		for done < created {
			if len(r) == 0 {
				t.Fatalf("%d of %d jobs done, none can be taken", done, created)
			}
			for id := range r {
				h.complete(id)
				delete(r, id)
				done++
				break
			}
			takeAll()
			for id := range r {
				parts[h.lay.PartitionOf(id)] = true
			}
		}
		if len(parts) != 4 {
			t.Fatalf("after shards went up to 4, jobs ran in partitions %v", parts)
		}
	}},
	{name: "a rate limit holds across a change of shards", run: func(t *testing.T, h *harness) {
		if h.P < 4 {
			t.Skip("needs 4 partitions: a queue has at most P shards")
		}
		h.putQueue("q", settings(60, 0, 60, 0))
		if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Shards: u64(4),
			RateLimit: &ocypod.RateLimit{PerSecond: 4, Burst: 4}}); err != nil {
			t.Fatal(err)
		}
		for range 200 {
			h.create("q", ocypod.JobSpec{})
		}
		taken := 0
		for range 20 {
			taken += len(h.takeIDs("q", 10))
		}
		if taken != 4 {
			t.Fatalf("took %d at once, burst 4", taken)
		}
		h.patchShards("q", 2)
		// Each second gives at most 4 more, whatever the shards.
		for sec := 1; sec <= 6; sec++ {
			h.clock.Advance(time.Second)
			for range 20 {
				taken += len(h.takeIDs("q", 10))
			}
			if taken > 4+4*sec {
				t.Fatalf("took %d in %d s, rate 4/s, burst 4", taken, sec)
			}
			if sec == 4 {
				h.patchShards("q", 4)
			}
		}
		if taken < 4+4*3 {
			t.Fatalf("took only %d in 6 s at 4/s", taken)
		}
	}},
}

// asEarlierVersion rewrites queue's settings in its first n shards as an
// earlier version left them: no version, members, allowances nor kh.
func (h *harness) asEarlierVersion(queue string, n int) {
	h.t.Helper()
	for i := range n {
		key := h.lay.Key(h.lay.Shard(h.lay.Home(queue), i), "q")
		var st map[string]any
		if err := json.Unmarshal([]byte(h.do("HGET", key, queue).Val().(string)), &st); err != nil {
			h.t.Fatal(err)
		}
		for _, f := range []string{"v", "m", "rv", "kh"} {
			delete(st, f)
		}
		text, _ := json.Marshal(st)
		h.do("HSET", key, queue, string(text))
		h.do("HDEL", key, queue+" a")
	}
}

var shardUpgradeCases = []conformanceCase{
	{name: "the limits of a queue an earlier version sharded and lowered hold", run: func(t *testing.T, h *harness) {
		if h.P < 4 {
			t.Skip("needs 4 partitions: a queue has at most P shards")
		}
		const limit = 4
		h.putQueue("q", settings(86400, 0, 86400, 0))
		if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Shards: u64(4), Concurrency: u64(limit)}); err != nil {
			t.Fatal(err)
		}
		h.patchShards("q", 2)
		h.asEarlierVersion("q", 4)
		s := h.sameNamespace() // a process of this version meets that data
		for i := range 4 {
			for range 3 {
				if _, err := redisstore.CreateInShard(h.ctx, h.s, "q", i, ocypod.JobSpec{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		r := running{}
		takeAll := func() {
			t.Helper()
			for range 3 {
				h.clock.Advance(2 * time.Second)
				got, err := s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"q"}, Count: 100})
				if err != nil {
					t.Fatal(err)
				}
				for _, j := range got {
					r[j.ID] = true
				}
				if len(r) > limit {
					t.Fatalf("%d jobs running, concurrency %d", len(r), limit)
				}
			}
		}
		takeAll()
		if len(r) != limit {
			t.Fatalf("%d jobs running, want %d", len(r), limit)
		}
		for done := 0; done < 12; {
			if len(r) == 0 {
				t.Fatalf("%d of 12 jobs done, none can be taken", done)
			}
			done += len(r)
			h.endAll(r)
			takeAll()
		}
		// Five jobs in each of the queue's two shards: a shard's share of
		// the concurrency serves its own jobs only, so jobs spread at
		// random (9 and 1) would leave a share idle.
		for i := range 2 {
			for range 5 {
				if _, err := redisstore.CreateInShard(h.ctx, s, "q", i, ocypod.JobSpec{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		takeAll()
		if len(r) != limit {
			t.Fatalf("after the old shards drained, %d jobs running, want %d", len(r), limit)
		}
	}},
}
