package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// parkedWait is a WaitJob running in the background.
type parkedWait struct {
	got chan waitResult
}

type waitResult struct {
	job *ocypod.Job
	err error
	at  time.Time
}

// parkWait starts s.WaitJob(id, wait) and returns once it waits after its
// first read, s's wake subscription being up before.
func parkWait(t *testing.T, ctx context.Context, s *redisstore.Store, id uint64, wait time.Duration) *parkedWait {
	t.Helper()
	redisstore.Subscribed(t, s)
	parked := make(chan struct{}, 64)
	redisstore.OnPark(s, func() {
		select {
		case parked <- struct{}{}:
		default:
		}
	})
	p := &parkedWait{got: make(chan waitResult, 1)}
	go func() {
		j, err := s.WaitJob(ctx, id, wait, nil)
		p.got <- waitResult{j, err, time.Now()}
	}()
	select {
	case <-parked:
	case r := <-p.got:
		t.Fatalf("WaitJob(%d) answered at once: %+v, %v", id, r.job, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the wait never started")
	}
	return p
}

// answer waits for the wait's answer and checks that it came within
// wakeBound of since.
func (p *parkedWait) answer(t *testing.T, what string, since time.Time) waitResult {
	t.Helper()
	r := <-p.got
	t.Logf("%s: answered after %v", what, r.at.Sub(since))
	if el := r.at.Sub(since); el > wakeBound {
		t.Fatalf("%s: the waiting GET answered %v later, not woken (bound %v)", what, el, wakeBound)
	}
	return r
}

// ended checks that r is job id, ended with status st.
func (r waitResult) ended(t *testing.T, id uint64, st ocypod.Status) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("WaitJob(%d) failed: %v", id, r.err)
	}
	if r.job.ID != id || r.job.Status != st || !r.job.Ended() {
		t.Fatalf("WaitJob(%d) = job %d %s ended=%v, want %s and ended", id, r.job.ID, r.job.Status, r.job.Ended(), st)
	}
}

// jobWaitCases: a wait for a job's end (GET /job/{id}?wait=) answers
// within moments of the job ending for good in another process, on every
// backend, in whichever partition the job is (a queue sharded over all).
var jobWaitCases = []conformanceCase{
	{"job wait wakes on a completion in another process", redisstore.Options{}, func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Shards: u64(uint64(h.P))}); err != nil {
			t.Fatal(err)
		}
		other, err := redisstore.New(h.rdb, redisstore.Options{Namespace: h.ns, Partitions: h.P, Now: h.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 * h.P {
			id := h.create("q", ocypod.JobSpec{})
			// Running or still queued: a completion or a cancel ends it.
			done := ocypod.StatusCancelled
			if i%2 == 0 {
				h.take("q", id)
				done = ocypod.StatusCompleted
			}
			p := parkWait(t, h.ctx, h.s, id, longPollWait)
			since := time.Now()
			u := ocypod.JobUpdate{Status: &done}
			if done == ocypod.StatusCompleted {
				u.Output = []byte(`{"n":1}`)
			}
			if _, _, err := other.UpdateJob(h.ctx, id, u, nil); err != nil {
				t.Fatal(err)
			}
			r := p.answer(t, "end", since)
			r.ended(t, id, done)
			if done == ocypod.StatusCompleted && string(r.job.Output) != `{"n":1}` {
				t.Fatalf("output = %s", r.job.Output)
			}
		}
	}},
	{"job wait sleeps through a failure that will be retried, wakes on the final one", redisstore.Options{}, func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		id := h.create("q", ocypod.JobSpec{Retries: u64(1), RetryDelaysSet: true, RetryDelays: []ocypod.Duration{}})
		h.take("q", id)
		p := parkWait(t, h.ctx, h.s, id, longPollWait)
		h.setStatus(id, ocypod.StatusFailed)
		if j := h.job(id); j.Ended() {
			t.Fatalf("a failure with a retry left ended the job: %+v", j)
		}
		h.take("q", id)
		select {
		case r := <-p.got:
			t.Fatalf("the wait answered on a failure that will be retried: %+v, %v", r.job, r.err)
		default:
		}
		since := time.Now()
		h.setStatus(id, ocypod.StatusFailed)
		r := p.answer(t, "final failure", since)
		if r.at.Before(since) {
			t.Fatalf("the wait answered before the final failure")
		}
		r.ended(t, id, ocypod.StatusFailed)
	}},
	{"job wait wakes on a cancel and on a timeout", redisstore.Options{}, func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		id := h.create("q", ocypod.JobSpec{})
		p := parkWait(t, h.ctx, h.s, id, longPollWait)
		since := time.Now()
		h.setStatus(id, ocypod.StatusCancelled)
		p.answer(t, "cancel", since).ended(t, id, ocypod.StatusCancelled)

		id = h.create("q", ocypod.JobSpec{Timeout: &ocypod.Duration{Secs: 1}})
		h.take("q", id)
		p = parkWait(t, h.ctx, h.s, id, longPollWait)
		h.clock.Advance(2 * time.Second)
		since = time.Now()
		if _, err := h.s.SweepTimeouts(h.ctx); err != nil {
			t.Fatal(err)
		}
		p.answer(t, "timeout sweep", since).ended(t, id, ocypod.StatusTimedOut)
	}},
	{"job wait wakes on a batch update (PATCH /jobs) in another process", redisstore.Options{}, func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		other, err := redisstore.New(h.rdb, redisstore.Options{Namespace: h.ns, Partitions: h.P, Now: h.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		a, b := h.create("q", ocypod.JobSpec{}), h.create("q", ocypod.JobSpec{})
		h.take("q", a)
		p := parkWait(t, h.ctx, h.s, b, longPollWait)
		since := time.Now()
		done, cancelled := ocypod.StatusCompleted, ocypod.StatusCancelled
		outs, _, err := other.UpdateJobs(h.ctx, []ocypod.BatchUpdate{{ID: a, Update: ocypod.JobUpdate{Status: &done}},
			{ID: b, Update: ocypod.JobUpdate{Status: &cancelled}}}, nil)
		if err != nil || outs[0].Err != nil || outs[1].Err != nil {
			t.Fatalf("UpdateJobs = %+v, %v", outs, err)
		}
		p.answer(t, "batch", since).ended(t, b, ocypod.StatusCancelled)
	}},
	{"job wait answers 404 when the job is deleted meanwhile, at once when missing or ended", redisstore.Options{}, func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		id := h.create("q", ocypod.JobSpec{})
		p := parkWait(t, h.ctx, h.s, id, longPollWait)
		since := time.Now()
		if err := h.s.DeleteJob(h.ctx, id); err != nil {
			t.Fatal(err)
		}
		if r := p.answer(t, "delete", since); !(ocypod.ErrorKind(r.err) == ocypod.KindNotFound) {
			t.Fatalf("wait on a deleted job = %+v, %v; want job not found", r.job, r.err)
		}
		start := time.Now()
		if _, err := h.s.WaitJob(h.ctx, id, longPollWait, nil); !(ocypod.ErrorKind(err) == ocypod.KindNotFound) || time.Since(start) > wakeBound {
			t.Fatalf("wait on a missing job = %v after %v; want job not found at once", err, time.Since(start))
		}
		done := h.create("q", ocypod.JobSpec{})
		h.take("q", done)
		h.setStatus(done, ocypod.StatusCompleted)
		start = time.Now()
		j, err := h.s.WaitJob(h.ctx, done, longPollWait, nil)
		if err != nil || !j.Ended() || time.Since(start) > wakeBound {
			t.Fatalf("wait on an ended job = %+v, %v after %v; want it at once", j, err, time.Since(start))
		}
	}},
	{"job wait answers the job as it is when the wait is over", redisstore.Options{}, func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		id := h.create("q", ocypod.JobSpec{})
		start := time.Now()
		j, err := h.s.WaitJob(h.ctx, id, 300*time.Millisecond, nil)
		if err != nil || j.Status != ocypod.StatusQueued || j.Ended() {
			t.Fatalf("WaitJob = %+v, %v; want the queued job", j, err)
		}
		if el := time.Since(start); el < 300*time.Millisecond || el > wakeBound {
			t.Fatalf("a 300ms wait answered after %v", el)
		}
	}},
}

// TestJobWaitCancelled: a wait whose caller gives up, or whose stop
// channel closes, answers at once and leaves the hub.
func TestJobWaitCancelled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, redistest.Shared(t).Client(), 1, redisstore.Options{})
	h.putQueue("q", ocypod.DefaultQueueSettings())
	id := h.create("q", ocypod.JobSpec{})
	ctx, cancel := context.WithCancel(h.ctx)
	p := parkWait(t, ctx, h.s, id, longPollWait)
	since := time.Now()
	cancel()
	p.answer(t, "cancelled", since)
	if n, _ := redisstore.LongPolls(h.s); n != 0 {
		t.Fatalf("%d waits still registered after the only one was cancelled", n)
	}

	stop := make(chan struct{})
	parked := make(chan struct{}, 1)
	redisstore.OnPark(h.s, func() {
		select {
		case parked <- struct{}{}:
		default:
		}
	})
	got := make(chan error, 1)
	go func() {
		j, err := h.s.WaitJob(h.ctx, id, longPollWait, stop)
		if err == nil && j.Status != ocypod.StatusQueued {
			err = errors.New("not the queued job: " + string(j.Status))
		}
		got <- err
	}()
	<-parked
	since = time.Now()
	close(stop)
	if err := <-got; err != nil || time.Since(since) > wakeBound {
		t.Fatalf("stopped wait = %v after %v", err, time.Since(since))
	}
	if n, _ := redisstore.LongPolls(h.s); n != 0 {
		t.Fatalf("%d waits still registered after a stop", n)
	}
}

// TestJobWaitCap: past Options.MaxLongPolls waiters (takes and job waits
// together), a job wait answers at once with the job as it is.
func TestJobWaitCap(t *testing.T) {
	t.Parallel()
	s, err := redisstore.New(redistest.Shared(t).Client(), redisstore.Options{Namespace: redistest.Namespace(t), MaxLongPolls: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"q", "empty"} {
		if _, err := s.PutQueue(t.Context(), q, ocypod.DefaultQueueSettings()); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.CreateJob(t.Context(), "q", ocypod.JobSpec{})
	if err != nil {
		t.Fatal(err)
	}
	done := parkTakes(t, t.Context(), s, 1, ocypod.TakeRequest{Queues: []string{"empty"}, Wait: longPollWait})
	_ = done
	p := parkWait(t, t.Context(), s, c.ID, longPollWait)
	start := time.Now()
	j, err := s.WaitJob(t.Context(), c.ID, longPollWait, nil)
	if err != nil || j.Status != ocypod.StatusQueued || time.Since(start) > wakeBound {
		t.Fatalf("a third wait = %+v, %v after %v; want the queued job at once", j, err, time.Since(start))
	}
	// The waiting one is still served.
	st := ocypod.StatusCancelled
	if _, _, err := s.UpdateJob(t.Context(), c.ID, ocypod.JobUpdate{Status: &st}, nil); err != nil {
		t.Fatal(err)
	}
	p.answer(t, "cancel", start).ended(t, c.ID, ocypod.StatusCancelled)
}

// TestJobWaitCluster3: on a cluster of 3 primaries, with 4 partitions, a
// wait in one process is woken by the end (a cancel) of the job in another, whichever
// node holds the job.
func TestJobWaitCluster3(t *testing.T) {
	t.Parallel()
	a, b, ns := twoProcessesOnCluster3(t)
	parts := map[int]bool{}
	for i := 0; len(parts) < 4 && i < 40; i++ {
		cr, err := b.CreateJob(t.Context(), "q", ocypod.JobSpec{})
		if err != nil {
			t.Fatal(err)
		}
		p := parkWait(t, t.Context(), a, cr.ID, longPollWait)
		since := time.Now()
		st := ocypod.StatusCancelled
		if _, _, err := b.UpdateJob(t.Context(), cr.ID, ocypod.JobUpdate{Status: &st}, nil); err != nil {
			t.Fatal(err)
		}
		p.answer(t, "cancel", since).ended(t, cr.ID, ocypod.StatusCancelled)
		parts[redisstore.LayoutOf(ns, 4).PartitionOf(cr.ID)] = true
	}
	if len(parts) < 4 {
		t.Fatalf("jobs landed in partitions %v only", parts)
	}
}
