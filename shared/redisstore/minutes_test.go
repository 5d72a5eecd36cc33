package redisstore_test

import (
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// pendingStats is how many fields of pending statistics (stats.lua) h's
// partitions hold.
func (h *harness) pendingStats() int {
	n := 0
	for p := range h.P {
		n += int(h.rdb.HLen(h.ctx, h.lay.Key(p, "sp")).Val())
	}
	return n
}

var minuteCases = []conformanceCase{
	{name: "per-minute counts of the last hour, summed over a queue's shards", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(5, 0, 600, 0))
		h.patchShards("q", 4)
		for range 3 {
			h.create("q", ocypod.JobSpec{}) // 10:00
		}
		h.clock.Advance(time.Minute) // 10:01
		h.complete(h.takeIDs("q", 1)[0])
		at1001 := h.clock.Now()
		h.clock.Advance(59 * time.Minute) // 11:00, the next hour
		h.setStatus(h.takeIDs("q", 1)[0], ocypod.StatusFailed)
		h.create("q", ocypod.JobSpec{})
		h.takeIDs("q", 1)
		h.clock.Advance(7 * time.Second)
		if r := h.sweepTimeouts(); r.Jobs() == 0 {
			t.Fatalf("sweep timed out nothing: %+v", r)
		}

		at1100 := h.clock.Now()
		want := func(name string, got [ocypod.MinuteCount]uint64, at map[int]uint64) {
			t.Helper()
			for i, n := range got {
				if n != at[i] {
					t.Errorf("%s[%d] = %d, want %d (all: %v)", name, i, n, at[i], got)
					return
				}
			}
		}
		check := func(when string) {
			t.Helper()
			m, err := h.s.QueueMinutes(h.ctx, "q", at1001)
			if err != nil || !m.Start.Equal(time.Date(2024, 3, 1, 9, 2, 0, 0, time.UTC)) {
				t.Fatalf("%s: QueueMinutes(10:01) = %+v, %v", when, m, err)
			}
			want(when+": created at 10:01", m.Created, map[int]uint64{58: 3})
			want(when+": completed at 10:01", m.Completed, map[int]uint64{59: 1})
			want(when+": failed at 10:01", m.Failed, nil)

			// An hour later the creations of 10:00 have left the window; the
			// failure and the timeout of 11:00 count as failed.
			m, err = h.s.QueueMinutes(h.ctx, "q", at1100)
			if err != nil || !m.Start.Equal(time.Date(2024, 3, 1, 10, 1, 0, 0, time.UTC)) {
				t.Fatalf("%s: QueueMinutes(11:00) = %+v, %v", when, m, err)
			}
			want(when+": created", m.Created, map[int]uint64{59: 1})
			want(when+": completed", m.Completed, map[int]uint64{0: 1})
			want(when+": failed", m.Failed, map[int]uint64{59: 2})

			// The day's failed count holds the timeout too.
			if st, err := h.s.QueueStats(h.ctx, "q", t0); err != nil || st.Created != 4 || st.Completed != 1 || st.Failed != 2 {
				t.Fatalf("%s: QueueStats = %+v, %v", when, st, err)
			}
		}
		// Counted as pending, then folded by a sweep into the hours'
		// hashes (once 11:00 is over): the same answers.
		check("pending")
		if n := h.pendingStats(); n == 0 {
			t.Fatal("no statistics pending")
		}
		h.clock.Advance(time.Minute)
		h.sweepExpiry()
		if n := h.pendingStats(); n != 0 {
			t.Fatalf("%d statistics fields pending after a sweep in the next minute", n)
		}
		check("folded")

		// The hours' hashes expire by themselves.
		seen := 0
		for p := range h.P {
			for _, hour := range []string{"2024-03-01T10", "2024-03-01T11"} {
				key := h.lay.Key(p, "sm:"+hour)
				ttl, err := h.rdb.TTL(h.ctx, key).Result()
				if err != nil {
					t.Fatal(err)
				}
				if ttl == -2 {
					continue // nothing of this hour in p
				}
				seen++
				if ttl <= 0 || ttl > 2*time.Hour {
					t.Errorf("TTL(%s) = %v, want up to 2h", key, ttl)
				}
			}
		}
		if seen < 2 {
			t.Errorf("found %d per-minute hashes, want at least 2", seen)
		}

		_, err := h.s.QueueMinutes(h.ctx, "nope", h.clock.Now())
		wantKind(t, "QueueMinutes(missing queue)", err, ocypod.KindNotFound, "")
		_, err = h.s.QueueMinutes(h.ctx, "bad name", h.clock.Now())
		wantKind(t, "QueueMinutes(bad name)", err, ocypod.KindInvalid, "")
	}}, {name: "queue metrics: today's counts and the job queued longest, over priority classes and shards", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(5, 0, 600, 0))
		h.patchShards("q", 4)
		h.putQueue("idle", settings(5, 0, 600, 0))
		a := h.create("q", ocypod.JobSpec{})
		h.clock.Advance(10 * time.Second)
		b := h.create("q", ocypod.JobSpec{Priority: i64(5)})
		h.clock.Advance(10 * time.Second)
		c := h.create("q", ocypod.JobSpec{Priority: i64(-3)})
		h.clock.Advance(time.Second)
		// b is first in take order; a has waited longest.
		got, err := h.s.QueueMetrics(h.ctx, []string{"q", "idle", "nope"})
		if err != nil || len(got) != 1 || got["q"] != (ocypod.QueueMetrics{Created: 3, OldestQueued: 21 * time.Second}) {
			t.Fatalf("QueueMetrics = %+v, %v", got, err)
		}
		for range 3 {
			h.takeIDs("q", 1) // a shard's take order is its own
		}
		h.complete(b)
		h.setStatus(a, ocypod.StatusFailed)
		h.clock.Advance(7 * time.Second)
		h.sweepTimeouts()
		h.wantStatus(c, ocypod.StatusTimedOut)
		got, err = h.s.QueueMetrics(h.ctx, []string{"q"})
		if err != nil || got["q"] != (ocypod.QueueMetrics{Created: 3, Completed: 1, Failed: 1, TimedOut: 1}) {
			t.Fatalf("QueueMetrics after = %+v, %v", got, err)
		}
		// A new day starts from zero.
		h.clock.Advance(24 * time.Hour)
		if got, err := h.s.QueueMetrics(h.ctx, []string{"q"}); err != nil || len(got) != 0 {
			t.Fatalf("QueueMetrics the next day = %+v, %v", got, err)
		}
	}},
}
