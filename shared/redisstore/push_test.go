package redisstore_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

func init() { queueCases = append(queueCases, pushCases...) }

// sealedPush stands for a push setting: the store keeps it as it is.
var sealedPush = ocypod.Sealed(`{"url":"http://127.0.0.1:9/","batch":1,"concurrency":2,"timeout":{"secs":0,"nanos":0},"secret_b64":"c2VjcmV0"}`)

var pushCases = []conformanceCase{
	{name: "push queue takes", run: func(t *testing.T, h *harness) {
		h.putQueue("p", ocypod.QueueSettings{Timeout: ocypod.Seconds(10), HeartbeatTimeout: ocypod.Seconds(5)})
		h.putQueue("o", ocypod.DefaultQueueSettings())
		shards := uint64(min(h.P, 2))
		var mu sync.Mutex
		var changed []string
		h.s.OnQueueChange(func(q string) { mu.Lock(); changed = append(changed, q); mu.Unlock() })
		if err := h.s.PatchQueue(h.ctx, "p", ocypod.QueuePatch{Push: sealedPush, PushSet: true,
			Callback: ocypod.Sealed(`{"url":"http://127.0.0.1:9/cb"}`), CallbackSet: true, Shards: &shards}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if !slices.Equal(changed, []string{"p"}) {
			t.Errorf("OnQueueChange saw %q, want [p]", changed)
		}
		mu.Unlock()
		qs, err := h.s.GetQueue(h.ctx, "p")
		if err != nil || string(qs.Push) != string(sealedPush) || string(qs.Callback) != `{"url":"http://127.0.0.1:9/cb"}` {
			t.Fatalf("GetQueue(p) = push %q callback %q, %v", []byte(qs.Push), []byte(qs.Callback), err)
		}
		pq, err := h.s.PushQueues(h.ctx)
		if err != nil || len(pq) != 1 || string(pq["p"].Push) != string(sealedPush) {
			t.Fatalf("PushQueues = %v, %v, want p alone", pq, err)
		}
		id := h.create("p", ocypod.JobSpec{Input: []byte(`1`)})
		other := h.create("o", ocypod.JobSpec{})
		h.take("o", other)

		// Every take but the dispatcher's is refused, and takes nothing.
		const refused = "Queue 'p' delivers its jobs by push"
		for _, req := range []ocypod.TakeRequest{
			{Queues: []string{"p"}}, {Queues: []string{"o", "p"}, Count: 3}, {Queues: []string{"p"}, Wait: time.Millisecond},
		} {
			if _, err := h.s.Take(h.ctx, req); ocypod.ErrorMessage(err) != refused {
				t.Errorf("Take(%q) = %v, want %q", req.Queues, err, refused)
			}
		}
		done := ocypod.StatusCompleted
		if _, _, err := h.s.UpdateJob(h.ctx, other, ocypod.JobUpdate{Status: &done}, &ocypod.TakeRequest{Queues: []string{"p"}}); ocypod.ErrorMessage(err) != refused {
			t.Errorf("UpdateJob with take = %v, want %q", err, refused)
		}
		if _, _, err := h.s.UpdateJobs(h.ctx, []ocypod.BatchUpdate{{ID: other, Update: ocypod.JobUpdate{Status: &done}}},
			&ocypod.TakeRequest{Queues: []string{"p"}}); ocypod.ErrorMessage(err) != refused {
			t.Errorf("UpdateJobs with take = %v, want %q", err, refused)
		}
		if st := h.job(other).Status; st != ocypod.StatusRunning {
			t.Errorf("a refused PATCH with take applied its change: job is %s", st)
		}
		if st := h.job(id).Status; st != ocypod.StatusQueued {
			t.Errorf("a refused take took the push job: %s", st)
		}

		// The dispatcher's take gets the job, with its timeouts raised to
		// the delivery's.
		if _, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"o"}, Push: true}); !errors.Is(err, redisstore.ErrNotPush) {
			t.Errorf("dispatcher take from a queue without push = %v, want ErrNotPush", err)
		}
		jobs, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"p"}, Count: 5, Worker: "push", Push: true, PushTimeout: 30*time.Second + time.Millisecond})
		if err != nil || len(jobs) != 1 || jobs[0].ID != id || jobs[0].Attempt != 1 {
			t.Fatalf("dispatcher take = %+v, %v, want job %d", jobs, err, id)
		}
		j := h.job(id)
		if j.Status != ocypod.StatusRunning || j.Worker != "push" || j.Timeout != ocypod.Seconds(31) || j.HeartbeatTimeout != ocypod.Seconds(31) {
			t.Errorf("taken push job = %s worker %q timeout %v heartbeat %v, want running by push, 31s and 31s",
				j.Status, j.Worker, j.Timeout, j.HeartbeatTimeout)
		}
		// Not timed out before the raised timeout; timed out after it.
		h.clock.Advance(20 * time.Second)
		h.sweepTimeouts()
		if st := h.job(id).Status; st != ocypod.StatusRunning {
			t.Errorf("push job after 20s = %s, want running (its timeout is the delivery's)", st)
		}
		h.clock.Advance(15 * time.Second)
		h.sweepTimeouts()
		if st := h.job(id).Status; st != ocypod.StatusTimedOut {
			t.Errorf("push job after 35s = %s, want timed_out", st)
		}

		// Without push the queue is taken again, and no longer listed.
		if err := h.s.PatchQueue(h.ctx, "p", ocypod.QueuePatch{PushSet: true}); err != nil {
			t.Fatal(err)
		}
		if pq, err := h.s.PushQueues(h.ctx); err != nil || len(pq) != 0 {
			t.Errorf("PushQueues after push null = %v, %v", pq, err)
		}
		if _, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"p"}}); err != nil {
			t.Errorf("take once push is removed = %v", err)
		}
	}},
	{name: "creates report push queues with a job due", run: func(t *testing.T, h *harness) {
		h.putQueue("p", ocypod.QueueSettings{Timeout: ocypod.Seconds(10), Retries: 5})
		h.putQueue("o", ocypod.DefaultQueueSettings())
		if err := h.s.PatchQueue(h.ctx, "p", ocypod.QueuePatch{Push: sealedPush, PushSet: true}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var due []string
		h.s.OnPushDue(func(q string) { mu.Lock(); due = append(due, q); mu.Unlock() })
		seen := func() []string {
			mu.Lock()
			defer mu.Unlock()
			out := due
			due = nil
			return out
		}
		later := h.clock.Now().Add(time.Hour)
		h.create("o", ocypod.JobSpec{})
		h.create("p", ocypod.JobSpec{RunAt: &later})
		if got := seen(); len(got) != 0 {
			t.Errorf("OnPushDue after a create into a pull queue and a scheduled one = %q, want nothing", got)
		}
		h.create("p", ocypod.JobSpec{})
		if got := seen(); !slices.Equal(got, []string{"p"}) {
			t.Errorf("OnPushDue after a create of a queued job = %q, want [p]", got)
		}
		if _, err := h.s.CreateJobs(h.ctx, "p", []ocypod.JobSpec{{RunAt: &later}, {}}); err != nil {
			t.Fatal(err)
		}
		if got := seen(); !slices.Equal(got, []string{"p"}) {
			t.Errorf("OnPushDue after a batch with a queued job = %q, want [p] once", got)
		}
		// A retry that queues a push queue's job says so too; one
		// scheduled for later does not.
		jobs, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"p"}, Count: 5, Worker: "push", Push: true})
		if err != nil || len(jobs) == 0 {
			t.Fatalf("dispatcher take = %v, %v", jobs, err)
		}
		if _, err := h.s.RetryJob(h.ctx, jobs[0].ID, &later); err != nil {
			t.Fatal(err)
		}
		if got := seen(); len(got) != 0 {
			t.Errorf("OnPushDue after a retry scheduled for later = %q, want nothing", got)
		}
		if _, err := h.s.RetryJob(h.ctx, jobs[1].ID, nil); err != nil {
			t.Fatal(err)
		}
		if got := seen(); !slices.Equal(got, []string{"p"}) {
			t.Errorf("OnPushDue after a retry now = %q, want [p]", got)
		}
		if _, err := h.s.CreateJob(h.ctx, "nope", ocypod.JobSpec{}); err == nil {
			t.Fatal("create into a missing queue succeeded")
		}
		if got := seen(); len(got) != 0 {
			t.Errorf("OnPushDue after a refused create = %q", got)
		}
	}},
}

func init() {
	jobCases = append(jobCases, conformanceCase{name: "job callback", run: func(t *testing.T, h *harness) {
		h.putQueue("cbq", ocypod.DefaultQueueSettings())
		h.putQueue("plain", ocypod.DefaultQueueSettings())
		queueCB := ocypod.Sealed(`{"url":"http://127.0.0.1:9/q","on":["completed"],"secret_b64":"cXVldWU="}`)
		ownCB := ocypod.Sealed(`{"url":"http://127.0.0.1:9/own","on":["failed"],"secret_b64":"b3du"}`)
		if err := h.s.PatchQueue(h.ctx, "cbq", ocypod.QueuePatch{Callback: queueCB, CallbackSet: true}); err != nil {
			t.Fatal(err)
		}
		inherits := h.create("cbq", ocypod.JobSpec{})
		own := h.create("cbq", ocypod.JobSpec{Callback: ownCB})
		none := h.create("plain", ocypod.JobSpec{})
		for _, c := range []struct {
			id   uint64
			want ocypod.Sealed
		}{{inherits, queueCB}, {own, ownCB}, {none, nil}} {
			if got := h.job(c.id).Callback; string(got) != string(c.want) {
				t.Errorf("job %d callback = %q, want %q", c.id, []byte(got), []byte(c.want))
			}
		}
		// A job keeps the callback it was created with.
		if err := h.s.PatchQueue(h.ctx, "cbq", ocypod.QueuePatch{CallbackSet: true}); err != nil {
			t.Fatal(err)
		}
		if got := h.job(inherits).Callback; string(got) != string(queueCB) {
			t.Errorf("after the queue's callback is removed, job callback = %q", []byte(got))
		}
		if got := h.job(h.create("cbq", ocypod.JobSpec{})).Callback; got != nil {
			t.Errorf("a job created after the queue's callback is removed has %q", []byte(got))
		}
	}})
}

func init() {
	jobCases = append(jobCases, conformanceCase{name: "callbacks due", run: func(t *testing.T, h *harness) {
		h.putQueue("cb", ocypod.QueueSettings{Timeout: ocypod.Seconds(60), ExpiresAfter: ocypod.Seconds(3600), Retries: 1})
		onDone := ocypod.Sealed(`{"url":"http://127.0.0.1:9/d","on":["completed","failed"],"secret_b64":"eA=="}`)
		due := func(want ...uint64) []redisstore.DueCallback {
			t.Helper()
			got, _, err := h.s.DueCallbacks(h.ctx, 100)
			if err != nil {
				t.Fatal(err)
			}
			var ids []uint64
			for _, d := range got {
				ids = append(ids, d.JobID)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, want) {
				t.Fatalf("due callbacks = %v, want %v", ids, want)
			}
			return got
		}
		done := ocypod.StatusCompleted
		failed := ocypod.StatusFailed
		end := func(id uint64, st *ocypod.Status) {
			t.Helper()
			if _, _, err := h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Status: st}, nil); err != nil {
				t.Fatal(err)
			}
		}
		a := h.create("cb", ocypod.JobSpec{Callback: onDone})
		b := h.create("cb", ocypod.JobSpec{Callback: onDone})
		c := h.create("cb", ocypod.JobSpec{})
		for _, id := range []uint64{a, b, c} {
			h.take("cb", id)
		}
		due() // nothing has ended
		end(a, &done)
		end(b, &failed) // retried: not an ending
		end(c, &done)   // no callback
		got := due(a)
		if got[0].Tries != 0 || string(got[0].Callback) != string(onDone) {
			t.Fatalf("due callback = %+v", got[0])
		}
		due() // claimed: held for the lease
		// A failed try is due again when it says.
		if err := h.s.CallbackDone(h.ctx, a, got[0].EndedAt, redisstore.CallbackTry{RetryAt: h.clock.Now().Add(2 * time.Second)}); err != nil {
			t.Fatal(err)
		}
		due()
		h.clock.Advance(3 * time.Second)
		got = due(a)
		if got[0].Tries != 1 {
			t.Errorf("tries after one failure = %d", got[0].Tries)
		}
		// A sender that died: due again after the lease.
		h.clock.Advance(redisstore.CallbackLease + time.Second)
		got = due(a)
		if err := h.s.CallbackDone(h.ctx, a, got[0].EndedAt, redisstore.CallbackTry{Delivered: true}); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(redisstore.CallbackLease + time.Second)
		due()
		// Given up: no longer due, and counted.
		d := h.create("cb", ocypod.JobSpec{Callback: onDone})
		h.take("cb", d)
		end(d, &done)
		got = due(d)
		if err := h.s.CallbackDone(h.ctx, d, got[0].EndedAt, redisstore.CallbackTry{GiveUp: true}); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(redisstore.CallbackLease + time.Second)
		due()
		if info, err := h.s.Info(h.ctx); err != nil || info.CallbacksGivenUp != 1 {
			t.Errorf("Info().CallbacksGivenUp = %d, %v, want 1", info.CallbacksGivenUp, err)
		}
		// A job failed for good: its callback; deleting the job drops it.
		h.take("cb", b)
		end(b, &failed)
		due(b)
		if err := h.s.DeleteJob(h.ctx, b); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(redisstore.CallbackLease + time.Second)
		due()
	}})
}
