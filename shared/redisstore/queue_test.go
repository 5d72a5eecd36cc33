package redisstore_test

import (
	"reflect"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
)

var queueCases = []conformanceCase{
	{name: "queue put get list", run: func(t *testing.T, h *harness) {
		qs := ocypod.QueueSettings{
			Timeout:          ocypod.Duration{Secs: 90, Nanos: 500_000_000}, // stored as 90s
			HeartbeatTimeout: ocypod.Seconds(30),
			ExpiresAfter:     ocypod.Seconds(3600),
			Retries:          3,
			RetryDelays:      []ocypod.Duration{ocypod.Seconds(10), {Secs: 60, Nanos: 1}},
		}
		for i, want := range []bool{true, false} {
			created, err := h.s.PutQueue(h.ctx, "b", qs)
			if err != nil || created != want {
				t.Fatalf("PutQueue #%d = %v, %v, want %v", i+1, created, err, want)
			}
		}
		got, err := h.s.GetQueue(h.ctx, "b")
		want := settings(90, 30, 3600, 3, 10, 60)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("GetQueue = %+v, %v, want %+v", got, err, want)
		}
		h.putQueue("a", ocypod.QueueSettings{})
		h.putQueue("B", ocypod.DefaultQueueSettings())
		h.putQueue("a.b-c_1", ocypod.DefaultQueueSettings())
		names, err := h.s.ListQueues(h.ctx)
		if wantNames := []string{"B", "a", "a.b-c_1", "b"}; err != nil || !reflect.DeepEqual(names, wantNames) {
			t.Fatalf("ListQueues = %q, %v, want %q", names, err, wantNames)
		}
		got, err = h.s.GetQueue(h.ctx, "a")
		if err != nil || !reflect.DeepEqual(got, ocypod.QueueSettings{}) {
			t.Fatalf("GetQueue(a) = %+v, %v, want zero settings", got, err)
		}
	}},
	{name: "queue list empty", run: func(t *testing.T, h *harness) {
		names, err := h.s.ListQueues(h.ctx)
		if err != nil || names == nil || len(names) != 0 {
			t.Fatalf("ListQueues = %#v, %v, want []", names, err)
		}
	}},
	{name: "queue put replaces every setting", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(600, 10, 60, 3, 5, 7))
		h.putQueue("q", ocypod.DefaultQueueSettings())
		got, err := h.s.GetQueue(h.ctx, "q")
		if want := ocypod.DefaultQueueSettings(); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("GetQueue = %+v, %v, want %+v", got, err, want)
		}
	}},
	{name: "queue missing or invalid", run: func(t *testing.T, h *harness) {
		before := h.snapshot()
		_, err := h.s.GetQueue(h.ctx, "nope")
		wantKind(t, "GetQueue", err, ocypod.KindNotFound, "Queue 'nope' does not exist")
		_, err = h.s.QueueSize(h.ctx, "nope")
		wantKind(t, "QueueSize", err, ocypod.KindNotFound, "Queue 'nope' does not exist")
		_, err = h.s.QueueJobIDs(h.ctx, "nope")
		wantKind(t, "QueueJobIDs", err, ocypod.KindNotFound, "Queue 'nope' does not exist")
		wantKind(t, "DeleteQueue", h.s.DeleteQueue(h.ctx, "nope"), ocypod.KindNotFound, "Queue 'nope' does not exist")
		_, err = h.s.CreateJob(h.ctx, "nope", ocypod.JobSpec{})
		wantKind(t, "CreateJob", err, ocypod.KindNotFound, "Queue 'nope' does not exist")
		_, err = h.s.NextJob(h.ctx, "nope")
		wantKind(t, "NextJob", err, ocypod.KindNotFound, "Queue 'nope' does not exist")
		h.wantUnchanged("operations on a missing queue", before)

		for _, bad := range []string{"", "a b", "a:b", "x/y", "{x}", "nâme"} {
			const msg = "Invalid queue name, valid characters: a-zA-Z0-9_.-"
			_, err := h.s.PutQueue(h.ctx, bad, ocypod.QueueSettings{})
			wantKind(t, "PutQueue", err, ocypod.KindInvalid, msg)
			_, err = h.s.GetQueue(h.ctx, bad)
			wantKind(t, "GetQueue", err, ocypod.KindInvalid, msg)
			_, err = h.s.QueueSize(h.ctx, bad)
			wantKind(t, "QueueSize", err, ocypod.KindInvalid, msg)
			_, err = h.s.QueueJobIDs(h.ctx, bad)
			wantKind(t, "QueueJobIDs", err, ocypod.KindInvalid, msg)
			wantKind(t, "DeleteQueue", h.s.DeleteQueue(h.ctx, bad), ocypod.KindInvalid, msg)
			_, err = h.s.CreateJob(h.ctx, bad, ocypod.JobSpec{})
			wantKind(t, "CreateJob", err, ocypod.KindInvalid, msg)
			_, err = h.s.NextJob(h.ctx, bad)
			wantKind(t, "NextJob", err, ocypod.KindInvalid, msg)
		}
		h.wantUnchanged("operations on invalid names", before)
	}},
	{name: "queue size counts queued only", run: func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		for range 3 {
			h.create("q", ocypod.JobSpec{})
		}
		h.next("q")
		n, err := h.s.QueueSize(h.ctx, "q")
		if err != nil || n != 2 {
			t.Fatalf("QueueSize = %d, %v, want 2", n, err)
		}
	}},
	{name: "queue job ids", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(0, 0, 0, 1))
		h.putQueue("other", settings(0, 0, 0, 0))
		var ids []uint64
		for range 9 {
			ids = append(ids, h.create("q", ocypod.JobSpec{}))
		}
		h.create("other", ocypod.JobSpec{})
		for _, id := range ids[:6] {
			h.take("q", id)
		}
		h.setStatus(ids[0], ocypod.StatusCompleted)
		h.setStatus(ids[1], ocypod.StatusFailed) // one retry left: waits in failed
		h.setStatus(ids[2], ocypod.StatusTimedOut)
		h.setStatus(ids[3], ocypod.StatusCancelled)
		h.setStatus(ids[1], ocypod.StatusQueued) // manual requeue: back of the queue
		h.setStatus(ids[7], ocypod.StatusCancelled)
		got := h.queueIDs("q")
		want := ocypod.JobIDs{
			Queued:    []uint64{ids[6], ids[8], ids[1]},
			Running:   []uint64{ids[4], ids[5]},
			Failed:    []uint64{},
			Completed: []uint64{ids[0]},
			Cancelled: []uint64{ids[3], ids[7]},
			TimedOut:  []uint64{ids[2]},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("QueueJobIDs = %+v, want %+v", got, want)
		}
		if empty := h.queueIDs("other"); len(empty.Queued) != 1 || empty.Running == nil || len(empty.Running) != 0 {
			t.Fatalf("QueueJobIDs(other) = %+v, want 1 queued and empty non-nil lists", empty)
		}
	}},
	{name: "queue delete", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(0, 0, 0, 2))
		running := h.create("q", ocypod.JobSpec{Tags: []string{"t"}})
		failed := h.create("q", ocypod.JobSpec{})
		done := h.create("q", ocypod.JobSpec{})
		for _, id := range []uint64{running, failed, done} {
			h.take("q", id)
		}
		h.setStatus(failed, ocypod.StatusFailed)
		h.setStatus(done, ocypod.StatusCompleted)
		queued := h.create("q", ocypod.JobSpec{Tags: []string{"t", "u"}})
		h.create("q", ocypod.JobSpec{}) // queued, untagged
		queued2 := h.create("q", ocypod.JobSpec{Tags: []string{"u"}})
		h.putQueue("keep", ocypod.DefaultQueueSettings())
		other := h.create("keep", ocypod.JobSpec{Tags: []string{"t"}})

		if err := h.s.DeleteQueue(h.ctx, "q"); err != nil {
			t.Fatalf("DeleteQueue = %v", err)
		}
		for _, id := range []uint64{queued, queued2} {
			_, err := h.s.GetJob(h.ctx, id)
			wantKind(t, "GetJob(queued job of a deleted queue)", err, ocypod.KindNotFound, "")
		}
		if ids, _ := h.s.TagJobIDs(h.ctx, "t"); !reflect.DeepEqual(ids, []uint64{running, other}) {
			t.Errorf("TagJobIDs(t) = %v, want [%d %d]", ids, running, other)
		}
		if ids, _ := h.s.TagJobIDs(h.ctx, "u"); len(ids) != 0 {
			t.Errorf("TagJobIDs(u) = %v, want []", ids)
		}
		if names, _ := h.s.ListQueues(h.ctx); !reflect.DeepEqual(names, []string{"keep"}) {
			t.Errorf("ListQueues = %v, want [keep]", names)
		}
		wantKind(t, "DeleteQueue again", h.s.DeleteQueue(h.ctx, "q"), ocypod.KindNotFound, "")
		_, err := h.s.QueueJobIDs(h.ctx, "q")
		wantKind(t, "QueueJobIDs(deleted)", err, ocypod.KindNotFound, "")

		// The other jobs live on, still counted under the deleted name.
		h.wantStatus(running, ocypod.StatusRunning)
		h.wantStatus(failed, ocypod.StatusFailed)
		h.wantStatus(done, ocypod.StatusCompleted)
		if c, ok := h.info().Queues["q"]; !ok || c != (ocypod.QueueCounts{Running: 1, Failed: 1, Completed: 1}) {
			t.Errorf("Info()[q] = %+v, %v, want running, failed and completed 1", c, ok)
		}
		h.setStatus(running, ocypod.StatusCompleted)
		// A manual requeue needs the queue.
		before := h.snapshot()
		_, _, err = h.s.UpdateJob(h.ctx, failed, ocypod.JobUpdate{Status: status(ocypod.StatusQueued)}, nil)
		wantKind(t, "requeue into a deleted queue", err, ocypod.KindNotFound, "Queue 'q' does not exist")
		h.wantUnchanged("refused requeue", before)

		// Once its last job is gone, the deleted queue leaves /info.
		for _, id := range []uint64{running, failed, done} {
			if err := h.s.DeleteJob(h.ctx, id); err != nil {
				t.Fatalf("DeleteJob(%d) = %v", id, err)
			}
		}
		if _, ok := h.info().Queues["q"]; ok {
			t.Errorf("Info() still lists the deleted queue q without jobs")
		}
		if _, ok := h.info().Queues["keep"]; !ok {
			t.Errorf("Info() lost queue keep")
		}
	}},
}
