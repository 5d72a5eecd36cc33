package redisstore_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

func ptime(t time.Time) *time.Time { return &t }

var jobCases = []conformanceCase{
	{name: "job create inherits queue settings", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(600, 30, 120, 3, 10, 60))
		id := h.create("q", ocypod.JobSpec{})
		want := &ocypod.Job{
			ID: id, Queue: "q", Status: ocypod.StatusQueued, CreatedAt: t0,
			Timeout: ocypod.Seconds(600), HeartbeatTimeout: ocypod.Seconds(30), ExpiresAfter: ocypod.Seconds(120),
			Retries: 3, RetryDelays: durs(10, 60),
		}
		if got := h.job(id); !reflect.DeepEqual(got, want) {
			t.Fatalf("GetJob = %+v, want %+v", got, want)
		}
		if id != h.firstID("q") {
			t.Errorf("first id = %d, want %d", id, h.firstID("q"))
		}
	}},
	{name: "job create overrides", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(600, 30, 120, 3, 10, 60))
		id := h.create("q", ocypod.JobSpec{
			Input:            json.RawMessage(`{"b": [1, 2], "a": "x"}`),
			Tags:             []string{"z", "a", "z"},
			Timeout:          &ocypod.Duration{Secs: 1, Nanos: 500_000_000},
			HeartbeatTimeout: dur(0),
			ExpiresAfter:     dur(0),
			Retries:          u64(0),
			RetryDelays:      []ocypod.Duration{},
			RetryDelaysSet:   true,
		})
		want := &ocypod.Job{
			ID: id, Queue: "q", Status: ocypod.StatusQueued, CreatedAt: t0, Tags: []string{"z", "a", "z"},
			Input: json.RawMessage(`{"b":[1,2],"a":"x"}`), Timeout: ocypod.Seconds(1),
		}
		if got := h.job(id); !reflect.DeepEqual(got, want) {
			t.Fatalf("GetJob = %+v, want %+v", got, want)
		}
		id2 := h.create("q", ocypod.JobSpec{Tags: []string{}, Input: json.RawMessage(`null`), RetryDelays: durs(5)})
		got := h.job(id2)
		if got.Tags == nil || len(got.Tags) != 0 || got.Input != nil || !reflect.DeepEqual(got.RetryDelays, durs(5)) {
			t.Fatalf("GetJob = tags %#v input %s delays %v, want [] null [5s]", got.Tags, got.Input, got.RetryDelays)
		}
		if id2 != id+uint64(h.P) {
			t.Errorf("ids %d then %d, want consecutive", id, id2)
		}
		if c := h.info().Statistics.Created; c != 2 {
			t.Errorf("created = %d, want 2", c)
		}
	}},
	{name: "job create refusals", run: func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		before := h.snapshot()
		_, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Tags: []string{"ok", ""}})
		wantKind(t, "CreateJob(empty tag)", err, ocypod.KindInvalid, "tags cannot be empty")
		_, err = h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Input: json.RawMessage(`{`)})
		wantKind(t, "CreateJob(bad input)", err, ocypod.KindInvalid, "")
		h.wantUnchanged("refused creates", before)
	}},
	{name: "job next is fifo", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		h.putQueue("other", settings(60, 0, 60, 0))
		if j := h.next("q"); j != nil {
			t.Fatalf("NextJob(empty) = %+v, want nil", j)
		}
		a := h.create("q", ocypod.JobSpec{Input: json.RawMessage(`{"n":1}`)})
		h.create("other", ocypod.JobSpec{})
		b := h.create("q", ocypod.JobSpec{})
		h.clock.Advance(3 * time.Second)
		j := h.next("q")
		if j == nil || j.ID != a || string(j.Input) != `{"n":1}` {
			t.Fatalf("NextJob = %+v, want job %d with its input", j, a)
		}
		got := h.job(a)
		if got.Status != ocypod.StatusRunning || !reflect.DeepEqual(got.StartedAt, ptime(t0.Add(3*time.Second))) || got.CreatedAt != t0 {
			t.Fatalf("taken job = %+v, want running, started 3s after creation", got)
		}
		if j := h.next("q"); j == nil || j.ID != b || j.Input != nil {
			t.Fatalf("NextJob = %+v, want job %d without input", j, b)
		}
		if j := h.next("q"); j != nil {
			t.Fatalf("NextJob(drained) = %+v, want nil", j)
		}
	}},
	{name: "job output", run: func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		id := h.create("q", ocypod.JobSpec{})
		before := h.snapshot()
		wantKind(t, "SetJobOutput(queued)", h.s.SetJobOutput(h.ctx, id, json.RawMessage(`1`), nil),
			ocypod.KindConflict, "Can only set output for running jobs")
		wantKind(t, "SetJobOutput(missing)", h.s.SetJobOutput(h.ctx, 999, json.RawMessage(`1`), nil),
			ocypod.KindNotFound, "Job with ID 999 does not exist")
		wantKind(t, "UpdateJob(output, queued)", h.update(id, ocypod.JobUpdate{Output: json.RawMessage(`1`)}),
			ocypod.KindConflict, "Can only set output for running jobs")
		h.wantUnchanged("refused output writes", before)
		_, err := h.s.JobOutput(h.ctx, 999)
		wantKind(t, "JobOutput(missing)", err, ocypod.KindNotFound, "Job with ID 999 does not exist")
		if out, err := h.s.JobOutput(h.ctx, id); out != nil || err != nil {
			t.Fatalf("JobOutput(never set) = %s, %v, want nil", out, err)
		}
		h.take("q", id)
		for _, tc := range []struct{ in, want string }{
			{`{"z": 1, "a": [true, null]}`, `{"z":1,"a":[true,null]}`},
			{`"text"`, `"text"`},
			{`null`, ``},
		} {
			if err := h.s.SetJobOutput(h.ctx, id, json.RawMessage(tc.in), nil); err != nil {
				t.Fatalf("SetJobOutput(%s) = %v", tc.in, err)
			}
			if out, err := h.s.JobOutput(h.ctx, id); string(out) != tc.want || err != nil {
				t.Fatalf("JobOutput after %s = %s, %v, want %s", tc.in, out, err, tc.want)
			}
		}
		if _, _, err := h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Output: json.RawMessage(`[1]`)}, nil); err != nil {
			t.Fatalf("UpdateJob(output) = %v", err)
		}
		// Output and a status change commit together.
		if _, _, err := h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Output: json.RawMessage(`[2]`), Status: status(ocypod.StatusCompleted)}, nil); err != nil {
			t.Fatalf("UpdateJob(output, completed) = %v", err)
		}
		if j := h.job(id); string(j.Output) != `[2]` || j.Status != ocypod.StatusCompleted {
			t.Fatalf("job = output %s status %s, want [2] completed", j.Output, j.Status)
		}
	}},
	{name: "job heartbeat", run: func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		id := h.create("q", ocypod.JobSpec{})
		before := h.snapshot()
		wantKind(t, "Heartbeat(queued)", h.s.Heartbeat(h.ctx, id, nil), ocypod.KindConflict,
			fmt.Sprintf("Cannot heartbeat job %d, job is not running", id))
		wantKind(t, "Heartbeat(missing)", h.s.Heartbeat(h.ctx, 7, nil), ocypod.KindNotFound, "Job with ID 7 does not exist")
		h.wantUnchanged("refused heartbeats", before)
		h.take("q", id)
		h.clock.Advance(1500 * time.Millisecond)
		if err := h.s.Heartbeat(h.ctx, id, nil); err != nil {
			t.Fatalf("Heartbeat = %v", err)
		}
		if j := h.job(id); !reflect.DeepEqual(j.LastHeartbeat, ptime(t0.Add(1500*time.Millisecond))) {
			t.Fatalf("LastHeartbeat = %v, want %v", j.LastHeartbeat, t0.Add(1500*time.Millisecond))
		}
		h.setStatus(id, ocypod.StatusCompleted)
		wantKind(t, "Heartbeat(completed)", h.s.Heartbeat(h.ctx, id, nil), ocypod.KindConflict, "")
	}},
	{name: "job missing", run: func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		before := h.snapshot()
		const msg = "Job with ID 42 does not exist"
		_, err := h.s.GetJob(h.ctx, 42)
		wantKind(t, "GetJob", err, ocypod.KindNotFound, msg)
		_, err = h.s.JobStatus(h.ctx, 42)
		wantKind(t, "JobStatus", err, ocypod.KindNotFound, msg)
		wantKind(t, "DeleteJob", h.s.DeleteJob(h.ctx, 42), ocypod.KindNotFound, msg)
		// An empty PATCH on a missing job is a 404 (upstream answered 204).
		wantKind(t, "UpdateJob({})", h.update(42, ocypod.JobUpdate{}), ocypod.KindNotFound, msg)
		wantKind(t, "UpdateJob(cancel)", h.update(42, ocypod.JobUpdate{Status: status(ocypod.StatusCancelled)}),
			ocypod.KindNotFound, msg)
		h.wantUnchanged("operations on a missing job", before)
		id := h.create("q", ocypod.JobSpec{})
		if _, _, err := h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{}, nil); err != nil {
			t.Fatalf("UpdateJob({}) on an existing job = %v", err)
		}
	}},
	{name: "job delete in every state", opts: redisstore.Options{InlineSweep: -1}, run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(0, 0, 60, 1))
		tags := []string{"t", "ü n{i}:c\"o'de", "*", "dup", "dup"}
		for _, st := range ocypod.Statuses {
			id := seedStatus(h, "q", st, ocypod.JobSpec{Tags: tags})
			if err := h.s.DeleteJob(h.ctx, id); err != nil {
				t.Fatalf("DeleteJob(%s job) = %v", st, err)
			}
			_, err := h.s.GetJob(h.ctx, id)
			wantKind(t, "GetJob(deleted "+string(st)+")", err, ocypod.KindNotFound, "")
			wantKind(t, "DeleteJob(deleted)", h.s.DeleteJob(h.ctx, id), ocypod.KindNotFound, "")
			for _, tag := range tags {
				if ids, err := h.s.TagJobIDs(h.ctx, tag); err != nil || len(ids) != 0 {
					t.Fatalf("TagJobIDs(%q) after deleting the %s job = %v, %v, want []", tag, st, ids, err)
				}
			}
			h.checkInvariants()
		}
		if q := h.info().Queues; len(q) != 1 || q["q"] != (ocypod.QueueCounts{}) {
			t.Errorf("info after every job was deleted = %+v, want q with no job", q)
		}
		if s := h.info().Statistics; s.Created != 6 {
			t.Errorf("statistics = %+v, deletes must not change them", s)
		}
	}},
	{name: "job tags", run: func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		odd := "\xff{ns}:tag:x\u2028<&>"
		var ids []uint64
		for range 12 {
			ids = append(ids, h.create("q", ocypod.JobSpec{Tags: []string{"a", odd}}))
		}
		h.create("q", ocypod.JobSpec{Tags: []string{"b"}})
		got, err := h.s.TagJobIDs(h.ctx, "a")
		if err != nil || !reflect.DeepEqual(got, ids) {
			t.Fatalf("TagJobIDs(a) = %v, %v, want %v", got, err, ids)
		}
		// Invalid UTF-8 reads back as U+FFFD, the tag set uses the same name.
		j := h.job(ids[0])
		if len(j.Tags) != 2 || j.Tags[1] != "\uFFFD{ns}:tag:x\u2028<&>" {
			t.Fatalf("Tags = %q", j.Tags)
		}
		if got, _ := h.s.TagJobIDs(h.ctx, j.Tags[1]); len(got) != 12 {
			t.Fatalf("TagJobIDs(%q) = %v, want 12 ids", j.Tags[1], got)
		}
		if got, err := h.s.TagJobIDs(h.ctx, "unknown"); err != nil || got == nil || len(got) != 0 {
			t.Fatalf("TagJobIDs(unknown) = %#v, %v, want []", got, err)
		}
	}},
}

// seedStatus creates a job on queue and brings it to status st through the
// API (a failed or timed_out job with retries left waits for a retry).
func seedStatus(h *harness, queue string, st ocypod.Status, spec ocypod.JobSpec) uint64 {
	h.t.Helper()
	id := h.create(queue, spec)
	if st == ocypod.StatusQueued {
		return id
	}
	// Take jobs until ours comes up, putting the others back.
	for {
		j := h.next(queue)
		if j == nil {
			h.t.Fatalf("seedStatus: job %d not found in queue %q", id, queue)
		}
		if j.ID == id {
			break
		}
		h.setStatus(j.ID, ocypod.StatusCancelled)
		h.setStatus(j.ID, ocypod.StatusQueued)
	}
	if st != ocypod.StatusRunning {
		h.setStatus(id, st)
	}
	return id
}
