package redisstore_test

import (
	"reflect"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

var infoCases = []conformanceCase{
	{name: "info empty", run: func(t *testing.T, h *harness) {
		info := h.info()
		if len(info.Queues) != 0 || info.Statistics != (ocypod.Statistics{}) || info.Queues == nil {
			t.Fatalf("Info() = %+v, want empty", info)
		}
	}},
	{name: "info counts", opts: redisstore.Options{InlineSweep: -1}, run: func(t *testing.T, h *harness) {
		// A retry delay keeps the failed job failed while the others are
		// taken (a take requeues its queue's due retries).
		h.putQueue("a", settings(0, 0, 60, 1, 3600))
		h.putQueue("b", ocypod.DefaultQueueSettings())
		for _, st := range []ocypod.Status{
			ocypod.StatusRunning, ocypod.StatusFailed, ocypod.StatusCompleted,
			ocypod.StatusCancelled, ocypod.StatusTimedOut,
		} {
			seedStatus(h, "a", st, ocypod.JobSpec{})
		}
		// A failed job without retries sits in the ended set: still failed.
		seedStatus(h, "a", ocypod.StatusFailed, ocypod.JobSpec{Retries: u64(0)})
		seedStatus(h, "a", ocypod.StatusQueued, ocypod.JobSpec{})
		seedStatus(h, "a", ocypod.StatusQueued, ocypod.JobSpec{})
		got := h.info()
		want := ocypod.ServerInfo{
			Queues: map[string]ocypod.QueueCounts{
				"a": {Queued: 2, Running: 1, Failed: 2, Completed: 1, Cancelled: 1, TimedOut: 1},
				"b": {},
			},
			Statistics: ocypod.Statistics{Created: 8, Completed: 1, Failed: 2, TimedOut: 1, Cancelled: 1},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Info() = %+v, want %+v", got, want)
		}
	}},
	{name: "namespaces are isolated", run: func(t *testing.T, h *harness) {
		other, err := redisstore.New(h.rdb, redisstore.Options{Namespace: redistest.Namespace(t), Now: h.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		h.putQueue("q", settings(1, 0, 1, 0))
		if _, err := other.PutQueue(h.ctx, "q", settings(100, 0, 100, 0)); err != nil {
			t.Fatal(err)
		}
		id := h.create("q", ocypod.JobSpec{Tags: []string{"t"}})
		oc, err := other.CreateJob(h.ctx, "q", ocypod.JobSpec{Tags: []string{"t"}})
		oid := oc.ID
		if err != nil || id != h.firstID("q") || oid != 1 {
			t.Fatalf("first ids = %d and %d, %v, want 1 in each namespace", id, oid, err)
		}
		h.take("q", id)
		if _, err := other.NextJob(h.ctx, "q"); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(3 * h.job(id).Timeout.Std())
		wantSweep(t, "SweepTimeouts", h.sweepTimeouts(), redisstore.SweepResult{TimedOut: []uint64{id}})
		if st, err := other.JobStatus(h.ctx, oid); err != nil || st != ocypod.StatusRunning {
			t.Fatalf("other namespace's job = %s, %v, want running", st, err)
		}
		if err := h.s.DeleteQueue(h.ctx, "q"); err != nil {
			t.Fatal(err)
		}
		if names, err := other.ListQueues(h.ctx); err != nil || !reflect.DeepEqual(names, []string{"q"}) {
			t.Fatalf("other ListQueues = %v, %v", names, err)
		}
		if info, err := other.Info(h.ctx); err != nil || info.Statistics.Created != 1 || info.Queues["q"].Running != 1 {
			t.Fatalf("other Info = %+v, %v", info, err)
		}
		if ids, _ := other.TagJobIDs(h.ctx, "t"); !reflect.DeepEqual(ids, []uint64{1}) {
			t.Fatalf("other TagJobIDs = %v", ids)
		}
	}},
}
