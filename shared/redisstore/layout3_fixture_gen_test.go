//go:build layoutfixture

package redisstore_test

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"

	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestWriteLayout3Fixture writes testdata/layout3.json: namespaces of one
// partition and four written by the store's scripts of layout version 3
// (writeLayout3Scenario), each with what that store answered about them
// right after (layout3Answers). An upgrade to a later layout is tested by
// loading the dump, upgrading it and comparing the answers
// (TestLayout3Fixture). It was run with the store of layout version 3:
//
//	go test -tags layoutfixture -run TestWriteLayout3Fixture ./shared/redisstore/
func TestWriteLayout3Fixture(t *testing.T) {
	out := map[string]layout3Namespace{}
	for _, P := range []int{1, 4} {
		h := newHarness(t, redistest.Shared(t).Client(), P, redisstore.Options{})
		writeLayout3Scenario(t, h)
		ns := layout3Namespace{Now: h.clock.Now(), Keys: h.dumpPartitions()}
		ns.Answers = layout3Answers(t, h)
		out[strconv.Itoa(P)] = ns
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("testdata/layout3.json", append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeLayout3Scenario writes jobs of every status and kind into queues of
// every kind: plain creates (single and batch), priorities, run_at and
// delays, keys pending and running, dependencies, tags, tracked jobs,
// backoff, inputs and outputs, retries pending, failure groups, a dead
// letter queue, a timed-out job, a sharded queue, a push queue with
// callbacks, limits, a paused queue, a schedule, workers, statistics and
// history.
func writeLayout3Scenario(t *testing.T, h *harness) {
	ctx := h.ctx
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	yes := true
	dl := settings(60, 0, 0, 0)
	h.putQueue("dead", dl)
	h.putQueue("q", settings(60, 20, 3600, 2, 5))
	dead := "dead"
	must(h.s.PatchQueue(ctx, "q", ocypod.QueuePatch{DeadLetterQueue: &dead}))
	h.putQueue("work", settings(3600, 0, 3600, 1, 10))
	h.putQueue("slow", settings(30, 0, 3600, 1, 10))

	// Running jobs of queue work, then their ends.
	ids, err := h.s.CreateJobs(ctx, "work", []ocypod.JobSpec{
		{Input: json.RawMessage(`{"n":1}`)}, {Tags: []string{"t1"}}, {}, {Retries: u64(0)}, {}, {Key: "wk"}, {Tracked: &yes},
	})
	must(err)
	taken, err := h.s.Take(ctx, ocypod.TakeRequest{Queues: []string{"work"}, Count: 7, Worker: "w1"})
	must(err)
	if len(taken) != 7 {
		t.Fatalf("took %d of 7", len(taken))
	}
	id := func(i int) uint64 { return ids[i].ID }
	done := ocypod.StatusCompleted
	_, _, err = h.s.UpdateJob(ctx, id(0), ocypod.JobUpdate{Status: &done, Output: json.RawMessage(`{"ok":true}`)}, nil)
	must(err)
	failed := ocypod.StatusFailed
	_, _, err = h.s.UpdateJob(ctx, id(1), ocypod.JobUpdate{Status: &failed, Error: &ocypod.JobError{Group: "net", Message: "reset"}}, nil)
	must(err) // retry pending (due in 10 s)
	no := false
	_, _, err = h.s.UpdateJob(ctx, id(2), ocypod.JobUpdate{Status: &failed, Retry: &no, Error: &ocypod.JobError{Group: "bad_input", Message: "no"}}, nil)
	must(err) // failed for good, group bad_input
	cancelled := ocypod.StatusCancelled
	_, _, err = h.s.UpdateJob(ctx, id(3), ocypod.JobUpdate{Status: &cancelled}, nil)
	must(err)
	must(h.s.Heartbeat(ctx, id(5), nil))
	// id(4), id(5) (key wk) and id(6) (tracked) stay running. In queue
	// slow, two jobs time out below: one retried, one for good.
	slow, err := h.s.CreateJobs(ctx, "slow", []ocypod.JobSpec{{}, {TimeoutRetries: u64(0)}})
	must(err)
	if got, err := h.s.Take(ctx, ocypod.TakeRequest{Queues: []string{"slow"}, Count: 2, Worker: "w1"}); err != nil || len(got) != 2 {
		t.Fatalf("Take(slow) = %v, %v", got, err)
	}
	_ = slow

	// Queue q: pending jobs of every kind, in a take order that mixes them.
	batch, err := h.s.CreateJobs(ctx, "q", make([]ocypod.JobSpec, 6))
	must(err)
	_ = batch
	h.create("q", ocypod.JobSpec{Priority: i64(5), Input: json.RawMessage(`{"x":[1,2]}`), Tags: []string{"a", "b c"}})
	h.create("q", ocypod.JobSpec{Priority: i64(-3)})
	h.create("q", ocypod.JobSpec{Key: "k1", Input: json.RawMessage(`"v1"`)})
	h.create("q", ocypod.JobSpec{Key: "wk"}) // key held by a running job of work: not the same queue
	h.create("q", ocypod.JobSpec{Delay: dur(3600)})
	at := h.clock.Now().Add(7200 * time.Second)
	h.create("q", ocypod.JobSpec{RunAt: &at, Key: "k2"})
	h.create("q", ocypod.JobSpec{DependsOn: []uint64{id(5)}})
	h.create("q", ocypod.JobSpec{DependsOn: []uint64{id(0)}}) // its dependency completed: queued
	h.create("q", ocypod.JobSpec{Tracked: &yes, RetryBackoff: &ocypod.Backoff{Min: ocypod.Seconds(1), Max: ocypod.Seconds(60), Factor: 3}})
	h.create("q", ocypod.JobSpec{RetryDelays: durs(1, 2, 3), RetryDelaysSet: true, TimeoutRetries: u64(1), Timeout: dur(5), HeartbeatTimeout: dur(2), ExpiresAfter: dur(9)})
	_, err = h.s.CreateJobs(ctx, "q", make([]ocypod.JobSpec, 3))
	must(err)
	// A job failed for good into the dead letter queue.
	dq := h.create("q", ocypod.JobSpec{Retries: u64(0), Priority: i64(100)})
	h.take("q", dq)
	_, _, err = h.s.UpdateJob(ctx, dq, ocypod.JobUpdate{Status: &failed, Error: &ocypod.JobError{Group: "gone", Message: "x"}}, nil)
	must(err)
	h.sweep("outbox", h.s.SweepOutbox)

	// A sharded queue, a limited queue, a paused one, a push queue.
	h.putQueue("sh", settings(3600, 0, 600, 1))
	if h.P > 1 {
		must(h.s.PatchQueue(ctx, "sh", ocypod.QueuePatch{Shards: u64(uint64(h.P))}))
	}
	var specs []ocypod.JobSpec
	for i := range 9 {
		s := ocypod.JobSpec{}
		if i%3 == 0 {
			s.Key = "s" + strconv.Itoa(i)
		}
		if i%4 == 0 {
			s.Priority = i64(int64(i))
		}
		specs = append(specs, s)
	}
	_, err = h.s.CreateJobs(ctx, "sh", specs)
	must(err)
	shTaken, err := h.s.Take(ctx, ocypod.TakeRequest{Queues: []string{"sh"}, Count: 2, Worker: "w2"})
	must(err)
	_, _, err = h.s.UpdateJob(ctx, shTaken[0].ID, ocypod.JobUpdate{Status: &done}, nil)
	must(err)
	h.putQueue("lim", settings(3600, 0, 600, 0))
	must(h.s.PatchQueue(ctx, "lim", ocypod.QueuePatch{Concurrency: u64(2), RateLimit: &ocypod.RateLimit{PerSecond: 5, Burst: 10}}))
	_, err = h.s.CreateJobs(ctx, "lim", make([]ocypod.JobSpec, 4))
	must(err)
	_, err = h.s.Take(ctx, ocypod.TakeRequest{Queues: []string{"lim"}, Count: 1, Worker: "w3"})
	must(err)
	h.putQueue("paused", settings(60, 0, 600, 0))
	must(h.s.PatchQueue(ctx, "paused", ocypod.QueuePatch{Paused: &yes}))
	h.create("paused", ocypod.JobSpec{})
	h.putQueue("p", settings(60, 0, 600, 1))
	must(h.s.PatchQueue(ctx, "p", ocypod.QueuePatch{Push: sealedPush, PushSet: true,
		Callback: ocypod.Sealed(`{"url":"http://127.0.0.1:9/cb","on":["completed","failed"]}`), CallbackSet: true}))
	pushed := h.create("p", ocypod.JobSpec{})
	h.create("p", ocypod.JobSpec{})
	pj, err := h.s.Take(ctx, ocypod.TakeRequest{Queues: []string{"p"}, Count: 1, Worker: "push", Push: true, PushTimeout: 30 * time.Second})
	must(err)
	if len(pj) != 1 || pj[0].ID != pushed {
		t.Fatalf("push take = %+v", pj)
	}
	_, _, err = h.s.UpdateJob(ctx, pushed, ocypod.JobUpdate{Status: &done, Output: json.RawMessage(`1`)}, nil)
	must(err) // a callback pending

	// A schedule, fired once.
	_, err = h.s.PutSchedule(ctx, ocypod.Schedule{ID: "every", Queue: "q", Every: ocypod.Seconds(60),
		Job: json.RawMessage(`{"input":{"s":1}}`), Spec: ocypod.JobSpec{Input: json.RawMessage(`{"s":1}`)}})
	must(err)
	h.clock.Advance(61 * time.Second)
	if _, err := h.s.SweepSchedules(ctx); err != nil {
		t.Fatal(err)
	}
	// The jobs of slow time out.
	h.sweepTimeouts()
	h.sweep("outbox", h.s.SweepOutbox)
}
