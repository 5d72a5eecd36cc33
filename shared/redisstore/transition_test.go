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

var transitionCases = []conformanceCase{
	{name: "transition table", opts: redisstore.Options{InlineSweep: -1}, run: func(t *testing.T, h *harness) {
		// retries 1 so that failed/timed_out jobs wait in the failed set,
		// expires 60s so that ended jobs have a finite expiry.
		h.putQueue("q", settings(0, 0, 60, 1))
		for _, from := range ocypod.Statuses {
			for _, to := range ocypod.Statuses {
				id := seedStatus(h, "q", from, ocypod.JobSpec{Tags: []string{"tag"}})
				stats := h.info().Statistics
				before := h.snapshot()
				_, _, err := h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Status: &to}, nil)
				what := fmt.Sprintf("UpdateJob(%s job -> %s)", from, to)
				if !ocypod.CanTransition(from, to) {
					wantKind(t, what, err, ocypod.KindConflict, fmt.Sprintf("Cannot change status from %s to %s", from, to))
					h.wantUnchanged(what, before)
					continue
				}
				if err != nil {
					t.Fatalf("%s = %v", what, err)
				}
				h.wantStatus(id, to)
				checkEffects(t, h, what, id, to, stats)
			}
		}
	}},
	{name: "transition effects", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(0, 0, 60, 0))
		id := h.create("q", ocypod.JobSpec{})
		h.clock.Advance(time.Second)
		h.take("q", id)
		h.clock.Advance(time.Second)
		h.setStatus(id, ocypod.StatusCompleted)
		j := h.job(id)
		if !reflect.DeepEqual(j.EndedAt, ptime(t0.Add(2*time.Second))) || !j.Ended() {
			t.Fatalf("completed job = ended_at %v ended %v, want %v true", j.EndedAt, j.Ended(), t0.Add(2*time.Second))
		}
		// No retries: a failed job ends at once (ended set), and a cancel
		// does not duplicate it there.
		id = seedStatus(h, "q", ocypod.StatusFailed, ocypod.JobSpec{})
		if !h.job(id).Ended() {
			t.Fatalf("failed job without retries: Ended() = false")
		}
		h.clock.Advance(time.Second)
		h.setStatus(id, ocypod.StatusCancelled)
		j = h.job(id)
		if !reflect.DeepEqual(j.EndedAt, ptime(t0.Add(3*time.Second))) {
			t.Fatalf("cancel: ended_at = %v, want %v", j.EndedAt, t0.Add(3*time.Second))
		}
		if n := h.rdb.ZCard(h.ctx, h.partKey(id, "exp")).Val(); n < 1 {
			t.Fatalf("expiry index holds %d entries, want the cancelled job", n)
		}
	}},
	{name: "transition requeue clears the run", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(0, 0, 60, 2))
		id := h.create("q", ocypod.JobSpec{Input: json.RawMessage(`{"in":1}`)})
		other := h.create("q", ocypod.JobSpec{})
		h.take("q", id)
		h.clock.Advance(time.Second)
		if err := h.s.Heartbeat(h.ctx, id, nil); err != nil {
			t.Fatal(err)
		}
		if err := h.s.SetJobOutput(h.ctx, id, json.RawMessage(`"partial"`), nil); err != nil {
			t.Fatal(err)
		}
		h.setStatus(id, ocypod.StatusFailed)
		retried := h.info().Statistics.Retried
		h.setStatus(id, ocypod.StatusQueued)
		j := h.job(id)
		want := &ocypod.Job{
			ID: id, Queue: "q", Status: ocypod.StatusQueued, CreatedAt: t0, Input: json.RawMessage(`{"in":1}`),
			ExpiresAfter: ocypod.Seconds(60), Retries: 2,
		}
		if !reflect.DeepEqual(j, want) {
			t.Fatalf("requeued job = %+v, want %+v", j, want)
		}
		if r := h.info().Statistics.Retried; r != retried+1 {
			t.Errorf("retried = %d, want %d", r, retried+1)
		}
		// Back of the queue, behind the job that was already waiting.
		if ids := h.queueIDs("q").Queued; !reflect.DeepEqual(ids, []uint64{other, id}) {
			t.Fatalf("queued = %v, want [%d %d]", ids, other, id)
		}
	}},
	{name: "transition output with status change", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(0, 0, 60, 1))
		id := seedStatus(h, "q", ocypod.StatusFailed, ocypod.JobSpec{})
		before := h.snapshot()
		// Legal transition, but output needs a running job: 409, nothing written.
		_, _, err := h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Status: status(ocypod.StatusQueued), Output: json.RawMessage(`1`)}, nil)
		wantKind(t, "UpdateJob(queued + output)", err, ocypod.KindConflict, "Can only set output for running jobs")
		h.wantUnchanged("refused update", before)
		// Output on a running job with an illegal transition: 409, nothing written.
		run := seedStatus(h, "q", ocypod.StatusRunning, ocypod.JobSpec{})
		before = h.snapshot()
		_, _, err = h.s.UpdateJob(h.ctx, run, ocypod.JobUpdate{Status: status(ocypod.StatusQueued), Output: json.RawMessage(`1`)}, nil)
		wantKind(t, "UpdateJob(running -> queued + output)", err, ocypod.KindConflict, "Cannot change status from running to queued")
		h.wantUnchanged("refused update", before)
	}},
}

// checkEffects checks the side effects of a successful status change of job
// id to status to; stats are the statistics before it.
func checkEffects(t *testing.T, h *harness, what string, id uint64, to ocypod.Status, stats ocypod.Statistics) {
	t.Helper()
	j := h.job(id)
	got := h.info().Statistics
	want := stats
	switch to {
	case ocypod.StatusCompleted:
		want.Completed++
	case ocypod.StatusFailed:
		want.Failed++
	case ocypod.StatusTimedOut:
		want.TimedOut++
	case ocypod.StatusCancelled:
		want.Cancelled++
	case ocypod.StatusQueued:
		want.Retried++
	}
	if got != want {
		t.Errorf("%s: statistics = %+v, want %+v", what, got, want)
	}
	switch to {
	case ocypod.StatusQueued:
		if j.StartedAt != nil || j.EndedAt != nil || j.LastHeartbeat != nil || j.Output != nil {
			t.Errorf("%s: requeued job keeps run fields: %+v", what, j)
		}
	default:
		if !reflect.DeepEqual(j.EndedAt, ptime(h.clock.Now())) {
			t.Errorf("%s: ended_at = %v, want now", what, j.EndedAt)
		}
	}
	h.checkInvariants()
}
