package redisstore_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestDeletedQueueJobsNeverServed: DELETE then PUT of a queue holding
// 5,000 queued jobs. The delete drops only a first slice of them; the rest
// wait for the sweeps. Until then, the queue created again under the same
// name must neither serve, count nor list them: takes, size, /info,
// job_ids, listings and tags see only its own new jobs, right after the
// PUT, on one partition, four, a cluster and a three-node cluster (there
// with the queue sharded over every partition, before and after).
func TestDeletedQueueJobsNeverServed(t *testing.T) {
	t.Parallel()
	type setup struct {
		name       string
		client     func(testing.TB) redis.UniversalClient
		partitions int
		shards     uint64
	}
	for _, c := range []setup{
		{"redis", func(tb testing.TB) redis.UniversalClient { return redistest.Shared(tb).Client() }, 1, 1},
		{"cluster", clusterClient, 1, 1},
		{"redis-P4", func(tb testing.TB) redis.UniversalClient { return redistest.Shared(tb).Client() }, 4, 1},
		{"redis-P4-sharded", func(tb testing.TB) redis.UniversalClient { return redistest.Shared(tb).Client() }, 4, 4},
		{"cluster3-P4-sharded", func(tb testing.TB) redis.UniversalClient { return redistest.SharedCluster3(tb).Client() }, 4, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, c.client(t), c.partitions, redisstore.Options{})
			shard := func() {
				if c.shards > 1 {
					if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Shards: u64(c.shards)}); err != nil {
						t.Fatalf("PatchQueue(shards) = %v", err)
					}
				}
			}
			h.putQueue("q", settings(60, 0, 60, 0))
			shard()
			specs := make([]ocypod.JobSpec, ocypod.MaxBatch)
			for i := range specs {
				specs[i] = ocypod.JobSpec{Tags: []string{"old"}}
			}
			for range 5 {
				if _, err := h.s.CreateJobs(h.ctx, "q", specs); err != nil {
					t.Fatal(err)
				}
			}
			if err := h.s.DeleteQueue(h.ctx, "q"); err != nil {
				t.Fatal(err)
			}
			h.putQueue("q", settings(60, 0, 60, 0))
			shard()
			var fresh []uint64
			for range 3 {
				fresh = append(fresh, h.create("q", ocypod.JobSpec{Tags: []string{"old"}}))
			}
			slices.Sort(fresh)
			h.checkInvariants()

			if n, err := h.s.QueueSize(h.ctx, "q"); err != nil || n != 3 {
				t.Errorf("QueueSize after the PUT = %d, %v, want 3", n, err)
			}
			if c := h.info().Queues["q"]; c.Queued != 3 {
				t.Errorf("Info()[q] after the PUT = %+v, want 3 queued", c)
			}
			ids := h.queueIDs("q")
			if got := slices.Sorted(slices.Values(ids.Queued)); !slices.Equal(got, fresh) {
				t.Errorf("QueueJobIDs(q).Queued after the PUT = %d ids, want %v", len(got), fresh)
			}
			page, err := h.s.ListJobs(h.ctx, ocypod.ListRequest{Queue: "q", Limit: 100})
			if err != nil || len(page.Jobs) != 3 {
				t.Errorf("ListJobs(q) after the PUT = %d jobs, %v, want 3", len(page.Jobs), err)
			}
			page, err = h.s.ListJobs(h.ctx, ocypod.ListRequest{Status: ocypod.StatusQueued, Limit: 100})
			if err != nil || len(page.Jobs) != 3 {
				t.Errorf("ListJobs(status queued) after the PUT = %d jobs, %v, want 3", len(page.Jobs), err)
			}
			if tagged, err := h.s.TagJobIDs(h.ctx, "old"); err != nil || !slices.Equal(tagged, fresh) {
				t.Errorf("TagJobIDs(old) after the PUT = %d ids, %v, want %v", len(tagged), err, fresh)
			}

			// A worker takes until the queue is empty: only the new jobs.
			var taken []uint64
			for i := 0; ; i++ {
				if i > 100 {
					t.Fatalf("takes never ran dry: %d jobs taken", len(taken))
				}
				jobs, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"q"}, Count: 100})
				if err != nil {
					t.Fatal(err)
				}
				if len(jobs) == 0 {
					break
				}
				for _, j := range jobs {
					taken = append(taken, j.ID)
				}
			}
			slices.Sort(taken)
			if !slices.Equal(taken, fresh) {
				t.Fatalf("a worker took %d jobs (%d of them of the deleted queue), want only %v",
					len(taken), len(taken)-len(fresh), fresh)
			}
			h.finishDrops()
			if n, err := h.s.QueueSize(h.ctx, "q"); err != nil || n != 0 {
				t.Errorf("QueueSize after the drop = %d, %v, want 0", n, err)
			}
		})
	}
}

// finishDrops runs the expiry sweep (which drops the pending jobs of
// deleted queues) until nothing is left to drop.
func (h *harness) finishDrops() {
	h.t.Helper()
	for i := 0; ; i++ {
		if i > 200 {
			h.t.Fatal("the sweeps never finished dropping deleted queues")
		}
		if !h.sweepExpiry().More {
			return
		}
	}
}

// checkDropCounts checks, for the invariants, that each drop record of
// partition p counts exactly the pending jobs of its queue, by status, of
// its generation or older (re-derived from the jobs' metadata).
func (h *harness) checkDropCounts(p int) {
	t := h.t
	records := h.rdb.HGetAll(h.ctx, h.lay.Key(p, "drop")).Val()
	if len(records) == 0 {
		return
	}
	type rec struct {
		G float64            `json:"g"`
		C map[string]float64 `json:"c"`
	}
	counted := func(text string) bool {
		var raw map[string]json.RawMessage
		_ = json.Unmarshal([]byte(text), &raw)
		c, ok := raw["c"]
		return ok && string(c) != "false" // a record of older code counts on first use
	}
	want := map[string]map[string]float64{}
	drops := map[string]rec{}
	for q, text := range records {
		if !counted(text) {
			continue
		}
		var r rec
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			t.Errorf("invariant: partition %d drop record of %q unreadable: %q", p, q, text)
			continue
		}
		drops[q] = r
		want[q] = map[string]float64{"q": 0, "s": 0, "w": 0}
	}
	for _, raw := range h.rdb.HGetAll(h.ctx, h.lay.Key(p, "j")).Val() {
		var m struct {
			Q    string  `json:"q"`
			S    string  `json:"s"`
			G    float64 `json:"G"`
			Tags string  `json:"g"` // declared, or "g" would fill G
		}
		if json.Unmarshal([]byte(raw), &m) != nil {
			continue
		}
		d, ok := drops[m.Q]
		code := map[string]string{"": "q", "queued": "q", "scheduled": "s", "waiting": "w"}[m.S]
		if ok && code != "" && m.G <= d.G {
			want[m.Q][code]++
		}
	}
	for q, r := range drops {
		got := map[string]float64{"q": r.C["q"], "s": r.C["s"], "w": r.C["w"]}
		if !maps.Equal(got, want[q]) {
			t.Errorf("invariant: partition %d drop record of %q counts %v, want %v", p, q, got, want[q])
		}
	}
}

var generationCases = []conformanceCase{
	{name: "queue deleted and created again", run: func(t *testing.T, h *harness) {
		// The old queue: more queued jobs than the delete drops at once, a
		// keyed and tagged one behind them, a scheduled one, one waiting on
		// a running job, a running one with a retry left, a failed one
		// waiting for its retry, and a dead letter queue.
		h.putQueue("dead", ocypod.DefaultQueueSettings())
		h.putQueue("q", settings(60, 0, 0, 1, 30))
		dl := "dead"
		if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{DeadLetterQueue: &dl}); err != nil {
			t.Fatal(err)
		}
		running := h.create("q", ocypod.JobSpec{})
		retrying := h.create("q", ocypod.JobSpec{})
		doomed := h.create("q", ocypod.JobSpec{Retries: u64(0)})
		if got := h.takeIDs("q", 3); !slices.Equal(got, []uint64{running, retrying, doomed}) {
			t.Fatalf("took %v", got)
		}
		failed := h.create("q", ocypod.JobSpec{})
		h.take("q", failed)
		h.setStatus(failed, ocypod.StatusFailed) // retried in 30s
		if _, err := h.s.CreateJobs(h.ctx, "q", make([]ocypod.JobSpec, 250)); err != nil {
			t.Fatal(err)
		}
		keyed := h.create("q", ocypod.JobSpec{Key: "k", Tags: []string{"t"}})
		scheduled := h.create("q", ocypod.JobSpec{Delay: dur(10)})
		waiting := h.create("q", ocypod.JobSpec{DependsOn: []uint64{running}})

		if err := h.s.DeleteQueue(h.ctx, "q"); err != nil {
			t.Fatal(err)
		}
		h.putQueue("q", settings(60, 0, 0, 1, 30))
		if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{DeadLetterQueue: &dl}); err != nil {
			t.Fatal(err)
		}
		if page, err := h.s.ListJobs(h.ctx, ocypod.ListRequest{Queue: "q", Key: "k"}); err != nil || len(page.Jobs) != 0 {
			t.Errorf("ListJobs(q, key k) before the new queue used it = %d jobs, %v, want none", len(page.Jobs), err)
		}
		// The key is free for the new queue: a new job, not the old one.
		c, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "k", OnConflict: ocypod.OnConflictError})
		if err != nil || c.Existing || c.ID == keyed {
			t.Fatalf("CreateJob(key k) in the new queue = %+v, %v, want a new job", c, err)
		}
		fresh := c.ID
		// A job made to depend on one the delete is dropping is cancelled
		// when it is dropped, as when a dependency is deleted.
		h.putQueue("other", ocypod.DefaultQueueSettings())
		dependent := h.create("other", ocypod.JobSpec{DependsOn: []uint64{scheduled}})
		h.checkInvariants() // the drop records count what is left

		wantCounts := ocypod.QueueCounts{Queued: 1, Running: 3, Failed: 1}
		if got := h.info().Queues["q"]; got != wantCounts {
			t.Errorf("Info()[q] = %+v, want %+v", got, wantCounts)
		}
		if n, err := h.s.QueueSize(h.ctx, "q"); err != nil || n != 1 {
			t.Errorf("QueueSize = %d, %v, want 1", n, err)
		}
		ids := h.queueIDs("q")
		if !slices.Equal(ids.Queued, []uint64{fresh}) || len(ids.Scheduled)+len(ids.Waiting) != 0 ||
			!slices.Equal(ids.Running, []uint64{running, retrying, doomed}) || !slices.Equal(ids.Failed, []uint64{failed}) {
			t.Errorf("QueueJobIDs = %+v", ids)
		}
		for _, req := range []ocypod.ListRequest{{Queue: "q"}, {Queue: "q", Status: ocypod.StatusScheduled},
			{Queue: "q", Status: ocypod.StatusWaiting}, {Queue: "q", Key: "k"}, {Status: ocypod.StatusQueued},
			{Tag: "t", HasTag: true}} {
			page, err := h.s.ListJobs(h.ctx, req)
			if err != nil {
				t.Fatalf("ListJobs(%+v) = %v", req, err)
			}
			for _, j := range page.Jobs {
				if j.ID == keyed || j.ID == scheduled || j.ID == waiting || (j.ID < keyed && j.ID > failed) {
					t.Errorf("ListJobs(%+v) lists job %d (%s) of the deleted queue", req, j.ID, j.Status)
				}
			}
		}
		if tagged, err := h.s.TagJobIDs(h.ctx, "t"); err != nil || len(tagged) != 0 {
			t.Errorf("TagJobIDs(t) = %v, %v, want none", tagged, err)
		}

		// Nor does a requeue of one of its jobs: its queue is gone.
		before := h.snapshot()
		_, _, err = h.s.UpdateJob(h.ctx, failed, ocypod.JobUpdate{Status: status(ocypod.StatusQueued)}, nil)
		wantKind(t, "requeue of a failed job of the deleted queue", err, ocypod.KindNotFound, "Queue 'q' does not exist")
		_, err = h.s.RetryJob(h.ctx, retrying, nil)
		wantKind(t, "retry of a running job of the deleted queue", err, ocypod.KindNotFound, "Queue 'q' does not exist")
		h.wantUnchanged("refused requeues", before)

		// What the old jobs do next never reaches the new queue: the
		// scheduled job falls due, the waiting one's dependency completes,
		// the running ones fail (one for good, with a dead letter queue),
		// the retries fall due.
		h.setStatus(running, ocypod.StatusCompleted)
		h.setStatus(retrying, ocypod.StatusFailed)
		h.setStatus(doomed, ocypod.StatusFailed)
		h.clock.Advance(time.Minute)
		h.sweepRetries()
		h.checkInvariants()
		for _, id := range []uint64{retrying, failed} {
			if j := h.job(id); j.Status != ocypod.StatusFailed || !j.Ended() {
				t.Errorf("job %d of the deleted queue, retry due: %s ended %v, want failed for good", id, j.Status, j.Ended())
			}
		}
		if n, err := h.s.QueueSize(h.ctx, "dead"); err != nil || n != 0 {
			t.Errorf("QueueSize(dead) = %d, %v: a job of the deleted queue left a dead letter in the new queue's", n, err)
		}
		if n, err := h.s.RetryFailures(h.ctx, "failed", 100, ""); err != nil || n != 0 {
			t.Errorf("RetryFailures(failed) = %d, %v, want none of the deleted queue's jobs retried", n, err)
		}
		if got := h.takeIDs("q", 10); !slices.Equal(got, []uint64{fresh}) {
			t.Errorf("Take(q) = %v, want only %d", got, fresh)
		}
		h.finishDrops()
		if j := h.job(dependent); j.Status != ocypod.StatusCancelled || j.Error == nil ||
			j.Error.Message != fmt.Sprintf("dependency %d deleted", scheduled) {
			t.Errorf("job depending on a dropped job = %s, %+v, want cancelled: dependency %d deleted", j.Status, j.Error, scheduled)
		}
		for _, id := range []uint64{keyed, scheduled, waiting} {
			_, err := h.s.GetJob(h.ctx, id)
			wantKind(t, "GetJob(pending job of the deleted queue) after the drop", err, ocypod.KindNotFound, "")
		}
		if got := h.info().Queues["q"]; got != (ocypod.QueueCounts{Running: 1, Completed: 1, Failed: 3}) {
			t.Errorf("Info()[q] after the drop = %+v", got)
		}
	}},
	{name: "data written before generations were kept", run: func(t *testing.T, h *harness) {
		// testdata/gen0.json: queue gone deleted, q deleted with pending jobs
		// of every kind left to drop and created again with one job, keep
		// never deleted (settings without b, drop records without counts).
		if !h.loadLegacy() {
			t.Fatalf("testdata/gen0.json has no namespace of %d partitions", h.P)
		}
		h.checkInvariants()
		old := h.queueIDs("q")
		if len(old.Queued) != 1 || len(old.Scheduled)+len(old.Waiting) != 0 || len(old.Running) != 1 || len(old.Failed) != 1 {
			t.Fatalf("QueueJobIDs(q) = %+v, want its one new queued job, one running, one failed", old)
		}
		fresh, failed := old.Queued[0], old.Failed[0]
		if n, err := h.s.QueueSize(h.ctx, "q"); err != nil || n != 1 {
			t.Errorf("QueueSize(q) = %d, %v, want 1", n, err)
		}
		info := h.info()
		if got := info.Queues["q"]; got != (ocypod.QueueCounts{Queued: 1, Running: 1, Failed: 1}) {
			t.Errorf("Info()[q] = %+v", got)
		}
		if got, ok := info.Queues["gone"]; ok {
			t.Errorf("Info() lists the deleted queue gone with %+v", got)
		}
		if got := info.Queues["keep"]; got != (ocypod.QueueCounts{Queued: 1, Running: 1, Failed: 1, Scheduled: 1}) {
			t.Errorf("Info()[keep] = %+v", got)
		}
		page, err := h.s.ListJobs(h.ctx, ocypod.ListRequest{Status: ocypod.StatusQueued})
		if err != nil || len(page.Jobs) != 2 {
			t.Errorf("ListJobs(status queued) = %d jobs, %v, want q's and keep's", len(page.Jobs), err)
		}
		if tagged, err := h.s.TagJobIDs(h.ctx, "t"); err != nil || !slices.Equal(tagged, []uint64{fresh}) {
			t.Errorf("TagJobIDs(t) = %v, %v, want [%d]", tagged, err, fresh)
		}
		h.checkInvariants() // the records are counted now
		c, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "k", OnConflict: ocypod.OnConflictError})
		if err != nil || c.Existing {
			t.Fatalf("CreateJob(q, key k) = %+v, %v, want a new job", c, err)
		}
		keyed := c.ID
		if c, err := h.s.CreateJob(h.ctx, "keep", ocypod.JobSpec{Key: "k"}); err != nil || !c.Existing {
			t.Errorf("CreateJob(keep, key k) = %+v, %v, want keep's pending job", c, err)
		}

		// Retries: q's job of the deleted queue ends, keep's is requeued.
		kept := h.queueIDs("keep").Failed
		h.clock.Advance(time.Minute)
		h.sweepRetries()
		if j := h.job(failed); !j.Ended() {
			t.Errorf("retry of q's job %d of the deleted queue: %s, want ended", failed, j.Status)
		}
		for _, id := range kept {
			h.wantStatus(id, ocypod.StatusQueued)
		}
		if got := h.takeIDs("q", 100); !slices.Equal(got, []uint64{fresh, keyed}) {
			t.Errorf("Take(q) = %v, want [%d %d]", got, fresh, keyed)
		}
		if got := h.takeIDs("keep", 100); len(got) != 3 {
			t.Errorf("Take(keep) = %v, want its keyed, retried and scheduled jobs", got)
		}
		h.finishDrops()
		if got := h.info().Queues["q"]; got != (ocypod.QueueCounts{Running: 3, Failed: 1}) {
			t.Errorf("Info()[q] after the drops = %+v", got)
		}
	}},
}

// oldPending reports whether the job of metadata m, pending in queue q of
// partition p, belongs to a deleted generation of q still being dropped.
func (h *harness) oldPending(p int, q string, m map[string]any) bool {
	text, err := h.rdb.HGet(h.ctx, h.lay.Key(p, "drop"), q).Result()
	if err != nil {
		return false
	}
	var d struct {
		G float64 `json:"g"`
	}
	if json.Unmarshal([]byte(text), &d) != nil {
		return false
	}
	g, _ := m["G"].(float64)
	return g <= d.G
}

// legacyEntry is one key of testdata/gen0.json (see TestWriteLegacyFixture
// in legacy_fixture_gen_test.go): partition, name within it, type, value.
type legacyEntry struct {
	P     int             `json:"p"`
	Name  string          `json:"name"`
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// loadLegacy writes testdata/gen0.json's namespace of h.P partitions into
// h's namespace and upgrades it to this version's layout; false when the
// fixture has none of that many partitions.
func (h *harness) loadLegacy() bool {
	h.t.Helper()
	if !h.loadLegacyV2() {
		return false
	}
	if info, err := h.s.Open(h.ctx); err != nil || !info.Upgrade || info.Layout != 2 {
		h.t.Fatalf("Open(gen0.json) = %+v, %v, want an upgrade from version 2", info, err)
	}
	if done, err := h.s.Upgrade(h.ctx, 0); err != nil || !done {
		h.t.Fatalf("Upgrade(gen0.json) = %v, %v", done, err)
	}
	return true
}

// loadLegacyV2 writes testdata/gen0.json's namespace of h.P partitions
// into h's namespace as layout version 2 (0.3.0's: its queued jobs have no
// by-id idx member); false when the fixture has none of that many
// partitions.
func (h *harness) loadLegacyV2() bool {
	h.t.Helper()
	b, err := os.ReadFile("testdata/gen0.json")
	if err != nil {
		h.t.Fatal(err)
	}
	var all map[string][]legacyEntry
	if err := json.Unmarshal(b, &all); err != nil {
		h.t.Fatal(err)
	}
	entries, ok := all[strconv.Itoa(h.P)]
	if !ok {
		return false
	}
	h.writeEntries(entries)
	h.do("HSET", "{"+h.ns+"}:meta", "version", "2", "partitions", h.P)
	return true
}

// TestDeletedQueueRaceWithTakers: four workers take from a queue of 5,000
// jobs while it is deleted and created again; no take that starts after
// the PUT returned gets a job of the deleted queue, and every new job is
// taken once.
func TestDeletedQueueRaceWithTakers(t *testing.T) {
	t.Parallel()
	for _, P := range []int{1, 4} {
		t.Run(strconv.Itoa(P), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, redistest.Shared(t).Client(), P, redisstore.Options{})
			h.putQueue("q", settings(60, 0, 60, 0))
			if P > 1 {
				if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Shards: u64(uint64(P))}); err != nil {
					t.Fatal(err)
				}
			}
			old := map[uint64]bool{}
			for range 5 {
				cs, err := h.s.CreateJobs(h.ctx, "q", make([]ocypod.JobSpec, ocypod.MaxBatch))
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range cs {
					old[c.ID] = true
				}
			}
			var put atomic.Bool
			var fresh atomic.Int64 // jobs taken that are not of the deleted queue
			stop, allFresh := make(chan struct{}), make(chan struct{})
			var once sync.Once
			const newJobs = 50
			type taken struct {
				id    uint64
				after bool // the take started after the PUT returned
			}
			results := make(chan []taken, 4)
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					var mine []taken
					defer func() { results <- mine }()
					for {
						select {
						case <-stop:
							return
						default:
						}
						after := put.Load()
						jobs, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"q"}, Count: 5})
						if err != nil {
							if ocypod.ErrorKind(err) == ocypod.KindNotFound {
								continue // between the DELETE and the PUT
							}
							t.Error(err)
							return
						}
						for _, j := range jobs {
							mine = append(mine, taken{j.ID, after})
							if !old[j.ID] && fresh.Add(1) == newJobs {
								once.Do(func() { close(allFresh) })
							}
						}
					}
				})
			}
			if err := h.s.DeleteQueue(h.ctx, "q"); err != nil {
				t.Fatal(err)
			}
			h.putQueue("q", settings(60, 0, 60, 0))
			if P > 1 {
				if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Shards: u64(uint64(P))}); err != nil {
					t.Fatal(err)
				}
			}
			put.Store(true)
			cs, err := h.s.CreateJobs(h.ctx, "q", make([]ocypod.JobSpec, newJobs))
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-allFresh:
			case <-time.After(30 * time.Second):
				t.Error("the new jobs were not all taken within 30s")
			}
			close(stop)
			wg.Wait()
			close(results)
			seen := map[uint64]int{}
			for l := range results {
				for _, tk := range l {
					seen[tk.id]++
					if tk.after && old[tk.id] {
						t.Errorf("a take started after the PUT got job %d of the deleted queue", tk.id)
					}
				}
			}
			for _, c := range cs {
				if seen[c.ID] != 1 {
					t.Errorf("new job %d taken %d times", c.ID, seen[c.ID])
				}
			}
			h.finishDrops()
		})
	}
}

// TestStaleShardsAfterQueueCreatedAgain: a process that knows a queue as
// sharded over four partitions takes from it after another process
// deleted it and created it again unsharded: the take finds the new job
// instead of answering that the queue does not exist (only the queue's
// home says that).
func TestStaleShardsAfterQueueCreatedAgain(t *testing.T) {
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
	a, b := open(), open()
	for i := range 8 {
		if _, err := a.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
			t.Fatal(err)
		}
		if err := a.PatchQueue(ctx, "q", ocypod.QueuePatch{Shards: u64(4)}); err != nil {
			t.Fatal(err)
		}
		// b learns the four shards from a take's reply.
		if jobs, err := b.Take(ctx, ocypod.TakeRequest{Queues: []string{"q"}}); err != nil || len(jobs) != 0 {
			t.Fatalf("round %d: take from the empty sharded queue = %v, %v", i, jobs, err)
		}
		if err := a.DeleteQueue(ctx, "q"); err != nil {
			t.Fatal(err)
		}
		if _, err := a.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
			t.Fatal(err)
		}
		c, err := a.CreateJob(ctx, "q", ocypod.JobSpec{})
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := b.Take(ctx, ocypod.TakeRequest{Queues: []string{"q"}})
		if err != nil || len(jobs) != 1 || jobs[0].ID != c.ID {
			t.Fatalf("round %d: take by the process that knew q sharded = %+v, %v, want job %d", i, jobs, err, c.ID)
		}
		if err := a.DeleteQueue(ctx, "q"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDropDoneWhenNothingOldIsLeft: once takes have dropped the last
// pending job of a deleted queue, the next sweep ends its drop record at
// once, without walking the jobs of the queue created again.
func TestDropDoneWhenNothingOldIsLeft(t *testing.T) {
	t.Parallel()
	h := newHarness(t, redistest.Shared(t).Client(), 1, redisstore.Options{})
	h.putQueue("q", settings(60, 0, 60, 0))
	if _, err := h.s.CreateJobs(h.ctx, "q", make([]ocypod.JobSpec, 250)); err != nil {
		t.Fatal(err)
	}
	if err := h.s.DeleteQueue(h.ctx, "q"); err != nil {
		t.Fatal(err)
	}
	h.putQueue("q", settings(60, 0, 60, 0))
	cs, err := h.s.CreateJobs(h.ctx, "q", make([]ocypod.JobSpec, 1000))
	if err != nil {
		t.Fatal(err)
	}
	if got := h.takeIDs("q", 1); !slices.Equal(got, []uint64{cs[0].ID}) {
		t.Fatalf("Take = %v, want the new queue's first job %d", got, cs[0].ID)
	}
	if r := h.sweepExpiry(); r.More {
		t.Errorf("SweepExpiry after the takes dropped every old job = %+v, want nothing more to drop", r)
	}
	if n := h.rdb.HLen(h.ctx, h.lay.Key(0, "drop")).Val(); n != 0 {
		t.Errorf("%d drop records left", n)
	}
}

// writeEntries writes dumped keys (legacyEntry: partition, name within it,
// type, value; partition -1 for the namespace's own keys) into h's
// namespace.
func (h *harness) writeEntries(entries []legacyEntry) {
	h.t.Helper()
	for _, e := range entries {
		key := "{" + h.ns + "}:" + e.Name
		if e.P >= 0 {
			key = h.lay.Key(e.P, e.Name)
		}
		switch e.Type {
		case "string":
			var v string
			_ = json.Unmarshal(e.Value, &v)
			h.do("SET", key, v)
		case "hash":
			var v map[string]string
			_ = json.Unmarshal(e.Value, &v)
			for f, x := range v {
				h.do("HSET", key, f, x)
			}
		case "zset":
			var v [][2]string
			_ = json.Unmarshal(e.Value, &v)
			for _, z := range v {
				h.do("ZADD", key, z[1], z[0])
			}
		case "list":
			var v []string
			_ = json.Unmarshal(e.Value, &v)
			for _, x := range v {
				h.do("RPUSH", key, x)
			}
		default:
			h.t.Fatalf("fixture: key %s of type %s", e.Name, e.Type)
		}
	}
}
