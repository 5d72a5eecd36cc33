package redisstore_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// ms is t to the millisecond, as sweep scores are kept.
func ms(t time.Time) time.Time { return t.Truncate(time.Millisecond) }

// wantSweep compares the parts of a sweep result that matter.
func wantSweep(t *testing.T, what string, got, want redisstore.SweepResult) {
	t.Helper()
	norm := func(r redisstore.SweepResult) redisstore.SweepResult {
		for _, l := range []*[]uint64{&r.TimedOut, &r.Retried, &r.Abandoned, &r.Expired, &r.Dropped} {
			if len(*l) == 0 {
				*l = nil
			}
		}
		return r
	}
	if g, w := norm(got), norm(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("%s = %+v, want %+v", what, g, w)
	}
}

var sweepCases = []conformanceCase{
	{name: "sweep empty", run: func(t *testing.T, h *harness) {
		for name, r := range map[string]redisstore.SweepResult{
			"SweepTimeouts": h.sweepTimeouts(), "SweepRetries": h.sweepRetries(), "SweepExpiry": h.sweepExpiry(),
		} {
			wantSweep(t, name, r, redisstore.SweepResult{})
		}
	}},
	{name: "sweep timeouts", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(0, 0, 60, 0))
		a := h.create("q", ocypod.JobSpec{Timeout: dur(1)})
		b := h.create("q", ocypod.JobSpec{HeartbeatTimeout: dur(2)})
		c := h.create("q", ocypod.JobSpec{})                                           // no timeout at all
		d := h.create("q", ocypod.JobSpec{Timeout: dur(10), HeartbeatTimeout: dur(2)}) // heartbeats keep it alive until 11s
		for _, id := range []uint64{a, b, c, d} {
			h.take("q", id)
		}
		h.clock.Advance(time.Second)
		for _, id := range []uint64{b, d} {
			if err := h.s.Heartbeat(h.ctx, id, nil); err != nil {
				t.Fatal(err)
			}
		}
		// Ocypod's rule is strict: a 1s timeout fires once 2 whole seconds passed.
		h.clock.Advance(999 * time.Millisecond)
		wantSweep(t, "SweepTimeouts at +1.999s", h.sweepTimeouts(), redisstore.SweepResult{NextDue: ms(t0.Add(2 * time.Second))})
		h.clock.Advance(time.Millisecond)
		wantSweep(t, "SweepTimeouts at +2s", h.sweepTimeouts(), redisstore.SweepResult{
			TimedOut: []uint64{a}, NextDue: ms(t0.Add(4 * time.Second)),
		})
		j := h.job(a)
		if j.Status != ocypod.StatusTimedOut || !j.Ended() || !reflect.DeepEqual(j.EndedAt, ptime(t0.Add(2*time.Second))) {
			t.Fatalf("timed-out job = %+v, want timed_out, ended at +2s", j)
		}
		// d heartbeats every 2s; its timeout still fires at 11s.
		for now := 3; now <= 10; now++ {
			h.clock.Advance(time.Second)
			if now%2 == 1 {
				if err := h.s.Heartbeat(h.ctx, d, nil); err != nil {
					t.Fatal(err)
				}
			}
			r := h.sweepTimeouts()
			if now == 4 {
				wantSweep(t, "SweepTimeouts at +4s", r, redisstore.SweepResult{TimedOut: []uint64{b}, NextDue: ms(t0.Add(6 * time.Second))})
				continue
			}
			if len(r.TimedOut) != 0 {
				t.Fatalf("SweepTimeouts at +%ds = %+v, want nothing", now, r)
			}
		}
		h.clock.Advance(time.Second)
		wantSweep(t, "SweepTimeouts at +11s", h.sweepTimeouts(), redisstore.SweepResult{TimedOut: []uint64{d}})
		h.clock.Advance(1000 * time.Hour)
		wantSweep(t, "SweepTimeouts much later", h.sweepTimeouts(), redisstore.SweepResult{})
		h.wantStatus(c, ocypod.StatusRunning)
		if s := h.info().Statistics; s.TimedOut != 3 {
			t.Errorf("timed_out = %d, want 3", s.TimedOut)
		}
	}},
	{name: "sweep batches", opts: redisstore.Options{SweepBatch: 2}, run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(1, 0, 60, 0))
		var ids []uint64
		for range 5 {
			ids = append(ids, h.create("q", ocypod.JobSpec{}))
			h.next("q")
		}
		h.clock.Advance(2 * time.Second)
		var got []uint64
		for i, more := range []bool{true, true, false} {
			r := h.sweepTimeouts()
			if r.More != more || len(r.TimedOut) != 2-i/2 {
				t.Fatalf("SweepTimeouts #%d = %+v, want more=%v", i+1, r, more)
			}
			got = append(got, r.TimedOut...)
		}
		slices.Sort(got)
		if !reflect.DeepEqual(got, ids) {
			t.Fatalf("timed out %v, want each of %v once", got, ids)
		}
	}},
	{name: "sweep timeout then retry", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(1, 0, 60, 1))
		id := h.create("q", ocypod.JobSpec{})
		h.take("q", id)
		h.clock.Advance(2 * time.Second)
		wantSweep(t, "SweepTimeouts", h.sweepTimeouts(), redisstore.SweepResult{TimedOut: []uint64{id}})
		if j := h.job(id); j.Ended() {
			t.Fatalf("timed-out job with a retry left reports ended")
		}
		wantSweep(t, "SweepRetries", h.sweepRetries(), redisstore.SweepResult{Retried: []uint64{id}})
		h.take("q", id)
		if j := h.job(id); j.RetriesAttempted != 1 || !reflect.DeepEqual(j.StartedAt, ptime(t0.Add(2*time.Second))) {
			t.Fatalf("retried job = %+v, want attempt 1 started at +2s", j)
		}
		h.clock.Advance(2 * time.Second)
		wantSweep(t, "SweepTimeouts again", h.sweepTimeouts(), redisstore.SweepResult{TimedOut: []uint64{id}, NextDue: time.Time{}})
		wantSweep(t, "SweepRetries when exhausted", h.sweepRetries(), redisstore.SweepResult{})
		if j := h.job(id); !j.Ended() || j.Status != ocypod.StatusTimedOut {
			t.Fatalf("exhausted job = %+v, want timed_out and ended", j)
		}
	}},
	{name: "sweep retry delays", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(0, 0, 30, 3, 10, 20))
		id := h.create("q", ocypod.JobSpec{Tags: []string{"x"}})
		var ended time.Time
		for attempt, delay := range []time.Duration{10 * time.Second, 20 * time.Second, 20 * time.Second} {
			h.take("q", id)
			if err := h.s.SetJobOutput(h.ctx, id, json.RawMessage(`"out"`), nil); err != nil {
				t.Fatal(err)
			}
			h.setStatus(id, ocypod.StatusFailed)
			ended = h.clock.Now()
			// The job waits for its delay; it never ends early.
			h.clock.Advance(delay - time.Millisecond)
			wantSweep(t, "SweepRetries before the delay", h.sweepRetries(), redisstore.SweepResult{NextDue: ms(ended.Add(delay))})
			if j := h.job(id); j.Status != ocypod.StatusFailed || j.Ended() || j.RetriesAttempted != uint64(attempt) {
				t.Fatalf("waiting job = %+v, want failed, not ended, %d attempts", j, attempt)
			}
			h.clock.Advance(time.Millisecond)
			wantSweep(t, "SweepRetries after the delay", h.sweepRetries(), redisstore.SweepResult{Retried: []uint64{id}})
			j := h.job(id)
			if j.Status != ocypod.StatusQueued || j.RetriesAttempted != uint64(attempt+1) || j.Output != nil || j.EndedAt != nil || j.StartedAt != nil {
				t.Fatalf("retried job = %+v, want queued, attempt %d, run fields cleared", j, attempt+1)
			}
		}
		// Retries exhausted: the next failure ends the job, which then expires.
		h.take("q", id)
		h.setStatus(id, ocypod.StatusFailed)
		ended = h.clock.Now()
		if j := h.job(id); !j.Ended() {
			t.Fatalf("exhausted job: Ended() = false")
		}
		wantSweep(t, "SweepRetries when exhausted", h.sweepRetries(), redisstore.SweepResult{})
		if s := h.info().Statistics; s.Retried != 3 || s.Failed != 4 {
			t.Errorf("statistics = %+v, want 3 retried, 4 failed", s)
		}
		// expires_after 30s: deleted once 31 whole seconds have passed.
		h.clock.Advance(30999 * time.Millisecond)
		wantSweep(t, "SweepExpiry at +30.999s", h.sweepExpiry(), redisstore.SweepResult{NextDue: ms(ended.Add(31 * time.Second))})
		h.clock.Advance(time.Millisecond)
		wantSweep(t, "SweepExpiry at +31s", h.sweepExpiry(), redisstore.SweepResult{Expired: []uint64{id}})
		if _, err := h.s.GetJob(h.ctx, id); ocypod.ErrorKind(err) != ocypod.KindNotFound {
			t.Fatalf("GetJob(expired) = %v, want not found", err)
		}
	}},
	{name: "sweep expiry", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(0, 0, 5, 0))
		failed := seedStatus(h, "q", ocypod.StatusFailed, ocypod.JobSpec{Tags: []string{"t"}})
		done := seedStatus(h, "q", ocypod.StatusCompleted, ocypod.JobSpec{ExpiresAfter: dur(10)})
		cancelled := seedStatus(h, "q", ocypod.StatusCancelled, ocypod.JobSpec{ExpiresAfter: dur(0)}) // never expires
		h.clock.Advance(5999 * time.Millisecond)
		wantSweep(t, "SweepExpiry at +5.999s", h.sweepExpiry(), redisstore.SweepResult{NextDue: ms(t0.Add(6 * time.Second))})
		h.clock.Advance(time.Millisecond)
		wantSweep(t, "SweepExpiry at +6s", h.sweepExpiry(), redisstore.SweepResult{Expired: []uint64{failed}, NextDue: ms(t0.Add(11 * time.Second))})
		if ids, _ := h.s.TagJobIDs(h.ctx, "t"); len(ids) != 0 {
			t.Errorf("TagJobIDs(t) = %v after expiry, want []", ids)
		}
		h.clock.Advance(100 * 365 * 24 * time.Hour)
		wantSweep(t, "SweepExpiry a century later", h.sweepExpiry(), redisstore.SweepResult{Expired: []uint64{done}})
		h.wantStatus(cancelled, ocypod.StatusCancelled)
		wantSweep(t, "SweepExpiry again", h.sweepExpiry(), redisstore.SweepResult{})
	}},
	{name: "sweep abandoned retry", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(0, 0, 60, 2, 5))
		id := seedStatus(h, "q", ocypod.StatusFailed, ocypod.JobSpec{})
		if err := h.s.DeleteQueue(h.ctx, "q"); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(5 * time.Second)
		wantSweep(t, "SweepRetries", h.sweepRetries(), redisstore.SweepResult{Abandoned: []uint64{id}})
		j := h.job(id)
		if j.Status != ocypod.StatusFailed || !j.RetryAbandoned || !j.Ended() || j.RetriesAttempted != 0 {
			t.Fatalf("abandoned job = %+v, want failed, abandoned, ended", j)
		}
		if c := h.info().Queues["q"]; c.Failed != 1 {
			t.Errorf("Info()[q] = %+v, want 1 failed", c)
		}
		wantSweep(t, "SweepRetries again", h.sweepRetries(), redisstore.SweepResult{})
		// It expires like any ended job: 61s after it failed.
		h.clock.Advance(55 * time.Second)
		wantSweep(t, "SweepExpiry at +60s", h.sweepExpiry(), redisstore.SweepResult{NextDue: ms(t0.Add(61 * time.Second))})
		// A queue created again under the name is not its queue: a manual
		// requeue is refused as before.
		h.putQueue("q", settings(0, 0, 60, 2, 5))
		_, _, err := h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Status: status(ocypod.StatusQueued)}, nil)
		wantKind(t, "manual requeue into the queue created again", err, ocypod.KindNotFound, "Queue 'q' does not exist")
		// A retry abandoned because another job holds its key can be
		// requeued by hand once the key is free, which clears the flag.
		keyed := seedStatus(h, "q", ocypod.StatusFailed, ocypod.JobSpec{Key: "k"})
		holder := h.create("q", ocypod.JobSpec{Key: "k"})
		h.clock.Advance(5 * time.Second)
		wantSweep(t, "SweepRetries (key taken)", h.sweepRetries(), redisstore.SweepResult{Abandoned: []uint64{keyed}})
		h.take("q", holder)
		h.setStatus(holder, ocypod.StatusCompleted)
		h.setStatus(keyed, ocypod.StatusQueued)
		if j := h.job(keyed); j.RetryAbandoned || j.Ended() {
			t.Fatalf("requeued job = %+v, want the abandoned flag cleared", j)
		}
	}},
	{name: "sweep inline in next job", run: func(t *testing.T, h *harness) {
		// The inline sweep covers the partition of the queue taken from.
		b := h.queueBeside("b", "a")
		h.putQueue("a", settings(1, 0, 60, 0))
		h.putQueue(b, settings(0, 0, 60, 1))
		x := seedStatus(h, "a", ocypod.StatusRunning, ocypod.JobSpec{})
		y := seedStatus(h, b, ocypod.StatusFailed, ocypod.JobSpec{})
		h.clock.Advance(2 * time.Second)
		// Taking from b times out x (another queue) and requeues y, which
		// is then taken at once.
		h.take(b, y)
		h.wantStatus(x, ocypod.StatusTimedOut)
		// One log line per job the inline sweep changed.
		for _, want := range []string{
			fmt.Sprintf(`level=INFO msg="job timed out" job_id=%d`, x),
			fmt.Sprintf(`level=INFO msg="job retried" job_id=%d`, y),
		} {
			if !strings.Contains(h.logs.String(), want) {
				t.Errorf("store logs %q, want a line %q", h.logs.String(), want)
			}
		}
	}},
	{name: "sweep inline disabled", opts: redisstore.Options{InlineSweep: -1}, run: func(t *testing.T, h *harness) {
		h.putQueue("a", settings(1, 0, 60, 0))
		h.putQueue("b", settings(0, 0, 60, 1))
		x := seedStatus(h, "a", ocypod.StatusRunning, ocypod.JobSpec{})
		y := seedStatus(h, "b", ocypod.StatusFailed, ocypod.JobSpec{})
		h.clock.Advance(2 * time.Second)
		// Timeouts wait for a sweep; a due retry of the queue taken from is
		// always seen.
		if j := h.next("b"); j == nil || j.ID != y || j.Attempt != 2 {
			t.Fatalf("NextJob = %+v, want the retry of job %d", j, y)
		}
		h.wantStatus(x, ocypod.StatusRunning)
	}},
	{name: "sweep concurrently", opts: redisstore.Options{SweepBatch: 3}, run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(1, 0, 60, 0))
		var ids []uint64
		for range 30 {
			ids = append(ids, h.create("q", ocypod.JobSpec{}))
			h.next("q")
		}
		h.clock.Advance(2 * time.Second)
		var (
			mu  sync.Mutex
			got []uint64
			wg  sync.WaitGroup
		)
		for range 4 {
			wg.Go(func() {
				for {
					r, err := h.s.SweepTimeouts(h.ctx)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					got = append(got, r.TimedOut...)
					mu.Unlock()
					if !r.More {
						return
					}
				}
			})
		}
		wg.Wait()
		slices.Sort(got)
		if !reflect.DeepEqual(got, ids) {
			t.Fatalf("concurrent sweeps timed out %v, want each of %v once", got, ids)
		}
	}},
}
