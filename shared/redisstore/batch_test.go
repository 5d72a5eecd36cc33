package redisstore_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/bench"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

var batchCases = []conformanceCase{
	{name: "batch update applies each item on its own", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 60, 3600, 0))
		h.putQueue("next", settings(60, 60, 3600, 0))
		a, b, c, d := h.create("q", ocypod.JobSpec{}), h.create("q", ocypod.JobSpec{}), h.create("q", ocypod.JobSpec{}), h.create("q", ocypod.JobSpec{})
		for _, id := range []uint64{a, b, c} {
			h.take("q", id)
		}
		done, failed := ocypod.StatusCompleted, ocypod.StatusFailed
		missing := a + uint64(100*h.P)
		items := []ocypod.BatchUpdate{
			{ID: a, Update: ocypod.JobUpdate{Status: &done, Output: json.RawMessage(`{"ok":1}`), Attempt: u64(1)}},
			{ID: b, Update: ocypod.JobUpdate{Status: &failed, Attempt: u64(2)}},
			{ID: missing, Update: ocypod.JobUpdate{Status: &done}},
			{ID: d, Update: ocypod.JobUpdate{Status: &done}},
			{ID: c, Update: ocypod.JobUpdate{Status: &done, Next: &ocypod.NextJobSpec{Queue: "next"}}},
			{ID: b, Update: ocypod.JobUpdate{Status: &done, Next: &ocypod.NextJobSpec{Queue: "nowhere"}}},
		}
		out, jobs, err := h.s.UpdateJobs(h.ctx, items, nil)
		if err != nil || jobs != nil || len(out) != len(items) {
			t.Fatalf("UpdateJobs = %v, %v, %v", out, jobs, err)
		}
		if out[0].Err != nil || out[0].Result.NextID != 0 {
			t.Fatalf("item 0 = %+v", out[0])
		}
		wantKind(t, "item 1", out[1].Err, ocypod.KindConflict, "Job "+strconv.FormatUint(b, 10)+" attempt 2 is not current")
		wantKind(t, "item 2", out[2].Err, ocypod.KindNotFound, "Job with ID "+strconv.FormatUint(missing, 10)+" does not exist")
		wantKind(t, "item 3", out[3].Err, ocypod.KindConflict, "Cannot change status from queued to completed")
		if out[4].Err != nil || out[4].Result.NextID == 0 {
			t.Fatalf("item 4 = %+v, want a next id", out[4])
		}
		wantKind(t, "item 5", out[5].Err, ocypod.KindNotFound, "Queue 'nowhere' does not exist")
		h.wantStatus(a, ocypod.StatusCompleted)
		h.wantStatus(b, ocypod.StatusRunning)
		h.wantStatus(c, ocypod.StatusCompleted)
		h.wantStatus(d, ocypod.StatusQueued)
		h.wantStatus(out[4].Result.NextID, ocypod.StatusQueued)
		if got, err := h.s.JobOutput(h.ctx, a); err != nil || string(got) != `{"ok":1}` {
			t.Fatalf("output of %d = %s, %v", a, got, err)
		}
	}},
	{name: "batch update with take takes after applying", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 60, 3600, 0))
		a := h.create("q", ocypod.JobSpec{})
		h.take("q", a)
		b, c := h.create("q", ocypod.JobSpec{}), h.create("q", ocypod.JobSpec{})
		done := ocypod.StatusCompleted
		out, jobs, err := h.s.UpdateJobs(h.ctx, []ocypod.BatchUpdate{{ID: a, Update: ocypod.JobUpdate{Status: &done}}},
			&ocypod.TakeRequest{Queues: []string{"q"}, Count: 5, Worker: "w"})
		if err != nil || len(out) != 1 || out[0].Err != nil {
			t.Fatalf("UpdateJobs = %+v, %v", out, err)
		}
		if len(jobs) != 2 || jobs[0].ID != b || jobs[1].ID != c || jobs[0].Attempt != 1 {
			t.Fatalf("taken = %+v, want %d then %d", jobs, b, c)
		}
		h.wantStatus(a, ocypod.StatusCompleted)
		h.wantStatus(b, ocypod.StatusRunning)
		out, jobs, err = h.s.UpdateJobs(h.ctx, []ocypod.BatchUpdate{{ID: b, Update: ocypod.JobUpdate{Attempt: u64(2)}}},
			&ocypod.TakeRequest{Queues: []string{"q"}})
		if err != nil || len(jobs) != 0 {
			t.Fatalf("UpdateJobs on an empty queue = %+v, %+v, %v", out, jobs, err)
		}
		wantKind(t, "stale item", out[0].Err, ocypod.KindConflict, "Job "+strconv.FormatUint(b, 10)+" attempt 2 is not current")
	}},
	{name: "batch update with a missing take queue applies nothing", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 60, 3600, 0))
		a := h.create("q", ocypod.JobSpec{})
		h.take("q", a)
		done := ocypod.StatusCompleted
		before := h.snapshot()
		_, _, err := h.s.UpdateJobs(h.ctx, []ocypod.BatchUpdate{{ID: a, Update: ocypod.JobUpdate{Status: &done}}},
			&ocypod.TakeRequest{Queues: []string{"gone"}})
		wantKind(t, "UpdateJobs", err, ocypod.KindNotFound, "Queue 'gone' does not exist")
		h.wantUnchanged("a batch with a missing take queue", before)
	}},
	{name: "batch update changes dependencies as UpdateJob does", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 60, 3600, 0))
		a, b := h.create("q", ocypod.JobSpec{}), h.create("q", ocypod.JobSpec{})
		out, _, err := h.s.UpdateJobs(h.ctx, []ocypod.BatchUpdate{
			{ID: b, Update: ocypod.JobUpdate{DependsOn: []uint64{a}, DependsOnSet: true}},
			{ID: a, Update: ocypod.JobUpdate{DependsOn: []uint64{b}, DependsOnSet: true}},
			{ID: a, Update: ocypod.JobUpdate{Priority: new(int64(3))}},
		}, nil)
		if err != nil || len(out) != 3 || out[0].Err != nil || out[2].Err != nil {
			t.Fatalf("UpdateJobs = %+v, %v", out, err)
		}
		wantKind(t, "a cycle", out[1].Err, ocypod.KindInvalid, "")
		h.wantStatus(a, ocypod.StatusQueued)
		h.wantStatus(b, ocypod.StatusWaiting)
	}},
	{name: "batch update wakes a waiting take", run: func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Concurrency: u64(1)}); err != nil {
			t.Fatal(err)
		}
		first := h.create("q", ocypod.JobSpec{})
		second := h.create("q", ocypod.JobSpec{})
		h.take("q", first)
		p := parkTake(t, h.s, ocypod.TakeRequest{Queues: []string{"q"}, Wait: longPollWait})
		since := time.Now()
		done := ocypod.StatusCompleted
		out, _, err := h.s.UpdateJobs(h.ctx, []ocypod.BatchUpdate{{ID: first, Update: ocypod.JobUpdate{Status: &done}}}, nil)
		if err != nil || out[0].Err != nil {
			t.Fatalf("UpdateJobs = %+v, %v", out, err)
		}
		p.answer(t, "slot freed by a batch", since, second)
	}},
	{name: "batch heartbeat answers each item", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 60, 3600, 0))
		a, b := h.create("q", ocypod.JobSpec{}), h.create("q", ocypod.JobSpec{})
		h.take("q", a)
		missing := a + uint64(100*h.P)
		out, err := h.s.HeartbeatJobs(h.ctx, []ocypod.BatchUpdate{
			{ID: a, Update: ocypod.JobUpdate{Attempt: u64(1)}},
			{ID: a, Update: ocypod.JobUpdate{Attempt: u64(3)}},
			{ID: b},
			{ID: missing},
		})
		if err != nil || len(out) != 4 || out[0].Err != nil {
			t.Fatalf("HeartbeatJobs = %+v, %v", out, err)
		}
		wantKind(t, "stale", out[1].Err, ocypod.KindConflict, "Job "+strconv.FormatUint(a, 10)+" attempt 3 is not current")
		wantKind(t, "queued", out[2].Err, ocypod.KindConflict, "Cannot heartbeat job "+strconv.FormatUint(b, 10)+", job is not running")
		wantKind(t, "missing", out[3].Err, ocypod.KindNotFound, "Job with ID "+strconv.FormatUint(missing, 10)+" does not exist")
	}},
}

// TestBatchRoundTrips: a batch over jobs of every partition costs one
// pipelined round: one round trip on a single server, one per node touched
// on a cluster.
func TestBatchRoundTrips(t *testing.T) {
	t.Parallel()
	three := redistest.SharedCluster3(t)
	for _, tc := range []struct {
		name string
		opts redisstore.ClientOptions
	}{
		{"redis-P4", redisstore.ClientOptions{URL: redistest.Shared(t).URL()}},
		{"cluster3-P4", redisstore.ClientOptions{URL: three.URL(), ClusterMode: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rdb := mustClient(t, tc.opts)
			counter := &bench.Counter{}
			if cc, ok := rdb.(*redis.ClusterClient); ok {
				// Each node's client dials its own connections.
				cc.OnNewNode(func(c *redis.Client) { c.AddHook(counter) })
			} else {
				rdb.AddHook(counter)
			}
			ns := redistest.Namespace(t)
			s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Partitions: 4})
			if err != nil {
				t.Fatal(err)
			}
			lay := redisstore.LayoutOf(ns, 4)
			ctx := t.Context()
			// Queues of every partition, a few running jobs in each.
			homes := map[int]string{}
			for i := 0; len(homes) < 4; i++ {
				q := "q" + strconv.Itoa(i)
				if _, ok := homes[lay.Home(q)]; !ok {
					homes[lay.Home(q)] = q
				}
			}
			var ids []uint64
			for _, q := range homes {
				if _, err := s.PutQueue(ctx, q, settings(60, 60, 3600, 0)); err != nil {
					t.Fatal(err)
				}
				for range 3 {
					if _, err := s.CreateJob(ctx, q, ocypod.JobSpec{}); err != nil {
						t.Fatal(err)
					}
				}
				jobs, err := s.Take(ctx, ocypod.TakeRequest{Queues: []string{q}, Count: 3})
				if err != nil || len(jobs) != 3 {
					t.Fatalf("Take(%s) = %v, %v", q, jobs, err)
				}
				for _, j := range jobs {
					ids = append(ids, j.ID)
				}
			}
			nodes := map[int]bool{}
			parts := map[int]bool{}
			for _, id := range ids {
				p := lay.PartitionOf(id)
				parts[p] = true
				nodes[nodeOf(t, rdb, lay.Key(p, "j"))] = true
			}
			if len(parts) != 4 {
				t.Fatalf("jobs in %d partitions, want 4", len(parts))
			}
			trips := func(what string, f func() error) int64 {
				t.Helper()
				before := counter.Snapshot()
				if err := f(); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				d := counter.Snapshot().Sub(before)
				t.Logf("%s: %d round trips, %s", what, d.RoundTrips, d.CommandList())
				return d.RoundTrips
			}
			items := make([]ocypod.BatchUpdate, len(ids))
			for i, id := range ids {
				items[i] = ocypod.BatchUpdate{ID: id, Update: ocypod.JobUpdate{Attempt: u64(1)}}
			}
			beat := func() error {
				out, err := s.HeartbeatJobs(ctx, items)
				for i := range out {
					if out[i].Err != nil {
						return out[i].Err
					}
				}
				return err
			}
			trips("warm-up heartbeats", beat) // dials, loads the scripts
			if n := trips("heartbeats", beat); n != int64(len(nodes)) {
				t.Errorf("HeartbeatJobs of %d jobs in 4 partitions on %d nodes: %d round trips, want %d", len(ids), len(nodes), n, len(nodes))
			}
			done := ocypod.StatusCompleted
			for i := range items {
				items[i].Update.Status = &done
			}
			n := trips("completions", func() error {
				out, _, err := s.UpdateJobs(ctx, items, nil)
				for i := range out {
					if out[i].Err != nil {
						return out[i].Err
					}
				}
				return err
			})
			if n != int64(len(nodes)) {
				t.Errorf("UpdateJobs of %d jobs in 4 partitions on %d nodes: %d round trips, want %d", len(ids), len(nodes), n, len(nodes))
			}
			for _, id := range ids {
				if st, err := s.JobStatus(ctx, id); err != nil || st != ocypod.StatusCompleted {
					t.Fatalf("job %d = %s, %v", id, st, err)
				}
			}
		})
	}
}

// nodeOf names the node that holds key: its index in the shared
// three-node cluster, or -1 on a single server.
func nodeOf(t *testing.T, rdb redis.UniversalClient, key string) int {
	t.Helper()
	if _, ok := rdb.(*redis.ClusterClient); !ok {
		return -1
	}
	return redistest.SharedCluster3(t).NodeForKey(key)
}
