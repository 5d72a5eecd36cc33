package redisstore_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

func init() { effectCases = append(effectCases, onceCases...) }

// reapplies is how many times the tests apply each effect again: with a
// queue over 4 shards, a partition chosen afresh each time would miss the
// first application's record 3 times in 4.
const reapplies = 8

var onceCases = []conformanceCase{
	{name: "effects into a sharded queue apply once", run: testShardedEffectsOnce},
	{name: "effects follow a queue re-created unsharded", run: testEffectsMoved},
	{name: "effects recorded without a partition apply once", run: testEffectsWithoutPart},
	{name: "dead letter queue must exist", run: testDeadLetterQueueExists},
	{name: "a refused follow-up does not hold up the outbox", run: testRefusedEffectDoesNotBlock},
}

// jobCount is how many jobs queue has, whatever their status.
func (h *harness) jobCount(queue string) int {
	h.t.Helper()
	ids := h.queueIDs(queue)
	return len(ids.Queued) + len(ids.Running) + len(ids.Failed) + len(ids.Completed) +
		len(ids.Cancelled) + len(ids.TimedOut) + len(ids.Scheduled) + len(ids.Waiting)
}

// otherProcess is a second store on h's namespace: another process, with
// its own (empty) knowledge of the queues' shards.
func (h *harness) otherProcess() *redisstore.Store {
	h.t.Helper()
	s, err := redisstore.New(h.rdb, redisstore.Options{Namespace: h.ns, Partitions: h.P, Now: h.clock.Now,
		Rand: func() float64 { return 0.5 }})
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// reapplyOutbox applies every effect left in the outboxes again, n times,
// alternately from h's store and from other, each pass leaving them there
// (a process that dies between applying an effect and removing it from
// its outbox, or whose call Redis ran but answered too late); then once
// for good. The outboxes are empty after.
func (h *harness) reapplyOutbox(other *redisstore.Store, n int) {
	h.t.Helper()
	redisstore.SetLostAck(h.s, true)
	redisstore.SetLostAck(other, true)
	for i := range n {
		h.clock.Advance(time.Minute)
		s := h.s
		if i%2 == 1 {
			s = other
		}
		if _, err := s.SweepOutbox(h.ctx); err != nil {
			h.t.Fatalf("SweepOutbox (pass %d) = %v", i, err)
		}
	}
	redisstore.SetLostAck(h.s, false)
	redisstore.SetLostAck(other, false)
	h.clock.Advance(time.Minute)
	if _, err := other.SweepOutbox(h.ctx); err != nil {
		h.t.Fatal(err)
	}
	for p := range h.P {
		if n := h.do("HLEN", h.lay.Key(p, "ob")).Val().(int64); n != 0 {
			h.t.Fatalf("partition %d: %d effects left in the outbox", p, n)
		}
	}
}

// shardTo spreads queue over min(4, P) shards (none with one partition).
func (h *harness) shardTo(queue string) {
	h.t.Helper()
	if h.P == 1 {
		return
	}
	k := uint64(min(4, h.P))
	if err := h.s.PatchQueue(h.ctx, queue, ocypod.QueuePatch{Shards: &k}); err != nil {
		h.t.Fatal(err)
	}
}

// queueOutside returns a queue name starting with prefix whose home
// partition holds no copy of queue target's settings ("" with one
// partition).
func (h *harness) queueOutside(prefix, target string) string {
	if h.P == 1 {
		return ""
	}
	for i := 0; i < 1000; i++ {
		name := prefix + fmt.Sprint(i)
		if h.do("HEXISTS", h.lay.Key(h.lay.Home(name), "q"), target).Val().(int64) == 0 {
			return name
		}
	}
	h.t.Fatalf("no queue outside %s", target)
	return ""
}

// testShardedEffectsOnce: a follow-up job, a dead letter, a schedule's job
// and a failed job retried into another queue, each applied again and
// again into a queue spread over 4 shards, by this process and another,
// make one job each.
func testShardedEffectsOnce(t *testing.T, h *harness) {
	h.putQueue("t", settings(60, 0, 600, 0))
	h.shardTo("t")
	h.putQueue("src", settings(60, 0, 600, 0))
	dlq := "t"
	if err := h.s.PatchQueue(h.ctx, "src", ocypod.QueuePatch{DeadLetterQueue: &dlq}); err != nil {
		t.Fatal(err)
	}
	redisstore.SetLostAck(h.s, true)
	// next
	a := h.create("src", ocypod.JobSpec{})
	h.take("src", a)
	if _, _, err := h.s.UpdateJob(h.ctx, a, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted),
		Next: &ocypod.NextJobSpec{Queue: "t", Spec: ocypod.JobSpec{Input: json.RawMessage(`"next"`)}}}, nil); err != nil {
		t.Fatal(err)
	}
	// a dead letter
	b := h.create("src", ocypod.JobSpec{})
	h.take("src", b)
	h.setStatus(b, ocypod.StatusFailed)
	// a schedule's job
	if _, err := h.s.PutSchedule(h.ctx, ocypod.Schedule{ID: "s", Queue: "t", Every: ocypod.Seconds(3600),
		Job: json.RawMessage(`{"input":"scheduled"}`), Spec: ocypod.JobSpec{Input: json.RawMessage(`"scheduled"`)}}); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Hour)
	if r, err := h.s.SweepSchedules(h.ctx); err != nil || r.Other != 1 {
		t.Fatalf("SweepSchedules = %+v, %v", r, err)
	}
	// a failed job retried into a queue that has no copy in its partition
	want := map[string]int{"t": 3}
	if h.P > 1 {
		h.putQueue("t2", settings(60, 0, 600, 0))
		k := uint64(2)
		if err := h.s.PatchQueue(h.ctx, "t2", ocypod.QueuePatch{Shards: &k}); err != nil {
			t.Fatal(err)
		}
		src := h.queueOutside("from", "t2")
		h.putQueue(src, settings(60, 0, 600, 0))
		c := h.create(src, ocypod.JobSpec{})
		h.take(src, c)
		if err := h.update(c, ocypod.JobUpdate{Status: status(ocypod.StatusFailed),
			Error: &ocypod.JobError{Group: "g", Message: "x"}}); err != nil {
			t.Fatal(err)
		}
		if n, err := h.s.RetryFailures(h.ctx, "g", 10, "t2"); err != nil || n != 1 {
			t.Fatalf("RetryFailures = %d, %v", n, err)
		}
		want["t2"] = 1
	}
	redisstore.SetLostAck(h.s, false)
	h.reapplyOutbox(h.otherProcess(), reapplies)
	for q, n := range want {
		if got := h.jobCount(q); got != n {
			t.Errorf("queue %s holds %d jobs (%+v), want %d", q, got, h.queueIDs(q), n)
		}
	}
	h.wantStatus(b, ocypod.StatusFailed)
}

// testEffectsMoved: a process that still believes a queue has 4 shards
// records follow-up jobs into partitions the queue (deleted and created
// again, unsharded, by another process) no longer has: each is created
// once, in the queue's home, and can be taken.
func testEffectsMoved(t *testing.T, h *harness) {
	h.putQueue("m", settings(60, 0, 600, 0))
	h.shardTo("m")
	h.putQueue("src", settings(60, 0, 600, 0))
	other := h.otherProcess()
	if err := other.DeleteQueue(h.ctx, "m"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.PutQueue(h.ctx, "m", settings(60, 0, 600, 0)); err != nil {
		t.Fatal(err)
	}
	const n = 4
	redisstore.SetLostAck(h.s, true)
	for range n {
		a := h.create("src", ocypod.JobSpec{})
		h.take("src", a)
		if _, _, err := h.s.UpdateJob(h.ctx, a, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted),
			Next: &ocypod.NextJobSpec{Queue: "m"}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	redisstore.SetLostAck(h.s, false)
	h.reapplyOutbox(other, reapplies)
	if got := h.jobCount("m"); got != n {
		t.Fatalf("queue m holds %d jobs (%+v), want %d", got, h.queueIDs("m"), n)
	}
	jobs, err := other.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"m"}, Count: 10})
	if err != nil || len(jobs) != n {
		t.Fatalf("Take(m) = %d jobs, %v, want %d", len(jobs), err, n)
	}
}

// testEffectsWithoutPart: follow-up jobs whose outbox entries name no
// partition (as the previous version of the store wrote them), left by a
// process that died right after recording them, are created once each
// by the processes that apply them again and again.
func testEffectsWithoutPart(t *testing.T, h *harness) {
	h.putQueue("t", settings(60, 0, 600, 0))
	h.shardTo("t")
	h.putQueue("src", settings(60, 0, 600, 0))
	const n = 3
	redisstore.SetCrashAfterCall(h.s, true)
	for range n {
		a := h.create("src", ocypod.JobSpec{})
		h.take("src", a)
		if _, _, err := h.s.UpdateJob(h.ctx, a, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted),
			Next: &ocypod.NextJobSpec{Queue: "t"}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	redisstore.SetCrashAfterCall(h.s, false)
	left := 0
	for p := range h.P {
		for id, text := range h.rdb.HGetAll(h.ctx, h.lay.Key(p, "ob")).Val() {
			var e map[string]json.RawMessage
			if err := json.Unmarshal([]byte(text), &e); err != nil || e["part"] == nil {
				t.Fatalf("effect %s names no partition: %s (%v)", id, text, err)
			}
			delete(e, "part")
			b, _ := json.Marshal(e)
			h.do("HSET", h.lay.Key(p, "ob"), id, string(b))
			left++
		}
	}
	if left != n {
		t.Fatalf("%d effects in the outboxes, want %d", left, n)
	}
	h.reapplyOutbox(h.otherProcess(), reapplies)
	if got := h.jobCount("t"); got != n {
		t.Fatalf("queue t holds %d jobs (%+v), want %d", got, h.queueIDs("t"), n)
	}
}

// testDeadLetterQueueExists: a dead letter queue that does not exist is
// refused (nothing written); once it is deleted, a job failed for good
// stays failed in its failure group and its dead letter is counted as
// skipped, once however often the effect is applied; created again, the
// queue receives the next ones.
func testDeadLetterQueueExists(t *testing.T, h *harness) {
	h.putQueue("src", settings(60, 0, 600, 0))
	dl := h.queueApart("dl", "src")
	before := h.snapshot()
	err := h.s.PatchQueue(h.ctx, "src", ocypod.QueuePatch{DeadLetterQueue: &dl})
	wantKind(t, "PatchQueue(dead letter queue missing)", err, ocypod.KindNotFound, "Queue '"+dl+"' does not exist")
	h.wantUnchanged("a missing dead letter queue", before)
	missing := "nowhere"
	err = h.s.PatchQueue(h.ctx, missing, ocypod.QueuePatch{DeadLetterQueue: &dl})
	wantKind(t, "PatchQueue(missing queue)", err, ocypod.KindNotFound, "Queue 'nowhere' does not exist")

	h.putQueue(dl, settings(60, 0, 600, 0))
	h.shardTo(dl)
	if err := h.s.PatchQueue(h.ctx, "src", ocypod.QueuePatch{DeadLetterQueue: &dl}); err != nil {
		t.Fatal(err)
	}
	if qs, err := h.s.GetQueue(h.ctx, "src"); err != nil || qs.DeadLetterQueue != dl {
		t.Fatalf("GetQueue = %+v, %v", qs, err)
	}
	if err := h.s.DeleteQueue(h.ctx, dl); err != nil {
		t.Fatal(err)
	}
	fail := func() uint64 {
		t.Helper()
		id := h.create("src", ocypod.JobSpec{})
		h.take("src", id)
		if err := h.update(id, ocypod.JobUpdate{Status: status(ocypod.StatusFailed),
			Error: &ocypod.JobError{Group: "broken", Message: "x"}}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	redisstore.SetLostAck(h.s, true)
	a := fail()
	redisstore.SetLostAck(h.s, false)
	h.reapplyOutbox(h.otherProcess(), reapplies)
	h.wantStatus(a, ocypod.StatusFailed)
	page, err := h.s.FailureJobs(h.ctx, "broken", 10, "")
	if err != nil || page.Total != 1 || len(page.Jobs) != 1 || page.Jobs[0].ID != a {
		t.Fatalf("FailureJobs(broken) = %+v, %v, want job %d", page, err, a)
	}
	if n := h.info().DeadLettersSkipped; n != 1 {
		t.Fatalf("dead letters skipped = %d, want 1", n)
	}
	if _, ok := h.info().Queues[dl]; ok {
		t.Fatalf("/info lists the deleted dead letter queue %s", dl)
	}
	// The queue back: dead letters go there again.
	h.putQueue(dl, settings(60, 0, 600, 0))
	fail()
	if got := h.jobCount(dl); got != 1 {
		t.Fatalf("dead letter queue holds %d jobs, want 1", got)
	}
	if n := h.info().DeadLettersSkipped; n != 1 {
		t.Fatalf("dead letters skipped = %d, want still 1", n)
	}
}

// TestEffectsApplyOnceOnThreeNodes runs the cases above on a cluster of
// three primaries with four partitions, a queue's shards on different
// nodes.
func TestEffectsApplyOnceOnThreeNodes(t *testing.T) {
	t.Parallel()
	rdb := redistest.SharedCluster3(t).Client()
	for _, c := range onceCases {
		if c.name == "dead letter queue must exist" {
			continue // its snapshot reads one node; the conformance backends run it
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t, rdb, 4, c.opts))
		})
	}
}

// testRefusedEffectDoesNotBlock: a follow-up job the target queue refuses
// (its key is held and it says on_conflict "error") is dropped, with a
// warning, as the same create through the API would be refused; the
// effects recorded after it in the same outbox still apply, once.
func testRefusedEffectDoesNotBlock(t *testing.T, h *harness) {
	h.putQueue("t", settings(60, 0, 600, 0))
	h.putQueue("src", settings(60, 0, 600, 0))
	holder := h.create("t", ocypod.JobSpec{Key: "k"})
	complete := func(next ocypod.JobSpec) {
		t.Helper()
		a := h.create("src", ocypod.JobSpec{})
		h.take("src", a)
		if _, _, err := h.s.UpdateJob(h.ctx, a, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted),
			Next: &ocypod.NextJobSpec{Queue: "t", Spec: next}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	redisstore.SetCrashAfterCall(h.s, true)
	complete(ocypod.JobSpec{Key: "k", OnConflict: ocypod.OnConflictError})
	for range 3 {
		complete(ocypod.JobSpec{})
	}
	redisstore.SetCrashAfterCall(h.s, false)
	h.reapplyOutbox(h.otherProcess(), 2)
	ids := h.queueIDs("t")
	if got := h.jobCount("t"); got != 4 || len(ids.Queued) != 4 || ids.Queued[0] != holder {
		t.Fatalf("queue t holds %+v, want the key's holder %d and 3 follow-ups", ids, holder)
	}
}

// TestOutboxSweepPassesFailingEntries: outbox entries that fail every
// time (here unreadable ones), in partition 0 and ahead of a follow-up in
// its own partition, more of them than a sweep batch, neither keep the
// other partitions from being swept nor hide the entries behind them: the
// follow-up is created, and the failing entries stay for a later look.
func TestOutboxSweepPassesFailingEntries(t *testing.T) {
	h := newHarness(t, redistest.Shared(t).Client(), 4, redisstore.Options{SweepBatch: 2})
	h.skipInvariants = true
	src := ""
	for i := range 100 {
		if q := fmt.Sprintf("src%d", i); h.lay.Home(q) != 0 {
			src = q
			break
		}
	}
	h.putQueue("t", settings(60, 0, 600, 0))
	h.putQueue(src, settings(60, 0, 600, 0))
	redisstore.SetCrashAfterCall(h.s, true)
	a := h.create(src, ocypod.JobSpec{})
	h.take(src, a)
	if _, _, err := h.s.UpdateJob(h.ctx, a, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted),
		Next: &ocypod.NextJobSpec{Queue: "t"}}, nil); err != nil {
		t.Fatal(err)
	}
	redisstore.SetCrashAfterCall(h.s, false)
	bad := map[int][]string{0: {"bad-a"}, h.lay.Home(src): {"bad-b", "bad-c", "bad-d"}}
	for p, ids := range bad {
		for _, id := range ids {
			h.do("HSET", h.lay.Key(p, "ob"), id, "{not json")
			h.do("ZADD", h.lay.Key(p, "obt"), 0, id)
		}
	}
	var err error
	for range 4 {
		h.clock.Advance(time.Minute)
		_, err = h.s.SweepOutbox(h.ctx)
	}
	if err == nil {
		t.Error("SweepOutbox with unreadable entries = nil, want their error")
	}
	if got := h.jobCount("t"); got != 1 {
		t.Fatalf("queue t holds %d jobs after 4 outbox sweeps, want the follow-up of job %d", got, a)
	}
	for p, ids := range bad {
		for _, id := range ids {
			if h.do("HEXISTS", h.lay.Key(p, "ob"), id).Val().(int64) != 1 {
				t.Errorf("partition %d: failing entry %s gone from the outbox", p, id)
			}
		}
	}
}
