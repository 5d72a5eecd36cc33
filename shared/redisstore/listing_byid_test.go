package redisstore_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

var byIDListingCases = []conformanceCase{
	{name: "a listing without filters pages by id across every status, also sharded", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 600, 0))
		h.patchShards("q", 4)
		other := h.queueApart("o", "q")
		h.putQueue(other, settings(60, 0, 600, 0))
		var ids []uint64
		for i := range 20 {
			// Priorities make the take order differ from the ids'.
			ids = append(ids, h.create("q", ocypod.JobSpec{Priority: i64(int64(i % 3))}))
		}
		later := t0.Add(time.Hour)
		ids = append(ids, h.create("q", ocypod.JobSpec{RunAt: &later})) // scheduled
		var taken []uint64
		for range 6 {
			taken = append(taken, h.takeIDs("q", 1)...)
		}
		h.complete(taken[0])
		h.complete(taken[1])
		h.setStatus(taken[2], ocypod.StatusFailed)
		h.setStatus(taken[3], ocypod.StatusFailed)
		h.setStatus(taken[3], ocypod.StatusQueued) // queued again, at the back of the line
		for _, id := range ids {
			if !slices.Contains(taken, id) {
				h.setStatus(id, ocypod.StatusCancelled)
				break
			}
		}
		slices.Sort(ids)
		if got := h.listAll(ocypod.ListRequest{Queue: "q", Limit: 3}); !slices.Equal(got, ids) {
			t.Fatalf("q without status in pages of 3 = %v, want by id %v", got, ids)
		}
		if got := h.listAll(ocypod.ListRequest{Queue: "q", Limit: 1000}); !slices.Equal(got, ids) {
			t.Fatalf("q without status in one page = %v, want by id %v", got, ids)
		}

		// Jobs that change status between pages keep their place.
		page, err := h.s.ListJobs(h.ctx, ocypod.ListRequest{Queue: "q", Limit: 5})
		if err != nil || len(page.Jobs) != 5 || page.NextCursor == "" {
			t.Fatalf("first page = %+v, %v", page, err)
		}
		for range 3 {
			for _, id := range h.takeIDs("q", 1) {
				h.complete(id)
			}
		}
		late := h.create("q", ocypod.JobSpec{})
		rest := h.listAll(ocypod.ListRequest{Queue: "q", Limit: 4, Cursor: page.NextCursor})
		// (A job created meanwhile may or may not come: with partitions, its
		// id need not be above those already listed.)
		if got := slices.DeleteFunc(slices.Clone(rest), func(id uint64) bool { return id == late }); !slices.Equal(got, ids[5:]) {
			t.Fatalf("pages after changes = %v, want %v (and perhaps %d)", rest, ids[5:], late)
		}
		ids = append(ids, late)
		slices.Sort(ids)

		// Every queue: queue by queue (by name), each by id.
		var others []uint64
		for range 3 {
			others = append(others, h.create(other, ocypod.JobSpec{}))
		}
		h.complete(h.takeIDs(other, 1)[0])
		want := append(slices.Clone(others), ids...) // other < "q"
		if got := h.listAll(ocypod.ListRequest{Limit: 4}); !slices.Equal(got, want) {
			t.Fatalf("every queue in pages of 4 = %v, want %v", got, want)
		}
		// A cursor of one listing is refused by another.
		page, _ = h.s.ListJobs(h.ctx, ocypod.ListRequest{Queue: "q", Limit: 2})
		_, err = h.s.ListJobs(h.ctx, ocypod.ListRequest{Limit: 2, Cursor: page.NextCursor})
		wantKind(t, "ListJobs(another listing's cursor)", err, ocypod.KindInvalid, "")
	}},
	{name: "a namespace of layout version 2 (0.3.0's: no by-id members) is upgraded to version 3 and on, also after an upgrade killed half-way", run: func(t *testing.T, h *harness) {
		if !h.loadLegacyV2() {
			t.Fatalf("testdata/gen0.json has no namespace of %d partitions", h.P)
		}
		meta := "{" + h.ns + "}:meta"
		// What the builds between 0.3.0 and this layout may have left.
		h.do("HSET", meta, "listing", "by_status")
		h.do("HSET", h.lay.Key(0, "ctr"), "bym", "q ")
		queued := h.byIDMembers()
		if queued.want == 0 || queued.have != 0 {
			t.Fatalf("gen0.json: %d queued jobs, %d by-id members; want some, none", queued.want, queued.have)
		}
		info, err := h.s.Open(h.ctx)
		if err != nil || !info.Upgrade || info.Layout != 2 || info.Upgrading {
			t.Fatalf("Open(version 2) = %+v, %v, want an upgrade from version 2, not under way", info, err)
		}
		if ok, err := h.s.Servable(h.ctx); ok || err != nil {
			t.Fatalf("Servable(version 2) = %v, %v, want false", ok, err)
		}

		// Stopped by its budget after one batch of 10, then killed after
		// 3 more: some members added, the lock held.
		redisstore.SetUpgradeBatch(h.s, 10)
		redisstore.SetUpgradeLease(h.s, time.Minute)
		if done, err := h.s.Upgrade(h.ctx, time.Nanosecond); done || err != nil {
			t.Fatalf("Upgrade(budget spent) = %v, %v, want not done", done, err)
		}
		if got := h.byIDMembers(); got.have != 10 {
			t.Fatalf("after the upgrade stopped by its budget: %d by-id members, want 10", got.have)
		}
		if err := redisstore.KillUpgrade(h.ctx, h.s, 3); err != nil {
			t.Fatal(err)
		}
		if got := h.byIDMembers(); got.have != 40 || got.want != queued.want {
			t.Fatalf("after the killed upgrade: %d by-id members of %d queued jobs, want 40", got.have, got.want)
		}
		if v := h.rdb.HGet(h.ctx, meta, "version").Val(); v != "2" {
			t.Fatalf("layout version after the killed upgrade = %q, want 2", v)
		}
		info, err = h.s.Open(h.ctx)
		if err != nil || !info.Upgrade || info.Layout != 2 || !info.Upgrading {
			t.Fatalf("Open after the killed upgrade = %+v, %v, want an upgrade from version 2, under way", info, err)
		}

		// Another process, once the dead one's lease lapsed (here: its
		// lock deleted), goes on from where it stopped.
		h.do("DEL", redisstore.UpgradeLockKey(h.ns))
		s, err := redisstore.New(h.rdb, redisstore.Options{Namespace: h.ns, Partitions: h.P, Now: h.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		redisstore.SetUpgradeBatch(s, 10)
		batches := 0
		redisstore.OnUpgradeBatch(s, func() { batches++ })
		if done, err := s.Upgrade(h.ctx, 0); err != nil || !done {
			t.Fatalf("Upgrade after the kill = %v, %v, want done", done, err)
		}
		// Per partition, the batches left (the last one may find the rest
		// done): fewer than from the start; then one per partition of the
		// next step (counting its few queues).
		if from := (queued.want + 9) / 10; batches > from+h.P-3+h.P {
			t.Errorf("the upgrade after the kill ran %d batches: it started again rather than from where it stopped", batches)
		}
		if got := h.rdb.HGetAll(h.ctx, meta).Val(); got["version"] != strconv.Itoa(redisstore.LayoutVersion) || got["listing"] != "" {
			t.Errorf("layout record after the upgrade = %v, want version %d, no listing mode", got, redisstore.LayoutVersion)
		}
		for p := range h.P {
			for _, f := range []string{"v3m", "v3d", "bym", "byd"} {
				if h.rdb.HExists(h.ctx, h.lay.Key(p, "ctr"), f).Val() {
					t.Errorf("partition %d: ctr field %s left after the upgrade", p, f)
				}
			}
		}
		if got := h.byIDMembers(); got.have != got.want || got.want != queued.want {
			t.Fatalf("after the upgrade: %d by-id members of %d queued jobs", got.have, got.want)
		}
		if info, err := s.Open(h.ctx); err != nil || info.Upgrade {
			t.Fatalf("Open after the upgrade = %+v, %v", info, err)
		}
		if done, err := s.Upgrade(h.ctx, 0); err != nil || !done {
			t.Fatalf("Upgrade again = %v, %v, want done at once", done, err)
		}

		// Listings without filters go by id across statuses, each job once.
		ids := h.queueIDs("keep")
		var want []uint64
		for _, l := range [][]uint64{ids.Queued, ids.Scheduled, ids.Waiting, ids.Running, ids.Failed, ids.TimedOut, ids.Completed, ids.Cancelled} {
			want = append(want, l...)
		}
		slices.Sort(want)
		if got := h.listAll(ocypod.ListRequest{Queue: "keep", Limit: 1}); !slices.Equal(got, want) {
			t.Errorf("keep without filters, pages of 1 = %v, want by id %v", got, want)
		}
		h.listAll(ocypod.ListRequest{Limit: 7}) // (fails on a job listed twice)
		// (The invariant check at the end wants every by-id member.)
	}},
	{name: "a new namespace records the current layout version, without a listing mode", run: func(t *testing.T, h *harness) {
		info, err := h.s.Open(h.ctx)
		if err != nil || !info.Fresh {
			t.Fatalf("Open = %+v, %v, want a fresh namespace", info, err)
		}
		if got := h.rdb.HGetAll(h.ctx, "{"+h.ns+"}:meta").Val(); got["version"] != strconv.Itoa(redisstore.LayoutVersion) || got["listing"] != "" {
			t.Fatalf("layout record = %v, want version %d, no listing mode", got, redisstore.LayoutVersion)
		}
	}},
}

// byIDMembers counts the queued jobs of h's namespace (want) and the
// by-id idx members ("<queue> Q <lp(id)>") of those jobs it holds (have).
func (h *harness) byIDMembers() (n struct{ want, have int }) {
	h.t.Helper()
	for p := range h.P {
		for _, m := range h.rdb.ZRangeByLex(h.ctx, h.lay.Key(p, "idx"), &redis.ZRangeBy{Min: "-", Max: "+"}).Val() {
			f := strings.Fields(m)
			if len(f) >= 3 && f[1] == "q" {
				n.want++
				id, _ := strconv.ParseUint(f[len(f)-1], 10, 64)
				if h.rdb.ZScore(h.ctx, h.lay.Key(p, "idx"), f[0]+" Q "+lp(id)).Err() == nil {
					n.have++
				}
			}
		}
	}
	return n
}
