package redisstore_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// setMeta rewrites a job's stored metadata through fn (test setup only).
func (h *harness) setMeta(id uint64, fn func(m map[string]any)) {
	h.t.Helper()
	key, sid := h.lay.Key(h.lay.PartitionOf(id), "j"), strconv.FormatUint(id, 10)
	var m map[string]any
	if err := json.Unmarshal([]byte(h.rdb.HGet(h.ctx, key, sid).Val()), &m); err != nil {
		h.t.Fatal(err)
	}
	fn(m)
	b, _ := json.Marshal(m)
	h.do("HSET", key, sid, string(b))
}

// partKey is the key called name of job id's partition.
func (h *harness) partKey(id uint64, name string) string {
	return h.lay.Key(h.lay.PartitionOf(id), name)
}

var corruptCases = []conformanceCase{
	{name: "corrupt job fields", run: func(t *testing.T, h *harness) {
		h.skipInvariants = true
		h.putQueue("q", settings(0, 0, 60, 0))
		for _, tc := range []struct {
			field string // a metadata field, or the input/output hashes
			value any
		}{
			{"c", "yesterday"},
			{"b", "1.5"},
			{"t", "-1"},
			{"r", "many"},
			{"g", "x"},
			{"g", `{"a":1}`},
			{"d", "[1"},
			{"d", `["forever"]`},
			{"inp", "{"},
			{"out", "nope"},
		} {
			id := seedStatus(h, "q", ocypod.StatusRunning, ocypod.JobSpec{Input: json.RawMessage(`1`)})
			switch tc.field {
			case "inp", "out":
				h.do("HSET", h.partKey(id, tc.field), strconv.FormatUint(id, 10), tc.value)
			default:
				h.setMeta(id, func(m map[string]any) { m[tc.field] = tc.value })
			}
			what := "GetJob with " + tc.field + "=" + tc.value.(string)
			_, err := h.s.GetJob(h.ctx, id)
			wantKind(t, what, err, ocypod.KindInternal, "")
			// Operations that do not read the field still work.
			if tc.field != "inp" && tc.field != "out" {
				if st, err := h.s.JobStatus(h.ctx, id); err == nil && st != ocypod.StatusRunning {
					t.Fatalf("JobStatus = %s", st)
				}
			}
			if tc.field == "out" {
				_, err := h.s.JobOutput(h.ctx, id)
				wantKind(t, "JobOutput", err, ocypod.KindInternal, "")
			}
			if err := h.s.Heartbeat(h.ctx, id, nil); err != nil {
				t.Fatalf("Heartbeat = %v", err)
			}
			h.setStatus(id, ocypod.StatusFailed)
			if err := h.s.DeleteJob(h.ctx, id); err != nil {
				t.Fatalf("DeleteJob = %v", err)
			}
		}

		// A bad status: the job is unreadable, to the scripts too.
		id := seedStatus(h, "q", ocypod.StatusRunning, ocypod.JobSpec{})
		h.setMeta(id, func(m map[string]any) { m["s"] = "bogus" })
		_, err := h.s.GetJob(h.ctx, id)
		wantKind(t, "GetJob(bogus status)", err, ocypod.KindInternal, "")
		_, err = h.s.JobStatus(h.ctx, id)
		wantKind(t, "JobStatus(bogus status)", err, ocypod.KindInternal, "")
		_, _, err = h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Status: status(ocypod.StatusCancelled)}, nil)
		wantKind(t, "UpdateJob(bogus status)", err, ocypod.KindInternal, "")
		wantKind(t, "Heartbeat(bogus status)", h.s.Heartbeat(h.ctx, id, nil), ocypod.KindInternal, "")
		if err := h.s.DeleteJob(h.ctx, id); err != nil {
			t.Fatalf("DeleteJob(bogus status) = %v", err)
		}
		_, err = h.s.GetJob(h.ctx, id)
		wantKind(t, "GetJob(deleted)", err, ocypod.KindNotFound, ocypod.JobNotFound(id).Message)

		// Not JSON at all.
		id = seedStatus(h, "q", ocypod.StatusQueued, ocypod.JobSpec{})
		h.do("HSET", h.partKey(id, "j"), strconv.FormatUint(id, 10), "garbage")
		_, err = h.s.GetJob(h.ctx, id)
		wantKind(t, "GetJob(garbage)", err, ocypod.KindInternal, "")
		_, _, err = h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{}, nil)
		wantKind(t, "UpdateJob(garbage)", err, ocypod.KindInternal, "")
		if err := h.s.DeleteJob(h.ctx, id); err != nil {
			t.Fatalf("DeleteJob(garbage) = %v", err)
		}
		if n := h.rdb.HExists(h.ctx, h.partKey(id, "j"), strconv.FormatUint(id, 10)).Val(); n {
			t.Fatalf("DeleteJob left the metadata")
		}
	}},
	{name: "corrupt indexes", opts: redisstore.Options{InlineSweep: -1}, run: func(t *testing.T, h *harness) {
		h.skipInvariants = true
		h.putQueue("q", settings(1, 0, 1, 1, 10))
		run := []uint64{
			seedStatus(h, "q", ocypod.StatusRunning, ocypod.JobSpec{}), // metadata deleted
			seedStatus(h, "q", ocypod.StatusRunning, ocypod.JobSpec{}), // no queue field
			seedStatus(h, "q", ocypod.StatusRunning, ocypod.JobSpec{}), // not JSON
			seedStatus(h, "q", ocypod.StatusRunning, ocypod.JobSpec{}), // healthy
		}
		h.do("HDEL", h.partKey(run[0], "j"), strconv.FormatUint(run[0], 10))
		h.setMeta(run[1], func(m map[string]any) { delete(m, "q") })
		h.do("HSET", h.partKey(run[2], "j"), strconv.FormatUint(run[2], 10), "garbage")
		h.do("ZADD", h.lay.Key(0, "run"), 0, "999")
		h.clock.Advance(2 * time.Second)
		r := h.sweepTimeouts()
		slices.Sort(r.Dropped)
		want := []uint64{run[0], run[1], run[2], 999}
		slices.Sort(want)
		wantSweep(t, "SweepTimeouts", r, redisstore.SweepResult{TimedOut: []uint64{run[3]}, Dropped: want})

		fail := []uint64{
			seedStatus(h, "q", ocypod.StatusFailed, ocypod.JobSpec{}), // metadata deleted
			seedStatus(h, "q", ocypod.StatusFailed, ocypod.JobSpec{}), // garbage delays: no delay
			seedStatus(h, "q", ocypod.StatusFailed, ocypod.JobSpec{}), // no retry due any more
		}
		h.do("HDEL", h.partKey(fail[0], "j"), strconv.FormatUint(fail[0], 10))
		h.setMeta(fail[1], func(m map[string]any) { m["d"] = "{{" })
		h.setMeta(fail[2], func(m map[string]any) { delete(m, "u") })
		h.clock.Advance(20 * time.Second)
		r = h.sweepRetries()
		slices.Sort(r.Dropped)
		slices.Sort(r.Retried)
		wantR := []uint64{run[3], fail[1]}
		slices.Sort(wantR)
		wantD := []uint64{fail[0], fail[2]}
		slices.Sort(wantD)
		wantSweep(t, "SweepRetries", r, redisstore.SweepResult{Retried: wantR, Dropped: wantD})

		done := seedStatus(h, "q", ocypod.StatusCompleted, ocypod.JobSpec{})
		gone := seedStatus(h, "q", ocypod.StatusCompleted, ocypod.JobSpec{})
		h.do("HDEL", h.partKey(gone, "j"), strconv.FormatUint(gone, 10))
		h.setMeta(done, func(m map[string]any) { m["f"] = "soon" })
		h.clock.Advance(time.Hour)
		r = h.sweepExpiry()
		wantSweep(t, "SweepExpiry", r, redisstore.SweepResult{Expired: []uint64{done}, Dropped: []uint64{gone}})
	}},
	{name: "corrupt queue and stats", run: func(t *testing.T, h *harness) {
		h.skipInvariants = true
		h.putQueue("q", ocypod.DefaultQueueSettings())
		home := h.lay.Home("q")
		h.do("HSET", h.lay.Key(home, "q"), "q", `{"t":"soon","o":0}`)
		_, err := h.s.GetQueue(h.ctx, "q")
		wantKind(t, "GetQueue(bad timeout)", err, ocypod.KindInternal, "")
		h.do("HSET", h.lay.Key(home, "q"), "q", `{"t":"60","o":0}`)
		id := h.create("q", ocypod.JobSpec{})
		h.take("q", id)
		h.do("HSET", h.lay.Key(0, "tot"), "created", "lots")
		_, err = h.s.Info(h.ctx)
		wantKind(t, "Info(bad counter)", err, ocypod.KindInternal, "")
		h.do("HSET", h.lay.Key(home, "q"), "q", "x")
		_, err = h.s.GetQueue(h.ctx, "q")
		wantKind(t, "GetQueue(not JSON)", err, ocypod.KindInternal, "")
		h.do("ZADD", h.lay.Key(0, "tag"), 0, "t not-an-id")
		_, err = h.s.TagJobIDs(h.ctx, "t")
		wantKind(t, "TagJobIDs(bad member)", err, ocypod.KindInternal, "")
	}},
}
