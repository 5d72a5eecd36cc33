package redisstore_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

func i64(n int64) *int64 { return &n }
func yes() *bool         { b := true; return &b }
func no() *bool          { b := false; return &b }

// takeIDs takes up to n jobs of queue and returns their ids.
func (h *harness) takeIDs(queue string, n int) []uint64 {
	h.t.Helper()
	jobs, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{queue}, Count: n})
	if err != nil {
		h.t.Fatalf("Take(%q, %d) = %v", queue, n, err)
	}
	var ids []uint64
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

func (h *harness) complete(id uint64) {
	h.t.Helper()
	h.setStatus(id, ocypod.StatusCompleted)
}

var jobModelCases = []conformanceCase{
	{name: "priority order", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		var ids []uint64
		for _, p := range []int64{0, 5, -3, 5, 0, 1000000, -1000000} {
			ids = append(ids, h.create("q", ocypod.JobSpec{Priority: i64(p)}))
		}
		// Highest first, FIFO within a priority.
		want := []uint64{ids[5], ids[1], ids[3], ids[0], ids[4], ids[2], ids[6]}
		if got := h.queueIDs("q").Queued; !slices.Equal(got, want) {
			t.Fatalf("queued = %v, want %v", got, want)
		}
		// A requeued job goes to the back of its priority.
		first := h.takeIDs("q", 1)[0]
		h.setStatus(first, ocypod.StatusCancelled)
		h.setStatus(first, ocypod.StatusQueued)
		late := h.create("q", ocypod.JobSpec{Priority: i64(1000000)})
		if got := h.takeIDs("q", 3); !slices.Equal(got, []uint64{first, late, ids[1]}) {
			t.Fatalf("take after requeue = %v, want %v", got, []uint64{first, late, ids[1]})
		}
		if j, _ := h.s.GetJob(h.ctx, ids[2]); j.Priority != -3 {
			t.Fatalf("priority = %d, want -3", j.Priority)
		}
	}},
	{name: "scheduled jobs", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		later := h.create("q", ocypod.JobSpec{Delay: dur(10)})
		at := h.create("q", ocypod.JobSpec{RunAt: ptime(t0.Add(5 * time.Second))})
		now := h.create("q", ocypod.JobSpec{RunAt: ptime(t0.Add(-time.Hour))})
		h.wantStatus(later, ocypod.StatusScheduled)
		h.wantStatus(now, ocypod.StatusQueued)
		if j := h.job(later); j.Ended() || j.RunAt == nil || !j.RunAt.Equal(t0.Add(10*time.Second)) {
			t.Fatalf("scheduled job = %+v", j)
		}
		if ids := h.queueIDs("q"); !slices.Equal(ids.Scheduled, []uint64{min(later, at), max(later, at)}) {
			t.Fatalf("scheduled ids = %v", ids.Scheduled)
		}
		if got := h.takeIDs("q", 5); !slices.Equal(got, []uint64{now}) {
			t.Fatalf("take = %v, want only the due job", got)
		}
		// Due: taken at once, no sweep needed, in take order.
		h.clock.Advance(10 * time.Second)
		if got := h.takeIDs("q", 5); !slices.Equal(got, []uint64{later, at}) && !slices.Equal(got, []uint64{at, later}) {
			t.Fatalf("take when due = %v, want %d and %d", got, later, at)
		}
		// The sweep moves a due job that nobody takes.
		x := h.create("q", ocypod.JobSpec{Delay: dur(1)})
		h.clock.Advance(2 * time.Second)
		wantSweep(t, "SweepRetries", h.sweepRetries(), redisstore.SweepResult{Promoted: []uint64{x}})
		h.wantStatus(x, ocypod.StatusQueued)
		// Scheduled jobs can be cancelled and deleted.
		y := h.create("q", ocypod.JobSpec{Delay: dur(60)})
		z := h.create("q", ocypod.JobSpec{Delay: dur(60)})
		h.setStatus(y, ocypod.StatusCancelled)
		if err := h.s.DeleteJob(h.ctx, z); err != nil {
			t.Fatal(err)
		}
		_, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Delay: dur(1), RunAt: ptime(t0)})
		wantKind(t, "CreateJob(run_at and delay)", err, ocypod.KindInvalid, "")
		// A take that finds nothing due remembers when the next job falls
		// due; a job scheduled before that, or after nothing was left, is
		// still taken as soon as it is due.
		h.putQueue("r", settings(60, 0, 60, 0))
		w := h.create("r", ocypod.JobSpec{Delay: dur(30)})
		if got := h.takeIDs("r", 5); len(got) != 0 {
			t.Fatalf("take before anything is due = %v", got)
		}
		v := h.create("r", ocypod.JobSpec{Delay: dur(5)})
		h.clock.Advance(6 * time.Second)
		if got := h.takeIDs("r", 5); !slices.Equal(got, []uint64{v}) {
			t.Fatalf("take = %v, want %d, scheduled after the last take for earlier", got, v)
		}
		h.clock.Advance(30 * time.Second)
		if got := h.takeIDs("r", 5); !slices.Equal(got, []uint64{w}) {
			t.Fatalf("take = %v, want %d", got, w)
		}
		if got := h.takeIDs("r", 5); len(got) != 0 {
			t.Fatalf("take of an empty queue = %v", got)
		}
		u := h.create("r", ocypod.JobSpec{Delay: dur(1)})
		h.clock.Advance(2 * time.Second)
		if got := h.takeIDs("r", 5); !slices.Equal(got, []uint64{u}) {
			t.Fatalf("take = %v, want %d, scheduled after the queue was empty", got, u)
		}
	}},
	{name: "retry backoff and budgets", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 600, 3))
		id := h.create("q", ocypod.JobSpec{RetryBackoff: &ocypod.Backoff{
			Min: ocypod.Seconds(2), Max: ocypod.Seconds(10), Factor: 3}})
		// Delays 2, 6, then 10 (capped); no jitter asked.
		for _, delay := range []time.Duration{2, 6, 10} {
			h.take("q", id)
			h.setStatus(id, ocypod.StatusFailed)
			h.clock.Advance(delay*time.Second - time.Millisecond)
			if got := h.takeIDs("q", 1); len(got) != 0 {
				t.Fatalf("retry taken %v before its %ds delay", got, delay)
			}
			h.clock.Advance(time.Millisecond)
		}
		h.take("q", id)
		h.setStatus(id, ocypod.StatusFailed)
		if j := h.job(id); !j.Ended() || j.RetriesAttempted != 3 {
			t.Fatalf("job after 4 failures = %+v, want ended with 3 retries", j)
		}
		// Jitter: the harness's random source is 0.5, so half the delay.
		j2 := h.create("q", ocypod.JobSpec{RetryBackoff: &ocypod.Backoff{Min: ocypod.Seconds(4), Max: ocypod.Seconds(4), Factor: 2, Jitter: true}})
		h.take("q", j2)
		h.setStatus(j2, ocypod.StatusFailed)
		h.clock.Advance(2 * time.Second)
		h.take("q", j2)

		// Timed-out attempts draw from timeout_retries, failures from retries.
		h.putQueue("t", settings(1, 0, 600, 1))
		x := h.create("t", ocypod.JobSpec{TimeoutRetries: u64(2)})
		for range 2 {
			h.take("t", x)
			h.clock.Advance(2 * time.Second)
			h.sweepTimeouts()
			h.wantStatus(x, ocypod.StatusTimedOut)
			if h.job(x).Ended() {
				t.Fatalf("timed out job ended with timeout retries left")
			}
		}
		h.take("t", x)
		h.setStatus(x, ocypod.StatusFailed) // the one failure retry
		h.take("t", x)
		h.clock.Advance(2 * time.Second)
		h.sweepTimeouts()
		if j := h.job(x); !j.Ended() || j.RetriesAttempted != 3 || *j.TimeoutRetries != 2 {
			t.Fatalf("job = %+v, want ended after 2 timeout retries and 1 failure retry", j)
		}

		// A permanent failure ends the job whatever is left.
		y := h.create("q", ocypod.JobSpec{})
		h.take("q", y)
		if err := h.update(y, ocypod.JobUpdate{Status: status(ocypod.StatusFailed), Retry: no(),
			Error: &ocypod.JobError{Group: "bad-input", Message: "no such file"}}); err != nil {
			t.Fatal(err)
		}
		if j, _ := h.s.GetJob(h.ctx, y); !j.Ended() || j.Error == nil || j.Error.Group != "bad-input" {
			t.Fatalf("permanently failed job = %+v", j)
		}
		// retry_in overrides the policy's delay.
		z := h.create("q", ocypod.JobSpec{RetryDelays: durs(1)})
		h.take("q", z)
		if err := h.update(z, ocypod.JobUpdate{Status: status(ocypod.StatusFailed), RetryIn: dur(30)}); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(29 * time.Second)
		if got := h.takeIDs("q", 1); len(got) != 0 {
			t.Fatalf("retry taken before retry_in")
		}
		h.clock.Advance(time.Second)
		h.take("q", z)
	}},
	{name: "fencing", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(1, 0, 60, 1))
		id := h.create("q", ocypod.JobSpec{})
		jobs, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"q"}, Worker: "w1"})
		if err != nil || len(jobs) != 1 || jobs[0].Attempt != 1 || jobs[0].Queue != "q" {
			t.Fatalf("Take = %+v, %v", jobs, err)
		}
		h.clock.Advance(2 * time.Second)
		h.sweepTimeouts()
		h.clock.Advance(time.Second)
		h.take("q", id) // attempt 2
		before := h.snapshot()
		stale := u64(1)
		want := fmt.Sprintf("Job %d attempt 1 is not current", id)
		wantKind(t, "Heartbeat(stale)", h.s.Heartbeat(h.ctx, id, stale), ocypod.KindConflict, want)
		wantKind(t, "SetJobOutput(stale)", h.s.SetJobOutput(h.ctx, id, json.RawMessage(`1`), stale), ocypod.KindConflict, want)
		wantKind(t, "UpdateJob(stale)", h.update(id, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted), Attempt: stale}),
			ocypod.KindConflict, want)
		h.wantUnchanged("stale attempts", before)
		if err := h.update(id, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted), Attempt: u64(2)}); err != nil {
			t.Fatal(err)
		}
		j, _ := h.s.GetJob(h.ctx, id)
		if len(j.History) != 2 || j.History[0].Status != ocypod.StatusTimedOut || j.History[0].Worker != "w1" ||
			j.History[1].Status != ocypod.StatusCompleted || j.Attempt != 2 {
			t.Fatalf("history = %+v, attempt %d", j.History, j.Attempt)
		}
	}},
	{name: "history keeps each attempt's error", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(5, 0, 60, 3))
		id := h.create("q", ocypod.JobSpec{})
		h.take("q", id)
		if err := h.update(id, ocypod.JobUpdate{Status: status(ocypod.StatusFailed), Error: &ocypod.JobError{Message: "flaky"}}); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(time.Second)
		h.take("q", id) // attempt 2 times out, with no error of its own
		h.clock.Advance(7 * time.Second)
		h.sweepTimeouts()
		h.clock.Advance(time.Second)
		h.take("q", id) // attempt 3 fails for good
		if err := h.update(id, ocypod.JobUpdate{Status: status(ocypod.StatusFailed), Retry: new(false),
			Error: &ocypod.JobError{Group: "io", Message: "disk"}}); err != nil {
			t.Fatal(err)
		}
		j, err := h.s.GetJob(h.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		hist := j.History
		if len(hist) != 3 || hist[0].Error == nil || hist[0].Error.Message != "flaky" || hist[0].Status != ocypod.StatusFailed ||
			hist[1].Error != nil || hist[1].Status != ocypod.StatusTimedOut ||
			hist[2].Error == nil || *hist[2].Error != (ocypod.JobError{Group: "io", Message: "disk"}) {
			t.Fatalf("history = %+v", hist)
		}
		if j.Error == nil || *j.Error != (ocypod.JobError{Group: "io", Message: "disk"}) {
			t.Fatalf("error = %+v", j.Error)
		}
	}},
	{name: "batch and multi-queue takes", run: func(t *testing.T, h *harness) {
		h.putQueue("a", settings(60, 0, 60, 0))
		h.putQueue("b", settings(60, 0, 60, 0))
		a := []uint64{h.create("a", ocypod.JobSpec{}), h.create("a", ocypod.JobSpec{})}
		b := []uint64{h.create("b", ocypod.JobSpec{}), h.create("b", ocypod.JobSpec{})}
		jobs, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"a", "b"}, Count: 3})
		if err != nil || len(jobs) != 3 || jobs[0].ID != a[0] || jobs[1].ID != a[1] || jobs[2].ID != b[0] || jobs[2].Queue != "b" {
			t.Fatalf("Take(a,b ordered, 3) = %+v, %v", jobs, err)
		}
		_, err = h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"b", "nope"}})
		wantKind(t, "Take(missing queue)", err, ocypod.KindNotFound, "Queue 'nope' does not exist")
		h.wantStatus(b[1], ocypod.StatusQueued)
		// Complete and take the next in one call.
		res, next, err := h.s.UpdateJob(h.ctx, a[0], ocypod.JobUpdate{Status: status(ocypod.StatusCompleted)},
			&ocypod.TakeRequest{Queues: []string{"b"}, Worker: "w"})
		if err != nil || len(next) != 1 || next[0].ID != b[1] || res.NextID != 0 {
			t.Fatalf("UpdateJob(complete, take b) = %+v, %+v, %v", res, next, err)
		}
		h.wantStatus(a[0], ocypod.StatusCompleted)
		// A refused PATCH takes nothing.
		c := h.create("b", ocypod.JobSpec{})
		_, next, err = h.s.UpdateJob(h.ctx, a[0], ocypod.JobUpdate{Status: status(ocypod.StatusCompleted)},
			&ocypod.TakeRequest{Queues: []string{"b"}})
		wantKind(t, "UpdateJob(completed twice, take)", err, ocypod.KindConflict, "")
		if len(next) != 0 {
			t.Fatalf("a refused PATCH took %v", next)
		}
		h.wantStatus(c, ocypod.StatusQueued)
	}},
	{name: "queue controls", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		for range 6 {
			h.create("q", ocypod.JobSpec{})
		}
		patch := func(p ocypod.QueuePatch) {
			t.Helper()
			if err := h.s.PatchQueue(h.ctx, "q", p); err != nil {
				t.Fatalf("PatchQueue = %v", err)
			}
		}
		patch(ocypod.QueuePatch{Paused: yes()})
		if got := h.takeIDs("q", 5); len(got) != 0 {
			t.Fatalf("paused queue gave %v", got)
		}
		patch(ocypod.QueuePatch{Paused: no(), Concurrency: u64(2)})
		got := h.takeIDs("q", 5)
		if len(got) != 2 {
			t.Fatalf("concurrency 2 gave %v", got)
		}
		h.complete(got[0])
		if more := h.takeIDs("q", 5); len(more) != 1 {
			t.Fatalf("after one completion: %v, want one more", more)
		}
		patch(ocypod.QueuePatch{Concurrency: u64(0), RateLimit: &ocypod.RateLimit{PerSecond: 2, Burst: 2}})
		if got := h.takeIDs("q", 5); len(got) != 2 {
			t.Fatalf("rate 2/s burst 2 gave %d jobs", len(got))
		}
		h.clock.Advance(500 * time.Millisecond)
		if got := h.takeIDs("q", 5); len(got) != 1 {
			t.Fatalf("half a second later: %d jobs, want 1", len(got))
		}
		qs, err := h.s.GetQueue(h.ctx, "q")
		if err != nil || qs.Paused || qs.RateLimit == nil || qs.RateLimit.Burst != 2 || qs.Timeout != ocypod.Seconds(60) {
			t.Fatalf("GetQueue = %+v, %v", qs, err)
		}
		// PUT resets Ocypod's settings and keeps the extension's.
		h.putQueue("q", ocypod.DefaultQueueSettings())
		if qs, _ := h.s.GetQueue(h.ctx, "q"); qs.RateLimit == nil || qs.Timeout != ocypod.Seconds(300) {
			t.Fatalf("GetQueue after PUT = %+v", qs)
		}
		wantKind(t, "PatchQueue(missing)", h.s.PatchQueue(h.ctx, "nope", ocypod.QueuePatch{Paused: yes()}),
			ocypod.KindNotFound, "Queue 'nope' does not exist")
		wantKind(t, "PatchQueue(shards 0)", h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Shards: u64(0)}),
			ocypod.KindInvalid, "")
	}},
	{name: "retry endpoint", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 2))
		id := h.create("q", ocypod.JobSpec{})
		_, err := h.s.RetryJob(h.ctx, id, nil)
		wantKind(t, "RetryJob(queued)", err, ocypod.KindConflict, "")
		h.take("q", id)
		r, err := h.s.RetryJob(h.ctx, id, nil) // from running: the attempt fails
		if err != nil || r.Status != ocypod.StatusQueued || r.RetriesAttempted != 1 {
			t.Fatalf("RetryJob(running) = %+v, %v", r, err)
		}
		h.take("q", id)
		h.setStatus(id, ocypod.StatusCancelled)
		at := t0.Add(time.Minute)
		r, err = h.s.RetryJob(h.ctx, id, &at)
		if err != nil || r.Status != ocypod.StatusScheduled || r.RetriesAttempted != 2 {
			t.Fatalf("RetryJob(cancelled, run_at) = %+v, %v", r, err)
		}
		h.clock.Advance(time.Minute)
		h.take("q", id)
		r, err = h.s.RetryJob(h.ctx, id, nil) // no retry left
		if err != nil || r.Status != ocypod.StatusFailed || r.RetriesAttempted != 2 || !h.job(id).Ended() {
			t.Fatalf("RetryJob(no retry left) = %+v, %v", r, err)
		}
	}},
	{name: "in-place changes", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		a := h.create("q", ocypod.JobSpec{Tags: []string{"x"}})
		b := h.create("q", ocypod.JobSpec{})
		if err := h.update(b, ocypod.JobUpdate{Priority: i64(9)}); err != nil {
			t.Fatal(err)
		}
		if got := h.queueIDs("q").Queued; !slices.Equal(got, []uint64{b, a}) {
			t.Fatalf("after priority change: %v", got)
		}
		if err := h.update(b, ocypod.JobUpdate{Delay: dur(30)}); err != nil {
			t.Fatal(err)
		}
		h.wantStatus(b, ocypod.StatusScheduled)
		if err := h.update(a, ocypod.JobUpdate{Tags: []string{"y", "z"}, TagsSet: true, Tracked: yes()}); err != nil {
			t.Fatal(err)
		}
		if ids, _ := h.s.TagJobIDs(h.ctx, "x"); len(ids) != 0 {
			t.Fatalf("old tag still lists %v", ids)
		}
		if ids, _ := h.s.TagJobIDs(h.ctx, "z"); !slices.Equal(ids, []uint64{a}) {
			t.Fatalf("new tag lists %v", ids)
		}
		h.take("q", a)
		err := h.update(a, ocypod.JobUpdate{Priority: i64(1)})
		wantKind(t, "UpdateJob(priority of running)", err, ocypod.KindConflict, "")
		if err := h.update(a, ocypod.JobUpdate{Tracked: no()}); err != nil {
			t.Fatalf("untrack a running job = %v", err)
		}
	}},
	{name: "ids stay below 2^53", run: func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		p := h.lay.Home("q")
		h.do("HSET", h.lay.Key(p, "ctr"), "id", (1<<53)/h.P-1)
		before := h.snapshot()
		_, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{})
		wantKind(t, "CreateJob(ids exhausted)", err, ocypod.KindStorageFull, "")
		h.wantUnchanged("refused create", before)
		if q, _ := h.s.QueueJobIDs(h.ctx, "q"); len(q.Queued) != 0 {
			t.Fatalf("job ids = %+v", q)
		}
	}},
}
