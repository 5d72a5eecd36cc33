package redisstore_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// queueApart returns a queue name starting with prefix that lives in
// another partition than queue other (the same one with one partition).
func (h *harness) queueApart(prefix, other string) string {
	for i := 0; ; i++ {
		name := prefix + fmt.Sprint(i)
		if h.P == 1 || h.lay.Home(name) != h.lay.Home(other) {
			return name
		}
	}
}

var effectCases = []conformanceCase{
	{name: "update_run_at", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		at := func(secs int) *time.Time { return ptime(t0.Add(time.Duration(secs) * time.Second)) }
		id := h.create("q", ocypod.JobSpec{Key: "k", RunAt: at(100)})
		for _, c := range []struct {
			rule ocypod.UpdateRunAt
			to   *time.Time
			want int // run_at after, in seconds from t0 (0: none)
		}{
			{ocypod.UpdateRunAtIfLater, at(50), 100}, // earlier: kept
			{ocypod.UpdateRunAtIfLater, at(200), 200},
			{ocypod.UpdateRunAtIfEarlier, at(300), 200}, // later: kept
			{ocypod.UpdateRunAtIfEarlier, at(150), 150},
			{ocypod.UpdateRunAtNever, at(10), 150},
			{ocypod.UpdateRunAtNever, nil, 150},
			{ocypod.UpdateRunAtAlways, at(120), 120},
			{ocypod.UpdateRunAtAlways, nil, 0}, // always: none given clears it
		} {
			got, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "k", OnConflict: ocypod.OnConflictUpdate,
				UpdateRunAt: c.rule, RunAt: c.to})
			if err != nil || got.ID != id || !got.Existing {
				t.Fatalf("create %s = %+v, %v", c.rule, got, err)
			}
			j := h.job(id)
			switch {
			case c.want == 0 && j.RunAt != nil:
				t.Errorf("%s with run_at %v: run_at = %v, want none", c.rule, c.to, j.RunAt)
			case c.want != 0 && (j.RunAt == nil || !j.RunAt.Equal(*at(c.want))):
				t.Errorf("%s with run_at %v: run_at = %v, want %v", c.rule, c.to, j.RunAt, at(c.want))
			}
		}
		h.wantStatus(id, ocypod.StatusQueued) // no run_at left: it can be taken
	}},
	{name: "keys", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		a, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "k1", Input: json.RawMessage(`1`)})
		if err != nil || a.Existing {
			t.Fatalf("CreateJob(k1) = %+v, %v", a, err)
		}
		// keep: the pending job answers, nothing changes.
		b, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "k1", Input: json.RawMessage(`2`)})
		if err != nil || b.ID != a.ID || !b.Existing {
			t.Fatalf("CreateJob(k1 again) = %+v, %v", b, err)
		}
		// update: the pending job takes the new fields.
		c, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "k1", Input: json.RawMessage(`3`),
			OnConflict: ocypod.OnConflictUpdate, Priority: i64(4)})
		if j := h.job(a.ID); err != nil || c.ID != a.ID || string(j.Input) != "3" || j.Priority != 4 {
			t.Fatalf("CreateJob(k1, update) = %+v, %v; job %+v", c, err, j)
		}
		// error: 409 naming the job, nothing written.
		before := h.snapshot()
		_, err = h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "k1", OnConflict: ocypod.OnConflictError})
		wantKind(t, "CreateJob(k1, error)", err, ocypod.KindConflict, fmt.Sprintf("Job with key 'k1' already exists: %d", a.ID))
		// A batch is refused whole.
		_, err = h.s.CreateJobs(h.ctx, "q", []ocypod.JobSpec{{}, {Key: "k1", OnConflict: ocypod.OnConflictError}})
		wantKind(t, "CreateJobs(one conflict)", err, ocypod.KindConflict, "")
		h.wantUnchanged("refused keyed creates", before)
		// While the job runs, a new one with its key waits for it.
		h.take("q", a.ID)
		d := h.create("q", ocypod.JobSpec{Key: "k1"})
		h.wantStatus(d, ocypod.StatusWaiting)
		if e := h.create("q", ocypod.JobSpec{Key: "k1"}); e != d {
			t.Fatalf("a second create while one waits = %d, want the waiting %d", e, d)
		}
		page, err := h.s.ListJobs(h.ctx, ocypod.ListRequest{Queue: "q", Key: "k1"})
		if err != nil || len(page.Jobs) != 2 {
			t.Fatalf("ListJobs(key) = %+v, %v", page, err)
		}
		h.setStatus(a.ID, ocypod.StatusFailed) // no retries: it ends
		h.wantStatus(d, ocypod.StatusQueued)
		// The failed job cannot go back to the queue while another holds
		// its key's pending place.
		before = h.snapshot()
		err = h.update(a.ID, ocypod.JobUpdate{Status: status(ocypod.StatusQueued)})
		wantKind(t, "requeue with the key pending", err, ocypod.KindConflict,
			fmt.Sprintf("Job %d cannot be requeued: job %d with the same key is pending", a.ID, d))
		h.wantUnchanged("refused requeue", before)
		// An ended job frees its key.
		h.take("q", d)
		h.complete(d)
		if f := h.create("q", ocypod.JobSpec{Key: "k1"}); f == d || f == a.ID {
			t.Fatalf("create after the key's jobs ended = %d, want a new job", f)
		}
	}},
	{name: "key races", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		var wg sync.WaitGroup
		ids := make([]uint64, 20)
		for i := range ids {
			wg.Go(func() {
				c, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "race"})
				if err != nil {
					t.Error(err)
				}
				ids[i] = c.ID
			})
		}
		wg.Wait()
		if distinct := slices.Compact(slices.Sorted(slices.Values(ids))); len(distinct) != 1 {
			t.Fatalf("20 creates with one key made jobs %v", distinct)
		}
	}},
	{name: "dependencies", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		other := h.queueApart("o", "q")
		h.putQueue(other, settings(60, 0, 60, 0))
		a := h.create("q", ocypod.JobSpec{})
		b := h.create(other, ocypod.JobSpec{})
		c := h.create("q", ocypod.JobSpec{DependsOn: []uint64{a, b}})
		h.wantStatus(c, ocypod.StatusWaiting)
		if j, _ := h.s.GetJob(h.ctx, a); !slices.Equal(j.Dependents, []uint64{c}) {
			t.Fatalf("dependents of %d = %v, want [%d]", a, j.Dependents, c)
		}
		if j := h.job(c); !slices.Equal(j.DependsOn, []uint64{a, b}) {
			t.Fatalf("depends_on = %v", j.DependsOn)
		}
		h.take("q", a)
		h.complete(a)
		h.wantStatus(c, ocypod.StatusWaiting)
		h.take(other, b)
		h.complete(b)
		h.wantStatus(c, ocypod.StatusQueued)
		// A completed dependency counts as done at once.
		d := h.create("q", ocypod.JobSpec{DependsOn: []uint64{a}})
		h.wantStatus(d, ocypod.StatusQueued)
		// A dependency that ends otherwise cancels its dependents, down
		// the chain.
		e := h.create(other, ocypod.JobSpec{})
		f := h.create("q", ocypod.JobSpec{DependsOn: []uint64{e}})
		g := h.create(other, ocypod.JobSpec{DependsOn: []uint64{f}})
		h.setStatus(e, ocypod.StatusCancelled)
		h.wantStatus(f, ocypod.StatusCancelled)
		h.wantStatus(g, ocypod.StatusCancelled)
		if j, _ := h.s.GetJob(h.ctx, f); j.Error == nil || j.Error.Group != "dependency" {
			t.Fatalf("cancelled dependent's error = %+v", j.Error)
		}
		// Unknown ids and cycles are refused, nothing written.
		before := h.snapshot()
		_, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{DependsOn: []uint64{a, 999_999}})
		wantKind(t, "CreateJob(unknown dependency)", err, ocypod.KindInvalid, "Invalid depends_on: job 999999 does not exist")
		h.wantUnchanged("unknown dependency", before)
		x := h.create("q", ocypod.JobSpec{Delay: dur(60)})
		y := h.create("q", ocypod.JobSpec{DependsOn: []uint64{x}})
		before = h.snapshot()
		err = h.update(x, ocypod.JobUpdate{DependsOn: []uint64{y}, DependsOnSet: true})
		wantKind(t, "UpdateJob(cycle)", err, ocypod.KindInvalid, "")
		err = h.update(x, ocypod.JobUpdate{DependsOn: []uint64{x}, DependsOnSet: true})
		wantKind(t, "UpdateJob(self)", err, ocypod.KindInvalid, "")
		h.wantUnchanged("refused dependencies", before)
		// Deleting a dependency cancels the waiting job.
		if err := h.s.DeleteJob(h.ctx, x); err != nil {
			t.Fatal(err)
		}
		h.wantStatus(y, ocypod.StatusCancelled)
	}},
	{name: "next and dead letters", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		dl := h.queueApart("dead", "q")
		h.putQueue(dl, settings(60, 0, 60, 0))
		nq := h.queueApart("next", "q")
		h.putQueue(nq, settings(60, 0, 60, 0))
		a := h.create("q", ocypod.JobSpec{Input: json.RawMessage(`{"n":1}`)})
		h.take("q", a)
		res, _, err := h.s.UpdateJob(h.ctx, a, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted),
			Next: &ocypod.NextJobSpec{Queue: nq, Spec: ocypod.JobSpec{Input: json.RawMessage(`{"n":2}`)}}}, nil)
		if err != nil || res.NextID == 0 {
			t.Fatalf("UpdateJob(next) = %+v, %v", res, err)
		}
		if j := h.job(res.NextID); j.Queue != nq || string(j.Input) != `{"n":2}` || j.Status != ocypod.StatusQueued {
			t.Fatalf("next job = %+v", j)
		}
		// A next into a missing queue applies nothing.
		b := h.create("q", ocypod.JobSpec{})
		h.take("q", b)
		_, _, err = h.s.UpdateJob(h.ctx, b, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted),
			Next: &ocypod.NextJobSpec{Queue: "missing"}}, nil)
		wantKind(t, "UpdateJob(next into a missing queue)", err, ocypod.KindNotFound, "Queue 'missing' does not exist")
		h.wantStatus(b, ocypod.StatusRunning)

		if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{DeadLetterQueue: &dl}); err != nil {
			t.Fatal(err)
		}
		h.setStatus(b, ocypod.StatusFailed)
		ids := h.queueIDs(dl).Queued
		if len(ids) != 1 {
			t.Fatalf("dead letter queue holds %v", ids)
		}
		var in struct {
			Job   map[string]any `json:"job"`
			Error any            `json:"error"`
		}
		if err := json.Unmarshal(h.job(ids[0]).Input, &in); err != nil || in.Job["id"] != float64(b) || in.Job["status"] != "failed" {
			t.Fatalf("dead letter input = %s (%v)", h.job(ids[0]).Input, err)
		}
		// Only jobs that end for good; once.
		h.sweepRetries()
		if got := h.queueIDs(dl).Queued; len(got) != 1 {
			t.Fatalf("dead letter queue holds %v after a sweep", got)
		}
	}},
	{name: "outbox survives a crash", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		other := h.queueApart("o", "q")
		h.putQueue(other, settings(60, 0, 60, 0))
		a := h.create("q", ocypod.JobSpec{})
		b := h.create(other, ocypod.JobSpec{DependsOn: []uint64{a}})
		h.take("q", a)
		// The process dies right after the completion's script: its
		// effects stay in the outbox.
		redisstore.SetCrashAfterCall(h.s, true)
		h.complete(a)
		redisstore.SetCrashAfterCall(h.s, false)
		if h.P == 1 {
			h.wantStatus(b, ocypod.StatusQueued) // same partition: applied in the script itself
			return
		}
		h.wantStatus(b, ocypod.StatusWaiting)
		// Too fresh for the sweep: the request may still apply it.
		if r, err := h.s.SweepOutbox(h.ctx); err != nil || r.Other != 0 {
			t.Fatalf("SweepOutbox (fresh) = %+v, %v", r, err)
		}
		h.clock.Advance(time.Minute)
		for range 2 { // twice over: applied once
			if _, err := h.s.SweepOutbox(h.ctx); err != nil {
				t.Fatal(err)
			}
		}
		h.wantStatus(b, ocypod.StatusQueued)
		if got := h.takeIDs(other, 5); !slices.Equal(got, []uint64{b}) {
			t.Fatalf("take = %v, want [%d] once", got, b)
		}
		// A next whose create is re-applied after a crash makes one job.
		c := h.create("q", ocypod.JobSpec{})
		h.take("q", c)
		redisstore.SetCrashAfterCall(h.s, true)
		_, _, err := h.s.UpdateJob(h.ctx, c, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted),
			Next: &ocypod.NextJobSpec{Queue: other}}, nil)
		redisstore.SetCrashAfterCall(h.s, false)
		if err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(time.Minute)
		for range 2 {
			if _, err := h.s.SweepOutbox(h.ctx); err != nil {
				t.Fatal(err)
			}
		}
		if got := h.queueIDs(other).Queued; len(got) != 1 {
			t.Fatalf("queue %s holds %v, want the one follow-up job", other, got)
		}
	}},
}
