package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// The queued counts ("<queue> n" in q, indexes.lua's count_queued) and the
// statistics counted one increment per event (stats.lua). The invariant
// check after every conformance case also compares each count with its
// queued idx range (checkQueuedCounts).

var counterCases = []conformanceCase{
	{name: "queued counts stay exact through random operations", opts: redisstore.Options{InlineSweep: -1}, run: func(t *testing.T, h *harness) {
		for seed := range uint64(3) {
			randomCountOps(t, h, seed, 120)
		}
	}},
	{name: "the invariant check finds a queued count that is wrong or missing", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		for range 3 {
			h.create("q", ocypod.JobSpec{})
		}
		key := h.lay.Key(h.lay.Home("q"), "q")
		check := func(what string) {
			t.Helper()
			var got []string
			h.countsErrorf = func(format string, args ...any) { got = append(got, fmt.Sprintf(format, args...)) }
			h.checkInvariants()
			h.countsErrorf = nil
			if len(got) != 1 || !strings.Contains(got[0], "queued counts") {
				t.Errorf("the invariant check with %s reported %q, want the queued counts", what, got)
			}
		}
		// /info and the size read the count, not the index.
		h.do("HINCRBY", key, "q n", 1)
		if n, err := h.s.QueueSize(h.ctx, "q"); err != nil || n != 4 {
			t.Fatalf("QueueSize with a count one too high = %d, %v, want 4", n, err)
		}
		if got := h.info().Queues["q"].Queued; got != 4 {
			t.Fatalf("Info queued with a count one too high = %d, want 4", got)
		}
		check("a count one too high")
		h.do("HDEL", key, "q n")
		if n, err := h.s.QueueSize(h.ctx, "q"); err != nil || n != 0 {
			t.Fatalf("QueueSize without a count = %d, %v, want 0", n, err)
		}
		check("no count")
		// The count of a queue without queued jobs is absent, not 0.
		h.do("HSET", key, "q n", 3)
		h.takeIDs("q", 3)
		if got := h.rdb.HExists(h.ctx, key, "q n").Val(); got {
			t.Fatal("the count of a queue without queued jobs is still there")
		}
		h.do("HSET", key, "q n", 0)
		check("a count of 0")
		h.do("HDEL", key, "q n")
	}},
	{name: "statistics: each event counted once, the same before and after the fold", run: func(t *testing.T, h *harness) {
		h.putQueue("s", settings(60, 0, 3600, 1)) // one retry, no delay
		var ids []uint64
		for range 6 {
			ids = append(ids, h.create("s", ocypod.JobSpec{}))
		}
		created := h.clock.Now()
		if got := h.takeIDs("s", 5); !slices.Equal(got, ids[:5]) {
			t.Fatalf("took %v, want %v", got, ids[:5])
		}
		h.clock.Advance(2 * time.Second) // every attempt runs 2 s: bucket 2
		h.complete(ids[0])
		h.setStatus(ids[1], ocypod.StatusFailed)   // a retry pending
		h.setStatus(ids[2], ocypod.StatusTimedOut) // a retry pending
		h.setStatus(ids[3], ocypod.StatusCancelled)
		if _, err := h.s.RetryJob(h.ctx, ids[4], nil); err != nil { // failed (no total), then retried
			t.Fatal(err)
		}
		h.setStatus(ids[5], ocypod.StatusCancelled) // not running
		h.setStatus(ids[3], ocypod.StatusQueued)    // requeued: retried (no day count)
		h.clock.Advance(time.Minute)                // 10:01
		at := h.clock.Now()
		if r := h.sweepRetries(); len(r.Retried) != 2 {
			t.Fatalf("retries sweep = %+v, want ids %d and %d retried", r, ids[1], ids[2])
		}
		wantInfo := ocypod.Statistics{Created: 6, Completed: 1, Failed: 1, TimedOut: 1, Cancelled: 2, Retried: 4}
		var run [ocypod.HistogramBuckets]uint64
		run[2] = 5
		wantMinutes := map[string]map[int]uint64{"created": {58: 6}, "completed": {58: 1}, "failed": {58: 3}}
		check := func(when string) {
			t.Helper()
			if got := h.info().Statistics; got != wantInfo {
				t.Errorf("%s: Info statistics = %+v, want %+v", when, got, wantInfo)
			}
			st, err := h.s.QueueStats(h.ctx, "s", created)
			if err != nil {
				t.Fatal(err)
			}
			if st.Created != 6 || st.Completed != 1 || st.Failed != 3 || st.Retries != 3 || st.Wait.Count != 5 ||
				st.Wait.Histogram[0] != 5 || st.Run.Histogram != run {
				t.Errorf("%s: QueueStats = %+v", when, st)
			}
			m, err := h.s.QueueMinutes(h.ctx, "s", at)
			if err != nil {
				t.Fatal(err)
			}
			for name, got := range map[string][ocypod.MinuteCount]uint64{"created": m.Created, "completed": m.Completed, "failed": m.Failed} {
				for i, n := range got {
					if n != wantMinutes[name][i] {
						t.Errorf("%s: minutes %s = %v, want %v", when, name, got, wantMinutes[name])
						break
					}
				}
			}
			mt, err := h.s.QueueMetrics(h.ctx, []string{"s"})
			if got := mt["s"]; err != nil || got.Created != 6 || got.Completed != 1 || got.Failed != 2 || got.TimedOut != 1 {
				t.Errorf("%s: QueueMetrics = %+v, %v", when, mt, err)
			}
		}
		check("pending")
		if h.pendingStats() == 0 {
			t.Fatal("no statistics pending")
		}
		// Folded: the minutes before this one, then every one.
		h.sweepExpiry()
		check("folded up to 10:01")
		if err := redisstore.FoldStats(h.ctx, h.s, at.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if n := h.pendingStats(); n != 0 {
			t.Fatalf("%d statistics fields pending after every minute was folded", n)
		}
		check("folded")
		// A fold run again (by a second sweeper) finds nothing to do.
		if err := redisstore.FoldStats(h.ctx, h.s, at.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		check("folded twice")
		// The next day starts from zero, /info's totals go on.
		h.clock.Advance(24 * time.Hour)
		h.create("s", ocypod.JobSpec{})
		if st, err := h.s.QueueStats(h.ctx, "s", h.clock.Now()); err != nil || st.Created != 1 || st.Completed != 0 {
			t.Errorf("the next day's QueueStats = %+v, %v", st, err)
		}
		if got := h.info().Statistics.Created; got != 7 {
			t.Errorf("Info created = %d, want 7", got)
		}
	}},
}

// randomCountOps runs n random operations (seeded by seed) on queues of h's
// store: creates of every kind, takes, every change of status, deletes,
// in-place changes, queue deletes and re-creates, sweeps and the clock
// moving; after each it checks each queue's queued count against its idx
// range, and every few its size and /info's count against its listing.
func randomCountOps(t *testing.T, h *harness, seed uint64, n int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	queues := []string{"a", "b", "c"}
	h.putQueue("a", settings(5, 0, 30, 1))
	h.putQueue("b", settings(10, 0, 60, 2, 2))
	h.putQueue("c", settings(5, 0, 30, 0))
	if h.P > 1 {
		h.patchShards("b", h.P)
	}
	var ids []uint64
	var log []string
	ok := func(what string, err error) {
		t.Helper()
		log = append(log, what)
		switch {
		case err == nil:
		case ocypod.ErrorKind(err) == ocypod.KindNotFound, ocypod.ErrorKind(err) == ocypod.KindConflict,
			ocypod.ErrorKind(err) == ocypod.KindInvalid:
			log[len(log)-1] += fmt.Sprintf(" (%v)", err)
		default:
			t.Fatalf("seed %d: %s: %v\nafter %s", seed, what, err, strings.Join(log, "\n"))
		}
	}
	pick := func() uint64 {
		if len(ids) == 0 {
			return 1
		}
		return ids[rng.IntN(len(ids))]
	}
	spec := func() ocypod.JobSpec {
		var s ocypod.JobSpec
		switch rng.IntN(4) {
		case 0:
			s.Priority = i64([]int64{5, -3}[rng.IntN(2)])
		case 1:
			s.Delay = dur(uint64(rng.IntN(3)))
		}
		if rng.IntN(4) == 0 {
			s.Key = []string{"k1", "k2"}[rng.IntN(2)]
			s.OnConflict = []ocypod.OnConflict{ocypod.OnConflictKeep, ocypod.OnConflictUpdate, ocypod.OnConflictError}[rng.IntN(3)]
		}
		if rng.IntN(6) == 0 && len(ids) > 0 {
			s.DependsOn = []uint64{pick()}
		}
		return s
	}
	status := func(st ocypod.Status) *ocypod.Status { return &st }
	for i := range n {
		q := queues[rng.IntN(len(queues))]
		switch op := rng.IntN(17); op {
		case 0, 1:
			c, err := h.s.CreateJob(h.ctx, q, spec())
			ok(fmt.Sprintf("create in %s: %d", q, c.ID), err)
			if err == nil && !slices.Contains(ids, c.ID) {
				ids = append(ids, c.ID)
			}
		case 2:
			specs := make([]ocypod.JobSpec, 1+rng.IntN(4))
			for k := range specs {
				specs[k] = spec()
			}
			cs, err := h.s.CreateJobs(h.ctx, q, specs)
			ok(fmt.Sprintf("create %d in %s", len(specs), q), err)
			for _, c := range cs {
				if !slices.Contains(ids, c.ID) {
					ids = append(ids, c.ID)
				}
			}
		case 3, 4:
			_, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{q, queues[rng.IntN(len(queues))]}, Count: 1 + rng.IntN(3), Worker: "w"})
			ok("take from "+q, err)
		case 5:
			take := &ocypod.TakeRequest{Queues: []string{q}, Count: 1}
			id := pick()
			_, _, err := h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted)}, take)
			ok(fmt.Sprintf("complete %d and take from %s", id, q), err)
		case 6:
			id := pick()
			u := ocypod.JobUpdate{Status: status(ocypod.StatusFailed)}
			if rng.IntN(3) == 0 {
				u.Retry = no()
			}
			_, _, err := h.s.UpdateJob(h.ctx, id, u, nil)
			ok(fmt.Sprintf("fail %d", id), err)
		case 7:
			id := pick()
			_, _, err := h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Status: status(ocypod.StatusCancelled)}, nil)
			ok(fmt.Sprintf("cancel %d", id), err)
		case 8:
			id := pick()
			_, _, err := h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Status: status(ocypod.StatusQueued)}, nil)
			ok(fmt.Sprintf("requeue %d", id), err)
		case 9:
			id := pick()
			var at *time.Time
			if rng.IntN(3) == 0 {
				at = ptime(h.clock.Now().Add(2 * time.Second))
			}
			_, err := h.s.RetryJob(h.ctx, id, at)
			ok(fmt.Sprintf("retry %d", id), err)
		case 10:
			id := pick()
			ok(fmt.Sprintf("delete %d", id), h.s.DeleteJob(h.ctx, id))
		case 11:
			id := pick()
			u := ocypod.JobUpdate{Priority: i64(int64(rng.IntN(11) - 5))}
			switch rng.IntN(3) {
			case 0:
				u = ocypod.JobUpdate{Delay: dur(uint64(rng.IntN(3)))}
			case 1:
				u.DependsOn, u.DependsOnSet = []uint64{pick()}, true
				if rng.IntN(2) == 0 {
					u.DependsOn = nil
				}
			}
			_, _, err := h.s.UpdateJob(h.ctx, id, u, nil)
			ok(fmt.Sprintf("change %d in place", id), err)
		case 12:
			if _, err := h.s.GetQueue(h.ctx, "c"); err == nil {
				ok("delete queue c", h.s.DeleteQueue(h.ctx, "c"))
			} else {
				_, err := h.s.PutQueue(h.ctx, "c", settings(5, 0, 30, 0))
				ok("create queue c", err)
			}
		case 13:
			h.clock.Advance(time.Duration(rng.IntN(3000)) * time.Millisecond)
			log = append(log, "clock "+h.clock.Now().Format(time.StampMilli))
		case 14:
			for _, sw := range []func(context.Context) (redisstore.SweepResult, error){h.s.SweepTimeouts, h.s.SweepRetries, h.s.SweepExpiry} {
				_, err := sw(h.ctx)
				ok("sweep", err)
			}
		case 15:
			_, err := h.s.RetryFailures(h.ctx, "failed", 1+rng.IntN(3), "")
			ok("retry failure group", err)
		case 16:
			h.clock.Advance(6 * time.Second) // running jobs time out
			_, err := h.s.SweepTimeouts(h.ctx)
			ok("timeouts", err)
		}
		for p := range h.P {
			h.checkQueuedCounts(p)
		}
		if t.Failed() {
			t.Fatalf("seed %d, operation %d: after\n%s", seed, i, strings.Join(log, "\n"))
		}
		if i%10 != 9 {
			continue
		}
		info := h.info()
		for _, name := range queues {
			n, err := h.s.QueueSize(h.ctx, name)
			if ocypod.ErrorKind(err) == ocypod.KindNotFound {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			listed := len(h.queueIDs(name).Queued)
			if n != uint64(listed) || info.Queues[name].Queued != n {
				t.Fatalf("seed %d, operation %d: queue %s: size %d, /info %d, %d listed queued\nafter %s",
					seed, i, name, n, info.Queues[name].Queued, listed, strings.Join(log, "\n"))
			}
		}
	}
	// The statistics read the same, pending or folded.
	read := func() string {
		var b strings.Builder
		fmt.Fprintf(&b, "%+v\n", h.info().Statistics)
		m, err := h.s.QueueMetrics(h.ctx, queues)
		fmt.Fprintf(&b, "%v %v\n", m, err)
		for _, q := range queues {
			st, err := h.s.QueueStats(h.ctx, q, h.clock.Now())
			mn, err2 := h.s.QueueMinutes(h.ctx, q, h.clock.Now())
			fmt.Fprintf(&b, "%s: %+v %v %+v %v\n", q, st, err, mn, err2)
		}
		return b.String()
	}
	before := read()
	if err := redisstore.FoldStats(h.ctx, h.s, h.clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if after := read(); after != before {
		t.Fatalf("seed %d: the statistics changed when folded:\n%s\nthen\n%s", seed, before, after)
	}
}

// TestPlainLifecycleIncrements: a plain job's lifecycle (create, take,
// complete) costs its statistics one increment per event, and its queued
// count one when it is queued and one when it is taken: with the id
// counter's, 6 HINCRBY, and no EXPIRE once the day's hash has its fields.
func TestPlainLifecycleIncrements(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	h := newHarness(t, srv.Client(), 1, redisstore.Options{InlineSweep: -1})
	h.putQueue("q", settings(60, 0, 60, 0))
	lifecycle := func() {
		id := h.create("q", ocypod.JobSpec{})
		h.take("q", id)
		h.complete(id)
	}
	calls := func() map[string]int64 {
		text, err := srv.Client().Info(h.ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, line := range strings.Split(text, "\n") {
			name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
			if !ok {
				continue
			}
			n, _, _ := strings.Cut(rest, ",")
			out[strings.TrimPrefix(name, "cmdstat_")], _ = strconv.ParseInt(n, 10, 64)
		}
		return out
	}
	lifecycle() // the scripts loaded, the statistics' fields there
	before := calls()
	const n = 20
	for range n {
		lifecycle()
	}
	after := calls()
	if got := after["hincrby"] - before["hincrby"]; got != 6*n {
		t.Errorf("%d lifecycles ran %d HINCRBY, want %d", n, got, 6*n)
	}
	if got := after["expire"] - before["expire"]; got != 0 {
		t.Errorf("%d lifecycles ran %d EXPIRE, want none", n, got)
	}
}
