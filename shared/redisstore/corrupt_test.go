package redisstore_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

var corruptCases = []conformanceCase{
	{name: "corrupt job fields", run: func(t *testing.T, h *harness) {
		h.skipInvariants = true
		h.putQueue("q", settings(0, 0, 60, 0))
		for _, tc := range []struct{ field, value string }{
			{"created_at", "yesterday"},
			{"started_at", "1.5"},
			{"timeout", "-1"},
			{"retries", "many"},
			{"input", "{"},
			{"output", "nope"},
			{"tags", "x"},
			{"tags", `{"a":1}`},
			{"retry_delays", "[1"},
			{"retry_delays", `["forever"]`},
		} {
			id := seedStatus(h, "q", ocypod.StatusRunning, ocypod.JobSpec{Input: json.RawMessage(`1`)})
			h.do("HSET", h.keys.Job(id), tc.field, tc.value)
			_, err := h.s.GetJob(h.ctx, id)
			wantKind(t, "GetJob with "+tc.field+"="+tc.value, err, ocypod.KindInternal, "")
			// Operations that do not read the field still work.
			if st, err := h.s.JobStatus(h.ctx, id); err != nil || st != ocypod.StatusRunning {
				t.Fatalf("JobStatus = %s, %v", st, err)
			}
			if tc.field == "output" {
				_, err := h.s.JobOutput(h.ctx, id)
				wantKind(t, "JobOutput", err, ocypod.KindInternal, "")
			}
			if err := h.s.Heartbeat(h.ctx, id); err != nil {
				t.Fatalf("Heartbeat = %v", err)
			}
			h.setStatus(id, ocypod.StatusFailed)
			if err := h.s.DeleteJob(h.ctx, id); err != nil {
				t.Fatalf("DeleteJob = %v", err)
			}
		}

		// A bad status.
		id := seedStatus(h, "q", ocypod.StatusRunning, ocypod.JobSpec{})
		h.do("HSET", h.keys.Job(id), "status", "bogus")
		_, err := h.s.GetJob(h.ctx, id)
		wantKind(t, "GetJob(bogus status)", err, ocypod.KindInternal, "")
		_, err = h.s.JobStatus(h.ctx, id)
		wantKind(t, "JobStatus(bogus status)", err, ocypod.KindInternal, "")
		err = h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Status: status(ocypod.StatusCancelled)})
		wantKind(t, "UpdateJob(bogus status)", err, ocypod.KindInternal, "")
		wantKind(t, "Heartbeat(bogus status)", h.s.Heartbeat(h.ctx, id), ocypod.KindConflict, "")
		if err := h.s.DeleteJob(h.ctx, id); err != nil {
			t.Fatalf("DeleteJob(bogus status) = %v", err)
		}

		// Missing fields read as zero; without a status there is no job.
		id = seedStatus(h, "q", ocypod.StatusRunning, ocypod.JobSpec{Input: json.RawMessage(`7`)})
		h.do("HDEL", h.keys.Job(id), "id", "queue", "created_at", "timeout", "heartbeat_timeout",
			"expires_after", "retries", "retries_attempted", "started_at")
		j := h.job(id)
		if want := (ocypod.Job{ID: id, Status: ocypod.StatusRunning, Input: json.RawMessage(`7`)}); !jobEqual(j, &want) {
			t.Fatalf("GetJob(stripped) = %+v, want %+v", j, want)
		}
		err = h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted)})
		wantKind(t, "UpdateJob(no queue)", err, ocypod.KindInternal, "")
		h.do("HDEL", h.keys.Job(id), "status")
		msg := ocypod.JobNotFound(id).Message
		_, err = h.s.GetJob(h.ctx, id)
		wantKind(t, "GetJob(no status)", err, ocypod.KindNotFound, msg)
		_, err = h.s.JobStatus(h.ctx, id)
		wantKind(t, "JobStatus(no status)", err, ocypod.KindNotFound, msg)
		_, err = h.s.JobOutput(h.ctx, id)
		wantKind(t, "JobOutput(no status)", err, ocypod.KindNotFound, msg)
		wantKind(t, "Heartbeat(no status)", h.s.Heartbeat(h.ctx, id), ocypod.KindNotFound, msg)
		wantKind(t, "UpdateJob(no status)", h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{}), ocypod.KindNotFound, msg)
		if err := h.s.DeleteJob(h.ctx, id); err != nil {
			t.Fatalf("DeleteJob(no status) = %v", err)
		}
		if n := h.rdb.Exists(h.ctx, h.keys.Job(id)).Val(); n != 0 {
			t.Fatalf("DeleteJob left the hash")
		}
	}},
	{name: "corrupt indexes", opts: redisstore.Options{InlineSweep: -1}, run: func(t *testing.T, h *harness) {
		h.skipInvariants = true
		h.putQueue("q", settings(1, 0, 1, 1))
		run := []uint64{
			seedStatus(h, "q", ocypod.StatusRunning, ocypod.JobSpec{}), // hash deleted
			seedStatus(h, "q", ocypod.StatusRunning, ocypod.JobSpec{}), // no queue field
			seedStatus(h, "q", ocypod.StatusRunning, ocypod.JobSpec{}), // not a hash
			seedStatus(h, "q", ocypod.StatusRunning, ocypod.JobSpec{}), // healthy
		}
		h.do("DEL", h.keys.Job(run[0]))
		h.do("HDEL", h.keys.Job(run[1]), "queue")
		h.do("DEL", h.keys.Job(run[2]))
		h.do("SET", h.keys.Job(run[2]), "garbage")
		h.do("ZADD", h.keys.Running(), 0, "999")
		h.clock.Advance(2 * time.Second)
		r := h.sweepTimeouts()
		slices.Sort(r.Dropped)
		wantSweep(t, "SweepTimeouts", r, redisstore.SweepResult{TimedOut: []uint64{run[3]}, Dropped: []uint64{run[0], run[1], run[2], 999}})
		if ids := h.queueIDs("q").Running; len(ids) != 1 || ids[0] != run[1] {
			t.Errorf("running ids = %v, want only the job without a queue field (its queue is unknown)", ids)
		}

		fail := []uint64{
			seedStatus(h, "q", ocypod.StatusFailed, ocypod.JobSpec{}), // hash deleted
			seedStatus(h, "q", ocypod.StatusFailed, ocypod.JobSpec{}), // garbage delays: no delay
			seedStatus(h, "q", ocypod.StatusFailed, ocypod.JobSpec{}), // status changed behind our back
		}
		h.do("DEL", h.keys.Job(fail[0]))
		h.do("HSET", h.keys.Job(fail[1]), "retry_delays", "{{")
		h.do("HSET", h.keys.Job(fail[2]), "status", "completed")
		r = h.sweepRetries()
		slices.Sort(r.Dropped)
		slices.Sort(r.Retried)
		wantSweep(t, "SweepRetries", r, redisstore.SweepResult{Retried: []uint64{run[3], fail[1]}, Dropped: []uint64{fail[0], fail[2]}})

		done := seedStatus(h, "q", ocypod.StatusCompleted, ocypod.JobSpec{})
		gone := seedStatus(h, "q", ocypod.StatusCompleted, ocypod.JobSpec{})
		h.do("DEL", h.keys.Job(gone))
		h.do("HSET", h.keys.Job(done), "ended_at", "soon")
		h.clock.Advance(time.Hour)
		r = h.sweepExpiry()
		wantSweep(t, "SweepExpiry", r, redisstore.SweepResult{Expired: []uint64{done}, Dropped: []uint64{gone}})
		// Every vanished job has left the queue's indexes.
		ids := h.queueIDs("q")
		for _, id := range []uint64{run[0], run[2], fail[0], gone} {
			for _, l := range [][]uint64{ids.Queued, ids.Running, ids.Failed, ids.Completed, ids.Cancelled, ids.TimedOut} {
				if slices.Contains(l, id) {
					t.Errorf("vanished job %d still listed: %+v", id, ids)
				}
			}
		}
	}},
	{name: "corrupt queue and stats", run: func(t *testing.T, h *harness) {
		h.skipInvariants = true
		h.putQueue("q", ocypod.DefaultQueueSettings())
		h.do("HSET", h.keys.Queue("q"), "timeout", "soon")
		_, err := h.s.GetQueue(h.ctx, "q")
		wantKind(t, "GetQueue(bad timeout)", err, ocypod.KindInternal, "")
		id := h.create("q", ocypod.JobSpec{})
		_, err = h.s.GetJob(h.ctx, id)
		wantKind(t, "GetJob(inherited bad timeout)", err, ocypod.KindInternal, "")
		h.take("q", id) // a bad timeout reads as none
		h.do("HSET", h.keys.Stats(), "created", "lots")
		_, err = h.s.Info(h.ctx)
		wantKind(t, "Info(bad counter)", err, ocypod.KindInternal, "")
		h.do("DEL", h.keys.Queue("q"))
		h.do("SET", h.keys.Queue("q"), "x")
		_, err = h.s.GetQueue(h.ctx, "q")
		wantKind(t, "GetQueue(wrong type)", err, ocypod.KindInternal, "")
		h.do("ZADD", h.keys.Tag("t"), 1, "not-an-id")
		_, err = h.s.TagJobIDs(h.ctx, "t")
		wantKind(t, "TagJobIDs(bad member)", err, ocypod.KindInternal, "")
	}},
}

// jobEqual compares jobs field by field (reflect.DeepEqual on pointers).
func jobEqual(a, b *ocypod.Job) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
